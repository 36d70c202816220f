//! Single-source shortest paths as LDBC Graphalytics defines them: for every vertex, the
//! smallest total weight of a directed path from the source along out-edges (for an
//! undirected graph, along edges either way); `f64::INFINITY` where no path exists (written
//! `Infinity` in Graphalytics output). Weights must be non-negative.
//!
//! Frontier-based Bellman-Ford: each round relaxes the out-edges of the vertices whose
//! distance fell in the previous round, in parallel. Distances are non-negative floats, whose
//! bit patterns order like their values, so a relaxation is one atomic `fetch_min` on the
//! bits; a vertex joins the next frontier once per round (an atomic flag). The final
//! distances are exact shortest-path sums and do not depend on the thread count or order.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use super::check_vertex;
use crate::graph::{VertexId, WeightedGraphRead};
use crate::{Error, Result};

/// Frontier vertices per parallel task.
const GRAIN: usize = 64;

/// Shortest-path distances from `source` (`f64::INFINITY` for unreachable vertices).
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex; [`Error::InvalidInput`](crate::Error::InvalidInput)
/// at the first negative (or NaN) weight met.
///
/// # Complexity
/// O(rounds · m) work in the worst case (rounds ≤ n), typically a few times m; one
/// 8-byte distance and a flag per vertex.
pub fn sssp<G: WeightedGraphRead>(graph: &G, source: VertexId) -> Result<Vec<f64>> {
    let n = check_vertex(graph, source)?;
    let distance: Vec<AtomicU64> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU64::new(f64::INFINITY.to_bits()))
        .collect();
    let queued: Vec<AtomicBool> = (0..n)
        .into_par_iter()
        .map(|_| AtomicBool::new(false))
        .collect();
    distance[source as usize].store(0f64.to_bits(), Ordering::Relaxed);
    let bad_weight: Mutex<Option<Error>> = Mutex::new(None);
    let mut frontier = vec![source];
    while !frontier.is_empty() {
        for &v in &frontier {
            queued[v as usize].store(false, Ordering::Relaxed);
        }
        frontier = frontier
            .par_chunks(GRAIN)
            .flat_map_iter(|chunk| {
                let mut next = Vec::new();
                for &u in chunk {
                    let du = f64::from_bits(distance[u as usize].load(Ordering::Relaxed));
                    graph.for_each_out_edge(u, |v, weight| {
                        if weight.is_nan() || weight < 0.0 {
                            let mut slot = bad_weight.lock().unwrap_or_else(|e| e.into_inner());
                            slot.get_or_insert_with(|| {
                                Error::invalid(
                                    weight,
                                    format!(
                                        "edge {u} -> {v}: shortest paths need non-negative weights"
                                    ),
                                )
                            });
                            return false;
                        }
                        let candidate = (du + weight).to_bits();
                        let old = distance[v as usize].fetch_min(candidate, Ordering::Relaxed);
                        if candidate < old && !queued[v as usize].swap(true, Ordering::Relaxed) {
                            next.push(v);
                        }
                        true
                    });
                }
                next
            })
            .collect();
        if let Some(error) = bad_weight.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(error);
        }
    }
    Ok(distance
        .into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect())
}

/// Dijkstra's algorithm with a binary heap (the sequential reference).
pub fn sssp_serial<G: WeightedGraphRead>(graph: &G, source: VertexId) -> Vec<f64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = graph.num_vertices();
    let mut distance = vec![f64::INFINITY; n];
    if (source as usize) >= n {
        return distance;
    }
    distance[source as usize] = 0.0;
    // Non-negative floats order like their bits.
    let mut heap = BinaryHeap::from([Reverse((0u64, source))]);
    while let Some(Reverse((bits, u))) = heap.pop() {
        let du = f64::from_bits(bits);
        if du > distance[u as usize] {
            continue;
        }
        graph.for_each_out_edge(u, |v, weight| {
            let candidate = du + weight;
            if candidate < distance[v as usize] {
                distance[v as usize] = candidate;
                heap.push(Reverse((candidate.to_bits(), v)));
            }
            true
        });
    }
    distance
}
