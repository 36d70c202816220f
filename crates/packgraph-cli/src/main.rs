//! `packgraph`: the command-line tool.
#![forbid(unsafe_code)]

mod bench;
mod durable;
mod files;
mod input;
mod reorder;
mod run;
mod serve;
mod stream;
mod upgrade;

use std::num::NonZeroUsize;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::{Parser, Subcommand};

/// mimalloc rather than the system allocator (the default feature `mimalloc`; see
/// `packgraph::allocator`).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: packgraph::allocator::MiMalloc = packgraph::allocator::MiMalloc;

/// packgraph: a dynamic-graph engine on a compressed packed memory array.
///
/// Start with `packgraph info FILE` on a graph you have (an edge list `u v [weight]`, gzip or
/// not, a Matrix Market file, a Graphalytics .v/.e pair or a .pgb snapshot), then
/// `packgraph run bfs --input FILE --source ID`. `packgraph generate kronecker -o g.txt`
/// makes a graph if you have none.
#[derive(Parser, Debug)]
#[command(name = "packgraph", version, about, long_about)]
struct Cli {
    /// Worker threads (default: RAYON_NUM_THREADS, else one per core).
    #[arg(long, global = true, value_name = "N")]
    threads: Option<NonZeroUsize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a graph algorithm on a file; results as `id value` lines (Graphalytics format)
    /// in the file's own vertex ids, timings on stderr.
    Run(run::RunArgs),
    /// Print a graph's size, degree statistics and memory use.
    Info(files::InfoArgs),
    /// Convert a graph file to another format (edge list, Matrix Market, Graphalytics, .pgb
    /// snapshot), chosen by the output's extension or --to.
    Convert(files::ConvertArgs),
    /// Generate a synthetic graph (Graph500 Kronecker, R-MAT, Erdős–Rényi, Watts–Strogatz,
    /// Barabási–Albert, 2-D mesh, k-ary tree) into a file.
    Generate(files::GenerateArgs),
    /// Renumber a graph's vertices by a layout order (hierarchical blocking, BFS, RCM,
    /// degree, random) and write it: traversals touch fewer cache lines and pages, and the
    /// compressed edges get smaller.
    Reorder(reorder::ReorderArgs),
    /// Run benchmarks against baselines measured in the same run: hands `NAME [OPTIONS]`
    /// to the packgraph-bench binary (`packgraph bench --help` lists the suites).
    #[command(disable_help_flag = true)]
    Bench(bench::BenchArgs),
    /// Stream edge updates into a graph while other threads query consistent snapshots of
    /// it; ends with update throughput and latency, query latency while updating and idle,
    /// versions and memory.
    Stream(stream::StreamArgs),
    /// Create a durable data directory, empty or holding a graph file: later commands take
    /// the directory wherever they take a graph file.
    Create(durable::CreateArgs),
    /// Apply update batches (`+ SRC DST [WEIGHT]`, `- SRC DST`, `commit`) to a data
    /// directory from a file or stdin; prints `acked SEQ LINE` once each batch is durable.
    Ingest(durable::IngestArgs),
    /// Write a checkpoint of a data directory now (incremental: unchanged parts are
    /// reused), so that opening it replays less log.
    Checkpoint(durable::CheckpointArgs),
    /// Check every checksum and reference of a data directory: exit 0 if clean, 3 if
    /// damaged (naming file and byte offset).
    Verify(durable::VerifyArgs),
    /// Open a data directory that `verify` calls damaged at the end of its log, cutting
    /// off the damaged last record with `--truncate-damaged-tail`; prints what is lost.
    Recover(durable::RecoverArgs),
    /// Serve a data directory over HTTP: updates (`POST /updates`, acknowledged once
    /// durable), queries on consistent snapshots (`GET /run/ALGORITHM`), pinned versions,
    /// checkpoints and metrics; prints `listening on http://ADDR` once it accepts requests.
    Serve(serve::ServeArgs),
    /// Rewrite a data directory of an earlier format version in this build's format.
    Upgrade(upgrade::UpgradeArgs),
}

fn main() -> ExitCode {
    if let Err(error) = packgraph::cpu::check() {
        let error = anyhow::Error::from(error);
        eprintln!("packgraph: error: {}", message(&error));
        return ExitCode::from(error_code(&error));
    }
    #[cfg(feature = "mimalloc")]
    packgraph::allocator::tune();
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("packgraph: error: {}", message(&error));
            ExitCode::from(error_code(&error))
        }
    }
}

/// The error and its causes joined by `: `, each said once: a cause whose text already
/// ends its wrapper's (a file error's `PATH: REASON` over the reason, `BadInput` over the
/// error it holds) is left out, where `{:#}` would print it twice.
fn message(error: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in error.chain() {
        let part = cause.to_string();
        if text.ends_with(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

/// 3 for a damaged data directory (`verify`), 2 for input the user can fix (bad values,
/// unreadable or malformed input, an output path that cannot be written, a data directory
/// another process holds), 1 for everything else.
fn error_code(error: &anyhow::Error) -> u8 {
    if error.chain().any(|cause| cause.is::<durable::Damaged>()) {
        return 3;
    }
    let fixable = |cause: &(dyn std::error::Error + 'static)| {
        cause.is::<UsageError>()
            || cause.is::<input::BadInput>()
            || cause
                .downcast_ref::<packgraph::Error>()
                .is_some_and(packgraph::Error::is_input_error)
            || cause.downcast_ref::<std::io::Error>().is_some_and(|e| {
                use std::io::ErrorKind::*;
                // A lock held by another writer, a file the user may not write.
                matches!(e.kind(), WouldBlock | PermissionDenied | ReadOnlyFilesystem)
            })
    };
    if error.chain().any(fixable) {
        2
    } else {
        1
    }
}

/// A bad argument value found after parsing (exit code 2).
#[derive(Debug)]
pub(crate) struct UsageError(pub(crate) String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

fn run(cli: Cli) -> anyhow::Result<()> {
    let threads = packgraph::io::thread_count(cli.threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting the worker threads")?;
    match cli.command {
        Command::Run(args) => pool.install(|| run::run(&args, threads)),
        Command::Info(args) => pool.install(|| files::info(&args)),
        Command::Convert(args) => pool.install(|| files::convert(&args)),
        Command::Generate(args) => pool.install(|| files::generate(&args)),
        Command::Reorder(args) => pool.install(|| reorder::reorder(&args)),
        Command::Bench(args) => bench::run(&args, cli.threads),
        Command::Stream(args) => stream::run(&args, &pool, threads),
        Command::Create(args) => pool.install(|| durable::create(&args)),
        Command::Ingest(args) => pool.install(|| durable::ingest(&args)),
        Command::Checkpoint(args) => pool.install(|| durable::checkpoint(&args)),
        Command::Verify(args) => pool.install(|| durable::verify(&args)),
        Command::Recover(args) => pool.install(|| durable::recover(&args)),
        Command::Serve(args) => serve::run(&args, Arc::new(pool)),
        Command::Upgrade(args) => pool.install(|| upgrade::upgrade(&args)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_error_says_its_reason_once() {
        let reason = "another process has this data directory open for writing";
        let locked = std::io::Error::new(std::io::ErrorKind::WouldBlock, reason);
        let error = packgraph::Error::io(std::path::Path::new("d/LOCK"), locked);
        let plain = anyhow::Error::new(error);
        assert_eq!(message(&plain), format!("d/LOCK: {reason}"));
        let wrapped = plain.context("opening d");
        assert_eq!(message(&wrapped), format!("opening d: d/LOCK: {reason}"));
    }
}
