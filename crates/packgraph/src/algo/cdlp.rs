//! Community detection by label propagation, as LDBC Graphalytics defines it: every vertex
//! starts with its own id as label; in each of a fixed number of synchronous iterations it
//! takes the label that is most frequent among its neighbors, ties going to the smallest
//! label, and keeps its label if it has no neighbors. On a directed graph the neighbors are
//! the out-list and the in-list together, so a reciprocal neighbor counts twice.
//!
//! Labels are dense ids; they equal Graphalytics' when dense ids keep the order of the
//! external ids (ties compare labels).

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use crate::graph::{GraphRead, VertexId};

/// The most frequent label in `labels` (sorted in place), smallest on ties: the label a
/// vertex takes in a round of label propagation (`None` without neighbours). Public for
/// label propagation over other label types (packgraph-dist's labels are 64-bit ids).
///
/// ```
/// let mut labels = [7u64, 3, 7, 3, 9];
/// assert_eq!(packgraph::algo::most_frequent(&mut labels), Some(3));
/// assert_eq!(packgraph::algo::most_frequent::<u32>(&mut []), None);
/// ```
pub fn most_frequent<T: Ord + Copy>(labels: &mut [T]) -> Option<T> {
    labels.sort_unstable();
    let (mut best, mut best_count) = (None, 0);
    for run in labels.chunk_by(|a, b| a == b) {
        if run.len() > best_count {
            (best, best_count) = (Some(run[0]), run.len());
        }
    }
    best
}

fn next_label<G: GraphRead>(
    graph: &G,
    labels: &[VertexId],
    v: VertexId,
    scratch: &mut Vec<VertexId>,
) -> VertexId {
    scratch.clear();
    let mut gather = |u: VertexId| {
        scratch.push(labels[u as usize]);
        true
    };
    graph.for_each_out_neighbor(v, &mut gather);
    if graph.is_directed() {
        graph.for_each_in_neighbor(v, &mut gather);
    }
    most_frequent(scratch).unwrap_or(labels[v as usize])
}

/// Community labels after `iterations` rounds of label propagation.
///
/// # Complexity
/// O(iterations · (n + m log d)) work for maximum degree d.
pub fn cdlp<G: GraphRead>(graph: &G, iterations: usize) -> Vec<VertexId> {
    cdlp_interruptible(graph, iterations, &AtomicBool::new(false))
}

/// [`cdlp`], ending early (with the labels of the rounds done) once another thread sets
/// `stop`; checked before each round.
pub fn cdlp_interruptible<G: GraphRead>(
    graph: &G,
    iterations: usize,
    stop: &AtomicBool,
) -> Vec<VertexId> {
    let n = graph.num_vertices();
    let mut labels: Vec<VertexId> = (0..n as VertexId).collect();
    for _ in 0..iterations {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        labels = (0..n as VertexId)
            .into_par_iter()
            .with_min_len(256)
            .map_init(Vec::new, |scratch, v| {
                next_label(graph, &labels, v, scratch)
            })
            .collect();
    }
    labels
}

/// The same rounds with a frequency map per vertex (the reference).
pub fn cdlp_serial<G: GraphRead>(graph: &G, iterations: usize) -> Vec<VertexId> {
    let n = graph.num_vertices();
    let mut labels: Vec<VertexId> = (0..n as VertexId).collect();
    for _ in 0..iterations {
        let mut next = labels.clone();
        for v in 0..n as VertexId {
            let mut counts = std::collections::BTreeMap::new();
            let mut count = |u: VertexId| {
                *counts.entry(labels[u as usize]).or_insert(0usize) += 1;
                true
            };
            graph.for_each_out_neighbor(v, &mut count);
            if graph.is_directed() {
                graph.for_each_in_neighbor(v, &mut count);
            }
            // BTreeMap iterates labels ascending, so `max_by` keeping the first maximum
            // picks the smallest label among the most frequent.
            if let Some((&label, _)) = counts.iter().rev().max_by_key(|(_, &c)| c) {
                next[v as usize] = label;
            }
        }
        labels = next;
    }
    labels
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;
    use crate::graph::CsrGraph;

    proptest! {
        /// Against counting in a map: the greatest count, the smallest label among ties.
        #[test]
        fn most_frequent_takes_the_smallest_of_the_commonest(
            mut labels in proptest::collection::vec(0u64..8, 0..40),
        ) {
            let mut counts = BTreeMap::new();
            for &l in &labels {
                *counts.entry(l).or_insert(0usize) += 1;
            }
            let best = counts.values().max().copied();
            let expected = counts.iter().find(|(_, &c)| Some(c) == best).map(|(&l, _)| l);
            prop_assert_eq!(most_frequent(&mut labels), expected);
        }
    }

    #[test]
    fn a_set_stop_flag_ends_before_the_next_round() {
        let graph = CsrGraph::from_edges(4, &[(0, 1), (1, 2), (2, 3)], false);
        assert_eq!(
            cdlp_interruptible(&graph, 1_000_000, &AtomicBool::new(true)),
            vec![0, 1, 2, 3]
        );
        assert_eq!(
            cdlp_interruptible(&graph, 5, &AtomicBool::new(false)),
            cdlp(&graph, 5)
        );
    }
}
