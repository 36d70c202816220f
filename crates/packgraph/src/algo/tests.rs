//! Every algorithm against its serial reference on random graphs (directed and undirected,
//! isolated vertices, self-loops, duplicate edges, one vertex, no edges), on both the
//! dynamic graph and the static CSR, with 1 and 4 threads.

use proptest::collection::vec;
use proptest::prelude::*;
use rayon::ThreadPoolBuilder;

use super::*;
use crate::graph::{CsrGraph, Graph};

fn graphs() -> impl Strategy<Value = (usize, Vec<(VertexId, VertexId)>, bool)> {
    (1usize..80, any::<bool>()).prop_flat_map(|(n, directed)| {
        let id = 0..n as VertexId;
        (Just(n), vec((id.clone(), id), 0..(n * 4)), Just(directed))
    })
}

fn check_bfs<G: GraphRead>(graph: &G, source: VertexId) {
    let tree = bfs(graph, source).unwrap();
    assert_eq!(tree.depths, bfs_depths_serial(graph, source));
    for v in 0..graph.num_vertices() {
        let (parent, depth) = (tree.parents[v], tree.depths[v]);
        if v == source as usize {
            assert_eq!((parent, depth), (source, 0));
        } else if depth == UNREACHED {
            assert_eq!(parent, UNREACHED);
        } else {
            assert_eq!(
                tree.depths[parent as usize] + 1,
                depth,
                "parent depth of {v}"
            );
            assert!(
                graph.out_neighbors(parent).contains(&(v as VertexId)),
                "tree edge to {v}"
            );
        }
    }
}

fn check_pagerank<G: GraphRead>(graph: &G) {
    let slow = pagerank_serial(graph, 0.85, 8);
    // All f64: the same sums in the same order as the reference, up to rounding.
    let exact = pagerank_until(graph, 0.85, 8, 0.0).ranks;
    let total: f64 = exact.iter().sum();
    assert!((total - 1.0).abs() < 1e-9, "rank sums to {total}");
    for (a, b) in exact.iter().zip(&slow) {
        assert!((a - b).abs() <= 1e-12 + 1e-9 * b.abs(), "{a} vs {b}");
    }
    // f32 contributions: each score within 1e-6 relative, and the sum still 1.
    let fast = pagerank(graph, 0.85, 8);
    let total: f64 = fast.iter().sum();
    assert!((total - 1.0).abs() < 1e-6, "rank sums to {total}");
    for (a, b) in fast.iter().zip(&slow) {
        assert!((a - b).abs() <= 1e-12 + 1e-6 * b.abs(), "{a} vs {b}");
    }
}

fn close(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len());
    for (v, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= 1e-9 * (1.0 + y.abs()),
            "{what} at {v}: {x} vs {y}"
        );
    }
}

fn check_all<G: GraphRead>(graph: &G, source: VertexId) {
    check_bfs(graph, source);
    check_pagerank(graph);
    assert_eq!(wcc(graph), wcc_serial(graph));
    assert_eq!(cdlp(graph, 4), cdlp_serial(graph, 4));
    close(&lcc(graph), &lcc_serial(graph), "lcc");
    assert_eq!(triangle_count(graph), triangle_count_serial(graph));
    let per_vertex = triangles_per_vertex(graph);
    assert_eq!(per_vertex, triangles_per_vertex_serial(graph));
    assert_eq!(per_vertex.iter().sum::<u64>(), 3 * triangle_count(graph));
    assert_eq!(kcore(graph), kcore_serial(graph));
    let set = mis(graph, 7);
    verify::mis(graph, &set).unwrap();
    verify::kcore(graph, &kcore(graph)).unwrap();
    verify::bfs(graph, source, &bfs(graph, source).unwrap()).unwrap();
    verify::wcc(graph, &wcc(graph)).unwrap();
    verify::pagerank(graph, 0.85, &pagerank(graph, 0.85, 5)).unwrap();
    assert_eq!(mis(graph, 7), set, "mis is deterministic for a seed");
    close(
        &betweenness(graph, source).unwrap(),
        &betweenness_serial(graph, source),
        "bc",
    );
    let full = bfs_depths_serial(graph, source);
    for k in [0, 1, 2] {
        let expected: Vec<u32> = full
            .iter()
            .map(|&d| if d <= k { d } else { UNREACHED })
            .collect();
        assert_eq!(khop(graph, source, k).unwrap(), expected, "khop {k}");
        let within: Vec<VertexId> = (0..expected.len() as VertexId)
            .filter(|&v| expected[v as usize] != UNREACHED)
            .collect();
        assert_eq!(khop_vertices(graph, source, k).unwrap(), within);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn algorithms_match_serial_references((n, edges, directed) in graphs(), source in any::<prop::sample::Index>()) {
        let source = source.index(n) as VertexId;
        let dynamic = Graph::from_edges(n, &edges, directed).unwrap();
        let csr = CsrGraph::from_edges(n, &edges, directed);
        for threads in [1, 4] {
            let pool = ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| {
                check_all(&dynamic, source);
                check_all(&csr, source);
                prop_assert_eq!(bfs(&dynamic, source).unwrap().depths, bfs(&csr, source).unwrap().depths);
                Ok(())
            })?;
        }
    }
}

#[test]
fn dense_rounds_are_taken_on_a_star() {
    // The frontier after one round holds every leaf: the next round must pull.
    let edges: Vec<(VertexId, VertexId)> = (1..2_000)
        .map(|v| (0, v))
        .chain((1..1_999).map(|v| (v, v + 1)))
        .collect();
    let graph = Graph::from_edges(0, &edges, false).unwrap();
    let frontier = edge_map(&graph, &VertexSubset::single(2_000, 0), &Nothing);
    assert!(
        matches!(frontier, VertexSubset::Dense { .. }),
        "{frontier:?}"
    );
    check_all(&graph, 5);
}

#[test]
fn staged_prefetches_take_any_list() {
    // Every step for every position of a list holding vertices with many arcs, one arc,
    // none, repeats and ids past the last vertex, on both graphs, and through a snapshot.
    let mut edges: Vec<(VertexId, VertexId)> = (1..40).map(|v| (0, v)).collect();
    edges.push((3, 4));
    let graph = Graph::from_edges(50, &edges, true).unwrap();
    let csr = CsrGraph::from_edges(50, &edges, true);
    let list: Vec<VertexId> = vec![0, 3, 45, 0, 60, u32::MAX, 7, 3, 49, 1, 0, 2, 8, 9, 0];
    for i in 0..list.len() + 2 {
        prefetch_out_ahead(&graph, &list, i);
        prefetch_out_ahead(&csr, &list, i);
    }
    assert_eq!(CsrGraph::OUT_PREFETCH_STAGES, 0);
    let snapshot = graph.snapshot();
    assert_eq!(
        <crate::graph::Snapshot<crate::pma::GroupLeaf> as GraphRead>::OUT_PREFETCH_STAGES,
        4
    );
    for i in 0..list.len() + 2 {
        prefetch_out_ahead(&snapshot, &list, i);
    }
    assert_eq!(bfs(&snapshot, 0).unwrap(), bfs(&csr, 0).unwrap());
}

struct Nothing;

impl EdgeOp for Nothing {
    fn update_atomic(&self, _src: VertexId, _dst: VertexId) -> bool {
        true
    }
}

#[test]
fn unknown_source_is_an_error() {
    let graph = CsrGraph::from_edges(3, &[(0, 1)], true);
    assert!(betweenness(&graph, 9).is_err() && khop(&graph, 3, 1).is_err());
    let err = bfs(&graph, 3).unwrap_err();
    assert!(matches!(
        &err,
        Error::VertexNotFound { vertex, num_vertices: 3 } if vertex == "3"
    ));
    assert_eq!(
        err.to_string(),
        "vertex 3 is not in the graph (it has 3 vertices)"
    );
    let empty = Graph::new(false);
    assert!(bfs(&empty, 0).is_err());
    assert!(pagerank(&empty, 0.85, 3).is_empty());
    assert!(wcc(&empty).is_empty());
}

#[test]
fn verifiers_reject_corrupted_outputs() {
    // Two components: a path 0-1-2-3 and an edge 4-5; vertex 6 isolated.
    let graph = CsrGraph::from_edges(7, &[(0, 1), (1, 2), (2, 3), (4, 5)], false);
    let tree = bfs(&graph, 0).unwrap();
    verify::bfs(&graph, 0, &tree).unwrap();
    let mut wrong = tree.clone();
    wrong.depths[3] = 2;
    assert!(verify::bfs(&graph, 0, &wrong).is_err());
    let mut unreached = tree.clone();
    (unreached.depths[3], unreached.parents[3]) = (UNREACHED, UNREACHED);
    let err = verify::bfs(&graph, 0, &unreached).unwrap_err();
    assert_eq!(err.vertex, 2, "{err}");

    let labels = wcc(&graph);
    verify::wcc(&graph, &labels).unwrap();
    let mut merged = labels.clone();
    merged[4] = 0;
    assert!(verify::wcc(&graph, &merged).is_err());
    let mut split = labels;
    split[3] = 3;
    assert!(verify::wcc(&graph, &split).is_err());

    let mut set = mis(&graph, 1);
    verify::mis(&graph, &set).unwrap();
    set[6] = false;
    assert!(verify::mis(&graph, &set).is_err());

    let mut core = kcore(&graph);
    verify::kcore(&graph, &core).unwrap();
    core[1] = 2;
    assert!(verify::kcore(&graph, &core).is_err());

    let mut ranks = pagerank(&graph, 0.85, 3);
    verify::pagerank(&graph, 0.85, &ranks).unwrap();
    ranks[0] += 0.1;
    assert!(verify::pagerank(&graph, 0.85, &ranks).is_err());
    assert!(verify::pagerank(&graph, 0.85, &ranks[..3]).is_err());
}

/// Weighted random graphs: weights in quarter steps from 0 (zero-weight edges included).
fn weighted_graphs() -> impl Strategy<Value = (usize, Vec<(VertexId, VertexId, f64)>, bool)> {
    (1usize..60, any::<bool>()).prop_flat_map(|(n, directed)| {
        let id = 0..n as VertexId;
        let edge = (id.clone(), id, 0u32..40).prop_map(|(u, v, w)| (u, v, f64::from(w) * 0.25));
        (Just(n), vec(edge, 0..(n * 4)), Just(directed))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn sssp_matches_dijkstra((n, edges, directed) in weighted_graphs(), source in any::<prop::sample::Index>()) {
        let source = source.index(n) as VertexId;
        let dynamic = crate::graph::WeightedGraph::from_weighted_edges(n, &edges, directed).unwrap();
        let csr = CsrGraph::from_weighted_edges(n, &edges, directed);
        let expected = sssp_serial(&csr, source);
        prop_assert_eq!(sssp_serial(&dynamic, source), expected.clone());
        for threads in [1, 4] {
            let pool = ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            // Quarter steps add exactly, so distances compare exactly.
            prop_assert_eq!(pool.install(|| sssp(&dynamic, source)).unwrap(), expected.clone());
            prop_assert_eq!(pool.install(|| sssp(&csr, source)).unwrap(), expected.clone());
            // Any bucket width gives the same distances: one bucket per distance (all of
            // them far past the current one), light edges within the ring of near buckets
            // and heavy ones past it, buckets of several quarter steps, and one bucket for
            // everything (Bellman-Ford).
            for width in [1e-9, 0.004, 0.6, 1e12] {
                let got = pool.install(|| super::sssp::sssp_with_width(&dynamic, source, width, &super::stop::NEVER));
                prop_assert_eq!(got.unwrap(), expected.clone(), "width {}", width);
            }
        }
        // Unweighted graphs count hops: SSSP equals BFS depths.
        let plain: Vec<(VertexId, VertexId)> = edges.iter().map(|&(u, v, _)| (u, v)).collect();
        let hops = sssp(&Graph::from_edges(n, &plain, directed).unwrap(), source).unwrap();
        let depths = bfs_depths_serial(&CsrGraph::from_edges(n, &plain, directed), source);
        let as_f64: Vec<f64> = depths.iter().map(|&d| if d == UNREACHED { f64::INFINITY } else { f64::from(d) }).collect();
        prop_assert_eq!(hops, as_f64);
    }
}

#[test]
fn sssp_rejects_negative_weights_and_unknown_sources() {
    let csr = CsrGraph::from_weighted_edges(0, &[(0, 1, 1.0), (1, 2, -0.5)], true);
    let err = sssp(&csr, 0).unwrap_err();
    assert_eq!(
        err.to_string(),
        "edge 1 -> 2: shortest paths need non-negative weights: `-0.5`"
    );
    assert!(matches!(
        sssp(&csr, 3),
        Err(Error::VertexNotFound {
            num_vertices: 3,
            ..
        })
    ));
}

#[test]
fn betweenness_reads_long_and_short_runs_alike() {
    // Degrees from 1 to about 60: runs on both sides of the slice threshold, in both
    // directions of a directed graph.
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = |bound: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % bound) as VertexId
    };
    let edges: Vec<(VertexId, VertexId)> = (0..3_000)
        .map(|i| {
            let u = if i % 3 == 0 { next(8) } else { next(200) };
            (u, next(200))
        })
        .collect();
    for directed in [false, true] {
        let dynamic = Graph::from_edges(200, &edges, directed).unwrap();
        let csr = CsrGraph::from_edges(200, &edges, directed);
        assert!((0..8).any(|v| dynamic.out_degree(v) >= 40 && dynamic.in_degree(v) >= 16));
        for source in [0, 3, 150] {
            let expected = betweenness_serial(&csr, source);
            close(&betweenness(&dynamic, source).unwrap(), &expected, "bc");
            close(
                &betweenness(&csr, source).unwrap(),
                &expected,
                "bc on the CSR",
            );
        }
    }
}
