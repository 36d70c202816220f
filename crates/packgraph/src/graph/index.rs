//! The flat vertex index (Aspen's "flat snapshot"): for every vertex, where its run of edge
//! keys starts in the CPMA and how long it is.
//!
//! With it, a neighbor scan starts decoding at the run's first byte (no search) and the
//! degree is known without decoding. It costs 16 bytes per vertex with arcs (a 12-byte
//! [`ShortCursor`]: the run's first target, known without decoding, and where the entry
//! after it starts; and a 4-byte degree), and a bit per vertex without: a segment keeps
//! the entries of its vertices with arcs only, found by the rank of their bit in a 64-bit
//! mask (a third of a Kronecker graph's vertices have no arcs).
//!
//! The index is persistent, like the CPMA's page table, and in three levels like it:
//! entries are cut into segments of `1 << segment_shift` vertices, segments into chunks of
//! `1 << chunk_shift` vertices, each behind a reference-counted pointer, and a version's
//! index is one pointer to its table of chunks. Cloning an index is O(1). An index derived
//! from an earlier version's ([`RunIndex::update_from`]) shares every chunk and segment
//! whose vertices' entries did not change and copies only the others: a one-edge batch
//! copies the table of chunks, the chunks (each about the cube root of the segment count
//! long) holding the vertices whose runs it moved, and their segments of at most 64
//! entries (1 KiB), so that the entries copied are about the vertices changed, not a long block per
//! vertex touched.

use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use crate::pma::raw::hint_counts;
use crate::pma::{LeafCodec, Pma, ShortCursor};

use super::read::{VertexId, IN_WORD_AHEAD};

mod derive;
mod keep;
mod packed;
mod segment;

#[cfg(test)]
use derive::{decoded_counts, OLD_WALK_PER_LEAF};
use packed::{Packed, Packing};

use segment::{hint_segments, low_bits, unshare_segments, vertices_of, Segment};

/// Runs of fewer arcs in all are decoded in one piece by [`RunIndex::targets_in`].
const PAIR_MIN_ARCS: usize = 256;
/// Ranges whose vertices have fewer arcs on average are decoded in one piece too (a path
/// graph read in blocks measured faster in one piece than in two halves; see CHANGELOG).
const PAIR_MIN_DEGREE: usize = 8;

/// Leaves per parallel task of [`RunIndex::build`]. Each task writes the entries of the
/// vertices whose runs start in its leaves (measured faster than tasks returning run
/// pieces for one thread to apply; see CHANGELOG).
const BUILD_GRAIN: usize = 64;

/// log2 of the vertices per segment: 64, the bits of a segment's mask (at most 64 entries,
/// 1 KiB). A one-edge insert moves the
/// starts of the vertices after it in its leaf, so a derived index copies every segment
/// holding one of them: a segment is the unit copied per vertex touched, and is kept
/// about as long as a leaf's run of vertices, so that a small commit copies O(changed)
/// entries rather than a long contiguous block per touched leaf.
const SEGMENT_SHIFT: u32 = 6;
/// Bounds of log2 of the segments per chunk. A version's copy of a pointer level costs a
/// reference-count increment per pointer (each a cache miss of its own, hinted first so
/// that they overlap): a derivation that touches `t` segments copies the table of chunks
/// and about `t` chunks, so a chunk is kept short (about the cube root of the segment
/// count) and the table of chunks takes the rest.
const MIN_CHUNK_SEGMENTS_SHIFT: u32 = 1;
const MAX_CHUNK_SEGMENTS_SHIFT: u32 = 10;

/// One vertex's entry: its run's start and length (a segment stores it packed, side by
/// side, so that a neighbor scan reads one cache line for both).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Entry {
    start: ShortCursor,
    degree: u32,
}

/// The segments of `1 << chunk_shift` consecutive vertices (the last chunk may hold fewer).
type Chunk = Arc<[Segment]>;

/// The pointers of `slot`, copied first if another version shares them: each pointer's
/// reference count is hinted into the cache before the copy increments them all
/// ([`hint_counts`]).
#[inline]
fn unshare_pointers<T: ?Sized>(slot: &mut Arc<[Arc<T>]>) -> &mut [Arc<T>] {
    if Arc::get_mut(slot).is_none() {
        hint_counts(slot);
        *slot = Arc::from(&slot[..]);
    }
    Arc::get_mut(slot).expect("a pointer level just copied has one holder")
}

/// Start and length of every vertex's run in one edge CPMA.
#[derive(Debug, Clone)]
pub(crate) struct RunIndex {
    /// log2 of the vertices per segment.
    segment_shift: u32,
    /// log2 of the vertices per chunk.
    chunk_shift: u32,
    /// Every chunk but the last holds `1 << (chunk_shift - segment_shift)` segments.
    chunks: Arc<[Chunk]>,
    /// Vertices indexed.
    len: usize,
    /// How the segments pack their entries.
    packing: Packing,
    /// The degrees too large for a packed entry, by vertex (sorted).
    large: Arc<Vec<(u32, u32)>>,
}

impl Default for RunIndex {
    fn default() -> Self {
        let (segment_shift, chunk_shift) = level_shifts(0);
        Self {
            segment_shift,
            chunk_shift,
            chunks: Arc::from(Vec::new()),
            len: 0,
            packing: Packing::for_leaf_bytes(0),
            large: Arc::default(),
        }
    }
}

impl Drop for RunIndex {
    /// Hints the reference counts this index's drop is about to decrement, as
    /// [`unshare_pointers`] does before a copy: the chunks' when the table of chunks is this
    /// index's alone, and the segments' of each chunk only it holds. Counts read here are
    /// hints (another version may drop its share at the same time); nothing depends on them.
    fn drop(&mut self) {
        if Arc::strong_count(&self.chunks) != 1 {
            return;
        }
        hint_counts(&self.chunks);
        for chunk in self.chunks.iter() {
            if Arc::strong_count(chunk) == 1 {
                hint_segments(chunk);
            }
        }
    }
}

/// log2 of the vertices per segment and per chunk for an index of `num_vertices`: segments
/// of [`SEGMENT_SHIFT`], and a third of the remaining bits, rounded down, for a chunk's
/// segments.
fn level_shifts(num_vertices: usize) -> (u32, u32) {
    let bits = usize::BITS - num_vertices.max(1).leading_zeros();
    let segments = (bits.saturating_sub(SEGMENT_SHIFT) / 3)
        .clamp(MIN_CHUNK_SEGMENTS_SHIFT, MAX_CHUNK_SEGMENTS_SHIFT);
    (SEGMENT_SHIFT, SEGMENT_SHIFT + segments)
}

impl RunIndex {
    /// Indexes the runs of `edges` (keys `(source << 32) | target`) for `num_vertices`.
    pub(crate) fn build<C: LeafCodec>(edges: &Pma<C>, num_vertices: usize) -> Self {
        let (segment_shift, chunk_shift) = level_shifts(num_vertices);
        Self::build_in_chunks(edges, num_vertices, BUILD_GRAIN, segment_shift, chunk_shift)
    }

    /// [`RunIndex::build`] with parallel tasks of `grain` leaves, segments of
    /// `1 << segment_shift` vertices and chunks of `1 << chunk_shift`.
    fn build_in_chunks<C: LeafCodec>(
        edges: &Pma<C>,
        num_vertices: usize,
        grain: usize,
        segment_shift: u32,
        chunk_shift: u32,
    ) -> Self {
        debug_assert!(segment_shift <= chunk_shift && segment_shift <= SEGMENT_SHIFT);
        let (starts, degrees) = edges.run_starts(num_vertices, grain);
        // Offsets lie inside their leaves; the largest one found decides if it does not.
        let widest = starts
            .par_iter()
            .map(|s| s.parts().1 as usize)
            .max()
            .unwrap_or(0);
        let packing = Packing::for_leaf_bytes(edges.leaf_bytes().max(widest));
        let size = 1usize << segment_shift;
        let empty: Arc<[Packed]> = Arc::from([Packed::default()]);
        // Segments in parallel (each a mask and an allocation of its entries).
        let segments: Vec<Segment> = starts
            .par_chunks(size)
            .zip(degrees.par_chunks(size))
            .map(|(s, d)| {
                let entries = s.iter().zip(d).map(|(&start, &degree)| match degree {
                    0 => Packed::default(),
                    _ => packing
                        .pack(Entry { start, degree })
                        .expect("the packing holds the widest offset"),
                });
                Segment::from_dense(entries, &empty)
            })
            .collect();
        let large = degrees
            .par_iter()
            .enumerate()
            .filter(|&(_, &d)| packing.escapes(d))
            .map(|(v, &d)| (v as u32, d))
            .collect();
        let chunks = segments
            .chunks(1 << (chunk_shift - segment_shift))
            .map(Chunk::from)
            .collect();
        Self {
            segment_shift,
            chunk_shift,
            chunks,
            len: num_vertices,
            packing,
            large: Arc::new(large),
        }
    }

    /// Segments per full chunk, less one.
    #[inline(always)]
    fn chunk_mask(&self) -> usize {
        (1 << (self.chunk_shift - self.segment_shift)) - 1
    }

    /// `v`'s segment (`v` below the segments' end).
    #[inline(always)]
    fn segment(&self, v: usize) -> &Segment {
        &self.chunks[v >> self.chunk_shift][(v >> self.segment_shift) & self.chunk_mask()]
    }

    /// `v`'s entry (`v` below the length).
    #[inline(always)]
    fn entry(&self, v: usize) -> Entry {
        let packed = self.segment(v).get(v & ((1 << self.segment_shift) - 1));
        self.packing.unpack(&packed, self.degree_of(v, &packed))
    }

    /// The degree of `v`, whose packed entry is `packed`.
    #[inline(always)]
    fn degree_of(&self, v: usize, packed: &Packed) -> u32 {
        let field = self.packing.degree_field(packed);
        if self.packing.is_escape(field) {
            self.large_degree(v)
        } else {
            field
        }
    }

    /// `v`'s degree from the table of large degrees (0 if it is not there: a broken index,
    /// which [`RunIndex::check_layout`] reports).
    #[cold]
    #[inline(never)]
    fn large_degree(&self, v: usize) -> u32 {
        let at = self.large.binary_search_by_key(&v, |&(u, _)| u as usize);
        at.map_or(0, |k| self.large[k].1)
    }

    /// The sum of the degrees of `entries`, the entries of the vertices `base + i` for the
    /// bits `i` of `mask` (the fields summed in one pass, vectorized, unless one is
    /// escaped).
    #[inline]
    fn degree_sum(&self, base: usize, mask: u64, entries: &[Packed]) -> usize {
        let (sum, escaped) = entries.iter().fold((0usize, false), |(sum, escaped), p| {
            let field = self.packing.degree_field(p);
            (
                sum + field as usize,
                escaped | self.packing.is_escape(field),
            )
        });
        if !escaped {
            return sum;
        }
        let degrees = vertices_of(base, mask).zip(entries);
        degrees.map(|(v, p)| self.degree_of(v, p) as usize).sum()
    }

    /// `v`'s entry, empty past the length.
    #[inline(always)]
    fn get(&self, v: VertexId) -> Entry {
        let v = v as usize;
        if v >= self.len {
            return Entry::default();
        }
        self.entry(v)
    }

    /// `v`'s run start (`v` below the length).
    #[inline(always)]
    fn start(&self, v: usize) -> ShortCursor {
        self.entry(v).start
    }

    /// How many segments the index holds.
    fn num_segments(&self) -> usize {
        self.chunks.iter().map(|c| c.len()).sum()
    }

    /// Every segment, in order.
    fn segments(&self) -> impl Iterator<Item = &Segment> {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// Grows the index to `num_vertices` with empty entries (new segments are unshared;
    /// the table of chunks and the last chunk are copied only when segments are added).
    fn grow(&mut self, num_vertices: usize) {
        let size = 1usize << self.segment_shift;
        let per_chunk = self.chunk_mask() + 1;
        let have = self.num_segments();
        let want = num_vertices.div_ceil(size);
        if want > have {
            let empty: Arc<[Packed]> = Arc::from([Packed::default()]);
            let mut segments: Vec<Segment> = match self.chunks.last() {
                Some(last) if last.len() < per_chunk => last.to_vec(),
                _ => Vec::new(),
            };
            let mut chunks: Vec<Chunk> = self.chunks.to_vec();
            if !segments.is_empty() {
                chunks.pop();
            }
            for _ in have..want {
                segments.push(Segment::empty(&empty));
                if segments.len() == per_chunk {
                    chunks.push(Chunk::from(std::mem::take(&mut segments)));
                }
            }
            if !segments.is_empty() {
                chunks.push(Chunk::from(segments));
            }
            self.chunks = chunks.into();
        }
        self.len = self.len.max(num_vertices);
    }

    /// Sets `v`'s entry (`v` below the length; an empty entry removes it), copying its
    /// segment first (with the path of pointers to it) if another version shares it.
    /// `None` if the entry's offset does not fit this index's packing (an array of larger
    /// leaves: the caller builds in full).
    #[inline]
    fn set_entry(&mut self, v: usize, entry: Entry) -> Option<()> {
        let packed = self.packing.pack(entry)?;
        let vertex = u32::try_from(v).ok()?;
        let at = self.large.binary_search_by_key(&vertex, |&(u, _)| u);
        match (at, self.packing.escapes(entry.degree)) {
            (Ok(k), true) if self.large[k].1 != entry.degree => {
                Arc::make_mut(&mut self.large)[k].1 = entry.degree;
            }
            (Ok(k), false) => {
                Arc::make_mut(&mut self.large).remove(k);
            }
            (Err(k), true) => Arc::make_mut(&mut self.large).insert(k, (vertex, entry.degree)),
            _ => {}
        }
        let i = v & ((1 << self.segment_shift) - 1);
        if self.segment(v).get(i) == packed {
            // Unchanged, or only a large degree changed: the segment stays shared.
            return Some(());
        }
        let k = (v >> self.segment_shift) & self.chunk_mask();
        let chunk = &mut unshare_pointers(&mut self.chunks)[v >> self.chunk_shift];
        unshare_segments(chunk)[k].set(i, packed);
        Some(())
    }

    /// Starts loading the cache line where a read of `v`'s run begins in its leaf (past its
    /// first key, which the entry holds; at the first key's value in a map): a hint for a
    /// loop that reads `v`'s arcs a few vertices later. Nothing is read for a vertex out
    /// of range, without arcs, or whose one arc the entry holds whole.
    #[inline]
    pub(crate) fn prefetch<C: LeafCodec>(&self, edges: &Pma<C>, v: VertexId) {
        let entry = self.get(v);
        if entry.degree > 1 || (entry.degree == 1 && C::VALUES) {
            edges.prefetch_short(entry.start);
        }
    }

    /// Step `stage` of a staged prefetch of `v`'s run, each step expecting the lines the one
    /// before it asked for to be in cache by now: 0 `v`'s entry, 1 the page-table group of
    /// its run's leaf, 2 that leaf's page pointer and size, 3 the leaf's line where the read
    /// begins (as [`RunIndex::prefetch`]). A hint: nothing is read for a vertex out of
    /// range, and from step 1 on nothing for one without arcs or whose one arc the entry
    /// holds whole.
    #[inline]
    pub(crate) fn prefetch_stage<C: LeafCodec>(&self, edges: &Pma<C>, v: VertexId, stage: usize) {
        let at = v as usize;
        if at >= self.len {
            return;
        }
        if stage == 0 {
            self.segment(at)
                .prefetch(at & ((1 << self.segment_shift) - 1));
            return;
        }
        let entry = self.entry(at);
        if entry.degree > 1 || (entry.degree == 1 && C::VALUES) {
            match stage {
                1 => edges.prefetch_short_group(entry.start),
                2 => edges.prefetch_short_slots(entry.start),
                _ => edges.prefetch_short(entry.start),
            }
        }
    }

    #[inline]
    pub(crate) fn degree(&self, v: VertexId) -> usize {
        self.get(v).degree as usize
    }

    /// Every vertex's degree, flat.
    pub(crate) fn degrees(&self) -> Vec<u32> {
        let mut out = vec![0; self.len];
        self.entry_slices(0..self.len, |base, mask, entries| {
            for (v, p) in vertices_of(base, mask).zip(entries) {
                out[v] = self.degree_of(v, p);
            }
        });
        out
    }

    /// Calls `f(base, mask, entries)` on the entries of the vertices in `vertices` (clipped
    /// to the length) that have one, one segment's slice at a time, in order: `base` is the
    /// segment's first vertex, the bits of `mask` the vertices (from `base`) whose entries
    /// `entries` are.
    #[inline]
    fn entry_slices(&self, vertices: Range<usize>, mut f: impl FnMut(usize, u64, &[Packed])) {
        let end = vertices.end.min(self.len);
        let size = 1usize << self.segment_shift;
        let mut v = vertices.start;
        while v < end {
            let i = v & (size - 1);
            let stop = (i + end - v).min(size);
            let (mask, entries) = self.segment(v).slice(i, stop);
            if mask != 0 {
                f(v - i, mask, entries);
            }
            v += stop - i;
        }
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
        let entry = self.get(v);
        if entry.degree == 0 {
            return true;
        }
        edges.for_count_from_short(entry.start, v, entry.degree as usize, f)
    }

    /// Calls `f(v, item)` on the items of the run of every vertex `v = base + i` whose bit
    /// `i` is set in `vertices` (`base` a multiple of 64), in order, each run's until `f`
    /// returns `false`: the entries are found a segment's slice at a time, and each run is
    /// hinted ([`Pma::prefetch_short`]) [`IN_WORD_AHEAD`] vertices with arcs before it is
    /// read. Vertices without arcs or past the index are skipped.
    pub(crate) fn for_each_of_word<C: LeafCodec>(
        &self,
        edges: &Pma<C>,
        base: VertexId,
        vertices: u64,
        mut f: impl FnMut(VertexId, C::Item) -> bool,
    ) {
        let base = base as usize;
        debug_assert_eq!(base % 64, 0);
        if vertices == 0 {
            return;
        }
        self.entry_slices(base..base + 64, |start, mask, entries| {
            // `mask`'s bits count from `start`, a segment's first vertex at or after `base`.
            let wanted = (vertices >> (start - base)) & mask;
            if wanted == 0 {
                return;
            }
            let entry = |bits: u64| {
                let i = bits.trailing_zeros() as usize;
                let packed = &entries[(mask & low_bits(i)).count_ones() as usize];
                let v = start + i;
                (v, self.packing.unpack(packed, self.degree_of(v, packed)))
            };
            let hint = |ahead: &mut u64| {
                if *ahead != 0 {
                    let (_, e) = entry(*ahead);
                    if e.degree > 1 || (e.degree == 1 && C::VALUES) {
                        edges.prefetch_short(e.start);
                    }
                    *ahead &= *ahead - 1;
                }
            };
            let mut ahead = wanted;
            for _ in 0..IN_WORD_AHEAD {
                hint(&mut ahead);
            }
            let mut bits = wanted;
            while bits != 0 {
                let (v, e) = entry(bits);
                bits &= bits - 1;
                hint(&mut ahead);
                let v = v as VertexId;
                edges.for_count_from_short(e.start, v, e.degree as usize, |item| f(v, item));
            }
        });
    }

    /// The first vertex in `vertices` with arcs and the number of arcs from it to the range's
    /// end (their runs lie one after another); `None` if the range has no arcs.
    fn span(&self, vertices: Range<VertexId>) -> Option<(usize, usize)> {
        let (mut first, mut count) = (None, 0);
        self.entry_slices(
            vertices.start as usize..vertices.end as usize,
            |base, mask, d| {
                first = first.or(Some(base + mask.trailing_zeros() as usize));
                count += self.degree_sum(base, mask, d);
            },
        );
        Some((first?, count))
    }

    /// Calls `f(v, u)` on the arcs of every vertex `v` in `vertices`, in key order: the
    /// runs of consecutive vertices lie one after another in the array, so this is one
    /// decode from the first run's start for the sum of their degrees.
    #[inline]
    pub(crate) fn for_each_arc_in<C: LeafCodec>(
        &self,
        edges: &Pma<C>,
        vertices: Range<VertexId>,
        mut f: impl FnMut(VertexId, VertexId),
    ) {
        let Some((from, count)) = self.span(vertices) else {
            return;
        };
        edges.for_count_from_short(self.start(from), from as VertexId, count, |item| {
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
        vertices: Range<VertexId>,
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
                    (self.start(from), from as VertexId),
                    (self.start(mid), mid as VertexId),
                ];
                edges.low_halves_pair_from_short(runs, [a, b]).iter().sum()
            }
            _ => edges.low_halves_from_short(self.start(from), from as VertexId, out),
        };
        debug_assert_eq!(written, count);
        out.truncate(written);
    }

    /// The first vertex with arcs in `from + 1..end` whose run starts at or past the middle
    /// of the `count` arcs from `from`'s run on, and the arcs before it; `None` if no such
    /// vertex has arcs. Each segment's degrees are summed first (vectorized), so only the
    /// segment holding the middle is walked one vertex at a time: on a low-degree graph a
    /// walk over every vertex would cost as much as a scalar decode of its arcs.
    fn middle(&self, from: usize, end: usize, count: usize) -> Option<(usize, usize)> {
        let mut before = self.degree(from as VertexId);
        let mut found = None;
        self.entry_slices(from + 1..end, |base, mask, entries| {
            if found.is_some() {
                return;
            }
            let sum = self.degree_sum(base, mask, entries);
            if 2 * (before + sum) < count {
                before += sum;
                return;
            }
            for (v, p) in vertices_of(base, mask).zip(entries) {
                let degree = self.degree_of(v, p) as usize;
                if degree > 0 && 2 * before >= count {
                    found = Some((v, before));
                    return;
                }
                before += degree;
            }
        });
        found
    }

    /// Bytes of the index (segments and chunks shared with other versions counted in
    /// full).
    pub(crate) fn size_in_bytes(&self) -> usize {
        use std::mem::size_of;
        // An `Arc<[T]>` allocation: two reference counts, then the items. Segments without
        // arcs share one empty entry, counted once.
        let chunks: usize = self
            .chunks
            .iter()
            .map(|c| c.len() * size_of::<Segment>() + 16)
            .sum();
        let entries: usize = self
            .segments()
            .filter(|s| s.mask != 0)
            .map(|s| s.entries.len() * size_of::<Packed>() + 16)
            .sum();
        let empty = size_of::<Packed>() + 16;
        let large = 16 + size_of::<Vec<(u32, u32)>>() + self.large.len() * 8;
        16 + self.chunks.len() * size_of::<Chunk>() + chunks + entries + empty + large
    }

    /// Checks the index's own layout: enough segments of `1 << shift` vertices for its
    /// length and no more, and no arcs past the length. Returns what is wrong.
    pub(crate) fn check_layout(&self, num_vertices: usize) -> Result<(), String> {
        let size = 1usize << self.segment_shift;
        let per_chunk = self.chunk_mask() + 1;
        if self.len != num_vertices {
            return Err(format!(
                "the flat index has {} vertices, the graph {num_vertices}",
                self.len
            ));
        }
        if self.num_segments() != self.len.div_ceil(size) {
            return Err(format!(
                "the flat index has {} segments for {} vertices of {size} a segment",
                self.num_segments(),
                self.len
            ));
        }
        let last = self.chunks.len().saturating_sub(1);
        for (c, chunk) in self.chunks.iter().enumerate() {
            if chunk.is_empty() || chunk.len() > per_chunk || (c < last && chunk.len() != per_chunk)
            {
                return Err(format!(
                    "flat index chunk {c} holds {} segments, not {per_chunk} (all but the last) or 1 to {per_chunk} (the last)",
                    chunk.len()
                ));
            }
        }
        let mut escaped = Vec::new();
        for (k, segment) in self.segments().enumerate() {
            let kept = segment.mask.count_ones() as usize;
            if segment.entries.len() != kept + 1
                || segment.entries[kept] != Packed::default()
                || segment.entries[..kept]
                    .iter()
                    .any(|p| self.packing.degree_field(p) == 0)
            {
                return Err(format!(
                    "flat index segment {k} holds {} entries for {kept} vertices with arcs",
                    segment.entries.len()
                ));
            }
            let past = (self.len.saturating_sub(k * size)).min(size);
            if segment.mask & !low_bits(past) != 0 {
                return Err(format!(
                    "flat index segment {k} gives arcs to vertices past the last"
                ));
            }
            let fields = vertices_of(k * size, segment.mask).zip(&segment.entries[..]);
            let escapes =
                fields.filter(|(_, p)| self.packing.is_escape(self.packing.degree_field(p)));
            escaped.extend(escapes.map(|(v, _)| v));
        }
        let large: Vec<usize> = self.large.iter().map(|&(v, _)| v as usize).collect();
        if large != escaped || self.large.iter().any(|&(_, d)| !self.packing.escapes(d)) {
            return Err(format!(
                "the flat index's table of large degrees names vertices {large:?}, its entries {escaped:?}"
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
