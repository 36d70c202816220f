//! [`DeltaLeaf`], the compressed leaf of the CPMA (paper, section 5): the head as eight
//! bytes, then each following key as the byte code of its difference from the key before.

use crate::codec::delta::{self, find_in_run, for_each_in_run};
use crate::codec::varint::{self, decode_padded, encoded_len};
use crate::pma::sort;

use super::{read_head, sealed, write_head, LeafCodec, LeafInsert, LeafRemove, HEAD_BYTES};

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
        sort::sort_keys(items);
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

    #[inline]
    fn entry_end(leaf: &[u8], offset: usize) -> usize {
        if offset < HEAD_BYTES {
            HEAD_BYTES
        } else {
            offset + delta_at(leaf, offset).1
        }
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

    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove {
        if used == 0 {
            return LeafRemove::Absent;
        }
        let head = read_head(leaf);
        if key < head {
            return LeafRemove::Absent;
        }
        if key == head {
            if used == HEAD_BYTES {
                return LeafRemove::Removed(0);
            }
            let (delta, len) = delta_at(leaf, HEAD_BYTES);
            leaf.copy_within(HEAD_BYTES + len..used, HEAD_BYTES);
            write_head(leaf, head + delta);
            return LeafRemove::Removed(used - len);
        }
        let at = find_in_run(&leaf[HEAD_BYTES..], used - HEAD_BYTES, head, key);
        if at.found != Some(key) {
            return LeafRemove::Absent;
        }
        let offset = HEAD_BYTES + at.offset;
        let len_key = encoded_len(key - at.prev);
        if offset + len_key == used {
            return LeafRemove::Removed(offset);
        }
        let (next_delta, len_next) = delta_at(leaf, offset + len_key);
        let merged = key - at.prev + next_delta;
        let len_merged = encoded_len(merged);
        leaf.copy_within(offset + len_key + len_next..used, offset + len_merged);
        varint::write_code(merged, &mut leaf[offset..offset + len_merged]);
        LeafRemove::Removed(used - len_key - len_next + len_merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::leaf::tests::check_ops;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn delta_leaf_matches_btreeset(ops in proptest::collection::vec((any::<bool>(), 0u64..500), 0..120)) {
            check_ops::<DeltaLeaf>(&ops, 96);
        }

        #[test]
        fn delta_leaf_wide_keys_match_btreeset(ops in proptest::collection::vec((any::<bool>(), any::<u64>()), 0..60)) {
            check_ops::<DeltaLeaf>(&ops, 128);
        }
    }
}
