//! Data directories of format version 1, committed under `tests/golden/store-v1`, must keep
//! reading back as the graph they were written from: a later change of the log, pack or
//! manifest format cannot silently break old data.
//!
//! The directory holds a base checkpoint, a delta checkpoint after it and one log record
//! after that, so that every unit kind and the replay are exercised.

use std::path::{Path, PathBuf};

use packgraph::graph::{ExternalId, Graph, GraphRead, PropertyValue, Update, WeightedGraph};
use packgraph::pma::DeltaMapLeaf;
use packgraph::store::{self, Store, StoreOptions};

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/store-v1")
}

/// The three batches: the first before the base checkpoint, the second before the delta
/// checkpoint, the third only in the log.
fn batches() -> [Update; 3] {
    let mut first = Update::new();
    first
        .add_vertices([
            ExternalId::from("alice"),
            ExternalId::from("bob"),
            ExternalId::from(7u64),
        ])
        .insert_weighted_edges(&[(0, 1, 0.5), (1, 2, 2.0), (2, 0, 1.25)])
        .set_property("age", 0, PropertyValue::Int(42))
        .set_property("name", 2, PropertyValue::Text("seven".into()));
    let mut second = Update::new();
    second
        .min_vertices(6)
        .delete_edges(&[(2, 0)])
        .insert_weighted_edges(&[(3, 4, 9.0), (4, 5, 0.125), (0, 1, 3.0)])
        .set_property("score", 4, PropertyValue::Float(0.5));
    let mut third = Update::new();
    third
        .add_vertices([ExternalId::from("carol")])
        .insert_weighted_edges(&[(6, 0, 1.0)])
        .remove_property("age", 0);
    [first, second, third]
}

fn expected() -> WeightedGraph {
    let mut g = WeightedGraph::new_weighted(true);
    for batch in batches() {
        g.apply(&batch).unwrap();
    }
    g
}

fn assert_same(got: &WeightedGraph, want: &WeightedGraph) {
    assert_eq!(got.num_vertices(), want.num_vertices());
    assert_eq!(
        got.out_array().iter().collect::<Vec<_>>(),
        want.out_array().iter().collect::<Vec<_>>()
    );
    assert_eq!(got.ids(), want.ids());
    for name in ["age", "name", "score"] {
        for v in 0..want.num_vertices() as u32 {
            assert_eq!(
                got.property(name, v),
                want.property(name, v),
                "{name} of {v}"
            );
        }
    }
    assert_eq!(got.version(), want.version());
}

#[test]
#[ignore = "writes the golden directory; run once when a new format version is introduced"]
fn write_golden_v1() {
    let dir = golden();
    let _ = std::fs::remove_dir_all(&dir);
    let options = StoreOptions {
        checkpoint_log_bytes: None,
        ..StoreOptions::default()
    };
    let [first, second, third] = batches();
    let store = Store::create(&dir, options, WeightedGraph::new_weighted(true)).unwrap();
    store.commit(&first).unwrap();
    assert!(!store.checkpoint_full().unwrap().delta);
    store.commit(&second).unwrap();
    assert!(store.checkpoint().unwrap().delta);
    store.commit(&third).unwrap();
    drop(store);
    std::fs::remove_file(dir.join("LOCK")).unwrap();
}

#[test]
fn golden_v1_reads_back() {
    let want = expected();
    let got: Graph<DeltaMapLeaf> = store::load_graph(&golden()).unwrap();
    assert_same(&got, &want);
    let report = store::verify(&golden()).unwrap();
    assert_eq!((report.records, report.torn_bytes), (1, 0));
    // Opening for writing (a copy: opening may tidy the directory) recovers it too.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("g");
    std::fs::create_dir(&copy).unwrap();
    for entry in std::fs::read_dir(golden()).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let store = Store::<DeltaMapLeaf>::open(&copy, StoreOptions::default()).unwrap();
    assert_same(&store.snapshot(), &want);
    assert_eq!(store.recovery().records_replayed, 1);
}
