//! The simple vertex orders HBA is measured against, each as the list of vertices in their
//! new order:
//!
//! * [`bfs_order`]: breadth-first from vertex 0, then from each vertex not yet reached (the
//!   layout a copying collector in Cheney's style produces);
//! * [`rcm_order`]: reverse Cuthill–McKee (Cuthill and McKee, 1969; George's reversal,
//!   1971): breadth-first from a vertex of least degree in each component, neighbours taken
//!   in increasing degree, then the whole list reversed. It narrows the bandwidth, i.e.
//!   keeps neighbours' ids close;
//! * [`degree_order`]: decreasing degree (ties by id), which packs the hubs together;
//! * [`random_order`]: a seeded uniform shuffle, the baseline a real file's ids resemble.
//!
//! All read the [`Adjacency`] (both directions of a directed graph). Left out: the
//! pseudo-peripheral start vertex search of Gibbs–Poole–Stockmeyer (RCM starts from a vertex
//! of least degree).

use rayon::prelude::*;

use super::adjacency::Adjacency;
use crate::graph::VertexId;

/// Breadth-first order; every component in turn, components by their least vertex.
///
/// # Complexity
/// O(n + m) work, sequential.
pub(crate) fn bfs_order(adjacency: &Adjacency) -> Vec<VertexId> {
    breadth_first(adjacency, 0..adjacency.len() as VertexId, |_| {})
}

/// Breadth-first trees, one from each vertex of `roots` not reached before it: each
/// vertex taken from the queue appends its neighbors not yet placed, in the order
/// `arrange` leaves them (they come in the adjacency's order).
fn breadth_first(
    adjacency: &Adjacency,
    roots: impl IntoIterator<Item = VertexId>,
    mut arrange: impl FnMut(&mut [VertexId]),
) -> Vec<VertexId> {
    let n = adjacency.len();
    let mut placed = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut fresh = Vec::new();
    for root in roots {
        if std::mem::replace(&mut placed[root as usize], true) {
            continue;
        }
        let mut head = order.len();
        order.push(root);
        while head < order.len() {
            let v = order[head];
            head += 1;
            fresh.clear();
            for &u in adjacency.neighbors(v) {
                if !std::mem::replace(&mut placed[u as usize], true) {
                    fresh.push(u);
                }
            }
            arrange(&mut fresh);
            order.extend_from_slice(&fresh);
        }
    }
    order
}

/// Reverse Cuthill–McKee order.
///
/// # Complexity
/// O(n log n + m log d) work (sorting by degree), sequential but for the first sort.
pub(crate) fn rcm_order(adjacency: &Adjacency) -> Vec<VertexId> {
    let degree = |v: VertexId| adjacency.degree(v);
    let mut by_degree: Vec<VertexId> = (0..adjacency.len() as VertexId).collect();
    by_degree.par_sort_by_key(|&v| (degree(v), v));
    let mut order = breadth_first(adjacency, by_degree, |fresh| {
        fresh.sort_unstable_by_key(|&u| (degree(u), u));
    });
    order.reverse();
    order
}

/// Decreasing degree, ties by id.
///
/// # Complexity
/// O(n log n) work, parallel.
pub(crate) fn degree_order(adjacency: &Adjacency) -> Vec<VertexId> {
    let mut order: Vec<VertexId> = (0..adjacency.len() as VertexId).collect();
    order.par_sort_by_key(|&v| (std::cmp::Reverse(adjacency.degree(v)), v));
    order
}

/// A uniform shuffle of `0..n` (Fisher–Yates), the same for a seed on any thread count.
///
/// # Complexity
/// O(n) work, sequential.
pub(crate) fn random_order(n: usize, seed: u64) -> Vec<VertexId> {
    let mut order: Vec<VertexId> = (0..n as VertexId).collect();
    let mut state = seed ^ 0x6a09_e667_f3bc_c908;
    for i in (1..n).rev() {
        let bound = i as u64 + 1;
        let pick = (u128::from(split_mix(&mut state)) * u128::from(bound)) >> 64;
        order.swap(i, pick as usize);
    }
    order
}

/// SplitMix64's next value (Steele, Lea and Flood, 2014).
fn split_mix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A path 0 - 1 - ... - 5 numbered out of order, plus isolated vertex 6.
    fn shuffled_path() -> Adjacency {
        // Path order: 3 5 0 4 1 2.
        let path = [3, 5, 0, 4, 1, 2];
        let mut lists = vec![Vec::new(); 7];
        for w in path.windows(2) {
            lists[w[0] as usize].push(w[1]);
            lists[w[1] as usize].push(w[0]);
        }
        for list in &mut lists {
            list.sort_unstable();
        }
        Adjacency::from_lists(&lists)
    }

    #[test]
    fn bfs_visits_by_distance_then_the_next_component() {
        assert_eq!(bfs_order(&shuffled_path()), [0, 4, 5, 1, 3, 2, 6]);
    }

    #[test]
    fn rcm_lays_a_path_out_end_to_end() {
        let order = rcm_order(&shuffled_path());
        // The isolated vertex (degree 0) starts first, so it ends last after reversal; the
        // path is laid out from one end to the other.
        assert_eq!(order[6], 6);
        let path = &order[..6];
        assert!(
            path == [3, 5, 0, 4, 1, 2] || path == [2, 1, 4, 0, 5, 3],
            "{path:?}"
        );
    }

    #[test]
    fn degree_order_puts_hubs_first() {
        let lists = vec![vec![1], vec![0, 2, 3], vec![1], vec![1]];
        assert_eq!(degree_order(&Adjacency::from_lists(&lists)), [1, 0, 2, 3]);
    }

    #[test]
    fn random_order_is_seeded() {
        assert_eq!(random_order(100, 3), random_order(100, 3));
        assert_ne!(random_order(100, 3), random_order(100, 4));
        let mut sorted = random_order(100, 3);
        sorted.sort_unstable();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
    }
}
