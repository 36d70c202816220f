//! Relabeling: the same graph with its vertices renumbered by a [`Permutation`], built
//! directly in the new order, and the ids and properties carried along so that everything
//! said in external ids is unchanged.
//!
//! Each new vertex's arcs are gathered from its old run, mapped and sorted, on all threads,
//! into one sorted array that the CPMA is built from in one pass (no batch insertion, no text
//! round trip); a directed graph's in-array is the same arcs reversed and sorted. The
//! relabeled graph is a new value one version past the old one: the old graph and its
//! snapshots are untouched.

use rayon::prelude::*;

use super::adjacency::par_fill;
use super::Permutation;
use crate::graph::{
    edge_key, AnyGraph, EdgeLeaf, ExternalId, Graph, GraphRead, IdMap, Properties, VertexId,
    WeightedGraphRead,
};
use crate::pma::Pma;
use crate::{Error, Result};

impl<C: EdgeLeaf> Graph<C> {
    /// The graph with vertex `v` renumbered `perm.new_id(v)`: the same edges (and weights),
    /// external ids and properties, one version later. `self` and its snapshots keep the
    /// old numbering.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `perm` does not permute exactly the graph's vertices.
    ///
    /// # Complexity
    /// O(m log d + n) work for maximum degree d, O(m / p + n) time on p threads, plus a
    /// parallel sort of the arcs for a directed graph.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead};
    /// use packgraph::layout::Permutation;
    ///
    /// let g = Graph::from_edges(3, &[(0, 1), (1, 2)], false).unwrap();
    /// let p = Permutation::from_order(vec![1, 2, 0]).unwrap(); // 1 -> 0, 2 -> 1, 0 -> 2
    /// let h = g.relabel(&p).unwrap();
    /// assert_eq!(h.out_neighbors(0), [1, 2]);
    /// assert_eq!(h.ids().external(0), 1); // still vertex 1 to the user
    /// assert_eq!(h.version(), g.version() + 1);
    /// ```
    pub fn relabel(&self, perm: &Permutation) -> Result<Self> {
        let n = self.num_vertices();
        if perm.len() != n {
            return Err(Error::invalid_reason(format!(
                "a permutation of {} vertices cannot relabel a graph of {n}",
                perm.len()
            )));
        }
        let ((out, incoming), (ids, properties)) = rayon::join(
            || relabel_arcs(self, perm),
            || {
                rayon::join(
                    || relabel_ids(self.ids(), perm),
                    || relabel_properties(self.properties(), perm),
                )
            },
        );
        Ok(Self::assemble(
            self.is_directed(),
            n,
            (out, incoming),
            ids?,
            properties,
            self.version() + 1,
        ))
    }
}

impl AnyGraph {
    /// The graph renumbered by `perm` (see [`Graph::relabel`]).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `perm` does not permute exactly the graph's vertices.
    pub fn relabel(&self, perm: &Permutation) -> Result<Self> {
        Ok(match self {
            Self::Unweighted(g) => Self::Unweighted(g.relabel(perm)?),
            Self::Weighted(g) => Self::Weighted(g.relabel(perm)?),
        })
    }
}

/// The out-array (and for a directed graph the in-array) in the new numbering.
fn relabel_arcs<C: EdgeLeaf>(graph: &Graph<C>, perm: &Permutation) -> (Pma<C>, Option<Pma<C>>) {
    let n = graph.num_vertices();
    let mut offsets = Vec::with_capacity(n + 1);
    offsets.push(0);
    let mut total = 0;
    for new in 0..n as VertexId {
        total += graph.out_degree(perm.old_id(new));
        offsets.push(total);
    }
    let out_items = par_fill(&offsets, |new, run: &mut [C::Item]| {
        let mut len = 0;
        graph.for_each_out_edge(perm.old_id(new), |v, weight| {
            run[len] = C::arc(edge_key(new, perm.new_id(v)), weight);
            len += 1;
            true
        });
        run.sort_unstable_by_key(|&item| C::key(item));
    });
    // The source's configuration, so that a graph loaded compact stays compact.
    let config = graph.out_array().config();
    let build = |items: &[C::Item]| {
        Pma::<C>::from_sorted_with_config(items, config.clone())
            .expect("relabeled arcs are sorted by construction, under a configuration in use")
    };
    if !graph.is_directed() {
        return (build(&out_items), None);
    }
    let mut in_items: Vec<C::Item> = out_items
        .par_iter()
        .map(|&item| {
            let key = C::key(item);
            C::arc(key.rotate_left(32), C::weight(item))
        })
        .collect();
    in_items.par_sort_unstable_by_key(|&item| C::key(item));
    rayon::join(|| build(&out_items), || Some(build(&in_items)))
}

/// The id dictionary in the new numbering: new vertex `v` keeps old vertex
/// `perm.old_id(v)`'s external id.
fn relabel_ids(ids: &IdMap, perm: &Permutation) -> Result<IdMap> {
    let broken = || Error::corrupt("the id dictionary repeats an external id");
    if perm.is_identity() {
        return Ok(ids.clone());
    }
    if let Some(ints) = ids.int_ids() {
        let list: Vec<u64> = perm.order().par_iter().map(|&v| ints.get(v)).collect();
        return IdMap::from_list(&list).ok_or_else(broken);
    }
    // Vertices named by strings: rare, and the dictionary inserts names one by one.
    let mut map = IdMap::default();
    for &old in perm.order() {
        let id: ExternalId = ids.external_id(old).ok_or_else(broken)?;
        let (_, added) = map.insert(&id).map_err(|_| broken())?;
        if !added {
            return Err(broken());
        }
    }
    Ok(map)
}

/// Every property column in the new numbering.
fn relabel_properties(properties: &Properties, perm: &Permutation) -> Properties {
    let mut relabeled = Properties::default();
    for name in properties.names() {
        if let Some(column) = properties.column(name) {
            let items = column.map(|(v, value)| (perm.new_id(v), value.clone()));
            relabeled.set_batch(name, items);
        }
    }
    relabeled
}
