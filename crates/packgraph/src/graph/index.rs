//! The flat vertex index (Aspen's "flat snapshot"): for every vertex, where its run of edge
//! keys starts in the CPMA and how long it is, built in one parallel pass over the leaves.
//!
//! With it, a neighbor scan starts decoding at the run's first byte (no search) and the
//! degree is known without decoding. It costs 20 bytes per vertex and is rebuilt after an
//! update, on first use.

use crate::pma::{Cursor, LeafCodec, Pma};

use super::read::VertexId;

/// Start and length of every vertex's run in one edge CPMA.
#[derive(Debug, Clone, Default)]
pub(crate) struct RunIndex {
    starts: Vec<Cursor>,
    degrees: Vec<u32>,
}

impl RunIndex {
    /// Indexes the runs of `edges` (keys `(source << 32) | target`) for `num_vertices`.
    pub(crate) fn build<C: LeafCodec>(edges: &Pma<C>, num_vertices: usize) -> Self {
        let mut starts = vec![Cursor::default(); num_vertices];
        let mut degrees = vec![0u32; num_vertices];
        for piece in edges.run_pieces(32) {
            let v = piece.group as usize;
            if degrees[v] == 0 {
                starts[v] = piece.start;
            }
            degrees[v] += piece.len;
        }
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
        index.starts.resize(num_vertices, Cursor::default());
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
                        index.starts[v] = piece.start;
                    }
                    index.degrees[v] += piece.len;
                }
            }
        }
        Some(index)
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
        edges.for_count_from(self.starts[v as usize], degree, f)
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
        let end = (vertices.end as usize).min(self.degrees.len());
        let start = (vertices.start as usize).min(end);
        let degrees = &self.degrees[start..end];
        let Some(first) = degrees.iter().position(|&d| d > 0) else {
            return;
        };
        let count: usize = degrees[first..].iter().map(|&d| d as usize).sum();
        edges.for_count_from(self.starts[start + first], count, |item| {
            let key = C::key(item);
            f((key >> 32) as VertexId, key as VertexId);
            true
        });
    }

    pub(crate) fn size_in_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<Cursor>() + self.degrees.capacity() * 4
    }
}
