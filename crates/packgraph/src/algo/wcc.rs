//! Weakly connected components: every vertex is labelled with the smallest vertex id of its
//! component, edge directions ignored (LDBC Graphalytics WCC; labels there may differ, the
//! partition must be equal).
//!
//! Concurrent union-find: all edges are processed in parallel; a union links the larger of
//! two roots under the smaller with a compare-and-swap and retries if it lost a race, so
//! each root is the minimum of its tree and the final roots are the component minima.

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use crate::graph::{GraphRead, VertexId};

fn find(parent: &[AtomicU32], mut v: VertexId) -> VertexId {
    loop {
        let p = parent[v as usize].load(Ordering::Relaxed);
        if p == v {
            return v;
        }
        let grand = parent[p as usize].load(Ordering::Relaxed);
        // Path halving; losing this race only leaves a longer path.
        let _ = parent[v as usize].compare_exchange(p, grand, Ordering::Relaxed, Ordering::Relaxed);
        v = grand;
    }
}

fn union(parent: &[AtomicU32], a: VertexId, b: VertexId) {
    loop {
        let (ra, rb) = (find(parent, a), find(parent, b));
        if ra == rb {
            return;
        }
        let (high, low) = (ra.max(rb), ra.min(rb));
        if parent[high as usize]
            .compare_exchange(high, low, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
}

/// The smallest vertex id in each vertex's weakly connected component.
///
/// # Complexity
/// O(m · α(n)) expected work, one word per vertex.
pub fn wcc<G: GraphRead>(graph: &G) -> Vec<VertexId> {
    let n = graph.num_vertices();
    let parent: Vec<AtomicU32> = (0..n as VertexId).map(AtomicU32::new).collect();
    (0..n as VertexId)
        .into_par_iter()
        .with_min_len(256)
        .for_each(|u| {
            graph.for_each_out_neighbor(u, |v| {
                union(&parent, u, v);
                true
            });
        });
    (0..n as VertexId)
        .into_par_iter()
        .map(|v| find(&parent, v))
        .collect()
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
