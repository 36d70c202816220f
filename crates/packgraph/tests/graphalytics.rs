//! The LDBC Graphalytics validation graphs (tests/data/graphalytics, see its SOURCE.md):
//! BFS, PageRank, WCC, CDLP, LCC and SSSP on the dynamic graph and the static CSR must reproduce the
//! reference outputs under the benchmark's own comparison rules.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use packgraph::algo::{bfs, cdlp, lcc, pagerank, sssp, wcc, UNREACHED};
use packgraph::graph::{CsrGraph, Graph, GraphRead, VertexId, WeightedGraph, WeightedGraphRead};

fn data(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphalytics")
        .join(path)
}

fn read(path: &str) -> String {
    std::fs::read_to_string(data(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// A test graph with its external ids: `ids[dense] = external`.
struct Loaded {
    ids: Vec<u64>,
    dense: HashMap<u64, VertexId>,
    edges: Vec<(VertexId, VertexId)>,
}

fn load(vertices: impl IntoIterator<Item = u64>, pairs: Vec<(u64, u64)>) -> Loaded {
    let set: BTreeSet<u64> = vertices
        .into_iter()
        .chain(pairs.iter().flat_map(|&(u, v)| [u, v]))
        .collect();
    let ids: Vec<u64> = set.into_iter().collect();
    let dense: HashMap<u64, VertexId> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as VertexId))
        .collect();
    let edges = pairs.iter().map(|(u, v)| (dense[u], dense[v])).collect();
    Loaded { ids, dense, edges }
}

fn numbers(line: &str) -> Vec<u64> {
    line.split_whitespace()
        .map(|t| t.parse().unwrap_or_else(|_| panic!("bad id {t:?}")))
        .collect()
}

/// An adjacency file: `v n1 n2 ...` per line.
fn load_adjacency(path: &str) -> Loaded {
    let mut vertices = Vec::new();
    let mut pairs = Vec::new();
    for line in read(path).lines().filter(|l| !l.trim().is_empty()) {
        let ids = numbers(line);
        vertices.push(ids[0]);
        pairs.extend(ids[1..].iter().map(|&v| (ids[0], v)));
    }
    load(vertices, pairs)
}

/// A `.v` / `.e` pair (the weight column is ignored here).
fn load_vertex_edge(prefix: &str) -> Loaded {
    let vertices = read(&format!("{prefix}.v"))
        .lines()
        .map(|l| numbers(l)[0])
        .collect::<Vec<_>>();
    let pairs = read(&format!("{prefix}.e"))
        .lines()
        .map(|line| {
            let mut fields = line.split_whitespace();
            let mut id = || fields.next().and_then(|t| t.parse().ok()).expect("an id");
            (id(), id())
        })
        .collect();
    load(vertices, pairs)
}

/// `id value` lines.
fn expected(path: &str) -> HashMap<u64, String> {
    read(path)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (id, value) = line.split_once(' ').expect("id value");
            (id.parse().expect("an id"), value.trim().to_string())
        })
        .collect()
}

fn check_bfs<G: GraphRead>(graph: &G, g: &Loaded, source: u64, output: &str) {
    let tree = bfs(graph, g.dense[&source]).unwrap();
    let want = expected(output);
    assert_eq!(want.len(), g.ids.len(), "{output}");
    for (dense, &id) in g.ids.iter().enumerate() {
        let depth = tree.depths[dense];
        let got = if depth == UNREACHED {
            i64::MAX.to_string()
        } else {
            depth.to_string()
        };
        assert_eq!(got, want[&id], "{output}: vertex {id}");
    }
}

fn check_pagerank<G: GraphRead>(graph: &G, g: &Loaded, iterations: usize, output: &str) {
    let ranks = pagerank(graph, 0.85, iterations);
    let want = expected(output);
    assert_eq!(want.len(), g.ids.len(), "{output}");
    for (dense, &id) in g.ids.iter().enumerate() {
        let reference: f64 = want[&id].parse().unwrap();
        let error = (ranks[dense] - reference).abs() / reference.abs().max(f64::MIN_POSITIVE);
        assert!(
            error <= 1e-4,
            "{output}: vertex {id}: {} vs {reference}",
            ranks[dense]
        );
    }
}

/// Labels may differ; the partition must be the same (a bijection between labels).
fn check_wcc<G: GraphRead>(graph: &G, g: &Loaded, output: &str) {
    let labels = wcc(graph);
    let want = expected(output);
    let mut ours_to_theirs: HashMap<VertexId, &str> = HashMap::new();
    let mut theirs_to_ours: HashMap<&str, VertexId> = HashMap::new();
    for (dense, &id) in g.ids.iter().enumerate() {
        let theirs = want[&id].as_str();
        assert_eq!(
            *ours_to_theirs.entry(labels[dense]).or_insert(theirs),
            theirs,
            "{output}: {id}"
        );
        assert_eq!(
            *theirs_to_ours.entry(theirs).or_insert(labels[dense]),
            labels[dense],
            "{output}: {id}"
        );
    }
}

/// Labels are vertex ids: exact match after mapping ours back to external ids.
fn check_cdlp<G: GraphRead>(graph: &G, g: &Loaded, iterations: usize, output: &str) {
    let labels = cdlp(graph, iterations);
    let want = expected(output);
    for (dense, &id) in g.ids.iter().enumerate() {
        assert_eq!(
            g.ids[labels[dense] as usize].to_string(),
            want[&id],
            "{output}: vertex {id}"
        );
    }
}

fn check_lcc<G: GraphRead>(graph: &G, g: &Loaded, output: &str) {
    let coefficients = lcc(graph);
    let want = expected(output);
    for (dense, &id) in g.ids.iter().enumerate() {
        let reference: f64 = want[&id].parse().unwrap();
        assert!(
            (coefficients[dense] - reference).abs() <= 1e-6,
            "{output}: vertex {id}"
        );
    }
}

/// The weights of a `.e` file's third column, in line order.
fn weights(prefix: &str) -> Vec<f64> {
    read(&format!("{prefix}.e"))
        .lines()
        .map(|line| {
            let weight = line.split_whitespace().nth(2).expect("a weight column");
            weight
                .parse()
                .unwrap_or_else(|_| panic!("bad weight {weight:?}"))
        })
        .collect()
}

/// Graphalytics compares SSSP distances with a relative tolerance of 1e-4; `Infinity` must
/// match exactly.
fn check_sssp<G: WeightedGraphRead>(graph: &G, g: &Loaded, source: u64, output: &str) {
    let distances = sssp(graph, g.dense[&source]).unwrap();
    let expected = expected(output);
    assert_eq!(expected.len(), g.ids.len(), "{output}");
    for (dense, &id) in g.ids.iter().enumerate() {
        let value = &expected[&id];
        let got = distances[dense];
        if value == "Infinity" {
            assert_eq!(got, f64::INFINITY, "{output}: vertex {id}");
        } else {
            let reference: f64 = value.parse().unwrap();
            assert!(
                (got - reference).abs() <= 1e-4 * reference.abs().max(1e-12),
                "{output}: vertex {id}: {got} vs {reference}"
            );
        }
    }
}

fn weighted_graphs(g: &Loaded, prefix: &str, directed: bool) -> (WeightedGraph, CsrGraph) {
    let weighted: Vec<(VertexId, VertexId, f64)> = g
        .edges
        .iter()
        .zip(weights(prefix))
        .map(|(&(u, v), w)| (u, v, w))
        .collect();
    let n = g.ids.len();
    (
        WeightedGraph::from_weighted_edges(n, &weighted, directed).unwrap(),
        CsrGraph::from_weighted_edges(n, &weighted, directed),
    )
}

#[test]
fn sssp_matches_reference_outputs() {
    for (dir, directed) in [("dir", true), ("undir", false)] {
        let prefix = format!("sssp/{dir}-input");
        let g = load_vertex_edge(&prefix);
        let (dynamic, csr) = weighted_graphs(&g, &prefix, directed);
        check_sssp(&dynamic, &g, 1, &format!("sssp/{dir}-output"));
        check_sssp(&csr, &g, 1, &format!("sssp/{dir}-output"));
    }
}

fn graphs(g: &Loaded, directed: bool) -> (Graph, CsrGraph) {
    let n = g.ids.len();
    (
        Graph::from_edges(n, &g.edges, directed).unwrap(),
        CsrGraph::from_edges(n, &g.edges, directed),
    )
}

#[test]
fn bfs_matches_reference_outputs() {
    for (dir, directed) in [("dir", true), ("undir", false)] {
        let g = load_adjacency(&format!("bfs/{dir}-input"));
        let (dynamic, csr) = graphs(&g, directed);
        check_bfs(&dynamic, &g, 1, &format!("bfs/{dir}-output"));
        check_bfs(&csr, &g, 1, &format!("bfs/{dir}-output"));
    }
}

#[test]
fn pagerank_matches_reference_outputs() {
    for (dir, directed, iterations) in [("dir", true, 14), ("undir", false, 26)] {
        let g = load_adjacency(&format!("pr/{dir}-input"));
        let (dynamic, csr) = graphs(&g, directed);
        check_pagerank(&dynamic, &g, iterations, &format!("pr/{dir}-output"));
        check_pagerank(&csr, &g, iterations, &format!("pr/{dir}-output"));
    }
}

#[test]
fn wcc_matches_reference_outputs() {
    for (dir, directed) in [("dir", true), ("undir", false)] {
        let g = load_adjacency(&format!("wcc/{dir}-input"));
        let (dynamic, csr) = graphs(&g, directed);
        check_wcc(&dynamic, &g, &format!("wcc/{dir}-output"));
        check_wcc(&csr, &g, &format!("wcc/{dir}-output"));
    }
}

#[test]
fn cdlp_matches_reference_outputs() {
    for (dir, directed) in [("dir", true), ("undir", false)] {
        let g = load_adjacency(&format!("cdlp/{dir}-input"));
        let (dynamic, csr) = graphs(&g, directed);
        check_cdlp(&dynamic, &g, 5, &format!("cdlp/{dir}-output"));
        check_cdlp(&csr, &g, 5, &format!("cdlp/{dir}-output"));
    }
}

#[test]
fn lcc_matches_reference_outputs() {
    for (dir, directed) in [("dir", true), ("undir", false)] {
        let g = load_adjacency(&format!("lcc/{dir}-input"));
        let (dynamic, csr) = graphs(&g, directed);
        check_lcc(&dynamic, &g, &format!("lcc/{dir}-output"));
        check_lcc(&csr, &g, &format!("lcc/{dir}-output"));
    }
}

#[test]
fn example_graphs_match_reference_outputs() {
    for (name, directed, source) in [("directed", true, 1), ("undirected", false, 2)] {
        let g = load_vertex_edge(&format!("example/example-{name}"));
        let (dynamic, csr) = graphs(&g, directed);
        let out = |alg: &str| format!("example/example-{name}-{alg}");
        check_bfs(&dynamic, &g, source, &out("BFS"));
        check_bfs(&csr, &g, source, &out("BFS"));
        check_pagerank(&dynamic, &g, 2, &out("PR"));
        check_pagerank(&csr, &g, 2, &out("PR"));
        check_wcc(&dynamic, &g, &out("WCC"));
        check_wcc(&csr, &g, &out("WCC"));
        check_cdlp(&dynamic, &g, 2, &out("CDLP"));
        check_cdlp(&csr, &g, 2, &out("CDLP"));
        check_lcc(&dynamic, &g, &out("LCC"));
        check_lcc(&csr, &g, &out("LCC"));
        let prefix = format!("example/example-{name}");
        let (dynamic, csr) = weighted_graphs(&g, &prefix, directed);
        check_sssp(&dynamic, &g, source, &out("SSSP"));
        check_sssp(&csr, &g, source, &out("SSSP"));
    }
}
