//! The algorithms over a [`Part`]: each process computes the values of the vertices it owns
//! from its local arcs, and sends values meant for other owners' vertices in one
//! all-to-all per step.
//!
//! * [`bfs`]: level-synchronous, direction-optimizing search: a top-down level sends, to
//!   each owner, the sorted local indices of its vertices just discovered, as a frontier
//!   message of `packgraph::codec::frontier` (bit-packed with `pack`, raw otherwise); a
//!   bottom-up level (large frontiers) sends each process one bit per ghost it reads.
//! * [`pagerank`]: the Graphalytics definition as the core computes it (contributions
//!   `PR(u) / outdeg(u)` rounded to `f32`, sums in `f64`, dangling rank spread over all
//!   vertices); pull over in-arcs, with the contributions of other owners' in-neighbours
//!   (*ghosts*) fetched each iteration: 4 bytes per (ghost, process needing it).
//! * [`wcc`]: min-label propagation, labels the smallest external id of the component
//!   (the core's labels, written as external ids); 12 bytes per (vertex, label) message.
//! * [`sssp`]: Bellman–Ford rounds from the active vertices (those whose distance fell),
//!   exact: the fixpoint of `d(v) = min d(u) + w(u, v)` is what delta-stepping finds;
//!   12 bytes per (vertex, distance) message.
//! * [`cdlp`]: Graphalytics label propagation, labels external ids; each round fetches
//!   the labels of the ghosts (out- and in-neighbours owned elsewhere): 8 bytes per
//!   (ghost, process reading it).
//! * [`lcc`]: Graphalytics local clustering coefficient; the out-lists of the ghosts are
//!   fetched once (4 bytes per arc, 8 per list), then every process counts alone.

use packgraph::algo::most_frequent;
use packgraph::graph::{VertexId, WeightedGraphRead};
use rayon::prelude::*;

use super::{agree, alltoall_u64, DistError, Part, Store};
use crate::comm::{Comm, Group};

/// Where the owned vertices are: the part without its store.
#[derive(Debug, Clone, Copy)]
struct Meta<'a> {
    rank: usize,
    size: usize,
    owned: usize,
    directed: bool,
    /// The store's vertex of each owned vertex.
    rows: &'a [VertexId],
    /// The dense id of each store vertex.
    dense_of: &'a [VertexId],
}

impl<'a> Meta<'a> {
    fn of(part: &'a Part) -> Self {
        Self {
            rank: part.rank,
            size: part.size,
            owned: part.owned(),
            directed: part.directed,
            rows: &part.rows,
            dense_of: &part.dense_of,
        }
    }

    /// The store's vertex of owned vertex `i`.
    #[inline]
    fn row(self, i: usize) -> VertexId {
        self.rows[i]
    }

    /// Owner and local index of store vertex `x`.
    #[inline]
    fn locate(self, x: VertexId) -> (usize, usize) {
        self.locate_dense(self.dense_of[x as usize])
    }

    /// Owner and local index of dense id `v`.
    #[inline]
    fn locate_dense(self, v: VertexId) -> (usize, usize) {
        (v as usize % self.size, v as usize / self.size)
    }

    /// Calls `f` on every neighbour of owned vertex `i`, directions ignored (both for a
    /// directed graph; a vertex may come twice).
    fn for_each_neighbor<G: WeightedGraphRead>(self, g: &G, i: usize, mut f: impl FnMut(VertexId)) {
        let v = self.row(i);
        g.for_each_out_neighbor(v, |u| {
            f(u);
            true
        });
        if self.directed {
            g.for_each_in_neighbor(v, |u| {
                f(u);
                true
            });
        }
    }
}

/// Runs `$body` with `$g` bound to the part's store, whichever its kind.
macro_rules! on_store {
    ($part:expr, $g:ident => $body:expr) => {
        match &$part.store {
            Store::Plain($g) => $body,
            Store::Weighted($g) => $body,
        }
    };
}

mod search;
pub use search::bfs;
#[cfg(test)]
use search::{search, Direction};

/// Sum of `values` over the world, added in rank order (the same on every process).
fn sum_f64(comm: &dyn Comm, value: f64) -> f64 {
    let all = comm.allgather(Group::World, &value.to_le_bytes());
    (0..all.parts())
        .map(|k| f64::from_le_bytes(all.part(k).try_into().unwrap_or([0; 8])))
        .sum()
}

/// Whether any process has work left. A collective.
fn any_active(comm: &dyn Comm, active: usize) -> bool {
    let mut total = [active as u64];
    comm.allreduce_sum(Group::World, &mut total);
    total[0] > 0
}

/// The neighbours a step reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Around {
    /// In-neighbours (PageRank's pull).
    In,
    /// Out-neighbours, and in-neighbours too on a directed graph (a reciprocal neighbour
    /// comes twice), as CDLP and LCC read them.
    All,
}

/// Which values a process reads in a pull step (PageRank, CDLP, LCC): its own vertices'
/// first, then those of other owners' neighbours (*ghosts*), grouped by owner.
struct Ghosts {
    /// `wanted[o]`: local indices (at `o`) of the neighbours this process reads.
    wanted: Vec<Vec<u32>>,
    /// Index in the value array of `wanted[o][0]`.
    offset: Vec<usize>,
    /// The value index of each neighbour of each owned vertex, vertex after vertex.
    arcs: Vec<u32>,
    /// `arcs[starts[i]..starts[i + 1]]` are owned vertex `i`'s.
    starts: Vec<usize>,
    /// The value index of each store vertex ([`Ghosts::UNSET`] for one no owned vertex
    /// reads).
    slot: Vec<u32>,
}

impl Ghosts {
    const UNSET: u32 = u32::MAX;

    fn of<G: WeightedGraphRead + Sync>(m: Meta, g: &G, around: Around) -> Self {
        let visit = |i: usize, f: &mut dyn FnMut(VertexId)| {
            let v = m.row(i);
            let mut call = |u| {
                f(u);
                true
            };
            if around == Around::All {
                g.for_each_out_neighbor(v, &mut call);
            }
            if around == Around::In || m.directed {
                g.for_each_in_neighbor(v, &mut call);
            }
        };
        // The neighbours (store vertices) of the owned vertices, in blocks on all threads:
        // the store is decoded once.
        const BLOCK: usize = 1024;
        let blocks: Vec<(Vec<u32>, Vec<usize>)> = (0..m.owned.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let (mut arcs, mut ends) = (Vec::new(), Vec::with_capacity(BLOCK));
                for i in b * BLOCK..((b + 1) * BLOCK).min(m.owned) {
                    visit(i, &mut |u| arcs.push(u));
                    ends.push(arcs.len());
                }
                (arcs, ends)
            })
            .collect();
        let mut arcs = Vec::with_capacity(blocks.iter().map(|b| b.0.len()).sum());
        let mut starts = Vec::with_capacity(m.owned + 1);
        starts.push(0);
        for (block, ends) in blocks {
            let base = arcs.len();
            starts.extend(ends.iter().map(|&e| base + e));
            arcs.extend(block);
        }
        // The value index of each store vertex read: owned ones their local index, ghosts
        // numbered after them, grouped by owner.
        const WANTED: u32 = Ghosts::UNSET - 1;
        let mut slot = vec![Self::UNSET; m.dense_of.len()];
        for i in 0..m.owned {
            slot[m.row(i) as usize] = i as u32;
        }
        let mut wanted = vec![Vec::new(); m.size];
        for &u in &arcs {
            if slot[u as usize] == Self::UNSET {
                let (o, j) = m.locate(u);
                wanted[o].push(j as u32);
                slot[u as usize] = WANTED;
            }
        }
        let mut offset = Vec::with_capacity(m.size);
        let mut next = m.owned;
        for w in &mut wanted {
            w.sort_unstable();
            offset.push(next);
            next += w.len();
        }
        for (x, s) in slot.iter_mut().enumerate() {
            if *s == WANTED {
                let (o, j) = m.locate(x as VertexId);
                let at = wanted[o].binary_search(&(j as u32));
                *s = (offset[o] + at.expect("every ghost is wanted")) as u32;
            }
        }
        arcs.par_iter_mut()
            .with_min_len(1 << 14)
            .for_each(|u| *u = slot[*u as usize]);
        Self {
            wanted,
            offset,
            arcs,
            starts,
            slot,
        }
    }

    fn values(&self) -> usize {
        self.offset.last().copied().unwrap_or(0) + self.wanted.last().map_or(0, Vec::len)
    }

    /// The value indices of owned vertex `i`'s neighbours.
    #[inline]
    fn of_vertex(&self, i: usize) -> &[u32] {
        &self.arcs[self.starts[i]..self.starts[i + 1]]
    }

    /// `requests[o]`: the local indices whose values process `o` reads, in its order. A
    /// collective.
    fn requests(&self, comm: &dyn Comm, m: Meta) -> Result<Vec<Vec<u64>>, DistError> {
        let wanted: Vec<Vec<u64>> = self
            .wanted
            .iter()
            .map(|w| w.iter().map(|&j| u64::from(j)).collect())
            .collect();
        let requests = alltoall_u64(comm, wanted);
        let bad = requests.iter().flatten().find(|&&j| j as usize >= m.owned);
        agree(
            comm,
            match bad {
                Some(j) => Err(DistError::Failed(format!(
                    "asked for vertex {j}, not owned"
                ))),
                None => Ok(()),
            },
        )?;
        Ok(requests)
    }

    /// Fills the ghost values of `values` (8-byte values) from their owners, which send the
    /// `requests` of this process's own values. A collective.
    fn fetch_u64(
        &self,
        comm: &dyn Comm,
        requests: &[Vec<u64>],
        values: &mut [u64],
        owned: usize,
    ) -> Result<(), DistError> {
        let counts: Vec<usize> = requests.iter().map(Vec::len).collect();
        let send: Vec<u64> = requests
            .iter()
            .flatten()
            .map(|&j| values[j as usize])
            .collect();
        let got = comm.alltoallv_u64(Group::World, &send, &counts);
        let outcome = if got.len() == values.len() - owned {
            values[owned..].copy_from_slice(&got);
            Ok(())
        } else {
            Err(DistError::Failed(format!(
                "{} ghost values arrived for {} ghosts",
                got.len(),
                values.len() - owned
            )))
        };
        agree(comm, outcome)
    }
}

/// Ranks per block of PageRank's dangling sum.
const SUM_BLOCK: usize = 4096;

/// PageRank of each owned vertex after `iterations` iterations with damping `damping`,
/// over `num_vertices` vertices.
///
/// # Errors
/// [`DistError::Failed`] if another process asks for a vertex it does not own.
pub fn pagerank(
    comm: &dyn Comm,
    part: &Part,
    damping: f64,
    iterations: usize,
) -> Result<Vec<f64>, DistError> {
    let n = part.num_vertices;
    on_store!(part, g => pagerank_on(comm, Meta::of(part), g, damping, iterations, n))
}

fn pagerank_on<G: WeightedGraphRead + Sync>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    damping: f64,
    iterations: usize,
    n: usize,
) -> Result<Vec<f64>, DistError> {
    let ghosts = Ghosts::of(m, g, Around::In);
    let requests = ghosts.requests(comm, m)?;
    let inverse_degree: Vec<f64> = (0..m.owned)
        .map(|i| match g.out_degree(m.row(i)) {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect();
    let mut rank = vec![1.0 / n as f64; m.owned];
    let mut values = vec![0f32; ghosts.values()];
    for _ in 0..iterations {
        // Sums of fixed blocks, added in order: the same on any number of threads.
        let dangling_here: f64 = rank
            .par_chunks(SUM_BLOCK)
            .zip(inverse_degree.par_chunks(SUM_BLOCK))
            .map(|(r, inv)| {
                r.iter()
                    .zip(inv)
                    .filter(|(_, &inv)| inv == 0.0)
                    .map(|(r, _)| r)
                    .sum::<f64>()
            })
            .collect::<Vec<f64>>()
            .iter()
            .sum();
        let dangling = sum_f64(comm, dangling_here);
        values[..m.owned]
            .par_iter_mut()
            .with_min_len(1 << 12)
            .zip(&rank)
            .zip(&inverse_degree)
            .for_each(|((c, r), inv)| *c = (r * inv) as f32);
        let parts: Vec<Vec<u8>> = requests
            .par_iter()
            .map(|js| {
                js.iter()
                    .flat_map(|&j| values[j as usize].to_le_bytes())
                    .collect()
            })
            .collect();
        let got = comm.alltoall(Group::World, &parts);
        for (o, w) in ghosts.wanted.iter().enumerate() {
            let bytes = got.part(o);
            let slots = &mut values[ghosts.offset[o]..ghosts.offset[o] + w.len()];
            for (slot, c) in slots.iter_mut().zip(bytes.chunks_exact(4)) {
                *slot = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        let base = (1.0 - damping) / n as f64 + damping * dangling / n as f64;
        let values = &values;
        rank.par_iter_mut()
            .with_min_len(256)
            .enumerate()
            .for_each(|(i, r)| {
                let sum: f64 = ghosts
                    .of_vertex(i)
                    .iter()
                    .map(|&k| f64::from(values[k as usize]))
                    .sum();
                *r = base + damping * sum;
            });
    }
    Ok(rank)
}

/// Sends `(local index, value)` pairs to their owners, keeping per index the pair `keep`
/// prefers; returns the pairs received. A collective.
fn send_pairs(
    comm: &dyn Comm,
    mut out: Vec<Vec<(u32, u64)>>,
    keep_smaller: impl Fn(u64, u64) -> bool,
) -> Vec<(usize, u64)> {
    let parts: Vec<Vec<u64>> = out
        .iter_mut()
        .map(|pairs| {
            pairs.sort_unstable_by_key(|p| p.0);
            let mut flat = Vec::with_capacity(pairs.len() * 2);
            let mut k = 0;
            while k < pairs.len() {
                let (j, mut best) = pairs[k];
                k += 1;
                while k < pairs.len() && pairs[k].0 == j {
                    if keep_smaller(pairs[k].1, best) {
                        best = pairs[k].1;
                    }
                    k += 1;
                }
                flat.extend_from_slice(&[u64::from(j), best]);
            }
            flat
        })
        .collect();
    alltoall_u64(comm, parts)
        .iter()
        .flat_map(|p| p.chunks_exact(2).map(|c| (c[0] as usize, c[1])))
        .collect()
}

/// The component label of each owned vertex: the smallest of `ids` (by local index: the
/// external ids, or keys in their order) in its weakly connected component.
pub fn wcc(comm: &dyn Comm, part: &Part, ids: &[u64]) -> Vec<u64> {
    on_store!(part, g => wcc_on(comm, Meta::of(part), g, ids))
}

fn wcc_on<G: WeightedGraphRead>(comm: &dyn Comm, m: Meta, g: &G, ids: &[u64]) -> Vec<u64> {
    let mut label = ids.to_vec();
    let mut active: Vec<u32> = (0..m.owned as u32).collect();
    let mut queued = vec![false; m.owned];
    while any_active(comm, active.len()) {
        let mut next = Vec::new();
        let mut out = vec![Vec::new(); m.size];
        for &i in &active {
            let i = i as usize;
            queued[i] = false;
            let l = label[i];
            m.for_each_neighbor(g, i, |v| {
                let (o, j) = m.locate(v);
                if o != m.rank {
                    out[o].push((j as u32, l));
                } else if l < label[j] {
                    label[j] = l;
                    if !queued[j] {
                        queued[j] = true;
                        next.push(j as u32);
                    }
                }
            });
        }
        for (j, l) in send_pairs(comm, out, |a, b| a < b) {
            if j < m.owned && l < label[j] {
                label[j] = l;
                if !queued[j] {
                    queued[j] = true;
                    next.push(j as u32);
                }
            }
        }
        active = next;
    }
    label
}

/// Shortest-path distances from dense vertex `source` to each owned vertex
/// (`f64::INFINITY` where none), edge weights as stored (1 without weights).
///
/// # Errors
/// [`DistError::Usage`] for a negative weight, naming the edge by its external ids.
pub fn sssp(comm: &dyn Comm, part: &Part, source: VertexId) -> Result<Vec<f64>, DistError> {
    on_store!(part, g => sssp_on(comm, Meta::of(part), g, &part.ids, source))
}

fn sssp_on<G: WeightedGraphRead>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    ids: &[u64],
    source: VertexId,
) -> Result<Vec<f64>, DistError> {
    let mut negative = Ok(());
    for (i, id) in ids.iter().enumerate() {
        g.for_each_out_edge(m.row(i), |_, w| {
            if w < 0.0 {
                negative = Err(DistError::Usage(format!(
                    "an edge from vertex {id} has weight {w}: shortest paths need non-negative weights"
                )));
            }
            w >= 0.0
        });
        if negative.is_err() {
            break;
        }
    }
    agree(comm, negative)?;
    let mut dist = vec![f64::INFINITY; m.owned];
    let mut queued = vec![false; m.owned];
    let mut active = Vec::new();
    let (o, i) = m.locate_dense(source);
    if o == m.rank {
        dist[i] = 0.0;
        active.push(i as u32);
    }
    while any_active(comm, active.len()) {
        let mut next = Vec::new();
        let mut out = vec![Vec::new(); m.size];
        for &i in &active {
            let i = i as usize;
            queued[i] = false;
            let d = dist[i];
            g.for_each_out_edge(m.row(i), |v, w| {
                let nd = d + w;
                let (o, j) = m.locate(v);
                if o != m.rank {
                    out[o].push((j as u32, nd.to_bits()));
                } else if nd < dist[j] {
                    dist[j] = nd;
                    if !queued[j] {
                        queued[j] = true;
                        next.push(j as u32);
                    }
                }
                true
            });
        }
        // Non-negative floats order like their bits.
        for (j, bits) in send_pairs(comm, out, |a, b| a < b) {
            let nd = f64::from_bits(bits);
            if j < m.owned && nd < dist[j] {
                dist[j] = nd;
                if !queued[j] {
                    queued[j] = true;
                    next.push(j as u32);
                }
            }
        }
        active = next;
    }
    Ok(dist)
}

/// Community labels (of `ids`, by local index) of each owned vertex after `iterations` rounds of label
/// propagation, as Graphalytics defines CDLP and the core computes it: each vertex takes
/// the most frequent label among its neighbours (out- and in-neighbours of a directed
/// graph, a reciprocal one twice), the smallest on ties, and keeps its own without
/// neighbours.
///
/// # Errors
/// [`DistError::Failed`] if the processes disagree on what they exchange.
pub fn cdlp(
    comm: &dyn Comm,
    part: &Part,
    ids: &[u64],
    iterations: usize,
) -> Result<Vec<u64>, DistError> {
    on_store!(part, g => cdlp_on(comm, Meta::of(part), g, ids, iterations))
}

fn cdlp_on<G: WeightedGraphRead + Sync>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    ids: &[u64],
    iterations: usize,
) -> Result<Vec<u64>, DistError> {
    let ghosts = Ghosts::of(m, g, Around::All);
    let requests = ghosts.requests(comm, m)?;
    let mut labels = ids.to_vec();
    labels.resize(ghosts.values(), 0);
    for _ in 0..iterations {
        ghosts.fetch_u64(comm, &requests, &mut labels, m.owned)?;
        let next: Vec<u64> = (0..m.owned)
            .into_par_iter()
            .with_min_len(256)
            .map_init(Vec::new, |scratch, i| {
                scratch.clear();
                scratch.extend(ghosts.of_vertex(i).iter().map(|&k| labels[k as usize]));
                most_frequent(scratch).unwrap_or(labels[i])
            })
            .collect();
        labels[..m.owned].copy_from_slice(&next);
    }
    labels.truncate(m.owned);
    Ok(labels)
}

/// Elements common to two increasing lists.
fn intersection_len(a: &[u32], b: &[u32]) -> usize {
    let (mut i, mut j, mut count) = (0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                count += 1;
                i += 1;
                j += 1;
            }
        }
    }
    count
}

/// The local clustering coefficient of each owned vertex, as Graphalytics defines it and
/// the core computes it: with `N(v)` the out- and in-neighbours of `v` (without `v`) and
/// `d = |N(v)|`, the arcs `(u, w)` with `u, w ∈ N(v)` over `d(d − 1)`; 0 when `d < 2`.
///
/// Each process fetches once the out-lists of its ghosts from their owners (4 bytes per
/// arc of a ghost, plus 8 per ghost), then counts locally.
///
/// # Errors
/// [`DistError::Failed`] if the processes disagree on what they exchange.
pub fn lcc(comm: &dyn Comm, part: &Part) -> Result<Vec<f64>, DistError> {
    on_store!(part, g => lcc_on(comm, Meta::of(part), g))
}

fn lcc_on<G: WeightedGraphRead + Sync>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
) -> Result<Vec<f64>, DistError> {
    let ghosts = Ghosts::of(m, g, Around::All);
    let requests = ghosts.requests(comm, m)?;
    // The out-lists of the owned vertices, as dense ids, for the processes that ask.
    let out_dense = |i: usize| {
        let mut list = Vec::new();
        g.for_each_out_neighbor(m.row(i), |u| {
            list.push(u64::from(m.dense_of[u as usize]));
            true
        });
        list
    };
    let answers: Vec<Vec<u64>> = requests
        .iter()
        .map(|js| {
            let mut out = Vec::new();
            for &j in js {
                let list = out_dense(j as usize);
                out.push(list.len() as u64);
                out.extend(list);
            }
            out
        })
        .collect();
    let got = alltoall_u64(comm, answers);
    // Every list in value indices, increasing; arcs to vertices this process does not read
    // are left out (they are in no neighbourhood here).
    let value_of_dense = |w: u64| -> Option<u32> {
        let (o, j) = m.locate_dense(w as VertexId);
        if o == m.rank {
            Some(j as u32)
        } else {
            let k = ghosts.wanted[o].binary_search(&(j as u32)).ok()?;
            Some((ghosts.offset[o] + k) as u32)
        }
    };
    let mut lists: Vec<Vec<u32>> = (0..m.owned)
        .into_par_iter()
        .map(|i| {
            let mut list = Vec::new();
            g.for_each_out_neighbor(m.row(i), |u| {
                let k = ghosts.slot[u as usize];
                if k != Ghosts::UNSET {
                    list.push(k);
                }
                true
            });
            list.sort_unstable();
            list
        })
        .collect();
    let mut outcome = Ok(());
    for (o, wanted) in ghosts.wanted.iter().enumerate() {
        let mut rest = got.get(o).map_or(&[][..], Vec::as_slice);
        for _ in wanted {
            let Some((&len, tail)) = rest.split_first() else {
                outcome = Err(DistError::Failed(format!("rank {o} sent too few lists")));
                break;
            };
            let len = (len as usize).min(tail.len());
            let mut list: Vec<u32> = tail[..len]
                .iter()
                .filter_map(|&w| value_of_dense(w))
                .collect();
            list.sort_unstable();
            lists.push(list);
            rest = &tail[len..];
        }
    }
    agree(comm, outcome)?;
    Ok((0..m.owned)
        .into_par_iter()
        .with_min_len(64)
        .map_init(Vec::new, |around, i| {
            around.clear();
            around.extend_from_slice(ghosts.of_vertex(i));
            around.sort_unstable();
            around.dedup();
            around.retain(|&k| k as usize != i);
            let d = around.len();
            if d < 2 {
                return 0.0;
            }
            let arcs: usize = around
                .iter()
                .map(|&u| intersection_len(&lists[u as usize], around))
                .sum();
            arcs as f64 / (d * (d - 1)) as f64
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::comm::ThreadComm;
    use crate::dist::load::{load, resolve, LoadOptions};
    use crate::grid::Grid;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

        /// Top-down only, bottom-up only and the direction-optimizing search find the same
        /// depths, on 1 to 3 processes.
        #[test]
        fn every_direction_finds_the_same_depths(
            edges in prop::collection::vec((0u64..50, 0u64..50), 1..160),
            directed in any::<bool>(),
            ranks in 1usize..=3,
        ) {
            let dir = std::env::temp_dir().join(format!("pg-dist-search-{}", std::process::id()));
            std::fs::create_dir_all(&dir).expect("a temporary directory");
            let path = dir.join("g.el");
            let text: String = edges.iter().map(|(u, v)| format!("{u} {v}\n")).collect();
            std::fs::write(&path, text).expect("writes");
            let options = LoadOptions { path: path.clone(), directed: Some(directed), weighted: false };
            let grid = Grid { rows: ranks, cols: 1 };
            let depths = ThreadComm::run(grid, |comm| {
                let part = load(comm, &options).expect("loads");
                let source = resolve(comm, &part, &[edges[0].0])[0] as VertexId;
                [Direction::TopDown, Direction::BottomUp, Direction::Optimizing].map(|d| {
                    on_store!(part, g => search(comm, Meta::of(&part), g, source, true, d))
                        .expect("searches")
                })
            });
            std::fs::remove_dir_all(&dir).expect("cleans up");
            for [top_down, bottom_up, optimizing] in depths {
                prop_assert_eq!(&top_down, &bottom_up);
                prop_assert_eq!(&top_down, &optimizing);
            }
        }
    }
}
