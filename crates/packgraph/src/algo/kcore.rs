//! k-core decomposition on the undirected view: the coreness of v is the largest k such that
//! v belongs to a subgraph where every vertex has at least k neighbors.
//!
//! Parallel peeling (as in Julienne / Ligra's k-core): for k = 0, 1, …, repeatedly remove in
//! parallel every remaining vertex whose remaining degree is at most k, decrementing its
//! neighbors' degrees with atomics; a neighbor whose degree falls to k or below joins the next
//! wave. Removed vertices get coreness k.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rayon::prelude::*;

use super::neighborhood::{all_undirected_neighbors, undirected_neighbors};
use super::stop::{check, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// The coreness of every vertex.
///
/// # Complexity
/// O(m + n · kmax) work for largest coreness kmax (a scan of the vertices per k).
pub fn kcore<G: GraphRead>(graph: &G) -> Vec<u32> {
    kcore_interruptible(graph, &NEVER).expect("nothing sets NEVER")
}

/// [`kcore`], looking at `stop` before each wave of removals.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn kcore_interruptible<G: GraphRead>(graph: &G, stop: &AtomicBool) -> Result<Vec<u32>> {
    let n = graph.num_vertices();
    let neighbors = all_undirected_neighbors(graph, stop)?;
    let degree: Vec<AtomicUsize> = neighbors
        .iter()
        .map(|l| AtomicUsize::new(l.len()))
        .collect();
    let removed: Vec<AtomicBool> = (0..n).map(|_| AtomicBool::new(false)).collect();
    let mut core = vec![0u32; n];
    let mut remaining = n;
    let mut k = 0usize;
    while remaining > 0 {
        check(stop)?;
        let mut wave: Vec<VertexId> = (0..n as VertexId)
            .into_par_iter()
            .filter(|&v| {
                !removed[v as usize].load(Ordering::Relaxed)
                    && degree[v as usize].load(Ordering::Relaxed) <= k
            })
            .collect();
        while !wave.is_empty() {
            check(stop)?;
            wave.iter()
                .for_each(|&v| removed[v as usize].store(true, Ordering::Relaxed));
            remaining -= wave.len();
            for &v in &wave {
                core[v as usize] = k as u32;
            }
            wave = wave
                .par_iter()
                .flat_map_iter(|&v| neighbors[v as usize].iter().copied())
                .filter(|&w| {
                    if removed[w as usize].load(Ordering::Relaxed) {
                        return false;
                    }
                    // Exactly one decrement crosses from k + 1 to k: that one enqueues w.
                    degree[w as usize].fetch_sub(1, Ordering::Relaxed) == k + 1
                })
                .collect();
        }
        k += 1;
    }
    Ok(core)
}

/// Coreness by the sequential peeling algorithm (repeatedly remove a minimum-degree vertex).
pub fn kcore_serial<G: GraphRead>(graph: &G) -> Vec<u32> {
    let n = graph.num_vertices();
    let mut neighbors = Vec::with_capacity(n);
    for v in 0..n as VertexId {
        let mut list = Vec::new();
        undirected_neighbors(graph, v, &mut list);
        neighbors.push(list);
    }
    let mut degree: Vec<usize> = neighbors.iter().map(Vec::len).collect();
    let mut removed = vec![false; n];
    let mut core = vec![0u32; n];
    let mut k = 0;
    for _ in 0..n {
        let v = (0..n)
            .filter(|&v| !removed[v])
            .min_by_key(|&v| degree[v])
            .expect("a vertex remains");
        k = k.max(degree[v]);
        core[v] = k as u32;
        removed[v] = true;
        for &w in &neighbors[v] {
            degree[w as usize] = degree[w as usize].saturating_sub(1);
        }
    }
    core
}
