//! Pages of leaves as tasks see them: read-only and mutable views over a run of whole pages
//! with their leaves' heads and sizes, split at page boundaries to hand disjoint pages to
//! parallel tasks. Every write to leaf bytes goes through [`LeavesMut`], which copies a page
//! that another version shares before the first write to it (copy on write, see the
//! versions paragraph of `mod.rs`) and writes an unshared page in place.

use rayon::prelude::*;

use super::leaf::LeafCodec;
use super::raw::cow;
use super::{empty_page, Page, Pma, LEAF_GRAIN};
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;

/// A run of whole pages, read-only: leaf indices are local to the run.
#[derive(Clone, Copy)]
pub(super) struct Leaves<'a> {
    pub(super) leaf_bytes: usize,
    shift: u32,
    pages: &'a [Page],
    pub(super) heads: &'a [u64],
    pub(super) used: &'a [u32],
}

impl<'a> Leaves<'a> {
    pub(super) fn len(&self) -> usize {
        self.used.len()
    }

    /// The leaf `j` and the rest of its page, padding included.
    #[inline(always)]
    pub(super) fn leaf(&self, j: usize) -> &'a [u8] {
        &self.pages[j >> self.shift][(j & ((1 << self.shift) - 1)) * self.leaf_bytes..]
    }

    #[inline(always)]
    pub(super) fn used(&self, j: usize) -> usize {
        self.used[j] as usize
    }

    #[inline(always)]
    pub(super) fn head(&self, j: usize) -> u64 {
        self.heads[j]
    }

    /// Local index of the leaf `key` belongs in (the last with head <= key, else 0).
    pub(super) fn target(&self, key: u64) -> usize {
        self.heads
            .partition_point(|&head| head <= key)
            .saturating_sub(1)
    }

    /// [`Self::target`] for a key known to belong at or after leaf `from`: gallops forward
    /// (1, 2, 4, … leaves) and then searches the window, so the consecutive targets of a
    /// sorted batch cost O(log gap) reads near each other instead of a full binary search.
    pub(super) fn target_from(&self, from: usize, key: u64) -> usize {
        let heads = self.heads;
        let (mut lo, mut step) = (from, 1);
        let hi = loop {
            let probe = from + step;
            if probe >= heads.len() || heads[probe] > key {
                break probe.min(heads.len());
            }
            lo = probe;
            step *= 2;
        };
        lo + heads[lo..hi]
            .partition_point(|&head| head <= key)
            .saturating_sub(1)
    }
}

/// A run of whole pages borrowed mutably, with their leaves' heads and sizes; split (at page
/// boundaries) to hand disjoint pages to tasks. Leaf bytes are written through
/// [`LeavesMut::leaf_mut`] and [`LeavesMut::fill_range`], which copy a page that another
/// version shares before the first write to it (and write in place otherwise).
pub(super) struct LeavesMut<'a> {
    /// Global index of the first leaf.
    pub(super) first: usize,
    pub(super) leaf_bytes: usize,
    shift: u32,
    pages: &'a mut [Page],
    pub(super) heads: &'a mut [u64],
    pub(super) used: &'a mut [u32],
    copies: &'a AtomicUsize,
    /// No other version of the array exists, so every page in `pages` has no other `Arc`
    /// and writes skip the per-page check. Soundness rests on this: the `unsafe` calls of
    /// [`cow`] pass it on. Set only by [`Pma::leaves_mut`], which establishes it, and copied
    /// into both halves by [`LeavesMut::split_at_page`] (private to this module, so nothing
    /// else can set it).
    private: bool,
}

impl<'a> LeavesMut<'a> {
    pub(super) fn len(&self) -> usize {
        self.used.len()
    }

    pub(super) fn num_pages(&self) -> usize {
        self.pages.len()
    }

    pub(super) fn shift(&self) -> u32 {
        self.shift
    }

    /// The read-only view of the same leaves.
    pub(super) fn as_ref(&self) -> Leaves<'_> {
        Leaves {
            leaf_bytes: self.leaf_bytes,
            shift: self.shift,
            pages: self.pages,
            heads: self.heads,
            used: self.used,
        }
    }

    /// Pages `[0, p)` and `[p, num_pages)`.
    pub(super) fn split_at_page(self, p: usize) -> (Self, Self) {
        let mid = (p << self.shift).min(self.used.len());
        let (pages_l, pages_r) = self.pages.split_at_mut(p);
        let (heads_l, heads_r) = self.heads.split_at_mut(mid);
        let (used_l, used_r) = self.used.split_at_mut(mid);
        let left = LeavesMut {
            first: self.first,
            leaf_bytes: self.leaf_bytes,
            shift: self.shift,
            pages: pages_l,
            heads: heads_l,
            used: used_l,
            copies: self.copies,
            private: self.private,
        };
        let right = LeavesMut {
            first: self.first + mid,
            leaf_bytes: self.leaf_bytes,
            shift: self.shift,
            pages: pages_r,
            heads: heads_r,
            used: used_r,
            copies: self.copies,
            private: self.private,
        };
        (left, right)
    }

    /// The bytes of leaf `j` (exactly `leaf_bytes`), for writing: its page is copied first
    /// if another version shares it.
    pub(super) fn leaf_mut(&mut self, j: usize) -> &mut [u8] {
        let (lb, local) = (self.leaf_bytes, j & ((1 << self.shift) - 1));
        // SAFETY: `self.private` is true only if `Pma::leaves_mut` saw no other version (see
        // the field), so then no page of `self.pages`, this one included, has another `Arc`.
        let page = unsafe { cow(&mut self.pages[j >> self.shift], self.private, self.copies) };
        &mut page[local * lb..(local + 1) * lb]
    }

    /// Restores the empty-leaf head rule for the leaves in `range` and the empty leaves
    /// right before it, from the head of the leaf after it.
    pub(super) fn repair_heads(&mut self, range: std::ops::Range<usize>) {
        let mut next = self.heads.get(range.end).copied().unwrap_or(u64::MAX);
        for j in range.clone().rev() {
            if self.used[j] > 0 {
                next = self.heads[j];
            } else {
                self.heads[j] = next;
            }
        }
        for j in (0..range.start).rev() {
            if self.used[j] > 0 {
                break;
            }
            self.heads[j] = next;
        }
    }

    /// Calls `f(first_in_range, data, used, heads)` for each page's share of the local leaf
    /// range `range`, in parallel when the range is long; a shared page is copied first, or
    /// replaced by a fresh one when the range covers it whole. Returns the sum of `f`'s
    /// results.
    pub(super) fn fill_range(
        &mut self,
        range: std::ops::Range<usize>,
        f: impl Fn(usize, &mut [u8], &mut [u32], &mut [u64]) -> usize + Sync,
    ) -> usize {
        if range.is_empty() {
            return 0;
        }
        let (shift, lb, copies, private) = (self.shift, self.leaf_bytes, self.copies, self.private);
        let page_leaves = 1usize << shift;
        let first_page = range.start >> shift;
        let last_page = (range.end - 1) >> shift;
        let leaf_start = first_page << shift;
        let leaf_end = ((last_page + 1) << shift).min(self.used.len());
        let pages = &mut self.pages[first_page..=last_page];
        let used = &mut self.used[leaf_start..leaf_end];
        let heads = &mut self.heads[leaf_start..leaf_end];
        let fill_page = |(i, ((slot, used), heads)): PageShare<'_>| {
            let page_start = leaf_start + i * page_leaves;
            let leaves = used.len();
            let lo = range.start.max(page_start) - page_start;
            let hi = range.end.min(page_start + leaves) - page_start;
            let page = if !private && lo == 0 && hi == leaves && Arc::get_mut(slot).is_none() {
                copies.fetch_add(1, Ordering::Relaxed);
                *slot = empty_page(leaves, lb);
                Arc::get_mut(slot).expect("a new page is unique")
            } else {
                // SAFETY: `private` is `self.private`, true only if `Pma::leaves_mut` saw no
                // other version (see the field), so then `slot`'s page has no other `Arc`.
                unsafe { cow(slot, private, copies) }
            };
            f(
                page_start + lo - range.start,
                &mut page[lo * lb..hi * lb],
                &mut used[lo..hi],
                &mut heads[lo..hi],
            )
        };
        if range.len() <= 2 * LEAF_GRAIN {
            pages
                .iter_mut()
                .zip(used.chunks_mut(page_leaves))
                .zip(heads.chunks_mut(page_leaves))
                .enumerate()
                .map(fill_page)
                .sum()
        } else {
            pages
                .par_iter_mut()
                .zip(used.par_chunks_mut(page_leaves))
                .zip(heads.par_chunks_mut(page_leaves))
                .enumerate()
                .map(fill_page)
                .sum()
        }
    }
}

/// One page's slot with its leaves' sizes and heads, numbered, as `fill_range` visits them.
type PageShare<'s> = (usize, ((&'s mut Page, &'s mut [u32]), &'s mut [u64]));

impl<C: LeafCodec> Pma<C> {
    /// All leaves, read-only.
    pub(super) fn leaves(&self) -> Leaves<'_> {
        Leaves {
            leaf_bytes: self.leaf_bytes,
            shift: self.page_shift,
            pages: &self.table.pages,
            heads: &self.table.heads,
            used: &self.table.used,
        }
    }

    /// All leaves, borrowed mutably (copies the page table first if a clone shares it).
    pub(super) fn leaves_mut(&mut self) -> LeavesMut<'_> {
        // Establishes `LeavesMut::private`. Every version cloned from this build holds
        // `lineage`, and only cloning a version's table clones page pointers, so a count of
        // 1 means that no other version, and so no other `Arc` of any of our pages, exists;
        // `&mut self` means no clone is being made now, so it stays 1 while the view lives.
        // The acquire fence pairs with the release decrement of each version dropped
        // meanwhile (on any thread; it drops its table before its lineage), so its reads of
        // shared pages happen before our writes, as `Arc::get_mut` would ensure.
        let private = Arc::strong_count(&self.lineage) == 1;
        if private {
            fence(Ordering::Acquire);
        }
        let table = Arc::make_mut(&mut self.table);
        LeavesMut {
            first: 0,
            leaf_bytes: self.leaf_bytes,
            shift: self.page_shift,
            pages: &mut table.pages,
            heads: &mut table.heads,
            used: &mut table.used,
            copies: &self.page_copies,
            private,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Range;
    use std::sync::Arc;

    use super::LeavesMut;
    use crate::pma::spread::{gather, spread, SizedKeys};
    use crate::pma::{Cpma, DeltaLeaf, PmaConfig};

    /// 2,000 keys in leaves of 64 bytes, two leaves a page.
    fn paged() -> (Cpma, Vec<u64>) {
        let config = PmaConfig {
            leaf_bytes: Some(64),
            page_bytes: 128,
            upper_density_root: 0.6,
            lower_density_root: 0.2,
            lower_density_leaf: 0.05,
            ..PmaConfig::default()
        };
        let keys: Vec<u64> = (0..2_000).map(|i| i * 10).collect();
        let pma = Cpma::from_sorted_with_config(&keys, config).unwrap();
        assert_eq!(pma.page_leaves(), 2);
        assert!(pma.num_pages() > 10);
        (pma, keys)
    }

    fn page_addresses(pma: &Cpma) -> Vec<*const u8> {
        pma.table
            .pages
            .iter()
            .map(|p| Arc::as_ptr(p).cast())
            .collect()
    }

    /// Writes leaf `j`'s own bytes back through `leaf_mut`.
    fn rewrite_leaf(leaves: &mut LeavesMut<'_>, j: usize) {
        let leaf = leaves.leaf_mut(j);
        let bytes = leaf.to_vec();
        leaf.copy_from_slice(&bytes);
    }

    /// Gathers the leaves `range` and spreads them again, through `fill_range`.
    fn respread(leaves: &mut LeavesMut<'_>, range: Range<usize>) {
        let keys = gather::<DeltaLeaf>(leaves.as_ref(), leaves.first, range.clone(), &[]);
        spread(&SizedKeys::<DeltaLeaf>::new(&keys), leaves, range.clone());
        leaves.repair_heads(range);
    }

    /// Checks `pma` against `keys` after writes that bypassed its byte count.
    fn check(pma: &mut Cpma, keys: &[u64]) {
        pma.total_used = pma.table.used.iter().map(|&u| u as usize).sum();
        pma.check_invariants().unwrap();
        assert!(pma.iter().eq(keys.iter().copied()));
    }

    #[test]
    fn writes_copy_a_page_only_while_another_version_shares_it() {
        let (mut pma, keys) = paged();
        let start = page_addresses(&pma);
        // No other version: both write paths take the unchecked in-place branch of `cow`.
        let mut leaves = pma.leaves_mut();
        assert!(leaves.private);
        rewrite_leaf(&mut leaves, 7);
        respread(&mut leaves, 4..10);
        check(&mut pma, &keys);
        assert_eq!(
            (page_addresses(&pma), pma.page_copies()),
            (start.clone(), 0)
        );

        // A live version: the first write to a page copies it, the next writes in place.
        let old = pma.clone();
        let mut leaves = pma.leaves_mut();
        assert!(!leaves.private);
        rewrite_leaf(&mut leaves, 7);
        assert_eq!(pma.page_copies(), 1);
        let after_copy = page_addresses(&pma);
        assert_ne!(after_copy[3], start[3]);
        rewrite_leaf(&mut pma.leaves_mut(), 6);
        assert_eq!((page_addresses(&pma), pma.page_copies()), (after_copy, 1));
        // Spreading leaves 5..10: page 2 is shared and half covered (copied), page 3 is
        // this version's own (in place), page 4 is shared and covered whole (a fresh page).
        respread(&mut pma.leaves_mut(), 5..10);
        assert_eq!(pma.page_copies(), 3);
        check(&mut pma, &keys);
        let now = page_addresses(&pma);
        for p in 0..now.len() {
            assert_eq!(now[p] == start[p], !(2..5).contains(&p), "page {p}");
        }
        assert_eq!(page_addresses(&old), start);
        old.check_invariants().unwrap();
        assert!(old.iter().eq(keys.iter().copied()));

        // The version is read and dropped on another thread: the unchecked branch again,
        // on a page that was shared until then.
        let seen = std::thread::spawn(move || old.iter().count())
            .join()
            .unwrap();
        assert_eq!(seen, keys.len());
        let mut leaves = pma.leaves_mut();
        assert!(leaves.private);
        rewrite_leaf(&mut leaves, 0);
        assert_eq!((page_addresses(&pma), pma.page_copies()), (now, 3));
        check(&mut pma, &keys);
    }
}
