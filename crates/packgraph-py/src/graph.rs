//! `Graph` (the writer, shared by Python threads) and `Snapshot` (one immutable version),
//! and `read`.
//!
//! A `Graph` holds a core [`SharedGraph`]: writes are [`Update`]s committed under its
//! writer lock, reads go to the latest published version, taken lock-free. Locks are only
//! ever taken with the GIL released, so a writer busy in Rust never waits for a thread
//! that holds the GIL. A `Snapshot` holds a core [`Snapshot`](packgraph::graph::Snapshot):
//! `Send + Sync`, unchanged while the graph goes on.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use numpy::PyArray1;
use packgraph::graph::AnyGraph;
use packgraph::graph::EdgeLeaf;
use packgraph::graph::{
    ExternalId, Graph as CoreGraph, GraphRead, IdMap, SharedGraph, Snapshot as CoreSnapshot,
    Update, VertexId, WeightedGraph, WeightedGraphRead,
};
use packgraph::io::{Dataset, Format, LoadOptions};
use packgraph::pma::{DeltaLeaf, DeltaMapLeaf};
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{detached, input_error};
use crate::ids::{find, id_array, id_list, lookup, weight_list, IdList};

/// One version, with or without edge weights.
#[derive(Clone)]
pub(crate) enum Version {
    Plain(CoreSnapshot<DeltaLeaf>),
    Weighted(CoreSnapshot<DeltaMapLeaf>),
}

/// Runs `$body` with `$g` bound to the version's snapshot, whatever its edge kind.
macro_rules! on_version {
    ($version:expr, $g:ident => $body:expr) => {
        match $version {
            Version::Plain($g) => $body,
            Version::Weighted($g) => $body,
        }
    };
}
pub(crate) use on_version;

enum Shared {
    Plain(SharedGraph<DeltaLeaf>),
    Weighted(SharedGraph<DeltaMapLeaf>),
}

impl Shared {
    fn new(graph: AnyGraph) -> Self {
        match graph {
            AnyGraph::Unweighted(g) => Self::Plain(SharedGraph::new(g)),
            AnyGraph::Weighted(g) => Self::Weighted(SharedGraph::new(g)),
        }
    }

    /// The latest version (builds its flat index on first use: call detached).
    fn latest(&self) -> Version {
        match self {
            Self::Plain(g) => Version::Plain(g.snapshot()),
            Self::Weighted(g) => Version::Weighted(g.snapshot()),
        }
    }
}

impl Version {
    fn ids(&self) -> &IdMap {
        on_version!(self, g => g.ids())
    }

    fn is_weighted(&self) -> bool {
        matches!(self, Self::Weighted(_))
    }

    /// Every stored arc `(u, v, weight)` in internal ids; with `once`, an undirected
    /// edge only as `u <= v`.
    fn arcs(&self, once: bool) -> (Vec<VertexId>, Vec<VertexId>, Vec<f64>) {
        on_version!(self, g => collect_arcs(&**g, once && !g.is_directed()))
    }

    /// The version as an owned graph (O(1)), for the writers of `io`.
    fn to_any(&self) -> AnyGraph {
        match self {
            Self::Plain(g) => AnyGraph::Unweighted(g.to_graph()),
            Self::Weighted(g) => AnyGraph::Weighted(g.to_graph()),
        }
    }
}

fn collect_arcs<G: WeightedGraphRead>(
    graph: &G,
    once: bool,
) -> (Vec<VertexId>, Vec<VertexId>, Vec<f64>) {
    let (mut src, mut dst, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    for u in 0..graph.num_vertices() as VertexId {
        graph.for_each_out_edge(u, |v, w| {
            if !once || u <= v {
                src.push(u);
                dst.push(v);
                weights.push(w);
            }
            true
        });
    }
    (src, dst, weights)
}

/// The update inserting edges `src[i] -> dst[i]` given in external ids (new ids become
/// vertices first, in order of first appearance), weighted when `weights` is given.
fn insert_update<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    src: &[ExternalId],
    dst: &[ExternalId],
    weights: Option<Vec<f64>>,
) -> Update {
    let all: Vec<ExternalId> = src.iter().chain(dst).cloned().collect();
    let internal = graph.plan_vertices(&all);
    let mut next = graph.num_vertices() as VertexId;
    let mut new = Vec::new();
    for (id, &v) in all.iter().zip(&internal) {
        if v == next && v as usize >= graph.num_vertices() {
            new.push(id.clone());
            next += 1;
        }
    }
    let edges: Vec<(VertexId, VertexId)> = internal[..src.len()]
        .iter()
        .copied()
        .zip(internal[src.len()..].iter().copied())
        .collect();
    let mut update = match weights {
        Some(weights) => Update::from_weighted_edges(edges, weights),
        None => Update::from_edges(edges),
    };
    update.add_vertices(new);
    update
}

/// The update deleting the edges among `src[i] -> dst[i]` whose endpoints are vertices.
fn delete_update<C: EdgeLeaf>(
    graph: &CoreGraph<C>,
    src: &[ExternalId],
    dst: &[ExternalId],
) -> Update {
    let ids = graph.ids();
    let edges: Vec<(VertexId, VertexId)> = src
        .iter()
        .zip(dst)
        .filter_map(|(u, v)| Some((ids.internal_id(u)?, ids.internal_id(v)?)))
        .collect();
    let mut update = Update::new();
    update.delete_edges(&edges);
    update
}

/// Source and target id lists of equal length, and the weights if given.
fn edge_lists(
    py: Python<'_>,
    src: &Bound<'_, PyAny>,
    dst: &Bound<'_, PyAny>,
    weights: Option<&Bound<'_, PyAny>>,
) -> PyResult<(IdList, IdList, Option<Vec<f64>>)> {
    let (src, dst) = (id_list(src, "src")?, id_list(dst, "dst")?);
    if src.len() != dst.len() {
        return Err(input_error(
            py,
            format!("src has {} ids but dst has {}", src.len(), dst.len()),
        ));
    }
    let weights = weights.map(weight_list).transpose()?;
    if let Some(w) = &weights {
        if w.len() != src.len() {
            return Err(input_error(
                py,
                format!("{} weights for {} edges", w.len(), src.len()),
            ));
        }
    }
    Ok((src, dst, weights))
}

/// A dynamic graph: vertices named by external ids (ints or strings), edges inserted and
/// deleted in batches, each batch one new version. See the stubs for the documentation.
#[pyclass(module = "packgraph", frozen)]
pub(crate) struct Graph {
    shared: Shared,
}

/// One immutable version of a graph.
#[pyclass(module = "packgraph", frozen)]
pub(crate) struct Snapshot {
    version: Mutex<Option<Version>>,
}

impl Graph {
    pub(crate) fn current(&self, py: Python<'_>) -> PyResult<Version> {
        Ok(py.detach(|| self.shared.latest()))
    }

    fn commit(
        &self,
        py: Python<'_>,
        src: Vec<ExternalId>,
        dst: Vec<ExternalId>,
        weights: Option<Vec<f64>>,
        delete: bool,
    ) -> PyResult<usize> {
        detached(py, || {
            let applied = match &self.shared {
                Shared::Plain(g) => g.commit_with(|graph| {
                    Ok(if delete {
                        delete_update(graph, &src, &dst)
                    } else {
                        insert_update(graph, &src, &dst, weights)
                    })
                }),
                Shared::Weighted(g) => g.commit_with(|graph| {
                    Ok(if delete {
                        delete_update(graph, &src, &dst)
                    } else {
                        insert_update(graph, &src, &dst, weights)
                    })
                }),
            }?;
            Ok(if delete {
                applied.edges_deleted
            } else {
                applied.edges_inserted
            })
        })
    }
}

impl Snapshot {
    pub(crate) fn current(&self, _py: Python<'_>) -> PyResult<Version> {
        self.version
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                crate::errors::to_py(
                    _py,
                    packgraph::Error::invalid_reason(
                        "the snapshot was released (its `with` block ended)",
                    ),
                )
            })
    }
}

/// The version `obj` (a `Graph` or a `Snapshot`) reads.
pub(crate) fn version_of(obj: &Bound<'_, PyAny>) -> PyResult<Version> {
    let py = obj.py();
    if let Ok(graph) = obj.cast::<Graph>() {
        return graph.get().current(py);
    }
    if let Ok(snapshot) = obj.cast::<Snapshot>() {
        return snapshot.get().current(py);
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "expected a packgraph Graph or Snapshot, not {}",
        obj.get_type().name()?
    )))
}

/// The read methods, the same on `Graph` and `Snapshot`, plus `$extra` methods.
macro_rules! with_read_methods {
    ($class:ident { $($extra:tt)* }) => {
        #[pymethods]
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

            fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
                let version = self.current(py)?;
                Ok(on_version!(&version, g => format!(
                    "<packgraph.{} {}{}, {} vertices, {} edges, version {}>",
                    stringify!($class),
                    if g.is_directed() { "directed" } else { "undirected" },
                    if version.is_weighted() { " weighted" } else { "" },
                    g.num_vertices(),
                    g.num_edges(),
                    g.version()
                )))
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
                    packgraph::io::save(&dataset, &path, format)
                })
            }
        }
    };
}

fn parse_format(py: Python<'_>, name: &str) -> PyResult<Format> {
    Format::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|(_, n)| *n).collect();
        input_error(
            py,
            format!("unknown format {name:?}; one of: {}", names.join(", ")),
        )
    })
}

with_read_methods!(Graph {
    #[new]
    #[pyo3(signature = (directed = false, weighted = false))]
    fn new(directed: bool, weighted: bool) -> Self {
        let graph = if weighted {
            AnyGraph::Weighted(WeightedGraph::new_weighted(directed))
        } else {
            AnyGraph::Unweighted(CoreGraph::new(directed))
        };
        Self { shared: Shared::new(graph) }
    }

    #[staticmethod]
    #[pyo3(signature = (src, dst, weights = None, directed = false))]
    fn from_edges(
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: Option<&Bound<'_, PyAny>>,
        directed: bool,
    ) -> PyResult<Self> {
        let (src, dst, weights) = edge_lists(py, src, dst, weights)?;
        match (src, dst) {
            (IdList::Ints(src), IdList::Ints(dst)) => {
                let data = detached(py, move || {
                    let edges: Vec<(u64, u64)> = src.into_iter().zip(dst).collect();
                    Dataset::from_external_edges(&edges, weights, directed)
                })?;
                Ok(Self { shared: Shared::new(data.graph) })
            }
            (src, dst) => {
                let graph = Self::new(directed, weights.is_some());
                graph.commit(py, src.into_external(), dst.into_external(), weights, false)?;
                Ok(graph)
            }
        }
    }

    #[pyo3(signature = (src, dst, weights = None))]
    fn insert_edges(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
        weights: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<usize> {
        let (src, dst, weights) = edge_lists(py, src, dst, weights)?;
        self.commit(py, src.into_external(), dst.into_external(), weights, false)
    }

    fn delete_edges(
        &self,
        py: Python<'_>,
        src: &Bound<'_, PyAny>,
        dst: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let (src, dst, _) = edge_lists(py, src, dst, None)?;
        self.commit(py, src.into_external(), dst.into_external(), None, true)
    }

    fn add_vertices(&self, py: Python<'_>, ids: &Bound<'_, PyAny>) -> PyResult<()> {
        let ids = id_list(ids, "ids")?.into_external();
        let mut update = Update::new();
        update.add_vertices(ids);
        detached(py, || {
            match &self.shared {
                Shared::Plain(g) => g.commit(&update),
                Shared::Weighted(g) => g.commit(&update),
            }
            .map(|_| ())
        })
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        Ok(Snapshot { version: Mutex::new(Some(self.current(py)?)) })
    }
});

with_read_methods!(Snapshot {
    #[allow(
        clippy::self_named_constructors,
        reason = "Python's `s.snapshot()`: a snapshot of a snapshot is itself"
    )]
    fn snapshot(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, _exc: &Bound<'_, PyTuple>) {
        self.release();
    }

    fn release(&self) {
        let held = self.version.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(held);
    }
});

/// Reads a graph file in any format the command-line tool reads.
#[pyfunction]
#[pyo3(signature = (path, format = None, directed = None, weighted = None, progress = None))]
pub(crate) fn read(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    directed: Option<bool>,
    weighted: Option<bool>,
    progress: Option<Py<PyAny>>,
) -> PyResult<Graph> {
    let format = format.map(|name| parse_format(py, name)).transpose()?;
    let failure: Arc<Mutex<Option<PyErr>>> = Arc::default();
    let report = progress.map(|callback| {
        let failure = Arc::clone(&failure);
        Arc::new(move |bytes: u64| {
            Python::attach(|py| {
                if let Err(e) = callback.call1(py, (bytes,)) {
                    failure
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .get_or_insert(e);
                }
            });
        }) as packgraph::io::Progress
    });
    let options = LoadOptions {
        format,
        directed,
        progress: report,
    };
    let data = detached(py, || {
        let data = packgraph::io::load(&path, &options)?;
        match weighted {
            Some(w) if w != data.graph.is_weighted() => with_weights(data.graph, w),
            _ => Ok(data.graph),
        }
    });
    if let Some(e) = failure
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .take()
    {
        return Err(e);
    }
    py.check_signals()?;
    Ok(Graph {
        shared: Shared::new(data?),
    })
}

/// `graph` rebuilt with weights (1 on every edge) or without them, keeping its ids.
fn with_weights(graph: AnyGraph, weighted: bool) -> packgraph::Result<AnyGraph> {
    let version = match &graph {
        AnyGraph::Unweighted(g) => Version::Plain(g.snapshot()),
        AnyGraph::Weighted(g) => Version::Weighted(g.snapshot()),
    };
    let (src, dst, weights) = version.arcs(true);
    let edges: Vec<(VertexId, VertexId)> = src.into_iter().zip(dst).collect();
    let weights = weighted.then_some(weights);
    let n = graph.num_vertices();
    let data = Dataset::from_edges(n, &edges, weights.as_deref(), graph.is_directed())?;
    data.graph.with_ids(graph.ids().clone())
}
