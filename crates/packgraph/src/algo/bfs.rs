//! Breadth-first search: parents and depths from one source.
//!
//! Direction-optimizing: each round is an [`edge_map`] that pushes from a small frontier and
//! pulls into the unvisited vertices when the frontier is large (Beamer et al., SC 2012).
//! Depths follow LDBC Graphalytics BFS: the number of edges on a shortest path along edge
//! directions, unreachable vertices marked (here `u32::MAX`; Graphalytics prints
//! 9223372036854775807).

use std::sync::atomic::{AtomicU32, Ordering};

use rayon::prelude::*;

use super::edge_map::{edge_map, EdgeOp};
use super::vertex_subset::VertexSubset;
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Marks an unvisited vertex or an unreachable depth.
pub const UNREACHED: u32 = u32::MAX;

/// A BFS tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BfsTree {
    /// Parent of each vertex; the source is its own parent; [`UNREACHED`] if not reached.
    pub parents: Vec<VertexId>,
    /// Edges from the source; [`UNREACHED`] if not reached.
    pub depths: Vec<u32>,
}

struct Visit<'a> {
    parents: &'a [AtomicU32],
}

impl EdgeOp for Visit<'_> {
    fn update_atomic(&self, src: VertexId, dst: VertexId) -> bool {
        self.parents[dst as usize]
            .compare_exchange(UNREACHED, src, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    }

    fn update(&self, src: VertexId, dst: VertexId) -> bool {
        self.parents[dst as usize].store(src, Ordering::Relaxed);
        true
    }

    fn cond(&self, dst: VertexId) -> bool {
        self.parents[dst as usize].load(Ordering::Relaxed) == UNREACHED
    }
}

/// Parents and depths of a breadth-first tree rooted at `source`.
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex of `graph`.
///
/// # Complexity
/// O(n + m) work, O(diameter · log n) depth, two words per vertex of extra memory.
pub fn bfs<G: GraphRead>(graph: &G, source: VertexId) -> Result<BfsTree> {
    bfs_limited(graph, source, u32::MAX)
}

/// [`bfs`] stopped after `max_depth` rounds: vertices farther away stay unreached.
pub(crate) fn bfs_limited<G: GraphRead>(
    graph: &G,
    source: VertexId,
    max_depth: u32,
) -> Result<BfsTree> {
    let n = super::check_vertex(graph, source)?;
    let parents: Vec<AtomicU32> = (0..n).map(|_| AtomicU32::new(UNREACHED)).collect();
    let mut depths = vec![UNREACHED; n];
    parents[source as usize].store(source, Ordering::Relaxed);
    depths[source as usize] = 0;
    let mut frontier = VertexSubset::single(n, source);
    let mut depth = 0;
    while !frontier.is_empty() && depth < max_depth {
        depth += 1;
        frontier = edge_map(graph, &frontier, &Visit { parents: &parents });
        set_depths(&frontier, &mut depths, depth);
    }
    let parents = parents.into_iter().map(AtomicU32::into_inner).collect();
    Ok(BfsTree { parents, depths })
}

fn set_depths(frontier: &VertexSubset, depths: &mut [u32], depth: u32) {
    match frontier {
        VertexSubset::Sparse { ids, .. } => ids.iter().for_each(|&v| depths[v as usize] = depth),
        VertexSubset::Dense { members, .. } => {
            depths
                .par_iter_mut()
                .zip(members.par_iter())
                .for_each(|(d, &m)| {
                    if m {
                        *d = depth;
                    }
                });
        }
    }
}

/// Depths by a plain serial queue-based BFS (the reference).
pub fn bfs_depths_serial<G: GraphRead>(graph: &G, source: VertexId) -> Vec<u32> {
    let mut depths = vec![UNREACHED; graph.num_vertices()];
    let Some(slot) = depths.get_mut(source as usize) else {
        return depths;
    };
    *slot = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        let next = depths[u as usize] + 1;
        graph.for_each_out_neighbor(u, |v| {
            if depths[v as usize] == UNREACHED {
                depths[v as usize] = next;
                queue.push_back(v);
            }
            true
        });
    }
    depths
}
