//! [`SharedGraph`]: a graph shared by many threads, [`Snapshot`]'s pattern packaged: one
//! writer at a time behind a mutex, and a published latest version ([`arc_swap`]) from
//! which any thread takes a snapshot without waiting for other readers. A commit of many edges is published at once;
//! small commits are published by the next snapshot (or once they are many), so that the
//! writer of a stream of one-edge commits pays for a version (copies of what the previous
//! version shares, an index) per version a reader takes, not per commit. While readers take
//! snapshots, the versions carry their flat vertex index, derived from the previous indexed
//! version's (by the writer as part of a large commit, by the reader whose snapshot
//! publishes small ones): the index's segments are shared between versions like pages, and
//! only those of vertices whose runs moved are copied. With no reader about the writer
//! builds none, and the next reader builds its version's.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};

use super::{Applied, EdgeLeaf, Graph, Snapshot, Update, VersionStats};
use crate::pma::{GroupLeaf, LeafCodec};
use crate::Result;

/// A graph shared by many threads: one writer at a time, any number of readers taking
/// snapshots from any thread. Readers never wait for each other, and for the writer only
/// to publish small updates it has not published yet (see below); the writer never waits
/// for readers.
///
/// A commit of many edges publishes its version at once. A small commit is published by
/// the next snapshot taken after it instead: until a reader asks, the writer goes on
/// writing its own graph in place, so that a run of small commits copies each page,
/// page-table group and index segment it changes once per version a reader takes rather
/// than once per commit, and derives no index for versions nobody reads. A snapshot
/// still sees every commit that returned before it was taken.
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead, SharedGraph, Update};
///
/// let shared = SharedGraph::new(Graph::from_edges(3, &[(0, 1)], false).unwrap());
/// std::thread::scope(|s| {
///     s.spawn(|| {
///         shared.commit(Update::new().insert_edges(&[(1, 2)])).unwrap();
///     });
///     s.spawn(|| {
///         let snap = shared.snapshot();
///         // Either before the batch or after it, never half of it.
///         assert!(snap.num_edges() == 1 || snap.num_edges() == 2);
///     });
/// });
/// assert_eq!(shared.snapshot().num_arcs(), 4);
/// ```
pub struct SharedGraph<C: LeafCodec = GroupLeaf> {
    writer: Mutex<Writer<C>>,
    /// The thread holding the writer's lock ([`thread_key`]), 0 when none: a snapshot
    /// taken by that thread does not wait for the lock it holds itself.
    owner: AtomicU64,
    /// Whether the writer's graph holds committed updates the latest version lacks.
    pending: AtomicBool,
    /// The latest published version.
    pub(super) latest: ArcSwap<Graph<C>>,
    /// The newest version whose flat index is built: the base the next version's index is
    /// derived from. Keeps that one version's pages alive until a newer one replaces it;
    /// cleared when no reader is about.
    indexed: ArcSwapOption<Graph<C>>,
    /// When the last snapshot was taken, in nanoseconds after `created` plus one; 0 until
    /// the first snapshot, so that a process that only writes (a bulk load, `ingest`)
    /// builds no index in its first [`READ_RECENTLY`] either. The writer builds indexes
    /// while the last snapshot was at most `read_window` ago.
    last_read: AtomicU64,
    created: Instant,
    read_window: Duration,
}

/// The writer's side of a [`SharedGraph`], behind its lock.
pub(super) struct Writer<C: LeafCodec> {
    /// The writer's graph: the latest version with the updates of `unpublished` applied.
    pub(super) graph: Graph<C>,
    /// The updates applied since the latest published version, in order, each with the
    /// versions it counts for (more than one for a write group's merged batch): to bring
    /// the graph back to the state before an update whose log step failed.
    pub(super) unpublished: Vec<(Update, u64)>,
    /// Edges those updates insert or delete.
    unpublished_edges: usize,
}

impl<C: LeafCodec> Writer<C> {
    /// Keeps `update`, just applied and counted as `versions`, among the unpublished ones.
    pub(super) fn keep(&mut self, update: Update, versions: u64) {
        self.unpublished_edges += update.edges();
        self.unpublished.push((update, versions));
    }

    /// The graph of `latest` (the latest published version) with the unpublished updates
    /// applied again, each counted as its versions: the state the last kept update left.
    pub(super) fn redo(&mut self, latest: &Graph<C>, apply: ApplyFn<C>) {
        let mut graph = latest.version_copy();
        for (update, versions) in &self.unpublished {
            let version = graph.version();
            // Each was applied to this very state before, so it applies again.
            let redone = apply(&mut graph, update);
            debug_assert!(redone.is_ok(), "an unpublished update fails again");
            graph.set_version(version + versions);
        }
        self.graph = graph;
    }
}

/// [`Graph::apply`] as a function pointer (also for code without the edge-leaf bound).
pub(super) type ApplyFn<C> = fn(&mut Graph<C>, &Update) -> Result<Applied>;

/// The writer's lock held: the [`Writer`], and the owner mark cleared on release.
pub(super) struct WriterGuard<'a, C: LeafCodec> {
    writer: MutexGuard<'a, Writer<C>>,
    owner: &'a AtomicU64,
}

impl<C: LeafCodec> Deref for WriterGuard<'_, C> {
    type Target = Writer<C>;

    fn deref(&self) -> &Writer<C> {
        &self.writer
    }
}

impl<C: LeafCodec> DerefMut for WriterGuard<'_, C> {
    fn deref_mut(&mut self) -> &mut Writer<C> {
        &mut self.writer
    }
}

impl<C: LeafCodec> Drop for WriterGuard<'_, C> {
    fn drop(&mut self) {
        self.owner.store(0, Ordering::Relaxed);
    }
}

/// A number of the calling thread's own, never 0.
fn thread_key() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static KEY: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    KEY.with(|key| *key)
}

/// An update (or a write group's updates) inserting or deleting at least this many edges
/// is published at once; smaller ones wait for the next snapshot. Past it the fixed cost
/// of a version (copies of what the previous version shares, an index derivation) is
/// small beside the update's own, and a reader should not wait for the writer to publish
/// a large update.
pub(crate) const PUBLISH_EDGES: usize = 1024;
/// The writer publishes when the updates not yet published reach this many while readers
/// are about (a snapshot taken in the last [`READ_RECENTLY`]): each publication then
/// derives an index, so readers, whose snapshots publish too, should do most of them...
pub(crate) const UNPUBLISHED_UPDATES_READ: usize = 1 << 14;
/// ... or this many with none about: the pages the writer copies from the latest version
/// stay alive until it is replaced, and a publication hands them back for reuse (`pma`'s
/// page pool), so that a writer alone keeps few pages more than its graph's...
pub(crate) const UNPUBLISHED_UPDATES: usize = 256;
/// ... or when they insert or delete this many edges: they are kept to redo after a failed
/// log step, so their memory stays bounded.
pub(crate) const UNPUBLISHED_EDGES: usize = 1 << 16;

/// How long after the last snapshot a reader took the writer goes on building each
/// version's flat index ([`SharedGraph::snapshot`]).
pub const READ_RECENTLY: Duration = Duration::from_secs(1);

impl<C: LeafCodec> std::fmt::Debug for SharedGraph<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedGraph")
            .field("latest", &self.snapshot())
            .finish()
    }
}

impl<C: LeafCodec> SharedGraph<C> {
    /// Shares `graph`; its current state is the first published version. Its flat vertex
    /// index, if it has none, is built by the first snapshot, so that a process that only
    /// writes (a bulk load, `packgraph ingest`) builds none.
    pub fn new(graph: Graph<C>) -> Self {
        let latest = graph.snapshot().graph;
        let indexed = latest.index.get().is_some().then(|| Arc::clone(&latest));
        Self {
            writer: Mutex::new(Writer {
                graph,
                unpublished: Vec::new(),
                unpublished_edges: 0,
            }),
            owner: AtomicU64::new(0),
            pending: AtomicBool::new(false),
            indexed: ArcSwapOption::new(indexed),
            last_read: AtomicU64::new(0),
            created: Instant::now(),
            read_window: READ_RECENTLY,
            latest: ArcSwap::new(latest),
        }
    }

    /// The latest version, with its flat vertex index built: it holds every update whose
    /// commit returned before this call. Never waits for other readers; waits for the
    /// writer only when small updates are not yet published (the writer's current commit,
    /// if any, ends first). The writer's own thread, while it holds the writer's lock (in
    /// the closure of [`SharedGraph::commit_group`]), does not wait for itself: it gets the
    /// latest published version, which lacks the small commits not yet published.
    ///
    /// While readers take snapshots the writer builds the index of every version it
    /// publishes as part of the commit, and taking one is O(1); a snapshot that publishes
    /// small updates, or takes a version published without an index, derives it from the
    /// newest indexed version (only the vertices whose arcs lie in the leaves changed
    /// since are re-scanned). The first snapshot after a quiet spell (none in the last
    /// [`READ_RECENTLY`]) builds its version's index, from the newest version indexed
    /// before it when there is one; later snapshots of the version share it.
    pub fn snapshot(&self) -> Snapshot<C> {
        self.last_read
            .fetch_max(self.now_ns().saturating_add(1), Ordering::Relaxed);
        if self.pending.load(Ordering::Acquire)
            && self.owner.load(Ordering::Relaxed) != thread_key()
        {
            let mut writer = self.lock();
            if self.pending.load(Ordering::Relaxed) {
                self.publish_as_is(&mut writer);
            }
        }
        let graph = self.latest.load_full();
        if graph.index.get().is_none() {
            match self.indexed.load_full() {
                Some(base) if base.version < graph.version => {
                    graph.build_index_from(&base);
                }
                _ => graph.build_index(),
            }
            self.remember_indexed(&graph);
        }
        Snapshot { graph }
    }

    /// Nanoseconds since this was created.
    fn now_ns(&self) -> u64 {
        u64::try_from(self.created.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Makes `graph`, whose index is built, the base later indexes derive from unless a
    /// newer one is.
    fn remember_indexed(&self, graph: &Arc<Graph<C>>) {
        self.indexed.rcu(|current| match current {
            Some(newer) if newer.version >= graph.version => Some(Arc::clone(newer)),
            _ => Some(Arc::clone(graph)),
        });
    }

    /// Applies `update` as the only writer (other writers wait), so that snapshots taken
    /// afterwards see all of it. On an error nothing is applied.
    ///
    /// # Errors
    /// As [`Graph::apply`].
    pub fn commit(&self, update: &Update) -> Result<Applied>
    where
        C: EdgeLeaf,
    {
        self.commit_with(|_| Ok(update))
    }

    /// Builds an update from the current version as the only writer, then applies it, so
    /// that nothing can change between the two: for updates given in external ids
    /// ([`Graph::plan_vertices`]).
    ///
    /// # Errors
    /// `build`'s error, or as [`Graph::apply`].
    pub fn commit_with<U: std::borrow::Borrow<Update>>(
        &self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<Applied>
    where
        C: EdgeLeaf,
    {
        self.commit_logged_with(build, |_, _| Ok(()))
            .map(|(applied, ())| applied)
    }

    /// [`SharedGraph::commit`] with a step after applying, run as the only writer: the
    /// durable store logs the update there. If `log` fails, the writer's graph goes back
    /// to the state before the update.
    pub(crate) fn commit_logged<T>(
        &self,
        update: &Update,
        log: impl FnOnce(&Graph<C>) -> Result<T>,
    ) -> Result<(Applied, T)>
    where
        C: EdgeLeaf,
    {
        self.commit_logged_with(|_| Ok(update), |graph, _| log(graph))
    }

    /// [`SharedGraph::commit_logged`] of an update built from the current version as the
    /// only writer (as [`SharedGraph::commit_with`] builds one); `log` sees the graph after
    /// the update and the update.
    pub(crate) fn commit_logged_with<U: std::borrow::Borrow<Update>, T>(
        &self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
        log: impl FnOnce(&Graph<C>, &Update) -> Result<T>,
    ) -> Result<(Applied, T)>
    where
        C: EdgeLeaf,
    {
        let mut writer = self.lock();
        let update = build(&writer.graph)?;
        let update = update.borrow();
        let applied = writer.graph.apply(update)?;
        match log(&writer.graph, update) {
            Ok(value) => {
                self.committed(&mut writer, update, 1);
                Ok((applied, value))
            }
            Err(e) => {
                writer.redo(&self.latest.load_full(), |graph, update| {
                    graph.apply(update)
                });
                Err(e)
            }
        }
    }

    /// Ends a commit of `update`, applied to the writer's graph and counted as `versions`:
    /// publishes the writer's graph if the update is large; keeps the update otherwise
    /// ([`SharedGraph::end_commit`]).
    pub(super) fn committed(&self, writer: &mut Writer<C>, update: &Update, versions: u64) {
        let edges = update.edges();
        if edges >= PUBLISH_EDGES {
            self.publish(writer);
            return;
        }
        writer.keep(update.clone(), versions);
        self.end_commit(writer, edges);
    }

    /// Ends a commit (one update or a write group's) that inserted or deleted `edges`
    /// edges, its updates kept in `writer.unpublished`: publishes the writer's graph if
    /// the commit was large or the updates not yet published are many; leaves it for the
    /// next snapshot otherwise.
    pub(super) fn end_commit(&self, writer: &mut Writer<C>, edges: usize) {
        let most = if self.readers_about() {
            UNPUBLISHED_UPDATES_READ
        } else {
            UNPUBLISHED_UPDATES
        };
        if edges >= PUBLISH_EDGES
            || writer.unpublished.len() >= most
            || writer.unpublished_edges >= UNPUBLISHED_EDGES
        {
            self.publish(writer);
        } else {
            self.pending.store(true, Ordering::Release);
        }
    }

    /// Publishes the writer's graph as the latest version.
    ///
    /// While readers are about (a snapshot taken in the last [`READ_RECENTLY`]) the writer
    /// indexes it, derived from the previous indexed version's flat index, so that only
    /// the vertices with arcs in the pages the commits wrote are re-scanned and only their
    /// index segments copied, or built in full after a large batch or a rebuilt array.
    /// With no reader about (a bulk load, `packgraph ingest`) nothing is built and the old
    /// base is let go, which would only keep its pages alive.
    pub(super) fn publish(&self, writer: &mut Writer<C>) {
        let readers_about = self.readers_about();
        let graph = &writer.graph;
        if readers_about {
            let latest = self.latest.load_full();
            let derived = match latest.index.get() {
                Some(_) => graph.derive_index_from(&latest),
                None => match self.indexed.load_full() {
                    Some(base) => graph.derive_index_from(&base),
                    None => false,
                },
            };
            if !derived {
                graph.build_index();
            }
        }
        let published = self.publish_as_is(writer);
        if readers_about {
            self.remember_indexed(&published);
        } else {
            self.indexed.store(None);
        }
    }

    /// Whether a snapshot was taken in the last `read_window` ([`READ_RECENTLY`]).
    fn readers_about(&self) -> bool {
        let read = self.last_read.load(Ordering::Relaxed);
        let window = u64::try_from(self.read_window.as_nanos()).unwrap_or(u64::MAX);
        read != 0 && self.now_ns().saturating_sub(read.saturating_sub(1)) <= window
    }

    /// Publishes the writer's graph as the latest version, with its index if built, and
    /// returns it.
    fn publish_as_is(&self, writer: &mut Writer<C>) -> Arc<Graph<C>> {
        let published = writer.graph.snapshot().graph;
        self.latest.store(Arc::clone(&published));
        writer.unpublished.clear();
        writer.unpublished_edges = 0;
        self.pending.store(false, Ordering::Release);
        published
    }

    /// Runs `f` on the writer's graph as the only writer (the latest version with the
    /// updates not yet published).
    pub(crate) fn with_writer<T>(&self, f: impl FnOnce(&Graph<C>) -> T) -> T {
        f(&self.lock().graph)
    }

    /// The writer's page statistics (pages shared with published or held versions, and
    /// copied so far).
    pub fn version_stats(&self) -> VersionStats {
        self.lock().graph.version_stats()
    }

    /// Takes the graph back out.
    pub fn into_inner(self) -> Graph<C> {
        self.writer
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .graph
    }

    pub(super) fn lock(&self) -> WriterGuard<'_, C> {
        // A writer that panicked poisons the lock. Published versions are immutable and
        // stay consistent; the writer's graph is handed on as the panicking update left it.
        let writer = self.writer.lock().unwrap_or_else(PoisonError::into_inner);
        self.owner.store(thread_key(), Ordering::Relaxed);
        WriterGuard {
            writer,
            owner: &self.owner,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{GraphRead, VertexId};

    /// The version a reader would load without publishing (its number and whether its
    /// index is built).
    fn published(shared: &SharedGraph) -> (u64, bool) {
        let latest = shared.latest.load();
        (latest.version, latest.index.get().is_some())
    }

    /// Small commits wait for the next snapshot, which publishes and indexes them; a large
    /// one is published at once, indexed while a reader is about (here within the read
    /// window) and not otherwise; the next reader then builds its version's index, the same
    /// a full build gives.
    #[test]
    fn small_commits_are_published_by_the_next_snapshot() {
        let n = 1 << 12;
        let edges: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 7 + 1) % n)).collect();
        let mut shared = SharedGraph::new(Graph::from_edges(n as usize, &edges, true).unwrap());
        assert_eq!(shared.read_window, READ_RECENTLY);
        assert_eq!(published(&shared), (1, false));
        shared
            .commit(Update::new().insert_edges(&[(2, 4)]))
            .unwrap();
        assert_eq!(published(&shared), (1, false), "small: not published");
        let snap = shared.snapshot();
        assert!(snap.has_edge(2, 4) && snap.version() == 2);
        assert_eq!(
            published(&shared),
            (2, true),
            "published and indexed by the reader"
        );
        for i in 0..40 {
            shared
                .commit(Update::new().insert_edges(&[(i + 3, i + 5)]))
                .unwrap();
        }
        assert_eq!(published(&shared), (2, true));
        let between = shared.snapshot();
        assert!(between.has_edge(3, 5) && between.has_edge(42, 44));
        assert_eq!(between.version(), 42);
        assert!(between.graph.index.get().is_some());
        between.check_invariants().unwrap();
        assert!(
            snap.has_edge(2, 4) && !snap.has_edge(3, 5),
            "the older one unchanged"
        );

        let many: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 13 + 3) % n)).collect();
        assert!(many.len() >= PUBLISH_EDGES);
        shared.commit(Update::new().insert_edges(&many)).unwrap();
        assert_eq!(
            published(&shared),
            (43, true),
            "large, a reader about: indexed"
        );

        shared.read_window = Duration::ZERO;
        std::thread::sleep(Duration::from_millis(2));
        for i in 0..20 {
            shared
                .commit(Update::new().insert_edges(&[(i, 9)]))
                .unwrap();
        }
        assert_eq!(published(&shared), (43, true));
        let many: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 5 + 2) % n)).collect();
        shared.commit(Update::new().insert_edges(&many)).unwrap();
        assert_eq!(
            published(&shared),
            (64, false),
            "large, no reader about: no index"
        );
        let snap = shared.snapshot();
        assert!(snap.graph.index.get().is_some() && snap.has_edge(19, 9));
        let fresh = snap.graph.version_copy();
        fresh.build_index();
        for v in [0, 3, 9, 100, n - 1] {
            assert_eq!(snap.out_neighbors(v), fresh.out_neighbors(v));
            assert_eq!(snap.out_degree(v), fresh.out_degree(v));
        }
    }

    /// Small commits no reader asks for are published once they are many, so that the
    /// updates kept to redo them stay bounded.
    #[test]
    fn many_small_commits_are_published_without_a_reader() {
        let shared = SharedGraph::new(Graph::from_edges(64, &[(0, 1)], false).unwrap());
        for i in 0..UNPUBLISHED_UPDATES as VertexId {
            shared
                .commit(Update::new().insert_edges(&[(i % 64, (i * 7 + 3) % 64)]))
                .unwrap();
        }
        let version = UNPUBLISHED_UPDATES as u64 + 1;
        assert_eq!(published(&shared).0, version);
        assert!(shared.lock().unpublished.is_empty());
        assert_eq!(shared.snapshot().version(), version);
    }

    /// A log step that fails after small commits that are not published yet takes back
    /// only its own update: the writer's graph is the latest version with those commits
    /// applied again, their versions counted, and the writer goes on from there.
    #[test]
    fn a_failed_log_step_redoes_the_unpublished_commits() {
        let shared = SharedGraph::new(Graph::from_edges(8, &[(0, 1)], false).unwrap());
        for e in [(1, 2), (2, 3), (3, 4)] {
            shared.commit(Update::new().insert_edges(&[e])).unwrap();
        }
        shared
            .commit(Update::new().set_property("p", 2, 7i64.into()))
            .unwrap();
        assert_eq!(published(&shared).0, 1, "none published yet");
        let failed = shared.commit_logged(Update::new().insert_edges(&[(5, 6)]), |graph| {
            assert!(graph.has_edge(5, 6));
            Err::<(), _>(crate::Error::invalid_reason("the log is full"))
        });
        assert!(failed.is_err());
        {
            let writer = shared.lock();
            assert_eq!(writer.unpublished.len(), 4);
            assert_eq!(writer.graph.version(), 5);
            assert!(writer.graph.has_edge(3, 4) && !writer.graph.has_edge(5, 6));
            writer.graph.check_invariants().unwrap();
        }
        shared
            .commit(Update::new().insert_edges(&[(6, 7)]))
            .unwrap();
        let snap = shared.snapshot();
        assert_eq!((snap.version(), snap.num_edges()), (6, 5));
        assert!(snap.has_edge(2, 3) && snap.has_edge(6, 7) && !snap.has_edge(5, 6));
        assert!(snap.property("p", 2).is_some());
    }

    /// A snapshot taken while a write group runs, by the writer's own thread or another
    /// one, waits for nothing when every earlier commit is published: it gets the latest
    /// version, without the group's updates. One taken by another thread while earlier small
    /// commits wait to be published waits for the group, then has all of them.
    #[test]
    fn snapshots_during_a_write_group() {
        let shared = Arc::new(SharedGraph::new(
            Graph::from_edges(8, &[(0, 1)], false).unwrap(),
        ));
        shared
            .commit(Update::new().insert_edges(&[(1, 2)]))
            .unwrap();
        assert!(shared.snapshot().has_edge(1, 2));
        let (_, version) = shared.commit_group(|group| {
            group.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
            let inside = shared.snapshot();
            let other = std::thread::scope(|s| s.spawn(|| shared.snapshot()).join().unwrap());
            for snap in [inside, other] {
                assert_eq!(snap.version(), 2);
                assert!(snap.has_edge(1, 2) && !snap.has_edge(2, 3));
            }
        });
        assert_eq!(version, 3);
        shared
            .commit(Update::new().insert_edges(&[(3, 4)]))
            .unwrap();
        let (other, version) = shared.commit_group(|group| {
            group.commit(Update::new().insert_edges(&[(4, 5)])).unwrap();
            let reader = Arc::clone(&shared);
            let other = std::thread::spawn(move || reader.snapshot());
            std::thread::sleep(Duration::from_millis(20));
            assert!(!other.is_finished(), "waits for the group");
            other
        });
        assert_eq!(version, 5);
        let other = other.join().unwrap();
        assert_eq!((other.version(), other.num_edges()), (5, 5));
    }
}
