//! `packgraph bench …`: whole-workload benchmarks with their baselines in the same run.
//!
//! Every measurement is a [`Record`]; with `--json` each is printed as one JSON object per
//! line (JSON Lines), otherwise as a row of a readable table. Progress goes to stderr only
//! when it is a terminal.

mod gap;
mod graph;
mod io;
mod layout;
mod part;
mod pma;
mod snapshot;
mod store;

use std::io::Write;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use indicatif::ProgressBar;
use serde::Serialize;

use crate::input;
pub(crate) use crate::input::parse_count;

/// Arguments of `packgraph bench`.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    #[command(subcommand)]
    target: BenchTarget,
}

#[derive(Subcommand, Debug)]
enum BenchTarget {
    /// Packed memory array microbenchmarks (CPMA paper, section 5), against the
    /// uncompressed PMA, std's BTreeSet and a sorted Vec rebuilt by merging each batch.
    Pma(pma::PmaArgs),
    /// Graph algorithms and edge updates on the dynamic graph against a static CSR
    /// (CPMA paper, section 6).
    Graph(graph::GraphArgs),
    /// Getting graphs in: Kronecker generation, text edge-list load against the raw read,
    /// snapshot reload, and `packgraph run bfs` end to end.
    Io(io::IoArgs),
    /// The persistent adaptive radix tree (PART paper, section 3.6) against std's HashMap
    /// and BTreeMap (cloned per snapshot) and imbl's persistent OrdMap, on one thread.
    Part(part::PartArgs),
    /// Vertex orders (hierarchical blocking, BFS, RCM, degree, random, the generator's) on
    /// Watts–Strogatz, Barabási–Albert, mesh, 4-ary tree and Kronecker graphs: BFS, SSSP,
    /// PageRank, bytes per edge and reorder time, each against the random order.
    Layout(layout::LayoutArgs),
    /// What versions cost the writer: batch inserts with no snapshot, one held, or a fresh
    /// one before every batch; taking a snapshot and the first update after it.
    Snapshot(snapshot::SnapshotArgs),
    /// What durability costs on this disk: fsync latency, durable ingest (fsync per batch,
    /// group commit) against in-memory commits, incremental checkpoint sizes under uniform
    /// and Zipf changes, checkpoint load and log replay rates.
    Store(store::StoreArgs),
}

pub(crate) fn run(args: &BenchArgs, threads: usize) -> anyhow::Result<()> {
    match &args.target {
        BenchTarget::Pma(pma_args) => pma::run(pma_args, threads),
        BenchTarget::Graph(graph_args) => graph::run(graph_args, threads),
        BenchTarget::Io(io_args) => io::run(io_args, threads),
        BenchTarget::Snapshot(snapshot_args) => snapshot::run(snapshot_args, threads),
        BenchTarget::Store(store_args) => store::run(store_args, threads),
        BenchTarget::Part(part_args) => part::run(part_args),
        BenchTarget::Layout(layout_args) => layout::run(layout_args, threads),
    }
}

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    pub(crate) bench: &'static str,
    pub(crate) structure: &'static str,
    pub(crate) op: &'static str,
    pub(crate) param: u64,
    pub(crate) threads: usize,
    pub(crate) value: f64,
    pub(crate) unit: &'static str,
    /// Keys processed to get the figure (inserts run, keys visited, keys stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<u64>,
    /// Input the figure was measured on, where a bench has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset: Option<&'static str>,
}

/// Prints records as JSON Lines or as a table.
pub(crate) struct Reporter {
    json: bool,
    progress: ProgressBar,
}

impl Reporter {
    pub(crate) fn new(json: bool, steps: u64) -> Self {
        let progress = input::progress_bar(steps, "{elapsed_precise} [{bar:30}] {pos}/{len} {msg}");
        if !json {
            println!(
                "{:<10} {:<12} {:<14} {:>12} {:>7} {:>14} {:<10} {:>12}",
                "bench", "structure", "op", "param", "threads", "value", "unit", "keys"
            );
        }
        Self { json, progress }
    }

    /// Says what runs next (progress bar on a terminal only).
    pub(crate) fn step(&self, message: String) {
        self.progress.set_message(message);
    }

    pub(crate) fn advance(&self) {
        self.progress.inc(1);
    }

    pub(crate) fn emit(&self, record: Record) -> anyhow::Result<()> {
        let line = if self.json {
            serde_json::to_string(&record)?
        } else {
            format!(
                "{:<10} {:<12} {:<14} {:>12} {:>7} {:>14} {:<10} {:>12}",
                record.dataset.map_or(record.bench.to_string(), |d| format!(
                    "{}/{d}",
                    record.bench
                )),
                record.structure,
                record.op,
                record.param,
                record.threads,
                format_value(record.value),
                record.unit,
                record.keys.map_or(String::new(), |k| k.to_string()),
            )
        };
        self.progress.suspend(|| {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}").and_then(|()| out.flush())
        })?;
        Ok(())
    }

    pub(crate) fn finish(&self) {
        self.progress.finish_and_clear();
    }
}

fn format_value(value: f64) -> String {
    if value >= 1e5 || (value > 0.0 && value < 1e-2) {
        format!("{value:.4e}")
    } else {
        format!("{value:.4}")
    }
}

/// A comma-separated list of counts; an empty text or `none` is the empty list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountList(pub(crate) Vec<usize>);

impl std::ops::Deref for CountList {
    type Target = Vec<usize>;

    fn deref(&self) -> &Vec<usize> {
        &self.0
    }
}

impl std::ops::DerefMut for CountList {
    fn deref_mut(&mut self) -> &mut Vec<usize> {
        &mut self.0
    }
}

/// Parses a [`CountList`] such as `1e3,1e4` (each item as [`parse_count`]).
pub(crate) fn parse_count_list(text: &str) -> Result<CountList, packgraph::io::CountError> {
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("none") {
        return Ok(CountList(Vec::new()));
    }
    text.split(',')
        .map(|item| parse_count(item.trim()))
        .collect::<Result<_, _>>()
        .map(CountList)
}

/// Runs `f` and returns its result with the elapsed time.
/// Up to `count` vertices with at least one out-edge, drawn by a generator seeded with
/// `seed` on its stream `stream` (each bench its own stream).
pub(crate) fn pick_sources<G: packgraph::graph::GraphRead>(
    graph: &G,
    count: usize,
    seed: u64,
    stream: u64,
) -> Vec<packgraph::graph::VertexId> {
    let mut rng = packgraph::io::generate::SplitMix64::new(seed, stream);
    let n = graph.num_vertices() as u64;
    let mut sources = Vec::new();
    for _ in 0..count * 1000 {
        if sources.len() == count || n == 0 {
            break;
        }
        let v = rng.below(n) as packgraph::graph::VertexId;
        if graph.out_degree(v) > 0 {
            sources.push(v);
        }
    }
    sources
}

pub(crate) fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let out = f();
    (out, start.elapsed())
}
