//! Property tests of the PMA against `BTreeSet<u64>`, with 1 and 4 threads, and the
//! adversarial cases (one hot leaf, extreme keys, emptying, growth and shrink, huge batches).
//! Versions and copy-on-write are in `versions.rs`, bulk loads (and their density) in
//! `load.rs`, the key→value map in `map.rs`; the oracle runners and strategies here.

use std::collections::BTreeSet;
use std::sync::OnceLock;

use proptest::collection::vec;
use proptest::prelude::*;
use rayon::{ThreadPool, ThreadPoolBuilder};

use super::*;

mod load;
mod map;
mod versions;

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
