//! Weakly connected components: every vertex is labelled with the smallest vertex id of its
//! component, edge directions ignored (LDBC Graphalytics WCC; labels there may differ, the
//! partition must be equal).
//!
//! Afforest (Sutton, Ben-Nun and Barak, IPDPS 2018) over a concurrent union-find: a union
//! walks up from both ends one parent at a time and links the larger of two roots under the
//! smaller with a compare-and-swap, going on up if it lost a race, so each root is the
//! minimum of its tree and the final roots are the component minima. Only that hook
//! writes: an earlier version halved paths with a compare-and-swap at every step of every
//! find, and took 1.5–1.7 times GAP's time on a uniform random graph (1.1–1.3 without). First every vertex links along its first few out-arcs only (a sampled
//! subgraph that already joins most of a large component); then the most common root among
//! a fixed sample of vertices names the likely giant component, and only vertices outside
//! it link their remaining arcs (their in-arcs too when the graph is directed, so an edge
//! from inside the giant component is seen from its other end). Most arcs of a skewed graph
//! are never touched.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rayon::prelude::*;

use super::stop::{blocks, check, stopped, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Out-arcs per vertex linked in the sampling rounds (one round each).
const NEIGHBOR_ROUNDS: usize = 2;

/// Vertices sampled to find the most common root.
const ROOT_SAMPLES: usize = 1024;

/// Vertices per parallel task in the sampling rounds.
const SAMPLE_BLOCK: usize = 1024;

/// Vertices per parallel task in the finishing pass.
const FINISH_BLOCK: usize = 1024;

/// Joins the trees of `a` and `b` (Afforest's link, Sutton et al. 2018): walks both up
/// one step at a time and hooks the larger root under the smaller, so a parent is never
/// larger than its child. A vertex whose parent already is the other side's vertex ends
/// the walk without a write; only the hook is a compare-and-swap.
fn union(parent: &[AtomicU32], a: VertexId, b: VertexId) {
    let load = |v: VertexId| parent[v as usize].load(Ordering::Relaxed);
    let (mut pa, mut pb) = (load(a), load(b));
    while pa != pb {
        let (high, low) = (pa.max(pb), pa.min(pb));
        let above = load(high);
        if above == low
            || (above == high
                && parent[high as usize]
                    .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
                    .is_ok())
        {
            return;
        }
        // `high` was hooked meanwhile, or is not a root: go up from both sides.
        (pa, pb) = (load(above), load(low));
    }
}

/// Points every vertex straight at its root (no union runs meanwhile). Plain loads and
/// stores: a vertex's parent only moves up its tree.
fn compress(parent: &[AtomicU32]) {
    (0..parent.len())
        .into_par_iter()
        .with_min_len(4096)
        .for_each(|v| {
            let load = |v: u32| parent[v as usize].load(Ordering::Relaxed);
            let mut p = load(v as u32);
            let mut above = load(p);
            while p != above {
                p = above;
                above = load(p);
            }
            parent[v].store(p, Ordering::Relaxed);
        });
}

/// The most common root among [`ROOT_SAMPLES`] vertices picked by a fixed hash (after
/// [`compress`], so a vertex's parent is its root).
fn most_common_root(parent: &[AtomicU32]) -> VertexId {
    let n = parent.len() as u64;
    let mut roots: Vec<VertexId> = (0..ROOT_SAMPLES as u64)
        .map(|i| {
            let h = (i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let v = (h ^ (h >> 29)) % n;
            parent[v as usize].load(Ordering::Relaxed)
        })
        .collect();
    roots.sort_unstable();
    let (mut best, mut best_count) = (roots[0], 0);
    for run in roots.chunk_by(|a, b| a == b) {
        if run.len() > best_count {
            (best, best_count) = (run[0], run.len());
        }
    }
    best
}

/// The smallest vertex id in each vertex's weakly connected component.
///
/// # Complexity
/// O(m · α(n)) work in the worst case; on a graph with one giant component, O(n + the arcs
/// of the vertices outside it) after the sampling rounds. One word per vertex.
pub fn wcc<G: GraphRead>(graph: &G) -> Vec<VertexId> {
    wcc_interruptible(graph, &NEVER).expect("nothing sets NEVER")
}

/// [`wcc`], looking at `stop` between its passes and between blocks of vertices.
///
/// # Errors
/// [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn wcc_interruptible<G: GraphRead>(
    graph: &G,
    stop: &AtomicBool,
) -> Result<Vec<VertexId>> {
    let n = graph.num_vertices();
    if n == 0 {
        return Ok(Vec::new());
    }
    let parent: Vec<AtomicU32> = (0..n as VertexId).map(AtomicU32::new).collect();
    let parent = &parent[..];
    for round in 0..NEIGHBOR_ROUNDS {
        check(stop)?;
        blocks(n, SAMPLE_BLOCK).for_each(|block| {
            if stopped(stop) {
                return;
            }
            for u in block {
                let mut seen = 0;
                graph.for_each_out_neighbor(u, |v| {
                    if seen == round {
                        union(parent, u, v);
                        return false;
                    }
                    seen += 1;
                    true
                });
            }
        });
        check(stop)?;
        compress(parent);
    }
    let giant = most_common_root(parent);
    // Vertices in the giant component are skipped whole: their arcs are never decoded.
    blocks(n, FINISH_BLOCK).for_each(|block| {
        if stopped(stop) {
            return;
        }
        for u in block {
            if parent[u as usize].load(Ordering::Relaxed) == giant {
                continue;
            }
            let mut seen = 0;
            graph.for_each_out_neighbor(u, |v| {
                seen += 1;
                if seen > NEIGHBOR_ROUNDS {
                    union(parent, u, v);
                }
                true
            });
            if graph.is_directed() {
                graph.for_each_in_neighbor(u, |v| {
                    union(parent, u, v);
                    true
                });
            }
        }
    });
    check(stop)?;
    compress(parent);
    Ok(parent
        .par_iter()
        .map(|p| p.load(Ordering::Relaxed))
        .collect())
}

/// Labels by serial breadth-first search over out- and in-edges (the reference).
pub fn wcc_serial<G: GraphRead>(graph: &G) -> Vec<VertexId> {
    let n = graph.num_vertices();
    let mut label = vec![VertexId::MAX; n];
    for start in 0..n as VertexId {
        if label[start as usize] != VertexId::MAX {
            continue;
        }
        label[start as usize] = start;
        let mut stack = vec![start];
        while let Some(u) = stack.pop() {
            let mut visit = |v: VertexId| {
                if label[v as usize] == VertexId::MAX {
                    label[v as usize] = start;
                    stack.push(v);
                }
                true
            };
            graph.for_each_out_neighbor(u, &mut visit);
            graph.for_each_in_neighbor(u, &mut visit);
        }
    }
    label
}
