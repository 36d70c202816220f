//! Single-source shortest paths as LDBC Graphalytics defines them: for every vertex, the
//! smallest total weight of a directed path from the source along out-edges (for an
//! undirected graph, along edges either way); `f64::INFINITY` where no path exists (written
//! `Infinity` in Graphalytics output). Weights must be non-negative.
//!
//! Delta-stepping (Meyer and Sanders, J. Algorithms 2003): vertices wait in buckets of
//! distance width Δ, and the lowest non-empty bucket is settled in rounds that relax the
//! out-edges of its vertices in parallel, until no relaxation lands in it again; then the
//! next bucket. Distances are non-negative floats, whose bit patterns order like their
//! values, so a relaxation is one atomic `fetch_min` on the bits. A vertex whose distance
//! fell into a lower bucket after it was queued is skipped when its old bucket comes up.
//! Every vertex ends with `min over in-edges (u, w) of dist(u) + w`, which has one
//! solution: the distances do not depend on Δ, the thread count or the order.
//!
//! Δ defaults to half the mean edge weight divided by the mean degree (sampled): narrow
//! buckets, so that few vertices are settled more than once.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;

use super::check_vertex;
use super::stop::{check, NEVER};
use crate::graph::{VertexId, WeightedGraphRead};
use crate::{Error, Result};

/// Frontier vertices per parallel task.
const GRAIN: usize = 64;

/// Vertices whose out-edges are sampled for the mean weight.
const SAMPLE: usize = 1024;

/// Δ in units of the mean weight over the mean degree. On Kronecker scale 20 with weights
/// uniform in (0, 1], 2 threads, factors 0.05 to 0.5 ran within noise of each other, 1 was
/// about 1.2× slower and 4 to 32 1.5–2× slower.
const WIDTH_FACTOR: f64 = 0.5;

/// Shortest-path distances from `source` (`f64::INFINITY` for unreachable vertices).
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex; [`Error::InvalidInput`](crate::Error::InvalidInput)
/// at the first negative (or NaN) weight met.
///
/// # Complexity
/// O(m) work per relaxation pass; delta-stepping relaxes most edges a small number of
/// times (Bellman-Ford's bound, O(n · m), in the worst case); one 8-byte distance per
/// vertex and the queued vertices.
pub fn sssp<G: WeightedGraphRead>(graph: &G, source: VertexId) -> Result<Vec<f64>> {
    sssp_interruptible(graph, source, &NEVER)
}

/// [`sssp`], looking at `stop` before each round of relaxations.
///
/// # Errors
/// As [`sssp`]; [`Error::Cancelled`] once `stop` is set.
pub(crate) fn sssp_interruptible<G: WeightedGraphRead>(
    graph: &G,
    source: VertexId,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    check_vertex(graph, source)?;
    sssp_with_width(graph, source, bucket_width(graph), stop)
}

/// Δ for `graph`: [`WIDTH_FACTOR`] times the mean weight of a sample of edges over the
/// mean out-degree; 1 when the sample holds no positive weight.
fn bucket_width<G: WeightedGraphRead>(graph: &G) -> f64 {
    let n = graph.num_vertices();
    let step = (n / SAMPLE).max(1);
    let (mut sum, mut count) = (0.0f64, 0usize);
    for v in (0..n).step_by(step) {
        graph.for_each_out_edge(v as VertexId, |_, weight| {
            if weight.is_finite() && weight > 0.0 {
                sum += weight;
            }
            count += 1;
            true
        });
    }
    let degree = graph.num_arcs() as f64 / n.max(1) as f64;
    let width = WIDTH_FACTOR * sum / count.max(1) as f64 / degree.max(1.0);
    if width.is_finite() && width > 0.0 {
        width
    } else {
        1.0
    }
}

/// Buckets held in a ring past the current one (most relaxations land within a few hundred
/// buckets of it); farther ones wait in an ordered map.
const RING: u64 = 1024;

/// The vertices waiting in the buckets after the current one.
#[derive(Default)]
struct Buckets {
    /// Bucket `b`, for `current < b < current + RING`, at `ring[b % RING]`.
    ring: Vec<Vec<VertexId>>,
    /// Buckets that were `RING` or more past the current one when their vertices came.
    far: BTreeMap<u64, Vec<VertexId>>,
}

impl Buckets {
    /// Queues `v` in bucket `b > current`.
    fn push(&mut self, current: u64, b: u64, v: VertexId) {
        if b - current < RING {
            if self.ring.is_empty() {
                self.ring.resize_with(RING as usize, Vec::new);
            }
            self.ring[(b % RING) as usize].push(v);
        } else {
            self.far.entry(b).or_default().push(v);
        }
    }

    /// The lowest non-empty bucket after `current`, taken out with its vertices.
    fn pop_after(&mut self, current: u64) -> Option<(u64, Vec<VertexId>)> {
        let ring = &self.ring;
        let near = (current.saturating_add(1)..current.saturating_add(RING))
            .take(ring.len())
            .find(|&b| !ring[(b % RING) as usize].is_empty());
        let far = self.far.first_key_value().map(|(&b, _)| b);
        let next = match (near, far) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b)?,
        };
        let mut vertices = if near == Some(next) {
            std::mem::take(&mut self.ring[(next % RING) as usize])
        } else {
            Vec::new()
        };
        if let Some(mut more) = self.far.remove(&next) {
            vertices.append(&mut more);
        }
        Some((next, vertices))
    }
}

/// [`sssp`] with buckets of width `width` (> 0), for a source known to be a vertex;
/// looks at `stop` before each round.
pub(crate) fn sssp_with_width<G: WeightedGraphRead>(
    graph: &G,
    source: VertexId,
    width: f64,
    stop: &AtomicBool,
) -> Result<Vec<f64>> {
    let n = check_vertex(graph, source)?;
    // Monotone in the distance (the cast saturates), so buckets come up in distance order.
    let bucket = |distance: f64| (distance / width) as u64;
    let distance: Vec<AtomicU64> = (0..n)
        .into_par_iter()
        .map(|_| AtomicU64::new(f64::INFINITY.to_bits()))
        .collect();
    distance[source as usize].store(0f64.to_bits(), Ordering::Relaxed);
    let bad_weight: Mutex<Option<Error>> = Mutex::new(None);
    let mut later = Buckets::default();
    let (mut current, mut frontier) = (0u64, vec![source]);
    loop {
        check(stop)?;
        if frontier.is_empty() {
            let Some((next, mut queued)) = later.pop_after(current) else {
                break;
            };
            queued.par_sort_unstable();
            queued.dedup();
            (current, frontier) = (next, queued);
        }
        let reached: Vec<Vec<(u64, VertexId)>> = frontier
            .par_chunks(GRAIN)
            .map(|chunk| {
                let mut reached = Vec::new();
                let mut arcs: Vec<(VertexId, f64)> = Vec::new();
                for &u in chunk {
                    let du = f64::from_bits(distance[u as usize].load(Ordering::Relaxed));
                    if bucket(du) != current {
                        // Its distance fell into a bucket already settled.
                        continue;
                    }
                    let mut relax = |v: VertexId, weight: f64| {
                        if weight.is_nan() || weight < 0.0 {
                            let mut slot = bad_weight.lock().unwrap_or_else(|e| e.into_inner());
                            slot.get_or_insert_with(|| {
                                Error::invalid(
                                    weight,
                                    format!(
                                        "edge {u} -> {v}: shortest paths need non-negative weights"
                                    ),
                                )
                            });
                            return false;
                        }
                        let candidate = (du + weight).to_bits();
                        let slot = &distance[v as usize];
                        // Most relaxations improve nothing: a plain load rules them out
                        // without the locked read-modify-write.
                        if candidate < slot.load(Ordering::Relaxed)
                            && candidate < slot.fetch_min(candidate, Ordering::Relaxed)
                        {
                            reached.push((bucket(f64::from_bits(candidate)), v));
                        }
                        true
                    };
                    if G::DECODES {
                        // The run is decoded first, then relaxed in a loop of its own: the
                        // loads of far distances then overlap instead of waiting between
                        // decode steps.
                        arcs.clear();
                        graph.for_each_out_edge(u, |v, weight| {
                            arcs.push((v, weight));
                            true
                        });
                        for &(v, weight) in &arcs {
                            if !relax(v, weight) {
                                break;
                            }
                        }
                    } else {
                        graph.for_each_out_edge(u, relax);
                    }
                }
                reached
            })
            .collect();
        if let Some(error) = bad_weight.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Err(error);
        }
        frontier.clear();
        for (b, v) in reached.into_iter().flatten() {
            if b == current {
                frontier.push(v);
            } else {
                later.push(current, b, v);
            }
        }
        frontier.par_sort_unstable();
        frontier.dedup();
    }
    Ok(distance
        .into_iter()
        .map(|d| f64::from_bits(d.into_inner()))
        .collect())
}

/// Dijkstra's algorithm with a binary heap (the sequential reference).
pub fn sssp_serial<G: WeightedGraphRead>(graph: &G, source: VertexId) -> Vec<f64> {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let n = graph.num_vertices();
    let mut distance = vec![f64::INFINITY; n];
    if (source as usize) >= n {
        return distance;
    }
    distance[source as usize] = 0.0;
    // Non-negative floats order like their bits.
    let mut heap = BinaryHeap::from([Reverse((0u64, source))]);
    while let Some(Reverse((bits, u))) = heap.pop() {
        let du = f64::from_bits(bits);
        if du > distance[u as usize] {
            continue;
        }
        graph.for_each_out_edge(u, |v, weight| {
            let candidate = du + weight;
            if candidate < distance[v as usize] {
                distance[v as usize] = candidate;
                heap.push(Reverse((candidate.to_bits(), v)));
            }
            true
        });
    }
    distance
}
