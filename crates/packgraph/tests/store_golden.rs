//! Data directories of format version 1, committed under `tests/golden/store-v1` (weighted)
//! and `tests/golden/store-v1-unweighted`, must keep
//! reading back as the graph they were written from: a later change of the log, pack or
//! manifest format cannot silently break old data.
//!
//! The directory holds a base checkpoint, a delta checkpoint after it and one log record
//! after that, so that every unit kind and the replay are exercised.

use std::path::{Path, PathBuf};

use packgraph::graph::{ExternalId, Graph, GraphRead, IdMap, PropertyValue, Update, WeightedGraph};
use packgraph::pma::{GroupLeaf, GroupMapLeaf};
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
    let got: Graph<GroupMapLeaf> = store::load_graph(&golden()).unwrap();
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
    let store = Store::<GroupMapLeaf>::open(&copy, StoreOptions::default()).unwrap();
    assert_same(&store.snapshot(), &want);
    assert_eq!(store.recovery().records_replayed, 1);
}

/// An unweighted, directed version 1 directory (byte-coded pages, written by the build
/// before group-varint leaves): 3,048 edges from a file, a batch and a delta checkpoint,
/// then one batch only in the log, with ids up to 4,000,000,049 so that the pages hold wide
/// jumps. `store-v1-unweighted.expected.el` lists its edges in external ids, sorted.
fn golden_unweighted() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/store-v1-unweighted")
}

fn expected_unweighted() -> Vec<(u64, u64)> {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/store-v1-unweighted.expected.el"),
    )
    .unwrap();
    text.lines()
        .map(|line| {
            let mut it = line.split_whitespace().map(|x| x.parse::<u64>().unwrap());
            (it.next().unwrap(), it.next().unwrap())
        })
        .collect()
}

fn external_edges(g: &impl GraphRead, ids: &IdMap) -> Vec<(u64, u64)> {
    let mut edges = Vec::new();
    for u in 0..g.num_vertices() as u32 {
        g.for_each_out_neighbor(u, |v| {
            edges.push((ids.external(u), ids.external(v)));
            true
        });
    }
    edges.sort_unstable();
    edges
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn golden_v1_unweighted_reads_back_and_upgrades() {
    let want = expected_unweighted();
    let got: Graph = store::load_graph(&golden_unweighted()).unwrap();
    assert_eq!(got.num_vertices(), 3550);
    assert_eq!(external_edges(&got, got.ids()), want);
    let report = store::verify(&golden_unweighted()).unwrap();
    assert_eq!((report.records, report.torn_bytes), (1, 0));

    // Opened for writing, it takes new edges; a full checkpoint rewrites its pages in the
    // current format, and the directory then reads back the same.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("g");
    copy_dir(&golden_unweighted(), &copy);
    let store = Store::<GroupLeaf>::open(&copy, StoreOptions::default()).unwrap();
    assert_eq!(store.recovery().records_replayed, 1);
    assert_eq!(
        {
            let snap = store.snapshot();
            external_edges(&snap, snap.ids())
        },
        want
    );
    let mut more = Update::new();
    more.insert_edges(&[(0, 1)]);
    store.commit(&more).unwrap();
    store.checkpoint_full().unwrap();
    let after = {
        let snap = store.snapshot();
        external_edges(&snap, snap.ids())
    };
    assert_eq!(after.len(), want.len() + 1);
    drop(store);
    let reread: Graph = store::load_graph(&copy).unwrap();
    assert_eq!(external_edges(&reread, reread.ids()), after);
    let report = store::verify(&copy).unwrap();
    assert_eq!(report.torn_bytes, 0);
    let manifest = std::fs::read(copy.join("MANIFEST")).unwrap();
    assert_eq!(
        u32::from_le_bytes(manifest[8..12].try_into().unwrap()),
        store::STORE_FORMAT_VERSION
    );
}

/// The directories `tests/formats_written.rs` wrote in store format 2 (log format 1),
/// before directory ids: `store-v2` (weighted, directed: two checkpoints and one record
/// after them) and `store-v2-unweighted` (one full checkpoint).
fn golden_v2(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

/// The graph `store-v2` holds: the batches `tests/formats_written.rs` commits.
fn expected_v2() -> WeightedGraph {
    let mut first = Update::new();
    first
        .add_vertices([ExternalId::from("alice"), ExternalId::from(7u64)])
        .insert_weighted_edges(&[(0, 1, 0.5), (1, 0, 2.0)])
        .set_property("age", 0, PropertyValue::Int(-42))
        .set_property("ok", 1, PropertyValue::Bool(true));
    let mut second = Update::new();
    second
        .min_vertices(40)
        .insert_weighted_edges(
            &(0..39)
                .map(|i| (i, i + 1, f64::from(i)))
                .collect::<Vec<_>>(),
        )
        .delete_edges(&[(1, 0)]);
    let mut g = WeightedGraph::new_weighted(true);
    for batch in [&first, &second, &first] {
        g.apply(batch).unwrap();
    }
    g
}

#[test]
fn golden_v2_reads_back_and_keeps_an_unknown_id() {
    let want = expected_v2();
    let got: Graph<GroupMapLeaf> = store::load_graph(&golden_v2("store-v2")).unwrap();
    assert_eq!(got.num_vertices(), want.num_vertices());
    assert_eq!(
        got.out_array().iter().collect::<Vec<_>>(),
        want.out_array().iter().collect::<Vec<_>>()
    );
    assert_eq!(got.ids(), want.ids());
    let report = store::verify(&golden_v2("store-v2")).unwrap();
    assert_eq!((report.records, report.torn_bytes), (1, 0));
    let unweighted: Graph = store::load_graph(&golden_v2("store-v2-unweighted")).unwrap();
    assert_eq!(unweighted.num_vertices(), 61);
    store::verify(&golden_v2("store-v2-unweighted")).unwrap();

    // Written to: new files are of the current formats with the id 0 ("unknown"), and the
    // older files beside them still read.
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("g");
    copy_dir(&golden_v2("store-v2"), &copy);
    let store = Store::<GroupMapLeaf>::open(&copy, StoreOptions::default()).unwrap();
    let mut more = Update::new();
    more.insert_weighted_edges(&[(2, 3, 1.5)]);
    store.commit(&more).unwrap();
    store.checkpoint().unwrap();
    store.commit(&more).unwrap();
    drop(store);
    let report = store::verify(&copy).unwrap();
    assert_eq!(report.num_vertices, want.num_vertices() as u64);
    let manifest = std::fs::read(copy.join("MANIFEST")).unwrap();
    assert_eq!(
        u32::from_le_bytes(manifest[8..12].try_into().unwrap()),
        store::STORE_FORMAT_VERSION
    );
    assert_eq!(u128::from_le_bytes(manifest[72..88].try_into().unwrap()), 0);
}

/// The graph `store-v3` holds: the batches `tests/formats_written.rs` committed when it
/// wrote format 3 (a full checkpoint, a delta checkpoint, one record after them).
fn expected_v3() -> WeightedGraph {
    let mut v3 = WeightedGraph::new_weighted(true);
    let mut first = Update::new();
    first
        .add_vertices([ExternalId::from(1u64 << 40), ExternalId::from(7u64)])
        .insert_weighted_edges(&[(0, 1, 0.5), (1, 0, 2.0)])
        .set_property("age", 0, PropertyValue::Int(-42))
        .set_property("ok", 1, PropertyValue::Bool(true));
    let mut second = Update::new();
    second
        .min_vertices(40)
        .delete_edges(&[(1, 0)])
        .insert_weighted_edges(
            &(0..39)
                .map(|i| (i, i + 1, f64::from(i)))
                .collect::<Vec<_>>(),
        );
    for batch in [&first, &second, &first] {
        v3.apply(batch).unwrap();
    }
    v3
}

fn properties_of(g: &WeightedGraph) -> Vec<(String, u32, String)> {
    let mut out = Vec::new();
    for name in g.properties().names() {
        for (v, value) in g.properties().column(name).into_iter().flatten() {
            out.push((name.to_owned(), v, value.to_string()));
        }
    }
    out
}

/// Format 3 (`tests/golden/store-v3`, `store-v3-unweighted`: what `tests/formats_written.rs`
/// wrote before format 4 put property changes in the delta) reads back; written to, its
/// first checkpoint is a full one in the current format (a delta needs a base of the
/// current format), and the next one a delta again; `packgraph upgrade` is tested in the
/// CLI's tests.
#[test]
fn golden_v3_reads_back_and_its_next_checkpoint_is_full() {
    old_golden_reads_back_and_its_next_checkpoint_is_full("store-v3", 3);
}

/// Format 4 (`tests/golden/store-v4`, `store-v4-unweighted`: what `tests/formats_written.rs`
/// wrote before format 5 split the ids and properties into subtree units) does the same:
/// its whole ids and properties units read back, and its next checkpoint writes them as
/// subtree units.
#[test]
fn golden_v4_reads_back_and_its_next_checkpoint_is_full() {
    old_golden_reads_back_and_its_next_checkpoint_is_full("store-v4", 4);
}

/// Format 5 (`tests/golden/store-v5`, `store-v5-unweighted`: what `tests/formats_written.rs`
/// wrote before format 6 stored a weighted graph's leaves in group varint) does the same:
/// its byte-coded weighted pages are re-encoded on load, and its next checkpoint writes
/// them as group-varint map pages.
#[test]
fn golden_v5_reads_back_and_its_next_checkpoint_is_full() {
    old_golden_reads_back_and_its_next_checkpoint_is_full("store-v5", 5);
}

/// The golden directory `name` (and `name-unweighted`) of format `version` holds the graph
/// of [`expected_v3`] and one log record after its checkpoint; written to, its first
/// checkpoint is full, the next a delta.
fn old_golden_reads_back_and_its_next_checkpoint_is_full(name: &str, version: u32) {
    let want = expected_v3();
    let dir = golden_v2(name);
    assert_eq!(store::format_version(&dir).unwrap(), version);
    let got: WeightedGraph = store::load_graph(&dir).unwrap();
    assert_same(&got, &want);
    assert_eq!(properties_of(&got), properties_of(&want));
    let report = store::verify(&dir).unwrap();
    assert_eq!((report.records, report.torn_bytes), (1, 0));
    let unweighted_dir = golden_v2(&format!("{name}-unweighted"));
    let unweighted: Graph = store::load_graph(&unweighted_dir).unwrap();
    assert_eq!(unweighted.num_vertices(), 61);
    store::verify(&unweighted_dir).unwrap();

    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("g");
    copy_dir(&dir, &copy);
    let mut want = want;
    let store = Store::<GroupMapLeaf>::open(&copy, StoreOptions::default()).unwrap();
    let mut more = Update::new();
    more.insert_weighted_edges(&[(2, 3, 1.5)])
        .set_property("age", 5, PropertyValue::Int(5))
        .remove_property("ok", 1);
    want.apply(&more).unwrap();
    store.commit(&more).unwrap();
    assert!(!store.checkpoint().unwrap().delta);
    assert_eq!(
        store::format_version(&copy).unwrap(),
        store::STORE_FORMAT_VERSION
    );
    let mut again = Update::new();
    again
        .set_property("age", 0, PropertyValue::Int(1))
        .set_property("age", 6, PropertyValue::Float(0.5));
    want.apply(&again).unwrap();
    store.commit(&again).unwrap();
    assert!(store.checkpoint().unwrap().delta);
    drop(store);
    let got: WeightedGraph = store::load_graph(&copy).unwrap();
    assert_same(&got, &want);
    assert_eq!(properties_of(&got), properties_of(&want));
    store::verify(&copy).unwrap();
}
