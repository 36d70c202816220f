//! A PMA's arrays as they are in memory (leaf bytes, per-leaf sizes and heads), exported and
//! imported whole for snapshot files: borrowed for writing ([`Pma::parts`]), owned and
//! checked in parallel against every invariant for reading back ([`Pma::from_parts`]), or
//! written page by page straight into their final pages and checked as each page is
//! written ([`Pma::from_filled_pages`], how a checkpoint's pages are loaded).
//!
//! Checking decodes each leaf once: keys in order, the head, `item_ok`, and the leaf's
//! size summed as it is decoded ([`EncodedLen`]) against the size it claims (or the codec's
//! own one-pass check, [`LeafCodec::check_encoding`], where it has one), so a leaf
//! whose bytes decode to keys that encode differently (junk after the keys, a longer code
//! than needed) is refused without a list of its keys or a second encoding.
//! (The name `PmaParts` is about these arrays; it has nothing to do with the PART tree.)

use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;

use rayon::prelude::*;

use super::leaf::{ItemCheck, LeafCodec, LeafKeys};
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

impl PmaPartsRef<'_> {
    /// An owned copy of these arrays (the form [`Pma::from_parts`] takes).
    pub fn into_owned(self) -> PmaParts {
        PmaParts {
            config: self.config.clone(),
            leaf_bytes: self.leaf_bytes,
            len: self.len,
            data: self.data.concat(),
            used: self.used,
            heads: self.heads,
        }
    }
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

/// What checking a leaf found: `None` for an empty leaf.
type LeafCheck = Option<LeafSummary>;

/// Where one page's leaves go while a PMA is rebuilt page by page
/// ([`FilledPages`]): `used.len()` leaves of `leaf_bytes` bytes, written one after the
/// other by [`PageSlot::push_leaf`], with their sizes and heads.
///
/// The leaves' bytes may start uninitialised (a new page is not zeroed first: each byte is
/// written once, a leaf's used bytes copied and its free tail zeroed); the slot writes only
/// initialised bytes and tells how many it wrote, so that whoever made it zeroes the rest.
pub struct PageSlot<'a> {
    pub(crate) leaf_bytes: usize,
    data: &'a mut [MaybeUninit<u8>],
    /// Bytes of `data` written, from its start: whole leaves.
    written: usize,
    pub(crate) used: &'a mut [u32],
    pub(crate) heads: &'a mut [u64],
}

impl<'a> PageSlot<'a> {
    /// A slot over the bytes `data` (`used.len()` leaves of `leaf_bytes` bytes, already
    /// initialised), with the leaves' sizes and heads.
    pub(crate) fn new(
        leaf_bytes: usize,
        data: &'a mut [u8],
        used: &'a mut [u32],
        heads: &'a mut [u64],
    ) -> Self {
        let len = data.len();
        // SAFETY: `MaybeUninit<u8>` has the layout of `u8`, and the view replaces `data`'s
        // borrow for `'a`. A slot writes only initialised bytes into its `data`
        // (`push_leaf`, `zero_rest`), and nothing else can reach this private field, so
        // the bytes are still initialised when the borrow ends.
        let data = unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), len) };
        Self::uninit(leaf_bytes, data, used, heads)
    }

    /// A slot over bytes that need not be initialised.
    fn uninit(
        leaf_bytes: usize,
        data: &'a mut [MaybeUninit<u8>],
        used: &'a mut [u32],
        heads: &'a mut [u64],
    ) -> Self {
        Self {
            leaf_bytes,
            data,
            written: 0,
            used,
            heads,
        }
    }

    /// Bytes the slot's leaves take in all.
    pub(crate) fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Writes the next leaf: `bytes`, then zeros to the end of the leaf.
    ///
    /// # Panics
    /// If every leaf of the slot is written, or `bytes` is longer than a leaf.
    #[track_caller]
    pub(crate) fn push_leaf(&mut self, bytes: &[u8]) {
        let end = self.written + self.leaf_bytes;
        let (leaf, tail) = self.data[self.written..end].split_at_mut(bytes.len());
        for (to, &byte) in leaf.iter_mut().zip(bytes) {
            to.write(byte);
        }
        tail.fill(MaybeUninit::new(0));
        self.written = end;
    }

    /// Zeroes the bytes not written yet (none once every leaf is written).
    fn zero_rest(&mut self) {
        self.data[self.written..].fill(MaybeUninit::new(0));
        self.written = self.data.len();
    }
}

/// Why a PMA could not be rebuilt from its arrays ([`IntoPma`]).
#[derive(Debug)]
pub enum RebuildError {
    /// The arrays break an invariant of the PMA.
    Invalid(PmaError),
    /// A page could not be read into place (its source is damaged).
    Unreadable(crate::Error),
}

/// Arrays a [`Pma`] can be rebuilt from, checked against every invariant: [`PmaParts`]
/// (flat arrays, copied into pages), or pages written straight into place by whoever reads
/// them ([`FilledPages`], a checkpoint's page units).
pub trait IntoPma: Send {
    /// The checked PMA; `item_ok` is checked on every item. Never panics on bad input.
    ///
    /// # Errors
    /// [`RebuildError`] naming what does not hold.
    fn into_pma<C: LeafCodec>(self, item_ok: impl ItemCheck<C>) -> Result<Pma<C>, RebuildError>;
}

impl IntoPma for PmaParts {
    fn into_pma<C: LeafCodec>(self, item_ok: impl ItemCheck<C>) -> Result<Pma<C>, RebuildError> {
        Pma::from_parts(self, item_ok).map_err(RebuildError::Invalid)
    }
}

/// A PMA's arrays written page by page into their final pages: `fill(p, slot)` writes page
/// `p` (the leaves `p << page_shift` on, for the configuration's page shift) into `slot`.
/// Each page is checked right after it is filled, while its bytes are in cache, so that
/// every byte is copied once and decoded once.
pub struct FilledPages<F> {
    /// The configuration.
    pub(crate) config: PmaConfig,
    /// Bytes per leaf.
    pub(crate) leaf_bytes: usize,
    /// Number of leaves.
    pub(crate) num_leaves: usize,
    /// Number of keys.
    pub(crate) len: usize,
    /// Writes one page's leaves.
    pub(crate) fill: F,
}

impl<F> IntoPma for FilledPages<F>
where
    F: Fn(usize, &mut PageSlot<'_>) -> crate::Result<()> + Send + Sync,
{
    fn into_pma<C: LeafCodec>(self, item_ok: impl ItemCheck<C>) -> Result<Pma<C>, RebuildError> {
        Pma::from_filled_pages(self, item_ok)
    }
}

/// A page of `len` zeroed bytes, not shared yet.
fn zeroed_page(len: usize) -> Page {
    std::iter::repeat_n(0u8, len).collect()
}

/// A new page of `leaves` leaves of `leaf_bytes` bytes and [`PADDING_BYTES`] of padding,
/// its leaves' bytes written by `fill` through a [`PageSlot`] (with `used` and `heads`), the
/// padding and whatever `fill` leaves unwritten zeroed: every byte written once.
fn filled_page<E>(
    leaf_bytes: usize,
    (used, heads): (&mut [u32], &mut [u64]),
    fill: impl FnOnce(&mut PageSlot<'_>) -> Result<(), E>,
) -> Result<Page, E> {
    let data_len = used.len() * leaf_bytes;
    let mut page = Arc::<[u8]>::new_uninit_slice(data_len + PADDING_BYTES);
    let bytes = Arc::get_mut(&mut page).expect("a page just made is not shared");
    let (data, padding) = bytes.split_at_mut(data_len);
    padding.fill(MaybeUninit::new(0));
    let start = data.as_ptr();
    let mut slot = PageSlot::uninit(leaf_bytes, data, used, heads);
    let filled = fill(&mut slot);
    assert!(
        std::ptr::eq(slot.data.as_ptr(), start) && slot.data.len() == data_len,
        "a page's fill replaced its slot"
    );
    slot.zero_rest();
    filled?;
    // SAFETY: every byte is initialised: the padding by the `fill` above, the leaves' bytes
    // by the slot, which still holds them (asserted) and writes them from the start
    // (`push_leaf`), `zero_rest` the others up to the end of `data`.
    Ok(unsafe { page.assume_init() })
}

/// A leaf slot's error as the rebuild's: the leaf index and what does not hold.
fn broken(leaf: usize, what: String) -> PmaError {
    PmaError::Invariant { leaf, what }
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
        self.parts().into_owned()
    }

    /// Rebuilds a PMA from its arrays after checking, on all threads, every invariant
    /// `check_invariants` checks, plus `item_ok` on every item. Never panics on bad input.
    ///
    /// # Errors
    /// [`PmaError::InvalidConfig`] or [`PmaError::Invariant`] naming what does not hold.
    pub fn from_parts(parts: PmaParts, item_ok: impl ItemCheck<C>) -> Result<Self, PmaError> {
        let PmaParts {
            config,
            leaf_bytes,
            len,
            data,
            used,
            heads,
        } = parts;
        let page_shift = check_shape::<C>(&config, leaf_bytes, used.len())?;
        if heads.len() != used.len() || used.len().checked_mul(leaf_bytes) != Some(data.len()) {
            return Err(broken(
                0,
                "array lengths disagree with the leaf count".into(),
            ));
        }
        let checks: Vec<LeafCheck> = (0..used.len())
            .into_par_iter()
            .map(|j| {
                check_leaf::<C>(
                    &data[j * leaf_bytes..],
                    leaf_bytes,
                    used[j],
                    heads[j],
                    &item_ok,
                )
                .map_err(|what| broken(j, what))
            })
            .collect::<Result<_, _>>()?;
        let page_leaves = 1 << page_shift;
        let pages: Vec<Page> = data
            .par_chunks(page_leaves * leaf_bytes)
            .map(|leaves| {
                let mut page = zeroed_page(leaves.len() + PADDING_BYTES);
                fresh(&mut page)[..leaves.len()].copy_from_slice(leaves);
                page
            })
            .collect();
        let summaries: Vec<PageSummary> = checks
            .par_chunks(page_leaves)
            .zip(heads.par_chunks(page_leaves))
            .zip(used.par_chunks(page_leaves))
            .map(|((checks, heads), used)| PageSummary::of(checks, heads, used))
            .collect();
        let arrays = Checked {
            config,
            leaf_bytes,
            page_shift,
            len,
            pages,
            used,
            heads,
        };
        arrays.assemble(&checks, &summaries)
    }

    /// Rebuilds a PMA from pages filled in place (see [`FilledPages`]), checking what
    /// [`Pma::from_parts`] checks; each page is filled and checked by one task.
    ///
    /// An error of `fill` wins over an invariant that does not hold (the first page in
    /// order that `fill` fails names it), since a page that could not be read explains
    /// whatever else is wrong.
    ///
    /// # Errors
    /// [`RebuildError::Unreadable`] with `fill`'s error, or [`RebuildError::Invalid`].
    pub fn from_filled_pages<F>(
        pages: FilledPages<F>,
        item_ok: impl ItemCheck<C>,
    ) -> Result<Self, RebuildError>
    where
        F: Fn(usize, &mut PageSlot<'_>) -> crate::Result<()> + Sync,
    {
        let FilledPages {
            config,
            leaf_bytes,
            num_leaves,
            len,
            fill,
        } = pages;
        let page_shift =
            check_shape::<C>(&config, leaf_bytes, num_leaves).map_err(RebuildError::Invalid)?;
        let page_leaves = 1usize << page_shift;
        let (mut used, mut heads) = (vec![0u32; num_leaves], vec![0u64; num_leaves]);
        let mut checks: Vec<LeafCheck> = vec![None; num_leaves];
        let filled: Vec<Result<(Page, PageSummary), RebuildError>> = used
            .par_chunks_mut(page_leaves)
            .zip(heads.par_chunks_mut(page_leaves))
            .zip(checks.par_chunks_mut(page_leaves))
            .enumerate()
            .map(|(p, ((used, heads), checks))| {
                let page = filled_page(leaf_bytes, (used, heads), |slot| fill(p, slot))
                    .map_err(RebuildError::Unreadable)?;
                check_page::<C>(&page, leaf_bytes, (used, heads), &item_ok, checks).map_err(
                    |(j, what)| RebuildError::Invalid(broken(p * page_leaves + j, what)),
                )?;
                Ok((page, PageSummary::of(checks, heads, used)))
            })
            .collect();
        let mut pages = Vec::with_capacity(filled.len());
        let mut summaries = Vec::with_capacity(filled.len());
        let mut invalid = None;
        for page in filled {
            match page {
                Ok((page, summary)) => {
                    pages.push(page);
                    summaries.push(summary);
                }
                Err(e @ RebuildError::Unreadable(_)) => return Err(e),
                Err(e) => {
                    invalid.get_or_insert(e);
                }
            }
        }
        if let Some(e) = invalid {
            return Err(e);
        }
        let arrays = Checked {
            config,
            leaf_bytes,
            page_shift,
            len,
            pages,
            used,
            heads,
        };
        arrays
            .assemble(&checks, &summaries)
            .map_err(RebuildError::Invalid)
    }
}

/// The mutable bytes of a page just made.
fn fresh(page: &mut Page) -> &mut [u8] {
    Arc::get_mut(page).expect("a page just made is not shared")
}

/// Checks the configuration, the leaf size and the leaf count; returns the page shift.
fn check_shape<C: LeafCodec>(
    config: &PmaConfig,
    leaf_bytes: usize,
    num_leaves: usize,
) -> Result<u32, PmaError> {
    config.validate_for_slack(C::SLACK)?;
    if leaf_bytes < 64 || !leaf_bytes.is_multiple_of(64) || leaf_bytes > 1 << 20 {
        return Err(broken(0, format!("leaf size {leaf_bytes} is not valid")));
    }
    if config.leaf_bytes.is_some_and(|b| b != leaf_bytes) {
        return Err(broken(
            0,
            "leaf size disagrees with the configuration".into(),
        ));
    }
    if num_leaves == 0 {
        return Err(broken(
            0,
            "array lengths disagree with the leaf count".into(),
        ));
    }
    Ok(config.page_shift(leaf_bytes))
}

/// Pages whose every leaf passed [`check_leaf`], to be checked across leaves and put in a
/// table.
struct Checked {
    config: PmaConfig,
    leaf_bytes: usize,
    page_shift: u32,
    len: usize,
    pages: Vec<Page>,
    used: Vec<u32>,
    heads: Vec<u64>,
}

impl Checked {
    /// Checks across leaves (empty leaves' heads, order, the key count) with each leaf's
    /// check in `checks` and each page's in `summaries` (the pages' own checks
    /// across their leaves, [`PageSummary::of`]), then builds the PMA.
    fn assemble<C: LeafCodec>(
        self,
        checks: &[LeafCheck],
        summaries: &[PageSummary],
    ) -> Result<Pma<C>, PmaError> {
        let Self {
            config,
            leaf_bytes,
            page_shift,
            len,
            pages,
            used,
            heads,
        } = self;
        let num_leaves = used.len();
        // Where the pages' checks find something wrong, the leaf by leaf check names it.
        let (count, total_used) = match across_pages(summaries) {
            Some(found) => found,
            None => across_leaves(checks, &heads, &used)?,
        };
        if count != len {
            return Err(broken(0, format!("len {len} but {count} keys stored")));
        }
        Ok(Pma {
            config,
            leaf_bytes,
            page_shift,
            num_leaves,
            table: Arc::new(Table::new(pages, heads, used, page_shift)),
            len,
            total_used,
            page_copies: AtomicUsize::new(0),
            lineage: Arc::default(),
            log: None,
            codec: PhantomData,
        })
    }
}

/// The checks across leaves, one leaf at a time from the last: every empty leaf's head is
/// the first key after it (`u64::MAX` past the last key), and each leaf's keys come after
/// those of the leaves before it. Returns the keys stored and the bytes they use, or the
/// last leaf where something does not hold.
fn across_leaves(
    checks: &[LeafCheck],
    heads: &[u64],
    used: &[u32],
) -> Result<(usize, usize), PmaError> {
    let (mut count, mut total_used) = (0usize, 0usize);
    let mut next_head = u64::MAX;
    let mut previous_first: Option<u64> = None;
    for j in (0..checks.len()).rev() {
        match checks[j] {
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
    Ok((count, total_used))
}

/// What the leaves of one page hold together, so that the checks across leaves
/// ([`across_leaves`]) run as checks within each page, made by the task that checks the
/// page, and checks across pages ([`across_pages`]): a step a page instead of a leaf.
#[derive(Debug, Clone, Copy, PartialEq)]
struct PageSummary {
    /// Whether the checks across the page's leaves hold within the page: each empty leaf
    /// before a leaf with keys has the first key after it as its head, each leaf's keys come
    /// after those of the leaves before it, and the empty leaves after the last leaf with
    /// keys all have the same head.
    holds: bool,
    /// Keys in the page's leaves and the bytes they use.
    count: usize,
    total_used: usize,
    /// The first key of the page's first leaf with keys and the last key of its last.
    keys: Option<(u64, u64)>,
    /// The head of the empty leaves after the page's last leaf with keys, if it ends with
    /// empty leaves: the first key after the page, for the check across pages.
    trailing_head: Option<u64>,
}

impl PageSummary {
    /// The summary of the leaves of one page: their `checks`, `heads` and `used` sizes.
    fn of(checks: &[LeafCheck], heads: &[u64], used: &[u32]) -> Self {
        let mut page = Self {
            holds: true,
            count: 0,
            total_used: 0,
            keys: None,
            trailing_head: None,
        };
        // The first key after the leaf, once a leaf with keys follows it in the page.
        let mut next: Option<u64> = None;
        for ((check, &head), &used) in checks.iter().zip(heads).zip(used).rev() {
            match (check, next) {
                (None, Some(next)) => page.holds &= head == next,
                (None, None) => {
                    page.holds &= page.trailing_head.is_none_or(|h| h == head);
                    page.trailing_head = Some(head);
                }
                (Some(leaf), _) => {
                    page.holds &= next.is_none_or(|next| leaf.last < next);
                    next = Some(leaf.first);
                    page.keys = Some((leaf.first, page.keys.map_or(leaf.last, |k| k.1)));
                    page.count += leaf.count;
                    page.total_used += used as usize;
                }
            }
        }
        page
    }
}

/// [`across_leaves`] from the pages' summaries, from the last page: `None` where something
/// does not hold (which [`across_leaves`] then names), else the keys and bytes used.
fn across_pages(summaries: &[PageSummary]) -> Option<(usize, usize)> {
    let (mut count, mut total_used) = (0usize, 0usize);
    let mut next_head = u64::MAX;
    let mut previous_first: Option<u64> = None;
    let mut holds = true;
    for page in summaries.iter().rev() {
        holds &= page.holds && page.trailing_head.is_none_or(|h| h == next_head);
        if let Some((first, last)) = page.keys {
            holds &= previous_first.is_none_or(|next| last < next);
            previous_first = Some(first);
            next_head = first;
        }
        count += page.count;
        total_used += page.total_used;
    }
    holds.then_some((count, total_used))
}

/// Checks the leaves of one page (its bytes with their padding, sizes and heads) into
/// `checks` (one per leaf, written in place: no list per page); on failure, the first leaf
/// (within the page) that fails and what does not hold. Leaves with keys and their padding
/// in the page are checked two at a time ([`LeafCodec::check_encoding_pair`]), the others
/// alone, in order, so that the first failing leaf is found as one by one.
fn check_page<C: LeafCodec>(
    page: &[u8],
    leaf_bytes: usize,
    (used, heads): (&[u32], &[u64]),
    item_ok: &impl ItemCheck<C>,
    checks: &mut [LeafCheck],
) -> Result<(), (usize, String)> {
    let alone = |j: usize, check: &mut LeafCheck| {
        *check = check_leaf::<C>(
            &page[j * leaf_bytes..],
            leaf_bytes,
            used[j],
            heads[j],
            item_ok,
        )
        .map_err(|what| (j, what))?;
        Ok(())
    };
    // A leaf whose check waits for a second one.
    let mut waiting: Option<usize> = None;
    for j in 0..used.len() {
        let size = used[j] as usize;
        let paired = size >= C::HEAD
            && size <= leaf_bytes
            && (j * leaf_bytes + size + PADDING_BYTES) <= page.len();
        match (paired, waiting.take()) {
            (true, None) => waiting = Some(j),
            (true, Some(i)) => {
                let (before, after) = checks.split_at_mut(j);
                let a = (&page[i * leaf_bytes..], used[i] as usize);
                let b = (&page[j * leaf_bytes..], size);
                match C::check_encoding_pair(a, b, item_ok) {
                    Some([found_a, found_b]) => {
                        before[i] = summary(found_a, heads[i]).map_err(|what| (i, what))?;
                        after[0] = summary(found_b, heads[j]).map_err(|what| (j, what))?;
                    }
                    None => {
                        alone(i, &mut before[i])?;
                        alone(j, &mut after[0])?;
                    }
                }
            }
            (false, waiting) => {
                if let Some(i) = waiting {
                    alone(i, &mut checks[i])?;
                }
                alone(j, &mut checks[j])?;
            }
        }
    }
    if let Some(i) = waiting {
        alone(i, &mut checks[i])?;
    }
    Ok(())
}

/// What a codec's own check of a leaf found, as [`check_leaf`] gives it: its first key
/// must be the leaf's `head`.
fn summary(found: Result<LeafKeys, String>, head: u64) -> Result<LeafCheck, String> {
    let keys = found?;
    if keys.first != head {
        return Err(format!("head {head} != first key {}", keys.first));
    }
    Ok(Some(LeafSummary {
        count: keys.count,
        first: keys.first,
        last: keys.last,
    }))
}

/// Deltas per window of [`EncodedLen`]: a multiple of 4, since group varint spends a
/// control byte on every 4 deltas.
const LEN_WINDOW: usize = 64;

/// A leaf's encoded length summed while it is decoded, without a list of its items:
/// [`LeafCodec::encoded_len`] of successive windows of [`LEN_WINDOW`] deltas, each window
/// starting with the last item of the one before and counted without its head. Since
/// every codec's length is its head plus a sum over the deltas (group varint's control
/// bytes a sum over groups of 4), the windows add up to the length of the whole list.
struct EncodedLen<C: LeafCodec> {
    window: [C::Item; LEN_WINDOW + 1],
    filled: usize,
    total: usize,
}

impl<C: LeafCodec> EncodedLen<C> {
    fn new() -> Self {
        Self {
            window: [C::Item::default(); LEN_WINDOW + 1],
            filled: 0,
            total: C::HEAD,
        }
    }

    #[inline]
    fn push(&mut self, item: C::Item) {
        self.window[self.filled] = item;
        self.filled += 1;
        if self.filled == LEN_WINDOW + 1 {
            self.total += C::encoded_len(&self.window) - C::HEAD;
            self.window[0] = self.window[LEN_WINDOW];
            self.filled = 1;
        }
    }

    /// The encoded length of the items pushed (at least one).
    fn finish(&self) -> usize {
        match self.filled {
            0 | 1 => self.total,
            n => self.total + C::encoded_len(&self.window[..n]) - C::HEAD,
        }
    }
}

/// Checks one leaf of `leaf_bytes` bytes using `used` of them, decoding it once: `leaf`
/// is its bytes and whatever follows them (decoders may read a few bytes past `used`; a
/// leaf without [`PADDING_BYTES`] after its used bytes is decoded from a padded copy).
/// `None` for an empty leaf.
fn check_leaf<C: LeafCodec>(
    leaf: &[u8],
    leaf_bytes: usize,
    used: u32,
    head: u64,
    item_ok: &impl ItemCheck<C>,
) -> Result<LeafCheck, String> {
    let used = used as usize;
    if used == 0 {
        return Ok(None);
    }
    if used > leaf_bytes.min(leaf.len()) || used < C::HEAD {
        return Err(format!("uses {used} of {leaf_bytes} bytes"));
    }
    let buffer: Vec<u8>;
    let bytes: &[u8] = if used + PADDING_BYTES <= leaf.len() {
        leaf
    } else {
        buffer = [&leaf[..used], &[0u8; PADDING_BYTES][..]].concat();
        &buffer
    };
    if let Some(found) = C::check_encoding(bytes, used, item_ok) {
        return summary(found, head);
    }
    let mut summary = LeafSummary {
        count: 0,
        first: 0,
        last: 0,
    };
    let mut size = EncodedLen::<C>::new();
    let mut problem = None;
    C::for_each_while(bytes, used, |item| {
        let key = C::key(item);
        if summary.count == 0 {
            summary.first = key;
        } else if key <= summary.last {
            problem = Some(format!("key {key} after {}", summary.last));
            return false;
        }
        if !item_ok.ok(item) {
            problem = Some(format!("item {item:?} is not valid here"));
            return false;
        }
        summary.last = key;
        summary.count += 1;
        size.push(item);
        true
    });
    if let Some(problem) = problem {
        return Err(problem);
    }
    if summary.count == 0 || summary.first != head {
        return Err(format!("head {head} != first key {}", summary.first));
    }
    let size = size.finish();
    if size != used {
        return Err(format!("uses {used} bytes but its keys encode in {size}"));
    }
    Ok(Some(summary))
}

#[cfg(test)]
mod tests;
