//! A store's life: creating a data directory, opening one (taking the writer's lock,
//! recovering, resuming the log) and closing it on drop (stopping its threads, syncing).

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use super::checkpoint::{remove_stray_files, write_checkpoint, CheckpointState};
use super::commit::{spawn_syncer, SyncState};
use super::format::new_directory_id;
use super::ids::{self, IdKindCell};
use super::mark::MarkWriter;
use super::recover::{load_with, LoadMode};
use super::wal::LogWriter;
use super::{io_at, lock, Inner, Store, StoreLeaf, StoreOptions, LOCK, MANIFEST_TMP};
use crate::graph::{Graph, IdKind, SharedGraph};
use crate::{Error, Result};

impl<C: StoreLeaf> Store<C> {
    /// Creates a data directory holding `graph` (its first checkpoint) and opens it.
    /// `dir` may exist if it is empty.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `dir` is not empty; [`Error::Io`].
    pub fn create(dir: &Path, options: StoreOptions, graph: Graph<C>) -> Result<Self> {
        Self::create_with_ids(dir, options, graph, None)
    }

    /// [`Store::create`] with the kind of vertex ids the directory takes: `Some` fixes it
    /// (the graph's ids must be of that kind), `None` takes the graph's, or for an empty
    /// graph leaves it to the first batch that adds vertices (see [`Store::id_kind`]).
    ///
    /// # Errors
    /// As [`Store::create`]; [`Error::InvalidInput`] if the graph holds ids of the other
    /// kind.
    pub fn create_with_ids(
        dir: &Path,
        options: StoreOptions,
        graph: Graph<C>,
        ids: Option<IdKind>,
    ) -> Result<Self> {
        let id_kind = ids::kind_to_create(graph.ids(), ids)?;
        let vfs = Arc::clone(&options.vfs);
        vfs.create_dir_all(dir).map_err(io_at(dir))?;
        let existing = vfs.list(dir).map_err(io_at(dir))?;
        if !existing.is_empty() {
            return Err(Error::invalid_file(
                dir,
                format!(
                    "the directory is not empty (it holds {}); a new data directory needs an empty one",
                    existing.join(", ")
                ),
            ));
        }
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            // The directory's own entry; a parent we may not open is not our business.
            let _ = vfs.sync_dir(parent);
        }
        {
            let lock_path = dir.join(LOCK);
            let _lock = vfs.lock(&lock_path).map_err(io_at(&lock_path))?;
            let dir_id = options.directory_id.unwrap_or_else(new_directory_id);
            // The log's first segment comes before the first manifest: from then on the
            // directory always has one, and a missing log is damage.
            LogWriter::start_segment(&*vfs, dir, 1, dir_id)?;
            let snapshot = graph.snapshot();
            let mut state = CheckpointState::before_first(snapshot.clone(), dir_id);
            state.manifest.id_kind = id_kind;
            write_checkpoint(&*vfs, dir, &mut state, &snapshot, 0, true)?;
            MarkWriter::create(&*vfs, dir, dir_id, 0)?;
        }
        Self::open(dir, options)
    }

    /// Opens a data directory: loads its checkpoint, replays the log after it (cutting a
    /// torn last record, and a damaged one if
    /// [`StoreOptions::truncate_damaged_tail`] is set) and takes the writer lock. A log
    /// that ends before the high-water mark lost acknowledged batches: refused, unless
    /// [`StoreOptions::accept_lost_log`] is set, when a checkpoint is written at the mark
    /// and the log starts again after it.
    ///
    /// # Errors
    /// * [`Error::Io`] if another process has the directory open for writing (the error's
    ///   kind is `WouldBlock`) or the OS refuses a file;
    /// * [`Error::InvalidInput`] if `dir` is not a data directory;
    /// * [`Error::Corrupt`] naming the file and byte offset of damage;
    /// * [`Error::Unsupported`] for another format version or the other graph kind.
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Self> {
        let vfs = Arc::clone(&options.vfs);
        let lock_path = dir.join(LOCK);
        if !vfs.exists(dir) {
            return Err(Error::invalid_file(dir, "no such data directory"));
        }
        let held = vfs.lock(&lock_path).map_err(io_at(&lock_path))?;
        let mode = LoadMode {
            cut_damaged: options.truncate_damaged_tail,
            accept_lost_log: options.accept_lost_log,
        };
        let mut loaded = load_with::<C>(&*vfs, dir, mode)?;
        let tmp = dir.join(MANIFEST_TMP);
        if vfs.exists(&tmp) {
            vfs.remove(&tmp).map_err(io_at(&tmp))?;
        }
        remove_stray_files(&*vfs, dir, &loaded.checkpoint)?;
        let mark = Arc::new(Mutex::new(MarkWriter::new(
            dir,
            loaded.log.dir_id,
            loaded.mark,
        )));
        if let Some(at) = loaded.restart_at {
            restart_log(&*vfs, dir, &mut loaded, at)?;
        }
        if options.accept_lost_log {
            // The mark file may have been damaged (its salvage was read): write it whole.
            lock(&mark).rewrite_now(&*vfs)?;
        }
        let log = LogWriter::open(
            &*vfs,
            dir,
            &loaded.log,
            options.segment_bytes,
            Arc::clone(&mark),
        )?;
        for name in &loaded.log.obsolete {
            let path = dir.join(name);
            vfs.remove(&path).map_err(io_at(&path))?;
        }
        let durable = log.next_seq() - 1;
        let id_kind = loaded
            .checkpoint
            .manifest
            .id_kind
            .or_else(|| IdKind::of_map(loaded.graph.ids()));
        let inner = Arc::new(Inner {
            id_kind: IdKindCell::new(id_kind),
            dir: dir.to_path_buf(),
            vfs,
            shared: SharedGraph::new(loaded.graph),
            log: Mutex::new(log),
            mark,
            sync: Mutex::new(SyncState::new(durable)),
            synced: Condvar::new(),
            checkpoint: Mutex::new(loaded.checkpoint),
            log_bytes_since_checkpoint: AtomicU64::new(loaded.recovery.log_bytes),
            checkpoint_running: AtomicBool::new(false),
            background: Mutex::new(None),
            background_error: Mutex::new(None),
            closing: AtomicBool::new(false),
            recovery: loaded.recovery,
            options,
            _lock: held,
        });
        let syncer = spawn_syncer(&inner);
        Ok(Self { inner, syncer })
    }
}

/// Starts the log again after record `at`, past records it no longer holds (an accepted
/// lost log): a checkpoint of the loaded graph at `at` (durable first), then every old
/// segment is obsolete and [`LogWriter::open`] starts one at `at + 1`. Interrupted, it
/// leaves either the old directory or the checkpoint with the old segments, which the
/// same recovery finishes.
fn restart_log<C: StoreLeaf>(
    vfs: &dyn crate::store::Vfs,
    dir: &Path,
    loaded: &mut super::recover::Loaded<C>,
    at: crate::store::Seq,
) -> Result<()> {
    if loaded.checkpoint.log_seq() < at {
        let snapshot = loaded.graph.snapshot();
        write_checkpoint(vfs, dir, &mut loaded.checkpoint, &snapshot, at, false)?;
    }
    let log = &mut loaded.log;
    let old = log.segments.drain(..).map(|(_, name)| name);
    log.obsolete.extend(old);
    log.next_seq = at + 1;
    log.tail_len = 0;
    log.tail_header = 0;
    Ok(())
}

impl<C: StoreLeaf> Drop for Store<C> {
    fn drop(&mut self) {
        self.inner.closing.store(true, Ordering::Release);
        if let Some(syncer) = self.syncer.take() {
            syncer.thread().unpark();
            let _ = syncer.join();
        }
        if let Some(background) = lock(&self.inner.background).take() {
            let _ = background.join();
        }
        // A clean close leaves the mark at the last durable record.
        if let Ok(durable) = self.inner.sync_now() {
            let _ = lock(&self.inner.mark).advance(&*self.inner.vfs, durable);
        }
    }
}
