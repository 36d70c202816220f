//! Inputs and timings the suites share: input files, seeded sources, timing a closure.

use std::path::Path;
use std::time::{Duration, Instant};

use packgraph::graph::{AnyGraph, GraphRead, VertexId};
use packgraph::io::generate::SplitMix64;
use packgraph::io::{load, LoadOptions};

use crate::UsageError;

/// Runs `f` and returns its result with the elapsed time.
pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
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
/// that cannot be read is a [`UsageError`] (exit code 2), as in `packgraph run`.
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
        Err(error) => Err(UsageError(error.to_string()).into()),
    }
}
