//! [`DeltaMapLeaf`], the compressed map leaf: keys delta-coded as in `delta.rs`, each
//! followed by its value as eight uncompressed bytes.

use crate::codec::delta;
use crate::codec::varint::{self, encoded_len};

use super::{read_head, sealed, write_head, LeafCodec, LeafInsert, LeafRemove, HEAD_BYTES};

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
}

impl LeafCodec for DeltaMapLeaf {
    type Item = (u64, u64);
    const NAME: &'static str = "cpma-map";
    const HEAD: usize = HEAD_BYTES + VALUE_BYTES;
    const VALUES: bool = true;
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

    #[inline]
    fn entry_end(leaf: &[u8], offset: usize) -> usize {
        if offset < Self::HEAD {
            Self::HEAD
        } else {
            let (_, code_len) =
                varint::decode_padded(leaf, offset).expect("CPMA leaves hold valid byte codes");
            offset + code_len + VALUE_BYTES
        }
    }

    /// The first key's value, the last eight bytes of its entry.
    #[inline(always)]
    fn first_read_byte(end: usize) -> usize {
        end.saturating_sub(VALUE_BYTES)
    }

    #[inline]
    fn item_ending_at<'a>(leaf: impl FnOnce() -> &'a [u8], end: usize, key: u64) -> (u64, u64) {
        (key, read_value(leaf(), end - VALUE_BYTES))
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
        super::map_lower_bound::<Self>(leaf, used, target)
    }

    fn last(leaf: &[u8], used: usize) -> Option<u64> {
        super::map_last::<Self>(leaf, used)
    }

    fn insert(leaf: &mut [u8], used: usize, item: (u64, u64)) -> LeafInsert {
        super::map_insert::<Self>(leaf, used, item)
    }

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove {
        super::map_remove::<Self>(leaf, used, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A prefetch of a run known by its first key loads that key's value, which the read
    /// takes first: the last eight bytes of the entry.
    #[test]
    fn the_first_read_of_a_run_is_its_first_value() {
        let items = [(5, 50), (7, 70), (300, 30_000)];
        let mut leaf = [0u8; 64];
        let used = DeltaMapLeaf::encode(&items, &mut leaf);
        let mut offset = 0;
        for &(key, value) in &items {
            let end = DeltaMapLeaf::entry_end(&leaf, offset);
            let at = DeltaMapLeaf::first_read_byte(end);
            assert_eq!(read_value(&leaf, at), value);
            assert_eq!(
                DeltaMapLeaf::item_ending_at(|| &leaf[..], end, key),
                (key, value)
            );
            offset = end;
        }
        assert_eq!(offset, used);
    }
}
