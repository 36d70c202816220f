//! The high-water mark: the last sequence number the writer knows durable, kept in the
//! file `LOGMARK` apart from the log, so that a log cut back or deleted after the fact is
//! noticed instead of being read as the end of the history (and its sequence numbers
//! given out again).
//!
//! `LOGMARK` is a 32-byte header (`PGRAPHHW`, version u32, the directory id u128, CRC-32C
//! of those 28 bytes) followed by 12-byte entries (sequence number u64, CRC-32C u32 of the
//! directory id and the sequence number), each one at least the one before it; the last
//! entry that checks out is the mark. The file is created whole (a temporary file, synced,
//! renamed, the directory synced) and then appended to, each entry synced; it is written
//! anew once it holds [`MAX_ENTRIES`] entries.
//!
//! The invariant every writer keeps: **an entry is written only once every record up to
//! it is durable** (in the log, or in a checkpoint whose manifest is durable). So no crash
//! or power cut leaves the log behind the mark, and a reader that reads the mark *before*
//! it lists and reads the log (as [`recover`](super::recover) does) finds every record up
//! to the mark in the files it then reads, whatever a writer beside it does: a log that
//! ends before the mark lost acknowledged batches. A torn last entry (a crash while
//! appending it) is left out; the mark then is the entry before, which is still true.
//!
//! The writer advances the mark when it closes, when it starts a new log segment, after
//! each checkpoint and after each sync of the log (group commit or per batch); what is
//! detected, and what cannot be, is in `docs/formats/store.md`.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::vfs::{Vfs, VfsFile};
use super::Seq;
use crate::codec::bytes::ByteWriter;
use crate::{Error, Result};

/// The file name of the mark.
pub(super) const MARK: &str = "LOGMARK";
/// The name the mark is written under before it replaces the old one.
const MARK_TMP: &str = "LOGMARK.tmp";
const MARK_MAGIC: &[u8; 8] = b"PGRAPHHW";
const MARK_VERSION: u32 = 1;
const HEADER_BYTES: usize = 32;
/// Entries are 16 bytes from a 32-byte header, so none crosses a sector boundary.
const ENTRY_BYTES: usize = 16;
/// Entries appended before the file is written anew (48 KiB).
const MAX_ENTRIES: usize = 4096;

fn header(dir_id: u128) -> Vec<u8> {
    let mut w = ByteWriter::with_capacity(HEADER_BYTES);
    w.bytes(MARK_MAGIC).u32(MARK_VERSION).u128(dir_id);
    let sum = crc32c::crc32c(w.as_slice());
    w.u32(sum);
    w.into_vec()
}

fn entry_sum(dir_id: u128, seq: Seq) -> u32 {
    let sum = crc32c::crc32c(&dir_id.to_le_bytes());
    crc32c::crc32c_append(sum, &seq.to_le_bytes())
}

fn entry(dir_id: u128, seq: Seq) -> [u8; ENTRY_BYTES] {
    let mut bytes = [0; ENTRY_BYTES];
    bytes[..8].copy_from_slice(&seq.to_le_bytes());
    bytes[12..].copy_from_slice(&entry_sum(dir_id, seq).to_le_bytes());
    bytes
}

fn damaged(path: &Path, offset: usize, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        path: Some(path.to_path_buf()),
        offset: Some(offset as u64),
        reason: reason.into(),
    }
}

/// The entry at `at` if it checks out.
fn entry_at(bytes: &[u8], at: usize, dir_id: u128) -> Option<Seq> {
    let e = bytes.get(at..at + ENTRY_BYTES)?;
    let seq = u64::from_le_bytes(e[..8].try_into().ok()?);
    let sum = u32::from_le_bytes(e[12..].try_into().ok()?);
    (e[8..12] == [0; 4] && sum == entry_sum(dir_id, seq)).then_some(seq)
}

/// Decodes the mark file `path` of the directory whose id is `dir_id`: the last entry
/// (`None` if the file holds none yet). An incomplete last entry, or zero bytes to the
/// end (space allocated before the data reached it), is a torn append and left out.
///
/// # Errors
/// [`Error::Corrupt`] for a damaged header, another directory's file, an entry below the
/// one before it, or a damaged entry (all its bytes there, its CRC-32C wrong).
pub(super) fn decode(path: &Path, bytes: &[u8], dir_id: u128) -> Result<Option<Seq>> {
    let Some(head) = bytes.get(..HEADER_BYTES) else {
        return Err(damaged(
            path,
            0,
            "the high-water mark's header is cut short",
        ));
    };
    if head != header(dir_id) {
        let found = u128::from_le_bytes(head[12..28].try_into().unwrap_or_default());
        if head == header(found) {
            return Err(super::format::foreign_file(path, 12, found, dir_id));
        }
        return Err(damaged(path, 0, "the high-water mark's header is damaged"));
    }
    let mut mark = None;
    let mut at = HEADER_BYTES;
    while at + ENTRY_BYTES <= bytes.len() {
        let Some(seq) = entry_at(bytes, at, dir_id) else {
            if bytes[at..].iter().all(|&b| b == 0) {
                break;
            }
            return Err(damaged(
                path,
                at,
                "a high-water mark entry is damaged (all its bytes are there, its CRC-32C does not check out)",
            ));
        };
        if let Some(before) = mark.filter(|&m| seq < m) {
            return Err(damaged(
                path,
                at,
                format!("the high-water mark goes back from record {before} to {seq}"),
            ));
        }
        mark = Some(seq);
        at += ENTRY_BYTES;
    }
    Ok(mark)
}

/// What can be saved of a damaged mark file: the highest entry that checks out at an
/// entry's place, header or not (for a writer told to accept a lost log).
fn salvage(bytes: &[u8], dir_id: u128) -> Option<Seq> {
    (HEADER_BYTES..bytes.len())
        .step_by(ENTRY_BYTES)
        .filter_map(|at| entry_at(bytes, at, dir_id))
        .max()
}

/// Reads the high-water mark of `dir`: `None` if the directory has no mark file (made
/// before marks existed) or the file holds no entry yet. If `salvage_damaged`, a damaged
/// file gives what [`salvage`] finds in it instead of an error.
///
/// # Errors
/// As [`decode`]; [`Error::Io`].
pub(super) fn read(
    vfs: &dyn Vfs,
    dir: &Path,
    dir_id: u128,
    salvage_damaged: bool,
) -> Result<Option<Seq>> {
    let path = dir.join(MARK);
    match vfs.read(&path) {
        Ok(bytes) => match decode(&path, &bytes, dir_id) {
            Err(Error::Corrupt { .. }) if salvage_damaged => Ok(salvage(&bytes, dir_id)),
            other => other,
        },
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(&path, e)),
    }
}

/// The writer's side of the mark: the file it appends to and the mark it holds.
pub(super) struct MarkWriter {
    dir: PathBuf,
    dir_id: u128,
    /// The mark file, once this writer wrote it (appended to from then on).
    file: Option<Arc<dyn VfsFile>>,
    entries: usize,
    mark: Seq,
    /// When this writer last wrote the file.
    written_at: Option<Instant>,
}

impl MarkWriter {
    /// The writer of `dir`'s mark, whose file says `mark` (0 if none).
    pub(super) fn new(dir: &Path, dir_id: u128, mark: Seq) -> Self {
        Self {
            dir: dir.to_path_buf(),
            dir_id,
            file: None,
            entries: 0,
            mark,
            written_at: None,
        }
    }

    /// Writes the mark file of a new directory, holding `seq`.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub(super) fn create(vfs: &dyn Vfs, dir: &Path, dir_id: u128, seq: Seq) -> Result<Self> {
        let mut writer = Self::new(dir, dir_id, seq);
        writer.rewrite(vfs, seq)?;
        Ok(writer)
    }

    /// How long ago this writer last wrote the file (forever if it has not).
    pub(super) fn since_written(&self) -> Duration {
        self.written_at.map_or(Duration::MAX, |at| at.elapsed())
    }

    /// The mark as last written (or read).
    #[cfg(test)]
    pub(super) fn mark(&self) -> Seq {
        self.mark
    }

    /// Records `seq` as the mark, durably, unless the mark is already there. The caller
    /// guarantees that every record up to `seq` is durable.
    ///
    /// # Errors
    /// [`Error::Io`].
    pub(super) fn advance(&mut self, vfs: &dyn Vfs, seq: Seq) -> Result<()> {
        if seq <= self.mark {
            return Ok(());
        }
        match &self.file {
            Some(file) if self.entries < MAX_ENTRIES => {
                let path = self.dir.join(MARK);
                let io = |e| Error::io(&path, e);
                file.append(&entry(self.dir_id, seq)).map_err(io)?;
                file.sync().map_err(io)?;
                self.entries += 1;
            }
            _ => self.rewrite(vfs, seq)?,
        }
        self.mark = seq;
        self.written_at = Some(Instant::now());
        Ok(())
    }

    /// Writes the mark file anew holding the mark (over a damaged one).
    ///
    /// # Errors
    /// [`Error::Io`].
    pub(super) fn rewrite_now(&mut self, vfs: &dyn Vfs) -> Result<()> {
        self.rewrite(vfs, self.mark)
    }

    /// Writes the mark file anew holding `seq`: a temporary file, synced, renamed over the
    /// old one, the directory synced.
    fn rewrite(&mut self, vfs: &dyn Vfs, seq: Seq) -> Result<()> {
        let tmp = self.dir.join(MARK_TMP);
        let io = |e| Error::io(&tmp, e);
        let file = vfs.create(&tmp).map_err(io)?;
        let mut bytes = header(self.dir_id);
        bytes.extend_from_slice(&entry(self.dir_id, seq));
        file.append(&bytes).map_err(io)?;
        file.sync().map_err(io)?;
        let path = self.dir.join(MARK);
        vfs.rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
        vfs.sync_dir(&self.dir)
            .map_err(|e| Error::io(&self.dir, e))?;
        self.file = Some(file);
        self.entries = 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::SimVfs;

    const ID: u128 = 0xfeed_5eed;

    fn dir() -> &'static Path {
        Path::new("/db")
    }

    fn vfs() -> SimVfs {
        let vfs = SimVfs::new();
        vfs.create_dir_all(dir()).unwrap();
        vfs
    }

    #[test]
    fn the_bytes_are_as_documented() {
        let vfs = vfs();
        let mut w = MarkWriter::create(&vfs, dir(), ID, 0).unwrap();
        w.advance(&vfs, 0x0102).unwrap();
        let bytes = vfs.read(&dir().join(MARK)).unwrap();
        assert_eq!(bytes.len(), HEADER_BYTES + 2 * ENTRY_BYTES);
        assert_eq!(&bytes[..8], b"PGRAPHHW");
        assert_eq!(bytes[8..12], 1u32.to_le_bytes());
        assert_eq!(bytes[12..28], ID.to_le_bytes());
        assert_eq!(bytes[28..32], crc32c::crc32c(&bytes[..28]).to_le_bytes());
        let last = &bytes[HEADER_BYTES + ENTRY_BYTES..];
        assert_eq!(last[..8], 0x0102u64.to_le_bytes());
        assert_eq!(last[8..12], [0; 4]);
        let mut covered = ID.to_le_bytes().to_vec();
        covered.extend_from_slice(&0x0102u64.to_le_bytes());
        assert_eq!(last[12..], crc32c::crc32c(&covered).to_le_bytes());
    }

    #[test]
    fn a_directory_without_a_mark_has_none() {
        assert_eq!(read(&vfs(), dir(), ID, false).unwrap(), None);
    }

    #[test]
    fn the_mark_is_the_last_entry_and_survives_a_power_cut() {
        let vfs = vfs();
        let mut w = MarkWriter::new(dir(), ID, 0);
        for seq in [3, 3, 7, 5, 9] {
            w.advance(&vfs, seq).unwrap();
        }
        assert_eq!(w.mark(), 9);
        vfs.power_cut(1);
        assert_eq!(read(&vfs, dir(), ID, false).unwrap(), Some(9));
        // Never backwards, and a new writer starts from what it read.
        let mut w = MarkWriter::new(dir(), ID, 9);
        w.advance(&vfs, 4).unwrap();
        assert_eq!(read(&vfs, dir(), ID, false).unwrap(), Some(9));
    }

    #[test]
    fn the_file_is_written_anew_past_its_entries() {
        let vfs = vfs();
        let mut w = MarkWriter::new(dir(), ID, 0);
        for seq in 1..=(MAX_ENTRIES as u64 + 10) {
            w.advance(&vfs, seq).unwrap();
        }
        let bytes = vfs.read(&dir().join(MARK)).unwrap();
        assert!(bytes.len() < HEADER_BYTES + 20 * ENTRY_BYTES);
        assert_eq!(
            read(&vfs, dir(), ID, false).unwrap(),
            Some(MAX_ENTRIES as u64 + 10)
        );
    }

    #[test]
    fn a_torn_last_entry_leaves_the_one_before() {
        let vfs = vfs();
        let mut w = MarkWriter::new(dir(), ID, 0);
        w.advance(&vfs, 5).unwrap();
        w.advance(&vfs, 8).unwrap();
        let path = dir().join(MARK);
        let bytes = vfs.read(&path).unwrap();
        for cut in 1..ENTRY_BYTES {
            assert_eq!(
                decode(&path, &bytes[..bytes.len() - cut], ID).unwrap(),
                Some(5)
            );
        }
        let mut zeros = bytes[..bytes.len() - ENTRY_BYTES].to_vec();
        zeros.resize(bytes.len() + 40, 0);
        assert_eq!(decode(&path, &zeros, ID).unwrap(), Some(5));
    }

    #[test]
    fn damage_and_foreign_files_are_refused_or_salvaged() {
        let vfs = vfs();
        let mut w = MarkWriter::new(dir(), ID, 0);
        for seq in [5, 8, 9] {
            w.advance(&vfs, seq).unwrap();
        }
        let path = dir().join(MARK);
        let bytes = vfs.read(&path).unwrap();
        for at in [HEADER_BYTES + ENTRY_BYTES + 2, bytes.len() - 1] {
            let mut flipped = bytes.clone();
            flipped[at] ^= 4;
            let err = decode(&path, &flipped, ID).unwrap_err().to_string();
            assert!(err.contains("LOGMARK") && err.contains("damaged"), "{err}");
            assert!(salvage(&flipped, ID).is_some_and(|m| m >= 8));
        }
        let err = decode(&path, &bytes, ID + 1).unwrap_err().to_string();
        assert!(err.contains("another data directory"), "{err}");
        let mut header_hit = bytes.clone();
        header_hit[9] ^= 1;
        assert!(decode(&path, &header_hit, ID).is_err());
        assert_eq!(salvage(&header_hit, ID), Some(9));
        assert!(decode(&path, &bytes[..10], ID).is_err());
        let mut back = bytes[..HEADER_BYTES].to_vec();
        back.extend_from_slice(&entry(ID, 9));
        back.extend_from_slice(&entry(ID, 4));
        let err = decode(&path, &back, ID).unwrap_err().to_string();
        assert!(err.contains("goes back"), "{err}");
    }
}
