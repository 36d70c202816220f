//! `packgraph-graph500`: the Graph500 BFS benchmark.
//!
//! Run under MPI (`mpirun -n P packgraph-graph500 --scale S`) when built with the cargo
//! feature `mpi`; without it the binary runs on one process and refuses to run as one of
//! several. Rank 0 prints the output block (or JSON) and every error; every process exits
//! with the same code: 0, 1 when a validation fails (or a run breaks), 2 for bad arguments
//! or input.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use packgraph_graph500::benchmark::{self, Config, RunError};
use packgraph_graph500::bfs::Compression;
use packgraph_graph500::comm::Comm;
use packgraph_graph500::grid::Grid;
use packgraph_graph500::report::Report;

/// Graph500 breadth-first search on a process grid, with compressed frontier exchanges.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// log2 of the number of vertices of the Kronecker graph.
    #[arg(long, short, default_value_t = 16)]
    scale: u32,
    /// Edges per vertex.
    #[arg(long, short, default_value_t = 16)]
    edgefactor: usize,
    /// Number of searches (search keys).
    #[arg(long, default_value_t = 64)]
    roots: usize,
    /// Bit-pack frontier messages: on, off, or auto (on when the processes span hosts).
    #[arg(long, value_enum, default_value_t = Compression::Auto)]
    compression: Compression,
    /// Process grid RxC (rows × columns = processes); the squarest grid by default.
    #[arg(long, value_name = "RxC")]
    grid: Option<Grid>,
    /// Search this graph file (any format `packgraph run` reads) instead of a generated one.
    #[arg(long, short, value_name = "FILE")]
    input: Option<PathBuf>,
    /// Print the report as JSON (with per-level costs) instead of the output block.
    #[arg(long)]
    json: bool,
    /// Print progress and a per-level cost table to stderr.
    #[arg(long, short)]
    verbose: bool,
    /// Threads per process (default: the cores over the processes on this host).
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the generator and of the search-key sampler.
    #[arg(long, default_value_t = benchmark::DEFAULT_SEED)]
    seed: u64,
}

impl Args {
    fn config(&self) -> Config {
        Config {
            scale: self.scale,
            edge_factor: self.edgefactor,
            roots: self.roots,
            compression: self.compression,
            grid: self.grid,
            input: self.input.clone(),
            seed: self.seed,
        }
    }
}

/// Exit code for bad arguments or input.
const USAGE: u8 = 2;

/// Threads per process: `--threads`, else the cores shared by the processes on this host.
fn threads(args: &Args) -> usize {
    args.threads.unwrap_or_else(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let local = [
            "OMPI_COMM_WORLD_LOCAL_SIZE",
            "MPI_LOCALNRANKS",
            "SLURM_NTASKS_PER_NODE",
        ]
        .iter()
        .find_map(|k| std::env::var(k).ok()?.parse::<usize>().ok())
        .unwrap_or(1);
        (cores / local.max(1)).max(1)
    })
}

/// Runs the benchmark on `comm` and prints from rank 0; the exit code every process returns.
fn bench(comm: &dyn Comm, args: &Args) -> anyhow::Result<Result<(), (u8, String)>> {
    let config = args.config();
    let pack = match config.compression {
        Compression::On => true,
        Compression::Off => false,
        Compression::Auto => !comm.single_host(),
    };
    // The communicator is not `Sync`, so the run cannot move into a pool: size the global one.
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads(args))
        .build_global()
        .context("starting the thread pool")?;
    let lead = comm.rank() == 0;
    let verbose = args.verbose && lead;
    let mut progress = |line: &str| {
        if verbose {
            eprintln!("{line}");
        }
    };
    let report = match benchmark::run(comm, &config, pack, &mut progress) {
        Ok(report) => report,
        Err(error @ (RunError::Usage(_) | RunError::Input(_))) => {
            return Ok(Err((USAGE, error.to_string())))
        }
        Err(error) => {
            return Err(anyhow::Error::new(error).context(format!("rank {}", comm.rank())))
        }
    };
    if lead {
        print_report(&report, args)?;
    }
    if report.validation_errors.is_empty() {
        Ok(Ok(()))
    } else {
        let lines = report.validation_errors.join("\n  ");
        Ok(Err((1, format!("validation failed:\n  {lines}"))))
    }
}

fn print_report(report: &Report, args: &Args) -> anyhow::Result<()> {
    if args.verbose {
        eprint!("{}", report.levels_table());
    }
    let text = if args.json {
        serde_json::to_string_pretty(report).context("writing the JSON report")? + "\n"
    } else {
        report.output_block()
    };
    use std::io::Write;
    std::io::stdout()
        .write_all(text.as_bytes())
        .context("writing the report")
}

/// The exit code of a finished run; rank 0 prints the message.
fn finish(lead: bool, outcome: Result<(), (u8, String)>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            if lead {
                eprintln!("error: {message}");
            }
            ExitCode::from(code)
        }
    }
}

/// Parses the arguments (every process parses the same ones); rank 0 prints help and
/// errors.
fn parse(lead: bool) -> Result<Args, ExitCode> {
    Args::try_parse().map_err(|e| {
        if lead {
            let _ = e.print();
        }
        if e.use_stderr() {
            ExitCode::from(USAGE)
        } else {
            ExitCode::SUCCESS
        }
    })
}

#[cfg(feature = "mpi")]
fn run_process() -> ExitCode {
    use mpi::traits::Communicator;
    use packgraph_graph500::mpi_comm::MpiComm;

    let Some(universe) = mpi::initialize() else {
        eprintln!("error: MPI could not be initialized");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let lead = world.rank() == 0;
    let args = match parse(lead) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let grid = match args.config().plan(world.size() as usize) {
        Ok(grid) => grid,
        Err(error) => return finish(lead, Err((USAGE, error.to_string()))),
    };
    let comm = MpiComm::new(world, grid);
    match bench(&comm, &args) {
        Ok(outcome) => finish(lead, outcome),
        Err(error) => {
            // A broken run on one process: the others may wait in a collective, so stop all.
            eprintln!("error: {error:#}");
            comm.abort(1)
        }
    }
}

#[cfg(not(feature = "mpi"))]
fn run_process() -> ExitCode {
    use packgraph_graph500::comm::SelfComm;

    let launched = packgraph_graph500::comm::launched_processes();
    let args = match parse(true) {
        Ok(args) => args,
        Err(code) => return code,
    };
    if launched > 1 {
        eprintln!(
            "error: packgraph-graph500 was built without MPI and runs on one process only, \
             but was started as one of {launched}; rebuild with `--features mpi`"
        );
        return ExitCode::from(USAGE);
    }
    if let Err(error) = args.config().plan(1) {
        return finish(true, Err((USAGE, error.to_string())));
    }
    match bench(&SelfComm, &args) {
        Ok(outcome) => finish(true, outcome),
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    // Before any graph work: a CPU without what the build uses gets an error, not SIGILL.
    if let Err(error) = packgraph::cpu::check() {
        eprintln!("error: {error}");
        return ExitCode::FAILURE;
    }
    run_process()
}
