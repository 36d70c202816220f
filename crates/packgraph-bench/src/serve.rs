//! `packgraph-bench serve`: `packgraph serve` under load, on loopback, against the same
//! work done without HTTP.
//!
//! A data directory holding the Kronecker graph of the graph bench (symmetrized; `--scale`,
//! edge factor 16) is created under `--dir` (default: the system's temporary directory), or
//! `--data DIR` names one to serve as it is. Then, in this order, with the sync policy
//! `--sync` (default `group:2`):
//!
//! 1. **Ingest** (`ingest`): for each `--batch` size, `--duration` seconds of batches of
//!    uniform random edges in the `ingest` line format, parsed, built
//!    ([`build_update`]) and appended from one thread, each waited durable before the next
//!    (under group commit, not waited for: the last is, at the end): the loop of
//!    `packgraph ingest`, in process. Edges acknowledged per second.
//! 2. **Server** (`http`): the store served in process ([`packgraph_serve::Server`], the
//!    router `packgraph serve` runs, `--io-threads` runtime threads (default 2),
//!    algorithms on `--threads`) on 127.0.0.1. `--readers` clients issue `GET /run/bfs` from seeded random sources, first
//!    alone for `--duration` seconds (`query_idle`), then for each batch size while
//!    `--writers` clients post batches of that many uniform random edges (`text/plain`)
//!    as fast as they are acknowledged, each client keeping `--in-flight` requests in
//!    flight over as many kept-alive connections ("8 clients × 8 in flight" by default):
//!    each connection sends its next request only once the last is acknowledged. Each
//!    client is one thread driving its connections with an event loop
//!    ([`post_concurrently`]: raw HTTP/1.1 over kept-alive sockets, one write and about
//!    one read per request), so that the load generator, which shares the cores with the
//!    server, costs them little; each reader is a blocking client on a thread of its own.
//!    Acknowledged edges per second (`update_tput`),
//!    acknowledgement latency (`ack_p50`, `ack_p99`) and BFS latency (`query_p50`,
//!    `query_p99`) during the writes, and `query_ratio`, the median BFS latency while
//!    writing over idle. `ingest_ratio` is the server's throughput over ingest's at the
//!    same batch size. From the server's `/metrics`, where the time goes: the mean time to
//!    apply one request's batches (`apply_us`: parse, build, commit and log, no sync), the
//!    mean wait of the acknowledger for a group sync (`sync_wait_ms`) and the requests the
//!    writer took from its queue at once (`requests_per_group`).
//!
//! Clients and server share the machine's cores: on a small machine the clients' own work
//! (formatting, parsing answers) is part of every figure. The server's write path and
//! connection threads run `--write-nice` (default [`packgraph_serve::DEFAULT_WRITE_NICE`])
//! below its query pool, as `packgraph serve` runs them; the clients run at the
//! process's own priority.

use std::fmt::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use packgraph::graph::{AnyGraph, Graph, GraphRead};
use packgraph::io::generate::{kronecker, SplitMix64};
use packgraph::io::updates::{build_update, UpdateReader};
use packgraph::store::{AnyStore, Store, StoreLeaf, StoreOptions, SyncPolicy};
use packgraph_serve::client::{post_concurrently, Client};
use packgraph_serve::{Backend, ServeConfig, Server};

use crate::args::{usage_error, CommonArgs};
use crate::{parse_count_list, CountList, Record, Reporter};

/// Options of `packgraph-bench serve`.
#[derive(Args, Debug, Clone)]
pub(crate) struct ServeArgs {
    /// log2 of the vertex count of the generated Kronecker graph.
    #[arg(long, default_value_t = 18)]
    scale: u32,
    /// Serve this data directory instead of a generated graph (it is written to).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Where the generated graph's directory is made (deleted afterwards).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Clients posting update batches.
    #[arg(long, default_value_t = 8)]
    writers: usize,
    /// Requests each writer keeps in flight, one kept-alive connection each (1 to 64).
    #[arg(long, default_value_t = 8)]
    in_flight: usize,
    /// Clients issuing BFS queries.
    #[arg(long, default_value_t = 1)]
    readers: usize,
    /// Seconds of each measured phase (0.1 to 600).
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Edges per update batch, one phase each (comma-separated).
    #[arg(long, default_value = "1,1e4", value_parser = parse_count_list)]
    batch: CountList,
    /// Threads of the server's runtime, which serves the connections (1 to 16).
    #[arg(long, default_value_t = 2)]
    io_threads: usize,
    /// How much lower the priority (nice increment, 0 to 19) of the server's write path
    /// and connection threads is than the query pool's.
    #[arg(long, default_value_t = packgraph_serve::DEFAULT_WRITE_NICE)]
    write_nice: i32,
    /// The store's sync policy: batch, group:MS or none.
    #[arg(long, default_value = "group:2")]
    sync: String,
    #[command(flatten)]
    common: CommonArgs,
}

/// Uniform random edges among `n` vertices as `ingest` text, `count` lines.
fn edge_text(rng: &mut SplitMix64, n: u64, count: usize) -> String {
    let mut text = String::with_capacity(count * 16);
    for _ in 0..count {
        let (u, v) = (rng.below(n), rng.below(n));
        let _ = writeln!(text, "+ {u} {v}");
    }
    text
}

/// The `q` quantile of `values` in milliseconds (0 for none).
fn quantile_ms(values: &mut [Duration], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_unstable();
    let i = ((values.len() - 1) as f64 * q).round() as usize;
    values[i].as_secs_f64() * 1e3
}

/// `packgraph ingest`'s loop on `store` for `duration`: edges per second.
fn ingest<C: StoreLeaf>(
    store: &Store<C>,
    sync: SyncPolicy,
    batch: usize,
    duration: Duration,
    seed: u64,
) -> anyhow::Result<f64> {
    let n = store.snapshot().num_vertices() as u64;
    let mut rng = SplitMix64::new(seed, 11);
    let started = Instant::now();
    let (mut edges, mut last) = (0, 0);
    while started.elapsed() < duration {
        let text = edge_text(&mut rng, n, batch);
        let mut reader = UpdateReader::new(text.as_bytes(), "<bench>");
        while let Some(parsed) = reader.next_batch()? {
            let update = build_update(&store.snapshot(), &parsed.ops, C::WEIGHTED)
                .map_err(|e| usage_error(e.reason.to_string()))?;
            let (seq, _) = store.append(&update)?;
            // As `ingest` does: under group commit it goes on and acknowledges what the
            // syncs covered; otherwise each batch waits to be durable.
            if !matches!(sync, SyncPolicy::Group(_)) {
                store.wait_durable(seq)?;
            }
            last = seq;
            edges += parsed.ops.len();
        }
    }
    store.wait_durable(last)?;
    Ok(edges as f64 / started.elapsed().as_secs_f64())
}

/// BFS latencies of one reader until `stop`.
fn read_until(mut client: Client, n: u64, seed: u64, stop: Arc<AtomicBool>) -> Vec<Duration> {
    let mut rng = SplitMix64::new(seed, 12);
    let mut latencies = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let source = rng.below(n);
        let started = Instant::now();
        match client.get(&format!("/run/bfs?source={source}")) {
            Ok(r) if r.status == 200 => latencies.push(started.elapsed()),
            Ok(r) if r.status == 404 => {} // a source not (yet) a vertex
            Ok(r) => panic!("bfs: {} {}", r.status, r.text()),
            Err(e) => panic!("bfs: {e}"),
        }
    }
    latencies
}

/// Acknowledgement latencies of one writer keeping `in_flight` requests of batches of
/// `batch` edges in flight until `stop`, from one thread ([`post_concurrently`]).
fn write_until(
    addr: SocketAddr,
    n: u64,
    batch: usize,
    in_flight: usize,
    seed: u64,
    stop: &Arc<AtomicBool>,
) -> Vec<Duration> {
    let bodies: Vec<_> = (0..in_flight as u64)
        .map(|c| {
            let mut rng = SplitMix64::new(seed + c, 13);
            move || edge_text(&mut rng, n, batch).into_bytes()
        })
        .collect();
    match post_concurrently(addr, "/updates", "text/plain", bodies, stop) {
        Ok(latencies) => latencies.into_iter().flatten().collect(),
        Err(e) => panic!("updates: {e}"),
    }
}

/// Sums from the server's `/metrics`: where a write phase's time went.
#[derive(Debug, Default, Clone, Copy)]
struct ServerTimes {
    apply_seconds: f64,
    requests: f64,
    sync_wait_seconds: f64,
    syncs: f64,
    groups: f64,
}

impl ServerTimes {
    fn scrape(server: &Server) -> anyhow::Result<Self> {
        let response = Client::new(server.addr()).get("/metrics")?;
        let text = response.text();
        let value = |name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
                .unwrap_or(0.0)
        };
        Ok(Self {
            apply_seconds: value("packgraph_update_apply_seconds_sum"),
            requests: value("packgraph_update_apply_seconds_count"),
            sync_wait_seconds: value("packgraph_durable_wait_seconds_sum"),
            syncs: value("packgraph_durable_wait_seconds_count"),
            groups: value("packgraph_write_groups_total"),
        })
    }

    fn since(self, before: &Self) -> Self {
        Self {
            apply_seconds: self.apply_seconds - before.apply_seconds,
            requests: self.requests - before.requests,
            sync_wait_seconds: self.sync_wait_seconds - before.sync_wait_seconds,
            syncs: self.syncs - before.syncs,
            groups: self.groups - before.groups,
        }
    }

    fn apply_us(&self) -> f64 {
        self.apply_seconds / self.requests.max(1.0) * 1e6
    }

    fn sync_wait_ms(&self) -> f64 {
        self.sync_wait_seconds / self.syncs.max(1.0) * 1e3
    }

    fn requests_per_group(&self) -> f64 {
        self.requests / self.groups.max(1.0)
    }
}

/// What one phase measured.
struct Phase {
    queries: Vec<Duration>,
    acks: Vec<Duration>,
    edges: u64,
    seconds: f64,
}

/// Runs `readers` readers and `writers` writers (batches of `batch`, `in_flight` requests
/// each) for `duration`.
#[allow(
    clippy::too_many_arguments,
    reason = "one phase's settings, each a flag"
)]
fn phase(
    server: &Server,
    n: u64,
    readers: usize,
    writers: usize,
    in_flight: usize,
    batch: usize,
    duration: Duration,
    seed: u64,
) -> Phase {
    let stop = Arc::new(AtomicBool::new(false));
    let client = || Client::new(server.addr()).with_timeout(Duration::from_secs(120));
    let reading: Vec<_> = (0..readers as u64)
        .map(|r| {
            let (c, stop) = (client(), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("bench-reader".into())
                .spawn(move || read_until(c, n, seed + r, stop))
                .expect("a reader thread")
        })
        .collect();
    let writing: Vec<_> = (0..writers as u64)
        .map(|w| {
            let (addr, stop) = (server.addr(), Arc::clone(&stop));
            let seed = seed + 1000 + w * in_flight as u64;
            std::thread::Builder::new()
                .name("bench-writer".into())
                .spawn(move || write_until(addr, n, batch, in_flight, seed, &stop))
                .expect("a writer thread")
        })
        .collect();
    let started = Instant::now();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let mut result = Phase {
        queries: Vec::new(),
        acks: Vec::new(),
        edges: 0,
        seconds: 0.0,
    };
    for thread in writing {
        result.acks.extend(thread.join().expect("a writer failed"));
    }
    result.edges = (result.acks.len() * batch) as u64;
    result.seconds = started.elapsed().as_secs_f64();
    for thread in reading {
        result
            .queries
            .extend(thread.join().expect("a reader failed"));
    }
    result
}

pub(crate) fn run(args: &ServeArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.scale = args.scale.min(12);
        args.duration = args.duration.min(1.0);
    }
    if !(1..=64).contains(&args.in_flight) {
        return Err(usage_error(format!(
            "--in-flight {}: must be 1 to 64",
            args.in_flight
        )));
    }
    if !(1..=16).contains(&args.io_threads) {
        return Err(usage_error(format!(
            "--io-threads {}: must be 1 to 16",
            args.io_threads
        )));
    }
    if !(0..=19).contains(&args.write_nice) {
        return Err(usage_error(format!(
            "--write-nice {}: must be 0 to 19",
            args.write_nice
        )));
    }
    if !(0.1..=600.0).contains(&args.duration) {
        return Err(usage_error(format!(
            "--duration {}: must be 0.1 to 600 seconds",
            args.duration
        )));
    }
    let sync: SyncPolicy = args.sync.parse()?;
    let options = StoreOptions {
        sync,
        checkpoint_log_bytes: None,
        ..StoreOptions::default()
    };
    let temp = tempfile::Builder::new()
        .prefix("packgraph-bench-serve")
        .tempdir_in(args.dir.clone().unwrap_or_else(std::env::temp_dir))?;
    let store = match &args.data {
        Some(dir) => AnyStore::open(dir, options)?,
        None => {
            let edges = kronecker(args.scale, 16, args.common.seed);
            let graph = Graph::from_edges(1 << args.scale, &edges, false)?;
            AnyStore::create(&temp.path().join("g"), options, AnyGraph::Unweighted(graph))?
        }
    };
    let n = store.graph().num_vertices() as u64;
    let duration = Duration::from_secs_f64(args.duration);
    let reporter = Reporter::new(args.common.json, 1 + 2 * args.batch.len() as u64);
    let record = |structure, op, param: usize, value, unit| Record {
        bench: "serve",
        structure,
        op,
        param: param as u64,
        threads,
        value,
        unit,
        keys: None,
        dataset: None,
    };
    let mut ingest_rates = Vec::new();
    for &batch in args.batch.iter() {
        reporter.step(format!("ingest, batches of {batch}"));
        let rate = match &store {
            AnyStore::Unweighted(s) => ingest(s, sync, batch, duration, args.common.seed)?,
            AnyStore::Weighted(s) => ingest(s, sync, batch, duration, args.common.seed)?,
        };
        reporter.emit(record("ingest", "update_tput", batch, rate, "edges/s"))?;
        ingest_rates.push(rate);
        reporter.advance();
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("packgraph-query-{i}"))
        .build()?;
    let mut config = ServeConfig::new("127.0.0.1:0".parse()?);
    config.pool = Some(Arc::new(pool));
    config.max_queries = args.readers.max(1);
    config.write_nice = args.write_nice;
    let server = Server::start(Arc::new(Backend::durable(store)), config, args.io_threads)?;
    reporter.step("queries, idle".into());
    let seed = args.common.seed;
    let mut idle = phase(&server, n, args.readers, 0, 1, 1, duration, seed).queries;
    let idle_p50 = quantile_ms(&mut idle, 0.5);
    reporter.emit(record("http", "query_idle_p50", 0, idle_p50, "ms"))?;
    reporter.emit(record(
        "http",
        "query_idle_p99",
        0,
        quantile_ms(&mut idle, 0.99),
        "ms",
    ))?;
    reporter.advance();
    for (&batch, ingest_rate) in args.batch.iter().zip(ingest_rates) {
        reporter.step(format!("server, batches of {batch}"));
        let before = ServerTimes::scrape(&server)?;
        let mut p = phase(
            &server,
            n,
            args.readers,
            args.writers,
            args.in_flight,
            batch,
            duration,
            seed + 7,
        );
        let times = ServerTimes::scrape(&server)?.since(&before);
        let tput = p.edges as f64 / p.seconds;
        reporter.emit(record("http", "update_tput", batch, tput, "edges/s"))?;
        reporter.emit(record(
            "http",
            "ingest_ratio",
            batch,
            tput / ingest_rate,
            "x",
        ))?;
        reporter.emit(record(
            "http",
            "ack_p50",
            batch,
            quantile_ms(&mut p.acks, 0.5),
            "ms",
        ))?;
        reporter.emit(record(
            "http",
            "ack_p99",
            batch,
            quantile_ms(&mut p.acks, 0.99),
            "ms",
        ))?;
        let busy_p50 = quantile_ms(&mut p.queries, 0.5);
        reporter.emit(record("http", "query_p50", batch, busy_p50, "ms"))?;
        reporter.emit(record(
            "http",
            "query_p99",
            batch,
            quantile_ms(&mut p.queries, 0.99),
            "ms",
        ))?;
        let ratio = if idle_p50 > 0.0 {
            busy_p50 / idle_p50
        } else {
            0.0
        };
        reporter.emit(record("http", "query_ratio", batch, ratio, "x"))?;
        reporter.emit(record("http", "apply_us", batch, times.apply_us(), "us"))?;
        reporter.emit(record(
            "http",
            "sync_wait_ms",
            batch,
            times.sync_wait_ms(),
            "ms",
        ))?;
        reporter.emit(record(
            "http",
            "requests_per_group",
            batch,
            times.requests_per_group(),
            "x",
        ))?;
        reporter.advance();
    }
    server.stop()?;
    reporter.finish();
    Ok(())
}
