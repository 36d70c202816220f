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
//! it); a record all of whose bytes are there but which does not check out is damage,
//! refused unless the caller asks to cut it. Anything else that does not check out is
//! corruption, reported with the segment file and byte offset and never skipped. Segment
//! headers carry the directory id, checked against the manifest's.

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

/// What the bytes at a record's position hold.
enum Found<'a> {
    /// A record that checks out: (sequence number, payload, end).
    Record(u64, &'a [u8], usize),
    /// The start of a record cut short: its header is incomplete, its declared bytes run
    /// past the end of the file, or only zero bytes are left (space the file system
    /// allocated before the data reached it). What a crash mid-write leaves.
    Cut,
    /// A record all of whose bytes are there that does not check out (header or CRC-32C):
    /// damage, never the trace of a crash.
    Damaged,
}

/// What the bytes starting at `at` hold (see [`Found`]).
fn record_at(bytes: &[u8], at: usize) -> Found<'_> {
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
    let (Ok(payload), Ok(sum)) = (r.take(len as usize, "the payload"), r.u32("the CRC-32C")) else {
        return Found::Cut;
    };
    if crc32c::crc32c(&rest[..body]) == sum {
        Found::Record(seq, payload, at + body + 4)
    } else {
        Found::Damaged
    }
}

/// Whether a record that checks out starts anywhere after `at`.
fn intact_after(bytes: &[u8], at: usize) -> bool {
    (at + 1..bytes.len()).any(|p| matches!(record_at(bytes, p), Found::Record(..)))
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
/// its segment's path and its byte offset there; an error `replay` returns without a path
/// is located at the record.
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
    mut replay: impl FnMut(u64, &[u8], &Path, usize) -> Result<()>,
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
        let bytes = vfs.read(&path).map_err(|e| Error::io(&path, e))?;
        state.bytes += bytes.len() as u64;
        let header = match check_segment_header(&path, &bytes, first, dir_id) {
            Ok(len) => len,
            // A segment is created when the record it starts with is the next to be
            // written, so one whose header never became durable cannot start at a record
            // the checkpoint covers.
            Err(_)
                if newest
                    && bytes.len() <= SEGMENT_HEADER
                    && is_partial_header(&bytes, first, dir_id)
                    && first > after =>
            {
                // Created, but the crash came before its header was durable: an empty tail.
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
                        replay(seq, payload, &path, at).map_err(|e| match e {
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
                    if !newest || intact_after(&bytes, at) {
                        return Err(corrupt(
                            &path,
                            at,
                            format!(
                                "log record {} is damaged (bad length, header or CRC-32C) and intact records follow it",
                                state.next_seq
                            ),
                        ));
                    }
                    let cut = (bytes.len() - at) as u64;
                    if matches!(found, Found::Cut) {
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

/// Whether `bytes` (shorter than a header) could be the start of the header of `first`.
fn is_partial_header(bytes: &[u8], first: u64, dir_id: u128) -> bool {
    let header = segment_header(first, dir_id);
    bytes.iter().zip(&header).all(|(a, b)| a == b) || bytes.iter().all(|&b| b == 0)
}

/// Appends records to the newest segment, starting a new one past a size.
pub(super) struct LogWriter {
    dir: PathBuf,
    file: Arc<dyn VfsFile>,
    /// First sequence number of the open segment.
    first: u64,
    /// Bytes of the open segment's header (a segment of an older format may be appended to).
    header: u64,
    len: u64,
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

impl LogWriter {
    /// Opens the log after [`scan`]: truncates a torn tail (durably) and appends to the
    /// newest segment, or starts the first one. Each segment it closes advances `mark`.
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
                let (file, len) = Self::start_segment(vfs, dir, state.next_seq, state.dir_id)?;
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
        let path = dir.join(segment_name(first));
        let io = |e| Error::io(&path, e);
        let file = vfs.create(&path).map_err(io)?;
        let header = segment_header(first, dir_id);
        file.append(&header).map_err(io)?;
        file.sync().map_err(io)?;
        vfs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        Ok((file, header.len() as u64))
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
        self.file.sync().map_err(|e| Error::io(&old, e))?;
        let (file, len) = Self::start_segment(vfs, &self.dir, self.next_seq, self.dir_id)?;
        self.file = file;
        self.first = self.next_seq;
        self.header = len;
        self.len = len;
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

    /// Writes the buffered records to the open segment in one write.
    ///
    /// # Errors
    /// [`Error::Io`] naming the segment; the buffered records are then dropped, their
    /// sequence numbers free again (the caller stops the store's writes).
    pub(super) fn flush(&mut self) -> Result<()> {
        if self.buffer.is_empty() {
            return Ok(());
        }
        let written = self.file.append(&self.buffer);
        let bytes = self.buffer.len() as u64;
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
        let state = scan(vfs, dir(), ID, 0, false, |_, _, _, _| Ok(())).unwrap();
        let mut log = LogWriter::open(vfs, dir(), &state, segment_bytes, mark()).unwrap();
        for r in records {
            log.append(vfs, r).unwrap();
        }
        log.file().sync().unwrap();
        log
    }

    type Records = Vec<(u64, Vec<u8>)>;

    fn read_all(vfs: &SimVfs, after: u64) -> Result<(Records, LogState)> {
        let mut out = Vec::new();
        let state = scan(vfs, dir(), ID, after, false, |seq, p, _, _| {
            out.push((seq, p.to_vec()));
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

    #[test]
    fn segment_names_round_trip() {
        assert_eq!(parse_segment_name(&segment_name(42)), Some(42));
        assert_eq!(parse_segment_name("log-42.wal"), None);
        assert_eq!(parse_segment_name("MANIFEST"), None);
    }
}
