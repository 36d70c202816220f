//! The store's file access, behind a small trait so that tests can replace the operating
//! system with a simulation that loses what a power cut loses ([`SimVfs`]).
//!
//! Everything the store does to its directory goes through [`Vfs`]: whole-file reads,
//! appends, `fsync` of a file and of the directory, renames, removals and the writer lock.
//! [`OsVfs`] is the real thing; [`SimVfs`] keeps two copies of every file and directory,
//! what the process sees and what has reached the disk, and on [`SimVfs::power_cut`]
//! throws away everything no completed `fsync` covered (SQLite's crash-test VFS is the
//! model). It can also fail the `n`-th mutating operation and every one after it, as if the
//! process died there: that is how the tests put a failpoint at every write, `fsync` and
//! rename of the write path.

use std::collections::{BTreeMap, HashMap};
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// An open file the store appends to (and writes the log into space it zeroed ahead).
pub trait VfsFile: Send + Sync {
    /// Appends `bytes` at the end (a file the store appends to is not also written with
    /// `write_at`).
    fn append(&self, bytes: &[u8]) -> io::Result<()>;
    /// Writes `bytes` at byte `offset`, over what is there and past the end (a gap before
    /// `offset` reads as zeros).
    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()>;
    /// Cuts the file to `len` bytes (or extends it with zeros).
    fn set_len(&self, len: u64) -> io::Result<()>;
    /// Makes every byte written so far durable (`fdatasync`: the data and the file's length).
    fn sync(&self) -> io::Result<()>;
}

/// A held writer lock; released when dropped.
pub trait VfsLock: Send + Sync {}

/// The file operations the store uses. Paths are files inside one directory.
pub trait Vfs: Send + Sync {
    /// Creates `dir` (and its parents) if it does not exist.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;
    /// The names of the files in `dir`.
    fn list(&self, dir: &Path) -> io::Result<Vec<String>>;
    /// The whole contents of `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The length of `path` and its bytes in each of `ranges` (an offset and a length,
    /// cut at the file's end): one buffer per range, holding exactly those bytes. The store
    /// reads the live units of a pack so, in pieces read side by side.
    fn read_pieces(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<(u64, Vec<Vec<u8>>)> {
        let bytes = self.read(path)?;
        let len = bytes.len() as u64;
        let pieces = ranges
            .iter()
            .map(|&(at, n)| {
                let (start, end) = (at.min(len), at.saturating_add(n).min(len));
                bytes[start as usize..end as usize].to_vec()
            })
            .collect();
        Ok((len, pieces))
    }
    /// Whether `path` exists.
    fn exists(&self, path: &Path) -> bool;
    /// Creates `path` empty (replacing a file of that name) and opens it for appending.
    fn create(&self, path: &Path) -> io::Result<Arc<dyn VfsFile>>;
    /// Opens the existing `path` for appending after cutting it to `len` bytes.
    fn open_append(&self, path: &Path, len: u64) -> io::Result<Arc<dyn VfsFile>>;
    /// Renames `from` to `to`, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;
    /// Removes the file `path`.
    fn remove(&self, path: &Path) -> io::Result<()>;
    /// Makes `dir`'s entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;
    /// Takes the exclusive writer lock `path` (creating the file), without waiting, and
    /// the same lock on the directory that holds it: removing the file, or replacing it,
    /// does not let a second writer in.
    ///
    /// # Errors
    /// [`io::ErrorKind::WouldBlock`] if another handle holds either.
    fn lock(&self, path: &Path) -> io::Result<Box<dyn VfsLock>>;
}

/// The operating system's files.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsVfs;

struct OsFile(File);

impl VfsFile for OsFile {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        (&self.0).write_all(bytes)
    }

    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        #[cfg(unix)]
        {
            std::os::unix::fs::FileExt::write_all_at(&self.0, bytes, offset)
        }
        #[cfg(not(unix))]
        {
            let mut file = &self.0;
            let at = file.stream_position()?;
            file.seek(SeekFrom::Start(offset))?;
            let written = file.write_all(bytes);
            file.seek(SeekFrom::Start(at))?;
            written
        }
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.0.set_len(len)
    }

    fn sync(&self) -> io::Result<()> {
        self.0.sync_data()
    }
}

/// The locked `LOCK` file and (on Unix) the locked directory; both released on drop.
struct OsLock {
    _file: File,
    _dir: Option<File>,
}

impl VfsLock for OsLock {}

impl Vfs for OsVfs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(dir)? {
            if let Ok(name) = entry?.file_name().into_string() {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut file = File::open(path)?;
        let mut bytes = Vec::with_capacity(file.metadata().map_or(0, |m| m.len() as usize));
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    fn read_pieces(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<(u64, Vec<Vec<u8>>)> {
        let mut file = File::open(path)?;
        let len = file.metadata()?.len();
        let mut pieces = Vec::with_capacity(ranges.len());
        for &(at, n) in ranges {
            let (start, end) = (at.min(len), at.saturating_add(n).min(len));
            // Read straight into the buffer's spare capacity, which is not zeroed first.
            let mut piece =
                Vec::with_capacity(usize::try_from(end - start).map_err(io::Error::other)?);
            file.seek(SeekFrom::Start(start))?;
            let read = (&mut file).take(end - start).read_to_end(&mut piece)?;
            if read as u64 != end - start {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "{} ended at byte {}, {end} expected",
                        path.display(),
                        start + read as u64
                    ),
                ));
            }
            pieces.push(piece);
        }
        Ok((len, pieces))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn VfsFile>> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        Ok(Arc::new(OsFile(file)))
    }

    fn open_append(&self, path: &Path, len: u64) -> io::Result<Arc<dyn VfsFile>> {
        let file = OpenOptions::new().write(true).open(path)?;
        if file.metadata()?.len() != len {
            file.set_len(len)?;
            file.sync_data()?;
        }
        // Not opened with `O_APPEND`: positioned writes (`write_at`) must land where asked.
        let mut file = OpenOptions::new().write(true).open(path)?;
        file.seek(SeekFrom::End(0))?;
        Ok(Arc::new(OsFile(file)))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        std::fs::rename(from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        File::open(dir)?.sync_all()
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn VfsLock>> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)?;
        try_lock(&file)?;
        // A file can be unlinked under its holder and made anew by the next writer; the
        // directory cannot, so the directory's own lock is the one that holds. (Unix: a
        // directory opens read-only; elsewhere the file's lock is all there is.)
        let dir = if cfg!(unix) {
            let dir = File::open(path.parent().unwrap_or(Path::new(".")))?;
            try_lock(&dir)?;
            Some(dir)
        } else {
            None
        };
        Ok(Box::new(OsLock {
            _file: file,
            _dir: dir,
        }))
    }
}

/// Takes `file`'s exclusive OS lock without waiting.
fn try_lock(file: &File) -> io::Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(locked()),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

fn locked() -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "another process has this data directory open for writing",
    )
}

/// What a simulated lock is taken on: a file's inode (not its name, which can be removed
/// and made anew) or a directory.
#[derive(Clone, PartialEq, Eq, Hash)]
enum SimLockKey {
    Inode(usize),
    Dir(PathBuf),
}

/// The unit a disk writes whole: a power cut leaves each sector old or new.
const SECTOR: usize = 512;

/// One file's bytes as the process sees them and as the disk holds them.
#[derive(Default, Clone)]
struct SimInode {
    data: Vec<u8>,
    durable: Vec<u8>,
}

#[derive(Default)]
struct SimState {
    inodes: Vec<SimInode>,
    /// Directory entries the process sees: path → inode.
    names: BTreeMap<PathBuf, usize>,
    /// Directory entries on disk.
    durable_names: BTreeMap<PathBuf, usize>,
    dirs: Vec<PathBuf>,
    locks: HashMap<SimLockKey, u64>,
    next_lock: u64,
    /// Mutating operations performed so far.
    ops: u64,
    /// The operation that fails, and every one after it.
    fail_at: Option<u64>,
    /// Syncs performed.
    syncs: u64,
}

/// A file system in memory that loses, on [`SimVfs::power_cut`], every byte and every
/// directory entry no completed `fsync` covered; and that can fail from a chosen operation
/// on, as a process killed there would. Clones share the same files (a reopen after a crash
/// uses a clone). For tests of the store's durability.
#[derive(Clone, Default)]
pub struct SimVfs {
    state: Arc<Mutex<SimState>>,
}

impl std::fmt::Debug for SimVfs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.lock_state();
        f.debug_struct("SimVfs")
            .field("files", &state.names.len())
            .field("ops", &state.ops)
            .finish()
    }
}

struct SimFile {
    state: Arc<Mutex<SimState>>,
    inode: usize,
}

struct SimLock {
    state: Arc<Mutex<SimState>>,
    keys: [SimLockKey; 2],
    id: u64,
}

impl VfsLock for SimLock {}

impl Drop for SimLock {
    fn drop(&mut self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        for key in &self.keys {
            if state.locks.get(key) == Some(&self.id) {
                state.locks.remove(key);
            }
        }
    }
}

fn crashed() -> io::Error {
    io::Error::other("simulated crash: the process died at this operation")
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

impl SimState {
    /// Counts a mutating operation; fails it if the process has "died".
    fn op(&mut self) -> io::Result<()> {
        self.ops += 1;
        match self.fail_at {
            Some(at) if self.ops >= at => Err(crashed()),
            _ => Ok(()),
        }
    }

    fn inode(&self, path: &Path) -> io::Result<usize> {
        self.names.get(path).copied().ok_or_else(|| not_found(path))
    }
}

impl SimVfs {
    /// An empty file system.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock_state(&self) -> MutexGuard<'_, SimState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Mutating operations (creates, appends, syncs, renames, removals) performed so far.
    pub fn ops(&self) -> u64 {
        self.lock_state().ops
    }

    /// File and directory syncs performed so far.
    pub fn syncs(&self) -> u64 {
        self.lock_state().syncs
    }

    /// Makes the `n`-th mutating operation from the start (counting from 1) and every later
    /// one fail, as if the process died there; `None` lets everything succeed again.
    pub fn fail_at(&self, n: Option<u64>) {
        self.lock_state().fail_at = n;
    }

    /// The process dies: its locks go; unsynced data stays (the kernel still writes it out).
    pub fn kill(&self) {
        let mut state = self.lock_state();
        state.locks.clear();
        state.fail_at = None;
    }

    /// The power goes: every file goes back to its durable bytes, plus (chosen by `seed`)
    /// what a disk that wrote some of the cache before the cut would leave: a prefix of the
    /// bytes appended since the last sync; and where bytes the last sync covered were
    /// overwritten since, each 512-byte sector of them holds its new or its old bytes (in
    /// any mix: a disk orders no writes between syncs), and the sector holding the durable
    /// end, if left old, reads as zeros past that end. Every directory goes back to its
    /// durable entries; locks go.
    pub fn power_cut(&self, seed: u64) {
        let mut state = self.lock_state();
        let mut rng = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for inode in &mut state.inodes {
            let durable = inode.durable.len();
            if inode.data.len() < durable {
                // Cut since its last sync: the cut may not have reached the disk.
                inode.data = inode.durable.clone();
                continue;
            }
            let appended_only = inode.data.starts_with(&inode.durable);
            let mut kept = std::mem::take(&mut inode.durable);
            let mut end_sector_new = true;
            if !appended_only {
                for start in (0..durable).step_by(SECTOR) {
                    let end = (start + SECTOR).min(durable);
                    if kept[start..end] != inode.data[start..end] {
                        let new = next() & 1 == 1;
                        if new {
                            kept[start..end].copy_from_slice(&inode.data[start..end]);
                        }
                        if end == durable {
                            end_sector_new = new;
                        }
                    }
                }
            }
            let extra = (inode.data.len() - durable) as u64;
            if extra > 0 {
                let keep = (next() % (extra + 1)) as usize;
                kept.extend_from_slice(&inode.data[durable..durable + keep]);
                if !end_sector_new {
                    let stop = durable.next_multiple_of(SECTOR).min(kept.len());
                    kept[durable..stop].fill(0);
                }
            }
            inode.data = kept;
            inode.durable = inode.data.clone();
        }
        state.names = state.durable_names.clone();
        state.locks.clear();
        state.fail_at = None;
    }

    /// Flips bit `bit` of byte `offset` of `path`, on disk and as seen (for damage tests).
    ///
    /// # Errors
    /// If there is no such file or byte.
    pub fn flip_bit(&self, path: &Path, offset: usize, bit: u8) -> io::Result<()> {
        let mut state = self.lock_state();
        let inode = state.inode(path)?;
        let file = &mut state.inodes[inode];
        if offset >= file.data.len() {
            return Err(io::Error::other("offset past the end of the file"));
        }
        file.data[offset] ^= 1 << (bit & 7);
        file.durable = file.data.clone();
        Ok(())
    }
}

impl VfsFile for SimFile {
    fn append(&self, bytes: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.op()?;
        state.inodes[self.inode].data.extend_from_slice(bytes);
        Ok(())
    }

    fn write_at(&self, offset: u64, bytes: &[u8]) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.op()?;
        let data = &mut state.inodes[self.inode].data;
        let (start, end) = (offset as usize, offset as usize + bytes.len());
        if data.len() < end {
            data.resize(end, 0);
        }
        data[start..end].copy_from_slice(bytes);
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.op()?;
        state.inodes[self.inode].data.resize(len as usize, 0);
        Ok(())
    }

    fn sync(&self) -> io::Result<()> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.op()?;
        state.syncs += 1;
        let inode = &mut state.inodes[self.inode];
        inode.durable = inode.data.clone();
        Ok(())
    }
}

impl Vfs for SimVfs {
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.lock_state();
        if !state.dirs.iter().any(|d| d == dir) {
            state.op()?;
            state.dirs.push(dir.to_path_buf());
        }
        Ok(())
    }

    fn list(&self, dir: &Path) -> io::Result<Vec<String>> {
        let state = self.lock_state();
        if !state.dirs.iter().any(|d| d == dir) {
            return Err(not_found(dir));
        }
        Ok(state
            .names
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
            .collect())
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let state = self.lock_state();
        let inode = state.inode(path)?;
        Ok(state.inodes[inode].data.clone())
    }

    fn read_pieces(&self, path: &Path, ranges: &[(u64, u64)]) -> io::Result<(u64, Vec<Vec<u8>>)> {
        let state = self.lock_state();
        let data = &state.inodes[state.inode(path)?].data;
        let len = data.len() as u64;
        let pieces = ranges
            .iter()
            .map(|&(at, n)| {
                data[at.min(len) as usize..at.saturating_add(n).min(len) as usize].to_vec()
            })
            .collect();
        Ok((len, pieces))
    }

    fn exists(&self, path: &Path) -> bool {
        let state = self.lock_state();
        state.names.contains_key(path) || state.dirs.iter().any(|d| d == path)
    }

    fn create(&self, path: &Path) -> io::Result<Arc<dyn VfsFile>> {
        let mut state = self.lock_state();
        state.op()?;
        let inode = state.inodes.len();
        state.inodes.push(SimInode::default());
        state.names.insert(path.to_path_buf(), inode);
        Ok(Arc::new(SimFile {
            state: Arc::clone(&self.state),
            inode,
        }))
    }

    fn open_append(&self, path: &Path, len: u64) -> io::Result<Arc<dyn VfsFile>> {
        let mut state = self.lock_state();
        let inode = state.inode(path)?;
        if state.inodes[inode].data.len() as u64 != len {
            state.op()?;
            let file = &mut state.inodes[inode];
            file.data.truncate(len as usize);
            state.op()?;
            let file = &mut state.inodes[inode];
            file.durable = file.data.clone();
        }
        Ok(Arc::new(SimFile {
            state: Arc::clone(&self.state),
            inode,
        }))
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.lock_state();
        state.op()?;
        let inode = state.inode(from)?;
        state.names.remove(from);
        state.names.insert(to.to_path_buf(), inode);
        Ok(())
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        let mut state = self.lock_state();
        state.op()?;
        state.inode(path)?;
        state.names.remove(path);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.lock_state();
        state.op()?;
        state.syncs += 1;
        let in_dir = |p: &PathBuf| p.parent() == Some(dir);
        let current: Vec<(PathBuf, usize)> = state
            .names
            .iter()
            .filter(|(p, _)| in_dir(p))
            .map(|(p, &i)| (p.clone(), i))
            .collect();
        state.durable_names.retain(|p, _| !in_dir(p));
        state.durable_names.extend(current);
        Ok(())
    }

    fn lock(&self, path: &Path) -> io::Result<Box<dyn VfsLock>> {
        let mut state = self.lock_state();
        // Like the OS: the lock file is made if missing (an entry no sync covers), and the
        // lock is on its inode and on the directory.
        let inode = match state.names.get(path) {
            Some(&inode) => inode,
            None => {
                let inode = state.inodes.len();
                state.inodes.push(SimInode::default());
                state.names.insert(path.to_path_buf(), inode);
                inode
            }
        };
        let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
        let keys = [SimLockKey::Inode(inode), SimLockKey::Dir(dir)];
        if keys.iter().any(|k| state.locks.contains_key(k)) {
            return Err(locked());
        }
        state.next_lock += 1;
        let id = state.next_lock;
        for key in &keys {
            state.locks.insert(key.clone(), id);
        }
        Ok(Box::new(SimLock {
            state: Arc::clone(&self.state),
            keys,
            id,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// The OS read of pieces (into each buffer's spare capacity) and the simulation's
        /// give the file's length and exactly each range's bytes within the file, for
        /// overlapping, empty and past-the-end ranges.
        #[test]
        fn read_pieces_reads_each_range_within_the_file(
            file in proptest::collection::vec(any::<u8>(), 0..20_000),
            ranges in proptest::collection::vec((0u64..22_000, 0u64..9_000), 0..8),
        ) {
            let len = file.len() as u64;
            let pieces: Vec<Vec<u8>> = ranges
                .iter()
                .map(|&(at, n)| file[at.min(len) as usize..(at + n).min(len) as usize].to_vec())
                .collect();
            let want = (len, pieces);
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("pack");
            std::fs::write(&path, &file).unwrap();
            prop_assert_eq!(&OsVfs.read_pieces(&path, &ranges).unwrap(), &want);
            let sim = SimVfs::new();
            sim.create_dir_all(dir.path()).unwrap();
            sim.create(&path).unwrap().append(&file).unwrap();
            prop_assert_eq!(&sim.read_pieces(&path, &ranges).unwrap(), &want);
        }
    }

    #[test]
    fn read_pieces_of_a_missing_file_is_not_found() {
        let dir = tempfile::tempdir().unwrap();
        let err = OsVfs
            .read_pieces(&dir.path().join("gone"), &[(0, 10)])
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
    }

    #[test]
    fn power_cut_keeps_only_what_was_synced() {
        let fs = SimVfs::new();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).unwrap();
        let a = fs.create(&dir.join("a")).unwrap();
        a.append(b"hello").unwrap();
        a.sync().unwrap();
        fs.sync_dir(dir).unwrap();
        a.append(b" world").unwrap();
        let b = fs.create(&dir.join("b")).unwrap();
        b.append(b"lost").unwrap();
        b.sync().unwrap(); // the data is durable, but its directory entry is not
        fs.power_cut(1);
        let kept = fs.read(&dir.join("a")).unwrap();
        assert!(kept.starts_with(b"hello") && b"hello world".starts_with(&kept));
        assert!(!fs.exists(&dir.join("b")));
        assert_eq!(fs.list(dir).unwrap(), ["a"]);
    }

    /// Overwritten sectors come back old or new, each on its own, and `set_len` and
    /// `write_at` past the end read as zeros up to the written bytes.
    #[test]
    fn a_power_cut_keeps_each_overwritten_sector_old_or_new() {
        let dir = Path::new("/d");
        let mut mixed = false;
        for seed in 1..40 {
            let fs = SimVfs::new();
            fs.create_dir_all(dir).unwrap();
            let f = fs.create(&dir.join("log")).unwrap();
            f.set_len(4 * SECTOR as u64).unwrap();
            f.sync().unwrap();
            fs.sync_dir(dir).unwrap();
            f.write_at(100, &[7; 3 * SECTOR]).unwrap();
            f.write_at(5 * SECTOR as u64, &[9; 10]).unwrap();
            let seen = fs.read(&dir.join("log")).unwrap();
            assert_eq!(seen.len(), 5 * SECTOR + 10);
            assert!(seen[4 * SECTOR..5 * SECTOR].iter().all(|&b| b == 0));
            fs.power_cut(seed);
            let kept = fs.read(&dir.join("log")).unwrap();
            assert!(
                (4 * SECTOR..=5 * SECTOR + 10).contains(&kept.len()),
                "seed {seed}"
            );
            let sectors: Vec<bool> = (0..4)
                .map(|i| {
                    let (old, new) = (&vec![0; SECTOR][..], &seen[i * SECTOR..(i + 1) * SECTOR]);
                    let got = &kept[i * SECTOR..(i + 1) * SECTOR];
                    assert!(got == old || got == new, "seed {seed} sector {i}");
                    got == new
                })
                .collect();
            mixed |= sectors.contains(&true) && sectors.contains(&false);
        }
        assert!(mixed, "no seed kept some sectors new and others old");
    }

    #[test]
    fn a_rename_needs_a_directory_sync() {
        let fs = SimVfs::new();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).unwrap();
        let f = fs.create(&dir.join("tmp")).unwrap();
        f.append(b"x").unwrap();
        f.sync().unwrap();
        fs.sync_dir(dir).unwrap();
        fs.rename(&dir.join("tmp"), &dir.join("final")).unwrap();
        fs.power_cut(0);
        assert_eq!(fs.list(dir).unwrap(), ["tmp"]);
        fs.rename(&dir.join("tmp"), &dir.join("final")).unwrap();
        fs.sync_dir(dir).unwrap();
        fs.power_cut(0);
        assert_eq!(fs.list(dir).unwrap(), ["final"]);
    }

    #[test]
    fn failing_from_an_operation_on_fails_everything_after() {
        let fs = SimVfs::new();
        let dir = Path::new("/d");
        fs.create_dir_all(dir).unwrap();
        let f = fs.create(&dir.join("a")).unwrap();
        fs.fail_at(Some(fs.ops() + 2));
        f.append(b"1").unwrap();
        assert!(f.append(b"2").is_err());
        assert!(f.sync().is_err());
        fs.kill();
        assert_eq!(fs.read(&dir.join("a")).unwrap(), b"1");
    }

    #[test]
    fn locks_exclude_until_dropped() {
        let fs = SimVfs::new();
        let lock = fs.lock(Path::new("/d/LOCK")).unwrap();
        let err = fs.lock(Path::new("/d/LOCK")).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(lock);
        fs.lock(Path::new("/d/LOCK")).unwrap();
    }

    #[test]
    fn removing_the_lock_file_does_not_let_a_second_writer_in() {
        let fs = SimVfs::new();
        let lock = fs.lock(Path::new("/d/LOCK")).unwrap();
        fs.remove(Path::new("/d/LOCK")).unwrap();
        let err = fs.lock(Path::new("/d/LOCK")).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(lock);
        fs.lock(Path::new("/d/LOCK")).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let lock = OsVfs.lock(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let err = OsVfs.lock(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(lock);
        OsVfs.lock(&path).unwrap();
    }

    #[test]
    fn os_locks_exclude_a_second_handle() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("LOCK");
        let lock = OsVfs.lock(&path).unwrap();
        let err = OsVfs.lock(&path).err().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        drop(lock);
        OsVfs.lock(&path).unwrap();
    }
}
