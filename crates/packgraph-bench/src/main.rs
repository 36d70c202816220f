//! `packgraph-bench`: whole-workload benchmarks with their baselines in the same run.
//!
//! `packgraph-bench [--threads N] NAME [OPTIONS]`, also reached as `packgraph bench NAME`.
//! Every measurement is a [`Record`](report::Record), printed as a table row or, with
//! `--json`, as one JSON object per line. The peer baselines (`imbl`, std's collections)
//! and the counting global allocator that sizes them live here, not in the `packgraph`
//! tool.
#![forbid(unsafe_code)]

mod args;
mod gap;
mod graph;
mod io;
mod layout;
mod part;
mod pma;
mod report;
mod serve;
mod snapshot;
mod store;
mod workload;

use std::num::NonZeroUsize;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand};

use graph::GraphArgs;
use io::IoArgs;
use layout::LayoutArgs;
use part::PartArgs;
use pma::PmaArgs;
use serve::ServeArgs;
use snapshot::SnapshotArgs;
use store::StoreArgs;

pub(crate) use args::{parse_count_list, CountList};
pub(crate) use packgraph::io::parse_count;
pub(crate) use report::{Record, Reporter};
pub(crate) use workload::{pick_sources, timed};

/// Counts allocated bytes so that benchmarks can report the memory of baselines (std
/// collections) the same way for every structure; over mimalloc, the `packgraph` binary's
/// allocator, with the default feature `mimalloc`.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: stats_alloc::StatsAlloc<packgraph::allocator::MiMalloc> =
    stats_alloc::StatsAlloc::new(packgraph::allocator::MiMalloc);
#[cfg(not(feature = "mimalloc"))]
#[global_allocator]
static GLOBAL: stats_alloc::StatsAlloc<std::alloc::System> =
    stats_alloc::StatsAlloc::new(std::alloc::System);

/// packgraph's benchmark suites, each against baselines measured in the same run.
///
/// Rows go to stdout (a table, or JSON Lines with `--json`), progress to stderr on a
/// terminal. `--quick` runs any suite at a small size.
#[derive(Parser, Debug)]
#[command(name = "packgraph-bench", version, about, long_about)]
struct Cli {
    /// Worker threads (default: RAYON_NUM_THREADS, else one per core).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<NonZeroUsize>,
    #[command(subcommand)]
    suite: Suite,
}

#[derive(Subcommand, Debug)]
enum Suite {
    /// Packed memory array microbenchmarks (CPMA paper, section 5), against the
    /// uncompressed PMA, std's BTreeSet and a sorted Vec rebuilt by merging each batch.
    ///
    /// `--quick` caps: 1e6 keys, batches up to 1e5 (at most 1e6 keys each), ranges up to 1e4, sizes at 1e6 keys, a 2 s budget.
    Pma(PmaArgs),
    /// Graph algorithms and edge updates on the dynamic graph against a static CSR
    /// (CPMA paper, section 6).
    ///
    /// `--quick` caps: scale 12, batches up to 1e4 (at most 1e5 edges each), 3 sources.
    Graph(GraphArgs),
    /// Getting graphs in: Kronecker generation, text edge-list load against the raw read,
    /// snapshot reload, and `packgraph run bfs` end to end.
    ///
    /// `--quick` caps: scale 12.
    Io(IoArgs),
    /// The persistent adaptive radix tree (PART paper, section 3.6) against std's HashMap
    /// and BTreeMap (cloned per snapshot) and imbl's persistent OrdMap, on one thread.
    ///
    /// `--quick` caps: 1e6 keys, 2e5 lookups, 2e4 inserts, a 2 s budget.
    Part(PartArgs),
    /// Vertex orders (hierarchical blocking, BFS, RCM, degree, random, the generator's) on
    /// Watts–Strogatz, Barabási–Albert, mesh, 4-ary tree and Kronecker graphs: BFS, SSSP,
    /// PageRank, bytes per edge and reorder time, each against the random order.
    ///
    /// `--quick` caps: 20,000 vertices, Kronecker scale 12, one source, two PageRank iterations.
    Layout(LayoutArgs),
    /// What versions cost the writer: batch inserts with no snapshot, one held, or a fresh
    /// one before every batch; taking a snapshot and the first update after it.
    ///
    /// `--quick` caps: 1e6 keys, batches up to 1e4 (at most 1e6 keys each), graphs of 1e6 arcs.
    Snapshot(SnapshotArgs),
    /// What durability costs on this disk: fsync latency, durable ingest (fsync per batch,
    /// group commit) against in-memory commits, incremental checkpoint sizes under uniform
    /// and Zipf changes, checkpoint load and log replay rates.
    ///
    /// `--quick` caps: scale 14, 2e5 edges, 50 fsyncs, 2e4 replayed records.
    Store(StoreArgs),
    /// `packgraph serve` under load on loopback: update throughput and acknowledgement
    /// latency of concurrent writers, BFS latency while they write and idle, against the
    /// loop of `packgraph ingest` on the same directory.
    ///
    /// `--quick` caps: scale 12, 1 s phases.
    Serve(ServeArgs),
}

impl Suite {
    fn run(&self, threads: usize) -> anyhow::Result<()> {
        match self {
            Suite::Pma(args) => pma::run(args, threads),
            Suite::Graph(args) => graph::run(args, threads),
            Suite::Io(args) => io::run(args, threads),
            Suite::Snapshot(args) => snapshot::run(args, threads),
            Suite::Store(args) => store::run(args, threads),
            Suite::Serve(args) => serve::run(args, threads),
            Suite::Part(args) => part::run(args),
            Suite::Layout(args) => layout::run(args, threads),
        }
    }
}

fn main() -> ExitCode {
    if let Err(error) = packgraph::cpu::check() {
        eprintln!("packgraph-bench: error: {error}");
        return ExitCode::FAILURE;
    }
    #[cfg(feature = "mimalloc")]
    packgraph::allocator::tune();
    let cli = Cli::parse();
    let threads = packgraph::io::thread_count(cli.threads);
    let result = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the worker threads")
        .and_then(|pool| pool.install(|| cli.suite.run(threads)));
    if let Err(error) = result {
        eprintln!("packgraph-bench: error: {error:#}");
        return ExitCode::from(args::exit_code(&error));
    }
    ExitCode::SUCCESS
}
