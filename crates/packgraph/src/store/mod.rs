//! The durable store: a graph in a directory that survives crashes and power cuts.
//!
//! A [`Store`] keeps a [`SharedGraph`] in memory and makes every committed
//! [`Update`](crate::graph::Update) durable before acknowledging it:
//!
//! * **Write-ahead log** (`wal`): each update's
//!   [`Update::encode`](crate::graph::Update::encode) bytes become one checksummed record;
//!   [`Store::commit`] returns once the record is synced according to the [`SyncPolicy`]
//!   (`fsync` before each acknowledgement, or group commit every few milliseconds, or
//!   never: unsafe).
//! * **Checkpoints** (`units`, `format`): a snapshot, taken without stopping the writer, is
//!   written as content-addressed units in pack files: one unit per page of each edge array
//!   (pages are the unit versions share), a base unit listing them, the vertex ids and the
//!   properties. A unit whose hash a checkpoint still references is reused, not written
//!   again; when the edges changed little since the last full (base) checkpoint, the
//!   checkpoint writes only their net change as a delta unit. The manifest, written last
//!   (write, `fsync`, rename, `fsync` the directory), names the units and the last log
//!   record the checkpoint includes; log segments and packs no manifest needs are deleted
//!   after it is durable.
//! * **Recovery** ([`Store::open`]): the manifest's checkpoint is loaded (every unit's
//!   CRC-32C and hash checked, the arrays validated) and the log replayed after its
//!   position. A torn last record (cut short by a crash) is cut; a damaged one, or
//!   damage anywhere else, is an [`Error::Corrupt`] naming the file and byte offset
//!   ([`StoreOptions::truncate_damaged_tail`] cuts a damaged last record, losing it).
//!   Every file carries the directory's id, and the log must reach what the manifest
//!   and the high-water mark (`mark`) record, so files of another directory and a lost
//!   log are damage too ([`StoreOptions::accept_lost_log`] accepts the loss).
//!
//! One process writes a directory at a time (an OS lock on `LOCK` and on the directory
//! itself, which cannot be removed under the writer); readers that only load the latest
//! durable state ([`load_graph`]) take no lock, and start over when a checkpoint replaced
//! the manifest while they read. All file access goes through a
//! [`Vfs`], which tests replace with [`SimVfs`] to cut the power between any two
//! operations. File formats: `docs/formats/store.md`.
//!
//! ```
//! use packgraph::graph::{Graph, GraphRead, Update};
//! use packgraph::store::{Store, StoreOptions};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let store = Store::create(dir.path(), StoreOptions::default(), Graph::new(false)).unwrap();
//! let (seq, _) = store.commit(Update::new().insert_edges(&[(0, 1), (1, 2)])).unwrap();
//! assert_eq!(seq, 1);
//! drop(store); // or a crash: the batch was durable when commit returned
//! let store = Store::<packgraph::pma::GroupLeaf>::open(dir.path(), StoreOptions::default()).unwrap();
//! assert_eq!(store.snapshot().num_edges(), 2);
//! ```
//!
//! # Files
//!
//! * `options.rs`: [`SyncPolicy`], [`StoreOptions`] and the reports [`CheckpointStats`] and
//!   [`RecoveryStats`].
//! * `open.rs`: [`Store::create`], [`Store::open`] (lock, recover, resume the log) and
//!   closing on drop.
//! * `recover.rs`: reading a directory back, step by step in the order recovery does it;
//!   `replay.rs`: the log's records applied in merged batches.
//! * `commit.rs`: the write path: append to the log (one batch, or a group of batches
//!   published as one version), sync, group commit.
//! * `checkpoint.rs`: writing checkpoints (delta or new base, units reused by hash), the
//!   background checkpoint, and deleting packs and log segments no manifest needs.
//! * `verify.rs`: [`verify`], the offline check of every file.
//! * `ids.rs`: the kind of vertex ids a directory holds ([`Store::id_kind`]) and the check
//!   that keeps every write to it.
//! * `any.rs`: [`AnyStore`] and [`load_any`], for either graph kind.
//! * `wal.rs` (log records and segments), `mark.rs` (the high-water mark of durable
//!   records), `format.rs` (packs, units, manifest),
//!   `units.rs` (a graph version as units), `vfs.rs` (file access).
//! * `tests/`: the store against an in-memory oracle, one file per job under test.

mod any;
mod checkpoint;
mod commit;
mod format;
mod ids;
mod mark;
mod open;
mod options;
mod recover;
mod replay;
mod units;
mod verify;
mod vfs;
mod wal;

#[cfg(test)]
mod tests;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use self::checkpoint::CheckpointState;
use self::commit::SyncState;
use self::mark::MarkWriter;
use self::wal::LogWriter;
use crate::graph::{SharedGraph, Snapshot};
use crate::pma::GroupLeaf;
use crate::Error;

pub use self::any::{load_any, AnyStore};
pub use self::commit::AppendGroup;
pub use self::format::{STORE_FORMAT_VERSION, STORE_OLDEST_READABLE};
pub use self::options::{CheckpointStats, RecoveryStats, StoreOptions, SyncPolicy, ThreadStart};
pub use self::recover::{format_version, is_store, load_graph};
pub use self::units::StoreLeaf;
pub use self::verify::{verify, verify_with, VerifyReport};
pub use self::vfs::{OsVfs, SimVfs, Vfs, VfsFile, VfsLock};
pub use self::wal::LOG_FORMAT_VERSION;

/// A log sequence number: the position of a committed batch, counting from 1.
pub type Seq = u64;

const LOCK: &str = "LOCK";
const MANIFEST_TMP: &str = "MANIFEST.tmp";

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

/// What the store's threads share: the graph, the log and its sync state, the
/// checkpointer's state, and the writer's lock on the directory.
struct Inner<C: StoreLeaf> {
    dir: PathBuf,
    vfs: Arc<dyn Vfs>,
    options: StoreOptions,
    shared: SharedGraph<C>,
    log: Mutex<LogWriter>,
    /// The high-water mark (the log holds it too, to advance it when a segment closes;
    /// taken after the log's lock, never before it).
    mark: Arc<Mutex<MarkWriter>>,
    sync: Mutex<SyncState>,
    synced: Condvar,
    checkpoint: Mutex<CheckpointState<C>>,
    log_bytes_since_checkpoint: AtomicU64,
    checkpoint_running: AtomicBool,
    background: Mutex<Option<JoinHandle<()>>>,
    /// Why the last background checkpoint failed, if it did.
    background_error: Mutex<Option<String>>,
    closing: AtomicBool,
    recovery: RecoveryStats,
    /// The kind of vertex ids the directory holds (`ids.rs`).
    id_kind: ids::IdKindCell,
    _lock: Box<dyn VfsLock>,
}

/// A durable graph in a directory (see the module documentation).
pub struct Store<C: StoreLeaf = GroupLeaf> {
    inner: Arc<Inner<C>>,
    /// The group-commit syncer thread, under [`SyncPolicy::Group`].
    syncer: Option<JoinHandle<()>>,
}

impl<C: StoreLeaf> fmt::Debug for Store<C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("dir", &self.inner.dir)
            .field("options", &self.inner.options)
            .finish_non_exhaustive()
    }
}

impl<C: StoreLeaf> Store<C> {
    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// What opening found: the checkpoint's position and size, records replayed, torn bytes.
    pub fn recovery(&self) -> RecoveryStats {
        self.inner.recovery
    }

    /// The writer's page statistics (see [`SharedGraph::version_stats`]).
    pub fn version_stats(&self) -> crate::graph::VersionStats {
        self.inner.shared.version_stats()
    }

    /// The latest committed version (see [`SharedGraph::snapshot`]).
    pub fn snapshot(&self) -> Snapshot<C> {
        self.inner.shared.snapshot()
    }
}
