//! [`GroupLeaf`], the graph's compressed leaf: the head as eight bytes, then the differences
//! between consecutive keys in groups of four, each group a control byte followed by its
//! four differences in 1, 2, 3 or 5 little-endian bytes (group varint).
//!
//! ```text
//! | head (8 B) | ctrl | d1 | d2 | d3 | d4 | ctrl | d5 | ... | free |
//! ```
//!
//! Bits `2s..2s+2` of a control byte give slot `s`'s length code: 0, 1, 2, 3 for 1, 2, 3, 5
//! bytes. A difference of `2^40 - 1` or more (a jump of 256 or more vertices in a graph's
//! keys) is the five bytes `2^40 - 1` followed by the difference in eight bytes. Only the
//! last group may hold fewer than four differences: its unused slots have code 0 and no
//! bytes, and the leaf's used length ends it.
//!
//! Unlike a byte-at-a-time code, a group's four lengths come from its control byte at once
//! (one table lookup), so the scan loads four differences without a branch per byte; see
//! `docs/formats/leaf.md` for the measurements that chose it.
//!
//! Bulk decodes of targets into a slice (`low_halves`, what PageRank and betweenness read)
//! take whole groups by SSSE3 byte shuffles where the CPU has them (`group/x86.rs`; the
//! scalar `group_into` is their twin, and tests run both), and decode two runs at once
//! ([`LeafCodec::low_halves_pair`]), because each group's position waits on the previous
//! group's control byte and length, a chain that one run alone cannot hide.
//!
//! Positions ("offsets" in [`LeafCodec`]) are `4 * control byte offset + slot`; anything
//! below `4 * HEAD_BYTES` is the head.

use crate::pma::sort;

mod check;
mod edit;
mod map;
mod slice;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use self::map::GroupMapLeaf;
use self::slice::{low_halves, low_halves_two, simd_available};

use super::{
    read_head, sealed, write_head, ItemCheck, LeafCodec, LeafInsert, LeafKeys, LeafRemove,
    SliceRun, HEAD_BYTES,
};

/// The group-varint leaf (see the module documentation).
#[derive(Debug, Clone, Copy, Default)]
pub struct GroupLeaf;

impl sealed::Sealed for GroupLeaf {}

/// The five-byte value that announces an eight-byte difference.
const ESCAPE: u64 = (1 << 40) - 1;
/// Bytes of a slot by length code.
const LEN: [usize; 4] = [1, 2, 3, 5];
/// The mask of a slot's value by length code.
const MASK: [u64; 4] = [0xFF, 0xFFFF, 0xFF_FFFF, ESCAPE];
/// The first position past the head.
const FIRST: usize = 4 * HEAD_BYTES;
/// Bytes of the longest entry: an escaped difference.
const ESCAPED_BYTES: usize = 13;

/// For each control byte: the data offsets of slots 1, 2 and 3 and the four slots' total
/// bytes (no escapes), one per byte of the `u32`.
static GROUPS: [u32; 256] = group_table(LEN, 0);

/// For each control byte, the masks of its four slots' values.
static MASKS: [[u64; 4]; 256] = per_slot(MASK);

/// For each control byte, `by_code` of each of its four slots' length codes.
pub(super) const fn per_slot<T: Copy>(by_code: [T; 4]) -> [[T; 4]; 256] {
    let mut table = [[by_code[0]; 4]; 256];
    let mut ctrl = 0;
    while ctrl < 256 {
        let mut slot = 0;
        while slot < 4 {
            table[ctrl][slot] = by_code[(ctrl >> (2 * slot)) & 3];
            slot += 1;
        }
        ctrl += 1;
    }
    table
}

/// For each control byte: where slots 1, 2 and 3 start after the control byte and the
/// group's bytes after it, one per byte of the `u32`, for slots of `len` bytes by length
/// code each followed by `value` bytes (0 for sets, 8 for the map leaf).
const fn group_table(len: [usize; 4], value: usize) -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut ctrl = 0;
    while ctrl < 256 {
        let mut offset = 0;
        let mut packed = 0u32;
        let mut slot = 0;
        while slot < 4 {
            if slot > 0 {
                packed |= (offset as u32) << (8 * (slot - 1));
            }
            offset += len[(ctrl >> (2 * slot)) & 3] + value;
            slot += 1;
        }
        table[ctrl] = packed | (offset as u32) << 24;
        ctrl += 1;
    }
    table
}

/// The length code of a difference, by the bytes it needs (one table for every encoder).
#[inline(always)]
fn code_of(delta: u64) -> usize {
    usize::from(CODE_BY_BYTES[((71 - (delta | 1).leading_zeros()) / 8) as usize])
}

/// Bytes a difference takes in its slot (the control byte not counted).
#[inline(always)]
fn delta_bytes(delta: u64) -> usize {
    if delta >= ESCAPE {
        ESCAPED_BYTES
    } else {
        LEN[code_of(delta)]
    }
}

/// Eight bytes from `p` (zeros past the slice's end), little-endian.
#[inline(always)]
fn load(leaf: &[u8], p: usize) -> u64 {
    match leaf.get(p..p + 8) {
        Some(bytes) => u64::from_le_bytes(bytes.try_into().expect("eight bytes")),
        None => {
            let mut bytes = [0u8; 8];
            let tail = leaf.get(p..).unwrap_or(&[]);
            bytes[..tail.len()].copy_from_slice(tail);
            u64::from_le_bytes(bytes)
        }
    }
}

/// The difference in the slot at byte `p` with length code `code`, and its bytes.
#[inline(always)]
fn slot_at(leaf: &[u8], p: usize, code: usize) -> (u64, usize) {
    let value = load(leaf, p) & MASK[code];
    if code == 3 && value == ESCAPE {
        (load(leaf, p + 5), ESCAPED_BYTES)
    } else {
        (value, LEN[code])
    }
}

/// Writes `delta` into its slot at `out[p..]`; returns its code and bytes, or `None` if it
/// does not fit.
#[inline(always)]
fn write_slot(out: &mut [u8], p: usize, delta: u64) -> Option<(usize, usize)> {
    let code = code_of(delta);
    let len = delta_bytes(delta);
    let slot = out.get_mut(p..p + len)?;
    if len == ESCAPED_BYTES {
        slot[..5].copy_from_slice(&ESCAPE.to_le_bytes()[..5]);
        slot[5..].copy_from_slice(&delta.to_le_bytes());
    } else {
        slot.copy_from_slice(&delta.to_le_bytes()[..len]);
    }
    Some((code, len))
}

/// Encodes `keys` (non-empty, strictly increasing) into `out`; `None` if they do not fit.
fn encode_keys(keys: &[u64], out: &mut [u8]) -> Option<usize> {
    out.get_mut(..HEAD_BYTES)?
        .copy_from_slice(&keys[0].to_le_bytes());
    encode_groups(keys[0], &keys[1..], out, HEAD_BYTES)
}

/// Length code by the bytes a difference needs (1 to 8).
const CODE_BY_BYTES: [u8; 9] = [0, 0, 1, 2, 3, 3, 3, 3, 3];

/// Writes `keys` (strictly increasing, all above `prev`) as groups into `out` from byte
/// `p`; returns the end, or `None` if they do not fit.
fn encode_groups(mut prev: u64, keys: &[u64], out: &mut [u8], mut p: usize) -> Option<usize> {
    let mut groups = keys.chunks_exact(4);
    for group in &mut groups {
        // A whole group without escapes, with room for an eight-byte store at each slot:
        // its four lengths at once from the control byte's table (no chain of lengths).
        if let Some(window) = out.get_mut(p..p + FAST_GROUP_BYTES) {
            let deltas = [
                group[0].wrapping_sub(prev),
                group[1].wrapping_sub(group[0]),
                group[2].wrapping_sub(group[1]),
                group[3].wrapping_sub(group[2]),
            ];
            if deltas[0] | deltas[1] | deltas[2] | deltas[3] < ESCAPE {
                let ctrl = code_of(deltas[0])
                    | code_of(deltas[1]) << 2
                    | code_of(deltas[2]) << 4
                    | code_of(deltas[3]) << 6;
                let offsets = GROUPS[ctrl] as usize;
                let starts = [
                    1,
                    1 + (offsets & 0xFF),
                    1 + ((offsets >> 8) & 0xFF),
                    1 + ((offsets >> 16) & 0xFF),
                ];
                window[0] = ctrl as u8;
                // Each store's bytes past its slot are overwritten by the next slot's, or
                // lie past the group.
                for (&start, delta) in starts.iter().zip(deltas) {
                    window[start..start + 8].copy_from_slice(&delta.to_le_bytes());
                }
                p += 1 + (offsets >> 24);
                prev = group[3];
                continue;
            }
        }
        p = encode_group(prev, group, out, p)?;
        prev = group[3];
    }
    let rest = groups.remainder();
    if !rest.is_empty() {
        p = encode_group(prev, rest, out, p)?;
    }
    (p <= out.len()).then_some(p)
}

/// Bytes a group's fast encode writes: the control byte, and eight from the last slot's
/// start, at most 1 + 15.
const FAST_GROUP_BYTES: usize = 1 + 15 + 8;

/// [`encode_groups`] for one group of one to four keys, slot by slot (escapes, the leaf's
/// end, a short last group); returns the end, or `None` if it does not fit.
fn encode_group(mut prev: u64, group: &[u64], out: &mut [u8], mut p: usize) -> Option<usize> {
    let c = p;
    p += 1;
    let mut ctrl = 0;
    for (slot, &key) in group.iter().enumerate() {
        let delta = key.wrapping_sub(prev);
        prev = key;
        let code = code_of(delta);
        ctrl |= code << (2 * slot);
        let len = LEN[code];
        if delta < ESCAPE {
            // Eight bytes when they fit (one store), else exactly the slot's.
            if let Some(word) = out.get_mut(p..p + 8) {
                word.copy_from_slice(&delta.to_le_bytes());
            } else {
                out.get_mut(p..p + len)?
                    .copy_from_slice(&delta.to_le_bytes()[..len]);
            }
            p += len;
        } else {
            p += write_slot(out, p, delta)?.1;
        }
    }
    *out.get_mut(c)? = ctrl as u8;
    (p <= out.len()).then_some(p)
}

/// How a scan of groups ended.
enum Scan {
    /// `f` returned `false` on the last key visited.
    Stopped,
    /// The requested count was reached (the leaf may hold more).
    Counted,
    /// The leaf's end was reached.
    End,
}

/// Visits the slots `from..4` of the group whose control byte is at `c`, one at a time;
/// returns the next group's control offset, or how the scan ended.
#[inline(never)]
fn slow_group(
    leaf: &[u8],
    used: usize,
    c: usize,
    from: usize,
    state: &mut (u64, usize, usize),
    f: &mut impl FnMut(u64) -> bool,
) -> Result<usize, Scan> {
    let (key, visited, count) = state;
    let ctrl = leaf[c] as usize;
    let mut p = c + 1;
    for slot in 0..4 {
        if p >= used {
            return Err(Scan::End);
        }
        let (delta, len) = slot_at(leaf, p, (ctrl >> (2 * slot)) & 3);
        p += len;
        if slot >= from {
            if *visited == *count {
                return Err(Scan::Counted);
            }
            *key = key.wrapping_add(delta);
            *visited += 1;
            if !f(*key) {
                return Err(Scan::Stopped);
            }
        }
    }
    Ok(p)
}

/// Calls `f` on at most `count` keys from position `pos` (past the head), whose
/// predecessor is `prev`; returns how many it visited and how the scan ended.
#[inline(always)]
fn scan(
    leaf: &[u8],
    used: usize,
    pos: usize,
    prev: u64,
    count: usize,
    f: &mut impl FnMut(u64) -> bool,
) -> (usize, Scan) {
    // Leaves inside an array have padding after them: loads need no bounds checks.
    if used.saturating_add(8) <= leaf.len() {
        scan_groups::<true>(leaf, used, pos, prev, count, f)
    } else {
        scan_groups::<false>(leaf, used, pos, prev, count, f)
    }
}

/// Eight bytes at `p` for `p < used`, little-endian; `PADDED`: `leaf` holds at least 8
/// bytes past `used`.
#[inline(always)]
fn word<const PADDED: bool>(leaf: &[u8], used: usize, p: usize) -> u64 {
    debug_assert!(p < used);
    if PADDED {
        // SAFETY: `p < used` and `used + 8 <= leaf.len()` (PADDED), so the 8 bytes at `p`
        // lie inside `leaf`; the read is unaligned-safe.
        unsafe { leaf.as_ptr().add(p).cast::<u64>().read_unaligned() }.to_le()
    } else {
        load(leaf, p)
    }
}

/// The four differences of the whole group whose control byte is at `c < used`, the
/// control byte, and the next group's control offset; `None` for a short group (the
/// leaf's last). Escapes are not looked at.
#[inline(always)]
pub(super) fn group_at<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], usize, usize)> {
    let ctrl = (word::<PADDED>(leaf, used, c) & 0xFF) as usize;
    let offsets = GROUPS[ctrl] as usize;
    let end = c + 1 + (offsets >> 24);
    if end > used {
        return None;
    }
    // Every slot starts before `end <= used`.
    let p = c + 1;
    let masks = &MASKS[ctrl];
    let d0 = word::<PADDED>(leaf, used, p) & masks[0];
    let d1 = word::<PADDED>(leaf, used, p + (offsets & 0xFF)) & masks[1];
    let d2 = word::<PADDED>(leaf, used, p + ((offsets >> 8) & 0xFF)) & masks[2];
    let d3 = word::<PADDED>(leaf, used, p + ((offsets >> 16) & 0xFF)) & masks[3];
    Some(([d0, d1, d2, d3], ctrl, end))
}

/// The differences of the leaf's last group when it is short, whose control byte is at
/// `c < used`: 1 to 3 slots that end exactly at `used`, the other slots of code 0 (as the
/// encoder writes it). Returns the differences (0 in the unused slots), the control byte
/// and the number of slots; `None` for any other group. Escapes are not looked at.
#[inline(always)]
pub(super) fn last_group_at<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], usize, usize)> {
    let ctrl = (word::<PADDED>(leaf, used, c) & 0xFF) as usize;
    let offsets = GROUPS[ctrl] as usize;
    let p = c + 1;
    // Slot `i + 1` starts at `p` plus byte `i` of `offsets`: where the first `k` slots end.
    let start = |i: usize| p + ((offsets >> (8 * i)) & 0xFF);
    let slots = (1..4).find(|&k| start(k - 1) == used)?;
    if ctrl >> (2 * slots) != 0 {
        return None;
    }
    // Every slot taken starts before `used`.
    let masks = &MASKS[ctrl];
    let mut d = [0u64; 4];
    for (i, (d, &mask)) in d.iter_mut().zip(masks).enumerate().take(slots) {
        let at = if i == 0 { p } else { start(i - 1) };
        *d = word::<PADDED>(leaf, used, at) & mask;
    }
    Some((d, ctrl, slots))
}

/// The four differences of the group whose control byte is at `c < used`, and the next
/// group's control offset; `None` for a short group (the leaf's last) or one holding an
/// escape, which the callers read slot by slot.
#[inline(always)]
fn full_group<const PADDED: bool>(leaf: &[u8], used: usize, c: usize) -> Option<([u64; 4], usize)> {
    let (d, _, end) = group_at::<PADDED>(leaf, used, c)?;
    if (d[0] == ESCAPE) | (d[1] == ESCAPE) | (d[2] == ESCAPE) | (d[3] == ESCAPE) {
        return None;
    }
    Some((d, end))
}

/// [`scan`]; `PADDED`: `leaf` holds at least 8 bytes past `used`.
#[inline(always)]
fn scan_groups<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    pos: usize,
    prev: u64,
    count: usize,
    f: &mut impl FnMut(u64) -> bool,
) -> (usize, Scan) {
    let mut state = (prev, 0usize, count);
    let (mut c, mut skip) = (pos >> 2, pos & 3);
    while c < used {
        let (key, visited, count) = &mut state;
        if *visited == *count {
            return (*visited, Scan::Counted);
        }
        if let Some(([d0, d1, d2, d3], end)) = full_group::<PADDED>(leaf, used, c) {
            if skip == 0 && *count - *visited >= 4 {
                let k0 = key.wrapping_add(d0);
                let k1 = k0.wrapping_add(d1);
                let k2 = k1.wrapping_add(d2);
                let k3 = k2.wrapping_add(d3);
                *key = k3;
                *visited += 4;
                if !f(k0) {
                    return (*visited - 3, Scan::Stopped);
                }
                if !f(k1) {
                    return (*visited - 2, Scan::Stopped);
                }
                if !f(k2) {
                    return (*visited - 1, Scan::Stopped);
                }
                if !f(k3) {
                    return (*visited, Scan::Stopped);
                }
                c = end;
                continue;
            }
            // The run starts inside this group (a vertex's first arc after the index's)
            // or the count ends in it (its last arcs).
            let last = (*count - *visited).saturating_add(skip).min(4);
            for &delta in &[d0, d1, d2, d3][skip..last] {
                *key = key.wrapping_add(delta);
                *visited += 1;
                if !f(*key) {
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

/// [`LeafCodec::decode_into`] for a leaf that uses `used > 0` bytes: whole groups four
/// keys at a time (what redistributions gather), short and escaped groups slot by slot.
/// `PADDED` as in [`scan_groups`].
#[inline(always)]
fn decode_all<const PADDED: bool>(leaf: &[u8], used: usize, out: &mut Vec<u64>) {
    let mut key = read_head(leaf);
    out.push(key);
    let mut c = HEAD_BYTES;
    while c < used {
        if let Some(([d0, d1, d2, d3], end)) = full_group::<PADDED>(leaf, used, c) {
            let k0 = key.wrapping_add(d0);
            let k1 = k0.wrapping_add(d1);
            let k2 = k1.wrapping_add(d2);
            key = k2.wrapping_add(d3);
            out.extend_from_slice(&[k0, k1, k2, key]);
            c = end;
        } else {
            let mut state = (key, 0, usize::MAX);
            let next = slow_group(leaf, used, c, 0, &mut state, &mut |k| {
                out.push(k);
                true
            });
            match next {
                Ok(next) => (key, c) = (state.0, next),
                Err(_) => return,
            }
        }
    }
}

/// The leaf's keys.
fn keys_of(leaf: &[u8], used: usize) -> Vec<u64> {
    let mut keys = Vec::with_capacity(used);
    GroupLeaf::decode_into(leaf, used, &mut keys);
    keys
}

impl LeafCodec for GroupLeaf {
    type Item = u64;
    const NAME: &'static str = "cpma";
    const HEAD: usize = HEAD_BYTES;
    // The longest entry with its control byte, a head's extra bytes, a group's rounding
    // and 2.
    const SLACK: usize = ESCAPED_BYTES + 1 + HEAD_BYTES + 1 + 2;

    #[inline(always)]
    fn key(item: u64) -> u64 {
        item
    }

    fn sort_items(items: &mut Vec<u64>) {
        sort::sort_keys(items);
    }

    /// The slot's bytes; the control byte's quarter is in [`LeafCodec::entry_cost`].
    #[inline(always)]
    fn entry_bytes(prev: u64, key: u64) -> usize {
        delta_bytes(key.wrapping_sub(prev))
    }

    #[inline(always)]
    fn entry_cost(prev: u64, key: u64) -> u64 {
        4 * delta_bytes(key.wrapping_sub(prev)) as u64 + 1
    }

    fn encoded_len(keys: &[u64]) -> usize {
        HEAD_BYTES
            + (keys.len() - 1).div_ceil(4)
            + keys
                .windows(2)
                .map(|w| delta_bytes(w[1].wrapping_sub(w[0])))
                .sum::<usize>()
    }

    fn encode(keys: &[u64], out: &mut [u8]) -> usize {
        encode_keys(keys, out).expect("the caller sized the leaf for its keys")
    }

    fn encode_bounded(keys: &[u64], out: &mut [u8]) -> Option<usize> {
        encode_keys(keys, out)
    }

    #[inline]
    fn for_each_while(leaf: &[u8], used: usize, mut f: impl FnMut(u64) -> bool) -> bool {
        if used == 0 {
            return true;
        }
        let head = read_head(leaf);
        f(head)
            && !matches!(
                scan(leaf, used, FIRST, head, usize::MAX, &mut f).1,
                Scan::Stopped
            )
    }

    fn check_encoding(
        leaf: &[u8],
        used: usize,
        item_ok: &impl ItemCheck<Self>,
    ) -> Option<Result<LeafKeys, String>> {
        let simd = simd_available();
        Some(if used.saturating_add(8) <= leaf.len() {
            check::check::<true>(leaf, used, item_ok, simd)
        } else {
            check::check::<false>(leaf, used, item_ok, simd)
        })
    }

    fn check_encoding_pair(
        a: (&[u8], usize),
        b: (&[u8], usize),
        item_ok: &impl ItemCheck<Self>,
    ) -> Option<[Result<LeafKeys, String>; 2]> {
        #[cfg(target_arch = "x86_64")]
        if simd_available()
            && item_ok.arcs_below().is_some()
            && a.1.saturating_add(8) <= a.0.len()
            && b.1.saturating_add(8) <= b.0.len()
        {
            return Some(check::check_pair(a, b, item_ok));
        }
        super::check_each::<Self>(a, b, item_ok)
    }

    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        if offset < FIRST {
            return Self::for_each_while(leaf, used, f);
        }
        !matches!(
            scan(leaf, used, offset, prev, usize::MAX, &mut f).1,
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
        f: &mut impl FnMut(u64) -> bool,
    ) -> (usize, bool) {
        if count == 0 || used == 0 {
            return (0, false);
        }
        let (mut pos, mut key, mut visited) = (offset, prev, 0);
        if offset < FIRST {
            key = read_head(leaf);
            if !f(key) {
                return (1, true);
            }
            (pos, visited) = (FIRST, 1);
        }
        let (scanned, end) = scan(leaf, used, pos, key, count - visited, f);
        (visited + scanned, matches!(end, Scan::Stopped))
    }

    #[inline]
    fn low_halves_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        out: &mut [u32],
    ) -> usize {
        if used.saturating_add(8) <= leaf.len() {
            low_halves::<true>(leaf, used, offset, prev, out, simd_available())
        } else {
            low_halves::<false>(leaf, used, offset, prev, out, false)
        }
    }

    fn low_halves_pair<'a>(
        runs: [SliceRun<'a>; 2],
        outs: [&mut [u32]; 2],
        next_leaf: impl Fn(usize) -> Option<(&'a [u8], usize)>,
    ) -> [usize; 2] {
        low_halves_two(runs, outs, next_leaf, simd_available())
    }

    /// Positions are `4 * control byte offset + slot`: the entry's group starts at the
    /// control byte.
    #[inline(always)]
    fn first_read_byte(end: usize) -> usize {
        end >> 2
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
        let ctrl = leaf[c] as usize;
        let mut p = c + 1;
        for slot in 0..4 {
            p += slot_at(leaf, p, (ctrl >> (2 * slot)) & 3).1;
        }
        4 * p
    }

    #[inline(always)]
    fn item_ending_at<'a>(_leaf: impl FnOnce() -> &'a [u8], _end: usize, key: u64) -> u64 {
        key
    }

    fn for_each_entry(leaf: &[u8], used: usize, mut f: impl FnMut(u64, usize, u64)) {
        if used == 0 {
            return;
        }
        let head = read_head(leaf);
        f(head, 0, 0);
        let (mut c, mut prev) = (HEAD_BYTES, head);
        while c < used {
            let ctrl = leaf[c] as usize;
            let mut p = c + 1;
            for slot in 0..4 {
                if p >= used {
                    return;
                }
                let (delta, len) = slot_at(leaf, p, (ctrl >> (2 * slot)) & 3);
                let key = prev.wrapping_add(delta);
                f(key, 4 * c + slot, prev);
                prev = key;
                p += len;
            }
            c = p;
        }
    }

    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<u64> {
        let mut found = None;
        Self::for_each_while(leaf, used, |key| {
            if key >= target {
                found = Some(key);
            }
            found.is_none()
        });
        found
    }

    fn last(leaf: &[u8], used: usize) -> Option<u64> {
        let mut last = None;
        Self::for_each_while(leaf, used, |key| {
            last = Some(key);
            true
        });
        last
    }

    fn insert(leaf: &mut [u8], used: usize, key: u64) -> LeafInsert {
        if used == 0 {
            if leaf.len() < HEAD_BYTES {
                return LeafInsert::Full;
            }
            write_head(leaf, key);
            return LeafInsert::Inserted(HEAD_BYTES);
        }
        let head = read_head(leaf);
        if key <= head {
            if key == head {
                return LeafInsert::Present;
            }
            let mut keys = keys_of(leaf, used);
            keys.insert(0, key);
            if Self::encoded_len(&keys) > leaf.len() {
                return LeafInsert::Full;
            }
            return LeafInsert::Inserted(Self::encode(&keys, leaf));
        }
        // Only the groups from the one the key falls in onward change.
        match edit::edit(leaf, used, key, edit::Edit::Insert) {
            edit::TailEdit::Unchanged => LeafInsert::Present,
            edit::TailEdit::Written(now) => LeafInsert::Inserted(now),
            edit::TailEdit::Full => LeafInsert::Full,
        }
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove {
        if used == 0 {
            return LeafRemove::Absent;
        }
        let head = read_head(leaf);
        if key <= head {
            if key < head {
                return LeafRemove::Absent;
            }
            let mut keys = keys_of(leaf, used);
            keys.remove(0);
            if keys.is_empty() {
                return LeafRemove::Removed(0);
            }
            // The new head's 8 bytes replace a difference of at most 13 and its group
            // share: the leaf never grows.
            return LeafRemove::Removed(Self::encode(&keys, leaf));
        }
        // As for inserts, only the tail from the key's group changes. The two differences
        // around the key merge into one, whose code can be longer than both together
        // (3 + 1 bytes become 5; 5 + 1 become an escaped 13): then the tail may not fit.
        match edit::edit(leaf, used, key, edit::Edit::Remove) {
            edit::TailEdit::Unchanged => LeafRemove::Absent,
            edit::TailEdit::Written(now) => LeafRemove::Removed(now),
            edit::TailEdit::Full => LeafRemove::Full,
        }
    }

    fn decode_into(leaf: &[u8], used: usize, out: &mut Vec<u64>) {
        if used == 0 {
            return;
        }
        // Leaves inside an array have padding after them: loads need no bounds checks.
        if used.saturating_add(8) <= leaf.len() {
            decode_all::<true>(leaf, used, out);
        } else {
            decode_all::<false>(leaf, used, out);
        }
    }
}

#[cfg(test)]
mod tests;
