//! Tests of the leaf check: every path against the oracle, the scalar check against the
//! SIMD one, alone and two leaves side by side.

use super::super::GroupLeaf;
use super::*;
use crate::pma::leaf::{ArcCheck, LeafCodec};
use proptest::prelude::*;

/// The oracle: a leaf passes when it decodes to strictly increasing keys that all pass
/// `item_ok` and whose encoding is its `used` bytes exactly.
fn oracle(leaf: &[u8], used: usize, item_ok: &impl Fn(u64) -> bool) -> Option<LeafKeys> {
    let mut keys = Vec::new();
    GroupLeaf::decode_into(leaf, used, &mut keys);
    if keys.is_empty() || keys.windows(2).any(|w| w[0] >= w[1]) || !keys.iter().all(|&k| item_ok(k))
    {
        return None;
    }
    let mut encoded = vec![0u8; used];
    let len = GroupLeaf::encode_bounded(&keys, &mut encoded)?;
    (len == used && encoded == leaf[..used]).then(|| LeafKeys {
        count: keys.len(),
        first: keys[0],
        last: keys[keys.len() - 1],
    })
}

/// Checks `leaf` with `used` bytes against the oracle, with the padding the PMA gives
/// its leaves (the fast path) and without (a copy cut at `used`).
fn agrees(leaf: &[u8], used: usize, item_ok: &(impl Fn(u64) -> bool + Sync)) -> Option<LeafKeys> {
    let mut padded = leaf[..used].to_vec();
    padded.resize(used + 16, 0);
    let want = oracle(&padded, used, item_ok);
    let fast = GroupLeaf::check_encoding(&padded, used, item_ok).expect("GroupLeaf checks");
    assert_eq!(
        fast.as_ref().ok(),
        want.as_ref(),
        "padded, {:?}",
        fast.as_ref().err()
    );
    let exact = check::<false>(&leaf[..used], used, item_ok, false);
    assert_eq!(exact.ok(), want, "unpadded");
    want
}

/// Keys with gaps of every code length, escapes included.
fn keys_strategy() -> impl Strategy<Value = Vec<u64>> {
    let gap = prop_oneof![
        4 => 1u64..256,
        2 => 256u64..65_536,
        2 => 65_536u64..1 << 24,
        1 => (1u64 << 24)..ESCAPE,
        1 => ESCAPE..ESCAPE + 3,
        1 => (1u64 << 41)..1 << 50,
    ];
    (any::<u32>(), proptest::collection::vec(gap, 0..60)).prop_map(|(start, gaps)| {
        let mut key = u64::from(start);
        let mut keys = vec![key];
        for gap in gaps {
            match key.checked_add(gap) {
                Some(next) => key = next,
                None => break,
            }
            keys.push(key);
        }
        keys
    })
}

fn encoded(keys: &[u64]) -> Vec<u8> {
    let mut leaf = vec![0u8; GroupLeaf::encoded_len(keys)];
    GroupLeaf::encode(keys, &mut leaf);
    leaf
}

proptest! {
    /// What the encoder writes passes, with its keys; an `item_ok` that refuses some
    /// key refuses the leaf.
    #[test]
    fn encoded_leaves_pass(keys in keys_strategy(), refuse in any::<prop::sample::Index>()) {
        let leaf = encoded(&keys);
        let found = agrees(&leaf, leaf.len(), &|_| true);
        prop_assert_eq!(found, Some(LeafKeys {
            count: keys.len(),
            first: keys[0],
            last: keys[keys.len() - 1],
        }));
        let refused = keys[refuse.index(keys.len())];
        prop_assert_eq!(agrees(&leaf, leaf.len(), &|k| k != refused), None);
    }

    /// Damaged leaves (bytes changed, the used length moved, bytes cut or appended)
    /// pass exactly when the oracle says so.
    #[test]
    fn damaged_leaves_agree_with_the_oracle(
        keys in keys_strategy(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        grow in 0usize..6,
        cut in 0usize..6,
    ) {
        let mut leaf = encoded(&keys);
        for (at, byte) in edits {
            let at = at.index(leaf.len());
            leaf[at] = byte;
        }
        leaf.extend(std::iter::repeat_n(0x41, grow));
        let used = leaf.len().saturating_sub(cut).max(HEAD_BYTES);
        agrees(&leaf, used, &|_| true);
        agrees(&leaf, used, &|k| k % 5 != 2);
    }

    /// Random bytes pass exactly when the oracle says so.
    #[test]
    fn random_bytes_agree_with_the_oracle(
        bytes in proptest::collection::vec(any::<u8>(), HEAD_BYTES..80),
    ) {
        agrees(&bytes, bytes.len(), &|_| true);
    }
}

/// The slot-by-slot check alone: every group through [`check_group`], no fast path.
fn slot_by_slot(
    leaf: &[u8],
    used: usize,
    item_ok: &(impl Fn(u64) -> bool + Sync),
) -> Option<LeafKeys> {
    let head = read_head(leaf);
    if !item_ok(head) {
        return None;
    }
    let (mut key, mut count, mut c) = (head, 1usize, HEAD_BYTES);
    while c < used {
        c = check_group(leaf, used, c, (&mut key, &mut count), item_ok).ok()?;
    }
    Some(LeafKeys {
        count,
        first: head,
        last: key,
    })
}

/// Keys whose gaps sit at the edges of the length codes (1, 255, 256, 65535, 65536,
/// ...), where a slot one byte too long or a wrap is easiest to miss.
fn edge_keys_strategy() -> impl Strategy<Value = Vec<u64>> {
    let edge = prop::sample::select(vec![
        1u64,
        2,
        255,
        256,
        257,
        65_535,
        65_536,
        (1 << 24) - 1,
        1 << 24,
        ESCAPE - 1,
        ESCAPE,
    ]);
    let start = prop_oneof![any::<u32>().prop_map(u64::from), Just(u64::MAX - (1 << 42))];
    (start, proptest::collection::vec(edge, 4..48)).prop_map(|(start, gaps)| {
        let mut keys = vec![start];
        for gap in gaps {
            match keys[keys.len() - 1].checked_add(gap) {
                Some(next) => keys.push(next),
                None => break,
            }
        }
        keys
    })
}

/// Writes each edit's byte into `leaf`: at one of the control bytes `controls` when the
/// edit says so and there are any, else anywhere.
fn damage(leaf: &mut [u8], controls: &[usize], edits: &[(prop::sample::Index, u8, bool)]) {
    for &(at, byte, control) in edits {
        let at = if control && !controls.is_empty() {
            controls[at.index(controls.len())]
        } else {
            at.index(leaf.len())
        };
        leaf[at] = byte;
    }
}

proptest! {
    /// Leaves of many whole groups, as written and damaged (bytes changed, control
    /// bytes most often): the fast path over whole groups decides as the slot-by-slot
    /// check and the oracle do.
    #[test]
    fn whole_groups_agree_with_the_slot_by_slot_check(
        keys in edge_keys_strategy(),
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<u8>(), any::<bool>()),
            0..3,
        ),
        refuse in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut leaf = encoded(&keys);
        let controls: Vec<usize> = (0..leaf.len())
            .filter(|&at| {
                let mut c = HEAD_BYTES;
                while c < at {
                    c += 1 + (super::super::GROUPS[usize::from(leaf[c])] >> 24) as usize;
                }
                c == at
            })
            .collect();
        damage(&mut leaf, &controls, &edits);
        let refused = refuse.map(|i| keys[i.index(keys.len())]);
        let item_ok = |k: u64| Some(k) != refused;
        let want = agrees(&leaf, leaf.len(), &item_ok);
        prop_assert_eq!(slot_by_slot(&leaf, leaf.len(), &item_ok), want);
    }
}

/// Leaves that decode to increasing keys but are not what the encoder writes, each
/// refused with a message naming it.
#[test]
fn leaves_the_encoder_does_not_write_are_refused() {
    let keys = [1000, 1001, 1300, 1301, 1302, 1303, 1304];
    let leaf = encoded(&keys);
    assert!(agrees(&leaf, leaf.len(), &|_| true).is_some());
    let refused = |leaf: &[u8], used: usize, what: &str| {
        assert_eq!(agrees(leaf, used, &|_| true), None);
        let mut padded = leaf[..used].to_vec();
        padded.resize(used + 16, 0);
        let err = check::<true>(&padded, used, &|_| true, false).unwrap_err();
        assert!(err.contains(what), "{err:?} should say {what:?}");
    };
    // The last group (2 differences) gives an unused slot a length.
    let mut codes = leaf.clone();
    let last = HEAD_BYTES + 1 + 1 + 2 + 1 + 1;
    assert_eq!(codes[last] >> 6, 0);
    codes[last] |= 1 << 6;
    refused(&codes, codes.len(), "past the leaf's end");
    // A difference of 1 in two bytes.
    let long = [&1000u64.to_le_bytes()[..], &[0b01], &[1, 0]].concat();
    refused(&long, long.len(), "takes 2 bytes where 1 do");
    // A difference of 5 escaped.
    let escaped = [
        &1000u64.to_le_bytes()[..],
        &[0b11],
        &ESCAPE.to_le_bytes()[..5],
        &5u64.to_le_bytes(),
    ]
    .concat();
    refused(&escaped, escaped.len(), "is escaped");
    // A control byte alone, and a slot cut by the used length.
    refused(&leaf, HEAD_BYTES + 1, "without a difference");
    let cut = [&1000u64.to_le_bytes()[..], &[0b10], &[1, 1, 1]].concat();
    refused(&cut, cut.len() - 1, "runs past");
    // A difference of 0, and a key wrapping past the largest.
    let zero = [&1000u64.to_le_bytes()[..], &[0], &[0]].concat();
    refused(&zero, zero.len(), "key 1000 after 1000");
    let wrap = [&(u64::MAX - 1).to_le_bytes()[..], &[0], &[3]].concat();
    refused(&wrap, wrap.len(), "after");
}

/// A graph's check of `leaf` (`used` bytes) by every path, which must agree: scalar,
/// and by SSSE3 where the CPU has it, on copies padded by 8, 16 and 40 bytes and on one
/// cut at `used`; the same closure without the graph's shape; and the oracle.
fn arcs_agree(
    leaf: &[u8],
    used: usize,
    n: u64,
    rest: impl Fn(u64) -> bool + Sync,
) -> Result<LeafKeys, String> {
    let arcs = ArcCheck::new(n, rest);
    let item_ok = |k: u64| ItemCheck::<GroupLeaf>::ok(&arcs, k);
    let exact = &leaf[..used];
    let scalar = check::<false>(exact, used, &arcs, false);
    assert_eq!(
        check::<false>(exact, used, &item_ok, false),
        scalar,
        "closure"
    );
    let simd = super::super::slice::simd_available();
    assert_eq!(
        check::<false>(exact, used, &arcs, simd),
        scalar,
        "exact, simd {simd}"
    );
    for pad in [8, 16, 40] {
        let mut padded = exact.to_vec();
        padded.resize(used + pad, 0x5A);
        for fast in [false, simd] {
            assert_eq!(
                check::<true>(&padded, used, &arcs, fast),
                scalar,
                "padded {pad}, simd {fast}"
            );
        }
        assert_eq!(
            GroupLeaf::check_encoding(&padded, used, &arcs).expect("GroupLeaf checks"),
            scalar
        );
    }
    let mut padded = exact.to_vec();
    padded.resize(used + 16, 0);
    assert_eq!(
        scalar.as_ref().ok(),
        oracle(&padded, used, &item_ok).as_ref(),
        "{scalar:?}"
    );
    scalar
}

/// Graph-shaped keys `source << 32 | target`: runs of a few sources (near each other,
/// or far apart: escapes), each with increasing targets by gaps of every code length
/// below five bytes; with `clean`, only arcs that pass a check of `n` vertices (targets
/// below `n`, no self loops), else some targets at or past `n` and self loops too.
fn arc_keys_strategy() -> impl Strategy<Value = (Vec<u64>, u64)> {
    let n = prop_oneof![
        Just(40u64),
        Just(1_000),
        Just(1 << 20),
        Just(ARC_VERTICES_MAX - 3),
        Just(ARC_VERTICES_MAX),
        Just(ARC_VERTICES_MAX + 1),
        Just(u64::from(u32::MAX)),
    ];
    let gap = prop_oneof![
        8 => 1u64..4,
        4 => 4u64..256,
        2 => 256u64..65_536,
        1 => 65_536u64..1 << 24,
        1 => (1u64 << 24)..1 << 26,
    ];
    let run = (
        prop_oneof![3 => 1u64..3, 1 => 3u64..400],
        any::<u32>(),
        proptest::collection::vec(gap, 1..40),
    );
    let first = prop_oneof![Just(0u64), Just((1 << 31) - 3), Just((1 << 32) - 4)];
    (
        n,
        first,
        proptest::collection::vec(run, 1..5),
        any::<bool>(),
    )
        .prop_map(|(n, first, runs, clean)| {
            let (mut keys, mut source) = (Vec::new(), first);
            for (step, start, gaps) in runs {
                source = (source + step) % (1 << 32);
                let mut target = u64::from(start) % (n + 2);
                for gap in gaps {
                    if target >= 1 << 32 {
                        break;
                    }
                    if !clean || (target < n && target != source) {
                        keys.push(source << 32 | target);
                    }
                    target += gap;
                }
            }
            keys.sort_unstable();
            keys.dedup();
            if keys.is_empty() {
                keys.push(1);
            }
            (keys, n)
        })
}

proptest! {
    /// Graph leaves, as written and damaged (bytes changed, control bytes most often,
    /// the used length cut into a short group or moved past the keys): the SIMD path of
    /// a graph's check decides and counts as the scalar one, padded or not.
    #[test]
    fn arc_groups_agree_with_the_scalar_check(
        (keys, n) in arc_keys_strategy(),
        edits in proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<u8>(), any::<bool>()),
            0..3,
        ),
        cut in 0usize..6,
        refuse in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let mut leaf = encoded(&keys);
        let whole = arcs_agree(&leaf, leaf.len(), n, |_| true);
        let clean = keys.iter().all(|&k| k & 0xFFFF_FFFF < n && k >> 32 != k & 0xFFFF_FFFF);
        prop_assert_eq!(whole.is_ok(), clean);
        let refused = refuse.map(|i| keys[i.index(keys.len())]);
        let refusing = arcs_agree(&leaf, leaf.len(), n, |k| Some(k) != refused);
        prop_assert!(refused.is_none() || refusing.is_err());
        let mut controls = Vec::new();
        let mut c = HEAD_BYTES;
        while c < leaf.len() {
            controls.push(c);
            c += 1 + (super::super::GROUPS[usize::from(leaf[c])] >> 24) as usize;
        }
        damage(&mut leaf, &controls, &edits);
        let used = leaf.len().saturating_sub(cut).max(HEAD_BYTES);
        let _ = arcs_agree(&leaf, used, n, |_| true);
        let _ = arcs_agree(&leaf, used, n, |k| k % 7 != 3);
    }
}

/// The leaf of `keys` with `edits` made (control bytes most often) and its used length
/// cut by `cut` bytes.
fn damaged_leaf(
    keys: &[u64],
    edits: &[(prop::sample::Index, u8, bool)],
    cut: usize,
) -> (Vec<u8>, usize) {
    let mut leaf = encoded(keys);
    let mut controls = Vec::new();
    let mut c = HEAD_BYTES;
    while c < leaf.len() {
        controls.push(c);
        c += 1 + (super::super::GROUPS[usize::from(leaf[c])] >> 24) as usize;
    }
    damage(&mut leaf, &controls, edits);
    let used = leaf.len().saturating_sub(cut).max(HEAD_BYTES);
    (leaf, used)
}

fn edits_strategy() -> impl Strategy<Value = Vec<(prop::sample::Index, u8, bool)>> {
    proptest::collection::vec(
        (any::<prop::sample::Index>(), any::<u8>(), any::<bool>()),
        0..3,
    )
}

#[cfg(target_arch = "x86_64")]
proptest! {
    /// Two graph leaves checked side by side, as written or damaged, either or both
    /// (bytes changed, control bytes most often, the used length cut): each decides,
    /// counts and words its error as the scalar check of it alone, padded by 8, 16 or
    /// 40 bytes, through the codec's pair check too.
    #[test]
    fn paired_arc_checks_agree_with_the_scalar_check(
        (keys_a, n) in arc_keys_strategy(),
        (keys_b, _) in arc_keys_strategy(),
        edits_a in edits_strategy(),
        edits_b in edits_strategy(),
        cuts in (0usize..6, 0usize..6),
        refuse in any::<bool>(),
    ) {
        if !super::super::slice::simd_available() {
            return Ok(());
        }
        let (leaf_a, used_a) = damaged_leaf(&keys_a, &edits_a, cuts.0);
        let (leaf_b, used_b) = damaged_leaf(&keys_b, &edits_b, cuts.1);
        let arcs = ArcCheck::new(n, move |k: u64| !refuse || k % 7 != 3);
        let want = [
            check::<false>(&leaf_a[..used_a], used_a, &arcs, false),
            check::<false>(&leaf_b[..used_b], used_b, &arcs, false),
        ];
        for pad in [8, 16, 40] {
            let padded = |leaf: &[u8], used: usize| {
                let mut padded = leaf[..used].to_vec();
                padded.resize(used + pad, 0x5A);
                padded
            };
            let (a, b) = (padded(&leaf_a, used_a), padded(&leaf_b, used_b));
            let got = check_pair((&a, used_a), (&b, used_b), &arcs);
            prop_assert_eq!(&got, &want, "padded {}", pad);
            let by_codec = GroupLeaf::check_encoding_pair((&a, used_a), (&b, used_b), &arcs);
            prop_assert_eq!(by_codec.as_ref(), Some(&want));
        }
    }
}

#[cfg(target_arch = "x86_64")]
/// A graph's leaf of one source's arcs in 1-, 2- and 3-byte slots: the SIMD path takes
/// every whole group and stops at each kind of bad group (a target at `n`, a self
/// loop, a non-shortest code, a five-byte slot), leaving it to the scalar check, which
/// names it.
#[test]
fn arc_groups_take_whole_groups_and_stop_at_bad_ones() {
    if !super::super::slice::simd_available() {
        return;
    }
    let n = 100_000u64;
    let source = 7u64 << 32;
    let targets: Vec<u64> = (0..41).map(|i| 20 + i * i * 37).collect();
    let keys: Vec<u64> = targets.iter().map(|&v| source | v).collect();
    let leaf = encoded(&keys);
    let mut padded = leaf.clone();
    padded.resize(leaf.len() + 32, 0);
    let arcs = ArcCheck::new(n, |_: u64| true);
    // SAFETY: the CPU has SSSE3 (checked above); the head passes the check.
    let (c, key, taken) = unsafe {
        super::super::x86::arc_groups_ssse3(&padded, leaf.len(), HEAD_BYTES, keys[0], &arcs)
    };
    assert_eq!((c, key, taken), (leaf.len(), keys[40], 40));
    let found = arcs_agree(&leaf, leaf.len(), n, |_| true);
    assert_eq!(found.map(|k| k.count), Ok(41));
    // The last target at `n`, and a self loop (target 7) as the head's successor.
    let err = arcs_agree(&leaf, leaf.len(), keys[40] & 0xFFFF_FFFF, |_| true).unwrap_err();
    assert!(
        err.contains(&format!("item {} is not valid", keys[40])),
        "{err}"
    );
    let looped = [&[source | 3, source | 7][..], &keys[1..]].concat();
    let leaf = encoded(&looped);
    let err = arcs_agree(&leaf, leaf.len(), n, |_| true).unwrap_err();
    assert!(
        err.contains(&format!("item {} is not valid", source | 7)),
        "{err}"
    );
    // A difference of 1 in two bytes.
    let long = [&(source | 3).to_le_bytes()[..], &[0b01], &[1, 0, 1, 1, 1]].concat();
    let err = arcs_agree(&long, long.len(), n, |_| true).unwrap_err();
    assert!(err.contains("takes 2 bytes where 1 do"), "{err}");
    // The next sources' first arcs (five-byte slots, one with a target below the one
    // before), taken by the SIMD path; a jump of 300 sources is an escape, left to the
    // scalar check.
    let next = [
        &keys[..9],
        &[
            (8 << 32) | 5,
            (8 << 32) | 60_000,
            (9 << 32) | 11,
            (9 << 32) | 12,
        ][..],
        &[
            (309 << 32) | 2,
            (309 << 32) | 3,
            (309 << 32) | 4,
            (309 << 32) | 5,
        ][..],
    ]
    .concat();
    let leaf = encoded(&next);
    let mut padded = leaf.clone();
    padded.resize(leaf.len() + 32, 0);
    // SAFETY: the CPU has SSSE3 (checked above); the head passes the check.
    let (_, key, taken) = unsafe {
        super::super::x86::arc_groups_ssse3(&padded, leaf.len(), HEAD_BYTES, next[0], &arcs)
    };
    assert_eq!((key, taken), (next[12], 12));
    assert_eq!(
        arcs_agree(&leaf, leaf.len(), n, |_| true).map(|k| k.count),
        Ok(17)
    );
}
