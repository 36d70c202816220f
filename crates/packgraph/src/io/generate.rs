//! Graph generators, deterministic for a seed whatever the thread count: edges are produced
//! in fixed blocks, each from its own generator seeded with `seed` and the block index.
//!
//! * [`kronecker`]: the Graph500 Kronecker generator (initiator A = 0.57, B = C = 0.19,
//!   D = 0.05; `edge_factor · 2^scale` edges), with the specification's random relabelling
//!   of vertices so that ids carry no degree information.
//! * [`rmat`]: R-MAT edges with given quadrant probabilities over `2^scale` vertices.
//! * [`erdos_renyi`]: G(n, m), `m` endpoints pairs drawn uniformly.
//! * [`uniform_weights`]: edge weights uniform in (0, 1], as Graph500's SSSP kernel uses.
//!
//! Sampling is exact: each level draws a uniform value in [0, 1) from 53 random bits and
//! compares it with the cumulative quadrant probabilities.

use rayon::prelude::*;

use crate::graph::VertexId;

/// Edges per generator block.
const BLOCK: usize = 1 << 16;

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

#[cfg(test)]
mod tests {
    use super::*;

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
