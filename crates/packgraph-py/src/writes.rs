//! The write methods `Graph` and `Store` share (`insert_edges`, `delete_edges`,
//! `add_vertices`, NetworkX's `add_edge`, `add_edges_from`, `remove_edge`, ... and
//! `set_vertex_attr`), each call one batch, on top of the read methods: one macro, as for
//! reads, so that the two classes take the same arguments and convert them the same way.

/// [`with_read_methods!`](crate::reads::with_read_methods) on `$class` plus the write
/// methods. `$class` has `fn write_edges(&self, py, &EdgeBatch, Edit) -> PyResult<usize>`
/// (the edges the batch changed) and `fn write_update(&self, py, Update) -> PyResult<()>`;
/// its module imports [`crate::reads::prelude`], `EdgeBatch`, `Edit`, `vertices_update`,
/// `edge_tuples` and `attribute_update`.
macro_rules! with_read_write_methods {
    ($class:ident, $gone:literal { $($extra:tt)* }) => {
        with_read_methods!($class, $gone {
            #[pyo3(signature = (src, dst, weights = None))]
            fn insert_edges(
                &self,
                py: Python<'_>,
                src: &Bound<'_, PyAny>,
                dst: &Bound<'_, PyAny>,
                weights: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<usize> {
                let batch = EdgeBatch::from_args(py, src, dst, weights)?;
                self.write_edges(py, &batch, Edit::Insert)
            }

            fn delete_edges(
                &self,
                py: Python<'_>,
                src: &Bound<'_, PyAny>,
                dst: &Bound<'_, PyAny>,
            ) -> PyResult<usize> {
                let batch = EdgeBatch::from_args(py, src, dst, None)?;
                self.write_edges(py, &batch, Edit::Delete)
            }

            fn add_vertices(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
                let update = vertices_update(ids)?;
                self.write_update(py, update)
            }

            fn add_node(&self, py: Python<'_>, vertex: &Bound<'_, PyAny>) -> PyResult<()> {
                self.add_vertices(py, PyList::new(py, [vertex])?.as_any())
            }

            fn add_nodes_from(&self, py: Python<'_>, vertices: &Bound<'_, PyAny>) -> PyResult<()> {
                self.add_vertices(py, vertices)
            }

            #[pyo3(signature = (u, v, weight = None))]
            fn add_edge(
                &self,
                py: Python<'_>,
                u: &Bound<'_, PyAny>,
                v: &Bound<'_, PyAny>,
                weight: Option<f64>,
            ) -> PyResult<()> {
                let weights = weight.map(|w| PyList::new(py, [w])).transpose()?;
                let batch = EdgeBatch::from_args(
                    py,
                    PyList::new(py, [u])?.as_any(),
                    PyList::new(py, [v])?.as_any(),
                    weights.as_ref().map(|w| w.as_any()),
                )?;
                self.write_edges(py, &batch, Edit::Insert).map(drop)
            }

            fn add_edges_from(&self, py: Python<'_>, edges: &Bound<'_, PyAny>) -> PyResult<usize> {
                let (src, dst, weights) = edge_tuples(edges, "edges")?;
                let batch = EdgeBatch::from_args(py, &src, &dst, weights.as_ref().map(|w| w.as_any()))?;
                self.write_edges(py, &batch, Edit::Insert)
            }

            fn remove_edge(
                &self,
                py: Python<'_>,
                u: &Bound<'_, PyAny>,
                v: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                let version = self.current(py)?;
                lookup(version.ids(), u)?;
                lookup(version.ids(), v)?;
                let batch = EdgeBatch::from_args(py, PyList::new(py, [u])?.as_any(), PyList::new(py, [v])?.as_any(), None)?;
                if self.write_edges(py, &batch, Edit::Delete)? == 0 {
                    return Err(crate::errors::input_error(
                        py,
                        format!("the graph has no edge {} -> {}", u.repr()?, v.repr()?),
                    ));
                }
                Ok(())
            }

            fn remove_edges_from(&self, py: Python<'_>, edges: &Bound<'_, PyAny>) -> PyResult<usize> {
                let (src, dst, _) = edge_tuples(edges, "edges")?;
                let batch = EdgeBatch::from_args(py, &src, &dst, None)?;
                self.write_edges(py, &batch, Edit::Delete)
            }

            fn set_vertex_attr(
                &self,
                py: Python<'_>,
                name: &str,
                values: &Bound<'_, PyAny>,
            ) -> PyResult<()> {
                let version = self.current(py)?;
                let update = attribute_update(version.ids(), name, values)?;
                self.write_update(py, update)
            }

            $($extra)*
        });
    };
}
pub(crate) use with_read_write_methods;
