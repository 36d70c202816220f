//! `packgraph-bench layout`: what a vertex order buys (Roy, "Memory Hierarchy Sensitive
//! Graph Layout", section 9.2, on packgraph's compressed arrays).
//!
//! For each graph family (Watts–Strogatz, Barabási–Albert, 2-D mesh, 4-ary tree, Graph500
//! Kronecker) and any input files, the graph is built in a random numbering (as a file's
//! ids would be) and then renumbered by each order: `random` (the baseline), `natural` (the
//! generator's numbering), `bfs`, `rcm`, `degree` and `hba`. Per order: BFS and SSSP
//! (uniform random weights, as in the paper) time, the median over seeded sources; PageRank
//! time; bytes per edge of the edge arrays; the mean log2 neighbour gap; and, for the
//! computed orders, the time to compute the order and relabel, also in BFS passes on the
//! random order. `ratio` is the value over the random order's in the same run (below 1 is
//! better).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use packgraph::algo::{bfs, pagerank, sssp};
use packgraph::graph::{Graph, GraphRead, VertexId, WeightedGraph};
use packgraph::io::generate;
use packgraph::layout::{mean_log2_gap, Levels, Order, Permutation};
use serde::Serialize;

use crate::args::{usage_error, CommonArgs};
use crate::report::{print_line, progress_bar};
use crate::workload::{any_edges_of, median, read_graph};
use crate::{parse_count, pick_sources, timed};

/// Options of `packgraph-bench layout`.
#[derive(Args, Debug, Clone)]
pub(crate) struct LayoutArgs {
    /// Vertices of the ws, ba and tree graphs (the mesh is the nearest square).
    #[arg(long, default_value = "1e6", value_parser = parse_count)]
    vertices: usize,
    /// log2 of the Kronecker graph's vertex count (0: no Kronecker graph).
    #[arg(long, default_value_t = 20)]
    kronecker_scale: u32,
    /// Families to run (comma-separated): ws, ba, mesh, tree, kronecker.
    #[arg(long, value_delimiter = ',', default_value = FAMILIES)]
    families: Vec<String>,
    /// Graph files to run too (comma-separated; any supported format).
    #[arg(long, value_delimiter = ',')]
    inputs: Vec<PathBuf>,
    /// Sources for BFS and SSSP (the median time is reported).
    #[arg(long, default_value_t = 3)]
    sources: usize,
    /// PageRank iterations.
    #[arg(long, default_value_t = 10)]
    iterations: usize,
    /// HBA block sizes, smallest first.
    #[arg(long, default_value = "64,1K,4K,2M")]
    levels: String,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

/// The generated families, all run by default.
const FAMILIES: &str = "ws,ba,mesh,tree,kronecker";

/// One measurement.
#[derive(Debug, Clone, Serialize)]
struct Row {
    bench: &'static str,
    graph: String,
    vertices: usize,
    edges: usize,
    order: &'static str,
    op: &'static str,
    value: f64,
    unit: &'static str,
    /// `value` over the random order's value for the same graph and op.
    ratio: f64,
    threads: usize,
}

/// A graph to measure: its name, vertex count, edges in its natural numbering.
struct Input {
    name: String,
    num_vertices: usize,
    edges: Vec<(VertexId, VertexId)>,
    directed: bool,
}

/// The orders measured, the baseline first.
const ORDERS: [&str; 6] = ["random", "natural", "bfs", "rcm", "degree", "hba"];

pub(crate) fn run(args: &LayoutArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.vertices = args.vertices.min(20_000);
        args.kronecker_scale = args.kronecker_scale.min(12);
        args.sources = args.sources.min(1);
        args.iterations = args.iterations.min(2);
    }
    let levels: Levels = args
        .levels
        .parse()
        .map_err(|e| usage_error(format!("--levels {}: {e}", args.levels)))?;
    if args.vertices < 4 || args.vertices > u32::MAX as usize {
        return Err(usage_error(format!(
            "--vertices {}: must be in 4..=4294967295",
            args.vertices
        )));
    }
    if args.kronecker_scale > 30 {
        return Err(usage_error(format!(
            "--kronecker-scale {}: must be in 0..=30",
            args.kronecker_scale
        )));
    }
    let mut inputs = Vec::new();
    for family in &args.families {
        inputs.extend(family_input(family, &args)?);
    }
    for path in &args.inputs {
        inputs.push(file_input(path)?);
    }
    let printer = Printer::new(args.common.json);
    let bar = progress_bar((inputs.len() * ORDERS.len()) as u64);
    for graph in &inputs {
        measure(graph, &args, &levels, threads, &printer, &bar)?;
    }
    bar.finish_and_clear();
    Ok(())
}

/// A generated family in its natural numbering.
fn family_input(family: &str, args: &LayoutArgs) -> anyhow::Result<Option<Input>> {
    let n = args.vertices;
    let (name, num_vertices, edges) = match family {
        "ws" => (
            "ws",
            n,
            generate::watts_strogatz(n, 6, 0.1, args.common.seed),
        ),
        "ba" => ("ba", n, generate::barabasi_albert(n, 4, args.common.seed)),
        "mesh" => {
            let side = (n as f64).sqrt().round().max(2.0) as usize;
            ("mesh", side * side, generate::mesh(side, side, false))
        }
        "tree" => ("tree4", n, generate::tree(n, 4)),
        "kronecker" if args.kronecker_scale == 0 => return Ok(None),
        "kronecker" => {
            let scale = args.kronecker_scale;
            let edges = generate::kronecker(scale, 16, args.common.seed);
            return Ok(Some(Input {
                name: format!("kronecker{scale}"),
                num_vertices: 1 << scale,
                edges,
                directed: false,
            }));
        }
        other => {
            return Err(usage_error(format!(
                "--families: unknown family {other:?}; one of ws, ba, mesh, tree, kronecker"
            )))
        }
    };
    Ok(Some(Input {
        name: name.to_string(),
        num_vertices,
        edges,
        directed: false,
    }))
}

/// A graph file's edges, in its own numbering (its "natural" order).
fn file_input(path: &std::path::Path) -> anyhow::Result<Input> {
    let graph = read_graph(path, None)?;
    let edges = any_edges_of(&graph);
    let name = path
        .file_name()
        .map_or("input".into(), |n| n.to_string_lossy().into_owned());
    Ok(Input {
        name: name.split('.').next().unwrap_or(&name).to_string(),
        num_vertices: graph.num_vertices(),
        edges,
        directed: graph.is_directed(),
    })
}

/// One graph in one numbering, unweighted and weighted, and the map from natural ids.
struct Numbered {
    graph: Graph,
    weighted: WeightedGraph,
    from_natural: Permutation,
    /// Bytes of the edge arrays, taken before any read builds the vertex index.
    edge_bytes: usize,
    /// Time to compute the order and relabel (for computed orders).
    reorder: Option<Duration>,
}

impl Numbered {
    fn new(
        graph: Graph,
        weighted: WeightedGraph,
        from_natural: Permutation,
        reorder: Option<Duration>,
    ) -> Self {
        let edge_bytes = graph.size_in_bytes();
        Self {
            graph,
            weighted,
            from_natural,
            edge_bytes,
            reorder,
        }
    }

    /// `base` renumbered by `order` (the order computed on `base`), timed.
    fn reordered(base: &Numbered, order: &Order) -> anyhow::Result<Self> {
        let ((perm, graph), time) = timed(|| {
            let perm = order.permutation(&base.graph);
            let graph = base.graph.relabel(&perm);
            (perm, graph)
        });
        Ok(Self::new(
            graph?,
            base.weighted.relabel(&perm)?,
            base.from_natural.then(&perm)?,
            Some(time),
        ))
    }
}

/// The figures of one numbering: `(op, value, unit)`.
fn figures(
    numbered: &Numbered,
    sources: &[VertexId],
    iterations: usize,
) -> anyhow::Result<Vec<(&'static str, f64, &'static str)>> {
    let edges = numbered.graph.num_edges().max(1) as f64;
    let gap = mean_log2_gap(&numbered.graph);
    numbered.weighted.build_index();
    let mut bfs_times = Vec::new();
    let mut sssp_times = Vec::new();
    for &s in sources {
        let source = numbered.from_natural.new_id(s);
        let (tree, time) = timed(|| bfs(&numbered.graph, source));
        tree?;
        bfs_times.push(time);
        let (distances, time) = timed(|| sssp(&numbered.weighted, source));
        distances?;
        sssp_times.push(time);
    }
    let (_, pagerank_time) = timed(|| pagerank(&numbered.graph, 0.85, iterations));
    let mut rows = vec![
        ("bfs", median(bfs_times).as_secs_f64(), "s"),
        ("sssp", median(sssp_times).as_secs_f64(), "s"),
        ("pagerank", pagerank_time.as_secs_f64(), "s"),
        ("bytes_per_edge", numbered.edge_bytes as f64 / edges, "B"),
        ("log2_gap", gap, "bits"),
    ];
    if let Some(time) = numbered.reorder {
        rows.push(("reorder", time.as_secs_f64(), "s"));
    }
    Ok(rows)
}

/// Measures one graph in every order.
fn measure(
    input: &Input,
    args: &LayoutArgs,
    levels: &Levels,
    threads: usize,
    printer: &Printer,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<()> {
    bar.set_message(format!("{}: building", input.name));
    let n = input.num_vertices;
    let graph = Graph::from_edges(n, &input.edges, input.directed)?;
    // Uniform weights over a range as large as the vertex count, as in the paper.
    let weighted_edges: Vec<_> = input
        .edges
        .iter()
        .zip(generate::uniform_weights(
            input.edges.len(),
            args.common.seed,
        ))
        .map(|(&(u, v), w)| (u, v, (w * n as f64).ceil()))
        .collect();
    let weighted = WeightedGraph::from_weighted_edges(n, &weighted_edges, input.directed)?;
    drop(weighted_edges);
    let natural = Numbered::new(graph, weighted, Permutation::identity(n), None);
    let sources = pick_sources(&natural.graph, args.sources, args.common.seed, 11);
    let random = Numbered::reordered(
        &natural,
        &Order::Random {
            seed: args.common.seed,
        },
    )?;
    let mut baseline: HashMap<&'static str, f64> = HashMap::new();
    let mut random_bfs = 0.0;
    for name in ORDERS {
        bar.set_message(format!("{}: {name}", input.name));
        let computed;
        let numbered = match name {
            "random" => &random,
            "natural" => &natural,
            other => {
                let order = Order::from_name(other, levels.clone(), args.common.seed)?;
                computed = Numbered::reordered(&random, &order)?;
                &computed
            }
        };
        let rows = figures(numbered, &sources, args.iterations)?;
        for (op, value, unit) in rows {
            if name == "random" {
                baseline.insert(op, value);
                if op == "bfs" {
                    random_bfs = value;
                }
            }
            let base = baseline.get(op).copied().unwrap_or(f64::NAN);
            let row = Row {
                bench: "layout",
                graph: input.name.clone(),
                vertices: n,
                edges: numbered.graph.num_edges(),
                order: name,
                op,
                value,
                unit,
                ratio: value / base,
                threads,
            };
            printer.emit(bar, &row)?;
            if op == "reorder" && random_bfs > 0.0 {
                // The same time in passes of BFS on the random order.
                let in_bfs = Row {
                    op: "reorder_in_bfs",
                    value: value / random_bfs,
                    unit: "bfs",
                    ..row
                };
                printer.emit(bar, &in_bfs)?;
            }
        }
        bar.inc(1);
    }
    Ok(())
}

/// Prints rows as JSON Lines or as a table.
struct Printer {
    json: bool,
}

impl Printer {
    fn new(json: bool) -> Self {
        if !json {
            println!(
                "{:<8} {:<14} {:<9} {:<15} {:>12} {:<5} {:>8} {:>7}",
                "bench", "graph", "order", "op", "value", "unit", "ratio", "threads"
            );
        }
        Self { json }
    }

    fn emit(&self, bar: &indicatif::ProgressBar, row: &Row) -> anyhow::Result<()> {
        let line = if self.json {
            serde_json::to_string(row)?
        } else {
            format!(
                "{:<8} {:<14} {:<9} {:<15} {:>12.6} {:<5} {:>8.3} {:>7}",
                row.bench,
                row.graph,
                row.order,
                row.op,
                row.value,
                row.unit,
                row.ratio,
                row.threads
            )
        };
        print_line(bar, &line)
    }
}
