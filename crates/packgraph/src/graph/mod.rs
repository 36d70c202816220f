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
//! * One write path: every change is an [`Update`] applied by [`Graph::apply`], whole or
//!   not at all, as one new version (one writer, `&mut self`; [`SharedGraph::commit`] for
//!   many threads). The convenience methods (`insert_edges`, `intern`, ...) build one.
//! * Reads go through [`GraphRead`]; the flat vertex index they use is built in parallel on
//!   first use after an update and cached until the next one. A [`SharedGraph`]'s writer
//!   instead derives each version's index as part of the commit (persistent segments,
//!   copied only where the batch moved runs), so its readers never build one.
//!
//! * Weighted graphs ([`WeightedGraph`]) store each edge's `f64` weight beside its key in a
//!   key→value CPMA ([`CpmaMap`](crate::pma::CpmaMap)); inserting a present edge replaces its weight, and of
//!   duplicates within one batch the last wins. Weights must be finite (NaN and infinities
//!   are rejected with the batch left unapplied).
//!
//! * Each vertex has an external id ([`IdMap`], an integer or a name) and may have named
//!   properties ([`Properties`]); both are persistent radix trees carried by the graph, so
//!   [`Graph::snapshot`] versions them with the edges. [`Graph::intern`] adds vertices by
//!   external id; vertices created by edges over internal ids get integer ids.

mod any;
mod arcs;
mod arrays;
mod assemble;
mod check;
mod csr;
mod external_id;
mod flat_read;
mod group;
pub(crate) mod ids;
mod index;
mod properties;
mod read;
mod shared;
mod snapshot;
mod update;
mod writer;

use std::sync::{Arc, OnceLock};

use crate::pma::{GroupLeaf, GroupMapLeaf, LeafCodec, Pma};

pub use self::any::AnyGraph;
pub use self::csr::CsrGraph;
pub use self::group::{GroupCommit, Merged};
pub use self::ids::{name_problem, ExternalId, IdKind, IdMap, IntIds, MAX_VERTICES};
use self::index::RunIndex;
pub use self::properties::{Properties, PropertyValue};
pub use self::read::{GraphRead, VertexId, WeightedGraphRead, IN_WORD_AHEAD};
pub use self::shared::{SharedGraph, READ_RECENTLY};
pub use self::snapshot::{Snapshot, VersionStats};
pub use self::update::{Applied, PropertyChange, Update, UPDATE_FORMAT_VERSION};
pub(crate) use self::writer::Outcome;

/// A dynamic graph whose edges carry `f64` weights.
///
/// # Examples
/// ```
/// use packgraph::graph::{GraphRead, WeightedGraph, WeightedGraphRead};
///
/// let mut g = WeightedGraph::new_weighted(true);
/// g.insert_edges(&[(0, 1, 2.5), (1, 2, 1.0), (0, 1, 4.0)]).unwrap();
/// assert_eq!(g.edge_weight(0, 1), Some(4.0));
/// let mut edges = Vec::new();
/// g.for_each_out_edge(0, |v, w| { edges.push((v, w)); true });
/// assert_eq!(edges, [(1, 4.0)]);
/// assert!(g.insert_edges(&[(2, 3, f64::NAN)]).is_err());
/// assert_eq!(g.num_edges(), 2);
/// ```
pub type WeightedGraph = Graph<GroupMapLeaf>;

/// The leaf codecs a graph's edge arrays can use: [`GroupLeaf`] (keys only) and
/// [`GroupMapLeaf`] (keys with `f64` weight bits). Sealed.
pub trait EdgeLeaf: LeafCodec + sealed::Sealed {
    /// Whether the arrays store a weight per edge.
    const WEIGHTED: bool;

    /// The stored item of the arc with `key` and `weight`.
    #[doc(hidden)]
    fn arc(key: u64, weight: f64) -> Self::Item;

    /// The weight of a stored item (1 where the arrays hold none).
    #[doc(hidden)]
    fn weight(item: Self::Item) -> f64;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::pma::GroupLeaf {}
    impl Sealed for crate::pma::GroupMapLeaf {}
}

impl EdgeLeaf for GroupLeaf {
    const WEIGHTED: bool = false;

    #[inline]
    fn arc(key: u64, _weight: f64) -> u64 {
        key
    }

    #[inline]
    fn weight(_item: u64) -> f64 {
        1.0
    }
}

impl EdgeLeaf for GroupMapLeaf {
    const WEIGHTED: bool = true;

    #[inline]
    fn arc(key: u64, weight: f64) -> (u64, u64) {
        (key, weight.to_bits())
    }

    #[inline]
    fn weight((_, bits): (u64, u64)) -> f64 {
        f64::from_bits(bits)
    }
}

/// The key of edge `(u, v)`.
#[inline]
pub(crate) fn edge_key(u: VertexId, v: VertexId) -> u64 {
    (u64::from(u) << 32) | u64::from(v)
}

/// Where a graph's bytes go (see [`Graph::memory`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GraphMemory {
    /// Encoded arcs (the used bytes of the leaves).
    pub data: usize,
    /// Free bytes in the leaves, page padding and allocation headers.
    pub slack: usize,
    /// Page tables with the per-leaf heads and sizes.
    pub table: usize,
    /// The flat vertex index (each vertex's run start and degree).
    pub index: usize,
}

/// Flat indexes of both directions.
#[derive(Debug, Default, Clone)]
struct FlatIndex {
    out: RunIndex,
    incoming: Option<RunIndex>,
}

/// A dynamic graph stored in compressed packed memory arrays; the single writer.
///
/// `C` is the edge array's leaf layout: [`GroupLeaf`] for plain edges (the default) or
/// [`GroupMapLeaf`] for weighted edges ([`WeightedGraph`]).
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead, Update};
///
/// let mut g = Graph::new(false);
/// let applied = g.insert_edges(&[(0, 1), (1, 2), (2, 2), (1, 0)]).unwrap();
/// assert_eq!((applied.edges_inserted, applied.self_loops), (2, 1));
/// assert_eq!(g.out_neighbors(1), [0, 2]);
/// g.apply(Update::new().delete_edges(&[(2, 1)])).unwrap();
/// assert_eq!(g.out_degree(1), 1);
/// ```
#[derive(Debug)]
pub struct Graph<C: LeafCodec = GroupLeaf> {
    directed: bool,
    num_vertices: usize,
    out: Pma<C>,
    incoming: Option<Pma<C>>,
    index: OnceLock<Arc<FlatIndex>>,
    /// Updates applied since creation (see [`Graph::version`]).
    version: u64,
    /// External ids of the vertices, versioned with the edges.
    ids: IdMap,
    /// Per-vertex properties, versioned with the edges.
    properties: Properties,
}

impl Graph<GroupLeaf> {
    /// An empty graph.
    pub fn new(directed: bool) -> Self {
        Self::empty(directed)
    }
}

impl Graph<GroupMapLeaf> {
    /// An empty weighted graph.
    pub fn new_weighted(directed: bool) -> Self {
        Self::empty(directed)
    }
}

/// How tightly a graph's first load packs its edge arrays ([`Graph::set_packing`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Packing {
    /// Room for updates: leaves filled to the density that growth rebuilds at
    /// (`upper_density_root / growth_factor` of the array's configuration, 0.88 / 1.2 by
    /// default), so that inserts after the load rebalance little.
    #[default]
    Updates,
    /// As tight as the leaves allow (each keeps only the few bytes a rebalance needs), for
    /// a graph that is analysed, not changed: `packgraph run` loads files so.
    /// `packgraph-bench graph` (Kronecker scale 18) measured 2.79 bytes per arc with the
    /// flat index against 3.36, and scans a few percent faster. The first insert that
    /// fills a leaf rebuilds the arrays with room for updates, as growth does: one pass
    /// over the edges, about what the load's own build took.
    Compact,
}

impl Packing {
    /// The byte density a build packs at ([`PmaConfig::load_density`](crate::pma::PmaConfig::load_density)):
    /// `None` for the density growth rebuilds at, 1 for as tight as the leaves allow.
    fn density(self) -> Option<f64> {
        match self {
            Self::Updates => None,
            Self::Compact => Some(1.0),
        }
    }
}

impl<C: LeafCodec> Graph<C> {
    /// Sets how tightly the graph's next load into empty edge arrays (an [`Update`] applied
    /// to an empty graph, as the file readers do) packs them. A graph with edges keeps its
    /// layout until it is rebuilt.
    pub fn set_packing(&mut self, packing: Packing) {
        let density = packing.density();
        self.out.set_load_density(density);
        if let Some(incoming) = &mut self.incoming {
            incoming.set_load_density(density);
        }
    }

    /// Packs the edge arrays again, as [`Packing`] says, keeping every edge, id and
    /// property: [`Packing::Compact`] gives a graph that took updates the layout
    /// `packgraph run` loads files in (the leaves' free space goes), [`Packing::Updates`]
    /// gives a compact graph its room for updates back. The flat vertex index is built
    /// again on the next read. Snapshots taken before keep the old layout until they go.
    ///
    /// # Complexity
    /// O(arcs): one decode and one build of each array, in parallel. Peak memory: the old
    /// arrays, the new ones and a copy of one array's arcs (8 bytes each, 16 weighted).
    pub fn repack(&mut self, packing: Packing) {
        let density = packing.density();
        self.out.repack(density);
        if let Some(incoming) = &mut self.incoming {
            incoming.repack(density);
        }
        self.index = OnceLock::new();
    }

    fn empty(directed: bool) -> Self {
        Self {
            directed,
            num_vertices: 0,
            out: Pma::new(),
            incoming: directed.then(Pma::new),
            index: OnceLock::new(),
            version: 0,
            ids: IdMap::default(),
            properties: Properties::default(),
        }
    }

    /// The external ids of the vertices (as of this version).
    pub fn ids(&self) -> &IdMap {
        &self.ids
    }

    /// The per-vertex properties (as of this version).
    pub fn properties(&self) -> &Properties {
        &self.properties
    }

    /// Property `name` of vertex `v`.
    pub fn property(&self, name: &str, v: VertexId) -> Option<&PropertyValue> {
        self.properties.get(name, v)
    }
}

#[cfg(test)]
mod tests;
