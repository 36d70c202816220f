//! `packgraph-bench part`: the PART paper's microbenchmark (section 3.6) on this machine.
//!
//! `--keys` uniform random 4-byte keys with 4-byte values, on one thread, for PART, std's
//! `HashMap` and `BTreeMap` (persistence emulated by cloning, as the paper did for its
//! mutable baselines) and the persistent `imbl::OrdMap`: random lookups of present keys
//! (one after another, and in batches of 1024: PART's `get_many` overlaps the keys' cache
//! misses, the others look up one key after another), a full scan, random inserts with a snapshot every 1 or 1000 operations or never, bytes
//! per entry (allocator-counted) and the time to take a snapshot. Also `insert_batch`:
//! the same inserts given as batches of 1000 with a snapshot before each (PART sorts a
//! batch and walks the tree once; the others insert one by one). A measurement that would
//! pass `--budget` seconds stops early and reports the rate over what it did.
//!
//! The `checkpoint` rows measure the section 4.1 idea in the durable store, where the
//! vertex-id dictionary and the property columns are PARTs written as subtree units: a
//! graph of `--checkpoint-vertices` vertices named `v0`, `v1`, ... (string ids), an integer
//! property `rank` on every vertex and 4 random edges per vertex, in a fresh data
//! directory. `full_bytes` is the size of a full checkpoint (the bytes its units take, a
//! full checkpoint with nothing changed: everything reused). Then each change below is
//! committed and checkpointed, with a full checkpoint (not measured) between them to make
//! the current version the base; each row is the bytes the checkpoint wrote (units and
//! manifest) over `full_bytes`:
//! * `props_delta` / `props_base`: 1% of the vertices (distinct, uniform) get a new value,
//!   then `Store::checkpoint` (the delta route) / `Store::checkpoint_full` (a new base);
//! * `props_run_base`: 1% of the vertices in one run of consecutive ids get a new value,
//!   then `Store::checkpoint_full`;
//! * `ids_delta` / `ids_base`: 1% new named vertices, each with a value and an edge to the
//!   vertex before it;
//! * `edges_base`: 1% of the values and as many new random edges as the graph has, then
//!   `Store::checkpoint`, which a change that large sends to a new base;
//! * `chain_mean` / `chain_max`: ten rounds of 1% new values, each followed by
//!   `Store::checkpoint` (a delta grows with the changes since the base until a new base
//!   is cheaper): the mean and largest round.
//!
//! `--checkpoints-only` runs only these rows.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use packgraph::graph::{ExternalId, Graph, PropertyValue, Update, VertexId};
use packgraph::part::Part;
use packgraph::store::{Store, StoreOptions};

use crate::args::{usage_error, CommonArgs};
use crate::{parse_count, Record, Reporter};
use packgraph::io::generate::SplitMix64;

/// Arguments of `packgraph-bench part`.
#[derive(Args, Debug, Clone)]
pub(crate) struct PartArgs {
    /// Entries loaded before the lookup, scan and snapshot-insert measurements.
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    keys: usize,
    /// Random lookups measured.
    #[arg(long, default_value = "2e6", value_parser = parse_count)]
    lookups: usize,
    /// Inserts measured per snapshot interval (1 and 1000).
    #[arg(long, default_value = "1e5", value_parser = parse_count)]
    inserts: usize,
    /// Seconds one measurement may take before it stops early.
    #[arg(long, default_value_t = 10.0)]
    budget: f64,
    /// Vertices of the graph the `checkpoint` rows store (0 skips them; `--quick` caps it
    /// at 1e5).
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    checkpoint_vertices: usize,
    /// Only the `checkpoint` rows.
    #[arg(long)]
    checkpoints_only: bool,
    /// Where the `checkpoint` rows' data directory goes (default: the system's temporary
    /// directory).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

/// Keys per batch in the batched-lookup measurement.
const LOOKUP_BATCH: usize = 1024;

/// What the benchmark needs of a map.
trait BenchMap: Clone {
    const NAME: &'static str;
    fn empty() -> Self;
    fn put(&mut self, key: u32, value: u32);
    fn find(&self, key: u32) -> Option<u32>;
    fn scan(&self) -> (u64, u64);
    /// Inserts a batch (one point insert after another unless the structure has batches).
    fn put_batch(&mut self, items: &[(u32, u32)]) {
        for &(k, v) in items {
            self.put(k, v);
        }
    }
    /// How many of `keys` are present (one lookup after another unless the structure has
    /// batched lookups).
    fn count_batch(&self, keys: &[u32]) -> u64 {
        keys.iter()
            .map(|&k| u64::from(self.find(k).is_some()))
            .sum()
    }
    /// A copy laid out for scans, if the structure has such an operation.
    fn compacted(&self) -> Option<Self> {
        None
    }
}

impl BenchMap for Part<u32> {
    const NAME: &'static str = "part";
    fn empty() -> Self {
        Part::new()
    }
    fn put(&mut self, key: u32, value: u32) {
        self.insert(&key.to_be_bytes(), value);
    }
    fn find(&self, key: u32) -> Option<u32> {
        self.get(&key.to_be_bytes()).copied()
    }
    fn count_batch(&self, keys: &[u32]) -> u64 {
        let keys: Vec<[u8; 4]> = keys.iter().map(|k| k.to_be_bytes()).collect();
        self.get_many(&keys)
            .iter()
            .map(|v| u64::from(v.is_some()))
            .sum()
    }
    fn put_batch(&mut self, items: &[(u32, u32)]) {
        self.insert_batch(items.iter().map(|&(k, v)| (k.to_be_bytes(), v)));
    }
    fn compacted(&self) -> Option<Self> {
        Some(self.compact())
    }
    fn scan(&self) -> (u64, u64) {
        self.iter().fold((0, 0), |(n, s), (_, &v)| {
            (n + 1, s.wrapping_add(u64::from(v)))
        })
    }
}

/// The baselines share one implementation: each has `new`, `insert`, `get` and `values`.
macro_rules! bench_map {
    ($map:ty, $name:literal) => {
        impl BenchMap for $map {
            const NAME: &'static str = $name;
            fn empty() -> Self {
                <$map>::new()
            }
            fn put(&mut self, key: u32, value: u32) {
                self.insert(key, value);
            }
            fn find(&self, key: u32) -> Option<u32> {
                self.get(&key).copied()
            }
            fn scan(&self) -> (u64, u64) {
                self.values()
                    .fold((0, 0), |(n, s), &v| (n + 1, s.wrapping_add(u64::from(v))))
            }
        }
    };
}

bench_map!(BTreeMap<u32, u32>, "btreemap");
bench_map!(HashMap<u32, u32>, "hashmap");
bench_map!(imbl::OrdMap<u32, u32>, "imbl_ordmap");

pub(crate) fn run(args: &PartArgs) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.keys = args.keys.min(1_000_000);
        args.lookups = args.lookups.min(200_000);
        args.inserts = args.inserts.min(20_000);
        args.budget = args.budget.min(2.0);
        args.checkpoint_vertices = args.checkpoint_vertices.min(100_000);
    }
    if args.keys == 0
        || args.lookups == 0
        || args.inserts == 0
        || args.budget.is_nan()
        || args.budget <= 0.0
    {
        return Err(usage_error(
            "--keys, --lookups, --inserts and --budget must be positive".into(),
        ));
    }
    let reporter = Reporter::new(args.common.json, 5);
    if args.checkpoint_vertices > 0 {
        measure_checkpoints(&reporter, &args)?;
    }
    reporter.advance();
    if args.checkpoints_only {
        reporter.finish();
        return Ok(());
    }
    let mut rng = SplitMix64::new(args.common.seed, 0);
    let keys: Vec<u32> = (0..args.keys).map(|_| rng.next_u64() as u32).collect();
    let extra: Vec<u32> = (0..args.inserts).map(|_| rng.next_u64() as u32).collect();
    let probes: Vec<u32> = (0..args.lookups)
        .map(|_| keys[(rng.next_u64() % keys.len() as u64) as usize])
        .collect();
    measure::<Part<u32>>(&reporter, &args, &keys, &extra, &probes)?;
    measure::<HashMap<u32, u32>>(&reporter, &args, &keys, &extra, &probes)?;
    measure::<BTreeMap<u32, u32>>(&reporter, &args, &keys, &extra, &probes)?;
    measure::<imbl::OrdMap<u32, u32>>(&reporter, &args, &keys, &extra, &probes)?;
    reporter.finish();
    Ok(())
}

fn measure<M: BenchMap>(
    reporter: &Reporter,
    args: &PartArgs,
    keys: &[u32],
    extra: &[u32],
    probes: &[u32],
) -> anyhow::Result<()> {
    let emit = |op: &'static str, param: u64, value: f64, unit: &'static str, n: usize| {
        reporter.emit(Record {
            bench: "part",
            structure: M::NAME,
            op,
            param,
            threads: 1,
            value,
            unit,
            keys: Some(n as u64),
            dataset: None,
        })
    };
    let budget = Duration::from_secs_f64(args.budget);
    reporter.step(format!("{}: load", M::NAME));
    // Load: inserts with no snapshot, allocator-counted.
    let region = stats_alloc::Region::new(&crate::GLOBAL);
    let start = Instant::now();
    let mut map = M::empty();
    for (i, &k) in keys.iter().enumerate() {
        map.put(k, i as u32);
    }
    let load = start.elapsed().as_secs_f64();
    let change = region.change();
    let bytes = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    let (entries, _) = map.scan();
    emit("insert", 0, keys.len() as f64 / load, "ops/s", keys.len())?;
    emit(
        "size",
        entries,
        bytes / entries.max(1) as f64,
        "bytes/entry",
        entries as usize,
    )?;
    reporter.step(format!("{}: lookups and scan", M::NAME));
    // Every probe is present: `count` must find them all.
    let lookups = |op: &'static str, param: usize, count: &dyn Fn() -> u64| {
        let start = Instant::now();
        let found = count();
        let took = start.elapsed().as_secs_f64();
        anyhow::ensure!(
            found == probes.len() as u64,
            "{} ({op}): a present key was not found",
            M::NAME
        );
        emit(
            op,
            param as u64,
            probes.len() as f64 / took,
            "keys/s",
            probes.len(),
        )
    };
    lookups("lookup", 0, &|| {
        probes
            .iter()
            .map(|&k| u64::from(map.find(k).is_some()))
            .sum()
    })?;
    // The same probes in batches of LOOKUP_BATCH, as a loader translating a chunk of ids
    // asks them (PART walks them together; the others have no batched lookup).
    lookups("lookup_batch", LOOKUP_BATCH, &|| {
        probes
            .chunks(LOOKUP_BATCH)
            .map(|batch| map.count_batch(batch))
            .sum()
    })?;
    let scan = |op: &'static str, map: &M| {
        let start = Instant::now();
        let (scanned, _) = std::hint::black_box(map.scan());
        let rate = scanned as f64 / start.elapsed().as_secs_f64();
        emit(op, 0, rate, "keys/s", scanned as usize)
    };
    scan("scan", &map)?;
    if let Some(compacted) = map.compacted() {
        scan("scan_compacted", &compacted)?;
    }
    // Taking a snapshot: the clone alone, averaged, capped by the budget.
    let start = Instant::now();
    let mut takes = 0u32;
    while takes < 1000 && (takes == 0 || start.elapsed() < budget) {
        drop(std::hint::black_box(map.clone()));
        takes += 1;
    }
    emit(
        "snapshot",
        0,
        start.elapsed().as_secs_f64() / f64::from(takes),
        "s",
        entries as usize,
    )?;
    for interval in [1usize, 1000] {
        reporter.step(format!("{}: inserts, a snapshot every {interval}", M::NAME));
        let mut current = map.clone();
        let mut held = current.clone();
        let start = Instant::now();
        let mut done = 0;
        for (i, &k) in extra.iter().enumerate() {
            if i % interval == 0 {
                held = current.clone();
                if start.elapsed() > budget {
                    break;
                }
            }
            current.put(k, i as u32);
            done += 1;
        }
        let took = start.elapsed().as_secs_f64();
        drop(held);
        emit("insert", interval as u64, done as f64 / took, "ops/s", done)?;
    }
    reporter.step(format!(
        "{}: batches of 1000, a snapshot before each",
        M::NAME
    ));
    let mut current = map.clone();
    let start = Instant::now();
    let mut done = 0;
    let items: Vec<(u32, u32)> = extra.iter().map(|&k| (k, k)).collect();
    for batch in items.chunks(1000) {
        let held = current.clone();
        current.put_batch(batch);
        drop(held);
        done += batch.len();
        if start.elapsed() > budget {
            break;
        }
    }
    let took = start.elapsed().as_secs_f64();
    emit("insert_batch", 1000, done as f64 / took, "ops/s", done)?;
    reporter.advance();
    Ok(())
}

/// Edges per vertex of the `checkpoint` rows' graph.
const CHECKPOINT_EDGE_FACTOR: u64 = 4;

/// The `checkpoint` rows' store: its random source and vertex count.
struct CheckpointRun {
    store: Store,
    rng: SplitMix64,
    n: usize,
}

impl CheckpointRun {
    /// `count` distinct vertices drawn uniformly.
    fn sample(&mut self, count: usize) -> Vec<VertexId> {
        let mut vertices: Vec<VertexId> = (0..self.n as VertexId).collect();
        for i in 0..count {
            let j = i + self.rng.below((self.n - i) as u64) as usize;
            vertices.swap(i, j);
        }
        vertices.truncate(count);
        vertices
    }

    /// New values for `vertices`.
    fn set_values(&mut self, update: &mut Update, vertices: &[VertexId]) {
        for &v in vertices {
            let value = PropertyValue::Int(-1 - self.rng.below(1 << 30) as i64);
            update.set_property("rank", v, value);
        }
    }

    /// `count` random edges among the vertices.
    fn edges(&mut self, count: usize) -> Vec<(VertexId, VertexId)> {
        let n = self.n as u64;
        (0..count)
            .map(|_| (self.rng.below(n) as VertexId, self.rng.below(n) as VertexId))
            .collect()
    }

    /// `count` new named vertices, each with a value and an edge to the vertex before it
    /// (new vertices take the next internal ids, so this touches the last pages only).
    fn add_vertices(&mut self, update: &mut Update, count: usize) {
        let first = self.n as VertexId;
        update.add_vertices((0..count).map(|i| ExternalId::from(format!("v{}", self.n + i))));
        let new: Vec<VertexId> = (first..first + count as VertexId).collect();
        self.set_values(update, &new);
        let edges: Vec<(VertexId, VertexId)> = new.iter().map(|&v| (v, v - 1)).collect();
        update.insert_edges(&edges);
        self.n += count;
    }
}

/// The graph of the `checkpoint` rows: `n` named vertices with a value each and
/// [`CHECKPOINT_EDGE_FACTOR`] random edges per vertex.
fn checkpoint_graph(n: usize, rng: &mut SplitMix64) -> anyhow::Result<Graph> {
    let mut update = Update::new();
    update.add_vertices((0..n).map(|i| ExternalId::from(format!("v{i}"))));
    for v in 0..n as VertexId {
        update.set_property("rank", v, PropertyValue::Int(rng.below(1 << 30) as i64));
    }
    let edges: Vec<(VertexId, VertexId)> = (0..n as u64 * CHECKPOINT_EDGE_FACTOR)
        .map(|_| {
            (
                rng.below(n as u64) as VertexId,
                rng.below(n as u64) as VertexId,
            )
        })
        .collect();
    update.insert_edges(&edges);
    let mut graph = Graph::new(false);
    graph.apply(&update)?;
    Ok(graph)
}

fn measure_checkpoints(reporter: &Reporter, args: &PartArgs) -> anyhow::Result<()> {
    let n = args.checkpoint_vertices;
    let one_percent = (n / 100).max(1);
    reporter.step(format!("checkpoint: a graph of {n} named vertices"));
    let temp = match &args.dir {
        Some(dir) => tempfile::tempdir_in(dir)?,
        None => tempfile::tempdir()?,
    };
    let mut rng = SplitMix64::new(args.common.seed, 23);
    let graph = checkpoint_graph(n, &mut rng)?;
    let options = StoreOptions {
        checkpoint_log_bytes: None,
        ..StoreOptions::default()
    };
    let store = Store::create(&temp.path().join("store"), options, graph)?;
    let mut run = CheckpointRun { store, rng, n };
    let full = run.store.checkpoint_full()?;
    let full_bytes = full.bytes_written + full.bytes_reused;
    let emit = |op: &'static str, value: f64, unit: &'static str, keys: usize| {
        reporter.emit(Record {
            bench: "part",
            structure: "checkpoint",
            op,
            param: n as u64,
            threads: rayon::current_num_threads(),
            value,
            unit,
            keys: Some(keys as u64),
            dataset: None,
        })
    };
    emit("full_bytes", full_bytes as f64, "bytes", n)?;
    // Each change, committed and checkpointed (fully or not), then made the base.
    let measure = |run: &mut CheckpointRun,
                   op: &'static str,
                   full: bool,
                   change: &dyn Fn(&mut CheckpointRun, &mut Update)|
     -> anyhow::Result<f64> {
        let mut update = Update::new();
        change(run, &mut update);
        run.store.commit(&update)?;
        let stats = if full {
            run.store.checkpoint_full()?
        } else {
            run.store.checkpoint()?
        };
        let ratio = stats.bytes_written as f64 / full_bytes as f64;
        eprintln!(
            "checkpoint {op}: {} of {} bytes, {} ({} units written, {} reused)",
            stats.bytes_written,
            full_bytes,
            if stats.delta { "a delta" } else { "a new base" },
            stats.units_written,
            stats.units_reused
        );
        if !op.is_empty() {
            emit(op, ratio, "x", one_percent)?;
        }
        Ok(ratio)
    };
    let random = |run: &mut CheckpointRun, update: &mut Update| {
        let vertices = run.sample(one_percent);
        run.set_values(update, &vertices);
    };
    measure(&mut run, "props_delta", false, &random)?;
    run.store.checkpoint_full()?;
    measure(&mut run, "props_base", true, &random)?;
    measure(&mut run, "props_run_base", true, &|run, update| {
        let start = run.rng.below((run.n - one_percent) as u64 + 1) as VertexId;
        let vertices: Vec<VertexId> = (start..start + one_percent as VertexId).collect();
        run.set_values(update, &vertices);
    })?;
    measure(&mut run, "ids_delta", false, &|run, update| {
        run.add_vertices(update, one_percent);
    })?;
    run.store.checkpoint_full()?;
    measure(&mut run, "ids_base", true, &|run, update| {
        run.add_vertices(update, one_percent);
    })?;
    let edges = run.n * CHECKPOINT_EDGE_FACTOR as usize;
    measure(&mut run, "edges_base", false, &|run, update| {
        random(run, update);
        update.insert_edges(&run.edges(edges));
    })?;
    run.store.checkpoint_full()?;
    let mut chain = Vec::new();
    for _ in 0..10 {
        chain.push(measure(&mut run, "", false, &random)?);
    }
    let mean = chain.iter().sum::<f64>() / chain.len() as f64;
    emit("chain_mean", mean, "x", one_percent)?;
    emit(
        "chain_max",
        chain.iter().copied().fold(0.0, f64::max),
        "x",
        one_percent,
    )?;
    Ok(())
}
