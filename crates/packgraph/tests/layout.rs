//! Relabeling changes nothing a user sees: every registry algorithm gives the same output, in
//! external ids, before and after the graph is renumbered by any order, on the LDBC
//! Graphalytics validation graphs (tests/data/graphalytics) and on a generated graph.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use packgraph::algo::{AlgoOutput, Algorithm, AlgorithmKind, Stat, Values};
use packgraph::graph::{AnyGraph, IdMap, VertexId};
use packgraph::io::{generate, load, Dataset, Format, LoadOptions};
use packgraph::layout::{Levels, Order};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphalytics")
        .join(path)
}

fn orders() -> Vec<Order> {
    vec![
        Order::Hba(Levels::default()),
        Order::Hba(Levels::new(vec![16, 64]).unwrap()),
        Order::Bfs,
        Order::Rcm,
        Order::Degree,
        Order::Random { seed: 3 },
        Order::Identity,
    ]
}

/// A value as compared: exact, or a real within a relative tolerance (summation order
/// follows the numbering, and PageRank rounds each contribution to `f32`, so a different
/// order can round one differently: about 1e-7 relative).
#[derive(Debug, Clone, Copy)]
enum Value {
    Exact(u64),
    Real(f64),
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (*self, *other) {
            (Value::Exact(a), Value::Exact(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => {
                a == b || (a - b).abs() <= 1e-6 * a.abs().max(b.abs()).max(1e-12)
            }
            _ => false,
        }
    }
}

/// The output keyed by external id, labels and vertex figures as external ids.
fn external(output: &AlgoOutput, ids: &IdMap) -> (HashMap<u64, Value>, Vec<(String, Value)>) {
    let n = ids.len() as VertexId;
    let values = (0..n)
        .map(|v| {
            let i = v as usize;
            let value = match &output.values {
                Values::Hops(h) => Value::Exact(u64::from(h[i])),
                Values::Reals(r) => Value::Real(r[i]),
                Values::Labels(l) => Value::Exact(ids.external(l[i])),
                Values::Counts(c) => Value::Exact(c[i]),
            };
            (ids.external(v), value)
        })
        .collect();
    let summary = output
        .summary
        .iter()
        .map(|&(name, stat)| {
            let value = match stat {
                Stat::Count(c) => Value::Exact(c),
                Stat::Real(x) => Value::Real(x),
                Stat::Vertex(v) => Value::Exact(ids.external(v)),
            };
            (name.to_string(), value)
        })
        .collect();
    (values, summary)
}

fn run(graph: &AnyGraph, kind: AlgorithmKind, source: u64) -> AlgoOutput {
    let mut algorithm = Algorithm::new(kind);
    algorithm.source = graph
        .ids()
        .internal(source)
        .expect("the source is a vertex");
    algorithm.run_any(graph).unwrap()
}

fn assert_outputs_survive_relabeling(name: &str, data: &Dataset, source: u64) {
    for kind in AlgorithmKind::ALL {
        let before = external(&run(&data.graph, kind, source), data.ids());
        for order in orders() {
            let perm = order.permutation_any(&data.graph);
            let relabeled = data.graph.relabel(&perm).unwrap();
            relabeled.check_invariants().unwrap();
            let after = external(&run(&relabeled, kind, source), relabeled.ids());
            assert_eq!(before, after, "{name}: {kind} after {order}");
        }
    }
}

#[test]
fn graphalytics_outputs_are_the_same_in_every_order() {
    for (prefix, directed) in [
        ("example/example-directed", true),
        ("example/example-undirected", false),
        ("sssp/dir-input", true),
        ("sssp/undir-input", false),
    ] {
        let options = LoadOptions {
            format: Some(Format::Graphalytics),
            directed: Some(directed),
            progress: None,
            ..LoadOptions::default()
        };
        let dataset = load(&data(&format!("{prefix}.v")), &options).unwrap();
        assert!(dataset.graph.num_edges() > 0, "{prefix}");
        let source = dataset.ids().external(0);
        assert_outputs_survive_relabeling(prefix, &dataset, source);
    }
}

#[test]
fn generated_graph_outputs_are_the_same_in_every_order() {
    // A Kronecker graph whose external ids are scattered integers, weighted and directed.
    let edges = generate::kronecker(9, 6, 11);
    let weights = generate::uniform_weights(edges.len(), 11);
    let data = Dataset::from_edges(1 << 9, &edges, Some(&weights), true).unwrap();
    let ids: Vec<u64> = generate::permutation(1 << 9, 5)
        .into_iter()
        .map(|v| u64::from(v) * 1_000 + 17)
        .collect();
    let graph = data
        .graph
        .with_ids(IdMap::from_list(&ids).unwrap())
        .unwrap();
    let data = Dataset {
        graph,
        self_loops: 0,
    };
    let source = data.ids().external(0);
    assert_outputs_survive_relabeling("kronecker", &data, source);
}
