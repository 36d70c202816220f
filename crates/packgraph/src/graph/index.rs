//! The flat vertex index (Aspen's "flat snapshot"): for every vertex, where its run of edge
//! keys starts in the CPMA and how long it is, built in one parallel pass over the leaves.
//!
//! With it, a neighbor scan starts decoding at the run's first byte (no search) and the
//! degree is known without decoding. It costs 16 bytes per vertex (a 12-byte
//! [`ShortCursor`]: the run's first target, known without decoding, and where the entry
//! after it starts; and a 4-byte degree) and is rebuilt after an update, on first use.

use crate::pma::{LeafCodec, Pma, ShortCursor};

use super::read::VertexId;

/// Runs of fewer arcs in all are decoded in one piece by [`RunIndex::targets_in`].
const PAIR_MIN_ARCS: usize = 256;
/// Ranges whose vertices have fewer arcs on average are decoded in one piece too (a path
/// graph read in blocks measured faster in one piece than in two halves; see CHANGELOG).
const PAIR_MIN_DEGREE: usize = 8;

/// Leaves per parallel task of [`RunIndex::build`]. Each task writes the entries of the
/// vertices whose runs start in its leaves (measured faster than tasks returning run
/// pieces for one thread to apply; see CHANGELOG).
const BUILD_GRAIN: usize = 64;

/// Start and length of every vertex's run in one edge CPMA.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunIndex {
    starts: Vec<ShortCursor>,
    degrees: Vec<u32>,
}

impl RunIndex {
    /// Indexes the runs of `edges` (keys `(source << 32) | target`) for `num_vertices`.
    pub(crate) fn build<C: LeafCodec>(edges: &Pma<C>, num_vertices: usize) -> Self {
        Self::build_in_chunks(edges, num_vertices, BUILD_GRAIN)
    }

    /// [`RunIndex::build`] with parallel tasks of `grain` leaves.
    fn build_in_chunks<C: LeafCodec>(edges: &Pma<C>, num_vertices: usize, grain: usize) -> Self {
        let (starts, degrees) = edges.run_starts(num_vertices, grain);
        Self { starts, degrees }
    }

    /// The index of `edges` derived from `base`, the index of an earlier version `base_edges`
    /// of the same array: only the vertices with keys in pages the two versions do not share
    /// are re-scanned; every other vertex's run is byte-for-byte where it was. `None` when
    /// the layouts differ or most pages changed (a full build is then as cheap).
    pub(crate) fn update_from<C: LeafCodec>(
        base: &Self,
        base_edges: &Pma<C>,
        edges: &Pma<C>,
        num_vertices: usize,
    ) -> Option<Self> {
        let changed = edges.changed_since(base_edges)?;
        let changed_leaves: usize = changed.iter().map(|r| r.len()).sum();
        if changed_leaves * 4 > edges.num_leaves() || base.degrees.len() > num_vertices {
            return None;
        }
        // Vertices with keys in changed leaves, in either version.
        let mut spans: Vec<(u64, u64)> = Vec::new();
        for range in &changed {
            let (old, new) = (
                base_edges.key_span(range.clone()),
                edges.key_span(range.clone()),
            );
            let (lo, hi) = match (old, new) {
                (None, None) => continue,
                (Some(a), None) | (None, Some(a)) => a,
                (Some(a), Some(b)) => (a.0.min(b.0), a.1.max(b.1)),
            };
            let (lo, hi) = (lo >> 32, hi >> 32);
            match spans.last_mut() {
                Some(last) if lo <= last.1 + 1 => last.1 = last.1.max(hi),
                _ => spans.push((lo, hi)),
            }
        }
        let mut index = base.clone();
        index.starts.resize(num_vertices, ShortCursor::default());
        index.degrees.resize(num_vertices, 0);
        for (lo, hi) in spans {
            let (lo, hi) = (
                lo as usize,
                (hi as usize).min(num_vertices.saturating_sub(1)),
            );
            if lo > hi {
                continue;
            }
            index.degrees[lo..=hi].fill(0);
            let first = edges.find_leaf((lo as u64) << 32);
            let last = edges.find_leaf(((hi as u64) << 32) | u64::from(u32::MAX));
            for piece in edges.run_pieces_in(32, first..last + 1) {
                let v = piece.group as usize;
                if (lo..=hi).contains(&v) {
                    if index.degrees[v] == 0 {
                        index.starts[v] = edges.short_cursor(piece.start, piece.first);
                    }
                    index.degrees[v] += piece.len;
                }
            }
        }
        Some(index)
    }

    /// Starts loading the cache line where `v`'s run goes on after its first arc (which
    /// the entry holds): a hint for a loop that reads `v`'s arcs a few vertices later.
    /// Nothing is read for a vertex out of range or with fewer than two arcs.
    #[inline]
    pub(crate) fn prefetch<C: LeafCodec>(&self, edges: &Pma<C>, v: VertexId) {
        if self.degree(v) > 1 {
            edges.prefetch_short(self.starts[v as usize]);
        }
    }

    pub(crate) fn degree(&self, v: VertexId) -> usize {
        self.degrees.get(v as usize).map_or(0, |&d| d as usize)
    }

    pub(crate) fn degrees(&self) -> &[u32] {
        &self.degrees
    }

    /// Calls `f` on the items (edge keys, or keys with weights) of `v`'s run until it
    /// returns `false`.
    #[inline]
    pub(crate) fn for_each<C: LeafCodec>(
        &self,
        edges: &Pma<C>,
        v: VertexId,
        f: impl FnMut(C::Item) -> bool,
    ) -> bool {
        let degree = self.degree(v);
        if degree == 0 {
            return true;
        }
        edges.for_count_from_short(self.starts[v as usize], v, degree, f)
    }

    /// The first vertex in `vertices` with arcs and the number of arcs from it to the range's
    /// end (their runs lie one after another); `None` if the range has no arcs.
    fn span(&self, vertices: std::ops::Range<VertexId>) -> Option<(usize, usize)> {
        let end = (vertices.end as usize).min(self.degrees.len());
        let start = (vertices.start as usize).min(end);
        let degrees = &self.degrees[start..end];
        let first = degrees.iter().position(|&d| d > 0)?;
        let count = degrees[first..].iter().map(|&d| d as usize).sum();
        Some((start + first, count))
    }

    /// Calls `f(v, u)` on the arcs of every vertex `v` in `vertices`, in key order: the
    /// runs of consecutive vertices lie one after another in the array, so this is one
    /// decode from the first run's start for the sum of their degrees.
    #[inline]
    pub(crate) fn for_each_arc_in<C: LeafCodec>(
        &self,
        edges: &Pma<C>,
        vertices: std::ops::Range<VertexId>,
        mut f: impl FnMut(VertexId, VertexId),
    ) {
        let Some((from, count)) = self.span(vertices) else {
            return;
        };
        edges.for_count_from_short(self.starts[from], from as VertexId, count, |item| {
            let key = C::key(item);
            f((key >> 32) as VertexId, key as VertexId);
            true
        });
    }

    /// Replaces `out` with the targets of the arcs of every vertex in `vertices`, in key
    /// order (one decode, as [`RunIndex::for_each_arc_in`]).
    pub(crate) fn targets_in<C: LeafCodec>(
        &self,
        edges: &Pma<C>,
        vertices: std::ops::Range<VertexId>,
        out: &mut Vec<VertexId>,
    ) {
        let Some((from, count)) = self.span(vertices.clone()) else {
            out.clear();
            return;
        };
        // Every slot is written below: only slots past the old length need a value first
        // (a buffer reused across blocks is not cleared and refilled with zeros).
        out.resize(count, 0);
        // Two halves pay on long runs of high-degree vertices; on a low-degree graph (a road
        // network) the pair's extra work per leaf outweighs the waits it hides.
        let middle = (count >= PAIR_MIN_ARCS && count >= PAIR_MIN_DEGREE * vertices.len())
            .then(|| self.middle(from, vertices.end as usize, count))
            .flatten();
        let written = match middle {
            // Two halves decoded side by side (see `Pma::low_halves_pair_from_short`).
            Some((mid, before)) => {
                let (a, b) = out.split_at_mut(before);
                let runs = [
                    (self.starts[from], from as VertexId),
                    (self.starts[mid], mid as VertexId),
                ];
                edges.low_halves_pair_from_short(runs, [a, b]).iter().sum()
            }
            _ => edges.low_halves_from_short(self.starts[from], from as VertexId, out),
        };
        debug_assert_eq!(written, count);
        out.truncate(written);
    }

    /// The first vertex with arcs in `from + 1..end` whose run starts at or past the middle
    /// of the `count` arcs from `from`'s run on, and the arcs before it; `None` if no such
    /// vertex has arcs. Whole chunks of degrees are summed first (vectorized), so only the
    /// chunk holding the middle is walked one vertex at a time: on a low-degree graph a
    /// walk over every vertex would cost as much as a scalar decode of its arcs.
    fn middle(&self, from: usize, end: usize, count: usize) -> Option<(usize, usize)> {
        const CHUNK: usize = 64;
        let end = end.min(self.degrees.len());
        let mut before = self.degrees[from] as usize;
        let mut v = from + 1;
        while v + CHUNK <= end {
            let sum: usize = self.degrees[v..v + CHUNK].iter().map(|&d| d as usize).sum();
            if 2 * (before + sum) >= count {
                break;
            }
            before += sum;
            v += CHUNK;
        }
        for v in v..end {
            let degree = self.degrees[v] as usize;
            if degree > 0 && 2 * before >= count {
                return Some((v, before));
            }
            before += degree;
        }
        None
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<ShortCursor>() + self.degrees.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::{DeltaMapLeaf, GroupLeaf, PlainLeaf};
    use proptest::prelude::*;

    /// Every vertex's run read through the index, as `(vertex, target)` pairs.
    fn runs<C: LeafCodec>(edges: &Pma<C>, n: usize) -> Vec<(u64, u64)> {
        let index = RunIndex::build(edges, n);
        let mut out = Vec::new();
        for v in 0..n as VertexId {
            index.for_each(edges, v, |item| {
                let key = C::key(item);
                out.push((key >> 32, key & 0xffff_ffff));
                true
            });
        }
        out
    }

    fn keys_of(arcs: &[(u64, u64)]) -> Vec<u64> {
        arcs.iter().map(|&(u, v)| u << 32 | v).collect()
    }

    #[test]
    fn runs_read_back_whole_after_wide_targets_and_in_maps() {
        // Wide targets before a run (the first key's low half is below its predecessor's),
        // the largest target, and weighted items (the first item's value read at its end).
        let arcs = [
            (1, 0xffff_fff0),
            (2, 5),
            (2, 7),
            (4, u64::from(u32::MAX)),
            (5, 0),
        ];
        let keys = keys_of(&arcs);
        assert_eq!(
            runs(&Pma::<GroupLeaf>::from_sorted(&keys).unwrap(), 6),
            arcs
        );
        assert_eq!(
            runs(&Pma::<PlainLeaf>::from_sorted(&keys).unwrap(), 6),
            arcs
        );
        let items: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k ^ 0xabc)).collect();
        let weighted = Pma::<DeltaMapLeaf>::from_sorted(&items).unwrap();
        let index = RunIndex::build(&weighted, 6);
        let mut seen = Vec::new();
        index.for_each(&weighted, 2, |item| {
            seen.push(item);
            true
        });
        assert_eq!(
            seen,
            [(keys[1], keys[1] ^ 0xabc), (keys[2], keys[2] ^ 0xabc)]
        );
    }

    #[test]
    fn prefetch_takes_any_vertex() {
        // Vertices with no arcs, one arc, a run ending a leaf, and past the index: a hint
        // reads nothing and never goes out of bounds.
        let keys: Vec<u64> = (0..300u64).map(|i| (i % 7) << 32 | (i / 7)).collect();
        let mut keys = keys;
        keys.sort_unstable();
        keys.push(9 << 32);
        let edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
        let index = RunIndex::build(&edges, 12);
        for v in 0..20 {
            index.prefetch(&edges, v);
        }
        assert_eq!(index.degree(9), 1);
        assert_eq!(runs(&edges, 12).len(), keys.len());
    }

    proptest! {
        /// Runs read through the 12-byte cursors equal the arcs, for arbitrary targets, with
        /// runs starting at leaf heads, mid-leaf and as a leaf's last entry.
        #[test]
        fn runs_match_the_arcs(
            set in proptest::collection::btree_set((0u64..40, any::<u32>()), 0..600),
        ) {
            let arcs: Vec<(u64, u64)> = set.iter().map(|&(u, v)| (u, u64::from(v))).collect();
            let keys = keys_of(&arcs);
            prop_assert_eq!(runs(&Pma::<GroupLeaf>::from_sorted(&keys).unwrap(), 40), arcs.clone());
            prop_assert_eq!(runs(&Pma::<PlainLeaf>::from_sorted(&keys).unwrap(), 40), arcs);
        }

        /// Indexes built by parallel chunks of 1, 2, 3 and 64 leaves give every vertex's
        /// degree and run, on skewed graphs whose low vertices' runs cross chunks or span
        /// whole ones (chunks where no run starts).
        #[test]
        fn chunked_builds_match_the_arcs(
            set in proptest::collection::btree_set(((0u64..40).prop_map(|x| x * x / 40), any::<u32>()), 0..1500),
            empty_tail in 0u64..3,
            hole in proptest::option::of((0u64..40, 0u64..40)),
        ) {
            let mut arcs: Vec<(u64, u64)> = set.iter().map(|&(u, v)| (u, u64::from(v))).collect();
            let mut edges = Pma::<GroupLeaf>::from_sorted(&keys_of(&arcs)).unwrap();
            // Removing a range of vertices' arcs leaves empty leaves between chunks.
            if let Some((a, b)) = hole {
                let gone: Vec<(u64, u64)> =
                    arcs.iter().copied().filter(|&(u, _)| (a.min(b)..=a.max(b)).contains(&u)).collect();
                edges.remove_batch(&keys_of(&gone));
                arcs.retain(|arc| !gone.contains(arc));
            }
            // Vertices past the last with arcs have none.
            let n = 40 + empty_tail as usize;
            let mut degrees = vec![0u32; n];
            for &(u, _) in &arcs {
                degrees[u as usize] += 1;
            }
            for grain in [1, 2, 3, 64] {
                let index = RunIndex::build_in_chunks(&edges, n, grain);
                prop_assert_eq!(&index.degrees, &degrees, "grain {}", grain);
                let mut read = Vec::new();
                for v in 0..n as VertexId {
                    index.for_each(&edges, v, |key| {
                        read.push((key >> 32, key & 0xffff_ffff));
                        true
                    });
                }
                prop_assert_eq!(&read, &arcs, "grain {}", grain);
            }
        }

        /// The targets of a range of vertices, decoded in two halves side by side when the
        /// range holds `PAIR_MIN_ARCS` arcs or more, equal the arcs, for ranges of every
        /// width from every start.
        #[test]
        fn range_targets_match_the_arcs(
            set in proptest::collection::btree_set((0u64..60, any::<u32>(), 0u32..4), 0..3000),
            widths in proptest::collection::vec(1u32..70, 1..4),
        ) {
            let arcs: Vec<(u64, u64)> = set
                .iter()
                .map(|&(u, v, shift)| (u, u64::from(v >> (8 * shift))))
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            let keys = keys_of(&arcs);
            let edges = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
            let index = RunIndex::build(&edges, 60);
            let mut out = vec![9; 5];
            for width in widths {
                for start in (0..62u32).step_by(width as usize) {
                    index.targets_in(&edges, start..start + width, &mut out);
                    let want: Vec<VertexId> = arcs
                        .iter()
                        .filter(|&&(u, _)| (u64::from(start)..u64::from(start + width)).contains(&u))
                        .map(|&(_, v)| v as VertexId)
                        .collect();
                    prop_assert_eq!(&out, &want, "vertices {}..{}", start, start + width);
                }
            }
        }
    }
}
