//! `packgraph generate`, `convert` and `info`.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use packgraph::graph::{Packing, VertexId};
use packgraph::io::generate::{self, Initiator};
use packgraph::io::{save, Dataset, Format};
use serde::Serialize;

use crate::input::{self, parse_format, InOutArgs, InputArgs, ReadArgs};
use crate::reorder::{self, OrderArgs};
use crate::UsageError;

/// Arguments of `packgraph generate`.
#[derive(Args, Debug)]
pub(crate) struct GenerateArgs {
    #[command(subcommand)]
    model: Model,
    /// Where to write the graph; the format follows the extension (.txt/.el/.edges edge
    /// list, .mtx Matrix Market, .v/.e Graphalytics, .pgb snapshot) unless --to says.
    #[arg(long, short, value_name = "FILE", global = true)]
    output: Option<PathBuf>,
    /// The output format: edgelist, mtx, graphalytics or binary.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format, global = true)]
    to: Option<Format>,
    /// Print the summary as one JSON object on stdout instead of text on stderr.
    #[arg(long, global = true)]
    json: bool,
    /// Random seed; the same seed gives the same graph on any number of threads.
    #[arg(long, default_value_t = 1, global = true)]
    seed: u64,
    /// Make the edges directed (default: undirected).
    #[arg(long, global = true)]
    directed: bool,
    /// Give each edge a weight uniform in (0, 1].
    #[arg(long, global = true)]
    weighted: bool,
    /// Keep the natural numbering of ws, ba, mesh and tree (ring, arrival, row-major,
    /// breadth-first); by default their ids are shuffled, as a real file's would be.
    #[arg(long, global = true)]
    natural_order: bool,
}

#[derive(Subcommand, Debug)]
enum Model {
    /// Graph500 Kronecker graph: 2^scale vertices, edge-factor · 2^scale edges, initiator
    /// A=0.57, B=C=0.19, vertices randomly relabelled.
    Kronecker {
        /// log2 of the number of vertices (1..=31).
        #[arg(long, default_value_t = 16)]
        scale: u32,
        /// Edges per vertex.
        #[arg(long, default_value_t = 16)]
        edge_factor: usize,
    },
    /// R-MAT graph with the given quadrant probabilities (d = 1 - a - b - c).
    Rmat {
        /// log2 of the number of vertices (1..=31).
        #[arg(long, default_value_t = 16)]
        scale: u32,
        /// Number of edges to draw.
        #[arg(long, default_value = "1e6", value_parser = crate::input::parse_count)]
        edges: usize,
        /// Probability of the top-left quadrant.
        #[arg(long, default_value_t = 0.57)]
        a: f64,
        /// Probability of the top-right quadrant.
        #[arg(long, default_value_t = 0.19)]
        b: f64,
        /// Probability of the bottom-left quadrant.
        #[arg(long, default_value_t = 0.19)]
        c: f64,
    },
    /// Erdős–Rényi G(n, m): m edges with endpoints drawn uniformly.
    Er {
        /// Number of vertices.
        #[arg(long, default_value = "1e5", value_parser = crate::input::parse_count)]
        vertices: usize,
        /// Number of edges to draw.
        #[arg(long, default_value = "1e6", value_parser = crate::input::parse_count)]
        edges: usize,
    },
    /// Watts–Strogatz small world: a ring where each vertex joins its k nearest, each edge
    /// rewired to a random vertex with probability beta.
    Ws {
        /// Number of vertices.
        #[arg(long, default_value = "1e6", value_parser = crate::input::parse_count)]
        vertices: usize,
        /// Ring neighbours per vertex (even; k / 2 on each side).
        #[arg(long, default_value_t = 6)]
        k: usize,
        /// Rewiring probability, in [0, 1].
        #[arg(long, default_value_t = 0.1)]
        beta: f64,
    },
    /// Barabási–Albert preferential attachment: each new vertex links to m earlier ones,
    /// chosen in proportion to their degree.
    Ba {
        /// Number of vertices.
        #[arg(long, default_value = "1e6", value_parser = crate::input::parse_count)]
        vertices: usize,
        /// Edges each new vertex brings.
        #[arg(long, default_value_t = 4)]
        m: usize,
    },
    /// A 2-D grid of rows × cols vertices, optionally with diagonals.
    Mesh {
        /// Rows.
        #[arg(long, default_value_t = 1000)]
        rows: usize,
        /// Columns.
        #[arg(long, default_value_t = 1000)]
        cols: usize,
        /// Also join each vertex to its lower-right neighbour.
        #[arg(long)]
        diagonals: bool,
    },
    /// A complete k-ary tree.
    Tree {
        /// Number of vertices.
        #[arg(long, default_value = "1e6", value_parser = crate::input::parse_count)]
        vertices: usize,
        /// Children per vertex.
        #[arg(long, default_value_t = 4)]
        arity: usize,
    },
}

/// A generated graph: its vertex count and edges.
type Generated = (usize, Vec<(VertexId, VertexId)>);

/// Vertex counts the generators accept.
fn check_vertices(flag: &str, vertices: usize) -> anyhow::Result<()> {
    if vertices == 0 || vertices > u32::MAX as usize {
        return Err(UsageError(format!("{flag} {vertices}: must be in 1..=4294967295")).into());
    }
    Ok(())
}

/// The edges of the families of the layout experiments (natural numbering), with their
/// vertex count; `None` for the other models.
fn family_edges(model: &Model, seed: u64) -> anyhow::Result<Option<Generated>> {
    Ok(Some(match *model {
        Model::Ws { vertices, k, beta } => {
            check_vertices("--vertices", vertices)?;
            if k == 0 || k % 2 == 1 || k >= vertices {
                return Err(UsageError(format!(
                    "--k {k}: must be even, at least 2 and below --vertices"
                ))
                .into());
            }
            if !(0.0..=1.0).contains(&beta) {
                return Err(UsageError(format!("--beta {beta}: must be in [0, 1]")).into());
            }
            (vertices, generate::watts_strogatz(vertices, k, beta, seed))
        }
        Model::Ba { vertices, m } => {
            check_vertices("--vertices", vertices)?;
            if m == 0 || m >= vertices {
                return Err(UsageError(format!(
                    "--m {m}: must be at least 1 and below --vertices"
                ))
                .into());
            }
            (vertices, generate::barabasi_albert(vertices, m, seed))
        }
        Model::Mesh {
            rows,
            cols,
            diagonals,
        } => {
            let vertices = rows.saturating_mul(cols);
            if rows == 0 || cols == 0 || vertices > u32::MAX as usize {
                return Err(UsageError(format!(
                    "--rows {rows} --cols {cols}: need 1..=4294967295 vertices in all"
                ))
                .into());
            }
            (vertices, generate::mesh(rows, cols, diagonals))
        }
        Model::Tree { vertices, arity } => {
            check_vertices("--vertices", vertices)?;
            if arity == 0 {
                return Err(UsageError("--arity 0: must be at least 1".into()).into());
            }
            (vertices, generate::tree(vertices, arity))
        }
        _ => return Ok(None),
    }))
}

fn check_scale(scale: u32) -> anyhow::Result<()> {
    if !(1..=31).contains(&scale) {
        return Err(UsageError(format!("--scale {scale}: must be in 1..=31")).into());
    }
    Ok(())
}

/// The vertices and edges `model` will generate (an upper bound; `u64::MAX` past it).
fn planned_size(model: &Model) -> (u64, u64) {
    let n = |x: usize| x as u64;
    match *model {
        Model::Kronecker { scale, edge_factor } => {
            let vertices = 1u64.checked_shl(scale).unwrap_or(u64::MAX);
            (vertices, vertices.saturating_mul(n(edge_factor)))
        }
        Model::Rmat { scale, edges, .. } => (1u64.checked_shl(scale).unwrap_or(u64::MAX), n(edges)),
        Model::Er { vertices, edges } => (n(vertices), n(edges)),
        Model::Ws { vertices, k, .. } => (n(vertices), n(vertices).saturating_mul(n(k) / 2)),
        Model::Ba { vertices, m } => (n(vertices), n(vertices).saturating_mul(n(m))),
        Model::Mesh { rows, cols, .. } => {
            let vertices = n(rows).saturating_mul(n(cols));
            (vertices, vertices.saturating_mul(3))
        }
        Model::Tree { vertices, .. } => (n(vertices), n(vertices)),
    }
}

/// Memory the system can give now: `MemAvailable` of `/proc/meminfo`, `None` where
/// there is no such file.
fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib.saturating_mul(1024))
}

/// `bytes` in GB with one decimal (or bytes, below 1 GB).
fn gigabytes(bytes: u64) -> String {
    if bytes < 1_000_000_000 {
        format!("{bytes} bytes")
    } else {
        format!("{:.1} GB", bytes as f64 / 1e9)
    }
}

/// Refuses a graph that cannot fit: its estimated peak memory
/// ([`generate::bytes_needed`]) against the memory available now (a usage error, exit 2).
fn check_fits(args: &GenerateArgs, available: Option<u64>) -> anyhow::Result<()> {
    let (vertices, edges) = planned_size(&args.model);
    let needed = generate::bytes_needed(vertices, edges, args.weighted);
    // Without /proc/meminfo, only sizes no machine has (2^48 bytes, 256 TiB) are refused.
    let (limit, what) = match available {
        Some(bytes) => (bytes, "available (MemAvailable in /proc/meminfo)"),
        None => (1 << 48, "the most generate attempts without /proc/meminfo"),
    };
    if needed > limit {
        return Err(UsageError(format!(
            "{vertices} vertices and {edges} edges need about {} of memory to generate and build ({} bytes an edge); {} is {what}",
            gigabytes(needed),
            if args.weighted { generate::BYTES_PER_WEIGHTED_EDGE } else { generate::BYTES_PER_EDGE },
            gigabytes(limit),
        ))
        .into());
    }
    Ok(())
}

pub(crate) fn generate(args: &GenerateArgs) -> anyhow::Result<()> {
    let output = args.output.as_ref().ok_or_else(|| {
        UsageError("say where to write the graph with -o FILE (e.g. -o graph.txt)".into())
    })?;
    let format = input::output_format(output, args.to)?;
    for path in input::written_files(output, format) {
        input::check_writable(&path)?;
    }
    check_fits(args, available_memory())?;
    let start = Instant::now();
    let bar = input::spinner("generating");
    let (num_vertices, edges) = if let Some((n, mut edges)) = family_edges(&args.model, args.seed)?
    {
        if !args.natural_order {
            generate::shuffle_ids(&mut edges, n, args.seed);
        }
        (n, edges)
    } else {
        other_edges(&args.model, args.seed)?
    };
    finish_generate(args, (output, format), start, &bar, num_vertices, &edges)
}

/// The edges of the random models (Kronecker, R-MAT, Erdős–Rényi) with their vertex count.
fn other_edges(model: &Model, seed: u64) -> anyhow::Result<Generated> {
    Ok(match *model {
        Model::Kronecker { scale, edge_factor } => {
            check_scale(scale)?;
            (
                1usize << scale,
                generate::kronecker(scale, edge_factor, seed),
            )
        }
        Model::Rmat {
            scale,
            edges,
            a,
            b,
            c,
        } => {
            check_scale(scale)?;
            let valid = |p: f64| (0.0..=1.0).contains(&p);
            if !(valid(a) && valid(b) && valid(c) && a + b + c <= 1.0) {
                return Err(UsageError(format!(
                    "--a {a} --b {b} --c {c}: probabilities must be in 0..=1 with a + b + c <= 1"
                ))
                .into());
            }
            (
                1usize << scale,
                generate::rmat(scale, edges, Initiator { a, b, c }, seed),
            )
        }
        Model::Er { vertices, edges } => {
            if vertices == 0 || vertices > u32::MAX as usize {
                return Err(UsageError(format!(
                    "--vertices {vertices}: must be in 1..=4294967295"
                ))
                .into());
            }
            (vertices, generate::erdos_renyi(vertices, edges, seed))
        }
        Model::Ws { .. } | Model::Ba { .. } | Model::Mesh { .. } | Model::Tree { .. } => {
            unreachable!("family_edges generates the families")
        }
    })
}

/// Builds, writes and reports a generated graph.
fn finish_generate(
    args: &GenerateArgs,
    (output, format): (&std::path::Path, Format),
    start: Instant,
    bar: &indicatif::ProgressBar,
    num_vertices: usize,
    edges: &[(VertexId, VertexId)],
) -> anyhow::Result<()> {
    let generated = start.elapsed();
    bar.set_message("building the graph");
    let weights = args
        .weighted
        .then(|| generate::uniform_weights(edges.len(), args.seed));
    let data = Dataset::from_edges(num_vertices, edges, weights.as_deref(), args.directed)?;
    bar.set_message(format!("writing {}", output.display()));
    save(&data, output, format)?;
    bar.finish_and_clear();
    if args.json {
        let summary = serde_json::json!({
            "edges_generated": edges.len(),
            "generate_seconds": generated.as_secs_f64(),
            "vertices": data.graph.num_vertices(),
            "edges": data.graph.num_edges(),
            "self_loops_dropped": data.self_loops,
            "output": output.display().to_string(),
            "format": format.name(),
            "total_seconds": start.elapsed().as_secs_f64(),
        });
        return print_stdout(&format!("{summary}\n"));
    }
    eprintln!(
        "generated {} edges in {:.3} s; wrote {} vertices, {} distinct edges ({} self-loops dropped) to {} as {} in {:.3} s total",
        edges.len(),
        generated.as_secs_f64(),
        data.graph.num_vertices(),
        data.graph.num_edges(),
        data.self_loops,
        output.display(),
        format.name(),
        start.elapsed().as_secs_f64(),
    );
    Ok(())
}

/// Arguments of `packgraph convert`.
#[derive(Args, Debug)]
pub(crate) struct ConvertArgs {
    #[command(flatten)]
    files: InOutArgs,
    /// The output format: edgelist, mtx, graphalytics or binary (default: from the output's
    /// extension: .txt/.el/.edges/.edgelist edge list, .mtx Matrix Market, .v/.e
    /// Graphalytics, .pgb snapshot; another extension is refused).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    to: Option<Format>,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    order: OrderArgs,
    /// With --order and a text output: where to write the `old new` id mapping (default:
    /// the output's name with .map appended).
    #[arg(long, value_name = "FILE", requires = "order")]
    map: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout instead of text on stderr.
    #[arg(long)]
    json: bool,
}

pub(crate) fn convert(args: &ConvertArgs) -> anyhow::Result<()> {
    let (input_path, output) = args.files.paths()?;
    let order = args.order.order()?;
    let format = input::output_format(&output, args.to)?;
    for path in input::written_files(&output, format) {
        input::check_writable(&path)?;
    }
    let map = reorder::map_path(order.is_some(), format, &output, args.map.as_deref())?;
    let (data, load_time) = input::read(&input_path, &args.read, Packing::Updates)?;
    check_ids_fit(&data, format, &output)?;
    let data = match order {
        Some(order) => {
            reorder::for_output(reorder::apply(data, &order)?.0, format, map.as_deref())?
        }
        None => data,
    };
    let start = Instant::now();
    let bar = input::spinner("writing");
    save(&data, &output, format)?;
    bar.finish_and_clear();
    let summary = serde_json::json!({
        "input": input_path.display().to_string(),
        "output": output.display().to_string(),
        "format": format.name(),
        "vertices": data.graph.num_vertices(),
        "edges": data.graph.num_edges(),
        "directed": data.graph.is_directed(),
        "weighted": data.graph.is_weighted(),
        "map": map.as_ref().map(|m| m.display().to_string()),
        "load_seconds": load_time.as_secs_f64(),
        "write_seconds": start.elapsed().as_secs_f64(),
    });
    if args.json {
        return print_stdout(&format!("{summary}\n"));
    }
    eprintln!(
        "{} vertices, {} edges: read {} in {:.3} s, wrote {} ({}) in {:.3} s{}",
        data.graph.num_vertices(),
        data.graph.num_edges(),
        input_path.display(),
        load_time.as_secs_f64(),
        output.display(),
        format.name(),
        start.elapsed().as_secs_f64(),
        map.map(|m| format!("; old -> new ids in {}", m.display()))
            .unwrap_or_default()
    );
    Ok(())
}

/// Refuses, before any work on it, a graph whose vertex ids `format` cannot hold: named
/// vertices in a Graphalytics dataset (integers only). A usage error (exit 2).
pub(crate) fn check_ids_fit(
    data: &Dataset,
    format: Format,
    output: &std::path::Path,
) -> anyhow::Result<()> {
    if format == Format::Graphalytics && data.ids().has_names() {
        return Err(UsageError(format!(
            "{}: a Graphalytics dataset names vertices by integers, and this graph's vertices are named; write an edge list (.txt) or a snapshot (.pgb)",
            output.display()
        ))
        .into());
    }
    Ok(())
}

/// Arguments of `packgraph info`.
#[derive(Args, Debug)]
pub(crate) struct InfoArgs {
    #[command(flatten)]
    input: InputArgs,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also check every structural invariant of the loaded graph (both arc arrays agree,
    /// the vertex index matches them, ids and properties name existing vertices); a broken
    /// one is an error.
    #[arg(long)]
    check: bool,
}

#[derive(Serialize)]
struct Info {
    /// Whether `--check` verified every invariant (absent without `--check`).
    #[serde(skip_serializing_if = "Option::is_none")]
    invariants_ok: Option<bool>,
    file: String,
    vertices: usize,
    edges: usize,
    directed: bool,
    weighted: bool,
    self_loops_dropped: usize,
    min_degree: u32,
    max_degree: u32,
    mean_degree: f64,
    median_degree: u32,
    isolated_vertices: usize,
    bytes_in_memory: usize,
    bytes_per_edge: f64,
    /// Bytes of the edge arrays alone (without the vertex index) per edge.
    edge_bytes_per_edge: f64,
    /// Mean log2 of the gap between consecutive neighbour ids (a locality figure: about
    /// the bits a delta code spends per arc).
    mean_log2_gap: f64,
    load_seconds: f64,
}

pub(crate) fn info(args: &InfoArgs) -> anyhow::Result<()> {
    let path = args.input.path();
    let (data, load_time) = input::read(path, &args.input.read, Packing::Updates)?;
    let graph = &data.graph;
    // Before the vertex index is built: the edge arrays alone.
    let edge_bytes = graph.size_in_bytes();
    graph.build_index();
    if args.check {
        graph.check_invariants().with_context(|| {
            format!("{}: the loaded graph fails its self-check", path.display())
        })?;
    }
    let mut degrees: Vec<u32> = graph.out_degrees().to_vec();
    degrees.sort_unstable();
    let n = degrees.len();
    let info = Info {
        invariants_ok: args.check.then_some(true),
        file: path.display().to_string(),
        vertices: n,
        edges: graph.num_edges(),
        directed: graph.is_directed(),
        weighted: graph.is_weighted(),
        self_loops_dropped: data.self_loops,
        min_degree: degrees.first().copied().unwrap_or(0),
        max_degree: degrees.last().copied().unwrap_or(0),
        mean_degree: if n == 0 {
            0.0
        } else {
            graph.num_arcs() as f64 / n as f64
        },
        median_degree: degrees.get(n / 2).copied().unwrap_or(0),
        isolated_vertices: degrees.partition_point(|&d| d == 0),
        bytes_in_memory: graph.size_in_bytes(),
        bytes_per_edge: graph.size_in_bytes() as f64 / graph.num_edges().max(1) as f64,
        edge_bytes_per_edge: edge_bytes as f64 / graph.num_edges().max(1) as f64,
        mean_log2_gap: reorder::gap(&data),
        load_seconds: load_time.as_secs_f64(),
    };
    if args.json {
        return print_stdout(&format!("{}\n", serde_json::to_string(&info)?));
    }
    let mut text = String::new();
    let degree = if info.directed {
        "out-degree"
    } else {
        "degree"
    };
    writeln!(text, "file        {}", info.file)?;
    writeln!(
        text,
        "graph       {}, {}",
        if info.directed {
            "directed"
        } else {
            "undirected"
        },
        if info.weighted {
            "weighted"
        } else {
            "unweighted"
        }
    )?;
    writeln!(text, "vertices    {}", info.vertices)?;
    writeln!(text, "edges       {}", info.edges)?;
    if info.invariants_ok.is_some() {
        writeln!(text, "check       every invariant holds")?;
    }
    if info.self_loops_dropped > 0 {
        writeln!(text, "self-loops  {} (not stored)", info.self_loops_dropped)?;
    }
    writeln!(
        text,
        "{degree:<11} min {}, median {}, mean {:.2}, max {}; {} isolated vertices",
        info.min_degree,
        info.median_degree,
        info.mean_degree,
        info.max_degree,
        info.isolated_vertices
    )?;
    writeln!(
        text,
        "memory      {} ({:.2} bytes per edge, index included)",
        human_bytes(info.bytes_in_memory as u64),
        info.bytes_per_edge
    )?;
    writeln!(
        text,
        "locality    mean log2 neighbour gap {:.2}; edge arrays {:.2} bytes per edge",
        info.mean_log2_gap, info.edge_bytes_per_edge
    )?;
    writeln!(text, "loaded in   {:.3} s", info.load_seconds)?;
    print_stdout(&text)
}

/// `bytes` in binary units with three significant digits (`512 B`, `1.50 KiB`, `23.4 MiB`);
/// `--json` keeps the exact count.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} B"),
        _ if value < 10.0 => format!("{value:.2} {}", UNITS[unit]),
        _ if value < 100.0 => format!("{value:.1} {}", UNITS[unit]),
        _ => format!("{value:.0} {}", UNITS[unit]),
    }
}

/// Writes `text` to stdout; a reader that closed the pipe early (`packgraph info G | head -3`)
/// ends the command quietly instead of panicking the way `println!` does.
pub(crate) fn print_stdout(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Reads the input of `run` (kept here beside the other file commands).
pub(crate) fn read_input(args: &InputArgs) -> anyhow::Result<(Dataset, std::time::Duration)> {
    input::read(args.path(), &args.read, Packing::Compact)
        .with_context(|| "reading the input graph".to_string())
}

/// The internal id of the vertex `id` names, or a usage error: in a graph with named
/// vertices the name `id` (else the integer it spells), in one without an integer.
pub(crate) fn vertex(data: &Dataset, id: &str, flag: &str) -> anyhow::Result<VertexId> {
    let ids = data.ids();
    let int = packgraph::io::IdKind::Int.parse(id);
    let found = match &int {
        _ if ids.has_names() => ids
            .internal_name(id)
            .or_else(|| int.as_ref().and_then(|i| ids.internal_id(i))),
        Some(int) => ids.internal_id(int),
        None => {
            return Err(UsageError(format!(
                "{flag} {id}: the input's vertices are integers (0 to {}), and this is none",
                u64::MAX
            ))
            .into())
        }
    };
    found.ok_or_else(|| {
        UsageError(format!(
            "{flag} {id}: not a vertex of the input graph ({} vertices)",
            ids.len()
        ))
        .into()
    })
}
