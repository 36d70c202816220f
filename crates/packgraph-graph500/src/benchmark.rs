//! The benchmark run: generate (or read) the graph, build it (kernel 1, timed), draw the
//! search keys, and for each run a timed search (kernel 2) and its validation; then the
//! statistics. Every process runs [`run`] with the same [`Config`].

use std::path::PathBuf;
use std::time::Instant;

use packgraph::graph::GraphRead;
use packgraph::io::{generate, load, LoadOptions};

use crate::bfs::{bfs, Compression, LevelStats};
use crate::comm::{Comm, Group};
use crate::grid::{Grid, Layout};
use crate::local::LocalGraph;
use crate::report::{Report, RunReport, Summary, TepsSummary};
use crate::roots::sample_roots;
use crate::validate::validate;

/// Largest scale accepted (vertex ids are 32 bits; the generator makes at most 2^31).
pub const MAX_SCALE: u32 = 30;

/// Largest edge factor accepted.
pub const MAX_EDGE_FACTOR: usize = 1 << 16;

/// Largest number of searches accepted.
pub const MAX_ROOTS: usize = 1 << 16;

/// The seed of the generator and the root sampler unless given.
pub const DEFAULT_SEED: u64 = 0x6_7261_7068_3530;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// log2 of the vertex count of the generated graph.
    pub scale: u32,
    /// Edges per vertex of the generated graph.
    pub edge_factor: usize,
    /// Searches (the specification's 64).
    pub roots: usize,
    /// Frontier packing.
    pub compression: Compression,
    /// The process grid; the squarest one when `None`.
    pub grid: Option<Grid>,
    /// A graph file to search instead of a generated graph.
    pub input: Option<PathBuf>,
    /// Seed of the generator and the root sampler.
    pub seed: u64,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            scale: 16,
            edge_factor: 16,
            roots: 64,
            compression: Compression::Auto,
            grid: None,
            input: None,
            seed: DEFAULT_SEED,
        }
    }
}

/// Why a run did not finish.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Arguments that cannot work (checked identically by every process).
    #[error("{0}")]
    Usage(String),
    /// An input file that cannot be read (on any process).
    #[error("{0}")]
    Input(String),
    /// A message between processes that does not decode.
    #[error(transparent)]
    Internal(#[from] packgraph::Error),
}

impl Config {
    /// The grid to run on `processes` processes, or what is wrong with the arguments.
    ///
    /// # Errors
    /// [`RunError::Usage`] for a scale, edge factor or root count out of range, or a grid
    /// that `processes` does not fill.
    pub fn plan(&self, processes: usize) -> Result<Grid, RunError> {
        let usage = |m: String| Err(RunError::Usage(m));
        if self.input.is_none() && !(1..=MAX_SCALE).contains(&self.scale) {
            return usage(format!(
                "--scale {} is out of range 1..={MAX_SCALE}",
                self.scale
            ));
        }
        if self.input.is_none() && !(1..=MAX_EDGE_FACTOR).contains(&self.edge_factor) {
            return usage(format!(
                "--edgefactor {} is out of range 1..={MAX_EDGE_FACTOR}",
                self.edge_factor
            ));
        }
        if !(1..=MAX_ROOTS).contains(&self.roots) {
            return usage(format!(
                "--roots {} is out of range 1..={MAX_ROOTS}",
                self.roots
            ));
        }
        let grid = self.grid.unwrap_or(Grid::for_processes(processes));
        if grid.size() != processes {
            return usage(format!(
                "--grid {grid} needs {} processes, but {processes} were started",
                grid.size()
            ));
        }
        Ok(grid)
    }
}

/// This process's share of the input edges, the vertex count and the input edge count.
struct Input {
    edges: Vec<(u32, u32)>,
    num_vertices: usize,
    num_edges: u64,
}

fn generated(comm: &dyn Comm, config: &Config) -> Input {
    let total = config.edge_factor << config.scale;
    let share = total.div_ceil(comm.size());
    let start = (share * comm.rank()).min(total);
    let range = start..(start + share).min(total);
    Input {
        edges: generate::kronecker_slice(config.scale, config.edge_factor, config.seed, range),
        num_vertices: 1 << config.scale,
        num_edges: total as u64,
    }
}

/// Each edge of `graph` once (an undirected edge from its smaller end), from the vertices
/// `v` with `v mod size == rank`.
fn edges_of<G: GraphRead>(graph: &G, rank: usize, size: usize) -> Vec<(u32, u32)> {
    let mut edges = Vec::new();
    let directed = graph.is_directed();
    for u in (rank..graph.num_vertices()).step_by(size) {
        let u = u as u32;
        graph.for_each_out_neighbor(u, |v| {
            if directed || u <= v {
                edges.push((u, v));
            }
            true
        });
    }
    edges
}

/// Every process reads the file; if any fails, all return the first failure's message.
fn read_input(comm: &dyn Comm, path: &std::path::Path) -> Result<Input, RunError> {
    let loaded = load(path, &LoadOptions::default());
    let mut failed = [u64::from(loaded.is_err())];
    comm.allreduce_max(Group::World, &mut failed);
    let data = match loaded {
        Ok(data) if failed[0] == 0 => data,
        Ok(_) => {
            return Err(RunError::Input(format!(
                "{}: another process could not read it",
                path.display()
            )))
        }
        Err(error) => return Err(RunError::Input(error.to_string())),
    };
    let (edges, num_vertices) = match &data.graph {
        packgraph::graph::AnyGraph::Unweighted(g) => {
            (edges_of(g, comm.rank(), comm.size()), g.num_vertices())
        }
        packgraph::graph::AnyGraph::Weighted(g) => {
            (edges_of(g, comm.rank(), comm.size()), g.num_vertices())
        }
    };
    if num_vertices > 1 << MAX_SCALE {
        return Err(RunError::Input(format!(
            "{}: {num_vertices} vertices are more than the 2^{MAX_SCALE} this benchmark handles",
            path.display()
        )));
    }
    let mut num_edges = [edges.len() as u64];
    comm.allreduce_sum(Group::World, &mut num_edges);
    if num_edges[0] == 0 {
        return Err(RunError::Input(format!(
            "{}: the graph has no edges",
            path.display()
        )));
    }
    Ok(Input {
        edges,
        num_vertices,
        num_edges: num_edges[0],
    })
}

/// Seconds since `start`, the slowest process's.
fn slowest(comm: &dyn Comm, start: Instant) -> f64 {
    let mut ns = [start.elapsed().as_nanos() as u64];
    comm.allreduce_max(Group::World, &mut ns);
    ns[0] as f64 / 1e9
}

/// Sum over the vertices of a hash of `(vertex, level)`, over all processes.
fn levels_digest(comm: &dyn Comm, first: usize, levels: &[u32]) -> u64 {
    let mut sum = [levels.iter().enumerate().fold(0u64, |acc, (i, &level)| {
        let key = ((first + i) as u64) << 32 | u64::from(level);
        acc.wrapping_add(generate::SplitMix64::new(key, 0).next_u64())
    })];
    comm.allreduce_sum(Group::World, &mut sum);
    sum[0]
}

/// Waits for every process.
fn barrier(comm: &dyn Comm) {
    comm.allreduce_max(Group::World, &mut [0]);
}

/// The levels of a search over all processes: bytes summed, times the slowest process's.
fn combine_levels(comm: &dyn Comm, mut levels: Vec<LevelStats>) -> Vec<LevelStats> {
    let mut sums: Vec<u64> = levels
        .iter()
        .flat_map(|l| {
            [
                l.raw_bytes,
                l.sent_bytes,
                l.frontier_raw_bytes,
                l.frontier_sent_bytes,
            ]
        })
        .collect();
    let mut maxes: Vec<u64> = levels
        .iter()
        .flat_map(|l| [l.codec_ns, l.comm_ns, l.compute_ns])
        .collect();
    comm.allreduce_sum(Group::World, &mut sums);
    comm.allreduce_max(Group::World, &mut maxes);
    for (i, l) in levels.iter_mut().enumerate() {
        [
            l.raw_bytes,
            l.sent_bytes,
            l.frontier_raw_bytes,
            l.frontier_sent_bytes,
        ] = [
            sums[4 * i],
            sums[4 * i + 1],
            sums[4 * i + 2],
            sums[4 * i + 3],
        ];
        [l.codec_ns, l.comm_ns, l.compute_ns] = [maxes[3 * i], maxes[3 * i + 1], maxes[3 * i + 2]];
    }
    levels
}

/// Runs the benchmark (collective: every process calls it with the same `config`).
/// `pack` packs messages that cross the wire; `progress` gets a line per step (every
/// process calls it; print on one).
///
/// # Errors
/// [`RunError`] for bad arguments or input (every process returns it) or a message that
/// does not decode.
pub fn run(
    comm: &dyn Comm,
    config: &Config,
    pack: bool,
    progress: &mut dyn FnMut(&str),
) -> Result<Report, RunError> {
    let grid = config.plan(comm.size())?;
    if grid != comm.grid() {
        return Err(RunError::Usage(format!(
            "the communicator's grid {} is not the planned {grid}",
            comm.grid()
        )));
    }
    let start = Instant::now();
    let input = match &config.input {
        Some(path) => read_input(comm, path)?,
        None => generated(comm, config),
    };
    let graph_generation = slowest(comm, start);
    progress(&format!("graph_generation: {graph_generation:.3} s"));
    let layout = Layout::new(grid, input.num_vertices, comm.rank());
    barrier(comm);
    let start = Instant::now();
    let graph = LocalGraph::build(comm, layout, &input.edges);
    let construction_time = slowest(comm, start);
    drop(input.edges);
    progress(&format!("construction_time: {construction_time:.3} s"));
    let roots = sample_roots(comm, &graph, config.roots, config.seed);
    let mut runs = Vec::with_capacity(roots.len());
    let mut validation_errors = Vec::new();
    for (k, &root) in roots.iter().enumerate() {
        barrier(comm);
        let start = Instant::now();
        let search = bfs(comm, &graph, root, pack)?;
        let time = slowest(comm, start);
        let start = Instant::now();
        let check = validate(comm, &graph, root, &search.parents);
        let validate_time = slowest(comm, start);
        let levels = combine_levels(comm, search.stats);
        let first = layout.block_start(layout.rank);
        let owned = layout.owned_len();
        let levels_digest = levels_digest(comm, first, &search.levels[..owned]);
        progress(&format!(
            "bfs {k} root {root}: {time:.6} s, {} edges, {} levels, validation {}",
            check.nedge,
            levels.len(),
            if check.is_valid() { "passed" } else { "FAILED" }
        ));
        runs.push(RunReport {
            root,
            time,
            nedge: check.nedge,
            teps: check.nedge as f64 / time,
            validate_time,
            levels_digest,
            levels,
        });
        if !check.is_valid() {
            validation_errors.extend(check.errors.iter().map(|e| format!("root {root}: {e}")));
            break;
        }
    }
    Ok(report(
        config,
        comm,
        &graph,
        pack,
        input.num_edges,
        graph_generation,
        construction_time,
        runs,
        validation_errors,
    ))
}

#[allow(
    clippy::too_many_arguments,
    reason = "the parts of a report, gathered once"
)]
fn report(
    config: &Config,
    comm: &dyn Comm,
    graph: &LocalGraph,
    pack: bool,
    num_input_edges: u64,
    graph_generation: f64,
    construction_time: f64,
    runs: Vec<RunReport>,
    validation_errors: Vec<String>,
) -> Report {
    let n = graph.layout.num_vertices;
    let times: Vec<f64> = runs.iter().map(|r| r.time).collect();
    let nedges: Vec<f64> = runs.iter().map(|r| r.nedge as f64).collect();
    let validates: Vec<f64> = runs.iter().map(|r| r.validate_time).collect();
    let total =
        |f: fn(&LevelStats) -> u64| -> u64 { runs.iter().flat_map(|r| &r.levels).map(f).sum() };
    Report {
        scale: if config.input.is_some() {
            n.next_power_of_two().trailing_zeros()
        } else {
            config.scale
        },
        edgefactor: num_input_edges as f64 / n as f64,
        nbfs: runs.len(),
        graph_generation,
        num_mpi_processes: comm.size(),
        grid: comm.grid().to_string(),
        compression: pack,
        construction_time,
        num_vertices: n,
        num_input_edges,
        time: Summary::of(&times),
        nedge: Summary::of(&nedges),
        teps: TepsSummary::of(&times, &nedges),
        validate: Summary::of(&validates),
        frontier_raw_bytes: total(|l| l.frontier_raw_bytes),
        frontier_sent_bytes: total(|l| l.frontier_sent_bytes),
        raw_bytes: total(|l| l.raw_bytes),
        sent_bytes: total(|l| l.sent_bytes),
        runs,
        validation_errors,
    }
}
