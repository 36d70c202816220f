//! The write-ahead log: segment files of checksummed records, each one encoded
//! [`Update`](crate::graph::Update) with its sequence number. Byte diagram in
//! `docs/formats/store.md`.
//!
//! A segment `log-<first sequence number, 20 digits>.wal` starts with a 40-byte header
//! (`PGRAPHWL`, format version u32, first sequence number u64, the directory id u128,
//! CRC-32C of those 36 bytes; format 1 had no id and 24 bytes) followed by records:
//!
//! ```text
//! magic "WR" (2 bytes) | version u8 = 1 | flags u8 = 0 | length u32 | sequence u64
//! payload (length bytes) | CRC-32C u32 of everything before it in the record
//! ```
//!
//! Reading tells a torn tail from damage: at the end of the newest segment, with no intact
//! record anywhere after it, a record whose header is incomplete or whose declared bytes
//! run past the end of the file is the last write a crash cut short (the reader truncates
//! it), and so is one that reaches a sector left all zeros in the space the writer zeroed
//! ahead of its records (see [`LogWriter::open`]; zeros after the last record are the
//! log's end), even with intact records of the same unsynced write after it; a record all
//! of whose bytes are there but which does not check out is damage,
//! refused unless the caller asks to cut it. Anything else that does not check out is
//! corruption, reported with the segment file and byte offset and never skipped. Segment
//! headers carry the directory id, checked against the manifest's.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::mark::MarkWriter;
use super::vfs::{Vfs, VfsFile};
use crate::codec::bytes::{ByteReader, ByteWriter};
use crate::{Error, Result};

const SEGMENT_MAGIC: &[u8; 8] = b"PGRAPHWL";
/// The log's format version: 2 added the directory id to the segment header.
pub const LOG_FORMAT_VERSION: u32 = 2;
/// Bytes of a segment header of format 1 (no directory id) and of the current format.
const SEGMENT_HEADER_V1: usize = 24;
pub(super) const SEGMENT_HEADER: usize = 40;
const RECORD_MAGIC: &[u8; 2] = b"WR";
const RECORD_VERSION: u8 = 1;
const RECORD_HEADER: usize = 16;
const RECORD_OVERHEAD: usize = RECORD_HEADER + 4;
/// The fewest bytes a record takes: its header and checksum around the smallest payload,
/// an empty update's (format version, flags, a vertex count and four empty lists; a test
/// checks it against [`Update::encode`](crate::graph::Update::encode)).
pub(super) const MIN_RECORD_BYTES: usize = RECORD_OVERHEAD + 7;
/// The unit a disk writes whole.
const SECTOR: usize = 512;
/// The shortest zero piece of a sector after a record's first one taken as never written.
const MIN_UNWRITTEN: usize = 16;

/// The file name of the segment whose first record is `first`.
pub(super) fn segment_name(first: u64) -> String {
    format!("log-{first:020}.wal")
}

/// The first sequence number a segment's file name gives, if it is a segment's name.
pub(super) fn parse_segment_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("log-")?.strip_suffix(".wal")?;
    if digits.len() != 20 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The header of a segment starting at `first` in the directory whose id is `dir_id`.
pub(super) fn segment_header(first: u64, dir_id: u128) -> Vec<u8> {
    let mut w = ByteWriter::with_capacity(SEGMENT_HEADER);
    w.bytes(SEGMENT_MAGIC)
        .u32(LOG_FORMAT_VERSION)
        .u64(first)
        .u128(dir_id);
    let sum = crc32c::crc32c(w.as_slice());
    w.u32(sum);
    w.into_vec()
}

/// The header of a format 1 segment starting at `first`.
fn segment_header_v1(first: u64) -> Vec<u8> {
    let mut w = ByteWriter::with_capacity(SEGMENT_HEADER_V1);
    w.bytes(SEGMENT_MAGIC).u32(1).u64(first);
    let sum = crc32c::crc32c(w.as_slice());
    w.u32(sum);
    w.into_vec()
}

/// Checks the header of the segment `path` starting at `first`; returns its length.
/// A format 1 header (no id) is read in a directory whose id is 0 (created before ids).
fn check_segment_header(path: &Path, bytes: &[u8], first: u64, dir_id: u128) -> Result<usize> {
    let version = bytes
        .get(8..12)
        .map(|v| u32::from_le_bytes([v[0], v[1], v[2], v[3]]));
    if version == Some(1) && dir_id == 0 && bytes.starts_with(&segment_header_v1(first)) {
        return Ok(SEGMENT_HEADER_V1);
    }
    if bytes.len() >= SEGMENT_HEADER && version == Some(LOG_FORMAT_VERSION) {
        let mut expected = segment_header(first, dir_id);
        if bytes[..SEGMENT_HEADER] == expected[..] {
            return Ok(SEGMENT_HEADER);
        }
        let found = u128::from_le_bytes(bytes[20..36].try_into().unwrap_or_default());
        expected = segment_header(first, found);
        if found != dir_id && bytes[..SEGMENT_HEADER] == expected[..] {
            return Err(super::format::foreign_file(path, 20, found, dir_id));
        }
    }
    Err(corrupt(
        path,
        0,
        "the log segment's header is damaged or names another sequence number",
    ))
}

/// The bytes of the record of `payload` with sequence number `seq` (the log writes records
/// through its buffer: tests craft logs with this).
#[cfg(test)]
pub(super) fn encode_record(seq: u64, payload: &[u8]) -> Result<Vec<u8>> {
    let mut record = Vec::with_capacity(payload.len() + RECORD_OVERHEAD);
    encode_record_into(&mut record, seq, payload)?;
    Ok(record)
}

/// Appends the bytes of the record of `payload` with sequence number `seq` to `out`
/// (nothing on error).
fn encode_record_into(out: &mut Vec<u8>, seq: u64, payload: &[u8]) -> Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| Error::invalid_reason("an update of 4 GiB or more cannot be logged"))?;
    let start = out.len();
    out.reserve(payload.len() + RECORD_OVERHEAD);
    out.extend_from_slice(RECORD_MAGIC);
    out.extend_from_slice(&[RECORD_VERSION, 0]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(payload);
    let sum = crc32c::crc32c(&out[start..]);
    out.extend_from_slice(&sum.to_le_bytes());
    Ok(())
}

/// A log segment's bytes as read, shared with the records taken from it that wait to be
/// applied (see [`LogRecord`]).
pub(super) type SegmentBytes = Arc<Vec<u8>>;

/// A record [`scan`] read whole and checked.
pub(super) struct LogRecord<'a> {
    pub(super) seq: u64,
    /// The bytes of its segment: the payload is kept as a range of them, not copied.
    pub(super) segment: &'a SegmentBytes,
    /// Where its payload lies in `segment`.
    pub(super) payload: Range<usize>,
    /// Its segment's file.
    pub(super) path: &'a Path,
    /// Its byte offset in the segment.
    pub(super) offset: usize,
}

impl LogRecord<'_> {
    /// The encoded update the record holds.
    pub(super) fn payload(&self) -> &[u8] {
        &self.segment[self.payload.clone()]
    }
}

/// What the bytes at a record's position hold.
enum Found {
    /// A record that checks out: (sequence number, where its payload lies in the bytes
    /// read, end).
    Record(u64, Range<usize>, usize),
    /// The start of a record cut short: its header is incomplete, its declared bytes run
    /// past the end of the file, or only zero bytes are left (space the file system
    /// allocated before the data reached it). What a crash mid-write leaves.
    Cut,
    /// A record all of whose bytes are there that does not check out (header or CRC-32C):
    /// damage, never the trace of a crash.
    Damaged,
}

/// What the bytes starting at `at` hold (see [`Found`]).
fn record_at(bytes: &[u8], at: usize) -> Found {
    let Some(rest) = bytes.get(at..) else {
        return Found::Cut;
    };
    if rest.len() < RECORD_HEADER || rest.iter().all(|&b| b == 0) {
        return Found::Cut;
    }
    let mut r = ByteReader::new(rest);
    let (Ok(head), Ok(len), Ok(seq)) = (
        r.take(4, "the record's magic, version and flags"),
        r.u32("the record length"),
        r.u64("the sequence number"),
    ) else {
        return Found::Cut;
    };
    if head[..2] != RECORD_MAGIC[..] || head[2] != RECORD_VERSION || head[3] != 0 {
        return Found::Damaged;
    }
    let body = RECORD_HEADER + len as usize;
    let (Ok(_), Ok(sum)) = (r.take(len as usize, "the payload"), r.u32("the CRC-32C")) else {
        return Found::Cut;
    };
    if crc32c::crc32c(&rest[..body]) == sum {
        Found::Record(seq, at + RECORD_HEADER..at + body, at + body + 4)
    } else {
        Found::Damaged
    }
}

/// Whether a record that checks out starts anywhere after `at` (only positions holding
/// the record magic are tried: a long zero-filled tail is passed over in one read).
fn intact_after(bytes: &[u8], at: usize) -> bool {
    let Some(rest) = bytes.get(at + 1..) else {
        return false;
    };
    rest.windows(RECORD_MAGIC.len())
        .enumerate()
        .filter(|(_, w)| w == RECORD_MAGIC)
        .any(|(i, _)| matches!(record_at(bytes, at + 1 + i), Found::Record(..)))
}

/// Whether the bytes at `at`, where no intact record is, show a write that never reached
/// the disk in space the log zeroed ahead ([`LogWriter`] preallocates): some 512-byte
/// sector the record's bytes reach holds only zeros from the record (or the sector's
/// start) to the sector's end or the file's end. A disk writes a sector whole or not at
/// all, so a record cut short by a crash in zeroed space has such a sector, and one all of
/// whose bytes reached the disk has none (a sector of its own bytes all zero aside: a
/// piece after the first is counted only from 16 bytes, and the record's first sector
/// holds its nonzero magic). Records' bytes are never all zero over a whole sector in
/// practice: magic, length and checksum break every run.
fn unwritten_at(bytes: &[u8], at: usize) -> bool {
    let declared = bytes
        .get(at..at + RECORD_HEADER)
        .filter(|head| head.starts_with(RECORD_MAGIC))
        .map(|head| u32::from_le_bytes([head[4], head[5], head[6], head[7]]) as usize);
    // A record whose magic is not there: only its first sector is known to be its own.
    let end = declared
        .map_or(at + 1, |len| at + RECORD_OVERHEAD + len)
        .min(bytes.len());
    let mut piece = at;
    while piece < end {
        let sector_end = ((piece / SECTOR + 1) * SECTOR).min(bytes.len());
        let zero = bytes[piece..sector_end].iter().all(|&b| b == 0);
        if zero && (piece == at || sector_end - piece >= MIN_UNWRITTEN) {
            return true;
        }
        piece = sector_end;
    }
    false
}

/// A damaged last record cut off on request ([`scan`] with `cut_damaged`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DamagedTail {
    /// The segment file.
    pub(super) path: PathBuf,
    /// The damaged record's offset in it.
    pub(super) offset: u64,
    /// The damaged record's sequence number (the first one lost).
    pub(super) seq: u64,
    /// Bytes cut off.
    pub(super) bytes: u64,
}

/// What reading the log found.
#[derive(Debug, Clone)]
pub(super) struct LogState {
    /// Segments that hold only records the checkpoint covers.
    pub(super) obsolete: Vec<String>,
    /// Segments in order: (first sequence number, file name).
    pub(super) segments: Vec<(u64, String)>,
    /// The sequence number the next record gets.
    pub(super) next_seq: u64,
    /// Valid bytes of the newest segment (its torn tail, if any, after them).
    pub(super) tail_len: u64,
    /// Bytes cut off the newest segment as a torn tail (0 if none).
    pub(super) torn_bytes: u64,
    /// Records passed to the callback.
    pub(super) replayed: u64,
    /// Bytes of the log read.
    pub(super) bytes: u64,
    /// A damaged last record the caller asked to cut off, if there was one.
    pub(super) damaged_tail: Option<DamagedTail>,
    /// The directory's id, which new segments' headers carry.
    pub(super) dir_id: u128,
    /// The header length of the newest segment (0 if its header is not there).
    pub(super) tail_header: u64,
}

fn corrupt(path: &Path, offset: usize, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        path: Some(path.to_path_buf()),
        offset: Some(offset as u64),
        reason: reason.into(),
    }
}

/// Reads every segment of `dir` in order, checking each record, and calls `replay` with
/// each record whose sequence number is above `after` (the position a checkpoint covers),
/// which names its segment's bytes and path and its byte offset there; an error `replay`
/// returns without a path is located at the record.
/// A torn tail of the newest segment is reported in the state, not removed. A damaged last
/// record (all its bytes there, its checksum wrong) is an error unless `cut_damaged`, when
/// it is reported in the state's `damaged_tail` like a torn one.
///
/// # Errors
/// [`Error::Corrupt`] naming segment and offset for damage or a gap in the sequence;
/// [`Error::Io`]; `replay`'s error.
pub(super) fn scan(
    vfs: &dyn Vfs,
    dir: &Path,
    dir_id: u128,
    after: u64,
    cut_damaged: bool,
    mut replay: impl FnMut(&LogRecord<'_>) -> Result<()>,
) -> Result<LogState> {
    let names = vfs.list(dir).map_err(|e| Error::io(dir, e))?;
    let mut segments: Vec<(u64, String)> = names
        .into_iter()
        .filter_map(|name| Some((parse_segment_name(&name)?, name)))
        .collect();
    segments.sort();
    // Segments before the newest one that starts at or before the first record needed hold
    // only records the checkpoint covers: obsolete (a crash may have undone their removal).
    let start = segments
        .iter()
        .rposition(|(first, _)| *first <= after + 1)
        .unwrap_or(0);
    let obsolete = segments.drain(..start).map(|(_, name)| name).collect();
    let mut state = LogState {
        obsolete,
        segments: Vec::new(),
        next_seq: after + 1,
        tail_len: 0,
        torn_bytes: 0,
        replayed: 0,
        bytes: 0,
        damaged_tail: None,
        dir_id,
        tail_header: 0,
    };
    let count = segments.len();
    for (i, (first, name)) in segments.into_iter().enumerate() {
        let path = dir.join(&name);
        let newest = i + 1 == count;
        let bytes: SegmentBytes = Arc::new(vfs.read(&path).map_err(|e| Error::io(&path, e))?);
        state.bytes += bytes.len() as u64;
        let header = match check_segment_header(&path, &bytes, first, dir_id) {
            Ok(len) => len,
            // A segment is created when the record it starts with is the next to be
            // written, so one whose header never became durable cannot start at a record
            // the checkpoint covers.
            Err(_) if newest && is_partial_header(&bytes, first, dir_id) && first > after => {
                // Created, but the crash came before its header (and the space zeroed
                // after it) was durable: an empty tail.
                state.torn_bytes = bytes.len() as u64;
                state.tail_len = 0;
                state.tail_header = 0;
                state.segments.push((first, name));
                continue;
            }
            Err(e) => return Err(e),
        };
        if i == 0 && first > state.next_seq {
            return Err(corrupt(
                &path,
                0,
                format!(
                    "log records {} to {} are missing (the checkpoint covers up to {after})",
                    state.next_seq,
                    first - 1
                ),
            ));
        }
        if i > 0 && first != state.next_seq {
            return Err(corrupt(
                &path,
                0,
                format!(
                    "the segment starts at record {first}, but the previous one ends before record {}",
                    state.next_seq
                ),
            ));
        }
        if i == 0 {
            state.next_seq = first;
        }
        let mut at = header;
        state.tail_header = header as u64;
        while at < bytes.len() {
            match record_at(&bytes, at) {
                Found::Record(seq, payload, end) if seq == state.next_seq => {
                    if seq > after {
                        let record = LogRecord {
                            seq,
                            segment: &bytes,
                            payload,
                            path: &path,
                            offset: at,
                        };
                        replay(&record).map_err(|e| match e {
                            Error::Corrupt {
                                reason, path: None, ..
                            } => corrupt(
                                &path,
                                at,
                                format!("record {seq} does not decode: {reason}"),
                            ),
                            other => other,
                        })?;
                        state.replayed += 1;
                    }
                    state.next_seq += 1;
                    at = end;
                }
                Found::Record(seq, ..) => {
                    return Err(corrupt(
                        &path,
                        at,
                        format!(
                            "record {seq} found where record {} should be",
                            state.next_seq
                        ),
                    ));
                }
                found => {
                    // A write cut short in zeroed space may leave intact records of the
                    // same write after the sectors that did not reach the disk: none of
                    // them was acknowledged (no sync completed past the cut).
                    let unwritten = newest && unwritten_at(&bytes, at);
                    if !newest || (!unwritten && intact_after(&bytes, at)) {
                        return Err(corrupt(
                            &path,
                            at,
                            format!(
                                "log record {} is damaged (bad length, header or CRC-32C) and intact records follow it",
                                state.next_seq
                            ),
                        ));
                    }
                    // Zeros at the end are space zeroed ahead, not bytes of a record.
                    let used = bytes.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    let cut = (used.max(at) - at) as u64;
                    if matches!(found, Found::Cut) || unwritten {
                        state.torn_bytes = cut;
                    } else if cut_damaged {
                        state.damaged_tail = Some(DamagedTail {
                            path: path.clone(),
                            offset: at as u64,
                            seq: state.next_seq,
                            bytes: cut,
                        });
                    } else {
                        return Err(corrupt(
                            &path,
                            at,
                            format!(
                                "the last log record ({}) is damaged: all its {cut} bytes are \
                                 there but its header or CRC-32C does not check out, so it is \
                                 not a torn write (`packgraph recover DIR \
                                 --truncate-damaged-tail` cuts it off, losing it)",
                                state.next_seq
                            ),
                        ));
                    }
                    break;
                }
            }
        }
        state.tail_len = at.min(bytes.len()) as u64;
        state.segments.push((first, name));
    }
    Ok(state)
}

/// Whether `bytes` (a segment whose header does not check out) are a start of the header
/// of `first`, possibly empty, and then only zeros: a segment being created (its header
/// and the space zeroed after it are written together) when the crash came.
fn is_partial_header(bytes: &[u8], first: u64, dir_id: u128) -> bool {
    let header = segment_header(first, dir_id);
    let same = bytes
        .iter()
        .zip(&header)
        .take_while(|(a, b)| a == b)
        .count();
    bytes[same..].iter().all(|&b| b == 0)
}

/// Appends records to the newest segment, starting a new one past a size.
pub(super) struct LogWriter {
    dir: PathBuf,
    file: Arc<dyn VfsFile>,
    /// First sequence number of the open segment.
    first: u64,
    /// Bytes of the open segment's header (a segment of an older format may be appended to).
    header: u64,
    /// Bytes of records (and header) in the open segment.
    len: u64,
    /// The open segment's length: zeros from `len` to here, written ahead.
    zeroed: u64,
    /// Bytes zeroed ahead of the records at a time.
    preallocate: u64,
    dir_id: u128,
    next_seq: u64,
    segment_bytes: u64,
    /// The high-water mark, advanced when a segment is closed.
    mark: Arc<Mutex<MarkWriter>>,
    /// Records [`LogWriter::append_buffered`] encoded that are not yet written: a group of
    /// batches goes to the file in one write ([`LogWriter::flush`]).
    buffer: Vec<u8>,
    /// How many records `buffer` holds.
    buffered: u64,
}

/// Bytes the log zeroes ahead of its records at most (less for small segments).
const PREALLOCATE: u64 = 1 << 20;

impl LogWriter {
    /// Opens the log after [`scan`]: truncates a torn tail (and space zeroed ahead after
    /// it) durably and appends to the newest segment, or starts the first one. Each
    /// segment it closes advances `mark`.
    ///
    /// Records are written into space zeroed ahead of them, [`PREALLOCATE`] bytes at a
    /// time (a sixteenth of `segment_bytes` if less): a write then changes no file length,
    /// so most syncs write data only, not the file's length too (`fdatasync` then commits
    /// no file system journal). Reading tells that space from records ([`scan`]).
    pub(super) fn open(
        vfs: &dyn Vfs,
        dir: &Path,
        state: &LogState,
        segment_bytes: u64,
        mark: Arc<Mutex<MarkWriter>>,
    ) -> Result<Self> {
        match state.segments.last() {
            Some((first, name)) if state.tail_len > 0 => {
                let path = dir.join(name);
                let file = vfs
                    .open_append(&path, state.tail_len)
                    .map_err(|e| Error::io(&path, e))?;
                Ok(Self {
                    dir: dir.to_path_buf(),
                    file,
                    first: *first,
                    header: state.tail_header,
                    len: state.tail_len,
                    zeroed: state.tail_len,
                    preallocate: preallocate(segment_bytes),
                    dir_id: state.dir_id,
                    next_seq: state.next_seq,
                    segment_bytes,
                    mark,
                    buffer: Vec::new(),
                    buffered: 0,
                })
            }
            _ => {
                // Created over a segment of the same name whose header never became
                // durable (it holds nothing); another such segment goes once the new one
                // is durable, so that no crash leaves the directory without a segment.
                let zero = preallocate(segment_bytes);
                let (file, len) = Self::start_zeroed(vfs, dir, state.next_seq, state.dir_id, zero)?;
                if let Some((_, name)) = state.segments.last() {
                    if *name != segment_name(state.next_seq) {
                        let path = dir.join(name);
                        vfs.remove(&path).map_err(|e| Error::io(&path, e))?;
                    }
                }
                Ok(Self {
                    dir: dir.to_path_buf(),
                    file,
                    first: state.next_seq,
                    header: len,
                    len,
                    zeroed: len + zero,
                    preallocate: zero,
                    dir_id: state.dir_id,
                    next_seq: state.next_seq,
                    segment_bytes,
                    mark,
                    buffer: Vec::new(),
                    buffered: 0,
                })
            }
        }
    }

    /// Creates the segment starting at `first`, its header durable and its name in the
    /// directory durable.
    pub(super) fn start_segment(
        vfs: &dyn Vfs,
        dir: &Path,
        first: u64,
        dir_id: u128,
    ) -> Result<(Arc<dyn VfsFile>, u64)> {
        Self::start_zeroed(vfs, dir, first, dir_id, 0)
    }

    /// [`LogWriter::start_segment`] with `zero` bytes of zeros after the header, written
    /// and synced with it; returns the header's length.
    fn start_zeroed(
        vfs: &dyn Vfs,
        dir: &Path,
        first: u64,
        dir_id: u128,
        zero: u64,
    ) -> Result<(Arc<dyn VfsFile>, u64)> {
        let path = dir.join(segment_name(first));
        let io = |e| Error::io(&path, e);
        let file = vfs.create(&path).map_err(io)?;
        let mut header = segment_header(first, dir_id);
        let len = header.len() as u64;
        header.resize(header.len() + zero as usize, 0);
        file.write_at(0, &header).map_err(io)?;
        file.sync().map_err(io)?;
        vfs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        Ok((file, len))
    }

    /// The sequence number the next record gets.
    pub(super) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// The last record written to the file (a sync makes it durable): the records
    /// appended so far but those still buffered.
    pub(super) fn written_seq(&self) -> u64 {
        self.next_seq - 1 - self.buffered
    }

    /// First sequence number of the open segment.
    pub(super) fn segment_first(&self) -> u64 {
        self.first
    }

    /// The open segment, for syncing outside the writer's lock.
    pub(super) fn file(&self) -> Arc<dyn VfsFile> {
        Arc::clone(&self.file)
    }

    /// Syncs the open segment and starts a new one at the next record, unless the open one
    /// holds no record yet; then advances the high-water mark to the last record of the
    /// closed segment (durable now).
    pub(super) fn roll(&mut self, vfs: &dyn Vfs) -> Result<()> {
        self.flush()?;
        if self.len <= self.header {
            return Ok(());
        }
        let old = self.dir.join(segment_name(self.first));
        // A closed segment ends at its last record: only the newest may hold zeros.
        if self.zeroed > self.len {
            self.file
                .set_len(self.len)
                .map_err(|e| Error::io(&old, e))?;
        }
        self.file.sync().map_err(|e| Error::io(&old, e))?;
        let (file, len) =
            Self::start_zeroed(vfs, &self.dir, self.next_seq, self.dir_id, self.preallocate)?;
        self.file = file;
        self.first = self.next_seq;
        self.header = len;
        self.len = len;
        self.zeroed = len + self.preallocate;
        super::lock(&self.mark).advance(vfs, self.next_seq - 1)
    }

    /// Appends `payload` as the next record (one write, of it and of the records still
    /// buffered before it; not yet durable) and returns its sequence number. A full
    /// segment is first synced and a new one started.
    pub(super) fn append(&mut self, vfs: &dyn Vfs, payload: &[u8]) -> Result<u64> {
        let seq = self.append_buffered(vfs, payload)?;
        self.flush()?;
        Ok(seq)
    }

    /// Encodes `payload` as the next record into the buffer and returns its sequence
    /// number; [`LogWriter::flush`] writes it. Until then [`LogWriter::written_seq`] does
    /// not count it, so no sync claims it durable. A full segment is first synced (with
    /// what the buffer held) and a new one started.
    pub(super) fn append_buffered(&mut self, vfs: &dyn Vfs, payload: &[u8]) -> Result<u64> {
        let seq = self.next_seq;
        let record_len = (payload.len() + RECORD_OVERHEAD) as u64;
        if self.len + self.buffer.len() as u64 + record_len > self.segment_bytes {
            self.roll(vfs)?;
        }
        encode_record_into(&mut self.buffer, seq, payload)?;
        self.buffered += 1;
        self.next_seq += 1;
        Ok(seq)
    }

    /// Writes the buffered records to the open segment in one write (with the next
    /// space zeroed ahead, once the records reach the end of the zeroed space).
    ///
    /// # Errors
    /// [`Error::Io`] naming the segment; the buffered records are then dropped, their
    /// sequence numbers free again (the caller stops the store's writes).
    pub(super) fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let bytes = self.buffer.len() as u64;
        let end = self.len + bytes;
        if end > self.zeroed && self.preallocate > 0 {
            let zeroed = (end + self.preallocate).min(self.segment_bytes.max(end));
            self.buffer.resize((zeroed - self.len) as usize, 0);
        }
        let written = self.file.write_at(self.len, &self.buffer);
        if written.is_ok() {
            self.zeroed = self.zeroed.max(self.len + self.buffer.len() as u64);
        }
        self.buffer.clear();
        if written.is_err() {
            // The records were not written: their numbers are not taken (the store takes
            // no more writes after a failure anyway).
            self.next_seq -= self.buffered;
        }
        self.buffered = 0;
        // The segment's path only names a failure: not built for every write.
        written.map_err(|e| Error::io(&self.dir.join(segment_name(self.first)), e))?;
        self.len += bytes;
        Ok(())
    }
}

/// Bytes zeroed ahead at a time in segments of `segment_bytes`.
fn preallocate(segment_bytes: u64) -> u64 {
    (segment_bytes / 16).min(PREALLOCATE)
}

impl Drop for LogWriter {
    /// A writer closing leaves the open segment ending at its last record written, as
    /// every closed segment does (the zeros are read correctly, but take a log reader of
    /// an earlier version long to pass over).
    fn drop(&mut self) {
        if self.zeroed > self.len {
            // Best effort: a crash here leaves the zeros, which read as the log's end.
            let _ = self.file.set_len(self.len).and_then(|()| self.file.sync());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::vfs::SimVfs;

    const ID: u128 = 0x5eed;

    fn dir() -> &'static Path {
        Path::new("/db")
    }

    fn mark() -> Arc<Mutex<MarkWriter>> {
        Arc::new(Mutex::new(MarkWriter::new(dir(), ID, 0)))
    }

    fn write(vfs: &SimVfs, records: &[&[u8]], segment_bytes: u64) -> LogWriter {
        vfs.create_dir_all(dir()).unwrap();
        let state = scan(vfs, dir(), ID, 0, false, |_| Ok(())).unwrap();
        let mut log = LogWriter::open(vfs, dir(), &state, segment_bytes, mark()).unwrap();
        for r in records {
            log.append(vfs, r).unwrap();
        }
        log.file().sync().unwrap();
        log
    }

    type Records = Vec<(u64, Vec<u8>)>;

    /// [`MIN_RECORD_BYTES`], which replay reserves by, is the record of an empty update.
    #[test]
    fn the_smallest_record_holds_an_empty_update() {
        let mut out = Vec::new();
        encode_record_into(&mut out, 1, &crate::graph::Update::new().encode()).unwrap();
        assert_eq!(out.len(), MIN_RECORD_BYTES);
    }

    fn read_all(vfs: &SimVfs, after: u64) -> Result<(Records, LogState)> {
        let mut out = Vec::new();
        let state = scan(vfs, dir(), ID, after, false, |record| {
            out.push((record.seq, record.payload().to_vec()));
            Ok(())
        })?;
        Ok((out, state))
    }

    #[test]
    fn records_come_back_in_order_across_segments() {
        let vfs = SimVfs::new();
        let payloads: Vec<Vec<u8>> = (0..50u8).map(|i| vec![i; i as usize * 3]).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
        write(&vfs, &refs, 256);
        let (records, state) = read_all(&vfs, 0).unwrap();
        assert!(state.segments.len() > 5);
        assert_eq!(records.len(), 50);
        for (i, (seq, p)) in records.iter().enumerate() {
            assert_eq!((*seq, p), (i as u64 + 1, &payloads[i]));
        }
        let (after, _) = read_all(&vfs, 45).unwrap();
        assert_eq!(
            after.iter().map(|r| r.0).collect::<Vec<_>>(),
            [46, 47, 48, 49, 50]
        );
        assert_eq!(state.next_seq, 51);
    }

    #[test]
    fn a_torn_tail_is_cut_and_appending_goes_on() {
        for cut in 1..30 {
            let vfs = SimVfs::new();
            write(&vfs, &[b"first", b"second record"], 1 << 20);
            let path = dir().join(segment_name(1));
            let bytes = vfs.read(&path).unwrap();
            let keep = bytes.len() - cut;
            let file = vfs.open_append(&path, keep as u64).unwrap();
            drop(file);
            let (records, state) = read_all(&vfs, 0).unwrap();
            assert_eq!(records.len(), 1, "cut {cut}");
            assert!(state.torn_bytes > 0);
            let mut log = LogWriter::open(&vfs, dir(), &state, 1 << 20, mark()).unwrap();
            assert_eq!(log.append(&vfs, b"third").unwrap(), 2);
            let (records, state) = read_all(&vfs, 0).unwrap();
            assert_eq!(records[1], (2, b"third".to_vec()));
            assert_eq!(state.torn_bytes, 0);
        }
    }

    #[test]
    fn damage_before_intact_records_is_corruption_naming_file_and_offset() {
        let vfs = SimVfs::new();
        write(&vfs, &[b"aaaa", b"bbbb", b"cccc"], 1 << 20);
        let path = dir().join(segment_name(1));
        let second = SEGMENT_HEADER + RECORD_OVERHEAD + 4;
        vfs.flip_bit(&path, second + RECORD_HEADER + 1, 3).unwrap();
        let err = read_all(&vfs, 0).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::Corrupt { .. }), "{text}");
        assert!(text.contains("log-00000000000000000001.wal"), "{text}");
        assert!(text.contains(&format!("byte {second}")), "{text}");
    }

    #[test]
    fn damage_in_an_older_segment_is_corruption() {
        let vfs = SimVfs::new();
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 40]).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
        write(&vfs, &refs, 200);
        let (_, state) = read_all(&vfs, 0).unwrap();
        let (_, first_name) = &state.segments[0];
        let path = dir().join(first_name);
        let len = vfs.read(&path).unwrap().len();
        vfs.flip_bit(&path, len - 2, 0).unwrap();
        assert!(matches!(read_all(&vfs, 0), Err(Error::Corrupt { .. })));
    }

    #[test]
    fn a_missing_segment_is_a_gap() {
        let vfs = SimVfs::new();
        let payloads: Vec<Vec<u8>> = (0..20u8).map(|i| vec![i; 40]).collect();
        let refs: Vec<&[u8]> = payloads.iter().map(Vec::as_slice).collect();
        write(&vfs, &refs, 200);
        let (_, state) = read_all(&vfs, 0).unwrap();
        vfs.remove(&dir().join(&state.segments[1].1)).unwrap();
        let err = read_all(&vfs, 0).unwrap_err().to_string();
        assert!(err.contains("previous one ends"), "{err}");
        // A checkpoint past the first segments makes them unnecessary, not their absence an error.
        vfs.remove(&dir().join(&state.segments[0].1)).unwrap();
        let err = read_all(&vfs, 0).unwrap_err().to_string();
        assert!(err.contains("are missing"), "{err}");
    }

    /// Buffered records reach the file in one write at `flush`, and until then count as
    /// neither written nor durable; a failed flush gives their numbers back.
    #[test]
    fn buffered_records_are_written_at_once_by_flush() {
        let vfs = SimVfs::new();
        let mut log = write(&vfs, &[b"first"], 1 << 20);
        let ops = vfs.ops();
        for (i, r) in [&b"a"[..], b"bb", b"ccc"].into_iter().enumerate() {
            assert_eq!(log.append_buffered(&vfs, r).unwrap(), i as u64 + 2);
        }
        assert_eq!((log.written_seq(), log.next_seq(), vfs.ops()), (1, 5, ops));
        assert_eq!(read_all(&vfs, 0).unwrap().0.len(), 1);
        log.flush().unwrap();
        assert_eq!((log.written_seq(), vfs.ops()), (4, ops + 1));
        let (records, _) = read_all(&vfs, 0).unwrap();
        assert_eq!(records[3], (4, b"ccc".to_vec()));
        // A plain append writes what is buffered before it, in order, in one write.
        log.append_buffered(&vfs, b"d").unwrap();
        assert_eq!(log.append(&vfs, b"e").unwrap(), 6);
        assert_eq!((log.written_seq(), vfs.ops()), (6, ops + 2));
        log.append_buffered(&vfs, b"lost").unwrap();
        vfs.fail_at(Some(vfs.ops() + 1));
        assert!(matches!(log.flush(), Err(Error::Io { .. })));
        assert_eq!((log.written_seq(), log.next_seq()), (6, 7));
        vfs.fail_at(None);
        log.file().sync().unwrap();
        assert_eq!(read_all(&vfs, 0).unwrap().0.len(), 6);
    }

    /// A segment filled by buffered records is rolled before the record that does not fit,
    /// with the buffered ones written into it first.
    #[test]
    fn buffered_records_roll_segments_in_order() {
        let vfs = SimVfs::new();
        let mut log = write(&vfs, &[], 200);
        for i in 0..20u8 {
            log.append_buffered(&vfs, &[i; 30]).unwrap();
        }
        log.flush().unwrap();
        log.file().sync().unwrap();
        let (records, state) = read_all(&vfs, 0).unwrap();
        assert!(state.segments.len() > 3);
        let seqs: Vec<u64> = records.iter().map(|r| r.0).collect();
        assert_eq!(seqs, (1..=20).collect::<Vec<_>>());
        assert!(records
            .iter()
            .enumerate()
            .all(|(i, r)| r.1 == [i as u8; 30]));
    }

    /// The open segment's bytes.
    fn segment_bytes(vfs: &SimVfs, first: u64) -> Vec<u8> {
        vfs.read(&dir().join(segment_name(first))).unwrap()
    }

    /// Records end where the zeros written ahead of them begin: the log's end, no torn
    /// write; a writer reopening it cuts the zeros and writes on; closing cuts them too.
    #[test]
    fn a_zero_tail_is_the_end_of_the_log() {
        let vfs = SimVfs::new();
        let log = write(&vfs, &[b"first", b"second record"], 1 << 20);
        let end = log.len as usize;
        let bytes = segment_bytes(&vfs, 1);
        assert_eq!(
            bytes.len(),
            SEGMENT_HEADER + (1 << 16),
            "64 KiB zeroed ahead"
        );
        assert!(bytes[end..].iter().all(|&b| b == 0));
        // The process dies: nothing of the writer's close runs.
        std::mem::forget(log);
        let (records, state) = read_all(&vfs, 0).unwrap();
        assert_eq!(records.len(), 2);
        assert_eq!((state.tail_len, state.torn_bytes), (end as u64, 0));
        let mut log = LogWriter::open(&vfs, dir(), &state, 1 << 20, mark()).unwrap();
        assert_eq!(log.append(&vfs, b"third").unwrap(), 3);
        drop(log);
        let (records, state) = read_all(&vfs, 0).unwrap();
        assert_eq!(records[2], (3, b"third".to_vec()));
        assert_eq!(segment_bytes(&vfs, 1).len() as u64, state.tail_len);
    }

    /// A segment created with its header and zeros in one write, cut by a crash before
    /// its sync left any part of that write: an empty newest segment, made anew.
    #[test]
    fn a_crash_mid_preallocation_is_an_empty_segment() {
        let header = segment_header(1, ID);
        for (keep, len) in [(0, 4096), (10, 4096), (39, 100), (0, 20), (40, 40)] {
            let vfs = SimVfs::new();
            vfs.create_dir_all(dir()).unwrap();
            let file = vfs.create(&dir().join(segment_name(1))).unwrap();
            let mut bytes = vec![0; len];
            bytes[..keep].copy_from_slice(&header[..keep]);
            file.write_at(0, &bytes).unwrap();
            let (records, state) = read_all(&vfs, 0).unwrap();
            assert_eq!((records.len(), state.next_seq), (0, 1), "{keep} of {len}");
            let mut log = LogWriter::open(&vfs, dir(), &state, 1 << 20, mark()).unwrap();
            assert_eq!(log.append(&vfs, b"a").unwrap(), 1);
            drop(log);
            assert_eq!(read_all(&vfs, 0).unwrap().0, [(1, b"a".to_vec())]);
        }
        // Anything but zeros after a partial header is damage.
        let vfs = SimVfs::new();
        vfs.create_dir_all(dir()).unwrap();
        let file = vfs.create(&dir().join(segment_name(1))).unwrap();
        let mut bytes = vec![0; 4096];
        bytes[..10].copy_from_slice(&header[..10]);
        bytes[3000] = 1;
        file.write_at(0, &bytes).unwrap();
        assert!(matches!(read_all(&vfs, 0), Err(Error::Corrupt { .. })));
    }

    /// A record whose bytes reach a sector the disk never wrote (zeros where the log
    /// zeroed ahead) is a torn write, even with intact records of the same write after
    /// it; a record all of whose sectors were written but does not check out is damage.
    #[test]
    fn a_partially_zeroed_record_is_torn_a_flipped_bit_is_damage() {
        let big: Vec<u8> = (0..2000u32).map(|i| (i % 251 + 1) as u8).collect();
        let setup = || {
            let vfs = SimVfs::new();
            let mut log = write(&vfs, &[b"acked"], 1 << 20);
            let at = log.len as usize;
            log.append_buffered(&vfs, &big).unwrap();
            log.append_buffered(&vfs, b"after").unwrap();
            log.flush().unwrap();
            (vfs, log, at)
        };
        let first_sector = |at: usize| (at / SECTOR + 1) * SECTOR;
        // Each sector of the big record left unwritten in turn: the first (with its
        // header), one in the middle, the last (with the start of the record after it).
        let (vfs, log, at) = setup();
        let end = at + RECORD_OVERHEAD + big.len();
        let sectors: Vec<usize> = std::iter::once(at)
            .chain((first_sector(at)..end).step_by(SECTOR))
            .collect();
        drop((vfs, log));
        for &start in &sectors {
            let (vfs, log, _) = setup();
            let stop = (start / SECTOR + 1) * SECTOR;
            log.file()
                .write_at(start as u64, &vec![0; stop - start])
                .unwrap();
            std::mem::forget(log);
            let (records, state) = read_all(&vfs, 0).unwrap();
            assert_eq!(records, [(1, b"acked".to_vec())], "sector at {start}");
            assert_eq!(state.tail_len, at as u64);
            assert!(state.torn_bytes > 0);
        }
        // All sectors written, one bit of the big record wrong: damage, also with the
        // zeroed space after it.
        let (vfs, log, at) = setup();
        std::mem::forget(log);
        let path = dir().join(segment_name(1));
        let last = at + RECORD_OVERHEAD + big.len() + RECORD_OVERHEAD + 5;
        vfs.flip_bit(&path, last - 6, 1).unwrap();
        let err = read_all(&vfs, 0).unwrap_err().to_string();
        assert!(err.contains("last log record (3) is damaged"), "{err}");
        vfs.flip_bit(&path, last - 6, 1).unwrap();
        vfs.flip_bit(&path, at + 700, 1).unwrap();
        let err = read_all(&vfs, 0).unwrap_err().to_string();
        assert!(err.contains("intact records follow"), "{err}");
        // A zero piece of a later sector shorter than 16 bytes (here the file ends) is
        // not taken for an unwritten sector; the same piece followed by zeros is.
        let mut bytes = vec![7; 500];
        bytes.extend_from_slice(&encode_record(9, &[5; 4]).unwrap());
        assert_eq!(bytes.len(), 524);
        bytes[512..].fill(0);
        assert!(!unwritten_at(&bytes, 500));
        bytes.resize(600, 0);
        assert!(unwritten_at(&bytes, 500));
        assert!(matches!(record_at(&bytes, 500), Found::Damaged));
    }

    /// Power cuts while groups of records are written into zeroed space, the disk
    /// keeping any mix of their sectors: the log always reads, every synced record is
    /// there, and what is read is a prefix of what was written.
    #[test]
    fn power_cuts_in_zeroed_space_keep_every_synced_record() {
        let payloads: Vec<Vec<u8>> = (0..40u32)
            .map(|i| vec![(i % 250 + 1) as u8; (i as usize * 97) % 900 + 1])
            .collect();
        let (mut torn, mut kept_some) = (0, 0);
        for seed in 1..120u64 {
            let vfs = SimVfs::new();
            let mut log = write(&vfs, &[b"zero"], 1 << 20);
            let mut synced = 1;
            for (i, p) in payloads.iter().enumerate() {
                log.append_buffered(&vfs, p).unwrap();
                if i % 7 == 6 {
                    log.flush().unwrap();
                }
                if (i as u64 + seed).is_multiple_of(13) {
                    log.flush().unwrap();
                    log.file().sync().unwrap();
                    synced = log.written_seq();
                }
            }
            log.flush().unwrap();
            std::mem::forget(log);
            vfs.power_cut(seed);
            let (records, state) = read_all(&vfs, 0).unwrap();
            assert!(records.len() as u64 >= synced, "seed {seed}");
            for (seq, p) in &records[1..] {
                assert_eq!(p, &payloads[*seq as usize - 2], "seed {seed}");
            }
            torn += usize::from(state.torn_bytes > 0);
            kept_some += usize::from(records.len() as u64 > synced);
        }
        assert!(
            torn > 10 && kept_some > 10,
            "{torn} torn, {kept_some} kept more"
        );
    }

    #[test]
    fn segment_names_round_trip() {
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        assert_eq!(parse_segment_name("log-42.wal"), None);
        assert_eq!(parse_segment_name("MANIFEST"), None);
    }
}
