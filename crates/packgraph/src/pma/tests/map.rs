//! The key→value CPMA ([`CpmaMap`], and the weighted graph's group-varint map leaf,
//! [`GroupMapLeaf`]) against a `BTreeMap`.

use proptest::collection::vec;
use proptest::prelude::*;

use super::*;

/// Runs `ops` on a [`CpmaMap`] and a `BTreeMap`; an op's key `k` carries the value
/// `k * 31 + salt` (salt varies per op, so re-inserting a key replaces its value, and the
/// last of a batch's duplicates must win).
fn run_map_ops<C: LeafCodec<Item = (u64, u64)>>(config: PmaConfig, ops: &[Op]) {
    use std::collections::BTreeMap;
    let mut map = Pma::<C>::with_config(config).unwrap();
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
            pool.install(|| run_map_ops::<DeltaMapLeaf>(config.clone(), &ops));
            pool.install(|| run_map_ops::<GroupMapLeaf>(config, &ops));
        }
    }

    #[test]
    fn cpma_map_default_config_matches_btreemap(ops in vec(op(), 1..20)) {
        pools()[1].install(|| run_map_ops::<DeltaMapLeaf>(PmaConfig::default(), &ops));
        pools()[1].install(|| run_map_ops::<GroupMapLeaf>(PmaConfig::default(), &ops));
    }

    /// Keys whose differences take every length code of the group-varint map, the
    /// widest (8 bytes) most of all, at the leaf size and bound the slack is for.
    #[test]
    fn group_map_with_wide_differences_matches_btreemap(
        ops in vec(wide_op(), 1..30),
    ) {
        let config = PmaConfig { leaf_bytes: Some(256), ..PmaConfig::default() };
        pools()[1].install(|| run_map_ops::<GroupMapLeaf>(config, &ops));
    }
}

/// An op on keys spread over the whole `u64` range, or clustered so that short and long
/// differences mix.
fn wide_op() -> impl Strategy<Value = Op> {
    let key = prop_oneof![
        any::<u64>(),
        (0u64..64, 0u64..300).prop_map(|(hi, lo)| hi << 40 | lo)
    ];
    let batch = vec(key.clone(), 1..200);
    prop_oneof![
        2 => key.clone().prop_map(Op::Insert),
        1 => key.prop_map(Op::Remove),
        3 => batch.clone().prop_map(Op::InsertBatch),
        1 => batch.prop_map(Op::RemoveBatch),
    ]
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
