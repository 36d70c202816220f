//! [`GroupMapLeaf`], the weighted graph's leaf: [`GroupLeaf`](super::GroupLeaf)'s groups of
//! four differences under one control byte, each difference followed by its key's value
//! (eight little-endian bytes, not compressed).
//!
//! ```text
//! | head (8 B) | head's value (8 B) | ctrl | d1 | v1 | d2 | v2 | d3 | v3 | d4 | v4 | ctrl | ... | free |
//! ```
//!
//! The control byte is the group leaf's, and so is the short last group ended by the
//! leaf's used length, but the length codes are 1, 2, 3 or 8 bytes, without an escape: a
//! group leaf's escaped difference takes 13 bytes, and a map leaf's largest entry must
//! leave the density bounds' slack ([`LeafCodec::SLACK`]) of the byte-coded map (30
//! bytes), which 256-byte leaves at the default root bound of 0.88 need. The price is three
//! bytes more (8 against 5) for a difference of 2^24 or more, which in a graph is the
//! first arc of a vertex after the previous vertex's arcs in the same leaf. A group's slot
//! and value offsets all come from its control byte, so a scan reads four keys and their
//! values without a branch per key. The byte-coded map
//! leaf ([`DeltaMapLeaf`](crate::pma::DeltaMapLeaf), formats before store 6 and snapshot
//! 3) branched on every byte of every difference, and those branches went wrong about as
//! often as not: its scans took three times a CSR's.
//!
//! Positions are the group leaf's, `4 * control byte offset + slot`; anything below
//! `4 * 16` is the head.

use super::super::{read_head, sealed, write_head, LeafCodec, LeafInsert, LeafRemove, HEAD_BYTES};
use super::{code_of, group_table, load, per_slot, word, Scan};

/// The group-varint map leaf (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupMapLeaf;

impl sealed::Sealed for GroupMapLeaf {}

/// Bytes of a value.
const VALUE_BYTES: usize = 8;
/// Bytes of the head: its key and its value.
const MAP_HEAD: usize = HEAD_BYTES + VALUE_BYTES;
/// The first position past the head.
const FIRST: usize = 4 * MAP_HEAD;

type Item = (u64, u64);

/// Bytes of a difference by length code.
const LEN: [usize; 4] = [1, 2, 3, 8];
/// The mask of a difference by length code.
const MASK: [u64; 4] = [0xFF, 0xFFFF, 0xFF_FFFF, u64::MAX];

/// For each control byte: where slots 1, 2 and 3 start after the control byte (each
/// slot's difference followed by its value) and the group's bytes after it, one per byte
/// of the `u32`.
static GROUPS: [u32; 256] = group_table(LEN, VALUE_BYTES);

/// For each control byte, the masks of its four slots' differences.
static MASKS: [[u64; 4]; 256] = per_slot(MASK);

/// Where each slot of a group with control byte `ctrl` starts after the control byte,
/// and the group's bytes after it.
#[inline(always)]
fn starts(ctrl: usize) -> ([usize; 4], usize) {
    let g = GROUPS[ctrl] as usize;
    ([0, g & 0xFF, (g >> 8) & 0xFF, (g >> 16) & 0xFF], g >> 24)
}

/// Bytes a difference takes in its slot (the control byte not counted).
#[inline(always)]
fn delta_bytes(delta: u64) -> usize {
    LEN[code_of(delta)]
}

/// The difference in the slot at byte `p` with length code `code`.
#[inline(always)]
fn slot_at(leaf: &[u8], p: usize, code: usize) -> u64 {
    load(leaf, p) & MASK[code]
}

/// The whole group whose control byte is at `c < used`: its four differences, their
/// values, and the next group's control offset; `None` for a short group (the leaf's
/// last), which the callers read slot by slot.
#[inline(always)]
fn full_group<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], [u64; 4], usize)> {
    let ctrl = (word::<PADDED>(leaf, used, c) & 0xFF) as usize;
    let (s, total) = starts(ctrl);
    let end = c + 1 + total;
    if end > used {
        return None;
    }
    // Every slot and value starts before `end <= used`.
    let p = c + 1;
    let m = &MASKS[ctrl];
    let d = [
        word::<PADDED>(leaf, used, p) & m[0],
        word::<PADDED>(leaf, used, p + s[1]) & m[1],
        word::<PADDED>(leaf, used, p + s[2]) & m[2],
        word::<PADDED>(leaf, used, p + s[3]) & m[3],
    ];
    let v = [
        word::<PADDED>(leaf, used, p + s[1] - VALUE_BYTES),
        word::<PADDED>(leaf, used, p + s[2] - VALUE_BYTES),
        word::<PADDED>(leaf, used, p + s[3] - VALUE_BYTES),
        word::<PADDED>(leaf, used, end - VALUE_BYTES),
    ];
    Some((d, v, end))
}

/// Visits the slots `from..4` of the group whose control byte is at `c`, one at a time
/// (`f(position, previous key, item)`); `state` is the last key, the keys visited and
/// the count to stop at. Returns the next group's control offset, or how the scan ended.
/// A slot or value that does not end inside `used` ends the leaf.
#[inline(never)]
fn slow_group(
    leaf: &[u8],
    used: usize,
    c: usize,
    from: usize,
    state: &mut (u64, usize, usize),
    f: &mut impl FnMut(usize, u64, Item) -> bool,
) -> Result<usize, Scan> {
    let (key, visited, count) = state;
    let ctrl = leaf[c] as usize;
    let mut p = c + 1;
    for slot in 0..4 {
        if p >= used {
            return Err(Scan::End);
        }
        let code = (ctrl >> (2 * slot)) & 3;
        let delta = slot_at(leaf, p, code);
        let at = p + LEN[code];
        if at + VALUE_BYTES > used {
            return Err(Scan::End);
        }
        p = at + VALUE_BYTES;
        if slot >= from {
            if *visited == *count {
                return Err(Scan::Counted);
            }
            let prev = *key;
            *key = key.wrapping_add(delta);
            *visited += 1;
            if !f(4 * c + slot, prev, (*key, load(leaf, at))) {
                return Err(Scan::Stopped);
            }
        }
    }
    Ok(p)
}

/// Calls `f(position, previous key, item)` on at most `count` items from position `pos`
/// (past the head), whose predecessor's key is `prev`; returns how many it visited and
/// how the scan ended.
#[inline(always)]
fn scan(
    leaf: &[u8],
    used: usize,
    pos: usize,
    prev: u64,
    count: usize,
    f: &mut impl FnMut(usize, u64, Item) -> bool,
) -> (usize, Scan) {
    // Leaves inside an array have padding after them: loads need no bounds checks.
    if used.saturating_add(8) <= leaf.len() {
        scan_groups::<true>(leaf, used, pos, prev, count, f)
    } else {
        scan_groups::<false>(leaf, used, pos, prev, count, f)
    }
}

/// [`scan`]; `PADDED`: `leaf` holds at least 8 bytes past `used`.
#[inline(always)]
fn scan_groups<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    pos: usize,
    prev: u64,
    count: usize,
    f: &mut impl FnMut(usize, u64, Item) -> bool,
) -> (usize, Scan) {
    let mut state = (prev, 0usize, count);
    let (mut c, mut skip) = (pos >> 2, pos & 3);
    while c < used {
        let (key, visited, count) = &mut state;
        if *visited == *count {
            return (*visited, Scan::Counted);
        }
        if let Some((d, v, end)) = full_group::<PADDED>(leaf, used, c) {
            if skip == 0 && *count - *visited >= 4 {
                let k0 = key.wrapping_add(d[0]);
                let k1 = k0.wrapping_add(d[1]);
                let k2 = k1.wrapping_add(d[2]);
                let k3 = k2.wrapping_add(d[3]);
                let before = *key;
                *key = k3;
                *visited += 4;
                if !f(4 * c, before, (k0, v[0])) {
                    return (*visited - 3, Scan::Stopped);
                }
                if !f(4 * c + 1, k0, (k1, v[1])) {
                    return (*visited - 2, Scan::Stopped);
                }
                if !f(4 * c + 2, k1, (k2, v[2])) {
                    return (*visited - 1, Scan::Stopped);
                }
                if !f(4 * c + 3, k2, (k3, v[3])) {
                    return (*visited, Scan::Stopped);
                }
                c = end;
                continue;
            }
            // The run starts inside this group or the count ends in it.
            let last = (*count - *visited).saturating_add(skip).min(4);
            for slot in skip..last {
                let before = *key;
                *key = key.wrapping_add(d[slot]);
                *visited += 1;
                if !f(4 * c + slot, before, (*key, v[slot])) {
                    return (*visited, Scan::Stopped);
                }
            }
            if last < 4 {
                return (*visited, Scan::Counted);
            }
            (c, skip) = (end, 0);
        } else {
            match slow_group(leaf, used, c, skip, &mut state, f) {
                Ok(next) => (c, skip) = (next, 0),
                Err(end) => return (state.1, end),
            }
        }
    }
    (state.1, Scan::End)
}

/// Writes `items` (non-empty, keys strictly increasing) into `out`; `None` if they do
/// not fit (with `out` partly written).
fn encode_items(items: &[Item], out: &mut [u8]) -> Option<usize> {
    let (head, value) = items[0];
    let head_bytes = out.get_mut(..MAP_HEAD)?;
    write_head(head_bytes, head);
    write_head(&mut head_bytes[HEAD_BYTES..], value);
    let (mut p, mut prev) = (MAP_HEAD, head);
    let mut groups = items[1..].chunks_exact(4);
    for group in &mut groups {
        let deltas = [
            group[0].0.wrapping_sub(prev),
            group[1].0.wrapping_sub(group[0].0),
            group[2].0.wrapping_sub(group[1].0),
            group[3].0.wrapping_sub(group[2].0),
        ];
        prev = group[3].0;
        {
            let ctrl = code_of(deltas[0])
                | code_of(deltas[1]) << 2
                | code_of(deltas[2]) << 4
                | code_of(deltas[3]) << 6;
            let (s, total) = starts(ctrl);
            if let Some(window) = out.get_mut(p..p + 1 + total) {
                window[0] = ctrl as u8;
                // Each difference is stored as eight bytes; its value, written next,
                // overwrites those past the slot, and no store passes the group's end.
                let values = [s[1], s[2], s[3], total];
                for ((&start, &delta), (&next, &(_, value))) in
                    s.iter().zip(&deltas).zip(values.iter().zip(group))
                {
                    window[1 + start..9 + start].copy_from_slice(&delta.to_le_bytes());
                    window[1 + next - VALUE_BYTES..1 + next].copy_from_slice(&value.to_le_bytes());
                }
                p += 1 + total;
                continue;
            }
        }
        p = encode_group(deltas, group, out, p)?;
    }
    let rest = groups.remainder();
    if !rest.is_empty() {
        let mut deltas = [0; 4];
        for (delta, &(key, _)) in deltas.iter_mut().zip(rest) {
            *delta = key.wrapping_sub(prev);
            prev = key;
        }
        p = encode_group(deltas, rest, out, p)?;
    }
    Some(p)
}

/// [`encode_items`] for one group of one to four items with their differences, slot by
/// slot (the leaf's end, a short last group); returns the end, or `None` if it does not
/// fit.
fn encode_group(deltas: [u64; 4], group: &[Item], out: &mut [u8], mut p: usize) -> Option<usize> {
    let c = p;
    p += 1;
    let mut ctrl = 0;
    for (slot, (&delta, &(_, value))) in deltas.iter().zip(group).enumerate() {
        let code = code_of(delta);
        let len = LEN[code];
        out.get_mut(p..p + len)?
            .copy_from_slice(&delta.to_le_bytes()[..len]);
        ctrl |= code << (2 * slot);
        p += len;
        out.get_mut(p..p + VALUE_BYTES)?
            .copy_from_slice(&value.to_le_bytes());
        p += VALUE_BYTES;
    }
    *out.get_mut(c)? = ctrl as u8;
    Some(p)
}

/// Where the value of slot `slot` of the group whose control byte is at `c` starts.
#[inline(always)]
fn value_at(leaf: &[u8], c: usize, slot: usize) -> usize {
    let (s, total) = starts(leaf[c] as usize);
    let next = if slot < 3 { s[slot + 1] } else { total };
    c + 1 + next - VALUE_BYTES
}

impl LeafCodec for GroupMapLeaf {
    type Item = (u64, u64);
    const NAME: &'static str = "cpma-map";
    const HEAD: usize = MAP_HEAD;
    const VALUES: bool = true;
    // A cut one entry late (an 8-byte difference and its value, with a quarter of its
    // control byte), a new head's extra bytes (16 against the 9 of its shortest entry), a
    // group's rounding and 2: 27, and the byte-coded map's 30 kept (256-byte leaves at the
    // default root bound of 0.88 allow 30).
    const SLACK: usize = 30;

    #[inline(always)]
    fn key(item: Item) -> u64 {
        item.0
    }

    /// The slot's and the value's bytes; the control byte's quarter is in
    /// [`LeafCodec::entry_cost`].
    #[inline(always)]
    fn entry_bytes(prev: u64, item: Item) -> usize {
        delta_bytes(item.0.wrapping_sub(prev)) + VALUE_BYTES
    }

    #[inline(always)]
    fn entry_cost(prev: u64, item: Item) -> u64 {
        4 * Self::entry_bytes(prev, item) as u64 + 1
    }

    fn encoded_len(items: &[Item]) -> usize {
        MAP_HEAD
            + (items.len() - 1).div_ceil(4)
            + items
                .windows(2)
                .map(|w| Self::entry_bytes(w[0].0, w[1]))
                .sum::<usize>()
    }

    fn encode(items: &[Item], out: &mut [u8]) -> usize {
        encode_items(items, out).expect("the caller sized the leaf for its items")
    }

    fn encode_bounded(items: &[Item], out: &mut [u8]) -> Option<usize> {
        encode_items(items, out)
    }

    #[inline]
    fn for_each_while(leaf: &[u8], used: usize, mut f: impl FnMut(Item) -> bool) -> bool {
        if used == 0 {
            return true;
        }
        let head = read_head(leaf);
        f((head, read_head(&leaf[HEAD_BYTES..])))
            && !matches!(
                scan(leaf, used, FIRST, head, usize::MAX, &mut |_, _, item| f(
                    item
                ))
                .1,
                Scan::Stopped
            )
    }

    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        mut f: impl FnMut(Item) -> bool,
    ) -> bool {
        if offset < FIRST {
            return Self::for_each_while(leaf, used, f);
        }
        !matches!(
            scan(leaf, used, offset, prev, usize::MAX, &mut |_, _, item| f(
                item
            ))
            .1,
            Scan::Stopped
        )
    }

    #[inline]
    fn for_count_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        count: usize,
        f: &mut impl FnMut(Item) -> bool,
    ) -> (usize, bool) {
        if count == 0 || used == 0 {
            return (0, false);
        }
        let (mut pos, mut key, mut visited) = (offset, prev, 0);
        if offset < FIRST {
            key = read_head(leaf);
            if !f((key, read_head(&leaf[HEAD_BYTES..]))) {
                return (1, true);
            }
            (pos, visited) = (FIRST, 1);
        }
        let (scanned, end) = scan(leaf, used, pos, key, count - visited, &mut |_, _, item| {
            f(item)
        });
        (visited + scanned, matches!(end, Scan::Stopped))
    }

    /// The first key's value: just before the next group's control byte for the head and
    /// a group's last slot, else in the group whose control byte is at `end >> 2`.
    #[inline(always)]
    fn first_read_byte(end: usize) -> usize {
        if end & 3 == 0 {
            (end >> 2).saturating_sub(VALUE_BYTES)
        } else {
            end >> 2
        }
    }

    #[inline]
    fn entry_end(leaf: &[u8], offset: usize) -> usize {
        if offset < FIRST {
            return FIRST;
        }
        if offset & 3 != 3 {
            return offset + 1;
        }
        let c = offset >> 2;
        4 * (c + 1 + starts(leaf[c] as usize).1)
    }

    #[inline]
    fn item_ending_at<'a>(leaf: impl FnOnce() -> &'a [u8], end: usize, key: u64) -> Item {
        let leaf = leaf();
        let at = if end & 3 == 0 {
            // The head, or a group's last slot: the value ends where the next group starts.
            (end >> 2) - VALUE_BYTES
        } else {
            value_at(leaf, end >> 2, (end & 3) - 1)
        };
        (key, read_head(&leaf[at..]))
    }

    fn for_each_entry(leaf: &[u8], used: usize, mut f: impl FnMut(u64, usize, u64)) {
        if used == 0 {
            return;
        }
        let head = read_head(leaf);
        f(head, 0, 0);
        scan(
            leaf,
            used,
            FIRST,
            head,
            usize::MAX,
            &mut |pos, prev, (key, _)| {
                f(key, pos, prev);
                true
            },
        );
    }

    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<(u64, u64)> {
        super::super::map_lower_bound::<Self>(leaf, used, target)
    }

    fn last(leaf: &[u8], used: usize) -> Option<u64> {
        super::super::map_last::<Self>(leaf, used)
    }

    fn insert(leaf: &mut [u8], used: usize, item: (u64, u64)) -> LeafInsert {
        super::super::map_insert::<Self>(leaf, used, item)
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove {
        super::super::map_remove::<Self>(leaf, used, key)
    }

    fn decode_into(leaf: &[u8], used: usize, out: &mut Vec<Item>) {
        Self::for_each_while(leaf, used, |item| {
            out.push(item);
            true
        });
    }
}

#[cfg(test)]
mod tests;
