use std::collections::BTreeMap;

use proptest::prelude::*;

use super::*;

/// Items with the given keys (sorted, deduplicated) and values derived from them.
fn items_of(mut keys: Vec<u64>) -> Vec<Item> {
    keys.sort_unstable();
    keys.dedup();
    keys.iter()
        .map(|&k| (k, k.rotate_left(17) ^ 0x9E37_79B9_7F4A_7C15))
        .collect()
}

/// Every way of reading the leaf of `items` agrees with `items`: whole scans, counted
/// scans from every entry's position, `entry_end` chains, the values the index reads at
/// a run's first key, and early stops; with `padding` bytes after the leaf.
fn check_reads(items: &[Item], padding: usize) {
    let len = GroupMapLeaf::encoded_len(items);
    let mut leaf = vec![0xA5u8; len + padding];
    assert_eq!(GroupMapLeaf::encode(items, &mut leaf), len);
    let mut all = Vec::new();
    GroupMapLeaf::decode_into(&leaf, len, &mut all);
    assert_eq!(all, items);
    let mut entries = Vec::new();
    GroupMapLeaf::for_each_entry(&leaf, len, |key, pos, prev| entries.push((key, pos, prev)));
    assert_eq!(entries.len(), items.len());
    for (i, &(key, pos, prev)) in entries.iter().enumerate() {
        assert_eq!(key, items[i].0);
        assert_eq!(prev, if i == 0 { 0 } else { items[i - 1].0 });
        let end = GroupMapLeaf::entry_end(&leaf, pos);
        // What a reader does with a run known by its first key: the key's value from the
        // entry's end, and a prefetch of a byte of this leaf near it.
        assert_eq!(
            GroupMapLeaf::item_ending_at(|| &leaf[..], end, key),
            items[i],
            "entry {i}"
        );
        let byte = GroupMapLeaf::first_read_byte(end);
        assert!(byte < len, "entry {i}: byte {byte} of {len}");
        if let Some(&(_, next_pos, _)) = entries.get(i + 1) {
            assert_eq!(end, next_pos, "entry {i}");
            // Reading on from the end visits the rest.
            let mut rest = Vec::new();
            let (visited, stopped) =
                GroupMapLeaf::for_count_from(&leaf, len, end, key, usize::MAX, &mut |item| {
                    rest.push(item);
                    true
                });
            assert_eq!(
                (visited, stopped, &rest[..]),
                (items.len() - i - 1, false, &items[i + 1..])
            );
        }
        for count in [1, 3, 4, 5, 9, usize::MAX] {
            let mut got = Vec::new();
            let (visited, stopped) =
                GroupMapLeaf::for_count_from(&leaf, len, pos, prev, count, &mut |item| {
                    got.push(item);
                    true
                });
            let want: Vec<Item> = items[i..].iter().copied().take(count).collect();
            assert_eq!((visited, stopped), (want.len(), false));
            assert_eq!(got, want);
            let mut low = vec![0u32; count.min(items.len() + 2)];
            let written = GroupMapLeaf::low_halves_from(&leaf, len, pos, prev, &mut low);
            assert_eq!(written, want.len().min(low.len()));
            assert!(low.iter().zip(&want).all(|(&l, &(k, _))| l == k as u32));
        }
        // A stop on the entry's own item reports one visit and the stop.
        let (visited, stopped) =
            GroupMapLeaf::for_count_from(&leaf, len, pos, prev, 7, &mut |_| false);
        assert_eq!((visited, stopped), (1, true));
        let mut from = Vec::new();
        let whole = GroupMapLeaf::for_each_from(&leaf, len, pos, prev, |item| {
            from.push(item);
            true
        });
        assert!(whole);
        assert_eq!(from, items[i..]);
    }
    // Every stop point of a whole scan.
    for stop in 0..items.len() {
        let mut seen = 0;
        let whole = GroupMapLeaf::for_each_while(&leaf, len, |_| {
            seen += 1;
            seen <= stop
        });
        assert!(!whole);
        assert_eq!(seen, stop + 1);
    }
    assert_eq!(
        GroupMapLeaf::last(&leaf, len),
        items.last().map(|&(k, _)| k)
    );
    for &(key, _) in items {
        for target in [key.saturating_sub(1), key, key.saturating_add(1)] {
            let want = items.iter().copied().find(|&(k, _)| k >= target);
            assert_eq!(GroupMapLeaf::lower_bound(&leaf, len, target), want);
        }
    }
}

/// One of each length code, in full and short groups, with and without padding after the
/// leaf; differences up to the widest.
#[test]
fn every_length_code_reads_back() {
    let mut keys = vec![10u64];
    for delta in [
        1u64,
        300,
        70_000,
        1 << 30,
        1 << 41,
        5,
        1 << 45,
        2,
        3,
        4,
        u64::MAX >> 1,
    ] {
        keys.push(keys.last().unwrap() + delta);
    }
    let items = items_of(keys);
    for n in 1..=items.len() {
        for padding in [0, 3, 8, 16] {
            check_reads(&items[..n], padding);
        }
    }
}

/// A group's offsets from the table are those of its slots one by one.
#[test]
fn table_offsets_match_the_slots() {
    for ctrl in 0..256usize {
        let (s, total) = starts(ctrl);
        let mut p = 0;
        for (slot, &start) in s.iter().enumerate() {
            assert_eq!(start, p, "control {ctrl:#04x}, slot {slot}");
            p += LEN[(ctrl >> (2 * slot)) & 3] + VALUE_BYTES;
        }
        assert_eq!(total, p);
    }
}

/// A leaf too small for the items is refused by the bounded encoder, at every size; an
/// insert that does not fit leaves the leaf as it was.
#[test]
fn a_full_leaf_refuses_and_keeps_its_items() {
    let items = items_of((0..40u64).map(|i| i * i * 1000).collect());
    let len = GroupMapLeaf::encoded_len(&items);
    for size in 0..len {
        assert_eq!(
            GroupMapLeaf::encode_bounded(&items, &mut vec![0; size]),
            None
        );
    }
    let mut leaf = vec![0u8; len];
    assert_eq!(GroupMapLeaf::encode_bounded(&items, &mut leaf), Some(len));
    let before = leaf.clone();
    assert_eq!(
        GroupMapLeaf::insert(&mut leaf, len, (7, 7)),
        LeafInsert::Full
    );
    assert_eq!(leaf, before);
    assert_eq!(
        GroupMapLeaf::insert(&mut leaf, len, items[3]),
        LeafInsert::Present
    );
    assert_eq!(
        GroupMapLeaf::insert(&mut leaf, len, (items[3].0, 99)),
        LeafInsert::Replaced
    );
    let mut decoded = Vec::new();
    GroupMapLeaf::decode_into(&leaf, len, &mut decoded);
    assert_eq!(decoded[3], (items[3].0, 99));
}

/// Bytes that are no leaf the encoder wrote (what a crafted file holds) decode without a
/// panic and without reading an entry past the used bytes.
#[test]
fn arbitrary_bytes_decode_without_a_panic() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    for round in 0..2000 {
        let len: usize = 16 + round % 120;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        for used in [16, len / 2, len.saturating_sub(8), len] {
            let used = used.max(16).min(len);
            let mut count = 0;
            GroupMapLeaf::for_each_while(&bytes, used, |_| {
                count += 1;
                true
            });
            // The head and at most one entry per nine bytes after it.
            assert!(
                count <= 1 + (used - 16) / 9,
                "{count} entries in {used} bytes"
            );
            GroupMapLeaf::for_each_entry(&bytes, used, |_, _, _| {});
        }
    }
}

/// Applies `ops` (insert with a value, or remove) to one leaf of `capacity` bytes and
/// compares it with a `BTreeMap` after each.
fn check_ops(ops: &[(bool, u64, u64)], capacity: usize) {
    let mut leaf = vec![0u8; capacity];
    let mut used = 0;
    let mut oracle = BTreeMap::new();
    for &(insert, key, value) in ops {
        if insert {
            match GroupMapLeaf::insert(&mut leaf, used, (key, value)) {
                LeafInsert::Present => assert_eq!(oracle.get(&key), Some(&value)),
                LeafInsert::Replaced => {
                    assert!(oracle.insert(key, value).is_some_and(|old| old != value));
                }
                LeafInsert::Inserted(now) => {
                    assert!(oracle.insert(key, value).is_none());
                    used = now;
                }
                LeafInsert::Full => {
                    assert!(!oracle.contains_key(&key));
                    let mut all: Vec<Item> = oracle.iter().map(|(&k, &v)| (k, v)).collect();
                    all.push((key, value));
                    all.sort_unstable();
                    assert!(GroupMapLeaf::encoded_len(&all) > capacity);
                }
            }
        } else {
            match GroupMapLeaf::remove(&mut leaf, used, key) {
                LeafRemove::Removed(now) => {
                    assert!(oracle.remove(&key).is_some());
                    used = now;
                }
                LeafRemove::Absent => assert!(!oracle.contains_key(&key)),
                LeafRemove::Full => panic!("a removal never grows a map leaf"),
            }
        }
        let items: Vec<Item> = oracle.iter().map(|(&k, &v)| (k, v)).collect();
        let mut decoded = Vec::new();
        GroupMapLeaf::decode_into(&leaf, used, &mut decoded);
        assert_eq!(decoded, items);
        if !items.is_empty() {
            assert_eq!(used, GroupMapLeaf::encoded_len(&items));
        }
        assert_eq!(
            GroupMapLeaf::last(&leaf, used),
            items.last().map(|&(k, _)| k)
        );
        assert_eq!(
            GroupMapLeaf::lower_bound(&leaf, used, key),
            oracle.range(key..).next().map(|(&k, &v)| (k, v))
        );
    }
}

proptest! {
    #[test]
    fn group_map_leaf_matches_btreemap(
        ops in proptest::collection::vec((any::<bool>(), 0u64..500, 0u64..4), 0..120),
    ) {
        check_ops(&ops, 300);
    }

    #[test]
    fn group_map_leaf_wide_keys_match_btreemap(
        ops in proptest::collection::vec((any::<bool>(), any::<u64>(), any::<u64>()), 0..60),
    ) {
        check_ops(&ops, 400);
    }

    #[test]
    fn group_map_reads_match_the_items(
        keys in proptest::collection::vec(
            prop_oneof![0u64..300, 0u64..70_000, 0u64..(1 << 26), 0u64..(1 << 42), any::<u64>()],
            1..40),
        padding in 0usize..12,
    ) {
        check_reads(&items_of(keys), padding);
    }

    /// The whole-group encoder writes what the slot-by-slot one writes.
    #[test]
    fn whole_group_encode_matches_its_slot_by_slot_twin(
        keys in proptest::collection::vec(
            prop_oneof![0u64..300, 0u64..70_000, 0u64..(1 << 26), 0u64..(1 << 42), any::<u64>()],
            1..60),
    ) {
        let items = items_of(keys);
        let len = GroupMapLeaf::encoded_len(&items);
        let mut fast = vec![0u8; len];
        prop_assert_eq!(encode_items(&items, &mut fast), Some(len));
        let mut slow = vec![0u8; len];
        write_head(&mut slow, items[0].0);
        write_head(&mut slow[HEAD_BYTES..], items[0].1);
        let (mut p, mut prev) = (MAP_HEAD, items[0].0);
        for group in items[1..].chunks(4) {
            let mut deltas = [0; 4];
            for (d, &(k, _)) in deltas.iter_mut().zip(group) {
                *d = k.wrapping_sub(prev);
                prev = k;
            }
            p = encode_group(deltas, group, &mut slow, p).unwrap();
        }
        prop_assert_eq!(p, len);
        prop_assert_eq!(fast, slow);
    }
}
