//! `packgraph run ALGO`: one algorithm on a graph file, results as Graphalytics `id value`
//! lines in the file's own vertex ids, a timing summary on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use packgraph::algo::{self, UNREACHED};
use packgraph::graph::{AnyGraph, GraphRead, VertexId, WeightedGraphRead};
use packgraph::io::graphalytics::write_output;
use packgraph::io::Dataset;
use serde::Serialize;
use serde_json::{json, Value};

use crate::files::{read_input, vertex};
use crate::input::{self, InputArgs};
use crate::UsageError;

/// The value Graphalytics writes for a vertex BFS does not reach.
const GRAPHALYTICS_UNREACHED: &str = "9223372036854775807";

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
enum Algorithm {
    /// Breadth-first search: hops from --source (unreached: 9223372036854775807).
    Bfs,
    /// PageRank (Graphalytics definition): --iterations, --damping.
    Pagerank,
    /// Weakly connected components: a component label per vertex.
    Wcc,
    /// Community detection by label propagation: --iterations.
    Cdlp,
    /// Local clustering coefficient.
    Lcc,
    /// Single-source shortest paths by edge weight from --source (unreached: Infinity).
    Sssp,
    /// Betweenness centrality contributions of --source (Brandes).
    Bc,
    /// Maximal independent set: 1 for members, 0 otherwise (--seed).
    Mis,
    /// Vertices within --hops of --source: the hop count, or 9223372036854775807.
    Khop,
    /// Triangles through each vertex.
    Tc,
    /// Core number of each vertex (k-core decomposition).
    Kcore,
}

/// Arguments of `packgraph run`.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The algorithm to run.
    #[arg(value_enum)]
    algorithm: Algorithm,
    #[command(flatten)]
    input: InputArgs,
    /// Require edge weights in the input (an error if it has no weight column).
    #[arg(long)]
    weighted: bool,
    /// Source vertex for bfs, sssp, bc and khop, by its id in the input (default: the
    /// smallest id).
    #[arg(long, value_name = "ID")]
    source: Option<u64>,
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
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the results here instead of to stdout.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Print the summary on stderr as one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Per-vertex results.
enum Values {
    /// Hop counts; `UNREACHED` is written as Graphalytics' unreachable value.
    Hops(Vec<u32>),
    Reals(Vec<f64>),
    /// Vertex labels, written as the label vertex's external id.
    Labels(Vec<VertexId>),
    Counts(Vec<u64>),
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
    result: Value,
}

pub(crate) fn run(args: &RunArgs, threads: usize) -> anyhow::Result<()> {
    let start = Instant::now();
    if !(0.0..=1.0).contains(&args.damping) {
        return Err(UsageError(format!("--damping {}: must be in [0, 1]", args.damping)).into());
    }
    let (data, load_time) = read_input(&args.input)?;
    if args.weighted && !data.graph.is_weighted() {
        return Err(UsageError(format!(
            "--weighted: {} has no edge weights",
            args.input.input.display()
        ))
        .into());
    }
    if data.graph.num_vertices() == 0 {
        return Err(UsageError(format!("{} has no vertices", args.input.input.display())).into());
    }
    let source = match args.source {
        Some(id) => vertex(&data, id, "--source")?,
        None => 0,
    };
    let bar = input::spinner(&format!("{:?}", args.algorithm).to_lowercase());
    data.graph.build_index();
    let algorithm_start = Instant::now();
    let (values, result) = match &data.graph {
        AnyGraph::Unweighted(g) => compute(g, args, source, &data)?,
        AnyGraph::Weighted(g) => compute(g, args, source, &data)?,
    };
    let algorithm_time = algorithm_start.elapsed();
    bar.set_message("writing results");
    let write_start = Instant::now();
    write_values(&data, &values, args)?;
    let write_time = write_start.elapsed();
    bar.finish_and_clear();
    let summary = Summary {
        algorithm: format!("{:?}", args.algorithm).to_lowercase(),
        input: args.input.input.display().to_string(),
        vertices: data.graph.num_vertices(),
        edges: data.graph.num_edges(),
        directed: data.graph.is_directed(),
        weighted: data.graph.is_weighted(),
        threads,
        load_seconds: load_time.as_secs_f64(),
        algorithm_seconds: algorithm_time.as_secs_f64(),
        write_seconds: write_time.as_secs_f64(),
        total_seconds: start.elapsed().as_secs_f64(),
        result,
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
    let mut err = std::io::stderr().lock();
    if json {
        writeln!(err, "{}", serde_json::to_string(summary)?)?;
        return Ok(());
    }
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
    Ok(())
}

fn compute<G: GraphRead + WeightedGraphRead>(
    graph: &G,
    args: &RunArgs,
    source: VertexId,
    data: &Dataset,
) -> anyhow::Result<(Values, Value)> {
    let source_id = data.ids().external(source);
    Ok(match args.algorithm {
        Algorithm::Bfs => {
            let tree = algo::bfs(graph, source)?;
            let reached = tree.depths.iter().filter(|&&d| d != UNREACHED).count();
            let depth = tree
                .depths
                .iter()
                .filter(|&&d| d != UNREACHED)
                .max()
                .copied()
                .unwrap_or(0);
            (
                Values::Hops(tree.depths),
                json!({"source": source_id, "reached": reached, "depth": depth}),
            )
        }
        Algorithm::Pagerank => {
            let iterations = args.iterations.unwrap_or(20);
            let ranks = algo::pagerank(graph, args.damping, iterations);
            (
                Values::Reals(ranks),
                json!({"iterations": iterations, "damping": args.damping}),
            )
        }
        Algorithm::Wcc => {
            let labels = algo::wcc(graph);
            let mut roots = labels.clone();
            roots.sort_unstable();
            roots.dedup();
            (Values::Labels(labels), json!({"components": roots.len()}))
        }
        Algorithm::Cdlp => {
            let iterations = args.iterations.unwrap_or(10);
            let labels = algo::cdlp(graph, iterations);
            let mut distinct = labels.clone();
            distinct.sort_unstable();
            distinct.dedup();
            (
                Values::Labels(labels),
                json!({"iterations": iterations, "communities": distinct.len()}),
            )
        }
        Algorithm::Lcc => {
            let values = algo::lcc(graph);
            let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
            (Values::Reals(values), json!({"mean": mean}))
        }
        Algorithm::Sssp => {
            let distances = algo::sssp(graph, source)?;
            let reached = distances.iter().filter(|d| d.is_finite()).count();
            (
                Values::Reals(distances),
                json!({"source": source_id, "reached": reached}),
            )
        }
        Algorithm::Bc => {
            let values = algo::betweenness(graph, source)?;
            (Values::Reals(values), json!({"source": source_id}))
        }
        Algorithm::Mis => {
            let members = algo::mis(graph, args.seed);
            let size = members.iter().filter(|&&m| m).count();
            (
                Values::Counts(members.into_iter().map(u64::from).collect()),
                json!({"size": size, "seed": args.seed}),
            )
        }
        Algorithm::Khop => {
            let hops = algo::khop(graph, source, args.hops)?;
            let reached = hops.iter().filter(|&&d| d != UNREACHED).count();
            (
                Values::Hops(hops),
                json!({"source": source_id, "hops": args.hops, "reached": reached}),
            )
        }
        Algorithm::Tc => {
            let counts = algo::triangles_per_vertex(graph);
            let triangles = counts.iter().sum::<u64>() / 3;
            (Values::Counts(counts), json!({"triangles": triangles}))
        }
        Algorithm::Kcore => {
            let cores = algo::kcore(graph);
            let max = cores.iter().max().copied().unwrap_or(0);
            (
                Values::Counts(cores.into_iter().map(u64::from).collect()),
                json!({"max_core": max}),
            )
        }
    })
}

fn write_values(data: &Dataset, values: &Values, args: &RunArgs) -> anyhow::Result<()> {
    let ids = data.ids();
    let format = |v: VertexId, out: &mut Vec<u8>| {
        let v = v as usize;
        let _ = match values {
            Values::Hops(hops) if hops[v] == UNREACHED => {
                out.extend_from_slice(GRAPHALYTICS_UNREACHED.as_bytes());
                Ok(())
            }
            Values::Hops(hops) => write!(out, "{}", hops[v]),
            Values::Reals(reals) if reals[v] == f64::INFINITY => {
                out.extend_from_slice(b"Infinity");
                Ok(())
            }
            Values::Reals(reals) => {
                let x = reals[v];
                if x != 0.0 && !(1e-4..1e15).contains(&x.abs()) {
                    write!(out, "{x:e}")
                } else {
                    write!(out, "{x}")
                }
            }
            Values::Labels(labels) => write!(out, "{}", ids.external(labels[v])),
            Values::Counts(counts) => write!(out, "{}", counts[v]),
        };
    };
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
            write_output(ids, format, &mut out)
                .and_then(|()| out.flush())
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        None => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
            match write_output(ids, format, &mut out).and_then(|()| out.flush()) {
                Ok(()) => {}
                // A closed pipe (`| head`) is the reader's choice, not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
    Ok(())
}
