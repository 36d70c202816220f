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
//! * Weighted graphs ([`WeightedGraph`]) store each edge's `f64` weight beside its key in a
//!   key→value CPMA ([`CpmaMap`](crate::pma::CpmaMap)); inserting a present edge replaces its weight, and of
//!   duplicates within one batch the last wins. Weights must be finite (NaN and infinities
//!   are rejected with the batch left unapplied).
//!
//! * Each vertex has an external id ([`IdMap`], an integer or a name) and may have named
//!   properties ([`Properties`]); both are persistent radix trees carried by the graph, so
//!   [`Graph::snapshot`] versions them with the edges. [`Graph::intern`] adds vertices by
//!   external id; vertices created by edges over internal ids get integer ids.

mod csr;
pub(crate) mod ids;
mod index;
mod properties;
mod read;
mod snapshot;

use std::ops::Range;

use rayon::prelude::*;
use std::sync::{Arc, OnceLock};

use crate::pma::{DeltaLeaf, DeltaMapLeaf, LeafCodec, Pma, PmaParts, PmaPartsRef};

pub use self::csr::CsrGraph;
pub use self::ids::{ExternalId, IdMap, IntIds, MAX_VERTICES};
use self::index::RunIndex;
pub use self::properties::{Properties, PropertyValue};
pub use self::read::{GraphRead, VertexId, WeightedGraphRead};
pub use self::snapshot::{SharedGraph, Snapshot, VersionStats};

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
pub type WeightedGraph = Graph<DeltaMapLeaf>;

/// Errors of the graph layer.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
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
    /// An edge weight that is NaN or infinite.
    #[error("edge {index} of the batch ({u} -> {v}) has weight {weight}: weights must be finite")]
    InvalidWeight {
        /// Position of the edge in the batch.
        index: usize,
        /// Source vertex.
        u: VertexId,
        /// Target vertex.
        v: VertexId,
        /// The weight given.
        weight: f64,
    },
    /// A vertex id at or past the vertex count.
    #[error("vertex {vertex} does not exist: the graph has {count} vertices")]
    NoSuchVertex {
        /// The id given.
        vertex: VertexId,
        /// Vertices in the graph.
        count: usize,
    },
    /// Arrays given to [`Graph::from_parts`] that do not form a valid graph.
    #[error("invalid graph arrays: {0}")]
    InvalidParts(String),
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
/// `C` is the edge array's leaf layout: [`DeltaLeaf`] for plain edges (the default) or
/// [`DeltaMapLeaf`] for weighted edges ([`WeightedGraph`]).
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
pub struct Graph<C: LeafCodec = DeltaLeaf> {
    directed: bool,
    num_vertices: usize,
    out: Pma<C>,
    incoming: Option<Pma<C>>,
    index: OnceLock<Arc<FlatIndex>>,
    /// Batches applied since creation (see [`Graph::version`]).
    version: u64,
    /// External ids of the vertices, versioned with the edges.
    ids: IdMap,
    /// Per-vertex properties, versioned with the edges.
    properties: Properties,
}

impl Graph<DeltaLeaf> {
    /// An empty graph.
    pub fn new(directed: bool) -> Self {
        Self::empty(directed)
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
        let (out, incoming, self_loops) =
            self.arcs(edges.len(), |i| edges[i], |_, u, v| edge_key(u, v), true);
        self.apply(out, incoming, self_loops, |set, keys| {
            set.insert_batch(keys)
        })
    }
}

impl Graph<DeltaMapLeaf> {
    /// An empty weighted graph.
    pub fn new_weighted(directed: bool) -> Self {
        Self::empty(directed)
    }

    /// A weighted graph on `num_vertices` vertices (grown to cover every endpoint).
    ///
    /// # Errors
    /// [`GraphError::InvalidWeight`] for a NaN or infinite weight.
    pub fn from_weighted_edges(
        num_vertices: usize,
        edges: &[(VertexId, VertexId, f64)],
        directed: bool,
    ) -> Result<Self, GraphError> {
        let mut graph = Self::new_weighted(directed);
        graph.num_vertices = num_vertices;
        graph.insert_edges(edges)?;
        Ok(graph)
    }

    /// Inserts a batch of weighted edges (any order). A present edge gets the new weight; of
    /// duplicates in the batch the last wins. `changed` counts edges that were absent.
    ///
    /// # Errors
    /// [`GraphError::InvalidWeight`] for a NaN or infinite weight; the batch is not applied.
    pub fn insert_edges(
        &mut self,
        edges: &[(VertexId, VertexId, f64)],
    ) -> Result<EdgeBatchStats, GraphError> {
        if let Some(index) = edges.iter().position(|e| !e.2.is_finite()) {
            let (u, v, weight) = edges[index];
            return Err(GraphError::InvalidWeight {
                index,
                u,
                v,
                weight,
            });
        }
        let (out, incoming, self_loops) = self.arcs(
            edges.len(),
            |i| (edges[i].0, edges[i].1),
            |i, u, v| (edge_key(u, v), edges[i].2.to_bits()),
            true,
        );
        Ok(self.apply(out, incoming, self_loops, |set, items| {
            set.insert_batch(items)
        }))
    }

    /// The weight of edge `(u, v)`, if present.
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.out
            .get(edge_key(u, v))
            .map(|(_, bits)| f64::from_bits(bits))
    }
}

impl<C: LeafCodec> Graph<C> {
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

    /// Deletes a batch of edges (absent edges are no-ops).
    pub fn delete_edges(&mut self, edges: &[(VertexId, VertexId)]) -> EdgeBatchStats {
        let (out, incoming, self_loops) =
            self.arcs(edges.len(), |i| edges[i], |_, u, v| edge_key(u, v), false);
        self.apply(out, incoming, self_loops, |set, keys| {
            set.remove_batch(keys)
        })
    }

    /// The arcs of a batch: `make(i, u, v)` for every stored direction of edge `i`, split
    /// into the out-array's and the reversed array's; also counts the self-loops skipped.
    /// Inserts (`grow`) extend the vertex count to cover every endpoint.
    fn arcs<T: Send>(
        &mut self,
        len: usize,
        endpoints: impl Fn(usize) -> (VertexId, VertexId) + Sync,
        make: impl Fn(usize, VertexId, VertexId) -> T + Sync,
        grow: bool,
    ) -> (Vec<T>, Vec<T>, usize) {
        const PARALLEL_MIN: usize = 1 << 16;
        if len >= PARALLEL_MIN {
            let (max, self_loops) = (0..len)
                .into_par_iter()
                .map(|i| {
                    let (u, v) = endpoints(i);
                    (u.max(v) as usize + 1, usize::from(u == v))
                })
                .reduce(|| (0, 0), |a, b| (a.0.max(b.0), a.1 + b.1));
            if grow {
                self.num_vertices = self.num_vertices.max(max);
            }
            let directed = self.directed;
            if self_loops == 0 {
                // Exact sizes: collected straight into place, no intermediate lists.
                let endpoints = &endpoints;
                let make = &make;
                return if directed {
                    let (out, reversed) = rayon::join(
                        || {
                            (0..len)
                                .into_par_iter()
                                .map(|i| {
                                    let (u, v) = endpoints(i);
                                    make(i, u, v)
                                })
                                .collect()
                        },
                        || {
                            (0..len)
                                .into_par_iter()
                                .map(|i| {
                                    let (u, v) = endpoints(i);
                                    make(i, v, u)
                                })
                                .collect()
                        },
                    );
                    (out, reversed, 0)
                } else {
                    let pairs: Vec<[T; 2]> = (0..len)
                        .into_par_iter()
                        .map(|i| {
                            let (u, v) = endpoints(i);
                            [make(i, u, v), make(i, v, u)]
                        })
                        .collect();
                    (pairs.into_flattened(), Vec::new(), 0)
                };
            }
            let out = (0..len)
                .into_par_iter()
                .flat_map_iter(|i| {
                    let (u, v) = endpoints(i);
                    let both = (u != v && !directed).then(|| make(i, v, u));
                    (u != v).then(|| make(i, u, v)).into_iter().chain(both)
                })
                .collect();
            let reversed = if directed {
                (0..len)
                    .into_par_iter()
                    .filter_map(|i| {
                        let (u, v) = endpoints(i);
                        (u != v).then(|| make(i, v, u))
                    })
                    .collect()
            } else {
                Vec::new()
            };
            return (out, reversed, self_loops);
        }
        let mut out = Vec::with_capacity(if self.directed { len } else { 2 * len });
        let mut reversed = Vec::with_capacity(if self.directed { len } else { 0 });
        let mut self_loops = 0;
        for i in 0..len {
            let (u, v) = endpoints(i);
            if grow {
                self.num_vertices = self.num_vertices.max(u.max(v) as usize + 1);
            }
            if u == v {
                self_loops += 1;
                continue;
            }
            out.push(make(i, u, v));
            if self.directed {
                reversed.push(make(i, v, u));
            } else {
                out.push(make(i, v, u));
            }
        }
        (out, reversed, self_loops)
    }

    /// Applies a batch's arcs to both arrays (in parallel) with `op` (which returns how many
    /// arcs it added or removed) and drops the flat index.
    fn apply<T: Sync>(
        &mut self,
        out: Vec<T>,
        reversed: Vec<T>,
        self_loops: usize,
        op: impl Fn(&mut Pma<C>, &[T]) -> usize + Sync,
    ) -> EdgeBatchStats {
        /// Arcs below which both arrays are updated on the calling thread: a rayon call
        /// costs microseconds, more than a few point updates (and a caller outside any
        /// pool would otherwise wait on the global one).
        const SERIAL_ARCS: usize = 4096;
        let arcs_per_edge = if self.directed { 1 } else { 2 };
        let arcs = if out.len() + reversed.len() < SERIAL_ARCS {
            let arcs = op(&mut self.out, &out);
            if let Some(set) = self.incoming.as_mut() {
                op(set, &reversed);
            }
            arcs
        } else {
            rayon::join(
                || op(&mut self.out, &out),
                || self.incoming.as_mut().map(|set| op(set, &reversed)),
            )
            .0
        };
        self.index = OnceLock::new();
        self.version += 1;
        self.ids.grow_to(self.num_vertices);
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
        self.ids.grow_to(end);
        self.index = OnceLock::new();
        self.version += 1;
        Ok(first..last)
    }

    /// The external ids of the vertices (as of this version).
    pub fn ids(&self) -> &IdMap {
        &self.ids
    }

    /// The graph with `ids` as its vertices' external ids.
    ///
    /// # Errors
    /// [`GraphError::InvalidParts`] if `ids` does not name exactly the graph's vertices.
    pub fn with_ids(mut self, ids: IdMap) -> Result<Self, GraphError> {
        if ids.len() != self.num_vertices {
            return Err(GraphError::InvalidParts(format!(
                "{} vertex ids for {} vertices",
                ids.len(),
                self.num_vertices
            )));
        }
        self.ids = ids;
        Ok(self)
    }

    /// The vertices of external ids `ids`, adding a vertex (with the next internal id) for
    /// each id not seen before, so that edges can be given in the caller's ids.
    ///
    /// # Errors
    /// [`GraphError::TooManyVertices`] past 2^32 vertices; nothing is added then.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{ExternalId, Graph, GraphRead};
    ///
    /// let mut g = Graph::new(true);
    /// let ids: Vec<ExternalId> = vec!["alice".into(), "bob".into(), 10_u64.into()];
    /// let v = g.intern(&ids).unwrap();
    /// g.insert_edges(&[(v[0], v[1]), (v[1], v[2])]);
    /// let before = g.snapshot();
    /// let carol = g.intern(&["carol".into()]).unwrap()[0];
    /// assert_eq!(g.ids().internal_name("carol"), Some(carol));
    /// assert_eq!(before.ids().internal_name("carol"), None);
    /// assert_eq!(g.ids().external_id(v[2]), Some(ExternalId::Int(10)));
    /// ```
    pub fn intern(&mut self, ids: &[ExternalId]) -> Result<Vec<VertexId>, GraphError> {
        // On a copy (O(1)), so that a failure leaves the graph as it was.
        let mut map = self.ids.clone();
        let mut out = Vec::with_capacity(ids.len());
        for id in ids {
            let (v, _) = map.insert(id).map_err(|_| GraphError::TooManyVertices {
                existing: self.num_vertices,
                requested: ids.len(),
            })?;
            out.push(v);
        }
        if map.len() > self.num_vertices {
            self.num_vertices = map.len();
            self.index = OnceLock::new();
        }
        self.ids = map;
        self.version += 1;
        Ok(out)
    }

    /// The per-vertex properties (as of this version).
    pub fn properties(&self) -> &Properties {
        &self.properties
    }

    /// Property `name` of vertex `v`.
    pub fn property(&self, name: &str, v: VertexId) -> Option<&PropertyValue> {
        self.properties.get(name, v)
    }

    fn check_vertex(&self, v: VertexId) -> Result<(), GraphError> {
        if (v as usize) < self.num_vertices {
            Ok(())
        } else {
            Err(GraphError::NoSuchVertex {
                vertex: v,
                count: self.num_vertices,
            })
        }
    }

    /// Sets property `name` of vertex `v`; returns the previous value.
    ///
    /// # Errors
    /// [`GraphError::NoSuchVertex`] if `v` is not a vertex.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, PropertyValue};
    ///
    /// let mut g = Graph::from_edges(3, &[(0, 1)], false);
    /// g.set_property("age", 1, 42_i64.into()).unwrap();
    /// let before = g.snapshot();
    /// g.set_property("age", 1, 43_i64.into()).unwrap();
    /// assert_eq!(before.property("age", 1), Some(&PropertyValue::Int(42)));
    /// assert_eq!(g.property("age", 1), Some(&PropertyValue::Int(43)));
    /// assert!(g.set_property("age", 7, 1_i64.into()).is_err());
    /// ```
    pub fn set_property(
        &mut self,
        name: &str,
        v: VertexId,
        value: PropertyValue,
    ) -> Result<Option<PropertyValue>, GraphError> {
        self.check_vertex(v)?;
        self.version += 1;
        Ok(self.properties.set(name, v, value))
    }

    /// Sets property `name` of many vertices in one sorted walk (of a vertex given twice the
    /// last value wins); returns how many had no value before.
    ///
    /// # Errors
    /// [`GraphError::NoSuchVertex`] for the first vertex that does not exist; nothing is set.
    pub fn set_properties(
        &mut self,
        name: &str,
        items: &[(VertexId, PropertyValue)],
    ) -> Result<usize, GraphError> {
        for &(v, _) in items {
            self.check_vertex(v)?;
        }
        self.version += 1;
        Ok(self.properties.set_batch(name, items.iter().cloned()))
    }

    /// Removes property `name` of vertex `v`; returns its value.
    pub fn remove_property(&mut self, name: &str, v: VertexId) -> Option<PropertyValue> {
        let old = self.properties.remove(name, v);
        self.version += u64::from(old.is_some());
        old
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
        self.out.size_in_bytes() + self.incoming.as_ref().map_or(0, Pma::size_in_bytes) + index
    }

    /// Builds the flat vertex index now (it is otherwise built on the first read).
    pub fn build_index(&self) {
        let _ = self.flat();
    }

    /// Out-degrees of all vertices.
    pub fn out_degrees(&self) -> &[u32] {
        self.flat().out.degrees()
    }

    /// Builds the flat vertex index from `base`'s, an earlier version of the same graph
    /// (a snapshot), re-scanning only the vertices whose edges lie in pages the two versions
    /// do not share. Falls back to a full build when that is no cheaper (growth, most pages
    /// changed) or `base` has no index. Does nothing if the index is built. Returns whether
    /// the index was derived from `base`'s.
    pub fn build_index_from(&self, base: &Graph<C>) -> bool {
        if self.index.get().is_some() {
            return false;
        }
        let Some(old) = base.index.get() else {
            self.build_index();
            return false;
        };
        let (out, incoming) = rayon::join(
            || RunIndex::update_from(&old.out, &base.out, &self.out, self.num_vertices),
            || match (&old.incoming, &base.incoming, &self.incoming) {
                (Some(old), Some(base_set), Some(set)) => {
                    Some(RunIndex::update_from(old, base_set, set, self.num_vertices))
                }
                _ => None,
            },
        );
        let incoming = match incoming {
            None => Some(None),
            Some(Some(index)) => Some(Some(index)),
            Some(None) => None,
        };
        match (out, incoming) {
            (Some(out), Some(incoming)) if incoming.is_some() == self.incoming.is_some() => self
                .index
                .set(Arc::new(FlatIndex { out, incoming }))
                .is_ok(),
            _ => {
                self.build_index();
                false
            }
        }
    }

    /// The flat index, built on first use. Built outside the `OnceLock`'s initialisation:
    /// the build runs on rayon, and a worker blocked in `get_or_init` could be the one that
    /// steals work of another thread's build of the same index (a deadlock seen with
    /// concurrent readers of one snapshot). Two threads may race to build it; one result
    /// is kept.
    fn flat(&self) -> &FlatIndex {
        if let Some(index) = self.index.get() {
            return index;
        }
        let (out, incoming) = rayon::join(
            || RunIndex::build(&self.out, self.num_vertices),
            || {
                self.incoming
                    .as_ref()
                    .map(|set| RunIndex::build(set, self.num_vertices))
            },
        );
        let _ = self.index.set(Arc::new(FlatIndex { out, incoming }));
        self.index.get().expect("the index was just set")
    }
}

impl<C: LeafCodec> Graph<C> {
    /// The edge arrays as they are in memory: out-edges, and in-edges for a directed graph.
    pub fn parts(&self) -> (PmaPartsRef<'_>, Option<PmaPartsRef<'_>>) {
        (self.out.parts(), self.incoming.as_ref().map(Pma::parts))
    }

    /// Rebuilds a graph from its edge arrays (as [`Graph::parts`] gives them), checking every
    /// structural invariant and that each edge joins two distinct vertices below
    /// `num_vertices`; `item_ok` adds a check per stored item.
    fn from_parts_checked(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
        item_ok: impl Fn(C::Item) -> bool + Sync,
    ) -> Result<Self, GraphError> {
        if num_vertices > u32::MAX as usize {
            return Err(GraphError::InvalidParts(format!(
                "{num_vertices} vertices is more than 32-bit ids allow"
            )));
        }
        if incoming.is_some() != directed {
            return Err(GraphError::InvalidParts(
                "in-edge arrays must be present exactly for directed graphs".into(),
            ));
        }
        let n = num_vertices as u64;
        let ok = |item: C::Item| {
            let key = C::key(item);
            let (u, v) = (key >> 32, key & 0xffff_ffff);
            u < n && v < n && u != v && item_ok(item)
        };
        let bad = |e: crate::pma::PmaError| GraphError::InvalidParts(e.to_string());
        let out = Pma::from_parts(out, ok).map_err(bad)?;
        let incoming = incoming
            .map(|parts| Pma::from_parts(parts, ok).map_err(bad))
            .transpose()?;
        if let Some(incoming) = &incoming {
            if incoming.len() != out.len() {
                return Err(GraphError::InvalidParts(format!(
                    "{} in-edges but {} out-edges",
                    incoming.len(),
                    out.len()
                )));
            }
        }
        Ok(Self {
            directed,
            num_vertices,
            out,
            incoming,
            index: OnceLock::new(),
            version: 0,
            ids: IdMap::identity(num_vertices),
            properties: Properties::default(),
        })
    }
}

impl Graph<DeltaLeaf> {
    /// Rebuilds a graph from its edge arrays (see [`Graph::parts`]), validating them fully.
    ///
    /// # Errors
    /// [`GraphError::InvalidParts`] naming the first thing that does not hold.
    pub fn from_parts(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Self, GraphError> {
        Self::from_parts_checked(directed, num_vertices, out, incoming, |_| true)
    }
}

impl Graph<DeltaMapLeaf> {
    /// Rebuilds a weighted graph from its edge arrays (see [`Graph::parts`]), validating
    /// them fully, weights included.
    ///
    /// # Errors
    /// [`GraphError::InvalidParts`] naming the first thing that does not hold.
    pub fn from_weighted_parts(
        directed: bool,
        num_vertices: usize,
        out: PmaParts,
        incoming: Option<PmaParts>,
    ) -> Result<Self, GraphError> {
        Self::from_parts_checked(directed, num_vertices, out, incoming, |(_, bits)| {
            f64::from_bits(bits).is_finite()
        })
    }
}

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
    /// [`GraphError::InvalidParts`] if `ids` does not name exactly the graph's vertices.
    pub fn with_ids(self, ids: IdMap) -> Result<Self, GraphError> {
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
            Self::Unweighted(g) => g.num_edges(),
            Self::Weighted(g) => g.num_edges(),
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

    /// Out-degrees of all vertices.
    pub fn out_degrees(&self) -> &[u32] {
        match self {
            Self::Unweighted(g) => g.out_degrees(),
            Self::Weighted(g) => g.out_degrees(),
        }
    }
}

impl<C: LeafCodec> GraphRead for Graph<C> {
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

    fn for_each_out_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        self.flat()
            .out
            .for_each(&self.out, v, |item| f(C::key(item) as VertexId))
    }

    fn for_each_in_neighbor(&self, v: VertexId, mut f: impl FnMut(VertexId) -> bool) -> bool {
        let flat = self.flat();
        let mut f = |item| f(C::key(item) as VertexId);
        match (&flat.incoming, &self.incoming) {
            (Some(index), Some(set)) => index.for_each(set, v, &mut f),
            _ => flat.out.for_each(&self.out, v, &mut f),
        }
    }
}

impl WeightedGraphRead for Graph<DeltaMapLeaf> {
    fn for_each_out_edge(&self, v: VertexId, mut f: impl FnMut(VertexId, f64) -> bool) -> bool {
        self.flat().out.for_each(&self.out, v, |(key, bits)| {
            f(key as VertexId, f64::from_bits(bits))
        })
    }
}

/// Unweighted edges have weight 1.
impl WeightedGraphRead for Graph<DeltaLeaf> {
    fn for_each_out_edge(&self, v: VertexId, mut f: impl FnMut(VertexId, f64) -> bool) -> bool {
        self.for_each_out_neighbor(v, |u| f(u, 1.0))
    }
}

#[cfg(test)]
mod tests;
