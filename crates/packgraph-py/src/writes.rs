//! The write methods `Graph` and `Store` share (`insert_edges`, `delete_edges`,
//! `add_vertices`), on top of the read methods: one macro, as for reads, so that the two
//! classes take the same arguments and convert them the same way.

/// [`with_read_methods!`](crate::reads::with_read_methods) on `$class` plus the write
/// methods. `$class` has `fn write_edges(&self, py, &EdgeBatch, Edit) -> PyResult<usize>`
/// (the edges the batch changed) and `fn write_update(&self, py, Update) -> PyResult<()>`;
/// its module imports [`crate::reads::prelude`], `EdgeBatch`, `Edit` and
/// `vertices_update`.
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

            $($extra)*
        });
    };
}
pub(crate) use with_read_write_methods;
