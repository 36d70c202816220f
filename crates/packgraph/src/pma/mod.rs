//! The packed memory array (PMA) of `u64` keys, compressed (CPMA) or plain.
//!
//! Follows Wheatman, Burns, Buluç and Xu, "CPMA: An Efficient Batch-Parallel Compressed Set
//! Without Pointers" (PPoPP 2024), sections 3–5:
//!
//! * The keys are sorted in one array cut into equal leaves of `leaf_bytes` bytes, each
//!   packed left; the leaf encoding is a [`LeafCodec`]: [`DeltaLeaf`] (head + byte-coded
//!   deltas: the CPMA) or [`PlainLeaf`] (8 bytes a key: the PMA). Leaf heads are also kept in
//!   a separate contiguous array, so a search reads the heads and then one leaf.
//! * An implicit binary tree over the leaves carries byte-density bounds (`density.rs`).
//! * Batch updates run the paper's three phases (`batch.rs`, `rebalance.rs`): a parallel
//!   recursive merge of the sorted batch into the leaves (a leaf that overflows keeps its
//!   keys in a side buffer), a level-by-level count of the touched leaves' ancestors that
//!   counts each leaf at most a constant number of times, and a parallel redistribution of
//!   the maximal violating regions. Small batches go key by key; batches comparable to the
//!   structure's size rebuild it with a linear merge. The array grows or shrinks by
//!   [`PmaConfig::growth_factor`] when the root's bound breaks.
//!
//! Versions (Aspen, section 5.2; PART, sections 3.2–3.4): the leaves are grouped into
//! pages of at most `min(page_bytes, share_bytes)` bytes (see [`PmaConfig::share_bytes`])
//! held by reference-counted pointers, pages into groups of 8
//! (their page pointers plus the per-leaf heads and sizes that search needs), groups into
//! supergroups (their group pointers and first heads), and a version is a table of
//! supergroup pointers, itself behind a reference count (`table.rs`). `Clone` is therefore
//! O(1) and copies no key data. The first write to a shared table copies its top level
//! (one pointer and one head per supergroup), a write to a supergroup, group or page
//! another version holds copies that one (pages counted by [`Pma::page_copies`]); unshared
//! ones are written in place, so with no other version alive nothing is copied and updates
//! run as before, and a write under a snapshot copies the pages it changes, a group of 8
//! entries per changed page, a supergroup of about √(pages / 8) / 4 entries per changed
//! group, and the top level; the top level's copy is made from the table of a dropped
//! version, left spare in the [`Lineage`] shared by the versions, changing only the
//! entries that differ (`table.rs`). Files store
//! pages of [`PmaConfig::page_bytes`]: when in-memory pages are smaller, [`Pma::parts`]
//! cuts a contiguous copy of the leaves into them.
//! Growth and shrink build new pages and leave old versions untouched. Pages a dropped
//! version alone held go to a bounded process-wide pool (`pool.rs`) that the next copies
//! take from before asking the allocator.
//!
//! Invariants (checked by [`Pma::check_invariants`]): keys strictly increase across the
//! leaves; a non-empty leaf's `heads` entry is its first key and its `used` count is exactly
//! its encoding's length, at most `leaf_bytes`; an empty leaf's `heads` entry is the head of
//! the next non-empty leaf (`u64::MAX` if none), so `heads` never decreases and the target
//! leaf of a key is the last leaf whose head is at most the key.
//!
//! Left out on purpose: the paper's concurrent (locking) point updates — packgraph has one
//! writer — and its Eytzinger-ordered head index (a plain sorted array searched by
//! `partition_point` measured as fast at these sizes).
//!
//! Submodules import only those below them, lowest first: `leaf` (the codecs), `density`,
//! `sort`, `pool` (page allocations kept for reuse) and `raw` (the unsafe code); `config`
//! (the tunables); `page` (views over pages, copy on write); `spread` (build, spread,
//! gather); `batch` and `rebalance` (the three batch phases); then the operations
//! (`point`, `iter`, `cursor`, `arrays`, `check`).

mod arrays;
mod batch;
mod check;
mod config;
mod cursor;
mod density;
mod iter;
mod leaf;
mod log;
mod page;
mod point;
mod pool;
pub(crate) mod raw;
mod rebalance;
mod serialize;
mod sort;
mod spread;
mod table;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::mem::size_of;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

pub use self::arrays::{FilledPages, IntoPma, PageSlot, PmaParts, PmaPartsRef, RebuildError};
pub use self::config::PmaConfig;
pub use self::cursor::{CopyVolume, Cursor, ShortCursor};
pub use self::iter::Range;
pub use self::leaf::{
    ArcCheck, DeltaLeaf, DeltaMapLeaf, GroupLeaf, GroupMapLeaf, ItemCheck, LeafCodec, LeafInsert,
    LeafRemove, PlainLeaf, SliceRun,
};
pub(crate) use self::log::ChangeLog;
pub(crate) use self::serialize::ArrayDims;
pub use self::sort::{sort_key_bits, sort_keys};

/// Bytes past the last leaf, so that word-at-a-time decoding never leaves the array.
const PADDING_BYTES: usize = 16;
/// Leaves per parallel task when spreading, gathering or scanning.
const LEAF_GRAIN: usize = 32;

/// The compressed packed memory array.
pub type Cpma = Pma<DeltaLeaf>;

/// The compressed PMA as an ordered map from `u64` keys to `u64` values stored beside them
/// (items are `(key, value)` pairs; values are not delta-coded).
///
/// # Examples
/// ```
/// use packgraph::pma::CpmaMap;
///
/// let mut map = CpmaMap::new();
/// assert_eq!(map.insert_batch(&[(30, 3), (10, 1), (20, 2), (10, 7)]), 3);
/// assert_eq!(map.get(10), Some((10, 7)));
/// assert!(!map.insert((20, 9)));
/// assert_eq!(map.iter().collect::<Vec<_>>(), [(10, 7), (20, 9), (30, 3)]);
/// assert_eq!(map.remove_batch(&[10, 11]), 1);
/// ```
pub type CpmaMap = Pma<DeltaMapLeaf>;

/// The uncompressed packed memory array (the baseline).
pub type PlainPma = Pma<PlainLeaf>;

/// Errors of the PMA layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PmaError {
    /// A configuration value outside its allowed range.
    #[error("invalid PMA configuration: {field} = {value}: {reason}")]
    InvalidConfig {
        /// The field's name.
        field: &'static str,
        /// The rejected value.
        value: f64,
        /// What the allowed range is.
        reason: &'static str,
    },
    /// Input to `from_sorted` that is not sorted.
    #[error("keys are not sorted: key {key} at index {index} is smaller than its predecessor")]
    NotSorted {
        /// Index of the first out-of-order key.
        index: usize,
        /// Its value.
        key: u64,
    },
    /// A broken internal invariant, found by `check_invariants`.
    #[error("PMA invariant broken at leaf {leaf}: {what}")]
    Invariant {
        /// The leaf where it was found.
        leaf: usize,
        /// What was wrong.
        what: String,
    },
}

/// A batch-parallel packed memory array of `u64` keys (a sorted set).
///
/// `C` picks the leaf encoding: [`Cpma`] (compressed, the default) or [`PlainPma`].
///
/// # Examples
/// ```
/// use packgraph::pma::Cpma;
///
/// let mut set = Cpma::new();
/// assert_eq!(set.insert_batch(&[30, 10, 20, 10]), 3);
/// assert!(set.insert(15));
/// assert_eq!(set.successor(16), Some(20));
/// assert_eq!(set.iter().collect::<Vec<_>>(), [10, 15, 20, 30]);
/// assert_eq!(set.remove_batch(&[10, 11]), 1);
/// assert_eq!(set.len(), 3);
/// ```
pub struct Pma<C: LeafCodec = DeltaLeaf> {
    config: PmaConfig,
    leaf_bytes: usize,
    /// log2 of the leaves per page.
    page_shift: u32,
    num_leaves: usize,
    /// The page table: shared with every clone (snapshot) until one of them writes.
    table: Arc<Table>,
    len: usize,
    /// Sum of the leaves' used bytes.
    total_used: usize,
    /// Pages this handle copied because a clone shared them (see [`Pma::page_copies`]).
    page_copies: AtomicUsize,
    /// Shared by every version cloned from one build: a count of 1 means no other version
    /// exists, so no page can be shared and writes skip the per-page check (soundness
    /// rests on it, see `Pma::leaves_mut`). Declared after `table`, so that a version being
    /// dropped lets go of its pages before its lineage; never downgraded to a weak pointer.
    /// Also holds the spare table a dropped version leaves for the next copy ([`Lineage`]).
    lineage: Arc<Lineage>,
    /// Changes logged for a caller ([`Pma::start_log`]); `None` when not logging.
    log: Option<Box<log::ChangeLog>>,
    codec: PhantomData<fn() -> C>,
}

/// A fixed run of `1 << page_shift` leaves' bytes (fewer in the last page) and
/// `PADDING_BYTES`: the unit of sharing between versions. One allocation, reached in one
/// hop from the page table.
pub(crate) type Page = Arc<[u8]>;

/// A new zeroed page of `leaves` leaves (made in place: one allocation, no copy).
fn empty_page(leaves: usize, leaf_bytes: usize) -> Page {
    std::iter::repeat_n(0u8, leaves * leaf_bytes + PADDING_BYTES).collect()
}

pub(crate) use self::table::Table;

/// What the versions cloned from one build share: the page table of the version dropped
/// last, when nothing else held it, kept for the next write that must copy a shared table.
///
/// A version's page table holds one reference to each supergroup; a copy of a table counts
/// every supergroup once more, and dropping a table counts each down again, so a writer
/// publishing versions one after another paid a count up and a count down per supergroup
/// and version, nearly all on supergroups the two versions share. A version dropped with a
/// table no other version holds ([`Pma`]'s `Drop`) leaves the table here instead; the
/// writer's next copy takes it and changes only the entries where it differs from the
/// table being copied ([`Table::assign`]): its references pass to the copy.
///
/// The spare's references keep the supergroups, groups and pages it reaches alive until
/// the next copy (at most one dropped version's worth). Nothing ever reads through them
/// but that copy, which compares pointers, so a writer that finds no other version alive
/// writes in place what the spare also reaches (see `LeavesMut::private`).
#[derive(Default)]
pub(crate) struct Lineage {
    spare: Mutex<Option<Arc<Table>>>,
}

impl Lineage {
    /// Keeps `table`, which only the version being dropped holds, as the spare (letting go
    /// of the previous spare, outside the lock). Skipped while another thread holds the
    /// slot: dropping the table is then only slower.
    fn keep_spare(&self, table: &Arc<Table>) {
        let previous = match self.spare.try_lock() {
            Ok(mut slot) => slot.replace(Arc::clone(table)),
            Err(_) => return,
        };
        drop(previous);
    }

    /// The spare table, if a dropped version left one.
    fn take_spare(&self) -> Option<Arc<Table>> {
        // The slot's state is valid at every step, so a panic elsewhere cannot break it.
        self.spare
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// The page table in `table` for writing: a copy when another version shares it (one
/// pointer and one head per supergroup), made from `lineage`'s spare table when a dropped
/// version left one, so that only the entries that differ change their counts.
fn table_mut<'t>(table: &'t mut Arc<Table>, lineage: &Lineage) -> &'t mut Table {
    if Arc::strong_count(table) > 1 {
        if let Some(mut spare) = lineage.take_spare() {
            // Unique unless the version that left it is still letting go of its own
            // reference; then it is simply dropped.
            if let Some(copy) = Arc::get_mut(&mut spare) {
                copy.assign(table);
                *table = spare;
            }
        }
    }
    Arc::make_mut(table)
}

impl<C: LeafCodec> Drop for Pma<C> {
    /// Leaves this version's page table to the lineage's next copy ([`Lineage`]) when no
    /// other version holds it and another version is alive to write.
    fn drop(&mut self) {
        if Arc::strong_count(&self.lineage) > 1 && Arc::strong_count(&self.table) == 1 {
            self.lineage.keep_spare(&self.table);
        }
    }
}

/// Where a [`Pma`]'s bytes go (see [`Pma::memory`]); the parts add up to
/// [`Pma::size_in_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemorySplit {
    /// Encoded keys (and values): the used bytes of the leaves.
    pub data: usize,
    /// Free bytes in the leaves, page padding and allocation headers.
    pub slack: usize,
    /// The page table with the per-leaf heads and sizes, and the handle itself.
    pub table: usize,
}

/// How a [`Pma`]'s pages are shared with other versions (clones) of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PageStats {
    /// Pages in this version.
    pub pages: usize,
    /// Of those, pages some other version also holds.
    pub shared: usize,
    /// Pages this handle has copied since it was created because another version shared
    /// them (a write to an unshared page happens in place and is not counted).
    pub copied: usize,
    /// Bytes per page (the last may hold fewer leaves).
    pub page_bytes: usize,
}

impl<C: LeafCodec> Clone for Pma<C> {
    /// A new version sharing every page: O(1), copies no key data. The first write to either
    /// copies the top level of the page table (one pointer per supergroup) and then each
    /// supergroup, group and page it touches, once.
    fn clone(&self) -> Self {
        Self {
            config: self.config.clone(),
            leaf_bytes: self.leaf_bytes,
            page_shift: self.page_shift,
            num_leaves: self.num_leaves,
            table: Arc::clone(&self.table),
            len: self.len,
            total_used: self.total_used,
            page_copies: AtomicUsize::new(0),
            lineage: Arc::clone(&self.lineage),
            log: None,
            codec: PhantomData,
        }
    }
}

impl<C: LeafCodec> std::fmt::Debug for Pma<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct(C::NAME)
            .field("len", &self.len)
            .field("num_leaves", &self.num_leaves())
            .field("leaf_bytes", &self.leaf_bytes)
            .field("used_bytes", &self.total_used)
            .finish()
    }
}

impl<C: LeafCodec> Default for Pma<C> {
    fn default() -> Self {
        Self::new()
    }
}

impl<C: LeafCodec> Pma<C> {
    /// An empty set with the default configuration.
    pub fn new() -> Self {
        Self::build(PmaConfig::default(), &[])
    }

    /// An empty set with `config`.
    ///
    /// # Errors
    /// [`PmaError::InvalidConfig`] if a field is out of range.
    pub fn with_config(config: PmaConfig) -> Result<Self, PmaError> {
        config.validate_for_slack(C::SLACK)?;
        Ok(Self::build(config, &[]))
    }

    /// Builds a set (or map) from items with keys in non-decreasing order (of equal keys the
    /// last is kept).
    ///
    /// # Errors
    /// [`PmaError::NotSorted`] at the first key smaller than its predecessor.
    pub fn from_sorted(items: &[C::Item]) -> Result<Self, PmaError> {
        Self::from_sorted_with_config(items, PmaConfig::default())
    }

    /// [`Pma::from_sorted`] with a configuration.
    ///
    /// # Errors
    /// [`PmaError::NotSorted`] or [`PmaError::InvalidConfig`].
    pub fn from_sorted_with_config(items: &[C::Item], config: PmaConfig) -> Result<Self, PmaError> {
        config.validate_for_slack(C::SLACK)?;
        if let Some(index) = items.windows(2).position(|w| C::key(w[1]) < C::key(w[0])) {
            return Err(PmaError::NotSorted {
                index: index + 1,
                key: C::key(items[index + 1]),
            });
        }
        let density = config.load_density();
        if items.windows(2).any(|w| C::key(w[0]) == C::key(w[1])) {
            let unique = batch::sorted_unique_items::<C>(items);
            return Ok(Self::build_at(config, &unique, density));
        }
        Ok(Self::build_at(config, items, density))
    }

    /// Builds a set (or map) from items in any order; of items with equal keys the last is
    /// kept.
    pub fn from_unsorted(items: &[C::Item]) -> Self {
        Self::build(
            PmaConfig::default(),
            &batch::sorted_unique_items::<C>(items),
        )
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Every byte this version holds (shared pages counted in full): pages with their
    /// padding, head and size arrays, the page table, itself.
    pub fn size_in_bytes(&self) -> usize {
        // An `Arc<[u8]>` allocation: two reference counts, then the bytes.
        self.table.pages().map(|p| p.len() + 16).sum::<usize>()
            + self.table.size_in_bytes()
            + size_of::<Table>()
            + size_of::<Self>()
    }

    /// [`Pma::size_in_bytes`] split by what the bytes hold.
    pub fn memory(&self) -> MemorySplit {
        let pages: usize = self.table.pages().map(|p| p.len() + 16).sum();
        let total = self.size_in_bytes();
        MemorySplit {
            data: self.total_used,
            slack: pages - self.total_used,
            table: total - pages,
        }
    }

    /// Number of leaves.
    pub fn num_leaves(&self) -> usize {
        self.num_leaves
    }

    /// Leaves per page.
    pub fn page_leaves(&self) -> usize {
        1 << self.page_shift
    }

    /// Number of pages.
    pub fn num_pages(&self) -> usize {
        self.num_leaves.div_ceil(self.page_leaves())
    }

    /// How this version's pages are shared with other versions, and how many this handle
    /// copied. O(pages).
    pub fn page_stats(&self) -> PageStats {
        PageStats {
            pages: self.num_pages(),
            // A page held by this table alone has count 1; a table, supergroup or group
            // shared with a clone shares all its pages. With no other version alive, only
            // the lineage's spare table may hold more references: no version shares them.
            shared: if Arc::strong_count(&self.lineage) == 1 {
                0
            } else if Arc::strong_count(&self.table) > 1 {
                self.num_pages()
            } else {
                let group_shared = |g: &Arc<table::Group>| {
                    if Arc::strong_count(g) > 1 {
                        g.pages.len()
                    } else {
                        g.pages.iter().filter(|p| Arc::strong_count(p) > 1).count()
                    }
                };
                self.table
                    .supers
                    .iter()
                    .map(|s| {
                        if Arc::strong_count(s) > 1 {
                            s.groups.iter().map(|g| g.pages.len()).sum()
                        } else {
                            s.groups.iter().map(group_shared).sum::<usize>()
                        }
                    })
                    .sum()
            },
            copied: self.page_copies.load(Ordering::Relaxed),
            page_bytes: self.page_leaves() * self.leaf_bytes,
        }
    }

    /// Checks the lineage's spare table, if any: not this version's, and its top level's
    /// two arrays of one length.
    fn check_spare(&self) -> Result<(), PmaError> {
        let slot = self.lineage.spare.lock();
        let slot = slot.unwrap_or_else(PoisonError::into_inner);
        let broken = slot.as_ref().is_some_and(|spare| {
            Arc::ptr_eq(spare, &self.table) || spare.supers.len() != spare.super_heads.len()
        });
        drop(slot);
        if broken {
            return Err(PmaError::Invariant {
                leaf: 0,
                what: "the spare page table is this version's or malformed".into(),
            });
        }
        Ok(())
    }

    /// Pages copied so far by this handle because a clone shared them.
    pub fn page_copies(&self) -> usize {
        self.page_copies.load(Ordering::Relaxed)
    }

    /// The leaves' bytes, one slice per stored page (`PmaConfig::page_bytes`, the unit of
    /// snapshot files and checkpoints), without padding. In-memory pages are smaller at
    /// the default sizes: then the first call makes one contiguous copy of the leaves,
    /// kept with this version's page table until a write or the last version sharing the
    /// table lets go of it.
    pub(crate) fn stored_pages(&self) -> Vec<&[u8]> {
        self.table.stored(
            self.num_leaves,
            self.leaf_bytes,
            self.page_shift,
            self.config.stored_page_shift(self.leaf_bytes),
        )
    }

    /// Whether this version and `other` share their page at `page` (the same memory).
    pub fn shares_page(&self, other: &Self, page: usize) -> bool {
        let (mine, theirs) = (
            self.table.page(page, self.page_shift),
            other.table.page(page, other.page_shift),
        );
        match (mine, theirs) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Bytes per leaf.
    pub fn leaf_bytes(&self) -> usize {
        self.leaf_bytes
    }

    /// Bytes of encoded keys (the numerator of the root's density).
    pub fn used_bytes(&self) -> usize {
        self.total_used
    }

    /// Sets [`PmaConfig::load_density`], the density of the next bulk build into this
    /// array while it is empty (`None`: the growth density).
    pub(crate) fn set_load_density(&mut self, density: Option<f64>) {
        debug_assert!(density.is_none_or(|d| d > 0.0 && d <= 1.0));
        self.config.load_density = density;
    }

    /// The configuration.
    pub fn config(&self) -> &PmaConfig {
        &self.config
    }

    /// The leaf `j` and everything after it in its page, padding included (for reads; see
    /// `leaf/mod.rs`).
    #[inline(always)]
    fn leaf(&self, j: usize) -> &[u8] {
        let page = self.table.page_of_leaf(j, self.page_shift);
        &page[(j & self.page_mask()) * self.leaf_bytes..]
    }

    #[inline(always)]
    fn page_mask(&self) -> usize {
        (1 << self.page_shift) - 1
    }

    #[inline(always)]
    fn leaf_used(&self, j: usize) -> usize {
        self.table.used(j) as usize
    }

    #[inline(always)]
    fn head(&self, j: usize) -> u64 {
        self.table.head(j)
    }

    /// The leaf a key belongs in: the last whose head is at most `key` (leaf 0 if none),
    /// stepping back over trailing empty leaves.
    #[inline]
    pub(crate) fn find_leaf(&self, key: u64) -> usize {
        let mut j = self.leaves().target(key);
        while j > 0 && self.leaf_used(j) == 0 {
            j -= 1;
        }
        j
    }

    /// The first non-empty leaf at or after `j`.
    fn next_nonempty(&self, mut j: usize) -> Option<usize> {
        while j < self.num_leaves() {
            if self.leaf_used(j) > 0 {
                return Some(j);
            }
            j += 1;
        }
        None
    }
}

impl<C: LeafCodec> FromIterator<C::Item> for Pma<C> {
    fn from_iter<I: IntoIterator<Item = C::Item>>(iter: I) -> Self {
        let keys: Vec<C::Item> = iter.into_iter().collect();
        Self::from_unsorted(&keys)
    }
}
