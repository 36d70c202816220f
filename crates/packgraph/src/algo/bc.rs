//! Single-source betweenness centrality (Brandes, J. Math. Sociol. 2001), as Ligra's BC
//! computes it for one source: the dependency of the source on every vertex,
//! `δ(v) = Σ_{w : v ∈ pred(w)} σ(v) / σ(w) · (1 + δ(w))`, with σ the number of shortest
//! paths from the source (unweighted, along edge directions) and δ(source) = 0.
//!
//! Level-synchronous: a direction-optimizing BFS gives the levels; path counts are pulled
//! level by level from in-neighbors one level up, and dependencies are accumulated level by
//! level from out-neighbors one level down, each level in parallel (no atomics).

use std::sync::atomic::AtomicBool;

use rayon::prelude::*;

use super::bfs::{bfs_limited, UNREACHED};
use super::stop::{check, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Runs at least this long are decoded into a slice before the loop over them; shorter
/// ones are read arc by arc, where the slice's setup costs more than it saves (slices
/// throughout measured slower on a road network, average degree 2; thresholds 8, 16 and
/// 32 within noise of each other on Kronecker; see CHANGELOG).
const SLICE_MIN: usize = 16;

/// Which neighbors [`for_each_run`] reads.
#[derive(Clone, Copy)]
enum Direction {
    In,
    Out,
}

/// Calls `f` on the in- or out-neighbors of `v`, through a decoded slice for long runs.
#[inline(always)]
fn for_each_run<G: GraphRead>(
    graph: &G,
    v: VertexId,
    direction: Direction,
    scratch: &mut Vec<VertexId>,
    mut f: impl FnMut(VertexId),
) {
    let visit = |u| {
        f(u);
        true
    };
    match direction {
        Direction::In if graph.in_degree(v) >= SLICE_MIN => {
            graph
                .in_arcs_in(v..v + 1, scratch)
                .iter()
                .for_each(|&u| f(u));
        }
        Direction::In => {
            graph.for_each_in_neighbor(v, visit);
        }
        Direction::Out if graph.out_degree(v) >= SLICE_MIN => {
            graph
                .out_arcs_in(v..v + 1, scratch)
                .iter()
                .for_each(|&u| f(u));
        }
        Direction::Out => {
            graph.for_each_out_neighbor(v, visit);
        }
    }
}

/// Vertices grouped by BFS depth.
fn levels(depths: &[u32]) -> Vec<Vec<VertexId>> {
    let max = depths
        .iter()
        .filter(|&&d| d != UNREACHED)
        .max()
        .copied()
        .unwrap_or(0);
    let mut levels = vec![Vec::new(); max as usize + 1];
    for (v, &d) in depths.iter().enumerate() {
        if d != UNREACHED {
            levels[d as usize].push(v as VertexId);
        }
    }
    levels
}

/// Dependencies of `source` on every vertex (its single-source betweenness contribution).
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex of `graph`.
///
/// # Complexity
/// O(n + m) work, O(diameter · log n) depth, three words per vertex.
pub fn betweenness<G: GraphRead>(graph: &G, source: VertexId) -> Result<Vec<f64>> {
    betweenness_interruptible(graph, source, &NEVER)
}

/// [`betweenness`], looking at `stop` before each BFS round and each level.
///
/// # Errors
/// As [`betweenness`]; [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn betweenness_interruptible<G: GraphRead>(
    graph: &G,
    source: VertexId,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    let depths = bfs_limited(graph, source, u32::MAX, stop)?.depths;
    let levels = levels(&depths);
    let mut sigma = vec![0.0f64; depths.len()];
    sigma[source as usize] = 1.0;
    for (d, level) in levels.iter().enumerate().skip(1) {
        check(stop)?;
        let counts: Vec<f64> = level
            .par_iter()
            .map_init(Vec::new, |scratch, &v| {
                let mut paths = 0.0;
                for_each_run(graph, v, Direction::In, scratch, |u| {
                    if depths[u as usize] as usize + 1 == d {
                        paths += sigma[u as usize];
                    }
                });
                paths
            })
            .collect();
        level
            .iter()
            .zip(counts)
            .for_each(|(&v, c)| sigma[v as usize] = c);
    }
    let mut delta = vec![0.0f64; depths.len()];
    for (d, level) in levels.iter().enumerate().rev() {
        check(stop)?;
        let scores: Vec<f64> = level
            .par_iter()
            .map_init(Vec::new, |scratch, &v| {
                let mut score = 0.0;
                for_each_run(graph, v, Direction::Out, scratch, |w| {
                    if depths[w as usize] as usize == d + 1 {
                        score += sigma[v as usize] / sigma[w as usize] * (1.0 + delta[w as usize]);
                    }
                });
                score
            })
            .collect();
        level
            .iter()
            .zip(scores)
            .for_each(|(&v, s)| delta[v as usize] = s);
    }
    delta[source as usize] = 0.0;
    Ok(delta)
}

/// Brandes' algorithm with a queue, a stack and predecessor lists (the reference).
pub fn betweenness_serial<G: GraphRead>(graph: &G, source: VertexId) -> Vec<f64> {
    let n = graph.num_vertices();
    let mut sigma = vec![0.0f64; n];
    let mut dist = vec![u32::MAX; n];
    let mut preds: Vec<Vec<VertexId>> = vec![Vec::new(); n];
    let mut order = Vec::new();
    sigma[source as usize] = 1.0;
    dist[source as usize] = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(v) = queue.pop_front() {
        order.push(v);
        for w in graph.out_neighbors(v) {
            if dist[w as usize] == u32::MAX {
                dist[w as usize] = dist[v as usize] + 1;
                queue.push_back(w);
            }
            if dist[w as usize] == dist[v as usize] + 1 {
                sigma[w as usize] += sigma[v as usize];
                preds[w as usize].push(v);
            }
        }
    }
    let mut delta = vec![0.0f64; n];
    for &w in order.iter().rev() {
        for &v in &preds[w as usize] {
            delta[v as usize] += sigma[v as usize] / sigma[w as usize] * (1.0 + delta[w as usize]);
        }
    }
    delta[source as usize] = 0.0;
    delta
}
