//! Reading the dynamic graph through its flat vertex index (each vertex's run of arcs,
//! built in parallel on first use after a change and cached until the next): the index's
//! upkeep, the read-side inherent methods, and the [`GraphRead`] and [`WeightedGraphRead`]
//! implementations over it. The traits themselves are in `read.rs`.

use std::ops::Range;
use std::sync::Arc;

use super::index::RunIndex;
use super::{
    edge_key, EdgeLeaf, FlatIndex, Graph, GraphMemory, GraphRead, VertexId, WeightedGraphRead,
};
use crate::pma::{LeafCodec, Pma};

impl<C: LeafCodec> Graph<C> {
    /// Whether the edge `(u, v)` is present.
    pub fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out.contains(edge_key(u, v))
    }

    /// Bytes of the edge arrays and of the flat index if built.
    pub fn size_in_bytes(&self) -> usize {
        let index = self.index.get().map_or(0, |i| {
            i.out.size_in_bytes() + i.incoming.as_ref().map_or(0, RunIndex::size_in_bytes)
        });
        self.out.size_in_bytes() + self.incoming.as_ref().map_or(0, Pma::size_in_bytes) + index
    }

    /// Where this version's bytes go: both edge arrays' leaf data, slack and page tables,
    /// and the flat index (0 if not built). The parts add up to [`Graph::size_in_bytes`].
    pub fn memory(&self) -> GraphMemory {
        let mut split = self.out.memory();
        if let Some(set) = &self.incoming {
            let other = set.memory();
            split.data += other.data;
            split.slack += other.slack;
            split.table += other.table;
        }
        let index = self.index.get().map_or(0, |i| {
            i.out.size_in_bytes() + i.incoming.as_ref().map_or(0, RunIndex::size_in_bytes)
        });
        GraphMemory {
            data: split.data,
            slack: split.slack,
            table: split.table,
            index,
        }
    }

    /// Builds the flat vertex index now (it is otherwise built on the first read).
    pub fn build_index(&self) {
        let _ = self.flat();
    }

    /// Out-degrees of all vertices.
    pub fn out_degrees(&self) -> Vec<u32> {
        self.flat().out.degrees()
    }

    /// Builds the flat vertex index from `base`'s, an earlier version of the same graph
    /// (a snapshot), as [`Graph::derive_index_from`] does, or in full when that is no
    /// cheaper (a rebuilt array, most leaves changed) or `base` has no index. Does nothing
    /// if the index is built. Returns whether the index was derived from `base`'s.
    pub fn build_index_from(&self, base: &Graph<C>) -> bool {
        if self.index.get().is_some() {
            return false;
        }
        let derived = self.derive_index_from(base);
        if !derived {
            self.build_index();
        }
        derived
    }

    /// Derives the flat vertex index from `base`'s, an earlier version of the same graph
    /// (a snapshot), re-scanning only the vertices whose edges lie in leaves whose contents
    /// differ between the two versions and sharing the index segments of all others with
    /// `base`'s. Builds nothing, and returns `false`, when that is no cheaper than a full
    /// build (a rebuilt array, a quarter of the leaves changed), `base` has no index or
    /// this graph has one already.
    ///
    /// The derivation runs on the calling thread: after a small batch it costs a few
    /// microseconds, less than handing work to a thread pool.
    pub fn derive_index_from(&self, base: &Graph<C>) -> bool {
        if self.index.get().is_some() {
            return false;
        }
        let Some(old) = base.index.get() else {
            return false;
        };
        let derive = |old: &RunIndex, base_set: &Pma<C>, set: &Pma<C>| {
            RunIndex::update_from(old, base_set, set, self.num_vertices)
        };
        let Some(out) = derive(&old.out, &base.out, &self.out) else {
            return false;
        };
        let incoming = match (&old.incoming, &base.incoming, &self.incoming) {
            (Some(old), Some(base_set), Some(set)) => match derive(old, base_set, set) {
                Some(index) => Some(index),
                None => return false,
            },
            (None, None, None) => None,
            _ => return false,
        };
        self.index
            .set(Arc::new(FlatIndex { out, incoming }))
            .is_ok()
    }

    /// The flat index, built on first use. Built outside the `OnceLock`'s initialisation:
    /// the build runs on rayon, and a worker blocked in `get_or_init` could be the one that
    /// steals work of another thread's build of the same index (a deadlock seen with
    /// concurrent readers of one snapshot). Two threads may race to build it; one result
    /// is kept.
    #[inline(always)]
    fn flat(&self) -> &FlatIndex {
        match self.index.get() {
            Some(index) => index,
            None => self.build_flat(),
        }
    }

    /// [`Graph::flat`]'s first call: builds the index (kept out of line, so that every
    /// neighbor scan inlines only the lookup).
    #[cold]
    #[inline(never)]
    fn build_flat(&self) -> &FlatIndex {
        let (out, incoming) = rayon::join(
            || RunIndex::build(&self.out, self.num_vertices),
            || {
                self.incoming
                    .as_ref()
                    .map(|set| RunIndex::build(set, self.num_vertices))
            },
        );
        let _ = self.index.set(Arc::new(FlatIndex { out, incoming }));
        self.index.get().expect("the index was just set")
    }

    /// The index and array of in-arcs: the reversed ones of a directed graph, else the
    /// out-arcs (an undirected graph stores both directions of each edge).
    #[inline]
    fn in_runs(&self) -> (&RunIndex, &Pma<C>) {
        let flat = self.flat();
        match (&flat.incoming, &self.incoming) {
            (Some(index), Some(set)) => (index, set),
            _ => (&flat.out, &self.out),
        }
    }
}

impl<C: LeafCodec> GraphRead for Graph<C> {
    fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    fn num_arcs(&self) -> usize {
        self.out.len()
    }

    fn is_directed(&self) -> bool {
        self.directed
    }

    #[inline]
    fn out_degree(&self, v: VertexId) -> usize {
        self.flat().out.degree(v)
    }

    #[inline]
    fn in_degree(&self, v: VertexId) -> usize {
        self.in_runs().0.degree(v)
    }

    #[inline]
    fn prefetch_in_neighbors(&self, v: VertexId) {
        let (index, set) = self.in_runs();
        index.prefetch(set, v);
    }

    /// The index entry, the page-table group, the page pointer and size, the leaf.
    const OUT_PREFETCH_STAGES: usize = 4;

    #[inline]
    fn prefetch_out(&self, v: VertexId, stage: usize) {
        self.flat().out.prefetch_stage(&self.out, v, stage);
    }

    #[inline]
    fn for_each_out_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        self.flat()
            .out
            .for_each(&self.out, v, |item| f(C::key(item) as VertexId))
    }

    #[inline]
    fn for_each_in_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        let (index, set) = self.in_runs();
        index.for_each(set, v, |item| f(C::key(item) as VertexId))
    }

    fn for_each_in_neighbor_of_word(
        &self,
        base: VertexId,
        vertices: u64,
        mut f: impl FnMut(VertexId, VertexId) -> bool,
    ) {
        let (index, set) = self.in_runs();
        index.for_each_of_word(set, base, vertices, |v, item| {
            f(v, C::key(item) as VertexId)
        });
    }

    fn for_each_out_arc_in(&self, vertices: Range<VertexId>, f: impl FnMut(VertexId, VertexId)) {
        self.flat().out.for_each_arc_in(&self.out, vertices, f);
    }

    fn for_each_in_arc_in(&self, vertices: Range<VertexId>, f: impl FnMut(VertexId, VertexId)) {
        let (index, set) = self.in_runs();
        index.for_each_arc_in(set, vertices, f);
    }

    fn out_arcs_in<'a>(
        &'a self,
        vertices: Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.flat().out.targets_in(&self.out, vertices, scratch);
        scratch
    }

    fn in_arcs_in<'a>(
        &'a self,
        vertices: Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        let (index, set) = self.in_runs();
        index.targets_in(set, vertices, scratch);
        scratch
    }
}

/// Unweighted edges have weight 1.
impl<C: EdgeLeaf> WeightedGraphRead for Graph<C> {
    const DECODES: bool = true;

    fn for_each_out_edge(&self, v: VertexId, mut f: impl FnMut(VertexId, f64) -> bool) -> bool {
        self.flat().out.for_each(&self.out, v, |item| {
            f(C::key(item) as VertexId, C::weight(item))
        })
    }
}
