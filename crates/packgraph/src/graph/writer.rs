//! The write path: [`Graph::apply`] checks a whole [`Update`] first, then changes the ids,
//! the edge arrays and the properties, so that an error leaves the graph as it was. The
//! convenience methods (`insert_edges`, `intern`, `set_property`, ...) each build an
//! `Update` and apply it.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, OnceLock};

use super::arcs::{scan_endpoints, split_arcs};
use super::update::net_edges;
use super::{
    edge_key, Applied, EdgeLeaf, ExternalId, Graph, IdMap, PropertyChange, PropertyValue, Update,
    VertexId, MAX_VERTICES,
};
use crate::pma::{GroupLeaf, GroupMapLeaf, Pma};
use crate::{Error, Result};

/// Arcs below which both arrays are updated on the calling thread: a rayon call costs
/// microseconds, more than a few point updates (and a caller outside any pool would
/// otherwise wait on the global one).
const SERIAL_ARCS: usize = 4096;

/// Edges (inserted and deleted) up to which an update keeps the flat vertex index built
/// before it up to date ([`Graph::keep_index`]) instead of dropping it: the arrays' point
/// updates log the leaves they change, and only those are decoded again. An update whose
/// arcs take an array's batch path (`PmaConfig::point_batch_max` arcs or more: 100 by
/// default, two arcs an edge when undirected) logs nothing there and drops the index too.
/// Set to keep a server's write groups of a few dozen single-edge requests on this path.
const KEEP_INDEX_EDGES: usize = 64;

/// An update's contents, borrowed: what `apply` works on, so that a caller holding a slice
/// of edges (`from_edges`, `insert_edges`) need not copy it into an [`Update`].
#[derive(Clone, Copy)]
struct Batch<'a> {
    vertices: &'a [ExternalId],
    min_vertices: usize,
    deletes: &'a [(VertexId, VertexId)],
    deletes_after: &'a [usize],
    inserts: &'a [(VertexId, VertexId)],
    weights: Option<&'a [f64]>,
    properties: &'a [PropertyChange],
}

impl<'a> Batch<'a> {
    fn of(update: &'a Update) -> Self {
        Self {
            vertices: &update.vertices,
            min_vertices: update.min_vertices,
            deletes: &update.deletes,
            deletes_after: &update.deletes_after,
            inserts: &update.inserts,
            weights: update.weights.as_deref(),
            properties: &update.properties,
        }
    }

    fn inserting(inserts: &'a [(VertexId, VertexId)], weights: Option<&'a [f64]>) -> Self {
        Self {
            vertices: &[],
            min_vertices: 0,
            deletes: &[],
            deletes_after: &[],
            inserts,
            weights,
            properties: &[],
        }
    }
}

/// An update checked against a graph and not yet applied ([`Graph::plan_update`]).
pub(crate) struct Planned {
    plan: Plan,
    outcome: Outcome,
}

impl Planned {
    /// What applying the update will leave.
    pub(crate) fn outcome(&self) -> Outcome {
        self.outcome
    }
}

/// What an update leaves, known before it is applied: the graph's version, vertex count
/// and count of named vertices afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outcome {
    pub(crate) version: u64,
    pub(crate) vertices: usize,
    pub(crate) names: usize,
}

/// What an update will do, worked out before anything changes.
struct Plan {
    ids: IdMap,
    vertices: Vec<VertexId>,
    num_vertices: usize,
    self_loops: usize,
}

impl<C: EdgeLeaf> Graph<C> {
    /// Applies `update` as one new version: all of it, or on an error nothing.
    ///
    /// # Errors
    /// * [`Error::InvalidInput`] for weights given to an unweighted graph, a NaN or
    ///   infinite weight, or more vertices than 32-bit ids allow;
    /// * [`Error::VertexNotFound`] for a property change of a vertex the graph does not
    ///   have (after the update's own additions).
    ///
    /// # Complexity
    /// O(b log n) work for a batch of b edges, in parallel for large batches (the CPMA's
    /// batch insert and delete).
    pub fn apply(&mut self, update: &Update) -> Result<Applied> {
        self.apply_batch(Batch::of(update))
    }

    fn apply_batch(&mut self, update: Batch<'_>) -> Result<Applied> {
        let plan = self.plan(update)?;
        Ok(self.apply_plan(update, plan))
    }

    /// Checks `update` against the graph as [`Graph::apply`] does, changing nothing: what
    /// applying it will leave is then known ([`Planned::outcome`]), so that a durable
    /// store can log the update before it changes the graph and need not take it back
    /// when logging fails.
    ///
    /// # Errors
    /// As [`Graph::apply`].
    pub(crate) fn plan_update(&self, update: &Update) -> Result<Planned> {
        let plan = self.plan(Batch::of(update))?;
        let outcome = Outcome {
            version: self.version + 1,
            vertices: plan.num_vertices,
            names: plan.ids.name_count(),
        };
        Ok(Planned { plan, outcome })
    }

    /// Applies `update` as [`Graph::plan_update`] planned it on this very state (nothing
    /// may change the graph in between): it cannot fail.
    pub(crate) fn apply_planned(&mut self, update: &Update, planned: Planned) -> Applied {
        debug_assert_eq!(
            planned.outcome.version,
            self.version + 1,
            "planned on another state"
        );
        self.apply_plan(Batch::of(update), planned.plan)
    }

    /// The counts an update that adds no vertex or id leaves, counted as `versions` more.
    pub(crate) fn outcome_unchanged(&self, versions: u64) -> Outcome {
        Outcome {
            version: self.version + versions,
            vertices: self.num_vertices,
            names: self.ids.name_count(),
        }
    }

    /// Applies `update` as `plan`, which [`Graph::plan`] made from this very state, found.
    fn apply_plan(&mut self, update: Batch<'_>, plan: Plan) -> Applied {
        let vertices_added = plan.num_vertices - self.num_vertices;
        let keep = vertices_added == 0
            && update.deletes.len() + update.inserts.len() <= KEEP_INDEX_EDGES
            && self.index.get().is_some();
        if keep {
            self.out.start_log();
            if let Some(set) = self.incoming.as_mut() {
                set.start_log();
            }
        }
        self.ids = plan.ids;
        self.num_vertices = plan.num_vertices;
        self.ids.grow_to(self.num_vertices);
        let edges_deleted = self.delete_arcs(update.deletes);
        let netted = net_edges(
            self.directed,
            update.deletes,
            update.deletes_after,
            update.inserts,
            update.weights,
        );
        let edges_inserted = match &netted {
            Some((inserts, weights)) => {
                let stand = Batch {
                    inserts,
                    weights: weights.as_deref(),
                    ..update
                };
                self.insert_arcs(stand, scan_endpoints(inserts).1)
            }
            None => self.insert_arcs(update, plan.self_loops),
        };
        // A batch that changes no edge may still move keys between leaves (a rebalance, a
        // shrink), so the cached runs are dropped whenever the arrays were touched.
        if keep {
            self.keep_index();
        } else if vertices_added > 0 || !update.deletes.is_empty() || !update.inserts.is_empty() {
            self.index = OnceLock::new();
        }
        let (properties_set, properties_removed) = self.change_properties(update.properties);
        self.version += 1;
        Applied {
            version: self.version,
            vertices: plan.vertices,
            vertices_added,
            edges_deleted,
            edges_inserted,
            self_loops: plan.self_loops,
            properties_set,
            properties_removed,
        }
    }

    /// Whether `update` may be applied later, merged with other such updates into one
    /// batch, with the result of applying each now (`GroupCommit::commit_merged_with`): it
    /// only inserts and deletes edges between vertices the graph has (every external id it
    /// names is interned, no vertex count or insert endpoint past the graph's, no property
    /// change), so it changes no id or vertex count and later updates are built the same
    /// whether it was applied or not. `Ok(Some(self_loops))` for such an update (its
    /// inserts that are loops); `Ok(None)` for one to apply alone; the error
    /// [`Graph::apply`] gives for one it refuses.
    pub(crate) fn check_mergeable(&self, update: &Update) -> Result<Option<usize>> {
        Self::check_weights(Batch::of(update))?;
        let n = self.num_vertices;
        let (endpoints, self_loops) = scan_endpoints(&update.inserts);
        let mergeable = update.properties.is_empty()
            && update.min_vertices <= n
            && endpoints <= n
            && update
                .vertices
                .iter()
                .all(|id| self.ids.internal_id(id).is_some());
        Ok(mergeable.then_some(self_loops))
    }

    /// Refuses weights given to an unweighted graph and weights that are not finite.
    fn check_weights(update: Batch<'_>) -> Result<()> {
        if let Some(weights) = update.weights {
            if !C::WEIGHTED {
                return Err(Error::invalid_reason(
                    "the graph is unweighted: inserted edges cannot carry weights",
                ));
            }
            if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
                let (u, v) = update.inserts[i];
                return Err(Error::invalid(
                    weights[i],
                    format!("edge {i} of the batch ({u} -> {v}) has a weight that is not finite"),
                ));
            }
        }
        Ok(())
    }

    /// Checks `update` against the graph and works out its ids and vertex count.
    fn plan(&self, update: Batch<'_>) -> Result<Plan> {
        Self::check_weights(update)?;
        let too_many = |requested: usize| {
            Error::invalid_reason(format!(
                "cannot grow the graph from {} to {requested} vertices: ids are limited to 2^32 - 1 vertices",
                self.num_vertices
            ))
        };
        // On a copy (O(1)), so that a failure leaves the graph as it was.
        let mut ids = self.ids.clone();
        let mut vertices = Vec::with_capacity(update.vertices.len());
        // The ids already present are looked up together; only the others are inserted
        // (one by one, in order, so that a repeated new id gets one vertex).
        let known = ids.internal_ids(update.vertices);
        for (id, known) in update.vertices.iter().zip(known) {
            let v = match known {
                Some(v) => v,
                None => ids.insert(id).map_err(|_| too_many(ids.len() + 1))?.0,
            };
            vertices.push(v);
        }
        let (endpoints, self_loops) = scan_endpoints(update.inserts);
        let num_vertices = ids
            .len()
            .max(self.num_vertices)
            .max(update.min_vertices)
            .max(endpoints);
        if num_vertices > MAX_VERTICES {
            return Err(too_many(num_vertices));
        }
        if let Some(change) = update
            .properties
            .iter()
            .find(|c| c.vertex as usize >= num_vertices)
        {
            return Err(Error::vertex_not_found(change.vertex, num_vertices));
        }
        Ok(Plan {
            ids,
            vertices,
            num_vertices,
            self_loops,
        })
    }

    /// Brings the flat index built before a small update up to date from the arrays' logs
    /// of what the update changed (`RunIndex::apply_log`), or drops it where that cannot
    /// be done. Entries are written in place where this version holds them alone; those it
    /// shares with a published version (a snapshot) are copied first, segment by segment.
    fn keep_index(&mut self) {
        let out_log = self.out.take_log();
        let in_log = self.incoming.as_mut().and_then(Pma::take_log);
        let n = self.num_vertices;
        let kept = self.index.take().and_then(|flat| {
            let mut flat = Arc::unwrap_or_clone(flat);
            flat.out.apply_log(&self.out, out_log.as_deref()?, n)?;
            match (flat.incoming.as_mut(), self.incoming.as_ref()) {
                (Some(index), Some(set)) => index.apply_log(set, in_log.as_deref()?, n)?,
                (None, None) => {}
                _ => return None,
            }
            Some(Arc::new(flat))
        });
        if let Some(flat) = kept {
            self.index = OnceLock::from(flat);
        }
    }

    /// Removes the arcs of `edges`; returns the edges that were present.
    fn delete_arcs(&mut self, edges: &[(VertexId, VertexId)]) -> usize {
        if edges.is_empty() {
            return 0;
        }
        let (_, self_loops) = scan_endpoints(edges);
        let (out, reversed) = split_arcs(
            self.directed,
            edges.len(),
            self_loops,
            |i| edges[i],
            |_, u, v| edge_key(u, v),
        );
        self.change_arcs(out, reversed, |set, keys| set.remove_batch(&keys))
    }

    /// Adds the arcs of the update's inserts; returns the edges that were absent.
    fn insert_arcs(&mut self, update: Batch<'_>, self_loops: usize) -> usize {
        let edges = update.inserts;
        if edges.is_empty() {
            return 0;
        }
        let weights = update.weights;
        let (out, reversed) = split_arcs(
            self.directed,
            edges.len(),
            self_loops,
            |i| edges[i],
            |i, u, v| {
                // Unweighted arrays ignore the weight: no lookup per arc.
                let weight = match weights {
                    Some(w) if C::WEIGHTED => w[i],
                    _ => 1.0,
                };
                C::arc(edge_key(u, v), weight)
            },
        );
        self.change_arcs(out, reversed, |set, items| set.insert_batch_owned(items))
    }

    /// Applies a batch's arcs to both arrays (in parallel when large) with `op`, which
    /// returns how many arcs it added or removed; returns the edges changed.
    fn change_arcs<T: Send>(
        &mut self,
        out: Vec<T>,
        reversed: Vec<T>,
        op: impl Fn(&mut Pma<C>, Vec<T>) -> usize + Sync,
    ) -> usize {
        let arcs = if out.len() + reversed.len() < SERIAL_ARCS {
            let arcs = op(&mut self.out, out);
            if let Some(set) = self.incoming.as_mut() {
                op(set, reversed);
            }
            arcs
        } else {
            rayon::join(
                || op(&mut self.out, out),
                || self.incoming.as_mut().map(|set| op(set, reversed)),
            )
            .0
        };
        if self.directed {
            arcs
        } else {
            arcs / 2
        }
    }

    /// Applies property changes in order, a run of sets of one name as one sorted batch;
    /// returns the values set and the values removed.
    fn change_properties(&mut self, changes: &[PropertyChange]) -> (usize, usize) {
        let (mut set, mut removed) = (0, 0);
        let mut rest = changes;
        while let Some(first) = rest.first() {
            let run = rest
                .iter()
                .take_while(|c| c.name == first.name && c.value.is_some())
                .count();
            if run == 0 {
                removed += usize::from(self.properties.remove(&first.name, first.vertex).is_some());
                rest = &rest[1..];
                continue;
            }
            let items = rest[..run]
                .iter()
                .filter_map(|c| Some((c.vertex, c.value.clone()?)));
            self.properties.set_batch(&first.name, items);
            set += run;
            rest = &rest[run..];
        }
        (set, removed)
    }

    /// The internal ids `ids` would get if added now: a present id its vertex, a new one
    /// the next free internal id (in order, an id repeated in `ids` once). A writer that
    /// holds the graph uses it to give an [`Update`]'s edges in external ids.
    pub fn plan_vertices(&self, ids: &[ExternalId]) -> Vec<VertexId> {
        let mut new: HashMap<&ExternalId, VertexId> = HashMap::new();
        ids.iter()
            .zip(self.ids.internal_ids(ids))
            .map(|(id, known)| {
                known.unwrap_or_else(|| {
                    let next = (self.num_vertices + new.len()) as VertexId;
                    *new.entry(id).or_insert(next)
                })
            })
            .collect()
    }

    /// Deletes a batch of edges (absent edges are no-ops).
    ///
    /// # Errors
    /// None in practice; the result is [`Graph::apply`]'s.
    pub fn delete_edges(&mut self, edges: &[(VertexId, VertexId)]) -> Result<Applied> {
        self.apply_batch(Batch {
            deletes: edges,
            ..Batch::inserting(&[], None)
        })
    }

    /// Adds `count` isolated vertices; returns their ids.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if the count would pass [`MAX_VERTICES`]; nothing is added.
    pub fn add_vertices(&mut self, count: usize) -> Result<Range<VertexId>> {
        let first = self.num_vertices;
        let end = first.saturating_add(count);
        self.apply(Update::new().min_vertices(end))?;
        Ok(first as VertexId..end as VertexId)
    }

    /// The vertices of external ids `ids`, adding a vertex (with the next internal id) for
    /// each id not seen before, so that edges can be given in the caller's ids.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] past [`MAX_VERTICES`] vertices; nothing is added then.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{ExternalId, Graph, GraphRead};
    ///
    /// let mut g = Graph::new(true);
    /// let ids: Vec<ExternalId> = vec!["alice".into(), "bob".into(), 10_u64.into()];
    /// let v = g.intern(&ids).unwrap();
    /// g.insert_edges(&[(v[0], v[1]), (v[1], v[2])]).unwrap();
    /// let before = g.snapshot();
    /// let carol = g.intern(&["carol".into()]).unwrap()[0];
    /// assert_eq!(g.ids().internal_name("carol"), Some(carol));
    /// assert_eq!(before.ids().internal_name("carol"), None);
    /// assert_eq!(g.ids().external_id(v[2]), Some(ExternalId::Int(10)));
    /// ```
    pub fn intern(&mut self, ids: &[ExternalId]) -> Result<Vec<VertexId>> {
        let mut update = Update::new();
        update.vertices = ids.to_vec();
        Ok(self.apply(&update)?.vertices)
    }

    /// Sets property `name` of vertex `v`.
    ///
    /// # Errors
    /// [`Error::VertexNotFound`] if `v` is not a vertex.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, PropertyValue};
    ///
    /// let mut g = Graph::from_edges(3, &[(0, 1)], false).unwrap();
    /// g.set_property("age", 1, 42_i64.into()).unwrap();
    /// let before = g.snapshot();
    /// g.set_property("age", 1, 43_i64.into()).unwrap();
    /// assert_eq!(before.property("age", 1), Some(&PropertyValue::Int(42)));
    /// assert_eq!(g.property("age", 1), Some(&PropertyValue::Int(43)));
    /// assert!(g.set_property("age", 7, 1_i64.into()).is_err());
    /// ```
    pub fn set_property(&mut self, name: &str, v: VertexId, value: PropertyValue) -> Result<()> {
        self.apply(Update::new().set_property(name, v, value))
            .map(drop)
    }

    /// Sets property `name` of many vertices in one sorted walk (of a vertex given twice the
    /// last value wins).
    ///
    /// # Errors
    /// [`Error::VertexNotFound`] for a vertex that does not exist; nothing is set.
    pub fn set_properties(
        &mut self,
        name: &str,
        items: &[(VertexId, PropertyValue)],
    ) -> Result<()> {
        let mut update = Update::new();
        for (v, value) in items {
            update.set_property(name, *v, value.clone());
        }
        self.apply(&update).map(drop)
    }

    /// Removes property `name` of vertex `v`; returns whether it had one.
    ///
    /// # Errors
    /// [`Error::VertexNotFound`] if `v` is not a vertex.
    pub fn remove_property(&mut self, name: &str, v: VertexId) -> Result<bool> {
        let applied = self.apply(Update::new().remove_property(name, v))?;
        Ok(applied.properties_removed > 0)
    }
}

impl Graph<GroupLeaf> {
    /// A graph on at least `num_vertices` vertices (grown to cover every endpoint) with
    /// `edges`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an endpoint past 32-bit ids ([`MAX_VERTICES`]).
    pub fn from_edges(
        num_vertices: usize,
        edges: &[(VertexId, VertexId)],
        directed: bool,
    ) -> Result<Self> {
        let mut graph = Self::new(directed);
        let batch = Batch {
            min_vertices: num_vertices,
            ..Batch::inserting(edges, None)
        };
        graph.apply_batch(batch)?;
        Ok(graph)
    }

    /// Inserts a batch of edges (any order; duplicates and present edges are no-ops).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for an endpoint past 32-bit ids ([`MAX_VERTICES`]).
    pub fn insert_edges(&mut self, edges: &[(VertexId, VertexId)]) -> Result<Applied> {
        self.apply_batch(Batch::inserting(edges, None))
    }
}

impl Graph<GroupMapLeaf> {
    /// A weighted graph on at least `num_vertices` vertices (grown to cover every endpoint).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a NaN or infinite weight.
    pub fn from_weighted_edges(
        num_vertices: usize,
        edges: &[(VertexId, VertexId, f64)],
        directed: bool,
    ) -> Result<Self> {
        let mut graph = Self::new_weighted(directed);
        let mut update = Update::new();
        update
            .min_vertices(num_vertices)
            .insert_weighted_edges(edges);
        graph.apply(&update)?;
        Ok(graph)
    }

    /// Inserts a batch of weighted edges (any order). A present edge gets the new weight; of
    /// duplicates in the batch the last wins. `edges_inserted` counts edges that were absent.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a NaN or infinite weight; the batch is not applied.
    pub fn insert_edges(&mut self, edges: &[(VertexId, VertexId, f64)]) -> Result<Applied> {
        self.apply(Update::new().insert_weighted_edges(edges))
    }

    /// The weight of edge `(u, v)`, if present.
    pub fn edge_weight(&self, u: VertexId, v: VertexId) -> Option<f64> {
        self.out
            .get(edge_key(u, v))
            .map(|(_, bits)| f64::from_bits(bits))
    }
}
