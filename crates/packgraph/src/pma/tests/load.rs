//! Bulk loads into an empty array: built from the batch itself, and packed at
//! [`PmaConfig::load_density`] up to the leaves' bound.

use std::collections::BTreeSet;

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

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
}
