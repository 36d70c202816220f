//! `edge_map`: apply an update along the edges leaving a frontier, choosing per round
//! between push (sparse: scan the frontier's out-edges) and pull (dense: every candidate
//! scans its in-edges until satisfied), Ligra's direction optimization (Beamer et al.,
//! SC 2012; Shun and Blelloch, PPoPP 2013).

use rayon::prelude::*;

use super::vertex_subset::VertexSubset;
use crate::graph::{GraphRead, VertexId};

/// A round is pulled when the frontier plus its out-degrees exceed `num_edges / PULL_DIVISOR`
/// (Ligra's threshold).
pub const PULL_DIVISOR: usize = 20;

/// The per-edge logic of an [`edge_map`] round.
pub trait EdgeOp: Sync {
    /// Push mode: try to update `dst` from `src`; may run concurrently for the same `dst`
    /// (use atomics). Returns whether `dst` joins the output frontier; at most one call per
    /// `dst` and round may return `true`.
    fn update_atomic(&self, src: VertexId, dst: VertexId) -> bool;

    /// Pull mode: like [`EdgeOp::update_atomic`], but all calls for one `dst` come from one
    /// thread in sequence.
    fn update(&self, src: VertexId, dst: VertexId) -> bool {
        self.update_atomic(src, dst)
    }

    /// Whether `dst` can still be updated; pull mode stops scanning its in-edges once false.
    fn cond(&self, _dst: VertexId) -> bool {
        true
    }
}

/// Applies `op` along every edge `(u, v)` with `u` in `frontier` and `cond(v)`, returning the
/// vertices for which an update returned `true`.
///
/// # Complexity
/// Push: O(|frontier| + its out-degrees) work. Pull: O(n + in-edges scanned) work.
pub fn edge_map<G: GraphRead, O: EdgeOp>(
    graph: &G,
    frontier: &VertexSubset,
    op: &O,
) -> VertexSubset {
    let n = graph.num_vertices();
    if frontier.is_empty() {
        return VertexSubset::empty(n);
    }
    if should_pull(graph, frontier) {
        pull_round(graph, &frontier.to_dense(), op)
    } else {
        push_round(graph, &frontier.to_ids(), op)
    }
}

fn should_pull<G: GraphRead>(graph: &G, frontier: &VertexSubset) -> bool {
    let threshold = graph.num_arcs() / PULL_DIVISOR;
    let work = match frontier {
        VertexSubset::Sparse { ids, .. } => {
            ids.len() + ids.par_iter().map(|&v| graph.out_degree(v)).sum::<usize>()
        }
        VertexSubset::Dense { len, .. } => *len + threshold + 1, // already dense: stay dense
    };
    work > threshold
}

fn push_round<G: GraphRead, O: EdgeOp>(graph: &G, frontier: &[VertexId], op: &O) -> VertexSubset {
    let ids = frontier
        .par_iter()
        .fold(Vec::new, |mut next, &u| {
            graph.for_each_out_neighbor(u, |v| {
                if op.cond(v) && op.update_atomic(u, v) {
                    next.push(v);
                }
                true
            });
            next
        })
        .reduce(Vec::new, |mut a, mut b| {
            a.append(&mut b);
            a
        });
    VertexSubset::Sparse {
        num_vertices: graph.num_vertices(),
        ids,
    }
}

fn pull_round<G: GraphRead, O: EdgeOp>(graph: &G, frontier: &[bool], op: &O) -> VertexSubset {
    let members: Vec<bool> = (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(1024)
        .map(|v| {
            let mut joined = false;
            if op.cond(v) {
                graph.for_each_in_neighbor(v, |u| {
                    if frontier[u as usize] && op.update(u, v) {
                        joined = true;
                    }
                    op.cond(v)
                });
            }
            joined
        })
        .collect();
    let len = members.par_iter().filter(|&&m| m).count();
    VertexSubset::Dense { len, members }
}
