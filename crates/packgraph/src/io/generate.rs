//! Graph generators, deterministic for a seed whatever the thread count: edges are produced
//! in fixed blocks, each from its own generator seeded with `seed` and the block index.
//!
//! * [`kronecker`]: the Graph500 Kronecker generator (initiator A = 0.57, B = C = 0.19,
//!   D = 0.05; `edge_factor · 2^scale` edges), with the specification's random relabelling
//!   of vertices so that ids carry no degree information.
//! * [`rmat`]: R-MAT edges with given quadrant probabilities over `2^scale` vertices.
//! * [`erdos_renyi`]: G(n, m), `m` endpoints pairs drawn uniformly.
//! * [`uniform_weights`]: edge weights uniform in (0, 1], as Graph500's SSSP kernel uses.
//! * The families of the layout experiments (Roy, "Memory Hierarchy Sensitive Graph
//!   Layout", section 9.2): [`watts_strogatz`] (small world: a ring lattice with rewired
//!   edges), [`barabasi_albert`] (preferential attachment, power-law degrees), [`mesh`] (a
//!   2-D grid, optionally with diagonals) and [`tree`] (complete k-ary). They number the
//!   vertices naturally (ring, row-major, breadth-first); [`shuffle_ids`] gives them a random
//!   numbering, as a real file's would be.
//!
//! Sampling is exact: each level draws a uniform value in [0, 1) from 53 random bits and
//! compares it with the cumulative quadrant probabilities.

use rayon::prelude::*;

use crate::graph::VertexId;

/// Edges per generator block.
const BLOCK: usize = 1 << 16;

/// Bytes an edge costs at the peak of generating a graph and building it, about: the
/// generated pair (8), its two arcs as sorted keys while the graph is built (16), the
/// compressed arrays and the copies a save makes (24 more, generously).
pub const BYTES_PER_EDGE: u64 = 48;

/// Bytes a weighted edge costs at that peak: the weight and weighted arcs add 32.
pub const BYTES_PER_WEIGHTED_EDGE: u64 = 80;

/// Bytes a vertex costs (ids, degrees and index entries), about.
pub const BYTES_PER_VERTEX: u64 = 16;

/// The memory generating and building a graph of `num_vertices` vertices and `num_edges`
/// edges needs at its peak, about (saturating at `u64::MAX`): what a caller compares with
/// the memory it has before it starts.
pub fn bytes_needed(num_vertices: u64, num_edges: u64, weighted: bool) -> u64 {
    let per_edge = if weighted {
        BYTES_PER_WEIGHTED_EDGE
    } else {
        BYTES_PER_EDGE
    };
    num_edges
        .saturating_mul(per_edge)
        .saturating_add(num_vertices.saturating_mul(BYTES_PER_VERTEX))
}

/// SplitMix64: small, fast and good enough to drive the samplers.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator for stream `stream` of `seed`.
    pub fn new(seed: u64, stream: u64) -> Self {
        let mut rng = Self(seed ^ stream.wrapping_mul(0xd1b5_4a32_d192_ed03));
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in [0, bound) (bound > 0), by multiply-shift.
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }
}

/// Quadrant probabilities of an R-MAT / Kronecker initiator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Initiator {
    /// Top-left (both bits 0).
    pub a: f64,
    /// Top-right (source bit 0, target bit 1).
    pub b: f64,
    /// Bottom-left (source bit 1, target bit 0).
    pub c: f64,
}

impl Initiator {
    /// The Graph500 initiator.
    pub const GRAPH500: Self = Self {
        a: 0.57,
        b: 0.19,
        c: 0.19,
    };
}

fn rmat_edge(rng: &mut SplitMix64, scale: u32, init: Initiator) -> (VertexId, VertexId) {
    let (ab, abc) = (init.a + init.b, init.a + init.b + init.c);
    let (mut u, mut v) = (0u32, 0u32);
    for _ in 0..scale {
        let r = rng.next_f64();
        let (su, sv) = if r < init.a {
            (0, 0)
        } else if r < ab {
            (0, 1)
        } else if r < abc {
            (1, 0)
        } else {
            (1, 1)
        };
        u = (u << 1) | su;
        v = (v << 1) | sv;
    }
    (u, v)
}

fn blocks(
    count: usize,
    seed: u64,
    edge: impl Fn(&mut SplitMix64) -> (VertexId, VertexId) + Sync + Send,
) -> Vec<(VertexId, VertexId)> {
    blocks_in(0..count, seed, edge)
}

/// Edges `range` of the list `blocks` makes: whole blocks generated, their ends trimmed.
fn blocks_in(
    range: std::ops::Range<usize>,
    seed: u64,
    edge: impl Fn(&mut SplitMix64) -> (VertexId, VertexId) + Sync + Send,
) -> Vec<(VertexId, VertexId)> {
    let (start, end) = (range.start, range.end.max(range.start));
    (start / BLOCK..end.div_ceil(BLOCK))
        .into_par_iter()
        .flat_map_iter(|block| {
            let mut rng = SplitMix64::new(seed, block as u64);
            let first = block * BLOCK;
            let (skip, take) = (start.saturating_sub(first), BLOCK.min(end - first));
            (0..take)
                .map(|_| edge(&mut rng))
                .skip(skip)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `count` R-MAT edges over `2^scale` vertices (scale at most 32).
pub fn rmat(scale: u32, count: usize, init: Initiator, seed: u64) -> Vec<(VertexId, VertexId)> {
    let scale = scale.min(32);
    blocks(count, seed, |rng| rmat_edge(rng, scale, init))
}

/// A random permutation of `0..n` (Fisher–Yates).
pub fn permutation(n: usize, seed: u64) -> Vec<VertexId> {
    let mut perm: Vec<VertexId> = (0..n as VertexId).collect();
    let mut rng = SplitMix64::new(seed, u64::MAX);
    for i in (1..n).rev() {
        perm.swap(i, rng.below(i as u64 + 1) as usize);
    }
    perm
}

/// The Graph500 Kronecker graph: `edge_factor · 2^scale` edges (duplicates and self-loops
/// included, as generated), vertices relabelled by a random permutation.
pub fn kronecker(scale: u32, edge_factor: usize, seed: u64) -> Vec<(VertexId, VertexId)> {
    kronecker_slice(scale, edge_factor, seed, 0..edge_factor << scale.min(31))
}

/// Edges `range` (by position) of [`kronecker`]`(scale, edge_factor, seed)`, generated alone:
/// each process of a distributed run makes its share, and the shares concatenate to the
/// whole list.
pub fn kronecker_slice(
    scale: u32,
    edge_factor: usize,
    seed: u64,
    range: std::ops::Range<usize>,
) -> Vec<(VertexId, VertexId)> {
    let scale = scale.min(31);
    let end = range.end.min(edge_factor << scale);
    let init = Initiator::GRAPH500;
    let mut edges = blocks_in(range.start..end, seed, |rng| rmat_edge(rng, scale, init));
    let perm = permutation(1 << scale, seed ^ 0x5eed);
    edges
        .par_iter_mut()
        .for_each(|(u, v)| (*u, *v) = (perm[*u as usize], perm[*v as usize]));
    edges
}

/// G(n, m): `m` edges with endpoints drawn uniformly from `0..n` (n > 0).
pub fn erdos_renyi(n: usize, m: usize, seed: u64) -> Vec<(VertexId, VertexId)> {
    let n = n.max(1) as u64;
    blocks(m, seed, |rng| {
        (rng.below(n) as VertexId, rng.below(n) as VertexId)
    })
}

/// `count` weights uniform in (0, 1].
pub fn uniform_weights(count: usize, seed: u64) -> Vec<f64> {
    (0..count.div_ceil(BLOCK))
        .into_par_iter()
        .flat_map_iter(|block| {
            let mut rng = SplitMix64::new(seed ^ 0x5717_a11e, block as u64);
            let len = BLOCK.min(count - block * BLOCK);
            (0..len).map(move |_| 1.0 - rng.next_f64())
        })
        .collect()
}

/// Watts–Strogatz small world on `n` vertices: each vertex joined to its `k / 2` next
/// vertices around a ring, then each such edge's far end moved, with probability `beta`, to
/// a uniformly drawn vertex (self-loops and duplicates are left for the graph to drop).
/// `n · (k / 2)` edges; deterministic per seed on any thread count.
pub fn watts_strogatz(n: usize, k: usize, beta: f64, seed: u64) -> Vec<(VertexId, VertexId)> {
    let half = k / 2;
    if n < 2 || half == 0 {
        return Vec::new();
    }
    let per_block = (BLOCK / half).max(1);
    (0..n.div_ceil(per_block))
        .into_par_iter()
        .flat_map_iter(|block| {
            let mut rng = SplitMix64::new(seed, block as u64);
            let vertices = block * per_block..((block + 1) * per_block).min(n);
            vertices
                .flat_map(|v| (1..=half).map(move |j| (v, j)))
                .map(|(v, j)| {
                    let far = if rng.next_f64() < beta {
                        rng.below(n as u64) as usize
                    } else {
                        (v + j) % n
                    };
                    (v as VertexId, far as VertexId)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Barabási–Albert preferential attachment on `n` vertices: the first `m + 1` vertices form
/// a clique, then each new vertex links to `m` earlier vertices drawn with probability
/// proportional to their degree (a uniform pick among all edge endpoints so far).
/// About `n · m` edges. Sequential by nature: each draw depends on the degrees before it.
pub fn barabasi_albert(n: usize, m: usize, seed: u64) -> Vec<(VertexId, VertexId)> {
    let m = m.max(1);
    let seed_vertices = (m + 1).min(n);
    let mut edges = Vec::with_capacity(n.saturating_mul(m));
    for u in 0..seed_vertices {
        for v in u + 1..seed_vertices {
            edges.push((u as VertexId, v as VertexId));
        }
    }
    // Every endpoint so far, once per incident edge: a uniform pick is degree-proportional.
    let mut endpoints: Vec<VertexId> = edges.iter().flat_map(|&(u, v)| [u, v]).collect();
    let mut rng = SplitMix64::new(seed, 0);
    for v in seed_vertices..n {
        let v = v as VertexId;
        for _ in 0..m {
            let target = endpoints[rng.below(endpoints.len() as u64) as usize];
            edges.push((v, target));
        }
        for &(_, target) in &edges[edges.len() - m..] {
            endpoints.push(target);
            endpoints.push(v);
        }
    }
    edges
}

/// A `rows × cols` grid, vertex `r · cols + c` joined to its right and lower neighbours,
/// and with `diagonals` also to its lower-right one.
pub fn mesh(rows: usize, cols: usize, diagonals: bool) -> Vec<(VertexId, VertexId)> {
    (0..rows)
        .into_par_iter()
        .flat_map_iter(|r| {
            (0..cols).flat_map(move |c| {
                let v = (r * cols + c) as VertexId;
                let right = (c + 1 < cols).then_some((v, v + 1));
                let down = (r + 1 < rows).then(|| (v, v + cols as VertexId));
                let diagonal = (diagonals && c + 1 < cols && r + 1 < rows)
                    .then(|| (v, v + cols as VertexId + 1));
                [right, down, diagonal].into_iter().flatten()
            })
        })
        .collect()
}

/// The complete `k`-ary tree on `n` vertices in breadth-first numbering: vertex `v > 0`
/// hangs from `(v - 1) / k`.
pub fn tree(n: usize, k: usize) -> Vec<(VertexId, VertexId)> {
    let k = k.max(1);
    (1..n)
        .into_par_iter()
        .map(|v| (((v - 1) / k) as VertexId, v as VertexId))
        .collect()
}

/// Renumbers the endpoints of `edges` (vertices `0..n`) by a random permutation of `seed`.
pub fn shuffle_ids(edges: &mut [(VertexId, VertexId)], n: usize, seed: u64) {
    let perm = permutation(n, seed ^ 0x05_4f1e);
    edges
        .par_iter_mut()
        .for_each(|(u, v)| (*u, *v) = (perm[*u as usize], perm[*v as usize]));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_needed_grows_with_the_graph_and_saturates() {
        assert_eq!(
            bytes_needed(2, 10, false),
            10 * BYTES_PER_EDGE + 2 * BYTES_PER_VERTEX
        );
        assert!(bytes_needed(2, 10, true) > bytes_needed(2, 10, false));
        assert_eq!(bytes_needed(2, u64::MAX, false), u64::MAX);
    }

    #[test]
    fn generators_are_deterministic_across_thread_counts() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let a = one.install(|| kronecker(10, 8, 3));
        let b = kronecker(10, 8, 3);
        assert_eq!(a, b);
        assert_eq!(a.len(), 8 << 10);
        assert!(a.iter().all(|&(u, v)| u < 1 << 10 && v < 1 << 10));
        assert_ne!(kronecker(10, 8, 4), a);
        assert_eq!(
            erdos_renyi(100, 5_000, 1),
            one.install(|| erdos_renyi(100, 5_000, 1))
        );
    }

    #[test]
    fn rmat_quadrants_follow_the_initiator() {
        let init = Initiator {
            a: 0.5,
            b: 0.1,
            c: 0.1,
        };
        let edges = rmat(1, 200_000, init, 9);
        let share =
            |su, sv| edges.iter().filter(|&&(u, v)| (u, v) == (su, sv)).count() as f64 / 200_000.0;
        assert!((share(0, 0) - 0.5).abs() < 0.01);
        assert!((share(0, 1) - 0.1).abs() < 0.01);
        assert!((share(1, 0) - 0.1).abs() < 0.01);
        assert!((share(1, 1) - 0.3).abs() < 0.01);
    }

    #[test]
    fn families_have_their_shape_and_are_seeded() {
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let ws = watts_strogatz(1_000, 6, 0.1, 2);
        assert_eq!(ws.len(), 3_000);
        assert_eq!(ws, one.install(|| watts_strogatz(1_000, 6, 0.1, 2)));
        assert_ne!(ws, watts_strogatz(1_000, 6, 0.1, 3));
        let lattice = watts_strogatz(10, 4, 0.0, 1);
        assert!(lattice.contains(&(9, 1)) && lattice.contains(&(3, 4)));
        let ba = barabasi_albert(1_000, 3, 5);
        assert_eq!(ba.len(), 6 + 3 * 996);
        assert!(ba.iter().all(|&(u, v)| u < 1_000 && v < u.max(v) + 1));
        assert_eq!(ba, barabasi_albert(1_000, 3, 5));
        assert_eq!(mesh(3, 4, false).len(), 3 * 3 + 2 * 4);
        assert_eq!(mesh(3, 4, true).len(), 3 * 3 + 2 * 4 + 2 * 3);
        assert_eq!(tree(5, 4), [(0, 1), (0, 2), (0, 3), (0, 4)]);
        let mut shuffled = tree(100, 2);
        shuffle_ids(&mut shuffled, 100, 1);
        assert_ne!(shuffled, tree(100, 2));
    }

    #[test]
    fn kronecker_slices_concatenate_to_the_whole_list() {
        let whole = kronecker(9, 300, 7);
        let cuts = [0, 1, 65_535, 65_536, 100_000, 131_073, whole.len()];
        let joined: Vec<_> = cuts
            .windows(2)
            .flat_map(|w| kronecker_slice(9, 300, 7, w[0]..w[1]))
            .collect();
        assert_eq!(joined, whole);
        assert!(kronecker_slice(9, 300, 7, 5..5).is_empty());
    }

    #[test]
    fn permutation_is_a_bijection() {
        let mut perm = permutation(1_000, 5);
        perm.sort_unstable();
        assert!(perm.iter().enumerate().all(|(i, &v)| i as VertexId == v));
    }
}
