//! Batch updates, phases 2 and 3: counting densities level by level and redistributing the
//! maximal violating regions (CPMA paper, section 4, "counting" and "redistribution").
//!
//! Counting starts from the touched leaves. At each level, all nodes in the current set are
//! counted in parallel; a node's count is the sum of its two children's counts, read from the
//! previous level's results when that child was counted there and summed from the per-leaf
//! `used` array otherwise, so every leaf is counted a constant number of times. A node that
//! breaks its bound sends its parent to the next level's set; a node within bounds (above the
//! leaves) is a region to redistribute. A broken root means grow (or shrink) instead.
//!
//! Regions are disjoint after dropping nested ones, so they are redistributed in parallel on
//! disjoint leaf slices: gather the region's keys (from the leaves or overflow buffers), then
//! spread them evenly by bytes.

use rayon::prelude::*;
use std::ops::Range;

use super::density::{node_leaves, Bounds};
use super::leaf::LeafCodec;
use super::page::LeavesMut;
use super::spread::{gather, spread, Overflow, SizedKeys};
use super::Pma;

/// Node sets at least this large are counted in parallel.
const PARALLEL_COUNT_MIN: usize = 256;

impl<C: LeafCodec> Pma<C> {
    pub(super) fn bounds(&self) -> Bounds {
        Bounds::new(self.num_leaves(), self.leaf_bytes, C::SLACK, &self.config)
    }

    /// Phases 2 and 3 after a merge that changed `touched` (ascending) and left `overflow`.
    /// `growing` says which bound to check: upper after inserts, lower after removals.
    pub(super) fn rebalance(
        &mut self,
        touched: Vec<usize>,
        overflow: Vec<Overflow<C::Item>>,
        growing: bool,
    ) {
        if touched.is_empty() {
            return;
        }
        let bounds = self.bounds();
        let capacity = self.num_leaves() * self.leaf_bytes;
        let root_broken = bounds.violated(bounds.root_level(), self.total_used, capacity, growing);
        if root_broken && (growing || self.num_leaves() > 1) {
            let keys = self.gather_all(&overflow);
            self.rebuild(&keys);
            return;
        }
        let regions = self.find_regions(&touched, &bounds, growing);
        self.log_regions(&regions);
        debug_assert!(overflow
            .iter()
            .all(|(leaf, _)| { regions.iter().any(|r| r.contains(leaf)) }));
        self.redistribute(&regions, &overflow);
        let mut leaves = self.leaves_mut();
        for &leaf in touched.iter().rev() {
            leaves.repair_heads(leaf..leaf + 1);
        }
    }

    /// Phase 2: the maximal regions to redistribute, ascending and disjoint.
    fn find_regions(&self, touched: &[usize], bounds: &Bounds, growing: bool) -> Vec<Range<usize>> {
        let num_leaves = self.num_leaves();
        let mut nodes = touched.to_vec();
        let mut previous: Vec<(usize, usize)> = Vec::new();
        let mut regions = Vec::new();
        for level in 0..=bounds.root_level() {
            let count = |&node: &usize| (node, self.count_node(level, node, &previous));
            let counts: Vec<(usize, usize)> = if nodes.len() >= PARALLEL_COUNT_MIN {
                nodes.par_iter().map(count).collect()
            } else {
                nodes.iter().map(count).collect()
            };
            let mut parents = Vec::new();
            for &(node, bytes) in &counts {
                let leaves = node_leaves(level, node, num_leaves);
                let capacity = leaves.len() * self.leaf_bytes;
                if level < bounds.root_level() && bounds.violated(level, bytes, capacity, growing) {
                    if parents.last() != Some(&(node >> 1)) {
                        parents.push(node >> 1);
                    }
                } else if level > 0 {
                    regions.push(leaves);
                }
            }
            if parents.is_empty() {
                break;
            }
            previous = counts;
            nodes = parents;
        }
        drop_nested(regions)
    }

    /// Used bytes under node `(level, node)`, reusing the children counted one level down.
    fn count_node(&self, level: u32, node: usize, previous: &[(usize, usize)]) -> usize {
        if level == 0 {
            return self.leaf_used(node);
        }
        (2 * node..2 * node + 2)
            .map(
                |child| match previous.binary_search_by_key(&child, |entry| entry.0) {
                    Ok(at) => previous[at].1,
                    Err(_) => {
                        let leaves = node_leaves(level - 1, child, self.num_leaves());
                        leaves.map(|j| self.leaf_used(j)).sum()
                    }
                },
            )
            .sum()
    }

    /// Phase 3: redistributes the regions in parallel: regions that share a supergroup of
    /// the page table go to one task (serially), tasks own disjoint runs of supergroups.
    fn redistribute(&mut self, regions: &[Range<usize>], overflow: &[Overflow<C::Item>]) {
        let shift = self.table.super_shift;
        let mut tasks: Vec<(Range<usize>, Vec<Range<usize>>)> = Vec::new();
        for region in regions {
            let supers = region.start >> shift..((region.end - 1) >> shift) + 1;
            match tasks.last_mut() {
                Some((last, members)) if supers.start < last.end => {
                    last.end = last.end.max(supers.end);
                    members.push(region.clone());
                }
                _ => tasks.push((supers, vec![region.clone()])),
            }
        }
        let mut parts = Vec::with_capacity(tasks.len());
        let mut rest = self.leaves_mut();
        let mut at_super = 0;
        for (supers, members) in tasks {
            let (_, tail) = rest.split_at_super(supers.start - at_super);
            let (part, tail) = tail.split_at_super(supers.len());
            parts.push((part, members));
            rest = tail;
            at_super = supers.end;
        }
        let delta: isize = parts
            .into_par_iter()
            .map(|(mut part, members)| {
                members
                    .into_iter()
                    .map(|region| {
                        let local = region.start - part.first..region.end - part.first;
                        redistribute_region::<C>(&mut part, local, overflow)
                    })
                    .sum::<isize>()
            })
            .sum();
        self.total_used = self.total_used.wrapping_add_signed(delta);
        let mut leaves = self.leaves_mut();
        for region in regions.iter().rev() {
            leaves.repair_heads(region.clone());
        }
    }
}

/// Gathers and re-spreads one region (local leaf range of `part`); returns the change in
/// used bytes.
fn redistribute_region<C: LeafCodec>(
    part: &mut LeavesMut<'_>,
    region: Range<usize>,
    overflow: &[Overflow<C::Item>],
) -> isize {
    let view = part.as_ref();
    let before: usize = region.clone().map(|j| view.used(j)).sum();
    let keys = gather::<C>(view, part.first, region.clone(), overflow);
    let sized = SizedKeys::<C>::new(&keys);
    let after = spread(&sized, part, region);
    after as isize - before as isize
}

/// Keeps only regions not inside another; input in any order, output ascending.
fn drop_nested(mut regions: Vec<Range<usize>>) -> Vec<Range<usize>> {
    regions.sort_unstable_by_key(|r| (r.start, std::cmp::Reverse(r.end)));
    let mut kept: Vec<Range<usize>> = Vec::with_capacity(regions.len());
    for region in regions {
        match kept.last() {
            Some(last) if region.end <= last.end => {}
            _ => kept.push(region),
        }
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_regions_are_dropped() {
        assert_eq!(
            drop_nested(vec![4..6, 0..8, 8..10, 9..10, 12..16]),
            vec![0..8, 8..10, 12..16]
        );
    }
}
