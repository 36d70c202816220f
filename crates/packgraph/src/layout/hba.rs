//! Hierarchical blocking (HBA): A. Roy, "Memory Hierarchy Sensitive Graph Layout"
//! (University of Cambridge), after its final variant `HBGraphOnePass` (section 7,
//! procedure 6).
//!
//! Given block sizes `s[1] < s[2] < ... < s[L]` (bytes: cache line, DRAM page, VM page, huge
//! page), the layout is built by a hierarchy of bounded breadth-first searches: `P_1` is a
//! BFS from one vertex that stops at the first depth whose vertices fill `s[1]` bytes; `P_i`
//! applies `P_{i-1}` to the frontier, again and again, until `s[i]` bytes are filled, and
//! hands its frontier up to `P_{i+1}`. A block may overshoot its size by one application of
//! the level below. Vertices get their new ids in the order the searches copy them.
//!
//! As in the paper's one-pass version, the lists of roots and leaves hold *parents* that
//! stand for the group of their neighbours (the slots); popping a slot takes the next
//! neighbour of the front parent, so a list entry is a range of the adjacency and the
//! lists need no per-neighbour entries. The `Forward` table is the array of new ids.
//!
//! Choices the paper leaves open: a vertex's size is the bytes of its compressed neighbour
//! run ([`super::adjacency::run_bytes`]); every level below the one a slot is popped from
//! starts a new application, so its space counter is reset (levels `1..level`); each
//! vertex not reached from an earlier root starts a new pass, in id order (disconnected
//! graphs, isolated vertices); a directed graph is traversed along both directions.
//!
//! # Complexity
//! O(L·n + m) work and time (sequential: each search depends on the one before), O(n) words
//! of extra memory beyond the adjacency.

use std::collections::VecDeque;

use super::adjacency::Adjacency;
use crate::graph::VertexId;

/// A parent standing for its not yet popped neighbours: `next..end` in the adjacency.
#[derive(Debug, Clone, Copy)]
struct Group {
    next: usize,
    end: usize,
}

/// The state of the searches: one roots and one leaves list per level, plus the top level
/// `L + 1` of unbounded size; the new ids handed out so far.
struct Blocker<'a> {
    adjacency: &'a Adjacency,
    sizes: &'a [u32],
    levels: &'a [u64],
    roots: Vec<VecDeque<Group>>,
    leaves: Vec<VecDeque<Group>>,
    space: Vec<u64>,
    placed: Vec<bool>,
    order: Vec<VertexId>,
}

impl<'a> Blocker<'a> {
    fn new(adjacency: &'a Adjacency, sizes: &'a [u32], levels: &'a [u64]) -> Self {
        let tiers = levels.len() + 1;
        Self {
            adjacency,
            sizes,
            levels,
            roots: vec![VecDeque::new(); tiers],
            leaves: vec![VecDeque::new(); tiers],
            space: vec![0; tiers],
            placed: vec![false; adjacency.len()],
            order: Vec::with_capacity(adjacency.len()),
        }
    }

    /// `ConditionalCopyNode`/`CopySlot`: gives `v` the next id unless it has one; a vertex
    /// copied joins the level-1 leaves as the group of its neighbours.
    fn copy(&mut self, v: VertexId) {
        if std::mem::replace(&mut self.placed[v as usize], true) {
            return;
        }
        self.order.push(v);
        self.space[0] += u64::from(self.sizes[v as usize]);
        let (next, end) = self.adjacency.range(v);
        if next < end {
            self.leaves[0].push_back(Group { next, end });
        }
    }

    /// The next slot of the front group of `roots[level]`, if any.
    fn pop_slot(&mut self, level: usize) -> Option<VertexId> {
        let group = self.roots[level].front_mut()?;
        let slot = self.adjacency.targets()[group.next];
        group.next += 1;
        if group.next == group.end {
            self.roots[level].pop_front();
        }
        Some(slot)
    }

    /// Moves `roots[level]` (all of it) to the leaves of the next level, with its space.
    fn promote(&mut self, level: usize) {
        let moved = std::mem::take(&mut self.roots[level]);
        self.leaves[level + 1].extend(moved);
        self.space[level + 1] += self.space[level];
    }

    /// `HBGraphOnePass` from `root` (procedure 6).
    fn one_pass(&mut self, root: VertexId) {
        let top = self.levels.len();
        self.space.fill(0);
        self.copy(root);
        let mut level = 0;
        loop {
            if self.roots[level].is_empty() {
                // Refill from the leaves; a level whose block is full hands them up.
                std::mem::swap(&mut self.roots[level], &mut self.leaves[level]);
                if level < top && self.space[level] >= self.levels[level] {
                    self.promote(level);
                    level += 1;
                    continue;
                }
            }
            match self.pop_slot(level) {
                None if level == top => return,
                None => {
                    self.space[level + 1] += self.space[level];
                    level += 1;
                }
                // A slot whose vertex is placed copies nothing: going down to level 1 and
                // back up would leave every list as it is, so it is skipped in place. This
                // keeps the work O(L·n + m) rather than O(L·m).
                Some(slot) if self.placed[slot as usize] => {}
                Some(slot) => {
                    // New applications of every level below start here.
                    self.space[..level].fill(0);
                    level = 0;
                    self.copy(slot);
                }
            }
        }
    }
}

/// The HBA order of the graph `adjacency` with vertex sizes `sizes` (bytes) and block sizes
/// `levels` (bytes, increasing): the vertices in their new order.
pub(crate) fn hba_order(adjacency: &Adjacency, sizes: &[u32], levels: &[u64]) -> Vec<VertexId> {
    let mut blocker = Blocker::new(adjacency, sizes, levels);
    for root in 0..adjacency.len() as VertexId {
        if !blocker.placed[root as usize] {
            blocker.one_pass(root);
        }
    }
    blocker.order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::Permutation;
    use std::collections::BTreeSet;

    /// A complete k-ary tree of `n` vertices in BFS numbering, as an undirected adjacency.
    fn tree(k: usize, n: usize) -> Adjacency {
        let lists: Vec<Vec<VertexId>> = (0..n)
            .map(|v| {
                let parent = (v > 0).then(|| ((v - 1) / k) as VertexId);
                let children = (k * v + 1..=k * v + k)
                    .filter(|&c| c < n)
                    .map(|c| c as VertexId);
                parent.into_iter().chain(children).collect()
            })
            .collect();
        Adjacency::from_lists(&lists)
    }

    /// Blocks of `block` bytes touched by each root-to-leaf path of the k-ary tree, when each
    /// vertex takes `size` bytes at the position `order` gives it: the worst path's count
    /// and the sum over all paths.
    fn path_blocks(
        k: usize,
        n: usize,
        order: &[VertexId],
        size: u64,
        block: u64,
    ) -> (usize, usize) {
        let p = Permutation::from_order(order.to_vec()).unwrap();
        let block_of = |v: usize| u64::from(p.new_id(v as VertexId)) * size / block;
        (n.saturating_sub(n / k)..n)
            .map(|leaf| {
                let mut blocks = BTreeSet::new();
                let mut v = leaf;
                loop {
                    blocks.insert(block_of(v));
                    if v == 0 {
                        break;
                    }
                    v = (v - 1) / k;
                }
                blocks.len()
            })
            .fold((0, 0), |(worst, sum), b| (worst.max(b), sum + b))
    }

    #[test]
    fn tree_paths_touch_few_blocks_at_every_level() {
        // A complete 4-ary tree of depth 9 (349,525 vertices), 16 bytes a vertex.
        let (k, depth, size) = (4, 9u32, 16u64);
        let n = (4usize.pow(depth + 1) - 1) / 3;
        let adjacency = tree(k, n);
        let levels = [64, 1024, 16 * 1024, 256 * 1024];
        let order = hba_order(&adjacency, &vec![size as u32; n], &levels);
        assert_eq!(order.len(), n);
        assert_eq!(order[0], 0);
        let random = {
            let mut order: Vec<VertexId> = (0..n as VertexId).collect();
            let mut x = 0x9e37_79b9_u64;
            for i in (1..n).rev() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order.swap(i, (x % (i as u64 + 1)) as usize);
            }
            order
        };
        for &block in &levels {
            // The paper's bound (section 4): a path of depth D touches at most
            // 4 (D + 1) / (d + 1) blocks, where a block's subtrees are at least d deep: the
            // least d whose complete subtree fills the block.
            let d = (0u32..)
                .find(|&d| (4u64.pow(d + 1) - 1) / 3 * size >= block)
                .unwrap();
            let bound = (4 * (depth + 1)).div_ceil(d + 1) as usize;
            let (worst, hba) = path_blocks(k, n, &order, size, block);
            let (_, shuffled) = path_blocks(k, n, &random, size, block);
            assert!(
                worst <= bound,
                "block {block}: {worst} blocks > bound {bound}"
            );
            // A cache line holds four vertices: parent and child share one at best.
            let factor = if block == 64 { 1 } else { 2 };
            assert!(
                factor * hba < shuffled,
                "block {block}: {hba} blocks over all paths, random {shuffled}"
            );
        }
    }

    #[test]
    fn level_one_blocks_are_bounded_searches() {
        // Sizes 16, s1 = 64: the root alone (16) is under 64, the root with its four
        // children (80) fills the block, so the first five ids are the root and children.
        let adjacency = tree(4, 85);
        let order = hba_order(&adjacency, &[16; 85], &[64, 1024]);
        let first: BTreeSet<_> = order[..5].iter().copied().collect();
        assert_eq!(first, (0..5).collect());
    }

    #[test]
    fn every_vertex_is_placed_once_whatever_the_components() {
        let lists = vec![vec![1], vec![0], vec![], vec![4], vec![3], vec![]];
        let order = hba_order(&Adjacency::from_lists(&lists), &[8; 6], &[64]);
        assert_eq!(order, [0, 1, 2, 3, 4, 5]);
        assert!(hba_order(&Adjacency::from_lists(&[]), &[], &[64]).is_empty());
    }
}
