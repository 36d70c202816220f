//! Batch updates, phase 1: the parallel recursive merge of a sorted batch into the leaves
//! (CPMA paper, section 4, "batch-merge phase"), plus the two other batch regimes: key by
//! key for small batches and a linear rebuild for batches comparable to the set.
//!
//! The merge searches the leaf of the batch's median, finds the batch keys bound for that
//! leaf (those between its head and the next leaf's head), merges them into it, and recurses
//! on the two sides in parallel over disjoint leaf ranges. A leaf that cannot hold its merged
//! keys keeps them in an overflow buffer until redistribution (`rebalance.rs`).

use std::any::Any;
use std::cell::RefCell;

use rayon::prelude::*;

use super::leaf::{LeafCodec, LeafInsert, LeafRemove};
use super::page::LeavesMut;
use super::spread::{concat_parallel, Overflow};
use super::{raw, sort, Pma};

/// Batch keys per leaf below which a leaf is updated in place, key by key.
const IN_PLACE_MAX: usize = 2;
/// How many leaf groups ahead a serial merge prefetches. It prefetches each leaf whole: an
/// in-place edit reads it to the end (measured faster than prefetching a leaf's first
/// three lines only, for batches of 1e4 and 1e3 edges; see CHANGELOG).
const PREFETCH_GROUPS: usize = 4;
/// Elements per task in the parallel linear merge of a rebuild.
const MERGE_GRAIN: usize = 1 << 16;

/// A sorted update batch: items to insert (or whose values to replace), or keys to remove.
#[derive(Debug)]
pub(super) enum Batch<'a, C: LeafCodec> {
    Insert(&'a [C::Item]),
    Remove(&'a [u64]),
}

impl<C: LeafCodec> Clone for Batch<'_, C> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<C: LeafCodec> Copy for Batch<'_, C> {}

impl<'a, C: LeafCodec> Batch<'a, C> {
    fn len(self) -> usize {
        match self {
            Self::Insert(items) => items.len(),
            Self::Remove(keys) => keys.len(),
        }
    }

    fn is_insert(self) -> bool {
        matches!(self, Self::Insert(_))
    }

    #[inline]
    fn key(self, i: usize) -> u64 {
        match self {
            Self::Insert(items) => C::key(items[i]),
            Self::Remove(keys) => keys[i],
        }
    }

    /// How many keys are below `bound`.
    #[inline]
    fn count_below(self, bound: u64) -> usize {
        match self {
            Self::Insert(items) => items.partition_point(|&item| C::key(item) < bound),
            Self::Remove(keys) => keys.partition_point(|&key| key < bound),
        }
    }

    fn slice(self, range: std::ops::Range<usize>) -> Self {
        match self {
            Self::Insert(items) => Self::Insert(&items[range]),
            Self::Remove(keys) => Self::Remove(&keys[range]),
        }
    }
}

/// What the merge phase did.
#[derive(Debug)]
pub(super) struct MergeOutcome<I> {
    /// Leaves whose contents changed, ascending.
    pub(super) touched: Vec<usize>,
    /// Leaves that overflowed, with all their items, ascending by leaf.
    pub(super) overflow: Vec<Overflow<I>>,
    /// Keys added or removed.
    pub(super) changed: usize,
    /// Change in used bytes (an overflowed leaf counts its full encoded size).
    pub(super) bytes_delta: isize,
}

impl<I> Default for MergeOutcome<I> {
    fn default() -> Self {
        Self {
            touched: Vec::new(),
            overflow: Vec::new(),
            changed: 0,
            bytes_delta: 0,
        }
    }
}

impl<I> MergeOutcome<I> {
    fn append(&mut self, mut other: MergeOutcome<I>) {
        self.touched.append(&mut other.touched);
        self.overflow.append(&mut other.overflow);
        self.changed += other.changed;
        self.bytes_delta += other.bytes_delta;
    }
}

thread_local! {
    /// Scratch for decoding a leaf and merging into it, reused across calls: two
    /// `Vec<C::Item>` for the codec last used on this thread.
    static SCRATCH: RefCell<Option<Box<dyn Any>>> = const { RefCell::new(None) };
}

/// Runs `f` with two cleared scratch vectors of `C::Item`, reusing the thread's buffers.
fn with_scratch<C: LeafCodec, R>(f: impl FnOnce(&mut Vec<C::Item>, &mut Vec<C::Item>) -> R) -> R {
    type Pair<I> = (Vec<I>, Vec<I>);
    let mut pair: Box<Pair<C::Item>> = SCRATCH
        .with_borrow_mut(Option::take)
        .and_then(|any| any.downcast().ok())
        .unwrap_or_default();
    pair.0.clear();
    pair.1.clear();
    let result = f(&mut pair.0, &mut pair.1);
    SCRATCH.with_borrow_mut(|slot| *slot = Some(pair));
    result
}

/// `keys` sorted with duplicates removed.
pub(super) fn sorted_unique(keys: &[u64]) -> Vec<u64> {
    let mut out = keys.to_vec();
    if !out.is_sorted() {
        sort::sort_keys(&mut out);
    }
    out.dedup();
    out
}

/// `items` sorted by key, keeping the last of items with equal keys.
pub(super) fn sorted_unique_items<C: LeafCodec>(items: &[C::Item]) -> Vec<C::Item> {
    let mut out = items.to_vec();
    sort_unique_items::<C>(&mut out);
    out
}

/// Sorts `items` by key in place, keeping the last of items with equal keys (the sorts are
/// stable).
fn sort_unique_items<C: LeafCodec>(items: &mut Vec<C::Item>) {
    if !items.is_sorted_by_key(|&item| C::key(item)) {
        C::sort_items(items);
    }
    let mut kept = 0;
    for i in 0..items.len() {
        if kept > 0 && C::key(items[kept - 1]) == C::key(items[i]) {
            items[kept - 1] = items[i];
        } else {
            items[kept] = items[i];
            kept += 1;
        }
    }
    items.truncate(kept);
}

impl<C: LeafCodec> Pma<C> {
    /// Inserts every item of `items` (any order, duplicates allowed); returns how many keys
    /// were not already present. For a map, an item whose key is present replaces its
    /// value, and of several items with one key the last wins.
    ///
    /// # Complexity
    /// O(k log n + k log² n / B) amortized work for k keys (paper, Theorem 5), polylog depth.
    pub fn insert_batch(&mut self, items: &[C::Item]) -> usize {
        if items.len() < self.config.point_batch_max {
            return items.iter().filter(|&&item| self.insert(item)).count();
        }
        if items.is_sorted_by_key(|&item| C::key(item)) {
            return self.apply_batch(Batch::Insert(items));
        }
        let sorted = sorted_unique_items::<C>(items);
        self.apply_batch(Batch::Insert(&sorted))
    }

    /// [`Pma::insert_batch`] of a batch the caller gives up: it is sorted in place, so a
    /// large unsorted batch costs no copy (a graph's first load is one such batch).
    pub fn insert_batch_owned(&mut self, mut items: Vec<C::Item>) -> usize {
        if items.len() < self.config.point_batch_max {
            return self.insert_batch(&items);
        }
        sort_unique_items::<C>(&mut items);
        self.apply_batch(Batch::Insert(&items))
    }

    /// Removes every key of `keys` (any order, duplicates and absent keys allowed); returns
    /// how many were present.
    pub fn remove_batch(&mut self, keys: &[u64]) -> usize {
        if keys.len() < self.config.point_batch_max {
            return keys.iter().filter(|&&key| self.remove(key)).count();
        }
        if keys.is_sorted() {
            return self.apply_batch(Batch::Remove(keys));
        }
        let sorted = sorted_unique(keys);
        self.apply_batch(Batch::Remove(&sorted))
    }

    /// Applies a sorted batch: a linear rebuild if it is large, else the three phases.
    fn apply_batch(&mut self, batch: Batch<'_, C>) -> usize {
        self.log_broken();
        if batch.len() >= self.len / self.config.rebuild_divisor {
            return self.rebuild_with(batch);
        }
        let grain = self.config.parallel_grain;
        let insert = batch.is_insert();
        let outcome = merge_recursive::<C>(self.leaves_mut(), batch, grain);
        let changed = outcome.changed;
        self.len = if insert {
            self.len + changed
        } else {
            self.len - changed
        };
        self.total_used = self.total_used.wrapping_add_signed(outcome.bytes_delta);
        self.rebalance(outcome.touched, outcome.overflow, insert);
        changed
    }

    /// Linear rebuild: merge (or subtract) the whole sorted `batch` and rebuild the array.
    fn rebuild_with(&mut self, batch: Batch<'_, C>) -> usize {
        // Into an empty array, a batch without repeated keys is the new contents as it is:
        // built from directly, without a merged copy (a graph's first load).
        if let (0, Batch::Insert(items)) = (self.len, batch) {
            if items.par_windows(2).all(|w| C::key(w[0]) < C::key(w[1])) {
                let density = self.config.load_density();
                self.rebuild_at(items, density);
                return items.len();
            }
        }
        let old = self.gather_all(&[]);
        let new = match batch {
            Batch::Insert(items) => union::<C>(&old, items),
            Batch::Remove(keys) => difference::<C>(&old, keys),
        };
        let changed = old.len().abs_diff(new.len());
        self.rebuild(&new);
        changed
    }
}

/// Phase 1 over `leaves` for a sorted `batch` (duplicates allowed): split at the supergroup
/// of the page table holding the batch's middle key, merge that supergroup's share serially
/// and the two sides in parallel.
fn merge_recursive<C: LeafCodec>(
    leaves: LeavesMut<'_>,
    batch: Batch<'_, C>,
    grain: usize,
) -> MergeOutcome<C::Item> {
    if batch.len() == 0 {
        return MergeOutcome::default();
    }
    if batch.len() <= grain || leaves.num_supers() <= 1 {
        return merge_serial::<C>(leaves, batch);
    }
    let shift = leaves.super_shift();
    let view = leaves.as_ref();
    let p = view.target(batch.key(batch.len() / 2)) >> shift;
    let lo = if p == 0 {
        0
    } else {
        batch.count_below(view.head(p << shift))
    };
    let hi = if p + 1 < leaves.num_supers() {
        batch.count_below(view.head((p + 1) << shift))
    } else {
        batch.len()
    };
    let (left, rest) = leaves.split_at_super(p);
    let (mid, right) = rest.split_at_super(1);
    let ((mut out, right_out), mid_out) = rayon::join(
        || {
            rayon::join(
                || merge_recursive::<C>(left, batch.slice(0..lo), grain),
                || merge_recursive::<C>(right, batch.slice(hi..batch.len()), grain),
            )
        },
        || merge_serial::<C>(mid, batch.slice(lo..hi)),
    );
    out.append(mid_out);
    out.append(right_out);
    out
}

/// Phase 1 for a small batch, leaf after leaf: first the target leaf and batch run of every
/// group (a galloping search over the heads), then the merges, prefetching the leaves a few
/// groups ahead so that their cache misses overlap the current merge.
fn merge_serial<C: LeafCodec>(
    mut leaves: LeavesMut<'_>,
    batch: Batch<'_, C>,
) -> MergeOutcome<C::Item> {
    // At most one run per key: sized up front, as growing it under a fragmented heap showed
    // in profiles of batches under snapshots.
    let mut groups = Vec::with_capacity(batch.len());
    let view = leaves.as_ref();
    let (mut i, mut j) = (0, view.target(batch.key(0)));
    while i < batch.len() {
        j = view.target_from(j, batch.key(i));
        let end = if j + 1 < view.len() {
            i + batch.slice(i..batch.len()).count_below(view.head(j + 1))
        } else {
            batch.len()
        };
        groups.push((j, i..end));
        i = end;
    }
    let mut out = MergeOutcome::default();
    for (at, (j, run)) in groups.iter().enumerate() {
        if let Some((ahead, _)) = groups.get(at + PREFETCH_GROUPS) {
            let leaf = leaves.as_ref().leaf(*ahead);
            raw::prefetch(&leaf[..leaves.leaf_bytes], usize::MAX);
        }
        merge_leaf::<C>(&mut leaves, *j, batch.slice(run.clone()), &mut out);
    }
    out
}

/// Merges `batch` (sorted, duplicates allowed) into local leaf `j`.
fn merge_leaf<C: LeafCodec>(
    leaves: &mut LeavesMut<'_>,
    j: usize,
    batch: Batch<'_, C>,
    out: &mut MergeOutcome<C::Item>,
) {
    let global = leaves.first + j;
    let mut parts = leaves.leaf_parts_mut(j);
    let old_used = *parts.used as usize;
    let leaf = &mut *parts.bytes;
    let mut used = old_used;
    let mut changed = 0;
    let mut rest = batch;
    if batch.len() <= IN_PLACE_MAX && used > 0 {
        rest = batch.slice(0..0);
        for at in 0..batch.len() {
            match batch {
                Batch::Insert(items) => match C::insert(leaf, used, items[at]) {
                    LeafInsert::Present | LeafInsert::Replaced => {}
                    LeafInsert::Inserted(now) => (used, changed) = (now, changed + 1),
                    LeafInsert::Full => {
                        rest = batch.slice(at..batch.len());
                        break;
                    }
                },
                Batch::Remove(keys) => match C::remove(leaf, used, keys[at]) {
                    LeafRemove::Absent => {}
                    LeafRemove::Removed(now) => (used, changed) = (now, changed + 1),
                    LeafRemove::Full => {
                        rest = batch.slice(at..batch.len());
                        break;
                    }
                },
            }
        }
    }
    let mut overflow = None;
    if rest.len() > 0 {
        with_scratch::<C, _>(|current, merged| {
            C::decode_into(leaf, used, current);
            match rest {
                Batch::Insert(items) => union_into::<C>(current, items, merged),
                Batch::Remove(keys) => difference_into::<C>(current, keys, merged),
            }
            changed += current.len().abs_diff(merged.len());
            used = if merged.is_empty() {
                0
            } else if let Some(written) = C::encode_bounded(merged, leaf) {
                written
            } else {
                // Too big: the leaf's bytes are scratch until redistribution.
                // An exact-size copy keeps the scratch's capacity for the next leaf.
                overflow = Some(merged.clone());
                C::encoded_len(merged)
            };
        });
    }
    if changed == 0 {
        // Nothing added or removed (values replaced in place at most): sizes and heads stand.
        return;
    }
    let head = match &overflow {
        Some(items) => Some(C::key(items[0])),
        None if used > 0 => Some(C::lower_bound(leaf, used, 0).map_or(u64::MAX, C::key)),
        None => None, // empty: the head is repaired after the merge
    };
    *parts.used = used as u32;
    if let Some(head) = head {
        parts.set_head(head);
    }
    if let Some(items) = overflow {
        out.overflow.push((global, items));
    }
    out.touched.push(global);
    out.changed += changed;
    out.bytes_delta += used as isize - old_used as isize;
}

/// Pushes `item`, replacing the last item instead if it has the same key.
#[inline(always)]
fn push_last_wins<C: LeafCodec>(out: &mut Vec<C::Item>, item: C::Item) {
    match out.last_mut() {
        Some(last) if C::key(*last) == C::key(item) => *last = item,
        _ => out.push(item),
    }
}

/// Appends the union of `a` (sorted, unique keys) and `b` (sorted, duplicates allowed) to
/// `out`; where keys are equal, the item of `b` (the last one) wins.
fn union_into<C: LeafCodec>(a: &[C::Item], b: &[C::Item], out: &mut Vec<C::Item>) {
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (C::key(a[i]), C::key(b[j]));
        let take_b = y <= x;
        let item = if take_b { b[j] } else { a[i] };
        i += usize::from(x <= y);
        j += usize::from(take_b);
        push_last_wins::<C>(out, item);
    }
    for &item in a[i..].iter().chain(&b[j..]) {
        push_last_wins::<C>(out, item);
    }
}

/// Appends the items of `a` (sorted) whose keys are not in sorted `b` to `out`.
fn difference_into<C: LeafCodec>(a: &[C::Item], b: &[u64], out: &mut Vec<C::Item>) {
    let mut j = 0;
    for &item in a {
        let key = C::key(item);
        while j < b.len() && b[j] < key {
            j += 1;
        }
        if j == b.len() || b[j] != key {
            out.push(item);
        }
    }
}

/// A linear merge of a block of items with its share of the batch, appending to the output.
type MergeOp<I, B> = fn(&[I], &[B], &mut Vec<I>);

/// Splits sorted `a` into blocks and applies `op` to each block with its share of `b`.
fn blockwise<C: LeafCodec, B: Copy + Sync>(
    a: &[C::Item],
    b: &[B],
    key_of: fn(B) -> u64,
    op: MergeOp<C::Item, B>,
) -> Vec<C::Item> {
    let blocks = a.len().div_ceil(MERGE_GRAIN).max(1);
    let parts: Vec<Vec<C::Item>> = (0..blocks)
        .into_par_iter()
        .map(|block| {
            let (start, end) = (
                block * MERGE_GRAIN,
                ((block + 1) * MERGE_GRAIN).min(a.len()),
            );
            let b_start = if block == 0 {
                0
            } else {
                b.partition_point(|&k| key_of(k) < C::key(a[start]))
            };
            let b_end = if block + 1 == blocks {
                b.len()
            } else {
                b.partition_point(|&k| key_of(k) < C::key(a[end]))
            };
            let mut out = Vec::new();
            op(&a[start..end], &b[b_start..b_end], &mut out);
            out
        })
        .collect();
    concat_parallel(&parts)
}

/// Union of sorted unique `a` and sorted `b` (the last of `b`'s equal keys wins).
pub(super) fn union<C: LeafCodec>(a: &[C::Item], b: &[C::Item]) -> Vec<C::Item> {
    blockwise::<C, C::Item>(a, b, C::key, union_into::<C>)
}

/// Items of sorted `a` whose keys are not in sorted `b`.
pub(super) fn difference<C: LeafCodec>(a: &[C::Item], b: &[u64]) -> Vec<C::Item> {
    blockwise::<C, u64>(a, b, |k| k, difference_into::<C>)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::DeltaLeaf;

    #[test]
    fn union_and_difference_handle_duplicates_and_blocks() {
        let a: Vec<u64> = (0..200_000).map(|i| i * 3).collect();
        let b: Vec<u64> = vec![0, 1, 1, 5, 6, 599_997, 599_998, 599_998, 700_000];
        let u = union::<DeltaLeaf>(&a, &b);
        assert!(u.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(u.len(), a.len() + 4);
        let d = difference::<DeltaLeaf>(&a, &b);
        assert_eq!(d.len(), a.len() - 3);
        assert!(!d.contains(&0) && !d.contains(&6) && !d.contains(&599_997));
        assert_eq!(union::<DeltaLeaf>(&[], &[3, 3]), [3]);
        assert!(difference::<DeltaLeaf>(&[], &[1]).is_empty());
    }
}
