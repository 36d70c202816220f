//! Building the leaves: bulk build, spreading a region's keys evenly by bytes, and
//! gathering a region's keys back (including leaves that overflowed into side buffers).

use rayon::prelude::*;

use super::batch::Overflow;
use super::leaf::LeafCodec;
use super::{default_leaf_bytes, empty_page, Page, Pma, PmaConfig, Table};
use std::marker::PhantomData;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Keys per block of the byte-size prefix sums.
const SIZE_BLOCK: usize = 1024;
/// Leaves per parallel task when spreading, gathering or scanning.
pub(super) const LEAF_GRAIN: usize = 32;
/// Size blocks below which sizes are summed serially (a rayon call costs microseconds,
/// more than a small redistribution).
const SERIAL_BLOCKS_MAX: usize = 8;

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

    /// Builds the array for `items` (keys sorted, unique) at the build density.
    pub(super) fn build(config: PmaConfig, items: &[C::Item]) -> Self {
        let sized = SizedKeys::<C>::new(items);
        let density = config.build_density();
        let capacity = (sized.total as f64 / density).ceil() as usize;
        let leaf_bytes = config
            .leaf_bytes
            .unwrap_or_else(|| default_leaf_bytes(capacity));
        let num_leaves = capacity.div_ceil(leaf_bytes).max(1);
        let page_shift = config.page_shift(leaf_bytes);
        let num_pages = num_leaves.div_ceil(1 << page_shift);
        let pages = (0..num_pages)
            .map(|p| {
                let leaves = (num_leaves - (p << page_shift)).min(1 << page_shift);
                empty_page(leaves, leaf_bytes)
            })
            .collect();
        let mut pma = Self {
            config,
            leaf_bytes,
            page_shift,
            num_leaves,
            table: Arc::new(Table {
                pages,
                heads: vec![u64::MAX; num_leaves],
                used: vec![0; num_leaves],
            }),
            len: items.len(),
            total_used: 0,
            page_copies: AtomicUsize::new(0),
            lineage: Arc::new(()),
            codec: PhantomData,
        };
        let mut leaves = pma.leaves_mut();
        let all = 0..leaves.len();
        pma.total_used = spread(&sized, &mut leaves, all);
        pma
    }

    /// Replaces the array by a fresh build of `items` (growth, shrink, large batches); the
    /// page-copy count carries over.
    pub(super) fn rebuild(&mut self, items: &[C::Item]) {
        let copies = self.page_copies();
        *self = Self::build(self.config.clone(), items);
        self.page_copies = AtomicUsize::new(copies);
    }

    /// Every item, in order, with `overflow` standing in for the leaves it names.
    pub(super) fn gather_all(&self, overflow: &[Overflow<C::Item>]) -> Vec<C::Item> {
        gather::<C>(self.leaves(), 0, 0..self.num_leaves, overflow)
    }
}

/// Items with block sums of their encoded sizes, ready to be cut into leaves by bytes.
pub(super) struct SizedKeys<'a, C: LeafCodec> {
    keys: &'a [C::Item],
    /// `block_prefix[b]` = bytes of keys before index `b * SIZE_BLOCK`; last = total.
    block_prefix: Vec<u64>,
    pub(super) total: u64,
}

/// Bytes item `i` takes when it follows item `i - 1` (a head's for the first).
#[inline(always)]
fn key_size<C: LeafCodec>(keys: &[C::Item], i: usize) -> u64 {
    if i == 0 {
        C::HEAD as u64
    } else {
        C::entry_bytes(C::key(keys[i - 1]), keys[i]) as u64
    }
}

impl<'a, C: LeafCodec> SizedKeys<'a, C> {
    pub(super) fn new(keys: &'a [C::Item]) -> Self {
        let block_sum = |b: usize| {
            let end = ((b + 1) * SIZE_BLOCK).min(keys.len());
            (b * SIZE_BLOCK..end)
                .map(|i| key_size::<C>(keys, i))
                .sum::<u64>()
        };
        let blocks = keys.len().div_ceil(SIZE_BLOCK);
        let block_sums: Vec<u64> = if blocks <= SERIAL_BLOCKS_MAX {
            (0..blocks).map(block_sum).collect()
        } else {
            (0..blocks).into_par_iter().map(block_sum).collect()
        };
        let mut block_prefix = Vec::with_capacity(block_sums.len() + 1);
        let mut total = 0;
        block_prefix.push(0);
        for sum in block_sums {
            total += sum;
            block_prefix.push(total);
        }
        Self {
            keys,
            block_prefix,
            total,
        }
    }

    /// From key `i` whose prefix is `pre`, the first index whose prefix is `>= cut`.
    #[inline]
    fn advance(&self, mut i: usize, mut pre: u64, cut: u64) -> (usize, u64) {
        while i < self.keys.len() && pre < cut {
            pre += key_size::<C>(self.keys, i);
            i += 1;
        }
        (i, pre)
    }

    /// The first index whose prefix is `>= cut`, and that prefix.
    fn locate(&self, cut: u64) -> (usize, u64) {
        let block = self.block_prefix.partition_point(|&p| p < cut);
        if block == 0 {
            return (0, 0);
        }
        self.advance((block - 1) * SIZE_BLOCK, self.block_prefix[block - 1], cut)
    }
}

/// Spreads `sized` over the local leaf range `range` of `leaves`, cutting at equal byte
/// shares; returns the bytes used.
///
/// Empty leaves get the head of the next non-empty leaf in the run, or `u64::MAX` after the
/// last one (the caller repairs those if leaves follow the run).
pub(super) fn spread<C: LeafCodec>(
    sized: &SizedKeys<'_, C>,
    leaves: &mut LeavesMut<'_>,
    range: std::ops::Range<usize>,
) -> usize {
    let plan = SpreadPlan {
        sized,
        num_leaves: range.len(),
        leaf_bytes: leaves.leaf_bytes,
    };
    leaves.fill_range(range, |first, data, used, heads| {
        if used.len() <= 2 * LEAF_GRAIN {
            return plan.fill(first, data, used, heads);
        }
        let lb = plan.leaf_bytes;
        data.par_chunks_mut(LEAF_GRAIN * lb)
            .zip(used.par_chunks_mut(LEAF_GRAIN))
            .zip(heads.par_chunks_mut(LEAF_GRAIN))
            .enumerate()
            .map(|(group, ((data, used), heads))| {
                plan.fill(first + group * LEAF_GRAIN, data, used, heads)
            })
            .sum()
    })
}

/// Where the cuts of a spread fall: leaf `j` starts at the first key whose byte prefix
/// reaches `j * total / num_leaves`.
struct SpreadPlan<'s, 'k, C: LeafCodec> {
    sized: &'s SizedKeys<'k, C>,
    num_leaves: usize,
    leaf_bytes: usize,
}

impl<C: LeafCodec> SpreadPlan<'_, '_, C> {
    fn cut(&self, j: usize) -> u64 {
        (j as u128 * u128::from(self.sized.total) / self.num_leaves as u128) as u64
    }

    /// Fills the leaves `first..first + used.len()` of the run; returns their used bytes.
    fn fill(&self, first: usize, data: &mut [u8], used: &mut [u32], heads: &mut [u64]) -> usize {
        let (sized, keys, leaf_bytes) = (self.sized, self.sized.keys, self.leaf_bytes);
        let (mut start, mut pre) = sized.locate(self.cut(first));
        let mut bytes = 0;
        for local in 0..used.len() {
            let j = first + local;
            let (end, pre_end) = if j + 1 == self.num_leaves {
                (keys.len(), sized.total)
            } else {
                sized.advance(start, pre, self.cut(j + 1))
            };
            let leaf = &mut data[local * leaf_bytes..(local + 1) * leaf_bytes];
            if end > start {
                used[local] = C::encode(&keys[start..end], leaf) as u32;
                heads[local] = C::key(keys[start]);
                bytes += used[local] as usize;
            } else {
                used[local] = 0;
                heads[local] = keys.get(start).map_or(u64::MAX, |&item| C::key(item));
            }
            (start, pre) = (end, pre_end);
        }
        bytes
    }
}

/// The keys of the local leaf range `range` of `leaves` (global index of leaf 0:
/// `first`), in order, taking a leaf's keys from `overflow` where it has an entry (sorted
/// by global leaf).
pub(super) fn gather<C: LeafCodec>(
    leaves: Leaves<'_>,
    first: usize,
    range: std::ops::Range<usize>,
    overflow: &[Overflow<C::Item>],
) -> Vec<C::Item> {
    let collect = |range: std::ops::Range<usize>| {
        let bytes: usize = range.clone().map(|j| leaves.used(j)).sum();
        let mut keys = Vec::with_capacity(bytes / 2 + 8);
        for j in range {
            match overflow.binary_search_by_key(&(first + j), |entry| entry.0) {
                Ok(at) => keys.extend_from_slice(&overflow[at].1),
                Err(_) => C::decode_into(leaves.leaf(j), leaves.used(j), &mut keys),
            }
        }
        keys
    };
    if range.len() <= 4 * LEAF_GRAIN {
        return collect(range);
    }
    let start = range.start;
    let parts: Vec<Vec<C::Item>> = (0..range.len().div_ceil(LEAF_GRAIN))
        .into_par_iter()
        .map(|g| collect(start + g * LEAF_GRAIN..(start + (g + 1) * LEAF_GRAIN).min(range.end)))
        .collect();
    concat_parallel(&parts)
}

/// Concatenates `parts` with a parallel copy.
pub(super) fn concat_parallel<T: Copy + Default + Send + Sync>(parts: &[Vec<T>]) -> Vec<T> {
    let total: usize = parts.iter().map(Vec::len).sum();
    let mut out = vec![T::default(); total];
    let mut slices = Vec::with_capacity(parts.len());
    let mut rest = out.as_mut_slice();
    for part in parts {
        let (head, tail) = rest.split_at_mut(part.len());
        slices.push(head);
        rest = tail;
    }
    slices
        .into_par_iter()
        .zip(parts.par_iter())
        .for_each(|(dst, src)| dst.copy_from_slice(src));
    out
}
