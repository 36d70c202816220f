//! Loading a checkpoint's edge arrays from its page units: each page checked and copied
//! straight into the PMA page it becomes, or, for pages that do not split the leaves as
//! the configuration says, into flat arrays first.

use super::Packs;
use crate::pma::{
    FilledPages, IntoPma, ItemCheck, LeafCodec, PageSlot, Pma, PmaParts, RebuildError,
};
use crate::store::format::{self, Manifest, UnitKind, UnitRef};
use crate::store::units::{self, ArrayShape, Base};
use crate::store::StoreLeaf;
use crate::{Error, Result};
use rayon::prelude::*;

/// A page filler of [`FilledPages`]: reads page `p`'s unit into its slot.
pub(super) type PageFill<'p> =
    Box<dyn Fn(usize, &mut PageSlot<'_>) -> Result<()> + Send + Sync + 'p>;

/// One edge array as its pages come: filled straight into the PMA's pages, checked as each
/// is filled ([`LoadedArray::Pages`]), or, when the pages do not split the leaves as the
/// configuration's page size does (a crafted base unit), copied into flat arrays first.
pub(super) enum LoadedArray<'p> {
    Pages(FilledPages<PageFill<'p>>),
    Flat(PmaParts),
}

impl IntoPma for LoadedArray<'_> {
    fn into_pma<C: LeafCodec>(
        self,
        item_ok: impl ItemCheck<C>,
    ) -> std::result::Result<Pma<C>, RebuildError> {
        match self {
            Self::Pages(pages) => pages.into_pma(item_ok),
            Self::Flat(parts) => parts.into_pma(item_ok),
        }
    }
}

/// Where [`load_array`] puts each page unit's leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Placing {
    /// Page unit `p` into the array's page `p`, as the configuration's page size splits the
    /// leaves, without reading the leaf counts first (one pass over the pages fewer): a
    /// page unit whose count does not fill its page fails, and the caller loads again
    /// [`Placing::Counted`], which decides as the counts say.
    Configured,
    /// Where the leaf counts, read first, say ([`page_counts`]).
    Counted,
}

/// Loads the arrays of `shape` from their page units (read by [`Packs::read`]), every page
/// of kind `kind` (one of [`PAGE_KINDS`]), placed as `placing`
/// says.
///
/// One parallel pass does all of a page's work, when the array is rebuilt: its CRC-32C and
/// hash, its kind, the copy of its leaves into the page the array keeps, and the check of
/// its leaves (the bytes are still in cache from the copy). [`Placing::Configured`] takes
/// the array's page `p` from unit `p` whenever the units are as many as those pages.
/// Otherwise where each page goes follows from the leaf counts, which are the first word
/// of each payload: they are read before the checks, and trusted only once the checks
/// pass. A count that does not add up ([`page_counts`]) sends the load to
/// [`first_page_error`], so that damage is reported as the checks of the first damaged
/// page in order find it.
pub(super) fn load_array<'p>(
    packs: &'p Packs<'_>,
    shape: &'p ArrayShape,
    kind: UnitKind,
    placing: Placing,
) -> Result<LoadedArray<'p>> {
    let fill_unit = move |page: &UnitRef, slot: &mut PageSlot<'_>| -> Result<()> {
        let (found, payload) = packs.unit_of(page, &PAGE_KINDS)?;
        if found != kind {
            return Err(Error::Corrupt {
                path: Some(packs.path(page)),
                offset: Some(page.offset),
                reason: "the edge arrays mix pages of two leaf encodings".into(),
            });
        }
        units::fill_page(payload, || packs.path(page), page_at(page), slot)
    };
    let pages = move || {
        LoadedArray::Pages(FilledPages {
            config: shape.config.clone(),
            leaf_bytes: shape.leaf_bytes,
            num_leaves: shape.num_leaves,
            len: shape.len,
            fill: Box::new(move |p, slot| match shape.pages.get(p) {
                Some(page) => fill_unit(page, slot),
                None => Err(Error::corrupt(format!(
                    "the base unit lists {} pages, the array has more",
                    shape.pages.len()
                ))),
            }),
        })
    };
    if placing == Placing::Configured && has_configured_pages(shape) {
        return Ok(pages());
    }
    let Some(counts) = page_counts(packs, shape) else {
        return Err(first_page_error(packs, shape));
    };
    if splits_as_configured(shape, &counts) {
        return Ok(pages());
    }
    let mut parts = shape.zeroed_parts()?;
    let slots = page_slots(&mut parts, counts.iter().copied());
    let filled: Vec<Result<()>> = shape
        .pages
        .par_iter()
        .zip(slots)
        .map(|(page, mut slot)| fill_unit(page, &mut slot))
        .collect();
    filled.into_iter().collect::<Result<()>>()?;
    Ok(LoadedArray::Flat(parts))
}

/// Leaves per page of `shape`'s configuration, if its leaf and page sizes are valid.
fn configured_page_leaves(shape: &ArrayShape) -> Option<usize> {
    if !(64..=1 << 20).contains(&shape.leaf_bytes) || shape.config.page_bytes == 0 {
        return None;
    }
    Some(1usize << shape.config.page_shift(shape.leaf_bytes))
}

/// Whether `shape` lists as many page units as its configuration's page size makes pages
/// of its leaves (at least one).
fn has_configured_pages(shape: &ArrayShape) -> bool {
    configured_page_leaves(shape).is_some_and(|page_leaves| {
        shape.num_leaves > 0 && shape.pages.len() == shape.num_leaves.div_ceil(page_leaves)
    })
}

/// Whether pages of `counts` leaves split `shape`'s leaves as its configuration's page
/// size does (every page but the last full), so that each page unit is one page of the
/// array.
fn splits_as_configured(shape: &ArrayShape, counts: &[usize]) -> bool {
    let Some(page_leaves) = configured_page_leaves(shape) else {
        return false;
    };
    counts.split_last().is_some_and(|(&last, full)| {
        last <= page_leaves && full.iter().all(|&count| count == page_leaves)
    })
}

/// The kind of the pages of an array: that of its first page (checked whole), or `None`
/// for an array without pages.
fn page_kind(packs: &Packs<'_>, shape: &ArrayShape) -> Result<Option<UnitKind>> {
    shape
        .pages
        .first()
        .map(|page| packs.unit_of(page, &PAGE_KINDS).map(|(kind, _)| kind))
        .transpose()
}

/// The kinds an edge array's pages may have.
pub(super) const PAGE_KINDS: [UnitKind; 3] =
    [UnitKind::Page, UnitKind::GroupPage, UnitKind::GroupMapPage];

/// Where the payload of `page` starts in its pack.
pub(super) fn page_at(page: &UnitRef) -> u64 {
    page.offset + format::UNIT_HEADER as u64
}

/// The leaf count of each page of `shape`, read from the first word of its payload before
/// any check: `None` unless every page holds one (at least 1, within the unit) and they
/// add up to the leaves the base unit promises.
fn page_counts(packs: &Packs<'_>, shape: &ArrayShape) -> Option<Vec<usize>> {
    let counts = shape
        .pages
        .par_iter()
        .map(|page| {
            let count = u32::from_le_bytes(packs.first_word(page)?) as usize;
            (count != 0 && count as u64 <= page.len / 12).then_some(count)
        })
        .collect::<Option<Vec<usize>>>()?;
    let total = counts
        .iter()
        .try_fold(0usize, |total, &c| total.checked_add(c))?;
    (total == shape.num_leaves).then_some(counts)
}

/// The error of an array whose leaf counts do not add up ([`page_counts`]): the first
/// page in order that fails its checks or holds no valid leaf count, or else the
/// mismatch of the counts with the base unit.
fn first_page_error(packs: &Packs<'_>, shape: &ArrayShape) -> Error {
    let checked: Vec<Result<usize>> = shape
        .pages
        .par_iter()
        .map(|page| {
            let (_, payload) = packs.unit_of(page, &PAGE_KINDS)?;
            units::page_leaf_count(payload, &packs.path(page), page_at(page))
        })
        .collect();
    let mut leaves = 0usize;
    for count in checked {
        match count {
            Ok(count) => leaves = leaves.saturating_add(count),
            Err(e) => return e,
        }
    }
    Error::corrupt(format!(
        "the base unit promises {} leaves, its pages hold {leaves}",
        shape.num_leaves
    ))
}

/// `parts` cut into one slot per page of `counts` leaves each (which sum to its leaves).
fn page_slots(parts: &mut PmaParts, counts: impl Iterator<Item = usize>) -> Vec<PageSlot<'_>> {
    let leaf_bytes = parts.leaf_bytes;
    let (mut data, mut used, mut heads) = (
        &mut parts.data[..],
        &mut parts.used[..],
        &mut parts.heads[..],
    );
    let mut slots = Vec::new();
    for count in counts {
        let (d, rest_d) = std::mem::take(&mut data).split_at_mut(count * leaf_bytes);
        let (u, rest_u) = std::mem::take(&mut used).split_at_mut(count);
        let (h, rest_h) = std::mem::take(&mut heads).split_at_mut(count);
        (data, used, heads) = (rest_d, rest_u, rest_h);
        slots.push(PageSlot::new(leaf_bytes, d, u, h));
    }
    slots
}

/// The out- and (directed) in-arrays of `base`, placed as `placing` says, and whether
/// their pages are in byte codes (to be re-encoded): an unweighted graph's before format
/// 2, a weighted graph's before format 6.
pub(super) fn load_arrays<'p, C: StoreLeaf>(
    packs: &'p Packs<'_>,
    manifest: &Manifest,
    base: &'p Base,
    placing: Placing,
) -> Result<(LoadedArray<'p>, Option<LoadedArray<'p>>, bool)> {
    let native = units::page_kind::<C>();
    let kind = match page_kind(packs, &base.out)? {
        Some(kind) => kind,
        None => match &base.incoming {
            Some(shape) => page_kind(packs, shape)?.unwrap_or(native),
            None => native,
        },
    };
    // An unweighted graph's pages are group varint since version 2, a weighted graph's
    // since version 6; byte codes before (re-encoded here).
    let legacy = match kind {
        UnitKind::Page => true,
        kind if kind == native => false,
        _ => {
            return Err(Error::Corrupt {
                path: Some(packs.path(&manifest.base)),
                offset: Some(manifest.base.offset),
                reason: "the base unit's pages do not match the graph's leaf encoding".into(),
            })
        }
    };
    let out = load_array(packs, &base.out, kind, placing)?;
    let incoming = base
        .incoming
        .as_ref()
        .map(|shape| load_array(packs, shape, kind, placing))
        .transpose()?;
    Ok((out, incoming, legacy))
}
