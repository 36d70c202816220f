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
    /// compact with less slack, then with its room back, and takes updates after either.
    /// A snapshot taken before keeps its layout and its answers.
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
        let roomy = graph.memory().slack;
        let version = graph.version();
        graph.repack(Packing::Compact);
        graph.check_invariants().unwrap();
        assert_same(&graph, &oracle);
        prop_assert_eq!(graph.version(), version);
        let compact = graph.memory().slack;
        prop_assert!(compact <= roomy, "slack {} > {}", compact, roomy);
        graph.repack(Packing::Updates);
        graph.check_invariants().unwrap();
        assert_same(&graph, &oracle);
        prop_assert!(graph.memory().slack >= compact);
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
