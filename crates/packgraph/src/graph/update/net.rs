//! Netting an update's edge operations so that two sorted batches, deletes first, give the
//! result of applying the operations one by one in order.
//!
//! Deleting first is already right for every edge whose last operation is an insert (the
//! inserts then run in order, so the last weight wins), and for every edge no insert
//! precedes a delete of. What is left is an insert followed later by a delete of the same
//! edge: the delete must win, so such inserts are dropped before the batches run. Only
//! deletes that follow some insert can supersede one, so an update whose deletes all come
//! first costs nothing here.

use std::collections::HashMap;

use crate::graph::{edge_key, VertexId};

/// The key of edge `(u, v)`: in an undirected graph the same for `(v, u)`.
fn key(directed: bool, (u, v): (VertexId, VertexId)) -> u64 {
    if directed {
        edge_key(u, v)
    } else {
        edge_key(u.min(v), u.max(v))
    }
}

/// Inserts and, when the update carries them, their weights.
pub(in crate::graph) type Inserts = (Vec<(VertexId, VertexId)>, Option<Vec<f64>>);

/// The inserts (and their weights) that no later delete of the same edge supersedes, or
/// `None` when every insert stands. `deletes_after[i]` is how many inserts precede delete
/// `i` (an empty list: none precedes any).
///
/// # Complexity
/// O(d + i) expected work for d deletes and i inserts; a hash map of the deletes that
/// follow an insert.
pub(in crate::graph) fn net_edges(
    directed: bool,
    deletes: &[(VertexId, VertexId)],
    deletes_after: &[usize],
    inserts: &[(VertexId, VertexId)],
    weights: Option<&[f64]>,
) -> Option<Inserts> {
    // Each edge's last delete, as the number of inserts before it.
    let mut last_delete: HashMap<u64, usize> = HashMap::new();
    for (&edge, &after) in deletes.iter().zip(deletes_after) {
        if after > 0 {
            let slot = last_delete.entry(key(directed, edge)).or_insert(0);
            *slot = (*slot).max(after);
        }
    }
    if last_delete.is_empty() {
        return None;
    }
    let stands = |i: usize| {
        last_delete
            .get(&key(directed, inserts[i]))
            .is_none_or(|&after| after <= i)
    };
    let kept: Vec<usize> = (0..inserts.len()).filter(|&i| stands(i)).collect();
    if kept.len() == inserts.len() {
        return None;
    }
    let edges = kept.iter().map(|&i| inserts[i]).collect();
    let weights = weights.map(|w| kept.iter().map(|&i| w[i]).collect());
    Some((edges, weights))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_later_delete_drops_the_insert_and_a_later_insert_keeps_it() {
        let inserts = [(1, 2), (3, 4), (1, 2)];
        // (1, 2) deleted after the first insert, before the second: the second stands.
        let got = net_edges(true, &[(1, 2)], &[1], &inserts, None).unwrap();
        assert_eq!(got.0, [(3, 4), (1, 2)]);
        // Deleted after both: gone; (3, 4) reversed is another edge when directed.
        let got = net_edges(
            true,
            &[(1, 2), (4, 3)],
            &[3, 3],
            &inserts,
            Some(&[1., 2., 3.]),
        );
        assert_eq!(got.unwrap(), (vec![(3, 4)], Some(vec![2.])));
        // Undirected: (4, 3) is (3, 4).
        let got = net_edges(false, &[(4, 3)], &[2], &inserts, None).unwrap();
        assert_eq!(got.0, [(1, 2), (1, 2)]);
    }

    #[test]
    fn deletes_before_every_insert_change_nothing() {
        assert_eq!(net_edges(true, &[(1, 2)], &[], &[(1, 2)], None), None);
        assert_eq!(net_edges(true, &[(1, 2)], &[0], &[(1, 2)], None), None);
        assert_eq!(net_edges(true, &[(2, 1)], &[1], &[(1, 2)], None), None);
    }
}
