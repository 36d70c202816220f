//! `packgraph-bench serve`: `packgraph serve` under load, on loopback, against the same
//! work done without HTTP.
//!
//! A data directory holding the Kronecker graph of the graph bench (symmetrized; `--scale`,
//! edge factor 16) is created under `--dir` (default: the system's temporary directory), or
//! `--data DIR` names one to serve as it is. Then, in this order, with the sync policy
//! `--sync` (default `group:2`):
//!
//! 1. **Ingest** (`ingest`): for each `--batch` size, `--duration` seconds of batches of
//!    uniform random edges in the `ingest` line format, parsed, built from the writer's
//!    graph ([`build_update`]) and appended from one thread in write groups of up to 4096
//!    batches or 65,536 edges, each group waited durable before the next (under group
//!    commit, not waited for: the last is, at the end): the loop of `packgraph ingest`,
//!    in process. Edges acknowledged per second. These edges stay in the directory the
//!    server then serves.
//! 2. **Server** (`http`): the store served in process ([`packgraph_serve::Server`], the
//!    router `packgraph serve` runs, `--io-threads` runtime threads (default 2),
//!    algorithms on `--threads`) on 127.0.0.1. `--readers` clients issue `GET /run/bfs` from seeded random sources, first
//!    alone for `--duration` seconds (`query_idle`), then for each batch size while
//!    `--writers` clients post batches of that many uniform random edges (`text/plain`)
//!    as fast as they are acknowledged, each client keeping `--in-flight` requests in
//!    flight over as many kept-alive connections ("8 clients × 8 in flight" by default):
//!    each connection sends its next request only once the last is acknowledged. The
//!    writers' connections are driven by `--client-threads` threads (default 1), each an
//!    event loop ([`post_concurrently`]: raw HTTP/1.1 over kept-alive sockets, one write
//!    and about one read per request), so that the load generator, which shares the cores
//!    with the server, costs them little: a thread per client sleeps and is woken about
//!    every other answer, one thread for all takes the answers of a group sync in one
//!    wakeup; each reader is a blocking client on a thread of its own.
//!    Acknowledged edges per second (`update_tput`),
//!    acknowledgement latency (`ack_p50`, `ack_p99`) and BFS latency (`query_p50`,
//!    `query_p99`) during the writes, and `query_ratio`, the median BFS latency while
//!    writing over idle. `ingest_ratio` is the server's throughput over ingest's at the
//!    same batch size. From the server's `/metrics`, where the time goes: the mean time to
//!    apply one request's batches (`apply_us`: parse, build, commit and log, no sync; the
//!    edges of batches between known vertices are applied when their group ends), the
//!    writer's time per request over whole groups (`group_us`: the same plus each group's
//!    merged batch and published version), the
//!    mean wait of the acknowledger for a group sync (`sync_wait_ms`) and the requests the
//!    writer took from its queue at once (`requests_per_group`). From each thread's
//!    `/proc/self/task/TID/schedstat` (Linux), CPU time per acknowledged request of the
//!    server's threads but the query pool (`server_cpu_us`: runtime, write path, syncer),
//!    of the query pool (`query_cpu_us`) and of the load generator (`client_cpu_us`):
//!    figures that depend far less than rates and latencies on what else the machine runs.
//!
//! Clients and server share the machine's cores: on a small machine the clients' own work
//! (formatting, parsing answers) is part of every figure. The server's write path and
//! connection threads, and the store's syncer, run `--write-nice` (default
//! [`packgraph_serve::DEFAULT_WRITE_NICE`]) below its query pool, as `packgraph serve
//! --write-nice` runs them; the clients run at the
//! process's own priority, the writers' load generator `--client-nice` (default 0) below
//! it (at 19 it stands for clients on other machines, which take no core the server wants).

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
use packgraph_serve::{lower_current_thread, lowered_store_options, Backend, ServeConfig, Server};

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
    /// Threads of the load generator driving the writers' connections (1 to --writers).
    #[arg(long, default_value_t = 1)]
    client_threads: usize,
    /// Threads of the server's runtime, which serves the connections (1 to 16).
    #[arg(long, default_value_t = 2)]
    io_threads: usize,
    /// How much lower the priority (nice increment, 0 to 19) of the server's write path
    /// and connection threads is than the query pool's.
    #[arg(long, default_value_t = packgraph_serve::DEFAULT_WRITE_NICE)]
    write_nice: i32,
    /// How much lower the priority (nice increment, 0 to 19) of the load generator's writer
    /// threads is than the process's: at 19 they stand for clients on other machines, which
    /// take none of the server's cores when it has work.
    #[arg(long, default_value_t = 0)]
    client_nice: i32,
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

/// `packgraph ingest`'s loop on `store` for `duration`: edges per second. As `ingest` does
/// with the batches at hand, batches are appended in write groups of at most
/// [`INGEST_GROUP_BATCHES`] batches or [`INGEST_GROUP_OPS`] edges, each built from the
/// writer's graph under its lock ([`AppendGroup::append_merged_with`]): a snapshot per
/// batch would publish every one-edge batch as a version of its own.
///
/// [`AppendGroup::append_merged_with`]: packgraph::store::AppendGroup::append_merged_with
fn ingest<C: StoreLeaf>(
    store: &Store<C>,
    sync: SyncPolicy,
    batch: usize,
    duration: Duration,
    seed: u64,
) -> anyhow::Result<f64> {
    let n = store.snapshot().num_vertices() as u64;
    let mut rng = SplitMix64::new(seed, 11);
    let per_group = (INGEST_GROUP_OPS / batch.max(1)).clamp(1, INGEST_GROUP_BATCHES);
    let started = Instant::now();
    let (mut edges, mut last) = (0, 0);
    while started.elapsed() < duration {
        let mut text = String::new();
        for _ in 0..per_group {
            text.push_str(&edge_text(&mut rng, n, batch));
            text.push_str("commit\n");
        }
        let mut reader = UpdateReader::new(text.as_bytes(), "<bench>");
        let (appended, _) = store.append_group(|group| -> anyhow::Result<(u64, usize)> {
            let (mut seq, mut ops) = (0, 0);
            while let Some(parsed) = reader.next_batch()? {
                // Generated edges join vertices the graph has: nothing is unfit.
                (seq, _) = group.append_merged_with(|graph| {
                    build_update(graph, &parsed.ops, C::WEIGHTED)
                        .map_err(|e| packgraph::Error::invalid(e.value, e.reason))
                })?;
                ops += parsed.ops.len();
            }
            Ok((seq, ops))
        });
        let (seq, ops) = appended?;
        // As `ingest` does: under group commit it goes on and acknowledges what the syncs
        // covered; otherwise each group waits to be durable.
        if !matches!(sync, SyncPolicy::Group(_)) {
            store.wait_durable(seq)?;
        }
        last = seq;
        edges += ops;
    }
    store.wait_durable(last)?;
    Ok(edges as f64 / started.elapsed().as_secs_f64())
}

/// The most batches of one write group of the ingest loop, as `packgraph ingest`'s.
const INGEST_GROUP_BATCHES: usize = 4096;

/// The most edges of one write group of the ingest loop, as `packgraph ingest`'s.
const INGEST_GROUP_OPS: usize = 1 << 16;

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

/// Acknowledgement latencies of the connections whose seeds `seeds` gives, each keeping a
/// request of a batch of `batch` edges in flight until `stop`, from one thread
/// ([`post_concurrently`]).
fn write_until(
    addr: SocketAddr,
    n: u64,
    batch: usize,
    seeds: Vec<u64>,
    stop: &Arc<AtomicBool>,
) -> Vec<Duration> {
    let bodies: Vec<_> = seeds
        .into_iter()
        .map(|seed| {
            let mut rng = SplitMix64::new(seed, 13);
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
    group_seconds: f64,
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
            group_seconds: value("packgraph_write_group_seconds_sum"),
            requests: value("packgraph_update_apply_seconds_count"),
            sync_wait_seconds: value("packgraph_durable_wait_seconds_sum"),
            syncs: value("packgraph_durable_wait_seconds_count"),
            groups: value("packgraph_write_groups_total"),
        })
    }

    fn since(self, before: &Self) -> Self {
        Self {
            apply_seconds: self.apply_seconds - before.apply_seconds,
            group_seconds: self.group_seconds - before.group_seconds,
            requests: self.requests - before.requests,
            sync_wait_seconds: self.sync_wait_seconds - before.sync_wait_seconds,
            syncs: self.syncs - before.syncs,
            groups: self.groups - before.groups,
        }
    }

    fn apply_us(&self) -> f64 {
        self.apply_seconds / self.requests.max(1.0) * 1e6
    }

    fn group_us(&self) -> f64 {
        self.group_seconds / self.requests.max(1.0) * 1e6
    }

    fn sync_wait_ms(&self) -> f64 {
        self.sync_wait_seconds / self.syncs.max(1.0) * 1e3
    }

    fn requests_per_group(&self) -> f64 {
        self.requests / self.groups.max(1.0)
    }
}

/// CPU time this process's threads spent so far, in seconds, by role: from each thread's
/// `/proc/self/task/TID/schedstat` (its time on a CPU in nanoseconds, counted at every
/// switch rather than sampled at clock ticks) and its name.
#[derive(Debug, Default, Clone, Copy)]
struct ThreadCpu {
    /// The server's threads but the query pool: runtime, write path, syncer, the rest.
    server: f64,
    /// The query pool, which runs the readers' algorithms.
    queries: f64,
    /// The load generator: the writers' and readers' client threads.
    clients: f64,
}

impl ThreadCpu {
    /// The threads' CPU time now; `None` where `/proc` does not give it (not Linux). A
    /// thread that ends between its listing and its reading is left out.
    fn now() -> Option<Self> {
        let mut cpu = Self::default();
        for task in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
            let path = task.path();
            let (Ok(name), Ok(stat)) = (
                std::fs::read_to_string(path.join("comm")),
                std::fs::read_to_string(path.join("schedstat")),
            ) else {
                continue;
            };
            let Some(ns) = stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse::<u64>().ok())
            else {
                continue;
            };
            let seconds = ns as f64 * 1e-9;
            match name.trim_end() {
                n if n.starts_with("packgraph-query") => cpu.queries += seconds,
                n if n.starts_with("bench-") => cpu.clients += seconds,
                _ => cpu.server += seconds,
            }
        }
        Some(cpu)
    }

    fn since(self, before: &Self) -> Self {
        Self {
            server: self.server - before.server,
            queries: self.queries - before.queries,
            clients: self.clients - before.clients,
        }
    }
}

/// What one phase measured.
struct Phase {
    queries: Vec<Duration>,
    acks: Vec<Duration>,
    edges: u64,
    seconds: f64,
    /// CPU time of the threads during the phase, where known.
    cpu: Option<ThreadCpu>,
}

/// The writers of a phase: `clients` clients of `in_flight` connections each, driven by
/// `threads` threads running `nice` below the process.
#[derive(Debug, Clone, Copy)]
struct Writers {
    clients: usize,
    in_flight: usize,
    threads: usize,
    nice: i32,
}

impl Writers {
    /// The seeds of the connections each writer thread drives: client `w`'s connection `c`
    /// has seed `seed + 1000 + w * in_flight + c` whatever the thread count, and the
    /// clients are dealt to the threads in turn.
    fn seeds_per_thread(self, seed: u64) -> Vec<Vec<u64>> {
        let threads = self.threads.clamp(1, self.clients.max(1));
        let mut seeds = vec![Vec::new(); threads];
        for w in 0..self.clients {
            let first = seed + 1000 + (w * self.in_flight) as u64;
            seeds[w % threads].extend((0..self.in_flight as u64).map(|c| first + c));
        }
        seeds.retain(|s| !s.is_empty());
        seeds
    }
}

/// Runs `readers` readers and `writers` (batches of `batch`) for `duration`.
#[allow(
    clippy::too_many_arguments,
    reason = "one phase's settings, each a flag"
)]
fn phase(
    server: &Server,
    n: u64,
    readers: usize,
    writers: Writers,
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
    let writing: Vec<_> = writers
        .seeds_per_thread(seed)
        .into_iter()
        .map(|seeds| {
            let (addr, stop) = (server.addr(), Arc::clone(&stop));
            std::thread::Builder::new()
                .name("bench-writer".into())
                .spawn(move || {
                    lower_current_thread(writers.nice);
                    write_until(addr, n, batch, seeds, &stop)
                })
                .expect("a writer thread")
        })
        .collect();
    let cpu_before = ThreadCpu::now();
    let started = Instant::now();
    std::thread::sleep(duration);
    stop.store(true, Ordering::Relaxed);
    let cpu = ThreadCpu::now().zip(cpu_before).map(|(a, b)| a.since(&b));
    let mut result = Phase {
        queries: Vec::new(),
        acks: Vec::new(),
        edges: 0,
        seconds: 0.0,
        cpu,
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
    if !(1..=args.writers.max(1)).contains(&args.client_threads) {
        return Err(usage_error(format!(
            "--client-threads {}: must be 1 to --writers ({})",
            args.client_threads, args.writers
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
    if !(0..=19).contains(&args.client_nice) {
        return Err(usage_error(format!(
            "--client-nice {}: must be 0 to 19",
            args.client_nice
        )));
    }
    if !(0.1..=600.0).contains(&args.duration) {
        return Err(usage_error(format!(
            "--duration {}: must be 0.1 to 600 seconds",
            args.duration
        )));
    }
    let sync: SyncPolicy = args.sync.parse()?;
    // The store's own threads (the group-commit syncer) at the write path's priority, as
    // `packgraph serve --write-nice` runs them.
    let options = lowered_store_options(
        StoreOptions {
            sync,
            checkpoint_log_bytes: None,
            ..StoreOptions::default()
        },
        args.write_nice,
    );
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
    let no_writers = Writers {
        clients: 0,
        in_flight: 1,
        threads: 1,
        nice: 0,
    };
    let mut idle = phase(&server, n, args.readers, no_writers, 1, duration, seed).queries;
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
            Writers {
                clients: args.writers,
                in_flight: args.in_flight,
                threads: args.client_threads,
                nice: args.client_nice,
            },
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
        reporter.emit(record("http", "group_us", batch, times.group_us(), "us"))?;
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
        if let Some(cpu) = p.cpu {
            let per_request = |seconds: f64| seconds / (p.acks.len().max(1) as f64) * 1e6;
            let server_us = per_request(cpu.server);
            reporter.emit(record("http", "server_cpu_us", batch, server_us, "us"))?;
            let client_us = per_request(cpu.clients);
            reporter.emit(record("http", "client_cpu_us", batch, client_us, "us"))?;
            let query_us = per_request(cpu.queries);
            reporter.emit(record("http", "query_cpu_us", batch, query_us, "us"))?;
        }
        reporter.advance();
    }
    server.stop()?;
    reporter.finish();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every connection keeps its seed whatever the thread count, and no thread is idle.
    #[test]
    fn writer_threads_share_the_connections_and_keep_their_seeds() {
        let writers = |threads| Writers {
            clients: 3,
            in_flight: 2,
            threads,
            nice: 0,
        };
        let one = writers(1).seeds_per_thread(10);
        assert_eq!(one, [vec![1010, 1011, 1012, 1013, 1014, 1015]]);
        let two = writers(2).seeds_per_thread(10);
        assert_eq!(two, [vec![1010, 1011, 1014, 1015], vec![1012, 1013]]);
        assert_eq!(writers(8).seeds_per_thread(10).len(), 3);
        let none = Writers {
            clients: 0,
            ..writers(1)
        };
        assert!(none.seeds_per_thread(10).is_empty());
    }
}
