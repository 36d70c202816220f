//! `packgraph stream`: analytics on consistent snapshots while updates keep flowing.
//!
//! One writer applies batches of R-MAT edge insertions (and deletions of earlier batches)
//! to a [`SharedGraph`] for `--duration` seconds, publishing a version after each (with
//! `--data DIR`, to a durable store that logs each batch before publishing it); reader
//! threads meanwhile take the latest snapshot and run BFS, PageRank or k-hop queries on it.
//! Then the writer stops and the same readers run the same queries on the idle graph, so the
//! two query latencies differ by the writer's interference only. The `--threads` are split:
//! `--query-threads` of them (default: all but one) run the readers' queries in one pool,
//! the rest run the writer's batches, so that both phases use the same query threads.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::{Args, ValueEnum};
use packgraph::algo;
use packgraph::graph::{
    AnyGraph, Applied, Graph, GraphRead, Packing, SharedGraph, Snapshot, Update, VersionStats,
    VertexId,
};
use packgraph::io::generate::{self, Initiator, SplitMix64};
use packgraph::store::Store;
use rayon::ThreadPool;
use serde::Serialize;

use crate::input::parse_count;
use crate::input::{self, ReadArgs};
use crate::UsageError;

/// Arguments of `packgraph stream`.
#[derive(Args, Debug)]
pub(crate) struct StreamArgs {
    /// Start from this graph file instead of a generated Kronecker graph (unweighted).
    #[arg(long, short, value_name = "FILE")]
    input: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    order: crate::reorder::OrderArgs,
    /// Scale of the generated Kronecker graph (2^scale vertices, 16 · 2^scale edges).
    #[arg(long, default_value_t = 18)]
    scale: u32,
    /// Edges per update batch.
    #[arg(long, default_value = "1e4", value_parser = parse_count)]
    batch_size: usize,
    /// Seconds of streaming (the isolated query phase afterwards adds a quarter of it,
    /// between 0.5 and 5 seconds).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Reader threads taking snapshots and running queries (0: the writer alone, for its
    /// throughput without interference).
    #[arg(long, default_value_t = 1)]
    readers: usize,
    /// Threads for the readers' queries, out of `--threads` (default: all but one, at
    /// least one); the writer's batches get the rest (at least one).
    #[arg(long, value_name = "N")]
    query_threads: Option<usize>,
    /// Queries the readers take turns at (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "bfs,pagerank,khop")]
    algorithms: Vec<Query>,
    /// Share of batches that delete the oldest batch still inserted instead of inserting a
    /// new one (0 to 1).
    #[arg(long, default_value_t = 0.3)]
    delete_fraction: f64,
    /// Random seed (graph, stream and query sources).
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Print JSON Lines (one measurement per line) instead of a table.
    #[arg(long)]
    json: bool,
    /// Stream durably into this data directory: created from the starting graph if it does
    /// not hold one yet, else continued (then --input and --scale do not apply, and
    /// --synthetic must be given).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Allow writing the stream's synthetic R-MAT updates into an existing data directory
    /// (--data), which keeps them: without it such a directory is refused, so that a
    /// graph of your own is never filled with generated edges by mistake.
    #[arg(long)]
    synthetic: bool,
    #[command(flatten)]
    sync: crate::durable::SyncArgs,
}

/// Where the writer's batches go: memory only, or a durable store.
enum Target {
    Memory(Box<SharedGraph>),
    Durable(Store),
}

impl Target {
    fn snapshot(&self) -> Snapshot {
        match self {
            Self::Memory(shared) => shared.snapshot(),
            Self::Durable(store) => store.snapshot(),
        }
    }

    fn commit(&self, update: &Update) -> packgraph::Result<Applied> {
        match self {
            Self::Memory(shared) => shared.commit(update),
            Self::Durable(store) => store.commit(update).map(|(_, applied)| applied),
        }
    }

    fn version_stats(&self) -> VersionStats {
        match self {
            Self::Memory(shared) => shared.version_stats(),
            Self::Durable(store) => store.version_stats(),
        }
    }
}

/// The writer's target and a description of the starting graph.
fn open_target(args: &StreamArgs) -> anyhow::Result<(Target, String)> {
    let Some(dir) = &args.data else {
        let (graph, source) = start_graph(args)?;
        graph.build_index();
        return Ok((Target::Memory(Box::new(SharedGraph::new(graph))), source));
    };
    let options = args.sync.options();
    if packgraph::store::is_store(dir) {
        if args.input.is_some() {
            return Err(UsageError(format!(
                "--data {}: the directory already holds a graph; leave out --input",
                dir.display()
            ))
            .into());
        }
        if !args.synthetic {
            return Err(UsageError(format!(
                "--data {}: the directory already holds a graph, and stream would write synthetic R-MAT edges into it for good; pass --synthetic to do that on purpose, or name a new directory (packgraph ingest applies your own updates)",
                dir.display()
            ))
            .into());
        }
        let store = Store::open(dir, options).map_err(|e| match e {
            e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
            e => input::BadInput(e).into(),
        })?;
        return Ok((
            Target::Durable(store),
            format!("the data directory {}", dir.display()),
        ));
    }
    let (graph, source) = start_graph(args)?;
    let store = Store::create(dir, options, graph).map_err(input::BadInput)?;
    Ok((
        Target::Durable(store),
        format!("{source}, durably in {}", dir.display()),
    ))
}

/// A query a reader runs on a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Query {
    /// Breadth-first search from a random vertex.
    Bfs,
    /// Ten PageRank iterations (damping 0.85).
    Pagerank,
    /// The vertices within two hops of a random vertex.
    Khop,
}

impl Query {
    fn run<G: GraphRead>(self, graph: &G, source: VertexId) -> anyhow::Result<()> {
        match self {
            Query::Bfs => drop(algo::bfs(graph, source)?),
            Query::Pagerank => drop(algo::pagerank(graph, 0.85, 10)),
            Query::Khop => drop(algo::khop(graph, source, 2)?),
        }
        Ok(())
    }
}

/// One measurement of `--json`.
#[derive(Debug, Serialize)]
struct Record {
    bench: &'static str,
    op: &'static str,
    param: u64,
    threads: usize,
    value: f64,
    unit: &'static str,
}

/// What the readers measured in one phase.
#[derive(Debug, Default)]
struct Queries {
    latencies: Vec<f64>,
    /// The part of each query's latency spent taking its snapshot (publishing the
    /// writer's pending commits and deriving the version's vertex index, if not done).
    snapshots: Vec<f64>,
    /// Distinct versions the readers queried.
    versions: Vec<u64>,
}

pub(crate) fn run(args: &StreamArgs, pool: &ThreadPool, threads: usize) -> anyhow::Result<()> {
    check_args(args)?;
    let (shared, source) = pool.install(|| open_target(args))?;
    let first = pool.install(|| shared.snapshot());
    if first.num_vertices() == 0 {
        return Err(UsageError(format!("{source} has no vertices")).into());
    }
    let n = first.num_vertices();
    let start_arcs = first.num_arcs();
    let first_version = first.version();
    drop(first);
    let query_threads = args
        .query_threads
        .unwrap_or(threads.saturating_sub(1))
        .max(1);
    let writer_threads = if args.readers == 0 {
        threads
    } else {
        threads.saturating_sub(query_threads).max(1)
    };
    let build = |n: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .context("starting the worker threads")
    };
    let (query_pool, writer_pool) = (build(query_threads)?, build(writer_threads)?);
    eprintln!(
        "streaming into {source}: {n} vertices, {start_arcs} arcs; batches of {} edges for {} s, {} reader(s); {} thread(s): {} for queries, {} for the writer",
        args.batch_size,
        args.duration,
        args.readers,
        threads,
        query_threads,
        writer_threads
    );
    let bar = input::spinner("streaming");
    let queries_done = AtomicU64::new(0);
    let duration = Duration::from_secs_f64(args.duration);
    let mut writer = Writer::new(n, args);
    let started = Instant::now();
    let concurrent = with_readers(args, &query_pool, &shared, &queries_done, || {
        let mut shown = Duration::ZERO;
        loop {
            let now = started.elapsed();
            if now >= duration {
                break;
            }
            writer.step(&shared, &writer_pool)?;
            // The message is formatted a few times a second, not per batch: with one-edge
            // batches its float formatting showed in the writer's profile.
            if now < shown + PROGRESS_EVERY {
                continue;
            }
            shown = now;
            let secs = now.as_secs_f64();
            bar.set_message(format!(
                "{secs:.1}/{:.0} s: {} batches, {:.3e} edges/s, {} queries",
                args.duration,
                writer.latencies.len(),
                writer.edges as f64 / writer.busy.max(1e-9),
                queries_done.load(Ordering::Relaxed)
            ));
        }
        Ok(())
    })?;
    let streamed = started.elapsed().as_secs_f64();
    let stats = shared.version_stats();
    let last = shared.snapshot();
    let bytes_per_arc = last.size_in_bytes() as f64 / last.num_arcs().max(1) as f64;
    let versions = last.version() - first_version;
    // The isolated phase: the writer idle, the same readers and queries.
    bar.set_message("queries on the idle graph");
    let isolated_secs = if args.readers == 0 {
        0.0
    } else {
        (args.duration / 4.0).clamp(0.5, 5.0)
    };
    let isolated = with_readers(args, &query_pool, &shared, &queries_done, || {
        std::thread::sleep(Duration::from_secs_f64(isolated_secs));
        Ok(())
    })?;
    bar.finish_and_clear();
    let summary = Summary {
        edges_per_s: writer.edges as f64 / streamed,
        update_p50: percentile(&writer.latencies, 0.5),
        update_p99: percentile(&writer.latencies, 0.99),
        batches: writer.latencies.len(),
        inserted: writer.inserted,
        deleted: writer.deleted,
        query_concurrent: percentile(&concurrent.latencies, 0.5),
        query_isolated: percentile(&isolated.latencies, 0.5),
        snapshot_concurrent: percentile(&concurrent.snapshots, 0.5),
        snapshot_isolated: percentile(&isolated.snapshots, 0.5),
        queries_concurrent: concurrent.latencies.len(),
        queries_isolated: isolated.latencies.len(),
        versions_queried: concurrent.versions.len(),
        versions,
        bytes_per_arc,
        arcs: last.num_arcs(),
        pages: stats.pages,
        shared: stats.shared,
        copied: stats.copied,
        copied_bytes: stats.copied_bytes,
        streamed,
    };
    summary.print(args, threads)
}

/// Runs `--readers` reader threads while `during` runs on this thread, then stops them and
/// returns what they measured.
fn with_readers(
    args: &StreamArgs,
    pool: &ThreadPool,
    shared: &Target,
    done: &AtomicU64,
    during: impl FnOnce() -> anyhow::Result<()>,
) -> anyhow::Result<Queries> {
    let stop = AtomicBool::new(false);
    let sink = Mutex::new(Queries::default());
    std::thread::scope(|s| -> anyhow::Result<()> {
        let readers: Vec<_> = (0..args.readers)
            .map(|r| {
                let (stop, sink) = (&stop, &sink);
                s.spawn(move || reader(r, args, pool, shared, stop, done, sink))
            })
            .collect();
        let result = during();
        stop.store(true, Ordering::Relaxed);
        for handle in readers {
            handle
                .join()
                .map_err(|_| anyhow::anyhow!("a reader thread panicked"))??;
        }
        result
    })?;
    Ok(sink.into_inner().unwrap_or_else(|e| e.into_inner()))
}

fn check_args(args: &StreamArgs) -> anyhow::Result<()> {
    let bad = |what: String| Err(UsageError(what).into());
    if !(args.duration > 0.0 && args.duration <= 86_400.0) {
        return bad(format!(
            "--duration {}: must be more than 0 and at most 86400 seconds",
            args.duration
        ));
    }
    if args.batch_size == 0 {
        return bad("--batch-size must be at least 1".into());
    }
    if args.readers > 256 {
        return bad(format!("--readers {}: must be in 0..=256", args.readers));
    }
    if args.query_threads == Some(0) {
        return bad("--query-threads must be at least 1".into());
    }
    if args.algorithms.is_empty() {
        return bad("--algorithms: name at least one of bfs, pagerank, khop".into());
    }
    if !(0.0..=1.0).contains(&args.delete_fraction) {
        return bad(format!(
            "--delete-fraction {}: must be in 0..=1",
            args.delete_fraction
        ));
    }
    if args.input.is_none() && !(1..=30).contains(&args.scale) {
        return bad(format!("--scale {}: must be in 1..=30", args.scale));
    }
    Ok(())
}

/// The starting graph and a description of where it came from.
fn start_graph(args: &StreamArgs) -> anyhow::Result<(Graph, String)> {
    let Some(path) = &args.input else {
        let edges = generate::kronecker(args.scale, 16, args.seed);
        let mut graph = Graph::from_edges(1 << args.scale, &edges, false)?;
        if let Some(order) = args.order.order()? {
            graph = graph.relabel(&order.permutation(&graph))?;
        }
        return Ok((graph, format!("a Kronecker graph of scale {}", args.scale)));
    };
    let (data, _) =
        input::read(path, &args.read, Packing::Updates).context("reading the input graph")?;
    let data = crate::reorder::apply_if(data, &args.order)?;
    match data.graph {
        AnyGraph::Unweighted(graph) => Ok((graph, path.display().to_string())),
        AnyGraph::Weighted(_) => Err(UsageError(format!(
            "{}: stream works on unweighted graphs; this file has weights (convert it without them, e.g. keep two columns)",
            path.display()
        ))
        .into()),
    }
}

/// How often the writer's progress message is refreshed.
const PROGRESS_EVERY: Duration = Duration::from_millis(100);

/// Batches below this many edges are applied on the writer's own thread.
const SMALL_BATCH: usize = 50;

/// Edges generated at once for small batches: the generator runs on the thread pool, and
/// one call per batch of one edge would cost a hand-off to it (and a wait behind the
/// readers' queries) per edge.
const GENERATE_AHEAD: usize = 1 << 14;

/// The single writer: R-MAT insert batches, and deletions of the oldest inserted batch.
struct Writer {
    num_vertices: usize,
    scale: u32,
    batch_size: usize,
    delete_fraction: f64,
    rng: SplitMix64,
    seed: u64,
    permutation: Vec<VertexId>,
    /// Edges generated ahead for small batches, taken from the end.
    ahead: Vec<(VertexId, VertexId)>,
    inserted_batches: std::collections::VecDeque<Vec<(VertexId, VertexId)>>,
    latencies: Vec<f64>,
    /// Seconds spent applying and publishing batches.
    busy: f64,
    edges: u64,
    inserted: u64,
    deleted: u64,
}

impl Writer {
    fn new(num_vertices: usize, args: &StreamArgs) -> Self {
        let scale = (num_vertices.max(2) as u64).next_power_of_two().ilog2();
        Self {
            num_vertices,
            scale,
            batch_size: args.batch_size,
            delete_fraction: args.delete_fraction,
            rng: SplitMix64::new(args.seed, 0x57_2ea4),
            seed: args.seed,
            permutation: generate::permutation(1 << scale, args.seed ^ 0xba7c),
            ahead: Vec::new(),
            inserted_batches: std::collections::VecDeque::new(),
            latencies: Vec::new(),
            busy: 0.0,
            edges: 0,
            inserted: 0,
            deleted: 0,
        }
    }

    /// `count` new R-MAT edges over the graph's vertices.
    fn generate(&mut self, count: usize) -> Vec<(VertexId, VertexId)> {
        let seed = self.seed ^ self.rng.next_u64();
        let n = self.num_vertices as VertexId;
        let mut edges = generate::rmat(self.scale, count, Initiator::GRAPH500, seed);
        for (u, v) in &mut edges {
            (*u, *v) = (
                self.permutation[*u as usize] % n,
                self.permutation[*v as usize] % n,
            );
        }
        edges
    }

    /// Makes the next batch, applies it and publishes the version; records the latency.
    fn step(&mut self, shared: &Target, pool: &ThreadPool) -> anyhow::Result<()> {
        let delete =
            !self.inserted_batches.is_empty() && self.rng.next_f64() < self.delete_fraction;
        let batch = if delete {
            self.inserted_batches.pop_front().unwrap_or_default()
        } else if self.batch_size < SMALL_BATCH {
            if self.ahead.len() < self.batch_size {
                self.ahead = self.generate(GENERATE_AHEAD);
            }
            let rest = self.ahead.len() - self.batch_size;
            self.ahead.split_off(rest)
        } else {
            self.generate(self.batch_size)
        };
        let mut update = Update::new();
        if delete {
            update.delete_edges(&batch);
        } else {
            update.insert_edges(&batch);
        }
        let apply = || shared.commit(&update);
        let start = Instant::now();
        // Small batches are serial point updates: run them on this thread rather than
        // queue behind the readers' parallel work in the pool.
        let applied = if batch.len() < SMALL_BATCH {
            apply()
        } else {
            pool.install(apply)
        }?;
        let took = start.elapsed().as_secs_f64();
        self.latencies.push(took);
        self.busy += took;
        self.edges += batch.len() as u64;
        if delete {
            self.deleted += applied.edges_deleted as u64;
        } else {
            self.inserted += applied.edges_inserted as u64;
            self.inserted_batches.push_back(batch);
        }
        Ok(())
    }
}

/// A reader: snapshot, query, repeat until `stop`.
fn reader(
    id: usize,
    args: &StreamArgs,
    pool: &ThreadPool,
    shared: &Target,
    stop: &AtomicBool,
    done: &AtomicU64,
    sink: &Mutex<Queries>,
) -> anyhow::Result<()> {
    let mut rng = SplitMix64::new(args.seed, 0x4ead + id as u64);
    let mut mine = Queries::default();
    let mut turn = id;
    // At least one query of each kind, then until told to stop.
    while !stop.load(Ordering::Relaxed) || turn < id + args.algorithms.len() {
        let query = args.algorithms[turn % args.algorithms.len()];
        turn += 1;
        let start = Instant::now();
        let snapshot = shared.snapshot();
        mine.snapshots.push(start.elapsed().as_secs_f64());
        let source = rng.below(snapshot.num_vertices() as u64) as VertexId;
        pool.install(|| query.run(&snapshot, source))?;
        mine.latencies.push(start.elapsed().as_secs_f64());
        if mine.versions.last() != Some(&snapshot.version()) {
            mine.versions.push(snapshot.version());
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    let mut all = sink.lock().unwrap_or_else(|e| e.into_inner());
    all.latencies.extend(mine.latencies);
    all.snapshots.extend(mine.snapshots);
    all.versions.extend(mine.versions);
    all.versions.sort_unstable();
    all.versions.dedup();
    Ok(())
}

/// The `q` quantile (nearest rank) of `values`; 0 for none.
fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// The end-of-run figures.
struct Summary {
    edges_per_s: f64,
    update_p50: f64,
    update_p99: f64,
    batches: usize,
    inserted: u64,
    deleted: u64,
    query_concurrent: f64,
    query_isolated: f64,
    /// Medians of the snapshot part of the queries' latencies.
    snapshot_concurrent: f64,
    snapshot_isolated: f64,
    queries_concurrent: usize,
    queries_isolated: usize,
    versions_queried: usize,
    versions: u64,
    bytes_per_arc: f64,
    arcs: usize,
    pages: usize,
    shared: usize,
    copied: usize,
    copied_bytes: usize,
    streamed: f64,
}

impl Summary {
    /// Bytes of pages the writer copied because a snapshot shared them, per batch.
    fn copied_per_batch(&self) -> f64 {
        self.copied_bytes as f64 / self.batches.max(1) as f64
    }

    fn print(&self, args: &StreamArgs, threads: usize) -> anyhow::Result<()> {
        let mut out = std::io::stdout().lock();
        if args.json {
            let param = args.batch_size as u64;
            for (op, value, unit) in [
                ("update", self.edges_per_s, "edges/s"),
                ("update_latency_p50", self.update_p50, "s"),
                ("update_latency_p99", self.update_p99, "s"),
                ("query_concurrent", self.query_concurrent, "s"),
                ("query_isolated", self.query_isolated, "s"),
                ("snapshot_concurrent", self.snapshot_concurrent, "s"),
                ("snapshot_isolated", self.snapshot_isolated, "s"),
                ("versions", self.versions as f64, "versions"),
                ("size", self.bytes_per_arc, "bytes/edge"),
                ("bytes_copied", self.copied_per_batch(), "bytes/batch"),
            ] {
                let record = Record {
                    bench: "stream",
                    op,
                    param,
                    threads,
                    value,
                    unit,
                };
                writeln!(out, "{}", serde_json::to_string(&record)?)?;
            }
            return Ok(());
        }
        let ratio = if self.query_isolated > 0.0 {
            format!("{:.2}x", self.query_concurrent / self.query_isolated)
        } else {
            "-".into()
        };
        let rows = [
            (
                "updates",
                format!(
                    "{:.3e} edges/s over {:.1} s ({} batches: +{} edges, -{} edges)",
                    self.edges_per_s, self.streamed, self.batches, self.inserted, self.deleted
                ),
            ),
            (
                "batch latency",
                format!(
                    "median {} ms, p99 {} ms",
                    ms(self.update_p50),
                    ms(self.update_p99)
                ),
            ),
            (
                "query latency",
                format!(
                    "median {} ms while updating ({} queries), {} ms idle ({} queries): {ratio}",
                    ms(self.query_concurrent),
                    self.queries_concurrent,
                    ms(self.query_isolated),
                    self.queries_isolated
                ),
            ),
            (
                "snapshot",
                format!(
                    "median {} ms of each query while updating, {} ms idle",
                    ms(self.snapshot_concurrent),
                    ms(self.snapshot_isolated)
                ),
            ),
            (
                "versions",
                format!(
                    "{} created, {} of them queried",
                    self.versions, self.versions_queried
                ),
            ),
            (
                "memory",
                format!(
                    "{:.2} bytes/edge ({} arcs); pages: {} in the latest version, {} shared with snapshots",
                    self.bytes_per_arc, self.arcs, self.pages, self.shared
                ),
            ),
            (
                "copy on write",
                format!(
                    "{} pages, {:.1} MB in all, {:.1} KB per batch",
                    self.copied,
                    self.copied_bytes as f64 / 1e6,
                    self.copied_per_batch() / 1e3
                ),
            ),
        ];
        for (name, value) in rows {
            writeln!(out, "{name:<14} {value}")?;
        }
        Ok(())
    }
}

fn ms(seconds: f64) -> String {
    format!("{:.2}", seconds * 1e3)
}
