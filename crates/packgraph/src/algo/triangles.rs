//! Triangle counting on the undirected view of the graph (directions and duplicate arcs
//! ignored): each triangle {u, v, w} with u < v < w is counted once, by intersecting the
//! higher-ordered neighbors of u and v (the standard ordering trick, as in Ligra's and GAP's
//! triangle counting).

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::neighborhood::{for_each_common, intersection_len, undirected_neighbors};
use crate::graph::{GraphRead, VertexId};

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
                undirected_neighbors(graph, u, mine);
                let higher = mine.partition_point(|&v| v <= u);
                let mut count = 0u64;
                for &v in &mine[higher..] {
                    undirected_neighbors(graph, v, theirs);
                    let from = theirs.partition_point(|&w| w <= v);
                    let start = mine.partition_point(|&w| w <= v);
                    count += intersection_len(&mine[start..], &theirs[from..]) as u64;
                }
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
    let counts: Vec<AtomicU64> = (0..graph.num_vertices())
        .map(|_| AtomicU64::new(0))
        .collect();
    let credit = |v: VertexId, by: u64| {
        if by > 0 {
            counts[v as usize].fetch_add(by, Ordering::Relaxed);
        }
    };
    (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(64)
        .for_each_init(
            || (Vec::new(), Vec::new()),
            |(mine, theirs), u| {
                undirected_neighbors(graph, u, mine);
                let higher = mine.partition_point(|&v| v <= u);
                let mut at_u = 0;
                for &v in &mine[higher..] {
                    undirected_neighbors(graph, v, theirs);
                    let from = theirs.partition_point(|&w| w <= v);
                    let start = mine.partition_point(|&w| w <= v);
                    let mut at_v = 0;
                    for_each_common(&mine[start..], &theirs[from..], |w| {
                        credit(w, 1);
                        at_v += 1;
                    });
                    credit(v, at_v);
                    at_u += at_v;
                }
                credit(u, at_u);
            },
        );
    counts.into_iter().map(AtomicU64::into_inner).collect()
}

/// Triangles through each vertex by checking every triple (the reference; small graphs only).
pub fn triangles_per_vertex_serial<G: GraphRead>(graph: &G) -> Vec<u64> {
    let n = graph.num_vertices();
    let sets: Vec<std::collections::BTreeSet<VertexId>> = (0..n as VertexId)
        .map(|v| {
            let mut list = Vec::new();
            undirected_neighbors(graph, v, &mut list);
            list.into_iter().collect()
        })
        .collect();
    let mut counts = vec![0; n];
    for u in 0..n {
        for &v in sets[u].range(u as VertexId + 1..) {
            for &w in sets[v as usize].range(v + 1..) {
                if sets[u].contains(&w) {
                    for x in [u, v as usize, w as usize] {
                        counts[x] += 1;
                    }
                }
            }
        }
    }
    counts
}

/// Triangles by checking every triple of neighbors (the reference; small graphs only).
pub fn triangle_count_serial<G: GraphRead>(graph: &G) -> u64 {
    let n = graph.num_vertices();
    let sets: Vec<std::collections::BTreeSet<VertexId>> = (0..n as VertexId)
        .map(|v| {
            let mut list = Vec::new();
            undirected_neighbors(graph, v, &mut list);
            list.into_iter().collect()
        })
        .collect();
    let mut count = 0;
    for u in 0..n {
        for &v in sets[u].range(u as VertexId + 1..) {
            for &w in sets[v as usize].range(v + 1..) {
                count += u64::from(sets[u].contains(&w));
            }
        }
    }
    count
}
