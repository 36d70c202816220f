//! packgraph: a dynamic-graph engine on a compressed packed memory array.
//!
//! Layers, lowest first (a layer uses only those before it; `docs/ARCHITECTURE.md` maps
//! them to folders and says where a change goes):
//! * [`codec`]: byte codes and delta-coded runs of sorted `u64` keys;
//! * [`pma`]: the batch-parallel packed memory array in versioned pages, compressed
//!   ([`pma::Cpma`]) or plain ([`pma::PlainPma`]);
//! * [`part`]: the persistent adaptive radix tree ([`part::Part`]), an ordered map whose
//!   clones are versions; it holds vertex ids and properties;
//! * [`graph`]: the dynamic [`graph::Graph`] (edges as keys in a CPMA), written only by
//!   applying a typed [`graph::Update`]; versions as [`graph::Snapshot`]s and
//!   [`graph::SharedGraph`]; the static [`graph::CsrGraph`]; the read trait
//!   [`graph::GraphRead`] all implement;
//! * [`layout`]: vertex orders ([`layout::Order`]: hierarchical blocking, BFS, RCM,
//!   degree, random) as a [`layout::Permutation`], and
//!   [`Graph::relabel`](graph::Graph::relabel), which renumbers a graph and keeps its ids;
//! * [`algo`]: the algorithms on any graph, Ligra's `VertexSubset` / `edge_map` for
//!   writing more, and the registry [`algo::Algorithm`] that runs any of them by name;
//! * [`store`]: the durable graph in a directory: write-ahead log, incremental
//!   checkpoints, crash recovery ([`store::Store`]);
//! * [`io`]: graph files (edge lists, Matrix Market, Graphalytics, snapshots) and
//!   generators (Graph500 Kronecker, R-MAT, Erdős–Rényi).
//!
//! Every fallible function returns the one [`Error`], whose variants say what the caller
//! can do: fix the input, look up something else, distrust damaged bytes, retry I/O.
//!
//! ```
//! use packgraph::algo::bfs;
//! use packgraph::graph::{Graph, GraphRead, Update};
//!
//! let mut graph = Graph::new(false);
//! let mut batch = Update::new();
//! batch.insert_edges(&[(0, 1), (1, 2), (2, 3)]);
//! graph.apply(&batch).unwrap();
//! let before = graph.snapshot(); // O(1); unchanged by later batches
//! graph.apply(Update::new().delete_edges(&[(2, 3)]).insert_edges(&[(1, 3)])).unwrap();
//! assert_eq!(graph.out_neighbors(1), [0, 2, 3]);
//! assert_eq!(bfs(&graph, 0).unwrap().depths, [0, 1, 2, 2]);
//! assert_eq!(bfs(&before, 0).unwrap().depths, [0, 1, 2, 3]);
//! ```
//!
//! The library never configures rayon's global thread pool: callers run it inside a pool of
//! their choosing (`ThreadPool::install`).

#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![deny(clippy::print_stdout)]

pub mod algo;
#[cfg(feature = "mimalloc")]
pub mod allocator;
pub mod codec;
pub mod cpu;
mod error;
pub mod graph;
pub mod io;
pub mod layout;
mod par;
pub mod part;
pub mod pma;
pub mod store;

pub use error::{Error, Result};

/// The README's Rust examples, compiled and run as doc tests so that they stay true.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;
