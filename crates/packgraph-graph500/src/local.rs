//! Kernel 1: the distributed graph. Each process sends every arc of its share of the input
//! edges to the process that stores it (see [`crate::grid`]) and builds two CSR arrays of
//! the arcs it receives: by column-local source (for top-down steps) and by row-local target
//! (for bottom-up steps). Both are free of duplicates and self-loops; out-arcs are sorted by
//! target, in-arcs by the sources' arcs here, most first.
//!
//! Owners also learn, for each of their vertices, the degree (distinct neighbours, no
//! self-loop), which direction switching and root sampling use, and the *edge weight*: the
//! arcs of the input with duplicates, plus two per self-loop. Half the sum of the edge
//! weights over a search's tree is the number of input edges in its component, the
//! Graph500 edge count for TEPS.
//!
//! Beside the in-arcs, each target's first source (the one with the most arcs here) is
//! kept in a dense array, [`LocalGraph::in_first`], which a bottom-up step reads before
//! anything else of the target.
//!
//! CSR, not packgraph's compressed graph (CPMA and flat index), is the local store because
//! it measured faster: a direction-optimizing BFS on one process, Kronecker scale 20, the
//! same 16 roots, took 1.17–1.19× as long on the compressed graph (two rounds). The
//! compressed graph holds the symmetric graph in 3.54 bytes per arc against 8.53 for these
//! two CSR arrays, so it would be the store for a graph that does not fit otherwise; the
//! local graph never changes during the benchmark, so nothing else favours it.

use packgraph::pma::sort_key_bits;

use rayon::prelude::*;

use crate::comm::{get_u32s, put_u32s, Comm, Group};
use crate::grid::Layout;

/// The arcs one process stores, and the degrees of the vertices it owns.
#[derive(Debug, Clone)]
pub struct LocalGraph {
    /// Where everything lives.
    pub layout: Layout,
    /// `out_targets[out_offsets[x]..out_offsets[x + 1]]`: row-local targets of column-local
    /// source `x`, increasing.
    pub out_offsets: Vec<usize>,
    /// See `out_offsets`.
    pub out_targets: Vec<u32>,
    /// `in_sources[in_offsets[y]..in_offsets[y + 1]]`: column-local sources of row-local
    /// target `y`, those with the most arcs here first (ties by increasing id; see
    /// [`order_by_fanout`]).
    pub in_offsets: Vec<usize>,
    /// See `in_offsets`.
    pub in_sources: Vec<u32>,
    /// `in_first[y]`: the first of `in_arcs(y)` (the source with the most arcs here), 0
    /// where `y` has none. A bottom-up step reads it before the rest: it is where most
    /// targets find their parent, and reading it from this dense array streams through
    /// memory, where `in_sources[in_offsets[y]]` is a jump per target.
    pub in_first: Vec<u32>,
    /// One bit per row-local target, set where `in_arcs` is empty: bottom-up steps skip
    /// these a word at a time.
    pub no_in_arcs: Vec<u64>,
    /// Degree of each owned vertex (distinct neighbours, self-loops left out).
    pub degrees: Vec<u64>,
    /// Edge weight of each owned vertex: input arcs with duplicates, two per self-loop.
    pub edge_weights: Vec<u64>,
    /// Sum of all degrees (the arcs of the whole graph).
    pub total_degree: u64,
    /// For each owned vertex of degree ≥ 1, its index among the owned vertices of degree
    /// ≥ 1 ordered by non-increasing degree, ties by id (its *active rank*; meaningless for
    /// a vertex of degree 0). Frontier messages carry active ranks: only vertices with arcs
    /// need expanding, ranks over fewer vertices have smaller gaps, and a level's frontier,
    /// mostly of like degrees (hubs early, leaves late), falls in a narrower range of ranks.
    pub active_rank: Vec<u32>,
    /// Column-local ids of the column block's vertices of degree ≥ 1, member by member
    /// (grid row by grid row), in active-rank order: `active_ids[active_offsets[k]..
    /// active_offsets[k + 1]]` turns member `k`'s active ranks back into column-local ids.
    pub active_ids: Vec<u32>,
    /// See `active_ids`.
    pub active_offsets: Vec<usize>,
}

/// Set on the key of a self-loop, which is counted but not stored (keys use at most 62
/// bits: column- and row-local ids stay below 2^31, as vertex ids are 32-bit and a row or
/// column block holds at most 2^30 ids and padding).
const LOOP_BIT: u64 = 1 << 63;

/// Where arcs go, from per-owner tables (no division per arc when the block is a power of
/// two, as it is for a Kronecker graph on a power-of-two process count).
struct Router {
    shift: Option<u32>,
    block: usize,
    /// Per owner `q` of a target: first rank of `q`'s grid row, and the start of its row block.
    dest_row: Vec<(usize, u32)>,
    /// Per owner `q` of a source: grid column of `q`, and `col_local(u) - u` for its ids.
    dest_col: Vec<(usize, i64)>,
    /// Bits of a column-local id: a key holds the row-local target above them.
    x_bits: u32,
}

impl Router {
    fn new(layout: &Layout) -> Self {
        let grid = layout.grid;
        let owners = 0..grid.size();
        let dest_row = owners
            .clone()
            .map(|q| {
                let row = q / grid.cols;
                (grid.rank_at(row, 0), (row * layout.row_len()) as u32)
            })
            .collect();
        let dest_col = owners
            .map(|q| {
                let k = q / grid.cols;
                (
                    q % grid.cols,
                    (k * layout.block) as i64 - (q * layout.block) as i64,
                )
            })
            .collect();
        Self {
            shift: layout
                .block
                .is_power_of_two()
                .then(|| layout.block.trailing_zeros()),
            block: layout.block,
            dest_row,
            dest_col,
            x_bits: id_bits(layout.col_len()),
        }
    }

    #[inline]
    fn owner(&self, v: u32) -> usize {
        match self.shift {
            Some(shift) => (v >> shift) as usize,
            None => v as usize / self.block,
        }
    }

    /// The process storing `u → v`, and the arc as it stores it: its key, the row-local
    /// target above the column-local source (see [`Router::x_bits`]), [`LOOP_BIT`] set on a
    /// self-loop.
    #[inline]
    fn route(&self, u: u32, v: u32) -> (usize, u64) {
        let (row_rank, row_first) = self.dest_row[self.owner(v)];
        let (col, col_shift) = self.dest_col[self.owner(u)];
        let x = (i64::from(u) + col_shift) as u64;
        let y = u64::from(v - row_first);
        let key = y << self.x_bits | x | if u == v { LOOP_BIT } else { 0 };
        (row_rank + col, key)
    }
}

/// Sends each arc of `edges` (both directions of each; a self-loop once) to the process
/// that stores it, as its key (see [`Router::route`]); returns the keys received and the
/// send buffer, for reuse (its pages are already mapped).
fn route_arcs(comm: &dyn Comm, router: &Router, edges: &[(u32, u32)]) -> (Vec<u64>, Vec<u64>) {
    let mut counts = vec![0usize; comm.size()];
    for &(u, v) in edges {
        counts[router.route(u, v).0] += 1;
        if u != v {
            counts[router.route(v, u).0] += 1;
        }
    }
    let mut starts = Vec::with_capacity(counts.len());
    let mut total = 0;
    for &c in &counts {
        starts.push(total);
        total += c;
    }
    // One buffer, each destination's arcs in its own piece: MPI sends it as it is.
    let mut send = vec![0u64; total];
    let mut put = |u: u32, v: u32| {
        let (to, key) = router.route(u, v);
        send[starts[to]] = key;
        starts[to] += 1;
    };
    for &(u, v) in edges {
        put(u, v);
        if u != v {
            put(v, u);
        }
    }
    let received = comm.alltoallv_u64(Group::World, &send, &counts);
    (received, send)
}

/// Bits that hold every id below `len`.
fn id_bits(len: usize) -> u32 {
    usize::BITS - len.saturating_sub(1).leading_zeros()
}

/// CSR of `keys`, sorted and distinct, each `key << shift | value` with `key < len` and
/// `value < 2^shift`: offsets over `0..=len` and the values in key order.
fn csr_of_sorted(len: usize, shift: u32, keys: &[u64]) -> (Vec<usize>, Vec<u32>) {
    let mut offsets = vec![0usize; len + 1];
    for &k in keys {
        offsets[(k >> shift) as usize + 1] += 1;
    }
    for i in 0..len {
        offsets[i + 1] += offsets[i];
    }
    let mask = (1u64 << shift) - 1;
    (offsets, keys.iter().map(|&k| (k & mask) as u32).collect())
}

/// Sorts each target's sources by their arcs here (`out_offsets`), most first, ties by
/// increasing id.
///
/// A bottom-up step stops at the first source in the frontier, and a vertex with many arcs
/// is the likeliest to be there: on Kronecker scale 20 (one process, 16 searches, two
/// alternating pairs) the bottom-up levels took 0.93 and 0.87 of their time in id order.
/// The targets are sorted in parallel, in blocks of vertices.
fn order_by_fanout(offsets: &[usize], sources: &mut [u32], out_offsets: &[usize]) {
    let fanout: Vec<u32> = out_offsets
        .windows(2)
        .map(|w| (w[1] - w[0]) as u32)
        .collect();
    const BLOCK: usize = 1 << 12;
    let targets = offsets.len() - 1;
    let mut blocks = Vec::with_capacity(targets.div_ceil(BLOCK));
    let mut rest = sources;
    for start in (0..targets).step_by(BLOCK) {
        let ends = &offsets[start..=(start + BLOCK).min(targets)];
        let (block, tail) = rest.split_at_mut(ends[ends.len() - 1] - ends[0]);
        blocks.push((ends, block));
        rest = tail;
    }
    blocks
        .into_par_iter()
        .for_each_init(Vec::new, |keys, (ends, block)| {
            let base = ends[0];
            for w in ends.windows(2) {
                let list = &mut block[w[0] - base..w[1] - base];
                if list.len() < 2 {
                    continue;
                }
                keys.clear();
                keys.extend(
                    list.iter()
                        .map(|&x| u64::from(u32::MAX - fanout[x as usize]) << 32 | u64::from(x)),
                );
                keys.sort_unstable();
                for (slot, &k) in list.iter_mut().zip(keys.iter()) {
                    *slot = k as u32;
                }
            }
        });
}

/// The active ranks of the owned vertices (see [`LocalGraph::active_rank`]), and the
/// column-local ids of the active vertices of every member of the grid column, gathered as
/// each member's owned indices in rank order (4 bytes per active vertex, once per graph).
///
/// Ordering by degree narrows the frontier messages: on Kronecker scale 20, 2 processes,
/// 16 searches, the top-down gathers sent 23.5% of their raw bytes with ranks in id order
/// and 19.9% with ranks in degree order (the same searches; at scale 22, 19.1%), with no
/// measurable change of the search's compute time.
fn active_numbering(
    comm: &dyn Comm,
    layout: &Layout,
    degrees: &[u64],
) -> (Vec<u32>, Vec<u32>, Vec<usize>) {
    let mut order: Vec<u32> = (0..degrees.len() as u32)
        .filter(|&i| degrees[i as usize] > 0)
        .collect();
    order.par_sort_unstable_by_key(|&i| (std::cmp::Reverse(degrees[i as usize]), i));
    let mut active_rank = vec![0u32; degrees.len()];
    for (r, &i) in order.iter().enumerate() {
        active_rank[i as usize] = r as u32;
    }
    let mut message = Vec::new();
    put_u32s(&order, &mut message);
    drop(order);
    let all = comm.allgather(Group::Col, &message);
    let mut active_ids = Vec::new();
    let mut active_offsets = vec![0];
    for k in 0..all.parts() {
        let base = (k * layout.block) as u32;
        let start = active_ids.len();
        get_u32s(all.part(k), &mut active_ids);
        active_ids[start..].iter_mut().for_each(|i| *i += base);
        active_offsets.push(active_ids.len());
    }
    (active_rank, active_ids, active_offsets)
}

impl LocalGraph {
    /// Builds this process's part of the graph of `edges` (this process's share of the input
    /// edge list; every process calls this collectively).
    ///
    /// The received arcs become `u64` keys, target above source in as few bits as the ids
    /// need (fewer radix passes), and are radix sorted (`packgraph::pma::sort_key_bits`): the sorted keys give
    /// the in-arcs, and the same keys with the halves swapped, sorted again by the source
    /// bits alone (they are already in target order), the out-arcs. Sorting touches memory
    /// in passes over at most 2^11 buckets, where scattering each arc straight into its
    /// vertex's slot missed the cache once per arc.
    pub fn build(comm: &dyn Comm, layout: Layout, edges: &[(u32, u32)]) -> Self {
        let router = Router::new(&layout);
        let (mut keys, mut spare) = route_arcs(comm, &router, edges);
        let row_len = layout.row_len();
        let (x_bits, y_bits) = (router.x_bits, id_bits(row_len));
        // Edge weights by row-local target: every arc once, a self-loop twice.
        let mut row_sums = vec![0u64; 2 * row_len];
        keys.retain(|&k| {
            if k & LOOP_BIT != 0 {
                row_sums[row_len + ((k & !LOOP_BIT) >> x_bits) as usize] += 2;
            }
            k & LOOP_BIT == 0
        });
        sort_key_bits(&mut keys, &mut spare, 0, x_bits + y_bits);
        // Sorted by target, so these increments walk `row_sums` in order.
        for &k in &keys {
            row_sums[row_len + (k >> x_bits) as usize] += 1;
        }
        keys.dedup();
        let (in_offsets, in_sources) = csr_of_sorted(row_len, x_bits, &keys);
        let mut no_in_arcs = vec![0u64; row_len.div_ceil(64)];
        for (y, sum) in row_sums[..row_len].iter_mut().enumerate() {
            *sum = (in_offsets[y + 1] - in_offsets[y]) as u64;
            if *sum == 0 {
                no_in_arcs[y / 64] |= 1 << (y % 64);
            }
        }
        let x_mask = (1u64 << x_bits) - 1;
        for k in &mut keys {
            *k = (*k & x_mask) << y_bits | *k >> x_bits;
        }
        sort_key_bits(&mut keys, &mut spare, y_bits, x_bits + y_bits);
        drop(spare);
        let (out_offsets, out_targets) = csr_of_sorted(layout.col_len(), y_bits, &keys);
        drop(keys);
        let mut in_sources = in_sources;
        order_by_fanout(&in_offsets, &mut in_sources, &out_offsets);
        let in_first = in_offsets
            .windows(2)
            .map(|w| if w[0] < w[1] { in_sources[w[0]] } else { 0 })
            .collect();
        comm.allreduce_sum(Group::Row, &mut row_sums);
        let mine = layout.col * layout.block..(layout.col + 1) * layout.block;
        let degrees = row_sums[mine.clone()].to_vec();
        let edge_weights = row_sums[row_len..][mine].to_vec();
        let mut total = [degrees.iter().sum::<u64>()];
        comm.allreduce_sum(Group::World, &mut total);
        let (active_rank, active_ids, active_offsets) = active_numbering(comm, &layout, &degrees);
        Self {
            layout,
            out_offsets,
            out_targets,
            in_offsets,
            in_sources,
            in_first,
            no_in_arcs,
            degrees,
            edge_weights,
            total_degree: total[0],
            active_rank,
            active_ids,
            active_offsets,
        }
    }

    /// Column-local ids of column member `k`'s vertices of degree ≥ 1, in active-rank order.
    #[inline]
    pub fn active_ids_of(&self, k: usize) -> &[u32] {
        &self.active_ids[self.active_offsets[k]..self.active_offsets[k + 1]]
    }

    /// Row-local targets of column-local source `x`.
    #[inline]
    pub fn out_arcs(&self, x: u32) -> &[u32] {
        &self.out_targets[self.out_offsets[x as usize]..self.out_offsets[x as usize + 1]]
    }

    /// Column-local sources of row-local target `y`.
    #[inline]
    pub fn in_arcs(&self, y: u32) -> &[u32] {
        &self.in_sources[self.in_offsets[y as usize]..self.in_offsets[y as usize + 1]]
    }

    /// Arcs stored here.
    pub fn num_arcs(&self) -> usize {
        self.in_sources.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::{SelfComm, ThreadComm};
    use crate::grid::Grid;

    fn edges() -> Vec<(u32, u32)> {
        vec![
            (0, 1),
            (1, 0),
            (1, 2),
            (2, 2),
            (3, 4),
            (4, 3),
            (4, 3),
            (0, 200),
        ]
    }

    #[test]
    fn one_process_stores_the_symmetric_graph_without_loops_or_duplicates() {
        let layout = Layout::new(Grid { rows: 1, cols: 1 }, 201, 0);
        let g = LocalGraph::build(&SelfComm, layout, &edges());
        assert_eq!(g.out_arcs(0), [1, 200]);
        assert_eq!(g.out_arcs(1), [0, 2]);
        assert_eq!(g.out_arcs(2), [1]);
        assert_eq!(g.in_arcs(200), [0]);
        assert_eq!(g.num_arcs(), 8);
        assert_eq!(&g.degrees[..5], [2, 2, 1, 1, 1]);
        // (0,1),(1,0): 2 arcs each at 0 and 1; (1,2): 1 more at 1 and 2; (2,2): 2 at 2.
        assert_eq!(&g.edge_weights[..5], [3, 3, 3, 3, 3]);
        assert_eq!(g.edge_weights.iter().sum::<u64>(), 2 * edges().len() as u64);
        assert_eq!(g.total_degree, 8);
    }

    #[test]
    fn a_grid_stores_every_arc_once_and_agrees_on_degrees() {
        let all = packgraph::io::generate::kronecker(8, 8, 1);
        let reference = LocalGraph::build(
            &SelfComm,
            Layout::new(Grid { rows: 1, cols: 1 }, 256, 0),
            &all,
        );
        for grid in [
            Grid { rows: 2, cols: 2 },
            Grid { rows: 1, cols: 3 },
            Grid { rows: 3, cols: 1 },
        ] {
            let parts = ThreadComm::run(grid, |c| {
                let share = all.len().div_ceil(grid.size());
                let mine = &all
                    [(c.rank() * share).min(all.len())..((c.rank() + 1) * share).min(all.len())];
                let g = LocalGraph::build(c, Layout::new(grid, 256, c.rank()), mine);
                (g.num_arcs(), g.degrees, g.edge_weights, g.total_degree)
            });
            let arcs: usize = parts.iter().map(|p| p.0).sum();
            assert_eq!(arcs, reference.num_arcs());
            let degrees: Vec<u64> = parts.iter().flat_map(|p| p.1.clone()).take(256).collect();
            assert_eq!(degrees, reference.degrees[..256]);
            let weights: Vec<u64> = parts.iter().flat_map(|p| p.2.clone()).take(256).collect();
            assert_eq!(weights, reference.edge_weights[..256]);
            assert!(parts.iter().all(|p| p.3 == reference.total_degree));
        }
    }

    /// A graph built on one thread (the radix path `mpirun` takes with one core per
    /// process) equals the one built on several.
    #[test]
    fn one_thread_build_matches_the_parallel_one() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let all = packgraph::io::generate::kronecker(12, 16, 7);
        let layout = Layout::new(Grid { rows: 1, cols: 1 }, 1 << 12, 0);
        let single = one.install(|| LocalGraph::build(&SelfComm, layout, &all));
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        let parallel = pool.install(|| LocalGraph::build(&SelfComm, layout, &all));
        assert!(
            single.num_arcs() > 1 << 12,
            "large enough for the radix path"
        );
        assert_eq!(single.out_offsets, parallel.out_offsets);
        assert_eq!(single.out_targets, parallel.out_targets);
        assert_eq!(single.in_sources, parallel.in_sources);
        assert_eq!(single.edge_weights, parallel.edge_weights);
    }

    /// Each target's sources are its sorted sources reordered: most arcs here first, ties by
    /// increasing id.
    #[test]
    fn in_arcs_come_most_connected_first() {
        let all = packgraph::io::generate::kronecker(11, 8, 5);
        let n = 1 << 11;
        let grid = Grid { rows: 2, cols: 2 };
        ThreadComm::run(grid, |c| {
            let layout = Layout::new(grid, n, c.rank());
            let share = all.len().div_ceil(grid.size());
            let mine =
                &all[(c.rank() * share).min(all.len())..((c.rank() + 1) * share).min(all.len())];
            let g = LocalGraph::build(c, layout, mine);
            let mut sources = vec![Vec::new(); layout.row_len()];
            for x in 0..layout.col_len() as u32 {
                for &y in g.out_arcs(x) {
                    sources[y as usize].push(x);
                }
            }
            for (y, expected) in sources.iter().enumerate() {
                let got = g.in_arcs(y as u32);
                let mut sorted = got.to_vec();
                sorted.sort_unstable();
                assert_eq!(&sorted, expected, "sources of {y}");
                for pair in got.windows(2) {
                    let (a, b) = (g.out_arcs(pair[0]).len(), g.out_arcs(pair[1]).len());
                    assert!(
                        a > b || (a == b && pair[0] < pair[1]),
                        "order of {y}'s sources"
                    );
                }
            }
        });
    }

    #[test]
    fn active_ranks_number_the_vertices_with_arcs_and_every_column_member_can_invert_them() {
        let all = packgraph::io::generate::kronecker(8, 4, 3);
        let n = 300;
        let grid = Grid { rows: 2, cols: 2 };
        let parts = ThreadComm::run(grid, |c| {
            let layout = Layout::new(grid, n, c.rank());
            let share = all.len().div_ceil(grid.size());
            let mine =
                &all[(c.rank() * share).min(all.len())..((c.rank() + 1) * share).min(all.len())];
            let g = LocalGraph::build(c, layout, mine);
            let first = layout.block_start(c.rank()) as u32;
            let mut active: Vec<u32> = (0..layout.block as u32)
                .filter(|&i| g.degrees[i as usize] > 0)
                .collect();
            // Non-increasing degree, ties by id.
            active.sort_by_key(|&i| (std::cmp::Reverse(g.degrees[i as usize]), i));
            for (r, &i) in active.iter().enumerate() {
                assert_eq!(g.active_rank[i as usize], r as u32);
            }
            // What each column member can invert: column-local ids, as global ids.
            let inverted: Vec<Vec<u32>> = (0..grid.rows)
                .map(|k| {
                    g.active_ids_of(k)
                        .iter()
                        .map(|&x| layout.col_global(x))
                        .collect()
                })
                .collect();
            (
                c.rank(),
                layout.col,
                active.iter().map(|&i| first + i).collect::<Vec<_>>(),
                inverted,
            )
        });
        assert!(
            parts.iter().any(|p| p.2.len() < 150),
            "some vertices are isolated"
        );
        for (_, col, _, inverted) in &parts {
            for (k, ids) in inverted.iter().enumerate() {
                let owner = grid.rank_at(k, *col);
                assert_eq!(ids, &parts[owner].2, "member {k} of column {col}");
            }
        }
    }

    proptest::proptest! {
        /// Over every grid shape, the arcs all processes store, out and in, are exactly the
        /// symmetric graph without self-loops or duplicates (a `BTreeSet` oracle), and the
        /// degrees and edge weights agree with it.
        #[test]
        fn stored_arcs_match_a_set_oracle(
            edges in proptest::collection::vec((0u32..50, 0u32..50), 0..200),
            shape in 0usize..4,
        ) {
            use std::collections::BTreeSet;
            let n = 50;
            let grid = [
                Grid { rows: 1, cols: 1 },
                Grid { rows: 2, cols: 1 },
                Grid { rows: 1, cols: 2 },
                Grid { rows: 2, cols: 2 },
            ][shape];
            let mut oracle = BTreeSet::new();
            let mut weights = vec![0u64; n];
            for &(u, v) in &edges {
                weights[u as usize] += 1;
                weights[v as usize] += 1;
                if u != v {
                    oracle.insert((u, v));
                    oracle.insert((v, u));
                }
            }
            let parts = ThreadComm::run(grid, |c| {
                let share = edges.len().div_ceil(grid.size());
                let lo = (c.rank() * share).min(edges.len());
                let mine = &edges[lo..((c.rank() + 1) * share).min(edges.len())];
                let layout = Layout::new(grid, n, c.rank());
                let g = LocalGraph::build(c, layout, mine);
                let row_global = |y: u32| (layout.row_start() + y as usize) as u32;
                let mut out = Vec::new();
                for x in 0..layout.col_len() as u32 {
                    let targets = g.out_arcs(x);
                    assert!(targets.windows(2).all(|w| w[0] < w[1]), "sorted, distinct");
                    out.extend(targets.iter().map(|&y| (layout.col_global(x), row_global(y))));
                }
                let mut incoming = Vec::new();
                for y in 0..layout.row_len() as u32 {
                    let sources = g.in_arcs(y);
                    let empty = g.no_in_arcs[y as usize / 64] >> (y % 64) & 1 == 1;
                    assert_eq!(empty, sources.is_empty(), "no_in_arcs bit of {y}");
                    if let Some(&first) = sources.first() {
                        assert_eq!(g.in_first[y as usize], first, "in_first of {y}");
                    }
                    let fanout = |x: u32| std::cmp::Reverse(g.out_arcs(x).len());
                    assert!(
                        sources.windows(2).all(|w| (fanout(w[0]), w[0]) < (fanout(w[1]), w[1])),
                        "distinct, most arcs first"
                    );
                    incoming.extend(sources.iter().map(|&x| (layout.col_global(x), row_global(y))));
                }
                let first = layout.block_start(c.rank());
                (out, incoming, first, g.degrees, g.edge_weights)
            });
            let mut out = BTreeSet::new();
            let mut incoming = BTreeSet::new();
            for (o, i, first, degrees, edge_weights) in &parts {
                out.extend(o.iter().copied());
                incoming.extend(i.iter().copied());
                for (k, (&d, &w)) in degrees.iter().zip(edge_weights).enumerate() {
                    let v = (first + k) as u32;
                    if (v as usize) < n {
                        let expected = oracle.range((v, 0)..(v + 1, 0)).count() as u64;
                        proptest::prop_assert_eq!(d, expected);
                        proptest::prop_assert_eq!(w, weights[v as usize]);
                    }
                }
            }
            proptest::prop_assert_eq!(&out, &oracle);
            proptest::prop_assert_eq!(&incoming, &oracle);
            let stored: usize = parts.iter().map(|p| p.0.len()).sum();
            proptest::prop_assert_eq!(stored, oracle.len());
        }
    }
}
