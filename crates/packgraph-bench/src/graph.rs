//! `packgraph-bench graph`: graph algorithms and edge updates on the dynamic graph against
//! the static CSR in the same run (CPMA paper, section 6, scaled to this machine).
//!
//! For a Graph500 Kronecker graph and an Erdős–Rényi graph of the same size, both
//! symmetrized: build time, flat-index build time, BFS (median of several sources),
//! PageRank (10 iterations), WCC, single-source BC, bytes per stored edge (and the dynamic
//! graph's split into leaf data, slack, page table and flat index), and the decoding cost
//! of one full scan on one thread (`decode`, ns per arc, each arc through a closure;
//! `decode-slice`, the targets of blocks of vertices into a buffer, as PageRank reads
//! them). The same graph loaded as `packgraph run` loads a file, packed for analysis
//! (`Packing::Compact`), gets the rows `packgraph-compact`: build, algorithms, bytes per
//! arc with the split, decoding. On the
//! Kronecker graph: batch inserts of R-MAT edges (a = 0.5, b = c = 0.1, sampled over the
//! whole id range, none already present) at each batch size, then the same deletes, which
//! restore the graph. An undirected edge counts as two updates. Then SSSP on the Kronecker
//! graph with uniform random weights, weighted dynamic graph against weighted CSR. Graph files given with
//! `--inputs` (a real graph, a road network) get the same rows except updates and GAP.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use packgraph::algo::{betweenness, bfs, pagerank, sssp, wcc};
use packgraph::graph::{
    CsrGraph, Graph, GraphRead, Packing, Update, VertexId, WeightedGraph, WeightedGraphRead,
};
use packgraph::io::generate::{erdos_renyi, kronecker, SplitMix64};

use crate::args::{usage_error, CommonArgs};
use crate::gap::Gap;
use crate::workload::{any_edges_of, fresh_edges, median, read_graph};
use crate::{parse_count, parse_count_list, pick_sources, timed, CountList, Record, Reporter};
use anyhow::Context;

/// Options of `packgraph-bench graph`.
#[derive(Args, Debug, Clone)]
pub(crate) struct GraphArgs {
    /// log2 of the vertex count.
    #[arg(long, default_value_t = 20)]
    scale: u32,
    /// Generated edges per vertex (before symmetrizing and removing duplicates).
    #[arg(long, default_value_t = 16)]
    edge_factor: usize,
    /// Update batch sizes in edges (comma-separated; empty for none).
    #[arg(long, default_value = "1e3,1e4,1e5,1e6", value_parser = parse_count_list)]
    batch_sizes: CountList,
    /// Most edges inserted per batch size (the run inserts min(this, 100 × batch)).
    #[arg(long, default_value = "2e6", value_parser = parse_count)]
    max_batch_edges: usize,
    /// BFS sources (the median time is reported).
    #[arg(long, default_value_t = 5)]
    sources: usize,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
    /// Also run the GAP Benchmark Suite's kernels from this directory of its built binaries
    /// (`bfs`, `cc`, `pr`, `bc`) on GAP's own graphs of the same size; rows "gap".
    #[arg(long, value_name = "DIR")]
    gap: Option<PathBuf>,
    /// Also measure these graph files (comma-separated; any format `run` reads, taken as
    /// undirected): the same rows as the generated graphs, named by file, without updates
    /// or GAP.
    #[arg(long, value_delimiter = ',', value_name = "FILES")]
    inputs: Vec<PathBuf>,
}

fn seconds(
    reporter: &Reporter,
    dataset: &'static str,
    structure: &'static str,
    op: &'static str,
    param: u64,
    threads: usize,
    time: Duration,
) -> anyhow::Result<()> {
    reporter.emit(Record {
        bench: "graph",
        structure,
        op,
        param,
        threads,
        value: time.as_secs_f64(),
        unit: "s",
        keys: None,
        dataset: Some(dataset),
    })
}

/// A row of `value` in `unit` per arc of a graph of `arcs` arcs (sizes, decoding cost).
struct PerArc {
    dataset: &'static str,
    param: u64,
    arcs: usize,
}

impl PerArc {
    fn emit(
        &self,
        reporter: &Reporter,
        structure: &'static str,
        op: &'static str,
        (threads, value, unit): (usize, f64, &'static str),
    ) -> anyhow::Result<()> {
        reporter.emit(Record {
            bench: "graph",
            structure,
            op,
            param: self.param,
            threads,
            value,
            unit,
            keys: Some(self.arcs as u64),
            dataset: Some(self.dataset),
        })
    }

    fn bytes(
        &self,
        reporter: &Reporter,
        structure: &'static str,
        op: &'static str,
        threads: usize,
        bytes: usize,
    ) -> anyhow::Result<()> {
        let value = bytes as f64 / self.arcs.max(1) as f64;
        self.emit(reporter, structure, op, (threads, value, "bytes/edge"))
    }
}

/// Nanoseconds per arc of a full scan of every vertex's out-arcs on the calling thread
/// (the decoding cost alone; best of three).
fn decode_ns<G: GraphRead>(graph: &G) -> f64 {
    let n = graph.num_vertices() as VertexId;
    best_ns_per_arc(graph, || {
        let mut check = 0u64;
        graph.for_each_out_arc_in(0..n, |v, u| {
            check = check.wrapping_add(u64::from(v ^ u));
        });
        check
    })
}

/// Nanoseconds per arc of reading every vertex's weighted out-edges one vertex at a time on
/// the calling thread, as SSSP reads a vertex's run (a lookup, then the targets and their
/// weights; best of three).
fn decode_weighted_ns<G: WeightedGraphRead>(graph: &G) -> f64 {
    let n = graph.num_vertices() as VertexId;
    best_ns_per_arc(graph, || {
        let mut check = 0u64;
        for v in 0..n {
            graph.for_each_out_edge(v, |u, weight| {
                check = check.wrapping_add(weight.to_bits() ^ u64::from(u));
                true
            });
        }
        check
    })
}

/// Nanoseconds per arc of a full scan on the calling thread that takes each block of
/// vertices' targets as one slice (`out_arcs_in`: decoded into a buffer on the compressed
/// graph, the array itself on a CSR) and sums it; best of three.
fn decode_slice_ns<G: GraphRead>(graph: &G) -> f64 {
    const BLOCK: VertexId = 2048;
    let n = graph.num_vertices() as VertexId;
    let mut scratch = Vec::new();
    best_ns_per_arc(graph, || {
        let mut check = 0u64;
        for first in (0..n).step_by(BLOCK as usize) {
            let targets = graph.out_arcs_in(first..first.saturating_add(BLOCK), &mut scratch);
            check = targets
                .iter()
                .fold(check, |sum, &u| sum.wrapping_add(u64::from(u)));
        }
        check
    })
}

/// The best of three timings of `scan` (which returns a checksum, kept from the optimizer),
/// in nanoseconds per arc of `graph`.
fn best_ns_per_arc<G: GraphRead>(graph: &G, mut scan: impl FnMut() -> u64) -> f64 {
    let best = (0..3)
        .map(|_| {
            let (check, time) = timed(&mut scan);
            std::hint::black_box(check);
            time
        })
        .min()
        .unwrap_or_default();
    best.as_secs_f64() * 1e9 / graph.num_arcs().max(1) as f64
}

/// Times the algorithms on one structure.
fn run_algorithms<G: GraphRead>(
    reporter: &Reporter,
    dataset: &'static str,
    structure: &'static str,
    graph: &G,
    sources: &[VertexId],
    param: u64,
    threads: usize,
) -> anyhow::Result<()> {
    let time = median_time(sources, |s| bfs(graph, s).map(drop))?;
    seconds(reporter, dataset, structure, "bfs", param, threads, time)?;
    let (_, time) = timed(|| pagerank(graph, 0.85, 10));
    seconds(
        reporter, dataset, structure, "pagerank", param, threads, time,
    )?;
    let (_, time) = timed(|| wcc(graph));
    seconds(reporter, dataset, structure, "wcc", param, threads, time)?;
    if let Some(&source) = sources.first() {
        let (scores, time) = timed(|| betweenness(graph, source));
        scores?;
        seconds(reporter, dataset, structure, "bc", param, threads, time)?;
    }
    Ok(())
}

pub(crate) fn run(args: &GraphArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.scale = args.scale.min(12);
        args.batch_sizes.retain(|&b| b <= 10_000);
        args.max_batch_edges = args.max_batch_edges.min(100_000);
        args.sources = args.sources.min(3);
    }
    let args = &args;
    if !(1..=30).contains(&args.scale) || args.edge_factor == 0 || args.batch_sizes.contains(&0) {
        return Err(usage_error(
            "--scale must be in 1..=30, --edge-factor and --batch-sizes positive".into(),
        ));
    }
    // A file that cannot be read fails the run before anything is measured.
    if let Some((path, e)) = args
        .inputs
        .iter()
        .find_map(|p| std::fs::File::open(p).err().map(|e| (p, e)))
    {
        return Err(usage_error(format!(
            "--inputs: cannot read {}: {e}",
            path.display()
        )));
    }
    let gap = args
        .gap
        .as_deref()
        .map(|dir| Gap::open(dir, args.scale, args.edge_factor, args.sources))
        .transpose()?;
    let reporter = Reporter::new(args.common.json, 2 + args.inputs.len() as u64);
    let n = 1usize << args.scale;
    let m = args.edge_factor << args.scale;
    eprintln!(
        "bench graph: {threads} threads, scale {} ({n} vertices), edge factor {}, seed {}",
        args.scale, args.edge_factor, args.common.seed
    );
    let param = u64::from(args.scale);
    for dataset in ["kronecker", "er"] {
        reporter.step(format!("{dataset}: generating"));
        let edges = if dataset == "kronecker" {
            kronecker(args.scale, args.edge_factor, args.common.seed)
        } else {
            erdos_renyi(n, m, args.common.seed)
        };
        let (mut graph, csr) = measure_dataset(&reporter, args, dataset, param, n, edges, threads)?;
        if let Some(gap) = &gap {
            gap.run_algorithms(&reporter, dataset, threads)?;
        }
        if dataset == "kronecker" {
            reporter.step("kronecker: edge batches".into());
            measure_updates(&reporter, args, &mut graph, &csr, threads)?;
            drop((graph, csr));
            reporter.step("kronecker: weighted".into());
            measure_sssp(&reporter, args, param, n, threads)?;
        }
        reporter.advance();
    }
    for path in &args.inputs {
        reporter.step(format!("{}: reading", path.display()));
        let (n, edges) = read_edges(path)?;
        // Rows name the file by its stem; the names live as long as the run.
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        let name: &'static str = Box::leak(name.into_boxed_str());
        measure_dataset(&reporter, args, name, 0, n, edges, threads)?;
        reporter.advance();
    }
    reporter.finish();
    Ok(())
}

/// SSSP on the Kronecker graph with uniform random weights in (0, 1] (as in the HBA paper's
/// experiments), on the weighted dynamic graph and the weighted CSR; rows `sssp`, the
/// weighted graphs' `size-weighted` and `decode-weighted` (one thread reading every
/// vertex's weighted out-edges, vertex by vertex).
fn measure_sssp(
    reporter: &Reporter,
    args: &GraphArgs,
    param: u64,
    n: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let mut rng = SplitMix64::new(args.common.seed, 0x55_5350);
    let edges: Vec<(VertexId, VertexId, f64)> =
        kronecker(args.scale, args.edge_factor, args.common.seed)
            .into_iter()
            .map(|(u, v)| (u, v, 1.0 - rng.next_f64()))
            .collect();
    let graph = WeightedGraph::from_weighted_edges(n, &edges, false)?;
    let csr = CsrGraph::from_weighted_edges(n, &edges, false);
    drop(edges);
    graph.build_index();
    let sources = pick_sources(&csr, args.sources, args.common.seed, 7);
    for (structure, time) in [
        (
            "packgraph",
            median_time(&sources, |s| sssp(&graph, s).map(drop))?,
        ),
        ("csr", median_time(&sources, |s| sssp(&csr, s).map(drop))?),
    ] {
        seconds(
            reporter,
            "kronecker",
            structure,
            "sssp",
            param,
            threads,
            time,
        )?;
    }
    let rows = PerArc {
        dataset: "kronecker",
        param,
        arcs: graph.num_arcs(),
    };
    for (structure, ns) in [
        ("packgraph", decode_weighted_ns(&graph)),
        ("csr", decode_weighted_ns(&csr)),
    ] {
        rows.emit(reporter, structure, "decode-weighted", (1, ns, "ns/arc"))?;
    }
    rows.bytes(
        reporter,
        "packgraph",
        "size-weighted",
        threads,
        graph.size_in_bytes(),
    )?;
    rows.bytes(
        reporter,
        "csr",
        "size-weighted",
        threads,
        csr.size_in_bytes(),
    )?;
    Ok(())
}

/// The median time of `run` over `sources`.
fn median_time(
    sources: &[VertexId],
    mut run: impl FnMut(VertexId) -> packgraph::Result<()>,
) -> anyhow::Result<Duration> {
    let mut times = Vec::with_capacity(sources.len());
    for &source in sources {
        let (result, time) = timed(|| run(source));
        result?;
        times.push(time);
    }
    Ok(median(times))
}

/// The rows' structure name of the dynamic graph loaded as `packgraph run` loads a file
/// ([`Packing::Compact`]).
const COMPACT: &str = "packgraph-compact";

/// The dynamic graph of `edges` (undirected, over `0..n`) packed as `packgraph run` packs a
/// file it loads: [`Packing::Compact`], no room for updates.
fn compact_graph(n: usize, edges: &[(VertexId, VertexId)]) -> anyhow::Result<Graph> {
    let mut graph = Graph::new(false);
    graph.set_packing(Packing::Compact);
    let mut update = Update::from_edges(edges.to_vec());
    update.min_vertices(n);
    graph.apply(&update)?;
    Ok(graph)
}

/// Builds the dynamic graph and the CSR of `edges` (undirected, over `0..n`), and reports
/// for both the build, the algorithms, bytes per arc (with the dynamic graph's split) and
/// the decoding cost. Returns the two graphs.
fn measure_dataset(
    reporter: &Reporter,
    args: &GraphArgs,
    dataset: &'static str,
    param: u64,
    n: usize,
    edges: Vec<(VertexId, VertexId)>,
    threads: usize,
) -> anyhow::Result<(Graph, CsrGraph)> {
    let (graph, time) = timed(|| Graph::from_edges(n, &edges, false));
    let graph = graph?;
    seconds(
        reporter,
        dataset,
        "packgraph",
        "build",
        param,
        threads,
        time,
    )?;
    let (csr, time) = timed(|| CsrGraph::from_edges(n, &edges, false));
    seconds(reporter, dataset, "csr", "build", param, threads, time)?;
    let (compact, time) = timed(|| compact_graph(n, &edges));
    let compact = compact?;
    seconds(reporter, dataset, COMPACT, "build", param, threads, time)?;
    drop(edges);
    let (_, time) = timed(|| graph.build_index());
    seconds(
        reporter,
        dataset,
        "packgraph",
        "index",
        param,
        threads,
        time,
    )?;
    eprintln!(
        "{dataset}: {} vertices, {} arcs",
        graph.num_vertices(),
        graph.num_arcs()
    );
    let sources = pick_sources(&csr, args.sources, args.common.seed, 7);
    reporter.step(format!("{dataset}: algorithms"));
    run_algorithms(
        reporter,
        dataset,
        "packgraph",
        &graph,
        &sources,
        param,
        threads,
    )?;
    run_algorithms(reporter, dataset, "csr", &csr, &sources, param, threads)?;
    run_algorithms(
        reporter, dataset, COMPACT, &compact, &sources, param, threads,
    )?;
    let rows = PerArc {
        dataset,
        param,
        arcs: graph.num_arcs(),
    };
    rows.bytes(
        reporter,
        "packgraph",
        "size",
        threads,
        graph.size_in_bytes(),
    )?;
    rows.bytes(reporter, "csr", "size", threads, csr.size_in_bytes())?;
    rows.bytes(reporter, COMPACT, "size", threads, compact.size_in_bytes())?;
    for (structure, g) in [("packgraph", &graph), (COMPACT, &compact)] {
        let memory = g.memory();
        for (op, bytes) in [
            ("size-data", memory.data),
            ("size-slack", memory.slack),
            ("size-table", memory.table),
            ("size-index", memory.index),
        ] {
            rows.bytes(reporter, structure, op, threads, bytes)?;
        }
    }
    for (structure, ns) in [
        ("packgraph", decode_ns(&graph)),
        (COMPACT, decode_ns(&compact)),
        ("csr", decode_ns(&csr)),
    ] {
        rows.emit(reporter, structure, "decode", (1, ns, "ns/arc"))?;
    }
    for (structure, ns) in [
        ("packgraph", decode_slice_ns(&graph)),
        (COMPACT, decode_slice_ns(&compact)),
        ("csr", decode_slice_ns(&csr)),
    ] {
        rows.emit(reporter, structure, "decode-slice", (1, ns, "ns/arc"))?;
    }
    Ok((graph, csr))
}

/// A graph file's edges over dense ids (each undirected edge once, weights dropped), read
/// as `packgraph run --undirected` reads it.
fn read_edges(path: &Path) -> anyhow::Result<(usize, Vec<(VertexId, VertexId)>)> {
    let graph =
        read_graph(path, Some(false)).with_context(|| format!("reading {}", path.display()))?;
    Ok((graph.num_vertices(), any_edges_of(&graph)))
}

fn measure_updates(
    reporter: &Reporter,
    args: &GraphArgs,
    graph: &mut Graph,
    csr: &CsrGraph,
    threads: usize,
) -> anyhow::Result<()> {
    let before = graph.num_arcs();
    for &batch in args.batch_sizes.iter() {
        let total = args.max_batch_edges.min(100 * batch).max(batch);
        let seed = (args.common.seed, batch as u64);
        let edges = fresh_edges(args.scale, total, seed, |u, v| {
            csr.out_slice(u).binary_search(&v).is_ok()
        });
        let (inserts, insert_time) = timed(|| {
            edges
                .chunks(batch)
                .try_for_each(|chunk| graph.insert_edges(chunk).map(drop))
        });
        inserts?;
        let inserted = graph.num_arcs() - before;
        let (deletes, delete_time) = timed(|| {
            edges
                .chunks(batch)
                .try_for_each(|chunk| graph.delete_edges(chunk).map(drop))
        });
        deletes?;
        anyhow::ensure!(
            graph.num_arcs() == before,
            "deleting the inserted edges did not restore the graph"
        );
        for (op, time) in [("insert_edges", insert_time), ("delete_edges", delete_time)] {
            reporter.emit(Record {
                bench: "graph",
                structure: "packgraph",
                op,
                param: batch as u64,
                threads,
                value: inserted as f64 / time.as_secs_f64(),
                unit: "edges/s",
                keys: Some(inserted as u64),
                dataset: Some("kronecker"),
            })?;
        }
    }
    Ok(())
}
