//! `packgraph serve`: one process holds a data directory's graph and serves it over HTTP
//! (`packgraph-serve`): durable updates, queries on snapshots, checkpoints, metrics.
//!
//! Prints `listening on http://ADDR` on stdout once it accepts requests; SIGINT or SIGTERM
//! stops accepting, lets requests in flight finish, syncs the log and exits 0.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use packgraph::graph::{AnyGraph, Graph, WeightedGraph};
use packgraph::io::generate;
use packgraph::store::{is_store, AnyStore};
use packgraph_serve::{lowered_store_options, Backend, ServeConfig};
use rayon::ThreadPool;

use crate::durable::{open_store, SyncArgs};
use crate::input::{parse_count, BadInput};
use crate::UsageError;

/// Arguments of `packgraph serve`.
#[derive(Args, Debug)]
pub(crate) struct ServeArgs {
    /// The data directory to serve (its writer lock is held while serving).
    #[arg(
        value_name = "DIR",
        required_unless_present = "demo",
        conflicts_with = "demo"
    )]
    dir: Option<PathBuf>,
    /// Make DIR, empty, if it holds no data directory yet.
    #[arg(long)]
    create: bool,
    /// With --create: the new graph's edges are directed.
    #[arg(long)]
    directed: bool,
    /// With --create: the new graph's edges carry weights.
    #[arg(long)]
    weighted: bool,
    /// The address to listen on; port 0 picks a free one (printed). An address other than
    /// loopback needs --token-file.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:7700")]
    listen: SocketAddr,
    /// A file holding the bearer token every request must send
    /// (`Authorization: Bearer TOKEN`); surrounding whitespace is ignored.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    #[command(flatten)]
    sync: SyncArgs,
    /// Write a checkpoint in the background once this many bytes of log were written since
    /// the last one (0: only on POST /checkpoint). Default: 256 MiB.
    #[arg(long, value_name = "BYTES", value_parser = parse_count)]
    checkpoint_every: Option<usize>,
    /// Serve a generated Kronecker graph from memory instead of a directory (updates are
    /// lost on exit).
    #[arg(long)]
    demo: bool,
    /// Scale of the --demo graph (2^scale vertices, 16 · 2^scale edges).
    #[arg(long, default_value_t = 18, requires = "demo")]
    scale: u32,
    /// The largest request body taken, in bytes (larger: 413).
    #[arg(long, value_name = "BYTES", default_value = "67108864", value_parser = parse_count)]
    max_body_bytes: usize,
    /// The most operations one update batch may hold.
    #[arg(long, value_name = "N", default_value_t = packgraph::io::updates::DEFAULT_MAX_BATCH_OPS)]
    max_batch_ops: usize,
    /// Queries running at once; more are refused with 503 and Retry-After.
    #[arg(long, value_name = "N", default_value_t = 4)]
    max_queries: usize,
    /// Seconds a query may run before it is cancelled and answered 504.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_seconds)]
    query_timeout: f64,
    /// Seconds a connection may wait between requests before it is closed.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_seconds)]
    idle_timeout: f64,
    /// Queries first: run the threads that take updates and serve connections, and the
    /// store's syncer, this much lower in priority (a nice increment, 0 to 19) than the
    /// algorithms. 19 keeps a BFS near its idle speed while writes flow, and acknowledges
    /// fewer writes while queries run (see the README's Serving figures).
    #[arg(long, value_name = "N", default_value_t = packgraph_serve::DEFAULT_WRITE_NICE,
          value_parser = clap::value_parser!(i32).range(0..=19))]
    write_nice: i32,
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= 86_400.0 => Ok(s),
        _ => Err(format!("{text:?}: must be seconds in (0, 86400]")),
    }
}

/// The token in `path`, trimmed. Its text is never printed.
fn read_token(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| UsageError(format!("--token-file {}: {e}", path.display())))?;
    Ok(text.trim().to_string())
}

/// The directory's store: opened, or created empty with --create.
fn open_or_create(dir: &Path, args: &ServeArgs) -> anyhow::Result<AnyStore> {
    let mut options = lowered_store_options(args.sync.options(), args.write_nice);
    if let Some(bytes) = args.checkpoint_every {
        options.checkpoint_log_bytes = (bytes > 0).then_some(bytes as u64);
    }
    if is_store(dir) {
        let store = open_store(dir, options)?;
        let g = store.graph();
        if args.create && (args.directed != g.is_directed() || args.weighted != g.is_weighted()) {
            return Err(UsageError(format!(
                "{}: holds a {} {} graph already; leave out --directed/--weighted or serve another directory",
                dir.display(),
                if g.is_directed() { "directed" } else { "undirected" },
                if g.is_weighted() { "weighted" } else { "unweighted" },
            ))
            .into());
        }
        return Ok(store);
    }
    if !args.create {
        return Err(UsageError(format!(
            "{}: not a data directory (make one with `packgraph create`, or pass --create)",
            dir.display()
        ))
        .into());
    }
    let graph = match args.weighted {
        true => AnyGraph::Weighted(WeightedGraph::new_weighted(args.directed)),
        false => AnyGraph::Unweighted(Graph::new(args.directed)),
    };
    Ok(AnyStore::create(dir, options, graph).map_err(BadInput)?)
}

fn backend(args: &ServeArgs) -> anyhow::Result<(Backend, String)> {
    let Some(dir) = &args.dir else {
        let edges = generate::kronecker(args.scale, 16, 42);
        let graph = Graph::from_edges(1 << args.scale, &edges, false)?;
        let what = format!(
            "a generated Kronecker graph of scale {} (in memory)",
            args.scale
        );
        return Ok((Backend::memory(graph), what));
    };
    let store = open_or_create(dir, args)?;
    let what = format!("{} (sync {})", dir.display(), args.sync.sync);
    Ok((Backend::durable(store), what))
}

/// Resolves on SIGINT or SIGTERM.
async fn stop_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                tokio::select! {
                    () = interrupt => {}
                    _ = terminate.recv() => {}
                }
            }
            Err(_) => interrupt.await,
        }
    }
    #[cfg(not(unix))]
    interrupt.await;
}

pub(crate) fn run(args: &ServeArgs, pool: Arc<ThreadPool>) -> anyhow::Result<()> {
    let mut config = ServeConfig::new(args.listen);
    config.token = args.token_file.as_deref().map(read_token).transpose()?;
    config.max_body_bytes = args.max_body_bytes;
    config.max_batch_ops = args.max_batch_ops.max(1);
    config.max_queries = args.max_queries;
    config.query_timeout = Duration::from_secs_f64(args.query_timeout);
    config.idle_timeout = Duration::from_secs_f64(args.idle_timeout);
    config.write_nice = args.write_nice;
    config.check().map_err(|e| UsageError(e.to_string()))?;
    let (backend, what) = pool.install(|| backend(args))?;
    let backend = Arc::new(backend);
    config.pool = Some(pool);
    let runtime = packgraph_serve::runtime_with_nice(2, args.write_nice)
        .context("starting the server's threads")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .map_err(|e| UsageError(format!("--listen {}: {e}", args.listen)))?;
        let addr = listener.local_addr()?;
        let graph = backend.latest();
        eprintln!(
            "serving {what}: {} vertices, {} edges{}",
            graph.num_vertices(),
            graph.num_edges(),
            if config.token.is_some() {
                "; token required"
            } else {
                ""
            }
        );
        drop(graph);
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening on http://{addr}")?;
        out.flush()?;
        drop(out);
        packgraph_serve::serve(listener, Arc::clone(&backend), config, stop_signal()).await?;
        anyhow::Ok(())
    })?;
    drop(runtime);
    backend.sync().context("syncing the log at shutdown")?;
    eprintln!("stopped");
    Ok(())
}
