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

    pub(crate) fn size_in_bytes(&self) -> usize {
        self.starts.capacity() * std::mem::size_of::<Cursor>() + self.degrees.capacity() * 4
    }
}
