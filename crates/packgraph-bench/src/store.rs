//! `packgraph-bench store`: what durability costs, on this machine's disk.
//!
//! All in one run, in a temporary directory under `--dir` (default: the system's temporary
//! directory; it must be on the disk being measured, not a RAM file system), with the
//! default file system access ([`packgraph::store::OsVfs`]):
//!
//! 1. **fsync** (`file`): `--fsyncs` appends of 8 bytes to a plain file, each followed by
//!    `sync_data` (what the log does per sync): median and 99th-percentile latency, and
//!    the sustained rate.
//! 2. **Ingest** (`ingest`): the Kronecker graph of the graph bench (symmetrized), then
//!    `--insert-edges` R-MAT edges (a = 0.5, b = c = 0.1, none already present) in batches;
//!    edges per second, an undirected edge counting two (as in the graph bench). In memory
//!    (`memory`): [`SharedGraph::commit`], the path the store wraps. Durable, each from a
//!    fresh store created from the same graph: `sync:batch` (`Store::commit`, an fsync
//!    before each acknowledgement) at `--large-batch` and `--small-batch`; `group:10ms`
//!    (`Store::append` of every batch, then `Store::wait_durable` of the last; the time to
//!    that last acknowledgement) at `--small-batch`. `ingest_ratio` is durable over in
//!    memory at the same batch size. No background checkpoint runs during ingest.
//! 3. **Checkpoints** (`checkpoint`): the full size (`full_bytes`) is the bytes of the packs
//!    and manifest `Store::create` wrote for the graph. Then `--change` of the edges changed
//!    uniformly (half deleted at random, as many new random ones inserted; `uniform`) and
//!    `Store::checkpoint` (`ckpt_bytes` written, `ckpt_ratio` of the full size, `ckpt_time`),
//!    then `Store::checkpoint_full` (`full_written`, `full_reused`, `full_time`), which makes
//!    the changed graph the new base. The same again with the changed edges' sources drawn
//!    from Zipf(1.0) over vertex ids (rank 1 = vertex 0; `zipf`): deletes take a random
//!    remaining edge of the drawn source (a source with none left is drawn again), inserts
//!    a uniform random target.
//! 4. **Property checkpoints** (`properties`): the graph with an integer property `score`
//!    on every vertex in a fresh store (`full_bytes`, as above), then `--change` of the
//!    vertices (distinct, uniform) given a new value and `Store::checkpoint` (`ckpt_bytes`,
//!    `ckpt_ratio` of the full size, `ckpt_time`): the changed values ride in the delta.
//! 5. **Recovery** (`recovery`): after the last full checkpoint, `--small-batch` batches
//!    logged past it, the store dropped and opened again: checkpoint read rate
//!    (`ckpt_read`, checkpoint bytes over checkpoint load seconds, both as
//!    `Store::recovery` reports them) and the open's wall time, each the median of
//!    `--reopens` opens. Log replay (`replay`):
//!    `--replay-records` one-edge batches appended with `SyncPolicy::None` to a store of
//!    the same graph, no checkpoint after them, then opened again: records replayed per
//!    second of replay (`replay`), against the same records applied to a copy of the graph
//!    in memory one by one (`apply_memory`: no log, no decoding; what replay without
//!    merging could reach) and merged into batches of 2^20 edges (`--replay-batch`) as replay merges them
//!    (`apply_batch`: the floor for replay), and the append rate that wrote them; the
//!    replay rows are the median of `--reopens` opens, each replaying the whole log.
//!
//! `--parts` runs only some of these (the graph is generated whenever a part needs it). The files were just written, so reads come from the page
//!    cache.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use packgraph::graph::{Graph, GraphRead, PropertyValue, SharedGraph, Update, VertexId};
use packgraph::io::generate::{kronecker, SplitMix64};
use packgraph::store::{Store, StoreOptions, SyncPolicy};

use crate::args::{usage_error, CommonArgs};
use crate::workload::fresh_edges;
use crate::{parse_count, timed, Record, Reporter};

/// Options of `packgraph-bench store`.
#[derive(Args, Debug, Clone)]
pub(crate) struct StoreArgs {
    /// log2 of the vertex count of the Kronecker graph.
    #[arg(long, default_value_t = 18)]
    scale: u32,
    /// Generated edges per vertex (before symmetrizing and removing duplicates).
    #[arg(long, default_value_t = 16)]
    edge_factor: usize,
    /// Edges streamed into the graph in each ingest run.
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    insert_edges: usize,
    /// The large ingest batch (in memory and `sync:batch`).
    #[arg(long, default_value = "1e5", value_parser = parse_count)]
    large_batch: usize,
    /// The small ingest batch (in memory, `group:10ms` and `sync:batch`); also the size of
    /// the batches logged before the recovery.
    #[arg(long, default_value = "1e3", value_parser = parse_count)]
    small_batch: usize,
    /// fsyncs timed on a plain file.
    #[arg(long, default_value_t = 200)]
    fsyncs: usize,
    /// Fraction of the edges changed before each incremental checkpoint.
    #[arg(long, default_value_t = 0.01)]
    change: f64,
    /// One-edge log records replayed by the replay row.
    #[arg(long, default_value = "2e5", value_parser = parse_count)]
    replay_records: usize,
    /// Edges per batch of the `apply_batch` row (default: the edge operations replay
    /// merges into one batch).
    #[arg(long, default_value_t = REPLAY_BATCH, value_parser = parse_count)]
    replay_batch: usize,
    /// Times the store is opened again for the recovery and replay rows, which report the
    /// median open (a single open of a small checkpoint takes milliseconds: noise).
    #[arg(long, default_value_t = 1)]
    reopens: usize,
    /// Where the temporary stores go (default: the system's temporary directory); it must
    /// be on the disk to measure.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Parts to run (comma-separated): fsync, ingest, checkpoints (with the recovery
    /// rows), properties, replay.
    #[arg(long, value_delimiter = ',', default_value = PARTS)]
    parts: Vec<String>,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

/// Every part of the run, all run by default.
const PARTS: &str = "fsync,ingest,checkpoints,properties,replay";

/// The edge operations replay merges into one batch (`store::replay`'s limit): the
/// `apply_batch` row applies the replayed records in batches of this many edges unless
/// `--replay-batch` says otherwise.
const REPLAY_BATCH: usize = 1 << 20;

/// The group-commit interval measured.
const GROUP: Duration = Duration::from_millis(10);

/// Where rows go: the reporter in a run, a list in the tests.
type Emit<'a> = &'a mut dyn FnMut(Record) -> anyhow::Result<()>;

pub(crate) fn run(args: &StoreArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.scale = args.scale.min(14);
        args.insert_edges = args.insert_edges.min(200_000);
        args.fsyncs = args.fsyncs.min(50);
        args.replay_records = args.replay_records.min(20_000);
    }
    let reporter = Reporter::new(args.common.json, 4);
    eprintln!(
        "bench store: {threads} threads, scale {} ({} vertices), edge factor {}, seed {}",
        args.scale,
        1u64 << args.scale.min(63),
        args.edge_factor,
        args.common.seed
    );
    let mut emit = |record: Record| reporter.emit(record);
    let step = |message: &str| {
        reporter.advance();
        reporter.step(message.to_string());
    };
    measure(&args, threads, &mut emit, &step)?;
    reporter.advance();
    reporter.finish();
    Ok(())
}

fn check(args: &StoreArgs) -> anyhow::Result<()> {
    if !(2..=30).contains(&args.scale)
        || args.edge_factor == 0
        || args.insert_edges == 0
        || args.large_batch == 0
        || args.small_batch == 0
        || args.fsyncs == 0
        || args.replay_records == 0
        || args.replay_batch == 0
        || args.reopens == 0
        || !(args.change > 0.0 && args.change <= 1.0)
    {
        return Err(usage_error(
            "--scale must be in 2..=30, --change in (0, 1], the counts positive".into(),
        ));
    }
    let known: Vec<&str> = PARTS.split(',').collect();
    if let Some(part) = args.parts.iter().find(|p| !known.contains(&p.as_str())) {
        return Err(usage_error(format!(
            "--parts: unknown part {part:?} (known: {PARTS})"
        )));
    }
    Ok(())
}

/// Runs every measurement, handing each row to `emit`; `step` names the next part.
fn measure(
    args: &StoreArgs,
    threads: usize,
    emit: Emit<'_>,
    step: &dyn Fn(&str),
) -> anyhow::Result<()> {
    check(args)?;
    let parent = args.dir.clone().unwrap_or_else(std::env::temp_dir);
    fs::create_dir_all(&parent)?;
    let tmp = tempfile::Builder::new()
        .prefix("packgraph-bench-store-")
        .tempdir_in(&parent)?;
    let mut run = Run {
        args,
        dir: tmp.path(),
        threads,
        dataset: None,
        emit,
    };
    let runs = |part: &str| args.parts.iter().any(|p| p == part);
    if runs("fsync") {
        run.measure_fsync()?;
    }

    step("generating the graph");
    let n = 1usize << args.scale;
    let graph = Graph::from_edges(
        n,
        &kronecker(args.scale, args.edge_factor, args.common.seed),
        false,
    )?;
    eprintln!(
        "kronecker: {} vertices, {} arcs",
        graph.num_vertices(),
        graph.num_arcs()
    );

    run.dataset = Some("kronecker");

    step("ingest");
    if runs("ingest") {
        run.measure_ingest(&graph)?;
    }

    step("checkpoints and recovery");
    if runs("checkpoints") {
        run.measure_checkpoints(&graph)?;
    }
    if runs("properties") {
        run.measure_properties(&graph)?;
    }
    if runs("replay") {
        run.measure_replay(&graph)?;
    }
    Ok(())
}

/// One run: its options, its scratch directory, and where its rows go.
struct Run<'a> {
    args: &'a StoreArgs,
    dir: &'a Path,
    threads: usize,
    /// The input of the rows: none for the fsync rows (a plain file), then the Kronecker graph.
    dataset: Option<&'static str>,
    emit: Emit<'a>,
}

impl Run<'_> {
    /// Emits the row of `structure` and `op` at `param`: `value` in `unit`, over `keys`.
    fn row(
        &mut self,
        (structure, op): (&'static str, &'static str),
        param: u64,
        (value, unit): (f64, &'static str),
        keys: Option<u64>,
    ) -> anyhow::Result<()> {
        (self.emit)(Record {
            bench: "store",
            structure,
            op,
            param,
            threads: self.threads,
            value,
            unit,
            keys,
            dataset: self.dataset,
        })
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// A second graph sharing `graph`'s pages (both pay for the pages they copy on write).
fn copy_of(graph: &Graph) -> Graph {
    graph.snapshot().to_graph()
}

/// Options of the measured stores: `sync`, no background checkpoint.
fn options(sync: SyncPolicy) -> StoreOptions {
    StoreOptions {
        sync,
        checkpoint_log_bytes: None,
        ..StoreOptions::default()
    }
}

/// R-MAT edges not in `graph`: the graph bench's insert batches ([`fresh_edges`]).
fn new_edges_rmat(graph: &Graph, scale: u32, count: usize, seed: u64) -> Vec<(VertexId, VertexId)> {
    fresh_edges(scale, count, (seed, 0), |u, v| graph.has_edge(u, v))
}

fn batches(edges: &[(VertexId, VertexId)], size: usize) -> Vec<Update> {
    edges
        .chunks(size)
        .map(|chunk| Update::from_edges(chunk.to_vec()))
        .collect()
}

/// Arcs inserted per second: in memory through [`SharedGraph::commit`].
fn ingest_memory(graph: Graph, batches: &[Update]) -> anyhow::Result<(u64, Duration)> {
    let shared = SharedGraph::new(graph);
    let directed = shared.snapshot().is_directed();
    let start = Instant::now();
    let mut inserted = 0;
    for batch in batches {
        inserted += shared.commit(batch)?.edges_inserted;
    }
    let time = start.elapsed();
    Ok((arcs(inserted, directed), time))
}

/// Arcs inserted and the time to the last acknowledgement, in a fresh store at `dir`:
/// each batch committed (`pipeline` false), or all appended, then the last waited for.
fn ingest_store(
    dir: &Path,
    graph: Graph,
    sync: SyncPolicy,
    batches: &[Update],
    pipeline: bool,
) -> anyhow::Result<(u64, Duration)> {
    let directed = graph.is_directed();
    let store = Store::create(dir, options(sync), graph)?;
    let start = Instant::now();
    let mut inserted = 0;
    if pipeline {
        let mut last = 0;
        for batch in batches {
            let (seq, applied) = store.append(batch)?;
            inserted += applied.edges_inserted;
            last = seq;
        }
        store.wait_durable(last)?;
    } else {
        for batch in batches {
            inserted += store.commit(batch)?.1.edges_inserted;
        }
    }
    let time = start.elapsed();
    drop(store);
    fs::remove_dir_all(dir)?;
    Ok((arcs(inserted, directed), time))
}

fn arcs(edges: usize, directed: bool) -> u64 {
    edges as u64 * if directed { 1 } else { 2 }
}

fn rate(arcs: u64, time: Duration) -> f64 {
    arcs as f64 / time.as_secs_f64().max(1e-9)
}

/// Bytes of the packs and the manifest in `dir`: what checkpoints keep.
fn checkpoint_bytes(dir: &Path) -> anyhow::Result<u64> {
    let mut bytes = 0;
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("pack-") || name == "MANIFEST" {
            bytes += entry.metadata()?.len();
        }
    }
    Ok(bytes)
}

/// Zipf(s) over `0..n`: rank 1 is 0.
struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut total = 0.0;
        let mut cdf: Vec<f64> = (1..=n)
            .map(|k| {
                total += (k as f64).powf(-s);
                total
            })
            .collect();
        for c in &mut cdf {
            *c /= total;
        }
        Self { cdf }
    }

    fn sample(&self, rng: &mut SplitMix64) -> VertexId {
        let u = rng.next_f64();
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1) as VertexId
    }
}

/// `count` random pairs `(u, v)`, `u` from `source`, `v` uniform, neither a self-loop nor
/// in `graph` nor repeated.
fn new_edges(
    graph: &Graph,
    count: usize,
    rng: &mut SplitMix64,
    mut source: impl FnMut(&mut SplitMix64) -> VertexId,
) -> Vec<(VertexId, VertexId)> {
    let n = graph.num_vertices() as u64;
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut out = Vec::with_capacity(count);
    for _ in 0..count.saturating_mul(100) {
        if out.len() == count {
            break;
        }
        let u = source(rng);
        let v = rng.below(n) as VertexId;
        if u != v && !graph.has_edge(u, v) && seen.insert((u.min(v), u.max(v))) {
            out.push((u, v));
        }
    }
    out
}

/// Half of `fraction` of the edges deleted uniformly at random, as many new uniform ones.
fn uniform_change(graph: &Graph, fraction: f64, seed: u64) -> Update {
    let mut edges = Vec::with_capacity(graph.num_edges());
    graph.for_each_out_arc_in(0..graph.num_vertices() as VertexId, |u, v| {
        if u < v || graph.is_directed() {
            edges.push((u, v));
        }
    });
    let half = ((graph.num_edges() as f64 * fraction / 2.0).round() as usize).min(edges.len());
    let mut rng = SplitMix64::new(seed, 11);
    for i in 0..half {
        let j = i + rng.below((edges.len() - i) as u64) as usize;
        edges.swap(i, j);
    }
    edges.truncate(half);
    let n = graph.num_vertices() as u64;
    let inserts = new_edges(graph, half, &mut rng, |rng| rng.below(n) as VertexId);
    let mut update = Update::new();
    update.delete_edges(&edges).insert_edges(&inserts);
    update
}

/// The same with every source drawn from Zipf(1.0) over vertex ids.
fn zipf_change(graph: &Graph, fraction: f64, seed: u64) -> Update {
    let n = graph.num_vertices();
    let zipf = Zipf::new(n, 1.0);
    let half = (graph.num_edges() as f64 * fraction / 2.0).round() as usize;
    let mut rng = SplitMix64::new(seed, 13);
    let mut left: std::collections::HashMap<VertexId, Vec<VertexId>> = Default::default();
    let mut seen = std::collections::HashSet::with_capacity(half);
    let mut deletes = Vec::with_capacity(half);
    for _ in 0..half.saturating_mul(1000) {
        if deletes.len() == half {
            break;
        }
        let u = zipf.sample(&mut rng);
        let neighbors = left.entry(u).or_insert_with(|| graph.out_neighbors(u));
        if neighbors.is_empty() {
            continue;
        }
        let v = neighbors.swap_remove(rng.below(neighbors.len() as u64) as usize);
        if seen.insert((u.min(v), u.max(v))) {
            deletes.push((u, v));
        }
    }
    let inserts = new_edges(graph, half, &mut rng, |rng| zipf.sample(rng));
    let mut update = Update::new();
    update.delete_edges(&deletes).insert_edges(&inserts);
    update
}

/// The measurements, in the order they run.
impl Run<'_> {
    fn measure_fsync(&mut self) -> anyhow::Result<()> {
        let args = self.args;
        let path = self.dir.join("fsync-probe");
        let mut file = OpenOptions::new().create(true).append(true).open(&path)?;
        let mut latencies = Vec::with_capacity(args.fsyncs);
        let start = Instant::now();
        for i in 0..args.fsyncs as u64 {
            let t = Instant::now();
            file.write_all(&i.to_le_bytes())?;
            file.sync_data()?;
            latencies.push(t.elapsed());
        }
        let total = start.elapsed();
        drop(file);
        fs::remove_file(&path)?;
        latencies.sort_unstable();
        let count = args.fsyncs as u64;
        for (op, value, unit) in [
            ("fsync_p50", percentile(&latencies, 0.5).as_secs_f64(), "s"),
            ("fsync_p99", percentile(&latencies, 0.99).as_secs_f64(), "s"),
            ("fsync_rate", count as f64 / total.as_secs_f64(), "fsyncs/s"),
        ] {
            self.row(("file", op), count, (value, unit), Some(count))?;
        }
        Ok(())
    }

    fn measure_ingest(&mut self, graph: &Graph) -> anyhow::Result<()> {
        let (args, dir) = (self.args, self.dir);
        let seed = args.common.seed ^ 0x5354_4f52;
        let edges = new_edges_rmat(graph, args.scale, args.insert_edges, seed);
        let store_dir = dir.join("ingest");
        for (batch, durable) in [
            (
                args.large_batch,
                vec![("sync:batch", SyncPolicy::Batch, false)],
            ),
            (
                args.small_batch,
                vec![
                    ("group:10ms", SyncPolicy::Group(GROUP), true),
                    ("sync:batch", SyncPolicy::Batch, false),
                ],
            ),
        ] {
            let updates = batches(&edges, batch);
            let (arcs, time) = ingest_memory(copy_of(graph), &updates)?;
            let memory = rate(arcs, time);
            let param = batch as u64;
            self.row(("memory", "ingest"), param, (memory, "edges/s"), Some(arcs))?;
            for (structure, sync, pipeline) in durable {
                let (arcs, time) =
                    ingest_store(&store_dir, copy_of(graph), sync, &updates, pipeline)?;
                let durable = rate(arcs, time);
                self.row(
                    (structure, "ingest"),
                    param,
                    (durable, "edges/s"),
                    Some(arcs),
                )?;
                self.row(
                    (structure, "ingest_ratio"),
                    param,
                    (durable / memory, "x"),
                    Some(arcs),
                )?;
            }
        }
        Ok(())
    }

    fn measure_checkpoints(&mut self, graph: &Graph) -> anyhow::Result<()> {
        let (args, dir) = (self.args, self.dir);
        let param = u64::from(args.scale);
        let store_dir = dir.join("checkpoint");
        let store = Store::create(&store_dir, options(SyncPolicy::Batch), copy_of(graph))?;
        let full = checkpoint_bytes(&store_dir)?;
        self.row(
            ("create", "full_bytes"),
            param,
            (full as f64, "bytes"),
            Some(graph.num_arcs() as u64),
        )?;
        for (structure, seed) in [
            ("uniform", args.common.seed ^ 1),
            ("zipf", args.common.seed ^ 2),
        ] {
            let current = store.snapshot().to_graph();
            let update = if structure == "uniform" {
                uniform_change(&current, args.change, seed)
            } else {
                zipf_change(&current, args.change, seed)
            };
            drop(current);
            let applied = store.commit(&update)?.1;
            let changed = (applied.edges_deleted + applied.edges_inserted) as u64;
            let (stats, time) = timed(|| store.checkpoint());
            let stats = stats?;
            eprintln!(
            "{structure}: {changed} edges changed ({} deleted), checkpoint {} ({} units written, {} reused)",
            applied.edges_deleted,
            if stats.delta { "a delta" } else { "a new base" },
            stats.units_written,
            stats.units_reused
        );
            let (full_stats, full_time) = timed(|| store.checkpoint_full());
            let full_stats = full_stats?;
            for (op, value, unit) in [
                ("ckpt_bytes", stats.bytes_written as f64, "bytes"),
                ("ckpt_ratio", stats.bytes_written as f64 / full as f64, "x"),
                ("ckpt_time", time.as_secs_f64(), "s"),
                ("full_written", full_stats.bytes_written as f64, "bytes"),
                ("full_reused", full_stats.bytes_reused as f64, "bytes"),
                ("full_time", full_time.as_secs_f64(), "s"),
            ] {
                self.row((structure, op), param, (value, unit), Some(changed))?;
            }
        }
        // Batches logged past the last (full) checkpoint, then a reopen.
        let edges = new_edges_rmat(
            &store.snapshot().to_graph(),
            args.scale,
            args.small_batch * 10,
            args.common.seed ^ 3,
        );
        for batch in batches(&edges, args.small_batch) {
            store.commit(&batch)?;
        }
        drop(store);
        let mut opens = Vec::with_capacity(args.reopens);
        for _ in 0..args.reopens {
            let (store, open_time) = timed(|| {
                Store::<packgraph::pma::GroupLeaf>::open(&store_dir, options(SyncPolicy::Batch))
            });
            opens.push((store?.recovery(), open_time));
        }
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let recovery = &opens[0].0;
        let read_rates = opens
            .iter()
            .map(|(r, _)| r.checkpoint_bytes as f64 / r.checkpoint_seconds.max(1e-9) / 1e9);
        let open_times = opens.iter().map(|(_, time)| time.as_secs_f64());
        for (op, value, unit, keys) in [
            (
                "ckpt_read",
                median(read_rates.collect()),
                "GB/s",
                recovery.checkpoint_bytes,
            ),
            (
                "open_time",
                median(open_times.collect()),
                "s",
                recovery.records_replayed,
            ),
        ] {
            self.row(("recovery", op), param, (value, unit), Some(keys))?;
        }
        fs::remove_dir_all(&store_dir)?;
        Ok(())
    }

    fn measure_properties(&mut self, graph: &Graph) -> anyhow::Result<()> {
        let (args, dir) = (self.args, self.dir);
        let param = u64::from(args.scale);
        let store_dir = dir.join("properties");
        let n = graph.num_vertices();
        let mut rng = SplitMix64::new(args.common.seed, 17);
        let mut with_values = copy_of(graph);
        let mut all = Update::new();
        for v in 0..n as VertexId {
            all.set_property("score", v, PropertyValue::Int(rng.below(1 << 20) as i64));
        }
        with_values.apply(&all)?;
        let store = Store::create(&store_dir, options(SyncPolicy::Batch), with_values)?;
        let full = checkpoint_bytes(&store_dir)?;
        // `--change` of the vertices, distinct, drawn uniformly, get a new value.
        let count = ((n as f64 * args.change).round() as usize).clamp(1, n);
        let mut vertices: Vec<VertexId> = (0..n as VertexId).collect();
        for i in 0..count {
            let j = i + rng.below((n - i) as u64) as usize;
            vertices.swap(i, j);
        }
        let mut change = Update::new();
        for &v in &vertices[..count] {
            change.set_property(
                "score",
                v,
                PropertyValue::Int(-1 - rng.below(1 << 20) as i64),
            );
        }
        store.commit(&change)?;
        let (stats, time) = timed(|| store.checkpoint());
        let stats = stats?;
        eprintln!(
            "properties: {count} of {n} values changed, checkpoint {} ({} units written, {} reused)",
            if stats.delta { "a delta" } else { "a new base" },
            stats.units_written,
            stats.units_reused
        );
        for (op, value, unit) in [
            ("full_bytes", full as f64, "bytes"),
            ("ckpt_bytes", stats.bytes_written as f64, "bytes"),
            ("ckpt_ratio", stats.bytes_written as f64 / full as f64, "x"),
            ("ckpt_time", time.as_secs_f64(), "s"),
        ] {
            self.row(("properties", op), param, (value, unit), Some(count as u64))?;
        }
        drop(store);
        fs::remove_dir_all(&store_dir)?;
        Ok(())
    }

    fn measure_replay(&mut self, graph: &Graph) -> anyhow::Result<()> {
        let (args, dir) = (self.args, self.dir);
        let store_dir = dir.join("replay");
        let edges = new_edges_rmat(graph, args.scale, args.replay_records, args.common.seed ^ 4);
        let updates: Vec<Update> = edges
            .iter()
            .map(|&edge| Update::from_edges(vec![edge]))
            .collect();
        // The floor replay cannot beat: the same records applied to a copy of the graph in
        // memory, no log read, no decoding.
        let mut copy = copy_of(graph);
        let (applied, apply_time) =
            timed(|| updates.iter().try_for_each(|u| copy.apply(u).map(drop)));
        applied?;
        drop(copy);
        // The floor for merged replay: the same edges applied in batches as large as those
        // replay merges the records into.
        let mut copy = copy_of(graph);
        let (applied, batch_time) = timed(|| {
            batches(&edges, args.replay_batch)
                .iter()
                .try_for_each(|u| copy.apply(u).map(drop))
        });
        applied?;
        drop(copy);
        let store = Store::create(&store_dir, options(SyncPolicy::None), copy_of(graph))?;
        let (appended, append_time) = timed(|| -> anyhow::Result<u64> {
            for update in &updates {
                store.append(update)?;
            }
            Ok(updates.len() as u64)
        });
        let appended = appended?;
        drop(store);
        // Each open replays the whole log again (no checkpoint is written in between).
        let mut opens = Vec::with_capacity(args.reopens);
        for _ in 0..args.reopens {
            let (store, open_time) = timed(|| {
                Store::<packgraph::pma::GroupLeaf>::open(&store_dir, options(SyncPolicy::None))
            });
            let recovery = store?.recovery();
            anyhow::ensure!(
                recovery.records_replayed == appended,
                "replayed {} records of {appended}",
                recovery.records_replayed
            );
            opens.push((recovery, open_time));
        }
        let median = |mut values: Vec<f64>| {
            values.sort_by(f64::total_cmp);
            values[values.len() / 2]
        };
        let replay_seconds = median(
            opens
                .iter()
                .map(|(r, _)| r.replay_seconds.max(1e-9))
                .collect(),
        );
        let open_time = median(opens.iter().map(|(_, t)| t.as_secs_f64()).collect());
        let (recovery, _) = &opens[0];
        let param = appended;
        let records = Some(recovery.records_replayed);
        for (op, value, unit) in [
            (
                "append",
                appended as f64 / append_time.as_secs_f64(),
                "records/s",
            ),
            (
                "apply_memory",
                appended as f64 / apply_time.as_secs_f64(),
                "records/s",
            ),
            (
                "apply_batch",
                appended as f64 / batch_time.as_secs_f64(),
                "records/s",
            ),
            (
                "replay",
                recovery.records_replayed as f64 / replay_seconds,
                "records/s",
            ),
            (
                "replay_bytes",
                recovery.log_bytes as f64 / replay_seconds / 1e6,
                "MB/s",
            ),
            ("open_time", open_time, "s"),
        ] {
            self.row(("replay", op), param, (value, unit), records)?;
        }
        fs::remove_dir_all(&store_dir)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_run_emits_every_row() {
        let args = StoreArgs {
            scale: 8,
            edge_factor: 8,
            insert_edges: 2_000,
            large_batch: 500,
            small_batch: 100,
            fsyncs: 5,
            change: 0.05,
            replay_records: 300,
            replay_batch: 64,
            reopens: 3,
            dir: None,
            parts: PARTS.split(',').map(String::from).collect(),
            common: CommonArgs {
                quick: false,
                seed: 7,
                json: true,
            },
        };
        let mut records = Vec::new();
        measure(
            &args,
            2,
            &mut |record| {
                records.push(record);
                Ok(())
            },
            &|_| {},
        )
        .unwrap();
        let names: Vec<(&str, &str, u64)> = records
            .iter()
            .map(|r| (r.structure, r.op, r.param))
            .collect();
        let expected = [
            ("file", "fsync_p50", 5),
            ("file", "fsync_p99", 5),
            ("file", "fsync_rate", 5),
            ("memory", "ingest", 500),
            ("sync:batch", "ingest", 500),
            ("sync:batch", "ingest_ratio", 500),
            ("memory", "ingest", 100),
            ("group:10ms", "ingest", 100),
            ("group:10ms", "ingest_ratio", 100),
            ("sync:batch", "ingest", 100),
            ("sync:batch", "ingest_ratio", 100),
            ("create", "full_bytes", 8),
            ("uniform", "ckpt_bytes", 8),
            ("uniform", "ckpt_ratio", 8),
            ("uniform", "ckpt_time", 8),
            ("uniform", "full_written", 8),
            ("uniform", "full_reused", 8),
            ("uniform", "full_time", 8),
            ("zipf", "ckpt_bytes", 8),
            ("zipf", "ckpt_ratio", 8),
            ("zipf", "ckpt_time", 8),
            ("zipf", "full_written", 8),
            ("zipf", "full_reused", 8),
            ("zipf", "full_time", 8),
            ("recovery", "ckpt_read", 8),
            ("recovery", "open_time", 8),
            ("properties", "full_bytes", 8),
            ("properties", "ckpt_bytes", 8),
            ("properties", "ckpt_ratio", 8),
            ("properties", "ckpt_time", 8),
            ("replay", "append", 300),
            ("replay", "apply_memory", 300),
            ("replay", "apply_batch", 300),
            ("replay", "replay", 300),
            ("replay", "replay_bytes", 300),
            ("replay", "open_time", 300),
        ];
        assert_eq!(names, expected);
        for record in &records {
            assert!(
                record.value.is_finite() && record.value >= 0.0,
                "{record:?}"
            );
            assert_eq!((record.bench, record.threads), ("store", 2));
            // Every row measured something (reuse may be zero only where nothing was kept).
            if record.op != "full_reused" {
                assert!(record.value > 0.0, "{record:?}");
            }
        }
        // Every ingest run inserted all the edges (two arcs each).
        for record in records.iter().filter(|r| r.op == "ingest") {
            assert_eq!(record.keys, Some(4_000), "{record:?}");
        }
    }
}
