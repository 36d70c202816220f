//! Pages of leaves as tasks see them: read-only and mutable views over a run of whole
//! supergroups of the page table (`table.rs`), split at supergroup boundaries to hand
//! disjoint supergroups to parallel tasks. Every write to leaf bytes, heads or sizes goes
//! through [`LeavesMut`], which copies a supergroup, group or page that another version
//! shares before the first write to it (copy on write, see the versions paragraph of
//! `mod.rs`) and writes an unshared one in place.

use rayon::prelude::*;

use super::leaf::LeafCodec;
use super::raw::{cow, unique_mut};
use super::table::{Group, Super};
use super::{empty_page, Page, Pma, LEAF_GRAIN};
use std::sync::atomic::{fence, AtomicUsize, Ordering};
use std::sync::Arc;

/// The shifts that place a leaf in the table: leaves per page, group and supergroup.
#[derive(Clone, Copy)]
struct Shape {
    /// log2 of the leaves per page.
    page: u32,
    /// log2 of the leaves per group.
    group: u32,
    /// log2 of the leaves per supergroup.
    sup: u32,
}

impl Shape {
    /// Supergroup, group within it and leaf within that of local leaf `j`.
    #[inline(always)]
    fn place(self, j: usize) -> (usize, usize, usize) {
        (
            j >> self.sup,
            (j >> self.group) & ((1 << (self.sup - self.group)) - 1),
            j & ((1 << self.group) - 1),
        )
    }
}

/// A run of whole supergroups, read-only: leaf indices are local to the run.
#[derive(Clone, Copy)]
pub(super) struct Leaves<'a> {
    pub(super) leaf_bytes: usize,
    shape: Shape,
    len: usize,
    supers: &'a [Arc<Super>],
    super_heads: &'a [u64],
}

impl<'a> Leaves<'a> {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn group(&self, j: usize) -> (&'a Group, usize) {
        let (s, k, local) = self.shape.place(j);
        (&self.supers[s].groups[k], local)
    }

    /// The leaf `j` and the rest of its page, padding included.
    #[inline(always)]
    pub(super) fn leaf(&self, j: usize) -> &'a [u8] {
        let (group, local) = self.group(j);
        let shift = self.shape.page;
        let within = local & ((1 << shift) - 1);
        &group.pages[local >> shift][within * self.leaf_bytes..]
    }

    #[inline(always)]
    pub(super) fn used(&self, j: usize) -> usize {
        let (group, local) = self.group(j);
        group.used[local] as usize
    }

    #[inline(always)]
    pub(super) fn head(&self, j: usize) -> u64 {
        let (group, local) = self.group(j);
        group.heads[local]
    }

    /// Local index of the leaf `key` belongs in (the last with head <= key, else 0): the
    /// last supergroup whose first head is at most `key`, then the last such group in it,
    /// hold it.
    pub(super) fn target(&self, key: u64) -> usize {
        let below = |heads: &[u64]| heads.partition_point(|&head| head <= key).saturating_sub(1);
        let s = below(self.super_heads);
        let Some(sup) = self.supers.get(s) else {
            return 0;
        };
        let k = below(&sup.group_heads);
        let local = below(&sup.groups[k].heads);
        let j = (s << self.shape.sup) + (k << self.shape.group) + local;
        j.min(self.len.saturating_sub(1))
    }

    /// The first head of the group after local leaf `j`'s (`u64::MAX` past the last).
    #[inline]
    fn next_group_head(&self, j: usize) -> u64 {
        let (s, k, _) = self.shape.place(j);
        let heads = &self.supers[s].group_heads;
        match heads.get(k + 1) {
            Some(&head) => head,
            None => self.super_heads.get(s + 1).copied().unwrap_or(u64::MAX),
        }
    }

    /// [`Self::target`] for a key known to belong at or after leaf `from`: gallops forward
    /// (1, 2, 4, … leaves) over `from`'s group's heads and then searches the window, so the
    /// consecutive targets of a sorted batch cost O(log gap) reads near each other instead
    /// of a full binary search; a key past the group takes [`Self::target`].
    #[inline]
    pub(super) fn target_from(&self, from: usize, key: u64) -> usize {
        if self.next_group_head(from) <= key {
            return self.target_past_group(from, key);
        }
        let (group, from_local) = self.group(from);
        let heads = &group.heads[..];
        let base = from - from_local;
        let (mut lo, mut step) = (from_local, 1);
        let hi = loop {
            let probe = from_local + step;
            if probe >= heads.len() || heads[probe] > key {
                break probe.min(heads.len());
            }
            lo = probe;
            step *= 2;
        };
        base + lo
            + heads[lo..hi]
                .partition_point(|&head| head <= key)
                .saturating_sub(1)
    }
}

impl Leaves<'_> {
    /// [`Self::target`] for a key at or past the group after local leaf `from`'s: a key
    /// before the next supergroup searches only the later groups of `from`'s supergroup
    /// (groups are small, so a sorted batch crosses many), any other takes [`Self::target`].
    fn target_past_group(&self, from: usize, key: u64) -> usize {
        let (s, k, _) = self.shape.place(from);
        let sup = &self.supers[s];
        // (Past the last group only `u64::MAX` is at least the next group's head.)
        if k + 1 >= sup.groups.len() || self.super_heads.get(s + 1).is_some_and(|&h| h <= key) {
            return self.target(key);
        }
        // The next group's head is at most `key` and lies in this supergroup.
        let later = &sup.group_heads[k + 1..];
        let g = k + 1 + later.partition_point(|&head| head <= key).saturating_sub(1);
        let local = sup.groups[g]
            .heads
            .partition_point(|&head| head <= key)
            .saturating_sub(1);
        let j = (s << self.shape.sup) + (g << self.shape.group) + local;
        j.min(self.len.saturating_sub(1))
    }
}

/// A run of whole supergroups borrowed mutably; split (at supergroup boundaries) to hand
/// disjoint supergroups to tasks. Leaf bytes, sizes and heads are written through
/// [`LeavesMut::leaf_mut`], [`LeavesMut::leaf_parts_mut`], [`LeavesMut::set_used`],
/// [`LeavesMut::set_head`] and [`LeavesMut::fill_range`], which copy a supergroup, group or
/// page that another version shares before the first write to it (and write in place
/// otherwise).
pub(super) struct LeavesMut<'a> {
    /// Global index of the first leaf.
    pub(super) first: usize,
    pub(super) leaf_bytes: usize,
    shape: Shape,
    len: usize,
    supers: &'a mut [Arc<Super>],
    super_heads: &'a mut [u64],
    copies: &'a AtomicUsize,
    /// No other version of the array exists, so every supergroup, group and page in
    /// `supers` has no other `Arc` but those the lineage's spare table holds, through
    /// which nothing reads (`Lineage` in `mod.rs`), and writes skip the sharing check.
    /// Soundness rests on this: the `unsafe` calls of [`cow`] and [`unique_mut`] pass it on. Set only by
    /// [`Pma::leaves_mut`], which establishes it, and copied into both halves by
    /// [`LeavesMut::split_at_super`] (private to this module, so nothing else can set it).
    private: bool,
}

impl<'a> LeavesMut<'a> {
    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn num_supers(&self) -> usize {
        self.supers.len()
    }

    /// log2 of the leaves per supergroup.
    pub(super) fn super_shift(&self) -> u32 {
        self.shape.sup
    }

    /// The read-only view of the same leaves.
    pub(super) fn as_ref(&self) -> Leaves<'_> {
        Leaves {
            leaf_bytes: self.leaf_bytes,
            shape: self.shape,
            len: self.len,
            supers: self.supers,
            super_heads: self.super_heads,
        }
    }

    /// Supergroups `[0, s)` and `[s, num_supers)`.
    pub(super) fn split_at_super(self, s: usize) -> (Self, Self) {
        let mid = (s << self.shape.sup).min(self.len);
        let (supers_l, supers_r) = self.supers.split_at_mut(s);
        let (heads_l, heads_r) = self.super_heads.split_at_mut(s);
        let left = LeavesMut {
            first: self.first,
            leaf_bytes: self.leaf_bytes,
            shape: self.shape,
            len: mid,
            supers: supers_l,
            super_heads: heads_l,
            copies: self.copies,
            private: self.private,
        };
        let right = LeavesMut {
            first: self.first + mid,
            leaf_bytes: self.leaf_bytes,
            shape: self.shape,
            len: self.len - mid,
            supers: supers_r,
            super_heads: heads_r,
            copies: self.copies,
            private: self.private,
        };
        (left, right)
    }

    /// Local leaf `j` for writing (its supergroup and group copied first if another
    /// version shares them; its page not yet): its group, its supergroup's first head of
    /// that group, the table's first head of that supergroup, and `j`'s index in the group.
    #[inline]
    fn place_mut(&mut self, j: usize) -> PlaceMut<'_> {
        let (s, k, local) = self.shape.place(j);
        let private = self.private;
        // SAFETY: `self.private` is true only if `Pma::leaves_mut` saw no other version (see
        // the field), so then no supergroup of `self.supers`, nor any group of one, this one
        // included, has another `Arc` but the lineage's spare table's, which nothing reads
        // through while this view lives.
        let sup = unsafe { unique_mut(&mut self.supers[s], private) };
        let Super {
            groups,
            group_heads,
        } = sup;
        // SAFETY: as above.
        let group = unsafe { unique_mut(&mut groups[k], private) };
        PlaceMut {
            group,
            group_head: &mut group_heads[k],
            super_head: &mut self.super_heads[s],
            first_of_super: k == 0,
            local,
        }
    }

    /// The bytes of leaf `j` (exactly `leaf_bytes`), for writing: its supergroup, group
    /// and page are copied first if another version shares them.
    pub(super) fn leaf_mut(&mut self, j: usize) -> &mut [u8] {
        self.leaf_parts_mut(j).bytes
    }

    /// Leaf `j` for writing, in one lookup: its bytes (exactly `leaf_bytes`; its
    /// supergroup, group and page copied first if another version shares them), its used
    /// bytes and its head. A new head must also go through [`LeafMut::set_head`], which
    /// keeps the group's and supergroup's first heads.
    pub(super) fn leaf_parts_mut(&mut self, j: usize) -> LeafMut<'_> {
        let (lb, shift, private, copies) =
            (self.leaf_bytes, self.shape.page, self.private, self.copies);
        let place = self.place_mut(j);
        let local = place.local;
        let within = local & ((1 << shift) - 1);
        // SAFETY: as in `place_mut`: with `private` true no page of the group has another
        // `Arc` either but the spare table's (only cloning a version's table shares pages).
        let page = unsafe { cow(&mut place.group.pages[local >> shift], private, copies) };
        let first_of_group = local == 0;
        LeafMut {
            bytes: &mut page[within * lb..(within + 1) * lb],
            used: &mut place.group.used[local],
            head: &mut place.group.heads[local],
            group_head: first_of_group.then_some(place.group_head),
            super_head: (first_of_group && place.first_of_super).then_some(place.super_head),
        }
    }

    /// Leaf `j`'s head.
    #[inline]
    pub(super) fn head(&self, j: usize) -> u64 {
        self.as_ref().head(j)
    }

    /// Sets leaf `j`'s used bytes.
    pub(super) fn set_used(&mut self, j: usize, used: usize) {
        let place = self.place_mut(j);
        place.group.used[place.local] = used as u32;
    }

    /// Sets leaf `j`'s head (and its group's and supergroup's first heads when `j` starts
    /// them).
    pub(super) fn set_head(&mut self, j: usize, head: u64) {
        let place = self.place_mut(j);
        place.group.heads[place.local] = head;
        if place.local == 0 {
            *place.group_head = head;
            if place.first_of_super {
                *place.super_head = head;
            }
        }
    }

    /// Restores the empty-leaf head rule for the leaves in `range` and the empty leaves
    /// right before it, from the head of the leaf after it. Writes only heads that change,
    /// so that a shared group stays shared where nothing moved.
    pub(super) fn repair_heads(&mut self, range: std::ops::Range<usize>) {
        let mut next = if range.end < self.len {
            self.head(range.end)
        } else {
            u64::MAX
        };
        for j in (0..range.end).rev() {
            let view = self.as_ref();
            if view.used(j) > 0 {
                if j < range.start {
                    break;
                }
                next = view.head(j);
            } else if view.head(j) != next {
                self.set_head(j, next);
            }
        }
    }

    /// Calls `f(first_in_range, data, used, heads)` for each page's share of the local leaf
    /// range `range`, in parallel when the range is long; a shared supergroup or group is
    /// copied first, and a shared page copied too, or replaced by a fresh one when the range
    /// covers it whole. Returns the sum of `f`'s results.
    pub(super) fn fill_range(
        &mut self,
        range: std::ops::Range<usize>,
        f: impl Fn(usize, &mut [u8], &mut [u32], &mut [u64]) -> usize + Sync,
    ) -> usize {
        if range.is_empty() {
            return 0;
        }
        let ss = self.shape.sup;
        let (first, last) = (range.start >> ss, (range.end - 1) >> ss);
        let fill = GroupFill {
            range: range.clone(),
            shape: self.shape,
            leaf_bytes: self.leaf_bytes,
            copies: self.copies,
            private: self.private,
        };
        let parallel = range.len() > 2 * LEAF_GRAIN;
        let fill_super = |(s, (slot, top)): (usize, (&mut Arc<Super>, &mut u64))| {
            // SAFETY: as in `place_mut`.
            let sup = unsafe { unique_mut(slot, fill.private) };
            let written = fill.supergroup(sup, s << ss, parallel, &f);
            *top = sup.group_heads[0];
            written
        };
        if first == last || !parallel {
            self.supers[first..=last]
                .iter_mut()
                .zip(&mut self.super_heads[first..=last])
                .enumerate()
                .map(|(i, share)| fill_super((first + i, share)))
                .sum()
        } else {
            self.supers[first..=last]
                .par_iter_mut()
                .zip(self.super_heads[first..=last].par_iter_mut())
                .enumerate()
                .map(|(i, share)| fill_super((first + i, share)))
                .sum()
        }
    }
}

/// Where [`LeavesMut::place_mut`] found a leaf.
struct PlaceMut<'p> {
    group: &'p mut Group,
    /// The group's first head, in its supergroup.
    group_head: &'p mut u64,
    /// The supergroup's first head, in the table.
    super_head: &'p mut u64,
    /// Whether the group is its supergroup's first.
    first_of_super: bool,
    /// The leaf's index in the group.
    local: usize,
}

/// One leaf borrowed for writing ([`LeavesMut::leaf_parts_mut`]).
pub(super) struct LeafMut<'l> {
    pub(super) bytes: &'l mut [u8],
    pub(super) used: &'l mut u32,
    head: &'l mut u64,
    /// The group's first head, when the leaf starts its group.
    group_head: Option<&'l mut u64>,
    /// The supergroup's first head, when the leaf starts its supergroup.
    super_head: Option<&'l mut u64>,
}

impl LeafMut<'_> {
    /// Sets the leaf's head.
    pub(super) fn set_head(&mut self, head: u64) {
        *self.head = head;
        for first in [&mut self.group_head, &mut self.super_head] {
            if let Some(first) = first.as_deref_mut() {
                *first = head;
            }
        }
    }
}

/// What [`LeavesMut::fill_range`] hands each supergroup and group.
struct GroupFill<'c> {
    /// The range being filled, in the view's leaf indices.
    range: std::ops::Range<usize>,
    shape: Shape,
    leaf_bytes: usize,
    copies: &'c AtomicUsize,
    private: bool,
}

impl GroupFill<'_> {
    /// Fills the share of `self.range` in `sup`, whose first leaf is `super_start`, group
    /// by group (in parallel when `parallel` and it spans several).
    fn supergroup(
        &self,
        sup: &mut Super,
        super_start: usize,
        parallel: bool,
        f: &(impl Fn(usize, &mut [u8], &mut [u32], &mut [u64]) -> usize + Sync),
    ) -> usize {
        let gs = self.shape.group;
        let lo = self.range.start.max(super_start) - super_start;
        let hi = (self.range.end - super_start).min(sup.groups.len() << gs);
        if lo >= hi {
            return 0;
        }
        let (first, last) = (lo >> gs, ((hi - 1) >> gs).min(sup.groups.len() - 1));
        let private = self.private;
        let fill_group = |(k, (slot, top)): (usize, (&mut Arc<Group>, &mut u64))| {
            // SAFETY: as in `LeavesMut::place_mut`.
            let group = unsafe { unique_mut(slot, private) };
            let written = self.group(group, super_start + (k << gs), f);
            *top = group.heads[0];
            written
        };
        if first == last || !parallel {
            sup.groups[first..=last]
                .iter_mut()
                .zip(&mut sup.group_heads[first..=last])
                .enumerate()
                .map(|(i, share)| fill_group((first + i, share)))
                .sum()
        } else {
            sup.groups[first..=last]
                .par_iter_mut()
                .zip(sup.group_heads[first..=last].par_iter_mut())
                .enumerate()
                .map(|(i, share)| fill_group((first + i, share)))
                .sum()
        }
    }

    /// Fills the share of `self.range` in `group`, whose first leaf is `group_start`, page
    /// by page (in parallel when long).
    fn group(
        &self,
        group: &mut Group,
        group_start: usize,
        f: &(impl Fn(usize, &mut [u8], &mut [u32], &mut [u64]) -> usize + Sync),
    ) -> usize {
        let (shift, lb, copies, private) =
            (self.shape.page, self.leaf_bytes, self.copies, self.private);
        let page_leaves = 1usize << shift;
        let lo = self.range.start.max(group_start) - group_start;
        let hi = self.range.end.min(group_start + group.used.len()) - group_start;
        if lo >= hi {
            return 0;
        }
        let first_page = lo >> shift;
        let last_page = (hi - 1) >> shift;
        let leaf_start = first_page << shift;
        let leaf_end = ((last_page + 1) << shift).min(group.used.len());
        let pages = &mut group.pages[first_page..=last_page];
        let used = &mut group.used[leaf_start..leaf_end];
        let heads = &mut group.heads[leaf_start..leaf_end];
        let range_start = self.range.start;
        let fill_page = |(i, ((slot, used), heads)): PageShare<'_>| {
            let page_start = leaf_start + i * page_leaves;
            let leaves = used.len();
            let lo = lo.max(page_start) - page_start;
            let hi = hi.min(page_start + leaves) - page_start;
            let page = if !private && lo == 0 && hi == leaves && Arc::get_mut(slot).is_none() {
                copies.fetch_add(1, Ordering::Relaxed);
                *slot = empty_page(leaves, lb);
                Arc::get_mut(slot).expect("a new page is unique")
            } else {
                // SAFETY: `private` is the view's, true only if `Pma::leaves_mut` saw no
                // other version (see `LeavesMut::private`), so then `slot`'s page has no
                // other `Arc` but the lineage's spare table's, read by nothing meanwhile.
                unsafe { cow(slot, private, copies) }
            };
            f(
                group_start + page_start + lo - range_start,
                &mut page[lo * lb..hi * lb],
                &mut used[lo..hi],
                &mut heads[lo..hi],
            )
        };
        if hi - lo <= 2 * LEAF_GRAIN {
            pages
                .iter_mut()
                .zip(used.chunks_mut(page_leaves))
                .zip(heads.chunks_mut(page_leaves))
                .enumerate()
                .map(fill_page)
                .sum()
        } else {
            pages
                .par_iter_mut()
                .zip(used.par_chunks_mut(page_leaves))
                .zip(heads.par_chunks_mut(page_leaves))
                .enumerate()
                .map(fill_page)
                .sum()
        }
    }
}

/// One page's slot with its leaves' sizes and heads, numbered, as `fill_range` visits them.
type PageShare<'s> = (usize, ((&'s mut Page, &'s mut [u32]), &'s mut [u64]));

impl<C: LeafCodec> Pma<C> {
    /// All leaves, read-only.
    pub(super) fn leaves(&self) -> Leaves<'_> {
        Leaves {
            leaf_bytes: self.leaf_bytes,
            shape: Shape {
                page: self.page_shift,
                group: self.table.group_shift,
                sup: self.table.super_shift,
            },
            len: self.num_leaves,
            supers: &self.table.supers,
            super_heads: &self.table.super_heads,
        }
    }

    /// All leaves, borrowed mutably (copies the top level of the page table first if a
    /// clone shares it: one pointer and one head per supergroup).
    pub(super) fn leaves_mut(&mut self) -> LeavesMut<'_> {
        // Establishes `LeavesMut::private`. Every version cloned from this build holds
        // `lineage`, and only cloning a version's table clones supergroup, group and page
        // pointers, so a count of 1 means that no other version, and so no other `Arc` of
        // any of our supergroups, groups or pages, exists, but those of the lineage's spare
        // table (a dropped version's, left while it still held the lineage): only a write
        // of a version takes the spare, and there is no other version to write, so nothing
        // reads through it until this version's own next copy, which compares pointers;
        // `&mut self` means no clone is being made now, so the count stays 1 while the view
        // lives. The acquire fence pairs with the release decrement of each version dropped
        // meanwhile (on any thread; it drops its table before its lineage), so its reads of
        // shared pages happen before our writes, as `Arc::get_mut` would ensure.
        let private = Arc::strong_count(&self.lineage) == 1;
        if private {
            fence(Ordering::Acquire);
        }
        let table = super::table_mut(&mut self.table, &self.lineage);
        // The stored copy (see `Table::stored`) would go stale.
        table.stored_copy.take();
        LeavesMut {
            first: 0,
            leaf_bytes: self.leaf_bytes,
            shape: Shape {
                page: self.page_shift,
                group: table.group_shift,
                sup: table.super_shift,
            },
            len: self.num_leaves,
            supers: &mut table.supers,
            super_heads: &mut table.super_heads,
            copies: &self.page_copies,
            private,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::ops::Range;
    use std::sync::Arc;

    use super::LeavesMut;
    use crate::pma::spread::{gather, spread, SizedKeys};
    use crate::pma::{Cpma, DeltaLeaf, PmaConfig};

    /// 2,000 keys in leaves of 64 bytes, two leaves a page.
    fn paged() -> (Cpma, Vec<u64>) {
        let config = PmaConfig::two_leaf_pages();
        let keys: Vec<u64> = (0..2_000).map(|i| i * 10).collect();
        let pma = Cpma::from_sorted_with_config(&keys, config).unwrap();
        assert_eq!(pma.page_leaves(), 2);
        assert!(pma.num_pages() > 10);
        (pma, keys)
    }

    fn page_addresses(pma: &Cpma) -> Vec<*const u8> {
        pma.table.pages().map(|p| Arc::as_ptr(p).cast()).collect()
    }

    /// Writes leaf `j`'s own bytes back through `leaf_mut`.
    fn rewrite_leaf(leaves: &mut LeavesMut<'_>, j: usize) {
        let leaf = leaves.leaf_mut(j);
        let bytes = leaf.to_vec();
        leaf.copy_from_slice(&bytes);
    }

    /// Gathers the leaves `range` and spreads them again, through `fill_range`.
    fn respread(leaves: &mut LeavesMut<'_>, range: Range<usize>) {
        let keys = gather::<DeltaLeaf>(leaves.as_ref(), leaves.first, range.clone(), &[]);
        spread(&SizedKeys::<DeltaLeaf>::new(&keys), leaves, range.clone());
        leaves.repair_heads(range);
    }

    /// Checks `pma` against `keys` after writes that bypassed its byte count.
    fn check(pma: &mut Cpma, keys: &[u64]) {
        pma.total_used = pma.table.used_all().iter().map(|&u| u as usize).sum();
        pma.check_invariants().unwrap();
        assert!(pma.iter().eq(keys.iter().copied()));
    }

    #[test]
    fn writes_copy_a_page_only_while_another_version_shares_it() {
        let (mut pma, keys) = paged();
        let start = page_addresses(&pma);
        // No other version: both write paths take the unchecked in-place branch of `cow`.
        let mut leaves = pma.leaves_mut();
        assert!(leaves.private);
        rewrite_leaf(&mut leaves, 7);
        respread(&mut leaves, 4..10);
        check(&mut pma, &keys);
        assert_eq!(
            (page_addresses(&pma), pma.page_copies()),
            (start.clone(), 0)
        );

        // A live version: the first write to a page copies it, the next writes in place.
        let old = pma.clone();
        let mut leaves = pma.leaves_mut();
        assert!(!leaves.private);
        rewrite_leaf(&mut leaves, 7);
        assert_eq!(pma.page_copies(), 1);
        let after_copy = page_addresses(&pma);
        assert_ne!(after_copy[3], start[3]);
        rewrite_leaf(&mut pma.leaves_mut(), 6);
        assert_eq!((page_addresses(&pma), pma.page_copies()), (after_copy, 1));
        // Spreading leaves 5..10: page 2 is shared and half covered (copied), page 3 is
        // this version's own (in place), page 4 is shared and covered whole (a fresh page).
        respread(&mut pma.leaves_mut(), 5..10);
        assert_eq!(pma.page_copies(), 3);
        check(&mut pma, &keys);
        let now = page_addresses(&pma);
        for p in 0..now.len() {
            assert_eq!(now[p] == start[p], !(2..5).contains(&p), "page {p}");
        }
        assert_eq!(page_addresses(&old), start);
        old.check_invariants().unwrap();
        assert!(old.iter().eq(keys.iter().copied()));

        // The version is read and dropped on another thread: the unchecked branch again,
        // on a page that was shared until then.
        let seen = std::thread::spawn(move || old.iter().count())
            .join()
            .unwrap();
        assert_eq!(seen, keys.len());
        let mut leaves = pma.leaves_mut();
        assert!(leaves.private);
        rewrite_leaf(&mut leaves, 0);
        assert_eq!((page_addresses(&pma), pma.page_copies()), (now, 3));
        check(&mut pma, &keys);
    }
}
