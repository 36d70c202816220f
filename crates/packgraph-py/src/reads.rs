//! The read methods every graph-like class has (`Graph`, `Snapshot`, `Store`): counts,
//! ids, degrees, neighbours, edges, vertex attributes and `write`, with NetworkX's names
//! beside the array forms (`number_of_nodes`, `degree(v)`, `edges()` as tuples,
//! `successors`), each on the version `self.current(py)` returns; `to_networkx`,
//! `to_pandas` and `subgraph` call the Python functions of `packgraph.convert`. One macro, so the classes cannot drift apart. The methods expand in the
//! class's module, which imports [`prelude`].

/// The names the methods use; a class's module imports them with
/// `use crate::reads::prelude::*`.
pub(crate) mod prelude {
    #![allow(
        unused_imports,
        reason = "each is used by some expansion; a module that imports a name itself \
                  shadows the one here"
    )]

    pub(crate) use numpy::PyArray1;
    pub(crate) use packgraph::graph::{GraphRead, VertexId};
    pub(crate) use packgraph::io::{save, Dataset, Format};
    pub(crate) use pyo3::prelude::*;
    pub(crate) use pyo3::types::{PyDict, PyIterator, PyList, PyTuple};
    pub(crate) use std::path::PathBuf;

    pub(crate) use super::{call_python, parse_format, property_object, with_read_methods};
    pub(crate) use crate::errors::detached;
    pub(crate) use crate::ids::{find, id_array, lookup};
    pub(crate) use crate::version::on_version;
}

use packgraph::io::Format;
use pyo3::prelude::*;

/// Calls `packgraph.convert.<function>(*args)`: the methods written in Python.
pub(crate) fn call_python<'py>(
    py: Python<'py>,
    function: &str,
    args: impl pyo3::call::PyCallArgs<'py>,
) -> PyResult<Bound<'py, PyAny>> {
    py.import("packgraph.convert")?
        .getattr(function)?
        .call1(args)
}

/// A property value as a Python object.
pub(crate) fn property_object<'py>(
    py: Python<'py>,
    value: Option<&packgraph::graph::PropertyValue>,
) -> PyResult<Bound<'py, PyAny>> {
    use packgraph::graph::PropertyValue as P;
    use pyo3::IntoPyObjectExt;
    match value {
        None => Ok(py.None().into_bound(py)),
        Some(P::Int(i)) => i.into_bound_py_any(py),
        Some(P::Float(x)) => x.into_bound_py_any(py),
        Some(P::Bool(b)) => b.into_bound_py_any(py),
        Some(P::Text(t)) => (&**t).into_bound_py_any(py),
    }
}

/// The file format named `name` (as the command-line tool names it).
pub(crate) fn parse_format(py: Python<'_>, name: &str) -> PyResult<Format> {
    Format::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|(_, n)| *n).collect();
        crate::errors::input_error(
            py,
            format!("unknown format {name:?}; one of: {}", names.join(", ")),
        )
    })
}

/// The read methods on `$class`, plus `$extra` methods (one `#[pymethods]` block per
/// class). `$class` has `fn current(&self, py) -> PyResult<Version>`; `$gone` says in its
/// `repr` why that failed (a released snapshot, a closed store).
macro_rules! with_read_methods {
    ($class:ident, $gone:literal { $($extra:tt)* }) => {
        #[::pyo3::pymethods]
        impl $class {
            $($extra)*

            #[getter]
            fn num_vertices(&self, py: Python<'_>) -> PyResult<usize> {
                Ok(on_version!(self.current(py)?, g => g.num_vertices()))
            }

            #[getter]
            fn num_edges(&self, py: Python<'_>) -> PyResult<usize> {
                Ok(on_version!(self.current(py)?, g => g.num_edges()))
            }

            #[getter]
            fn directed(&self, py: Python<'_>) -> PyResult<bool> {
                Ok(on_version!(self.current(py)?, g => g.is_directed()))
            }

            #[getter]
            fn weighted(&self, py: Python<'_>) -> PyResult<bool> {
                Ok(self.current(py)?.is_weighted())
            }

            #[getter]
            fn version(&self, py: Python<'_>) -> PyResult<u64> {
                Ok(on_version!(self.current(py)?, g => g.version()))
            }

            #[getter]
            fn nbytes(&self, py: Python<'_>) -> PyResult<usize> {
                Ok(on_version!(self.current(py)?, g => g.size_in_bytes()))
            }

            fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
                self.num_vertices(py)
            }

            fn __contains__(&self, py: Python<'_>, vertex: &Bound<'_, PyAny>) -> PyResult<bool> {
                let version = self.current(py)?;
                Ok(find(version.ids(), vertex).unwrap_or(None).is_some())
            }

            fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyIterator>> {
                let vertices = self.vertices(py)?.call_method0("tolist")?;
                PyIterator::from_object(&vertices)
            }

            fn has_node(&self, py: Python<'_>, vertex: &Bound<'_, PyAny>) -> PyResult<bool> {
                self.__contains__(py, vertex)
            }

            fn number_of_nodes(&self, py: Python<'_>) -> PyResult<usize> {
                self.num_vertices(py)
            }

            #[pyo3(signature = (u = None, v = None))]
            fn number_of_edges(
                &self,
                py: Python<'_>,
                u: Option<&Bound<'_, PyAny>>,
                v: Option<&Bound<'_, PyAny>>,
            ) -> PyResult<usize> {
                match (u, v) {
                    (None, None) => self.num_edges(py),
                    (Some(u), Some(v)) => Ok(usize::from(self.has_edge(py, u, v)?)),
                    _ => Err(crate::errors::input_error(
                        py,
                        "number_of_edges takes no vertex or both u and v",
                    )),
                }
            }

            fn index(&self, py: Python<'_>, vertex: &Bound<'_, PyAny>) -> PyResult<usize> {
                let version = self.current(py)?;
                Ok(lookup(version.ids(), vertex)? as usize)
            }

            fn successors<'py>(
                &self,
                py: Python<'py>,
                vertex: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                self.neighbors(py, vertex)
            }

            fn predecessors<'py>(
                &self,
                py: Python<'py>,
                vertex: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let version = self.current(py)?;
                let v = lookup(version.ids(), vertex)?;
                let sources = on_version!(&version, g => {
                    let mut sources = Vec::with_capacity(g.in_degree(v));
                    if g.is_directed() {
                        g.for_each_in_neighbor(v, |u| { sources.push(u); true });
                    } else {
                        g.for_each_out_neighbor(v, |u| { sources.push(u); true });
                    }
                    sources
                });
                id_array(py, version.ids(), &sources)
            }

            fn vertex_attrs(&self, py: Python<'_>) -> PyResult<Vec<String>> {
                let version = self.current(py)?;
                Ok(on_version!(&version, g => g.properties().names().map(String::from).collect()))
            }

            fn vertex_attr<'py>(&self, py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
                let version = self.current(py)?;
                let items = PyList::empty(py);
                on_version!(&version, g => {
                    if g.properties().names().all(|known| known != name) {
                        return Err(crate::errors::input_error(
                            py,
                            format!("no vertex attribute {name:?}; the graph has: {:?}",
                                g.properties().names().collect::<Vec<_>>()),
                        ));
                    }
                    for v in 0..g.num_vertices() as VertexId {
                        items.append(property_object(py, g.property(name, v))?)?;
                    }
                    PyResult::Ok(())
                })?;
                py.import("numpy")?.call_method1("array", (items,))
            }

            #[pyo3(signature = (weight = "weight"))]
            fn to_networkx<'py>(slf: &Bound<'py, Self>, weight: &str) -> PyResult<Bound<'py, PyAny>> {
                call_python(slf.py(), "to_networkx", (slf, weight))
            }

            fn to_pandas<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
                call_python(slf.py(), "to_pandas", (slf,))
            }

            fn subgraph<'py>(slf: &Bound<'py, Self>, vertices: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyAny>> {
                call_python(slf.py(), "subgraph", (slf, vertices))
            }

            fn copy(&self, py: Python<'_>) -> PyResult<crate::graph::Graph> {
                Ok(crate::graph::Graph::of_version(&self.current(py)?))
            }

            fn __repr__(&self, py: Python<'_>) -> String {
                let Ok(version) = self.current(py) else {
                    return format!("<packgraph.{} ({})>", stringify!($class), $gone);
                };
                on_version!(&version, g => format!(
                    "<packgraph.{} {}{}, {} vertices, {} edges, version {}>",
                    stringify!($class),
                    if g.is_directed() { "directed" } else { "undirected" },
                    if version.is_weighted() { " weighted" } else { "" },
                    g.num_vertices(),
                    g.num_edges(),
                    g.version()
                ))
            }

            fn vertices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                let version = self.current(py)?;
                let all: Vec<VertexId> = (0..version.ids().len() as VertexId).collect();
                id_array(py, version.ids(), &all)
            }

            #[pyo3(signature = (vertex = None))]
            fn degree<'py>(
                &self,
                py: Python<'py>,
                vertex: Option<&Bound<'py, PyAny>>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let version = self.current(py)?;
                if let Some(vertex) = vertex {
                    let v = lookup(version.ids(), vertex)?;
                    let degree = on_version!(&version, g => {
                        let out = g.out_degree(v);
                        if g.is_directed() { out + g.in_degree(v) } else { out }
                    });
                    return Ok(degree.into_pyobject(py)?.into_any());
                }
                let degrees = py.detach(|| on_version!(&version, g => {
                    (0..g.num_vertices() as VertexId)
                        .map(|v| {
                            let out = g.out_degree(v);
                            (if g.is_directed() { out + g.in_degree(v) } else { out }) as i64
                        })
                        .collect::<Vec<i64>>()
                }));
                Ok(PyArray1::from_vec(py, degrees).into_any())
            }

            fn out_degree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let version = self.current(py)?;
                let degrees = py.detach(|| on_version!(&version, g => {
                    (0..g.num_vertices() as VertexId)
                        .map(|v| g.out_degree(v) as i64)
                        .collect::<Vec<i64>>()
                }));
                Ok(PyArray1::from_vec(py, degrees))
            }

            fn in_degree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let version = self.current(py)?;
                let degrees = py.detach(|| on_version!(&version, g => {
                    (0..g.num_vertices() as VertexId)
                        .map(|v| g.in_degree(v) as i64)
                        .collect::<Vec<i64>>()
                }));
                Ok(PyArray1::from_vec(py, degrees))
            }

            fn neighbors<'py>(
                &self,
                py: Python<'py>,
                vertex: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let version = self.current(py)?;
                let v = lookup(version.ids(), vertex)?;
                let out = on_version!(&version, g => g.out_neighbors(v));
                id_array(py, version.ids(), &out)
            }

            fn has_edge(
                &self,
                py: Python<'_>,
                u: &Bound<'_, PyAny>,
                v: &Bound<'_, PyAny>,
            ) -> PyResult<bool> {
                let version = self.current(py)?;
                let (Some(u), Some(v)) = (find(version.ids(), u)?, find(version.ids(), v)?) else {
                    return Ok(false);
                };
                Ok(on_version!(&version, g => g.has_edge(u, v)))
            }

            fn edge_arrays<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                let version = self.current(py)?;
                let (src, dst, weights) = py.detach(|| version.arcs(true));
                let src = id_array(py, version.ids(), &src)?;
                let dst = id_array(py, version.ids(), &dst)?;
                if version.is_weighted() {
                    PyTuple::new(py, [src, dst, PyArray1::from_vec(py, weights).into_any()])
                } else {
                    PyTuple::new(py, [src, dst])
                }
            }

            fn edges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
                let arrays = self.edge_arrays(py)?;
                let lists = arrays
                    .iter()
                    .map(|a| a.call_method0("tolist"))
                    .collect::<PyResult<Vec<_>>>()?;
                let zipped = py.import("builtins")?.getattr("zip")?.call1(PyTuple::new(py, lists)?)?;
                PyList::new(py, zipped.try_iter()?.collect::<PyResult<Vec<_>>>()?)
            }

            /// Every stored arc as internal positions (both directions of an undirected
            /// edge) and its weight: what `to_scipy` needs.
            fn _arcs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
                let version = self.current(py)?;
                let (src, dst, weights) = py.detach(|| version.arcs(false));
                let src: Vec<i64> = src.into_iter().map(i64::from).collect();
                let dst: Vec<i64> = dst.into_iter().map(i64::from).collect();
                PyTuple::new(
                    py,
                    [
                        PyArray1::from_vec(py, src).into_any(),
                        PyArray1::from_vec(py, dst).into_any(),
                        PyArray1::from_vec(py, weights).into_any(),
                    ],
                )
            }

            #[pyo3(signature = (path, format = None))]
            fn write(&self, py: Python<'_>, path: PathBuf, format: Option<&str>) -> PyResult<()> {
                let version = self.current(py)?;
                let format = match format {
                    Some(name) => parse_format(py, name)?,
                    None => Format::for_output(&path),
                };
                detached(py, || {
                    let dataset = Dataset { graph: version.to_any(), self_loops: 0 };
                    save(&dataset, &path, format)
                })
            }
        }
    };
}
pub(crate) use with_read_methods;
