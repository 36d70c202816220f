//! Tests of the arrays of a graph and their loading from filled pages.

use proptest::prelude::*;

use super::*;
use crate::pma::{Cpma, CpmaMap, DeltaLeaf, DeltaMapLeaf, GroupLeaf, PlainLeaf};

#[test]
fn parts_round_trip() {
    let keys: Vec<u64> = (0..50_000).map(|i| i * 20 + (i % 13)).collect();
    let set = Cpma::from_sorted(&keys).unwrap();
    let back = Cpma::from_parts(set.clone().into_parts(), |_| true).unwrap();
    back.check_invariants().unwrap();
    assert_eq!(back.iter().collect::<Vec<_>>(), keys);
    let map = CpmaMap::from_sorted(&[(1, 10), (5, 50), (9, 90)]).unwrap();
    let back = CpmaMap::from_parts(map.clone().into_parts(), |_| true).unwrap();
    assert_eq!(back.get(5), Some((5, 50)));
    assert!(CpmaMap::from_parts(map.clone().into_parts(), |(_, v)| v != 50).is_err());
}

#[test]
fn lies_about_lengths_are_errors() {
    let set = Cpma::from_sorted(&(0..1000).collect::<Vec<_>>()).unwrap();
    let mut parts = set.clone().into_parts();
    parts.len += 1;
    assert!(Cpma::from_parts(parts, |_| true).is_err());
    let mut parts = set.clone().into_parts();
    parts.used.pop();
    assert!(Cpma::from_parts(parts, |_| true).is_err());
    let mut parts = set.clone().into_parts();
    parts.leaf_bytes = 65;
    assert!(Cpma::from_parts(parts, |_| true).is_err());
    let mut parts = set.clone().into_parts();
    parts.config = PmaConfig {
        growth_factor: 0.0,
        ..PmaConfig::default()
    };
    assert!(Cpma::from_parts(parts, |_| true).is_err());
}

/// The arrays of `parts` as [`FilledPages`]: each page copied from the flat arrays.
fn filled(
    parts: &PmaParts,
) -> FilledPages<impl Fn(usize, &mut PageSlot<'_>) -> crate::Result<()> + '_> {
    let page_leaves = 1 << parts.config.page_shift(parts.leaf_bytes);
    FilledPages {
        config: parts.config.clone(),
        leaf_bytes: parts.leaf_bytes,
        num_leaves: parts.used.len(),
        len: parts.len,
        fill: move |p: usize, slot: &mut PageSlot<'_>| {
            let first = p * page_leaves;
            let leaves = first..first + slot.used.len();
            slot.used.copy_from_slice(&parts.used[leaves.clone()]);
            slot.heads.copy_from_slice(&parts.heads[leaves.clone()]);
            let bytes = leaves.start * parts.leaf_bytes..leaves.end * parts.leaf_bytes;
            for leaf in parts.data[bytes].chunks_exact(parts.leaf_bytes) {
                slot.push_leaf(leaf);
            }
            Ok(())
        },
    }
}

/// What rebuilding gives: the keys, or whether it failed.
fn keys_of<C: LeafCodec<Item = u64>, E>(pma: Result<Pma<C>, E>) -> Option<Vec<u64>> {
    pma.ok().map(|pma| {
        pma.check_invariants().unwrap();
        pma.iter().collect()
    })
}

#[test]
fn a_failed_fill_wins_over_an_invariant() {
    let set = Cpma::from_sorted(&(0..50_000).map(|i| i * 3).collect::<Vec<_>>()).unwrap();
    let mut parts = set.into_parts();
    parts.heads[0] = 77;
    let copy = filled(&parts);
    let pages = FilledPages {
        config: copy.config.clone(),
        leaf_bytes: copy.leaf_bytes,
        num_leaves: copy.num_leaves,
        len: copy.len,
        fill: |p: usize, slot: &mut PageSlot<'_>| {
            (copy.fill)(p, slot)?;
            if p == 2 {
                return Err(crate::Error::corrupt("page 2 is damaged"));
            }
            Ok(())
        },
    };
    let e = Cpma::from_filled_pages(pages, |_| true).err().unwrap();
    assert!(
        matches!(&e, RebuildError::Unreadable(e) if e.to_string().contains("page 2")),
        "{e:?}"
    );
    let e = Cpma::from_filled_pages(filled(&parts), |_| true)
        .err()
        .unwrap();
    assert!(
        matches!(
            e,
            RebuildError::Invalid(PmaError::Invariant { leaf: 0, .. })
        ),
        "{e:?}"
    );
}

#[test]
fn a_filled_page_is_written_once_and_zeroed_where_not_written() {
    let (mut used, mut heads) = ([0u32; 3], [0u64; 3]);
    let page = filled_page(64, (&mut used, &mut heads), |slot| {
        assert_eq!(slot.data_len(), 3 * 64);
        slot.push_leaf(&[7; 10]);
        slot.push_leaf(&[9; 64]);
        slot.used[0] = 10;
        Ok::<(), ()>(())
    })
    .unwrap();
    assert_eq!(page.len(), 3 * 64 + PADDING_BYTES);
    assert_eq!(page[..10], [7; 10]);
    assert!(page[10..64].iter().all(|&b| b == 0));
    assert_eq!(page[64..128], [9; 64]);
    // The leaf the fill left and the padding.
    assert!(page[128..].iter().all(|&b| b == 0));
    assert_eq!(used, [10, 0, 0]);
    let failed = filled_page(64, (&mut used, &mut heads), |slot| {
        slot.push_leaf(&[1; 3]);
        Err("damaged")
    });
    assert_eq!(failed.err(), Some("damaged"));
}

#[test]
fn a_slot_over_initialised_bytes_writes_leaves_in_place() {
    let (mut data, mut used, mut heads) = (vec![5u8; 128], [0u32; 2], [0u64; 2]);
    PageSlot::new(64, &mut data, &mut used, &mut heads).push_leaf(&[1, 2]);
    assert_eq!(data[..2], [1, 2]);
    assert!(data[2..64].iter().all(|&b| b == 0));
    assert!(data[64..].iter().all(|&b| b == 5));
}

#[test]
#[should_panic]
fn a_slot_takes_no_leaf_past_its_last() {
    let (mut data, mut used, mut heads) = (vec![0u8; 64], [0u32; 1], [0u64; 1]);
    let mut slot = PageSlot::new(64, &mut data, &mut used, &mut heads);
    slot.push_leaf(&[1]);
    slot.push_leaf(&[2]);
}

#[test]
#[should_panic]
fn a_slot_takes_no_leaf_longer_than_a_leaf() {
    let (mut data, mut used, mut heads) = (vec![0u8; 128], [0u32; 2], [0u64; 2]);
    PageSlot::new(64, &mut data, &mut used, &mut heads).push_leaf(&[1; 65]);
}

fn streamed_len<C: LeafCodec>(items: &[C::Item]) -> usize {
    let mut size = EncodedLen::<C>::new();
    for &item in items {
        size.push(item);
    }
    size.finish()
}

/// Flips the bytes `flips` names in `parts`' leaf data and sets the used length `used_flip`
/// names (to at most 40 bytes past a leaf).
fn damage(
    parts: &mut PmaParts,
    flips: &[(prop::sample::Index, u8)],
    used_flip: Option<(prop::sample::Index, u32)>,
) {
    for (at, byte) in flips {
        let i = at.index(parts.data.len());
        parts.data[i] ^= byte;
    }
    if let Some((at, used)) = used_flip {
        let i = at.index(parts.used.len());
        parts.used[i] = used % (parts.leaf_bytes as u32 + 40);
    }
}

proptest! {
    /// The size summed window by window is the codec's length of the whole list, for
    /// every codec and lengths around the window's.
    #[test]
    fn streamed_size_is_encoded_len(
        mut keys in prop::collection::vec(any::<u64>(), 1..300),
        small in any::<bool>(),
    ) {
        if small {
            keys.iter_mut().for_each(|k| *k %= 1 << 20);
        }
        keys.sort_unstable();
        keys.dedup();
        prop_assert_eq!(streamed_len::<GroupLeaf>(&keys), GroupLeaf::encoded_len(&keys));
        prop_assert_eq!(streamed_len::<DeltaLeaf>(&keys), DeltaLeaf::encoded_len(&keys));
        prop_assert_eq!(streamed_len::<PlainLeaf>(&keys), PlainLeaf::encoded_len(&keys));
        let items: Vec<(u64, u64)> = keys.iter().map(|&k| (k, k ^ 5)).collect();
        prop_assert_eq!(streamed_len::<DeltaMapLeaf>(&items), DeltaMapLeaf::encoded_len(&items));
    }

    /// Pages filled in place and checked as they are filled give what the flat arrays
    /// give, for damaged bytes, sizes and heads, in sets of each codec.
    #[test]
    fn filled_pages_are_the_flat_arrays(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        used_flip in proptest::option::of(any::<(prop::sample::Index, u32)>()),
        head_flip in proptest::option::of(any::<(prop::sample::Index, u64)>()),
        page_bytes in 64usize..4096,
        group in any::<bool>(),
    ) {
        let keys: Vec<u64> = (0..3000).map(|i| i * 8 + i % 7).collect();
        let config = PmaConfig { page_bytes, ..PmaConfig::default() };
        let mut parts = if group {
            Pma::<GroupLeaf>::from_sorted_with_config(&keys, config).unwrap().into_parts()
        } else {
            Cpma::from_sorted_with_config(&keys, config).unwrap().into_parts()
        };
        damage(&mut parts, &flips, used_flip);
        if let Some((at, head)) = head_flip {
            let i = at.index(parts.heads.len());
            parts.heads[i] = head;
        }
        if group {
            let flat = keys_of(Pma::<GroupLeaf>::from_parts(parts.clone(), |_| true));
            let pages = keys_of(Pma::<GroupLeaf>::from_filled_pages(filled(&parts), |_| true));
            prop_assert_eq!(pages, flat);
        } else {
            let flat = keys_of(Cpma::from_parts(parts.clone(), |k| k % 8 != 7));
            let pages = keys_of(Cpma::from_filled_pages(filled(&parts), |k| k % 8 != 7));
            prop_assert_eq!(pages, flat);
        }
    }

    /// A graph's arrays (arcs between `n` vertices, whose leaves are checked two at a
    /// time), as written and damaged: filled pages pass as the flat arrays do, or name
    /// the first leaf that fails as checking each leaf alone, in order, does.
    #[test]
    fn paired_leaf_checks_name_the_first_bad_leaf(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
        used_flip in proptest::option::of(any::<(prop::sample::Index, u32)>()),
        n in prop_oneof![Just(5_000u64), Just(4_500)],
        page_bytes in 64usize..4096,
    ) {
        let mut keys: Vec<u64> = (0..300u64)
            .flat_map(|u| (0..13u64).map(move |k| (u, (u * 31 + k * 97 + k * k * 5) % 4999)))
            .filter(|&(u, v)| u != v)
            .map(|(u, v)| u << 32 | v)
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let config = PmaConfig { page_bytes, ..PmaConfig::default() };
        let mut parts =
            Pma::<GroupLeaf>::from_sorted_with_config(&keys, config).unwrap().into_parts();
        damage(&mut parts, &flips, used_flip);
        let arcs = crate::pma::leaf::ArcCheck::new(n, |_: u64| true);
        let (leaf_bytes, num_leaves) = (parts.leaf_bytes, parts.used.len());
        let page_leaves = 1usize << parts.config.page_shift(leaf_bytes);
        let first_bad = (0..num_leaves).find_map(|j| {
            let page_end = ((j / page_leaves + 1) * page_leaves).min(num_leaves);
            let mut bytes = parts.data[j * leaf_bytes..page_end * leaf_bytes].to_vec();
            bytes.extend_from_slice(&[0; PADDING_BYTES]);
            let (used, head) = (parts.used[j], parts.heads[j]);
            check_leaf::<GroupLeaf>(&bytes, leaf_bytes, used, head, &arcs)
                .err()
                .map(|what| (j, what))
        });
        let pages = Pma::<GroupLeaf>::from_filled_pages(filled(&parts), arcs);
        match first_bad {
            Some((j, want)) => match pages {
                Err(RebuildError::Invalid(PmaError::Invariant { leaf, what })) => {
                    prop_assert_eq!((leaf, what), (j, want));
                }
                other => prop_assert!(false, "leaf {} fails: {}, got {:?}", j, want, other.err()),
            },
            None => {
                let flat = keys_of(Pma::<GroupLeaf>::from_parts(parts.clone(), arcs));
                prop_assert_eq!(keys_of(pages), flat);
            }
        }
    }

    #[test]
    fn corrupted_parts_never_panic(
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        used_flip in any::<(prop::sample::Index, u32)>(),
        head_flip in any::<(prop::sample::Index, u64)>(),
    ) {
        let keys: Vec<u64> = (0..3000).map(|i| i * 3).collect();
        let set = Cpma::from_sorted(&keys).unwrap();
        let mut parts = set.clone().into_parts();
        for (at, byte) in flips {
            let i = at.index(parts.data.len());
            parts.data[i] ^= byte;
        }
        let i = used_flip.0.index(parts.used.len());
        parts.used[i] = used_flip.1 % (parts.leaf_bytes as u32 + 40);
        let i = head_flip.0.index(parts.heads.len());
        if head_flip.1 % 2 == 0 {
            parts.heads[i] = head_flip.1;
        }
        if let Ok(back) = Cpma::from_parts(parts, |_| true) {
            back.check_invariants().unwrap();
        }
    }
}

/// One leaf's check for [`pages_check_across_leaves_as_one_by_one`]: a run of `count` keys
/// from `first` to `last`, or an empty leaf.
fn leaf_of(keys: &[u64]) -> LeafCheck {
    Some(LeafSummary {
        count: keys.len(),
        first: *keys.first()?,
        last: *keys.last()?,
    })
}

proptest! {
    /// The checks across leaves made page by page and then across pages agree with the
    /// leaf by leaf check: they hold for the same arrays, with the same key and byte
    /// counts, for leaves with keys and empty ones anywhere (first, last, whole pages),
    /// heads that lie, keys out of order within a page or across two, any page size.
    #[test]
    fn pages_check_across_leaves_as_one_by_one(
        sizes in prop::collection::vec(
            prop_oneof![3 => 1usize..6, 2 => Just(0usize)], 1..80),
        page_leaves in prop_oneof![Just(1usize), Just(2), Just(4), Just(8), Just(16)],
        last_is_max in any::<bool>(),
        head_lie in proptest::option::of((any::<prop::sample::Index>(), 0u64..3)),
        order_lie in proptest::option::of((any::<prop::sample::Index>(), 0u64..4)),
    ) {
        let total: usize = sizes.iter().sum();
        let mut keys: Vec<u64> = (0..total as u64).map(|k| k * 3 + 10).collect();
        if last_is_max {
            if let Some(last) = keys.last_mut() {
                *last = u64::MAX;
            }
        }
        let (mut checks, mut heads, mut used) = (Vec::new(), Vec::new(), Vec::new());
        let mut at = 0;
        for &size in &sizes {
            checks.push(leaf_of(&keys[at..at + size]));
            used.push(size as u32 * 2 + 1);
            at += size;
            // An empty leaf's head is the next key stored, `u64::MAX` past the last.
            heads.push(keys.get(at - size).copied().unwrap_or(u64::MAX));
        }
        if let Some((leaf, by)) = head_lie {
            let j = leaf.index(heads.len());
            heads[j] = heads[j].wrapping_add(by);
        }
        if let Some((leaf, back)) = order_lie {
            // A leaf whose last key reaches back to or past the next leaf's first.
            let j = leaf.index(checks.len());
            if let Some(summary) = checks[j].as_mut() {
                summary.last = summary.last.saturating_add(back * 3);
            }
        }
        let summaries: Vec<PageSummary> = checks
            .chunks(page_leaves)
            .zip(heads.chunks(page_leaves))
            .zip(used.chunks(page_leaves))
            .map(|((checks, heads), used)| PageSummary::of(checks, heads, used))
            .collect();
        let one_by_one = across_leaves(&checks, &heads, &used).ok();
        prop_assert_eq!(across_pages(&summaries), one_by_one);
    }
}
