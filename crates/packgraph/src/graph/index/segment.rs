//! A segment of the flat index: the entries of `1 << segment_shift` consecutive vertices,
//! only those of the vertices with arcs kept, found by rank in a bit mask.

use std::sync::Arc;

use super::packed::Packed;
use super::Chunk;
use crate::pma::raw::hint_counts;

/// The entries of `1 << segment_shift` consecutive vertices: only those of the vertices
/// with arcs are kept (a Kronecker graph leaves a third of its vertices without any), found
/// by the rank of their bit in `mask`.
#[derive(Debug, Clone)]
pub(super) struct Segment {
    /// Bit `i`: the segment's vertex `i` has an entry.
    pub(super) mask: u64,
    /// The entries of the vertices in `mask`, in order, then one empty entry that every
    /// vertex without arcs reads (so that a lookup takes no branch on the bit).
    pub(super) entries: Arc<[Packed]>,
}

impl PartialEq for Segment {
    fn eq(&self, other: &Self) -> bool {
        self.mask == other.mask && self.entries[..] == other.entries[..]
    }
}

/// The bits below `n` (all of them from 64 on).
#[inline(always)]
pub(super) fn low_bits(n: usize) -> u64 {
    if n >= 64 {
        u64::MAX
    } else {
        (1u64 << n) - 1
    }
}

impl Segment {
    /// A segment of vertices without arcs, sharing `empty` (one empty entry).
    pub(super) fn empty(empty: &Arc<[Packed]>) -> Self {
        Self {
            mask: 0,
            entries: Arc::clone(empty),
        }
    }

    /// The segment of `entries` (one per vertex), keeping those that are not empty.
    pub(super) fn from_dense(entries: impl Iterator<Item = Packed>, empty: &Arc<[Packed]>) -> Self {
        let mut mask = 0;
        let mut kept = Vec::new();
        for (i, entry) in entries.enumerate() {
            if entry != Packed::default() {
                mask |= 1 << i;
                kept.push(entry);
            }
        }
        if kept.is_empty() {
            return Self::empty(empty);
        }
        kept.push(Packed::default());
        Self {
            mask,
            entries: kept.into(),
        }
    }

    /// Where the segment's vertex `i`'s entry is in `entries`: the rank of its bit, or the
    /// empty entry at the end for a vertex without arcs.
    #[inline(always)]
    fn slot(&self, i: usize) -> usize {
        let bit = 1u64 << i;
        let rank = (self.mask & (bit - 1)).count_ones() as usize;
        if self.mask & bit != 0 {
            rank
        } else {
            self.entries.len() - 1
        }
    }

    /// The entry of the segment's vertex `i` (empty without arcs).
    #[inline(always)]
    pub(super) fn get(&self, i: usize) -> Packed {
        self.entries[self.slot(i)]
    }

    /// Starts loading the cache line of the segment's vertex `i`'s entry (a hint).
    #[inline(always)]
    pub(super) fn prefetch(&self, i: usize) {
        let entry = self.entries.as_ptr().wrapping_add(self.slot(i));
        crate::pma::raw::prefetch_addr(entry.cast());
    }

    /// The entries of the vertices `i..stop` that have one, and their bits.
    #[inline(always)]
    pub(super) fn slice(&self, i: usize, stop: usize) -> (u64, &[Packed]) {
        let mask = self.mask & low_bits(stop) & !low_bits(i);
        let from = (self.mask & low_bits(i)).count_ones() as usize;
        let to = from + mask.count_ones() as usize;
        (mask, &self.entries[from..to])
    }

    /// Sets the entry of the segment's vertex `i` (an empty entry removes it), copying the
    /// entries first if another version shares them.
    pub(super) fn set(&mut self, i: usize, entry: Packed) {
        let bit = 1u64 << i;
        let rank = (self.mask & (bit - 1)).count_ones() as usize;
        let e = &self.entries;
        match (self.mask & bit != 0, entry != Packed::default()) {
            (true, true) => unshare_entries(&mut self.entries)[rank] = entry,
            (false, false) => {}
            (true, false) => {
                self.entries = e[..rank].iter().chain(&e[rank + 1..]).copied().collect();
                self.mask &= !bit;
            }
            (false, true) => {
                let with = e[..rank].iter().chain([&entry]).chain(&e[rank..]);
                self.entries = with.copied().collect();
                self.mask |= bit;
            }
        }
    }
}

/// The vertices `base + i` for the bits `i` of `mask`, in order.
#[inline(always)]
pub(super) fn vertices_of(base: usize, mut mask: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let i = mask.trailing_zeros() as usize;
        mask &= mask.wrapping_sub(1);
        (i < 64).then_some(base + i)
    })
}

/// The entries of `slot`, copied first (one contiguous copy) if another version shares them.
#[inline]
fn unshare_entries(slot: &mut Arc<[Packed]>) -> &mut [Packed] {
    if Arc::get_mut(slot).is_none() {
        *slot = Arc::from(&slot[..]);
    }
    Arc::get_mut(slot).expect("a segment just copied has one holder")
}

/// Hints the reference counts of the entries of `segments` ([`hint_counts`]).
#[inline]
pub(super) fn hint_segments(segments: &[Segment]) {
    for segment in segments {
        hint_counts(std::slice::from_ref(&segment.entries));
    }
}

/// The segments of `chunk`, copied first if another version shares them (their entries'
/// reference counts hinted first, as [`unshare_pointers`]).
#[inline]
pub(super) fn unshare_segments(chunk: &mut Chunk) -> &mut [Segment] {
    if Arc::get_mut(chunk).is_none() {
        hint_segments(chunk);
        *chunk = Arc::from(&chunk[..]);
    }
    Arc::get_mut(chunk).expect("a chunk just copied has one holder")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A non-empty entry told apart by `tag` (its degree; the start is a test value).
    fn entry(tag: u32) -> Packed {
        Packed::tagged(tag)
    }

    proptest! {
        /// Any sequence of sets (empty entries among them) leaves a segment reading as a
        /// plain array of 64 entries; a copy taken before each set (another version's share)
        /// keeps reading as the array did then; slices give exactly the kept entries of
        /// their range, with their vertices.
        #[test]
        fn a_segment_reads_as_a_plain_array(
            start in proptest::collection::vec(0u32..3, 64),
            sets in proptest::collection::vec((0usize..64, 0u32..4), 0..80),
            ranges in proptest::collection::vec((0usize..64, 0usize..65), 1..6),
        ) {
            let empty: Arc<[Packed]> = Arc::from([Packed::default()]);
            let mut plain: Vec<Packed> =
                start.iter().map(|&t| if t == 0 { Packed::default() } else { entry(t) }).collect();
            let mut segment = Segment::from_dense(plain.iter().copied(), &empty);
            for (i, tag) in sets {
                let before = segment.clone();
                let old = plain.clone();
                let next = if tag == 0 { Packed::default() } else { entry(tag) };
                segment.set(i, next);
                plain[i] = next;
                for (k, want) in old.iter().enumerate() {
                    prop_assert_eq!(before.get(k), *want);
                }
                for (k, want) in plain.iter().enumerate() {
                    prop_assert_eq!(segment.get(k), *want);
                }
                let kept = plain.iter().filter(|e| **e != Packed::default()).count();
                prop_assert_eq!(segment.mask.count_ones() as usize, kept);
                prop_assert_eq!(segment.entries.len(), kept + 1);
            }
            for (a, b) in ranges {
                let (i, stop) = (a.min(b), a.max(b).min(64));
                let (mask, entries) = segment.slice(i, stop);
                let want: Vec<(usize, Packed)> = (i..stop)
                    .filter(|&k| plain[k] != Packed::default())
                    .map(|k| (100 + k, plain[k]))
                    .collect();
                let got: Vec<(usize, Packed)> =
                    vertices_of(100, mask).zip(entries.iter().copied()).collect();
                prop_assert_eq!(got, want);
            }
        }
    }

    /// A segment with no arcs shares the empty entry it was given; the first entry set in
    /// it allocates its own, and removing it leaves one empty entry again.
    #[test]
    fn an_empty_segment_shares_its_entry_until_it_gets_one() {
        let empty: Arc<[Packed]> = Arc::from([Packed::default()]);
        let mut segment = Segment::from_dense([Packed::default(); 64].into_iter(), &empty);
        assert!(Arc::ptr_eq(&segment.entries, &empty));
        segment.set(63, entry(5));
        assert!(!Arc::ptr_eq(&segment.entries, &empty));
        assert_eq!(
            (segment.mask, segment.get(63), segment.get(0)),
            (1 << 63, entry(5), Packed::default())
        );
        segment.set(63, Packed::default());
        assert_eq!((segment.mask, segment.entries.len()), (0, 1));
        assert_eq!(low_bits(64), u64::MAX);
        assert_eq!(low_bits(3), 0b111);
        assert_eq!(vertices_of(8, 0).count(), 0);
    }
}
