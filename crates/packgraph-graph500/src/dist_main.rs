//! `packgraph-dist`: the engine's analytics over processes.
//!
//! `mpirun -n P packgraph-dist run ALGORITHM --input FILE [--directed] [--weighted]
//! [--source ID] [--updates FILE] [-o OUT]` loads the graph in parallel, applies the update
//! batches, runs the algorithm and writes `id value` lines in the file's ids, as
//! `packgraph run` does. Built with the cargo feature `mpi` it runs under MPI; without it, on
//! one process only. Rank 0 prints the results, the summary and every error; every process
//! exits with the same code: 0, 2 for bad arguments or input, 3 for a failed run.

#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use packgraph::algo::AlgorithmKind;
use packgraph_graph500::bfs::Compression;
use packgraph_graph500::comm::{Comm, Group};
use packgraph_graph500::dist::load::LoadOptions;
use packgraph_graph500::dist::output::write;
use packgraph_graph500::dist::run::{run, RunConfig, Stats};
use packgraph_graph500::dist::DistError;

/// packgraph's analytics on a graph spread over MPI processes.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run one algorithm (bfs, pagerank, wcc, sssp, cdlp, lcc) as `packgraph run` does.
    Run(RunArgs),
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// The algorithm: bfs, pagerank, wcc, sssp, cdlp or lcc.
    #[arg(value_name = "ALGORITHM")]
    algorithm: String,
    /// The graph: a text edge list (`u v [weight]` lines) or a Graphalytics dataset (its .v
    /// or .e file, or their prefix).
    #[arg(long, short, value_name = "FILE")]
    input: PathBuf,
    /// Edges are directed (undirected otherwise, unless a dataset's properties say).
    #[arg(long)]
    directed: bool,
    /// Require edge weights in the input.
    #[arg(long)]
    weighted: bool,
    /// Source vertex of bfs and sssp, by its id in the input (default: the smallest id).
    #[arg(long, value_name = "ID")]
    source: Option<String>,
    /// Update batches (`+ u v [w]`, `- u v`, `commit`) to apply before the algorithm.
    #[arg(long, value_name = "FILE")]
    updates: Option<PathBuf>,
    /// Iterations of pagerank (default 20) and cdlp (default 10).
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// PageRank damping factor, in [0, 1].
    #[arg(long, default_value_t = 0.85, value_name = "D")]
    damping: f64,
    /// Bit-pack BFS frontier messages: on, off, or auto (on when processes span hosts).
    #[arg(long, value_enum, default_value_t = Compression::Auto)]
    compression: Compression,
    /// Threads per process (default: the cores over the processes on this host).
    #[arg(long)]
    threads: Option<usize>,
    /// Write the results here instead of to stdout.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the summary as JSON, with each process's bytes sent per phase.
    #[arg(long)]
    json: bool,
}

/// Threads per process: `--threads`, else the cores shared by the processes on this host.
fn threads(args: &RunArgs) -> usize {
    args.threads.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let local = ["OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
            .iter()
            .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
            .unwrap_or(1);
        (cores / local.max(1)).max(1)
    })
}

fn config(args: &RunArgs, comm: &dyn Comm) -> Result<RunConfig, DistError> {
    let algorithm: AlgorithmKind = args
        .algorithm
        .parse()
        .map_err(|e: packgraph::Error| DistError::Usage(e.to_string()))?;
    Ok(RunConfig {
        algorithm,
        load: LoadOptions {
            path: args.input.clone(),
            directed: args.directed.then_some(true),
            weighted: args.weighted,
        },
        source: args.source.clone(),
        updates: args.updates.clone(),
        iterations: args.iterations,
        damping: args.damping,
        pack: match args.compression {
            Compression::On => true,
            Compression::Off => false,
            Compression::Auto => !comm.single_host(),
        },
    })
}

/// Runs and prints from rank 0; the error every process returns.
fn execute(comm: &dyn Comm, args: &RunArgs) -> Result<(), DistError> {
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(threads(args))
        .build_global();
    let config = config(args, comm)?;
    let start = std::time::Instant::now();
    let (result, stats) = run(comm, &config)?;
    let seconds = start.elapsed().as_secs_f64();
    let all = comm.allgather(
        Group::World,
        &serde_json::to_vec(&stats).unwrap_or_default(),
    );
    let written = match &result {
        Some((ids, output)) => write(ids, output, args.output.as_deref()),
        None => Ok(()),
    };
    packgraph_graph500::dist::agree(comm, written)?;
    if comm.rank() == 0 {
        let per_rank: Vec<Stats> = (0..all.parts())
            .filter_map(|k| serde_json::from_slice(all.part(k)).ok())
            .collect();
        summary(args, &config, &per_rank, seconds);
    }
    Ok(())
}

fn summary(args: &RunArgs, config: &RunConfig, per_rank: &[Stats], seconds: f64) {
    let mut err = std::io::stderr().lock();
    if args.json {
        let json = serde_json::json!({
            "algorithm": config.algorithm.name(),
            "input": args.input.display().to_string(),
            "processes": per_rank.len(),
            "compression": config.pack,
            "seconds": seconds,
            "ranks": per_rank,
        });
        let _ = writeln!(err, "{json}");
        return;
    }
    let sum = |f: fn(&Stats) -> u64| per_rank.iter().map(f).sum::<u64>();
    let slowest = |f: fn(&Stats) -> f64| per_rank.iter().map(f).fold(0.0, f64::max);
    let _ = writeln!(
        err,
        "{} on {} over {} processes ({} vertices, {} stored arcs): load {:.3} s, {} {:.3} s, total {:.3} s",
        config.algorithm.name(),
        args.input.display(),
        per_rank.len(),
        sum(|s| s.owned),
        sum(|s| s.arcs),
        slowest(|s| s.load_seconds),
        config.algorithm.name(),
        slowest(|s| s.algorithm_seconds),
        seconds,
    );
    let _ = writeln!(
        err,
        "bytes sent: load {}, updates {}, {} {}, output {}",
        sum(|s| s.load_bytes),
        sum(|s| s.update_bytes),
        config.algorithm.name(),
        sum(|s| s.algorithm_bytes),
        sum(|s| s.output_bytes),
    );
}

/// Parses the arguments (every process parses the same ones); rank 0 prints help and
/// errors.
fn parse(lead: bool) -> Result<Cli, ExitCode> {
    Cli::try_parse().map_err(|e| {
        if lead {
            let _ = e.print();
        }
        if e.use_stderr() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        }
    })
}

fn finish(lead: bool, outcome: Result<(), DistError>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if lead {
                eprintln!("error: {e}");
            }
            ExitCode::from(e.exit_code())
        }
    }
}

#[cfg(feature = "mpi")]
fn run_process() -> ExitCode {
    use mpi::traits::Communicator;
    use packgraph_graph500::grid::Grid;
    use packgraph_graph500::mpi_comm::MpiComm;

    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI could not be initialized");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let lead = world.rank() == 0;
    let cli = match parse(lead) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    let grid = Grid {
        rows: world.size() as usize,
        cols: 1,
    };
    let comm = MpiComm::new(world, grid);
    let Command::Run(args) = &cli.command;
    finish(lead, execute(&comm, args))
}

#[cfg(not(feature = "mpi"))]
fn run_process() -> ExitCode {
    use packgraph_graph500::comm::SelfComm;

    let launched = packgraph_graph500::comm::launched_processes();
    let cli = match parse(true) {
        Ok(cli) => cli,
        Err(code) => return code,
    };
    if launched > 1 {
        eprintln!(
            "error: packgraph-dist was built without MPI and runs on one process only, \
             but was started as one of {launched}; rebuild with `--features mpi`"
        );
        return ExitCode::from(2);
    }
    let Command::Run(args) = &cli.command;
    finish(true, execute(&SelfComm, args))
}

fn main() -> ExitCode {
    // Before any graph work: a CPU without what the build uses gets an error, not SIGILL.
    if let Err(error) = packgraph::cpu::check() {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    run_process()
}
