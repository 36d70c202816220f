//! Reading a data directory back, in the order recovery does it: the manifest, the base
//! unit, the edge arrays of its pages, the vertex ids, the delta and properties units, the
//! manifest's counts, then the log after the checkpoint.
//!
//! Every unit's CRC-32C and hash are checked as its pack is read, and the arrays are
//! validated as the graph is rebuilt; damage is an [`Error::Corrupt`] naming the file and,
//! where known, the byte offset. [`load`] takes no lock: [`Store::open`](super::Store::open)
//! takes the writer's lock first, [`load_graph`] reads beside a writer.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::format::{self, check_pack_header, pack_name, Manifest, UnitKind, UnitRef, MANIFEST};
use super::units::{self, ArrayShape, Base};
use super::wal;
use super::{OsVfs, RecoveryStats, StoreLeaf, Vfs};
use crate::graph::{Graph, GraphRead, Snapshot, Update};
use crate::{Error, Result};

/// A graph loaded from a directory: the latest durable state.
pub(super) struct Loaded<C: StoreLeaf> {
    pub(super) graph: Graph<C>,
    pub(super) base: Snapshot<C>,
    pub(super) base_bytes: u64,
    pub(super) manifest: Manifest,
    pub(super) log: wal::LogState,
    pub(super) base_units: HashMap<u128, UnitRef>,
    pub(super) pack_sizes: HashMap<u64, u64>,
    pub(super) recovery: RecoveryStats,
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

pub(super) fn load<C: StoreLeaf>(vfs: &dyn Vfs, dir: &Path) -> Result<Loaded<C>> {
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
/// As [`Store::open`](super::Store::open), except that a locked directory is not an error.
pub fn load_graph<C: StoreLeaf>(dir: &Path) -> Result<Graph<C>> {
    Ok(load::<C>(&OsVfs, dir)?.graph)
}

/// Whether `dir` looks like a data directory (it has a manifest).
pub fn is_store(dir: &Path) -> bool {
    dir.is_dir() && dir.join(MANIFEST).is_file()
}
