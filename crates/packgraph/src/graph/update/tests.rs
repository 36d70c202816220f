//! Edge operations within one update take effect in order: the graph after `apply` equals
//! an oracle that applies them one at a time, live and after an encode/decode round trip
//! (what a write-ahead log replays).

use std::collections::BTreeMap;

use proptest::collection::vec;
use proptest::prelude::*;

use crate::graph::{Graph, GraphRead, Update, VertexId, WeightedGraph, WeightedGraphRead};

#[derive(Debug, Clone)]
enum Op {
    Insert(VertexId, VertexId, f64),
    Delete(VertexId, VertexId),
}

fn op() -> impl Strategy<Value = Op> {
    // Few vertices, so that operations on one edge (and on its reverse) meet often.
    prop_oneof![
        (0u32..5, 0u32..5, 1u32..8).prop_map(|(u, v, w)| Op::Insert(u, v, f64::from(w))),
        (0u32..5, 0u32..5).prop_map(|(u, v)| Op::Delete(u, v)),
    ]
}

/// Edges with their weights, `(u, v)` with `u < v` when undirected; self-loops left out.
type Edges = BTreeMap<(VertexId, VertexId), f64>;

fn oracle(directed: bool, start: &[Op], ops: &[Op]) -> Edges {
    let norm = |u: VertexId, v: VertexId| {
        if directed {
            (u, v)
        } else {
            (u.min(v), u.max(v))
        }
    };
    let mut edges = Edges::new();
    for op in start.iter().chain(ops) {
        match *op {
            Op::Insert(u, v, w) if u != v => {
                edges.insert(norm(u, v), w);
            }
            Op::Insert(..) => {}
            Op::Delete(u, v) => {
                edges.remove(&norm(u, v));
            }
        }
    }
    edges
}

/// The update of `ops`, built in order, consecutive operations of a kind as one call.
fn update(ops: &[Op], weighted: bool) -> Update {
    let mut update = Update::new();
    for run in ops.chunk_by(|a, b| matches!(a, Op::Insert(..)) == matches!(b, Op::Insert(..))) {
        if let Op::Delete(..) = run[0] {
            let edges: Vec<_> = run
                .iter()
                .filter_map(|op| match *op {
                    Op::Delete(u, v) => Some((u, v)),
                    Op::Insert(..) => None,
                })
                .collect();
            update.delete_edges(&edges);
            continue;
        }
        let edges: Vec<_> = run
            .iter()
            .filter_map(|op| match *op {
                Op::Insert(u, v, w) => Some((u, v, w)),
                Op::Delete(..) => None,
            })
            .collect();
        if weighted {
            update.insert_weighted_edges(&edges);
        } else {
            let pairs: Vec<_> = edges.iter().map(|&(u, v, _)| (u, v)).collect();
            update.insert_edges(&pairs);
        }
    }
    update
}

fn edges_of<G: WeightedGraphRead>(graph: &G) -> Edges {
    let mut edges = Edges::new();
    for u in 0..graph.num_vertices() as VertexId {
        graph.for_each_out_edge(u, |v, w| {
            if graph.is_directed() || u < v {
                edges.insert((u, v), w);
            }
            true
        });
    }
    edges
}

fn unweighted(edges: Edges) -> Edges {
    edges.into_keys().map(|e| (e, 1.0)).collect()
}

fn weighted_graph(directed: bool, start: &[Op], ops: &[Op]) -> (Edges, Edges) {
    let mut live = WeightedGraph::new_weighted(directed);
    live.apply(&update(start, true)).unwrap();
    let mut replayed = WeightedGraph::new_weighted(directed);
    replayed.apply(&update(start, true)).unwrap();
    let batch = update(ops, true);
    live.apply(&batch).unwrap();
    replayed
        .apply(&Update::decode(&batch.encode()).unwrap())
        .unwrap();
    (edges_of(&live), edges_of(&replayed))
}

fn unweighted_graph(directed: bool, start: &[Op], ops: &[Op]) -> (Edges, Edges) {
    let mut live = Graph::new(directed);
    live.apply(&update(start, false)).unwrap();
    let mut replayed = Graph::new(directed);
    replayed.apply(&update(start, false)).unwrap();
    let batch = update(ops, false);
    live.apply(&batch).unwrap();
    replayed
        .apply(&Update::decode(&batch.encode()).unwrap())
        .unwrap();
    (edges_of(&live), edges_of(&replayed))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn operations_take_effect_in_order(
        directed in any::<bool>(),
        start in vec(op(), 0..12),
        ops in vec(op(), 0..24),
    ) {
        let want = oracle(directed, &start, &ops);
        let (live, replayed) = weighted_graph(directed, &start, &ops);
        prop_assert_eq!(&live, &want);
        prop_assert_eq!(&replayed, &want);
        let (live, replayed) = unweighted_graph(directed, &start, &ops);
        prop_assert_eq!(&live, &unweighted(want.clone()));
        prop_assert_eq!(&replayed, &unweighted(want));
    }
}

#[test]
fn insert_then_delete_leaves_no_edge() {
    for directed in [false, true] {
        let mut g = Graph::new(directed);
        let applied = g
            .apply(
                Update::new()
                    .insert_edges(&[(0, 1)])
                    .delete_edges(&[(0, 1)]),
            )
            .unwrap();
        assert!(!g.has_edge(0, 1));
        assert_eq!((applied.edges_inserted, applied.edges_deleted), (0, 0));
        // The endpoints stay vertices.
        assert_eq!(g.num_vertices(), 2);
    }
    // Undirected: (1, 0) deletes (0, 1); directed, it is another edge.
    let mut g = Graph::new(false);
    g.apply(
        Update::new()
            .insert_edges(&[(0, 1)])
            .delete_edges(&[(1, 0)]),
    )
    .unwrap();
    assert!(!g.has_edge(0, 1));
    let mut g = Graph::new(true);
    g.apply(
        Update::new()
            .insert_edges(&[(0, 1)])
            .delete_edges(&[(1, 0)]),
    )
    .unwrap();
    assert!(g.has_edge(0, 1));
}

#[test]
fn delete_then_insert_keeps_the_edge_with_the_last_weight() {
    let mut g = WeightedGraph::new_weighted(true);
    g.insert_edges(&[(0, 1, 1.0)]).unwrap();
    let mut update = Update::new();
    update
        .insert_weighted_edges(&[(0, 1, 2.0)])
        .delete_edges(&[(0, 1)])
        .insert_weighted_edges(&[(0, 1, 3.0), (0, 1, 4.0)]);
    g.apply(&update).unwrap();
    assert_eq!(g.edge_weight(0, 1), Some(4.0));
    assert_eq!(update.deletes_after().collect::<Vec<_>>(), [1]);
}
