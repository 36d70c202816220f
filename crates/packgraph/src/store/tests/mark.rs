//! The high-water mark: a log cut back or deleted after acknowledged batches is refused
//! (open, readers, verify) until the loss is accepted, and sequence numbers are never given
//! out twice.

use super::*;
use crate::store::mark::{self, MARK};
use crate::store::wal::{segment_name, SEGMENT_HEADER};

/// How the active log segment is damaged.
#[derive(Debug, Clone, Copy)]
enum Cut {
    Delete,
    ToZero,
    ToHeader,
    /// At the record boundary after the first batch since the last checkpoint.
    AtRecord,
}

fn batch(i: u32) -> Update {
    let mut update = Update::new();
    update.insert_edges(&[(i, i + 1)]);
    update
}

/// Batches 1 to 3, a checkpoint, 4 and 5, a checkpoint, then 6 to 9, closed cleanly (or
/// killed, batch 9 synced over 100 ms after the mark's last entry, so that its sync writes
/// one); returns the active segment's name and its length after batch 6.
fn two_checkpoints_then_four(vfs: &SimVfs, clean: bool) -> (String, u64) {
    let options = StoreOptions {
        segment_bytes: 1 << 20,
        ..sim_options(vfs)
    };
    let store = Store::create(&dir(), options, Graph::new(true)).unwrap();
    for i in 1..=3 {
        store.commit(&batch(i)).unwrap();
    }
    store.checkpoint().unwrap();
    for i in 4..=5 {
        store.commit(&batch(i)).unwrap();
    }
    store.checkpoint().unwrap();
    let active = segment_name(6);
    store.commit(&batch(6)).unwrap();
    // The segment holds record 6 only (and zeros written ahead after it).
    let bytes = vfs.read(&dir().join(&active)).unwrap();
    let payload = &bytes[SEGMENT_HEADER + 4..SEGMENT_HEADER + 8];
    let after_six =
        (SEGMENT_HEADER + 20) as u64 + u64::from(u32::from_le_bytes(payload.try_into().unwrap()));
    for i in 7..=9 {
        if i == 9 && !clean {
            // A sync 100 ms or more after the last mark entry writes one.
            std::thread::sleep(Duration::from_millis(120));
        }
        assert_eq!(store.commit(&batch(i)).unwrap().0, u64::from(i));
    }
    if clean {
        drop(store);
    } else {
        std::mem::forget(store);
        vfs.kill();
    }
    (active, after_six)
}

fn cut(vfs: &SimVfs, active: &str, after_six: u64, how: Cut) {
    let path = dir().join(active);
    match how {
        Cut::Delete => vfs.remove(&path).unwrap(),
        Cut::ToZero => drop(vfs.open_append(&path, 0).unwrap()),
        Cut::ToHeader => drop(vfs.open_append(&path, SEGMENT_HEADER as u64).unwrap()),
        Cut::AtRecord => drop(vfs.open_append(&path, after_six).unwrap()),
    }
}

#[test]
fn a_log_cut_back_after_two_checkpoints_is_refused_until_the_loss_is_accepted() {
    for how in [Cut::Delete, Cut::ToZero, Cut::ToHeader, Cut::AtRecord] {
        for clean in [true, false] {
            let what = format!("{how:?}, clean close {clean}");
            let vfs = SimVfs::new();
            let (active, after_six) = two_checkpoints_then_four(&vfs, clean);
            cut(&vfs, &active, after_six, how);
            let kept = if matches!(how, Cut::AtRecord) { 6 } else { 5 };
            let err = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap_err();
            let text = err.to_string();
            assert!(matches!(err, Error::Corrupt { .. }), "{what}: {text}");
            if !matches!(how, Cut::Delete) {
                assert!(text.contains(&active), "{what}: {text}");
                assert!(
                    text.contains(&format!("ends at record {kept}"))
                        && text.contains("up to 9")
                        && text.contains(MARK),
                    "{what}: {text}"
                );
            }
            // Readers and verify see the same, and the refusal changed nothing.
            assert!(recover::load::<GroupLeaf>(&vfs, &dir()).is_err(), "{what}");
            assert!(verify_with(&vfs, &dir()).is_err(), "{what}");
            assert_eq!(
                mark::read(&vfs, &dir(), dir_id(&vfs), false).unwrap(),
                Some(9)
            );

            let accept = StoreOptions {
                accept_lost_log: true,
                ..sim_options(&vfs)
            };
            let store = Store::<GroupLeaf>::open(&dir(), accept).unwrap();
            let lost = store.recovery().lost_seqs;
            assert_eq!(lost, Some((kept + 1, 9)), "{what}");
            assert_eq!(store.snapshot().num_edges(), kept as usize);
            // Numbering goes on after the mark: 6 to 9 are never given out again.
            assert_eq!(store.commit(&batch(20)).unwrap().0, 10, "{what}");
            drop(store);
            let report = verify_with(&vfs, &dir()).unwrap();
            assert_eq!(report.num_arcs, kept + 1, "{what}");
            let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
            assert_eq!(store.commit(&batch(21)).unwrap().0, 11, "{what}");
            assert_eq!(store.recovery().lost_seqs, None);
        }
    }
}

/// The documented limit: a killed writer's batches synced within 100 ms of the mark's last
/// entry are not covered, so a cut of only those reads as the crash's own end of the log.
#[test]
fn a_killed_writer_s_last_batches_within_the_interval_are_not_covered() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(&batch(1)).unwrap();
    store.checkpoint().unwrap();
    store.commit(&batch(2)).unwrap();
    std::mem::forget(store);
    vfs.kill();
    assert_eq!(
        mark::read(&vfs, &dir(), dir_id(&vfs), false).unwrap(),
        Some(1)
    );
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.last_seq(), 2);
}

fn dir_id(vfs: &SimVfs) -> u128 {
    recover::read_manifest(vfs, &dir()).unwrap().dir_id
}

#[test]
fn deleted_trailing_segments_of_a_killed_writer_are_noticed() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    for i in 1..=40 {
        store.commit(&batch(i)).unwrap();
    }
    std::mem::forget(store);
    vfs.kill();
    let mut segments: Vec<String> = vfs
        .list(&dir())
        .unwrap()
        .into_iter()
        .filter(|n| n.ends_with(".wal"))
        .collect();
    segments.sort();
    assert!(segments.len() > 3, "{segments:?}");
    // Starting a segment advanced the mark to the end of the one before.
    for name in segments.iter().rev().take(2) {
        vfs.remove(&dir().join(name)).unwrap();
    }
    let err = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs))
        .unwrap_err()
        .to_string();
    assert!(err.contains("are lost"), "{err}");
}

#[test]
fn a_directory_without_a_mark_opens_and_gets_one() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(&batch(1)).unwrap();
    drop(store);
    vfs.remove(&dir().join(MARK)).unwrap();
    assert!(verify_with(&vfs, &dir()).is_ok());
    let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
    assert_eq!(store.recovery().high_water, None);
    assert_eq!(store.commit(&batch(2)).unwrap().0, 2);
    drop(store);
    assert_eq!(
        mark::read(&vfs, &dir(), dir_id(&vfs), false).unwrap(),
        Some(2)
    );
}

#[test]
fn a_damaged_or_foreign_mark_is_damage() {
    let vfs = SimVfs::new();
    let store = Store::create(&dir(), sim_options(&vfs), Graph::new(false)).unwrap();
    store.commit(&batch(1)).unwrap();
    drop(store);
    vfs.flip_bit(&dir().join(MARK), 3, 1).unwrap();
    let err = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs))
        .unwrap_err()
        .to_string();
    assert!(err.contains(MARK) && err.contains("header"), "{err}");
    assert!(verify_with(&vfs, &dir()).is_err());
}

/// Accepting a lost log is itself crash-safe: interrupted at any operation (then killed
/// or the power cut), the next accepting open finishes it, numbering after the mark.
#[test]
fn accepting_a_lost_log_survives_a_crash_at_every_operation() {
    let mut fail = 1;
    loop {
        let mut finished = false;
        for power_cut in [false, true] {
            let vfs = SimVfs::new();
            let (active, after_six) = two_checkpoints_then_four(&vfs, true);
            cut(&vfs, &active, after_six, Cut::AtRecord);
            let accept = StoreOptions {
                accept_lost_log: true,
                ..sim_options(&vfs)
            };
            vfs.fail_at(Some(vfs.ops() + fail));
            let first = Store::<GroupLeaf>::open(&dir(), accept.clone());
            finished |= first.is_ok();
            if let Ok(store) = first {
                std::mem::forget(store);
            }
            if power_cut {
                vfs.power_cut(fail);
            } else {
                vfs.kill();
            }
            let what = format!("operation {fail}, power cut {power_cut}");
            let store =
                Store::<GroupLeaf>::open(&dir(), accept).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(store.snapshot().num_edges(), 6, "{what}");
            assert_eq!(store.commit(&batch(30)).unwrap().0, 10, "{what}");
            drop(store);
            let store = Store::<GroupLeaf>::open(&dir(), sim_options(&vfs)).unwrap();
            assert_eq!(store.snapshot().num_edges(), 7, "{what}");
        }
        if finished {
            break;
        }
        fail += 1;
        assert!(fail < 200, "the accepting open never finished");
    }
    assert!(fail > 5, "the accepting open took only {fail} operations");
}
