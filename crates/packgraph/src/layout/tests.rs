//! Laws of the layer: every order is a permutation, a relabel equals building the renumbered
//! graph through the write path, and relabeling back gives the graph it started from.

use proptest::prelude::*;

use super::*;
use crate::graph::{Graph, PropertyValue, VertexId, WeightedGraph, WeightedGraphRead};

fn all_orders() -> Vec<Order> {
    vec![
        Order::Hba(Levels::default()),
        Order::Hba(Levels::new(vec![8, 32]).unwrap()),
        Order::Bfs,
        Order::Rcm,
        Order::Degree,
        Order::Random { seed: 7 },
        Order::Identity,
    ]
}

/// Graphs of up to `n` vertices (some isolated), self-loops included.
fn edges(n: u32) -> impl Strategy<Value = (u32, Vec<(VertexId, VertexId)>)> {
    (0..=n).prop_flat_map(|n| {
        let pairs = if n == 0 {
            Just(Vec::new()).boxed()
        } else {
            proptest::collection::vec((0..n, 0..n), 0..(4 * n as usize)).boxed()
        };
        (Just(n), pairs)
    })
}

/// Every arc with its weight, in vertex order.
fn arcs<G: WeightedGraphRead>(g: &G) -> Vec<(VertexId, VertexId, u64)> {
    let mut out = Vec::new();
    for u in 0..g.num_vertices() as VertexId {
        g.for_each_out_edge(u, |v, w| {
            out.push((u, v, w.to_bits()));
            true
        });
    }
    out
}

fn in_arcs<G: GraphRead>(g: &G) -> Vec<(VertexId, VertexId)> {
    let mut out = Vec::new();
    for u in 0..g.num_vertices() as VertexId {
        g.for_each_in_neighbor(u, |v| {
            out.push((u, v));
            true
        });
    }
    out
}

/// The graph through the write path with every endpoint renumbered: the reference.
fn renumbered(g: &WeightedGraph, perm: &Permutation) -> WeightedGraph {
    let edges: Vec<_> = arcs(g)
        .into_iter()
        .map(|(u, v, w)| (perm.new_id(u), perm.new_id(v), f64::from_bits(w)))
        .collect();
    WeightedGraph::from_weighted_edges(g.num_vertices(), &edges, g.is_directed()).unwrap()
}

proptest! {
    #[test]
    fn every_order_is_a_permutation_of_the_vertices((n, edges) in edges(40), directed: bool) {
        let g = Graph::from_edges(n as usize, &edges, directed).unwrap();
        for order in all_orders() {
            let perm = order.permutation(&g);
            prop_assert_eq!(perm.len(), n as usize, "{}", order);
            let mut seen = perm.order().to_vec();
            seen.sort_unstable();
            prop_assert!(seen.iter().enumerate().all(|(i, &v)| i as VertexId == v), "{}", order);
        }
    }

    #[test]
    fn relabel_equals_the_write_path_and_its_inverse_restores_the_graph(
        (n, edges) in edges(60),
        directed: bool,
        seed: u64,
    ) {
        let weighted: Vec<_> = edges
            .iter()
            .enumerate()
            .map(|(i, &(u, v))| (u, v, 0.5 + i as f64))
            .collect();
        let mut g = WeightedGraph::from_weighted_edges(n as usize, &weighted, directed).unwrap();
        let ids: Vec<_> = (0..n).map(|v| crate::graph::ExternalId::Int(u64::from(v) * 7 + 3)).collect();
        if n > 0 {
            g = g.with_ids(crate::graph::IdMap::from_list(
                &ids.iter().map(|id| match id { crate::graph::ExternalId::Int(x) => *x, _ => 0 }).collect::<Vec<_>>(),
            ).unwrap()).unwrap();
            g.set_property("p", n - 1, PropertyValue::Int(9)).unwrap();
            g.set_property("q", 0, "x".into()).unwrap();
        }
        let perm = Order::Random { seed }.permutation(&g);
        let h = g.relabel(&perm).unwrap();
        h.check_invariants().unwrap();
        let reference = renumbered(&g, &perm);
        prop_assert_eq!(arcs(&h), arcs(&reference));
        prop_assert_eq!(in_arcs(&h), in_arcs(&reference));
        for v in 0..n {
            prop_assert_eq!(h.ids().external(perm.new_id(v)), g.ids().external(v));
            prop_assert_eq!(h.property("p", perm.new_id(v)), g.property("p", v));
            prop_assert_eq!(h.property("q", perm.new_id(v)), g.property("q", v));
        }
        let back = h.relabel(&perm.inverse()).unwrap();
        back.check_invariants().unwrap();
        prop_assert_eq!(arcs(&back), arcs(&g));
        prop_assert_eq!(in_arcs(&back), in_arcs(&g));
        prop_assert_eq!(back.ids(), g.ids());
        prop_assert_eq!(back.properties().names().collect::<Vec<_>>(), g.properties().names().collect::<Vec<_>>());
    }
}

#[test]
fn relabel_keeps_names_and_leaves_snapshots_alone() {
    let mut g = Graph::new(true);
    let v = g
        .intern(&["carol".into(), 5_u64.into(), "alice".into()])
        .unwrap();
    g.insert_edges(&[(v[0], v[1]), (v[1], v[2])]).unwrap();
    let before = g.snapshot();
    let perm = Permutation::from_order(vec![2, 0, 1]).unwrap();
    let h = g.relabel(&perm).unwrap();
    assert_eq!(h.ids().internal_name("alice"), Some(0));
    assert_eq!(h.ids().internal_name("carol"), Some(1));
    assert!(h.has_edge(1, 2) && h.has_edge(2, 0));
    assert_eq!(before.ids().internal_name("alice"), Some(2));
    assert!(before.has_edge(0, 1) && before.has_edge(1, 2));
    assert!(ids_increase(before.ids()) == ids_increase(g.ids()));
}

#[test]
fn a_permutation_of_the_wrong_size_is_refused() {
    let g = Graph::from_edges(3, &[(0, 1)], false).unwrap();
    let error = g.relabel(&Permutation::identity(4)).unwrap_err();
    assert!(error.is_input_error());
    assert!(error.to_string().contains("4 vertices"), "{error}");
}

#[test]
fn hba_and_bfs_shrink_the_gaps_of_a_shuffled_mesh() {
    // A 60 x 60 grid in random id order.
    let side = 60u32;
    let mut edges = Vec::new();
    for r in 0..side {
        for c in 0..side {
            let v = r * side + c;
            if c + 1 < side {
                edges.push((v, v + 1));
            }
            if r + 1 < side {
                edges.push((v, v + side));
            }
        }
    }
    let g = Graph::from_edges((side * side) as usize, &edges, false).unwrap();
    let shuffled = g
        .relabel(&Order::Random { seed: 1 }.permutation(&g))
        .unwrap();
    let random_gap = mean_log2_gap(&shuffled);
    for order in [Order::Hba(Levels::default()), Order::Bfs, Order::Rcm] {
        let h = shuffled.relabel(&order.permutation(&shuffled)).unwrap();
        let gap = mean_log2_gap(&h);
        assert!(
            gap < random_gap / 2.0,
            "{order}: {gap} vs random {random_gap}"
        );
        assert!(h.size_in_bytes() < shuffled.size_in_bytes(), "{order}");
    }
}

#[test]
fn order_names_parse_back() {
    for name in Order::NAMES {
        let order = Order::from_name(name, Levels::default(), 1).unwrap();
        assert_eq!(order.name(), name);
    }
    let error = Order::from_name("gorder", Levels::default(), 1).unwrap_err();
    assert!(error.to_string().contains("`gorder`"), "{error}");
}
