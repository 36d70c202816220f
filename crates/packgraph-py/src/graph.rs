//! `Graph` (the writer, shared by Python threads) and `Snapshot` (one immutable
//! [`Version`]), and `read`.
//!
//! A `Graph` holds a core [`SharedGraph`]: writes are [`Update`]s committed under its
//! writer lock, reads go to the latest version (taken lock-free, or under the writer lock
//! when small commits wait to be published by it). Locks are only ever taken with the GIL
//! released, so a writer busy in Rust never waits for a thread that holds the GIL. A `Snapshot` holds a core [`Snapshot`](packgraph::graph::Snapshot):
//! `Send + Sync`, unchanged while the graph goes on.

use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};

use packgraph::graph::{AnyGraph, Graph as CoreGraph, Packing, SharedGraph, Update, WeightedGraph};
use packgraph::io::LoadOptions;
use packgraph::pma::{GroupLeaf, GroupMapLeaf};

use crate::ids::IdCache;
use crate::reads::prelude::*;
use crate::update::{attribute_update, edge_tuples, vertices_update, EdgeBatch, Edit};
use crate::version::Version;
use crate::writes::with_read_write_methods;

pub(crate) enum Shared {
    Plain(SharedGraph<GroupLeaf>),
    Weighted(SharedGraph<GroupMapLeaf>),
}

impl Shared {
    pub(crate) fn new(graph: AnyGraph) -> Self {
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

/// A dynamic graph: vertices named by external ids (ints or strings), edges inserted and
/// deleted in batches, each batch one new version. See the stubs for the documentation.
#[pyclass(module = "packgraph", frozen)]
pub(crate) struct Graph {
    shared: Shared,
    /// Taken before the writer lock by every batch of edges.
    ids: Mutex<IdCache>,
}

/// One immutable version of a graph.
#[pyclass(module = "packgraph", frozen)]
pub(crate) struct Snapshot {
    version: Mutex<Option<Version>>,
}

impl Graph {
    fn of(graph: AnyGraph) -> Self {
        Self {
            shared: Shared::new(graph),
            ids: Mutex::default(),
        }
    }

    /// A new graph holding `version` (O(1): the two share their storage until either
    /// changes).
    pub(crate) fn of_version(version: &Version) -> Self {
        Self::of(version.to_any())
    }

    pub(crate) fn current(&self, py: Python<'_>) -> PyResult<Version> {
        Ok(py.detach(|| self.shared.latest()))
    }

    /// Commits the update of `batch` as one version; the edges it changed.
    fn write_edges(&self, py: Python<'_>, batch: &EdgeBatch, edit: Edit) -> PyResult<usize> {
        detached(py, || {
            let mut ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
            let ids = &mut *ids;
            let applied = match &self.shared {
                Shared::Plain(g) => g.commit_with(|graph| Ok(batch.update(graph, edit, ids))),
                Shared::Weighted(g) => g.commit_with(|graph| Ok(batch.update(graph, edit, ids))),
            }
            .inspect_err(|_| ids.forget())?;
            Ok(edit.count(&applied))
        })
    }

    /// Commits `update` as one version.
    fn write_update(&self, py: Python<'_>, update: Update) -> PyResult<()> {
        detached(py, || {
            match &self.shared {
                Shared::Plain(g) => g.commit(&update),
                Shared::Weighted(g) => g.commit(&update),
            }
            .map(drop)
        })
    }
}

impl Snapshot {
    /// A handle on `version`.
    pub(crate) fn of(version: Version) -> Self {
        Self {
            version: Mutex::new(Some(version)),
        }
    }

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

/// The version `obj` reads if it is a `Graph` or a `Snapshot`; `None` for anything else
/// (`store::version_of` adds the `Store`).
pub(crate) fn graph_version(obj: &Bound<'_, PyAny>) -> Option<PyResult<Version>> {
    let py = obj.py();
    if let Ok(graph) = obj.cast::<Graph>() {
        return Some(graph.get().current(py));
    }
    if let Ok(snapshot) = obj.cast::<Snapshot>() {
        return Some(snapshot.get().current(py));
    }
    None
}

with_read_write_methods!(Graph, "" {
    #[new]
    #[pyo3(signature = (directed = false, weighted = false))]
    fn new(directed: bool, weighted: bool) -> Self {
        let graph = if weighted {
            AnyGraph::Weighted(WeightedGraph::new_weighted(directed))
        } else {
            AnyGraph::Unweighted(CoreGraph::new(directed))
        };
        Self::of(graph)
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
        match EdgeBatch::from_args(py, src, dst, weights)?.into_int_edges() {
            Ok((edges, weights)) => {
                let data = detached(py, move || {
                    Dataset::from_external_edges(&edges, weights, directed)
                })?;
                Ok(Self::of(data.graph))
            }
            Err(batch) => {
                let graph = Self::new(directed, batch.is_weighted());
                graph.write_edges(py, &batch, Edit::Insert)?;
                Ok(graph)
            }
        }
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        Ok(Snapshot::of(self.current(py)?))
    }

    #[pyo3(signature = (*, room = false))]
    fn compact(&self, py: Python<'_>, room: bool) -> PyResult<()> {
        let packing = if room {
            Packing::Updates
        } else {
            Packing::Compact
        };
        // Taken as the batches take it, so that no batch's ids are half applied.
        let _ids = self.ids.lock().unwrap_or_else(PoisonError::into_inner);
        py.detach(|| match &self.shared {
            Shared::Plain(g) => g.repack(packing),
            Shared::Weighted(g) => g.repack(packing),
        });
        Ok(())
    }

    fn __copy__(&self, py: Python<'_>) -> PyResult<Self> {
        self.copy(py)
    }

    fn __deepcopy__(&self, py: Python<'_>, _memo: &Bound<'_, PyAny>) -> PyResult<Self> {
        self.copy(py)
    }

    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyAny>> {
        call_python(slf.py(), "_reduce", (slf,))
    }
});

with_read_methods!(Snapshot, "released" {
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

/// Reads a graph file in any format the command-line tool reads, or the latest durable
/// state of a data directory; `compact` packs a file's graph for analysis
/// ([`Packing::Compact`]).
#[pyfunction]
#[pyo3(signature = (path, format = None, directed = None, weighted = None, progress = None, *, compact = false))]
pub(crate) fn read(
    py: Python<'_>,
    path: PathBuf,
    format: Option<&str>,
    directed: Option<bool>,
    weighted: Option<bool>,
    progress: Option<Py<PyAny>>,
    compact: bool,
) -> PyResult<Graph> {
    let format = format.map(|name| parse_format(py, name)).transpose()?;
    let packing = if compact {
        Packing::Compact
    } else {
        Packing::Updates
    };
    let options = Reading {
        format,
        directed,
        weighted,
        packing,
    };
    let graph = load(py, &path, &options, progress)?;
    Ok(Graph::of(graph))
}

/// How [`load`] reads: the format (detected when `None`), direction and weights (the
/// file's when `None`), and how a file's graph is packed.
pub(crate) struct Reading {
    pub(crate) format: Option<Format>,
    pub(crate) directed: Option<bool>,
    pub(crate) weighted: Option<bool>,
    pub(crate) packing: Packing,
}

/// The graph in file or data directory `path` (see [`read`]), read as `reading` says, with
/// weights added or dropped as it asks; `progress(bytes)` is called while a file loads.
pub(crate) fn load(
    py: Python<'_>,
    path: &Path,
    reading: &Reading,
    progress: Option<Py<PyAny>>,
) -> PyResult<AnyGraph> {
    let &Reading {
        format,
        directed,
        weighted,
        packing,
    } = reading;
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
        packing,
    };
    let graph = detached(py, || {
        let graph = if format.is_none() && packgraph::store::is_store(path) {
            load_store(path, directed)?
        } else {
            packgraph::io::load(path, &options)?.graph
        };
        match weighted {
            Some(w) if w != graph.is_weighted() => with_weights(graph, w),
            _ => Ok(graph),
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
    graph
}

/// The latest durable state of data directory `dir` (no lock taken), which must be
/// directed as `directed` says when given.
fn load_store(dir: &Path, directed: Option<bool>) -> packgraph::Result<AnyGraph> {
    let graph = packgraph::store::load_any(dir)?;
    match directed {
        Some(d) if d != graph.is_directed() => Err(packgraph::Error::invalid_file(
            dir,
            format!(
                "the data directory holds {} graph; a data directory keeps its kind",
                if graph.is_directed() {
                    "a directed"
                } else {
                    "an undirected"
                }
            ),
        )),
        _ => Ok(graph),
    }
}

/// `graph` rebuilt with weights (1 on every edge) or without them, keeping its ids.
pub(crate) fn with_weights(graph: AnyGraph, weighted: bool) -> packgraph::Result<AnyGraph> {
    let (src, dst, weights) = Version::of(&graph).arcs(true);
    let edges: Vec<(VertexId, VertexId)> = src.into_iter().zip(dst).collect();
    let weights = weighted.then_some(weights);
    let n = graph.num_vertices();
    let data = Dataset::from_edges(n, &edges, weights.as_deref(), graph.is_directed())?;
    data.graph.with_ids(graph.ids().clone())
}
