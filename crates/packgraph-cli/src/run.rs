//! `packgraph run ALGO`: one algorithm on a graph file, results as Graphalytics `id value`
//! lines in the file's own vertex ids (stdout or `-o`), a timing summary on stderr (or as
//! JSON on stdout with `--json`, which then needs `-o` for the results).

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::Args;
use packgraph::algo::{AlgoOutput, Algorithm, AlgorithmKind, Stat};
use packgraph::io::{Dataset, ExternalId};
use serde::Serialize;
use serde_json::{json, Value};

use crate::files::{read_input, vertex};
use crate::input::{self, InputArgs};
use crate::reorder::{self, OrderArgs};
use crate::UsageError;

/// Arguments of `packgraph run`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The algorithm to run (its other name, where it has one, works too).
    #[arg(value_parser = algorithm_parser(), value_name = "ALGORITHM")]
    algorithm: AlgorithmKind,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    order: OrderArgs,
    /// Require edge weights in the input (an error if it has no weight column).
    #[arg(long)]
    weighted: bool,
    /// Source vertex for bfs, sssp, bc and khop, by its id in the input: an integer, or a
    /// name in a graph whose vertices are named (default: the smallest id).
    #[arg(long, value_name = "ID")]
    source: Option<String>,
    /// Iterations of pagerank (default 20) and cdlp (default 10).
    #[arg(long, value_name = "N")]
    iterations: Option<usize>,
    /// PageRank damping factor, in [0, 1].
    #[arg(long, default_value_t = 0.85, value_name = "D")]
    damping: f64,
    /// Hop limit of khop.
    #[arg(long, default_value_t = 2, value_name = "K")]
    hops: u32,
    /// Seed of mis.
    #[arg(long, default_value_t = packgraph::algo::Algorithm::new(AlgorithmKind::Mis).seed)]
    seed: u64,
    /// Write the results here instead of to stdout.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout instead of text on stderr (the
    /// results then need -o FILE).
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Summary {
    algorithm: String,
    input: String,
    vertices: usize,
    edges: usize,
    directed: bool,
    weighted: bool,
    threads: usize,
    load_seconds: f64,
    algorithm_seconds: f64,
    write_seconds: f64,
    total_seconds: f64,
    /// Bytes the graph takes in memory, its vertex index included.
    memory_bytes: usize,
    result: Value,
}

pub(crate) fn run(args: &RunArgs, threads: usize) -> anyhow::Result<()> {
    let start = Instant::now();
    let algorithm = Algorithm {
        kind: args.algorithm,
        source: 0,
        iterations: args.iterations,
        damping: args.damping,
        hops: args.hops,
        seed: args.seed,
    };
    if algorithm.validate().is_err() {
        return Err(UsageError(format!("--damping {}: must be in [0, 1]", args.damping)).into());
    }
    match &args.output {
        Some(path) => input::check_writable(path)?,
        None if args.json => {
            return Err(UsageError(
                "--json prints the summary on stdout; send the results to a file with -o FILE"
                    .into(),
            )
            .into())
        }
        None => {}
    }
    let order = args.order.order()?;
    let (data, load_time) = read_input(&args.input)?;
    let (data, load_time) = match order {
        Some(order) => {
            let (data, reorder_time) = reorder::apply(data, &order)?;
            (data, load_time + reorder_time)
        }
        None => (data, load_time),
    };
    if args.weighted && !data.graph.is_weighted() {
        return Err(UsageError(format!(
            "--weighted: {} has no edge weights",
            args.input.path().display()
        ))
        .into());
    }
    if data.graph.num_vertices() == 0 {
        return Err(UsageError(format!("{} has no vertices", args.input.path().display())).into());
    }
    let algorithm = Algorithm {
        source: match &args.source {
            Some(id) => vertex(&data, id, "--source")?,
            None => smallest_id(&data),
        },
        ..algorithm
    };
    let bar = input::spinner(args.algorithm.name());
    data.graph.build_index();
    let algorithm_start = Instant::now();
    let output = algorithm.run_any(&data.graph)?;
    let algorithm_time = algorithm_start.elapsed();
    bar.set_message("writing results");
    let write_start = Instant::now();
    write_output(&data, &output, args)?;
    let write_time = write_start.elapsed();
    bar.finish_and_clear();
    let summary = Summary {
        algorithm: args.algorithm.name().to_string(),
        input: args.input.path().display().to_string(),
        vertices: data.graph.num_vertices(),
        edges: data.graph.num_edges(),
        directed: data.graph.is_directed(),
        weighted: data.graph.is_weighted(),
        threads,
        load_seconds: load_time.as_secs_f64(),
        algorithm_seconds: algorithm_time.as_secs_f64(),
        write_seconds: write_time.as_secs_f64(),
        total_seconds: start.elapsed().as_secs_f64(),
        memory_bytes: data.graph.size_in_bytes(),
        result: summary_json(&output, &data),
    };
    print_summary(&summary, args.json, load_time, algorithm_time, write_time)
}

fn print_summary(
    summary: &Summary,
    json: bool,
    load: Duration,
    algorithm: Duration,
    write: Duration,
) -> anyhow::Result<()> {
    if json {
        return crate::files::print_stdout(&format!("{}\n", serde_json::to_string(summary)?));
    }
    let mut err = std::io::stderr().lock();
    let details: Vec<String> = summary
        .result
        .as_object()
        .map(|o| o.iter().map(|(k, v)| format!("{k} {v}")).collect())
        .unwrap_or_default();
    writeln!(
        err,
        "{} on {} ({} vertices, {} edges, {}{}): {}",
        summary.algorithm,
        summary.input,
        summary.vertices,
        summary.edges,
        if summary.directed {
            "directed"
        } else {
            "undirected"
        },
        if summary.weighted { ", weighted" } else { "" },
        details.join(", ")
    )?;
    writeln!(
        err,
        "time: load {:.3} s, {} {:.3} s, write {:.3} s, total {:.3} s ({} threads)",
        load.as_secs_f64(),
        summary.algorithm,
        algorithm.as_secs_f64(),
        write.as_secs_f64(),
        summary.total_seconds,
        summary.threads
    )?;
    writeln!(
        err,
        "memory: {} for the graph ({:.2} bytes per edge, index included)",
        crate::files::human_bytes(summary.memory_bytes as u64),
        summary.memory_bytes as f64 / summary.edges.max(1) as f64,
    )?;
    Ok(())
}

/// The vertex with the smallest id (the default source): vertex 0 of a file's graph, which
/// readers number by id, but not of a reordered one.
fn smallest_id(data: &Dataset) -> packgraph::graph::VertexId {
    let ids = data.ids();
    if let Some(ints) = ids.ints() {
        return ints
            .iter()
            .enumerate()
            .min_by_key(|&(_, id)| id)
            .map_or(0, |(v, _)| v as packgraph::graph::VertexId);
    }
    ids.iter()
        .enumerate()
        .min_by(|a, b| a.1.cmp(&b.1))
        .map_or(0, |(v, _)| v as packgraph::graph::VertexId)
}

/// The output's summary figures as a JSON object, vertices by their external ids.
fn summary_json(output: &AlgoOutput, data: &Dataset) -> Value {
    let figures = output.summary.iter().map(|&(name, stat)| {
        let value = match stat {
            Stat::Count(n) => json!(n),
            Stat::Real(x) => json!(x),
            Stat::Vertex(v) => match data.ids().external_id(v) {
                Some(ExternalId::Int(id)) => json!(id),
                Some(ExternalId::Name(name)) => json!(&*name),
                None => Value::Null,
            },
        };
        (name.to_string(), value)
    });
    Value::Object(figures.collect())
}

/// The registry's algorithms as the argument's possible values, each with its summary,
/// then their other names (accepted alike, listed in the help and in suggestions).
fn algorithm_parser() -> impl TypedValueParser<Value = AlgorithmKind> {
    let names = AlgorithmKind::ALL.into_iter().map(|kind| {
        let params: Vec<String> = kind
            .parameters()
            .iter()
            .map(|p| format!("--{} (default {})", p.name, p.default))
            .collect();
        let aliases = match kind.aliases() {
            [] => String::new(),
            names => format!(" [also: {}]", names.join(", ")),
        };
        let help = match params.is_empty() {
            true => format!("{}{aliases}", kind.summary()),
            false => format!("{}; {}{aliases}", kind.summary(), params.join(", ")),
        };
        PossibleValue::new(kind.name()).help(help)
    });
    let aliases = AlgorithmKind::ALL.into_iter().flat_map(|kind| {
        kind.aliases()
            .iter()
            .map(move |alias| PossibleValue::new(*alias).help(format!("the same as {kind}")))
    });
    PossibleValuesParser::new(names.chain(aliases).collect::<Vec<_>>())
        .map(|name| name.parse().expect("possible values are registry names"))
}

fn write_output(data: &Dataset, output: &AlgoOutput, args: &RunArgs) -> anyhow::Result<()> {
    let ids = data.ids();
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            output
                .write_graphalytics(ids, &mut out)
                .and_then(|()| out.flush())
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
            match output
                .write_graphalytics(ids, &mut out)
                .and_then(|()| out.flush())
            {
                Ok(()) => {}
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
