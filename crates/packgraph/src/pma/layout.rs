//! Building the leaves: bulk build, spreading a region's keys evenly by bytes, and
//! gathering a region's keys back (including leaves that overflowed into side buffers).

use rayon::prelude::*;

use super::batch::Overflow;
use super::leaf::LeafCodec;
use super::{default_leaf_bytes, Page, Pma, PmaConfig, Table};
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
    num_leaves: usize,
    pages: &'a [Arc<Page>],
    page_heads: &'a [u64],
}

impl<'a> Leaves<'a> {
    pub(super) fn len(&self) -> usize {
        self.num_leaves
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        (1 << self.shift) - 1
    }

    /// The leaf `j` and the rest of its page, padding included.
    #[inline(always)]
    pub(super) fn leaf(&self, j: usize) -> &'a [u8] {
        &self.pages[j >> self.shift].data[(j & self.mask()) * self.leaf_bytes..]
    }

    #[inline(always)]
    pub(super) fn used(&self, j: usize) -> usize {
        self.pages[j >> self.shift].used[j & self.mask()] as usize
    }

    #[inline(always)]
    pub(super) fn head(&self, j: usize) -> u64 {
        self.pages[j >> self.shift].heads[j & self.mask()]
    }

    /// Local index of the leaf `key` belongs in (the last with head <= key, else 0): the
    /// last page whose first head is at most `key`, then the last such leaf in it.
    pub(super) fn target(&self, key: u64) -> usize {
        let p = self
            .page_heads
            .partition_point(|&head| head <= key)
            .saturating_sub(1);
        let Some(page) = self.pages.get(p) else {
            return 0;
        };
        (p << self.shift)
            + page
                .heads
                .partition_point(|&head| head <= key)
                .saturating_sub(1)
    }

    /// [`Self::target`] for a key known to belong at or after leaf `from`: gallops forward
    /// (1, 2, 4, … leaves) and then searches the window, so the consecutive targets of a
    /// sorted batch cost O(log gap) reads near each other instead of a full binary search.
    pub(super) fn target_from(&self, from: usize, key: u64) -> usize {
        let (mut lo, mut step) = (from, 1);
        let mut hi = loop {
            let probe = from + step;
            if probe >= self.num_leaves || self.head(probe) > key {
                break probe.min(self.num_leaves);
            }
            lo = probe;
            step *= 2;
        };
        // The last leaf in lo..hi with head <= key (lo's head is, or lo == from).
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if self.head(mid) <= key {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// A run of whole pages borrowed mutably; split (at page boundaries) to hand disjoint
/// pages to tasks. Writes go through [`LeavesMut::page_mut`], which copies a page that
/// another version shares before the first write to it (and writes in place otherwise).
pub(super) struct LeavesMut<'a> {
    /// Global index of the first leaf.
    pub(super) first: usize,
    pub(super) leaf_bytes: usize,
    shift: u32,
    num_leaves: usize,
    pages: &'a mut [Arc<Page>],
    page_heads: &'a mut [u64],
    copies: &'a AtomicUsize,
}

impl<'a> LeavesMut<'a> {
    pub(super) fn len(&self) -> usize {
        self.num_leaves
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
            num_leaves: self.num_leaves,
            pages: self.pages,
            page_heads: self.page_heads,
        }
    }

    /// Pages `[0, p)` and `[p, num_pages)`.
    pub(super) fn split_at_page(self, p: usize) -> (Self, Self) {
        let left_leaves = (p << self.shift).min(self.num_leaves);
        let (pages_l, pages_r) = self.pages.split_at_mut(p);
        let (heads_l, heads_r) = self.page_heads.split_at_mut(p);
        let left = LeavesMut {
            first: self.first,
            leaf_bytes: self.leaf_bytes,
            shift: self.shift,
            num_leaves: left_leaves,
            pages: pages_l,
            page_heads: heads_l,
            copies: self.copies,
        };
        let right = LeavesMut {
            first: self.first + left_leaves,
            leaf_bytes: self.leaf_bytes,
            shift: self.shift,
            num_leaves: self.num_leaves - left_leaves,
            pages: pages_r,
            page_heads: heads_r,
            copies: self.copies,
        };
        (left, right)
    }

    /// Page `p` for writing: copied first if another version shares it.
    #[inline]
    pub(super) fn page_mut(&mut self, p: usize) -> &mut Page {
        cow(&mut self.pages[p], self.copies)
    }

    /// The bytes of leaf `j` (exactly `leaf_bytes`), for writing.
    pub(super) fn leaf_mut(&mut self, j: usize) -> &mut [u8] {
        let (lb, local) = (self.leaf_bytes, j & ((1 << self.shift) - 1));
        &mut self.page_mut(j >> self.shift).data[local * lb..(local + 1) * lb]
    }

    /// Sets leaf `j`'s used bytes (no write, and no copy, if unchanged).
    pub(super) fn set_used(&mut self, j: usize, used: usize) {
        if self.as_ref().used(j) != used {
            let local = j & ((1 << self.shift) - 1);
            self.page_mut(j >> self.shift).used[local] = used as u32;
        }
    }

    /// Sets leaf `j`'s head, and its page's head if it is the page's first leaf (no write,
    /// and no copy, if unchanged).
    pub(super) fn set_head(&mut self, j: usize, head: u64) {
        if self.as_ref().head(j) != head {
            let (p, local) = (j >> self.shift, j & ((1 << self.shift) - 1));
            self.page_mut(p).heads[local] = head;
            if local == 0 {
                self.page_heads[p] = head;
            }
        }
    }

    /// Restores the empty-leaf head rule for the leaves in `range` and the empty leaves
    /// right before it, from the head of the leaf after it.
    pub(super) fn repair_heads(&mut self, range: std::ops::Range<usize>) {
        let view = self.as_ref();
        let mut next = if range.end < view.len() {
            view.head(range.end)
        } else {
            u64::MAX
        };
        for j in range.clone().rev() {
            if self.as_ref().used(j) > 0 {
                next = self.as_ref().head(j);
            } else {
                self.set_head(j, next);
            }
        }
        for j in (0..range.start).rev() {
            if self.as_ref().used(j) > 0 {
                break;
            }
            self.set_head(j, next);
        }
    }

    /// Calls `f(first_in_range, data, used, heads)` for each page's share of the local leaf
    /// range `range`, in parallel when the range is long; pages wholly inside the range are
    /// replaced rather than copied when shared. Keeps the page heads right. Returns the sum
    /// of `f`'s results.
    pub(super) fn fill_range(
        &mut self,
        range: std::ops::Range<usize>,
        f: impl Fn(usize, &mut [u8], &mut [u32], &mut [u64]) -> usize + Sync,
    ) -> usize {
        if range.is_empty() {
            return 0;
        }
        let (shift, lb, copies) = (self.shift, self.leaf_bytes, self.copies);
        let (first_page, last_page) = (range.start >> shift, (range.end - 1) >> shift);
        let pages = &mut self.pages[first_page..=last_page];
        let heads = &mut self.page_heads[first_page..=last_page];
        let fill_page = |(i, (slot, page_head)): (usize, (&mut Arc<Page>, &mut u64))| {
            let p = first_page + i;
            let page_start = p << shift;
            let leaves = slot.used.len();
            let lo = range.start.max(page_start) - page_start;
            let hi = range.end.min(page_start + leaves) - page_start;
            let whole = lo == 0 && hi == leaves;
            let page = if whole && Arc::get_mut(slot).is_none() {
                copies.fetch_add(1, Ordering::Relaxed);
                *slot = Arc::new(Page::empty(leaves, lb));
                Arc::get_mut(slot).expect("a new page is unique")
            } else {
                cow(slot, copies)
            };
            let done = f(
                page_start + lo - range.start,
                &mut page.data[lo * lb..hi * lb],
                &mut page.used[lo..hi],
                &mut page.heads[lo..hi],
            );
            *page_head = page.heads[0];
            done
        };
        if range.len() <= 2 * LEAF_GRAIN {
            pages
                .iter_mut()
                .zip(heads.iter_mut())
                .enumerate()
                .map(fill_page)
                .sum()
        } else {
            pages
                .par_iter_mut()
                .zip(heads.par_iter_mut())
                .enumerate()
                .map(fill_page)
                .sum()
        }
    }
}

/// The page in `slot` for writing: copied first (and counted) if another version holds it.
#[inline]
pub(super) fn cow<'p>(slot: &'p mut Arc<Page>, copies: &AtomicUsize) -> &'p mut Page {
    if Arc::get_mut(slot).is_none() {
        copies.fetch_add(1, Ordering::Relaxed);
        *slot = Arc::new(Page::clone(slot));
    }
    Arc::get_mut(slot).expect("the page was just made unique")
}

impl<C: LeafCodec> Pma<C> {
    /// All leaves, read-only.
    pub(super) fn leaves(&self) -> Leaves<'_> {
        Leaves {
            leaf_bytes: self.leaf_bytes,
            shift: self.page_shift,
            num_leaves: self.num_leaves,
            pages: &self.table.pages,
            page_heads: &self.table.page_heads,
        }
    }

    /// All leaves, borrowed mutably (copies the page table first if a clone shares it).
    pub(super) fn leaves_mut(&mut self) -> LeavesMut<'_> {
        let table = Arc::make_mut(&mut self.table);
        LeavesMut {
            first: 0,
            leaf_bytes: self.leaf_bytes,
            shift: self.page_shift,
            num_leaves: self.num_leaves,
            pages: &mut table.pages,
            page_heads: &mut table.page_heads,
            copies: &self.page_copies,
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
                Arc::new(Page::empty(leaves, leaf_bytes))
            })
            .collect();
        let mut pma = Self {
            config,
            leaf_bytes,
            page_shift,
            num_leaves,
            table: Arc::new(Table {
                pages,
                page_heads: vec![u64::MAX; num_pages],
            }),
            len: items.len(),
            total_used: 0,
            page_copies: AtomicUsize::new(0),
            codec: PhantomData,
        };
        let mut leaves = pma.leaves_mut();
        let all = 0..leaves.len();
        pma.total_used = spread(&sized, &mut leaves, all);
        pma
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
