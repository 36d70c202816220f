//! A static compressed-sparse-row graph: the physical reference for the dynamic graph.

use rayon::prelude::*;

use super::read::{GraphRead, VertexId, WeightedGraphRead};

/// One direction of adjacency: `targets[offsets[v]..offsets[v + 1]]` are `v`'s neighbors.
#[derive(Debug, Clone, Default)]
struct Adjacency {
    offsets: Vec<u64>,
    targets: Vec<VertexId>,
}

impl Adjacency {
    /// From sorted, duplicate-free `(source, target)` pairs.
    fn from_sorted(num_vertices: usize, edges: &[(VertexId, VertexId)]) -> Self {
        let mut offsets = vec![0u64; num_vertices + 1];
        for &(u, _) in edges {
            offsets[u as usize + 1] += 1;
        }
        for v in 0..num_vertices {
            offsets[v + 1] += offsets[v];
        }
        let targets = edges.par_iter().map(|&(_, v)| v).collect();
        Self { offsets, targets }
    }

    /// The runs of the vertices in `vertices` (those past the last vertex have none), one
    /// after another.
    fn runs(&self, vertices: std::ops::Range<VertexId>) -> &[VertexId] {
        let last = self.offsets.len().saturating_sub(1);
        let end = (vertices.end as usize).min(last);
        let start = (vertices.start as usize).min(end);
        match (self.offsets.get(start), self.offsets.get(end)) {
            (Some(&from), Some(&to)) => &self.targets[from as usize..to as usize],
            _ => &[],
        }
    }

    fn neighbors(&self, v: VertexId) -> &[VertexId] {
        let v = v as usize;
        if v + 1 >= self.offsets.len() {
            return &[];
        }
        &self.targets[self.offsets[v] as usize..self.offsets[v + 1] as usize]
    }
}

/// An immutable graph in compressed sparse row form, built with the same edge policy as the
/// dynamic [`Graph`](super::Graph): duplicate edges collapse and self-loops are dropped.
#[derive(Debug, Clone, Default)]
pub struct CsrGraph {
    directed: bool,
    num_vertices: usize,
    out: Adjacency,
    /// In-edges of a directed graph (empty when undirected: they equal `out`).
    incoming: Adjacency,
    /// Weights of the out-edges, parallel to `out.targets` (none: every weight is 1).
    weights: Option<Vec<f64>>,
}

impl CsrGraph {
    /// Builds a graph on vertices `0..num_vertices` (grown to cover every endpoint).
    pub fn from_edges(num_vertices: usize, edges: &[(VertexId, VertexId)], directed: bool) -> Self {
        let num_vertices = edges
            .iter()
            .map(|&(u, v)| u.max(v) as usize + 1)
            .max()
            .unwrap_or(0)
            .max(num_vertices);
        let mut arcs: Vec<(VertexId, VertexId)> =
            edges.iter().copied().filter(|(u, v)| u != v).collect();
        if !directed {
            arcs.extend(edges.iter().filter(|(u, v)| u != v).map(|&(u, v)| (v, u)));
        }
        arcs.par_sort_unstable();
        arcs.dedup();
        let out = Adjacency::from_sorted(num_vertices, &arcs);
        let incoming = if directed {
            let mut reversed: Vec<(VertexId, VertexId)> =
                arcs.par_iter().map(|&(u, v)| (v, u)).collect();
            reversed.par_sort_unstable();
            Adjacency::from_sorted(num_vertices, &reversed)
        } else {
            Adjacency::default()
        };
        Self {
            directed,
            num_vertices,
            out,
            incoming,
            weights: None,
        }
    }

    /// Builds a weighted graph with the dynamic graph's policy: self-loops dropped, and of
    /// edges given more than once the last weight wins.
    pub fn from_weighted_edges(
        num_vertices: usize,
        edges: &[(VertexId, VertexId, f64)],
        directed: bool,
    ) -> Self {
        let plain: Vec<(VertexId, VertexId)> = edges.iter().map(|&(u, v, _)| (u, v)).collect();
        let mut graph = Self::from_edges(num_vertices, &plain, directed);
        let mut arcs: Vec<(VertexId, VertexId, f64)> = Vec::with_capacity(2 * edges.len());
        for &(u, v, w) in edges.iter().filter(|e| e.0 != e.1) {
            arcs.push((u, v, w));
            if !directed {
                arcs.push((v, u, w));
            }
        }
        // Stable: equal arcs keep their batch order, so the last is the one kept.
        arcs.par_sort_by_key(|&(u, v, _)| (u, v));
        let mut weights: Vec<f64> = Vec::with_capacity(graph.out.targets.len());
        for (i, &(u, v, w)) in arcs.iter().enumerate() {
            match arcs.get(i + 1) {
                Some(&(nu, nv, _)) if (nu, nv) == (u, v) => {}
                _ => weights.push(w),
            }
        }
        debug_assert_eq!(weights.len(), graph.out.targets.len());
        graph.weights = Some(weights);
        graph
    }

    /// Bytes held by the offset and target arrays.
    pub fn size_in_bytes(&self) -> usize {
        (self.out.offsets.capacity() + self.incoming.offsets.capacity()) * 8
            + (self.out.targets.capacity() + self.incoming.targets.capacity()) * 4
            + self.weights.as_ref().map_or(0, |w| w.capacity() * 8)
    }

    /// The out-neighbors of `v` as a slice.
    pub fn out_slice(&self, v: VertexId) -> &[VertexId] {
        self.out.neighbors(v)
    }

    fn in_adjacency(&self) -> &Adjacency {
        if self.directed {
            &self.incoming
        } else {
            &self.out
        }
    }
}

impl GraphRead for CsrGraph {
    fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    fn num_arcs(&self) -> usize {
        self.out.targets.len()
    }

    fn is_directed(&self) -> bool {
        self.directed
    }

    fn out_degree(&self, v: VertexId) -> usize {
        self.out.neighbors(v).len()
    }

    fn in_degree(&self, v: VertexId) -> usize {
        self.in_adjacency().neighbors(v).len()
    }

    fn for_each_out_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        self.out.neighbors(v).iter().all(|&u| f(u))
    }

    fn for_each_in_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        self.in_adjacency().neighbors(v).iter().all(|&u| f(u))
    }

    fn for_each_out_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        mut f: impl FnMut(VertexId, VertexId),
    ) {
        for v in vertices {
            self.out.neighbors(v).iter().for_each(|&u| f(v, u));
        }
    }

    fn for_each_in_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        mut f: impl FnMut(VertexId, VertexId),
    ) {
        let adjacency = self.in_adjacency();
        for v in vertices {
            adjacency.neighbors(v).iter().for_each(|&u| f(v, u));
        }
    }

    fn out_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        _scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.out.runs(vertices)
    }

    fn in_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        _scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.in_adjacency().runs(vertices)
    }
}

impl WeightedGraphRead for CsrGraph {
    fn for_each_out_edge(&self, v: VertexId, mut f: impl FnMut(VertexId, f64) -> bool) -> bool {
        let targets = self.out.neighbors(v);
        match &self.weights {
            None => targets.iter().all(|&u| f(u, 1.0)),
            Some(weights) => {
                let start = self.out.offsets[v as usize] as usize;
                let weights = &weights[start..start + targets.len()];
                targets.iter().zip(weights).all(|(&u, &w)| f(u, w))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undirected_edges_are_symmetric_without_loops_or_duplicates() {
        let g = CsrGraph::from_edges(5, &[(0, 1), (1, 0), (2, 2), (3, 1), (0, 1)], false);
        assert_eq!(g.num_vertices(), 5);
        assert_eq!(g.num_arcs(), 4);
        assert_eq!(g.out_neighbors(1), [0, 3]);
        assert_eq!(g.in_degree(1), 2);
        assert_eq!(g.out_degree(2), 0);
        assert_eq!(g.out_degree(99), 0);
    }

    #[test]
    fn weighted_edges_keep_the_last_weight() {
        let g = CsrGraph::from_weighted_edges(
            0,
            &[(0, 1, 1.0), (1, 2, 2.0), (1, 0, 3.0), (2, 2, 9.0)],
            false,
        );
        let mut edges = Vec::new();
        g.for_each_out_edge(1, |u, w| {
            edges.push((u, w));
            true
        });
        assert_eq!(edges, [(0, 3.0), (2, 2.0)]);
        assert_eq!(g.num_arcs(), 4);
    }

    #[test]
    fn directed_graph_has_in_edges() {
        let g = CsrGraph::from_edges(0, &[(0, 2), (1, 2), (2, 0)], true);
        assert_eq!(g.num_vertices(), 3);
        let mut incoming = Vec::new();
        g.for_each_in_neighbor(2, |u| {
            incoming.push(u);
            true
        });
        assert_eq!(incoming, [0, 1]);
        assert_eq!(g.out_neighbors(2), [0]);
    }
}
