//! Batch updates, phase 1: the parallel recursive merge of a sorted batch into the leaves
//! (CPMA paper, section 4, "batch-merge phase"), plus the two other batch regimes: key by
//! key for small batches and a linear rebuild for batches comparable to the set.
//!
//! The merge searches the leaf of the batch's median, finds the batch keys bound for that
//! leaf (those between its head and the next leaf's head), merges them into it, and recurses
//! on the two sides in parallel over disjoint leaf ranges. A leaf that cannot hold its merged
//! keys keeps them in an overflow buffer until redistribution (`rebalance.rs`).

use std::cell::RefCell;

use rayon::prelude::*;

use super::layout::{concat_parallel, LeavesMut};
use super::leaf::{LeafCodec, LeafInsert};
use super::{raw, sort, Pma};

/// Batch keys per leaf below which a leaf is updated in place, key by key.
const IN_PLACE_MAX: usize = 2;
/// How many leaf groups ahead a serial merge prefetches, and how many cache lines of each.
const PREFETCH_GROUPS: usize = 4;
const PREFETCH_LINES: usize = 3;
/// Elements per task in the parallel linear merge of a rebuild.
const MERGE_GRAIN: usize = 1 << 16;

/// What the merge phase did.
#[derive(Debug, Default)]
pub(super) struct MergeOutcome {
    /// Leaves whose contents changed, ascending.
    pub(super) touched: Vec<usize>,
    /// Leaves that overflowed, with all their keys, ascending by leaf.
    pub(super) overflow: Vec<(usize, Vec<u64>)>,
    /// Keys added or removed.
    pub(super) changed: usize,
    /// Change in used bytes (an overflowed leaf counts its full encoded size).
    pub(super) bytes_delta: isize,
}

impl MergeOutcome {
    fn append(&mut self, mut other: MergeOutcome) {
        self.touched.append(&mut other.touched);
        self.overflow.append(&mut other.overflow);
        self.changed += other.changed;
        self.bytes_delta += other.bytes_delta;
    }
}

thread_local! {
    /// Scratch for decoding a leaf and merging into it, reused across calls.
    static SCRATCH: RefCell<(Vec<u64>, Vec<u64>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// `keys` sorted with duplicates removed (borrowed if it already is).
pub(super) fn sorted_unique(keys: &[u64]) -> Vec<u64> {
    let mut out = keys.to_vec();
    if !out.is_sorted() {
        sort::sort_keys(&mut out);
    }
    out.dedup();
    out
}

impl<C: LeafCodec> Pma<C> {
    /// Inserts every key of `keys` (any order, duplicates allowed); returns how many were
    /// not already present.
    ///
    /// # Complexity
    /// O(k log n + k log² n / B) amortized work for k keys (paper, Theorem 5), polylog depth.
    pub fn insert_batch(&mut self, keys: &[u64]) -> usize {
        self.update_batch(keys, true)
    }

    /// Removes every key of `keys` (any order, duplicates and absent keys allowed); returns
    /// how many were present.
    pub fn remove_batch(&mut self, keys: &[u64]) -> usize {
        self.update_batch(keys, false)
    }

    fn update_batch(&mut self, keys: &[u64], insert: bool) -> usize {
        if keys.len() < self.config.point_batch_max {
            let mut point = |key: &u64| {
                if insert {
                    self.insert(*key)
                } else {
                    self.remove(*key)
                }
            };
            return keys.iter().filter(|key| point(key)).count();
        }
        let owned;
        let batch = if keys.is_sorted() {
            keys
        } else {
            owned = sorted_unique(keys);
            &owned
        };
        if batch.len() >= self.len / self.config.rebuild_divisor {
            return self.rebuild_with(batch, insert);
        }
        let grain = self.config.parallel_grain;
        let outcome = merge_recursive::<C>(self.leaves_mut(), batch, grain, insert);
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
    fn rebuild_with(&mut self, batch: &[u64], insert: bool) -> usize {
        let old = self.gather_all(&[]);
        let new = if insert {
            union(&old, batch)
        } else {
            difference(&old, batch)
        };
        let changed = old.len().abs_diff(new.len());
        *self = Self::build(self.config.clone(), &new);
        changed
    }
}

/// Phase 1 over `leaves` for a sorted `batch` (duplicates allowed).
fn merge_recursive<C: LeafCodec>(
    leaves: LeavesMut<'_>,
    batch: &[u64],
    grain: usize,
    insert: bool,
) -> MergeOutcome {
    if batch.is_empty() {
        return MergeOutcome::default();
    }
    if batch.len() <= grain {
        return merge_serial::<C>(leaves, batch, insert);
    }
    let j = leaves.target(batch[batch.len() / 2]);
    let lo = if j == 0 {
        0
    } else {
        batch.partition_point(|&k| k < leaves.heads[j])
    };
    let hi = match leaves.heads.get(j + 1) {
        Some(&next) => batch.partition_point(|&k| k < next),
        None => batch.len(),
    };
    let (left, rest) = leaves.split_at(j);
    let (mid, right) = rest.split_at(1);
    let ((mut out, right_out), mid_out) = rayon::join(
        || {
            rayon::join(
                || merge_recursive::<C>(left, &batch[..lo], grain, insert),
                || merge_recursive::<C>(right, &batch[hi..], grain, insert),
            )
        },
        || merge_serial::<C>(mid, &batch[lo..hi], insert),
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
    batch: &[u64],
    insert: bool,
) -> MergeOutcome {
    let mut groups = Vec::new();
    let (mut i, mut j) = (0, leaves.target(batch[0]));
    while i < batch.len() {
        j = leaves.target_from(j, batch[i]);
        let end = match leaves.heads.get(j + 1) {
            Some(&next) => i + batch[i..].partition_point(|&k| k < next),
            None => batch.len(),
        };
        groups.push((j, i..end));
        i = end;
    }
    let mut out = MergeOutcome::default();
    let leaf_bytes = leaves.leaf_bytes;
    for (at, (j, run)) in groups.iter().enumerate() {
        if let Some((ahead, _)) = groups.get(at + PREFETCH_GROUPS) {
            let start = ahead * leaf_bytes;
            raw::prefetch(&leaves.data[start..start + leaf_bytes], PREFETCH_LINES);
        }
        merge_leaf::<C>(&mut leaves, *j, &batch[run.clone()], insert, &mut out);
    }
    out
}

/// Merges `keys` (sorted, duplicates allowed) into local leaf `j`.
fn merge_leaf<C: LeafCodec>(
    leaves: &mut LeavesMut<'_>,
    j: usize,
    keys: &[u64],
    insert: bool,
    out: &mut MergeOutcome,
) {
    let leaf_bytes = leaves.leaf_bytes;
    let leaf = &mut leaves.data[j * leaf_bytes..(j + 1) * leaf_bytes];
    let old_used = leaves.used[j] as usize;
    let mut used = old_used;
    let mut changed = 0;
    let mut rest = keys;
    if keys.len() <= IN_PLACE_MAX && used > 0 {
        rest = &[];
        for (at, &key) in keys.iter().enumerate() {
            if insert {
                match C::insert(leaf, used, key) {
                    LeafInsert::Present => {}
                    LeafInsert::Inserted(now) => (used, changed) = (now, changed + 1),
                    LeafInsert::Full => {
                        rest = &keys[at..];
                        break;
                    }
                }
            } else if let Some(now) = C::remove(leaf, used, key) {
                (used, changed) = (now, changed + 1);
            }
        }
    }
    let mut overflow = None;
    if !rest.is_empty() {
        SCRATCH.with_borrow_mut(|(current, merged)| {
            current.clear();
            merged.clear();
            C::decode_into(leaf, used, current);
            if insert {
                union_into(current, rest, merged);
            } else {
                difference_into(current, rest, merged);
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
        return;
    }
    let global = leaves.first + j;
    leaves.used[j] = used as u32;
    match &overflow {
        Some(keys) => leaves.heads[j] = keys[0],
        None if used > 0 => leaves.heads[j] = C::lower_bound(leaf, used, 0).unwrap_or(u64::MAX),
        None => {} // empty: the head is repaired after the merge
    }
    if let Some(keys) = overflow {
        out.overflow.push((global, keys));
    }
    out.touched.push(global);
    out.changed += changed;
    out.bytes_delta += used as isize - old_used as isize;
}

/// Appends the sorted union of sorted `a` (unique) and `b` (duplicates allowed) to `out`.
fn union_into(a: &[u64], b: &[u64], out: &mut Vec<u64>) {
    out.reserve(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let (x, y) = (a[i], b[j]);
        let next = x.min(y);
        i += usize::from(x == next);
        j += usize::from(y == next);
        if out.last() != Some(&next) {
            out.push(next);
        }
    }
    for &key in a[i..].iter().chain(&b[j..]) {
        if out.last() != Some(&key) {
            out.push(key);
        }
    }
}

/// Appends the keys of sorted `a` not in sorted `b` to `out`.
fn difference_into(a: &[u64], b: &[u64], out: &mut Vec<u64>) {
    let mut j = 0;
    for &key in a {
        while j < b.len() && b[j] < key {
            j += 1;
        }
        if j == b.len() || b[j] != key {
            out.push(key);
        }
    }
}

/// Splits sorted `a` into blocks and applies `op` to each block with its share of `b`.
fn blockwise(a: &[u64], b: &[u64], op: fn(&[u64], &[u64], &mut Vec<u64>)) -> Vec<u64> {
    let blocks = a.len().div_ceil(MERGE_GRAIN).max(1);
    let parts: Vec<Vec<u64>> = (0..blocks)
        .into_par_iter()
        .map(|block| {
            let (start, end) = (
                block * MERGE_GRAIN,
                ((block + 1) * MERGE_GRAIN).min(a.len()),
            );
            let b_start = if block == 0 {
                0
            } else {
                b.partition_point(|&k| k < a[start])
            };
            let b_end = if block + 1 == blocks {
                b.len()
            } else {
                b.partition_point(|&k| k < a[end])
            };
            let mut out = Vec::new();
            op(&a[start..end], &b[b_start..b_end], &mut out);
            out
        })
        .collect();
    concat_parallel(&parts)
}

/// Sorted union of sorted unique `a` and sorted `b`.
pub(super) fn union(a: &[u64], b: &[u64]) -> Vec<u64> {
    blockwise(a, b, union_into)
}

/// Keys of sorted `a` that are not in sorted `b`.
pub(super) fn difference(a: &[u64], b: &[u64]) -> Vec<u64> {
    blockwise(a, b, difference_into)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_and_difference_handle_duplicates_and_blocks() {
        let a: Vec<u64> = (0..200_000).map(|i| i * 3).collect();
        let b: Vec<u64> = vec![0, 1, 1, 5, 6, 599_997, 599_998, 599_998, 700_000];
        let u = union(&a, &b);
        assert!(u.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(u.len(), a.len() + 4);
        let d = difference(&a, &b);
        assert_eq!(d.len(), a.len() - 3);
        assert!(!d.contains(&0) && !d.contains(&6) && !d.contains(&599_997));
        assert_eq!(union(&[], &[3, 3]), [3]);
        assert!(difference(&[], &[1]).is_empty());
    }
}
