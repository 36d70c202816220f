//! The undirected view of a vertex's neighborhood: out- and in-neighbors merged (equal for
//! an undirected graph), sorted, without duplicates or the vertex itself.

use std::sync::atomic::AtomicBool;

use super::stop::{check, stopped};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

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

/// Vertices per parallel task of [`all_undirected_neighbors`].
const LIST_BLOCK: usize = 256;

/// Every vertex's neighbors in the undirected view, built in parallel; looks at `stop`
/// between blocks of vertices.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn all_undirected_neighbors<G: GraphRead>(
    graph: &G,
    stop: &AtomicBool,
) -> Result<Vec<Vec<VertexId>>> {
    use rayon::prelude::*;
    let mut lists = vec![Vec::new(); graph.num_vertices()];
    lists
        .par_chunks_mut(LIST_BLOCK)
        .enumerate()
        .for_each(|(block, lists)| {
            if stopped(stop) {
                return;
            }
            for (i, list) in lists.iter_mut().enumerate() {
                undirected_neighbors(graph, (block * LIST_BLOCK + i) as VertexId, list);
            }
        });
    check(stop)?;
    Ok(lists)
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
