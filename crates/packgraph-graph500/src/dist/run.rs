//! One run of `packgraph-dist run`: load, apply the updates, run the algorithm, gather the
//! result on rank 0, counting the bytes each phase sends.

use std::path::PathBuf;
use std::time::Instant;

use packgraph::algo::{AlgoOutput, Algorithm, AlgorithmKind, Values};
use packgraph::graph::{IdMap, VertexId};
use packgraph::layout::{by_external_id, ids_increase};
use serde::{Deserialize, Serialize};

use super::load::{load, resolve, source_key, LoadOptions, MISSING};
use super::output::{gather, Local};
use super::update::apply_file;
use super::{agree, algo, alltoall_u64, owner_of_id, DistError, Part};
use crate::comm::{Comm, Counting, Group};

/// The algorithms `packgraph-dist` runs.
pub const ALGORITHMS: [AlgorithmKind; 6] = [
    AlgorithmKind::Bfs,
    AlgorithmKind::Pagerank,
    AlgorithmKind::Wcc,
    AlgorithmKind::Sssp,
    AlgorithmKind::Cdlp,
    AlgorithmKind::Lcc,
];

/// What to run.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The algorithm (one of [`ALGORITHMS`]).
    pub algorithm: AlgorithmKind,
    /// The input.
    pub load: LoadOptions,
    /// Source of bfs and sssp by its id in the input (default: the smallest id).
    pub source: Option<String>,
    /// Update batches to apply before the algorithm.
    pub updates: Option<PathBuf>,
    /// PageRank and CDLP iterations (defaults 20 and 10).
    pub iterations: Option<usize>,
    /// PageRank damping factor.
    pub damping: f64,
    /// Bit-pack BFS frontier messages.
    pub pack: bool,
}

impl RunConfig {
    /// `algorithm` on `path` with the defaults of `packgraph run`.
    pub fn new(algorithm: AlgorithmKind, path: impl Into<PathBuf>) -> Self {
        Self {
            algorithm,
            load: LoadOptions {
                path: path.into(),
                directed: None,
                weighted: false,
            },
            source: None,
            updates: None,
            iterations: None,
            damping: 0.85,
            pack: true,
        }
    }
}

/// Bytes this process sent in each phase, and what it holds.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// Sent while loading.
    pub load_bytes: u64,
    /// Sent while applying updates.
    pub update_bytes: u64,
    /// Sent by the algorithm.
    pub algorithm_bytes: u64,
    /// Sent gathering the result.
    pub output_bytes: u64,
    /// Collectives the algorithm called.
    pub algorithm_collectives: u64,
    /// Seconds loading (to the end of the last process's part).
    pub load_seconds: f64,
    /// Seconds applying updates.
    pub update_seconds: f64,
    /// Seconds in the algorithm.
    pub algorithm_seconds: f64,
    /// Vertices owned here.
    pub owned: u64,
    /// Arcs stored here.
    pub arcs: u64,
    /// Vertices of the store here: owned ones and ghosts.
    pub store_vertices: u64,
    /// Bytes of the graph store here, after the algorithm (its vertex index included).
    pub store_bytes: u64,
}

/// The result on rank 0 (`None` elsewhere) and this process's statistics. A collective.
///
/// # Errors
/// As [`load`], [`apply_file`] and the algorithms, on every process; a usage error for an
/// algorithm not distributed, a bad damping factor or source.
pub fn run(
    comm: &dyn Comm,
    config: &RunConfig,
) -> Result<(Option<(IdMap, AlgoOutput)>, Stats), DistError> {
    check(config)?;
    let mut stats = Stats::default();
    let counting = Counting::new(comm);
    let start = Instant::now();
    let mut part = load(&counting, &config.load)?;
    stats.load_seconds = start.elapsed().as_secs_f64();
    stats.load_bytes = counting.sent();
    // The default source is the smallest id of the file, as `packgraph run` takes vertex 0
    // (new ids of updates come after the file's); a source given is looked up after the
    // updates, which may add it.
    let default_source = match config.source {
        None => Some(source_id(comm, &part, None)?),
        Some(_) => None,
    };
    if let Some(path) = &config.updates {
        let counting = Counting::new(comm);
        let start = Instant::now();
        apply_file(&counting, &mut part, path)?;
        stats.update_seconds = start.elapsed().as_secs_f64();
        stats.update_bytes = counting.sent();
    }
    let source_id = match default_source {
        Some(x) => x,
        None => source_id(comm, &part, config.source.as_deref())?,
    };
    let source = match config.algorithm {
        AlgorithmKind::Bfs | AlgorithmKind::Sssp => source(comm, &part, source_id)?,
        _ => 0,
    };
    stats.owned = part.owned() as u64;
    stats.arcs = part.stored_arcs() as u64;
    stats.store_vertices = part.dense_of.len() as u64;
    let counting = Counting::new(comm);
    let start = Instant::now();
    let order = match config.algorithm {
        AlgorithmKind::Wcc | AlgorithmKind::Cdlp => vertex_order(&counting, &part)?,
        _ => None,
    };
    let labels_of = order.as_ref().map_or(&part.ids, |o| &o.owned);
    let values = compute(&counting, &part, config, source, labels_of)?;
    stats.algorithm_seconds = start.elapsed().as_secs_f64();
    stats.algorithm_bytes = counting.sent();
    stats.algorithm_collectives = counting.calls();
    // After the algorithm, so that the vertex index its scans built is counted.
    stats.store_bytes = part.store_bytes() as u64;
    let counting = Counting::new(comm);
    let mut result = gather(&counting, &part, &values)?;
    stats.output_bytes = counting.sent();
    // Labels that were ranks in id order name the vertex of that rank.
    if let (Some(order), Some((_, output))) = (&order, &mut result) {
        if let Values::Labels(labels) = &mut output.values {
            for l in labels.iter_mut() {
                *l = order.keys[*l as usize];
            }
        }
    }
    Ok((result, stats))
}

/// The rank of each vertex in the order of the file's ids, for a numbered input whose keys
/// do not follow that order.
#[derive(Debug)]
struct Order {
    /// The rank of each owned vertex, by local index.
    owned: Vec<u64>,
    /// On rank 0, the key of each rank.
    keys: Vec<VertexId>,
}

/// For labels that compare vertices (WCC's smallest id, CDLP's ties) as the core compares
/// them, in the order of the file's ids: the ranks in that order, when a numbered input's
/// keys do not follow it (a snapshot whose ids do not increase, names, vertices added by
/// updates). `None` where the keys compare alike. A collective.
fn vertex_order(comm: &dyn Comm, part: &Part) -> Result<Option<Order>, DistError> {
    if !part.numbered {
        return Ok(None);
    }
    let keys = part
        .file_ids
        .as_ref()
        .filter(|ids| !ids_increase(ids.ids()))
        .map(|ids| by_external_id(ids.ids()));
    let mut reorder = [u64::from(keys.is_some())];
    comm.allreduce_max(Group::World, &mut reorder);
    if reorder[0] == 0 {
        return Ok(None);
    }
    let keys = keys.unwrap_or_default();
    let mut parts = vec![Vec::new(); comm.size()];
    for (rank, &key) in keys.iter().enumerate() {
        let owner = &mut parts[owner_of_id(u64::from(key), comm.size())];
        owner.extend([u64::from(key), rank as u64]);
    }
    let mut owned = vec![u64::MAX; part.owned()];
    for pair in alltoall_u64(comm, parts).concat().chunks_exact(2) {
        if let Some(&i) = part.index.get(&pair[0]) {
            owned[i as usize] = pair[1];
        }
    }
    let complete = if owned.contains(&u64::MAX) {
        Err(DistError::Failed(
            "a vertex has no rank in the order of the file's ids".into(),
        ))
    } else {
        Ok(())
    };
    agree(comm, complete)?;
    Ok(Some(Order { owned, keys }))
}

fn check(config: &RunConfig) -> Result<(), DistError> {
    if !ALGORITHMS.contains(&config.algorithm) {
        let names: Vec<&str> = ALGORITHMS.iter().map(|a| a.name()).collect();
        return Err(DistError::Usage(format!(
            "{}: not distributed; packgraph-dist runs {} (packgraph run runs the others on one machine)",
            config.algorithm,
            names.join(", ")
        )));
    }
    let mut algorithm = Algorithm::new(config.algorithm);
    algorithm.damping = config.damping;
    algorithm.iterations = config.iterations;
    algorithm
        .validate()
        .map_err(|_| DistError::Usage(format!("--damping {}: must be in [0, 1]", config.damping)))
}

/// Runs the algorithm; `labels_of`: what WCC and CDLP labels compare, by local index.
fn compute(
    comm: &dyn Comm,
    part: &Part,
    config: &RunConfig,
    source: VertexId,
    labels_of: &[u64],
) -> Result<Local, DistError> {
    let mut algorithm = Algorithm::new(config.algorithm);
    algorithm.iterations = config.iterations;
    Ok(match config.algorithm {
        AlgorithmKind::Bfs => Local::Hops(algo::bfs(comm, part, source, config.pack)?),
        AlgorithmKind::Pagerank => Local::Reals(algo::pagerank(
            comm,
            part,
            config.damping,
            algorithm.iterations(),
        )?),
        AlgorithmKind::Wcc => Local::Labels(algo::wcc(comm, part, labels_of)),
        AlgorithmKind::Cdlp => {
            Local::Labels(algo::cdlp(comm, part, labels_of, algorithm.iterations())?)
        }
        AlgorithmKind::Lcc => Local::Reals(algo::lcc(comm, part)?),
        _ => Local::Reals(algo::sssp(comm, part, source)?),
    })
}

/// The external id of `--source`, by default the smallest id (for a numbered input, its
/// key, which rank 0 finds). A collective.
fn source_id(comm: &dyn Comm, part: &Part, id: Option<&str>) -> Result<u64, DistError> {
    if part.numbered {
        let key = match &part.file_ids {
            Some(ids) => source_key(ids, id),
            None => Ok(0),
        };
        let mut key = [agree(comm, key)?];
        comm.allreduce_max(Group::World, &mut key);
        return Ok(key[0]);
    }
    if let Some(text) = id {
        return text.parse::<u64>().map_err(|_| {
            DistError::Usage(format!(
                "--source {text}: the input's vertices are integers (0 to {}), and this is none",
                u64::MAX
            ))
        });
    }
    let mut flipped = [!part.ids.iter().copied().min().unwrap_or(u64::MAX)];
    comm.allreduce_max(Group::World, &mut flipped);
    Ok(!flipped[0])
}

/// The dense id of external id `x`. A collective.
fn source(comm: &dyn Comm, part: &Part, x: u64) -> Result<VertexId, DistError> {
    let dense = resolve(comm, part, &[x])[0];
    let outcome = if dense == MISSING {
        Err(DistError::Usage(format!(
            "--source {x}: not a vertex of the input graph ({} vertices)",
            part.num_vertices
        )))
    } else {
        Ok(dense as VertexId)
    };
    agree(comm, outcome)
}
