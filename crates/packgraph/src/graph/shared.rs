//! [`SharedGraph`]: a graph shared by many threads, [`Snapshot`]'s pattern packaged: one
//! writer at a time behind a mutex, and a published latest version ([`arc_swap`]) from
//! which any thread takes a snapshot without waiting for other readers. While readers are
//! about, a commit of many edges is published at once and small commits by the next
//! snapshot (or once they are many), so that the
//! writer of a stream of one-edge commits pays for a version (copies of what the previous
//! version shares, an index) per version a reader takes, not per commit. While readers take
//! snapshots, the versions carry their flat vertex index, derived from the previous indexed
//! version's (by the writer as part of a large commit, by the reader whose snapshot
//! publishes small ones): the index's segments are shared between versions like pages, and
//! only those of vertices whose runs moved are copied. With no reader about the writer
//! builds none, and the next reader builds its version's. With no reader about it also
//! lets the published version go, so that no version shares the writer's pages and
//! small commits write them in place; the next reader publishes again.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use arc_swap::ArcSwapOption;

use super::{Applied, EdgeLeaf, Graph, Outcome, Packing, Snapshot, Update, VersionStats};
use crate::pma::{GroupLeaf, LeafCodec};
use crate::Result;

/// A graph shared by many threads: one writer at a time, any number of readers taking
/// snapshots from any thread. Readers never wait for each other, and for the writer only
/// to publish small updates it has not published yet (see below); the writer never waits
/// for readers.
///
/// While readers are about, a commit of many edges publishes its version at once; a small
/// commit is published by the next snapshot taken after it instead (with none about,
/// every commit is, since the writer then lets the published version go): until a reader asks, the writer goes on
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
    /// Whether the writer's graph holds committed updates the latest version lacks, or
    /// the latest version was let go: a reader then publishes the writer's graph.
    pending: AtomicBool,
    /// The latest published version; `None` once the writer let it go while no reader
    /// was about ([`SharedGraph::retire`]), so that no version shares its pages (`pending`
    /// is set first).
    latest: ArcSwapOption<Graph<C>>,
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
    /// The writer's graph: the latest version with the commits since applied.
    pub(super) graph: Graph<C>,
    /// Commits applied since the latest version was published (a write group's merged
    /// batch counts once).
    pub(super) unpublished: usize,
}

impl<C: EdgeLeaf> Writer<C> {
    /// Checks `update` against the writer's graph, runs `log` with what it will leave, then
    /// applies it and counts it unpublished; nothing changes if either step fails.
    pub(super) fn apply_logged<T>(
        &mut self,
        update: &Update,
        log: impl FnOnce(Outcome) -> Result<T>,
    ) -> Result<(Applied, T)> {
        let planned = self.graph.plan_update(update)?;
        let value = log(planned.outcome())?;
        let applied = self.graph.apply_planned(update, planned);
        self.unpublished += 1;
        Ok((applied, value))
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
/// The writer publishes when the commits not yet published reach this many while readers
/// are about (a snapshot taken in the last [`READ_RECENTLY`]): each publication then
/// derives an index, so readers, whose snapshots publish too, should do most of them; and
/// the pages the writer copies from the latest version stay alive until it is replaced,
/// so that a long run of commits between snapshots would otherwise hold up to a second
/// copy of the graph.
pub(crate) const UNPUBLISHED_UPDATES_READ: usize = 1 << 14;

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
                unpublished: 0,
            }),
            owner: AtomicU64::new(0),
            pending: AtomicBool::new(false),
            indexed: ArcSwapOption::new(indexed),
            last_read: AtomicU64::new(0),
            created: Instant::now(),
            read_window: READ_RECENTLY,
            latest: ArcSwapOption::new(Some(latest)),
        }
    }

    /// The latest version, with its flat vertex index built: it holds every update whose
    /// commit returned before this call. Never waits for other readers; waits for the
    /// writer only when small updates are not yet published (the writer's current commit,
    /// if any, ends first). The writer's own thread, while it holds the writer's lock (in
    /// the closure of [`SharedGraph::commit_group`]), does not wait for itself: it gets the
    /// latest published version, which lacks the small commits not yet published.
    ///
    /// While readers take snapshots the writer's graph keeps its index up to date through
    /// small commits (`Graph::keep_index`) and derives it after large ones, so taking one
    /// is O(1), also when it publishes small commits. When the writer's graph has none
    /// (after an update too large to keep it and too small to publish at once), the
    /// snapshot that publishes derives it on the writer's graph, under the writer's lock,
    /// from the newest indexed version (only the vertices whose arcs lie in the leaves
    /// changed since are re-scanned), for the writer to keep from then on. The first
    /// snapshot after a quiet spell (none in the last [`READ_RECENTLY`]) builds its
    /// version's index, from the newest version indexed before it when there is one;
    /// later snapshots of the version share it.
    pub fn snapshot(&self) -> Snapshot<C> {
        self.last_read
            .fetch_max(self.now_ns().saturating_add(1), Ordering::Relaxed);
        let own = self.owner.load(Ordering::Relaxed) == thread_key();
        let latest = match self.pending.load(Ordering::Acquire) && !own {
            true => None,
            false => self.latest.load_full(),
        };
        let graph = match latest {
            Some(graph) => graph,
            // Commits to publish, or the version was let go after `pending` was read.
            None if !own => {
                let mut writer = self.lock();
                match self.latest.load_full() {
                    Some(graph) if !self.pending.load(Ordering::Relaxed) => graph,
                    _ => self.publish_pending(&mut writer),
                }
            }
            // The writer publishes before it runs a caller's code under its lock
            // (`SharedGraph::keep_published`), and lets the version go only after.
            None => self
                .latest
                .load_full()
                .expect("a published version while the writer runs a caller's code"),
        };
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
        self.commit_logged(update, |_| Ok(()))
            .map(|(applied, ())| applied)
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

    /// [`SharedGraph::commit`] with a step between checking the update and applying it,
    /// run as the only writer: the durable store logs the update there, knowing what it
    /// will leave ([`Outcome`]). If `log` fails, nothing is applied. `log` runs no caller's
    /// code that could take a snapshot from this thread (the version may have been let go).
    pub(crate) fn commit_logged<T>(
        &self,
        update: &Update,
        log: impl FnOnce(Outcome) -> Result<T>,
    ) -> Result<(Applied, T)>
    where
        C: EdgeLeaf,
    {
        let mut writer = self.lock();
        self.apply_logged(&mut writer, update, log)
    }

    /// [`SharedGraph::commit_logged`] of an update built from the current version as the
    /// only writer (as [`SharedGraph::commit_with`] builds one); `log` sees what the update
    /// will leave and the update.
    pub(crate) fn commit_logged_with<U: std::borrow::Borrow<Update>, T>(
        &self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
        log: impl FnOnce(Outcome, &Update) -> Result<T>,
    ) -> Result<(Applied, T)>
    where
        C: EdgeLeaf,
    {
        let mut writer = self.lock();
        self.keep_published(&mut writer);
        let update = build(&writer.graph)?;
        let update = update.borrow();
        self.apply_logged(&mut writer, update, |outcome| log(outcome, update))
    }

    /// [`Writer::apply_logged`], then ends the commit.
    fn apply_logged<T>(
        &self,
        writer: &mut Writer<C>,
        update: &Update,
        log: impl FnOnce(Outcome) -> Result<T>,
    ) -> Result<(Applied, T)>
    where
        C: EdgeLeaf,
    {
        let done = writer.apply_logged(update, log)?;
        self.end_commit(writer, update.edges());
        Ok(done)
    }

    /// Publishes the writer's graph if the latest version was let go: before the writer
    /// runs a caller's code under its lock, which may take a snapshot from this thread.
    pub(super) fn keep_published(&self, writer: &mut Writer<C>) {
        if self.latest.load().is_none() {
            self.publish_as_is(writer);
        }
    }

    /// Ends a commit (one update or a write group's) that inserted or deleted `edges`
    /// edges. With no reader about, lets the latest version go ([`SharedGraph::retire`]).
    /// Otherwise publishes the writer's graph if the commit was large or the commits not
    /// yet published are many, and leaves it for the next snapshot if not.
    pub(super) fn end_commit(&self, writer: &mut Writer<C>, edges: usize) {
        if !self.readers_about() {
            self.retire(writer);
        } else if edges >= PUBLISH_EDGES || writer.unpublished >= UNPUBLISHED_UPDATES_READ {
            self.publish_indexed(writer);
        } else {
            self.pending.store(true, Ordering::Release);
        }
    }

    /// Lets the latest version and the indexed base go while no reader is about (a bulk
    /// load, `packgraph ingest`, a stream of commits with no query): once no snapshot
    /// holds them either, the writer's pages are its own, and commits write them in place
    /// instead of copying each page they change once per published version. The next
    /// snapshot publishes the writer's graph and builds its index.
    fn retire(&self, writer: &mut Writer<C>) {
        writer.unpublished = 0;
        // Nobody reads it until the next snapshot, which derives it again: small commits
        // need not keep it up to date meanwhile.
        writer.graph.index = std::sync::OnceLock::new();
        // Before the version goes: a reader that finds none publishes.
        self.pending.store(true, Ordering::Release);
        self.latest.store(None);
        self.indexed.store(None);
    }

    /// Publishes the writer's graph as the latest version with its index, for the readers
    /// about ([`SharedGraph::end_commit`] calls it only then): derived from the previous
    /// indexed version's flat index, so that only the vertices with arcs in the pages the
    /// commits wrote are re-scanned and only their index segments copied, or built in full
    /// after a large batch or a rebuilt array.
    fn publish_indexed(&self, writer: &mut Writer<C>) {
        if !self.derive_from_newest(&writer.graph) {
            writer.graph.build_index();
        }
        let published = self.publish_as_is(writer);
        self.remember_indexed(&published);
    }

    /// Publishes the writer's pending commits for a reader. The writer's graph keeps its
    /// flat index up to date through small commits (`Graph::keep_index`), so the version
    /// published then carries it and the reader derives nothing. If the writer's graph has
    /// none (after a large batch, or the first snapshot after a quiet spell), it is derived
    /// here from the newest indexed version, once, for the writer to keep from then on;
    /// where that is no cheaper than a build, the reader builds the published version's
    /// index after the lock, as before.
    fn publish_pending(&self, writer: &mut Writer<C>) -> Arc<Graph<C>> {
        if writer.graph.index.get().is_some() {
            return self.publish_as_is(writer);
        }
        let derived = self.derive_from_newest(&writer.graph);
        let published = self.publish_as_is(writer);
        if derived {
            self.remember_indexed(&published);
        }
        published
    }

    /// Derives `graph`'s flat index from the newest indexed version's (the latest if
    /// indexed, else the remembered base; [`Graph::derive_index_from`]); whether it did.
    fn derive_from_newest(&self, graph: &Graph<C>) -> bool {
        match self.latest.load_full() {
            Some(latest) if latest.index.get().is_some() => graph.derive_index_from(&latest),
            _ => match self.indexed.load_full() {
                Some(base) => graph.derive_index_from(&base),
                None => false,
            },
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
        self.latest.store(Some(Arc::clone(&published)));
        writer.unpublished = 0;
        self.pending.store(false, Ordering::Release);
        published
    }

    /// Packs the writer's edge arrays again ([`Graph::repack`]) and publishes the result:
    /// the same edges, ids and properties in `packing`'s layout. Snapshots taken before
    /// keep the old layout until they go; the indexed base later versions derive from is
    /// the new version (derivations across the repack would rebuild anyway).
    pub fn repack(&self, packing: Packing) {
        let mut writer = self.lock();
        writer.graph.repack(packing);
        // The old base shares no page with the new arrays: holding it would only keep the
        // old layout's memory alive.
        self.indexed.store(None);
        self.end_commit(&mut writer, PUBLISH_EDGES);
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
mod tests;
