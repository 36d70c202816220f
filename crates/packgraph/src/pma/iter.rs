//! Reads over many keys: ordered iteration, range iteration and range maps, and parallel
//! scans (CPMA paper, section 3, `range_map`: search the start, then scan).

use std::ops::{Bound, RangeBounds};

use rayon::prelude::*;

use super::leaf::LeafCodec;
use super::Pma;
use super::LEAF_GRAIN;

/// Iterator over the items of a [`Pma`] whose keys are in a range, in order. Decodes a leaf at a time.
#[derive(Debug, Clone)]
pub struct Range<'a, C: LeafCodec> {
    pma: &'a Pma<C>,
    next_leaf: usize,
    buffer: Vec<C::Item>,
    at: usize,
    end: Bound<u64>,
}

impl<C: LeafCodec> Iterator for Range<'_, C> {
    type Item = C::Item;

    fn next(&mut self) -> Option<C::Item> {
        while self.at == self.buffer.len() {
            if self.next_leaf >= self.pma.num_leaves() {
                return None;
            }
            self.buffer.clear();
            self.at = 0;
            let j = self.next_leaf;
            C::decode_into(self.pma.leaf(j), self.pma.leaf_used(j), &mut self.buffer);
            self.next_leaf += 1;
        }
        let item = self.buffer[self.at];
        let key = C::key(item);
        let inside = match self.end {
            Bound::Included(end) => key <= end,
            Bound::Excluded(end) => key < end,
            Bound::Unbounded => true,
        };
        if !inside {
            self.next_leaf = self.pma.num_leaves();
            self.buffer.clear();
            self.at = 0;
            return None;
        }
        self.at += 1;
        Some(item)
    }
}

impl<C: LeafCodec> Pma<C> {
    /// All items in ascending key order.
    pub fn iter(&self) -> Range<'_, C> {
        self.range(..)
    }

    /// The items whose keys are inside `range`, in ascending order.
    ///
    /// # Examples
    /// ```
    /// let set = packgraph::pma::Cpma::from_sorted(&[1, 5, 9, 12]).unwrap();
    /// assert_eq!(set.range(5..12).collect::<Vec<_>>(), [5, 9]);
    /// assert_eq!(set.range(..=5).count(), 2);
    /// ```
    pub fn range(&self, range: impl RangeBounds<u64>) -> Range<'_, C> {
        let start = match range.start_bound() {
            Bound::Included(&s) => Some(s),
            Bound::Excluded(&s) => s.checked_add(1),
            Bound::Unbounded => Some(0),
        };
        let mut iter = Range {
            pma: self,
            next_leaf: self.num_leaves(),
            buffer: Vec::new(),
            at: 0,
            end: range.end_bound().cloned(),
        };
        if let Some(start) = start {
            let j = self.find_leaf(start);
            C::decode_into(self.leaf(j), self.leaf_used(j), &mut iter.buffer);
            iter.at = iter.buffer.partition_point(|&k| C::key(k) < start);
            iter.next_leaf = j + 1;
        }
        iter
    }

    /// Calls `f` on every item with a key in `[start, end)` in order; returns how many.
    pub fn map_range(&self, start: u64, end: u64, mut f: impl FnMut(C::Item)) -> usize {
        let mut count = 0;
        self.scan_from(start, |item| {
            if C::key(item) >= end {
                return false;
            }
            f(item);
            count += 1;
            true
        });
        count
    }

    /// Calls `f` on the first `length` items with keys `>= start` in order; returns how
    /// many there were.
    pub fn map_range_length(&self, start: u64, length: usize, mut f: impl FnMut(C::Item)) -> usize {
        let mut count = 0;
        if length > 0 {
            self.scan_from(start, |key| {
                f(key);
                count += 1;
                count < length
            });
        }
        count
    }

    /// Feeds items with keys `>= start` to `f` in order until it returns `false`.
    fn scan_from(&self, start: u64, mut f: impl FnMut(C::Item) -> bool) {
        let first = self.find_leaf(start);
        let keep_going = C::for_each_while(self.leaf(first), self.leaf_used(first), |k| {
            C::key(k) < start || f(k)
        });
        if !keep_going {
            return;
        }
        for j in first + 1..self.num_leaves() {
            if !C::for_each_while(self.leaf(j), self.leaf_used(j), &mut f) {
                return;
            }
        }
    }

    /// Calls `f` on every item, in parallel over leaves (no order guaranteed).
    pub fn par_for_each(&self, f: impl Fn(C::Item) + Sync + Send) {
        (0..self.num_leaves())
            .into_par_iter()
            .with_min_len(LEAF_GRAIN)
            .for_each(|j| {
                C::for_each_while(self.leaf(j), self.leaf_used(j), |key| {
                    f(key);
                    true
                });
            });
    }

    /// Folds every item in parallel: `fold` adds items to accumulators made by `identity`
    /// (one per run of leaves), then `reduce` combines them (rayon's `fold` + `reduce`).
    ///
    /// # Examples
    /// ```
    /// let set = packgraph::pma::Cpma::from_sorted(&[1, 2, 3]).unwrap();
    /// assert_eq!(set.par_fold(|| 0u64, |sum, key| *sum += key, |a, b| a + b), 6);
    /// ```
    pub fn par_fold<T: Send>(
        &self,
        identity: impl Fn() -> T + Sync + Send,
        fold: impl Fn(&mut T, C::Item) + Sync + Send,
        reduce: impl Fn(T, T) -> T + Sync + Send,
    ) -> T {
        (0..self.num_leaves())
            .into_par_iter()
            .with_min_len(LEAF_GRAIN)
            .fold(&identity, |mut acc, j| {
                C::for_each_while(self.leaf(j), self.leaf_used(j), |key| {
                    fold(&mut acc, key);
                    true
                });
                acc
            })
            .reduce(&identity, reduce)
    }
}
