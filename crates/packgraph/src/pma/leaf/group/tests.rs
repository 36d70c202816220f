use super::*;
use crate::pma::leaf::tests::check_ops;
use crate::pma::leaf::DeltaLeaf;
use proptest::prelude::*;

/// Every way of reading the leaf of `keys` agrees with `keys`: whole scans, counted
/// scans from every entry's position, `entry_end` chains and early stops.
fn check_reads(keys: &[u64], padding: usize) {
    let len = GroupLeaf::encoded_len(keys);
    let mut leaf = vec![0xA5u8; len + padding];
    assert_eq!(GroupLeaf::encode(keys, &mut leaf), len);
    let mut all = Vec::new();
    GroupLeaf::decode_into(&leaf, len, &mut all);
    assert_eq!(all, keys);
    let mut entries = Vec::new();
    GroupLeaf::for_each_entry(&leaf, len, |key, pos, prev| entries.push((key, pos, prev)));
    assert_eq!(entries.len(), keys.len());
    for (i, &(key, pos, prev)) in entries.iter().enumerate() {
        assert_eq!(key, keys[i]);
        assert_eq!(prev, if i == 0 { 0 } else { keys[i - 1] });
        let next = GroupLeaf::entry_end(&leaf, pos);
        if let Some(&(_, next_pos, _)) = entries.get(i + 1) {
            assert_eq!(next, next_pos, "entry {i}");
            // A prefetch of the rest of the run loads the next entry's control byte.
            let byte = GroupLeaf::first_read_byte(next);
            assert!(byte < len && byte >= HEAD_BYTES, "entry {i}: byte {byte}");
        }
        for count in [1, 3, 4, 5, 9, usize::MAX] {
            let mut got = Vec::new();
            let (visited, stopped) =
                GroupLeaf::for_count_from(&leaf, len, pos, prev, count, &mut |k| {
                    got.push(k);
                    true
                });
            let want: Vec<u64> = keys[i..].iter().copied().take(count).collect();
            assert_eq!((visited, stopped), (want.len(), false));
            assert_eq!(got, want);
            // The bulk form writes the same keys' low halves, and nothing past them.
            let mut low = vec![0xDEAD_BEEF_u32; count.min(keys.len() + 2) + 1];
            let room = low.len() - 1;
            let written = GroupLeaf::low_halves_from(&leaf, len, pos, prev, &mut low[..room]);
            assert_eq!(written, want.len().min(room), "entry {i}, count {count}");
            assert!(low[..written]
                .iter()
                .copied()
                .eq(want.iter().map(|&k| k as u32)));
            assert!(low[written..].iter().all(|&x| x == 0xDEAD_BEEF));
            // The scalar twin of the SIMD decode writes the same.
            let mut twin = vec![0xDEAD_BEEF_u32; low.len()];
            let twin_written = if len + 8 <= leaf.len() {
                low_halves::<true>(&leaf, len, pos, prev, &mut twin[..room], false)
            } else {
                low_halves::<false>(&leaf, len, pos, prev, &mut twin[..room], false)
            };
            assert_eq!(
                (twin_written, &twin),
                (written, &low),
                "entry {i}, count {count}"
            );
        }
        // Past the entry: the rest, starting from the entry's end.
        let mut rest = Vec::new();
        assert!(GroupLeaf::for_each_from(&leaf, len, next, key, |k| {
            rest.push(k);
            true
        }));
        assert_eq!(rest, keys[i + 1..]);
        // Stopping at the third key visited.
        let mut seen = 0;
        let (visited, stopped) =
            GroupLeaf::for_count_from(&leaf, len, pos, prev, usize::MAX, &mut |_| {
                seen += 1;
                seen < 3
            });
        let expect_stop = keys.len() - i >= 3;
        assert_eq!(stopped, expect_stop);
        assert_eq!(visited, if expect_stop { 3 } else { keys.len() - i });
    }
}

fn sorted(mut keys: Vec<u64>) -> Vec<u64> {
    keys.sort_unstable();
    keys.dedup();
    keys
}

#[test]
fn every_length_code_and_escape() {
    let keys = [
        0,
        1,
        0x100,
        0x1_0100,
        0x100_0100,
        0xFF_0100_0100,
        0xFF_0100_0101,
        // A five-byte difference whose low four bytes are all ones, like an escape's.
        0xFF_0100_0101 + 0x1_FFFF_FFFF,
        // One whose fifth byte is zero: a road network's next vertex, one target lower.
        0xFF_0100_0101 + 0x1_FFFF_FFFF + 0xFFFF_FFFF,
        ESCAPE + 0xFF_0100_0101,
        u64::MAX - 1,
        u64::MAX,
    ];
    // Past 27 bytes of padding every group goes through the SIMD decode where it runs.
    for padding in [0, 16, 32] {
        for start in 0..keys.len() {
            check_reads(&keys[start..], padding);
        }
    }
}

#[test]
fn table_matches_lengths() {
    for ctrl in 0..256usize {
        let lens: Vec<usize> = (0..4).map(|s| LEN[(ctrl >> (2 * s)) & 3]).collect();
        let t = GROUPS[ctrl] as usize;
        assert_eq!(t & 0xFF, lens[0]);
        assert_eq!((t >> 8) & 0xFF, lens[0] + lens[1]);
        assert_eq!((t >> 16) & 0xFF, lens[0] + lens[1] + lens[2]);
        assert_eq!(t >> 24, lens.iter().sum::<usize>());
        for (slot, &len) in lens.iter().enumerate() {
            assert_eq!(MASKS[ctrl][slot], u64::MAX >> (64 - 8 * len));
        }
    }
}

#[test]
fn full_leaf_refuses_and_keeps_its_keys() {
    let keys: Vec<u64> = (0..20).map(|i| i * 1000).collect();
    let len = GroupLeaf::encoded_len(&keys);
    let mut leaf = vec![0u8; len];
    GroupLeaf::encode(&keys, &mut leaf);
    let before = leaf.clone();
    assert_eq!(GroupLeaf::insert(&mut leaf, len, 5), LeafInsert::Full);
    assert_eq!(leaf, before);
    assert!(GroupLeaf::encode_bounded(&keys, &mut vec![0u8; len - 1]).is_none());
}

#[test]
fn removal_that_lengthens_the_leaf_is_refused_when_full() {
    // Removing the middle key merges 5 + 1 bytes into an escaped 13.
    let keys = [0, ESCAPE - 1, ESCAPE];
    let len = GroupLeaf::encoded_len(&keys);
    let mut leaf = vec![0u8; len];
    GroupLeaf::encode(&keys, &mut leaf);
    let before = leaf.clone();
    assert_eq!(
        GroupLeaf::remove(&mut leaf, len, ESCAPE - 1),
        LeafRemove::Full
    );
    assert_eq!(leaf, before);
    let mut roomy = vec![0u8; len + 8];
    GroupLeaf::encode(&keys, &mut roomy);
    assert_eq!(
        GroupLeaf::remove(&mut roomy, len, ESCAPE - 1),
        LeafRemove::Removed(GroupLeaf::encoded_len(&[0, ESCAPE]))
    );
    assert_eq!(GroupLeaf::last(&roomy, len + 7), Some(ESCAPE));
}

proptest! {
    #[test]
    fn group_leaf_matches_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..500), 0..120)) {
        check_ops::<GroupLeaf>(&ops, 96);
    }

    #[test]
    fn group_leaf_wide_keys_match_btreeset(ops in proptest::collection::vec((any::<bool>(), any::<u64>()), 0..60)) {
        check_ops::<GroupLeaf>(&ops, 160);
    }

    #[test]
    fn group_reads_match_the_keys(
        keys in proptest::collection::vec(
            prop_oneof![0u64..300, 0u64..70_000, 0u64..(1 << 26), any::<u64>()], 1..40),
        padding in prop_oneof![Just(0usize), Just(16), Just(32)],
    ) {
        check_reads(&sorted(keys), padding);
    }

    #[test]
    fn whole_group_encode_matches_its_slot_by_slot_twin(
        keys in proptest::collection::vec(
            prop_oneof![0u64..300, 0u64..70_000, 0u64..(1 << 26), 0u64..(1 << 42), any::<u64>()], 1..60),
        room in 0usize..40,
    ) {
        let keys = sorted(keys);
        let len = GroupLeaf::encoded_len(&keys);
        let mut fast = vec![0u8; len + room];
        let mut slow = vec![0u8; len + room];
        prop_assert_eq!(encode_keys(&keys, &mut fast), Some(len));
        slow[..HEAD_BYTES].copy_from_slice(&keys[0].to_le_bytes());
        let mut p = HEAD_BYTES;
        let mut prev = keys[0];
        for group in keys[1..].chunks(4) {
            p = encode_group(prev, group, &mut slow, p).expect("sized");
            prev = group[group.len() - 1];
        }
        prop_assert_eq!(p, len);
        prop_assert_eq!(&fast[..len], &slow[..len]);
        // One byte short never fits.
        prop_assert_eq!(encode_keys(&keys, &mut vec![0u8; len - 1]), None);
    }

    #[test]
    fn group_and_byte_codes_decode_alike(keys in proptest::collection::vec(any::<u32>(), 1..200)) {
        // Graph-shaped keys: vertex in the high half.
        let keys = sorted(keys.into_iter().map(|k| u64::from(k >> 24) << 32 | u64::from(k)).collect());
        let mut group = vec![0u8; GroupLeaf::encoded_len(&keys) + 16];
        let mut bytes = vec![0u8; DeltaLeaf::encoded_len(&keys) + 16];
        let (g, b) = (GroupLeaf::encode(&keys, &mut group), DeltaLeaf::encode(&keys, &mut bytes));
        let (mut from_group, mut from_bytes) = (Vec::new(), Vec::new());
        GroupLeaf::decode_into(&group, g, &mut from_group);
        DeltaLeaf::decode_into(&bytes, b, &mut from_bytes);
        prop_assert_eq!(&from_group, &keys);
        prop_assert_eq!(from_bytes, from_group);
    }
}
