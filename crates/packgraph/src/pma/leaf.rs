//! Leaf encodings: how one PMA leaf lays out its sorted keys in bytes.
//!
//! Both encodings keep a leaf packed left (its keys in the first `used` bytes, the rest
//! free) and start with the head, the leaf's smallest key, as eight little-endian bytes, so
//! a leaf's head can be read without decoding and the same PMA code serves both:
//!
//! ```text
//! PlainLeaf:  | k0 (8 B) | k1 (8 B) | k2 (8 B) | ... | free |
//! DeltaLeaf:  | k0 (8 B) | code(k1-k0) | code(k2-k1) | ... | free |   (codes: 1–10 B each)
//! ```
//!
//! Functions reading a leaf take a slice that starts at the leaf and may extend past it (into
//! the next leaves and the array's padding); only `used` bytes are decoded, and the extra bytes
//! let the word-at-a-time decoder skip its bounds fallback. Functions writing a leaf take
//! exactly the leaf's bytes, whose length is its capacity.

use crate::codec::delta::{self, find_in_run, for_each_in_run};
use crate::codec::varint::{self, decode_padded, encoded_len};

/// Bytes of a leaf's uncompressed head.
pub(crate) const HEAD_BYTES: usize = 8;

/// The result of inserting one key into a leaf in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafInsert {
    /// The key was already there with this value; nothing changed.
    Present,
    /// The key was already there; its value was replaced in place (maps only).
    Replaced,
    /// The key was added; the leaf now uses this many bytes.
    Inserted(usize),
    /// The key is absent but does not fit; nothing changed.
    Full,
}

mod sealed {
    pub trait Sealed {}
}

/// A leaf layout for [`Pma`](super::Pma). Implemented by [`DeltaLeaf`] (the CPMA) and
/// [`PlainLeaf`] (the uncompressed PMA); sealed.
pub trait LeafCodec: sealed::Sealed + Send + Sync + 'static {
    /// What the array stores: a key (`u64`, a set) or a key with its value (a map).
    type Item: Copy + Default + PartialEq + Send + Sync + std::fmt::Debug + 'static;

    /// Short name used in reports (`"cpma"`, `"pma"`).
    const NAME: &'static str;

    /// Bytes of a leaf's first entry (its uncompressed head).
    const HEAD: usize;

    /// Free bytes a leaf's upper density bound keeps so that any redistribution fits (see
    /// `density.rs`): at least the largest entry, plus a head's extra bytes, plus 2.
    const SLACK: usize;

    /// The key of an item.
    fn key(item: Self::Item) -> u64;

    /// Bytes `item` takes when it follows the key `prev` inside a leaf.
    fn entry_bytes(prev: u64, item: Self::Item) -> usize;

    /// Writes `items` (non-empty, keys strictly increasing) into `out`, which is long
    /// enough; returns the bytes written.
    fn encode(items: &[Self::Item], out: &mut [u8]) -> usize;

    /// Writes `items` (non-empty, keys strictly increasing) into `out` if they fit and
    /// returns the bytes written; `None` (with `out` partly overwritten) if they do not.
    fn encode_bounded(items: &[Self::Item], out: &mut [u8]) -> Option<usize>;

    /// Calls `f` on each item of the leaf in order until it returns `false`; returns
    /// whether every item was visited.
    fn for_each_while(leaf: &[u8], used: usize, f: impl FnMut(Self::Item) -> bool) -> bool;

    /// Calls `f` on the items from the entry at byte `offset` (whose predecessor's key is
    /// `prev`) on, until it returns `false`; returns whether the leaf's end was reached.
    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        f: impl FnMut(Self::Item) -> bool,
    ) -> bool;

    /// Calls `f` on at most `count` keys from the entry at byte `offset` (predecessor `prev`)
    /// until it returns `false`; returns how many keys it visited and whether `f` stopped.
    fn for_count_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        count: usize,
        f: &mut impl FnMut(Self::Item) -> bool,
    ) -> (usize, bool);

    /// Calls `f(key, offset, prev)` on every entry: the key, the byte offset of its entry and
    /// the key before it in the leaf (0 for the head).
    fn for_each_entry(leaf: &[u8], used: usize, f: impl FnMut(u64, usize, u64));

    /// The first item whose key is `>= target` in the leaf, if any.
    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<Self::Item>;

    /// The leaf's largest key.
    fn last(leaf: &[u8], used: usize) -> Option<u64>;

    /// Inserts `item` in place (replacing the value of an item with the same key).
    fn insert(leaf: &mut [u8], used: usize, item: Self::Item) -> LeafInsert;

    /// Removes `key` in place; returns the new used bytes, or `None` if it was absent.
    fn remove(leaf: &mut [u8], used: usize, key: u64) -> Option<usize>;

    /// Bytes the encoding of `items` (non-empty, keys strictly increasing) takes.
    fn encoded_len(items: &[Self::Item]) -> usize {
        Self::HEAD
            + items
                .windows(2)
                .map(|w| Self::entry_bytes(Self::key(w[0]), w[1]))
                .sum::<usize>()
    }

    /// Sorts `items` by key, stably (items with equal keys keep their order).
    fn sort_items(items: &mut Vec<Self::Item>) {
        use rayon::slice::ParallelSliceMut;
        items.par_sort_by_key(|&item| Self::key(item));
    }

    /// Appends the leaf's items to `out`.
    fn decode_into(leaf: &[u8], used: usize, out: &mut Vec<Self::Item>) {
        Self::for_each_while(leaf, used, |item| {
            out.push(item);
            true
        });
    }
}

#[inline(always)]
fn read_head(leaf: &[u8]) -> u64 {
    let bytes: [u8; 8] = leaf[..HEAD_BYTES]
        .try_into()
        .expect("a leaf holds its 8-byte head");
    u64::from_le_bytes(bytes)
}

#[inline(always)]
fn write_head(leaf: &mut [u8], key: u64) {
    leaf[..HEAD_BYTES].copy_from_slice(&key.to_le_bytes());
}

/// The compressed leaf: head, then byte-coded deltas (CPMA paper, section 5).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeltaLeaf;

impl sealed::Sealed for DeltaLeaf {}

/// Decodes the delta code at `pos` of a leaf this process wrote.
#[inline(always)]
fn delta_at(leaf: &[u8], pos: usize) -> (u64, usize) {
    decode_padded(leaf, pos).expect("CPMA leaves hold valid byte codes")
}

impl LeafCodec for DeltaLeaf {
    type Item = u64;
    const NAME: &'static str = "cpma";
    const HEAD: usize = HEAD_BYTES;
    const SLACK: usize = 20;

    #[inline(always)]
    fn key(item: u64) -> u64 {
        item
    }

    fn sort_items(items: &mut Vec<u64>) {
        super::sort::sort_keys(items);
    }

    #[inline(always)]
    fn entry_bytes(prev: u64, key: u64) -> usize {
        encoded_len(key.wrapping_sub(prev))
    }

    fn encode(keys: &[u64], out: &mut [u8]) -> usize {
        write_head(out, keys[0]);
        HEAD_BYTES + delta::write_run(keys[0], &keys[1..], &mut out[HEAD_BYTES..])
    }

    fn encode_bounded(keys: &[u64], out: &mut [u8]) -> Option<usize> {
        let rest = out.get_mut(HEAD_BYTES..)?;
        let run = delta::write_run_bounded(keys[0], &keys[1..], rest)?;
        write_head(out, keys[0]);
        Some(HEAD_BYTES + run)
    }

    #[inline]
    fn for_each_while(leaf: &[u8], used: usize, mut f: impl FnMut(u64) -> bool) -> bool {
        if used == 0 {
            return true;
        }
        let head = read_head(leaf);
        f(head) && for_each_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, f)
    }

    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        f: impl FnMut(u64) -> bool,
    ) -> bool {
        if offset < HEAD_BYTES {
            return Self::for_each_while(leaf, used, f);
        }
        for_each_in_run(&leaf[offset..], used.saturating_sub(offset), prev, f)
    }

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
        if offset < HEAD_BYTES {
            key = read_head(leaf);
            if !f(key) {
                return (1, true);
            }
            (pos, visited) = (HEAD_BYTES, 1);
        }
        let scan = delta::for_count_words(leaf, pos, used, count - visited, key, f);
        (visited + scan.decoded, scan.stopped)
    }

    fn for_each_entry(leaf: &[u8], used: usize, mut f: impl FnMut(u64, usize, u64)) {
        if used == 0 {
            return;
        }
        let head = read_head(leaf);
        f(head, 0, 0);
        let (mut offset, mut prev) = (HEAD_BYTES, head);
        for_each_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, |key| {
            f(key, offset, prev);
            offset += encoded_len(key - prev);
            prev = key;
            true
        });
    }

    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<u64> {
        if used == 0 {
            return None;
        }
        let head = read_head(leaf);
        if head >= target {
            return Some(head);
        }
        find_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, target).found
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
        let capacity = leaf.len();
        if used == 0 {
            write_head(leaf, key);
            return LeafInsert::Inserted(HEAD_BYTES);
        }
        let head = read_head(leaf);
        if key == head {
            return LeafInsert::Present;
        }
        if key < head {
            // The old head becomes the first delta.
            let len = encoded_len(head - key);
            if used + len > capacity {
                return LeafInsert::Full;
            }
            leaf.copy_within(HEAD_BYTES..used, HEAD_BYTES + len);
            write_head(leaf, key);
            varint::write_code(head - key, &mut leaf[HEAD_BYTES..HEAD_BYTES + len]);
            return LeafInsert::Inserted(used + len);
        }
        let at = find_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, key);
        let offset = HEAD_BYTES + at.offset;
        let (before, after, old_len) = match at.found {
            Some(next) if next == key => return LeafInsert::Present,
            Some(next) => (key - at.prev, next - key, encoded_len(next - at.prev)),
            None => (key - at.prev, 0, 0),
        };
        let (len_before, len_after) = (
            encoded_len(before),
            if old_len == 0 { 0 } else { encoded_len(after) },
        );
        let new_used = used + len_before + len_after - old_len;
        if new_used > capacity {
            return LeafInsert::Full;
        }
        leaf.copy_within(offset + old_len..used, offset + len_before + len_after);
        varint::write_code(before, &mut leaf[offset..offset + len_before]);
        if len_after > 0 {
            let rest = offset + len_before;
            varint::write_code(after, &mut leaf[rest..rest + len_after]);
        }
        LeafInsert::Inserted(new_used)
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> Option<usize> {
        if used == 0 {
            return None;
        }
        let head = read_head(leaf);
        if key < head {
            return None;
        }
        if key == head {
            if used == HEAD_BYTES {
                return Some(0);
            }
            let (delta, len) = delta_at(leaf, HEAD_BYTES);
            leaf.copy_within(HEAD_BYTES + len..used, HEAD_BYTES);
            write_head(leaf, head + delta);
            return Some(used - len);
        }
        let at = find_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, key);
        if at.found != Some(key) {
            return None;
        }
        let offset = HEAD_BYTES + at.offset;
        let len_key = encoded_len(key - at.prev);
        if offset + len_key == used {
            return Some(offset);
        }
        let (next_delta, len_next) = delta_at(leaf, offset + len_key);
        let merged = key - at.prev + next_delta;
        let len_merged = encoded_len(merged);
        leaf.copy_within(offset + len_key + len_next..used, offset + len_merged);
        varint::write_code(merged, &mut leaf[offset..offset + len_merged]);
        Some(used - len_key - len_next + len_merged)
    }
}

/// The uncompressed leaf: keys as eight little-endian bytes each (the plain PMA).
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainLeaf;

impl sealed::Sealed for PlainLeaf {}

#[inline(always)]
fn plain_key(leaf: &[u8], index: usize) -> u64 {
    read_head(&leaf[index * 8..])
}

/// Index of the first key `>= target` among the leaf's `count` keys.
fn plain_position(leaf: &[u8], count: usize, target: u64) -> usize {
    let (mut lo, mut hi) = (0, count);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if plain_key(leaf, mid) < target {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

impl LeafCodec for PlainLeaf {
    type Item = u64;
    const NAME: &'static str = "pma";
    const HEAD: usize = HEAD_BYTES;
    const SLACK: usize = 20;

    #[inline(always)]
    fn key(item: u64) -> u64 {
        item
    }

    fn sort_items(items: &mut Vec<u64>) {
        super::sort::sort_keys(items);
    }

    #[inline(always)]
    fn entry_bytes(_prev: u64, _key: u64) -> usize {
        8
    }

    fn encode(keys: &[u64], out: &mut [u8]) -> usize {
        for (chunk, key) in out.chunks_exact_mut(8).zip(keys) {
            chunk.copy_from_slice(&key.to_le_bytes());
        }
        keys.len() * 8
    }

    fn encoded_len(keys: &[u64]) -> usize {
        keys.len() * 8
    }

    fn encode_bounded(keys: &[u64], out: &mut [u8]) -> Option<usize> {
        (keys.len() * 8 <= out.len()).then(|| Self::encode(keys, out))
    }

    #[inline]
    fn for_each_while(leaf: &[u8], used: usize, mut f: impl FnMut(u64) -> bool) -> bool {
        leaf[..used]
            .chunks_exact(8)
            .all(|chunk| f(read_head(chunk)))
    }

    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        _prev: u64,
        mut f: impl FnMut(u64) -> bool,
    ) -> bool {
        leaf[offset.min(used)..used]
            .chunks_exact(8)
            .all(|chunk| f(read_head(chunk)))
    }

    fn for_count_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        _prev: u64,
        count: usize,
        f: &mut impl FnMut(u64) -> bool,
    ) -> (usize, bool) {
        let mut visited = 0;
        for chunk in leaf[offset.min(used)..used].chunks_exact(8).take(count) {
            visited += 1;
            if !f(read_head(chunk)) {
                return (visited, true);
            }
        }
        (visited, false)
    }

    fn for_each_entry(leaf: &[u8], used: usize, mut f: impl FnMut(u64, usize, u64)) {
        let mut prev = 0;
        for (i, chunk) in leaf[..used].chunks_exact(8).enumerate() {
            let key = read_head(chunk);
            f(key, i * 8, prev);
            prev = key;
        }
    }

    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<u64> {
        let count = used / 8;
        let index = plain_position(leaf, count, target);
        (index < count).then(|| plain_key(leaf, index))
    }

    fn last(leaf: &[u8], used: usize) -> Option<u64> {
        (used >= 8).then(|| plain_key(leaf, used / 8 - 1))
    }

    fn insert(leaf: &mut [u8], used: usize, key: u64) -> LeafInsert {
        let count = used / 8;
        let index = plain_position(leaf, count, key);
        if index < count && plain_key(leaf, index) == key {
            return LeafInsert::Present;
        }
        if used + 8 > leaf.len() {
            return LeafInsert::Full;
        }
        leaf.copy_within(index * 8..used, index * 8 + 8);
        write_head(&mut leaf[index * 8..], key);
        LeafInsert::Inserted(used + 8)
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> Option<usize> {
        let count = used / 8;
        let index = plain_position(leaf, count, key);
        if index == count || plain_key(leaf, index) != key {
            return None;
        }
        leaf.copy_within(index * 8 + 8..used, index * 8);
        Some(used - 8)
    }
}

/// The compressed map leaf: the head key and its value, then for every further entry the
/// byte-coded key delta followed by the value (eight little-endian bytes, not compressed).
///
/// ```text
/// DeltaMapLeaf: | k0 (8 B) | v0 (8 B) | code(k1-k0) | v1 (8 B) | code(k2-k1) | v2 (8 B) | ... |
/// ```
///
/// Items are `(key, value)`; the graph stores an edge weight's bits as the value. In-place
/// inserts and removals decode the leaf, edit and re-encode it (a leaf is at most a few
/// kilobytes).
#[derive(Debug, Clone, Copy, Default)]
pub struct DeltaMapLeaf;

impl sealed::Sealed for DeltaMapLeaf {}

/// Bytes of a map entry's value.
const VALUE_BYTES: usize = 8;

#[inline(always)]
fn read_value(leaf: &[u8], pos: usize) -> u64 {
    read_head(&leaf[pos..])
}

impl DeltaMapLeaf {
    /// Decodes entries from byte `pos` (a delta entry; the previous key is `key`) until
    /// `count` were visited, the leaf ends or `f` returns `false`; returns how many were
    /// visited and whether `f` stopped.
    #[inline(always)]
    fn scan(
        leaf: &[u8],
        used: usize,
        mut pos: usize,
        mut key: u64,
        count: usize,
        mut f: impl FnMut(usize, u64, (u64, u64)) -> bool,
    ) -> (usize, bool) {
        let run = &leaf[..used.min(leaf.len())];
        let mut visited = 0;
        while visited < count {
            let Some((delta, next)) = delta::scan_code(run, pos) else {
                break;
            };
            let Some(value) = run.get(next..next + VALUE_BYTES) else {
                break;
            };
            let value = read_head(value);
            let prev = key;
            key = key.wrapping_add(delta);
            visited += 1;
            if !f(pos, prev, (key, value)) {
                return (visited, true);
            }
            pos = next + VALUE_BYTES;
        }
        (visited, false)
    }

    fn decode_vec(leaf: &[u8], used: usize) -> Vec<(u64, u64)> {
        let mut items = Vec::with_capacity(used / 4 + 1);
        Self::decode_into(leaf, used, &mut items);
        items
    }
}

impl LeafCodec for DeltaMapLeaf {
    type Item = (u64, u64);
    const NAME: &'static str = "cpma-map";
    const HEAD: usize = HEAD_BYTES + VALUE_BYTES;
    const SLACK: usize = 30;

    #[inline(always)]
    fn key(item: (u64, u64)) -> u64 {
        item.0
    }

    #[inline(always)]
    fn entry_bytes(prev: u64, item: (u64, u64)) -> usize {
        encoded_len(item.0.wrapping_sub(prev)) + VALUE_BYTES
    }

    fn encode(items: &[(u64, u64)], out: &mut [u8]) -> usize {
        let (head, value) = items[0];
        write_head(out, head);
        write_head(&mut out[HEAD_BYTES..], value);
        let (mut pos, mut prev) = (Self::HEAD, head);
        for &(key, value) in &items[1..] {
            pos += varint::write_code_at(key - prev, out, pos);
            write_head(&mut out[pos..], value);
            pos += VALUE_BYTES;
            prev = key;
        }
        pos
    }

    fn encode_bounded(items: &[(u64, u64)], out: &mut [u8]) -> Option<usize> {
        (Self::encoded_len(items) <= out.len()).then(|| Self::encode(items, out))
    }

    fn for_each_while(leaf: &[u8], used: usize, mut f: impl FnMut((u64, u64)) -> bool) -> bool {
        if used == 0 {
            return true;
        }
        let head = read_head(leaf);
        if !f((head, read_value(leaf, HEAD_BYTES))) {
            return false;
        }
        !Self::scan(leaf, used, Self::HEAD, head, usize::MAX, |_, _, item| {
            f(item)
        })
        .1
    }

    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        mut f: impl FnMut((u64, u64)) -> bool,
    ) -> bool {
        if offset < Self::HEAD {
            return Self::for_each_while(leaf, used, f);
        }
        !Self::scan(leaf, used, offset, prev, usize::MAX, |_, _, item| f(item)).1
    }

    fn for_count_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        count: usize,
        f: &mut impl FnMut((u64, u64)) -> bool,
    ) -> (usize, bool) {
        if count == 0 || used == 0 {
            return (0, false);
        }
        if offset < Self::HEAD {
            let head = read_head(leaf);
            if !f((head, read_value(leaf, HEAD_BYTES))) {
                return (1, true);
            }
            let (visited, stopped) =
                Self::scan(leaf, used, Self::HEAD, head, count - 1, |_, _, item| {
                    f(item)
                });
            return (visited + 1, stopped);
        }
        Self::scan(leaf, used, offset, prev, count, |_, _, item| f(item))
    }

    fn for_each_entry(leaf: &[u8], used: usize, mut f: impl FnMut(u64, usize, u64)) {
        if used == 0 {
            return;
        }
        let head = read_head(leaf);
        f(head, 0, 0);
        Self::scan(
            leaf,
            used,
            Self::HEAD,
            head,
            usize::MAX,
            |pos, prev, (key, _)| {
                f(key, pos, prev);
                true
            },
        );
    }

    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<(u64, u64)> {
        let mut found = None;
        Self::for_each_while(leaf, used, |item| {
            if item.0 >= target {
                found = Some(item);
                return false;
            }
            true
        });
        found
    }

    fn last(leaf: &[u8], used: usize) -> Option<u64> {
        let mut last = None;
        Self::for_each_while(leaf, used, |(key, _)| {
            last = Some(key);
            true
        });
        last
    }

    fn insert(leaf: &mut [u8], used: usize, item: (u64, u64)) -> LeafInsert {
        let mut items = Self::decode_vec(leaf, used);
        let at = items.partition_point(|&(key, _)| key < item.0);
        if items.get(at).is_some_and(|&(key, _)| key == item.0) {
            if items[at].1 == item.1 {
                return LeafInsert::Present;
            }
            items[at].1 = item.1;
            Self::encode(&items, leaf);
            return LeafInsert::Replaced;
        }
        items.insert(at, item);
        match Self::encode_bounded(&items, leaf) {
            Some(now) => LeafInsert::Inserted(now),
            // Nothing was written: encode_bounded checks the size first.
            None => LeafInsert::Full,
        }
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> Option<usize> {
        let mut items = Self::decode_vec(leaf, used);
        let at = items.partition_point(|&(k, _)| k < key);
        if items.get(at).is_none_or(|&(k, _)| k != key) {
            return None;
        }
        items.remove(at);
        Some(if items.is_empty() {
            0
        } else {
            Self::encode(&items, leaf)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn check_ops<C: LeafCodec<Item = u64>>(ops: &[(bool, u64)], capacity: usize) {
        let mut leaf = vec![0u8; capacity];
        let mut used = 0;
        let mut oracle = BTreeSet::new();
        for &(insert, key) in ops {
            if insert {
                match C::insert(&mut leaf, used, key) {
                    LeafInsert::Present => assert!(oracle.contains(&key)),
                    LeafInsert::Replaced => panic!("a set never replaces"),
                    LeafInsert::Inserted(now) => {
                        assert!(oracle.insert(key));
                        used = now;
                    }
                    LeafInsert::Full => {
                        assert!(!oracle.contains(&key));
                        let mut all: Vec<u64> = oracle.iter().copied().collect();
                        all.push(key);
                        all.sort_unstable();
                        assert!(C::encoded_len(&all) > capacity);
                    }
                }
            } else {
                match C::remove(&mut leaf, used, key) {
                    Some(now) => {
                        assert!(oracle.remove(&key));
                        used = now;
                    }
                    None => assert!(!oracle.contains(&key)),
                }
            }
            let keys: Vec<u64> = oracle.iter().copied().collect();
            let mut decoded = Vec::new();
            C::decode_into(&leaf, used, &mut decoded);
            assert_eq!(decoded, keys);
            if !keys.is_empty() {
                assert_eq!(used, C::encoded_len(&keys));
            }
            assert_eq!(C::last(&leaf, used), keys.last().copied());
            assert_eq!(
                C::lower_bound(&leaf, used, key),
                oracle.range(key..).next().copied()
            );
        }
    }

    #[test]
    fn head_replacement_and_extreme_keys() {
        let ops = [
            (true, 100),
            (true, 0),
            (true, u64::MAX),
            (false, 0),
            (true, 1),
            (false, u64::MAX),
        ];
        check_ops::<DeltaLeaf>(&ops, 64);
        check_ops::<PlainLeaf>(&ops, 64);
    }

    proptest! {
        #[test]
        fn delta_leaf_matches_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..500), 0..120)) {
            check_ops::<DeltaLeaf>(&ops, 96);
        }

        #[test]
        fn delta_leaf_wide_keys_match_btreeset(ops in proptest::collection::vec((any::<bool>(), any::<u64>()), 0..60)) {
            check_ops::<DeltaLeaf>(&ops, 128);
        }

        #[test]
        fn plain_leaf_matches_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..200), 0..80)) {
            check_ops::<PlainLeaf>(&ops, 128);
        }
    }
}
