//! Offline checking of a data directory: every file read in full, nothing changed, no lock
//! taken.

use std::io;
use std::path::Path;

use super::format::{check_pack, parse_pack_name, Manifest};
use super::recover::{load, read_manifest};
use super::{io_at, OsVfs, StoreLeaf, Vfs};
use crate::graph::GraphRead;
use crate::pma::{GroupLeaf, GroupMapLeaf};
use crate::{Error, Result};

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
    /// Pack files past the manifest's last pack number that do not check out: left by a
    /// checkpoint that never finished, which no manifest names (not damage: the next open
    /// removes them).
    pub stray_packs: u64,
    /// Vertices of the recovered graph.
    pub num_vertices: u64,
    /// Arcs of the recovered graph.
    pub num_arcs: u64,
    /// The high-water mark: the last batch recorded as acknowledged, which the log reaches
    /// (`None` for a directory made before marks were kept).
    pub high_water: Option<u64>,
}

/// Checks every file of a data directory: the manifest, every pack in full (each unit's
/// CRC-32C and hash, the trailer), every reference, the checkpoint's arrays, every log
/// record (that it decodes and applies), and that the log reaches the checkpoint and the
/// high-water mark (a shorter log lost acknowledged batches). Takes no lock and changes
/// nothing.
///
/// # Errors
/// The first damage found, as [`Error::Corrupt`](crate::Error::Corrupt) naming the file and
/// byte offset.
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
    check_packs(vfs, dir, &manifest, &mut report)?;
    if manifest.weighted {
        check_recovery::<GroupMapLeaf>(vfs, dir, &mut report)?;
    } else {
        check_recovery::<GroupLeaf>(vfs, dir, &mut report)?;
    }
    Ok(report)
}

/// Checks every pack file of `dir` in full, referenced or not, against the directory id
/// of `manifest`. A pack numbered from the manifest's next pack on that does not check out
/// is a stray, not damage: no manifest names it. A pack that is gone by the time it is read
/// was deleted by a writer's checkpoint (the recovery check that follows reads every pack
/// the manifest then names).
fn check_packs(
    vfs: &dyn Vfs,
    dir: &Path,
    manifest: &Manifest,
    report: &mut VerifyReport,
) -> Result<()> {
    let names = vfs.list(dir).map_err(io_at(dir))?;
    for name in &names {
        if let Some(n) = parse_pack_name(name) {
            let path = dir.join(name);
            let bytes = match vfs.read(&path) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(&path, e)),
            };
            match check_pack(&path, n, manifest.dir_id, &bytes) {
                Ok(units) => report.units += units.len() as u64,
                Err(Error::Corrupt { .. }) if n >= manifest.next_pack => {
                    report.stray_packs += 1;
                    continue;
                }
                Err(e) => return Err(e),
            }
            report.packs += 1;
        }
    }
    Ok(())
}

/// Recovers the graph of `dir` as a `C` graph and checks its invariants.
fn check_recovery<C: StoreLeaf>(
    vfs: &dyn Vfs,
    dir: &Path,
    report: &mut VerifyReport,
) -> Result<()> {
    let loaded = load::<C>(vfs, dir)?;
    loaded.graph.check_invariants()?;
    report.num_vertices = loaded.graph.num_vertices() as u64;
    report.num_arcs = loaded.graph.num_arcs() as u64;
    report.records = loaded.log.replayed;
    report.torn_bytes = loaded.log.torn_bytes;
    report.high_water = loaded.recovery.high_water;
    Ok(())
}
