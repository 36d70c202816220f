//! Property tests of the PMA against `BTreeSet<u64>`, with 1 and 4 threads, and the
//! adversarial cases (one hot leaf, extreme keys, emptying, growth and shrink, huge batches).

use std::collections::BTreeSet;
use std::sync::OnceLock;

use proptest::collection::vec;
use proptest::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

use super::*;

/// Cases per property: `PROPTEST_CASES` for long local runs, 48 by default.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(48)
}

fn pools() -> &'static [ThreadPool; 2] {
    static POOLS: OnceLock<[ThreadPool; 2]> = OnceLock::new();
    POOLS.get_or_init(|| {
        let pool = |n| {
            ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .expect("thread pool")
        };
        [pool(1), pool(4)]
    })
}

/// Small leaves, tiny grains and thresholds, so that a few thousand keys reach every path:
/// many leaves, parallel merges, overflow, multi-level redistribution, growth and shrink.
fn small_config(rebuild_divisor: usize) -> PmaConfig {
    PmaConfig {
        leaf_bytes: Some(64),
        upper_density_root: 0.6,
        lower_density_root: 0.2,
        lower_density_leaf: 0.05,
        point_batch_max: 4,
        rebuild_divisor,
        parallel_grain: 4,
        ..PmaConfig::default()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert(u64),
    Remove(u64),
    InsertBatch(Vec<u64>),
    RemoveBatch(Vec<u64>),
}

fn key() -> impl Strategy<Value = u64> {
    prop_oneof![
        6 => 0u64..4_000,
        1 => any::<u64>(),
        1 => prop::sample::select(vec![0, 1, u64::MAX - 1, u64::MAX]),
    ]
}

fn batch() -> impl Strategy<Value = Vec<u64>> {
    (vec(key(), 0..400), any::<bool>()).prop_map(|(mut keys, sorted)| {
        if sorted {
            keys.sort_unstable();
        }
        keys
    })
}

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

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => key().prop_map(Op::Insert),
        1 => key().prop_map(Op::Remove),
        3 => batch().prop_map(Op::InsertBatch),
        2 => batch().prop_map(Op::RemoveBatch),
    ]
}

/// Compares everything observable with the oracle.
fn assert_matches<C: LeafCodec<Item = u64>>(pma: &Pma<C>, oracle: &BTreeSet<u64>, probes: &[u64]) {
    pma.check_invariants().unwrap();
    assert_eq!(pma.len(), oracle.len());
    assert!(pma.iter().eq(oracle.iter().copied()), "iteration differs");
    assert_eq!(pma.min(), oracle.first().copied());
    assert_eq!(pma.max(), oracle.last().copied());
    for &probe in probes.iter().chain(&[0, 1, 2_000, u64::MAX]) {
        assert_eq!(
            pma.contains(probe),
            oracle.contains(&probe),
            "contains {probe}"
        );
        assert_eq!(
            pma.successor(probe),
            oracle.range(probe..).next().copied(),
            "succ {probe}"
        );
        let end = probe.saturating_add(700);
        let expected: Vec<u64> = oracle.range(probe..end).copied().collect();
        assert!(
            pma.range(probe..end).eq(expected.iter().copied()),
            "range {probe}"
        );
        let mut mapped = Vec::new();
        assert_eq!(
            pma.map_range(probe, end, |k| mapped.push(k)),
            expected.len()
        );
        assert_eq!(mapped, expected);
        let mut first = Vec::new();
        pma.map_range_length(probe, 5, |k| first.push(k));
        assert!(first.iter().eq(oracle.range(probe..).take(5)));
    }
}

fn run_ops<C: LeafCodec<Item = u64>>(config: PmaConfig, ops: &[Op]) {
    let mut pma = Pma::<C>::with_config(config).unwrap();
    let mut oracle = BTreeSet::new();
    for op in ops {
        let probes: Vec<u64> = match op {
            Op::Insert(k) => {
                assert_eq!(pma.insert(*k), oracle.insert(*k));
                vec![*k]
            }
            Op::Remove(k) => {
                assert_eq!(pma.remove(*k), oracle.remove(k));
                vec![*k]
            }
            Op::InsertBatch(keys) => {
                let added = keys.iter().copied().filter(|k| oracle.insert(*k)).count();
                // Odd-sized batches go through the owned path, which sorts in place.
                let inserted = if keys.len() % 2 == 1 {
                    pma.insert_batch_owned(keys.clone())
                } else {
                    pma.insert_batch(keys)
                };
                assert_eq!(inserted, added);
                keys.iter().take(8).copied().collect()
            }
            Op::RemoveBatch(keys) => {
                let removed = keys.iter().filter(|k| oracle.remove(k)).count();
                assert_eq!(pma.remove_batch(keys), removed);
                keys.iter().take(8).copied().collect()
            }
        };
        assert_matches(&pma, &oracle, &probes);
    }
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
    fn cpma_matches_btreeset(
        ops in vec(op(), 1..40),
        divisor in prop::sample::select(vec![1usize, 10, 1000]),
        page_bytes in prop::sample::select(vec![64usize, 128, 256, 4096]),
    ) {
        for pool in pools() {
            let config = PmaConfig { page_bytes, ..small_config(divisor) };
            pool.install(|| run_ops::<DeltaLeaf>(config, &ops));
        }
    }

    #[test]
    fn group_pma_matches_btreeset(
        ops in vec(op(), 1..40),
        divisor in prop::sample::select(vec![1usize, 10, 1000]),
        page_bytes in prop::sample::select(vec![128usize, 256, 4096]),
    ) {
        for pool in pools() {
            let config = PmaConfig { page_bytes, leaf_bytes: Some(128), ..small_config(divisor) };
            pool.install(|| run_ops::<GroupLeaf>(config, &ops));
        }
    }

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

    /// A first load at any density up to the leaves' bound ([`PmaConfig::load_density`]),
    /// then any updates: the array matches the oracle throughout (a full leaf rebuilds).
    #[test]
    fn compact_loads_match_btreeset(
        first in vec(key(), 4..400),
        ops in vec(op(), 0..30),
        density in prop::sample::select(vec![0.5f64, 0.9, 1.0]),
    ) {
        let mut all = vec![Op::InsertBatch(first)];
        all.extend(ops);
        for pool in pools() {
            let config = PmaConfig { load_density: Some(density), ..small_config(10) };
            pool.install(|| run_ops::<DeltaLeaf>(config.clone(), &all));
            let config = PmaConfig { leaf_bytes: Some(128), ..config };
            pool.install(|| run_ops::<GroupLeaf>(config, &all));
        }
    }

    #[test]
    fn plain_pma_matches_btreeset(ops in vec(op(), 1..40)) {
        for pool in pools() {
            pool.install(|| run_ops::<PlainLeaf>(small_config(10), &ops));
        }
    }

    #[test]
    fn default_config_matches_btreeset(ops in vec(op(), 1..20)) {
        pools()[1].install(|| run_ops::<DeltaLeaf>(PmaConfig::default(), &ops));
        pools()[1].install(|| run_ops::<GroupLeaf>(PmaConfig::default(), &ops));
    }

    #[test]
    fn parallel_fold_and_for_each_see_every_key(keys in vec(any::<u64>(), 0..3_000)) {
        let pma = Cpma::from_unsorted(&keys);
        let expected: u64 = keys.iter().collect::<BTreeSet<_>>().into_iter().fold(0, |a, &k| a.wrapping_add(k));
        for pool in pools() {
            let sum = pool.install(|| pma.par_fold(|| 0u64, |s, k| *s = s.wrapping_add(k), u64::wrapping_add));
            prop_assert_eq!(sum, expected);
            let count = std::sync::atomic::AtomicUsize::new(0);
            pool.install(|| pma.par_for_each(|_| { count.fetch_add(1, std::sync::atomic::Ordering::Relaxed); }));
            prop_assert_eq!(count.into_inner(), pma.len());
        }
    }
}

#[test]
fn empty_set_answers_every_query() {
    let mut pma = Cpma::new();
    pma.check_invariants().unwrap();
    assert!(pma.is_empty());
    assert_eq!((pma.min(), pma.max(), pma.successor(0)), (None, None, None));
    assert!(!pma.contains(0) && !pma.remove(7));
    assert_eq!(pma.remove_batch(&(0..500).collect::<Vec<_>>()), 0);
    assert_eq!(pma.iter().count(), 0);
    assert_eq!(pma.map_range(0, u64::MAX, |_| ()), 0);
    assert_eq!(pma.insert_batch(&[]), 0);
}

fn check_against(pma: &Cpma, oracle: &BTreeSet<u64>) {
    pma.check_invariants().unwrap();
    assert!(pma.iter().eq(oracle.iter().copied()));
}

#[test]
fn sequential_and_reversed_point_inserts_hit_one_leaf() {
    for reversed in [false, true] {
        let mut pma = Cpma::with_config(small_config(10)).unwrap();
        let mut oracle = BTreeSet::new();
        for i in 0..20_000u64 {
            let key = if reversed { 1_000_000 - i } else { i };
            assert!(pma.insert(key));
            oracle.insert(key);
            if i % 2_500 == 0 {
                check_against(&pma, &oracle);
            }
        }
        check_against(&pma, &oracle);
        assert!(pma.num_leaves() > 100);
    }
}

#[test]
fn dense_batch_into_one_leaf_overflows_and_redistributes() {
    for pool in pools() {
        pool.install(|| {
            let spread: Vec<u64> = (0..20_000).map(|i| i << 20).collect();
            let mut pma = Cpma::from_sorted(&spread).unwrap();
            let mut oracle: BTreeSet<u64> = spread.iter().copied().collect();
            // 1,500 keys between two neighbours: one leaf receives the whole batch.
            let hot: Vec<u64> = (1..1_500).map(|i| (7_000 << 20) + i).collect();
            assert_eq!(pma.insert_batch(&hot), hot.len());
            oracle.extend(&hot);
            check_against(&pma, &oracle);
            let reversed: Vec<u64> = hot.iter().rev().map(|k| k + 600_000).collect();
            assert_eq!(pma.insert_batch(&reversed), reversed.len());
            oracle.extend(&reversed);
            check_against(&pma, &oracle);
        });
    }
}

#[test]
fn group_removals_that_lengthen_leaves_overflow_and_redistribute() {
    // Each middle key's removal merges a 5-byte and a 1-byte difference into an escaped
    // 13-byte one, so full leaves overflow on removal (point and batch paths).
    let escape = (1u64 << 40) - 1;
    let triples = |i: u64| [i << 41, (i << 41) + escape - 1, (i << 41) + escape];
    let keys: Vec<u64> = (0..300).flat_map(triples).collect();
    let middles: Vec<u64> = (0..300).map(|i| triples(i)[1]).collect();
    let config = PmaConfig {
        leaf_bytes: Some(128),
        ..small_config(1000)
    };
    for batch in [false, true] {
        let mut pma = Pma::<GroupLeaf>::from_sorted_with_config(&keys, config.clone()).unwrap();
        let mut oracle: BTreeSet<u64> = keys.iter().copied().collect();
        if batch {
            pma.remove_batch(&middles);
        } else {
            for &key in &middles {
                assert!(pma.remove(key));
            }
        }
        for key in &middles {
            oracle.remove(key);
        }
        pma.check_invariants().unwrap();
        assert!(pma.iter().eq(oracle.iter().copied()));
    }
}

#[test]
fn group_inserts_that_shorten_leaves_keep_the_byte_count() {
    // Splitting an escaped 13-byte difference (2^40) leaves two 5-byte ones: the insert
    // shortens its leaf, through the point and the batch paths.
    let keys: Vec<u64> = (0..200u64)
        .flat_map(|i| [i << 41, (i << 41) + (1 << 40)])
        .collect();
    let halves: Vec<u64> = (0..200u64).map(|i| (i << 41) + (1 << 39)).collect();
    let mut pma = Pma::<GroupLeaf>::from_sorted(&keys).unwrap();
    for &key in &halves[..100] {
        assert!(pma.insert(key));
    }
    pma.insert_batch(&halves[100..]);
    pma.check_invariants().unwrap();
    assert_eq!(pma.len(), 600);
}

#[test]
fn extreme_keys_live_together() {
    let mut pma = PlainPma::new();
    assert!(pma.insert(u64::MAX) && pma.insert(0) && !pma.insert(0));
    assert_eq!(pma.successor(1), Some(u64::MAX));
    assert_eq!(pma.iter().collect::<Vec<_>>(), [0, u64::MAX]);
    let mut cpma = Cpma::from_sorted(&[0, u64::MAX]).unwrap();
    assert_eq!((cpma.min(), cpma.max()), (Some(0), Some(u64::MAX)));
    assert_eq!(cpma.range(1..).collect::<Vec<_>>(), [u64::MAX]);
    assert_eq!(cpma.range(..=u64::MAX).count(), 2);
    assert!(cpma.remove(u64::MAX) && cpma.remove(0));
    assert!(cpma.is_empty());
    cpma.check_invariants().unwrap();
}

#[test]
fn growth_then_deleting_everything_shrinks_back() {
    let mut pma = Cpma::with_config(small_config(10)).unwrap();
    let mut oracle = BTreeSet::new();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut peak_leaves = 0;
    for round in 0..12 {
        let batch: Vec<u64> = (0..(1usize << round)).map(|_| next() % 5_000_000).collect();
        pma.insert_batch(&batch);
        oracle.extend(&batch);
        check_against(&pma, &oracle);
        peak_leaves = peak_leaves.max(pma.num_leaves());
    }
    let all: Vec<u64> = oracle.iter().copied().collect();
    for chunk in all.chunks(97) {
        assert_eq!(pma.remove_batch(chunk), chunk.len());
        for key in chunk {
            oracle.remove(key);
        }
        check_against(&pma, &oracle);
    }
    assert!(pma.is_empty());
    assert!(
        pma.num_leaves() * 20 < peak_leaves,
        "{} of {peak_leaves}",
        pma.num_leaves()
    );
}

#[test]
fn a_first_batch_builds_directly_and_one_with_repeats_is_merged() {
    // Strictly increasing: the array is built from the batch itself.
    let mut pma = Cpma::new();
    let keys: Vec<u64> = (0..50_000).map(|i| i * 3 + 1).collect();
    assert_eq!(pma.insert_batch(&keys), keys.len());
    check_against(&pma, &keys.iter().copied().collect());
    // Sorted but with repeats (not sorted again by the batch path): merged, each key once.
    let mut pma = Cpma::new();
    let repeated: Vec<u64> = (0..50_000u64).flat_map(|i| [i * 2, i * 2]).collect();
    assert_eq!(pma.insert_batch(&repeated), 50_000);
    check_against(&pma, &repeated.iter().copied().collect());
    pma.check_invariants().unwrap();
}

#[test]
fn batch_larger_than_the_set_rebuilds() {
    let mut pma = Cpma::from_sorted(&[5, 10]).unwrap();
    let big: Vec<u64> = (0..200_000).map(|i| i * 7).collect();
    assert_eq!(pma.insert_batch(&big), big.len());
    let mut oracle: BTreeSet<u64> = big.iter().copied().collect();
    oracle.extend([5, 10]);
    check_against(&pma, &oracle);
    let twice: Vec<u64> = (0..400_000).collect();
    assert_eq!(pma.remove_batch(&twice), oracle.range(..400_000).count());
    oracle.retain(|&k| k >= 400_000);
    check_against(&pma, &oracle);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert_eq!(
        Cpma::from_sorted(&[3, 2]).unwrap_err(),
        PmaError::NotSorted { index: 1, key: 2 }
    );
    let bad = PmaConfig {
        growth_factor: 0.5,
        ..PmaConfig::default()
    };
    assert!(matches!(
        Cpma::with_config(bad),
        Err(PmaError::InvalidConfig {
            field: "growth_factor",
            ..
        })
    ));
    let bad = PmaConfig {
        leaf_bytes: Some(100),
        ..PmaConfig::default()
    };
    assert!(Cpma::with_config(bad).is_err());
    let bad = PmaConfig {
        upper_density_root: 0.99,
        ..PmaConfig::default()
    };
    assert!(Cpma::with_config(bad).is_err());
    let bad = PmaConfig {
        lower_density_root: 0.7,
        ..PmaConfig::default()
    };
    assert!(Cpma::with_config(bad).is_err());
    for density in [0.0, -0.5, 1.5, f64::NAN] {
        let bad = PmaConfig {
            load_density: Some(density),
            ..PmaConfig::default()
        };
        assert!(matches!(
            Cpma::from_sorted_with_config(&[1, 2], bad),
            Err(PmaError::InvalidConfig {
                field: "load_density",
                ..
            })
        ));
    }
}

/// Byte density of the whole array.
fn density<C: LeafCodec>(pma: &Pma<C>) -> f64 {
    pma.used_bytes() as f64 / (pma.num_leaves() * pma.leaf_bytes) as f64
}

#[test]
fn a_compact_load_fills_the_leaves_to_their_bound_and_the_first_overflow_rebuilds() {
    let keys: Vec<u64> = (0..20_000u64).map(|k| k * 37).collect();
    let normal = Cpma::from_sorted(&keys).unwrap();
    let config = PmaConfig {
        load_density: Some(1.0),
        ..PmaConfig::default()
    };
    let mut compact = Cpma::from_sorted_with_config(&keys, config).unwrap();
    compact.check_invariants().unwrap();
    assert!(compact.iter().eq(normal.iter()));
    assert!(compact.num_leaves() < normal.num_leaves());
    // The growth density (0.88 / 1.2, less a whole leaf's rounding) against the leaves'
    // own bound, which the build aims at before each leaf's head (8 bytes for a key that
    // a delta codes in 1 here) is counted.
    let bound = 1.0 - DeltaLeaf::SLACK as f64 / compact.leaf_bytes as f64;
    assert!(density(&normal) < 0.8, "{}", density(&normal));
    let packed = density(&compact);
    assert!(
        packed > bound - 0.01 && packed < 1.0,
        "{packed} against {bound}"
    );
    // Inserts fill leaves until one overflows; the array then grows to the growth density.
    let leaves = compact.num_leaves();
    let mut oracle: BTreeSet<u64> = keys.iter().copied().collect();
    for k in 0..keys.len() as u64 {
        assert!(compact.insert(k * 37 + 1));
        oracle.insert(k * 37 + 1);
        if compact.num_leaves() != leaves {
            break;
        }
    }
    assert!(compact.num_leaves() > leaves);
    assert!(density(&compact) < 0.8, "{}", density(&compact));
    check_against(&compact, &oracle);
}

/// Runs `ops` on a [`CpmaMap`] and a `BTreeMap`; an op's key `k` carries the value
/// `k * 31 + salt` (salt varies per op, so re-inserting a key replaces its value, and the
/// last of a batch's duplicates must win).
fn run_map_ops(config: PmaConfig, ops: &[Op]) {
    use std::collections::BTreeMap;
    let mut map = CpmaMap::with_config(config).unwrap();
    let mut oracle = BTreeMap::new();
    for (salt, op) in ops.iter().enumerate() {
        let item =
            |i: usize, k: u64| (k, k.wrapping_mul(31).wrapping_add((salt * 1000 + i) as u64));
        let probes: Vec<u64> = match op {
            Op::Insert(k) => {
                let (k, v) = item(0, *k);
                assert_eq!(map.insert((k, v)), oracle.insert(k, v).is_none());
                vec![k]
            }
            Op::Remove(k) => {
                assert_eq!(map.remove(*k), oracle.remove(k).is_some());
                vec![*k]
            }
            Op::InsertBatch(keys) => {
                let items: Vec<(u64, u64)> =
                    keys.iter().enumerate().map(|(i, &k)| item(i, k)).collect();
                let before = oracle.len();
                for &(k, v) in &items {
                    oracle.insert(k, v);
                }
                assert_eq!(map.insert_batch(&items), oracle.len() - before);
                keys.iter().take(8).copied().collect()
            }
            Op::RemoveBatch(keys) => {
                let removed = keys.iter().filter(|k| oracle.remove(k).is_some()).count();
                assert_eq!(map.remove_batch(keys), removed);
                keys.iter().take(8).copied().collect()
            }
        };
        map.check_invariants().unwrap();
        assert_eq!(map.len(), oracle.len());
        assert!(map.iter().eq(oracle.iter().map(|(&k, &v)| (k, v))));
        for probe in probes {
            assert_eq!(map.get(probe), oracle.get(&probe).map(|&v| (probe, v)));
            assert_eq!(
                map.successor(probe),
                oracle.range(probe..).next().map(|(&k, _)| k)
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn cpma_map_matches_btreemap(ops in vec(op(), 1..40), divisor in prop::sample::select(vec![1usize, 10, 1000])) {
        for pool in pools() {
            let config = PmaConfig { leaf_bytes: Some(128), ..small_config(divisor) };
            pool.install(|| run_map_ops(config, &ops));
        }
    }

    #[test]
    fn cpma_map_default_config_matches_btreemap(ops in vec(op(), 1..20)) {
        pools()[1].install(|| run_map_ops(PmaConfig::default(), &ops));
    }
}

#[test]
fn map_rejects_configs_without_room_for_its_slack() {
    let tight = PmaConfig {
        leaf_bytes: Some(256),
        upper_density_root: 0.9,
        ..PmaConfig::default()
    };
    assert!(Cpma::with_config(tight.clone()).is_ok());
    assert!(matches!(
        CpmaMap::with_config(tight),
        Err(PmaError::InvalidConfig { .. })
    ));
}
