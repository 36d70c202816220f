//! Spreading and packing leaves: the bulk build, spreading a region's keys evenly over its
//! leaves by bytes (cut at equal byte shares of the encoded keys), and gathering a region's
//! keys back (including leaves that overflowed into side buffers).

use rayon::prelude::*;

use super::config::default_leaf_bytes;
use super::density;
use super::leaf::LeafCodec;
use super::page::{Leaves, LeavesMut};
use super::{Pma, PmaConfig, Table, LEAF_GRAIN};
use std::marker::PhantomData;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

/// A leaf that overflowed during a batch merge (`batch.rs`), with all its items: its bytes
/// are scratch until [`gather`] reads the items from here instead, and the leaf is spread
/// again.
pub(super) type Overflow<I> = (usize, Vec<I>);

/// Keys per block of the byte-size prefix sums.
const SIZE_BLOCK: usize = 1024;
/// Size blocks below which sizes are summed serially (a rayon call costs microseconds,
/// more than a small redistribution).
const SERIAL_BLOCKS_MAX: usize = 8;

impl<C: LeafCodec> Pma<C> {
    /// Builds the array for `items` (keys sorted, unique) at the build density.
    pub(super) fn build(config: PmaConfig, items: &[C::Item]) -> Self {
        let density = config.build_density();
        Self::build_at(config, items, density)
    }

    /// Builds the array for `items` (keys sorted, unique) at byte density `density`, capped
    /// at the leaves' bound (`1 - slack / leaf bytes`: spreading puts at most `density ·
    /// leaf bytes + slack - 1` bytes in a leaf).
    pub(super) fn build_at(config: PmaConfig, items: &[C::Item], density: f64) -> Self {
        let sized = SizedKeys::<C>::new(items);
        let bytes = sized.total.div_ceil(4) as f64;
        let leaf_bytes = config
            .leaf_bytes
            .unwrap_or_else(|| default_leaf_bytes((bytes / density).ceil() as usize));
        let density = density.min(density::upper_leaf_bound(leaf_bytes, C::SLACK));
        let capacity = (bytes / density).ceil() as usize;
        let num_leaves = capacity.div_ceil(leaf_bytes).max(1);
        let page_shift = config.page_shift(leaf_bytes);
        let mut pma = Self {
            config,
            leaf_bytes,
            page_shift,
            num_leaves,
            table: Arc::new(Table::empty(num_leaves, leaf_bytes, page_shift)),
            len: items.len(),
            total_used: 0,
            page_copies: AtomicUsize::new(0),
            lineage: Arc::default(),
            log: None,
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
        let density = self.config.build_density();
        self.rebuild_at(items, density);
    }

    /// Builds the array again from its own items at `density` (`None`: the density growth
    /// rebuilds at; capped by the leaves' bound as any build is): the same items in a new
    /// layout. Holds a copy of the items (the size of one item each) beside both arrays
    /// while it runs.
    pub(crate) fn repack(&mut self, density: Option<f64>) {
        let items = self.gather_all(&[]);
        let density = density.unwrap_or_else(|| self.config.build_density());
        self.rebuild_at(&items, density);
    }

    /// [`Pma::rebuild`] at byte density `density`.
    pub(super) fn rebuild_at(&mut self, items: &[C::Item], density: f64) {
        let copies = self.page_copies();
        let log = self.log.take();
        *self = Self::build_at(self.config.clone(), items, density);
        self.page_copies = AtomicUsize::new(copies);
        self.log = log;
        self.log_broken();
    }

    /// Every item, in order, with `overflow` standing in for the leaves it names.
    pub(super) fn gather_all(&self, overflow: &[Overflow<C::Item>]) -> Vec<C::Item> {
        gather::<C>(self.leaves(), 0, 0..self.num_leaves, overflow)
    }
}

/// Items with block sums of their encoded costs (quarter bytes), ready to be cut into
/// leaves by size.
pub(super) struct SizedKeys<'a, C: LeafCodec> {
    keys: &'a [C::Item],
    /// `block_prefix[b]` = cost of keys before index `b * SIZE_BLOCK`; last = total.
    block_prefix: Vec<u64>,
    pub(super) total: u64,
}

/// What item `i` costs when it follows item `i - 1` (a head's for the first), in quarter
/// bytes ([`LeafCodec::entry_cost`]).
#[inline(always)]
fn key_size<C: LeafCodec>(keys: &[C::Item], i: usize) -> u64 {
    if i == 0 {
        4 * C::HEAD as u64
    } else {
        C::entry_cost(C::key(keys[i - 1]), keys[i])
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
    let slices: Vec<&[T]> = parts.iter().map(Vec::as_slice).collect();
    crate::par::map_concat(&slices, |&x| x)
}
