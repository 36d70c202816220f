//! Reading a data directory back, in the order recovery does it: the manifest, the base
//! unit, the units it and the manifest name (each pack read once, only those units'
//! bytes), the edge arrays of its pages (in parallel), the vertex ids, the properties and
//! delta units, the manifest's counts, then the log after the checkpoint (`replay.rs`).
//!
//! Every unit's CRC-32C and hash are checked before it is used, and the arrays are
//! validated as the graph is rebuilt; damage is an [`Error::Corrupt`] naming the file and,
//! where known, the byte offset. [`load`] takes no lock: [`Store::open`](super::Store::open)
//! takes the writer's lock first, [`load_graph`] reads beside a writer.

use std::io;
use std::path::Path;
use std::time::Instant;

use super::checkpoint::{CheckpointState, PropertySubtrees};
use super::format::{self, Manifest, UnitKind, UnitRef, MANIFEST};
use super::format::{DELTA_PROPERTIES, SUBTREE_UNITS};
use super::replay::{Replayer, MERGE_OPS};
use super::units::{self, Base};
use super::{mark, wal};
use super::{OsVfs, RecoveryStats, Seq, StoreLeaf, Vfs};
use crate::graph::{Graph, GraphRead, Snapshot, Update};
use crate::{Error, Result};
use rayon::prelude::*;

mod packs;
mod pages;

use packs::Packs;
use pages::{load_arrays, Placing};

/// A graph loaded from a directory: the latest durable state.
pub(super) struct Loaded<C: StoreLeaf> {
    pub(super) graph: Graph<C>,
    /// The checkpoint it was loaded from, for the next one to build on.
    pub(super) checkpoint: CheckpointState<C>,
    pub(super) log: wal::LogState,
    pub(super) recovery: RecoveryStats,
    /// The high-water mark the directory recorded (0 if none).
    pub(super) mark: Seq,
    /// Where the log must start again, past records it no longer holds, when a lost log
    /// was accepted ([`LoadMode::accept_lost_log`]) or a damaged last record cut off: the
    /// writer checkpoints at this record and numbers the next one after it.
    pub(super) restart_at: Option<Seq>,
}

/// What a load forgives.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LoadMode {
    /// Leave out a damaged last log record rather than refusing it.
    pub(super) cut_damaged: bool,
    /// Accept a log that ends before the high-water mark or the checkpoint, or is missing:
    /// the records it lacks are reported lost, and numbering goes on after the mark.
    pub(super) accept_lost_log: bool,
}

/// Reads the manifest of `dir`.
pub(super) fn read_manifest(vfs: &dyn Vfs, dir: &Path) -> Result<Manifest> {
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

/// Refuses a directory that holds the other graph kind than `C`.
fn check_kind<C: StoreLeaf>(dir: &Path, manifest: &Manifest) -> Result<()> {
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
    Ok(())
}

/// Reads the manifest's base unit, which must agree with the manifest on whether the graph
/// is directed.
fn read_base(packs: &mut Packs<'_>, manifest: &Manifest) -> Result<Base> {
    packs.read(&[&manifest.base])?;
    let base_path = packs.path(&manifest.base);
    let base = Base::decode(
        packs.unit(&manifest.base, UnitKind::Base)?,
        &base_path,
        manifest.base.offset + format::UNIT_HEADER as u64,
    )?;
    for page in base.pages() {
        manifest.check_unit_pack(&base_path, UnitKind::Page, page)?;
    }
    if base.incoming.is_some() != manifest.directed {
        return Err(Error::Corrupt {
            path: Some(base_path),
            offset: Some(manifest.base.offset),
            reason: "the base unit disagrees with the manifest on whether the graph is directed"
                .into(),
        });
    }
    Ok(base)
}

/// The id and property subtree units the manifest's index units list (format 5; none
/// before, when the ids and the properties are one unit each).
#[derive(Debug, Default)]
struct Subtrees {
    /// The dense range of the id dictionary: first id, length.
    id_range: (u64, usize),
    ids: Vec<UnitRef>,
    /// The property units in the order they apply, the last `overlays` of them overlays.
    properties: Vec<UnitRef>,
    overlays: usize,
}

impl Subtrees {
    fn all(&self) -> impl Iterator<Item = &UnitRef> {
        self.ids.iter().chain(&self.properties)
    }
}

/// Where the payload of `unit` starts in its pack.
fn payload_at(unit: &UnitRef) -> u64 {
    unit.offset + format::UNIT_HEADER as u64
}

/// Reads the ids and properties index units of `manifest` (format 5) and the subtree
/// units they list, each of which must lie in a pack below the next pack number.
fn read_subtree_indexes(packs: &mut Packs<'_>, manifest: &Manifest) -> Result<Subtrees> {
    if manifest.version < SUBTREE_UNITS {
        return Ok(Subtrees::default());
    }
    packs.read(&[&manifest.ids, &manifest.properties])?;
    let ids_path = packs.path(&manifest.ids);
    let payload = packs.unit(&manifest.ids, UnitKind::IdsIndex)?;
    let (id_range, ids) = units::read_ids_index(payload, &ids_path, payload_at(&manifest.ids))?;
    let props_path = packs.path(&manifest.properties);
    let payload = packs.unit(&manifest.properties, UnitKind::PropertiesIndex)?;
    let at = payload_at(&manifest.properties);
    let (properties, overlays) = units::read_properties_index(payload, &props_path, at)?;
    for unit in &ids {
        manifest.check_unit_pack(&ids_path, UnitKind::IdSubtree, unit)?;
    }
    for unit in &properties {
        manifest.check_unit_pack(&props_path, UnitKind::PropertySubtree, unit)?;
    }
    Ok(Subtrees {
        id_range,
        ids,
        properties,
        overlays,
    })
}

/// The checked payloads of the subtree units `units` of `kind` (read by [`Packs::read`])
/// with where each lies.
fn located<'a>(
    packs: &'a Packs<'_>,
    units: &[UnitRef],
    kind: UnitKind,
) -> Result<Vec<units::Located<'a>>> {
    units
        .par_iter()
        .map(|unit| Ok((packs.unit(unit, kind)?, packs.path(unit), payload_at(unit))))
        .collect()
}

/// The checkpoint's id dictionary: its subtree units (format 5) or its ids unit.
fn read_id_dictionary(
    packs: &Packs<'_>,
    manifest: &Manifest,
    subtrees: &Subtrees,
) -> Result<crate::graph::IdMap> {
    if manifest.version >= SUBTREE_UNITS {
        let located = located(packs, &subtrees.ids, UnitKind::IdSubtree)?;
        return units::read_id_subtrees(subtrees.id_range, &located);
    }
    let payload = packs.unit(&manifest.ids, UnitKind::Ids)?;
    units::read_ids(
        payload,
        &packs.path(&manifest.ids),
        payload_at(&manifest.ids),
    )
}

/// The checkpoint's base graph: the edge arrays `base` lists, validated, with the vertex
/// ids of the manifest's ids units.
///
/// The pages are first placed as the configuration's page size splits the leaves, without
/// reading their leaf counts first ([`Placing::Configured`]). A load that fails so is done
/// again with the counts read first ([`Placing::Counted`]), whose result stands: it places
/// the pages of any split the counts allow and names damage as the checks of the first
/// damaged page in order find it. Where the first load succeeds, every page held exactly
/// the leaves of its configured page, so the second would have built the same graph.
fn load_base_graph<C: StoreLeaf>(
    packs: &Packs<'_>,
    manifest: &Manifest,
    base: &Base,
    subtrees: &Subtrees,
) -> Result<Graph<C>> {
    load_base_graph_placed(packs, manifest, base, subtrees, Placing::Configured)
        .or_else(|_| load_base_graph_placed(packs, manifest, base, subtrees, Placing::Counted))
}

/// [`load_base_graph`] with its pages placed as `placing` says.
fn load_base_graph_placed<C: StoreLeaf>(
    packs: &Packs<'_>,
    manifest: &Manifest,
    base: &Base,
    subtrees: &Subtrees,
    placing: Placing,
) -> Result<Graph<C>> {
    let (out, incoming, legacy) = load_arrays::<C>(packs, manifest, base, placing)?;
    let num_vertices =
        usize::try_from(base.num_vertices).map_err(|_| Error::corrupt("vertex count too large"))?;
    let ids = read_id_dictionary(packs, manifest, subtrees)?;
    let graph = if legacy {
        C::from_legacy_arrays(manifest.directed, num_vertices, out, incoming)
    } else {
        C::from_arrays(manifest.directed, num_vertices, out, incoming)
    };
    let base_path = packs.path(&manifest.base);
    graph
        .map_err(|e| match e {
            // An array that breaks an invariant; a page that could not be read names itself.
            Error::Corrupt {
                path: None, reason, ..
            } => Error::Corrupt {
                path: Some(base_path),
                offset: None,
                reason: format!("the checkpoint's edge arrays: {reason}"),
            },
            other => other,
        })?
        .with_ids(ids)
        .map_err(|e| Error::corrupt(format!("the checkpoint's vertex ids: {e}")))
}

/// Applies a unit's update to `graph`, as a corruption of the unit if it does not apply.
fn apply_unit<C: StoreLeaf>(
    graph: &mut Graph<C>,
    packs: &Packs<'_>,
    unit: &UnitRef,
    kind: UnitKind,
) -> Result<()> {
    let path = packs.path(unit);
    let at = unit.offset + format::UNIT_HEADER as u64;
    let payload = packs.unit(unit, kind)?;
    let update = Update::decode(payload).map_err(|e| units::locate(e, &path, at))?;
    if kind == UnitKind::Properties && !units::only_properties(&update) {
        return Err(Error::Corrupt {
            path: Some(path),
            offset: Some(at),
            reason: "the Properties unit holds more than property values".into(),
        });
    }
    apply_located(graph, &update, &path, at, kind)
}

/// Applies the update of a unit of `kind` at `at` of `path` to `graph`, as a corruption
/// of the unit if it does not apply.
fn apply_located<C: StoreLeaf>(
    graph: &mut Graph<C>,
    update: &Update,
    path: &Path,
    at: u64,
    kind: UnitKind,
) -> Result<()> {
    graph.apply(update).map_err(|e| Error::Corrupt {
        path: Some(path.to_path_buf()),
        offset: Some(at),
        reason: format!("the {kind:?} unit does not apply to the checkpoint: {e}"),
    })?;
    Ok(())
}

/// Applies the checkpoint's properties to `graph`: its property subtree units in order
/// (format 5, decoded in parallel), or its properties unit. Returns the subtree units
/// before the overlays and the values they hold (none before format 5), for the next base.
fn apply_properties<C: StoreLeaf>(
    graph: &mut Graph<C>,
    packs: &Packs<'_>,
    manifest: &Manifest,
    subtrees: &Subtrees,
) -> Result<PropertySubtrees> {
    if manifest.version < SUBTREE_UNITS {
        apply_unit(graph, packs, &manifest.properties, UnitKind::Properties)?;
        return Ok(PropertySubtrees::default());
    }
    let kind = UnitKind::PropertySubtree;
    let located = located(packs, &subtrees.properties, kind)?;
    let updates = units::decode_subtrees(&located, "a property unit", units::only_properties)?;
    let overlays_from = subtrees.properties.len() - subtrees.overlays;
    let mut kept = PropertySubtrees::default();
    for (i, ((_, path, at), update)) in located.iter().zip(&updates).enumerate() {
        if i == overlays_from {
            kept.values = graph.properties().clone();
        }
        apply_located(graph, update, path, *at, kind)?;
    }
    if subtrees.overlays == 0 {
        kept.values = graph.properties().clone();
    }
    kept.units = subtrees.properties[..overlays_from].to_vec();
    Ok(kept)
}

/// Brings the base graph to the checkpoint's version: its properties unit, then its delta
/// unit (if any). Since format 4 the properties unit holds the base's values and the delta
/// the changes since; before, the properties unit held the checkpoint's values (maybe of
/// vertices the delta adds) and is applied last. Returns the base version (the base graph
/// with the base's properties), which the next delta is taken against, and the property
/// subtree units the next base may list again ([`apply_properties`]).
fn apply_checkpoint_units<C: StoreLeaf>(
    graph: &mut Graph<C>,
    packs: &Packs<'_>,
    manifest: &Manifest,
    subtrees: &Subtrees,
) -> Result<(Snapshot<C>, PropertySubtrees)> {
    let properties_first = manifest.version >= DELTA_PROPERTIES;
    let mut kept = PropertySubtrees::default();
    if properties_first {
        kept = apply_properties(graph, packs, manifest, subtrees)?;
    }
    let base = graph.snapshot();
    if let Some(delta) = &manifest.delta {
        apply_unit(graph, packs, delta, UnitKind::Delta)?;
    }
    if !properties_first {
        apply_unit(graph, packs, &manifest.properties, UnitKind::Properties)?;
    }
    graph.set_version(manifest.graph_version);
    Ok((base, kept))
}

/// Checks the loaded checkpoint against the vertex and arc counts the manifest promises.
fn check_counts<C: StoreLeaf>(dir: &Path, manifest: &Manifest, graph: &Graph<C>) -> Result<()> {
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
    Ok(())
}

/// What replaying the log found: the log, and where it must start again (see
/// [`Loaded::restart_at`]) with the batches lost.
struct Replayed {
    log: wal::LogState,
    restart_at: Option<Seq>,
    lost: Option<(Seq, Seq)>,
}

/// Replays the log records after the checkpoint of `manifest` onto `graph` (a torn last
/// record is left out), and checks that the log is there and reaches both the last record
/// the checkpoint covers and the high-water mark `mark` (read before the log).
fn replay_log<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    manifest: &Manifest,
    mark: Seq,
    mode: LoadMode,
    graph: &mut Graph<C>,
) -> Result<Replayed> {
    let from = manifest.log_seq;
    let mut replayer = Replayer::new(graph, MERGE_OPS);
    let scanned = wal::scan(
        vfs,
        dir,
        manifest.dir_id,
        from,
        mode.cut_damaged,
        |record| replayer.record(record),
    );
    // The records before the one a scan error names were read whole: a record among them
    // that does not apply is the error sequential replay would have stopped at first.
    let flushed = replayer.flush();
    flushed?;
    let log = scanned?;
    let log_end = log.next_seq - 1;
    // A damaged last record cut off on request was written, maybe acknowledged: its
    // number is not given out again either.
    let cut = log.damaged_tail.as_ref().map_or(0, |d| d.seq);
    let kept = log_end.max(cut);
    // Since format 3 a directory's first log segment is created before its first manifest,
    // and a segment is removed only once a newer one is durable.
    let missing = manifest.version >= 3 && log.segments.is_empty();
    if !mode.accept_lost_log {
        check_log_reaches(dir, &log, from, mark, kept, missing)?;
    }
    let resume = kept.max(from).max(mark);
    Ok(Replayed {
        restart_at: (missing || resume > log_end).then_some(resume),
        lost: (mark > kept.max(from)).then_some((kept.max(from) + 1, mark)),
        log,
    })
}

/// Checks that the log is there and reaches the last record of the checkpoint (`from`)
/// and the high-water mark; `kept` is its last record, or the damaged one cut off.
fn check_log_reaches(
    dir: &Path,
    log: &wal::LogState,
    from: Seq,
    mark: Seq,
    kept: Seq,
    missing: bool,
) -> Result<()> {
    let log_end = log.next_seq - 1;
    if missing {
        return Err(Error::Corrupt {
            path: Some(dir.join(MANIFEST)),
            offset: None,
            reason: format!(
                "the log is missing: no log segment holds the records after the checkpoint's \
                 last record {from}"
            ),
        });
    }
    if log_end < from {
        return Err(Error::Corrupt {
            path: Some(dir.join(MANIFEST)),
            offset: None,
            reason: format!(
                "the checkpoint covers log records up to {from}, but the log ends at record {log_end}: \
                 acknowledged records are missing"
            ),
        });
    }
    if kept < mark {
        let newest = log
            .segments
            .last()
            .map_or(MANIFEST, |(_, name)| name.as_str());
        return Err(Error::Corrupt {
            path: Some(dir.join(newest)),
            offset: None,
            reason: format!(
                "the log ends at record {kept}, but the high-water mark ({}) records that \
                 batches up to {mark} were acknowledged: batches {} to {mark} are lost \
                 (`packgraph recover DIR --accept-lost-log` accepts the loss and numbers new \
                 batches after {mark})",
                mark::MARK,
                kept + 1
            ),
        });
    }
    Ok(())
}

/// Vertices one update may add beyond those its ids and edge endpoints explain (through
/// its vertex count alone): a bound on what one log record can make recovery allocate.
pub(super) const MAX_UNEXPLAINED_GROWTH: usize = 1 << 24;

/// Checks the vertex count an update asks for ([`Update::required_vertices`]) before
/// anything is allocated for it: at most [`MAX_VERTICES`](crate::graph::MAX_VERTICES), and
/// at most [`MAX_UNEXPLAINED_GROWTH`] beyond the graph's `num_vertices`, the ids it adds and
/// its edges' endpoints.
pub(super) fn check_growth(update: &Update, num_vertices: usize) -> Result<(), String> {
    let asked = update.required_vertices();
    if asked > crate::graph::MAX_VERTICES {
        return Err(format!(
            "asks for {asked} vertices, more than the {} a graph can hold",
            crate::graph::MAX_VERTICES
        ));
    }
    let endpoints = update
        .inserts()
        .iter()
        .chain(update.deletes())
        .map(|&(u, v)| u.max(v) as usize + 1)
        .max()
        .unwrap_or(0);
    let explained = (num_vertices + update.vertices().len()).max(endpoints);
    if asked > explained.saturating_add(MAX_UNEXPLAINED_GROWTH) {
        return Err(format!(
            "asks for {asked} vertices, {} more than its ids and edges explain \
             (at most {MAX_UNEXPLAINED_GROWTH} are accepted)",
            asked - explained
        ));
    }
    Ok(())
}

/// How many times [`load`] starts over when a writer's checkpoint replaced the manifest
/// while it read: each attempt fails only if a checkpoint completed during it, so running
/// out takes that many back-to-back checkpoints each shorter than one load.
const LOAD_ATTEMPTS: usize = 32;

/// Loads the latest durable state of `dir`: the manifest's checkpoint, then the log
/// records after it.
///
/// A reader takes no lock, so a writer may checkpoint meanwhile and delete the packs and
/// log segments of the manifest this load read. An error is therefore only believed when
/// the manifest is still the one the load started from; if it changed, the error came from
/// a file the new checkpoint made obsolete, and the load starts over (at most
/// [`LOAD_ATTEMPTS`] times).
pub(super) fn load<C: StoreLeaf>(vfs: &dyn Vfs, dir: &Path) -> Result<Loaded<C>> {
    load_with::<C>(vfs, dir, LoadMode::default())
}

/// [`load`], forgiving what `mode` says (a damaged last log record, a lost log), which
/// the recovery statistics then report.
pub(super) fn load_with<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    mode: LoadMode,
) -> Result<Loaded<C>> {
    let mut manifest = read_manifest(vfs, dir)?;
    let mut attempts = 1;
    loop {
        let error = match load_from(vfs, dir, manifest.clone(), mode) {
            Ok(loaded) => return Ok(loaded),
            Err(error) => error,
        };
        match read_manifest(vfs, dir) {
            Ok(now) if now != manifest && attempts < LOAD_ATTEMPTS => {
                manifest = now;
                attempts += 1;
            }
            _ => return Err(error),
        }
    }
}

/// [`load`] of the checkpoint `manifest` (just read from `dir`) and the log after it.
fn load_from<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    manifest: Manifest,
    mode: LoadMode,
) -> Result<Loaded<C>> {
    check_kind::<C>(dir, &manifest)?;
    let started = Instant::now();
    let mut packs = Packs::new(vfs, dir, manifest.dir_id);
    let base = read_base(&mut packs, &manifest)?;
    let subtrees = read_subtree_indexes(&mut packs, &manifest)?;
    let listed: Vec<UnitRef> = manifest.units().map(|(_, unit)| unit).collect();
    let units: Vec<&UnitRef> = base.pages().chain(&listed).chain(subtrees.all()).collect();
    packs.read(&units)?;
    let mut graph = load_base_graph::<C>(&packs, &manifest, &base, &subtrees)?;
    let (base_version, property_subtrees) =
        apply_checkpoint_units(&mut graph, &packs, &manifest, &subtrees)?;
    check_counts(dir, &manifest, &graph)?;
    let checkpoint_seconds = started.elapsed().as_secs_f64();
    let started = Instant::now();
    // The mark is read before the log: a writer advances it only once the records it
    // covers are durable, so every log read after it holds them (see `mark`).
    let mark = mark::read(vfs, dir, manifest.dir_id, mode.accept_lost_log)?;
    let Replayed {
        log,
        restart_at,
        lost,
    } = replay_log(vfs, dir, &manifest, mark.unwrap_or(0), mode, &mut graph)?;
    let recovery = RecoveryStats {
        checkpoint_seq: manifest.log_seq,
        checkpoint_bytes: packs.bytes,
        records_replayed: log.replayed,
        log_bytes: log.bytes,
        torn_bytes: log.torn_bytes,
        damaged_seq: log.damaged_tail.as_ref().map(|d| d.seq),
        damaged_bytes: log.damaged_tail.as_ref().map_or(0, |d| d.bytes),
        checkpoint_seconds,
        replay_seconds: started.elapsed().as_secs_f64(),
        high_water: mark,
        lost_seqs: lost,
    };
    let subtrees: Vec<UnitRef> = subtrees.all().copied().collect();
    let checkpoint = CheckpointState::new(
        manifest,
        base_version,
        &base,
        &subtrees,
        property_subtrees,
        packs.sizes(),
    );
    Ok(Loaded {
        graph,
        checkpoint,
        log,
        recovery,
        mark: mark.unwrap_or(0),
        restart_at,
    })
}

/// The latest durable state of the graph in `dir`, read without taking the writer lock
/// (a writer may be appending; its unsynced tail is ignored like a torn one).
///
/// # Errors
/// As [`Store::open`](super::Store::open), except that a locked directory is not an error.
pub fn load_graph<C: StoreLeaf>(dir: &Path) -> Result<Graph<C>> {
    Ok(load::<C>(&OsVfs, dir)?.graph)
}

/// The format version of the data directory `dir`: its manifest's (a directory of an
/// earlier version than [`STORE_FORMAT_VERSION`](super::STORE_FORMAT_VERSION) is read as it
/// is and written in this build's format from its next checkpoint on).
///
/// # Errors
/// [`Error::InvalidInput`] if `dir` has no manifest, [`Error::Corrupt`] if it is damaged,
/// [`Error::Unsupported`] for a version this build does not read.
pub fn format_version(dir: &Path) -> Result<u32> {
    Ok(read_manifest(&OsVfs, dir)?.version)
}

/// Whether `dir` looks like a data directory (it has a manifest).
pub fn is_store(dir: &Path) -> bool {
    dir.is_dir() && dir.join(MANIFEST).is_file()
}

#[cfg(test)]
mod tests {
    use super::packs::{pieces, PackBytes, PIECE_BYTES};
    use super::pages::{load_array, page_at, LoadedArray, Placing, PAGE_KINDS};
    use crate::pma::{IntoPma, Pma, PmaParts, RebuildError};
    use crate::store::units::ArrayShape;
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;
    use crate::pma::{GroupLeaf, PmaConfig};
    use crate::store::format::{pack_name, unit_hash, PackWriter};
    use crate::store::SimVfs;

    /// What loading an array gives: its keys, or the error's message (`invalid: ...` for
    /// arrays that were read but break an invariant).
    type Outcome = std::result::Result<Vec<u64>, String>;

    /// Pack 1 of directory `dir_id` holding `payloads` as page units, and their references.
    fn page_pack(dir_id: u128, payloads: &[Vec<u8>]) -> (Vec<u8>, Vec<UnitRef>) {
        let mut writer = PackWriter::new(1, dir_id);
        let refs = payloads
            .iter()
            .map(|payload| {
                let hash = unit_hash(UnitKind::GroupPage, payload);
                writer.add(UnitKind::GroupPage, payload, hash)
            })
            .collect();
        (writer.finish(), refs)
    }

    fn rebuilt(pma: std::result::Result<Pma<GroupLeaf>, RebuildError>) -> Outcome {
        match pma {
            Ok(pma) => {
                pma.check_invariants().unwrap();
                Ok(pma.iter().collect())
            }
            Err(RebuildError::Invalid(e)) => Err(format!("invalid: {e}")),
            Err(RebuildError::Unreadable(e)) => Err(e.to_string()),
        }
    }

    /// The one-pass load as recovery does it ([`load_base_graph`]): pages placed as the
    /// configuration splits them, and where that fails, as their counts say.
    fn load(packs: &Packs<'_>, shape: &ArrayShape) -> Outcome {
        placed(packs, shape, Placing::Configured)
            .or_else(|_| placed(packs, shape, Placing::Counted))
    }

    /// The one-pass load with pages placed as `placing` says: filled in place and checked.
    fn placed(packs: &Packs<'_>, shape: &ArrayShape, placing: Placing) -> Outcome {
        let array =
            load_array(packs, shape, UnitKind::GroupPage, placing).map_err(|e| e.to_string())?;
        rebuilt(array.into_pma(|_| true))
    }

    /// Each page on its own: checked, counted, copied into flat arrays, which are then
    /// checked whole ([`Pma::from_parts`]). Returns what that gives, or every error a load
    /// may report: each page's first (checks, count, copy), and the leaf count's mismatch
    /// with the base unit when every page has a count.
    fn oracle(packs: &Packs<'_>, shape: &ArrayShape) -> std::result::Result<Outcome, Vec<String>> {
        let empty = || PmaParts {
            data: Vec::new(),
            used: Vec::new(),
            heads: Vec::new(),
            ..shape.zeroed_parts().unwrap()
        };
        let mut errors = Vec::new();
        let mut parts = empty();
        let mut counted = Some(0usize);
        for page in &shape.pages {
            let path = packs.path(page);
            let checked = packs.unit_of(page, &PAGE_KINDS).and_then(|(_, payload)| {
                let count = units::page_leaf_count(payload, &path, page_at(page))?;
                Ok((payload, count))
            });
            let (payload, count) = match checked {
                Ok(found) => found,
                Err(e) => {
                    errors.push(e.to_string());
                    counted = None;
                    continue;
                }
            };
            counted = counted.map(|c| c + count);
            let mut alone = empty();
            match units::read_page(payload, &path, page_at(page), &mut alone) {
                Ok(()) => {
                    parts.data.extend(alone.data);
                    parts.used.extend(alone.used);
                    parts.heads.extend(alone.heads);
                }
                Err(e) => errors.push(e.to_string()),
            }
        }
        if let Some(leaves) = counted.filter(|&c| c != shape.num_leaves) {
            errors.push(
                Error::corrupt(format!(
                    "the base unit promises {} leaves, its pages hold {leaves}",
                    shape.num_leaves
                ))
                .to_string(),
            );
        }
        if errors.is_empty() {
            Ok(rebuilt(
                Pma::from_parts(parts, |_| true).map_err(RebuildError::Invalid),
            ))
        } else {
            Err(errors)
        }
    }

    /// Changes a page payload and gives it a valid CRC and hash: a crafted page.
    #[derive(Debug, Clone)]
    enum Lie {
        /// Adds to the leaf count (wrapping).
        Count(usize, u32),
        /// Sets a leaf size.
        Size(usize, usize, u32),
        /// Cuts the payload's last bytes.
        Cut(usize, usize),
        /// Changes a byte (of the leaves, most often): keys out of order, a wrong head,
        /// codes longer than needed or past the size.
        Byte(usize, usize, u8),
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

        /// The one-pass load (each page filled into its final place and checked there)
        /// agrees with each page checked and copied on its own into flat arrays that are
        /// then checked whole, for crafted pages (counts, sizes, lengths, leaf bytes that
        /// lie), damaged bytes (a flipped bit) and pages that do not split the leaves as
        /// the configuration does: the same keys, or an error that one of the damaged pages
        /// gives, or an invariant that does not hold where the oracle finds one.
        #[test]
        fn one_pass_load_is_the_page_by_page_load(
            keys in vec(0u64..1 << 40, 1..1500),
            page_shift in 0u32..3,
            other_split in any::<bool>(),
            lies in vec(
                prop_oneof![
                    (0usize..64, prop_oneof![1u32..4, Just(u32::MAX), Just(u32::MAX - 1)])
                        .prop_map(|(p, d)| Lie::Count(p, d)),
                    (0usize..64, 0usize..8, 0u32..300).prop_map(|(p, j, u)| Lie::Size(p, j, u)),
                    (0usize..64, 1usize..12).prop_map(|(p, n)| Lie::Cut(p, n)),
                    (0usize..64, any::<usize>(), 1u8..=255).prop_map(|(p, at, x)| Lie::Byte(p, at, x)),
                ],
                0..3,
            ),
            flip in proptest::option::of((0usize..64, any::<usize>(), 0u8..8)),
            promise in proptest::option::of(0usize..40),
        ) {
            let mut keys = keys;
            keys.sort_unstable();
            keys.dedup();
            let config = PmaConfig {
                leaf_bytes: Some(256),
                page_bytes: 256 << page_shift,
                ..PmaConfig::default()
            };
            let pma = Pma::<GroupLeaf>::from_sorted_with_config(&keys, config.clone()).unwrap();
            let parts = pma.parts();
            let mut payloads = units::page_payloads(&parts);
            let n = payloads.len();
            for lie in &lies {
                match *lie {
                    Lie::Count(p, d) => {
                        let payload = &mut payloads[p % n];
                        let count = u32::from_le_bytes(payload[..4].try_into().unwrap());
                        payload[..4].copy_from_slice(&count.wrapping_add(d).to_le_bytes());
                    }
                    Lie::Size(p, j, u) => {
                        let payload = &mut payloads[p % n];
                        let count = u32::from_le_bytes(payload[..4].try_into().unwrap());
                        if count == 0 {
                            // An earlier lie left no sizes to lie about.
                            continue;
                        }
                        let at = 4 + 4 * (j % count as usize);
                        payload[at..at + 4].copy_from_slice(&u.to_le_bytes());
                    }
                    Lie::Cut(p, cut) => {
                        let payload = &mut payloads[p % n];
                        payload.truncate(payload.len().saturating_sub(cut));
                    }
                    Lie::Byte(p, at, x) => {
                        let payload = &mut payloads[p % n];
                        let len = payload.len();
                        payload[at % len] ^= x;
                    }
                }
            }
            let dir_id = 77;
            let (mut bytes, refs) = page_pack(dir_id, &payloads);
            if let Some((p, at, bit)) = flip {
                let unit = &refs[p % refs.len()];
                let at = unit.offset as usize + at % (format::UNIT_HEADER + unit.len as usize + 4);
                bytes[at] ^= 1 << bit;
            }
            let vfs = SimVfs::new();
            let dir = Path::new("/d");
            let mut packs = Packs::new(&vfs, dir, dir_id);
            packs.files.insert(1, PackBytes::whole(bytes));
            let mut shape = ArrayShape::of(&parts, refs);
            if let Some(leaves) = promise {
                shape.num_leaves = leaves;
            }
            if other_split {
                // Pages written at one page size, promised at another.
                shape.config.page_bytes *= 2;
            }
            let got = load(&packs, &shape);
            // Pages placed as configured without their counts give what placing them by
            // their counts gives, or fail (and the load places them by their counts).
            let configured = placed(&packs, &shape, Placing::Configured);
            if configured.is_ok() {
                prop_assert_eq!(&configured, &placed(&packs, &shape, Placing::Counted));
            }
            match oracle(&packs, &shape) {
                Ok(Err(invalid)) => {
                    let message = got.unwrap_err();
                    prop_assert!(message.starts_with("invalid: "), "{message}, expected {invalid}");
                }
                Ok(expected) => prop_assert_eq!(got, expected),
                Err(errors) => {
                    let message = got.unwrap_err();
                    prop_assert!(errors.contains(&message), "{message} not in {errors:?}");
                }
            }
        }
    }

    proptest! {
        /// Every span lies in exactly one piece; pieces are sorted and apart, except that
        /// a piece of at least `PIECE_BYTES` may end where the next starts.
        #[test]
        fn pieces_hold_each_span_whole(
            mut spans in vec((0u64..40_000, 0u64..6_000), 1..40),
        ) {
            let cut = pieces(&mut spans);
            for pair in cut.windows(2) {
                let ((a, b), (c, _)) = (pair[0], pair[1]);
                prop_assert!(b < c || (b == c && b - a >= PIECE_BYTES), "{cut:?}");
            }
            for &(at, n) in &spans {
                let holding = cut.iter().filter(|&&(a, b)| a <= at && at + n <= b).count();
                let touching = cut.iter().filter(|&&(a, b)| at < b && a < at + n).count();
                prop_assert!(holding == 1 && touching <= 1, "{at}+{n} in {cut:?}");
            }
        }
    }

    /// A pack read in pieces gives each unit from the piece that holds it; a unit past
    /// what was read is damage, not a panic.
    #[test]
    fn units_read_in_pieces_are_found_in_them() {
        let vfs = SimVfs::new();
        let dir = Path::new("/d");
        vfs.create_dir_all(dir).unwrap();
        let mut writer = PackWriter::new(1, 9);
        let units: Vec<UnitRef> = (0..40u8)
            .map(|i| {
                let payload = vec![i; 1000 + usize::from(i) * 37];
                writer.add(
                    UnitKind::Delta,
                    &payload,
                    unit_hash(UnitKind::Delta, &payload),
                )
            })
            .collect();
        let file = vfs.create(&dir.join(pack_name(1))).unwrap();
        file.append(&writer.finish()).unwrap();
        let mut packs = Packs::new(&vfs, dir, 9);
        // Every other unit: the pack's dead units in between are not read.
        let live: Vec<&UnitRef> = units.iter().step_by(2).collect();
        packs.read(&live).unwrap();
        assert!(packs.files[&1].pieces.len() > 2);
        for (i, unit) in units.iter().enumerate() {
            match packs.unit(unit, UnitKind::Delta) {
                Ok(payload) => {
                    assert!(i % 2 == 0);
                    assert_eq!(payload, vec![i as u8; 1000 + i * 37]);
                }
                Err(e) => {
                    assert!(i % 2 == 1);
                    assert!(e.to_string().contains("not read"), "{e}");
                }
            }
        }
        let past = UnitRef {
            offset: packs.files[&1].len + 100,
            ..units[0]
        };
        assert!(packs.unit(&past, UnitKind::Delta).is_err());
    }

    /// A leaf that decodes to the right keys, in the right number of bytes, but whose last
    /// control byte gives a length to a slot past the leaf's end (bytes the encoder never
    /// writes, which later edits of the leaf would misread) is refused, in either split.
    #[test]
    fn a_leaf_the_encoder_would_not_write_is_damage() {
        let keys: Vec<u64> = (0..3000).map(|i| i * 3).collect();
        let config = PmaConfig {
            leaf_bytes: Some(256),
            page_bytes: 1024,
            ..PmaConfig::default()
        };
        let pma = Pma::<GroupLeaf>::from_sorted_with_config(&keys, config).unwrap();
        let parts = pma.parts();
        let mut payloads = units::page_payloads(&parts);
        // The first leaf whose last group (differences of 3: one byte each) is short.
        let payload = &mut payloads[0];
        let count = u32::from_le_bytes(payload[..4].try_into().unwrap()) as usize;
        let mut leaf_at = 4 + 12 * count;
        let (leaf_at, used) = (0..count)
            .find_map(|j| {
                let used = u32::from_le_bytes(payload[4 + 4 * j..8 + 4 * j].try_into().unwrap());
                let (at, used) = (leaf_at, used as usize);
                leaf_at += used;
                ((used - 8) % 5 != 0).then_some((at, used))
            })
            .expect("a leaf with a short last group");
        let last = leaf_at + 8 + (used - 8) / 5 * 5;
        assert_eq!(payload[last] >> 6, 0, "slot 3 of the last group is unused");
        payload[last] |= 1 << 6;
        let (bytes, refs) = page_pack(5, &payloads);
        let vfs = SimVfs::new();
        let mut packs = Packs::new(&vfs, Path::new("/d"), 5);
        packs.files.insert(1, PackBytes::whole(bytes));
        let mut shape = ArrayShape::of(&parts, refs);
        for page_bytes in [1024, 2048] {
            shape.config.page_bytes = page_bytes;
            let message = load(&packs, &shape).unwrap_err();
            assert!(
                message.starts_with("invalid: ") && message.contains("past the leaf's end"),
                "{message}"
            );
        }
    }

    #[test]
    fn a_load_without_lies_gives_back_every_key_in_either_split() {
        let keys: Vec<u64> = (0..5000).map(|i| i * 7 + (i % 5)).collect();
        let config = PmaConfig {
            leaf_bytes: Some(256),
            page_bytes: 1024,
            ..PmaConfig::default()
        };
        let pma = Pma::<GroupLeaf>::from_sorted_with_config(&keys, config).unwrap();
        let parts = pma.parts();
        let (bytes, refs) = page_pack(5, &units::page_payloads(&parts));
        let vfs = SimVfs::new();
        let mut packs = Packs::new(&vfs, Path::new("/d"), 5);
        packs.files.insert(1, PackBytes::whole(bytes));
        let mut shape = ArrayShape::of(&parts, refs);
        let split = |shape: &ArrayShape| {
            let array = load_array(&packs, shape, UnitKind::GroupPage, Placing::Counted).unwrap();
            matches!(array, LoadedArray::Pages(_))
        };
        assert!(split(&shape));
        assert_eq!(load(&packs, &shape), Ok(keys.clone()));
        shape.config.page_bytes = 2048;
        assert!(!split(&shape));
        assert_eq!(load(&packs, &shape), Ok(keys));
        // A page of the other leaf encoding.
        let error = load_array(&packs, &shape, UnitKind::Page, Placing::Counted)
            .err()
            .unwrap()
            .to_string();
        assert!(error.contains("mix pages of two leaf encodings"), "{error}");
    }
}
