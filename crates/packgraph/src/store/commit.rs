//! The write path: a committed update is applied, appended to the log, and acknowledged once
//! the log is synced as the [`SyncPolicy`] says.
//!
//! One thread syncs at a time ([`Inner::sync_now`]); commits that arrive meanwhile wait
//! for it and are covered by the next. Under [`SyncPolicy::Group`] a syncer thread
//! ([`spawn_syncer`]) syncs at most every interval and commits wait for it. A failed log
//! write or sync is remembered in [`SyncState::failed`]: from then on the store refuses
//! writes, since what the log holds is no longer known.

use std::borrow::Borrow;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::{ids, lock, recover, wal, Inner, Seq, Store, StoreLeaf, SyncPolicy};
use crate::graph::{Applied, Graph, GraphRead, GroupCommit, Merged, Outcome, Update};
use crate::{Error, Result};

/// How long after the high-water mark was last written a sync of the log writes it
/// again: its cost is one more `fsync` (of the mark file) at most this often. Measured
/// with `packgraph ingest` of 2,000 one-edge batches under `--sync batch` (2 threads,
/// medians of 3): an entry at every sync took the run from 3.7 s to 9.4 s; at most one
/// per 100 ms, 2.05 s against 2.50 s without marks (within the noise). The guarantee
/// this gives is in `docs/formats/store.md`.
const MARK_SYNC_INTERVAL: Duration = Duration::from_millis(100);

/// The bytes a log record adds to its payload (header and checksum), as counted toward
/// the next background checkpoint.
const RECORD_OVERHEAD: u64 = 20;

/// Batches appended as one group: what [`Store::append_group`] hands its closure.
pub struct AppendGroup<'s, 'g, C: StoreLeaf> {
    inner: &'s Inner<C>,
    commit: &'s mut GroupCommit<'g, C>,
    /// Bytes of the records logged so far, with their overhead.
    log_bytes: &'s mut u64,
}

impl<C: StoreLeaf> AppendGroup<'_, '_, C> {
    /// The writer's graph as the group's batches so far left it (not yet published),
    /// except the edges of the batches [`AppendGroup::append_merged_with`] took since the
    /// group's last other batch.
    pub fn graph(&self) -> &Graph<C> {
        self.commit.graph()
    }

    /// How many batches the group appended so far.
    pub fn len(&self) -> usize {
        self.commit.len()
    }

    /// Whether the group appended no batch yet.
    pub fn is_empty(&self) -> bool {
        self.commit.is_empty()
    }

    /// Applies and logs `update` after the group's earlier batches; returns its sequence
    /// number and what it did.
    ///
    /// # Errors
    /// As [`Store::append`]: nothing of `update` is applied or logged, and the group's
    /// earlier batches stay.
    pub fn append(&mut self, update: &Update) -> Result<(Seq, Applied)> {
        self.append_with(|_| Ok(update))
    }

    /// [`AppendGroup::append`] of an update that `build` makes from the graph as the
    /// group's earlier batches left it (so a batch naming a new vertex sees the vertices
    /// earlier batches of the group created), as [`Store::append_with`] builds one.
    ///
    /// # Errors
    /// `build`'s error, else as [`Store::append`]: nothing of the update is applied or
    /// logged, and the group's earlier batches stay.
    pub fn append_with<U: Borrow<Update>>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<(Seq, Applied)> {
        let inner = self.inner;
        inner.check_failed()?;
        let mut payload_bytes = 0;
        let before = std::cell::Cell::new(None);
        // The record waits in the log's buffer: the group writes its records at once.
        let (applied, seq) = self.commit.commit_logged_with(
            |graph| Inner::build_checked(graph, &before, build),
            |after, update| inner.log_checked(after, update, &before, &mut payload_bytes, true),
        )?;
        *self.log_bytes += payload_bytes as u64 + RECORD_OVERHEAD;
        Ok((seq, applied))
    }

    /// [`AppendGroup::append_with`] of a batch that may be applied later, merged with the
    /// group's other such batches ([`GroupCommit::commit_merged_with`]): one that only
    /// inserts and deletes edges between vertices the graph has. It is logged as its own
    /// record now, so recovery replays the group's batches as if appended one by one, and
    /// the group's merged batch is applied before its version is published. For a writer
    /// with many one-edge batches at hand (`packgraph ingest` of an edge stream, a server's
    /// single-edge requests) this replaces an apply per batch with one sorted batch.
    ///
    /// `build` sees the graph without the edges of the merged batches not yet applied: it
    /// may look up vertices, not edges.
    ///
    /// # Errors
    /// As [`AppendGroup::append_with`].
    pub fn append_merged_with<U: Borrow<Update>>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<(Seq, Merged)> {
        let inner = self.inner;
        inner.check_failed()?;
        let mut payload_bytes = 0;
        let before = std::cell::Cell::new(None);
        let (merged, seq) = self.commit.commit_merged_logged_with(
            |graph| Inner::build_checked(graph, &before, build),
            |after, update| inner.log_checked(after, update, &before, &mut payload_bytes, true),
        )?;
        *self.log_bytes += payload_bytes as u64 + RECORD_OVERHEAD;
        Ok((seq, merged))
    }
}

/// The log's durability bookkeeping.
#[derive(Default)]
pub(super) struct SyncState {
    durable: Seq,
    syncing: bool,
    /// Set by the group-commit syncer when it found nothing to sync and waits for a
    /// record: the next append wakes it ([`Store::wake_syncer`]).
    syncer_idle: bool,
    /// Set when a log write or sync failed: the store takes no more writes.
    failed: Option<String>,
}

impl SyncState {
    /// The state of a log synced up to record `durable`.
    pub(super) fn new(durable: Seq) -> Self {
        Self {
            durable,
            ..Self::default()
        }
    }
}

impl<C: StoreLeaf> Store<C> {
    /// Applies `update` and returns once it is durable under the store's [`SyncPolicy`],
    /// with its sequence number.
    ///
    /// # Errors
    /// As [`Graph::apply`](crate::graph::Graph::apply) for a bad update, and
    /// [`Error::InvalidInput`] for one adding vertex ids of the other kind than the
    /// directory's ([`Store::id_kind`]) (nothing is applied or logged); [`Error::Io`] if the log cannot be written or synced, after which the
    /// store takes no more writes (reopen it to recover).
    pub fn commit(&self, update: &Update) -> Result<(Seq, Applied)> {
        let (seq, applied) = self.append(update)?;
        self.wait_durable(seq)?;
        Ok((seq, applied))
    }

    /// Applies and logs `update` without waiting for it to become durable: for pipelines
    /// that acknowledge later ([`Store::durable_seq`], [`Store::wait_durable`]). Readers see
    /// it at once.
    ///
    /// # Errors
    /// As [`Store::commit`].
    pub fn append(&self, update: &Update) -> Result<(Seq, Applied)> {
        let inner = &self.inner;
        inner.check_failed()?;
        let payload = update.encode();
        // Recovery refuses a record that grows the graph past what it explains; so does
        // the write path, so that every acknowledged record replays. The count comes from
        // the writer's graph: a snapshot would build the vertex index of the version.
        let before = inner.shared.with_writer(ids::IdCounts::of);
        recover::check_growth(update, before.vertices)
            .map_err(|reason| Error::invalid_reason(format!("the update {reason}")))?;
        let (applied, seq) = inner.shared.commit_logged(update, |after| {
            inner.id_kind.check(update, before, after)?;
            let mut log = lock(&inner.log);
            log.append(&*inner.vfs, &payload).inspect_err(|e| {
                lock(&inner.sync).failed = Some(e.to_string());
            })
        })?;
        self.count_log_bytes(payload.len());
        self.wake_syncer();
        Ok((seq, applied))
    }

    /// [`Store::append`] of an update that `build` makes from the latest version as the
    /// only writer, so that nothing changes between reading the graph and applying: for
    /// batches in external ids ([`build_update`](crate::io::updates::build_update)) from
    /// many threads. Also returns the graph version the update made.
    ///
    /// # Errors
    /// `build`'s error (nothing is applied or logged), else as [`Store::append`].
    pub fn append_with<U: Borrow<Update>>(
        &self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<(Seq, Applied, u64)> {
        let inner = &self.inner;
        inner.check_failed()?;
        let mut payload_bytes = 0;
        let before = std::cell::Cell::new(None);
        let (applied, (seq, version)) = inner.shared.commit_logged_with(
            |graph| Inner::build_checked(graph, &before, build),
            |after, update| {
                let seq = inner.log_checked(after, update, &before, &mut payload_bytes, false)?;
                Ok((seq, after.version))
            },
        )?;
        self.count_log_bytes(payload_bytes);
        self.wake_syncer();
        Ok((seq, applied, version))
    }

    /// Runs `group` as the only writer: the batches it appends through the
    /// [`AppendGroup`] are applied one after another, each built from the graph as the
    /// earlier ones left it and logged as its own record with its own sequence number
    /// (recovery replays them as if appended one by one), and then published as one
    /// version. Returns `group`'s value and that version, which every batch of the group
    /// shares: a reader of it sees all of them. Like [`Store::append`], waits for no sync:
    /// [`Store::wait_durable`] of the last sequence number covers the group.
    ///
    /// A version costs a fixed amount (copying what the previous version shares, deriving
    /// the readers' index), so a writer with many small batches waiting, such as a server
    /// taking single-edge requests, applies them far faster as a group.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead, Update};
    /// use packgraph::store::{Store, StoreOptions};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let store = Store::create(dir.path(), StoreOptions::default(), Graph::new(false)).unwrap();
    /// let (acks, version) = store.append_group(|group| {
    ///     (0..4u32)
    ///         .map(|v| group.append(Update::new().insert_edges(&[(v, v + 1)])))
    ///         .collect::<Vec<_>>()
    /// });
    /// let seqs: Vec<u64> = acks.into_iter().map(|ack| ack.unwrap().0).collect();
    /// assert_eq!(seqs, [1, 2, 3, 4]);
    /// store.wait_durable(4).unwrap();
    /// assert_eq!((version, store.snapshot().num_edges()), (4, 4));
    /// ```
    pub fn append_group<T>(
        &self,
        group: impl FnOnce(&mut AppendGroup<'_, '_, C>) -> T,
    ) -> (T, u64) {
        let mut log_bytes = 0;
        let inner = &self.inner;
        let out = inner.shared.commit_group(|commit| {
            let value = group(&mut AppendGroup {
                inner,
                commit,
                log_bytes: &mut log_bytes,
            });
            // The group's records in one write, before its version is published. If it
            // fails, the store takes no more writes and no batch of the group becomes
            // durable: waiting for one fails.
            let mut log = lock(&inner.log);
            if let Err(e) = log.flush() {
                lock(&inner.sync).failed = Some(e.to_string());
            }
            drop(log);
            value
        });
        // After the writer's lock is let go: a checkpoint this starts takes it.
        if log_bytes > 0 {
            self.count_logged(log_bytes);
            self.wake_syncer();
        }
        out
    }

    /// Counts a logged record toward the next background checkpoint, starting it when the
    /// log has grown past [`StoreOptions::checkpoint_log_bytes`](super::StoreOptions).
    fn count_log_bytes(&self, payload_bytes: usize) {
        self.count_logged(payload_bytes as u64 + RECORD_OVERHEAD);
    }

    /// Counts `bytes` of logged records toward the next background checkpoint.
    fn count_logged(&self, bytes: u64) {
        let inner = &self.inner;
        let written = inner
            .log_bytes_since_checkpoint
            .fetch_add(bytes, Ordering::Relaxed);
        if let Some(limit) = inner.options.checkpoint_log_bytes {
            if written >= limit {
                self.start_background_checkpoint();
            }
        }
    }

    /// The last sequence number known durable.
    pub fn durable_seq(&self) -> Seq {
        lock(&self.inner.sync).durable
    }

    /// The last sequence number committed (durable or not).
    pub fn last_seq(&self) -> Seq {
        self.inner.written()
    }

    /// Waits until batch `seq` is durable under the store's policy (at once for
    /// [`SyncPolicy::None`]).
    ///
    /// # Errors
    /// [`Error::Io`] if syncing the log failed.
    pub fn wait_durable(&self, seq: Seq) -> Result<()> {
        self.inner.wait_durable(seq, false)
    }

    /// Syncs the log now, whatever the policy; returns the last durable sequence number.
    ///
    /// # Errors
    /// [`Error::Io`] if syncing failed.
    pub fn sync(&self) -> Result<Seq> {
        let seq = self.inner.written();
        self.inner.wait_durable(seq, true)?;
        Ok(seq)
    }
}

/// Starts the group-commit syncer when the policy is [`SyncPolicy::Group`]: it syncs the
/// log at most every interval while commits are waiting, until the store closes.
///
/// The interval runs from the start of one sync to the start of the next, not from the end
/// of one: a record written just after a sync started waits at most one interval for its
/// own, however long the sync took (a sync that takes longer than the interval is followed
/// by the next at once). When a beat finds nothing to sync, the syncer sleeps until the
/// next record is appended and syncs it at once (an interval has passed since the last
/// sync started), rather than at the next beat: a writer whose records come in waves, each
/// after the last was acknowledged, then waits for no beat it just missed.
pub(super) fn spawn_syncer<C: StoreLeaf>(inner: &Arc<Inner<C>>) -> Option<JoinHandle<()>> {
    let SyncPolicy::Group(interval) = inner.options.sync else {
        return None;
    };
    let inner = Arc::clone(inner);
    Some(std::thread::spawn(move || {
        inner.thread_started();
        // The mark's entries (one `fsync` of the mark file each) are written by a thread of
        // their own, so that no sync of the log waits behind one: records written during
        // a mark write are synced on time. It ends when the syncer drops its sender.
        let (to_marker, marks) = std::sync::mpsc::channel::<Seq>();
        let marker = {
            let inner = Arc::clone(&inner);
            std::thread::spawn(move || {
                inner.thread_started();
                while let Ok(first) = marks.recv() {
                    let durable = marks.try_iter().last().unwrap_or(first);
                    let _ = inner.mark_after_sync(durable);
                }
            })
        };
        // No sync started within the last interval: the first record is synced at once.
        let mut next = Instant::now();
        let mut marked = Instant::now();
        while !inner.closing.load(Ordering::Acquire) {
            let now = Instant::now();
            if now < next {
                // Woken early by the store closing, or spuriously: the loop looks again.
                std::thread::park_timeout(next - now);
                continue;
            }
            if inner.has_unsynced() {
                next = now + interval;
                if let Ok(durable) = inner.sync_log() {
                    if marked.elapsed() >= MARK_SYNC_INTERVAL {
                        marked = Instant::now();
                        let _ = to_marker.send(durable);
                    }
                }
                continue;
            }
            // Idle until an append says otherwise. The flag is set before the log is
            // looked at again, and an append sets its record before it looks at the flag
            // (both under locks), so a record is either seen here or wakes the syncer.
            lock(&inner.sync).syncer_idle = true;
            if inner.has_unsynced() {
                lock(&inner.sync).syncer_idle = false;
                continue;
            }
            // Woken by an append or by the store closing; the timeout only bounds a
            // spurious miss.
            std::thread::park_timeout(interval.max(Duration::from_millis(100)));
            lock(&inner.sync).syncer_idle = false;
        }
        drop(to_marker);
        let _ = marker.join();
    }))
}

impl<C: StoreLeaf> Store<C> {
    /// Wakes the group-commit syncer if it sleeps waiting for a record: called after a
    /// record is appended.
    fn wake_syncer(&self) {
        let Some(syncer) = &self.syncer else {
            return;
        };
        let mut state = lock(&self.inner.sync);
        if state.syncer_idle {
            state.syncer_idle = false;
            drop(state);
            syncer.thread().unpark();
        }
    }
}

impl<C: StoreLeaf> Inner<C> {
    /// The last record written to the log file (buffered ones not yet).
    fn written(&self) -> Seq {
        lock(&self.log).written_seq()
    }

    /// Whether a record was written that is not yet durable.
    fn has_unsynced(&self) -> bool {
        // The log's lock is let go before the sync state's is taken (the order elsewhere
        // is log, then sync state).
        let written = self.written();
        written > lock(&self.sync).durable
    }

    /// Refuses every later write: a log write or sync failed for `reason`, so what the
    /// log holds is no longer known.
    pub(super) fn stop_writes(&self, reason: String) {
        lock(&self.sync).failed = Some(reason);
    }

    /// Refuses when a log write or sync failed earlier.
    pub(super) fn check_failed(&self) -> Result<()> {
        match &lock(&self.sync).failed {
            Some(reason) => Err(Error::io(
                &self.dir,
                io::Error::other(format!(
                    "the store stopped taking writes after a failed log write or sync ({reason}); reopen it"
                )),
            )),
            None => Ok(()),
        }
    }

    /// Syncs the open log segment as the one syncer (others wait for it) and advances the
    /// high-water mark if it is due ([`Inner::mark_after_sync`]); returns the sequence
    /// number now durable.
    pub(super) fn sync_now(&self) -> Result<Seq> {
        let durable = self.sync_log()?;
        self.mark_after_sync(durable)?;
        Ok(durable)
    }

    /// [`Inner::sync_now`] but the high-water mark.
    fn sync_log(&self) -> Result<Seq> {
        let mut state = lock(&self.sync);
        while state.syncing {
            state = self
                .synced
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
        if let Some(reason) = &state.failed {
            return Err(Error::io(&self.dir, io::Error::other(reason.clone())));
        }
        state.syncing = true;
        drop(state);
        let (file, upto, path) = {
            let log = lock(&self.log);
            (
                log.file(),
                log.written_seq(),
                self.dir.join(wal::segment_name(log.segment_first())),
            )
        };
        let result = file.sync();
        let mut state = lock(&self.sync);
        state.syncing = false;
        let out = match result {
            Ok(()) => {
                state.durable = state.durable.max(upto);
                Ok(state.durable)
            }
            Err(e) => {
                state.failed = Some(format!("{}: {e}", path.display()));
                Err(Error::io(&path, e))
            }
        };
        self.synced.notify_all();
        drop(state);
        out
    }

    /// Advances the high-water mark to `durable`, just synced, if the mark was last
    /// written [`MARK_SYNC_INTERVAL`] ago or more and no other thread is writing it.
    fn mark_after_sync(&self, durable: Seq) -> Result<()> {
        let Ok(mut mark) = self.mark.try_lock() else {
            return Ok(());
        };
        if mark.since_written() >= MARK_SYNC_INTERVAL {
            mark.advance(&*self.vfs, durable)?;
        }
        Ok(())
    }

    /// Waits until record `seq` is durable: syncing the log itself under
    /// [`SyncPolicy::Batch`] or when `force`d, else waiting for the syncer thread (or, under
    /// [`SyncPolicy::None`], not at all).
    pub(super) fn wait_durable(&self, seq: Seq, force: bool) -> Result<()> {
        loop {
            let state = lock(&self.sync);
            if let Some(reason) = &state.failed {
                return Err(Error::io(&self.dir, io::Error::other(reason.clone())));
            }
            if state.durable >= seq {
                return Ok(());
            }
            match (self.options.sync, force) {
                (SyncPolicy::None, false) => return Ok(()),
                (SyncPolicy::Group(_), false) => {
                    // The syncer thread covers it within one interval.
                    drop(
                        self.synced
                            .wait_timeout(state, Duration::from_millis(100))
                            .unwrap_or_else(PoisonError::into_inner),
                    );
                }
                _ => {
                    drop(state);
                    self.sync_now()?;
                }
            }
        }
    }
}

impl<C: StoreLeaf> Inner<C> {
    /// Runs [`StoreOptions::on_thread_start`](super::StoreOptions::on_thread_start), first
    /// thing on each thread the store starts.
    pub(super) fn thread_started(&self) {
        if let Some(hook) = &self.options.on_thread_start {
            hook();
        }
    }

    /// `build`'s update from the writer's `graph`, refused if it grows the graph past what
    /// recovery explains; remembers the id counts before it in `before`.
    fn build_checked<U: Borrow<Update>>(
        graph: &Graph<C>,
        before: &std::cell::Cell<Option<ids::IdCounts>>,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<U> {
        before.set(Some(ids::IdCounts::of(graph)));
        let update = build(graph)?;
        recover::check_growth(update.borrow(), graph.num_vertices())
            .map_err(|reason| Error::invalid_reason(format!("the update {reason}")))?;
        Ok(update)
    }

    /// Checks the ids `update` added to `graph` against the directory's kind and appends
    /// its record to the log, written at once or, when `buffered`, left in the log's
    /// buffer for the group's one write (a failed write stops the store's writes); its
    /// sequence number, and its payload's length in `payload_bytes`.
    fn log_checked(
        &self,
        after: Outcome,
        update: &Update,
        before: &std::cell::Cell<Option<ids::IdCounts>>,
        payload_bytes: &mut usize,
        buffered: bool,
    ) -> Result<Seq> {
        if let Some(before) = before.take() {
            self.id_kind.check(update, before, after)?;
        }
        let payload = update.encode();
        *payload_bytes = payload.len();
        let mut log = lock(&self.log);
        let appended = match buffered {
            true => log.append_buffered(&*self.vfs, &payload),
            false => log.append(&*self.vfs, &payload),
        };
        appended.inspect_err(|e| lock(&self.sync).failed = Some(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;
    use crate::store::StoreOptions;

    /// A record appended while the syncer is idle is synced at once, not at the next beat:
    /// with an interval of a minute, the wait ends long before one.
    #[test]
    fn an_idle_syncer_syncs_the_next_record_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            sync: SyncPolicy::Group(Duration::from_secs(60)),
            ..StoreOptions::default()
        };
        let store = Arc::new(Store::create(dir.path(), options, Graph::new(false)).unwrap());
        let (seq, _) = store.append(Update::new().insert_edges(&[(0, 1)])).unwrap();
        let (done, waited) = mpsc::channel();
        let waiter = {
            let store = Arc::clone(&store);
            std::thread::spawn(move || done.send(store.wait_durable(seq)).unwrap())
        };
        waited
            .recv_timeout(Duration::from_secs(20))
            .expect("the record waited for the next beat")
            .unwrap();
        assert_eq!(store.durable_seq(), seq);
        waiter.join().unwrap();
    }

    /// The edges of a graph, sorted.
    fn edges_of(graph: &Graph<crate::pma::GroupLeaf>) -> Vec<(u32, u32)> {
        let mut edges = Vec::new();
        for u in 0..graph.num_vertices() as u32 {
            graph.for_each_out_neighbor(u, |v| {
                edges.push((u, v));
                true
            });
        }
        edges
    }

    /// Batches a group merged are logged one record each: the group publishes what applying
    /// them one by one gives, and so does recovery, which replays the records. A batch that
    /// grows the graph goes alone between merged ones; a refused one is neither applied
    /// nor logged.
    #[test]
    fn merged_batches_are_logged_and_recovered_one_by_one() {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            sync: SyncPolicy::None,
            ..StoreOptions::default()
        };
        let mut batches: Vec<Update> = Vec::new();
        for i in 0..300u32 {
            let (u, v) = (i % 17, (i * 7 + 3) % 17);
            let mut batch = Update::new();
            match i % 10 {
                // Deletes of edges inserted by earlier batches of the group.
                3 => batch.delete_edges(&[((i - 3) % 17, ((i - 3) * 7 + 3) % 17)]),
                // An insert, a delete and the same insert again: present at the end.
                5 => batch
                    .insert_edges(&[(u, v)])
                    .delete_edges(&[(u, v)])
                    .insert_edges(&[(u, v)]),
                // Grows the graph: applied alone.
                7 if i < 100 => batch.insert_edges(&[(u, 17 + i)]),
                // Weights on an unweighted graph: refused.
                9 => batch.insert_weighted_edges(&[(u, v, 2.0)]),
                _ => batch.insert_edges(&[(u, v)]),
            };
            batches.push(batch);
        }
        let mut one_by_one = Graph::from_edges(17, &[], false).unwrap();
        let store = Store::create(
            dir.path(),
            options.clone(),
            Graph::from_edges(17, &[], false).unwrap(),
        )
        .unwrap();
        let (results, version) = store.append_group(|group| {
            batches
                .iter()
                .map(|batch| group.append_merged_with(|_| Ok(batch)))
                .collect::<Vec<_>>()
        });
        let mut seq = 0;
        for (batch, result) in batches.iter().zip(&results) {
            match (one_by_one.apply(batch), result) {
                (Ok(applied), Ok((got_seq, merged))) => {
                    seq += 1;
                    assert_eq!((*got_seq, merged.version), (seq, applied.version));
                    assert_eq!(merged.self_loops, applied.self_loops);
                }
                (Err(_), Err(_)) => {}
                (want, got) => panic!("{batch:?}: {want:?} one by one, {got:?} merged"),
            }
        }
        assert_eq!(version, one_by_one.version());
        assert_eq!(edges_of(&store.snapshot()), edges_of(&one_by_one));
        drop(store);
        let reopened = Store::<crate::pma::GroupLeaf>::open(dir.path(), options).unwrap();
        let recovered = reopened.snapshot();
        assert_eq!(reopened.recovery().records_replayed, seq);
        assert_eq!(recovered.num_vertices(), one_by_one.num_vertices());
        assert_eq!(edges_of(&recovered), edges_of(&one_by_one));
        assert_eq!(recovered.version(), one_by_one.version());
    }
}
