//! Locality figures of a layout: how far apart consecutive neighbour ids are, which is what
//! both the delta codes' size and a traversal's cache misses follow.

use rayon::prelude::*;

use crate::graph::{GraphRead, IdMap, VertexId};

/// Vertices per parallel task.
const VERTEX_GRAIN: usize = 1024;

/// The mean over all stored arcs of log2 of the gap to the previous neighbour in the run
/// (for a run's first arc, the distance between the two endpoints' ids): about the bits a
/// delta code spends per arc. 0 for a graph without arcs.
///
/// # Examples
/// ```
/// use packgraph::graph::Graph;
/// use packgraph::layout::mean_log2_gap;
///
/// // Vertex 0's run: 1 (gap 1), 2 (gap 1); 1's: 0 (gap 1); 2's: 0 (gap 2).
/// let g = Graph::from_edges(3, &[(0, 1), (0, 2)], false).unwrap();
/// assert_eq!(mean_log2_gap(&g), 0.25);
/// ```
///
/// # Complexity
/// O(n + m) work, parallel over vertices.
pub fn mean_log2_gap<G: GraphRead>(graph: &G) -> f64 {
    let (sum, arcs) = (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(VERTEX_GRAIN)
        .map(|v| {
            let mut acc = (0.0f64, 0usize);
            let mut run = |u: VertexId, previous: &mut VertexId| {
                acc.0 += f64::from(u.abs_diff(*previous)).log2();
                acc.1 += 1;
                *previous = u;
                true
            };
            let mut previous = v;
            graph.for_each_out_neighbor(v, |u| run(u, &mut previous));
            if graph.is_directed() {
                let mut previous = v;
                graph.for_each_in_neighbor(v, |u| run(u, &mut previous));
            }
            acc
        })
        .reduce(|| (0.0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    if arcs == 0 {
        0.0
    } else {
        sum / arcs as f64
    }
}

/// Whether the internal ids `0..n` list the external ids in increasing order (integers
/// before names, names in byte order), as a freshly loaded file's do.
pub fn ids_increase(ids: &IdMap) -> bool {
    if ids.as_range().is_some() {
        return true;
    }
    match ids.int_ids() {
        Some(ints) => (1..ids.len() as VertexId)
            .into_par_iter()
            .with_min_len(4 * VERTEX_GRAIN)
            .all(|v| ints.get(v - 1) < ints.get(v)),
        None => {
            let all: Vec<_> = ids.iter().collect();
            all.windows(2).all(|w| w[0] < w[1])
        }
    }
}

/// The vertices in increasing order of their external ids (integers before names).
pub fn by_external_id(ids: &IdMap) -> Vec<VertexId> {
    let mut order: Vec<VertexId> = (0..ids.len() as VertexId).collect();
    match ids.int_ids() {
        Some(ints) => order.par_sort_unstable_by_key(|&v| ints.get(v)),
        None => {
            let all: Vec<_> = ids.iter().collect();
            order.par_sort_unstable_by(|&a, &b| all[a as usize].cmp(&all[b as usize]));
        }
    }
    order
}
