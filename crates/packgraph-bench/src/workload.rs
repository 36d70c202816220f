//! Inputs and timings the suites share: input files and their edges, seeded sources, R-MAT
//! edges not yet in a graph, timing a closure, medians.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::path::Path;
use std::time::{Duration, Instant};

use packgraph::graph::{AnyGraph, GraphRead, VertexId};
use packgraph::io::generate::{rmat, Initiator, SplitMix64};
use packgraph::io::{load, LoadOptions};

use crate::args::usage_error;

/// Runs `f` and returns its result with the elapsed time.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}

/// The upper median of `values` (the default, zero, for none), as every suite reports
/// repeated timings.
pub(crate) fn median<T: Copy + Default + PartialOrd>(mut values: Vec<T>) -> T {
    values.sort_unstable_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
    values.get(values.len() / 2).copied().unwrap_or_default()
}

/// Up to `count` vertices with at least one out-edge, drawn by a generator seeded with
/// `seed` on its stream `stream` (each bench its own stream).
pub(crate) fn pick_sources<G: GraphRead>(
    graph: &G,
    count: usize,
    seed: u64,
    stream: u64,
) -> Vec<VertexId> {
    let mut rng = SplitMix64::new(seed, stream);
    let n = graph.num_vertices() as u64;
    let mut sources = Vec::new();
    for _ in 0..count * 1000 {
        if sources.len() == count || n == 0 {
            break;
        }
        let v = rng.below(n) as VertexId;
        if graph.out_degree(v) > 0 {
            sources.push(v);
        }
    }
    sources
}

/// The graph in the file `path` (any format the library reads; `directed` overrides the
/// file's own direction) or the latest durable state of the data directory `path`. A file
/// that cannot be read is a [`usage_error`] (exit code 2), as in `packgraph run`.
pub(crate) fn read_graph(path: &Path, directed: Option<bool>) -> anyhow::Result<AnyGraph> {
    if packgraph::store::is_store(path) {
        return Ok(packgraph::store::load_any(path)?);
    }
    let options = LoadOptions {
        directed,
        ..LoadOptions::default()
    };
    match load(path, &options) {
        Ok(data) => Ok(data.graph),
        Err(error) => Err(usage_error(error.to_string())),
    }
}

/// Every edge of `graph` once (an undirected edge from its smaller end), in its ids.
pub(crate) fn edges_of<G: GraphRead>(graph: &G) -> Vec<(VertexId, VertexId)> {
    let mut edges = Vec::with_capacity(graph.num_edges());
    for u in 0..graph.num_vertices() as VertexId {
        graph.for_each_out_neighbor(u, |v| {
            if graph.is_directed() || u < v {
                edges.push((u, v));
            }
            true
        });
    }
    edges
}

/// The edges of any graph, as [`edges_of`].
pub(crate) fn any_edges_of(graph: &AnyGraph) -> Vec<(VertexId, VertexId)> {
    match graph {
        AnyGraph::Unweighted(g) => edges_of(g),
        AnyGraph::Weighted(g) => edges_of(g),
    }
}

/// Up to `count` R-MAT edges (a = 0.5, b = c = 0.1, over the `2^scale` ids of a Kronecker
/// graph) for which `present` is false, without self-loops or repeats (as unordered pairs):
/// the insert batches of the graph and store benches. Sampling round `r` is seeded with
/// `seed ^ (stream + (r << 32))`; it gives up after 64 rounds.
pub(crate) fn fresh_edges(
    scale: u32,
    count: usize,
    (seed, stream): (u64, u64),
    present: impl Fn(VertexId, VertexId) -> bool,
) -> Vec<(VertexId, VertexId)> {
    let init = Initiator {
        a: 0.5,
        b: 0.1,
        c: 0.1,
    };
    let mut out = Vec::with_capacity(count);
    let mut seen = HashSet::with_capacity(count);
    for round in 0..64u64 {
        if out.len() >= count {
            break;
        }
        for (u, v) in rmat(scale, count, init, seed ^ stream.wrapping_add(round << 32)) {
            if u != v && out.len() < count && !present(u, v) && seen.insert((u.min(v), u.max(v))) {
                out.push((u, v));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_is_the_upper_one() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 3.0);
        assert_eq!(median(Vec::<f64>::new()), 0.0);
        let ms = Duration::from_millis;
        assert_eq!(median(vec![ms(5), ms(1), ms(9), ms(7)]), ms(7));
    }

    #[test]
    fn fresh_edges_are_new_distinct_and_loop_free() {
        let present = |u: VertexId, v: VertexId| (u + v).is_multiple_of(3);
        let edges = fresh_edges(8, 500, (7, 1), present);
        assert_eq!(edges.len(), 500);
        let mut pairs = HashSet::new();
        for &(u, v) in &edges {
            assert!(u != v && !present(u, v) && u < 256 && v < 256);
            assert!(pairs.insert((u.min(v), u.max(v))), "{u} {v} repeated");
        }
        assert_eq!(edges, fresh_edges(8, 500, (7, 1), present), "seeded");
    }
}
