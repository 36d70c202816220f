//! `packgraph reorder`, and the `--order` option of `convert`, `run` and `stream`: renumber a
//! graph's vertices by a layout order (hierarchical blocking, BFS, RCM, degree, random) so
//! that traversals touch fewer cache lines and pages and the delta codes get shorter.
//!
//! A snapshot (.pgb) keeps the external ids and the new internal order. The text formats
//! name vertices by id and a reader numbers vertices by id order, so they are written with
//! the new ids `0..n` (the order is the file's numbering), and the `old new` mapping is
//! written beside them (`OUTPUT.map`, or `--map FILE`).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::Args;
use packgraph::graph::Packing;
use packgraph::io::{save, Dataset, Format, IdMap};
use packgraph::layout::{mean_log2_gap, Levels, Order};
use serde_json::json;

use crate::files::{check_ids_fit, print_stdout};
use crate::input::{self, parse_format, InOutArgs, ReadArgs};
use crate::UsageError;

/// The order names as the command line takes them.
const ORDER_NAMES: [&str; 6] = Order::NAMES;

/// `--order` and its parameters, shared by `convert`, `run` and `stream`.
#[derive(Args, Debug, Clone)]
pub(crate) struct OrderArgs {
    /// Renumber the vertices after loading: hba (hierarchical blocking for --levels), bfs,
    /// rcm (reverse Cuthill–McKee), degree (decreasing), random (--order-seed) or
    /// identity.
    #[arg(long, value_name = "ORDER", value_parser = clap::builder::PossibleValuesParser::new(ORDER_NAMES))]
    pub(crate) order: Option<String>,
    /// Block sizes for --order hba, smallest first, in bytes with an optional K, M or G.
    #[arg(long, value_name = "SIZES", default_value = "64,1K,4K,2M")]
    pub(crate) levels: String,
    /// Seed of --order random.
    #[arg(long, value_name = "SEED", default_value_t = 1)]
    pub(crate) order_seed: u64,
}

impl OrderArgs {
    /// The order asked for, if any; bad `--levels` is a usage error naming the value.
    pub(crate) fn order(&self) -> anyhow::Result<Option<Order>> {
        self.order
            .as_deref()
            .map(|name| parse_order(name, &self.levels, self.order_seed))
            .transpose()
    }
}

/// Arguments of `packgraph reorder`.
#[derive(Args, Debug)]
pub(crate) struct ReorderArgs {
    #[command(flatten)]
    files: InOutArgs,
    /// The vertex order: hba (hierarchical blocking for --levels), bfs, rcm (reverse
    /// Cuthill–McKee), degree (decreasing), random (--seed) or identity.
    #[arg(long, value_name = "ORDER", value_parser = clap::builder::PossibleValuesParser::new(ORDER_NAMES))]
    order: String,
    /// Block sizes for --order hba, smallest first, in bytes with an optional K, M or G.
    #[arg(long, value_name = "SIZES", default_value = "64,1K,4K,2M")]
    levels: String,
    /// Seed of --order random.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The output format: edgelist, mtx, graphalytics or binary (default: from the output's
    /// extension). A .pgb snapshot keeps the ids; the text formats number the vertices
    /// 0..n in the new order and write the `old new` mapping beside them.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    to: Option<Format>,
    /// Where a text output's `old new` id mapping goes (default: the output's name with
    /// .map appended).
    #[arg(long, value_name = "FILE")]
    map: Option<PathBuf>,
    /// Print the summary as one JSON object on stdout instead of text on stderr.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    read: ReadArgs,
}

/// The order `name` with its parameters; a bad `--levels` exits with code 2 naming it.
pub(crate) fn parse_order(name: &str, levels: &str, seed: u64) -> anyhow::Result<Order> {
    let levels: Levels = levels
        .parse()
        .map_err(|e| UsageError(format!("--levels {levels}: {e}")))?;
    Order::from_name(name, levels, seed).map_err(|e| UsageError(format!("--order: {e}")).into())
}

/// `dataset` renumbered by `order`, with the time it took (spinner on a terminal).
pub(crate) fn apply(dataset: Dataset, order: &Order) -> anyhow::Result<(Dataset, Duration)> {
    let bar = input::spinner(&format!("reordering ({order})"));
    let start = Instant::now();
    let perm = order.permutation_any(&dataset.graph);
    let graph = dataset.graph.relabel(&perm)?;
    bar.finish_and_clear();
    Ok((
        Dataset {
            graph,
            self_loops: dataset.self_loops,
        },
        start.elapsed(),
    ))
}

/// [`apply`] when an order is asked for.
pub(crate) fn apply_if(dataset: Dataset, order: &OrderArgs) -> anyhow::Result<Dataset> {
    match order.order()? {
        Some(order) => Ok(apply(dataset, &order)?.0),
        None => Ok(dataset),
    }
}

/// Where the `old new` mapping of a reordered graph written as text goes: `map`, else the
/// output's name with `.map` appended; `None` without an order or for a snapshot (which
/// keeps the ids). Checked writable before any work.
pub(crate) fn map_path(
    ordered: bool,
    format: Format,
    output: &Path,
    map: Option<&Path>,
) -> anyhow::Result<Option<PathBuf>> {
    if !ordered || format == Format::Binary {
        return Ok(None);
    }
    let path = match map {
        Some(path) => path.to_path_buf(),
        None => {
            let mut name = output.as_os_str().to_owned();
            name.push(".map");
            PathBuf::from(name)
        }
    };
    input::check_writable(&path)?;
    Ok(Some(path))
}

/// What to write for `format`: a text format names the vertices by their new ids `0..n`,
/// after the `old new` mapping is written to `map`.
pub(crate) fn for_output(
    dataset: Dataset,
    format: Format,
    map: Option<&Path>,
) -> anyhow::Result<Dataset> {
    if format == Format::Binary {
        return Ok(dataset);
    }
    if let Some(map) = map {
        write_map(&dataset, map)?;
    }
    let n = dataset.graph.num_vertices();
    Ok(Dataset {
        graph: dataset.graph.with_ids(IdMap::identity(n))?,
        self_loops: dataset.self_loops,
    })
}

/// Writes `old new` lines, one per vertex in the new order: its id in the input, then its
/// number in the written file.
fn write_map(dataset: &Dataset, path: &Path) -> anyhow::Result<()> {
    let os = |e: std::io::Error| anyhow::anyhow!("{}: {e}", path.display());
    let file = std::fs::File::create(path).map_err(os)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    writeln!(
        out,
        "# old new: each vertex's id in the input, then in the reordered file"
    )
    .map_err(os)?;
    for (new, old) in dataset.ids().iter().enumerate() {
        writeln!(out, "{old} {new}").map_err(os)?;
    }
    out.flush().map_err(os)
}

pub(crate) fn reorder(args: &ReorderArgs) -> anyhow::Result<()> {
    let (input_path, output) = args.files.paths()?;
    let order = parse_order(&args.order, &args.levels, args.seed)?;
    let format = input::output_format(&output, args.to)?;
    for path in input::written_files(&output, format) {
        input::check_writable(&path)?;
    }
    let map = map_path(true, format, &output, args.map.as_deref())?;
    let (data, load_time) = input::read(&input_path, &args.read, Packing::Updates)?;
    check_ids_fit(&data, format, &output)?;
    let gap_before = gap(&data);
    let (data, reorder_time) = apply(data, &order)?;
    // Before any read builds the vertex index: the edge arrays alone.
    let bytes = data.graph.size_in_bytes();
    let gap_after = gap(&data);
    let start = Instant::now();
    let bar = input::spinner("writing");
    let data = for_output(data, format, map.as_deref())?;
    save(&data, &output, format)?;
    bar.finish_and_clear();
    let bytes_per_edge = bytes as f64 / data.graph.num_edges().max(1) as f64;
    if args.json {
        let summary = json!({
            "input": input_path.display().to_string(),
            "output": output.display().to_string(),
            "format": format.name(),
            "order": order.to_string(),
            "vertices": data.graph.num_vertices(),
            "edges": data.graph.num_edges(),
            "mean_log2_gap_before": gap_before,
            "mean_log2_gap_after": gap_after,
            "bytes_per_edge": bytes_per_edge,
            "map": map.as_ref().map(|m| m.display().to_string()),
            "load_seconds": load_time.as_secs_f64(),
            "reorder_seconds": reorder_time.as_secs_f64(),
            "write_seconds": start.elapsed().as_secs_f64(),
        });
        return print_stdout(&format!("{summary}\n"));
    }
    eprintln!(
        "{} vertices, {} edges: read {} in {:.3} s, ordered by {order} in {:.3} s (mean log2 neighbour gap {gap_before:.2} -> {gap_after:.2}, {bytes_per_edge:.2} bytes per edge), wrote {} ({}) in {:.3} s{}",
        data.graph.num_vertices(),
        data.graph.num_edges(),
        input_path.display(),
        load_time.as_secs_f64(),
        reorder_time.as_secs_f64(),
        output.display(),
        format.name(),
        start.elapsed().as_secs_f64(),
        map.map(|m| format!("; old -> new ids in {}", m.display()))
            .unwrap_or_default()
    );
    Ok(())
}

/// The mean log2 neighbour gap of a dataset's graph.
pub(crate) fn gap(data: &Dataset) -> f64 {
    match &data.graph {
        packgraph::graph::AnyGraph::Unweighted(g) => mean_log2_gap(g),
        packgraph::graph::AnyGraph::Weighted(g) => mean_log2_gap(g),
    }
}
