//! Kernel 1: the distributed graph. Each process sends every arc of its share of the input
//! edges to the process that stores it (see [`crate::grid`]) and builds two CSR arrays of
//! the arcs it receives: by column-local source (for top-down steps) and by row-local target
//! (for bottom-up steps). Both are sorted and free of duplicates and self-loops.
//!
//! Owners also learn, for each of their vertices, the degree (distinct neighbours, no
//! self-loop), which direction switching and root sampling use, and the *edge weight*: the
//! arcs of the input with duplicates, plus two per self-loop. Half the sum of the edge
//! weights over a search's tree is the number of input edges in its component, the
//! Graph500 edge count for TEPS.
//!
//! Left out: packgraph's compressed edge arrays (CPMA) as the local store. They were not
//! measured here; the local graph never changes during the benchmark, and a CSR scan costs
//! one load per neighbour where a CPMA leaf decodes a byte code per neighbour, so CSR is the
//! expected winner, not a measured one.

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
    /// target `y`, increasing.
    pub in_offsets: Vec<usize>,
    /// See `in_offsets`.
    pub in_sources: Vec<u32>,
    /// Degree of each owned vertex (distinct neighbours, self-loops left out).
    pub degrees: Vec<u64>,
    /// Edge weight of each owned vertex: input arcs with duplicates, two per self-loop.
    pub edge_weights: Vec<u64>,
    /// Sum of all degrees (the arcs of the whole graph).
    pub total_degree: u64,
}

/// Message bytes per routed arc: column-local source and row-local target.
const ARC_BYTES: usize = 8;

/// Set on the row-local target of a self-loop, which is counted but not stored (row-local
/// ids stay below 2^31: vertex ids are 32-bit and at most 2^30 + padding per row).
const LOOP_BIT: u32 = 1 << 31;

/// Where arcs go, from per-owner tables (no division per arc when the block is a power of
/// two, as it is for a Kronecker graph on a power-of-two process count).
struct Router {
    shift: Option<u32>,
    block: usize,
    /// Per owner `q` of a target: first rank of `q`'s grid row, and the start of its row block.
    dest_row: Vec<(usize, u32)>,
    /// Per owner `q` of a source: grid column of `q`, and `col_local(u) - u` for its ids.
    dest_col: Vec<(usize, i64)>,
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
        }
    }

    #[inline]
    fn owner(&self, v: u32) -> usize {
        match self.shift {
            Some(shift) => (v >> shift) as usize,
            None => v as usize / self.block,
        }
    }

    /// The process storing `u → v`, and the arc as it stores it.
    #[inline]
    fn route(&self, u: u32, v: u32) -> (usize, [u32; 2]) {
        let (row_rank, row_first) = self.dest_row[self.owner(v)];
        let (col, col_shift) = self.dest_col[self.owner(u)];
        let y = (v - row_first) | if u == v { LOOP_BIT } else { 0 };
        (row_rank + col, [(i64::from(u) + col_shift) as u32, y])
    }
}

/// Sends each arc of `edges` (both directions of each; a self-loop once) to the process
/// that stores it; returns the received `(column-local source, row-local target)` pairs,
/// self-loops marked by [`LOOP_BIT`] on the target.
fn route_arcs(comm: &dyn Comm, layout: &Layout, edges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let router = Router::new(layout);
    let mut counts = vec![0usize; comm.size()];
    for &(u, v) in edges {
        counts[router.route(u, v).0] += 1;
        if u != v {
            counts[router.route(v, u).0] += 1;
        }
    }
    let mut parts: Vec<Vec<u8>> = counts
        .iter()
        .map(|&c| Vec::with_capacity(c * ARC_BYTES))
        .collect();
    let mut put = |u: u32, v: u32| {
        let (to, arc) = router.route(u, v);
        put_u32s(&arc, &mut parts[to]);
    };
    for &(u, v) in edges {
        put(u, v);
        if u != v {
            put(v, u);
        }
    }
    let received = comm.alltoall(Group::World, &parts);
    drop(parts);
    let mut words = Vec::with_capacity(received.bytes.len() / 4);
    get_u32s(&received.bytes, &mut words);
    words.chunks_exact(2).map(|p| (p[0], p[1])).collect()
}

/// CSR of `pairs` `(key, value)` over keys `0..len`: values of each key sorted, duplicates
/// removed.
fn csr(len: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> (Vec<usize>, Vec<u32>) {
    let mut offsets = vec![0usize; len + 1];
    for (key, _) in pairs.clone() {
        offsets[key as usize + 1] += 1;
    }
    for i in 0..len {
        offsets[i + 1] += offsets[i];
    }
    let mut values = vec![0u32; offsets[len]];
    let mut next = offsets.clone();
    for (key, value) in pairs {
        values[next[key as usize]] = value;
        next[key as usize] += 1;
    }
    // Sort and deduplicate each key's values, compacting in place.
    let mut write = 0;
    for key in 0..len {
        let (start, end) = (offsets[key], offsets[key + 1]);
        values[start..end].sort_unstable();
        offsets[key] = write;
        let mut last = None;
        for i in start..end {
            let value = values[i];
            if last != Some(value) {
                values[write] = value;
                write += 1;
                last = Some(value);
            }
        }
    }
    offsets[len] = write;
    values.truncate(write);
    values.shrink_to_fit();
    (offsets, values)
}

impl LocalGraph {
    /// Builds this process's part of the graph of `edges` (this process's share of the input
    /// edge list; every process calls this collectively).
    pub fn build(comm: &dyn Comm, layout: Layout, edges: &[(u32, u32)]) -> Self {
        let arcs = route_arcs(comm, &layout, edges);
        let is_loop = |&(_, y): &(u32, u32)| y & LOOP_BIT != 0;
        // Edge weights by row-local target: every arc once, a self-loop twice.
        let mut row_sums = vec![0u64; 2 * layout.row_len()];
        for &(_, y) in &arcs {
            let loop_arc = y & LOOP_BIT != 0;
            row_sums[layout.row_len() + (y & !LOOP_BIT) as usize] += if loop_arc { 2 } else { 1 };
        }
        let (in_offsets, in_sources) = csr(
            layout.row_len(),
            arcs.iter().filter(|a| !is_loop(a)).map(|&(x, y)| (y, x)),
        );
        drop(arcs);
        for (y, sum) in row_sums[..layout.row_len()].iter_mut().enumerate() {
            *sum = (in_offsets[y + 1] - in_offsets[y]) as u64;
        }
        let by_target = (0..layout.row_len()).flat_map(|y| {
            in_sources[in_offsets[y]..in_offsets[y + 1]]
                .iter()
                .map(move |&x| (x, y as u32))
        });
        let (out_offsets, out_targets) = csr(layout.col_len(), by_target);
        comm.allreduce_sum(Group::Row, &mut row_sums);
        let mine = layout.col * layout.block..(layout.col + 1) * layout.block;
        let degrees = row_sums[mine.clone()].to_vec();
        let edge_weights = row_sums[layout.row_len()..][mine].to_vec();
        let mut total = [degrees.iter().sum::<u64>()];
        comm.allreduce_sum(Group::World, &mut total);
        Self {
            layout,
            out_offsets,
            out_targets,
            in_offsets,
            in_sources,
            degrees,
            edge_weights,
            total_degree: total[0],
        }
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
}
