//! The directory as several parties see it: readers beside a writer that checkpoints, a
//! second writer after the lock file was removed, what an unfinished checkpoint leaves
//! behind, and the log a checkpoint makes obsolete.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use super::*;

/// Batch `i` of the stress test: the arc `i → i + 1`, so that the graph after `n` batches
/// is exactly the arcs `j → j + 1` for `j < n`.
fn chain_batch(i: u64) -> Update {
    let i = i as VertexId;
    let mut update = Update::new();
    update.insert_edges(&[(i, i + 1)]);
    update
}

/// The `n` of a graph that is the first `n` chain batches; `None` if it is no such prefix.
fn chain_prefix<G: GraphRead>(g: &G) -> Option<u64> {
    let n = g.num_arcs() as u64;
    let ok = (0..n).all(|j| {
        let mut next = Vec::new();
        g.for_each_out_neighbor(j as VertexId, |v| {
            next.push(v);
            true
        });
        next == [j as VertexId + 1]
    });
    ok.then_some(n)
}

/// One reader run: a load or a full verify. Returns the number of batches it saw, or why
/// it failed.
fn read_once(path: &Path, verify_it: bool) -> std::result::Result<u64, String> {
    if verify_it {
        let report = verify(path).map_err(|e| format!("verify: {e}"))?;
        Ok(report.num_arcs)
    } else {
        let g = load_graph::<GroupLeaf>(path).map_err(|e| format!("load: {e}"))?;
        chain_prefix(&g).ok_or_else(|| "the loaded graph is no prefix of the batches".into())
    }
}

#[test]
fn readers_beside_a_checkpointing_writer_see_only_acknowledged_prefixes() {
    const READERS: usize = 2;
    const MIN_RUNS: u64 = 240;
    const MIN_CHECKPOINTS: u64 = 40;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("g");
    let store = Store::create(&path, StoreOptions::default(), Graph::new(true)).unwrap();
    let acked = AtomicU64::new(0);
    let runs = AtomicU64::new(0);
    let checkpoints = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let failures = std::thread::scope(|scope| {
        let writer = scope.spawn(|| {
            let mut i = 0;
            while !stop.load(Ordering::Acquire) {
                store.commit(&chain_batch(i)).unwrap();
                i += 1;
                acked.store(i, Ordering::Release);
                // Every batch checkpointed, every fourth a new base: each deletes the
                // packs and log segments of the manifest before it.
                if i % 4 == 0 {
                    store.checkpoint_full().unwrap();
                } else {
                    store.checkpoint().unwrap();
                }
                checkpoints.fetch_add(1, Ordering::AcqRel);
            }
        });
        let readers: Vec<_> = (0..READERS)
            .map(|r| {
                let (path, acked, runs, stop) = (&path, &acked, &runs, &stop);
                let checkpoints = &checkpoints;
                scope.spawn(move || {
                    let mut failures = Vec::new();
                    let mut k = 0;
                    while !stop.load(Ordering::Acquire) {
                        let before = acked.load(Ordering::Acquire);
                        let seen = read_once(path, (k + r) % 2 == 0);
                        let after = acked.load(Ordering::Acquire);
                        k += 1;
                        // A batch is in the log before it is acknowledged, so a reader may
                        // see the one being committed.
                        match seen {
                            Ok(n) if (before..=after + 1).contains(&n) => {}
                            Ok(n) => {
                                failures.push(format!("saw {n} batches, acked {before}..{after}"))
                            }
                            Err(e) => failures.push(e),
                        }
                        let total = runs.fetch_add(1, Ordering::AcqRel) + 1;
                        let enough = total >= MIN_RUNS
                            && checkpoints.load(Ordering::Acquire) >= MIN_CHECKPOINTS;
                        if enough || started.elapsed() > Duration::from_secs(20) {
                            stop.store(true, Ordering::Release);
                        }
                    }
                    failures
                })
            })
            .collect();
        let failures: Vec<String> = readers
            .into_iter()
            .flat_map(|r| r.join().unwrap())
            .collect();
        writer.join().unwrap();
        failures
    });
    let runs = runs.load(Ordering::Acquire);
    let checkpoints = checkpoints.load(Ordering::Acquire);
    assert!(
        failures.is_empty(),
        "{} of {runs} reader runs failed beside {checkpoints} checkpoints: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(runs >= 200, "only {runs} reader runs");
    assert!(checkpoints >= 10, "only {checkpoints} checkpoints");
}

#[test]
fn removing_the_lock_file_does_not_admit_a_second_writer() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("g");
    let store = Store::create(&path, StoreOptions::default(), Graph::new(false)).unwrap();
    std::fs::remove_file(path.join(LOCK)).unwrap();
    let err = Store::<GroupLeaf>::open(&path, StoreOptions::default()).unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == io::ErrorKind::WouldBlock),
        "{err}"
    );
    drop(store);
    Store::<GroupLeaf>::open(&path, StoreOptions::default()).unwrap();

    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    vfs.remove(&dir().join(LOCK)).unwrap();
    assert!(Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).is_err());
    drop(store);
    Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
}

/// The pack files and pack-like leftovers of the directory.
fn pack_files(vfs: &SimVfs) -> Vec<String> {
    let mut names = vfs.list(&dir()).unwrap();
    names.retain(|n| n.starts_with("pack-"));
    names
}

#[test]
fn a_checkpoint_cut_short_leaves_nothing_verify_calls_damage() {
    for k in 1.. {
        let vfs = SimVfs::new();
        let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
        for i in 0..5 {
            store.commit(&chain_batch(i)).unwrap();
        }
        let expected = fingerprint(&store.snapshot());
        vfs.fail_at(Some(vfs.ops() + k));
        let finished = store.checkpoint_full().is_ok();
        drop(store);
        vfs.power_cut(k);
        let report = verify_with(&vfs, &dir()).unwrap_or_else(|e| panic!("op {k}: {e}"));
        assert_eq!(report.stray_packs, 0, "op {k}");
        let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
        assert_eq!(fingerprint(&store.snapshot()), expected, "op {k}");
        drop(store);
        assert!(
            pack_files(&vfs).iter().all(|n| n.ends_with(".pack")),
            "op {k}: {:?}",
            pack_files(&vfs)
        );
        if finished {
            break;
        }
    }
}

#[test]
fn an_empty_pack_past_the_manifest_is_a_note_and_removed_on_open() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(&chain_batch(0)).unwrap();
    store.checkpoint().unwrap();
    drop(store);
    let before = pack_files(&vfs);
    let last = before
        .iter()
        .filter_map(|n| format::parse_pack_name(n))
        .max()
        .unwrap();
    // What a checkpoint that ran out of space left under an older version's naming.
    let stray = dir().join(format::pack_name(last + 1));
    vfs.create(&stray).unwrap();
    vfs.create(&dir().join(format!("{}.tmp", format::pack_name(last + 2))))
        .unwrap();
    let report = verify_with(&vfs, &dir()).unwrap();
    assert_eq!(report.stray_packs, 1);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 1);
    assert_eq!(pack_files(&vfs), before);
    // A damaged pack the manifest may name is still damage.
    drop(store);
    let live = dir().join(&before[0]);
    vfs.flip_bit(&live, 30, 1).unwrap();
    assert!(matches!(
        verify_with(&vfs, &dir()),
        Err(Error::Corrupt { .. })
    ));
}

#[test]
fn a_checkpoint_deletes_the_log_it_covers() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        segment_bytes: 1 << 20,
        ..sim_options(&vfs)
    };
    let segments = || -> Vec<u64> {
        let mut firsts: Vec<u64> = vfs
            .list(&dir())
            .unwrap()
            .iter()
            .filter_map(|n| wal::parse_segment_name(n))
            .collect();
        firsts.sort_unstable();
        firsts
    };
    let store = Store::create(&dir(), options.clone(), Graph::new(true)).unwrap();
    for i in 0..5 {
        store.commit(&chain_batch(i)).unwrap();
    }
    assert_eq!(segments(), [1]);
    store.checkpoint().unwrap();
    assert_eq!(segments(), [6], "the segment of records 1 to 5 is covered");
    store.checkpoint().unwrap();
    assert_eq!(segments(), [6], "an empty segment is not rolled");
    store.commit(&chain_batch(5)).unwrap();
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    assert_eq!(chain_prefix(&store.snapshot()), Some(6));
    assert_eq!(store.recovery().records_replayed, 1);
}
