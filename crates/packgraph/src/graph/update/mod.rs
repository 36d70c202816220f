//! [`Update`]: the one typed write batch of a graph, and [`Applied`], what applying it did.
//!
//! Everything that changes a graph builds an `Update` and hands it to
//! [`Graph::apply`](super::Graph::apply) (or [`SharedGraph::commit`](super::SharedGraph::commit)):
//! the CLI's stream, the file loaders, the write-ahead log's replay and the Python bindings.
//! An update is a plain value: it can be encoded ([`Update::encode`], the bytes the log
//! stores, documented in `docs/formats/update.md`), sent between threads, and replayed.
//!
//! Semantics, in the order `apply` performs them (all or nothing):
//! 1. `vertices`: external ids interned in order (an id already present is reused);
//! 2. `min_vertices`: the vertex count grows to at least this (new vertices take the next
//!    free integer ids);
//! 3. edge deletes and inserts, with the effect of applying them one by one in the order
//!    they were added to the update: of the operations on one edge the last wins (an
//!    insert leaves the edge present with its weight, a delete leaves it absent). In an
//!    undirected graph `(u, v)` and `(v, u)` are the same edge. A delete of an absent edge
//!    and an insert of a present one (which gets the new weight) are no-ops; self-loops are
//!    counted and not stored; insert endpoints past the vertex count add vertices, even
//!    when a later delete removes the edge;
//! 4. property changes, in order (a set replaces, a removal of an absent value is a no-op).
//!
//! Edges are applied as two sorted batches, deletes first: an insert that a later delete
//! of the same edge supersedes is dropped first (see `net.rs`), so that the batches give
//! the line-order result. [`Applied`] counts what the two batches changed.
//!
//! Edges name vertices by internal id ([`VertexId`]); vertices added by external id in the
//! same update get the ids [`Applied::vertices`] reports, which a writer holding the graph
//! can predict (see [`Graph::plan_vertices`](super::Graph::plan_vertices)).

mod encoding;
mod net;
#[cfg(test)]
mod tests;

use super::{ExternalId, PropertyValue, VertexId};

pub use self::encoding::UPDATE_FORMAT_VERSION;
pub(super) use self::net::net_edges;

/// One property change: a new value, or `None` to remove the value.
#[derive(Debug, Clone, PartialEq)]
pub struct PropertyChange {
    /// The property's name.
    pub name: String,
    /// The vertex (internal id).
    pub vertex: VertexId,
    /// The new value; `None` removes it.
    pub value: Option<PropertyValue>,
}

/// A batch of changes to a graph, applied atomically by
/// [`Graph::apply`](super::Graph::apply).
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead, PropertyValue, Update};
///
/// let mut g = Graph::new(false);
/// let mut update = Update::new();
/// update
///     .add_vertices(["alice", "bob"])
///     .insert_edges(&[(0, 1), (1, 2)])
///     .set_property("age", 0, 42_i64.into());
/// let applied = g.apply(&update).unwrap();
/// assert_eq!(applied.vertices, [0, 1]);
/// assert_eq!((applied.edges_inserted, g.num_vertices()), (2, 3));
/// assert_eq!(g.property("age", 0), Some(&PropertyValue::Int(42)));
///
/// // A batch with one bad element changes nothing.
/// let mut bad = Update::new();
/// bad.insert_edges(&[(2, 3)]).set_property("age", 99, 1_i64.into());
/// assert!(g.apply(&bad).is_err());
/// assert!(!g.has_edge(2, 3));
///
/// // The bytes a write-ahead log stores.
/// assert_eq!(Update::decode(&update.encode()).unwrap(), update);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Update {
    pub(super) vertices: Vec<ExternalId>,
    pub(super) min_vertices: usize,
    pub(super) deletes: Vec<(VertexId, VertexId)>,
    /// For each delete, how many inserts were added before it (it takes effect after
    /// those and before the later ones); empty while no delete follows an insert (then
    /// every delete comes first).
    pub(super) deletes_after: Vec<usize>,
    pub(super) inserts: Vec<(VertexId, VertexId)>,
    /// A weight per insert, or `None` when no insert carries one (then every insert weighs
    /// 1 in a weighted graph).
    pub(super) weights: Option<Vec<f64>>,
    pub(super) properties: Vec<PropertyChange>,
}

impl Update {
    /// An empty update.
    pub fn new() -> Self {
        Self::default()
    }

    /// An update inserting `edges`, taking the list without copying it.
    pub fn from_edges(edges: Vec<(VertexId, VertexId)>) -> Self {
        Self {
            inserts: edges,
            ..Self::default()
        }
    }

    /// An update inserting `edges` with `weights[i]` on `edges[i]`.
    ///
    /// # Panics
    /// If the two lists differ in length (a programming error, not input).
    #[track_caller]
    pub fn from_weighted_edges(edges: Vec<(VertexId, VertexId)>, weights: Vec<f64>) -> Self {
        assert_eq!(edges.len(), weights.len(), "one weight per edge");
        Self {
            inserts: edges,
            weights: Some(weights),
            ..Self::default()
        }
    }

    /// Adds vertices by external id (interned in order; present ids are reused).
    pub fn add_vertices<I>(&mut self, ids: impl IntoIterator<Item = I>) -> &mut Self
    where
        I: Into<ExternalId>,
    {
        self.vertices.extend(ids.into_iter().map(Into::into));
        self
    }

    /// Grows the graph to at least `count` vertices (new ones take free integer ids).
    pub fn min_vertices(&mut self, count: usize) -> &mut Self {
        self.min_vertices = self.min_vertices.max(count);
        self
    }

    /// The vertex count the update grows the graph to at least ([`Update::min_vertices`]).
    pub fn required_vertices(&self) -> usize {
        self.min_vertices
    }

    /// Inserts unweighted edges (weight 1 in a weighted graph).
    pub fn insert_edges(&mut self, edges: &[(VertexId, VertexId)]) -> &mut Self {
        if let Some(weights) = &mut self.weights {
            weights.resize(weights.len() + edges.len(), 1.0);
        }
        self.inserts.extend_from_slice(edges);
        self
    }

    /// Inserts weighted edges (only a weighted graph accepts them).
    pub fn insert_weighted_edges(&mut self, edges: &[(VertexId, VertexId, f64)]) -> &mut Self {
        let weights = self
            .weights
            .get_or_insert_with(|| vec![1.0; self.inserts.len()]);
        weights.extend(edges.iter().map(|e| e.2));
        self.inserts.extend(edges.iter().map(|&(u, v, _)| (u, v)));
        self
    }

    /// Deletes edges (absent ones are no-ops), after the inserts added so far: an edge
    /// inserted earlier in this update ends absent, one inserted later ends present.
    pub fn delete_edges(&mut self, edges: &[(VertexId, VertexId)]) -> &mut Self {
        if !self.inserts.is_empty() || !self.deletes_after.is_empty() {
            self.deletes_after.resize(self.deletes.len(), 0);
            let after = self.inserts.len();
            self.deletes_after
                .extend(std::iter::repeat_n(after, edges.len()));
        }
        self.deletes.extend_from_slice(edges);
        self
    }

    /// Sets property `name` of vertex `v`.
    pub fn set_property(&mut self, name: &str, v: VertexId, value: PropertyValue) -> &mut Self {
        self.properties.push(PropertyChange {
            name: name.to_string(),
            vertex: v,
            value: Some(value),
        });
        self
    }

    /// Removes property `name` of vertex `v` (a no-op if it has none).
    pub fn remove_property(&mut self, name: &str, v: VertexId) -> &mut Self {
        self.properties.push(PropertyChange {
            name: name.to_string(),
            vertex: v,
            value: None,
        });
        self
    }

    /// Whether the update changes nothing.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
            && self.min_vertices == 0
            && self.deletes.is_empty()
            && self.inserts.is_empty()
            && self.properties.is_empty()
    }

    /// How many edge inserts and deletes the update holds.
    pub(crate) fn edges(&self) -> usize {
        self.inserts.len() + self.deletes.len()
    }

    /// The external ids added.
    pub fn vertices(&self) -> &[ExternalId] {
        &self.vertices
    }

    /// The edges inserted.
    pub fn inserts(&self) -> &[(VertexId, VertexId)] {
        &self.inserts
    }

    /// The weights of the inserted edges, if any insert carries one.
    pub fn weights(&self) -> Option<&[f64]> {
        self.weights.as_deref()
    }

    /// The edges deleted, in the order given.
    pub fn deletes(&self) -> &[(VertexId, VertexId)] {
        &self.deletes
    }

    /// For each delete, how many of [`inserts`](Self::inserts) were added before it (all
    /// zero when every delete came before every insert).
    pub fn deletes_after(&self) -> impl Iterator<Item = usize> + '_ {
        let given = self.deletes_after.iter().copied();
        let zeros = std::iter::repeat_n(0, self.deletes.len() - self.deletes_after.len());
        given.chain(zeros)
    }

    /// The property changes, in order.
    pub fn property_changes(&self) -> &[PropertyChange] {
        &self.properties
    }

    /// Appends `record`'s ids, vertex count, edge operations and property changes after
    /// this update's: since an update's operations on one edge take effect in the order
    /// they were added (the last wins, weights included), applying the result does what
    /// applying this update and then `record` does, as long as neither adds a vertex whose
    /// number depends on the order (log replay and a group's merged batch check that).
    pub(crate) fn append(&mut self, record: &Update) {
        self.add_vertices(record.vertices().iter().cloned());
        self.min_vertices(record.required_vertices());
        let inserts = record.inserts();
        let weights = record.weights();
        let deletes = record.deletes();
        // The places of the deletes among the inserts (none to work out for the common
        // record that only inserts).
        let after: Vec<usize> = if deletes.is_empty() {
            Vec::new()
        } else {
            record.deletes_after().collect()
        };
        let mut done = 0;
        let mut d = 0;
        while d < deletes.len() {
            let at = after[d].min(inserts.len());
            let run = after[d..].iter().take_while(|&&a| a == after[d]).count();
            self.insert_range(inserts, weights, done..at.max(done));
            done = done.max(at);
            self.delete_edges(&deletes[d..d + run]);
            d += run;
        }
        self.insert_range(inserts, weights, done..inserts.len());
        for change in record.property_changes() {
            match &change.value {
                Some(value) => self.set_property(&change.name, change.vertex, value.clone()),
                None => self.remove_property(&change.name, change.vertex),
            };
        }
    }

    /// Inserts `inserts[range]`, with their weights if they have any.
    fn insert_range(
        &mut self,
        inserts: &[(VertexId, VertexId)],
        weights: Option<&[f64]>,
        range: std::ops::Range<usize>,
    ) {
        if range.is_empty() {
            return;
        }
        match weights {
            Some(w) => {
                let edges: Vec<_> = inserts[range.clone()]
                    .iter()
                    .zip(&w[range])
                    .map(|(&(u, v), &w)| (u, v, w))
                    .collect();
                self.insert_weighted_edges(&edges);
            }
            None => {
                self.insert_edges(&inserts[range]);
            }
        }
    }
}

/// What [`Graph::apply`](super::Graph::apply) did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Applied {
    /// The graph's version after the update.
    pub version: u64,
    /// The internal id of each of the update's external ids, in order.
    pub vertices: Vec<VertexId>,
    /// Vertices the graph gained (by external id, by `min_vertices` or by edge endpoints).
    pub vertices_added: usize,
    /// Edges deleted that were present (an undirected edge counts once).
    pub edges_deleted: usize,
    /// Edges inserted that were absent (an undirected edge counts once).
    pub edges_inserted: usize,
    /// Self-loops among the inserts, which are not stored.
    pub self_loops: usize,
    /// Property values set.
    pub properties_set: usize,
    /// Property values removed that were present.
    pub properties_removed: usize,
}
