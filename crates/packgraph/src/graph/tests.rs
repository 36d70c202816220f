//! The dynamic graph against an adjacency-set oracle and against the static CSR.

use std::collections::BTreeSet;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;
use crate::Error;

mod packing;

/// Adjacency sets: the oracle, applying the documented edge policy.
#[derive(Clone)]
struct Oracle {
    directed: bool,
    out: Vec<BTreeSet<VertexId>>,
    incoming: Vec<BTreeSet<VertexId>>,
}

impl Oracle {
    fn new(directed: bool) -> Self {
        Self {
            directed,
            out: Vec::new(),
            incoming: Vec::new(),
        }
    }

    fn grow(&mut self, n: usize) {
        if self.out.len() < n {
            self.out.resize(n, BTreeSet::new());
            self.incoming.resize(n, BTreeSet::new());
        }
    }

    fn apply(&mut self, edges: &[(VertexId, VertexId)], insert: bool) -> usize {
        let mut changed = 0;
        for &(u, v) in edges {
            if insert {
                self.grow(u.max(v) as usize + 1);
            }
            if u == v || u.max(v) as usize >= self.out.len() {
                continue;
            }
            let arcs: &[(VertexId, VertexId)] = if self.directed {
                &[(u, v)]
            } else {
                &[(u, v), (v, u)]
            };
            let mut did = false;
            for &(a, b) in arcs {
                did |= if insert {
                    self.out[a as usize].insert(b)
                } else {
                    self.out[a as usize].remove(&b)
                };
                if insert {
                    self.incoming[b as usize].insert(a);
                } else {
                    self.incoming[b as usize].remove(&a);
                }
            }
            changed += usize::from(did);
        }
        changed
    }
}

fn assert_same<G: GraphRead>(graph: &G, oracle: &Oracle) {
    assert_eq!(graph.num_vertices(), oracle.out.len());
    let arcs: usize = oracle.out.iter().map(BTreeSet::len).sum();
    assert_eq!(graph.num_arcs(), arcs);
    for v in 0..oracle.out.len() {
        let id = v as VertexId;
        assert!(
            graph.out_neighbors(id).iter().eq(oracle.out[v].iter()),
            "out of {v}"
        );
        assert_eq!(graph.out_degree(id), oracle.out[v].len());
        let incoming = if oracle.directed {
            &oracle.incoming[v]
        } else {
            &oracle.out[v]
        };
        let mut seen = Vec::new();
        graph.for_each_in_neighbor(id, |u| {
            seen.push(u);
            true
        });
        assert!(seen.iter().eq(incoming.iter()), "in of {v}");
        assert_eq!(graph.in_degree(id), incoming.len());
    }
    assert_range_scans(graph, oracle);
}

/// The range scans give every arc of the vertices in a range, in order: over the whole
/// graph, over windows of several sizes, and over ranges past the last vertex.
fn assert_range_scans<G: GraphRead>(graph: &G, oracle: &Oracle) {
    let n = oracle.out.len();
    let incoming = if oracle.directed {
        &oracle.incoming
    } else {
        &oracle.out
    };
    let arcs = |lists: &[BTreeSet<VertexId>], range: std::ops::Range<usize>| {
        let range = range.start.min(n)..range.end.min(n);
        lists[range.clone()]
            .iter()
            .zip(range)
            .flat_map(|(list, v)| list.iter().map(move |&u| (v as VertexId, u)))
            .collect::<Vec<_>>()
    };
    for width in [1, 3, 16, n + 5] {
        for start in (0..n + 2).step_by(width.max(1)) {
            let range = start as VertexId..(start + width) as VertexId;
            let (mut out, mut inc) = (Vec::new(), Vec::new());
            graph.for_each_out_arc_in(range.clone(), |v, u| out.push((v, u)));
            graph.for_each_in_arc_in(range.clone(), |v, u| inc.push((v, u)));
            assert_eq!(
                out,
                arcs(&oracle.out, start..start + width),
                "out-arcs from {start}"
            );
            let expected = arcs(incoming, start..start + width);
            assert_eq!(inc, expected, "in-arcs from {start}");
            // The slice forms: the same targets, whatever the scratch held before.
            let mut scratch = vec![7; 3];
            let targets = graph.out_arcs_in(range.clone(), &mut scratch);
            assert!(
                targets.iter().eq(out.iter().map(|(_, u)| u)),
                "out-arc slice from {start}"
            );
            let sources = graph.in_arcs_in(range, &mut scratch);
            assert!(
                sources.iter().eq(expected.iter().map(|(_, u)| u)),
                "in-arc slice from {start}"
            );
        }
    }
}

pub(super) fn edges(max: VertexId) -> impl Strategy<Value = Vec<(VertexId, VertexId)>> {
    vec((0..max, 0..max), 0..300)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn batches_match_adjacency_sets(
        directed in any::<bool>(),
        batches in vec((any::<bool>(), edges(60)), 1..12),
    ) {
        let mut graph = Graph::new(directed);
        let mut oracle = Oracle::new(directed);
        for (insert, batch) in &batches {
            let expected = oracle.apply(batch, *insert);
            let stats = if *insert { graph.insert_edges(batch).unwrap() } else { graph.delete_edges(batch).unwrap() };
            if *insert {
                prop_assert_eq!(stats.edges_inserted, expected);
                prop_assert_eq!(stats.self_loops, batch.iter().filter(|(u, v)| u == v).count());
            } else {
                prop_assert_eq!(stats.edges_deleted, expected);
            }
            graph.check_invariants().unwrap();
            assert_same(&graph, &oracle);
            for &(u, v) in batch.iter().take(10) {
                let present = oracle.out.get(u as usize).is_some_and(|s| s.contains(&v));
                prop_assert_eq!(graph.has_edge(u, v), present);
            }
        }
        let all: Vec<(VertexId, VertexId)> = (0..oracle.out.len())
            .flat_map(|u| oracle.out[u].iter().map(move |&v| (u as VertexId, v)))
            .collect();
        let csr = CsrGraph::from_edges(oracle.out.len(), &all, directed);
        assert_same(&csr, &oracle);
    }

    #[test]
    fn high_degrees_match(directed in any::<bool>(), hub in 0u32..200_000, batch in edges(3_000)) {
        // A hub with thousands of neighbors spans many leaves; ids are dense, so the largest
        // id sets the vertex count (kept moderate here).
        let star: Vec<(VertexId, VertexId)> = (0..2_000).map(|v| (7, v)).chain(batch).chain([(hub, 1), (1, hub)]).collect();
        let graph = Graph::from_edges(0, &star, directed).unwrap();
        let csr = CsrGraph::from_edges(0, &star, directed);
        prop_assert_eq!(graph.num_vertices(), csr.num_vertices());
        prop_assert_eq!(graph.num_arcs(), csr.num_arcs());
        for v in [0, 1, 7, 1_999, 2_999, hub] {
            prop_assert_eq!(graph.out_neighbors(v), csr.out_neighbors(v));
            prop_assert_eq!(graph.in_degree(v), csr.in_degree(v));
        }
    }
}

#[test]
fn adding_vertices_grows_the_graph_and_rejects_overflow() {
    let mut graph = Graph::new(true);
    assert_eq!(graph.add_vertices(3).unwrap(), 0..3);
    graph.insert_edges(&[(0, 9)]).unwrap();
    assert_eq!(graph.num_vertices(), 10);
    assert_eq!(graph.out_degree(5), 0);
    assert_eq!(graph.add_vertices(2).unwrap(), 10..12);
    let err = graph.add_vertices(usize::MAX).unwrap_err();
    assert!(matches!(err, Error::InvalidInput { .. }));
    assert!(err.to_string().contains("2^32"));
    assert_eq!(graph.num_vertices(), 12);
}

#[test]
fn index_is_rebuilt_after_each_update() {
    let mut graph = Graph::new(false);
    graph.insert_edges(&[(0, 1)]).unwrap();
    assert_eq!(graph.out_neighbors(0), [1]);
    graph.insert_edges(&[(0, 2), (0, 3)]).unwrap();
    assert_eq!(graph.out_neighbors(0), [1, 2, 3]);
    graph.delete_edges(&[(1, 0), (5, 6)]).unwrap();
    assert_eq!(graph.out_neighbors(0), [2, 3]);
    assert_eq!(graph.num_vertices(), 4);
}

/// Every out-edge with its weight, per vertex.
fn weighted_lists<G: WeightedGraphRead>(graph: &G) -> Vec<Vec<(VertexId, f64)>> {
    (0..graph.num_vertices() as VertexId)
        .map(|v| {
            let mut edges = Vec::new();
            graph.for_each_out_edge(v, |u, w| {
                edges.push((u, w));
                true
            });
            edges
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    #[test]
    fn weighted_batches_match_a_weight_map(
        directed in any::<bool>(),
        batches in vec((any::<bool>(), vec((0u32..40, 0u32..40, 0u32..8), 0..200)), 1..10),
    ) {
        use std::collections::BTreeMap;
        let mut graph = WeightedGraph::new_weighted(directed);
        let mut oracle: BTreeMap<(VertexId, VertexId), f64> = BTreeMap::new();
        let mut n = 0usize;
        let mut all: Vec<(VertexId, VertexId, f64)> = Vec::new();
        for (step, (insert, batch)) in batches.iter().enumerate() {
            // Weights differ per step so that re-inserting an edge changes its weight.
            let weighted: Vec<(VertexId, VertexId, f64)> = batch
                .iter()
                .map(|&(u, v, w)| (u, v, f64::from(w) * 0.5 + step as f64))
                .collect();
            if *insert {
                let before = oracle.len();
                for &(u, v, w) in &weighted {
                    n = n.max(u.max(v) as usize + 1);
                    if u != v {
                        oracle.insert((u, v), w);
                        if !directed {
                            oracle.insert((v, u), w);
                        }
                    }
                }
                let added = (oracle.len() - before) / if directed { 1 } else { 2 };
                prop_assert_eq!(graph.insert_edges(&weighted).unwrap().edges_inserted, added);
                all.extend(&weighted);
            } else {
                let pairs: Vec<(VertexId, VertexId)> = batch.iter().map(|&(u, v, _)| (u, v)).collect();
                for &(u, v) in &pairs {
                    oracle.remove(&(u, v));
                    if !directed {
                        oracle.remove(&(v, u));
                    }
                }
                graph.delete_edges(&pairs).unwrap();
                let keep: std::collections::BTreeSet<_> = oracle.keys().copied().collect();
                all.retain(|&(u, v, _)| keep.contains(&(u, v)));
            }
            graph.check_invariants().unwrap();
            prop_assert_eq!(graph.num_vertices(), n);
            prop_assert_eq!(graph.num_arcs(), oracle.len());
            let lists = weighted_lists(&graph);
            for (&(u, v), &w) in &oracle {
                prop_assert!(lists[u as usize].contains(&(v, w)), "edge {} -> {} weight {}", u, v, w);
                prop_assert_eq!(graph.edge_weight(u, v), Some(w));
            }
        }
        let csr = CsrGraph::from_weighted_edges(n, &all, directed);
        prop_assert_eq!(weighted_lists(&csr), weighted_lists(&graph));
    }
}

#[test]
fn invalid_weights_are_rejected_and_nothing_changes() {
    let mut graph = WeightedGraph::new_weighted(false);
    graph.insert_edges(&[(0, 1, 1.0)]).unwrap();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let err = graph.insert_edges(&[(1, 2, 2.0), (2, 3, bad)]).unwrap_err();
        assert!(matches!(err, Error::InvalidInput { .. }));
        assert!(
            err.to_string().contains("edge 1 of the batch (2 -> 3)"),
            "{err}"
        );
        assert!(err.to_string().contains("not finite"), "{err}");
    }
    assert_eq!((graph.num_vertices(), graph.num_arcs()), (2, 2));
    assert_eq!(graph.edge_weight(1, 0), Some(1.0));
    assert_eq!(graph.edge_weight(1, 2), None);
}

#[test]
fn large_batches_take_the_parallel_arc_paths() {
    // Above the parallel threshold, with and without self-loops, both directions.
    let n = 3_000u32;
    let mut edges: Vec<(VertexId, VertexId)> = (0..100_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) % n, (i / 7) % n))
        .filter(|(u, v)| u != v)
        .collect();
    for with_loops in [false, true] {
        if with_loops {
            edges.extend((0..50).map(|v| (v, v)));
        }
        for directed in [false, true] {
            let graph = Graph::from_edges(0, &edges, directed).unwrap();
            let csr = CsrGraph::from_edges(n as usize, &edges, directed);
            assert_eq!(graph.num_vertices(), n as usize);
            assert_eq!(graph.num_arcs(), csr.num_arcs());
            for v in (0..n).step_by(37) {
                assert_eq!(graph.out_neighbors(v), csr.out_neighbors(v));
                assert_eq!(graph.in_degree(v), csr.in_degree(v));
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// An index derived from an earlier version's (`build_index_from`) equals the graph:
    /// small batches (a few pages of hundreds changed, derived), large ones (a full build
    /// instead), new vertices, deletions emptying runs, both directions.
    #[test]
    fn derived_indexes_match_the_oracle(
        directed in any::<bool>(),
        seed in any::<u64>(),
        steps in vec((edges(20_100), any::<bool>(), 0usize..6), 1..10),
    ) {
        let start = crate::io::generate::erdos_renyi(20_000, 60_000, seed);
        let mut graph = Graph::from_edges(20_000, &start, directed).unwrap();
        let mut oracle = Oracle::new(directed);
        oracle.grow(20_000);
        oracle.apply(&start, true);
        let mut base = graph.snapshot();
        base.build_index();
        prop_assert!(graph.out_array().num_pages() > 50);
        let (mut history, mut base_oracle) = (Vec::new(), oracle.clone());
        for (step, (batch, insert, keep)) in steps.into_iter().enumerate() {
            // Slices of the batch too, so that only a page or two changes; deletions take
            // present edges as well.
            let mut batch = batch[..batch.len() >> keep].to_vec();
            if !insert {
                batch.extend(start.iter().skip(step * 97).step_by(5_000).copied());
            }
            if insert {
                graph.insert_edges(&batch).unwrap();
            } else {
                graph.delete_edges(&batch).unwrap();
            }
            oracle.apply(&batch, insert);
            let next = graph.snapshot();
            // Derived when few pages changed, else built in full (the unit test below
            // checks which path a small batch takes).
            next.build_index_from(&base);
            assert_same(&next, &oracle);
            history.push((base, std::mem::replace(&mut base_oracle, oracle.clone())));
            base = next;
        }
        // Each later index shares the segments of its base whose entries did not change and
        // copies the others: every earlier version still reads as it did.
        for (version, then) in &history {
            assert_same(version, then);
        }
    }
}

#[test]
fn a_small_batch_derives_the_index_from_the_previous_version() {
    let start = crate::io::generate::erdos_renyi(20_000, 60_000, 3);
    for directed in [false, true] {
        let mut graph = Graph::from_edges(20_000, &start, directed).unwrap();
        let base = graph.snapshot();
        base.build_index();
        graph.insert_edges(&[(5, 19_999), (7, 20_050)]).unwrap();
        graph.delete_edges(&[start[10], start[20]]).unwrap();
        let next = graph.snapshot();
        assert!(next.build_index_from(&base), "directed {directed}");
        let mut oracle = Oracle::new(directed);
        oracle.grow(20_000);
        oracle.apply(&start, true);
        oracle.apply(&[(5, 19_999), (7, 20_050)], true);
        oracle.apply(&[start[10], start[20]], false);
        assert_same(&next, &oracle);
        // Without a base index, or after growth rebuilt the array: a full build.
        let unindexed = graph.snapshot();
        graph.insert_edges(&[(1, 2)]).unwrap();
        assert!(!graph.snapshot().build_index_from(&unindexed));
        let big: Vec<(VertexId, VertexId)> = crate::io::generate::erdos_renyi(20_000, 200_000, 9);
        let before = graph.snapshot();
        before.build_index();
        graph.insert_edges(&big).unwrap();
        assert!(!graph.snapshot().build_index_from(&before));
    }
}

#[derive(Debug, Clone)]
enum PropOp {
    Set(u8, VertexId, i64),
    SetBatch(u8, Vec<(VertexId, i64)>),
    Remove(u8, VertexId),
    AddVertices(usize),
    Edge(VertexId, VertexId),
    Snapshot,
    DropOldest,
}

fn prop_op() -> impl Strategy<Value = PropOp> {
    prop_oneof![
        5 => (0u8..3, 0u32..12, any::<i64>()).prop_map(|(c, v, x)| PropOp::Set(c, v, x)),
        2 => (0u8..3, vec((0u32..12, any::<i64>()), 0..12)).prop_map(|(c, items)| PropOp::SetBatch(c, items)),
        2 => (0u8..3, 0u32..12).prop_map(|(c, v)| PropOp::Remove(c, v)),
        1 => (0usize..3).prop_map(PropOp::AddVertices),
        1 => (0u32..12, 0u32..12).prop_map(|(u, v)| PropOp::Edge(u, v)),
        1 => Just(PropOp::Snapshot),
        1 => Just(PropOp::DropOldest),
    ]
}

type PropOracle = (usize, std::collections::BTreeMap<(String, VertexId), i64>);

fn check_properties(graph: &Graph, (n, oracle): &PropOracle) {
    assert_eq!(graph.num_vertices(), *n);
    assert_eq!(graph.ids().len(), *n, "every vertex has an id");
    for column in ["c0", "c1", "c2"] {
        for v in 0..14 {
            let want = oracle.get(&(column.to_string(), v)).copied();
            assert_eq!(
                graph.property(column, v),
                want.map(PropertyValue::Int).as_ref()
            );
        }
        let got: Vec<(VertexId, i64)> = graph
            .properties()
            .column(column)
            .into_iter()
            .flatten()
            .map(|(v, x)| match x {
                PropertyValue::Int(x) => (v, *x),
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<(VertexId, i64)> = oracle
            .iter()
            .filter(|((c, _), _)| c == column)
            .map(|((_, v), x)| (*v, *x))
            .collect();
        assert_eq!(got, want, "column {column}");
    }
    let names: BTreeSet<&str> = oracle.keys().map(|(c, _)| c.as_str()).collect();
    assert!(graph.properties().names().eq(names.into_iter()));
}

proptest! {
    /// Properties against a map, with snapshots: every live snapshot keeps its version's
    /// values; a write to a vertex that does not exist is an error that changes nothing.
    #[test]
    fn properties_are_versioned_with_the_graph(ops in vec(prop_op(), 0..50)) {
        let mut graph = Graph::from_edges(6, &[], false).unwrap();
        let mut oracle: PropOracle = (6, Default::default());
        let mut versions: Vec<(Snapshot, PropOracle)> = Vec::new();
        let name = |c: u8| format!("c{c}");
        for op in ops {
            match op {
                PropOp::Set(c, v, x) => {
                    let result = graph.set_property(&name(c), v, PropertyValue::Int(x));
                    if (v as usize) < oracle.0 {
                        oracle.1.insert((name(c), v), x);
                        result.unwrap();
                    } else {
                        let expected = oracle.0;
                        let refused = matches!(result, Err(Error::VertexNotFound { num_vertices, .. }) if num_vertices == expected);
                        prop_assert!(refused);
                    }
                }
                PropOp::SetBatch(c, items) => {
                    let batch: Vec<_> = items.iter().map(|&(v, x)| (v, PropertyValue::Int(x))).collect();
                    let result = graph.set_properties(&name(c), &batch);
                    if items.iter().all(|&(v, _)| (v as usize) < oracle.0) {
                        for &(v, x) in &items {
                            oracle.1.insert((name(c), v), x);
                        }
                        result.unwrap();
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                PropOp::Remove(c, v) => {
                    let old = oracle.1.remove(&(name(c), v));
                    let result = graph.remove_property(&name(c), v);
                    if (v as usize) < oracle.0 {
                        prop_assert_eq!(result.unwrap(), old.is_some());
                    } else {
                        prop_assert!(result.is_err());
                    }
                }
                PropOp::AddVertices(k) => {
                    graph.add_vertices(k).unwrap();
                    oracle.0 += k;
                }
                PropOp::Edge(u, v) => {
                    graph.insert_edges(&[(u, v)]).unwrap();
                    oracle.0 = oracle.0.max(u.max(v) as usize + 1);
                }
                PropOp::Snapshot => versions.push((graph.snapshot(), oracle.clone())),
                PropOp::DropOldest => {
                    if !versions.is_empty() {
                        versions.remove(0);
                    }
                }
            }
            graph.check_invariants().unwrap();
            check_properties(&graph, &oracle);
            for (snapshot, expected) in &versions {
                check_properties(snapshot, expected);
            }
        }
    }
}

/// Everything a caller can see of a graph's state.
pub(super) fn state<C: EdgeLeaf>(graph: &Graph<C>) -> impl PartialEq + std::fmt::Debug {
    let arcs: Vec<(VertexId, Vec<(VertexId, u64)>)> = (0..graph.num_vertices() as VertexId)
        .map(|v| {
            let mut out = Vec::new();
            graph.for_each_out_edge(v, |u, w| {
                out.push((u, w.to_bits()));
                true
            });
            (v, out)
        })
        .collect();
    let properties: Vec<(String, Vec<(VertexId, String)>)> = graph
        .properties()
        .names()
        .map(|name| {
            let column = graph.properties().column(name).into_iter().flatten();
            (
                name.to_string(),
                column.map(|(v, x)| (v, x.to_string())).collect(),
            )
        })
        .collect();
    let ids: Vec<ExternalId> = graph.ids().iter().collect();
    (graph.version(), graph.num_vertices(), arcs, properties, ids)
}

/// One way to spoil a valid update.
#[derive(Debug, Clone)]
enum Spoil {
    NanWeight(usize),
    PropertyOfMissingVertex(u32),
    WeightsOnUnweighted,
}

fn update_strategy() -> impl Strategy<Value = (Update, Vec<f64>)> {
    (
        vec(0u64..30, 0..5),
        edges(40),
        edges(40),
        vec((0u32..20, any::<i64>()), 0..6),
        vec(0u32..20, 0..3),
    )
        .prop_map(|(ids, deletes, inserts, sets, removes)| {
            let mut update = Update::new();
            update.add_vertices(ids.into_iter().map(|x| x + 1_000));
            update.delete_edges(&deletes).insert_edges(&inserts);
            for (v, x) in sets {
                update.set_property("p", v, x.into());
            }
            for v in removes {
                update.remove_property("p", v);
            }
            let weights = inserts
                .iter()
                .map(|&(u, v)| f64::from(u + v) / 4.0)
                .collect();
            (update, weights)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn an_update_with_one_bad_element_changes_nothing(
        start in edges(40),
        (update, weights) in update_strategy(),
        spoil in prop_oneof![
            (0usize..1000).prop_map(Spoil::NanWeight),
            (1_000_000u32..2_000_000).prop_map(Spoil::PropertyOfMissingVertex),
            Just(Spoil::WeightsOnUnweighted),
        ],
        directed: bool,
    ) {
        let mut plain = Graph::from_edges(20, &start, directed).unwrap();
        plain.set_property("p", 3, 7_i64.into()).unwrap();
        let weighted_start: Vec<_> = start.iter().map(|&(u, v)| (u, v, 0.5)).collect();
        let mut weighted = WeightedGraph::from_weighted_edges(20, &weighted_start, directed).unwrap();
        // The valid update applies, and the graph stays consistent.
        let mut good = Graph::from_edges(20, &start, directed).unwrap();
        good.apply(&update).unwrap();
        good.check_invariants().unwrap();
        let mut bad = update.clone();
        match spoil {
            Spoil::NanWeight(i) if !update.inserts().is_empty() => {
                let mut w = weights.clone();
                let at = i % w.len();
                w[at] = f64::NAN;
                bad = Update::from_weighted_edges(update.inserts().to_vec(), w);
                bad.delete_edges(update.deletes()).set_property("p", 0, 1_i64.into());
                let before = state(&weighted);
                prop_assert!(weighted.apply(&bad).is_err());
                prop_assert_eq!(state(&weighted), before);
            }
            Spoil::WeightsOnUnweighted => {
                bad.insert_weighted_edges(&[(1, 2, 1.0)]);
                let before = state(&plain);
                prop_assert!(plain.apply(&bad).is_err());
                prop_assert_eq!(state(&plain), before);
            }
            Spoil::PropertyOfMissingVertex(_) | Spoil::NanWeight(_) => {
                let v = match spoil {
                    Spoil::PropertyOfMissingVertex(v) => v,
                    _ => 1_500_000,
                };
                bad.set_property("p", v, 1_i64.into());
                let before = (state(&plain), state(&weighted));
                prop_assert!(plain.apply(&bad).is_err());
                prop_assert!(weighted.apply(&bad).is_err());
                prop_assert_eq!((state(&plain), state(&weighted)), before);
            }
        }
        plain.check_invariants().unwrap();
        weighted.check_invariants().unwrap();
    }

    #[test]
    fn an_update_equals_its_parts_applied_one_by_one(
        start in edges(40),
        (update, _) in update_strategy(),
        directed: bool,
    ) {
        let mut whole = Graph::from_edges(20, &start, directed).unwrap();
        let mut parts = Graph::from_edges(20, &start, directed).unwrap();
        whole.apply(&update).unwrap();
        parts.intern(update.vertices()).unwrap();
        parts.delete_edges(update.deletes()).unwrap();
        parts.insert_edges(update.inserts()).unwrap();
        for change in update.property_changes() {
            match &change.value {
                Some(value) => parts.set_property(&change.name, change.vertex, value.clone()).unwrap(),
                None => drop(parts.remove_property(&change.name, change.vertex).unwrap()),
            }
        }
        whole.check_invariants().unwrap();
        // Versions differ (one update against several); everything else agrees.
        let (a, b) = (format!("{:?}", state(&whole)), format!("{:?}", state(&parts)));
        prop_assert_eq!(a.split_once(',').unwrap().1, b.split_once(',').unwrap().1);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Small updates keep the flat index built before them up to date from the arrays'
    /// logs (point edits and the rebalances they cause, in small leaves); each step checks
    /// the index against a fresh build (`check_invariants`) and the graph against the oracle.
    #[test]
    fn small_updates_keep_the_index_up_to_date(
        directed in any::<bool>(),
        start in edges(40),
        steps in vec((any::<bool>(), vec((0u32..40, 0u32..40), 1..8)), 1..60),
    ) {
        let mut graph = Graph::from_edges(40, &start, directed).unwrap();
        let mut oracle = Oracle::new(directed);
        oracle.grow(40);
        oracle.apply(&start, true);
        graph.build_index();
        for (insert, batch) in &steps {
            let expected = oracle.apply(batch, *insert);
            let applied = if *insert { graph.insert_edges(batch) } else { graph.delete_edges(batch) };
            let applied = applied.unwrap();
            prop_assert_eq!(applied.edges_inserted + applied.edges_deleted, expected);
            graph.check_invariants().unwrap();
            assert_same(&graph, &oracle);
        }
    }

    /// The same for weighted graphs, where inserting a present edge again replaces its
    /// weight in place.
    #[test]
    fn small_weighted_updates_keep_the_index_up_to_date(
        directed in any::<bool>(),
        steps in vec((any::<bool>(), vec((0u32..30, 0u32..30, 0u32..4), 1..6)), 1..60),
    ) {
        let start: Vec<(VertexId, VertexId, f64)> =
            (0..30).map(|v| (v, (v * 7 + 3) % 30, 1.0)).collect();
        let mut graph = WeightedGraph::from_weighted_edges(30, &start, directed).unwrap();
        graph.build_index();
        for (insert, batch) in &steps {
            if *insert {
                let weighted: Vec<_> = batch.iter().map(|&(u, v, w)| (u, v, f64::from(w))).collect();
                graph.insert_edges(&weighted).unwrap();
            } else {
                let pairs: Vec<_> = batch.iter().map(|&(u, v, _)| (u, v)).collect();
                graph.delete_edges(&pairs).unwrap();
            }
            graph.check_invariants().unwrap();
        }
    }
}

#[test]
fn a_small_update_keeps_the_index_and_a_large_one_drops_it() {
    let edges: Vec<(VertexId, VertexId)> = (0..2_000).map(|v| (v, (v * 31 + 7) % 2_000)).collect();
    let mut graph = Graph::from_edges(2_000, &edges, false).unwrap();
    graph.build_index();
    graph.insert_edges(&[(5, 900), (17, 18)]).unwrap();
    graph.delete_edges(&[(0, 7)]).unwrap();
    assert!(graph.index.get().is_some(), "kept through small updates");
    graph.check_invariants().unwrap();
    assert!(graph.out_neighbors(5).contains(&900));
    assert!(!graph.out_neighbors(0).contains(&7));
    let many: Vec<(VertexId, VertexId)> = (0..500).map(|v| (v, v + 1_000)).collect();
    graph.insert_edges(&many).unwrap();
    assert!(graph.index.get().is_none(), "dropped after a large update");
    // A new vertex drops it too (the index has one entry per vertex).
    graph.build_index();
    graph.insert_edges(&[(1, 2_000)]).unwrap();
    assert!(graph.index.get().is_none());
    graph.check_invariants().unwrap();
}
