//! The write path: refused updates, a failed log write, group commit, sync policies.

use super::*;
use crate::store::{mark, recover};

#[test]
fn a_bad_update_is_refused_and_not_logged() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    let mut bad = Update::new();
    bad.insert_edges(&[(1, 2)])
        .set_property("x", 99, PropertyValue::Int(1));
    assert!(store.commit(&bad).is_err());
    let (seq, _) = store.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
    assert_eq!(seq, 2);
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 2);
}

#[test]
fn a_failed_log_write_stops_writes_until_reopened() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(Update::new().insert_edges(&[(0, 1)])).unwrap();
    vfs.fail_at(Some(vfs.ops() + 1));
    assert!(store.commit(Update::new().insert_edges(&[(1, 2)])).is_err());
    assert_eq!(
        store.snapshot().num_edges(),
        1,
        "readers never see the failed batch"
    );
    vfs.fail_at(None);
    let err = store
        .commit(Update::new().insert_edges(&[(2, 3)]))
        .unwrap_err();
    assert!(err.to_string().contains("reopen"), "{err}");
    std::mem::forget(store);
    vfs.kill();
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 1);
    store.commit(Update::new().insert_edges(&[(2, 3)])).unwrap();
}

#[test]
fn group_commit_acknowledges_after_the_sync() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        sync: SyncPolicy::Group(Duration::from_millis(2)),
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options.clone(), Graph::new(false)).unwrap();
    let mut last = 0;
    for i in 0..50u32 {
        let (seq, _) = store
            .append(Update::new().insert_edges(&[(i, i + 1)]))
            .unwrap();
        last = seq;
    }
    store.wait_durable(last).unwrap();
    assert!(store.durable_seq() >= last);
    let syncs = vfs.syncs();
    std::mem::forget(store);
    vfs.power_cut(3);
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    assert_eq!(store.snapshot().num_edges(), 50);
    assert!(
        syncs < 60,
        "group commit synced {syncs} times for 50 batches"
    );
}

#[test]
fn sync_policies_parse() {
    assert_eq!("batch".parse::<SyncPolicy>().unwrap(), SyncPolicy::Batch);
    assert_eq!("none".parse::<SyncPolicy>().unwrap(), SyncPolicy::None);
    assert_eq!(
        "group:10".parse::<SyncPolicy>().unwrap(),
        SyncPolicy::Group(Duration::from_millis(10))
    );
    for bad in ["", "group", "group:0", "group:x", "always"] {
        let err = bad.parse::<SyncPolicy>().unwrap_err().to_string();
        assert!(err.contains("sync policy"), "{err}");
    }
    assert_eq!(
        SyncPolicy::Group(Duration::from_millis(7)).to_string(),
        "group:7"
    );
}

/// Under group commit the mark's entries come from a thread of their own: a sync 100 ms or
/// more after the last entry still has one written, before any close or new segment.
#[test]
fn group_commit_advances_the_mark_beside_the_syncs() {
    let vfs = SimVfs::new();
    let options = StoreOptions {
        sync: SyncPolicy::Group(Duration::from_millis(1)),
        segment_bytes: 1 << 20,
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options, Graph::new(false)).unwrap();
    let id = recover::read_manifest(&vfs, &dir()).unwrap().dir_id;
    let mark = || mark::read(&vfs, &dir(), id, false).unwrap().unwrap_or(0);
    let before = mark();
    let mut last = 0;
    for i in 0..20u32 {
        std::thread::sleep(Duration::from_millis(12));
        let (seq, _) = store
            .commit(Update::new().insert_edges(&[(i, i + 1)]))
            .unwrap();
        last = seq;
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while mark() <= before && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let marked = mark();
    assert!(
        marked > before && marked <= last,
        "mark {marked}, before {before}, last {last}"
    );
    drop(store);
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.snapshot().num_edges(), 20);
}

#[test]
fn the_store_runs_its_thread_hook_on_each_thread_it_starts() {
    use std::collections::HashSet;
    use std::sync::{Arc, Mutex};
    let vfs = SimVfs::new();
    let threads: Arc<Mutex<HashSet<std::thread::ThreadId>>> = Arc::default();
    let seen = Arc::clone(&threads);
    let options = StoreOptions {
        sync: SyncPolicy::Group(Duration::from_millis(1)),
        on_thread_start: Some(Arc::new(move || {
            seen.lock().unwrap().insert(std::thread::current().id());
        })),
        ..sim_options(&vfs)
    };
    let store = Store::create(&dir(), options, Graph::new(false)).unwrap();
    let (seq, _) = store.append(Update::new().insert_edges(&[(0, 1)])).unwrap();
    store.wait_durable(seq).unwrap();
    // The syncer and its mark writer, each once; never the caller's thread.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while threads.lock().unwrap().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(threads.lock().unwrap().len(), 2);
    store.start_background_checkpoint();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while threads.lock().unwrap().len() < 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    let threads = threads.lock().unwrap();
    assert_eq!(threads.len(), 3);
    assert!(!threads.contains(&std::thread::current().id()));
}
