//! Cursors: positions of keys inside the array, so that a reader can resume a scan in the
//! middle of a leaf without searching (the graph's flat vertex index stores one per vertex).

use rayon::prelude::*;

use super::leaf::{LeafCodec, SliceRun};
use super::Pma;
use std::sync::Arc;

/// The position of one key: its leaf, the byte offset of its entry in the leaf, and the key
/// before it in the same leaf (which delta decoding continues from). Valid until the next
/// update of the array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Cursor {
    pub(crate) leaf: u32,
    pub(crate) offset: u32,
    pub(crate) prev: u64,
}

/// Where a run of keys starts, in 12 bytes, for a holder that knows the high 32 bits of the
/// run's first key (the flat index's vertex): the low half of the first key, and the leaf
/// and byte offset just past its entry, from which decoding continues with that key as the
/// predecessor. Read with [`Pma::for_count_from_short`]; valid until the next update.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ShortCursor {
    leaf: u32,
    /// Byte offset just past the first key's entry.
    next: u32,
    first_low: u32,
}

impl ShortCursor {
    /// The leaf holding the run's first key.
    #[inline]
    pub(crate) fn leaf(&self) -> usize {
        self.leaf as usize
    }

    /// The cursor of `parts` (leaf, offset past the first key's entry, first key's low half).
    #[inline(always)]
    pub(crate) fn from_parts(leaf: u32, next: u32, first_low: u32) -> Self {
        Self {
            leaf,
            next,
            first_low,
        }
    }

    /// The leaf, the offset past the first key's entry and the first key's low half.
    #[inline(always)]
    pub(crate) fn parts(&self) -> (u32, u32, u32) {
        (self.leaf, self.next, self.first_low)
    }
}

/// A maximal run of keys sharing `key >> shift` inside one leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunPiece {
    /// `key >> shift` of the run's keys.
    pub group: u64,
    /// Where the run starts.
    pub start: Cursor,
    /// The run's first key.
    pub first: u64,
    /// Keys in the run (in this leaf).
    pub len: u32,
}

impl<C: LeafCodec> Pma<C> {
    /// Calls `f` on the items from `cursor` on, in order, until it returns `false`.
    pub fn for_each_from(&self, cursor: Cursor, mut f: impl FnMut(C::Item) -> bool) {
        let first = cursor.leaf as usize;
        if first >= self.num_leaves() {
            return;
        }
        let (offset, prev) = (cursor.offset as usize, cursor.prev);
        if !C::for_each_from(
            self.leaf(first),
            self.leaf_used(first),
            offset,
            prev,
            &mut f,
        ) {
            return;
        }
        for j in first + 1..self.num_leaves() {
            if !C::for_each_while(self.leaf(j), self.leaf_used(j), &mut f) {
                return;
            }
        }
    }

    /// The short cursor of a run whose first key is `first`, starting at `start`.
    pub fn short_cursor(&self, start: Cursor, first: u64) -> ShortCursor {
        let leaf = start.leaf as usize;
        let next = if leaf < self.num_leaves() {
            C::entry_end(self.leaf(leaf), start.offset as usize)
        } else {
            0
        };
        ShortCursor {
            leaf: start.leaf,
            next: next as u32,
            first_low: first as u32,
        }
    }

    /// [`Pma::for_count_from`] from a [`ShortCursor`] whose first key's high half is `high`:
    /// the first item is the known key (no decoding), and the scan continues past its entry
    /// with that key as the predecessor.
    #[inline]
    pub fn for_count_from_short(
        &self,
        short: ShortCursor,
        high: u32,
        count: usize,
        mut f: impl FnMut(C::Item) -> bool,
    ) -> bool {
        if count == 0 || short.leaf as usize >= self.num_leaves() {
            return true;
        }
        let first = u64::from(high) << 32 | u64::from(short.first_low);
        let leaf = short.leaf as usize;
        let item = C::item_ending_at(|| self.leaf(leaf), short.next as usize, first);
        if !f(item) {
            return false;
        }
        let rest = Cursor {
            leaf: short.leaf,
            offset: short.next,
            prev: first,
        };
        self.for_count_from(rest, count - 1, f)
    }

    /// Starts loading the cache line where a read from `short` begins: the first key's
    /// value in a map, else the entry after the first key (a hint: nothing is read).
    #[inline]
    pub(crate) fn prefetch_short(&self, short: ShortCursor) {
        let leaf = short.leaf as usize;
        if leaf < self.num_leaves() {
            let at = C::first_read_byte(short.next as usize);
            super::raw::prefetch(&self.leaf(leaf)[at.min(self.leaf_bytes - 1)..], 1);
        }
    }

    /// Hints the page-table group of the leaf of `short`: the first of three steps that
    /// bring a run into the cache, each needing the lines of the one before
    /// ([`Pma::prefetch_short_slots`], then [`Pma::prefetch_short`]).
    #[inline]
    pub(crate) fn prefetch_short_group(&self, short: ShortCursor) {
        let leaf = short.leaf as usize;
        if leaf < self.num_leaves() {
            self.table.prefetch_group(leaf);
        }
    }

    /// Hints the page pointer and size of the leaf of `short` (the second step; its group
    /// should be in the cache by now, or this waits for it).
    #[inline]
    pub(crate) fn prefetch_short_slots(&self, short: ShortCursor) {
        let leaf = short.leaf as usize;
        if leaf < self.num_leaves() {
            self.table.prefetch_slots(leaf, self.page_shift);
        }
    }

    /// Fills `out` with the low halves of the keys of a run read from a [`ShortCursor`]
    /// (as [`Pma::for_count_from_short`] with `count = out.len()`); returns how many it
    /// wrote (fewer only if the array ends first).
    pub fn low_halves_from_short(&self, short: ShortCursor, high: u32, out: &mut [u32]) -> usize {
        let leaf = short.leaf as usize;
        let Some((first, rest)) = out.split_first_mut() else {
            return 0;
        };
        if leaf >= self.num_leaves() {
            return 0;
        }
        *first = short.first_low;
        let mut prev = u64::from(high) << 32 | u64::from(short.first_low);
        let (mut leaf, mut offset, mut written) = (leaf, short.next as usize, 0);
        while written < rest.len() && leaf < self.num_leaves() {
            written += C::low_halves_from(
                self.leaf(leaf),
                self.leaf_used(leaf),
                offset,
                prev,
                &mut rest[written..],
            );
            (leaf, offset, prev) = (leaf + 1, 0, 0);
        }
        1 + written
    }

    /// [`Pma::low_halves_from_short`] for two runs at once (each a [`ShortCursor`] and its
    /// keys' high half), into two slices: the codec may decode them side by side
    /// ([`LeafCodec::low_halves_pair`]). Returns how many each wrote.
    pub fn low_halves_pair_from_short(
        &self,
        runs: [(ShortCursor, u32); 2],
        outs: [&mut [u32]; 2],
    ) -> [usize; 2] {
        let [a_out, b_out] = outs;
        let [(a, a_high), (b, b_high)] = runs;
        let in_array = |short: ShortCursor| (short.leaf as usize) < self.num_leaves();
        let (Some((a_first, a_rest)), Some((b_first, b_rest)), true, true) = (
            a_out.split_first_mut(),
            b_out.split_first_mut(),
            in_array(a),
            in_array(b),
        ) else {
            return [
                self.low_halves_from_short(a, a_high, a_out),
                self.low_halves_from_short(b, b_high, b_out),
            ];
        };
        let start = |short: ShortCursor, high: u32, first: &mut u32| {
            let index = short.leaf as usize;
            *first = short.first_low;
            SliceRun {
                leaf: self.leaf(index),
                index,
                used: self.leaf_used(index),
                offset: short.next as usize,
                prev: u64::from(high) << 32 | u64::from(short.first_low),
            }
        };
        let (a, b) = (start(a, a_high, a_first), start(b, b_high, b_first));
        let next_leaf =
            |j: usize| (j < self.num_leaves()).then(|| (self.leaf(j), self.leaf_used(j)));
        let [a_written, b_written] = C::low_halves_pair([a, b], [a_rest, b_rest], next_leaf);
        [1 + a_written, 1 + b_written]
    }

    /// Calls `f` on the `count` items from `cursor` on (fewer if the array ends first), in
    /// order, until it returns `false`; returns whether all of them were visited.
    pub fn for_count_from(
        &self,
        cursor: Cursor,
        mut count: usize,
        mut f: impl FnMut(C::Item) -> bool,
    ) -> bool {
        let (mut leaf, mut offset, mut prev) =
            (cursor.leaf as usize, cursor.offset as usize, cursor.prev);
        while count > 0 && leaf < self.num_leaves() {
            let (visited, stopped) = C::for_count_from(
                self.leaf(leaf),
                self.leaf_used(leaf),
                offset,
                prev,
                count,
                &mut f,
            );
            if stopped {
                return false;
            }
            count -= visited;
            (leaf, offset, prev) = (leaf + 1, 0, 0);
        }
        true
    }
}

impl<C: LeafCodec> Pma<C> {
    /// For every group `g < num_groups` of keys sharing `key >> 32` (a vertex's run of edge
    /// keys): where its run starts, and how many keys it has (0 and a default cursor for a
    /// group with none). Computed in parallel over chunks of `grain` leaves, each writing its
    /// own range of groups: a chunk takes the groups whose first key lies in its leaves, and
    /// reads on past its last leaf to count the rest of its last run.
    pub(crate) fn run_starts(
        &self,
        num_groups: usize,
        grain: usize,
    ) -> (Vec<ShortCursor>, Vec<u32>) {
        let mut starts = vec![ShortCursor::default(); num_groups];
        let mut counts = vec![0u32; num_groups];
        let grain = grain.max(1);
        let chunks = self.num_leaves().div_ceil(grain).max(1);
        // bounds[k]: the first group chunk k takes; monotone, 0 first and num_groups last.
        // Two scans that only move forward find, for each chunk's first leaf, the last
        // non-empty leaf before it and the first at or after it: O(leaves) in all, however
        // many chunks are empty.
        let mut bounds = vec![0; chunks + 1];
        let (mut scanned, mut last_before, mut found) = (0, None, 0);
        for k in 1..chunks {
            let j = k * grain;
            while scanned < j {
                if self.leaf_used(scanned) > 0 {
                    last_before = Some(scanned);
                }
                scanned += 1;
            }
            found = found.max(j);
            while found < self.num_leaves() && self.leaf_used(found) == 0 {
                found += 1;
            }
            bounds[k] = self
                .first_run_at(found, last_before, num_groups)
                .max(bounds[k - 1]);
        }
        bounds[chunks] = num_groups;
        let mut parts = Vec::with_capacity(chunks);
        let (mut starts_left, mut counts_left) = (&mut starts[..], &mut counts[..]);
        for k in 0..chunks {
            let len = bounds[k + 1] - bounds[k];
            let (s, rest) = std::mem::take(&mut starts_left).split_at_mut(len);
            starts_left = rest;
            let (c, rest) = std::mem::take(&mut counts_left).split_at_mut(len);
            counts_left = rest;
            parts.push((k * grain, bounds[k], s, c));
        }
        parts
            .into_par_iter()
            .for_each(|(first_leaf, low, s, c)| self.fill_runs(first_leaf, low, s, c));
        (starts, counts)
    }

    /// The first group whose first key lies in leaf `first` (the first non-empty leaf of a
    /// chunk, or `num_leaves` for none) or later: that of its head, or the next group when
    /// the head's run began in `before` (the last non-empty leaf before the chunk);
    /// `num_groups` when no key follows.
    fn first_run_at(&self, first: usize, before: Option<usize>, num_groups: usize) -> usize {
        if first >= self.num_leaves() {
            return num_groups;
        }
        let group = self.head(first) >> 32;
        let low = match before.and_then(|i| C::last(self.leaf(i), self.leaf_used(i))) {
            Some(last) if last >> 32 == group => group + 1,
            _ => group,
        };
        usize::try_from(low).map_or(num_groups, |low| low.min(num_groups))
    }

    /// Fills the starts and counts of the groups `low..low + starts.len()`, scanning from
    /// leaf `first_leaf` (keys of earlier groups there are another chunk's run going on).
    fn fill_runs(
        &self,
        first_leaf: usize,
        low: usize,
        starts: &mut [ShortCursor],
        counts: &mut [u32],
    ) {
        if starts.is_empty() {
            return;
        }
        let (low, high) = (low as u64, (low + starts.len()) as u64);
        for j in first_leaf..self.num_leaves() {
            let (leaf, used) = (self.leaf(j), self.leaf_used(j));
            let mut done = false;
            C::for_each_entry(leaf, used, |key, offset, _| {
                let group = key >> 32;
                if group < low || done {
                    return;
                }
                if group >= high {
                    done = true;
                    return;
                }
                let i = (group - low) as usize;
                if counts[i] == 0 {
                    // `short_cursor` with the leaf's bytes at hand: looking the leaf up again
                    // per run measured slower (see CHANGELOG).
                    starts[i] = ShortCursor {
                        leaf: j as u32,
                        next: C::entry_end(leaf, offset) as u32,
                        first_low: key as u32,
                    };
                }
                counts[i] += 1;
            });
            if done {
                return;
            }
        }
    }

    /// Every run of keys with equal `key >> shift` in the leaves `leaves`, cut at leaf
    /// boundaries, in key order (a run spanning leaves appears once per leaf); serially.
    pub(crate) fn run_pieces_in(
        &self,
        shift: u32,
        leaves: std::ops::Range<usize>,
    ) -> Vec<RunPiece> {
        let mut pieces: Vec<RunPiece> = Vec::new();
        for j in leaves.start..leaves.end.min(self.num_leaves()) {
            let mut leaf_start = true;
            C::for_each_entry(self.leaf(j), self.leaf_used(j), |key, offset, prev| {
                let group = key >> shift;
                match pieces.last_mut() {
                    Some(piece) if !leaf_start && piece.group == group => piece.len += 1,
                    _ => pieces.push(RunPiece {
                        group,
                        start: Cursor {
                            leaf: j as u32,
                            offset: offset as u32,
                            prev,
                        },
                        first: key,
                        len: 1,
                    }),
                }
                leaf_start = false;
            });
        }
        pieces
    }

    /// The keys held by the leaves `leaves`: exactly those in `first..end`, where `first` is
    /// the head of the first leaf (an empty leaf's head is the next non-empty leaf's) and
    /// `end` that of the leaf after them (`u64::MAX` past the last leaf). Reads two heads,
    /// decodes nothing.
    pub(crate) fn key_span(&self, leaves: std::ops::Range<usize>) -> std::ops::Range<u64> {
        let head = |j: usize| {
            if j < self.num_leaves() {
                self.head(j)
            } else {
                u64::MAX
            }
        };
        head(leaves.start)..head(leaves.end)
    }

    /// How many keys from the start of the leaves `leaves` on have `key >> shift == group`
    /// and are below `end`: the leaves are decoded from their first key only until a key
    /// fails either test.
    pub(crate) fn count_leading_run(
        &self,
        shift: u32,
        leaves: std::ops::Range<usize>,
        group: u64,
        end: u64,
    ) -> usize {
        let mut count = 0;
        for j in leaves.start..leaves.end.min(self.num_leaves()) {
            let used = self.leaf_used(j);
            if used == 0 {
                continue;
            }
            let whole = C::for_each_while(self.leaf(j), used, |item| {
                let key = C::key(item);
                let ours = key < end && key >> shift == group;
                count += usize::from(ours);
                ours
            });
            if !whole {
                break;
            }
        }
        count
    }

    /// How many of the first `count` keys of the run at `short` (first key's high half
    /// `high`) are below `end`: decoded from the run's start until a key is not.
    pub(crate) fn count_run_below(
        &self,
        short: ShortCursor,
        high: u32,
        count: usize,
        end: u64,
    ) -> usize {
        let mut below = 0;
        self.for_count_from_short(short, high, count, |item| {
            let ours = C::key(item) < end;
            below += usize::from(ours);
            ours
        });
        below
    }

    /// Whether leaf `j` holds the same items here and in `base` (of the same layout).
    fn same_leaf(&self, base: &Self, j: usize) -> bool {
        let used = self.leaf_used(j);
        used == base.leaf_used(j)
            && self.head(j) == base.head(j)
            && self.leaf(j)[..used] == base.leaf(j)[..used]
    }

    /// What this version holds apart from `base` (an earlier version of the same array):
    /// the bytes of the pages and table levels the two do not share, against the bytes of
    /// the leaves whose contents differ, the least any copy-on-write scheme could copy.
    /// `None` when the two are not laid out alike (a rebuild, growth or shrink came
    /// between). O(supergroups + groups not shared + bytes of the pages not shared).
    ///
    /// # Examples
    /// ```
    /// use packgraph::pma::Cpma;
    ///
    /// let mut set = Cpma::from_sorted(&(0..100_000u64).map(|k| 3 * k).collect::<Vec<_>>()).unwrap();
    /// let held = set.clone();
    /// set.insert(1);
    /// let volume = set.copy_volume(&held).unwrap();
    /// assert_eq!(volume.leaves_changed, 1);
    /// assert!(volume.page_bytes >= volume.leaf_bytes_changed);
    /// ```
    pub fn copy_volume(&self, base: &Self) -> Option<CopyVolume> {
        let changed = self.changed_since(base)?;
        let mut volume = CopyVolume {
            leaves_changed: changed.iter().map(|r| r.len()).sum(),
            ..CopyVolume::default()
        };
        volume.leaf_bytes_changed = volume.leaves_changed * self.leaf_bytes;
        if Arc::ptr_eq(&self.table, &base.table) {
            return Some(volume);
        }
        volume.table_bytes =
            self.table
                .unshared(&base.table, self.page_shift, |_, mine, theirs| {
                    volume.page_bytes += (mine.pages.iter().zip(&theirs.pages))
                        .filter(|(a, b)| !Arc::ptr_eq(a, b))
                        .map(|(a, _)| a.len())
                        .sum::<usize>();
                });
        Some(volume)
    }

    /// The leaf ranges whose contents differ between this version and `base`: in every page
    /// the two do not share, the leaves whose size, head or used bytes differ (a page is
    /// copied whole on its first write, so most of a copied page's leaves are unchanged).
    /// `None` when their leaf counts, leaf sizes or page sizes differ (a rebuild, growth or
    /// shrink came between), so nothing lines up. O(groups + bytes of the pages not
    /// shared): compares bytes, decodes nothing.
    pub(crate) fn changed_since(&self, base: &Self) -> Option<Vec<std::ops::Range<usize>>> {
        if self.num_leaves != base.num_leaves
            || self.leaf_bytes != base.leaf_bytes
            || self.page_shift != base.page_shift
        {
            return None;
        }
        if Arc::ptr_eq(&self.table, &base.table) {
            return Some(Vec::new());
        }
        if (self.table.group_shift, self.table.super_shift)
            != (base.table.group_shift, base.table.super_shift)
        {
            return None;
        }
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
        self.table
            .unshared(&base.table, self.page_shift, |first_page, mine, theirs| {
                for (i, (mine, theirs)) in mine.pages.iter().zip(&theirs.pages).enumerate() {
                    if Arc::ptr_eq(mine, theirs) {
                        continue;
                    }
                    let p = first_page + i;
                    let leaves =
                        p << self.page_shift..((p + 1) << self.page_shift).min(self.num_leaves);
                    for j in leaves.filter(|&j| !self.same_leaf(base, j)) {
                        match ranges.last_mut() {
                            Some(last) if last.end == j => last.end = j + 1,
                            _ => ranges.push(j..j + 1),
                        }
                    }
                }
            });
        Some(ranges)
    }
}

/// Bytes one version holds apart from an earlier one ([`Pma::copy_volume`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CopyVolume {
    /// Bytes of leaf pages the later version does not share with the earlier one.
    pub page_bytes: usize,
    /// Bytes of page-table groups and top level it does not share.
    pub table_bytes: usize,
    /// Leaves whose size, head or bytes differ.
    pub leaves_changed: usize,
    /// Their bytes (`leaves_changed` times the leaf size).
    pub leaf_bytes_changed: usize,
}

impl CopyVolume {
    /// Bytes not shared (pages and table) over the bytes of the changed leaves; 1 when
    /// nothing changed and nothing was copied, infinite when bytes were copied for no change.
    pub fn ratio(&self) -> f64 {
        let copied = self.page_bytes + self.table_bytes;
        match (copied, self.leaf_bytes_changed) {
            (0, 0) => 1.0,
            (_, 0) => f64::INFINITY,
            (c, changed) => c as f64 / changed as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::{Cpma, PlainPma, PmaConfig};

    fn config() -> PmaConfig {
        PmaConfig {
            leaf_bytes: Some(64),
            upper_density_root: 0.6,
            lower_density_root: 0.2,
            lower_density_leaf: 0.05,
            ..PmaConfig::default()
        }
    }

    fn check<C: LeafCodec<Item = u64>>(keys: &[u64]) {
        let pma = Pma::<C>::from_sorted_with_config(keys, config()).unwrap();
        let pieces = pma.run_pieces_in(32, 0..pma.num_leaves());
        assert_eq!(
            pieces.iter().map(|p| p.len as usize).sum::<usize>(),
            keys.len()
        );
        let mut at = 0;
        for piece in &pieces {
            let mut seen = Vec::new();
            let mut left = piece.len;
            pma.for_each_from(piece.start, |k| {
                seen.push(k);
                left -= 1;
                left > 0
            });
            assert_eq!(seen, keys[at..at + piece.len as usize]);
            let mut counted = Vec::new();
            assert!(
                pma.for_count_from(piece.start, piece.len as usize + 3, |k| {
                    counted.push(k);
                    true
                }) || at + piece.len as usize + 3 > keys.len()
            );
            let end = (at + piece.len as usize + 3).min(keys.len());
            assert_eq!(counted, keys[at..end]);
            assert!(seen.iter().all(|k| k >> 32 == piece.group));
            at += piece.len as usize;
        }
    }

    #[test]
    fn pieces_cover_every_key_and_resume_mid_leaf() {
        let keys: Vec<u64> = (0..50u64)
            .flat_map(|u| (0..(u % 7) * 3).map(move |v| (u << 32) | (v * 5)))
            .collect();
        check::<crate::pma::DeltaLeaf>(&keys);
        check::<crate::pma::PlainLeaf>(&keys);
        assert!(Cpma::new().run_pieces_in(32, 0..1).is_empty());
        let _ = PlainPma::new();
    }
}
