//! packgraph: a dynamic-graph engine on a compressed packed memory array.
//!
//! Layers, lowest first:
//! * [`codec`]: byte codes and delta-coded runs of sorted `u64` keys;
//! * [`pma`]: the batch-parallel packed memory array, compressed ([`pma::Cpma`]) or plain
//!   ([`pma::PlainPma`]);
//! * [`graph`]: the dynamic [`graph::Graph`] (edges as keys in a CPMA), the static
//!   [`graph::CsrGraph`] and the read trait [`graph::GraphRead`] both implement;
//! * [`algo`]: Ligra's `VertexSubset` / `edge_map` and the algorithms on them;
//! * [`io`]: graph files (edge lists, Matrix Market, Graphalytics, snapshots) and
//!   generators (Graph500 Kronecker, R-MAT, Erdős–Rényi).
//!
//! ```
//! use packgraph::algo::{bfs, pagerank};
//! use packgraph::graph::{Graph, GraphRead};
//!
//! let mut graph = Graph::new(false);
//! graph.insert_edges(&[(0, 1), (1, 2), (2, 3)]).unwrap();
//! graph.delete_edges(&[(2, 3)]).unwrap();
//! graph.insert_edges(&[(1, 3)]).unwrap();
//! assert_eq!(graph.out_neighbors(1), [0, 2, 3]);
//! let tree = bfs(&graph, 0).unwrap();
//! assert_eq!(tree.depths, [0, 1, 2, 2]);
//! let ranks = pagerank(&graph, 0.85, 10);
//! assert!((ranks.iter().sum::<f64>() - 1.0).abs() < 1e-9);
//! ```
//!
//! The library never configures rayon's global thread pool: callers run it inside a pool of
//! their choosing (`ThreadPool::install`).

#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![deny(clippy::print_stdout)]

pub mod algo;
pub mod codec;
mod error;
pub mod graph;
pub mod io;
pub mod part;
pub mod pma;

pub use error::{Error, Result};

/// The README's Rust examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
