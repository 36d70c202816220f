//! `Store`: a durable graph in a data directory ([`packgraph::store`]), and `create`,
//! `open` and `verify`.
//!
//! Each mutating call is one batch: one [`Update`], applied, appended to the write-ahead
//! log as one record, and returned from only once the record is durable under the store's
//! [`SyncPolicy`] ([`AnyStore::append`] then [`AnyStore::wait_durable`], as the CLI's
//! `ingest` acknowledges a batch). The GIL is released meanwhile, so with `group:MS`
//! several Python threads writing at once share one `fsync`. `commit()` returns the last
//! batch's sequence number once it is durable under the policy.
//!
//! Updates name new vertices by the internal ids they will get, so building one from the
//! latest version and appending it happen under the binding's own writer mutex (every
//! write to the store goes through it). Every operation holds a read lock on the open
//! store while it runs; `close()` takes the write lock, so when it returns no operation is
//! running and the directory's lock is released.

use std::path::Path;
use std::sync::{Mutex, PoisonError, RwLock, RwLockReadGuard};

use packgraph::graph::{AnyGraph, Applied, Graph as CoreGraph, Packing, Update, WeightedGraph};
use packgraph::store::{
    AnyStore, CheckpointStats, RecoveryStats, Seq, StoreOptions, SyncPolicy, VerifyReport,
};
use pyo3::types::PyDict;

use crate::errors::to_py;
use crate::graph::{graph_version, load, with_weights, Reading, Snapshot};
use crate::ids::IdCache;
use crate::reads::prelude::*;
use crate::update::{attribute_update, edge_tuples, vertices_update, EdgeBatch, Edit};
use crate::version::{on_version, Version};
use crate::writes::with_read_write_methods;

/// A durable graph: the read methods of `Graph`, writes that are durable when they
/// return. See the stubs for the documentation.
#[pyclass(module = "packgraph", frozen)]
pub(crate) struct Store {
    dir: PathBuf,
    sync: SyncPolicy,
    recovery: RecoveryStats,
    /// The open store; `None` once closed.
    open: RwLock<Option<AnyStore>>,
    /// Held from building an update to appending it.
    writer: Mutex<IdCache>,
}

/// The latest committed version of `store`.
fn latest(store: &AnyStore) -> Version {
    match store {
        AnyStore::Unweighted(s) => Version::Plain(s.snapshot()),
        AnyStore::Weighted(s) => Version::Weighted(s.snapshot()),
    }
}

fn last_seq(store: &AnyStore) -> Seq {
    match store {
        AnyStore::Unweighted(s) => s.last_seq(),
        AnyStore::Weighted(s) => s.last_seq(),
    }
}

fn parse_sync(py: Python<'_>, text: &str) -> PyResult<SyncPolicy> {
    text.parse().map_err(|e| to_py(py, e))
}

fn options(sync: SyncPolicy) -> StoreOptions {
    StoreOptions {
        sync,
        ..StoreOptions::default()
    }
}

impl Store {
    fn new(dir: PathBuf, sync: SyncPolicy, store: AnyStore) -> Self {
        Self {
            dir,
            sync,
            recovery: store.recovery(),
            open: RwLock::new(Some(store)),
            writer: Mutex::default(),
        }
    }

    fn read_open(&self) -> RwLockReadGuard<'_, Option<AnyStore>> {
        self.open.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `work` on the open store with the GIL released; `InputError` once closed.
    fn with_open<T: Send>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(&AnyStore) -> packgraph::Result<T> + Send,
    ) -> PyResult<T> {
        detached(py, || match &*self.read_open() {
            Some(store) => work(store),
            None => Err(packgraph::Error::invalid_file(
                &self.dir,
                "the store is closed (open the directory again with packgraph.open)",
            )),
        })
    }

    pub(crate) fn current(&self, py: Python<'_>) -> PyResult<Version> {
        self.with_open(py, |store| Ok(latest(store)))
    }

    /// Builds one update from the latest version, appends it and waits until it is
    /// durable under the sync policy.
    fn append(
        &self,
        py: Python<'_>,
        build: impl FnOnce(&Version, &mut IdCache) -> Update + Send,
    ) -> PyResult<Applied> {
        self.with_open(py, |store| {
            let (seq, applied) = {
                let mut ids = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
                let update = build(&latest(store), &mut ids);
                store.append(&update).inspect_err(|_| ids.forget())?
            };
            store.wait_durable(seq)?;
            Ok(applied)
        })
    }

    /// Appends the update of `batch`; the edges it changed, once durable.
    fn write_edges(&self, py: Python<'_>, batch: &EdgeBatch, edit: Edit) -> PyResult<usize> {
        let applied = self.append(
            py,
            |version, ids| on_version!(version, g => batch.update(g, edit, ids)),
        )?;
        Ok(edit.count(&applied))
    }

    /// Appends `update`; returns once it is durable.
    fn write_update(&self, py: Python<'_>, update: Update) -> PyResult<()> {
        self.append(py, |_, _| update).map(drop)
    }
}

/// The version `obj` (a `Graph`, `Snapshot` or `Store`) reads. Here rather than beside
/// `Version`: of the classes' modules, this one is the one that may name the others.
pub(crate) fn version_of(obj: &Bound<'_, PyAny>) -> PyResult<Version> {
    if let Ok(store) = obj.cast::<Store>() {
        return store.get().current(obj.py());
    }
    graph_version(obj).unwrap_or_else(|| {
        Err(pyo3::exceptions::PyTypeError::new_err(format!(
            "expected a packgraph Graph, Snapshot or Store, not {}",
            obj.get_type().name()?
        )))
    })
}

with_read_write_methods!(Store, "closed" {
    fn commit(&self, py: Python<'_>) -> PyResult<Seq> {
        self.with_open(py, |store| {
            let seq = last_seq(store);
            store.wait_durable(seq)?;
            Ok(seq)
        })
    }

    fn sync(&self, py: Python<'_>) -> PyResult<Seq> {
        self.with_open(py, AnyStore::sync)
    }

    fn checkpoint<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.with_open(py, AnyStore::checkpoint)?;
        checkpoint_dict(py, &stats)
    }

    fn snapshot(&self, py: Python<'_>) -> PyResult<Snapshot> {
        Ok(Snapshot::of(self.current(py)?))
    }

    #[getter]
    fn recovery<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        recovery_dict(py, &self.recovery)
    }

    #[getter]
    fn last_seq(&self, py: Python<'_>) -> PyResult<Seq> {
        self.with_open(py, |store| Ok(last_seq(store)))
    }

    #[getter]
    fn durable_seq(&self, py: Python<'_>) -> PyResult<Seq> {
        self.with_open(py, |store| Ok(store.durable_seq()))
    }

    #[getter]
    fn path(&self) -> String {
        self.dir.display().to_string()
    }

    #[getter]
    fn sync_policy(&self) -> String {
        self.sync.to_string()
    }

    #[getter]
    fn closed(&self) -> bool {
        self.read_open().is_none()
    }

    /// Syncs the log, then closes the store and releases the directory's lock (waiting for
    /// calls other threads are making); a second call does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        detached(py, || {
            let taken = self.open.write().unwrap_or_else(PoisonError::into_inner).take();
            let Some(store) = taken else {
                return Ok(());
            };
            let synced = store.sync();
            drop(store);
            synced.map(drop)
        })
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<()> {
        self.close(py)
    }
});

/// A dict of the fields of `$value`, each under its own name.
macro_rules! fields_dict {
    ($py:expr, $value:expr, [$($field:ident),* $(,)?]) => {{
        let dict = PyDict::new($py);
        $(dict.set_item(stringify!($field), $value.$field)?;)*
        PyResult::Ok(dict)
    }};
}

fn checkpoint_dict<'py>(py: Python<'py>, stats: &CheckpointStats) -> PyResult<Bound<'py, PyDict>> {
    fields_dict!(
        py,
        stats,
        [
            seq,
            delta,
            bytes_written,
            bytes_reused,
            units_written,
            units_reused
        ]
    )
}

fn recovery_dict<'py>(py: Python<'py>, stats: &RecoveryStats) -> PyResult<Bound<'py, PyDict>> {
    fields_dict!(
        py,
        stats,
        [
            checkpoint_seq,
            checkpoint_bytes,
            records_replayed,
            log_bytes,
            torn_bytes,
            checkpoint_seconds,
            replay_seconds,
        ]
    )
}

fn verify_dict<'py>(py: Python<'py>, report: &VerifyReport) -> PyResult<Bound<'py, PyDict>> {
    fields_dict!(
        py,
        report,
        [
            packs,
            units,
            records,
            torn_bytes,
            stray_packs,
            num_vertices,
            num_arcs
        ]
    )
}

/// The first graph of a new data directory: `source` (a graph-like object or a file or
/// data directory path), or an empty graph.
fn initial_graph(
    py: Python<'_>,
    source: Option<&Bound<'_, PyAny>>,
    directed: Option<bool>,
    weighted: Option<bool>,
) -> PyResult<AnyGraph> {
    let Some(source) = source else {
        let directed = directed.unwrap_or(false);
        return Ok(if weighted.unwrap_or(false) {
            AnyGraph::Weighted(WeightedGraph::new_weighted(directed))
        } else {
            AnyGraph::Unweighted(CoreGraph::new(directed))
        });
    };
    if let Ok(path) = source.extract::<PathBuf>() {
        let reading = Reading {
            format: None,
            directed,
            weighted,
            packing: Packing::Updates,
        };
        return load(py, &path, &reading, None);
    }
    let graph = version_of(source)?.to_any();
    if let Some(d) = directed.filter(|&d| d != graph.is_directed()) {
        return Err(to_py(
            py,
            packgraph::Error::invalid(
                d,
                "directed= disagrees with the source graph (leave it out to keep the source's)",
            ),
        ));
    }
    match weighted {
        Some(w) if w != graph.is_weighted() => detached(py, || with_weights(graph, w)),
        _ => Ok(graph),
    }
}

/// Creates data directory `dir` holding `source` (or an empty graph) and opens it.
#[pyfunction]
#[pyo3(signature = (dir, *, directed = None, weighted = None, source = None, sync = "batch"))]
pub(crate) fn create(
    py: Python<'_>,
    dir: PathBuf,
    directed: Option<bool>,
    weighted: Option<bool>,
    source: Option<&Bound<'_, PyAny>>,
    sync: &str,
) -> PyResult<Store> {
    let policy = parse_sync(py, sync)?;
    let graph = initial_graph(py, source, directed, weighted)?;
    let store = detached(py, || AnyStore::create(&dir, options(policy), graph))?;
    Ok(Store::new(dir, policy, store))
}

/// Opens data directory `dir`: recovers its latest durable state and takes its lock.
#[pyfunction]
#[pyo3(signature = (dir, *, sync = "batch"))]
pub(crate) fn open(py: Python<'_>, dir: PathBuf, sync: &str) -> PyResult<Store> {
    let policy = parse_sync(py, sync)?;
    let store = detached(py, || AnyStore::open(&dir, options(policy)))?;
    Ok(Store::new(dir, policy, store))
}

/// Checks every file of data directory `dir` without changing it; the report as a dict.
#[pyfunction]
pub(crate) fn verify<'py>(py: Python<'py>, dir: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    let report = detached(py, || packgraph::store::verify(Path::new(&dir)))?;
    verify_dict(py, &report)
}
