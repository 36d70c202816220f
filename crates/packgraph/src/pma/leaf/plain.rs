//! [`PlainLeaf`], the uncompressed leaf of the plain PMA (the baseline): every key as eight
//! little-endian bytes, searched by binary search.

use crate::pma::sort;

use super::{read_head, sealed, write_head, LeafCodec, LeafInsert, LeafRemove, HEAD_BYTES};

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
        sort::sort_keys(items);
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

    fn entry_end(_leaf: &[u8], offset: usize) -> usize {
        offset + HEAD_BYTES
    }

    #[inline(always)]
    fn item_ending_at<'a>(_leaf: impl FnOnce() -> &'a [u8], _end: usize, key: u64) -> u64 {
        key
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

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove {
        let count = used / 8;
        let index = plain_position(leaf, count, key);
        if index == count || plain_key(leaf, index) != key {
            return LeafRemove::Absent;
        }
        leaf.copy_within(index * 8 + 8..used, index * 8);
        LeafRemove::Removed(used - 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::leaf::tests::check_ops;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn plain_leaf_matches_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..200), 0..80)) {
            check_ops::<PlainLeaf>(&ops, 128);
        }
    }
}
