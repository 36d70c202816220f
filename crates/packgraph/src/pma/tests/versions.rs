//! Versions: clones that share pages, copy-on-write under a snapshot, pages of dropped
//! versions reused, and the stored pages that files are written from.

use std::collections::BTreeSet;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// Keys over the span of the array `versions_keep_their_contents_across_table_levels`
/// starts from (multiples of 1,000 below 3,000,000), half of them present there.
fn spread_key() -> impl Strategy<Value = u64> {
    prop_oneof![
        1 => (0u64..3_000).prop_map(|k| k * 1_000),
        1 => 0u64..3_100_000,
    ]
}

fn spread_op() -> impl Strategy<Value = Op> {
    let batch = || vec(spread_key(), 0..300);
    prop_oneof![
        2 => spread_key().prop_map(Op::Insert),
        2 => spread_key().prop_map(Op::Remove),
        2 => batch().prop_map(Op::InsertBatch),
        2 => batch().prop_map(Op::RemoveBatch),
    ]
}

/// Checks that `pma.parts()` hands out the leaves in stored pages
/// (`PmaConfig::page_bytes`), whatever the in-memory page size.
fn assert_stored_pages(pma: &Cpma) {
    let parts = pma.parts();
    let stored = pma.leaf_bytes << pma.config.stored_page_shift(pma.leaf_bytes);
    assert_eq!(
        parts.data.len(),
        (pma.num_leaves * pma.leaf_bytes).div_ceil(stored)
    );
    for (p, page) in parts.data.iter().enumerate() {
        let first = p * stored / pma.leaf_bytes;
        let leaves = (pma.num_leaves - first).min(stored / pma.leaf_bytes);
        assert_eq!(page.len(), leaves * pma.leaf_bytes, "stored page {p}");
        for (i, leaf) in page.chunks(pma.leaf_bytes).enumerate() {
            assert_eq!(leaf, &pma.leaf(first + i)[..pma.leaf_bytes]);
        }
    }
}

/// Applies `steps` to one writer built from `start` (sorted); after a step whose tag is 0 it
/// clones a version (kept with a copy of the oracle), after tag 1 it drops the oldest kept
/// version, after tag 2 it takes the stored pages of the writer and of the newest version
/// (the copy they may keep must follow later writes). Every kept version must keep exactly
/// its contents, and its pages must stay untouched.
fn run_versioned(config: PmaConfig, start: &[u64], steps: &[(Op, u8)]) {
    let mut pma = Cpma::from_sorted_with_config(start, config).unwrap();
    let mut oracle: BTreeSet<u64> = start.iter().copied().collect();
    let mut versions: Vec<(Cpma, BTreeSet<u64>)> = Vec::new();
    for (op, tag) in steps {
        match op {
            Op::Insert(k) => assert_eq!(pma.insert(*k), oracle.insert(*k)),
            Op::Remove(k) => assert_eq!(pma.remove(*k), oracle.remove(k)),
            Op::InsertBatch(keys) => {
                let added = keys.iter().copied().filter(|k| oracle.insert(*k)).count();
                assert_eq!(pma.insert_batch(keys), added);
            }
            Op::RemoveBatch(keys) => {
                let removed = keys.iter().filter(|k| oracle.remove(k)).count();
                assert_eq!(pma.remove_batch(keys), removed);
            }
        }
        match tag {
            0 => versions.push((pma.clone(), oracle.clone())),
            1 if !versions.is_empty() => drop(versions.remove(0)),
            2 => {
                assert_stored_pages(&pma);
                if let Some((version, _)) = versions.last() {
                    assert_stored_pages(version);
                }
            }
            _ => {}
        }
        assert_matches(&pma, &oracle, &[]);
        for (version, expected) in &versions {
            version.check_invariants().unwrap();
            assert!(
                version.iter().eq(expected.iter().copied()),
                "a version changed"
            );
        }
    }
    drop(versions);
    let stats = pma.page_stats();
    assert_eq!(
        stats.shared, 0,
        "pages still shared after every version was dropped"
    );
}

#[test]
fn a_shared_page_is_never_written_and_unshared_pages_are_never_copied() {
    let config = PmaConfig {
        page_bytes: 128,
        ..small_config(1000)
    };
    let keys: Vec<u64> = (0..5_000).map(|i| i * 10).collect();
    let mut pma = Cpma::from_sorted_with_config(&keys, config).unwrap();
    assert!(pma.num_pages() > 20);
    // No version alive: updates write in place.
    pma.insert_batch(&(0..300).map(|i| i * 97 + 1).collect::<Vec<_>>());
    pma.remove_batch(&(0..300).map(|i| i * 130).collect::<Vec<_>>());
    for k in [3, 40_003, 49_999] {
        pma.insert(k);
        pma.remove(k);
    }
    assert_eq!(pma.page_copies(), 0);
    // A version shares every page; a point update copies exactly one page.
    let old = pma.clone();
    let old_keys: Vec<u64> = old.iter().collect();
    let bytes_before: Vec<Vec<u8>> = (0..old.num_pages())
        .map(|p| old.table.page(p, old.page_shift).unwrap().to_vec())
        .collect();
    assert_eq!(pma.page_stats().shared, pma.num_pages());
    assert!(pma.insert(25_001));
    assert_eq!(pma.page_copies(), 1);
    let changed = (0..pma.num_pages())
        .filter(|&p| !pma.shares_page(&old, p))
        .count();
    assert_eq!(changed, 1);
    // Of the page table, the point update copied the top level, one supergroup and one
    // group.
    assert!(pma.table.supers.len() > 2);
    let supers_copied = (pma.table.supers.iter().zip(&old.table.supers))
        .filter(|(a, b)| !Arc::ptr_eq(a, b))
        .count();
    assert_eq!(supers_copied, 1);
    let groups_copied = (pma.table.groups().zip(old.table.groups()))
        .filter(|(a, b)| !Arc::ptr_eq(a, b))
        .count();
    assert_eq!(groups_copied, 1);
    // The copy volume counts that page and group against the one leaf that changed.
    let volume = pma.copy_volume(&old).unwrap();
    let page_bytes = pma.page_stats().page_bytes;
    assert_eq!(volume.leaves_changed, 1);
    assert_eq!(volume.leaf_bytes_changed, pma.leaf_bytes);
    // (a page's allocation carries a few bytes of padding past its leaves)
    assert!((page_bytes..page_bytes + 64).contains(&volume.page_bytes));
    let (sup, group) = (&pma.table.supers[0], &pma.table.supers[0].groups[0]);
    let levels = pma.table.supers.len() * 16 + sup.groups.len() * 16;
    assert!(volume.table_bytes >= levels + group.used.len() * 12 + group.pages.len() * 8);
    assert!(volume.ratio() >= (page_bytes / pma.leaf_bytes) as f64);
    assert_eq!(pma.copy_volume(&pma.clone()).unwrap().ratio(), 1.0);
    // Writing the same page again happens in place.
    assert!(pma.insert(25_002));
    assert_eq!(pma.page_copies(), 1);
    // An absent key's removal copies nothing.
    assert!(!pma.remove(25_003));
    assert_eq!(pma.page_copies(), 1);
    // A batch copies only the pages it touches, and the old version's bytes never change.
    pma.insert_batch(&(0..200).map(|i| 30_000 + i * 2 + 1).collect::<Vec<_>>());
    assert!(pma.page_copies() < pma.num_pages() / 2);
    for (p, bytes) in bytes_before.iter().enumerate() {
        let page = old.table.page(p, old.page_shift).unwrap();
        assert_eq!(&page[..], &bytes[..], "page {p} was written");
    }
    assert!(old.iter().eq(old_keys.iter().copied()));
    drop(old);
    assert_eq!(pma.page_stats().shared, 0);
}

/// Versions taken and dropped batch after batch: the pages a dropped version alone held
/// are kept (`pool.rs`) and taken again by the next copies, which leaves every version as it
/// was.
#[test]
fn pages_of_dropped_versions_are_reused_and_versions_stay_intact() {
    let config = PmaConfig {
        page_bytes: 128,
        ..small_config(10)
    };
    let keys: Vec<u64> = (0..20_000).map(|i| i * 10).collect();
    let mut pma = Cpma::from_sorted_with_config(&keys, config).unwrap();
    let old = pma.clone();
    let mut expected: BTreeSet<u64> = keys.iter().copied().collect();
    let mut kept: Vec<(Cpma, Vec<u64>)> = Vec::new();
    for round in 0..30u64 {
        let held = pma.clone();
        let held_keys: Vec<u64> = held.iter().collect();
        kept.push((held, held_keys));
        // Every third version lives on; the others are dropped at once.
        if round % 3 != 0 {
            kept.pop();
        }
        let batch: Vec<u64> = (0..50).map(|i| i * 3_989 + round * 7 + 3).collect();
        pma.insert_batch(&batch);
        pma.remove_batch(&batch[..10]);
        expected.extend(&batch);
        for key in &batch[..10] {
            expected.remove(key);
        }
        pma.check_invariants().unwrap();
        assert!(pma.page_copies() > 0);
    }
    assert!(pma.iter().eq(expected.iter().copied()));
    for (version, version_keys) in &kept {
        version.check_invariants().unwrap();
        assert!(version.iter().eq(version_keys.iter().copied()));
    }
    assert!(old.iter().eq(keys.iter().copied()));
    old.check_invariants().unwrap();
}

/// With in-memory pages of one leaf (`share_bytes` 256 at the default leaf sizes): a
/// one-key update under a snapshot copies that leaf's page, one group, one supergroup and
/// the top level, and a batch of random keys under a fresh snapshot copies about what it
/// changes; the stored pages that files are written from keep their size.
#[test]
fn with_one_leaf_pages_a_write_under_a_snapshot_copies_about_what_it_changes() {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut random = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state >> 16
    };
    let mut keys: Vec<u64> = (0..200_000).map(|_| random()).collect();
    keys.sort_unstable();
    keys.dedup();
    let config = PmaConfig {
        share_bytes: 256,
        ..PmaConfig::default()
    };
    let mut pma = Cpma::from_sorted_with_config(&keys, config).unwrap();
    assert_eq!(pma.page_leaves(), 1);
    assert!(pma.config.stored_page_shift(pma.leaf_bytes) > 0);
    assert_stored_pages(&pma);
    assert!(pma.table.stored_copy.get().is_some());

    let old = pma.clone();
    assert!(pma.insert(random()));
    assert!(pma.table.stored_copy.get().is_none());
    assert_eq!(pma.page_copies(), 1);
    let volume = pma.copy_volume(&old).unwrap();
    assert_eq!(volume.leaves_changed, 1);
    assert_eq!(volume.page_bytes, pma.leaf_bytes + PADDING_BYTES);
    let copied = |a: &Table, b: &Table| {
        let supers = (a.supers.iter().zip(&b.supers))
            .filter(|(x, y)| !Arc::ptr_eq(x, y))
            .count();
        let groups = (a.groups().zip(b.groups()))
            .filter(|(x, y)| !Arc::ptr_eq(x, y))
            .count();
        (supers, groups)
    };
    assert_eq!(copied(&pma.table, &old.table), (1, 1));
    assert!(pma.table.supers.len() > 4 && pma.table.supers[0].groups.len() > 4);
    assert!(volume.table_bytes < 8 * pma.leaf_bytes, "{volume:?}");
    // The old version kept its stored copy, which still matches it.
    old.check_invariants().unwrap();
    assert_stored_pages(&old);
    drop(old);

    let mut ratios = Vec::new();
    for _ in 0..5 {
        let held = pma.clone();
        let batch: Vec<u64> = (0..200).map(|_| random()).collect();
        pma.insert_batch(&batch);
        let volume = pma.copy_volume(&held).unwrap();
        assert!(volume.leaves_changed >= 150, "{volume:?}");
        ratios.push(volume.ratio());
        held.check_invariants().unwrap();
    }
    // With pages of 16 leaves (the stored page size) each changed leaf would drag 15 more.
    let worst = ratios.iter().copied().fold(0.0, f64::max);
    assert!(worst < 4.0, "copy ratios {ratios:?}");
    pma.check_invariants().unwrap();
    assert_stored_pages(&pma);
    let back = Cpma::from_parts(pma.clone().into_parts(), |_| true).unwrap();
    assert!(back.iter().eq(pma.iter()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn versions_keep_their_contents(
        steps in vec((op(), 0u8..4), 1..40),
        page_bytes in prop::sample::select(vec![64usize, 128, 512]),
        share_bytes in prop::sample::select(vec![64usize, 128, 4096]),
    ) {
        for pool in pools() {
            let config = PmaConfig { page_bytes, share_bytes, ..small_config(10) };
            pool.install(|| run_versioned(config, &[], &steps));
        }
    }

    /// Versions of an array of a few hundred one-leaf pages, so that the page table has
    /// several supergroups and groups and updates cross their boundaries (keys spread over
    /// the whole array, batches that span supergroups, heads that start one).
    #[test]
    fn versions_keep_their_contents_across_table_levels(
        steps in vec((spread_op(), 0u8..4), 1..24),
        page_bytes in prop::sample::select(vec![64usize, 128, 1024]),
    ) {
        let config = PmaConfig { page_bytes, share_bytes: 64, ..small_config(1000) };
        let start: Vec<u64> = (0..3_000u64).map(|k| k * 1_000).collect();
        let probe = Cpma::from_sorted_with_config(&start, config.clone()).unwrap();
        prop_assert!(probe.table.supers.len() > 2 && probe.table.supers[0].groups.len() > 1);
        for pool in pools() {
            pool.install(|| run_versioned(config.clone(), &start, &steps));
        }
    }
}
