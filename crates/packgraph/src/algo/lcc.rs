//! Local clustering coefficient, as LDBC Graphalytics defines it: for vertex v with
//! neighborhood N(v) (out ∪ in neighbors on a directed graph, v excluded) and d = |N(v)|,
//! the number of edges (u, w) with u, w ∈ N(v), counted as directed arcs, over d(d − 1);
//! 0 when d < 2. On an undirected graph each edge counts as two arcs, which gives the usual
//! edges / (d(d − 1) / 2).

use rayon::prelude::*;

use super::neighborhood::{intersection_len, undirected_neighbors};
use std::sync::atomic::AtomicBool;

use super::stop::{check, stopped, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

fn coefficient<G: GraphRead>(
    graph: &G,
    v: VertexId,
    scratch: &mut (Vec<VertexId>, Vec<VertexId>),
) -> f64 {
    let (neighborhood, outs) = scratch;
    undirected_neighbors(graph, v, neighborhood);
    let d = neighborhood.len();
    if d < 2 {
        return 0.0;
    }
    let mut arcs = 0usize;
    for &u in neighborhood.iter() {
        outs.clear();
        graph.for_each_out_neighbor(u, |w| {
            outs.push(w);
            true
        });
        arcs += intersection_len(outs, neighborhood);
    }
    arcs as f64 / (d * (d - 1)) as f64
}

/// The local clustering coefficient of every vertex.
///
/// # Complexity
/// O(Σ_v Σ_{u ∈ N(v)} (d(u) + d(v))) work.
pub fn lcc<G: GraphRead>(graph: &G) -> Vec<f64> {
    lcc_interruptible(graph, &NEVER).expect("nothing sets NEVER")
}

/// Vertices per parallel task.
const BLOCK: usize = 64;

/// [`lcc`], looking at `stop` between blocks of vertices.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn lcc_interruptible<G: GraphRead>(graph: &G, stop: &AtomicBool) -> Result<Vec<f64>> {
    let mut values = vec![0.0; graph.num_vertices()];
    values.par_chunks_mut(BLOCK).enumerate().for_each_init(
        Default::default,
        |scratch, (block, values)| {
            if stopped(stop) {
                return;
            }
            for (i, value) in values.iter_mut().enumerate() {
                *value = coefficient(graph, (block * BLOCK + i) as VertexId, scratch);
            }
        },
    );
    check(stop)?;
    Ok(values)
}

/// The same with hash sets (the reference).
pub fn lcc_serial<G: GraphRead>(graph: &G) -> Vec<f64> {
    (0..graph.num_vertices() as VertexId)
        .map(|v| {
            let mut set = std::collections::HashSet::new();
            let mut add = |u: VertexId| {
                set.insert(u);
                true
            };
            graph.for_each_out_neighbor(v, &mut add);
            graph.for_each_in_neighbor(v, &mut add);
            set.remove(&v);
            let d = set.len();
            if d < 2 {
                return 0.0;
            }
            let arcs: usize = set
                .iter()
                .map(|&u| {
                    graph
                        .out_neighbors(u)
                        .iter()
                        .filter(|w| set.contains(w))
                        .count()
                })
                .sum();
            arcs as f64 / (d * (d - 1)) as f64
        })
        .collect()
}
