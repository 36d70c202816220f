//! Vertex orders: where each vertex's run of edges sits in memory.
//!
//! In packgraph a vertex's place is its id: the id order decides which vertices' neighbour
//! runs share a cache line, a page or a huge page of the CPMA, and how small the deltas
//! between neighbour ids are. This layer computes orders from any
//! [`GraphRead`] as a [`Permutation`] and applies one with [`Graph::relabel`](crate::graph::Graph::relabel),
//! which builds the renumbered graph and carries its external ids and properties along, so
//! that results in external ids do not change.
//!
//! Orders ([`Order`]):
//! * `hba`: hierarchical blocking for every level of the memory hierarchy at once (A. Roy,
//!   "Memory Hierarchy Sensitive Graph Layout", `HBGraphOnePass`), vertex size the bytes of
//!   its compressed neighbour run, block sizes [`Levels`] (default 64 B, 1 KiB, 4 KiB,
//!   2 MiB);
//! * `bfs`, `rcm` (reverse Cuthill–McKee), `degree` (decreasing), `random` (seeded) and
//!   `identity`, the baselines.
//!
//! Every order covers disconnected graphs (components one after another) and isolated
//! vertices, and follows a directed graph's edges both ways. The traversal orders are
//! sequential by nature; the adjacency they read, the vertex sizes, the degree sort and the
//! relabeling run on all threads. Left out: orders that need a global optimisation (Gorder,
//! Rabbit order) and relabeling in place.
//!
//! ```
//! use packgraph::graph::{Graph, GraphRead};
//! use packgraph::layout::{Levels, Order};
//!
//! let g = Graph::from_edges(6, &[(5, 3), (3, 1), (1, 4), (0, 2)], false).unwrap();
//! let perm = Order::Hba(Levels::default()).permutation(&g);
//! let h = g.relabel(&perm).unwrap();
//! assert_eq!(h.num_edges(), g.num_edges());
//! assert_eq!(h.ids().external(perm.new_id(5)), 5);
//! ```

mod adjacency;
mod hba;
mod levels;
mod locality;
mod orders;
mod permutation;
mod relabel;

use std::fmt;

use crate::graph::{AnyGraph, GraphRead};
use crate::{Error, Result};

pub use self::levels::Levels;
pub use self::locality::{by_external_id, ids_increase, mean_log2_gap};
pub use self::permutation::Permutation;

/// A vertex order to compute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Order {
    /// Hierarchical blocking for the given block sizes.
    Hba(Levels),
    /// Breadth-first, component by component.
    Bfs,
    /// Reverse Cuthill–McKee.
    Rcm,
    /// Decreasing degree.
    Degree,
    /// A uniform shuffle for a seed.
    Random {
        /// The shuffle's seed.
        seed: u64,
    },
    /// The ids as they are.
    Identity,
}

impl Order {
    /// The orders' names, as [`Order::from_name`] takes them.
    pub const NAMES: [&'static str; 6] = ["hba", "bfs", "rcm", "degree", "random", "identity"];

    /// The order called `name`; `levels` is used by `hba`, `seed` by `random`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] listing the names for an unknown one.
    pub fn from_name(name: &str, levels: Levels, seed: u64) -> Result<Self> {
        Ok(match name.to_ascii_lowercase().as_str() {
            "hba" => Self::Hba(levels),
            "bfs" => Self::Bfs,
            "rcm" => Self::Rcm,
            "degree" => Self::Degree,
            "random" => Self::Random { seed },
            "identity" => Self::Identity,
            _ => {
                return Err(Error::invalid(
                    name,
                    format!("unknown vertex order; one of: {}", Self::NAMES.join(", ")),
                ))
            }
        })
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Hba(_) => "hba",
            Self::Bfs => "bfs",
            Self::Rcm => "rcm",
            Self::Degree => "degree",
            Self::Random { .. } => "random",
            Self::Identity => "identity",
        }
    }

    /// The order of `graph`'s vertices: vertex `v` gets id `permutation.new_id(v)`.
    ///
    /// # Complexity
    /// O(n + m) work to read the adjacency (parallel), then for `hba` O(L·n + m), `bfs`
    /// O(n + m), `rcm` O(n log n + m log d) (sequential), `degree` O(n log n) (parallel),
    /// `random` O(n). The adjacency takes 8 bytes per vertex and 4 per arc.
    pub fn permutation<G: GraphRead>(&self, graph: &G) -> Permutation {
        let n = graph.num_vertices();
        let order = match self {
            Self::Identity => return Permutation::identity(n),
            Self::Random { seed } => orders::random_order(n, *seed),
            Self::Hba(levels) => {
                let (adjacency, sizes) = rayon::join(
                    || adjacency::Adjacency::of(graph),
                    || adjacency::all_run_bytes(graph),
                );
                hba::hba_order(&adjacency, &sizes, levels.bytes())
            }
            Self::Bfs => orders::bfs_order(&adjacency::Adjacency::of(graph)),
            Self::Rcm => orders::rcm_order(&adjacency::Adjacency::of(graph)),
            Self::Degree => orders::degree_order(&adjacency::Adjacency::of(graph)),
        };
        Permutation::from_order(order).expect("every order lists each vertex once")
    }

    /// [`Order::permutation`] of a graph with or without weights.
    pub fn permutation_any(&self, graph: &AnyGraph) -> Permutation {
        match graph {
            AnyGraph::Unweighted(g) => self.permutation(g),
            AnyGraph::Weighted(g) => self.permutation(g),
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Hba(levels) => write!(f, "hba({levels})"),
            Self::Random { seed } => write!(f, "random({seed})"),
            other => f.write_str(other.name()),
        }
    }
}

#[cfg(test)]
mod tests;
