//! Breadth-first search: parents and depths from one source.
//!
//! Direction-optimizing (Beamer, Asanović and Patterson, SC 2012): a round either pushes
//! from the frontier, kept as a list of ids, along out-arcs ("top-down"), or lets every
//! unvisited vertex look for a parent among its in-neighbors in the frontier, kept as a
//! bitmap ("bottom-up"), stopping at the first one found. The paper's two rules choose:
//! go bottom-up when the out-arcs of the frontier exceed `1/ALPHA` of the arcs not yet
//! examined; come back top-down when the frontier stops growing and holds fewer than
//! `1/BETA` of the vertices. The bitmap takes one bit per vertex, so on large graphs the
//! membership tests of a bottom-up round hit cache.
//!
//! Depths follow LDBC Graphalytics BFS: the number of edges on a shortest path along edge
//! directions, unreachable vertices marked (here `u32::MAX`; Graphalytics prints
//! 9223372036854775807).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use rayon::prelude::*;

use super::prefetch_out_ahead;
use super::stop::{check, NEVER};
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Marks an unvisited vertex or an unreachable depth.
pub const UNREACHED: u32 = u32::MAX;

/// Bottom-up once the frontier's out-arcs exceed the unexamined arcs divided by this.
const ALPHA: usize = 15;

/// Top-down again once a shrinking frontier holds fewer than the vertices divided by this.
const BETA: usize = 18;

/// Frontier vertices per parallel task of a top-down round.
const PUSH_BLOCK: usize = 256;

/// Bitmap words (64 vertices each) per parallel task of a bottom-up round.
const PULL_WORDS: usize = 32;

/// How many new frontier vertices ahead a top-down round asks for the index entry whose
/// degree it reads.
const DEGREE_AHEAD: usize = 8;

/// A BFS tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BfsTree {
    /// Parent of each vertex; the source is its own parent; [`UNREACHED`] if not reached.
    pub parents: Vec<VertexId>,
    /// Edges from the source; [`UNREACHED`] if not reached.
    pub depths: Vec<u32>,
}

/// Parents and depths of a breadth-first tree rooted at `source`.
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex of `graph`.
///
/// # Complexity
/// O(n + m) work, O(diameter · log n) depth, two words per vertex and three bits per vertex
/// of extra memory.
pub fn bfs<G: GraphRead>(graph: &G, source: VertexId) -> Result<BfsTree> {
    bfs_limited(graph, source, u32::MAX, &NEVER)
}

/// The search's state: both arrays are written by many threads, each vertex by the one
/// that claims it.
struct Search<'g, G> {
    graph: &'g G,
    parents: Vec<AtomicU32>,
    depths: Vec<AtomicU32>,
}

impl<G: GraphRead> Search<'_, G> {
    /// One top-down round at `depth`: the vertices first reached from `frontier`, and the
    /// sum of their out-degrees. Their depths and degrees are read in a second pass over
    /// the new frontier: inside the claiming loop those random accesses would queue behind
    /// each claim's own cache miss.
    fn push(&self, frontier: &[VertexId], depth: u32) -> (Vec<VertexId>, usize) {
        let parts: Vec<Vec<VertexId>> = frontier
            .par_chunks(PUSH_BLOCK)
            .map(|block| {
                let mut next = Vec::new();
                for (i, &u) in block.iter().enumerate() {
                    // The frontier's vertices come in the order they were claimed, so their
                    // entries, page-table slots and runs lie anywhere: each is asked for
                    // step by step a few vertices ahead.
                    prefetch_out_ahead(self.graph, block, i);
                    self.graph.for_each_out_neighbor(u, |v| {
                        let parent = &self.parents[v as usize];
                        if parent.load(Ordering::Relaxed) == UNREACHED
                            && parent
                                .compare_exchange(
                                    UNREACHED,
                                    u,
                                    Ordering::Relaxed,
                                    Ordering::Relaxed,
                                )
                                .is_ok()
                        {
                            next.push(v);
                        }
                        true
                    });
                }
                next
            })
            .collect();
        let next = concat(parts);
        let degrees = next
            .par_chunks(PUSH_BLOCK)
            .map(|block| {
                let mut sum = 0;
                for (i, &v) in block.iter().enumerate() {
                    // The degree is in the entry: only the prefetch's first step.
                    if let Some(&w) = block.get(i + DEGREE_AHEAD) {
                        self.graph.prefetch_out(w, 0);
                    }
                    self.depths[v as usize].store(depth, Ordering::Relaxed);
                    sum += self.graph.out_degree(v);
                }
                sum
            })
            .sum();
        (next, degrees)
    }

    /// The vertices a bottom-up round never needs to look at, one bit each: those already
    /// visited and those without in-arcs (a Kronecker graph's isolated third). Rounds then
    /// skip them a word at a time, and add what they find.
    fn skip_bitmap(&self) -> Vec<u64> {
        let n = self.parents.len();
        let mut skip = vec![0u64; n.div_ceil(64)];
        skip.par_iter_mut().enumerate().for_each(|(w, word)| {
            let first = w * 64;
            for v in first..(first + 64).min(n) {
                if self.parents[v].load(Ordering::Relaxed) != UNREACHED
                    || self.graph.in_degree(v as VertexId) == 0
                {
                    *word |= 1 << (v % 64);
                }
            }
            if first + 64 > n {
                *word |= u64::MAX << (n - first); // past the last vertex
            }
        });
        skip
    }

    /// One bottom-up round at `depth`: every vertex not in `skip` takes the first
    /// in-neighbor it finds in `frontier` as parent; returns the new frontier and its size,
    /// and adds the new frontier to `skip`.
    fn pull(&self, frontier: &[u64], skip: &mut [u64], depth: u32) -> (Vec<u64>, usize) {
        let mut next = vec![0u64; frontier.len()];
        let found = next
            .par_chunks_mut(PULL_WORDS)
            .zip(skip.par_chunks_mut(PULL_WORDS))
            .enumerate()
            .map(|(chunk, (words, skips))| {
                let mut found = 0;
                for (i, (word, skip)) in words.iter_mut().zip(skips.iter_mut()).enumerate() {
                    let first = (chunk * PULL_WORDS + i) * 64;
                    // The vertices a round reads are those left unvisited, so their runs lie
                    // apart and the hardware's stream prefetch loses them: the graph asks for
                    // each run a few vertices before it reads it.
                    self.graph
                        .for_each_in_neighbor_of_word(first as VertexId, !*skip, |v, u| {
                            if frontier[u as usize / 64] >> (u % 64) & 1 == 0 {
                                return true;
                            }
                            self.parents[v as usize].store(u, Ordering::Relaxed);
                            self.depths[v as usize].store(depth, Ordering::Relaxed);
                            *word |= 1 << (v % 64);
                            found += 1;
                            false
                        });
                    *skip |= *word;
                }
                found
            })
            .sum();
        (next, found)
    }
}

/// The ids of a bitmap's set bits, in increasing order.
fn bitmap_ids(bitmap: &[u64]) -> Vec<VertexId> {
    let parts: Vec<Vec<VertexId>> = bitmap
        .par_chunks(PULL_WORDS)
        .enumerate()
        .map(|(chunk, words)| {
            let mut ids = Vec::new();
            for (i, &word) in words.iter().enumerate() {
                let base = (chunk * PULL_WORDS + i) * 64;
                let mut bits = word;
                while bits != 0 {
                    ids.push((base + bits.trailing_zeros() as usize) as VertexId);
                    bits &= bits - 1;
                }
            }
            ids
        })
        .collect();
    concat(parts)
}

fn concat(parts: Vec<Vec<VertexId>>) -> Vec<VertexId> {
    match <[Vec<VertexId>; 1]>::try_from(parts) {
        Ok([only]) => only,
        Err(parts) => parts.concat(),
    }
}

/// [`bfs`] stopped after `max_depth` rounds: vertices farther away stay unreached.
/// Looks at `stop` before each round.
///
/// # Errors
/// As [`bfs`]; [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn bfs_limited<G: GraphRead>(
    graph: &G,
    source: VertexId,
    max_depth: u32,
    stop: &AtomicBool,
) -> Result<BfsTree> {
    let n = super::check_vertex(graph, source)?;
    let search = Search {
        graph,
        parents: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
        depths: (0..n).map(|_| AtomicU32::new(UNREACHED)).collect(),
    };
    search.parents[source as usize].store(source, Ordering::Relaxed);
    search.depths[source as usize].store(0, Ordering::Relaxed);
    let mut queue = vec![source];
    let mut unexamined = graph.num_arcs();
    let mut scouted = graph.out_degree(source);
    let mut depth = 0;
    while !queue.is_empty() && depth < max_depth {
        check(stop)?;
        if scouted > unexamined / ALPHA {
            // Bottom-up rounds until the frontier shrinks below n / BETA.
            let mut frontier = vec![0u64; n.div_ceil(64)];
            for &v in &queue {
                frontier[v as usize / 64] |= 1 << (v % 64);
            }
            let mut size = queue.len();
            let mut skip = search.skip_bitmap();
            loop {
                check(stop)?;
                depth += 1;
                #[cfg(test)]
                tests::BOTTOM_UP_ROUNDS.with(|r| r.set(r.get() + 1));
                let (next, found) = search.pull(&frontier, &mut skip, depth);
                let growing = found >= size;
                (frontier, size) = (next, found);
                if found == 0 || depth >= max_depth || !(growing || found > n / BETA) {
                    break;
                }
            }
            queue = bitmap_ids(&frontier);
            scouted = 1;
        } else {
            depth += 1;
            unexamined = unexamined.saturating_sub(scouted);
            (queue, scouted) = search.push(&queue, depth);
        }
    }
    Ok(BfsTree {
        parents: search
            .parents
            .into_iter()
            .map(AtomicU32::into_inner)
            .collect(),
        depths: search
            .depths
            .into_iter()
            .map(AtomicU32::into_inner)
            .collect(),
    })
}

/// Depths by a plain serial queue-based BFS (the reference).
pub fn bfs_depths_serial<G: GraphRead>(graph: &G, source: VertexId) -> Vec<u32> {
    let mut depths = vec![UNREACHED; graph.num_vertices()];
    let Some(slot) = depths.get_mut(source as usize) else {
        return depths;
    };
    *slot = 0;
    let mut queue = std::collections::VecDeque::from([source]);
    while let Some(u) = queue.pop_front() {
        let next = depths[u as usize] + 1;
        graph.for_each_out_neighbor(u, |v| {
            if depths[v as usize] == UNREACHED {
                depths[v as usize] = next;
                queue.push_back(v);
            }
            true
        });
    }
    depths
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::algo::verify;
    use crate::graph::{CsrGraph, Graph};

    thread_local! {
        /// Bottom-up rounds run by searches on this thread.
        pub(super) static BOTTOM_UP_ROUNDS: Cell<usize> = const { Cell::new(0) };
    }

    /// Depths, parents and the number of bottom-up rounds of a search from `source`.
    fn search<G: GraphRead>(graph: &G, source: VertexId, max_depth: u32) -> (BfsTree, usize) {
        BOTTOM_UP_ROUNDS.with(|r| r.set(0));
        let tree = bfs_limited(graph, source, max_depth, &NEVER).unwrap();
        (tree, BOTTOM_UP_ROUNDS.with(Cell::get))
    }

    /// A star of 2,000 leaves around 0 with a path of 300 vertices hanging off leaf 2,000.
    fn star_with_tail() -> Vec<(VertexId, VertexId)> {
        (1..=2_000)
            .map(|v| (0, v))
            .chain((2_000..2_300).map(|v| (v, v + 1)))
            .collect()
    }

    #[test]
    fn a_star_goes_bottom_up_and_its_tail_top_down_again() {
        let edges = star_with_tail();
        let csr = CsrGraph::from_edges(0, &edges, false);
        let graph = Graph::from_edges(0, &edges, false).unwrap();
        let (tree, bottom_up) = search(&csr, 0, u32::MAX);
        verify::bfs(&csr, 0, &tree).unwrap();
        assert_eq!(tree.depths, bfs_depths_serial(&csr, 0));
        assert_eq!(tree.depths[2_300], 301);
        // Round 1 reaches the leaves, round 2 one tail vertex; the 299 rounds of the tail
        // are top-down.
        assert_eq!(bottom_up, 2);
        let (dynamic, bottom_up) = search(&graph, 0, u32::MAX);
        assert_eq!((dynamic.depths, bottom_up), (tree.depths, 2));
    }

    #[test]
    fn long_frontiers_run_top_down_with_their_prefetches() {
        // A directed broom: the handle's end reaches 300 vertices, each of them 3 more. A
        // component the search does not reach holds enough arcs to keep every round top-down,
        // so the rounds of 300 and 900 vertices read their runs behind the staged prefetch
        // (`prefetch_out_ahead`), which reaches further than a few vertices.
        let mut edges: Vec<(VertexId, VertexId)> = (0..5).map(|v| (v, v + 1)).collect();
        edges.extend((0..300).map(|k| (5, 6 + k)));
        edges.extend((0..900).map(|k| (6 + k / 3, 306 + k)));
        edges.extend((0..30_000).map(|k| (2_000 + k / 100, 2_000 + (k * 7) % 300)));
        let csr = CsrGraph::from_edges(0, &edges, true);
        let graph = Graph::from_edges(0, &edges, true).unwrap();
        for (tree, bottom_up) in [search(&csr, 0, u32::MAX), search(&graph, 0, u32::MAX)] {
            assert_eq!(bottom_up, 0);
            assert_eq!(tree.depths, bfs_depths_serial(&csr, 0));
            assert_eq!(tree.depths[1_205], 7);
            verify::bfs(&csr, 0, &tree).unwrap();
        }
    }

    #[test]
    fn a_path_runs_top_down_until_its_last_arcs() {
        // One arc per round: bottom-up only once fewer than ALPHA arcs are unexamined.
        let edges: Vec<(VertexId, VertexId)> = (0..500).map(|v| (v, v + 1)).collect();
        let graph = CsrGraph::from_edges(0, &edges, true);
        let (tree, bottom_up) = search(&graph, 0, u32::MAX);
        assert!(bottom_up <= ALPHA, "{bottom_up} bottom-up rounds");
        assert_eq!(tree.depths, (0..=500).collect::<Vec<u32>>());
        verify::bfs(&graph, 0, &tree).unwrap();
    }

    #[test]
    fn the_depth_limit_holds_in_both_directions() {
        let edges = star_with_tail();
        let graph = CsrGraph::from_edges(0, &edges, false);
        let full = bfs_depths_serial(&graph, 0);
        for limit in [0, 1, 2, 3, 50] {
            let (tree, bottom_up) = search(&graph, 0, limit);
            assert_eq!(bottom_up, limit.min(2) as usize, "limit {limit}");
            for (v, (&got, &want)) in tree.depths.iter().zip(&full).enumerate() {
                let want = if want <= limit { want } else { UNREACHED };
                assert_eq!(got, want, "limit {limit}, vertex {v}");
                assert_eq!(tree.parents[v] == UNREACHED, want == UNREACHED);
            }
        }
    }

    #[test]
    fn directed_graphs_go_bottom_up_along_in_arcs() {
        // Arcs into the hub's leaves only from the hub; the leaves' own out-arcs point back
        // to vertices the search must not reach through them backwards.
        let mut edges: Vec<(VertexId, VertexId)> = (1..=1_000).map(|v| (0, v)).collect();
        edges.extend((1..=1_000).map(|v| (v, 1_000 + v)));
        edges.push((2_001, 0));
        let csr = CsrGraph::from_edges(0, &edges, true);
        let graph = Graph::from_edges(0, &edges, true).unwrap();
        let (tree, bottom_up) = search(&csr, 0, u32::MAX);
        assert!(bottom_up > 0);
        assert_eq!(tree.depths, bfs_depths_serial(&csr, 0));
        assert_eq!(tree.depths[2_001], UNREACHED);
        verify::bfs(&csr, 0, &tree).unwrap();
        assert_eq!(search(&graph, 0, u32::MAX).0.depths, tree.depths);
    }
}
