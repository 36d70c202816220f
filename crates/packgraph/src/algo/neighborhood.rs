//! The undirected view of a vertex's neighborhood: out- and in-neighbors merged (equal for
//! an undirected graph), sorted, without duplicates or the vertex itself.

use crate::graph::{GraphRead, VertexId};

/// Appends `v`'s neighbors in the undirected view to `out` (cleared first).
pub(crate) fn undirected_neighbors<G: GraphRead>(graph: &G, v: VertexId, out: &mut Vec<VertexId>) {
    out.clear();
    graph.for_each_out_neighbor(v, |u| {
        out.push(u);
        true
    });
    if graph.is_directed() {
        let split = out.len();
        graph.for_each_in_neighbor(v, |u| {
            out.push(u);
            true
        });
        if split > 0 && split < out.len() {
            out.sort_unstable();
        }
        out.dedup();
    }
    out.retain(|&u| u != v);
}

/// Every vertex's neighbors in the undirected view, built in parallel.
pub(crate) fn all_undirected_neighbors<G: GraphRead>(graph: &G) -> Vec<Vec<VertexId>> {
    use rayon::prelude::*;
    (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .map(|v| {
            let mut list = Vec::new();
            undirected_neighbors(graph, v, &mut list);
            list
        })
        .collect()
}

/// Size of the intersection of two sorted lists.
pub(crate) fn intersection_len(a: &[VertexId], b: &[VertexId]) -> usize {
    let mut count = 0;
    for_each_common(a, b, |_| count += 1);
    count
}

/// Calls `f` on each element of both sorted lists, in order.
#[inline]
pub(crate) fn for_each_common(a: &[VertexId], b: &[VertexId], mut f: impl FnMut(VertexId)) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                f(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}
