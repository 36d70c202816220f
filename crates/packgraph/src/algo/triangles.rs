//! Triangle counting on the undirected view of the graph (directions and duplicate arcs
//! ignored): each triangle {u, v, w} with u < v < w is counted once, by intersecting the
//! higher-ordered neighbors of u and v (the standard ordering trick, as in Ligra's and GAP's
//! triangle counting).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

use super::neighborhood::{for_each_common, intersection_len, undirected_neighbors};
use super::stop::{blocks, check, stopped, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Calls `visit(v, above_u, above_v)` for each neighbor `v > u` of `u`, with the neighbors
/// of `u` and of `v` above `v`: the triangles {u, v, w} with u < v < w are their common
/// elements. `mine` and `theirs` are scratch lists.
#[inline]
fn for_each_higher_pair<G: GraphRead>(
    graph: &G,
    u: VertexId,
    mine: &mut Vec<VertexId>,
    theirs: &mut Vec<VertexId>,
    mut visit: impl FnMut(VertexId, &[VertexId], &[VertexId]),
) {
    undirected_neighbors(graph, u, mine);
    let higher = mine.partition_point(|&v| v <= u);
    for &v in &mine[higher..] {
        undirected_neighbors(graph, v, theirs);
        let from = theirs.partition_point(|&w| w <= v);
        let start = mine.partition_point(|&w| w <= v);
        visit(v, &mine[start..], &theirs[from..]);
    }
}

/// Number of triangles.
///
/// # Complexity
/// O(m^{3/2}) work in the worst case; one neighbor list per thread of extra memory.
pub fn triangle_count<G: GraphRead>(graph: &G) -> u64 {
    (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .map_init(
            || (Vec::new(), Vec::new()),
            |(mine, theirs), u| {
                let mut count = 0u64;
                for_each_higher_pair(graph, u, mine, theirs, |_, above_u, above_v| {
                    count += intersection_len(above_u, above_v) as u64;
                });
                count
            },
        )
        .sum()
}

/// Triangles through each vertex (each triangle counts once at each of its three corners;
/// their sum is three times [`triangle_count`]).
///
/// # Complexity
/// As [`triangle_count`], plus one atomic counter per vertex.
pub fn triangles_per_vertex<G: GraphRead>(graph: &G) -> Vec<u64> {
    triangles_per_vertex_interruptible(graph, &NEVER).expect("nothing sets NEVER")
}

/// Vertices per parallel task of [`triangles_per_vertex`].
const BLOCK: usize = 64;

/// [`triangles_per_vertex`], looking at `stop` between blocks of vertices.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn triangles_per_vertex_interruptible<G: GraphRead>(
    graph: &G,
    stop: &AtomicBool,
) -> Result<Vec<u64>> {
    let counts: Vec<AtomicU64> = (0..graph.num_vertices())
        .map(|_| AtomicU64::new(0))
        .collect();
    let credit = |v: VertexId, by: u64| {
        if by > 0 {
            counts[v as usize].fetch_add(by, Ordering::Relaxed);
        }
    };
    blocks(graph.num_vertices(), BLOCK).for_each_init(
        || (Vec::new(), Vec::new()),
        |(mine, theirs), block| {
            if stopped(stop) {
                return;
            }
            for u in block {
                let mut at_u = 0;
                for_each_higher_pair(graph, u, mine, theirs, |v, above_u, above_v| {
                    let mut at_v = 0;
                    for_each_common(above_u, above_v, |w| {
                        credit(w, 1);
                        at_v += 1;
                    });
                    credit(v, at_v);
                    at_u += at_v;
                });
                credit(u, at_u);
            }
        },
    );
    check(stop)?;
    Ok(counts.into_iter().map(AtomicU64::into_inner).collect())
}

/// Calls `f(u, v, w)` on each triangle, u < v < w, found by checking every triple of
/// neighbors: the references below (small graphs only).
fn for_each_triangle_serial<G: GraphRead>(graph: &G, mut f: impl FnMut(usize, usize, usize)) {
    let n = graph.num_vertices();
    let sets: Vec<std::collections::BTreeSet<VertexId>> = (0..n as VertexId)
        .map(|v| {
            let mut list = Vec::new();
            undirected_neighbors(graph, v, &mut list);
            list.into_iter().collect()
        })
        .collect();
    for u in 0..n {
        for &v in sets[u].range(u as VertexId + 1..) {
            for &w in sets[v as usize].range(v + 1..) {
                if sets[u].contains(&w) {
                    f(u, v as usize, w as usize);
                }
            }
        }
    }
}

/// Triangles through each vertex by checking every triple (the reference; small graphs only).
pub fn triangles_per_vertex_serial<G: GraphRead>(graph: &G) -> Vec<u64> {
    let mut counts = vec![0; graph.num_vertices()];
    for_each_triangle_serial(graph, |u, v, w| {
        for x in [u, v, w] {
            counts[x] += 1;
        }
    });
    counts
}

/// Triangles by checking every triple of neighbors (the reference; small graphs only).
pub fn triangle_count_serial<G: GraphRead>(graph: &G) -> u64 {
    let mut count = 0;
    for_each_triangle_serial(graph, |_, _, _| count += 1);
    count
}
