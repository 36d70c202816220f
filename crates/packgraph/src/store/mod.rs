//! The durable store: a graph in a directory that survives crashes and power cuts.
//!
//! A [`Store`] keeps a [`SharedGraph`] in memory and makes every committed [`Update`]
//! durable before acknowledging it:
//!
//! * **Write-ahead log** (`wal`): each update's [`Update::encode`] bytes become one
//!   checksummed record; [`Store::commit`] returns once the record is synced according to
//!   the [`SyncPolicy`] (`fsync` before each acknowledgement, or group commit every few
//!   milliseconds, or never: unsafe).
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
//!   position. A torn last record is cut; damage anywhere else is an [`Error::Corrupt`]
//!   naming the file and byte offset.
//!
//! One process writes a directory at a time (an OS lock on `LOCK`); readers that only load
//! the latest durable state ([`load`]) take no lock. All file access goes through a
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

mod format;
mod units;
mod vfs;
mod wal;

#[cfg(test)]
mod tests;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use self::format::{
    check_pack, check_pack_header, pack_name, parse_pack_name, unit_hash, Manifest, PackWriter,
    UnitKind, UnitRef, MANIFEST,
};
use self::units::{ArrayShape, Base};
use self::wal::{parse_segment_name, LogWriter};
use crate::graph::{AnyGraph, Applied, Graph, GraphRead, SharedGraph, Snapshot, Update};
use crate::pma::{DeltaMapLeaf, GroupLeaf};
use crate::{Error, Result};

pub use self::format::{STORE_FORMAT_VERSION, STORE_OLDEST_READABLE};
pub use self::units::StoreLeaf;
pub use self::vfs::{OsVfs, SimVfs, Vfs, VfsFile, VfsLock};
pub use self::wal::LOG_FORMAT_VERSION;

/// A log sequence number: the position of a committed batch, counting from 1.
pub type Seq = u64;

const LOCK: &str = "LOCK";
const MANIFEST_TMP: &str = "MANIFEST.tmp";

/// When a committed batch is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// `fsync` the log before acknowledging each batch (concurrent commits share one).
    #[default]
    Batch,
    /// Group commit: a background thread syncs the log at most every interval, and a
    /// commit waits for the sync that covers it.
    Group(Duration),
    /// Never sync the log (only checkpoints sync). **Unsafe**: a power cut or OS crash
    /// loses acknowledged batches; a killed process does not.
    None,
}

impl FromStr for SyncPolicy {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "batch" => Ok(Self::Batch),
            "none" => Ok(Self::None),
            _ => {
                let ms = text
                    .strip_prefix("group:")
                    .and_then(|ms| ms.parse::<u64>().ok())
                    .filter(|&ms| (1..=60_000).contains(&ms))
                    .ok_or_else(|| {
                        Error::invalid(
                            text,
                            "sync policy must be batch, group:MS (1 to 60000 milliseconds) or none",
                        )
                    })?;
                Ok(Self::Group(Duration::from_millis(ms)))
            }
        }
    }
}

impl fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Batch => f.write_str("batch"),
            Self::Group(d) => write!(f, "group:{}", d.as_millis()),
            Self::None => f.write_str("none"),
        }
    }
}

/// How a [`Store`] writes.
#[derive(Clone)]
pub struct StoreOptions {
    /// When commits are synced.
    pub sync: SyncPolicy,
    /// A log segment is closed and a new one started past this size.
    pub segment_bytes: u64,
    /// A checkpoint starts in the background once this many bytes of log were written
    /// since the last one; `None` checkpoints only on demand.
    pub checkpoint_log_bytes: Option<u64>,
    /// The file system.
    pub vfs: Arc<dyn Vfs>,
}

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            sync: SyncPolicy::Batch,
            segment_bytes: 64 << 20,
            checkpoint_log_bytes: Some(256 << 20),
            vfs: Arc::new(OsVfs),
        }
    }
}

impl fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreOptions")
            .field("sync", &self.sync)
            .field("segment_bytes", &self.segment_bytes)
            .field("checkpoint_log_bytes", &self.checkpoint_log_bytes)
            .finish_non_exhaustive()
    }
}

/// What one checkpoint wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    /// The last log record it includes.
    pub seq: Seq,
    /// Whether it wrote only the change since the base (else a new base).
    pub delta: bool,
    /// Bytes of new units written (the manifest included).
    pub bytes_written: u64,
    /// Bytes of units it references that earlier checkpoints wrote.
    pub bytes_reused: u64,
    /// New units written.
    pub units_written: u64,
    /// Units reused.
    pub units_reused: u64,
}

/// What opening a directory found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecoveryStats {
    /// The last log record the checkpoint included.
    pub checkpoint_seq: Seq,
    /// Bytes of checkpoint units read.
    pub checkpoint_bytes: u64,
    /// Log records replayed after the checkpoint.
    pub records_replayed: u64,
    /// Bytes of log read.
    pub log_bytes: u64,
    /// Bytes of a torn last record cut off (0 if the log ended cleanly).
    pub torn_bytes: u64,
    /// Seconds spent loading the checkpoint.
    pub checkpoint_seconds: f64,
    /// Seconds spent replaying the log.
    pub replay_seconds: f64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The log's durability bookkeeping.
#[derive(Default)]
struct SyncState {
    durable: Seq,
    syncing: bool,
    /// Set when a log write or sync failed: the store takes no more writes.
    failed: Option<String>,
}

/// The checkpointer's memory of the last checkpoint.
struct CheckpointState<C: StoreLeaf> {
    manifest: Manifest,
    /// The version the base was written from (deltas are taken against it).
    base: Snapshot<C>,
    /// Payload bytes of the base's pages.
    base_bytes: u64,
    /// The base unit, its pages and the ids unit, by hash.
    base_units: HashMap<u128, UnitRef>,
    /// Bytes of each pack file.
    pack_sizes: HashMap<u64, u64>,
}

impl<C: StoreLeaf> CheckpointState<C> {
    /// Every unit the manifest references.
    fn referenced(&self) -> impl Iterator<Item = UnitRef> + '_ {
        self.base_units
            .values()
            .copied()
            .chain(self.manifest.units().map(|(_, u)| u))
    }

    /// The referenced units a new checkpoint may point to again, by hash: those in packs
    /// at least half live (units in mostly dead packs are written again, so that those
    /// packs can go).
    fn reusable(&self) -> HashMap<u128, UnitRef> {
        let mut live: HashMap<u64, u64> = HashMap::new();
        let mut units = HashMap::new();
        for unit in self.referenced() {
            if units.insert(unit.hash, unit).is_none() {
                *live.entry(unit.pack).or_default() += unit.stored_bytes();
            }
        }
        units.retain(|_, unit| {
            let size = self.pack_sizes.get(&unit.pack).copied().unwrap_or(0);
            live.get(&unit.pack).copied().unwrap_or(0) * 2 >= size
        });
        units
    }

    /// The packs the manifest references.
    fn live_packs(&self) -> HashSet<u64> {
        self.referenced().map(|u| u.pack).collect()
    }
}

struct Inner<C: StoreLeaf> {
    dir: PathBuf,
    vfs: Arc<dyn Vfs>,
    options: StoreOptions,
    shared: SharedGraph<C>,
    log: Mutex<LogWriter>,
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
    _lock: Box<dyn VfsLock>,
}

/// A durable graph in a directory (see the module documentation).
pub struct Store<C: StoreLeaf = GroupLeaf> {
    inner: Arc<Inner<C>>,
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

/// A graph loaded from a directory: the latest durable state.
struct Loaded<C: StoreLeaf> {
    graph: Graph<C>,
    base: Snapshot<C>,
    base_bytes: u64,
    manifest: Manifest,
    log: wal::LogState,
    base_units: HashMap<u128, UnitRef>,
    pack_sizes: HashMap<u64, u64>,
    recovery: RecoveryStats,
}

fn io_at(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

/// Reads the manifest of `dir`.
fn read_manifest(vfs: &dyn Vfs, dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    let bytes = match vfs.read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Error::invalid_file(
                dir,
                "not a packgraph data directory (it has no MANIFEST); create one with `packgraph create`",
            ))
        }
        Err(e) => return Err(Error::io(&path, e)),
    };
    Manifest::decode(&path, &bytes)
}

/// Pack files read so far, by number.
struct Packs<'a> {
    vfs: &'a dyn Vfs,
    dir: &'a Path,
    files: HashMap<u64, Vec<u8>>,
    bytes: u64,
}

impl<'a> Packs<'a> {
    fn new(vfs: &'a dyn Vfs, dir: &'a Path) -> Self {
        Self {
            vfs,
            dir,
            files: HashMap::new(),
            bytes: 0,
        }
    }

    fn unit(&mut self, unit: &UnitRef, kind: UnitKind) -> Result<&[u8]> {
        self.unit_of(unit, &[kind]).map(|(_, payload)| payload)
    }

    /// The payload of `unit`, which must be of one of `kinds`, and its kind.
    fn unit_of(&mut self, unit: &UnitRef, kinds: &[UnitKind]) -> Result<(UnitKind, &[u8])> {
        let path = self.dir.join(pack_name(unit.pack));
        if !self.files.contains_key(&unit.pack) {
            let bytes = self.vfs.read(&path).map_err(|e| {
                if e.kind() == io::ErrorKind::NotFound {
                    Error::Corrupt {
                        path: Some(path.clone()),
                        offset: None,
                        reason: "the manifest names this pack, but it is missing".into(),
                    }
                } else {
                    Error::io(&path, e)
                }
            })?;
            check_pack_header(&path, unit.pack, &bytes)?;
            self.bytes += bytes.len() as u64;
            self.files.insert(unit.pack, bytes);
        }
        format::read_unit_of(&path, &self.files[&unit.pack], unit, kinds)
    }

    fn path(&self, unit: &UnitRef) -> PathBuf {
        self.dir.join(pack_name(unit.pack))
    }

    fn sizes(&self) -> HashMap<u64, u64> {
        self.files
            .iter()
            .map(|(&n, b)| (n, b.len() as u64))
            .collect()
    }
}

/// Loads the arrays of `shape` from their page units; returns them with the pages' kind
/// ([`UnitKind::Page`] or [`UnitKind::GroupPage`], the same for every page).
fn load_array(
    packs: &mut Packs<'_>,
    shape: &ArrayShape,
) -> Result<(crate::pma::PmaParts, UnitKind)> {
    let mut parts = shape.empty_parts()?;
    let mut kind = None;
    for page in &shape.pages {
        let path = packs.path(page);
        let (found, payload) = packs.unit_of(page, &[UnitKind::Page, UnitKind::GroupPage])?;
        if kind.is_some_and(|k| k != found) {
            return Err(Error::Corrupt {
                path: Some(path),
                offset: Some(page.offset),
                reason: "an edge array mixes pages of two leaf encodings".into(),
            });
        }
        kind = Some(found);
        units::read_page(
            payload,
            &path,
            page.offset + format::UNIT_HEADER as u64,
            &mut parts,
        )?;
    }
    if parts.used.len() != shape.num_leaves {
        return Err(Error::corrupt(format!(
            "the base unit promises {} leaves, its pages hold {}",
            shape.num_leaves,
            parts.used.len()
        )));
    }
    Ok((parts, kind.unwrap_or(UnitKind::Page)))
}

/// Applies a unit's update to `graph`, as a corruption of the unit if it does not apply.
fn apply_unit<C: StoreLeaf>(
    graph: &mut Graph<C>,
    packs: &mut Packs<'_>,
    unit: &UnitRef,
    kind: UnitKind,
) -> Result<()> {
    let path = packs.path(unit);
    let at = unit.offset + format::UNIT_HEADER as u64;
    let payload = packs.unit(unit, kind)?;
    let update = Update::decode(payload).map_err(|e| units::locate(e, &path, at))?;
    graph.apply(&update).map_err(|e| Error::Corrupt {
        path: Some(path.clone()),
        offset: Some(at),
        reason: format!("the {kind:?} unit does not apply to the checkpoint: {e}"),
    })?;
    Ok(())
}

fn load<C: StoreLeaf>(vfs: &dyn Vfs, dir: &Path) -> Result<Loaded<C>> {
    let manifest = read_manifest(vfs, dir)?;
    if manifest.weighted != C::WEIGHTED {
        return Err(Error::unsupported(format!(
            "{} holds a {} graph; open it as one",
            dir.display(),
            if manifest.weighted {
                "weighted"
            } else {
                "unweighted"
            }
        )));
    }
    let started = Instant::now();
    let mut packs = Packs::new(vfs, dir);
    let base_path = packs.path(&manifest.base);
    let base = Base::decode(
        packs.unit(&manifest.base, UnitKind::Base)?,
        &base_path,
        manifest.base.offset + format::UNIT_HEADER as u64,
    )?;
    if base.incoming.is_some() != manifest.directed {
        return Err(Error::Corrupt {
            path: Some(base_path),
            offset: Some(manifest.base.offset),
            reason: "the base unit disagrees with the manifest on whether the graph is directed"
                .into(),
        });
    }
    let (out, out_kind) = load_array(&mut packs, &base.out)?;
    let (incoming, in_kind) = match base.incoming.as_ref() {
        Some(shape) => {
            let (parts, kind) = load_array(&mut packs, shape)?;
            (Some(parts), Some(kind))
        }
        None => (None, None),
    };
    // Pages of a weighted graph are byte-coded maps in every version; an unweighted graph's
    // are group varint since version 2, byte codes before (re-encoded here).
    let legacy = match (C::GROUP_PAGES, out_kind, in_kind) {
        (false, UnitKind::Page, None | Some(UnitKind::Page)) => false,
        (true, UnitKind::GroupPage, None | Some(UnitKind::GroupPage)) => false,
        (true, UnitKind::Page, None | Some(UnitKind::Page)) => true,
        _ => {
            return Err(Error::Corrupt {
                path: Some(base_path),
                offset: Some(manifest.base.offset),
                reason: "the base unit's pages do not match the graph's leaf encoding".into(),
            })
        }
    };
    let num_vertices =
        usize::try_from(base.num_vertices).map_err(|_| Error::corrupt("vertex count too large"))?;
    let base_bytes = base.pages().map(|p| p.len).sum();
    let ids_path = packs.path(&manifest.ids);
    let ids = units::read_ids(
        packs.unit(&manifest.ids, UnitKind::Ids)?,
        &ids_path,
        manifest.ids.offset + format::UNIT_HEADER as u64,
    )?;
    let arrays = if legacy {
        C::from_legacy_arrays
    } else {
        C::from_arrays
    };
    let mut graph = arrays(manifest.directed, num_vertices, out, incoming)
        .map_err(|e| match e {
            Error::Corrupt { reason, .. } => Error::Corrupt {
                path: Some(base_path.clone()),
                offset: None,
                reason: format!("the checkpoint's edge arrays: {reason}"),
            },
            other => other,
        })?
        .with_ids(ids)
        .map_err(|e| Error::corrupt(format!("the checkpoint's vertex ids: {e}")))?;
    let base_version = graph.snapshot();
    if let Some(delta) = &manifest.delta {
        apply_unit(&mut graph, &mut packs, delta, UnitKind::Delta)?;
    }
    apply_unit(
        &mut graph,
        &mut packs,
        &manifest.properties,
        UnitKind::Properties,
    )?;
    graph.set_version(manifest.graph_version);
    if graph.num_vertices() as u64 != manifest.num_vertices
        || graph.num_arcs() as u64 != manifest.num_arcs
    {
        return Err(Error::Corrupt {
            path: Some(dir.join(MANIFEST)),
            offset: None,
            reason: format!(
                "the manifest promises {} vertices and {} arcs, the checkpoint holds {} and {}",
                manifest.num_vertices,
                manifest.num_arcs,
                graph.num_vertices(),
                graph.num_arcs()
            ),
        });
    }
    let checkpoint_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let log = wal::scan(vfs, dir, manifest.log_seq, |seq, payload| {
        let update = Update::decode(payload)?;
        graph.apply(&update).map_err(|e| {
            Error::corrupt(format!("record {seq} does not apply to the graph: {e}"))
        })?;
        Ok(())
    })?;
    let base_units = base
        .pages()
        .copied()
        .chain([manifest.base, manifest.ids])
        .map(|u| (u.hash, u))
        .collect();
    let recovery = RecoveryStats {
        checkpoint_seq: manifest.log_seq,
        checkpoint_bytes: packs.bytes,
        records_replayed: log.replayed,
        log_bytes: log.bytes,
        torn_bytes: log.torn_bytes,
        checkpoint_seconds,
        replay_seconds: started.elapsed().as_secs_f64(),
    };
    Ok(Loaded {
        graph,
        base: base_version,
        base_bytes,
        pack_sizes: packs.sizes(),
        manifest,
        log,
        base_units,
        recovery,
    })
}

/// The latest durable state of the graph in `dir`, read without taking the writer lock
/// (a writer may be appending; its unsynced tail is ignored like a torn one).
///
/// # Errors
/// As [`Store::open`], except that a locked directory is not an error.
pub fn load_graph<C: StoreLeaf>(dir: &Path) -> Result<Graph<C>> {
    Ok(load::<C>(&OsVfs, dir)?.graph)
}

/// Whether `dir` looks like a data directory (it has a manifest).
pub fn is_store(dir: &Path) -> bool {
    dir.is_dir() && dir.join(MANIFEST).is_file()
}

/// Writes `bytes` as `name` durably: to a temporary file, synced, renamed, directory synced.
fn write_manifest(vfs: &dyn Vfs, dir: &Path, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(MANIFEST_TMP);
    let file = vfs.create(&tmp).map_err(io_at(&tmp))?;
    file.append(bytes).map_err(io_at(&tmp))?;
    file.sync().map_err(io_at(&tmp))?;
    drop(file);
    let path = dir.join(MANIFEST);
    vfs.rename(&tmp, &path).map_err(io_at(&path))?;
    vfs.sync_dir(dir).map_err(io_at(dir))
}

impl<C: StoreLeaf> Store<C> {
    /// Creates a data directory holding `graph` (its first checkpoint) and opens it.
    /// `dir` may exist if it is empty.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `dir` is not empty; [`Error::Io`].
    pub fn create(dir: &Path, options: StoreOptions, graph: Graph<C>) -> Result<Self> {
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
            let snapshot = graph.snapshot();
            let manifest = Manifest {
                number: 0,
                log_seq: 0,
                graph_version: 0,
                directed: graph.is_directed(),
                weighted: C::WEIGHTED,
                num_vertices: 0,
                num_arcs: 0,
                next_pack: 1,
                base_seq: 0,
                base: placeholder(),
                ids: placeholder(),
                properties: placeholder(),
                delta: None,
            };
            let mut state = CheckpointState {
                manifest,
                base: snapshot.clone(),
                base_bytes: 0,
                base_units: HashMap::new(),
                pack_sizes: HashMap::new(),
            };
            write_checkpoint(&*vfs, dir, &mut state, &snapshot, 0, true)?;
        }
        Self::open(dir, options)
    }

    /// Opens a data directory: loads its checkpoint, replays the log after it (cutting a
    /// torn last record) and takes the writer lock.
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
        let loaded = load::<C>(&*vfs, dir)?;
        let tmp = dir.join(MANIFEST_TMP);
        if vfs.exists(&tmp) {
            vfs.remove(&tmp).map_err(io_at(&tmp))?;
        }
        let log = LogWriter::open(&*vfs, dir, &loaded.log, options.segment_bytes)?;
        for name in &loaded.log.obsolete {
            let path = dir.join(name);
            vfs.remove(&path).map_err(io_at(&path))?;
        }
        let durable = log.next_seq() - 1;
        let inner = Arc::new(Inner {
            dir: dir.to_path_buf(),
            vfs,
            shared: SharedGraph::new(loaded.graph),
            log: Mutex::new(log),
            sync: Mutex::new(SyncState {
                durable,
                ..SyncState::default()
            }),
            synced: Condvar::new(),
            checkpoint: Mutex::new(CheckpointState {
                manifest: loaded.manifest,
                base: loaded.base,
                base_bytes: loaded.base_bytes,
                base_units: loaded.base_units,
                pack_sizes: loaded.pack_sizes,
            }),
            log_bytes_since_checkpoint: AtomicU64::new(loaded.recovery.log_bytes),
            checkpoint_running: AtomicBool::new(false),
            background: Mutex::new(None),
            background_error: Mutex::new(None),
            closing: AtomicBool::new(false),
            recovery: loaded.recovery,
            options,
            _lock: held,
        });
        let syncer = match inner.options.sync {
            SyncPolicy::Group(interval) => {
                let inner = Arc::clone(&inner);
                Some(std::thread::spawn(move || {
                    while !inner.closing.load(Ordering::Acquire) {
                        std::thread::park_timeout(interval);
                        if inner.written() > lock(&inner.sync).durable {
                            let _ = inner.sync_now();
                        }
                    }
                }))
            }
            _ => None,
        };
        Ok(Self { inner, syncer })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// What opening found: the checkpoint's position and size, records replayed, torn bytes.
    pub fn recovery(&self) -> RecoveryStats {
        self.inner.recovery
    }

    /// Applies `update` and returns once it is durable under the store's [`SyncPolicy`],
    /// with its sequence number.
    ///
    /// # Errors
    /// As [`Graph::apply`] for a bad update (nothing is applied or logged); [`Error::Io`]
    /// if the log cannot be written or synced, after which the store takes no more
    /// writes (reopen it to recover).
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
        let (applied, seq) = inner.shared.commit_logged(update, |_| {
            let mut log = lock(&inner.log);
            log.append(&*inner.vfs, &payload).inspect_err(|e| {
                lock(&inner.sync).failed = Some(e.to_string());
            })
        })?;
        let written = inner
            .log_bytes_since_checkpoint
            .fetch_add(payload.len() as u64 + 20, Ordering::Relaxed);
        if let Some(limit) = inner.options.checkpoint_log_bytes {
            if written >= limit {
                self.start_background_checkpoint();
            }
        }
        Ok((seq, applied))
    }

    /// Why the last background checkpoint failed (`None` if it succeeded or none ran); the
    /// log keeps everything meanwhile, so nothing is lost, but it grows.
    pub fn background_error(&self) -> Option<String> {
        lock(&self.inner.background_error).clone()
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

    /// The writer's page statistics (see [`SharedGraph::version_stats`]).
    pub fn version_stats(&self) -> crate::graph::VersionStats {
        self.inner.shared.version_stats()
    }

    /// The latest committed version (see [`SharedGraph::snapshot`]).
    pub fn snapshot(&self) -> Snapshot<C> {
        self.inner.shared.snapshot()
    }

    /// Writes a checkpoint of the latest version now (waiting for a background one to
    /// finish first), then deletes the log segments and packs no longer needed.
    ///
    /// # Errors
    /// [`Error::Io`]; the store's earlier data stays valid.
    pub fn checkpoint(&self) -> Result<CheckpointStats> {
        self.inner.checkpoint(false)
    }

    /// A checkpoint that writes a new base (every page, reusing unchanged ones) even when a
    /// delta would be smaller.
    ///
    /// # Errors
    /// As [`Store::checkpoint`].
    pub fn checkpoint_full(&self) -> Result<CheckpointStats> {
        self.inner.checkpoint(true)
    }

    fn start_background_checkpoint(&self) {
        let inner = &self.inner;
        if inner.checkpoint_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let worker = Arc::clone(inner);
        let handle = std::thread::spawn(move || {
            let result = worker.checkpoint(false);
            *lock(&worker.background_error) = result.err().map(|e| e.to_string());
            worker.checkpoint_running.store(false, Ordering::Release);
        });
        if let Some(previous) = lock(&inner.background).replace(handle) {
            let _ = previous.join();
        }
    }
}

fn placeholder() -> UnitRef {
    UnitRef {
        pack: 0,
        offset: 0,
        len: 0,
        hash: 0,
    }
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
        let _ = self.inner.sync_now();
    }
}

impl<C: StoreLeaf> Inner<C> {
    fn written(&self) -> Seq {
        lock(&self.log).next_seq() - 1
    }

    fn check_failed(&self) -> Result<()> {
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

    /// Syncs the open log segment as the one syncer (others wait for it); returns the
    /// sequence number now durable.
    fn sync_now(&self) -> Result<Seq> {
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
                log.next_seq() - 1,
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
        out
    }

    fn wait_durable(&self, seq: Seq, force: bool) -> Result<()> {
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

    fn checkpoint(&self, full: bool) -> Result<CheckpointStats> {
        let mut state = lock(&self.checkpoint);
        let (snapshot, seq) = self
            .shared
            .with_writer(|g| (g.snapshot(), lock(&self.log).next_seq() - 1));
        // The checkpoint covers records up to `seq`; they must be durable before the
        // manifest says so, or a later record could reuse their numbers after a crash.
        self.wait_durable(seq, true)?;
        self.log_bytes_since_checkpoint.store(0, Ordering::Relaxed);
        let stats = write_checkpoint(&*self.vfs, &self.dir, &mut state, &snapshot, seq, full)?;
        let keep_from = lock(&self.log).segment_first();
        collect_garbage(&*self.vfs, &self.dir, &state, seq, keep_from)?;
        Ok(stats)
    }
}

/// Writes a checkpoint of `snapshot` covering the log up to `seq`: a delta against the
/// base if it is small, else a new base; the manifest last.
fn write_checkpoint<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    state: &mut CheckpointState<C>,
    snapshot: &Snapshot<C>,
    seq: Seq,
    full: bool,
) -> Result<CheckpointStats> {
    let pack_number = state.manifest.next_pack;
    let mut pack = PackWriter::new(pack_number);
    let mut stats = CheckpointStats {
        seq,
        ..CheckpointStats::default()
    };
    let mut fresh: HashMap<u128, UnitRef> = HashMap::new();
    let reusable = state.reusable();
    let mut add = |kind: UnitKind, payload: &[u8], hash: u128| -> UnitRef {
        if let Some(unit) = reusable.get(&hash).or_else(|| fresh.get(&hash)) {
            stats.bytes_reused += unit.stored_bytes();
            stats.units_reused += 1;
            return *unit;
        }
        let unit = pack.add(kind, payload, hash);
        stats.bytes_written += unit.stored_bytes();
        stats.units_written += 1;
        fresh.insert(hash, unit);
        unit
    };
    let delta = if full || state.manifest.base == placeholder() {
        None
    } else {
        let bytes = units::delta(&state.base, snapshot).encode();
        // A delta up to a quarter of the base (or 64 KiB, for small graphs) is cheaper to
        // write than a new base and cheap to apply on recovery.
        (bytes.len() as u64 <= (state.base_bytes / 4).max(1 << 16)).then_some(bytes)
    };
    let mut manifest = state.manifest.clone();
    let mut new_base = None;
    match &delta {
        Some(bytes) => {
            manifest.delta = Some(add(
                UnitKind::Delta,
                bytes,
                unit_hash(UnitKind::Delta, bytes),
            ));
            stats.delta = true;
        }
        None => {
            let (out_parts, in_parts) = snapshot.parts();
            let mut shape = |parts: &crate::pma::PmaPartsRef<'_>| {
                let payloads = units::page_payloads(parts);
                let kind = if C::GROUP_PAGES {
                    UnitKind::GroupPage
                } else {
                    UnitKind::Page
                };
                let hashes: Vec<u128> = payloads.par_iter().map(|p| unit_hash(kind, p)).collect();
                let pages: Vec<UnitRef> = payloads
                    .iter()
                    .zip(&hashes)
                    .map(|(p, &h)| add(kind, p, h))
                    .collect();
                ArrayShape::of(parts, pages)
            };
            let out = shape(&out_parts);
            let incoming = in_parts.as_ref().map(&mut shape);
            let base = Base {
                num_vertices: snapshot.num_vertices() as u64,
                out,
                incoming,
            };
            let payload = base.encode();
            manifest.base = add(
                UnitKind::Base,
                &payload,
                unit_hash(UnitKind::Base, &payload),
            );
            let ids = units::ids_payload(snapshot.ids());
            manifest.ids = add(UnitKind::Ids, &ids, unit_hash(UnitKind::Ids, &ids));
            manifest.delta = None;
            manifest.base_seq = seq;
            new_base = Some(base);
        }
    }
    let props = units::properties_payload(snapshot);
    manifest.properties = add(
        UnitKind::Properties,
        &props,
        unit_hash(UnitKind::Properties, &props),
    );
    manifest.number += 1;
    manifest.log_seq = seq;
    manifest.graph_version = snapshot.version();
    manifest.num_vertices = snapshot.num_vertices() as u64;
    manifest.num_arcs = snapshot.num_arcs() as u64;
    if !pack.is_empty() {
        let path = dir.join(pack_name(pack_number));
        let bytes = pack.finish();
        let file = vfs.create(&path).map_err(io_at(&path))?;
        file.append(&bytes).map_err(io_at(&path))?;
        file.sync().map_err(io_at(&path))?;
        state.pack_sizes.insert(pack_number, bytes.len() as u64);
        manifest.next_pack = pack_number + 1;
    }
    let encoded = manifest.encode();
    write_manifest(vfs, dir, &encoded)?;
    stats.bytes_written += encoded.len() as u64;

    if let Some(base) = new_base {
        state.base = snapshot.clone();
        state.base_bytes = base.pages().map(|p| p.len).sum();
        state.base_units = base
            .pages()
            .copied()
            .chain([manifest.base, manifest.ids])
            .map(|u| (u.hash, u))
            .collect();
    }
    state.manifest = manifest;
    Ok(stats)
}

/// Deletes packs the manifest does not reference and log segments before `keep_from`
/// whose records the checkpoint at `seq` covers; then syncs the directory.
fn collect_garbage<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    state: &CheckpointState<C>,
    seq: Seq,
    keep_from: Seq,
) -> Result<()> {
    let names = vfs.list(dir).map_err(io_at(dir))?;
    let live = state.live_packs();
    let mut segments: Vec<u64> = names.iter().filter_map(|n| parse_segment_name(n)).collect();
    segments.sort_unstable();
    let mut removed = false;
    for name in &names {
        let dead = match (parse_pack_name(name), parse_segment_name(name)) {
            (Some(n), _) => !live.contains(&n),
            (_, Some(first)) => {
                // Obsolete when the next segment starts at or before the first record needed.
                first < keep_from
                    && segments
                        .iter()
                        .find(|&&f| f > first)
                        .is_some_and(|&next| next <= seq + 1)
            }
            _ => false,
        };
        if dead {
            let path = dir.join(name);
            vfs.remove(&path).map_err(io_at(&path))?;
            removed = true;
        }
    }
    if removed {
        vfs.sync_dir(dir).map_err(io_at(dir))?;
    }
    Ok(())
}

/// What [`verify`] checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VerifyReport {
    /// Pack files checked (every unit's checksum and hash, the trailer).
    pub packs: u64,
    /// Units checked.
    pub units: u64,
    /// Log records checked.
    pub records: u64,
    /// Bytes of a torn last record (not damage: the next open cuts it).
    pub torn_bytes: u64,
    /// Vertices and arcs of the recovered graph.
    pub num_vertices: u64,
    /// Arcs of the recovered graph.
    pub num_arcs: u64,
}

/// Checks every file of a data directory: the manifest, every pack in full (each unit's
/// CRC-32C and hash, the trailer), every reference, the checkpoint's arrays, and every log
/// record (that it decodes and applies). Takes no lock and changes nothing.
///
/// # Errors
/// The first damage found, as [`Error::Corrupt`] naming the file and byte offset.
pub fn verify(dir: &Path) -> Result<VerifyReport> {
    verify_with(&OsVfs, dir)
}

/// [`verify`] through a given file system.
///
/// # Errors
/// As [`verify`].
pub fn verify_with(vfs: &dyn Vfs, dir: &Path) -> Result<VerifyReport> {
    let manifest = read_manifest(vfs, dir)?;
    let mut report = VerifyReport::default();
    let names = vfs.list(dir).map_err(io_at(dir))?;
    for name in &names {
        if let Some(n) = parse_pack_name(name) {
            let path = dir.join(name);
            let bytes = vfs.read(&path).map_err(io_at(&path))?;
            report.units += check_pack(&path, n, &bytes)?.len() as u64;
            report.packs += 1;
        }
    }
    let (vertices, arcs, records, torn) = if manifest.weighted {
        let loaded = load::<DeltaMapLeaf>(vfs, dir)?;
        loaded.graph.check_invariants()?;
        (
            loaded.graph.num_vertices(),
            loaded.graph.num_arcs(),
            loaded.log.replayed,
            loaded.log.torn_bytes,
        )
    } else {
        let loaded = load::<GroupLeaf>(vfs, dir)?;
        loaded.graph.check_invariants()?;
        (
            loaded.graph.num_vertices(),
            loaded.graph.num_arcs(),
            loaded.log.replayed,
            loaded.log.torn_bytes,
        )
    };
    report.num_vertices = vertices as u64;
    report.num_arcs = arcs as u64;
    report.records = records;
    report.torn_bytes = torn;
    Ok(report)
}

/// A store of either graph kind, as the directory's manifest says.
#[derive(Debug)]
pub enum AnyStore {
    /// Edges without weights.
    Unweighted(Store<GroupLeaf>),
    /// Edges with `f64` weights.
    Weighted(Store<DeltaMapLeaf>),
}

impl AnyStore {
    /// Opens `dir` as whichever kind its manifest names.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Self> {
        let manifest = read_manifest(&*options.vfs, dir)?;
        Ok(if manifest.weighted {
            Self::Weighted(Store::open(dir, options)?)
        } else {
            Self::Unweighted(Store::open(dir, options)?)
        })
    }

    /// Creates `dir` holding `graph`.
    ///
    /// # Errors
    /// As [`Store::create`].
    pub fn create(dir: &Path, options: StoreOptions, graph: AnyGraph) -> Result<Self> {
        Ok(match graph {
            AnyGraph::Unweighted(g) => Self::Unweighted(Store::create(dir, options, g)?),
            AnyGraph::Weighted(g) => Self::Weighted(Store::create(dir, options, g)?),
        })
    }

    /// Whether edges carry weights.
    pub fn is_weighted(&self) -> bool {
        matches!(self, Self::Weighted(_))
    }

    /// See [`Store::commit`].
    ///
    /// # Errors
    /// As [`Store::commit`].
    pub fn commit(&self, update: &Update) -> Result<(Seq, Applied)> {
        match self {
            Self::Unweighted(s) => s.commit(update),
            Self::Weighted(s) => s.commit(update),
        }
    }

    /// See [`Store::append`].
    ///
    /// # Errors
    /// As [`Store::append`].
    pub fn append(&self, update: &Update) -> Result<(Seq, Applied)> {
        match self {
            Self::Unweighted(s) => s.append(update),
            Self::Weighted(s) => s.append(update),
        }
    }

    /// See [`Store::durable_seq`].
    pub fn durable_seq(&self) -> Seq {
        match self {
            Self::Unweighted(s) => s.durable_seq(),
            Self::Weighted(s) => s.durable_seq(),
        }
    }

    /// See [`Store::wait_durable`].
    ///
    /// # Errors
    /// As [`Store::wait_durable`].
    pub fn wait_durable(&self, seq: Seq) -> Result<()> {
        match self {
            Self::Unweighted(s) => s.wait_durable(seq),
            Self::Weighted(s) => s.wait_durable(seq),
        }
    }

    /// See [`Store::sync`].
    ///
    /// # Errors
    /// As [`Store::sync`].
    pub fn sync(&self) -> Result<Seq> {
        match self {
            Self::Unweighted(s) => s.sync(),
            Self::Weighted(s) => s.sync(),
        }
    }

    /// See [`Store::checkpoint`].
    ///
    /// # Errors
    /// As [`Store::checkpoint`].
    pub fn checkpoint(&self) -> Result<CheckpointStats> {
        match self {
            Self::Unweighted(s) => s.checkpoint(),
            Self::Weighted(s) => s.checkpoint(),
        }
    }

    /// See [`Store::recovery`].
    pub fn recovery(&self) -> RecoveryStats {
        match self {
            Self::Unweighted(s) => s.recovery(),
            Self::Weighted(s) => s.recovery(),
        }
    }

    /// The latest committed version as a graph of its own (O(1), shares pages).
    pub fn graph(&self) -> AnyGraph {
        match self {
            Self::Unweighted(s) => AnyGraph::Unweighted(s.snapshot().to_graph()),
            Self::Weighted(s) => AnyGraph::Weighted(s.snapshot().to_graph()),
        }
    }
}

/// The latest durable state of `dir` as whichever graph kind it holds (no lock taken).
///
/// # Errors
/// As [`Store::open`].
pub fn load_any(dir: &Path) -> Result<AnyGraph> {
    let manifest = read_manifest(&OsVfs, dir)?;
    Ok(if manifest.weighted {
        AnyGraph::Weighted(load_graph(dir)?)
    } else {
        AnyGraph::Unweighted(load_graph(dir)?)
    })
}
