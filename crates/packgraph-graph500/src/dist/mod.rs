//! The engine over processes: a user's graph file loaded in parallel, kept in the core's
//! compressed [`Graph`] on every process, changed by update batches, and analysed by
//! distributed BFS, PageRank, WCC, SSSP, CDLP and LCC (`packgraph-dist run`).
//!
//! # Partition (1-D, by hashed vertex id)
//! A vertex with external id `x` belongs to process `h(x) mod P` (`h` a 64-bit mixer), which
//! is also the entry of the distributed dictionary for `x`. Its owner numbers its vertices
//! `0, 1, 2, …` (*local indices*: the ids of the input sorted, then new ids of updates in the
//! order they come), and its dense id is `local · P + owner`, so that the owner of a dense
//! id is `id mod P` and ids never change when a batch adds vertices. Dense ids range over
//! `P · max_q count_q` *slots*; a slot no process fills is no vertex (and is never an
//! endpoint).
//!
//! Each process keeps, in one core [`Graph`], every edge with an endpoint it owns (an edge
//! between two processes is stored by both): the out- and in-neighbours of an owned vertex
//! are then complete locally, and every step of the algorithms reads
//! only local arcs and sends values to the owners of the other endpoints. The hashed
//! partition balances vertices (and, in expectation, arcs) without a global sort; its
//! price, against the 2-D grid of the Graph500 search, is an all-to-all over all `P`
//! processes per step instead of one along a grid row and one along a column (see
//! docs/scaling.md). The store numbers its vertices on its own (*store vertices*): the
//! owned vertices, then the other endpoints (*ghosts*) as they come, so that its size
//! follows the vertices it touches, `n/P` plus ghosts, rather than `n`.
//!
//! # Errors
//! Every step that can fail on one process (a malformed line in its byte range, a vertex
//! missing from the vertex file) ends with [`agree`]: the processes exchange their
//! outcomes, and all of them return the first error in rank order, so no process waits in
//! a collective that another has left.

pub mod algo;
pub mod load;
pub mod output;
pub mod run;
pub mod update;

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use packgraph::graph::{Graph, GraphRead, VertexId, WeightedGraph};

use crate::comm::{Comm, Group};

/// A failure of a distributed run, the same on every process.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    /// Input or arguments the user can fix (exit code 2).
    #[error("{0}")]
    Usage(String),
    /// A file that could not be read, or a graph too large (exit code 3).
    #[error("{0}")]
    Failed(String),
}

impl DistError {
    /// The exit code every process returns for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => 2,
            Self::Failed(_) => 3,
        }
    }

    fn tag(&self) -> u8 {
        match self {
            Self::Usage(_) => 1,
            Self::Failed(_) => 2,
        }
    }
}

/// Every process's outcome of a step: `Ok` on all of them if all succeeded, otherwise the
/// first error in rank order, on every process. A collective: every process calls it.
pub fn agree<T>(comm: &dyn Comm, outcome: Result<T, DistError>) -> Result<T, DistError> {
    let message = match &outcome {
        Ok(_) => Vec::new(),
        Err(e) => {
            let mut m = vec![e.tag()];
            m.extend_from_slice(e.to_string().as_bytes());
            m
        }
    };
    let all = comm.allgather(Group::World, &message);
    for k in 0..all.parts() {
        let part = all.part(k);
        if let Some((&tag, text)) = part.split_first() {
            let text = String::from_utf8_lossy(text).into_owned();
            return Err(if tag == 1 {
                DistError::Usage(text)
            } else {
                DistError::Failed(text)
            });
        }
    }
    outcome
}

/// The process of external id `x`: `h(x) mod size`, `h` the SplitMix64 finalizer.
pub fn owner_of_id(x: u64, size: usize) -> usize {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z % size as u64) as usize
}

/// A hasher for integer keys: one multiply and a rotate (FxHash's step), several times
/// faster than the default SipHash on the dictionaries' `u64`/`u32` keys. Keys come from
/// the user's file, so a crafted file could make probes long (never wrong).
#[derive(Debug, Default, Clone, Copy)]
pub struct IntHasher(u64);

impl Hasher for IntHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }

    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    #[inline]
    fn write_u32(&mut self, value: u32) {
        self.write_u64(u64::from(value));
    }

    #[inline]
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0.rotate_left(5) ^ value).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// A hash map keyed by integers, with [`IntHasher`].
pub type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// One process's graph store: edges with an endpoint it owns.
#[derive(Debug)]
pub enum Store {
    /// Edges without weights.
    Plain(Graph),
    /// Edges with `f64` weights.
    Weighted(WeightedGraph),
}

/// One process's part of a distributed graph.
#[derive(Debug)]
pub struct Part {
    /// This process.
    pub rank: usize,
    /// Processes.
    pub size: usize,
    /// Whether edges have a direction.
    pub directed: bool,
    /// External id of each owned vertex, by local index.
    pub ids: Vec<u64>,
    /// Local index of each owned external id.
    pub index: IntMap<u64, u32>,
    /// Dense-id slots over all processes: `size · max(owned vertices)`.
    pub slots: usize,
    /// The store vertex of each owned vertex, by local index.
    pub rows: Vec<VertexId>,
    /// The dense id of each store vertex.
    pub dense_of: Vec<VertexId>,
    /// The store vertex of each dense id the store holds.
    pub store_of: IntMap<VertexId, VertexId>,
    /// Vertices over all processes.
    pub num_vertices: usize,
    /// Every edge with an endpoint this process owns, over the store vertices.
    pub store: Store,
    /// The input is a snapshot or data directory: the external ids in [`Part::ids`] are its
    /// vertex numbers (then those of the vertices update files add), not the file's ids.
    pub numbered: bool,
    /// On rank 0 of a numbered input, the file's ids, carried by a graph without edges
    /// whose vertex `k` is key `k` (see `load::stored`).
    pub file_ids: Option<Graph>,
}

impl Part {
    /// Vertices this process owns.
    pub fn owned(&self) -> usize {
        self.ids.len()
    }

    /// Whether edges carry weights.
    pub fn weighted(&self) -> bool {
        matches!(self.store, Store::Weighted(_))
    }

    /// The dense id of local index `i`.
    #[inline]
    pub fn dense(&self, i: usize) -> VertexId {
        (i * self.size + self.rank) as VertexId
    }

    /// The store vertex of dense id `v`, added to the store's numbering if new.
    pub fn store_vertex(&mut self, v: VertexId) -> VertexId {
        let next = self.dense_of.len() as VertexId;
        let x = *self.store_of.entry(v).or_insert(next);
        if x == next {
            self.dense_of.push(v);
        }
        x
    }

    /// Adds an owned vertex of external id `x`; returns its local index.
    pub fn add_owned(&mut self, x: u64) -> usize {
        let i = self.ids.len();
        self.index.insert(x, i as u32);
        self.ids.push(x);
        let row = self.store_vertex(self.dense(i));
        self.rows.push(row);
        i
    }

    /// Arcs stored here (an edge between two processes counts on both).
    pub fn stored_arcs(&self) -> usize {
        match &self.store {
            Store::Plain(g) => g.num_arcs(),
            Store::Weighted(g) => g.num_arcs(),
        }
    }

    /// Bytes of the graph store.
    pub fn store_bytes(&self) -> usize {
        match &self.store {
            Store::Plain(g) => g.size_in_bytes(),
            Store::Weighted(g) => g.size_in_bytes(),
        }
    }
}

/// `parts[k]` for each member `k` of the world, as `u64`s, through one all-to-all.
pub(crate) fn exchange_u64(comm: &dyn Comm, parts: &[Vec<u64>]) -> Vec<Vec<u64>> {
    let counts: Vec<usize> = parts.iter().map(Vec::len).collect();
    let send: Vec<u64> = parts.concat();
    let flat = comm.alltoallv_u64(Group::World, &send, &counts);
    // The receive counts are not returned by the transport, so each part leads with its
    // length.
    split_counted(&flat)
}

/// Prefixes each part with its length (for [`exchange_u64`]).
pub(crate) fn counted(parts: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    parts
        .into_iter()
        .map(|p| {
            let mut out = Vec::with_capacity(p.len() + 1);
            out.push(p.len() as u64);
            out.extend(p);
            out
        })
        .collect()
}

fn split_counted(flat: &[u64]) -> Vec<Vec<u64>> {
    let mut out = Vec::new();
    let mut rest = flat;
    while let Some((&len, tail)) = rest.split_first() {
        let len = (len as usize).min(tail.len());
        out.push(tail[..len].to_vec());
        rest = &tail[len..];
    }
    out
}

/// Sends `parts[k]` (length-prefixed) to member `k`; returns what each member sent here.
pub(crate) fn alltoall_u64(comm: &dyn Comm, parts: Vec<Vec<u64>>) -> Vec<Vec<u64>> {
    let size = comm.size();
    let mut got = exchange_u64(comm, &counted(parts));
    got.resize(size, Vec::new());
    got
}
