//! The packs a checkpoint's units lie in, read in pieces of whole units: only the units
//! asked for (a pack's dead units are not read), each checked where it is taken.
//!
//! A pack's header is read and checked at once; the pieces of its units are read later,
//! each by the first task that takes a unit from it, so that the tasks that check and copy
//! the pages read the bytes they work on as they go, side by side, and find them still in
//! cache, instead of all bytes being read before the first check starts.

use super::pages;
use crate::store::format::{self, check_pack_header, pack_name, UnitKind, UnitRef};
use crate::store::Vfs;
use crate::{Error, Result};
use std::collections::{BTreeMap, HashMap};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bytes one read of a pack grows to before the next unit starts another: large enough
/// that a read costs little more than its bytes, small enough that the task that reads a
/// piece finds it in its core's cache when it checks and copies the units in it. (Tests
/// read in small pieces, so that their packs come in many.)
pub(super) const PIECE_BYTES: u64 = if cfg!(test) { 4096 } else { 256 << 10 };

/// One piece of a pack: where it starts, how many bytes it asks for (fewer come where the
/// pack ends before), and which read of the pack reads it, as which of that read's ranges.
#[derive(Debug, Clone, Copy)]
pub(super) struct Piece {
    start: u64,
    len: u64,
    read: usize,
    range: usize,
}

/// Ranges of a pack read together, the first time a task needs one of them: what the read
/// gave (or its error), kept for every task after it.
#[derive(Debug, Default)]
struct PieceRead {
    ranges: Vec<(u64, u64)>,
    bytes: OnceLock<io::Result<Vec<Vec<u8>>>>,
}

/// One pack: its length, and the pieces of it to read (sorted, disjoint, each holding
/// whole units), in reads of about [`PIECE_BYTES`] made as their pieces are first needed.
#[derive(Debug, Default)]
pub(super) struct PackBytes {
    pub(super) len: u64,
    pub(super) pieces: Vec<Piece>,
    reads: Vec<PieceRead>,
}

impl PackBytes {
    /// The whole file `bytes` as one piece, already read.
    #[cfg(test)]
    pub(super) fn whole(bytes: Vec<u8>) -> Self {
        let len = bytes.len() as u64;
        let read = PieceRead {
            ranges: vec![(0, len)],
            bytes: OnceLock::from(Ok(vec![bytes])),
        };
        Self {
            len,
            pieces: vec![Piece {
                start: 0,
                len,
                read: 0,
                range: 0,
            }],
            reads: vec![read],
        }
    }

    /// Adds the pieces `ranges` (start, length; after those added before) as one read.
    fn add_read(&mut self, ranges: Vec<(u64, u64)>) {
        let read = self.reads.len();
        self.pieces.extend(
            ranges
                .iter()
                .enumerate()
                .map(|(range, &(start, len))| Piece {
                    start,
                    len,
                    read,
                    range,
                }),
        );
        self.reads.push(PieceRead {
            ranges,
            bytes: OnceLock::new(),
        });
    }

    /// The piece holding byte `at` (its bytes and start), read by `read` (which is given
    /// the ranges of the piece's read) unless a task read it before; `None` if no piece
    /// holds it, or the pack ends before it.
    fn piece_at(
        &self,
        at: u64,
        read: impl FnOnce(&[(u64, u64)]) -> io::Result<Vec<Vec<u8>>>,
    ) -> Option<io::Result<(&[u8], u64)>> {
        let i = self.pieces.partition_point(|piece| piece.start <= at);
        let piece = self.pieces.get(i.checked_sub(1)?)?;
        if at - piece.start >= piece.len {
            return None;
        }
        let reading = self.reads.get(piece.read)?;
        let bytes = match reading.bytes.get_or_init(|| read(&reading.ranges)) {
            Ok(pieces) => pieces.get(piece.range)?,
            // The error again for every unit of the piece: `io::Error` is not `Clone`.
            Err(e) => return Some(Err(io::Error::new(e.kind(), e.to_string()))),
        };
        (at - piece.start < bytes.len() as u64).then_some(Ok((bytes.as_slice(), piece.start)))
    }
}

/// Packs whose units were asked for, by number: each its length and its pieces, holding
/// the units asked for (a pack's dead units are not read). A checkpoint lies in a few
/// packs: a lookup per page costs a few comparisons in a `BTreeMap`, less than hashing the
/// number.
pub(super) struct Packs<'a> {
    vfs: &'a dyn Vfs,
    dir: &'a Path,
    /// The directory's id, which every pack's header must carry.
    dir_id: u128,
    pub(super) files: BTreeMap<u64, PackBytes>,
    /// Bytes read (or to be read) from the packs.
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

    /// Reads and checks the header of every pack `units` lie in, and plans the reads of
    /// those units (replacing what was read of those packs before): pieces of whole units
    /// ([`pieces`]), in reads of about [`PIECE_BYTES`], each made when a unit of it is
    /// first taken ([`Packs::unit_of`]).
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
        for (pack, spans) in &mut packs {
            // The header counts as read with the units, as it is a piece of the pack.
            spans.push((0, format::PACK_HEADER_MAX as u64));
            let header = [(0, format::PACK_HEADER_MAX as u64)];
            let (len, header) = self.read_ranges(*pack, &header)?;
            let path = self.dir.join(pack_name(*pack));
            let header = header.first().map_or(&[][..], Vec::as_slice);
            check_pack_header(&path, *pack, self.dir_id, header)?;
            let mut file = PackBytes {
                len,
                ..PackBytes::default()
            };
            let mut ranges: Vec<(u64, u64)> = Vec::new();
            let mut bytes = 0;
            for (start, end) in pieces(spans) {
                ranges.push((start, end - start));
                bytes += end - start;
                if bytes >= PIECE_BYTES {
                    file.add_read(std::mem::take(&mut ranges));
                    bytes = 0;
                }
            }
            if !ranges.is_empty() {
                file.add_read(ranges);
            }
            self.bytes += read_bytes(spans, len);
            self.files.insert(*pack, file);
        }
        Ok(())
    }

    /// The length of pack `pack` and its bytes in each of `ranges` (cut at its end).
    fn read_ranges(&self, pack: u64, ranges: &[(u64, u64)]) -> Result<(u64, Vec<Vec<u8>>)> {
        let path = self.dir.join(pack_name(pack));
        self.vfs
            .read_pieces(&path, ranges)
            .map_err(|e| read_error(path, e))
    }

    /// The piece of pack `number` (`pack`) holding byte `at`, read now unless a task read
    /// it before (its bytes and start); `Ok(None)` if no piece holds it.
    fn piece_at<'p>(
        &self,
        pack: &'p PackBytes,
        number: u64,
        at: u64,
    ) -> Result<Option<(&'p [u8], u64)>> {
        let path = || self.dir.join(pack_name(number));
        pack.piece_at(at, |ranges| {
            self.vfs
                .read_pieces(&path(), ranges)
                .map(|(_, bytes)| bytes)
        })
        .transpose()
        .map_err(|e| read_error(path(), e))
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
        let piece = self
            .piece_at(pack, unit.pack, unit.offset)?
            .unwrap_or((&[], unit.offset));
        let read = |path: &Path| format::read_unit_in(path, piece, pack.len, unit, kinds, true);
        read(Path::new("")).or_else(|_| read(&self.path(unit)))
    }

    /// The payload's first four bytes of `page`, if they can be read (before any check).
    pub(super) fn first_word(&self, page: &UnitRef) -> Option<[u8; 4]> {
        let at = pages::page_at(page);
        let pack = self.files.get(&page.pack)?;
        let (bytes, start) = self.piece_at(pack, page.pack, at).ok()??;
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

/// The error of reading pack `path`: damage where the pack is missing.
fn read_error(path: PathBuf, e: io::Error) -> Error {
    if e.kind() == io::ErrorKind::NotFound {
        Error::Corrupt {
            path: Some(path),
            offset: None,
            reason: "the manifest names this pack, but it is missing".into(),
        }
    } else {
        Error::io(&path, e)
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
