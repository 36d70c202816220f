//! Inserting or removing one key in place (above the head).
//!
//! Only the group the key falls in changes its keys (and, for a removal, the next group,
//! whose first difference may now span the removed key). Every later difference keeps its
//! value and its bytes, but moves one slot along: forward after an insert, back after a
//! removal. So the groups after the edited ones are not decoded: each new group is the
//! slots carried over from the previous old group followed by the leading slots of the
//! next, its control byte the two control bytes' codes shifted together, its data two
//! byte copies. (Measured faster than decoding the tail into keys and encoding it again,
//! see CHANGELOG; most of what is left is the walk to the key's group and the chain of
//! control bytes after it.)
//!
//! The leaf's bytes from the edited group on are copied aside first, so a rewrite that
//! runs out of room puts them back and leaves the leaf as it was, free bytes included.

use std::cell::RefCell;

use super::{encode_groups, full_group, read_head, slot_at, write_slot, GROUPS, HEAD_BYTES};

/// Which edit [`edit`] makes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Edit {
    Insert,
    Remove,
}

/// How an [`edit`] went.
pub(super) enum TailEdit {
    /// The edit changed nothing (the key was present for an insert, absent for a
    /// removal); neither did the leaf.
    Unchanged,
    /// The tail was rewritten; the leaf now uses this many bytes.
    Written(usize),
    /// The edited tail does not fit; the leaf is unchanged.
    Full,
}

/// Zero bytes after the copied tail, so that its slots can be read 16 bytes at a time.
const TAIL_PADDING: usize = 32;

/// Bytes of a group's data at most (four escaped slots), with room for a 16-byte copy.
const SLOTS_BYTES: usize = 4 * 13 + 16;

thread_local! {
    /// Scratch for in-place edits: the leaf's bytes from the edited group on.
    static TAIL: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The control byte offset of the group holding the first difference whose key is `>= key`
/// (the last group if every key is smaller; `used` if the leaf holds only its head), and
/// the key before that group; `key` is above the leaf's head.
pub(super) fn group_of(leaf: &[u8], used: usize, key: u64) -> (usize, u64) {
    // Leaves inside an array have padding after them: loads need no bounds checks.
    if used.saturating_add(8) <= leaf.len() {
        group_of_in::<true>(leaf, used, key)
    } else {
        group_of_in::<false>(leaf, used, key)
    }
}

#[inline(always)]
fn group_of_in<const PADDED: bool>(leaf: &[u8], used: usize, key: u64) -> (usize, u64) {
    let (mut c, mut prev) = (HEAD_BYTES, read_head(leaf));
    while c < used {
        let (last, next) = match full_group::<PADDED>(leaf, used, c) {
            Some(([d0, d1, d2, d3], end)) => (
                prev.wrapping_add(d0)
                    .wrapping_add(d1)
                    .wrapping_add(d2)
                    .wrapping_add(d3),
                end,
            ),
            None => {
                let slots = Slots::of(leaf, used, c);
                (slots.keys(leaf, prev, |_| {}), slots.at[slots.n])
            }
        };
        // The last group also takes keys above all others: it may be short, and only
        // the last group may be.
        if last >= key || next >= used {
            return (c, prev);
        }
        (c, prev) = (next, last);
    }
    (used, prev)
}

/// The slots of one group: where each starts and the group ends (`at[n]`), and their
/// length codes.
struct Slots {
    at: [usize; 5],
    ctrl: u8,
    /// Slots in the group: 4, or fewer in the leaf's last group.
    n: usize,
}

impl Slots {
    /// The slots of the group whose control byte is at `c < used`: the group table's
    /// offsets for a full group without escapes (what [`full_group`] reads), else slot by
    /// slot.
    #[inline(always)]
    fn of(bytes: &[u8], used: usize, c: usize) -> Self {
        let ctrl = bytes[c];
        let first = c + 1;
        if let Some((_, end)) = full_group::<false>(bytes, used, c) {
            let offsets = GROUPS[usize::from(ctrl)] as usize;
            return Self {
                at: [
                    first,
                    first + (offsets & 0xFF),
                    first + ((offsets >> 8) & 0xFF),
                    first + ((offsets >> 16) & 0xFF),
                    end,
                ],
                ctrl,
                n: 4,
            };
        }
        let mut at = [first; 5];
        let mut n = 0;
        while n < 4 && at[n] < used {
            let code = usize::from(ctrl >> (2 * n)) & 3;
            at[n + 1] = at[n] + slot_at(bytes, at[n], code).1;
            n += 1;
        }
        Self { at, ctrl, n }
    }

    /// Calls `f` on the group's keys in order, the first following `prev`; returns the
    /// last (`prev` for no slots).
    #[inline(always)]
    fn keys(&self, bytes: &[u8], mut prev: u64, mut f: impl FnMut(u64)) -> u64 {
        for slot in 0..self.n {
            prev = prev.wrapping_add(slot_at(bytes, self.at[slot], self.code(slot)).0);
            f(prev);
        }
        prev
    }

    #[inline(always)]
    fn code(&self, slot: usize) -> usize {
        usize::from(self.ctrl >> (2 * slot)) & 3
    }
}

/// Slots waiting for the next group: their codes (slot `i` at bits `2i..2i+2`), count and
/// bytes.
struct Pending {
    codes: u8,
    count: usize,
    bytes: [u8; SLOTS_BYTES],
    len: usize,
}

/// Copies `src[from..from + len]` to `out[p..]` and returns the end, or `None` if it does
/// not fit. Short copies move 16 bytes where both sides have them (one load and one store;
/// the bytes past `len` are overwritten next or lie past the leaf's end).
#[inline(always)]
fn copy_span(out: &mut [u8], p: usize, src: &[u8], from: usize, len: usize) -> Option<usize> {
    let end = p + len;
    if len <= 16 && p + 16 <= out.len() && from + 16 <= src.len() {
        out[p..p + 16].copy_from_slice(&src[from..from + 16]);
    } else {
        out.get_mut(p..end)?
            .copy_from_slice(src.get(from..from + len)?);
    }
    (end <= out.len()).then_some(end)
}

/// Writes a group of `pending`'s slots followed by the first `take` slots of `old`'s group
/// `slots`, at `out[p..]`; returns the end.
#[inline(always)]
fn write_group(
    out: &mut [u8],
    p: usize,
    pending: &Pending,
    old: &[u8],
    slots: &Slots,
    take: usize,
) -> Option<usize> {
    let taken_codes = u32::from(slots.ctrl) & ((1u32 << (2 * take)) - 1);
    *out.get_mut(p)? = (u32::from(pending.codes) | taken_codes << (2 * pending.count)) as u8;
    let p = copy_span(out, p + 1, &pending.bytes, 0, pending.len)?;
    copy_span(out, p, old, slots.at[0], slots.at[take] - slots.at[0])
}

/// Inserts or removes `key` (above the leaf's head) in place; see the module
/// documentation.
pub(super) fn edit(leaf: &mut [u8], used: usize, key: u64, what: Edit) -> TailEdit {
    let (c, prev) = group_of(leaf, used, key);
    // The keys of the edited groups: the key's, and for a removal the next one too (the
    // removed key's successor may start it). One slot more for an insert.
    let mut keys = [0u64; 9];
    let mut m = 0;
    let (mut end, mut last) = (c, prev);
    for _ in 0..if what == Edit::Insert { 1 } else { 2 } {
        if end >= used {
            break;
        }
        let slots = Slots::of(leaf, used, end);
        last = slots.keys(leaf, last, |key| {
            keys[m] = key;
            m += 1;
        });
        end = slots.at[slots.n];
    }
    match (keys[..m].binary_search(&key), what) {
        (Ok(_), Edit::Insert) | (Err(_), Edit::Remove) => return TailEdit::Unchanged,
        (Err(at), Edit::Insert) => {
            keys.copy_within(at..m, at + 1);
            keys[at] = key;
            m += 1;
        }
        (Ok(at), Edit::Remove) => {
            keys.copy_within(at + 1..m, at);
            m -= 1;
        }
    }
    TAIL.with(|tail| {
        let old = &mut *tail.borrow_mut();
        old.clear();
        old.extend_from_slice(&leaf[c..]);
        old.resize(leaf.len() - c + TAIL_PADDING, 0);
        match rewrite(leaf, c, prev, &keys[..m], old, end - c, used - c) {
            Some(now) => TailEdit::Written(now),
            None => {
                let len = leaf.len() - c;
                leaf[c..].copy_from_slice(&old[..len]);
                TailEdit::Full
            }
        }
    })
}

/// Writes `keys` (after `prev`) from byte `c` of `leaf`, then the old slots from
/// `old[from..used]` (groups, the first at `from`), regrouped; returns the leaf's used
/// bytes, or `None` if they do not fit (the leaf's bytes from `c` are then spoilt).
fn rewrite(
    leaf: &mut [u8],
    c: usize,
    prev: u64,
    keys: &[u64],
    old: &[u8],
    from: usize,
    used: usize,
) -> Option<usize> {
    let whole = keys.len() / 4 * 4;
    let mut p = encode_groups(prev, &keys[..whole], leaf, c)?;
    let mut pending = Pending {
        codes: 0,
        count: 0,
        bytes: [0; SLOTS_BYTES],
        len: 0,
    };
    let mut before = if whole > 0 { keys[whole - 1] } else { prev };
    for &key in &keys[whole..] {
        let (code, len) = write_slot(&mut pending.bytes, pending.len, key.wrapping_sub(before))?;
        pending.codes |= (code as u8) << (2 * pending.count);
        pending.count += 1;
        pending.len += len;
        before = key;
    }
    // Each old group gives its leading slots to a new group after the pending ones, and
    // its remaining slots become the pending ones: the count stays the same throughout
    // (1 after an insert, 3 after a removal), until a short last group ends the leaf.
    let mut o = from;
    while o < used {
        let slots = Slots::of(old, used, o);
        let take = (4 - pending.count).min(slots.n);
        p = write_group(leaf, p, &pending, old, &slots, take)?;
        let (start, rest) = (slots.at[take], slots.at[slots.n] - slots.at[take]);
        pending.codes = (u32::from(slots.ctrl) >> (2 * take)) as u8
            & ((1u32 << (2 * (slots.n - take))) - 1) as u8;
        pending.count = slots.n - take;
        pending.len = rest;
        if rest <= 16 {
            pending.bytes[..16].copy_from_slice(&old[start..start + 16]);
        } else {
            pending.bytes[..rest].copy_from_slice(&old[start..start + rest]);
        }
        o = slots.at[slots.n];
    }
    if pending.count > 0 {
        let none = Slots {
            at: [0; 5],
            ctrl: 0,
            n: 0,
        };
        p = write_group(leaf, p, &pending, old, &none, 0)?;
    }
    Some(p)
}

#[cfg(test)]
mod tests {
    use super::super::{GroupLeaf, ESCAPE};
    use crate::pma::leaf::{LeafCodec, LeafInsert, LeafRemove};
    use proptest::prelude::*;

    /// The leaf of `keys` in a buffer of `capacity` bytes.
    fn leaf_of(keys: &[u64], capacity: usize) -> (Vec<u8>, usize) {
        let mut leaf = vec![0xA5u8; capacity];
        let used = GroupLeaf::encode(keys, &mut leaf);
        (leaf, used)
    }

    fn keys_in(leaf: &[u8], used: usize) -> Vec<u64> {
        let mut keys = Vec::new();
        GroupLeaf::decode_into(leaf, used, &mut keys);
        keys
    }

    #[test]
    fn every_position_of_an_insert_and_a_removal() {
        // Differences of every length code, escapes included, across several groups.
        let base: Vec<u64> = [
            0u64,
            3,
            0x103,
            0x1_0103,
            0x100_0103,
            0xFF_0100_0103,
            0xFF_0100_0104,
            0xFF_0100_0104 + ESCAPE,
            0xFF_0100_0104 + ESCAPE + 9,
            0xFF_0100_0104 + ESCAPE + 0x300,
            0xFF_0100_0104 + 2 * ESCAPE,
        ]
        .to_vec();
        for len in 1..=base.len() {
            let keys = &base[..len];
            for probe in keys.iter().flat_map(|&k| [k.wrapping_sub(1), k, k + 1]) {
                if probe <= keys[0] {
                    continue;
                }
                for capacity in [keys.len() * 13 + 40, 512] {
                    let (mut leaf, used) = leaf_of(keys, capacity);
                    let mut want: Vec<u64> = keys.to_vec();
                    let result = GroupLeaf::insert(&mut leaf, used, probe);
                    match want.binary_search(&probe) {
                        Ok(_) => assert_eq!(result, LeafInsert::Present),
                        Err(at) => {
                            want.insert(at, probe);
                            assert_eq!(result, LeafInsert::Inserted(GroupLeaf::encoded_len(&want)));
                        }
                    }
                    let now = GroupLeaf::encoded_len(&want);
                    assert_eq!(
                        keys_in(&leaf, now),
                        want,
                        "insert {probe:#x} into {keys:x?}"
                    );
                    let (mut leaf, used) = leaf_of(keys, capacity);
                    let mut want: Vec<u64> = keys.to_vec();
                    let result = GroupLeaf::remove(&mut leaf, used, probe);
                    match want.binary_search(&probe) {
                        Ok(at) => {
                            want.remove(at);
                            assert_eq!(result, LeafRemove::Removed(GroupLeaf::encoded_len(&want)));
                        }
                        Err(_) => assert_eq!(result, LeafRemove::Absent),
                    }
                    let now = GroupLeaf::encoded_len(&want);
                    assert_eq!(
                        keys_in(&leaf, now),
                        want,
                        "remove {probe:#x} from {keys:x?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_tight_leaf_refuses_and_keeps_every_byte() {
        let keys: Vec<u64> = (0..41).map(|i| i * 300).collect();
        let (mut leaf, used) = leaf_of(&keys, GroupLeaf::encoded_len(&keys) + 1);
        let before = leaf.clone();
        // 301 splits a two-byte difference into one byte and two, and its slot opens a
        // group after the full last one: two bytes more where one is free.
        assert_eq!(GroupLeaf::insert(&mut leaf, used, 301), LeafInsert::Full);
        assert_eq!(leaf, before);
    }

    proptest! {
        /// Graph-shaped keys in a leaf of realistic size: long runs of groups shifted by
        /// each edit, escapes at vertex jumps; the leaf decodes to the oracle's keys after
        /// every operation, and a refused edit leaves it byte for byte.
        #[test]
        fn edits_match_btreeset(
            start in proptest::collection::btree_set((0u64..40, 0u64..5000), 1..60),
            ops in proptest::collection::vec((any::<bool>(), 0u64..40, 0u64..5000), 1..80),
            capacity in prop_oneof![Just(200usize), Just(384), Just(1024)],
        ) {
            let key = |(v, t): (u64, u64)| (v << 32) | (t * 7919 % 5000);
            let mut oracle: std::collections::BTreeSet<u64> = start.into_iter().map(key).collect();
            let first: Vec<u64> = oracle.iter().copied().collect();
            prop_assume!(GroupLeaf::encoded_len(&first) <= capacity);
            let (mut leaf, mut used) = leaf_of(&first, capacity);
            for (insert, v, t) in ops {
                let k = key((v, t));
                let before = leaf.clone();
                if insert {
                    match GroupLeaf::insert(&mut leaf, used, k) {
                        LeafInsert::Inserted(now) => { prop_assert!(oracle.insert(k)); used = now; }
                        LeafInsert::Present => prop_assert!(oracle.contains(&k)),
                        LeafInsert::Full => prop_assert_eq!(&leaf, &before),
                        LeafInsert::Replaced => prop_assert!(false, "a set never replaces"),
                    }
                } else {
                    match GroupLeaf::remove(&mut leaf, used, k) {
                        LeafRemove::Removed(now) => { prop_assert!(oracle.remove(&k)); used = now; }
                        LeafRemove::Absent => prop_assert!(!oracle.contains(&k)),
                        LeafRemove::Full => prop_assert_eq!(&leaf, &before),
                    }
                }
                let want: Vec<u64> = oracle.iter().copied().collect();
                prop_assert_eq!(keys_in(&leaf, used), want.clone());
                if !want.is_empty() {
                    prop_assert_eq!(used, GroupLeaf::encoded_len(&want));
                }
            }
        }
    }
}
