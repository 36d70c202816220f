//! A version's page table, persistent, in three levels: leaves are grouped into pages (the
//! unit that versions share and copy for leaf bytes, `PmaConfig::share_bytes`: from one
//! leaf up), pages into groups and groups into supergroups (the units they
//! share and copy for the table itself). A group holds its pages' pointers and its leaves'
//! heads and sizes; a supergroup holds its groups' pointers and first heads; the table holds
//! one pointer and the first head per supergroup.
//!
//! A new version shares the whole table. Its first write copies the top level, then each
//! supergroup it touches (one pointer and one head per group), each group it touches (its
//! page pointers and 12 bytes per leaf), then each page it touches. A write touches one
//! group per changed page (or per run of changed pages) but shares supergroups with its
//! neighbours, so groups are kept small (8 pages). The top level's copy is made from the
//! table of a dropped version when one is spare (`Lineage` in `mod.rs`,
//! [`Table::assign`]): a compare per supergroup and a reference count only where the two
//! differ. A supergroup's copy counts every group it points to once more (a cache miss
//! each, and as many again when the old one is dropped), so supergroups get fewer of the
//! page count's bits than the top level ([`TOP_EXTRA_SHIFT`]): a one-key update after a
//! snapshot copies one page, 8 group entries, a supergroup of about √(pages / 8) / 4 and
//! the top level of about 4·√(pages / 8) entries (Aspen, section 5.2, shares the same way
//! through its trees).
//!
//! Search stays flat binary searches, one a level: over the supergroups' first heads, one
//! supergroup's group heads, then one group's leaf heads. A leaf's bytes, head and size
//! are found in O(1) by shifts and masks (all but the last supergroup, group and page are
//! full).
//!
//! A table also keeps, once asked for, its leaves' bytes in one contiguous copy cut into
//! stored pages ([`Table::stored`]): the form snapshot files and checkpoints write, which is
//! coarser than the in-memory pages. A write drops it (`Pma::leaves_mut`); a clone starts
//! without it.

use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::raw::hint_counts;
use super::{empty_page, pool, Page};

/// Pages per group (as a power of two): a write copies a group per leaf it changes, 28
/// bytes a page, so groups stay small.
const GROUP_PAGE_SHIFT: u32 = 3;

/// Most groups per supergroup (as a power of two): beyond this a level's copy costs more
/// than the level above's.
const MAX_LEVEL_SHIFT: u32 = 10;

/// Bits of the group count the top level takes before the rest is split evenly between
/// it and the supergroups: a supergroup's copy costs a reference count (a cache miss) per
/// group, the top level's, made from a spare table, a compare per supergroup. Set by the
/// one-edge commit rows of `packgraph-bench snapshot` (at 30 M arcs: supergroups of 16
/// groups under a top level of 220 entries, against 64 under 55).
const TOP_EXTRA_SHIFT: u32 = 4;

/// A run of `1 << group_shift` leaves (fewer in the last group): their pages, heads and
/// sizes.
#[derive(Default)]
pub(crate) struct Group {
    pub(crate) pages: Vec<Page>,
    /// Each leaf's first key; see the module invariants of `pma` for empty leaves.
    pub(crate) heads: Vec<u64>,
    /// Bytes used in each leaf; 0 for an empty leaf.
    pub(crate) used: Vec<u32>,
}

/// A run of `1 << (super_shift - group_shift)` groups (fewer in the last supergroup): their
/// pointers and first heads.
#[derive(Default)]
pub(crate) struct Super {
    pub(crate) groups: Vec<Arc<Group>>,
    /// Each group's first head (`groups[k].heads[0]`), searched before a group's heads.
    pub(crate) group_heads: Vec<u64>,
}

impl Clone for Group {
    /// A new group sharing every page: their counts hinted first ([`hint_counts`]).
    fn clone(&self) -> Self {
        hint_counts(&self.pages);
        Self {
            pages: self.pages.clone(),
            heads: self.heads.clone(),
            used: self.used.clone(),
        }
    }
}

impl Drop for Group {
    /// Hints the pages' counts ([`hint_counts`]), then hands the pages to the pool, which
    /// keeps those no other group holds for the next copies (`pool.rs`).
    fn drop(&mut self) {
        hint_counts(&self.pages);
        pool::recycle(&mut self.pages);
    }
}

impl Clone for Super {
    /// A new supergroup sharing every group: their counts hinted first ([`hint_counts`]).
    fn clone(&self) -> Self {
        hint_counts(&self.groups);
        Self {
            groups: self.groups.clone(),
            group_heads: self.group_heads.clone(),
        }
    }
}

impl Drop for Super {
    /// Hints the groups' counts before the fields drop and decrement them ([`hint_counts`]).
    fn drop(&mut self) {
        hint_counts(&self.groups);
    }
}

/// The page table of one version.
pub(crate) struct Table {
    /// log2 of the leaves per group.
    pub(crate) group_shift: u32,
    /// log2 of the leaves per supergroup.
    pub(crate) super_shift: u32,
    pub(crate) supers: Vec<Arc<Super>>,
    /// Each supergroup's first head (`supers[s].group_heads[0]`), searched first.
    pub(crate) super_heads: Vec<u64>,
    /// Every leaf's bytes in order, contiguous, without padding ([`Table::stored`]): made
    /// on demand, dropped by every write (`Pma::leaves_mut`), never cloned.
    pub(crate) stored_copy: OnceLock<Box<[u8]>>,
}

impl Clone for Table {
    /// The levels (pointers to supergroups, shared); not the stored copy, which the clone
    /// is about to outdate.
    fn clone(&self) -> Self {
        hint_counts(&self.supers);
        Self {
            group_shift: self.group_shift,
            super_shift: self.super_shift,
            supers: self.supers.clone(),
            super_heads: self.super_heads.clone(),
            stored_copy: OnceLock::new(),
        }
    }
}

/// log2 of the pages per group and of the groups per supergroup for a table of
/// `num_pages` pages: groups of [`GROUP_PAGE_SHIFT`], then, past the top level's
/// [`TOP_EXTRA_SHIFT`] bits, about half the remaining bits of the page count each for the
/// supergroups and the top level.
fn level_shifts(num_pages: usize) -> (u32, u32) {
    let bits = usize::BITS - num_pages.max(1).saturating_sub(1).leading_zeros();
    let pages = bits.min(GROUP_PAGE_SHIFT);
    let groups = (bits - pages)
        .saturating_sub(TOP_EXTRA_SHIFT)
        .div_ceil(2)
        .min(MAX_LEVEL_SHIFT);
    (pages, groups)
}

impl Table {
    /// The table of `pages` (leaves of `1 << page_shift` a page) with the flat per-leaf
    /// arrays `heads` and `used`.
    pub(crate) fn new(pages: Vec<Page>, heads: Vec<u64>, used: Vec<u32>, page_shift: u32) -> Self {
        debug_assert_eq!(heads.len(), used.len());
        let (pages_shift, groups_shift) = level_shifts(pages.len());
        let group_shift = page_shift + pages_shift;
        let super_shift = group_shift + groups_shift;
        let group_leaves = 1usize << group_shift;
        let mut pages = pages.into_iter();
        let mut groups = heads
            .chunks(group_leaves)
            .zip(used.chunks(group_leaves))
            .map(|(heads, used)| {
                Arc::new(Group {
                    pages: pages.by_ref().take(1 << pages_shift).collect(),
                    heads: heads.to_vec(),
                    used: used.to_vec(),
                })
            })
            .peekable();
        let mut supers = Vec::new();
        while groups.peek().is_some() {
            let groups: Vec<Arc<Group>> = groups.by_ref().take(1 << groups_shift).collect();
            let group_heads = groups.iter().map(|g| g.heads[0]).collect();
            supers.push(Arc::new(Super {
                groups,
                group_heads,
            }));
        }
        let super_heads = supers.iter().map(|s| s.group_heads[0]).collect();
        Self {
            group_shift,
            super_shift,
            supers,
            super_heads,
            stored_copy: OnceLock::new(),
        }
    }

    /// Makes this table a copy of `other` (its levels; not the stored copy), changing only
    /// the entries that differ: a supergroup both hold keeps this table's reference, which
    /// passes to the copy, so a table a few writes apart from `other` costs a few
    /// reference counts and a compare per supergroup instead of a count up per supergroup
    /// now and a count down when `other`'s holder drops it (see `Lineage` in `mod.rs`).
    pub(crate) fn assign(&mut self, other: &Table) {
        self.group_shift = other.group_shift;
        self.super_shift = other.super_shift;
        self.supers.truncate(other.supers.len());
        for (mine, theirs) in self.supers.iter_mut().zip(&other.supers) {
            if !Arc::ptr_eq(mine, theirs) {
                *mine = Arc::clone(theirs);
            }
        }
        let kept = self.supers.len();
        self.supers.extend(other.supers[kept..].iter().cloned());
        self.super_heads.clear();
        self.super_heads.extend_from_slice(&other.super_heads);
        self.stored_copy = OnceLock::new();
    }

    /// A table of `num_leaves` empty leaves of `leaf_bytes`, `1 << page_shift` a page.
    pub(crate) fn empty(num_leaves: usize, leaf_bytes: usize, page_shift: u32) -> Self {
        let num_pages = num_leaves.div_ceil(1 << page_shift);
        let pages = (0..num_pages)
            .map(|p| {
                let leaves = (num_leaves - (p << page_shift)).min(1 << page_shift);
                empty_page(leaves, leaf_bytes)
            })
            .collect();
        Self::new(
            pages,
            vec![u64::MAX; num_leaves],
            vec![0; num_leaves],
            page_shift,
        )
    }

    /// The group holding leaf `j` and `j`'s index in it.
    #[inline(always)]
    pub(crate) fn group_of(&self, j: usize) -> (&Group, usize) {
        let groups_mask = (1 << (self.super_shift - self.group_shift)) - 1;
        let sup = &self.supers[j >> self.super_shift];
        (
            &sup.groups[(j >> self.group_shift) & groups_mask],
            j & ((1 << self.group_shift) - 1),
        )
    }

    /// Hints leaf `j`'s group (the pointers to its pages and sizes) into the cache.
    #[inline(always)]
    pub(crate) fn prefetch_group(&self, j: usize) {
        let groups_mask = (1 << (self.super_shift - self.group_shift)) - 1;
        if let Some(sup) = self.supers.get(j >> self.super_shift) {
            if let Some(group) = sup.groups.get((j >> self.group_shift) & groups_mask) {
                super::raw::prefetch_addr(Arc::as_ptr(group).cast());
            }
        }
    }

    /// Hints leaf `j`'s page pointer and size into the cache (its group should be there).
    #[inline(always)]
    pub(crate) fn prefetch_slots(&self, j: usize, page_shift: u32) {
        let (group, local) = self.group_of(j);
        super::raw::prefetch_addr(
            group
                .pages
                .as_ptr()
                .wrapping_add(local >> page_shift)
                .cast(),
        );
        super::raw::prefetch_addr(group.used.as_ptr().wrapping_add(local).cast());
    }

    /// Leaf `j`'s head.
    #[inline(always)]
    pub(crate) fn head(&self, j: usize) -> u64 {
        let (group, local) = self.group_of(j);
        group.heads[local]
    }

    /// Leaf `j`'s used bytes.
    #[inline(always)]
    pub(crate) fn used(&self, j: usize) -> u32 {
        let (group, local) = self.group_of(j);
        group.used[local]
    }

    /// The page holding leaf `j` (leaves of `1 << page_shift` a page).
    #[inline(always)]
    pub(crate) fn page_of_leaf(&self, j: usize, page_shift: u32) -> &Page {
        let (group, local) = self.group_of(j);
        &group.pages[local >> page_shift]
    }

    /// Page `p` (pages of `1 << page_shift` leaves), if there is one.
    pub(crate) fn page(&self, p: usize, page_shift: u32) -> Option<&Page> {
        let (pages_per_group, groups_per_super) = (
            self.group_shift - page_shift,
            self.super_shift - self.group_shift,
        );
        let sup = self.supers.get(p >> (pages_per_group + groups_per_super))?;
        let group = sup
            .groups
            .get((p >> pages_per_group) & ((1 << groups_per_super) - 1))?;
        group.pages.get(p & ((1 << pages_per_group) - 1))
    }

    /// The leaves' bytes cut into stored pages of `1 << stored_shift` leaves (the last may
    /// hold fewer), without padding: the pages themselves when they are that size,
    /// otherwise slices of a contiguous copy made on the first call (in parallel) and kept
    /// until the table is written or dropped.
    pub(crate) fn stored(
        &self,
        num_leaves: usize,
        leaf_bytes: usize,
        page_shift: u32,
        stored_shift: u32,
    ) -> Vec<&[u8]> {
        if stored_shift == page_shift {
            return self
                .pages()
                .map(|p| &p[..p.len() - super::PADDING_BYTES])
                .collect();
        }
        let bytes = self.stored_copy.get_or_init(|| {
            let mut bytes = vec![0u8; num_leaves * leaf_bytes];
            let page_leaves = 1usize << page_shift;
            let pages: Vec<&Page> = self.pages().collect();
            bytes
                .par_chunks_mut(page_leaves * leaf_bytes)
                .zip(pages.par_iter())
                .for_each(|(out, page)| out.copy_from_slice(&page[..out.len()]));
            bytes.into_boxed_slice()
        });
        bytes.chunks(leaf_bytes << stored_shift).collect()
    }

    /// Every group, in order.
    pub(crate) fn groups(&self) -> impl Iterator<Item = &Arc<Group>> + '_ {
        self.supers.iter().flat_map(|s| s.groups.iter())
    }

    /// Every page, in order.
    pub(crate) fn pages(&self) -> impl Iterator<Item = &Page> + '_ {
        self.groups().flat_map(|g| g.pages.iter())
    }

    /// Number of pages.
    pub(crate) fn num_pages(&self) -> usize {
        self.groups().map(|g| g.pages.len()).sum()
    }

    /// Number of leaves.
    pub(crate) fn num_leaves(&self) -> usize {
        self.groups().map(|g| g.used.len()).sum()
    }

    /// Every leaf's head, flat.
    pub(crate) fn heads(&self) -> Vec<u64> {
        self.groups()
            .flat_map(|g| g.heads.iter().copied())
            .collect()
    }

    /// Every leaf's used bytes, flat.
    pub(crate) fn used_all(&self) -> Vec<u32> {
        self.groups().flat_map(|g| g.used.iter().copied()).collect()
    }

    /// Bytes of the table itself: the top level and every supergroup's and group's arrays
    /// (not the pages' bytes).
    pub(crate) fn size_in_bytes(&self) -> usize {
        let supers: usize = self.supers.iter().map(|s| super_bytes(s)).sum();
        let groups: usize = self.groups().map(|g| group_bytes(g)).sum();
        top_bytes(self) + supers + groups
    }

    /// What this table holds apart from `base` (a table of the same shape): the bytes of
    /// its levels that the two do not share (counted as [`Table::size_in_bytes`] counts
    /// them), and `f(first_page, mine, theirs)` called for each group they do not share,
    /// in order. O(supergroups + groups not shared).
    pub(crate) fn unshared(
        &self,
        base: &Table,
        page_shift: u32,
        mut f: impl FnMut(usize, &Group, &Group),
    ) -> usize {
        let mut bytes = top_bytes(self);
        let groups_per_super = 1usize << (self.super_shift - self.group_shift);
        let pages_per_group = 1usize << (self.group_shift - page_shift);
        for (s, (mine, theirs)) in self.supers.iter().zip(&base.supers).enumerate() {
            if Arc::ptr_eq(mine, theirs) {
                continue;
            }
            bytes += super_bytes(mine);
            for (k, (mine, theirs)) in mine.groups.iter().zip(&theirs.groups).enumerate() {
                if Arc::ptr_eq(mine, theirs) {
                    continue;
                }
                bytes += group_bytes(mine);
                f((s * groups_per_super + k) * pages_per_group, mine, theirs);
            }
        }
        bytes
    }
}

/// Bytes of a table's top level.
fn top_bytes(table: &Table) -> usize {
    use std::mem::size_of;
    table.supers.capacity() * size_of::<Arc<Super>>()
        + table.super_heads.capacity() * size_of::<u64>()
}

/// Bytes of a supergroup: the `Arc`'s two counts, its two vectors, their contents.
fn super_bytes(sup: &Super) -> usize {
    use std::mem::size_of;
    2 * size_of::<usize>()
        + size_of::<Super>()
        + sup.groups.capacity() * size_of::<Arc<Group>>()
        + sup.group_heads.capacity() * size_of::<u64>()
}

/// Bytes of a group: the `Arc`'s two counts, its three vectors, their contents (not the
/// pages' bytes).
fn group_bytes(group: &Group) -> usize {
    use std::mem::size_of;
    2 * size_of::<usize>()
        + size_of::<Group>()
        + group.pages.capacity() * size_of::<Page>()
        + group.heads.capacity() * size_of::<u64>()
        + group.used.capacity() * size_of::<u32>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_are_small_and_the_top_level_is_widest() {
        assert_eq!(level_shifts(0), (0, 0));
        assert_eq!(level_shifts(1), (0, 0));
        assert_eq!(level_shifts(2), (1, 0));
        assert_eq!(level_shifts(4), (2, 0));
        assert_eq!(level_shifts(9), (3, 0));
        assert_eq!(level_shifts(1 << 8), (3, 1));
        assert_eq!(level_shifts(1 << 15), (3, 4));
        assert_eq!(level_shifts(122_000), (3, 5));
        assert_eq!(
            level_shifts(usize::MAX),
            (GROUP_PAGE_SHIFT, MAX_LEVEL_SHIFT)
        );
    }

    #[test]
    fn flat_arrays_survive_the_grouping() {
        let cases = [(1, 0), (7, 1), (100, 2), (1000, 3), (4097, 0), (5000, 1)];
        for (num_leaves, page_shift) in cases {
            let mut table = Table::empty(num_leaves, 64, page_shift);
            assert_eq!(table.num_leaves(), num_leaves);
            assert_eq!(table.num_pages(), num_leaves.div_ceil(1 << page_shift));
            let heads: Vec<u64> = (0..num_leaves as u64).map(|j| j * 3).collect();
            let used: Vec<u32> = (0..num_leaves as u32).map(|j| j % 64).collect();
            let pages: Vec<Page> = table.pages().cloned().collect();
            table = Table::new(pages.clone(), heads.clone(), used.clone(), page_shift);
            assert_eq!(table.heads(), heads);
            assert_eq!(table.used_all(), used);
            for j in 0..num_leaves {
                assert_eq!((table.head(j), table.used(j)), (heads[j], used[j]));
                let page = table.page_of_leaf(j, page_shift);
                assert!(Arc::ptr_eq(page, &pages[j >> page_shift]));
                let leaves = (num_leaves - ((j >> page_shift) << page_shift)).min(1 << page_shift);
                assert_eq!(page.len(), leaves * 64 + super::super::PADDING_BYTES);
            }
            for (p, page) in pages.iter().enumerate() {
                assert!(Arc::ptr_eq(table.page(p, page_shift).unwrap(), page));
            }
            let past = table.supers.len() << (table.super_shift - page_shift);
            for p in [
                pages.len(),
                pages.len() + 1,
                past,
                usize::MAX >> 1,
                usize::MAX,
            ] {
                assert!(table.page(p, page_shift).is_none(), "page {p}");
            }
            for (s, sup) in table.supers.iter().enumerate() {
                assert_eq!(table.super_heads[s], sup.group_heads[0]);
                for (k, group) in sup.groups.iter().enumerate() {
                    assert_eq!(sup.group_heads[k], group.heads[0]);
                }
            }
            if num_leaves >= 1000 {
                assert!(
                    table.supers.len() > 1,
                    "{num_leaves} leaves in one supergroup"
                );
            }
        }
    }

    /// Every supergroup pointer of `table`.
    fn supers(table: &Table) -> Vec<*const Super> {
        table.supers.iter().map(Arc::as_ptr).collect()
    }

    #[test]
    fn assign_copies_the_levels_and_counts_only_what_differs() {
        let base = Table::empty(5_000, 64, 1);
        assert!(base.supers.len() > 4);
        let mut other = base.clone();
        // `other` replaces two supergroups, as a write under a snapshot does.
        for s in [1, 3] {
            other.supers[s] = Arc::new((*other.supers[s]).clone());
            other.super_heads[s] = s as u64;
        }
        let replaced = Arc::downgrade(&base.supers[3]);
        let mut spare = base;
        spare
            .stored_copy
            .get_or_init(|| vec![1u8; 3].into_boxed_slice());
        spare.assign(&other);
        assert_eq!(supers(&spare), supers(&other));
        assert_eq!(spare.super_heads, other.super_heads);
        assert_eq!(
            (spare.group_shift, spare.super_shift),
            (other.group_shift, other.super_shift)
        );
        assert!(spare.stored_copy.get().is_none());
        // Each supergroup is held by the two tables, no more; the replaced one is gone.
        assert!(other.supers.iter().all(|s| Arc::strong_count(s) == 2));
        assert!(replaced.upgrade().is_none());

        // A table of another shape or length is copied whole.
        for num_leaves in [100, 5_000, 40_000] {
            let other = Table::empty(num_leaves, 64, 0);
            let mut spare = Table::empty(5_000, 64, 1);
            spare.assign(&other);
            assert_eq!(supers(&spare), supers(&other));
            assert_eq!(spare.super_heads, other.super_heads);
            assert_eq!(spare.num_leaves(), num_leaves);
        }
    }

    /// Keys `0, 10, 20, ...` in small leaves, so that the table has many supergroups.
    fn paged() -> crate::pma::Cpma {
        let config = crate::pma::PmaConfig::two_leaf_pages();
        let keys: Vec<u64> = (0..20_000).map(|i| i * 10).collect();
        let pma = crate::pma::Cpma::from_sorted_with_config(&keys, config).unwrap();
        assert!(pma.table.supers.len() > 8);
        pma
    }

    #[test]
    fn a_dropped_version_leaves_its_table_for_the_next_copy() {
        let mut pma = paged();
        let old = pma.clone();
        pma.insert(5);
        let first = Arc::as_ptr(&pma.table);
        let held = pma.clone();
        // `old` alone holds its table: dropping it leaves the table spare, and the next
        // write under `held` copies the shared table into it.
        let spare = Arc::as_ptr(&old.table);
        drop(old);
        pma.insert(15);
        assert_eq!(Arc::as_ptr(&pma.table), spare);
        assert_eq!(Arc::as_ptr(&held.table), first);
        for version in [&pma, &held] {
            version.check_invariants().unwrap();
        }
        assert!(pma.contains(5) && pma.contains(15));
        assert!(held.contains(5) && !held.contains(15));
        // Each supergroup the two share is held twice; the write's own once.
        for (mine, theirs) in pma.table.supers.iter().zip(&held.table.supers) {
            let expected = if Arc::ptr_eq(mine, theirs) { 2 } else { 1 };
            assert_eq!(Arc::strong_count(mine), expected);
        }

        // A version dropped on another thread, and a write with no other version alive
        // (in place; the spare is kept, unread) before the next copy takes it.
        let spare = Arc::as_ptr(&held.table);
        std::thread::spawn(move || drop(held)).join().unwrap();
        pma.insert(25);
        assert_eq!(pma.page_stats().shared, 0);
        pma.check_invariants().unwrap();
        let held = pma.clone();
        pma.remove(25);
        assert_eq!(Arc::as_ptr(&pma.table), spare);
        pma.check_invariants().unwrap();
        held.check_invariants().unwrap();
        assert!(held.contains(25) && !pma.contains(25));
        assert!(pma.iter().eq(held.iter().filter(|&k| k != 25)));
    }

    #[test]
    fn a_table_still_held_elsewhere_is_not_left_spare() {
        let mut pma = paged();
        let a = pma.clone();
        let b = a.clone();
        drop(a);
        // `b` still shares the table: it was not left, so the copy is a new one.
        pma.insert(5);
        assert!(!Arc::ptr_eq(&pma.table, &b.table));
        b.check_invariants().unwrap();
        pma.check_invariants().unwrap();
        assert!(!b.contains(5) && pma.contains(5));
    }

    mod versions {
        use std::collections::BTreeSet;

        use proptest::collection::vec;
        use proptest::prelude::*;

        use crate::pma::{Cpma, PmaConfig};

        #[derive(Debug, Clone)]
        enum Op {
            Insert(Vec<u64>),
            Remove(Vec<u64>),
            Snapshot,
            Drop(usize),
            DropOnThread(usize),
        }

        fn op() -> impl Strategy<Value = Op> {
            prop_oneof![
                3 => vec(0u64..50_000, 1..40).prop_map(Op::Insert),
                2 => vec(0u64..50_000, 1..40).prop_map(Op::Remove),
                2 => Just(Op::Snapshot),
                2 => any::<usize>().prop_map(Op::Drop),
                1 => any::<usize>().prop_map(Op::DropOnThread),
            ]
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(32))]

            /// Versions taken, dropped (here or on another thread) and written after in
            /// any order, so that writes copy from spare tables of every age: each version
            /// keeps its contents and its invariants.
            #[test]
            fn versions_survive_spare_tables(
                start in vec(0u64..50_000, 0..3_000),
                ops in vec(op(), 1..40),
            ) {
                let config = PmaConfig::two_leaf_pages();
                let mut oracle: BTreeSet<u64> = start.iter().copied().collect();
                let sorted: Vec<u64> = oracle.iter().copied().collect();
                let mut pma = Cpma::from_sorted_with_config(&sorted, config).unwrap();
                let mut versions: Vec<(Cpma, BTreeSet<u64>)> = Vec::new();
                for op in ops {
                    match op {
                        Op::Insert(keys) => {
                            pma.insert_batch(&keys);
                            oracle.extend(keys);
                        }
                        Op::Remove(keys) => {
                            pma.remove_batch(&keys);
                            for k in keys {
                                oracle.remove(&k);
                            }
                        }
                        Op::Snapshot => versions.push((pma.clone(), oracle.clone())),
                        Op::Drop(i) if !versions.is_empty() => {
                            drop(versions.remove(i % versions.len()));
                        }
                        Op::DropOnThread(i) if !versions.is_empty() => {
                            let version = versions.remove(i % versions.len());
                            std::thread::spawn(move || drop(version)).join().unwrap();
                        }
                        _ => {}
                    }
                    pma.check_invariants().unwrap();
                    prop_assert!(pma.iter().eq(oracle.iter().copied()));
                    for (version, expected) in &versions {
                        version.check_invariants().unwrap();
                        prop_assert!(version.iter().eq(expected.iter().copied()));
                    }
                }
                drop(versions);
                prop_assert_eq!(pma.page_stats().shared, 0);
            }
        }
    }
}
