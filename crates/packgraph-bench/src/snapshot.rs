//! `packgraph-bench snapshot`: what versions cost the writer.
//!
//! 1. Batch inserts into a CPMA of `--keys` random keys at each batch size, with (a) no
//!    snapshot (`none`), (b) one snapshot taken at the start and held throughout (`held`),
//!    (c) a fresh snapshot taken before every batch, the previous one dropped (`fresh`). The
//!    same keys in the same order for all three; each starts from a freshly built set.
//! 2. Taking a snapshot of graphs of `--graph-arcs` arcs, and the first one-edge update
//!    after it (which copies the page table) against the same update with no snapshot;
//!    then a [`SharedGraph::commit`] of one edge (applied and published) with no reader
//!    about, the median of many (`shared_commit_one_edge`: no flat index is derived), and
//!    the mean of as many with a reader about (`shared_commit_one_edge_read`: a snapshot
//!    taken, untimed, every [`READ_EVERY`] commits, so that the writer derives the flat
//!    index of every 16th version; the mean spreads that derivation over the commits, as a
//!    stream of one-edge commits under readers pays it).
//!
//! The Aspen experiment (single edge updates while BFS queries run) is
//! `packgraph stream --scale 20 --batch-size 1 --algorithms bfs --delete-fraction 0`.

use std::time::{Duration, Instant};

use clap::Args;
use packgraph::graph::{Graph, GraphRead, SharedGraph, Update};
use packgraph::io::generate;
use packgraph::pma::{CopyVolume, Cpma, PmaConfig};

use crate::args::{usage_error, CommonArgs};
use crate::pma::{fresh_keys, random_keys, run_batches};
use crate::workload::median;
use crate::{parse_count, parse_count_list, CountList, Record, Reporter};

/// Arguments of `packgraph-bench snapshot`.
#[derive(Args, Debug, Clone)]
pub(crate) struct SnapshotArgs {
    /// Keys in the set before the batch inserts.
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    keys: usize,
    /// Batch sizes to measure (comma-separated).
    #[arg(long, default_value = "1e3,1e4,1e5,1e6", value_parser = parse_count_list)]
    batch_sizes: CountList,
    /// Most keys inserted per batch size and mode (the run inserts min(this, 300 × batch)).
    #[arg(long, default_value = "3e6", value_parser = parse_count)]
    max_batch_keys: usize,
    /// Arcs of the graphs whose snapshot cost is measured (comma-separated; empty for none).
    #[arg(long, default_value = "1e6,3e7", value_parser = parse_count_list)]
    graph_arcs: CountList,
    /// One-edge updates timed per row of `update_alone`, `update_after_snapshot`,
    /// `shared_commit_one_edge` and `shared_commit_one_edge_read` (more, e.g., to profile
    /// one of them alone).
    #[arg(long, default_value = "2000", value_parser = parse_count)]
    commits: usize,
    /// Which of the insert modes to run (comma-separated: none, held, fresh), e.g. one
    /// alone under a profiler.
    #[arg(long, value_delimiter = ',', default_value = "none,held,fresh")]
    modes: Vec<Mode>,
    /// Bytes of leaves per stored page (the unit of snapshot files and checkpoints);
    /// default from the library.
    #[arg(long)]
    page_bytes: Option<usize>,
    /// Bytes of leaves per page in memory (the unit shared between versions and copied on
    /// write, at least one leaf); default from the library.
    #[arg(long)]
    share_bytes: Option<usize>,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

/// How the batch inserts see other versions.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// No other version.
    None,
    /// One snapshot taken at the start and held throughout.
    Held,
    /// A fresh snapshot taken before every batch, the previous one dropped.
    Fresh,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Held => "held",
            Self::Fresh => "fresh",
        }
    }
}

pub(crate) fn run(args: &SnapshotArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.keys = args.keys.min(1_000_000);
        args.batch_sizes.retain(|&b| b <= 10_000);
        args.max_batch_keys = args.max_batch_keys.min(1_000_000);
        args.graph_arcs.cap(1_000_000);
    }
    if args.keys == 0
        || args.commits == 0
        || args.batch_sizes.contains(&0)
        || args.graph_arcs.contains(&0)
    {
        return Err(usage_error(
            "--keys, --commits, --batch-sizes and --graph-arcs must be positive".into(),
        ));
    }
    let reporter = Reporter::new(
        args.common.json,
        (args.batch_sizes.len() * args.modes.len() + args.graph_arcs.len()) as u64,
    );
    let mut config = PmaConfig::default();
    if let Some(bytes) = args.page_bytes {
        config.page_bytes = bytes;
    }
    if let Some(bytes) = args.share_bytes {
        config.share_bytes = bytes;
    }
    config.validate().map_err(|e| usage_error(e.to_string()))?;
    let mut start = random_keys(args.keys, args.common.seed);
    start.sort_unstable();
    start.dedup();
    for &batch in args.batch_sizes.iter() {
        let total = args.max_batch_keys.min(300 * batch).max(batch);
        let keys = fresh_keys(total, args.common.seed ^ batch as u64, &start);
        for mode in args.modes.iter().map(|m| m.name()) {
            reporter.step(format!("{mode} snapshot, batches of {batch}"));
            let mut set = Cpma::from_sorted_with_config(&start, config.clone())?;
            let mut held = (mode == "held").then(|| set.clone());
            let (done, time) = run_batches(&keys, batch, Duration::MAX, |b| {
                if mode == "fresh" {
                    held = Some(set.clone());
                }
                set.insert_batch(b)
            });
            let copied = set.page_copies();
            drop(held);
            reporter.emit(Record {
                bench: "snapshot",
                structure: mode,
                op: "insert_batch",
                param: batch as u64,
                threads,
                value: done as f64 / time.as_secs_f64(),
                unit: "ops/s",
                keys: Some(done as u64),
                dataset: None,
            })?;
            reporter.emit(Record {
                bench: "snapshot",
                structure: mode,
                op: "pages_copied",
                param: batch as u64,
                threads,
                value: copied as f64 / (done / batch).max(1) as f64,
                unit: "pages/batch",
                keys: Some(set.num_pages() as u64),
                dataset: None,
            })?;
            if mode == "fresh" {
                copy_volume_rows(&reporter, &start, &config, &keys, batch, threads)?;
            }
            reporter.advance();
        }
    }
    for &arcs in args.graph_arcs.iter() {
        reporter.step(format!("snapshot of {arcs} arcs"));
        let edges = arcs / 2;
        let n = (edges / 8).max(2);
        let mut graph =
            Graph::from_edges(n, &generate::erdos_renyi(n, edges, args.common.seed), false)?;
        let arcs = graph.num_arcs();
        const TAKES: u32 = 10_000;
        let t = Instant::now();
        for _ in 0..TAKES {
            drop(std::hint::black_box(graph.snapshot()));
        }
        let take = t.elapsed().as_secs_f64() / f64::from(TAKES);
        let updates = args.commits;
        let pairs = generate::erdos_renyi(n, 2 * updates, args.common.seed ^ 7);
        let mut alone = Vec::with_capacity(updates);
        let mut after = Vec::with_capacity(updates);
        for i in 0..updates.min(pairs.len() / 2) {
            let t = Instant::now();
            graph.insert_edges(&[pairs[2 * i]])?;
            alone.push(t.elapsed().as_secs_f64());
            let snapshot = graph.snapshot();
            let t = Instant::now();
            graph.insert_edges(&[pairs[2 * i + 1]])?;
            after.push(t.elapsed().as_secs_f64());
            drop(snapshot);
        }
        let shared = SharedGraph::new(graph);
        // One-edge commits of fresh random edges, each timed; with `read_every`, a reader's
        // snapshot (untimed) before every that many commits.
        let one_edge_commits = |seed: u64, read_every: Option<usize>| -> anyhow::Result<Vec<f64>> {
            let mut times = Vec::with_capacity(args.commits);
            for (i, edge) in generate::erdos_renyi(n, args.commits, seed)
                .into_iter()
                .enumerate()
            {
                if read_every.is_some_and(|every| i % every == 0) {
                    drop(std::hint::black_box(shared.snapshot()));
                }
                let mut update = Update::new();
                update.insert_edges(&[edge]);
                let t = Instant::now();
                shared.commit(&update)?;
                times.push(t.elapsed().as_secs_f64());
            }
            Ok(times)
        };
        // No reader about yet: these derive no index.
        let commits = one_edge_commits(args.common.seed ^ 11, None)?;
        let read_commits = one_edge_commits(args.common.seed ^ 13, Some(READ_EVERY))?;
        let read_commit = read_commits.iter().sum::<f64>() / read_commits.len() as f64;
        for (op, value) in [
            ("snapshot", take),
            ("update_alone", median(alone)),
            ("update_after_snapshot", median(after)),
            ("shared_commit_one_edge", median(commits)),
            ("shared_commit_one_edge_read", read_commit),
        ] {
            reporter.emit(Record {
                bench: "snapshot",
                structure: "graph",
                op,
                param: arcs as u64,
                threads,
                value,
                unit: "s",
                keys: None,
                dataset: None,
            })?;
        }
        reporter.advance();
    }
    reporter.finish();
    Ok(())
}

/// One-edge commits between the snapshots of the `shared_commit_one_edge_read` row: a
/// reader about, in a time far below the window after which the writer stops indexing.
const READ_EVERY: usize = 100;

/// Batches replayed, untimed, to measure what a batch under a fresh snapshot copies.
const VOLUME_BATCHES: usize = 20;

/// Replays the first batches of `keys` with a snapshot taken before each, outside any timing,
/// and reports the bytes the batch left unshared (pages and table) against the bytes of the
/// leaves it changed.
fn copy_volume_rows(
    reporter: &Reporter,
    start: &[u64],
    config: &PmaConfig,
    keys: &[u64],
    batch: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let mut set = Cpma::from_sorted_with_config(start, config.clone())?;
    let mut total = CopyVolume::default();
    let mut batches = 0;
    for chunk in keys.chunks(batch).take(VOLUME_BATCHES) {
        let held = set.clone();
        set.insert_batch(chunk);
        // A batch that grew or rebuilt the array copied everything; it is not comparable.
        if let Some(v) = set.copy_volume(&held) {
            total.page_bytes += v.page_bytes;
            total.table_bytes += v.table_bytes;
            total.leaves_changed += v.leaves_changed;
            total.leaf_bytes_changed += v.leaf_bytes_changed;
            batches += 1;
        }
    }
    let per_batch = |bytes: usize| bytes as f64 / batches.max(1) as f64;
    for (op, value, unit) in [
        (
            "bytes_copied",
            per_batch(total.page_bytes + total.table_bytes),
            "bytes/batch",
        ),
        ("bytes_table", per_batch(total.table_bytes), "bytes/batch"),
        (
            "bytes_changed",
            per_batch(total.leaf_bytes_changed),
            "bytes/batch",
        ),
        ("copy_ratio", total.ratio(), "ratio"),
    ] {
        reporter.emit(Record {
            bench: "snapshot",
            structure: "fresh",
            op,
            param: batch as u64,
            threads,
            value,
            unit,
            keys: Some(batches as u64),
            dataset: None,
        })?;
    }
    Ok(())
}
