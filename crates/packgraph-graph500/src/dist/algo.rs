//! The algorithms over a [`Part`]: each process computes the values of the vertices it owns
//! from its local arcs, and sends values meant for other owners' vertices in one
//! all-to-all per step.
//!
//! * [`bfs`]: level-synchronous top-down search; each level sends, to each owner, the
//!   sorted local indices of its vertices just discovered, as a frontier message of
//!   `packgraph::codec::frontier` (bit-packed with `pack`, raw otherwise).
//! * [`pagerank`]: the Graphalytics definition as the core computes it (contributions
//!   `PR(u) / outdeg(u)` rounded to `f32`, sums in `f64`, dangling rank spread over all
//!   vertices); pull over in-arcs, with the contributions of other owners' in-neighbours
//!   (*ghosts*) fetched each iteration: 4 bytes per (ghost, process needing it).
//! * [`wcc`]: min-label propagation, labels the smallest external id of the component
//!   (the core's labels, written as external ids); 12 bytes per (vertex, label) message.
//! * [`sssp`]: Bellman–Ford rounds from the active vertices (those whose distance fell),
//!   exact: the fixpoint of `d(v) = min d(u) + w(u, v)` is what delta-stepping finds;
//!   12 bytes per (vertex, distance) message.

use packgraph::algo::UNREACHED;
use packgraph::codec::frontier::{self, Packing};
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

/// Hops from dense vertex `source` to each owned vertex ([`UNREACHED`] where none).
///
/// # Errors
/// [`DistError::Failed`] if a frontier message does not decode.
pub fn bfs(
    comm: &dyn Comm,
    part: &Part,
    source: VertexId,
    pack: bool,
) -> Result<Vec<u32>, DistError> {
    on_store!(part, g => bfs_on(comm, Meta::of(part), g, source, pack))
}

fn bfs_on<G: WeightedGraphRead>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    source: VertexId,
    pack: bool,
) -> Result<Vec<u32>, DistError> {
    let packing = if pack { Packing::Packed } else { Packing::Raw };
    let mut depth = vec![UNREACHED; m.owned];
    let mut frontier = Vec::new();
    let (o, i) = m.locate_dense(source);
    if o == m.rank {
        depth[i] = 0;
        frontier.push(i as u32);
    }
    let mut level = 0;
    while any_active(comm, frontier.len()) {
        level += 1;
        let mut next = Vec::new();
        let mut out = vec![Vec::new(); m.size];
        for &i in &frontier {
            g.for_each_out_neighbor(m.row(i as usize), |v| {
                let (o, j) = m.locate(v);
                if o != m.rank {
                    out[o].push(j as u32);
                } else if depth[j] == UNREACHED {
                    depth[j] = level;
                    next.push(j as u32);
                }
                true
            });
        }
        let parts: Vec<Vec<u8>> = out
            .iter_mut()
            .map(|ids| {
                ids.sort_unstable();
                ids.dedup();
                let mut bytes = Vec::new();
                frontier::encode(ids, packing, &mut bytes).expect("sorted, distinct ids");
                bytes
            })
            .collect();
        let got = comm.alltoall(Group::World, &parts);
        let mut ids = Vec::new();
        let mut outcome = Ok(());
        for k in 0..got.parts() {
            if let Err(e) = frontier::decode::<u32>(got.part(k), &mut ids) {
                outcome = Err(DistError::Failed(format!("a frontier from rank {k}: {e}")));
                break;
            }
            for &j in &ids {
                let j = j as usize;
                if j >= m.owned {
                    outcome = Err(DistError::Failed(format!("rank {k} sent vertex {j}")));
                } else if depth[j] == UNREACHED {
                    depth[j] = level;
                    next.push(j as u32);
                }
            }
        }
        agree(comm, outcome)?;
        frontier = next;
    }
    Ok(depth)
}

/// Which values a process reads in PageRank's pull step: its own contributions first, then
/// those of other owners' in-neighbours, grouped by owner.
struct Ghosts {
    /// `wanted[o]`: local indices (at `o`) of the in-neighbours this process reads.
    wanted: Vec<Vec<u32>>,
    /// Index in the value array of `wanted[o][0]`.
    offset: Vec<usize>,
    /// The value index of each in-arc of each owned vertex, vertex after vertex.
    arcs: Vec<u32>,
    /// In-arcs per owned vertex.
    in_degree: Vec<u32>,
}

impl Ghosts {
    fn of<G: WeightedGraphRead>(m: Meta, g: &G) -> Self {
        let mut wanted = vec![Vec::new(); m.size];
        let mut in_degree = Vec::with_capacity(m.owned);
        // The value index of each store vertex read: owned ones their local index, ghosts
        // numbered after them (filled in below).
        const UNSET: u32 = u32::MAX;
        let mut slot = vec![UNSET; m.dense_of.len()];
        for i in 0..m.owned {
            slot[m.row(i) as usize] = i as u32;
        }
        for i in 0..m.owned {
            let mut d = 0;
            g.for_each_in_neighbor(m.row(i), |u| {
                if slot[u as usize] == UNSET {
                    let (o, j) = m.locate(u);
                    wanted[o].push(j as u32);
                    slot[u as usize] = UNSET - 1;
                }
                d += 1;
                true
            });
            in_degree.push(d);
        }
        let mut offset = Vec::with_capacity(m.size);
        let mut next = m.owned;
        for w in &mut wanted {
            w.sort_unstable();
            offset.push(next);
            next += w.len();
        }
        for (x, s) in slot.iter_mut().enumerate() {
            if *s == UNSET - 1 {
                let (o, j) = m.locate(x as VertexId);
                let at = wanted[o].binary_search(&(j as u32));
                *s = (offset[o] + at.expect("every ghost is wanted")) as u32;
            }
        }
        let mut arcs = Vec::with_capacity(in_degree.iter().map(|&d| d as usize).sum());
        for i in 0..m.owned {
            g.for_each_in_neighbor(m.row(i), |u| {
                arcs.push(slot[u as usize]);
                true
            });
        }
        Self {
            wanted,
            offset,
            arcs,
            in_degree,
        }
    }

    fn values(&self) -> usize {
        self.offset.last().copied().unwrap_or(0) + self.wanted.last().map_or(0, Vec::len)
    }
}

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

fn pagerank_on<G: WeightedGraphRead>(
    comm: &dyn Comm,
    m: Meta,
    g: &G,
    damping: f64,
    iterations: usize,
    n: usize,
) -> Result<Vec<f64>, DistError> {
    let ghosts = Ghosts::of(m, g);
    let wanted: Vec<Vec<u64>> = ghosts
        .wanted
        .iter()
        .map(|w| w.iter().map(|&j| u64::from(j)).collect())
        .collect();
    // requests[o]: the local indices whose contributions process `o` reads, in its order.
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
    let inverse_degree: Vec<f64> = (0..m.owned)
        .map(|i| match g.out_degree(m.row(i)) {
            0 => 0.0,
            d => 1.0 / d as f64,
        })
        .collect();
    let mut starts = Vec::with_capacity(m.owned + 1);
    starts.push(0usize);
    for &d in &ghosts.in_degree {
        starts.push(starts.last().copied().unwrap_or(0) + d as usize);
    }
    let mut rank = vec![1.0 / n as f64; m.owned];
    let mut values = vec![0f32; ghosts.values()];
    for _ in 0..iterations {
        let dangling_here: f64 = rank
            .iter()
            .zip(&inverse_degree)
            .filter(|(_, &inv)| inv == 0.0)
            .map(|(r, _)| r)
            .sum();
        let dangling = sum_f64(comm, dangling_here);
        for ((c, r), inv) in values.iter_mut().zip(&rank).zip(&inverse_degree) {
            *c = (r * inv) as f32;
        }
        let parts: Vec<Vec<u8>> = requests
            .iter()
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
        rank.par_iter_mut().enumerate().for_each(|(i, r)| {
            let sum: f64 = ghosts.arcs[starts[i]..starts[i + 1]]
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

/// The component label of each owned vertex: the smallest external id in its weakly
/// connected component.
pub fn wcc(comm: &dyn Comm, part: &Part) -> Vec<u64> {
    on_store!(part, g => wcc_on(comm, Meta::of(part), g, &part.ids))
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
