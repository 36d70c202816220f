//! Snapshots (`.pgb`) and data directories: every process reads the file with the core's
//! snapshot reader, or recovers the directory read-only with the core's loader (its last
//! checkpoint and the log after it, without the writer's lock), as `packgraph run --input`
//! does; then it keeps the arcs of its share of the vertices and routes them to their
//! owners as the edge-list loader routes the edges it parses.
//!
//! The keys the processes use for the vertices (the "external ids" of [`Part::ids`]) are
//! then the file's vertex numbers, so that ties of labels and the order of the output are
//! those of `packgraph run`; rank 0 keeps the file's own ids (integers or names) in an
//! edgeless graph, [`Part::file_ids`], to write the results, resolve `--source` and number
//! the new vertices of an update file as the core numbers them.
//!
//! Each process holds the whole graph while it takes its share, so loading needs the
//! memory of the whole graph on every process for a moment (the share is kept, the rest
//! dropped before the routing).

use std::path::Path;

use packgraph::graph::{AnyGraph, ExternalId, Graph, VertexId, WeightedGraphRead};
use packgraph::io::{Format, LoadOptions as CoreOptions};
use rayon::prelude::*;

use super::{build, dictionary, empty_part, endpoints, route, LoadOptions, Parsed, Piece};
use super::{resolve, DistError, Part};
use crate::comm::{Comm, Group};
use crate::dist::agree;

/// A graph file the core reads as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stored {
    /// A snapshot file (`packgraph convert … g.pgb`).
    Snapshot,
    /// A data directory (`packgraph create`).
    Directory,
}

impl Stored {
    /// What `path` is, if a snapshot or a data directory.
    pub(super) fn of(path: &Path) -> Option<Self> {
        if packgraph::store::is_store(path) {
            Some(Self::Directory)
        } else if path.is_file() && matches!(Format::detect(path), Ok(Format::Binary)) {
            Some(Self::Snapshot)
        } else {
            None
        }
    }

    /// What `path` is, as every process sees it. A collective.
    ///
    /// # Errors
    /// [`DistError::Usage`] if the processes see different things at `path` (different
    /// files on different hosts).
    pub(super) fn agreed(comm: &dyn Comm, path: &Path) -> Result<Option<Self>, DistError> {
        let code: u64 = match Self::of(path) {
            None => 0,
            Some(Self::Snapshot) => 1,
            Some(Self::Directory) => 2,
        };
        let (mut high, mut low) = ([code], [!code]);
        comm.allreduce_max(Group::World, &mut high);
        comm.allreduce_max(Group::World, &mut low);
        if high[0] != !low[0] {
            return Err(DistError::Usage(format!(
                "{}: the processes see different files here (a snapshot, a data directory or an edge list); give every host the same input",
                path.display()
            )));
        }
        Ok(match code {
            1 => Some(Self::Snapshot),
            2 => Some(Self::Directory),
            _ => None,
        })
    }
}

/// A core error as the processes report it: damaged bytes fail the run (exit code 3),
/// anything else is the user's to fix (2).
fn dist_error(e: packgraph::Error) -> DistError {
    match e {
        e @ packgraph::Error::Corrupt { .. } => DistError::Failed(e.to_string()),
        e => DistError::Usage(e.to_string()),
    }
}

/// Reads the whole graph of `path` with the core's reader.
fn read(path: &Path, kind: Stored, directed: Option<bool>) -> Result<AnyGraph, DistError> {
    let graph = match kind {
        Stored::Directory => packgraph::store::load_any(path).map_err(dist_error)?,
        Stored::Snapshot => {
            let options = CoreOptions {
                format: Some(Format::Binary),
                directed,
                progress: None,
                ..CoreOptions::default()
            };
            return packgraph::io::load(path, &options)
                .map(|data| data.graph)
                .map_err(dist_error);
        }
    };
    match directed {
        Some(d) if d != graph.is_directed() => Err(DistError::Usage(format!(
            "{}: the data directory holds a{} graph",
            path.display(),
            if d { "n undirected" } else { " directed" }
        ))),
        _ => Ok(graph),
    }
}

/// Vertices per task when taking a share.
const VERTICES_PER_PIECE: usize = 1 << 14;

/// The arcs of vertices `share` as pieces of key pairs (each undirected edge once, from its
/// smaller end), with their weights if `weighted`.
fn take<G: WeightedGraphRead + Sync>(
    graph: &G,
    share: std::ops::Range<usize>,
    weighted: bool,
) -> Vec<Piece> {
    let directed = graph.is_directed();
    let starts: Vec<usize> = share.clone().step_by(VERTICES_PER_PIECE).collect();
    starts
        .par_iter()
        .map(|&first| {
            let mut piece = Piece::default();
            for u in first..(first + VERTICES_PER_PIECE).min(share.end) {
                let u = u as VertexId;
                graph.for_each_out_edge(u, |v, w| {
                    if directed || u < v {
                        piece.edges.push((u64::from(u), u64::from(v)));
                        if weighted {
                            piece.weights.push(w);
                        }
                    }
                    true
                });
            }
            piece
        })
        .collect()
}

/// Loads a snapshot or data directory: every process returns its part, rank 0's with the
/// file's ids. A collective.
///
/// # Errors
/// On every process: [`DistError::Usage`] for a file that cannot be read, a `--directed`
/// the file contradicts, `--weighted` on an unweighted graph or an empty graph;
/// [`DistError::Failed`] for damaged bytes (a checksum or structure that does not hold)
/// and past 2^32 − 1 vertex slots.
pub(super) fn load_stored(
    comm: &dyn Comm,
    options: &LoadOptions,
    kind: Stored,
) -> Result<Part, DistError> {
    let path = &options.path;
    let graph = agree(comm, read(path, kind, options.directed))?;
    let (directed, weighted) = (graph.is_directed(), graph.is_weighted());
    if options.weighted && !weighted {
        let e = format!("--weighted: {} has no edge weights", path.display());
        return Err(DistError::Usage(e));
    }
    let n = graph.num_vertices();
    if n == 0 {
        return Err(DistError::Usage(format!(
            "{} has no vertices",
            path.display()
        )));
    }
    let (rank, size) = (comm.rank(), comm.size());
    let share = n * rank / size..n * (rank + 1) / size;
    let pieces = match &graph {
        AnyGraph::Unweighted(g) => take(g, share.clone(), false),
        AnyGraph::Weighted(g) => take(g, share.clone(), true),
    };
    // Rank 0 keeps the ids alone, in a graph without edges (it numbers new vertices of
    // update files as the file's graph would).
    let file_ids = if rank == 0 {
        let ids = graph.ids().clone();
        let kept = Graph::from_edges(n, &[], directed).and_then(|g| g.with_ids(ids));
        Some(kept.map_err(|e| DistError::Failed(e.to_string())))
    } else {
        None
    }
    .transpose();
    drop(graph);
    let file_ids = agree(comm, file_ids)?;
    let parsed = Parsed {
        pieces,
        columns: if weighted { 3 } else { 2 },
        ..Parsed::default()
    };
    let keys: Vec<u64> = (share.start as u64..share.end as u64).collect();
    let ids = dictionary(comm, &keys, None)?;
    drop(keys);
    let mut part = empty_part(comm, ids, directed, weighted)?;
    part.numbered = true;
    part.file_ids = file_ids;
    let ends = endpoints(&parsed);
    let distinct = ends.values();
    let dense = resolve(comm, &part, &distinct);
    drop(distinct);
    let records = route(comm, &part, &parsed, &ends, &dense, path)?;
    drop(parsed);
    build(comm, &mut part, records)?;
    Ok(part)
}

/// The key of the vertex `--source` names in the file's ids `ids`, by name first where the
/// graph has names, as `packgraph run` finds it; by default the vertex of the smallest id.
pub(crate) fn source_key(ids: &Graph, source: Option<&str>) -> Result<u64, DistError> {
    let ids = ids.ids();
    let Some(text) = source else {
        let smallest = ids
            .iter()
            .enumerate()
            .min_by(|a, b| a.1.cmp(&b.1))
            .map_or(0, |(v, _)| v);
        return Ok(smallest as u64);
    };
    let int = text.parse::<u64>().ok().map(ExternalId::Int);
    let found = match &int {
        _ if ids.has_names() => ids
            .internal_name(text)
            .or_else(|| int.as_ref().and_then(|i| ids.internal_id(i))),
        Some(int) => ids.internal_id(int),
        None => {
            return Err(DistError::Usage(format!(
                "--source {text}: the input's vertices are integers (0 to {}), and this is none",
                u64::MAX
            )))
        }
    };
    found.map(u64::from).ok_or_else(|| {
        DistError::Usage(format!(
            "--source {text}: not a vertex of the input graph ({} vertices)",
            ids.len()
        ))
    })
}
