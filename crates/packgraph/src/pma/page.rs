//! Pages of leaves as tasks see them: read-only and mutable views over a run of whole pages
//! with their leaves' heads and sizes, split at page boundaries to hand disjoint pages to
//! parallel tasks. Every write to leaf bytes goes through [`LeavesMut`], which copies a page
//! that another version shares before the first write to it (copy on write, see the
//! versions paragraph of `mod.rs`) and writes an unshared page in place.

use rayon::prelude::*;

use super::leaf::LeafCodec;
use super::{empty_page, Page, Pma, LEAF_GRAIN};
use std::sync::atomic::{AtomicUsize, Ordering};
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
    /// No other version of the array exists: every page is unshared.
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
        let page = cow(&mut self.pages[j >> self.shift], self.private, self.copies);
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
                cow(slot, private, copies)
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

/// The page in `slot` for writing: copied first (and counted) if another version holds it.
/// `private` says that no other version of the array exists (so none holds the page).
#[inline]
pub(super) fn cow<'p>(slot: &'p mut Page, private: bool, copies: &AtomicUsize) -> &'p mut [u8] {
    if private {
        // Skips `Arc::get_mut`'s check, an atomic read-modify-write on the page's header:
        // a cache line that the leaf being written (mid-page) does not share, so one more
        // miss per touched leaf. Measured: batch inserts of 1e4 keys into 1e7 ran at 0.69x
        // of the unpaged array with the check, see the commit message.
        //
        // SAFETY: `private` is true only when the array's lineage count is 1 (see
        // `Pma::leaves_mut`): no other version exists, page pointers are cloned only when a
        // version's table is cloned, so this `Arc` is the page's only strong reference, and
        // no weak references are ever made. `slot` is borrowed mutably for `'p`, so nothing
        // else reaches the page meanwhile: a unique `&mut` to its bytes is sound, exactly as
        // `Arc::get_mut` would give.
        return unsafe { &mut *Arc::as_ptr(slot).cast_mut() };
    }
    if Arc::get_mut(slot).is_none() {
        copies.fetch_add(1, Ordering::Relaxed);
        *slot = Arc::from(&slot[..]);
    }
    Arc::get_mut(slot).expect("the page was just made unique")
}

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
        // A clone shares `lineage`; `&mut self` means no clone of this handle is being made
        // now, so a count of 1 stays 1 while the view lives.
        let private = Arc::strong_count(&self.lineage) == 1;
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
