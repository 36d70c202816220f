//! What this build writes, byte for byte: a snapshot (`.pgb`) and a data directory (packs,
//! manifest, log) of small graphs must equal the files under `tests/golden/written/`,
//! which were written by the build before the byte-format kit (the data directory's
//! files were written again for store format 3 and log format 2, which added the
//! directory id; their format 2 bytes are kept as `tests/golden/store-v2*`, read by
//! `tests/store_golden.rs`; the weighted directory's were written again when a
//! directory came to hold one kind of vertex id, its first batch's named vertex made an
//! integer; and for store format 4, whose bytes differ from format 3's only in the version
//! fields: format 3's are kept as `tests/golden/store-v3*`; and for store format 5, which
//! writes the ids and properties as subtree units: format 4's are kept as
//! `tests/golden/store-v4*`; and for store format 6 and snapshot format 3, which store a
//! weighted graph's leaves in group varint: format 5's directories are kept as
//! `tests/golden/store-v5*`, the version 2 snapshots as `tests/golden/snapshot-v2-*.pgb`).
//! A change that alters a written byte without a new format
//! version fails here.
//!
//! `PACKGRAPH_WRITE_GOLDEN=1 cargo test --test formats_written` rewrites them (only with a
//! new format version).

use std::path::{Path, PathBuf};

use packgraph::graph::{ExternalId, Graph, PropertyValue, Update, WeightedGraph};
use packgraph::io::{load, save, Format, LoadOptions};
use packgraph::pma::GroupLeaf;
use packgraph::store::{Store, StoreOptions};

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/written")
}

/// Writes every file into `out`, returning their names.
fn write_all(out: &Path) -> Vec<String> {
    let mut text = String::new();
    for i in 0..300u64 {
        let (u, v) = (i * 7 % 100 + 5, (i * 13 + 1) % 97 + 5);
        text.push_str(&format!("{u} {v} {}\n", (i % 9) as f64 * 0.25));
    }
    let source = out.join("g.txt");
    std::fs::write(&source, text).unwrap();
    let mut names = Vec::new();
    for (directed, name) in [(true, "directed.pgb"), (false, "undirected.pgb")] {
        let options = LoadOptions {
            directed: Some(directed),
            ..LoadOptions::default()
        };
        let data = load(&source, &options).unwrap();
        save(&data, &out.join(name), Format::Binary).unwrap();
        names.push(name.to_string());
    }
    std::fs::remove_file(&source).unwrap();
    let options = StoreOptions {
        checkpoint_log_bytes: None,
        directory_id: Some(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210),
        ..StoreOptions::default()
    };
    let mut first = Update::new();
    first
        .add_vertices([ExternalId::from(1u64 << 40), ExternalId::from(7u64)])
        .insert_weighted_edges(&[(0, 1, 0.5), (1, 0, 2.0)])
        .set_property("age", 0, PropertyValue::Int(-42))
        .set_property("ok", 1, PropertyValue::Bool(true));
    let mut second = Update::new();
    // The delete is given first: the record then has the bytes of the build before
    // deletes could follow inserts (on this directed graph, (1, 0) is no insert's edge, so
    // the order does not change the result).
    second
        .min_vertices(40)
        .delete_edges(&[(1, 0)])
        .insert_weighted_edges(
            &(0..39)
                .map(|i| (i, i + 1, f64::from(i)))
                .collect::<Vec<_>>(),
        );
    let dir = out.join("weighted");
    let store = Store::create(&dir, options.clone(), WeightedGraph::new_weighted(true)).unwrap();
    store.commit(&first).unwrap();
    store.checkpoint_full().unwrap();
    store.commit(&second).unwrap();
    store.checkpoint().unwrap();
    store.commit(&first).unwrap();
    drop(store);
    let dir = out.join("unweighted");
    let store: Store<GroupLeaf> = Store::create(&dir, options, Graph::new(false)).unwrap();
    let edges: Vec<(u32, u32)> = (0..400u32).map(|i| (i % 60, (i * 11 + 3) % 61)).collect();
    let mut update = Update::new();
    update.min_vertices(61).insert_edges(&edges);
    store.commit(&update).unwrap();
    store.checkpoint_full().unwrap();
    drop(store);
    for sub in ["weighted", "unweighted"] {
        let mut files: Vec<String> = std::fs::read_dir(out.join(sub))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            // LOGMARK's entries depend on timing (one per 100 ms of syncs at most); its
            // layout is pinned by the store's own tests.
            .filter(|name| name != "LOCK" && name != "LOGMARK")
            .collect();
        files.sort();
        names.extend(files.into_iter().map(|f| format!("{sub}/{f}")));
    }
    names
}

#[test]
fn written_bytes_match_the_golden_files() {
    let dir = tempfile::tempdir().unwrap();
    let names = write_all(dir.path());
    if std::env::var_os("PACKGRAPH_WRITE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(golden());
        for name in &names {
            let to = golden().join(name);
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(dir.path().join(name), to).unwrap();
        }
        return;
    }
    for name in &names {
        let got = std::fs::read(dir.path().join(name)).unwrap();
        let want = std::fs::read(golden().join(name)).unwrap();
        assert!(got == want, "{name} differs from the golden file");
    }
}
