//! The packs a checkpoint's units lie in, read in pieces of whole units side by side: only
//! the units asked for (a pack's dead units are not read), each checked where it is taken.

use super::pages;
use crate::store::format::{self, check_pack_header, pack_name, UnitKind, UnitRef};
use crate::store::Vfs;
use crate::{Error, Result};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};

/// Bytes a piece of a pack read by one task grows to before the next unit starts another:
/// large enough that a piece costs little more than its bytes, small enough that the pieces
/// of one large pack are read side by side. (Tests read in small pieces, so that their
/// packs come in many.)
pub(super) const PIECE_BYTES: u64 = if cfg!(test) { 4096 } else { 1 << 20 };

/// The bytes read of one pack: its length, and pieces of it (each a start and the bytes
/// from there), sorted, disjoint, each holding whole units (and the first, the header).
#[derive(Debug, Default)]
pub(super) struct PackBytes {
    pub(super) len: u64,
    pub(super) pieces: Vec<(u64, Vec<u8>)>,
}

impl PackBytes {
    /// The whole file `bytes` as one piece.
    #[cfg(test)]
    pub(super) fn whole(bytes: Vec<u8>) -> Self {
        Self {
            len: bytes.len() as u64,
            pieces: vec![(0, bytes)],
        }
    }

    /// The piece holding byte `at` (its bytes and start), if one was read.
    pub(super) fn piece_at(&self, at: u64) -> Option<(&[u8], u64)> {
        let i = self.pieces.partition_point(|(start, _)| *start <= at);
        let (start, bytes) = self.pieces.get(i.checked_sub(1)?)?;
        (at - start < bytes.len() as u64).then_some((bytes.as_slice(), *start))
    }
}

/// Pack files read so far, by number: each its length and the pieces read, holding its
/// header and the units asked for (a pack's dead units are not read). A checkpoint lies in
/// a few packs: a lookup per page costs a few comparisons in a `BTreeMap`, less than
/// hashing the number.
pub(super) struct Packs<'a> {
    vfs: &'a dyn Vfs,
    dir: &'a Path,
    /// The directory's id, which every pack's header must carry.
    dir_id: u128,
    pub(super) files: BTreeMap<u64, PackBytes>,
    /// Bytes read from the packs.
    pub(super) bytes: u64,
}

impl<'a> Packs<'a> {
    pub(super) fn new(vfs: &'a dyn Vfs, dir: &'a Path, dir_id: u128) -> Self {
        Self {
            vfs,
            dir,
            dir_id,
            files: BTreeMap::new(),
            bytes: 0,
        }
    }

    /// Reads the header and `units` of every pack they lie in (replacing what was read of
    /// those packs before), in pieces of whole units ([`pieces`]), [`PIECE_BYTES`] or so
    /// read by each task, side by side.
    pub(super) fn read(&mut self, units: &[&UnitRef]) -> Result<()> {
        let mut by_pack: HashMap<u64, Vec<(u64, u64)>> = HashMap::new();
        for unit in units {
            let span = (
                unit.offset,
                unit.len.saturating_add(format::UNIT_HEADER as u64 + 4),
            );
            by_pack.entry(unit.pack).or_default().push(span);
        }
        let mut packs: Vec<_> = by_pack.into_iter().collect();
        packs.sort_unstable_by_key(|(pack, _)| *pack);
        // Each task reads consecutive pieces of one pack, about PIECE_BYTES in all.
        let mut jobs: Vec<(u64, Vec<(u64, u64)>)> = Vec::new();
        for (pack, spans) in &mut packs {
            spans.push((0, format::PACK_HEADER_MAX as u64));
            let mut job: Vec<(u64, u64)> = Vec::new();
            let mut bytes = 0;
            for (start, end) in pieces(spans) {
                job.push((start, end - start));
                bytes += end - start;
                if bytes >= PIECE_BYTES {
                    jobs.push((*pack, std::mem::take(&mut job)));
                    bytes = 0;
                }
            }
            if !job.is_empty() {
                jobs.push((*pack, job));
            }
        }
        let read: Vec<Result<(u64, Vec<Vec<u8>>)>> = jobs
            .par_iter()
            .map(|(pack, ranges)| self.read_ranges(*pack, ranges))
            .collect();
        // Reported in order of pack and offset: a pack's header before its units.
        let mut files: Vec<(u64, PackBytes)> = Vec::with_capacity(packs.len());
        for ((pack, ranges), found) in jobs.iter().zip(read) {
            let (len, pieces) = found?;
            if files.last().is_none_or(|(last, _)| last != pack) {
                let path = self.dir.join(pack_name(*pack));
                check_pack_header(
                    &path,
                    *pack,
                    self.dir_id,
                    pieces.first().map_or(&[], Vec::as_slice),
                )?;
                files.push((
                    *pack,
                    PackBytes {
                        len,
                        pieces: Vec::new(),
                    },
                ));
            }
            if let Some((_, file)) = files.last_mut() {
                file.pieces
                    .extend(ranges.iter().map(|&(at, _)| at).zip(pieces));
            }
        }
        for ((pack, file), (_, spans)) in files.into_iter().zip(&packs) {
            self.bytes += read_bytes(spans, file.len);
            self.files.insert(pack, file);
        }
        Ok(())
    }

    /// The length of pack `pack` and its bytes in each of `ranges` (cut at its end).
    fn read_ranges(&self, pack: u64, ranges: &[(u64, u64)]) -> Result<(u64, Vec<Vec<u8>>)> {
        let path = self.dir.join(pack_name(pack));
        self.vfs.read_pieces(&path, ranges).map_err(|e| {
            if e.kind() == io::ErrorKind::NotFound {
                Error::Corrupt {
                    path: Some(path.clone()),
                    offset: None,
                    reason: "the manifest names this pack, but it is missing".into(),
                }
            } else {
                Error::io(&path, e)
            }
        })
    }

    pub(super) fn unit(&self, unit: &UnitRef, kind: UnitKind) -> Result<&[u8]> {
        self.unit_of(unit, &[kind]).map(|(_, payload)| payload)
    }

    /// The payload of `unit` (read by [`Packs::read`]), which must be of one of `kinds`,
    /// and its kind. The unit's hash is the one its reference lists, so a payload that
    /// hashes to it skips the CRC-32C ([`format::read_unit_in`]).
    ///
    /// The pack's path is made only for an error: the checks run first without it, and
    /// again, naming it, when they fail.
    pub(super) fn unit_of(&self, unit: &UnitRef, kinds: &[UnitKind]) -> Result<(UnitKind, &[u8])> {
        let Some(pack) = self.files.get(&unit.pack) else {
            return Err(Error::Corrupt {
                path: Some(self.path(unit)),
                offset: Some(unit.offset),
                reason: "a unit of a pack that was not read".into(),
            });
        };
        // A unit past the pack's end is in no piece: the check names it.
        let piece = pack.piece_at(unit.offset).unwrap_or((&[], unit.offset));
        let read = |path: &Path| format::read_unit_in(path, piece, pack.len, unit, kinds, true);
        read(Path::new("")).or_else(|_| read(&self.path(unit)))
    }

    /// The payload's first four bytes of `page`, if they were read (before any check).
    pub(super) fn first_word(&self, page: &UnitRef) -> Option<[u8; 4]> {
        let at = pages::page_at(page);
        let (bytes, start) = self.files.get(&page.pack)?.piece_at(at)?;
        let from = usize::try_from(at - start).ok()?;
        bytes.get(from..from.checked_add(4)?)?.try_into().ok()
    }

    pub(super) fn path(&self, unit: &UnitRef) -> PathBuf {
        self.dir.join(pack_name(unit.pack))
    }

    pub(super) fn sizes(&self) -> HashMap<u64, u64> {
        self.files.iter().map(|(&n, b)| (n, b.len)).collect()
    }
}

/// `spans` (offset, length) cut into pieces (start, end) to read: sorted, each span in
/// exactly one piece, spans that touch or overlap in the same piece until it holds
/// [`PIECE_BYTES`].
pub(super) fn pieces(spans: &mut [(u64, u64)]) -> Vec<(u64, u64)> {
    spans.sort_unstable();
    let mut pieces: Vec<(u64, u64)> = Vec::new();
    for &(at, n) in spans.iter() {
        let end = at.saturating_add(n);
        match pieces.last_mut() {
            Some(last) if at < last.1 || (at == last.1 && last.1 - last.0 < PIECE_BYTES) => {
                last.1 = last.1.max(end);
            }
            _ => pieces.push((at, end)),
        }
    }
    pieces
}

/// Bytes in the union of `spans` (offset, length) within a file of `len` bytes.
fn read_bytes(spans: &[(u64, u64)], len: u64) -> u64 {
    let mut spans: Vec<(u64, u64)> = spans
        .iter()
        .map(|&(at, n)| (at.min(len), at.saturating_add(n).min(len)))
        .collect();
    spans.sort_unstable();
    let (mut total, mut reached) = (0, 0);
    for (start, end) in spans {
        let start = start.max(reached);
        if end > start {
            total += end - start;
            reached = end;
        }
    }
    total
}
