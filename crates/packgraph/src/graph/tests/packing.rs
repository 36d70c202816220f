//! Packing: graphs loaded compact and graphs packed again after updates, against the
//! adjacency-set oracle.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// A graph loaded compact ([`Packing::Compact`]) holds what the oracle holds, with less
    /// slack than one loaded with room for updates, and takes any updates after it (the
    /// first leaf that fills rebuilds its arrays with room).
    #[test]
    fn compact_loads_match_adjacency_sets(
        directed in any::<bool>(),
        first in vec((0..400u32, 0..400u32), 200..2_000),
        batches in vec((any::<bool>(), edges(400)), 0..6),
    ) {
        let mut graph = Graph::new(directed);
        graph.set_packing(Packing::Compact);
        let mut roomy = Graph::new(directed);
        let mut oracle = Oracle::new(directed);
        oracle.apply(&first, true);
        graph.insert_edges(&first).unwrap();
        roomy.insert_edges(&first).unwrap();
        graph.check_invariants().unwrap();
        assert_same(&graph, &oracle);
        prop_assert!(graph.memory().slack < roomy.memory().slack);
        for (insert, batch) in &batches {
            oracle.apply(batch, *insert);
            if *insert { graph.insert_edges(batch).unwrap(); } else { graph.delete_edges(batch).unwrap(); }
            graph.check_invariants().unwrap();
            assert_same(&graph, &oracle);
        }
    }

    /// A graph packed again after updates ([`Graph::repack`]) holds what the oracle holds:
    /// compact, then with its room back, and takes updates after either. A snapshot taken
    /// before keeps its layout and its answers. (How much smaller compact is shows on a
    /// graph of many leaves, below: an array of one or two leaves may even keep a few more
    /// free bytes compact, its leaf size being chosen for its smaller capacity.)
    #[test]
    fn repacked_graphs_match_adjacency_sets(
        directed in any::<bool>(),
        batches in vec((any::<bool>(), edges(400)), 1..8),
        after in vec((any::<bool>(), edges(400)), 0..4),
    ) {
        let mut graph = Graph::new(directed);
        let mut oracle = Oracle::new(directed);
        for (insert, batch) in &batches {
            oracle.apply(batch, *insert);
            if *insert { graph.insert_edges(batch).unwrap(); } else { graph.delete_edges(batch).unwrap(); }
        }
        let before = graph.snapshot();
        let version = graph.version();
        graph.repack(Packing::Compact);
        graph.check_invariants().unwrap();
        assert_same(&graph, &oracle);
        prop_assert_eq!(graph.version(), version);
        graph.repack(Packing::Updates);
        graph.check_invariants().unwrap();
        assert_same(&graph, &oracle);
        assert_same(&before, &oracle);
        for (i, (insert, batch)) in after.iter().enumerate() {
            if i % 2 == 0 {
                graph.repack(Packing::Compact);
            }
            oracle.apply(batch, *insert);
            if *insert { graph.insert_edges(batch).unwrap(); } else { graph.delete_edges(batch).unwrap(); }
            graph.check_invariants().unwrap();
            assert_same(&graph, &oracle);
        }
    }
}

/// On a graph of many leaves a compact repack takes most of the free space out (and a
/// little of the data: each leaf starts with its first key in full), and a repack with
/// room puts the free space back.
#[test]
fn a_compact_repack_takes_the_free_space_out() {
    let n: VertexId = 20_000;
    let mut graph = Graph::new(true);
    for batch in 0..8u32 {
        let edges: Vec<(VertexId, VertexId)> = (0..n)
            .map(|v| (v, v.wrapping_mul(7_919).wrapping_add(batch * 104_729) % n))
            .collect();
        graph.insert_edges(&edges).unwrap();
    }
    let roomy = graph.memory();
    graph.repack(Packing::Compact);
    let compact = graph.memory();
    graph.check_invariants().unwrap();
    assert!(compact.data <= roomy.data);
    assert!(
        compact.slack * 3 < roomy.slack,
        "compact slack {} against {}",
        compact.slack,
        roomy.slack
    );
    graph.repack(Packing::Updates);
    let room = graph.memory();
    assert!(
        room.slack > 2 * compact.slack,
        "{} against {}",
        room.slack,
        compact.slack
    );
}
