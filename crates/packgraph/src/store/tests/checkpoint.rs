//! Checkpoints: units reused by hash, small deltas, and the log trimmed in the background.

use super::*;

#[test]
fn checkpoints_reuse_unchanged_units_and_deltas_stay_small() {
    let vfs = SimVfs::new();
    let edges: Vec<(VertexId, VertexId)> = (0..200_000u32)
        .map(|i| (i % 30_000, (i * 7 + 1) % 30_000))
        .collect();
    let g = Graph::from_edges(30_000, &edges, false).unwrap();
    let store = Store::create(&dir(), sim_options(&vfs), g).unwrap();
    let full = store.checkpoint_full().unwrap();
    assert_eq!(
        full.units_written, 0,
        "nothing changed: every unit is reused"
    );
    store
        .commit(Update::new().insert_edges(&[(1, 2999), (5, 77)]))
        .unwrap();
    let small = store.checkpoint().unwrap();
    assert!(small.delta);
    assert!(
        small.bytes_written * 20 < full.bytes_reused,
        "{small:?} vs {full:?}"
    );
    // A new base after a small change rewrites only the pages that changed.
    let rebased = store.checkpoint_full().unwrap();
    assert!(!rebased.delta);
    assert!(
        rebased.units_reused > 5 * rebased.units_written,
        "{rebased:?}"
    );
    let expected = fingerprint(&store.snapshot());
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(fingerprint(&store.snapshot()), expected);
    assert_eq!(store.recovery().records_replayed, 0);
}

#[test]
fn background_checkpoints_trim_the_log() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        checkpoint_log_bytes: Some(2000),
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options.clone(), Graph::new(false)).unwrap();
    for i in 0..300u32 {
        store
            .commit(Update::new().insert_edges(&[(i, i + 1), (i, i + 2)]))
            .unwrap();
    }
    drop(store);
    let firsts: Vec<u64> = vfs
        .list(&dir())
        .unwrap()
        .iter()
        .filter_map(|n| wal::parse_segment_name(n))
        .collect();
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    assert_eq!(store.snapshot().num_edges(), 600);
    let covered = store.recovery().checkpoint_seq;
    assert!(covered >= 50, "{:?}", store.recovery());
    // Every segment whose records the checkpoint covers is gone.
    let needed = firsts.iter().filter(|&&f| f <= covered + 1).count();
    assert!(
        needed <= 1,
        "segments {firsts:?} left after a checkpoint at {covered}"
    );
}

#[test]
fn loading_reads_only_the_live_units_of_a_partly_live_pack() {
    let vfs = SimVfs::new();
    let edges: Vec<(VertexId, VertexId)> = (0..200_000u32)
        .map(|i| (i % 30_000, (i * 7 + 1) % 30_000))
        .collect();
    let g = Graph::from_edges(30_000, &edges, false).unwrap();
    let store = Store::create(&dir(), sim_options(&vfs), g).unwrap();
    store
        .commit(Update::new().insert_edges(&[(1, 2999), (5, 77)]))
        .unwrap();
    // A new base after a small change points again at most pages of the first pack.
    let rebased = store.checkpoint_full().unwrap();
    assert!(rebased.units_reused > 5 * rebased.units_written);
    let expected = fingerprint(&store.snapshot());
    drop(store);
    let packs: u64 = vfs
        .list(&dir())
        .unwrap()
        .iter()
        .filter(|n| format::parse_pack_name(n).is_some())
        .map(|n| vfs.read(&dir().join(n)).unwrap().len() as u64)
        .sum();
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(fingerprint(&store.snapshot()), expected);
    let read = store.recovery().checkpoint_bytes;
    assert!(read < packs, "read {read} of {packs} pack bytes");
    assert!(read >= rebased.bytes_written + rebased.bytes_reused - 4096);
}
