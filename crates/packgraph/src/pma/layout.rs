//! Building the leaves: bulk build, spreading a region's keys evenly by bytes, and
//! gathering a region's keys back (including leaves that overflowed into side buffers).

use rayon::prelude::*;

use super::batch::Overflow;
use super::leaf::LeafCodec;
use super::{default_leaf_bytes, Pma, PmaConfig, PADDING_BYTES};
use std::marker::PhantomData;

/// Keys per block of the byte-size prefix sums.
const SIZE_BLOCK: usize = 1024;
/// Leaves per parallel task when spreading, gathering or scanning.
pub(super) const LEAF_GRAIN: usize = 32;
/// Size blocks below which sizes are summed serially (a rayon call costs microseconds,
/// more than a small redistribution).
const SERIAL_BLOCKS_MAX: usize = 8;

/// A run of consecutive leaves borrowed mutably; split to hand disjoint leaves to tasks.
pub(super) struct LeavesMut<'a> {
    /// Global index of the first leaf.
    pub(super) first: usize,
    pub(super) leaf_bytes: usize,
    pub(super) data: &'a mut [u8],
    pub(super) used: &'a mut [u32],
    pub(super) heads: &'a mut [u64],
}

impl<'a> LeavesMut<'a> {
    pub(super) fn len(&self) -> usize {
        self.used.len()
    }

    /// Leaves `[0, mid)` and `[mid, len)`.
    pub(super) fn split_at(self, mid: usize) -> (Self, Self) {
        let (data_l, data_r) = self.data.split_at_mut(mid * self.leaf_bytes);
        let (used_l, used_r) = self.used.split_at_mut(mid);
        let (heads_l, heads_r) = self.heads.split_at_mut(mid);
        let left = LeavesMut {
            first: self.first,
            leaf_bytes: self.leaf_bytes,
            data: data_l,
            used: used_l,
            heads: heads_l,
        };
        let right = LeavesMut {
            first: self.first + mid,
            leaf_bytes: self.leaf_bytes,
            data: data_r,
            used: used_r,
            heads: heads_r,
        };
        (left, right)
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
        let heads = &*self.heads;
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

impl<C: LeafCodec> Pma<C> {
    /// All leaves, borrowed mutably.
    pub(super) fn leaves_mut(&mut self) -> LeavesMut<'_> {
        let end = self.num_leaves() * self.leaf_bytes;
        LeavesMut {
            first: 0,
            leaf_bytes: self.leaf_bytes,
            data: &mut self.data[..end],
            used: &mut self.used,
            heads: &mut self.heads,
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
        let mut pma = Self {
            config,
            leaf_bytes,
            data: vec![0; num_leaves * leaf_bytes + PADDING_BYTES],
            used: vec![0; num_leaves],
            heads: vec![u64::MAX; num_leaves],
            len: items.len(),
            total_used: 0,
            codec: PhantomData,
        };
        pma.total_used = spread(&sized, pma.leaves_mut());
        pma
    }

    /// Every item, in order, with `overflow` standing in for the leaves it names.
    pub(super) fn gather_all(&self, overflow: &[Overflow<C::Item>]) -> Vec<C::Item> {
        let end = self.num_leaves() * self.leaf_bytes;
        gather::<C>(&self.data[..end], &self.used, 0, self.leaf_bytes, overflow)
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

/// Spreads `sized` over `leaves`, cutting at equal byte shares; returns the bytes used.
///
/// Empty leaves get the head of the next non-empty leaf in the run, or `u64::MAX` after the
/// last one (the caller repairs those if leaves follow the run).
pub(super) fn spread<C: LeafCodec>(sized: &SizedKeys<'_, C>, leaves: LeavesMut<'_>) -> usize {
    let plan = SpreadPlan {
        sized,
        num_leaves: leaves.len(),
        leaf_bytes: leaves.leaf_bytes,
    };
    if leaves.len() <= 2 * LEAF_GRAIN {
        return plan.fill(0, leaves.data, leaves.used, leaves.heads);
    }
    let leaf_bytes = leaves.leaf_bytes;
    leaves
        .data
        .par_chunks_mut(LEAF_GRAIN * leaf_bytes)
        .zip(leaves.used.par_chunks_mut(LEAF_GRAIN))
        .zip(leaves.heads.par_chunks_mut(LEAF_GRAIN))
        .enumerate()
        .map(|(group, ((data, used), heads))| plan.fill(group * LEAF_GRAIN, data, used, heads))
        .sum()
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

/// The keys of the leaves in `data`/`used` (global index of the first: `first`), in order,
/// taking a leaf's keys from `overflow` where it has an entry (sorted by leaf).
pub(super) fn gather<C: LeafCodec>(
    data: &[u8],
    used: &[u32],
    first: usize,
    leaf_bytes: usize,
    overflow: &[Overflow<C::Item>],
) -> Vec<C::Item> {
    let collect = |range: std::ops::Range<usize>| {
        let bytes: usize = used[range.clone()].iter().map(|&u| u as usize).sum();
        let mut keys = Vec::with_capacity(bytes / 2 + 8);
        for j in range {
            match overflow.binary_search_by_key(&(first + j), |entry| entry.0) {
                Ok(at) => keys.extend_from_slice(&overflow[at].1),
                Err(_) => C::decode_into(&data[j * leaf_bytes..], used[j] as usize, &mut keys),
            }
        }
        keys
    };
    if used.len() <= 4 * LEAF_GRAIN {
        return collect(0..used.len());
    }
    let parts: Vec<Vec<C::Item>> = (0..used.len().div_ceil(LEAF_GRAIN))
        .into_par_iter()
        .map(|g| collect(g * LEAF_GRAIN..((g + 1) * LEAF_GRAIN).min(used.len())))
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
