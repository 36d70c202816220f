//! PART against `BTreeMap`: random interleavings of point and batch operations, snapshots and
//! drops; every live snapshot keeps its exact contents; ordered iteration and ranges; keys
//! sharing long prefixes, empty keys, keys that are prefixes of others; nothing leaked.
//! Every version, and every map an operation reads, passes `check_invariants` after every
//! operation.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use proptest::collection::vec;
use proptest::prelude::*;

use super::Part;

/// Keys from a small alphabet and a few lengths, so that prefixes are shared, keys are
/// prefixes of others, the empty key occurs, and long common paths need compression.
fn key() -> impl Strategy<Value = Vec<u8>> + Clone {
    prop_oneof![
        3 => vec(prop::sample::select(vec![0u8, 1, 2, 255]), 0..5),
        2 => (vec(any::<u8>(), 0..3), 0usize..40).prop_map(|(tail, pad)| {
            let mut k = vec![7u8; pad];
            k.extend(tail);
            k
        }),
        2 => any::<u32>().prop_map(|x| x.to_be_bytes().to_vec()),
        1 => vec(any::<u8>(), 0..20),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Insert(Vec<u8>, u32),
    Remove(Vec<u8>),
    InsertBatch(Vec<(Vec<u8>, u32)>),
    RemoveBatch(Vec<Vec<u8>>),
    Snapshot,
    DropOldest,
    /// Re-lay in traversal order.
    Compact,
}

/// Keys under a few two-byte clusters, each followed by one of `fan_out` bytes and a short
/// tail of varying length (so that no value node holds them): inserts and removes move a
/// cluster's node through sizes 4, 16, 48 and 256 and back, sparse ones included.
fn clustered_key(fan_out: u8) -> impl Strategy<Value = Vec<u8>> + Clone {
    (0u8..2, 0..fan_out, vec(0u8..3, 0..3)).prop_map(|(cluster, byte, tail)| {
        let mut k = vec![9, cluster, byte];
        k.extend(tail);
        k
    })
}

fn op() -> impl Strategy<Value = Op> {
    op_over(key())
}

fn op_over<K: Strategy<Value = Vec<u8>> + Clone + 'static>(key: K) -> impl Strategy<Value = Op> {
    let key = move || key.clone();
    prop_oneof![
        6 => (key(), any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
        3 => key().prop_map(Op::Remove),
        2 => vec((key(), any::<u32>()), 0..60).prop_map(Op::InsertBatch),
        2 => vec(key(), 0..60).prop_map(Op::RemoveBatch),
        1 => Just(Op::Snapshot),
        1 => Just(Op::DropOldest),
        1 => Just(Op::Compact),
    ]
}

/// Values carry a token whose count tells whether any leaf outlives every version.
type Value = (u32, Arc<()>);

type Oracle = BTreeMap<Vec<u8>, u32>;

fn check(part: &Part<Value>, oracle: &BTreeMap<Vec<u8>, u32>, probes: &[Vec<u8>]) {
    assert_eq!(part.len(), oracle.len());
    part.check_invariants().unwrap();
    let got: Vec<(Vec<u8>, u32)> = part.iter().map(|(k, v)| (k.to_vec(), v.0)).collect();
    let want: Vec<(Vec<u8>, u32)> = oracle.iter().map(|(k, &v)| (k.clone(), v)).collect();
    assert_eq!(got, want, "iteration differs");
    // Batched lookups walk the same paths in steps: every probe, and every key present,
    // as one batch (more than one group of lanes when long).
    let keys: Vec<&[u8]> = probes
        .iter()
        .map(Vec::as_slice)
        .chain(oracle.keys().map(Vec::as_slice))
        .collect();
    let batched: Vec<Option<u32>> = part
        .get_many(&keys)
        .iter()
        .map(|v| v.map(|v| v.0))
        .collect();
    let single: Vec<Option<u32>> = keys.iter().map(|k| oracle.get(*k).copied()).collect();
    assert_eq!(batched, single, "get_many");
    for probe in probes {
        assert_eq!(
            part.get(probe).map(|v| v.0),
            oracle.get(probe).copied(),
            "get {probe:?}"
        );
        for (lo, hi) in [
            (Bound::Included(probe.as_slice()), Bound::Unbounded),
            (Bound::Excluded(probe.as_slice()), Bound::Unbounded),
            (Bound::Unbounded, Bound::Excluded(probe.as_slice())),
            (
                Bound::Included(probe.as_slice()),
                Bound::Included(&[2u8, 0][..]),
            ),
        ] {
            if matches!(hi, Bound::Included(end) if probe.as_slice() > end) {
                continue; // BTreeMap refuses start > end
            }
            let got: Vec<Vec<u8>> = part.range(lo, hi).map(|(k, _)| k.to_vec()).collect();
            let want: Vec<Vec<u8>> = oracle
                .range::<[u8], _>((lo, hi))
                .map(|(k, _)| k.clone())
                .collect();
            assert_eq!(got, want, "range {lo:?}..{hi:?}");
        }
    }
}

fn run(ops: &[Op]) {
    let token = Arc::new(());
    let value = |v: u32| (v, Arc::clone(&token));
    {
        let mut part: Part<Value> = Part::new();
        let mut oracle = BTreeMap::new();
        let mut versions: Vec<(Part<Value>, Oracle)> = Vec::new();
        for op in ops {
            let probes: Vec<Vec<u8>> = match op {
                Op::Insert(k, v) => {
                    assert_eq!(
                        part.insert(k, value(*v)).map(|o| o.0),
                        oracle.insert(k.clone(), *v)
                    );
                    vec![k.clone()]
                }
                Op::Remove(k) => {
                    assert_eq!(part.remove(k).map(|o| o.0), oracle.remove(k));
                    vec![k.clone()]
                }
                Op::InsertBatch(items) => {
                    let mut added = 0;
                    for (k, v) in items {
                        added += usize::from(oracle.insert(k.clone(), *v).is_none());
                    }
                    let batch = items.iter().map(|(k, v)| (k.clone(), value(*v)));
                    assert_eq!(part.insert_batch(batch), added);
                    items.iter().take(4).map(|(k, _)| k.clone()).collect()
                }
                Op::RemoveBatch(keys) => {
                    let removed = keys.iter().filter(|k| oracle.remove(*k).is_some()).count();
                    assert_eq!(part.remove_batch(keys), removed);
                    keys.iter().take(4).cloned().collect()
                }
                Op::Snapshot => {
                    versions.push((part.clone(), oracle.clone()));
                    vec![]
                }
                Op::DropOldest => {
                    if !versions.is_empty() {
                        versions.remove(0);
                    }
                    vec![]
                }
                Op::Compact => {
                    part = part.compact();
                    vec![]
                }
            };
            check(&part, &oracle, &probes);
            for (version, expected) in &versions {
                check(version, expected, &probes);
            }
        }
        let empty: Vec<Vec<u8>> = oracle.keys().cloned().collect();
        part.remove_batch(&empty);
        part.check_invariants().unwrap();
        assert!(part.is_empty());
        assert_eq!(part.node_counts(), (0, 0));
    }
    assert_eq!(
        Arc::strong_count(&token),
        1,
        "a leaf outlived every version"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn part_matches_btreemap_in_every_version(ops in vec(op(), 1..60)) {
        run(&ops);
    }

    #[test]
    fn clustered_keys_grow_and_shrink_every_node_kind(
        ops in prop::sample::select(vec![6u8, 20, 60, 255])
            .prop_flat_map(|fan_out| vec(op_over(clustered_key(fan_out)), 1..60))
    ) {
        run(&ops);
    }
}

/// Nodes of `part` that `others` do not hold.
fn fresh_nodes(part: &Part<u32>, others: &[&Part<u32>]) -> usize {
    let mut old = std::collections::HashSet::new();
    for other in others {
        old.extend(other.node_ids());
    }
    part.node_ids().difference(&old).count()
}

#[test]
fn batches_copy_each_node_once() {
    let base: Part<u32> = (0..20_000u64)
        .map(|k| ((k * 7919).to_be_bytes(), k as u32))
        .collect();
    base.check_invariants().unwrap();
    // Dense fixed-length keys end in value nodes, whichever way the tree was made.
    let dense: Part<u32> = (0..20_000u64).map(|k| ((k * 3).to_be_bytes(), 1)).collect();
    dense.check_invariants().unwrap();
    assert!(
        dense.value_nodes() > 50,
        "{} value nodes",
        dense.value_nodes()
    );
    let mut one_at_a_time = Part::new();
    for (k, v) in dense.iter() {
        one_at_a_time.insert(k, *v);
    }
    one_at_a_time.check_invariants().unwrap();
    assert!(one_at_a_time.value_nodes() > 50);
    // A longer key under a value node turns it into an inner node, and back to values
    // only when rebuilt.
    let mut longer = dense.clone();
    let mut key = 300u64.to_be_bytes().to_vec();
    key.push(1);
    longer.insert(&key, 2);
    longer.check_invariants().unwrap();
    assert_eq!(longer.get(&key), Some(&2));
    assert_eq!(longer.get(&300u64.to_be_bytes()), Some(&1));
    assert!(longer.value_nodes() < dense.value_nodes());
    assert_eq!(longer.remove(&key), Some(2));
    longer.check_invariants().unwrap();
    assert!(longer.iter().eq(dense.iter()));
    assert_eq!(dense.compact().value_nodes(), dense.value_nodes());
    // A sorted batch under a snapshot copies only the nodes on its paths, each once.
    let mut next = base.clone();
    let batch: Vec<_> = (0..100u64)
        .map(|k| ((k * 7919 + 1).to_be_bytes(), 1))
        .collect();
    assert_eq!(next.insert_batch(batch.clone()), 100);
    let copied = fresh_nodes(&next, &[&base]);
    let mut one_by_one = base.clone();
    for (k, v) in &batch {
        one_by_one.insert(k, *v);
    }
    next.check_invariants().unwrap();
    assert_eq!(copied, fresh_nodes(&one_by_one, &[&base]));
    assert!(copied <= 100 * 4, "{copied} nodes copied for 100 keys");

    // Two versions differing in a few keys.
    let mut changed = base.clone();
    changed.insert(&5u64.to_be_bytes(), 5);
    changed.remove(&7919u64.to_be_bytes());
    // Traversal-order rebuild keeps the contents.
    let compact = changed.compact();
    compact.check_invariants().unwrap();
    assert!(compact.iter().eq(changed.iter()));
}

#[test]
fn a_write_under_a_snapshot_copies_one_chunk_of_a_wide_node() {
    use super::node::NodeRef;

    let base: Part<u32> = (0..=255u8)
        .flat_map(|b| [([b, 0], 0), ([b, 1], 1)])
        .collect();
    let mut next = base.clone();
    next.insert(&[7, 9], 9);
    next.check_invariants().unwrap();
    let (Some(NodeRef::N256(old)), Some(NodeRef::N256(new))) = (&base.root, &next.root) else {
        panic!("the root should be a node of 256");
    };
    assert!(!std::sync::Arc::ptr_eq(old, new));
    assert_eq!(new.shared_chunks(old), 15);
    // In place when nothing else holds it: no chunk is copied again.
    let before: Vec<usize> = (0..256).map(|b| new.slot(b).unwrap().id()).collect();
    drop(base);
    next.insert(&[7, 10], 10);
    let Some(NodeRef::N256(now)) = &next.root else {
        panic!("still a node of 256")
    };
    let after: Vec<usize> = (0..256).map(|b| now.slot(b).unwrap().id()).collect();
    assert_eq!(before, after);
    next.check_invariants().unwrap();
}

#[test]
fn u64_keys_iterate_in_numeric_order_and_nodes_grow_and_shrink() {
    let mut part = Part::new();
    let keys: Vec<u64> = (0..5_000u64)
        .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 20)
        .collect();
    for (i, &k) in keys.iter().enumerate() {
        part.insert_u64(k, i);
    }
    part.check_invariants().unwrap();
    let mut sorted = keys.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let got: Vec<u64> = part
        .iter()
        .map(|(k, _)| u64::from_be_bytes(k.try_into().unwrap()))
        .collect();
    assert_eq!(got, sorted);
    // A dense byte range makes nodes of 256; removing most shrinks them back.
    let mut dense = Part::new();
    for b in 0..=255u8 {
        dense.insert(&[1, b], u32::from(b));
    }
    let snapshot = dense.clone();
    for b in 0..250u8 {
        assert_eq!(dense.remove(&[1, b]), Some(u32::from(b)));
        dense.check_invariants().unwrap();
    }
    snapshot.check_invariants().unwrap();
    assert_eq!(dense.len(), 6);
    assert_eq!(snapshot.len(), 256);
    assert!(snapshot.iter().map(|(k, _)| k[1]).eq(0..=255u8));
    assert_eq!(dense.get_u64(3), None);
    let compacted = part.compact();
    compacted.check_invariants().unwrap();
    assert!(compacted.iter().eq(part.iter()));
    assert_eq!(compacted.node_counts(), part.node_counts());
}

fn encode(v: &u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn decode(bytes: &[u8]) -> Option<u32> {
    Some(u32::from_le_bytes(bytes.try_into().ok()?))
}

fn contents(part: &Part<u32>) -> Vec<(Vec<u8>, u32)> {
    part.iter().map(|(k, &v)| (k.to_vec(), v)).collect()
}

#[test]
fn checkpoints_write_only_changed_units_and_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let mut part = Part::new();
    // 16 subtrees under the root (the first byte), scattered keys inside each.
    let key = |i: u32| ((i % 16) << 24 | (i.wrapping_mul(2_654_435_761) >> 8)).to_be_bytes();
    for i in 0..20_000u32 {
        part.insert(&key(i), i);
    }
    part.insert(b"", 7); // the empty key and a short key live above the threshold
    part.insert(b"a", 8);
    let first = part
        .write_checkpoint(dir.path(), 1, 1, None, encode)
        .unwrap();
    assert_eq!(first.units(), 17, "{first:?}"); // 16 subtrees and the leaf "a"
    assert_eq!(first.written(), first.units() + 1);
    let back = Part::read_checkpoint(first.manifest(), decode).unwrap();
    back.check_invariants().unwrap();
    assert_eq!(contents(&back), contents(&part));

    // Change three keys: only their units (and the top) are written again.
    let v1 = part.clone();
    let changed_keys: [u32; 3] = [5, 6_000, 19_999];
    for &i in &changed_keys {
        part.insert(&key(i), i + 1_000_000);
    }
    part.remove(b"a");
    let changed = part.units_changed_since(&first);
    assert!((1..=3).contains(&changed.len()), "{changed:?}");
    for &i in &changed_keys {
        assert!(changed.iter().any(|path| key(i).starts_with(path)), "{i}");
    }
    let second = part
        .write_checkpoint(dir.path(), 2, 1, Some(&first), encode)
        .unwrap();
    assert_eq!(second.written(), changed.len() + 1);
    assert_eq!(second.units(), first.units() - 1); // "a" is gone
    let back = Part::read_checkpoint(second.manifest(), decode).unwrap();
    assert_eq!(contents(&back), contents(&part));
    // The first checkpoint still reads as version 1.
    let old = Part::read_checkpoint(first.manifest(), decode).unwrap();
    assert_eq!(contents(&old), contents(&v1));
    assert!(part.units_changed_since(&second).is_empty());
}

#[test]
fn damaged_checkpoints_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut part = Part::new();
    for i in 0..2_000u32 {
        part.insert(&i.to_be_bytes(), i);
    }
    let cp = part
        .write_checkpoint(dir.path(), 1, 1, None, encode)
        .unwrap();
    let unit = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-0.part"))
        .unwrap();
    let mut bytes = std::fs::read(&unit).unwrap();
    bytes[20] ^= 1;
    std::fs::write(&unit, &bytes).unwrap();
    let err = Part::read_checkpoint(cp.manifest(), decode).unwrap_err();
    assert!(err.to_string().contains("checksum"), "{err}");
    std::fs::write(&unit, &bytes[..10]).unwrap();
    let err = Part::read_checkpoint(cp.manifest(), decode).unwrap_err();
    assert!(err.to_string().contains("not a PART unit"), "{err}");
    std::fs::write(cp.manifest(), "part-checkpoint 1\nunit ../etc/passwd\n").unwrap();
    let err = Part::read_checkpoint(cp.manifest(), decode).unwrap_err();
    assert!(err.to_string().contains("bad file name"), "{err}");
    std::fs::write(cp.manifest(), "something else\n").unwrap();
    assert!(Part::read_checkpoint(cp.manifest(), decode).is_err());
    let bad_value = |_: &[u8]| None::<u32>;
    let cp = part
        .write_checkpoint(dir.path(), 2, 1, None, encode)
        .unwrap();
    let err = Part::read_checkpoint(cp.manifest(), bad_value).unwrap_err();
    assert!(err.to_string().contains("does not decode"), "{err}");
}

proptest! {
    /// Value nodes of many fixed-length keys (searched by interpolation) against a set:
    /// every present key is found, every absent one is not, ranges start right.
    #[test]
    fn value_nodes_find_exactly_their_keys(
        raw in prop::collection::vec(any::<u32>(), 1..3000),
        span in prop_oneof![Just(4_000u32), Just(70_000), Just(u32::MAX)],
        probes in vec(any::<u32>(), 0..300),
        wide in any::<bool>(),
    ) {
        let keys: std::collections::BTreeSet<u32> = raw.iter().map(|k| k % span).collect();
        let probes: Vec<u32> = probes.iter().map(|k| k % span).collect();
        let key = |k: u32| if wide { u64::from(k).to_be_bytes().to_vec() } else { k.to_be_bytes().to_vec() };
        let bulk: Part<u32> = keys.iter().map(|&k| (key(k), k)).collect();
        let mut points = Part::new();
        for &k in keys.iter().rev() {
            points.insert(&key(k), k);
        }
        for part in [&bulk, &points] {
            part.check_invariants().unwrap();
            for &k in &keys {
                prop_assert_eq!(part.get(&key(k)), Some(&k));
            }
            let asked: Vec<u32> = probes.iter().chain(&keys).copied().collect();
            let want: Vec<Option<u32>> =
                asked.iter().map(|p| keys.contains(p).then_some(*p)).collect();
            let batched: Vec<Vec<u8>> = asked.iter().map(|&k| key(k)).collect();
            let got: Vec<Option<u32>> = part.get_many(&batched).into_iter().map(|v| v.copied()).collect();
            prop_assert_eq!(&got, &want);
            if wide {
                let ints: Vec<u64> = asked.iter().map(|&k| u64::from(k)).collect();
                let got: Vec<Option<u32>> = part.get_many_u64(&ints).into_iter().map(|v| v.copied()).collect();
                prop_assert_eq!(&got, &want);
            }
            for &p in &probes {
                prop_assert_eq!(part.get(&key(p)).copied(), keys.contains(&p).then_some(p));
                let first = part.range(Bound::Included(&key(p)), Bound::Unbounded).next();
                let want = keys.range(p..).next();
                prop_assert_eq!(first.map(|(_, v)| *v), want.copied());
            }
        }
    }
}

proptest! {
    /// A value node's search (integer probes, interpolation below the shared path) against
    /// a plain binary search of byte strings, for keys spread evenly or bunched together,
    /// present and absent, of the widths with and without their own integer conversion.
    #[test]
    fn value_node_search_matches_its_serial_twin(
        width in prop::sample::select(vec![3usize, 4, 6, 8, 9, 12]),
        shared in 0usize..6,
        bunched in any::<bool>(),
        raw in vec(any::<u64>(), 1..=super::node::VALUES_MAX),
        probes in vec((any::<u64>(), 4u8..7), 0..200),
    ) {
        use super::node::{Header, ValueNode};
        // Keys of `width` bytes agreeing on their first `shared` (byte 5), then at most
        // eight bytes of `x`; wider keys (9 and 12 bytes, as the id dictionary's) compare
        // their first bytes apart from the last eight.
        let shared = shared.min(width - 1);
        let shape = |x: u64| {
            let x = if bunched { x % 64 } else { x };
            let mut k = vec![5u8; width];
            let tail = x.to_be_bytes();
            let len = (width - shared).min(8);
            k[width - len..].copy_from_slice(&tail[8 - len..]);
            k
        };
        let mut node = ValueNode::new(Header::new(&[5u8; 8][..shared]), width, shared);
        for &x in &raw {
            node.put(&shape(x), x);
        }
        node.check_arrays().unwrap();
        for i in 1..node.len() {
            prop_assert!(node.entry(i - 1).0 < node.entry(i).0);
        }
        for &x in &raw {
            let key = shape(x);
            prop_assert_eq!(node.find_fast(&key), node.find_serial(&key));
        }
        // Probes, some differing in the first byte (4 and 6 around the path's 5).
        for &(x, lead) in &probes {
            let mut key = shape(x);
            key[0] = lead;
            prop_assert_eq!(node.find_fast(&key), node.find_serial(&key));
        }
    }
}

#[test]
fn batched_lookups_of_an_empty_map_and_of_no_keys() {
    let empty: Part<u32> = Part::new();
    assert_eq!(empty.get_many(&[b"a".as_slice(), b""]), [None, None]);
    assert_eq!(empty.get_many_u64(&[1, 2, 3]), [None, None, None]);
    let mut map = Part::new();
    map.insert_u64(7, 70u32);
    map.insert(b"", 1);
    assert!(map.get_many::<&[u8]>(&[]).is_empty());
    assert_eq!(map.get_many_u64(&[7, 8]), [Some(&70), None]);
    // A key that is a prefix of a stored key, the empty key, a longer key.
    let asked: [&[u8]; 4] = [
        &[0, 0],
        b"",
        &[0, 0, 0, 0, 0, 0, 0, 7, 1],
        &7u64.to_be_bytes(),
    ];
    assert_eq!(map.get_many(&asked), [None, Some(&1), None, Some(&70)]);
}
