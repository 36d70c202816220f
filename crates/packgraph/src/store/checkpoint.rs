//! Writing checkpoints and deleting what they make obsolete.
//!
//! A checkpoint is a snapshot of the latest version, taken without stopping the writer
//! and written as content-addressed units into one new pack: a delta against the base when
//! the edges and properties changed little since it (the net change of both), else a new
//! base (a page unit per page of each edge array, the base unit listing them, a unit per
//! subtree of the id dictionary and of each property column with an index unit listing
//! each kind); the manifest last (write, `fsync`, rename, `fsync` the directory). A unit whose hash the
//! last manifest references, in a pack at least half live, is pointed to again rather than
//! written. Once the manifest is durable, packs it does not reference and log segments it
//! covers are deleted ([`collect_garbage`]). A checkpoint starts in the background after a
//! set amount of log
//! ([`StoreOptions::checkpoint_log_bytes`](super::StoreOptions::checkpoint_log_bytes)).

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use rayon::prelude::*;

use super::format::STORE_FORMAT_VERSION;
use super::format::{pack_name, parse_pack_name, unit_hash, Manifest, PackWriter, UnitKind};
use super::format::{UnitRef, MANIFEST};
use super::units::{self, ArrayShape, Base};
use super::wal::parse_segment_name;
use super::{io_at, lock, CheckpointStats, Inner, Seq, Store, StoreLeaf, Vfs, MANIFEST_TMP};

/// The suffix of a pack being written (see [`write_pack`]).
const PACK_TMP_SUFFIX: &str = ".tmp";
use crate::graph::{GraphRead, Properties, Snapshot};
use crate::pma::PmaPartsRef;
use crate::Result;

/// The checkpointer's memory of the last checkpoint.
pub(super) struct CheckpointState<C: StoreLeaf> {
    pub(super) manifest: Manifest,
    /// The version the base was written from (deltas are taken against it).
    base: Snapshot<C>,
    /// Payload bytes of the base's units: pages, ids and properties.
    base_bytes: u64,
    /// The units of the base (the base unit, its pages, the id and property subtree units
    /// and their index units), by hash.
    base_units: HashMap<u128, UnitRef>,
    /// Bytes of each pack file.
    pack_sizes: HashMap<u64, u64>,
    /// The property subtree units the manifest's index lists before its overlays.
    property_subtrees: PropertySubtrees,
}

/// Property subtree units a checkpoint wrote and the values they hold: a later base may
/// list them again with an overlay of the changes since ([`PROPERTY_OVERLAY_SHARE`]).
#[derive(Clone, Default)]
pub(super) struct PropertySubtrees {
    pub(super) values: Properties,
    pub(super) units: Vec<UnitRef>,
}

/// A new base lists the property subtree units of the last one again, followed by an
/// overlay unit of the changes since, while the overlay is at most this share of their
/// bytes; past it, it writes the subtrees again (reusing the unchanged ones). Changes
/// scattered over 1% of the values touch nine in ten subtrees of 256 vertices, but make an
/// overlay of about 1% of their bytes; at an eighth, a load applies at most 12.5% more.
const PROPERTY_OVERLAY_SHARE: u64 = 8;

impl<C: StoreLeaf> CheckpointState<C> {
    /// The state of a checkpoint `manifest` whose base unit is `base` and whose id and
    /// property subtree units are `subtrees` (none before format 5), written from
    /// `version`, in packs of `pack_sizes` bytes.
    pub(super) fn new(
        manifest: Manifest,
        version: Snapshot<C>,
        base: &Base,
        subtrees: &[UnitRef],
        property_subtrees: PropertySubtrees,
        pack_sizes: HashMap<u64, u64>,
    ) -> Self {
        let mut state = Self {
            manifest,
            base: version,
            base_bytes: 0,
            base_units: HashMap::new(),
            pack_sizes,
            property_subtrees,
        };
        state.remember_base(base, subtrees);
        state
    }

    /// The state before the first checkpoint of the directory whose id is `dir_id`: a
    /// manifest that names no units.
    pub(super) fn before_first(snapshot: Snapshot<C>, dir_id: u128) -> Self {
        let manifest = Manifest {
            number: 0,
            log_seq: 0,
            graph_version: 0,
            directed: snapshot.is_directed(),
            weighted: C::WEIGHTED,
            num_vertices: 0,
            num_arcs: 0,
            next_pack: 1,
            base_seq: 0,
            dir_id,
            id_kind: None,
            version: super::STORE_FORMAT_VERSION,
            base: placeholder(),
            ids: placeholder(),
            properties: placeholder(),
            delta: None,
        };
        Self {
            manifest,
            base: snapshot,
            base_bytes: 0,
            base_units: HashMap::new(),
            pack_sizes: HashMap::new(),
            property_subtrees: PropertySubtrees::default(),
        }
    }

    /// The last log record the checkpoint covers.
    pub(super) fn log_seq(&self) -> Seq {
        self.manifest.log_seq
    }

    /// Records the size and units of `base`, the base unit the manifest names, and of the
    /// id and property subtree units `subtrees`.
    fn remember_base(&mut self, base: &Base, subtrees: &[UnitRef]) {
        let sides = [self.manifest.ids, self.manifest.properties];
        self.base_bytes = base
            .pages()
            .chain(subtrees)
            .chain(&sides)
            .map(|u| u.len)
            .sum();
        self.base_units = base
            .pages()
            .chain(subtrees)
            .copied()
            .chain([self.manifest.base])
            .chain(sides)
            .map(|u| (u.hash, u))
            .collect();
    }

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

/// The unit reference a manifest holds before the first checkpoint fills it in.
fn placeholder() -> UnitRef {
    UnitRef {
        pack: 0,
        offset: 0,
        len: 0,
        hash: 0,
    }
}

impl<C: StoreLeaf> Store<C> {
    /// Writes a checkpoint of the latest version now (waiting for a background one to
    /// finish first), then deletes the log segments and packs no longer needed.
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error::Io); the store's earlier data stays valid.
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

    /// Why the last background checkpoint failed (`None` if it succeeded or none ran); the
    /// log keeps everything meanwhile, so nothing is lost, but it grows.
    pub fn background_error(&self) -> Option<String> {
        lock(&self.inner.background_error).clone()
    }

    /// Starts a checkpoint on a thread of its own unless one is running.
    pub(super) fn start_background_checkpoint(&self) {
        let inner = &self.inner;
        if inner.checkpoint_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let worker = Arc::clone(inner);
        let handle = std::thread::spawn(move || {
            worker.thread_started();
            let result = worker.checkpoint(false);
            *lock(&worker.background_error) = result.err().map(|e| e.to_string());
            worker.checkpoint_running.store(false, Ordering::Release);
        });
        if let Some(previous) = lock(&inner.background).replace(handle) {
            let _ = previous.join();
        }
    }
}

impl<C: StoreLeaf> Inner<C> {
    fn checkpoint(&self, full: bool) -> Result<CheckpointStats> {
        let mut state = lock(&self.checkpoint);
        // The log rolls to a new segment at the snapshot, so that every segment before it
        // holds only records the checkpoint covers and can go once it is durable.
        let (snapshot, seq) = self.shared.with_writer(|g| -> Result<_> {
            self.check_failed()?;
            let mut log = lock(&self.log);
            log.roll(&*self.vfs)
                .inspect_err(|e| self.stop_writes(e.to_string()))?;
            Ok((g.snapshot(), log.next_seq() - 1))
        })?;
        // The checkpoint covers records up to `seq`; they must be durable before the
        // manifest says so, or a later record could reuse their numbers after a crash.
        self.wait_durable(seq, true)?;
        self.log_bytes_since_checkpoint.store(0, Ordering::Relaxed);
        let stats = write_checkpoint(&*self.vfs, &self.dir, &mut state, &snapshot, seq, full)?;
        // The manifest is durable: the records up to `seq` cannot be lost any more.
        lock(&self.mark).advance(&*self.vfs, seq)?;
        let keep_from = lock(&self.log).segment_first();
        collect_garbage(&*self.vfs, &self.dir, &state, seq, keep_from)?;
        Ok(stats)
    }
}

/// The units one checkpoint references: new ones go into its pack, those an earlier
/// checkpoint (or this one) already wrote are reused.
struct UnitWriter {
    pack: PackWriter,
    reusable: HashMap<u128, UnitRef>,
    fresh: HashMap<u128, UnitRef>,
    stats: CheckpointStats,
}

impl UnitWriter {
    /// The unit of `kind` holding `payload`, whose hash is `hash`.
    fn add(&mut self, kind: UnitKind, payload: &[u8], hash: u128) -> UnitRef {
        if let Some(unit) = self.reusable.get(&hash).or_else(|| self.fresh.get(&hash)) {
            self.stats.bytes_reused += unit.stored_bytes();
            self.stats.units_reused += 1;
            return *unit;
        }
        let unit = self.pack.add(kind, payload, hash);
        self.stats.bytes_written += unit.stored_bytes();
        self.stats.units_written += 1;
        self.fresh.insert(hash, unit);
        unit
    }

    /// The reusable unit of `unit`'s hash, referenced again (`unit` if there is none).
    fn reuse(&mut self, unit: &UnitRef) -> UnitRef {
        let unit = self.reusable.get(&unit.hash).copied().unwrap_or(*unit);
        self.stats.bytes_reused += unit.stored_bytes();
        self.stats.units_reused += 1;
        unit
    }

    /// [`UnitWriter::add`] hashing `payload` itself.
    fn add_hashed(&mut self, kind: UnitKind, payload: &[u8]) -> UnitRef {
        self.add(kind, payload, unit_hash(kind, payload))
    }
}

/// The encoded change from the base to `snapshot`, when a checkpoint should write it
/// rather than a new base.
fn delta_payload<C: StoreLeaf>(
    state: &CheckpointState<C>,
    snapshot: &Snapshot<C>,
    full: bool,
) -> Option<Vec<u8>> {
    // Before format 4 the properties unit held the checkpoint's values, not the base's: a
    // delta (which now carries property changes) needs a base of format 4 first; and the
    // manifest names the ids and properties as index units since format 5, so a delta of
    // this build needs a base of format 5; and a weighted graph's pages are group varint
    // since format 6. So a delta needs a base of the current format: the first checkpoint
    // after an older one is full, which converts the directory.
    if full || state.manifest.base == placeholder() || state.manifest.version < STORE_FORMAT_VERSION
    {
        return None;
    }
    let bytes = units::delta(&state.base, snapshot).encode();
    // A delta up to a quarter of the base (its pages, ids and properties; or 64 KiB, for
    // small graphs) is cheaper to write than a new base and cheap to apply on recovery.
    (bytes.len() as u64 <= (state.base_bytes / 4).max(1 << 16)).then_some(bytes)
}

/// Units of `kind` holding `payloads` (hashed in parallel, added in order).
fn write_all(writer: &mut UnitWriter, kind: UnitKind, payloads: &[Vec<u8>]) -> Vec<UnitRef> {
    let hashes: Vec<u128> = payloads.par_iter().map(|p| unit_hash(kind, p)).collect();
    payloads
        .iter()
        .zip(&hashes)
        .map(|(p, &h)| writer.add(kind, p, h))
        .collect()
}

/// The page units of one edge array and its shape.
fn write_array<C: StoreLeaf>(writer: &mut UnitWriter, parts: &PmaPartsRef<'_>) -> ArrayShape {
    let payloads = units::page_payloads(parts);
    let pages = write_all(writer, units::page_kind::<C>(), &payloads);
    ArrayShape::of(parts, pages)
}

/// The property units of a new base of `current`: the subtree units of `last` again and
/// an overlay of the changes since, when the overlay is small and every one of them may
/// be reused; else the subtree units of `current` (reusing those an earlier checkpoint
/// wrote with the same content). Returns the units, how many of the last are overlays,
/// and the subtree units with the values they hold.
fn write_properties(
    writer: &mut UnitWriter,
    last: &PropertySubtrees,
    current: &Properties,
) -> (Vec<UnitRef>, usize, PropertySubtrees) {
    let kind = UnitKind::PropertySubtree;
    let reusable = last
        .units
        .iter()
        .all(|u| writer.reusable.contains_key(&u.hash));
    if reusable && !last.units.is_empty() {
        let bytes: u64 = last.units.iter().map(|u| u.len).sum();
        let overlay = units::property_overlay(&last.values, current);
        if overlay.len() as u64 <= bytes / PROPERTY_OVERLAY_SHARE {
            let mut units: Vec<UnitRef> = last.units.iter().map(|u| writer.reuse(u)).collect();
            units.push(writer.add_hashed(kind, &overlay));
            return (units, 1, last.clone());
        }
    }
    let units = write_all(writer, kind, &units::property_subtrees(current));
    let subtrees = PropertySubtrees {
        values: current.clone(),
        units: units.clone(),
    };
    (units, 0, subtrees)
}

/// The subtree units of the ids and properties of `snapshot` and their index units (which
/// `manifest` then names), the property units over those of `last` when that is smaller
/// ([`write_properties`]); returns every subtree unit listed, and the property subtree
/// units with the values they hold.
fn write_ids_and_properties<C: StoreLeaf>(
    writer: &mut UnitWriter,
    manifest: &mut Manifest,
    snapshot: &Snapshot<C>,
    last: &PropertySubtrees,
) -> (Vec<UnitRef>, PropertySubtrees) {
    let (range, ids) = units::id_subtrees(snapshot.ids());
    let mut subtrees = write_all(writer, UnitKind::IdSubtree, &ids);
    manifest.ids = writer.add_hashed(UnitKind::IdsIndex, &units::ids_index(range, &subtrees));
    let (properties, overlays, kept) = write_properties(writer, last, snapshot.properties());
    let index = units::properties_index(&properties, overlays);
    manifest.properties = writer.add_hashed(UnitKind::PropertiesIndex, &index);
    subtrees.extend(properties);
    (subtrees, kept)
}

/// A new base's base unit, the id and property units it lists, and its property
/// subtree units with the values they hold.
type NewBase = (Base, Vec<UnitRef>, PropertySubtrees);

/// Adds a new base of `snapshot` (its pages, the base unit, the ids and properties, these
/// over the property subtrees `last` where smaller) to `manifest`.
fn write_base<C: StoreLeaf>(
    writer: &mut UnitWriter,
    manifest: &mut Manifest,
    snapshot: &Snapshot<C>,
    seq: Seq,
    last: &PropertySubtrees,
) -> NewBase {
    let (out_parts, in_parts) = snapshot.parts();
    let out = write_array::<C>(writer, &out_parts);
    let incoming = in_parts
        .as_ref()
        .map(|parts| write_array::<C>(writer, parts));
    let base = Base {
        num_vertices: snapshot.num_vertices() as u64,
        out,
        incoming,
    };
    manifest.base = writer.add_hashed(UnitKind::Base, &base.encode());
    let (subtrees, kept) = write_ids_and_properties(writer, manifest, snapshot, last);
    manifest.delta = None;
    manifest.base_seq = seq;
    (base, subtrees, kept)
}

/// The name a pack is written under before it is complete.
fn pack_tmp_name(number: u64) -> String {
    format!("{}{PACK_TMP_SUFFIX}", pack_name(number))
}

/// Writes a pack file whole: under a temporary name, synced, renamed to its own name, the
/// directory synced. A crash or a full disk leaves at most a `.tmp` file, never a partial
/// pack under a pack's name (the next writer removes both, see [`remove_stray_files`]).
fn write_pack(vfs: &dyn Vfs, dir: &Path, number: u64, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(pack_tmp_name(number));
    let file = vfs.create(&tmp).map_err(io_at(&tmp))?;
    file.append(bytes).map_err(io_at(&tmp))?;
    file.sync().map_err(io_at(&tmp))?;
    drop(file);
    let path = dir.join(pack_name(number));
    vfs.rename(&tmp, &path).map_err(io_at(&path))?;
    vfs.sync_dir(dir).map_err(io_at(dir))
}

/// Writes `bytes` as the manifest durably: to a temporary file, synced, renamed, directory
/// synced.
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

/// Writes a checkpoint of `snapshot` covering the log up to `seq`: a delta against the
/// base if it is small, else a new base; the manifest last.
pub(super) fn write_checkpoint<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    state: &mut CheckpointState<C>,
    snapshot: &Snapshot<C>,
    seq: Seq,
    full: bool,
) -> Result<CheckpointStats> {
    let pack_number = state.manifest.next_pack;
    let mut writer = UnitWriter {
        pack: PackWriter::new(pack_number, state.manifest.dir_id),
        reusable: state.reusable(),
        fresh: HashMap::new(),
        stats: CheckpointStats {
            seq,
            ..CheckpointStats::default()
        },
    };
    let mut manifest = state.manifest.clone();
    let mut new_base = None;
    match delta_payload(state, snapshot, full) {
        Some(bytes) => {
            manifest.delta = Some(writer.add_hashed(UnitKind::Delta, &bytes));
            writer.stats.delta = true;
        }
        None => {
            let last = &state.property_subtrees;
            new_base = Some(write_base(&mut writer, &mut manifest, snapshot, seq, last));
        }
    }
    manifest.number += 1;
    manifest.version = super::STORE_FORMAT_VERSION;
    manifest.log_seq = seq;
    manifest.graph_version = snapshot.version();
    manifest.num_vertices = snapshot.num_vertices() as u64;
    manifest.num_arcs = snapshot.num_arcs() as u64;
    if !writer.pack.is_empty() {
        let bytes = writer.pack.finish();
        write_pack(vfs, dir, pack_number, &bytes)?;
        state.pack_sizes.insert(pack_number, bytes.len() as u64);
        manifest.next_pack = pack_number + 1;
    }
    let encoded = manifest.encode();
    write_manifest(vfs, dir, &encoded)?;
    writer.stats.bytes_written += encoded.len() as u64;

    state.manifest = manifest;
    if let Some((base, subtrees, kept)) = new_base {
        state.base = snapshot.clone();
        state.remember_base(&base, &subtrees);
        state.property_subtrees = kept;
    }
    Ok(writer.stats)
}

/// Removes what an unfinished checkpoint may have left in `dir`: packs being written
/// (`.tmp`) and packs the manifest of `state` does not reference (a pack written by a
/// checkpoint whose manifest never became durable, or one a crash kept from being deleted).
/// Run by a writer on opening, under its lock.
pub(super) fn remove_stray_files<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    state: &CheckpointState<C>,
) -> Result<()> {
    let live = state.live_packs();
    let mut removed = false;
    for name in vfs.list(dir).map_err(io_at(dir))? {
        let stray = name
            .strip_suffix(PACK_TMP_SUFFIX)
            .is_some_and(|n| parse_pack_name(n).is_some())
            || parse_pack_name(&name).is_some_and(|n| !live.contains(&n));
        if stray {
            let path = dir.join(&name);
            vfs.remove(&path).map_err(io_at(&path))?;
            removed = true;
        }
    }
    if removed {
        vfs.sync_dir(dir).map_err(io_at(dir))?;
    }
    Ok(())
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
