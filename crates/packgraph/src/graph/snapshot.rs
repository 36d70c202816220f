//! Versions of a graph: cheap, immutable snapshots that readers keep while the single writer
//! goes on (Aspen, section 5.2; PART, sections 3.2–3.4).
//!
//! A [`Snapshot`] holds a clone of the graph whose edge arrays share every page with the
//! writer ([`Pma`]'s `Clone`): taking one copies no edge data, only bumps a reference count.
//! The writer's next batch copies the page table (one pointer per page) and each page it
//! writes that a snapshot still holds, once; pages no snapshot holds are written in place.
//! A batch is applied to the writer's own arrays, so a snapshot sees it entirely (taken after)
//! or not at all (taken before). Dropping the last handle on a version frees the pages only it
//! held.
//!
//! [`SharedGraph`] packages the pattern for many threads: one writer at a time behind a
//! mutex, and a lock-free published latest version ([`arc_swap`]) from which any thread takes
//! a snapshot without waiting for the writer or for other readers. While readers take
//! snapshots, the published versions carry their flat vertex index, derived by the writer
//! from the previous indexed version's as part of the commit: the index's segments are
//! shared between versions like pages, and only those of vertices whose runs moved are
//! copied. Small commits are indexed every few versions, not each (a reader that takes a
//! version in between derives its index from a few small commits back). With no reader
//! about the writer builds none, and the next reader builds its version's.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::{ArcSwap, ArcSwapOption};

use super::{Applied, EdgeLeaf, Graph, GraphRead, Update, VertexId, WeightedGraphRead};
use crate::pma::{GroupLeaf, LeafCodec, PageStats, Pma};
use crate::Result;

/// An immutable version of a [`Graph`]: `Send + Sync + Clone`, readable with every algorithm,
/// unchanged however long it is held and however the writer goes on.
///
/// Dereferences to the [`Graph`] as of its version for the read-only methods.
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead};
/// use packgraph::algo;
///
/// let mut g = Graph::from_edges(4, &[(0, 1), (1, 2)], false).unwrap();
/// let before = g.snapshot();
/// g.insert_edges(&[(2, 3)]).unwrap();
/// g.delete_edges(&[(0, 1)]).unwrap();
/// assert_eq!(before.version() + 2, g.version());
/// assert_eq!((before.num_edges(), before.num_arcs()), (2, 4)); // each edge both ways
/// assert!(before.has_edge(0, 1) && !before.has_edge(2, 3));
/// let tree = algo::bfs(&before, 0).unwrap();
/// assert_eq!(tree.depths[2], 2);
/// ```
pub struct Snapshot<C: LeafCodec = GroupLeaf> {
    graph: Arc<Graph<C>>,
}

impl<C: LeafCodec> Clone for Snapshot<C> {
    fn clone(&self) -> Self {
        Self {
            graph: Arc::clone(&self.graph),
        }
    }
}

impl<C: LeafCodec> std::fmt::Debug for Snapshot<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.graph.version)
            .field("num_vertices", &self.graph.num_vertices)
            .field("num_arcs", &self.graph.out.len())
            .finish()
    }
}

impl<C: LeafCodec> Deref for Snapshot<C> {
    type Target = Graph<C>;

    fn deref(&self) -> &Graph<C> {
        &self.graph
    }
}

impl<C: LeafCodec> Snapshot<C> {
    /// The version number: how many batches the writer had applied when it was taken.
    pub fn version(&self) -> u64 {
        self.graph.version
    }

    /// Whether two handles are the same version (the same memory).
    pub fn same_version(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.graph, &other.graph)
    }

    /// The version as a graph of its own, to save with [`io::save`](crate::io::save) or to
    /// go on writing from. O(1): shares every page (the writer copies a page before it
    /// changes one another version holds).
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead};
    ///
    /// let mut g = Graph::from_edges(3, &[(0, 1)], false).unwrap();
    /// let before = g.snapshot();
    /// g.insert_edges(&[(1, 2)]).unwrap();
    /// let mut copy = before.to_graph();
    /// assert_eq!(copy.num_edges(), 1);
    /// copy.insert_edges(&[(0, 2)]).unwrap();
    /// assert!(!before.has_edge(0, 2) && !g.has_edge(0, 2));
    /// ```
    pub fn to_graph(&self) -> Graph<C> {
        self.graph.version_copy()
    }
}

/// How a graph version's pages are shared: the out-array's and the in-array's
/// [`PageStats`] added up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VersionStats {
    /// Pages in the version.
    pub pages: usize,
    /// Of those, pages another version also holds.
    pub shared: usize,
    /// Pages the writer copied since it was created because a version shared them.
    pub copied: usize,
    /// Bytes of those pages.
    pub copied_bytes: usize,
}

impl VersionStats {
    fn add(&mut self, stats: PageStats) {
        self.pages += stats.pages;
        self.shared += stats.shared;
        self.copied += stats.copied;
        self.copied_bytes += stats.copied * stats.page_bytes;
    }
}

impl<C: LeafCodec> Graph<C> {
    /// How many updates have been applied (each [`Graph::apply`] is one version).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// An immutable snapshot of the graph as it is now. O(1): shares every page and the flat
    /// vertex index if it was built; copies no edge data.
    pub fn snapshot(&self) -> Snapshot<C> {
        Snapshot {
            graph: Arc::new(self.version_copy()),
        }
    }

    /// A graph of its own holding this version: shares every page and the flat index.
    pub(super) fn version_copy(&self) -> Graph<C> {
        let index = OnceLock::new();
        if let Some(built) = self.index.get() {
            let _ = index.set(Arc::clone(built));
        }
        Graph {
            directed: self.directed,
            num_vertices: self.num_vertices,
            out: self.out.clone(),
            incoming: self.incoming.clone(),
            index,
            version: self.version,
            ids: self.ids.clone(),
            properties: self.properties.clone(),
        }
    }

    /// How this version's pages are shared with snapshots, and how many the writer copied.
    pub fn version_stats(&self) -> VersionStats {
        let mut stats = VersionStats::default();
        stats.add(self.out.page_stats());
        if let Some(incoming) = &self.incoming {
            stats.add(incoming.page_stats());
        }
        stats
    }

    /// Sets the version number (a graph loaded from a checkpoint takes the saved one).
    pub(crate) fn set_version(&mut self, version: u64) {
        self.version = version;
    }

    /// The out-edge array (for page-level inspection in tests and benchmarks).
    pub fn out_array(&self) -> &Pma<C> {
        &self.out
    }
}

impl<C: LeafCodec> GraphRead for Snapshot<C> {
    fn num_vertices(&self) -> usize {
        self.graph.num_vertices()
    }

    fn num_arcs(&self) -> usize {
        self.graph.num_arcs()
    }

    fn is_directed(&self) -> bool {
        self.graph.is_directed()
    }

    fn out_degree(&self, v: VertexId) -> usize {
        self.graph.out_degree(v)
    }

    fn in_degree(&self, v: VertexId) -> usize {
        self.graph.in_degree(v)
    }

    fn for_each_out_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        self.graph.for_each_out_neighbor(v, f)
    }

    fn for_each_in_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        self.graph.for_each_in_neighbor(v, f)
    }

    #[inline]
    fn prefetch_in_neighbors(&self, v: VertexId) {
        self.graph.prefetch_in_neighbors(v);
    }

    fn for_each_out_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        f: impl FnMut(VertexId, VertexId),
    ) {
        self.graph.for_each_out_arc_in(vertices, f);
    }

    fn for_each_in_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        f: impl FnMut(VertexId, VertexId),
    ) {
        self.graph.for_each_in_arc_in(vertices, f);
    }

    fn out_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.graph.out_arcs_in(vertices, scratch)
    }

    fn in_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.graph.in_arcs_in(vertices, scratch)
    }
}

impl<C: EdgeLeaf> WeightedGraphRead for Snapshot<C> {
    const DECODES: bool = true;

    fn for_each_out_edge(&self, v: VertexId, f: impl FnMut(VertexId, f64) -> bool) -> bool {
        self.graph.for_each_out_edge(v, f)
    }
}

/// A graph shared by many threads: one writer at a time, any number of readers taking
/// snapshots from any thread. Readers never wait for the writer or for each other (the
/// latest version is published through an atomic pointer); the writer never waits for
/// readers.
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
    writer: Mutex<Graph<C>>,
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
    /// Versions published since the last one the writer indexed, and the edges their
    /// updates inserted or deleted (written by the writer only, under its lock).
    unindexed_versions: AtomicUsize,
    unindexed_edges: AtomicUsize,
}

/// While readers are about, the writer derives the flat index of at least every this many
/// versions ([`SharedGraph::commit`])...
pub(crate) const INDEX_EVERY: usize = 16;
/// ... and of every version whose updates since the last indexed one changed at least this
/// many edges. Between those, a version is published without one, and a reader that takes
/// it derives the index from the newest indexed version: from at most `INDEX_EVERY - 1`
/// small updates back.
pub(crate) const INDEX_EDGES: usize = 64;

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
    /// Shares `graph`; its current state is the first published version (its flat vertex
    /// index is built now if it was not).
    pub fn new(graph: Graph<C>) -> Self {
        graph.build_index();
        let latest = graph.snapshot().graph;
        Self {
            writer: Mutex::new(graph),
            indexed: ArcSwapOption::new(Some(Arc::clone(&latest))),
            last_read: AtomicU64::new(0),
            created: Instant::now(),
            read_window: READ_RECENTLY,
            unindexed_versions: AtomicUsize::new(0),
            unindexed_edges: AtomicUsize::new(0),
            latest: ArcSwap::new(latest),
        }
    }

    /// The latest published version, with its flat vertex index built. Lock-free; never
    /// waits for the writer or for other readers.
    ///
    /// While readers take snapshots the writer builds the index of every version but those
    /// of some small commits as part of the commit, and this is O(1); a snapshot of a
    /// version published without one derives it from the newest indexed version, at most
    /// a few small commits back. The first snapshot after a quiet spell (none in the last
    /// [`READ_RECENTLY`]) builds its version's index, from the newest version indexed
    /// before it when there is one; later snapshots of the version share it.
    pub fn snapshot(&self) -> Snapshot<C> {
        let graph = self.latest.load_full();
        self.last_read
            .fetch_max(self.now_ns().saturating_add(1), Ordering::Relaxed);
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

    /// Applies `update` as the only writer (other writers wait), then publishes the new
    /// version, so that snapshots taken afterwards see all of it. On an error nothing is
    /// applied and nothing published.
    ///
    /// # Errors
    /// As [`Graph::apply`].
    pub fn commit(&self, update: &Update) -> Result<Applied>
    where
        C: EdgeLeaf,
    {
        self.commit_with(|_| Ok(update))
    }

    /// Builds an update from the current version as the only writer, then applies and
    /// publishes it, so that nothing can change between the two: for updates given in
    /// external ids ([`Graph::plan_vertices`]).
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
        let mut graph = self.lock();
        let update = build(&graph)?;
        let applied = graph.apply(update.borrow())?;
        self.publish(&graph, update.borrow().edges());
        Ok(applied)
    }

    /// [`SharedGraph::commit`] with a step between applying and publishing, run as the
    /// only writer: the durable store logs the update there. If `log` fails, the writer's
    /// graph goes back to the latest published version and nothing is published.
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
        let mut graph = self.lock();
        let update = build(&graph)?;
        let applied = graph.apply(update.borrow())?;
        match log(&graph, update.borrow()) {
            Ok(value) => {
                self.publish(&graph, update.borrow().edges());
                Ok((applied, value))
            }
            Err(e) => {
                *graph = self.latest.load_full().version_copy();
                Err(e)
            }
        }
    }

    /// Publishes the writer's `graph`, whose updates since the last published version
    /// inserted or deleted `edges` edges, as the latest version.
    ///
    /// While readers are about (a snapshot taken in the last [`READ_RECENTLY`]) the writer
    /// indexes versions, each derived from the previous indexed version's flat index, so that
    /// only the vertices with arcs in the pages the commits wrote are re-scanned and only
    /// their index segments copied, or built in full after a large batch or a rebuilt
    /// array. Small commits are indexed every [`INDEX_EVERY`] versions, not each: a version
    /// costs the fixed part of a derivation (a page table diff, segment and chunk copies)
    /// whatever its size, and readers take a few of the many versions a stream of one-edge
    /// commits publishes; a reader that takes one in between derives its index from the
    /// newest indexed version, a few small commits back. With no reader about (a bulk
    /// load, `packgraph ingest`) nothing is built and the old base is let go, which would
    /// only keep its pages alive.
    pub(super) fn publish(&self, graph: &Graph<C>, edges: usize) {
        let read = self.last_read.load(Ordering::Relaxed);
        let window = u64::try_from(self.read_window.as_nanos()).unwrap_or(u64::MAX);
        let readers_about =
            read != 0 && self.now_ns().saturating_sub(read.saturating_sub(1)) <= window;
        let versions = self.unindexed_versions.load(Ordering::Relaxed) + 1;
        let edges = self
            .unindexed_edges
            .load(Ordering::Relaxed)
            .saturating_add(edges);
        let index_now = readers_about && (versions >= INDEX_EVERY || edges >= INDEX_EDGES);
        if index_now {
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
        let (versions, edges) = if index_now { (0, 0) } else { (versions, edges) };
        self.unindexed_versions.store(versions, Ordering::Relaxed);
        self.unindexed_edges.store(edges, Ordering::Relaxed);
        let published = graph.snapshot().graph;
        self.latest.store(Arc::clone(&published));
        if index_now {
            self.remember_indexed(&published);
        } else if !readers_about {
            self.indexed.store(None);
        }
    }

    /// Runs `f` on the writer's graph as the only writer (the latest published version).
    pub(crate) fn with_writer<T>(&self, f: impl FnOnce(&Graph<C>) -> T) -> T {
        f(&self.lock())
    }

    /// The writer's page statistics (pages shared with published or held versions, and
    /// copied so far).
    pub fn version_stats(&self) -> VersionStats {
        self.lock().version_stats()
    }

    /// Takes the graph back out.
    pub fn into_inner(self) -> Graph<C> {
        self.writer
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    pub(super) fn lock(&self) -> MutexGuard<'_, Graph<C>> {
        // A writer that panicked poisons the lock. Published versions are immutable and
        // stay consistent; the writer's graph is handed on as the panicking update left it.
        self.writer.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// While a reader takes snapshots the writer publishes versions with their index:
    /// derived every `INDEX_EVERY` one-edge commits (a snapshot in between derives its own),
    /// at once after a commit of many edges; with no reader about (here a window of zero)
    /// it builds none, and the next reader builds its version's, the same index a full
    /// build gives.
    #[test]
    fn the_writer_builds_indexes_while_readers_are_about() {
        let n = 1 << 12;
        let edges: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 7 + 1) % n)).collect();
        let mut shared = SharedGraph::new(Graph::from_edges(n as usize, &edges, true).unwrap());
        assert_eq!(shared.read_window, READ_RECENTLY);
        let indexed = |shared: &SharedGraph| shared.latest.load().index.get().is_some();
        // No snapshot taken yet (a process that only writes): nothing is built.
        shared
            .commit(Update::new().insert_edges(&[(2, 4)]))
            .unwrap();
        assert!(!indexed(&shared), "no snapshot yet: none built");
        assert!(shared.snapshot().has_edge(2, 4));
        // One version published so far without an index: the writer indexes the version
        // `INDEX_EVERY` small commits after the last indexed one, and every such one after.
        let mut by_writer = Vec::new();
        for i in 0..2 * INDEX_EVERY as VertexId {
            shared
                .commit(Update::new().insert_edges(&[(i + 3, i + 5)]))
                .unwrap();
            if indexed(&shared) {
                by_writer.push(i as usize);
            }
        }
        assert_eq!(by_writer, [INDEX_EVERY - 2, 2 * INDEX_EVERY - 2]);
        assert!(!indexed(&shared));
        let between = shared.snapshot();
        assert!(between.has_edge(3, 5) && between.graph.index.get().is_some());
        between.check_invariants().unwrap();
        let many: Vec<(VertexId, VertexId)> = (0..n).map(|v| (v, (v * 13 + 3) % n)).collect();
        shared.commit(Update::new().insert_edges(&many)).unwrap();
        assert!(indexed(&shared), "most leaves, a reader about: built");

        shared.read_window = Duration::ZERO;
        std::thread::sleep(Duration::from_millis(2));
        for i in 0..20 {
            shared
                .commit(Update::new().insert_edges(&[(i, 9)]))
                .unwrap();
        }
        assert!(!indexed(&shared), "no reader about: none built");
        let snap = shared.snapshot();
        assert!(snap.graph.index.get().is_some());
        let fresh = snap.graph.version_copy();
        fresh.build_index();
        for v in [0, 3, 9, 100, n - 1] {
            assert_eq!(snap.out_neighbors(v), fresh.out_neighbors(v));
            assert_eq!(snap.out_degree(v), fresh.out_degree(v));
        }
        // A reader is about again: the next commit, `INDEX_EVERY` or more versions after the
        // last indexed one, is published with its index.
        shared.read_window = READ_RECENTLY;
        shared
            .commit(Update::new().delete_edges(&[(3, 5)]))
            .unwrap();
        assert!(indexed(&shared));
        assert!(!shared.snapshot().has_edge(3, 5));
    }
}
