//! A version's page table, persistent: leaves are grouped into pages (the unit that versions
//! share and copy for leaf bytes) and pages into groups (the unit they share and copy for the
//! table itself). A group holds its pages' pointers and its leaves' heads and sizes; the
//! table holds one pointer and the first head per group.
//!
//! A new version shares the whole table. Its first write copies the top level (one pointer
//! and one head per group), then each group it touches (its page pointers and 12 bytes per
//! leaf), then each page it touches. With groups of about √pages pages, a small update
//! after a snapshot copies O(√pages) words rather than the O(leaves) that a flat table
//! costs (Aspen, section 5.2, shares the same way through its trees).
//!
//! Search stays two flat binary searches: over the groups' first heads, then over one
//! group's heads.

use std::sync::Arc;

use super::{empty_page, Page};

/// Most pages per group (as a power of two): beyond this a group's copy costs more than the
/// top level's.
const MAX_GROUP_PAGES_SHIFT: u32 = 10;

/// A run of `1 << group_shift` leaves (fewer in the last group): their pages, heads and
/// sizes.
#[derive(Clone, Default)]
pub(crate) struct Group {
    pub(crate) pages: Vec<Page>,
    /// Each leaf's first key; see the module invariants of `pma` for empty leaves.
    pub(crate) heads: Vec<u64>,
    /// Bytes used in each leaf; 0 for an empty leaf.
    pub(crate) used: Vec<u32>,
}

/// The page table of one version.
#[derive(Clone)]
pub(crate) struct Table {
    /// log2 of the leaves per group.
    pub(crate) group_shift: u32,
    pub(crate) groups: Vec<Arc<Group>>,
    /// Each group's first head (`groups[g].heads[0]`), searched before a group's heads.
    pub(crate) group_heads: Vec<u64>,
}

/// log2 of the pages per group for a table of `num_pages` pages: half the bits of the page
/// count, so that groups and the top level are about the same length.
fn group_pages_shift(num_pages: usize) -> u32 {
    let bits = usize::BITS - num_pages.max(1).saturating_sub(1).leading_zeros();
    bits.div_ceil(2).min(MAX_GROUP_PAGES_SHIFT)
}

impl Table {
    /// The table of `pages` (leaves of `1 << page_shift` a page) with the flat per-leaf
    /// arrays `heads` and `used`.
    pub(crate) fn new(pages: Vec<Page>, heads: Vec<u64>, used: Vec<u32>, page_shift: u32) -> Self {
        debug_assert_eq!(heads.len(), used.len());
        let pages_shift = group_pages_shift(pages.len());
        let group_shift = page_shift + pages_shift;
        let group_leaves = 1usize << group_shift;
        let mut pages = pages.into_iter();
        let groups: Vec<Arc<Group>> = heads
            .chunks(group_leaves)
            .zip(used.chunks(group_leaves))
            .map(|(heads, used)| {
                Arc::new(Group {
                    pages: pages.by_ref().take(1 << pages_shift).collect(),
                    heads: heads.to_vec(),
                    used: used.to_vec(),
                })
            })
            .collect();
        let group_heads = groups.iter().map(|g| g.heads[0]).collect();
        Self {
            group_shift,
            groups,
            group_heads,
        }
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

    #[inline(always)]
    fn leaf_mask(&self) -> usize {
        (1 << self.group_shift) - 1
    }

    /// Leaf `j`'s head.
    #[inline(always)]
    pub(crate) fn head(&self, j: usize) -> u64 {
        self.groups[j >> self.group_shift].heads[j & self.leaf_mask()]
    }

    /// Leaf `j`'s used bytes.
    #[inline(always)]
    pub(crate) fn used(&self, j: usize) -> u32 {
        self.groups[j >> self.group_shift].used[j & self.leaf_mask()]
    }

    /// The page holding leaf `j` (leaves of `1 << page_shift` a page).
    #[inline(always)]
    pub(crate) fn page_of_leaf(&self, j: usize, page_shift: u32) -> &Page {
        &self.groups[j >> self.group_shift].pages[(j & self.leaf_mask()) >> page_shift]
    }

    /// Page `p` (pages of `1 << page_shift` leaves), if there is one.
    pub(crate) fn page(&self, p: usize, page_shift: u32) -> Option<&Page> {
        let pages_shift = self.group_shift - page_shift;
        self.groups
            .get(p >> pages_shift)?
            .pages
            .get(p & ((1 << pages_shift) - 1))
    }

    /// Every page, in order.
    pub(crate) fn pages(&self) -> impl Iterator<Item = &Page> + '_ {
        self.groups.iter().flat_map(|g| g.pages.iter())
    }

    /// Number of pages.
    pub(crate) fn num_pages(&self) -> usize {
        self.groups.iter().map(|g| g.pages.len()).sum()
    }

    /// Number of leaves.
    pub(crate) fn num_leaves(&self) -> usize {
        self.groups.iter().map(|g| g.used.len()).sum()
    }

    /// Every leaf's head, flat.
    pub(crate) fn heads(&self) -> Vec<u64> {
        self.groups
            .iter()
            .flat_map(|g| g.heads.iter().copied())
            .collect()
    }

    /// Every leaf's used bytes, flat.
    pub(crate) fn used_all(&self) -> Vec<u32> {
        self.groups
            .iter()
            .flat_map(|g| g.used.iter().copied())
            .collect()
    }

    /// Bytes of the table itself: the top level and every group's arrays (not the pages'
    /// bytes).
    pub(crate) fn size_in_bytes(&self) -> usize {
        use std::mem::size_of;
        let top = self.groups.capacity() * size_of::<Arc<Group>>()
            + self.group_heads.capacity() * size_of::<u64>();
        let groups: usize = self
            .groups
            .iter()
            .map(|g| {
                // The `Arc`'s two counts and the group's three vectors, then their contents.
                2 * size_of::<usize>()
                    + size_of::<Group>()
                    + g.pages.capacity() * size_of::<Page>()
                    + g.heads.capacity() * size_of::<u64>()
                    + g.used.capacity() * size_of::<u32>()
            })
            .sum();
        top + groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_hold_about_the_square_root_of_the_pages() {
        assert_eq!(group_pages_shift(0), 0);
        assert_eq!(group_pages_shift(1), 0);
        assert_eq!(group_pages_shift(2), 1);
        assert_eq!(group_pages_shift(4), 1);
        assert_eq!(group_pages_shift(5), 2);
        assert_eq!(group_pages_shift(1 << 14), 7);
        assert_eq!(group_pages_shift(usize::MAX), MAX_GROUP_PAGES_SHIFT);
    }

    #[test]
    fn flat_arrays_survive_the_grouping() {
        for (num_leaves, page_shift) in [(1, 0), (7, 1), (100, 2), (1000, 3), (4097, 0)] {
            let mut table = Table::empty(num_leaves, 64, page_shift);
            assert_eq!(table.num_leaves(), num_leaves);
            assert_eq!(table.num_pages(), num_leaves.div_ceil(1 << page_shift));
            let heads: Vec<u64> = (0..num_leaves as u64).map(|j| j * 3).collect();
            let used: Vec<u32> = (0..num_leaves as u32).map(|j| j % 64).collect();
            let pages: Vec<Page> = table.pages().cloned().collect();
            table = Table::new(pages, heads.clone(), used.clone(), page_shift);
            assert_eq!(table.heads(), heads);
            assert_eq!(table.used_all(), used);
            for j in 0..num_leaves {
                assert_eq!((table.head(j), table.used(j)), (heads[j], used[j]));
                let page = table.page_of_leaf(j, page_shift);
                let leaves = (num_leaves - ((j >> page_shift) << page_shift)).min(1 << page_shift);
                assert_eq!(page.len(), leaves * 64 + super::super::PADDING_BYTES);
            }
            for (g, group) in table.groups.iter().enumerate() {
                assert_eq!(table.group_heads[g], group.heads[0]);
            }
        }
    }
}
