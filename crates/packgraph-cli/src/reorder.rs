//! `packgraph reorder`, and the `--order` option of `convert`, `run` and `stream`: renumber a
//! graph's vertices by a layout order (hierarchical blocking, BFS, RCM, degree, random) so
//! that traversals touch fewer cache lines and pages and the delta codes get shorter.
//!
//! A snapshot (.pgb) keeps the external ids and the new internal order. The text formats
//! name vertices by id and a reader numbers vertices by id order, so they are written with
//! the new ids `0..n`: the order is the file's numbering.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use packgraph::io::{save, Dataset, Format, IdMap};
use packgraph::layout::{mean_log2_gap, Levels, Order};

use crate::input::{self, parse_format, ReadArgs};
use crate::UsageError;

/// The order names as the command line takes them.
const ORDER_NAMES: [&str; 6] = Order::NAMES;

/// `--order` and its parameters, shared by `convert`, `run` and `stream`.
#[derive(Args, Debug, Clone)]
pub(crate) struct OrderArgs {
    /// Renumber the vertices after loading: hba (hierarchical blocking for --levels), bfs,
    /// rcm (reverse Cuthill–McKee), degree (decreasing), random (--order-seed) or
    /// identity. Results in the file's ids are unchanged.
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
    /// The graph to read (any supported format).
    input: PathBuf,
    /// The file to write; the format follows the extension (.pgb snapshot, .v/.e
    /// Graphalytics, anything else an edge list) unless --to says.
    output: PathBuf,
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
    /// The output format: edgelist, graphalytics or binary.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    to: Option<Format>,
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

/// What to write for `format`: a text format names the vertices by their new ids.
pub(crate) fn for_output(dataset: Dataset, format: Format) -> anyhow::Result<Dataset> {
    if format == Format::Binary {
        return Ok(dataset);
    }
    let n = dataset.graph.num_vertices();
    Ok(Dataset {
        graph: dataset.graph.with_ids(IdMap::identity(n))?,
        self_loops: dataset.self_loops,
    })
}

pub(crate) fn reorder(args: &ReorderArgs) -> anyhow::Result<()> {
    let order = parse_order(&args.order, &args.levels, args.seed)?;
    let format = input::output_format(&args.output, args.to);
    if format == Format::MatrixMarket {
        return Err(UsageError(
            "writing Matrix Market is not supported; use edgelist, graphalytics or binary".into(),
        )
        .into());
    }
    let (data, load_time) = input::read(&args.input, &args.read)?;
    let gap_before = gap(&data);
    let (data, reorder_time) = apply(data, &order)?;
    // Before any read builds the vertex index: the edge arrays alone.
    let bytes = data.graph.size_in_bytes();
    let gap_after = gap(&data);
    let start = Instant::now();
    let bar = input::spinner("writing");
    let data = for_output(data, format)?;
    save(&data, &args.output, format)?;
    bar.finish_and_clear();
    eprintln!(
        "{} vertices, {} edges: read {} in {:.3} s, ordered by {order} in {:.3} s (mean log2 neighbour gap {gap_before:.2} -> {gap_after:.2}, {:.2} bytes per edge), wrote {} ({}) in {:.3} s",
        data.graph.num_vertices(),
        data.graph.num_edges(),
        args.input.display(),
        load_time.as_secs_f64(),
        reorder_time.as_secs_f64(),
        bytes as f64 / data.graph.num_edges().max(1) as f64,
        args.output.display(),
        format.name(),
        start.elapsed().as_secs_f64(),
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
