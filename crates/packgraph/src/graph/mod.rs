//! The dynamic graph (F-Graph's layout, CPMA paper section 6): edge `(u, v)` is the key
//! `(u << 32) | v` in one CPMA, so a vertex's out-neighbors are one sorted, compressed run.
//!
//! * Undirected graphs store both directions of every edge. Directed graphs also keep a
//!   CPMA of reversed keys `(v << 32) | u`, so pull-style traversals read in-neighbors.
//! * Edge policy: a graph is a set of edges. Inserting an edge already present, or deleting
//!   an absent one, changes nothing and is not an error. Self-loops are not stored (the
//!   LDBC Graphalytics graphs have none and its algorithms assume so); their endpoints still
//!   become vertices, and batch results count the loops skipped.
//! * Vertices are `0..num_vertices()`; the count grows to cover every endpoint inserted.
//! * Each batch is applied whole before the call returns (one writer, `&mut self`).
//! * Reads go through [`GraphRead`]; the flat vertex index they use is built in parallel on
//!   first use after an update and cached until the next one.
//!
//! Left out for now: edge weights (the key→value PMA) and snapshots, which come next.

mod csr;
mod index;
mod read;

use std::ops::Range;
use std::sync::OnceLock;

use crate::pma::Cpma;

pub use self::csr::CsrGraph;
use self::index::RunIndex;
pub use self::read::{GraphRead, VertexId};

/// Errors of the graph layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GraphError {
    /// More vertices than 32-bit ids can name.
    #[error("cannot add {requested} vertices to {existing}: ids are limited to 2^32 vertices")]
    TooManyVertices {
        /// Vertices already in the graph.
        existing: usize,
        /// Vertices asked for.
        requested: usize,
    },
}

/// What one edge batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EdgeBatchStats {
    /// Edges added (or removed); an undirected edge counts once.
    pub changed: usize,
    /// Self-loops in the batch, which are not stored.
    pub self_loops: usize,
}

/// The key of edge `(u, v)`.
#[inline]
pub(crate) fn edge_key(u: VertexId, v: VertexId) -> u64 {
    (u64::from(u) << 32) | u64::from(v)
}

/// Flat indexes of both directions.
#[derive(Debug, Default)]
struct FlatIndex {
    out: RunIndex,
    incoming: Option<RunIndex>,
}

/// A dynamic graph stored in compressed packed memory arrays; the single writer.
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead};
///
/// let mut g = Graph::new(false);
/// let stats = g.insert_edges(&[(0, 1), (1, 2), (2, 2), (1, 0)]);
/// assert_eq!((stats.changed, stats.self_loops), (2, 1));
/// assert_eq!(g.out_neighbors(1), [0, 2]);
/// g.delete_edges(&[(2, 1)]);
/// assert_eq!(g.out_degree(1), 1);
/// ```
#[derive(Debug)]
pub struct Graph {
    directed: bool,
    num_vertices: usize,
    out: Cpma,
    incoming: Option<Cpma>,
    index: OnceLock<FlatIndex>,
}

impl Graph {
    /// An empty graph.
    pub fn new(directed: bool) -> Self {
        Self {
            directed,
            num_vertices: 0,
            out: Cpma::new(),
            incoming: directed.then(Cpma::new),
            index: OnceLock::new(),
        }
    }

    /// A graph on `num_vertices` vertices (grown to cover every endpoint) with `edges`.
    pub fn from_edges(num_vertices: usize, edges: &[(VertexId, VertexId)], directed: bool) -> Self {
        let mut graph = Self::new(directed);
        graph.num_vertices = num_vertices;
        graph.insert_edges(edges);
        graph
    }

    /// Inserts a batch of edges (any order; duplicates and present edges are no-ops).
    pub fn insert_edges(&mut self, edges: &[(VertexId, VertexId)]) -> EdgeBatchStats {
        self.update(edges, true)
    }

    /// Deletes a batch of edges (absent edges are no-ops).
    pub fn delete_edges(&mut self, edges: &[(VertexId, VertexId)]) -> EdgeBatchStats {
        self.update(edges, false)
    }

    fn update(&mut self, edges: &[(VertexId, VertexId)], insert: bool) -> EdgeBatchStats {
        let arcs_per_edge = if self.directed { 1 } else { 2 };
        let mut keys = Vec::with_capacity(edges.len() * arcs_per_edge);
        let mut reversed = Vec::with_capacity(if self.directed { edges.len() } else { 0 });
        let mut self_loops = 0;
        for &(u, v) in edges {
            if insert {
                self.num_vertices = self.num_vertices.max(u.max(v) as usize + 1);
            }
            if u == v {
                self_loops += 1;
                continue;
            }
            keys.push(edge_key(u, v));
            if self.directed {
                reversed.push(edge_key(v, u));
            } else {
                keys.push(edge_key(v, u));
            }
        }
        let apply = |set: &mut Cpma, keys: &[u64]| {
            if insert {
                set.insert_batch(keys)
            } else {
                set.remove_batch(keys)
            }
        };
        let (arcs, _) = rayon::join(
            || apply(&mut self.out, &keys),
            || self.incoming.as_mut().map(|set| apply(set, &reversed)),
        );
        self.index = OnceLock::new();
        EdgeBatchStats {
            changed: arcs / arcs_per_edge,
            self_loops,
        }
    }

    /// Adds `count` isolated vertices; returns their ids.
    ///
    /// # Errors
    /// [`GraphError::TooManyVertices`] if the count would pass `u32::MAX`; nothing is added.
    pub fn add_vertices(&mut self, count: usize) -> Result<Range<VertexId>, GraphError> {
        let too_many = GraphError::TooManyVertices {
            existing: self.num_vertices,
            requested: count,
        };
        let end = self
            .num_vertices
            .checked_add(count)
            .ok_or(too_many.clone())?;
        let (Ok(first), Ok(last)) = (
            VertexId::try_from(self.num_vertices),
            VertexId::try_from(end),
        ) else {
            return Err(too_many);
        };
        self.num_vertices = end;
        self.index = OnceLock::new();
        Ok(first..last)
    }

    /// Whether the edge `(u, v)` is present.
    pub fn has_edge(&self, u: VertexId, v: VertexId) -> bool {
        self.out.contains(edge_key(u, v))
    }

    /// Bytes of the edge arrays and of the flat index if built.
    pub fn size_in_bytes(&self) -> usize {
        let index = self.index.get().map_or(0, |i| {
            i.out.size_in_bytes() + i.incoming.as_ref().map_or(0, RunIndex::size_in_bytes)
        });
        self.out.size_in_bytes() + self.incoming.as_ref().map_or(0, Cpma::size_in_bytes) + index
    }

    /// Builds the flat vertex index now (it is otherwise built on the first read).
    pub fn build_index(&self) {
        let _ = self.flat();
    }

    /// Out-degrees of all vertices.
    pub fn out_degrees(&self) -> &[u32] {
        self.flat().out.degrees()
    }

    fn flat(&self) -> &FlatIndex {
        self.index.get_or_init(|| {
            let (out, incoming) = rayon::join(
                || RunIndex::build(&self.out, self.num_vertices),
                || {
                    self.incoming
                        .as_ref()
                        .map(|set| RunIndex::build(set, self.num_vertices))
                },
            );
            FlatIndex { out, incoming }
        })
    }
}

impl GraphRead for Graph {
    fn num_vertices(&self) -> usize {
        self.num_vertices
    }

    fn num_edges(&self) -> usize {
        self.out.len()
    }

    fn is_directed(&self) -> bool {
        self.directed
    }

    fn out_degree(&self, v: VertexId) -> usize {
        self.flat().out.degree(v)
    }

    fn in_degree(&self, v: VertexId) -> usize {
        let flat = self.flat();
        flat.incoming.as_ref().unwrap_or(&flat.out).degree(v)
    }

    fn for_each_out_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        self.flat().out.for_each(&self.out, v, f)
    }

    fn for_each_in_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        let flat = self.flat();
        match (&flat.incoming, &self.incoming) {
            (Some(index), Some(set)) => index.for_each(set, v, f),
            _ => flat.out.for_each(&self.out, v, f),
        }
    }
}

#[cfg(test)]
mod tests;
