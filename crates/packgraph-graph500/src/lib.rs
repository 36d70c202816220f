//! packgraph-graph500: the Graph500 breadth-first search benchmark on a process grid, with
//! compressed frontier exchanges.
//!
//! * [`grid`]: the `R × C` process grid and the 2-D partition of vertices and arcs;
//! * [`comm`]: the collectives the benchmark needs ([`comm::Comm`]), implemented by MPI
//!   (`mpi_comm::MpiComm`, cargo feature `mpi`), by one process ([`comm::SelfComm`]) and by
//!   threads standing in for processes ([`comm::ThreadComm`], for tests);
//! * [`local`]: kernel 1, the distributed graph (CSR by source and by target);
//! * [`bfs`]: kernel 2, the direction-optimizing search, with frontier messages from
//!   `packgraph::codec::frontier`;
//! * [`validate`]: the specification's five validation rules, checked across processes;
//! * [`roots`]: the search keys; [`report`]: statistics and the output block;
//! * [`benchmark`]: the whole run, from generation to report;
//! * [`dist`]: the engine over processes (`packgraph-dist`): a user's graph file loaded in
//!   parallel into the core's compressed graph, update batches, BFS, PageRank, WCC, SSSP, CDLP,
//!   LCC.
//!
//! ```
//! use packgraph_graph500::benchmark::{run, Config};
//! use packgraph_graph500::comm::SelfComm;
//!
//! let config = Config { scale: 8, roots: 4, ..Config::default() };
//! let report = run(&SelfComm, &config, true, &mut |_| {}).unwrap();
//! assert!(report.validation_errors.is_empty());
//! assert_eq!(report.nbfs, 4);
//! assert!(report.teps.harmonic_mean > 0.0);
//! ```

#![warn(missing_docs)]
#![deny(clippy::print_stdout)]

pub mod benchmark;
pub mod bfs;
pub mod comm;
pub mod dist;
pub mod grid;
pub mod local;
#[cfg(feature = "mpi")]
pub mod mpi_comm;
pub mod report;
pub mod roots;
pub mod validate;
