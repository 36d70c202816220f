//! Files crafted to pass their checksums but lie: counts and cross-references that do not
//! hold, a log shorter than what was acknowledged, damage at the log's end, files of
//! another directory. Each must be reported as damage, before anything large is allocated.

use super::format::{Manifest, MANIFEST};
use super::wal::encode_record;
use super::*;

/// A directory with a full checkpoint, a delta checkpoint and `after` batches in the log
/// after it; returns the file system and the last sequence number.
fn two_checkpoints(after: usize) -> (SimVfs, Seq) {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), one_segment(&vfs), Graph::new(true)).unwrap();
    let mut rng = Rng(5);
    for i in 0..6 {
        let g = store.snapshot();
        store.commit(&random_batch(&mut rng, &g, false, i)).unwrap();
        if i == 2 {
            store.checkpoint_full().unwrap();
        }
    }
    store.checkpoint().unwrap();
    for i in 0..after {
        let g = store.snapshot();
        store
            .commit(&random_batch(&mut rng, &g, false, 10 + i))
            .unwrap();
    }
    let last = store.last_seq();
    drop(store);
    (vfs, last)
}

/// Options whose log stays in one segment.
fn one_segment(vfs: &SimVfs) -> StoreOptions {
    StoreOptions {
        segment_bytes: 1 << 20,
        ..sim_options(vfs)
    }
}

fn replace(vfs: &SimVfs, path: &Path, bytes: &[u8]) {
    let file = vfs.create(path).unwrap();
    file.append(bytes).unwrap();
    file.sync().unwrap();
}

fn manifest(vfs: &SimVfs) -> Manifest {
    let path = dir().join(MANIFEST);
    Manifest::decode(&path, &vfs.read(&path).unwrap()).unwrap()
}

/// Verify and open both report damage whose message contains `what`.
fn assert_damage(vfs: &SimVfs, what: &str) {
    let err = verify_with(vfs, &dir()).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "verify: {err}");
    assert!(err.to_string().contains(what), "verify: {err}");
    let err = Store::<GroupLeaf>::open(&dir(), sim_options(vfs)).unwrap_err();
    assert!(matches!(err, Error::Corrupt { .. }), "open: {err}");
    assert!(err.to_string().contains(what), "open: {err}");
}

/// The newest log segment's name.
fn newest_segment(vfs: &SimVfs) -> String {
    let mut names: Vec<String> = vfs
        .list(&dir())
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .collect();
    names.sort();
    names.pop().unwrap()
}

#[test]
fn a_next_pack_number_at_or_below_a_live_pack_is_damage() {
    let (vfs, _) = two_checkpoints(2);
    let mut m = manifest(&vfs);
    assert!(m.next_pack > 2);
    m.next_pack = 2;
    replace(&vfs, &dir().join(MANIFEST), &m.encode());
    assert_damage(&vfs, "next pack number is 2");
}

#[test]
fn a_checkpoint_past_the_end_of_the_log_is_damage() {
    let (vfs, last) = two_checkpoints(2);
    let mut m = manifest(&vfs);
    m.log_seq = last + 5;
    replace(&vfs, &dir().join(MANIFEST), &m.encode());
    assert_damage(&vfs, "acknowledged records are missing");
}

#[test]
fn a_record_asking_for_2_to_the_31_vertices_is_damage_not_an_allocation() {
    let (vfs, last) = two_checkpoints(1);
    let path = dir().join(newest_segment(&vfs));
    // An empty update (docs/formats/update.md) whose vertex count is 2^31.
    let mut payload = vec![1u8, 0];
    let mut n = 1u64 << 31;
    while n >= 0x80 {
        payload.push((n as u8) | 0x80);
        n >>= 7;
    }
    payload.push(n as u8);
    payload.extend([0, 0, 0, 0]);
    assert!(Update::decode(&payload).is_ok());
    let file = vfs
        .open_append(&path, vfs.read(&path).unwrap().len() as u64)
        .unwrap();
    file.append(&encode_record(last + 1, &payload).unwrap())
        .unwrap();
    file.sync().unwrap();
    assert_damage(&vfs, "more than its ids and edges explain");
}

#[test]
fn commit_refuses_growth_recovery_would_refuse() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(true)).unwrap();
    let mut update = Update::new();
    update.min_vertices(1 << 31);
    assert!(matches!(
        store.commit(&update),
        Err(Error::InvalidInput { .. })
    ));
    let mut update = Update::new();
    update.min_vertices(1000).insert_edges(&[(0, 1)]);
    assert_eq!(store.commit(&update).unwrap().0, 1);
    assert_eq!(store.snapshot().num_vertices(), 1000);
}

#[test]
fn a_flipped_bit_in_the_last_full_record_is_damage_unless_cut_on_request() {
    let (vfs, last) = two_checkpoints(3);
    let before_last = {
        // The graph without the last batch: the same directory with that record cut short.
        let copy = SimVfs::new();
        clone_all(&vfs, &copy);
        let path = dir().join(newest_segment(&copy));
        let len = copy.read(&path).unwrap().len() as u64;
        drop(copy.open_append(&path, len - 3).unwrap());
        // The high-water mark knows the batch was acknowledged: its loss must be accepted.
        assert!(Store::<GroupLeaf>::open(&dir(), sim_options(&copy)).is_err());
        let accept = StoreOptions {
            accept_lost_log: true,
            ..sim_options(&copy)
        };
        let store = Store::<GroupLeaf>::open(&dir(), accept).unwrap();
        assert!(store.recovery().torn_bytes > 0);
        assert_eq!(store.recovery().lost_seqs, Some((last, last)));
        fingerprint(&store.snapshot())
    };
    let path = dir().join(newest_segment(&vfs));
    let len = vfs.read(&path).unwrap().len();
    vfs.flip_bit(&path, len - 6, 2).unwrap();
    assert_damage(&vfs, "is damaged: all its");
    let options = StoreOptions {
        truncate_damaged_tail: true,
        ..sim_options(&vfs)
    };
    let store = Store::<GroupLeaf>::open(&dir(), options).unwrap();
    let recovery = store.recovery();
    assert_eq!(recovery.damaged_seq, Some(last));
    assert!(recovery.damaged_bytes > 20);
    assert_eq!(fingerprint(&store.snapshot()), before_last);
    // The damaged record is gone, its number is not given out again, and all checks out.
    assert_eq!(store.commit(&Update::new()).unwrap().0, last + 1);
    drop(store);
    verify_with(&vfs, &dir()).unwrap();
}

/// Copies every file of `from` into `to`, durable.
fn clone_all(from: &SimVfs, to: &SimVfs) {
    to.create_dir_all(&dir()).unwrap();
    for name in from.list(&dir()).unwrap() {
        let path = dir().join(&name);
        replace(to, &path, &from.read(&path).unwrap());
    }
    to.sync_dir(&dir()).unwrap();
}

#[test]
fn a_log_segment_or_pack_of_another_directory_is_damage_naming_it() {
    let (vfs, _) = two_checkpoints(2);
    let (other, _) = two_checkpoints(2);
    assert_ne!(manifest(&vfs).dir_id, manifest(&other).dir_id);
    for name in other.list(&dir()).unwrap() {
        if !(name.ends_with(".wal") || name.ends_with(".pack")) {
            continue;
        }
        let copy = SimVfs::new();
        clone_all(&vfs, &copy);
        let path = dir().join(&name);
        replace(&copy, &path, &other.read(&path).unwrap());
        let err = verify_with(&copy, &dir()).unwrap_err().to_string();
        assert!(err.contains("another data directory"), "{name}: {err}");
        assert!(err.contains(&name), "{name}: {err}");
        let err = Store::<GroupLeaf>::open(&dir(), sim_options(&copy)).unwrap_err();
        assert!(matches!(err, Error::Corrupt { .. }), "{name}: {err}");
    }
}

#[test]
fn every_file_carries_the_directory_id() {
    let (vfs, _) = two_checkpoints(1);
    let id = manifest(&vfs).dir_id;
    assert_ne!(id, 0);
    for name in vfs.list(&dir()).unwrap() {
        let bytes = vfs.read(&dir().join(&name)).unwrap();
        if name.ends_with(".wal") || name.ends_with(".pack") {
            assert_eq!(
                u128::from_le_bytes(bytes[20..36].try_into().unwrap()),
                id,
                "{name}"
            );
        }
    }
}

/// Each way of losing the log the checkpoint covers. A checkpoint starts a new segment, and
/// the segments whose records it holds are deleted, so the log goes on in one segment that
/// starts after the checkpoint: deleting it, or putting in its place a segment that ends
/// before the checkpoint's last record (a log cut back to an earlier position), may not pass
/// as a shorter log.
#[test]
fn a_log_shorter_than_the_checkpoint_recorded_is_damage() {
    let (vfs, last) = two_checkpoints(0);
    assert_eq!(manifest(&vfs).log_seq, last);
    let name = newest_segment(&vfs);
    assert_eq!(name, super::wal::segment_name(last + 1));
    let path = dir().join(&name);
    let dir_id = manifest(&vfs).dir_id;
    for (case, earlier) in [("deleted", None), ("cut back to record 2", Some(2))] {
        let copy = SimVfs::new();
        clone_all(&vfs, &copy);
        copy.remove(&path).unwrap();
        if let Some(records) = earlier {
            // A segment from record 1 holding records up to `records`, of this directory.
            let mut bytes = super::wal::segment_header(1, dir_id);
            for seq in 1..=records {
                bytes.extend(encode_record(seq, &Update::new().encode()).unwrap());
            }
            replace(&copy, &dir().join(super::wal::segment_name(1)), &bytes);
        }
        let verified = verify_with(&copy, &dir());
        assert!(
            matches!(verified, Err(Error::Corrupt { .. })),
            "{case}: {verified:?}"
        );
        let opened = Store::<GroupLeaf>::open(&dir(), sim_options(&copy));
        assert!(
            matches!(opened, Err(Error::Corrupt { .. })),
            "{case}: opened"
        );
    }
}
