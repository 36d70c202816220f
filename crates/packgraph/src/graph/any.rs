//! [`AnyGraph`]: a graph whose edges may or may not carry weights, as files give them; the
//! one place that dispatches on the two kinds.

use super::{Graph, GraphRead, IdMap, WeightedGraph};
use crate::Result;

/// A graph whose edges may or may not carry weights, as files give them.
#[derive(Debug)]
pub enum AnyGraph {
    /// Edges without weights.
    Unweighted(Graph),
    /// Edges with `f64` weights.
    Weighted(WeightedGraph),
}

impl AnyGraph {
    /// Whether edges carry weights.
    pub fn is_weighted(&self) -> bool {
        matches!(self, Self::Weighted(_))
    }

    /// The external ids of the vertices.
    pub fn ids(&self) -> &IdMap {
        match self {
            Self::Unweighted(g) => g.ids(),
            Self::Weighted(g) => g.ids(),
        }
    }

    /// The graph with `ids` as its vertices' external ids (see [`Graph::with_ids`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`](crate::Error::InvalidInput) if `ids` does not name exactly the graph's vertices.
    pub fn with_ids(self, ids: IdMap) -> Result<Self> {
        Ok(match self {
            Self::Unweighted(g) => Self::Unweighted(g.with_ids(ids)?),
            Self::Weighted(g) => Self::Weighted(g.with_ids(ids)?),
        })
    }

    /// Number of vertices.
    pub fn num_vertices(&self) -> usize {
        match self {
            Self::Unweighted(g) => g.num_vertices(),
            Self::Weighted(g) => g.num_vertices(),
        }
    }

    /// Stored arcs (an undirected edge is stored as two arcs).
    pub fn num_arcs(&self) -> usize {
        match self {
            Self::Unweighted(g) => g.num_arcs(),
            Self::Weighted(g) => g.num_arcs(),
        }
    }

    /// Edges: arcs for a directed graph, half of them for an undirected one.
    pub fn num_edges(&self) -> usize {
        if self.is_directed() {
            self.num_arcs()
        } else {
            self.num_arcs() / 2
        }
    }

    /// Whether edges are directed.
    pub fn is_directed(&self) -> bool {
        match self {
            Self::Unweighted(g) => g.is_directed(),
            Self::Weighted(g) => g.is_directed(),
        }
    }

    /// Bytes of the edge arrays and of the flat index if built.
    pub fn size_in_bytes(&self) -> usize {
        match self {
            Self::Unweighted(g) => g.size_in_bytes(),
            Self::Weighted(g) => g.size_in_bytes(),
        }
    }

    /// Builds the flat vertex index now.
    pub fn build_index(&self) {
        match self {
            Self::Unweighted(g) => g.build_index(),
            Self::Weighted(g) => g.build_index(),
        }
    }

    /// Checks every invariant of the graph (see [`Graph::check_invariants`]).
    ///
    /// # Errors
    /// [`Error::Corrupt`](crate::Error::Corrupt) naming the first one found broken.
    pub fn check_invariants(&self) -> Result<()> {
        match self {
            Self::Unweighted(g) => g.check_invariants(),
            Self::Weighted(g) => g.check_invariants(),
        }
    }

    /// Out-degrees of all vertices.
    pub fn out_degrees(&self) -> Vec<u32> {
        match self {
            Self::Unweighted(g) => g.out_degrees(),
            Self::Weighted(g) => g.out_degrees(),
        }
    }
}
