//! A PMA's arrays as they are in memory (leaf bytes, per-leaf sizes and heads), exported and
//! imported whole for snapshot files: borrowed for writing ([`Pma::parts`]), owned and
//! checked in parallel against every invariant for reading back ([`Pma::from_parts`]).
//! (The name `PmaParts` is about these arrays; it has nothing to do with the PART tree.)

use std::marker::PhantomData;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use rayon::prelude::*;

use super::leaf::LeafCodec;
use super::{Page, Pma, PmaConfig, PmaError, Table, PADDING_BYTES};

/// A PMA's arrays: the leaves' bytes borrowed page by page, the small per-leaf arrays
/// gathered.
#[derive(Debug, Clone)]
pub struct PmaPartsRef<'a> {
    /// The configuration.
    pub config: &'a PmaConfig,
    /// Bytes per leaf.
    pub leaf_bytes: usize,
    /// Number of keys.
    pub len: usize,
    /// The leaves' bytes, one slice per page in order (together `used.len() * leaf_bytes`
    /// bytes, no padding).
    pub data: Vec<&'a [u8]>,
    /// Bytes used per leaf.
    pub used: Vec<u32>,
    /// Each leaf's head key.
    pub heads: Vec<u64>,
}

/// A PMA's arrays, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct PmaParts {
    /// The configuration.
    pub config: PmaConfig,
    /// Bytes per leaf.
    pub leaf_bytes: usize,
    /// Number of keys.
    pub len: usize,
    /// The leaves' bytes (`used.len() * leaf_bytes`, no padding).
    pub data: Vec<u8>,
    /// Bytes used per leaf.
    pub used: Vec<u32>,
    /// Each leaf's head key.
    pub heads: Vec<u64>,
}

/// What one leaf holds, for the checks across leaves.
#[derive(Clone, Copy)]
struct LeafSummary {
    count: usize,
    first: u64,
    last: u64,
}

impl<C: LeafCodec> Pma<C> {
    /// The arrays as they are in memory.
    pub fn parts(&self) -> PmaPartsRef<'_> {
        PmaPartsRef {
            config: &self.config,
            leaf_bytes: self.leaf_bytes,
            len: self.len,
            data: self.stored_pages(),
            used: self.table.used_all(),
            heads: self.table.heads(),
        }
    }

    /// The arrays as an owned copy (the form [`Pma::from_parts`] takes).
    pub fn into_parts(self) -> PmaParts {
        let parts = self.parts();
        PmaParts {
            config: parts.config.clone(),
            leaf_bytes: parts.leaf_bytes,
            len: parts.len,
            data: parts.data.concat(),
            used: parts.used,
            heads: parts.heads,
        }
    }

    /// Rebuilds a PMA from its arrays after checking, on all threads, every invariant
    /// `check_invariants` checks, plus `item_ok` on every item. Never panics on bad input.
    ///
    /// # Errors
    /// [`PmaError::InvalidConfig`] or [`PmaError::Invariant`] naming what does not hold.
    pub fn from_parts(
        parts: PmaParts,
        item_ok: impl Fn(C::Item) -> bool + Sync,
    ) -> Result<Self, PmaError> {
        let broken = |leaf, what: String| PmaError::Invariant { leaf, what };
        let PmaParts {
            config,
            leaf_bytes,
            len,
            data,
            used,
            heads,
        } = parts;
        config.validate_for_slack(C::SLACK)?;
        let num_leaves = used.len();
        if leaf_bytes < 64 || leaf_bytes % 64 != 0 || leaf_bytes > 1 << 20 {
            return Err(broken(0, format!("leaf size {leaf_bytes} is not valid")));
        }
        if config.leaf_bytes.is_some_and(|b| b != leaf_bytes) {
            return Err(broken(
                0,
                "leaf size disagrees with the configuration".into(),
            ));
        }
        if num_leaves == 0
            || heads.len() != num_leaves
            || num_leaves.checked_mul(leaf_bytes) != Some(data.len())
        {
            return Err(broken(
                0,
                "array lengths disagree with the leaf count".into(),
            ));
        }
        let summaries: Vec<Option<LeafSummary>> = data
            .par_chunks(leaf_bytes)
            .zip(used.par_iter())
            .zip(heads.par_iter())
            .enumerate()
            .map(|(j, ((leaf, &used), &head))| {
                check_leaf::<C>(leaf, used as usize, head, &item_ok).map_err(|what| broken(j, what))
            })
            .collect::<Result<_, _>>()?;
        let (mut count, mut total_used) = (0usize, 0usize);
        let mut next_head = u64::MAX;
        let mut previous_first: Option<u64> = None;
        for j in (0..num_leaves).rev() {
            match summaries[j] {
                None if heads[j] != next_head => {
                    return Err(broken(
                        j,
                        format!("empty leaf head {} != {next_head}", heads[j]),
                    ));
                }
                None => {}
                Some(summary) => {
                    if previous_first.is_some_and(|next| summary.last >= next) {
                        return Err(broken(j, "keys out of order across leaves".into()));
                    }
                    previous_first = Some(summary.first);
                    next_head = summary.first;
                    count += summary.count;
                    total_used += used[j] as usize;
                }
            }
        }
        if count != len {
            return Err(broken(0, format!("len {len} but {count} keys stored")));
        }
        let page_shift = config.page_shift(leaf_bytes);
        let page_leaves = 1 << page_shift;
        let pages: Vec<Page> = (0..num_leaves.div_ceil(page_leaves))
            .into_par_iter()
            .map(|p| {
                let leaves = p * page_leaves..((p + 1) * page_leaves).min(num_leaves);
                let mut bytes = Vec::with_capacity(leaves.len() * leaf_bytes + PADDING_BYTES);
                bytes.extend_from_slice(&data[leaves.start * leaf_bytes..leaves.end * leaf_bytes]);
                bytes.resize(leaves.len() * leaf_bytes + PADDING_BYTES, 0);
                Page::from(bytes)
            })
            .collect();
        Ok(Self {
            config,
            leaf_bytes,
            page_shift,
            num_leaves,
            table: Arc::new(Table::new(pages, heads, used, page_shift)),
            len,
            total_used,
            page_copies: AtomicUsize::new(0),
            lineage: Arc::new(()),
            codec: PhantomData,
        })
    }
}

/// Checks one leaf; `None` for an empty one.
fn check_leaf<C: LeafCodec>(
    leaf: &[u8],
    used: usize,
    head: u64,
    item_ok: &(impl Fn(C::Item) -> bool + Sync),
) -> Result<Option<LeafSummary>, String> {
    if used == 0 {
        return Ok(None);
    }
    if used > leaf.len() || used < C::HEAD {
        return Err(format!("uses {used} of {} bytes", leaf.len()));
    }
    // Decoders may read a few bytes past `used`: give them a padded copy when the leaf
    // has no room after its used bytes.
    let buffer: Vec<u8>;
    let bytes: &[u8] = if used + PADDING_BYTES <= leaf.len() {
        leaf
    } else {
        buffer = [&leaf[..used], &[0u8; PADDING_BYTES][..]].concat();
        &buffer
    };
    let mut summary = LeafSummary {
        count: 0,
        first: 0,
        last: 0,
    };
    let mut items = Vec::with_capacity(used);
    let mut problem = None;
    C::for_each_while(bytes, used, |item| {
        let key = C::key(item);
        if summary.count == 0 {
            summary.first = key;
        } else if key <= summary.last {
            problem = Some(format!("key {key} after {}", summary.last));
            return false;
        }
        if !item_ok(item) {
            problem = Some(format!("item {item:?} is not valid here"));
            return false;
        }
        summary.last = key;
        summary.count += 1;
        items.push(item);
        true
    });
    if let Some(problem) = problem {
        return Err(problem);
    }
    if summary.count == 0 || summary.first != head {
        return Err(format!("head {head} != first key {}", summary.first));
    }
    let size = C::encoded_len(&items);
    if size != used {
        return Err(format!("uses {used} bytes but its keys encode in {size}"));
    }
    Ok(Some(summary))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::pma::{Cpma, CpmaMap, PmaConfig};

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

    proptest! {
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
}
