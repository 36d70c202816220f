//! The read interface algorithms see: vertex count, degrees and neighbor iteration.
//!
//! Implemented by the dynamic [`Graph`](super::Graph) and by the static
//! [`CsrGraph`](super::CsrGraph), so an algorithm runs unchanged on both and the CSR serves
//! as the reference in tests and benchmarks.

use std::ops::Range;

/// A dense internal vertex id.
pub type VertexId = u32;

/// How many vertices ahead [`GraphRead::for_each_in_neighbor_of_word`] hints a run: 4
/// measured closer to the CSR than none in BFS's bottom-up rounds, 8 gained less (see
/// CHANGELOG).
pub const IN_WORD_AHEAD: usize = 4;

/// Read access to a graph with vertices `0..num_vertices()`.
///
/// An *arc* is one stored direction; an *edge* is what the user inserted. An undirected
/// graph stores each edge as two arcs (in-neighbors equal out-neighbors), a directed graph
/// as one: [`GraphRead::num_arcs`] counts arcs, [`GraphRead::num_edges`] edges.
pub trait GraphRead: Sync {
    /// Number of vertices.
    fn num_vertices(&self) -> usize;

    /// Number of stored arcs (an undirected edge is two).
    fn num_arcs(&self) -> usize;

    /// Whether edges have a direction.
    fn is_directed(&self) -> bool;

    /// Number of edges: arcs for a directed graph, half of them for an undirected one
    /// (self-loops are never stored).
    fn num_edges(&self) -> usize {
        if self.is_directed() {
            self.num_arcs()
        } else {
            self.num_arcs() / 2
        }
    }

    /// Number of out-neighbors of `v` (0 for an id past the last vertex).
    fn out_degree(&self, v: VertexId) -> usize;

    /// Number of in-neighbors of `v`.
    fn in_degree(&self, v: VertexId) -> usize;

    /// A hint that `v`'s in-neighbors will be read soon: graphs whose runs may not be in
    /// cache start loading them. The default does nothing.
    #[inline]
    fn prefetch_in_neighbors(&self, v: VertexId) {
        let _ = v;
    }

    /// Calls `f(v, u)` on the in-neighbors `u` of every vertex `v = base + i` whose bit `i`
    /// is set in `vertices`, in increasing order of `v`, each vertex's in increasing order
    /// until `f` returns `false` (then the next vertex's): a bottom-up BFS round's look for
    /// parents, one bitmap word at a time. `base` is a multiple of 64; vertices past the last
    /// are skipped. The default reads vertex by vertex, each run hinted
    /// ([`GraphRead::prefetch_in_neighbors`]) [`IN_WORD_AHEAD`] vertices before it is read;
    /// the compressed graph finds the word's entries once instead of vertex by vertex.
    fn for_each_in_neighbor_of_word(
        &self,
        base: VertexId,
        vertices: u64,
        mut f: impl FnMut(VertexId, VertexId) -> bool,
    ) {
        let mut ahead = vertices;
        let hint = |ahead: &mut u64| {
            if *ahead != 0 {
                self.prefetch_in_neighbors(base + ahead.trailing_zeros());
                *ahead &= *ahead - 1;
            }
        };
        for _ in 0..IN_WORD_AHEAD {
            hint(&mut ahead);
        }
        let mut bits = vertices;
        while bits != 0 {
            let v = base + bits.trailing_zeros();
            bits &= bits - 1;
            hint(&mut ahead);
            if (v as usize) < self.num_vertices() {
                self.for_each_in_neighbor(v, |u| f(v, u));
            }
        }
    }

    /// How many steps [`GraphRead::prefetch_out`] takes to bring a vertex's out-arcs into
    /// the cache, each needing the lines the one before it asked for (0: the graph needs
    /// no hints; the default).
    const OUT_PREFETCH_STAGES: usize = 0;

    /// A hint that `v`'s out-arcs will be read soon: step `stage` (from 0 to
    /// [`GraphRead::OUT_PREFETCH_STAGES`] − 1) of loading what leads to them, for a loop
    /// over a list of vertices that asks for each step a few vertices before the next, so
    /// that no step waits for the line the one before it loads
    /// ([`crate::algo::prefetch_out_ahead`]). Nothing is read for a vertex out of range.
    /// The default does nothing.
    #[inline]
    fn prefetch_out(&self, v: VertexId, stage: usize) {
        let _ = (v, stage);
    }

    /// Calls `f` on the out-neighbors of `v` in increasing order until it returns `false`;
    /// returns whether all were visited.
    fn for_each_out_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool;

    /// Calls `f` on the in-neighbors of `v` in increasing order until it returns `false`;
    /// returns whether all were visited.
    fn for_each_in_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool;

    /// Calls `f(v, u)` on every out-arc `v → u` with `v` in `vertices`, in order of `v` and
    /// then `u`: a whole range in one pass. Graphs whose runs lie one after another (the
    /// dynamic graph, a CSR) decode it as one stream, with no per-vertex lookup; full scans
    /// (PageRank, connected components) go through it.
    fn for_each_out_arc_in(
        &self,
        vertices: Range<VertexId>,
        mut f: impl FnMut(VertexId, VertexId),
    ) {
        for v in vertices {
            self.for_each_out_neighbor(v, |u| {
                f(v, u);
                true
            });
        }
    }

    /// [`GraphRead::for_each_out_arc_in`] over in-arcs: `f(v, u)` for every `u → v` with `v`
    /// in `vertices`.
    fn for_each_in_arc_in(&self, vertices: Range<VertexId>, mut f: impl FnMut(VertexId, VertexId)) {
        for v in vertices {
            self.for_each_in_neighbor(v, |u| {
                f(v, u);
                true
            });
        }
    }

    /// The out-neighbors of every vertex in `vertices`, one run after another in order of
    /// vertex (`out_degree(v)` of them for each `v`, increasing): the stored array itself
    /// where a graph keeps them contiguous (a CSR), else decoded into `scratch`.
    ///
    /// A loop that reads this slice runs as two tight loops, a decode and then its own
    /// body, instead of one loop whose random reads wait behind the decoding (PageRank's
    /// pull step, betweenness); split the slice with the degrees. One vertex (`v..v + 1`)
    /// is a vertex's run.
    fn out_arcs_in<'a>(
        &'a self,
        vertices: Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        collect_targets(scratch, |push| self.for_each_out_arc_in(vertices, push))
    }

    /// [`GraphRead::out_arcs_in`] over in-arcs: the in-neighbors of every vertex in
    /// `vertices` (`in_degree(v)` of them for each `v`, increasing).
    fn in_arcs_in<'a>(
        &'a self,
        vertices: Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        collect_targets(scratch, |push| self.for_each_in_arc_in(vertices, push))
    }

    /// The out-neighbors of `v`, collected (for tests and small graphs).
    fn out_neighbors(&self, v: VertexId) -> Vec<VertexId> {
        let mut out = Vec::with_capacity(self.out_degree(v));
        self.for_each_out_neighbor(v, |u| {
            out.push(u);
            true
        });
        out
    }
}

/// The targets `scan` passes (as `push(v, u)`), collected into `scratch`: the default
/// [`GraphRead::out_arcs_in`] and [`GraphRead::in_arcs_in`].
fn collect_targets(
    scratch: &mut Vec<VertexId>,
    scan: impl FnOnce(&mut dyn FnMut(VertexId, VertexId)),
) -> &[VertexId] {
    scratch.clear();
    scan(&mut |_, u| scratch.push(u));
    scratch
}

/// Read access to edge weights (for shortest paths). Graphs without weights give every edge
/// weight 1.
pub trait WeightedGraphRead: GraphRead {
    /// Whether a scan decodes compressed runs (rather than reading arrays in place):
    /// algorithms that do random work per edge then copy a run into a buffer before that
    /// work, so that its loads overlap instead of waiting between decode steps. On a plain
    /// array the copy only costs (measured on SSSP over the weighted CSR; see CHANGELOG).
    const DECODES: bool = false;

    /// Calls `f(target, weight)` on the out-edges of `v` in increasing target order until it
    /// returns `false`; returns whether all were visited.
    fn for_each_out_edge(&self, v: VertexId, f: impl FnMut(VertexId, f64) -> bool) -> bool;
}
