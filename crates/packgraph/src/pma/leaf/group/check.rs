//! [`GroupLeaf`]'s check of a leaf read from a file ([`LeafCodec::check_encoding`]): one
//! pass over the groups that decodes each one as the scans do and checks that its bytes are
//! the ones the encoder writes for the keys they decode to.
//!
//! A leaf passes exactly when its `used` bytes equal `encode(keys)` for the strictly
//! increasing keys it decodes to, so that every operation on it meets a leaf the encoder
//! could have written:
//!
//! * every group but the last holds four slots; the last one ends exactly at `used`, and
//!   its unused slots have code 0 (a control byte alone is not a group);
//! * every slot lies within `used` and has the shortest code for its difference: an
//!   escape only for a difference of at least `2^40 - 1`;
//! * every difference is at least 1 and no key wraps past `u64::MAX`.
//!
//! Whole groups without escapes take the fast path: the four differences at once, as
//! the scans read them, each tested once against both bounds of its code
//! ([`shortest_group`]): at least the least difference its code is the shortest for
//! ([`LEAST`], one row per control byte: a slot of `n` bytes holds less than `2^(8n)`, so
//! its code is the shortest exactly when the difference needs more bytes than the next
//! shorter code has, and every difference is at least 1), and not the escape;
//! their sum checked for a key wrapping past `u64::MAX`, and `item_ok` on the four keys,
//! all combined without a branch per key. Anything else (escapes, the last group, a
//! failed check) goes slot by slot, which also names what does not hold.

use super::{
    code_of, group_at, load, per_slot, read_head, ESCAPE, ESCAPED_BYTES, HEAD_BYTES, LEN, MASK,
};
use crate::pma::leaf::LeafKeys;

/// The least difference each length code is the shortest code for (and at least 1): a
/// difference below `LEAST_BY_CODE[c]` fits in a shorter code than `c`.
const LEAST_BY_CODE: [u64; 4] = [1, 1 << 8, 1 << 16, 1 << 24];

/// For each control byte, [`LEAST_BY_CODE`] of its four slots' codes.
static LEAST: [[u64; 4]; 256] = per_slot(LEAST_BY_CODE);

/// How many differences from [`LEAST_BY_CODE`] on each length code is the shortest code
/// for without being an escape: up to `2^(8n)` for a slot of `n < 5` bytes, up to the
/// escape `2^40 - 1` for the five-byte code.
const SPAN_BY_CODE: [u64; 4] = [
    (1 << 8) - 1,
    (1 << 16) - (1 << 8),
    (1 << 24) - (1 << 16),
    ESCAPE - (1 << 24),
];

/// For each control byte, [`SPAN_BY_CODE`] of its four slots' codes.
static SPAN: [[u64; 4]; 256] = per_slot(SPAN_BY_CODE);

/// The four differences of the whole group whose control byte is at `c < used` and the
/// next group's control offset, if each difference has the shortest code and none is an
/// escape (`d - LEAST` below `SPAN`: one test a slot, both bounds at once); `None`
/// otherwise, or for a short group (the leaf's last).
#[inline(always)]
fn shortest_group<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], usize)> {
    let (d, ctrl, end) = group_at::<PADDED>(leaf, used, c)?;
    let (least, span) = (&LEAST[ctrl], &SPAN[ctrl]);
    let shortest = (d[0].wrapping_sub(least[0]) < span[0])
        & (d[1].wrapping_sub(least[1]) < span[1])
        & (d[2].wrapping_sub(least[2]) < span[2])
        & (d[3].wrapping_sub(least[3]) < span[3]);
    shortest.then_some((d, end))
}

/// [`LeafCodec::check_encoding`](crate::pma::LeafCodec::check_encoding) for a leaf of
/// `used >= HEAD_BYTES` bytes; `PADDED`: `leaf` holds at least 8 bytes past `used`.
pub(super) fn check<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    item_ok: &impl Fn(u64) -> bool,
) -> Result<LeafKeys, String> {
    if used < HEAD_BYTES || used > leaf.len() {
        return Err(format!("uses {used} bytes of a {}-byte leaf", leaf.len()));
    }
    let head = read_head(leaf);
    if !item_ok(head) {
        return Err(format!("item {head} is not valid here"));
    }
    let (mut key, mut count) = (head, 1usize);
    let mut c = HEAD_BYTES;
    while c < used {
        if let Some(([d0, d1, d2, d3], end)) = shortest_group::<PADDED>(leaf, used, c) {
            // Each difference is below 2^40 (no escape): their sum does not overflow.
            let (k3, wrapped) = key.overflowing_add(d0 + d1 + d2 + d3);
            let k0 = key.wrapping_add(d0);
            let k1 = k0.wrapping_add(d1);
            let k2 = k1.wrapping_add(d2);
            let valid = item_ok(k0) & item_ok(k1) & item_ok(k2) & item_ok(k3);
            if !wrapped & valid {
                (key, count, c) = (k3, count + 4, end);
                continue;
            }
        }
        c = check_group(leaf, used, c, (&mut key, &mut count), item_ok)?;
    }
    Ok(LeafKeys {
        count,
        first: head,
        last: key,
    })
}

/// Checks the group whose control byte is at `c < used` slot by slot, going on from the
/// key `last` (`count` keys so far); returns the next group's control offset, or what does
/// not hold.
#[inline(never)]
fn check_group(
    leaf: &[u8],
    used: usize,
    c: usize,
    (last, count): (&mut u64, &mut usize),
    item_ok: &impl Fn(u64) -> bool,
) -> Result<usize, String> {
    let ctrl = usize::from(leaf[c]);
    let mut p = c + 1;
    if p >= used {
        return Err(format!(
            "the control byte at byte {c} ends the leaf without a difference"
        ));
    }
    for slot in 0..4 {
        if p == used {
            if ctrl >> (2 * slot) != 0 {
                return Err(format!(
                    "the last group's control byte {ctrl:#04x} at byte {c} gives a length to \
                     slot {slot} past the leaf's end"
                ));
            }
            return Ok(p);
        }
        let code = (ctrl >> (2 * slot)) & 3;
        let past = |len: usize| {
            format!("the difference at byte {p} runs past the {used} bytes used ({len} bytes)")
        };
        if p + LEN[code] > used {
            return Err(past(LEN[code]));
        }
        let mut delta = load(leaf, p) & MASK[code];
        let len = if code == 3 && delta == ESCAPE {
            if p + ESCAPED_BYTES > used {
                return Err(past(ESCAPED_BYTES));
            }
            delta = load(leaf, p + 5);
            if delta < ESCAPE {
                return Err(format!(
                    "the difference {delta} at byte {p} is escaped but fits in {} bytes",
                    LEN[code_of(delta)]
                ));
            }
            ESCAPED_BYTES
        } else {
            if code_of(delta) != code {
                return Err(format!(
                    "the difference {delta} at byte {p} takes {} bytes where {} do",
                    LEN[code],
                    LEN[code_of(delta)]
                ));
            }
            LEN[code]
        };
        let key = last.wrapping_add(delta);
        if key <= *last {
            return Err(format!("key {key} after {last}"));
        }
        if !item_ok(key) {
            return Err(format!("item {key} is not valid here"));
        }
        (*last, *count, p) = (key, *count + 1, p + len);
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::super::GroupLeaf;
    use super::*;
    use crate::pma::leaf::LeafCodec;
    use proptest::prelude::*;

    /// The oracle: a leaf passes when it decodes to strictly increasing keys that all pass
    /// `item_ok` and whose encoding is its `used` bytes exactly.
    fn oracle(leaf: &[u8], used: usize, item_ok: &impl Fn(u64) -> bool) -> Option<LeafKeys> {
        let mut keys = Vec::new();
        GroupLeaf::decode_into(leaf, used, &mut keys);
        if keys.is_empty()
            || keys.windows(2).any(|w| w[0] >= w[1])
            || !keys.iter().all(|&k| item_ok(k))
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
    fn agrees(leaf: &[u8], used: usize, item_ok: &impl Fn(u64) -> bool) -> Option<LeafKeys> {
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
        let exact = check::<false>(&leaf[..used], used, item_ok);
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
    fn slot_by_slot(leaf: &[u8], used: usize, item_ok: &impl Fn(u64) -> bool) -> Option<LeafKeys> {
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
            for (at, byte, control) in edits {
                let at = if control && !controls.is_empty() {
                    controls[at.index(controls.len())]
                } else {
                    at.index(leaf.len())
                };
                leaf[at] = byte;
            }
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
            let err = check::<true>(&padded, used, &|_| true).unwrap_err();
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
}
