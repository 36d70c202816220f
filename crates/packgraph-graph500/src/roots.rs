//! Search keys: distinct vertices of degree at least one (self-loops not counted), drawn
//! uniformly with a seeded generator, as the specification asks.
//!
//! Every process draws the same candidates in batches; their owners say which have an edge
//! (one all-reduce per batch), and candidates are accepted in the order drawn. If a graph has
//! so few vertices with edges that drawing is slow, the rest are taken in id order.

use packgraph::io::generate::SplitMix64;

use crate::comm::{Comm, Group};
use crate::local::LocalGraph;

/// Candidates drawn per all-reduce.
const BATCH: usize = 256;

/// Batches drawn before falling back to id order.
const MAX_BATCHES: usize = 64;

/// Accepts, in order, the `candidates` that have an edge and were not picked yet, until
/// `picked` holds `want`.
pub fn accept(candidates: &[u32], has_edge: &[u64], picked: &mut Vec<u32>, want: usize) {
    for (&v, &flag) in candidates.iter().zip(has_edge) {
        if picked.len() == want {
            return;
        }
        if flag != 0 && !picked.contains(&v) {
            picked.push(v);
        }
    }
}

/// Up to `count` search keys (fewer only if fewer vertices have an edge), the same on every
/// process (collective).
pub fn sample_roots(comm: &dyn Comm, graph: &LocalGraph, count: usize, seed: u64) -> Vec<u32> {
    let layout = graph.layout;
    let first = layout.block_start(layout.rank);
    let has_edge = |v: u32| layout.owner(v) == layout.rank && graph.degrees[v as usize - first] > 0;
    let mut with_edges = [graph.degrees.iter().filter(|&&d| d > 0).count() as u64];
    comm.allreduce_sum(Group::World, &mut with_edges);
    let want = count.min(with_edges[0] as usize);
    let mut rng = SplitMix64::new(seed, 0x900d_5eed);
    let mut picked = Vec::with_capacity(want);
    for _ in 0..MAX_BATCHES {
        if picked.len() == want {
            return picked;
        }
        let candidates: Vec<u32> = (0..BATCH)
            .map(|_| rng.below(layout.num_vertices as u64) as u32)
            .collect();
        let mut flags: Vec<u64> = candidates.iter().map(|&v| u64::from(has_edge(v))).collect();
        comm.allreduce_max(Group::World, &mut flags);
        accept(&candidates, &flags, &mut picked, want);
    }
    // Few vertices have edges: take the rest in id order, a slice of every block at a time.
    let mut step = 0;
    while picked.len() < want && step < layout.block {
        let slice = step..(step + BATCH).min(layout.block);
        let candidates: Vec<u32> = (0..comm.size())
            .flat_map(|q| slice.clone().map(move |o| q * layout.block + o))
            .filter(|&v| v < layout.num_vertices)
            .map(|v| v as u32)
            .collect();
        let mut flags: Vec<u64> = candidates.iter().map(|&v| u64::from(has_edge(v))).collect();
        comm.allreduce_max(Group::World, &mut flags);
        accept(&candidates, &flags, &mut picked, want);
        step += BATCH;
    }
    picked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_skips_isolated_and_repeated_vertices_and_stops_at_want() {
        let mut picked = vec![4];
        accept(&[1, 2, 4, 3, 5, 6], &[1, 0, 1, 1, 1, 1], &mut picked, 4);
        assert_eq!(picked, [4, 1, 3, 5]);
    }
}
