//! packgraph: a dynamic-graph engine on a compressed packed memory array.
//!
//! This release holds the storage foundation:
//! * [`codec`]: byte codes and delta-coded runs of sorted `u64` keys;
//! * [`pma`]: the batch-parallel packed memory array, compressed ([`pma::Cpma`]) or plain
//!   ([`pma::PlainPma`]).
//!
//! ```
//! use packgraph::pma::Cpma;
//!
//! // Edge (u, v) is the key (u << 32) | v, so a vertex's neighbours are one sorted run.
//! let edge = |u: u64, v: u64| (u << 32) | v;
//! let mut edges = Cpma::new();
//! edges.insert_batch(&[edge(0, 1), edge(0, 2), edge(1, 2), edge(2, 0)]);
//! let mut neighbours = Vec::new();
//! edges.map_range(edge(0, 0), edge(1, 0), |key| neighbours.push(key & 0xffff_ffff));
//! assert_eq!(neighbours, [1, 2]);
//! ```
//!
//! The library never configures rayon's global thread pool: callers run it inside a pool of
//! their choosing (`ThreadPool::install`).

#![warn(missing_docs)]
#![warn(clippy::unwrap_used)]
#![deny(clippy::print_stdout)]

pub mod codec;
mod error;
pub mod pma;

pub use error::{Error, Result};
