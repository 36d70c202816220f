//! The graph a server holds: a durable store (a data directory) or an in-memory graph
//! (`serve --demo`), with one write path each and the versions clients pinned.
//!
//! Writes come in groups ([`Backend::apply_group`]): the batches of the requests waiting
//! are applied one after another as the only writer, each built from the graph as the
//! earlier ones left it ([`build_update`] inside [`AppendGroup::append_with`] or
//! [`GroupCommit::commit_with`]), so concurrent requests naming new vertices cannot plan
//! the same internal ids; then the group is published as one version. Each batch of a
//! durable store is its own log record with its own sequence number, acknowledged once the
//! store's sync policy made it durable ([`Backend::wait_durable`]); the in-memory graph has
//! no log, and its sequence numbers are the batches' own versions.
//!
//! [`AppendGroup::append_with`]: packgraph::store::AppendGroup::append_with
//! [`GroupCommit::commit_with`]: packgraph::graph::GroupCommit::commit_with

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use packgraph::graph::{AnyGraph, Graph, SharedGraph, Snapshot};
use packgraph::io::updates::{build_update, UnfitOp, UpdateOp};
use packgraph::pma::{GroupLeaf, GroupMapLeaf};
use packgraph::store::{AnyStore, CheckpointStats, Seq, Store, StoreLeaf};

/// What the server holds.
enum Kind {
    Durable(AnyStore),
    Memory(Box<SharedGraph>),
}

/// A version of either graph kind.
#[derive(Clone)]
enum Version {
    Unweighted(Snapshot<GroupLeaf>),
    Weighted(Snapshot<GroupMapLeaf>),
}

impl Version {
    /// The version as a graph of its own (O(1): shares pages and index).
    fn graph(&self) -> AnyGraph {
        match self {
            Self::Unweighted(s) => AnyGraph::Unweighted(s.to_graph()),
            Self::Weighted(s) => AnyGraph::Weighted(s.to_graph()),
        }
    }

    fn number(&self) -> u64 {
        match self {
            Self::Unweighted(s) => s.version(),
            Self::Weighted(s) => s.version(),
        }
    }
}

/// A pinned version and how many pins hold it.
struct Pin {
    version: Version,
    count: usize,
}

/// The graph behind a server, and the versions pinned by clients.
pub struct Backend {
    kind: Kind,
    pins: Mutex<HashMap<u64, Pin>>,
}

impl std::fmt::Debug for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Backend")
            .field("durable", &matches!(self.kind, Kind::Durable(_)))
            .finish_non_exhaustive()
    }
}

/// A batch applied: its sequence number and the version it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Applied {
    pub(crate) seq: Seq,
    pub(crate) version: u64,
}

/// Why a batch was not applied.
#[derive(Debug)]
pub(crate) enum WriteError {
    /// An operation does not fit the graph (a weight on an unweighted graph).
    Unfit(UnfitOp),
    /// The core refused the update (bad input) or the log failed (I/O).
    Graph(packgraph::Error),
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The version number of a graph of either kind.
pub(crate) fn version_of(graph: &AnyGraph) -> u64 {
    match graph {
        AnyGraph::Unweighted(g) => g.version(),
        AnyGraph::Weighted(g) => g.version(),
    }
}

/// Applies one batch within a group (see [`Backend::apply_group`]).
pub(crate) type ApplyBatch<'a> = dyn FnMut(&[UpdateOp]) -> Result<Option<Applied>, WriteError> + 'a;

/// Builds `ops` into an update from `graph`, remembering an operation that does not fit.
fn build<C: packgraph::graph::EdgeLeaf>(
    graph: &Graph<C>,
    ops: &[UpdateOp],
    weighted: bool,
    unfit: &mut Option<UnfitOp>,
) -> packgraph::Result<packgraph::graph::Update> {
    build_update(graph, ops, weighted).map_err(|e| {
        let error = packgraph::Error::invalid(&e.value, e.reason);
        *unfit = Some(e);
        error
    })
}

/// The error of a batch that failed, `unfit` if `build` remembered an operation.
fn refused(error: packgraph::Error, unfit: Option<UnfitOp>) -> WriteError {
    unfit.map_or(WriteError::Graph(error), WriteError::Unfit)
}

/// Runs `f` with a function appending one batch after another to `store`'s group; returns
/// `f`'s value and the group's version.
fn append_group<C: StoreLeaf, T>(
    store: &Store<C>,
    f: impl FnOnce(&mut ApplyBatch<'_>) -> T,
) -> (T, u64) {
    store.append_group(|group| {
        f(&mut |ops: &[UpdateOp]| {
            if ops.is_empty() {
                return Ok(None);
            }
            let mut unfit = None;
            // `build` only looks up vertices: a batch of edges between known vertices
            // joins the group's merged batch.
            match group.append_merged_with(|graph| build(graph, ops, C::WEIGHTED, &mut unfit)) {
                // The group's version is known once it ends: until then, the batch's own.
                Ok((seq, merged)) => Ok(Some(Applied {
                    seq,
                    version: merged.version,
                })),
                Err(e) => Err(refused(e, unfit)),
            }
        })
    })
}

impl Backend {
    /// Serves the store of a data directory: every acknowledged batch is durable.
    pub fn durable(store: AnyStore) -> Self {
        Self::with(Kind::Durable(store))
    }

    /// Serves `graph` from memory only: updates are lost when the process ends.
    pub fn memory(graph: Graph) -> Self {
        graph.build_index();
        Self::with(Kind::Memory(Box::new(SharedGraph::new(graph))))
    }

    fn with(kind: Kind) -> Self {
        Self {
            kind,
            pins: Mutex::new(HashMap::new()),
        }
    }

    /// The store, when the backend is durable.
    pub fn store(&self) -> Option<&AnyStore> {
        match &self.kind {
            Kind::Durable(store) => Some(store),
            Kind::Memory(_) => None,
        }
    }

    /// The latest version, its flat index built (O(1) after the first call per version).
    pub fn latest(&self) -> AnyGraph {
        self.latest_version().graph()
    }

    fn latest_version(&self) -> Version {
        match &self.kind {
            Kind::Durable(AnyStore::Unweighted(store)) => Version::Unweighted(store.snapshot()),
            Kind::Durable(AnyStore::Weighted(store)) => Version::Weighted(store.snapshot()),
            Kind::Memory(shared) => Version::Unweighted(shared.snapshot()),
        }
    }

    /// Applies one batch as a group of its own; `None` for an empty one (nothing to
    /// acknowledge).
    #[cfg(test)]
    pub(crate) fn apply(&self, ops: &[UpdateOp]) -> Result<Option<Applied>, WriteError> {
        let (applied, version) = self.apply_group(|apply| apply(ops));
        applied.map(|a| a.map(|a| Applied { version, ..a }))
    }

    /// Runs `f` as the only writer with a function that applies one batch at a time, each
    /// built from the graph as the earlier ones left it (`None` for an empty batch, an
    /// error for a refused one, of which nothing is applied); then publishes all of them
    /// as one version. Returns `f`'s value and that version, the one to acknowledge every
    /// batch of the group with (the `version` the function returns is the batch's own,
    /// which is never published unless it is the group's last).
    ///
    /// Each batch of a durable store is its own log record and sequence number; in memory
    /// a batch's sequence number is its own version.
    pub(crate) fn apply_group<T>(&self, f: impl FnOnce(&mut ApplyBatch<'_>) -> T) -> (T, u64) {
        match &self.kind {
            Kind::Durable(AnyStore::Unweighted(store)) => append_group(store, f),
            Kind::Durable(AnyStore::Weighted(store)) => append_group(store, f),
            Kind::Memory(shared) => shared.commit_group(|group| {
                f(&mut |ops: &[UpdateOp]| {
                    if ops.is_empty() {
                        return Ok(None);
                    }
                    let mut unfit = None;
                    match group.commit_merged_with(|graph| build(graph, ops, false, &mut unfit)) {
                        Ok(merged) => Ok(Some(Applied {
                            seq: merged.version,
                            version: merged.version,
                        })),
                        Err(e) => Err(refused(e, unfit)),
                    }
                })
            }),
        }
    }

    /// Waits until batch `seq` is durable (at once in memory).
    ///
    /// # Errors
    /// The store's error if syncing the log failed.
    pub(crate) fn wait_durable(&self, seq: Seq) -> packgraph::Result<()> {
        match &self.kind {
            Kind::Durable(store) => store.wait_durable(seq),
            Kind::Memory(_) => Ok(()),
        }
    }

    /// The last batch known durable (the latest version in memory).
    pub(crate) fn durable_seq(&self) -> Seq {
        match &self.kind {
            Kind::Durable(store) => store.durable_seq(),
            Kind::Memory(shared) => shared.snapshot().version(),
        }
    }

    /// Writes a checkpoint; `None` in memory (no directory).
    pub(crate) fn checkpoint(&self) -> Option<packgraph::Result<CheckpointStats>> {
        self.store().map(AnyStore::checkpoint)
    }

    /// Syncs the log (at shutdown); nothing in memory.
    ///
    /// # Errors
    /// The store's error if syncing failed.
    pub fn sync(&self) -> packgraph::Result<()> {
        match &self.kind {
            Kind::Durable(store) => store.sync().map(|_| ()),
            Kind::Memory(_) => Ok(()),
        }
    }

    /// Pins the latest version; returns its number.
    pub(crate) fn pin(&self) -> u64 {
        let latest = self.latest_version();
        let number = latest.number();
        lock(&self.pins)
            .entry(number)
            .or_insert(Pin {
                version: latest,
                count: 0,
            })
            .count += 1;
        number
    }

    /// Releases one pin of `version`; false if it holds none.
    pub(crate) fn release(&self, version: u64) -> bool {
        let mut pins = lock(&self.pins);
        let Some(pin) = pins.get_mut(&version) else {
            return false;
        };
        pin.count -= 1;
        if pin.count == 0 {
            pins.remove(&version);
        }
        true
    }

    /// Version `version`: a pinned one, or the latest if it is that one.
    pub(crate) fn version(&self, version: u64) -> Option<AnyGraph> {
        if let Some(pin) = lock(&self.pins).get(&version) {
            return Some(pin.version.graph());
        }
        let latest = self.latest();
        (version_of(&latest) == version).then_some(latest)
    }

    /// How many distinct versions are pinned.
    pub(crate) fn pinned_versions(&self) -> usize {
        lock(&self.pins).len()
    }
}

#[cfg(test)]
mod tests {
    use packgraph::graph::ExternalId;

    use super::*;

    fn insert(u: u64, v: &str) -> UpdateOp {
        UpdateOp::Insert(ExternalId::Int(u), v.into(), None)
    }

    #[test]
    fn pins_hold_their_version_while_writes_go_on() {
        let backend = Backend::memory(Graph::new(false));
        let first = backend.apply(&[insert(1, "a")]).unwrap().unwrap();
        let pinned = backend.pin();
        assert_eq!(pinned, first.version);
        backend.apply(&[insert(2, "a")]).unwrap().unwrap();
        assert_eq!(backend.pin(), pinned + 1);
        let old = backend.version(pinned).unwrap();
        assert_eq!(old.num_edges(), 1);
        assert_eq!(backend.latest().num_edges(), 2);
        assert_eq!(backend.pinned_versions(), 2);
        assert!(backend.release(pinned));
        assert!(!backend.release(pinned));
        assert!(backend.version(pinned).is_none());
        assert!(backend.version(pinned + 1).is_some());
    }

    #[test]
    fn a_weight_on_an_unweighted_graph_names_its_operation() {
        let backend = Backend::memory(Graph::new(true));
        let ops = [
            insert(1, "a"),
            UpdateOp::Insert(ExternalId::Int(1), ExternalId::Int(2), Some(2.0)),
        ];
        match backend.apply(&ops) {
            Err(WriteError::Unfit(unfit)) => assert_eq!(unfit.op, 1),
            other => panic!("{other:?}"),
        }
        assert_eq!(backend.latest().num_vertices(), 0);
        assert_eq!(backend.apply(&[]).unwrap(), None);
    }

    #[test]
    fn a_durable_backend_acknowledges_what_reopening_finds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g");
        let options = packgraph::store::StoreOptions::default();
        let store = AnyStore::create(
            &path,
            options.clone(),
            AnyGraph::Unweighted(Graph::new(false)),
        )
        .unwrap();
        let backend = Backend::durable(store);
        // A directory holds one kind of id (its first batch fixes it): a mixed batch is
        // refused whole.
        assert!(backend.apply(&[insert(7, "x"), insert(8, "x")]).is_err());
        let x = || ExternalId::Int(9);
        let applied = backend
            .apply(&[
                UpdateOp::Insert(ExternalId::Int(7), x(), None),
                UpdateOp::Insert(ExternalId::Int(8), x(), None),
            ])
            .unwrap()
            .unwrap();
        backend.wait_durable(applied.seq).unwrap();
        assert_eq!(backend.durable_seq(), applied.seq);
        assert_eq!(version_of(&backend.latest()), applied.version);
        drop(backend);
        let store = AnyStore::open(&path, options).unwrap();
        let graph = store.graph();
        assert_eq!(graph.num_edges(), 2);
        assert_eq!(graph.ids().internal_id(&x()), Some(1));
        assert_eq!(store.id_kind(), Some(packgraph::graph::IdKind::Int));
    }
}
