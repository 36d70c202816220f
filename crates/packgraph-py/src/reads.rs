//! The read methods every graph-like class has (`Graph`, `Snapshot`, `Store`): counts,
//! ids, degrees, neighbours, edges and `write`, each on the version `self.current(py)`
//! returns. One macro, so the classes cannot drift apart. The methods expand in the
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
    pub(crate) use pyo3::types::PyTuple;
    pub(crate) use std::path::PathBuf;

    pub(crate) use super::{parse_format, with_read_methods};
    pub(crate) use crate::errors::detached;
    pub(crate) use crate::ids::{find, id_array, lookup};
    pub(crate) use crate::version::on_version;
}

use packgraph::io::Format;
use pyo3::prelude::*;

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

            fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
                self.num_vertices(py)
            }

            fn __contains__(&self, py: Python<'_>, vertex: &Bound<'_, PyAny>) -> PyResult<bool> {
                let version = self.current(py)?;
                Ok(find(version.ids(), vertex).unwrap_or(None).is_some())
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

            fn degree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i64>>> {
                let version = self.current(py)?;
                let degrees = py.detach(|| on_version!(&version, g => {
                    (0..g.num_vertices() as VertexId)
                        .map(|v| {
                            let out = g.out_degree(v);
                            (if g.is_directed() { out + g.in_degree(v) } else { out }) as i64
                        })
                        .collect::<Vec<i64>>()
                }));
                Ok(PyArray1::from_vec(py, degrees))
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

            fn edges<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
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
