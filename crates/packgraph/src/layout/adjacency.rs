//! The graph as the orders traverse it: a flat adjacency (CSR) of each vertex's neighbours in
//! both directions, built in parallel from any [`GraphRead`], and the byte size of each
//! vertex's compressed neighbour run (what HBA packs into blocks).

use rayon::prelude::*;

use crate::codec::varint;
use crate::graph::{GraphRead, VertexId};

/// Vertices per parallel task.
const VERTEX_GRAIN: usize = 1024;

/// Bytes charged for the first key of a non-empty run: its delta from the previous vertex's
/// last key carries the source in the high 32 bits, so it takes five varint bytes.
const RUN_HEAD_BYTES: u32 = 5;

/// Each vertex's neighbours, out and in together (a reciprocal pair of a directed graph is
/// listed twice), in increasing order.
#[derive(Debug, Clone)]
pub(crate) struct Adjacency {
    offsets: Vec<usize>,
    targets: Vec<VertexId>,
}

impl Adjacency {
    /// The adjacency of `graph`; a directed graph's out- and in-lists merged.
    pub(crate) fn of<G: GraphRead>(graph: &G) -> Self {
        let n = graph.num_vertices();
        let degree = |v: VertexId| {
            graph.out_degree(v)
                + if graph.is_directed() {
                    graph.in_degree(v)
                } else {
                    0
                }
        };
        let degrees: Vec<usize> = (0..n as VertexId)
            .into_par_iter()
            .with_min_len(VERTEX_GRAIN)
            .map(degree)
            .collect();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut total = 0;
        offsets.push(0);
        for d in &degrees {
            total += d;
            offsets.push(total);
        }
        let targets = par_fill(&offsets, |v, out| neighbors_into(graph, v, out));
        Self { offsets, targets }
    }

    /// From neighbour lists given directly (tests).
    #[cfg(test)]
    pub(crate) fn from_lists(lists: &[Vec<VertexId>]) -> Self {
        let mut offsets = vec![0];
        let mut targets = Vec::new();
        for list in lists {
            targets.extend_from_slice(list);
            offsets.push(targets.len());
        }
        Self { offsets, targets }
    }

    /// Number of vertices.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// The neighbours of `v`.
    #[inline]
    pub(crate) fn neighbors(&self, v: VertexId) -> &[VertexId] {
        &self.targets[self.offsets[v as usize]..self.offsets[v as usize + 1]]
    }

    /// Where `v`'s neighbours sit in [`Adjacency::targets`].
    #[inline]
    pub(crate) fn range(&self, v: VertexId) -> (usize, usize) {
        (self.offsets[v as usize], self.offsets[v as usize + 1])
    }

    /// All neighbour lists, one after the other.
    #[inline]
    pub(crate) fn targets(&self) -> &[VertexId] {
        &self.targets
    }

    /// Number of neighbours of `v`.
    #[inline]
    pub(crate) fn degree(&self, v: VertexId) -> usize {
        self.offsets[v as usize + 1] - self.offsets[v as usize]
    }
}

/// Writes `v`'s out-neighbours, merged with its in-neighbours for a directed graph, into
/// `out` (exactly its length), in increasing order.
fn neighbors_into<G: GraphRead>(graph: &G, v: VertexId, out: &mut [VertexId]) {
    let mut len = 0;
    graph.for_each_out_neighbor(v, |u| {
        out[len] = u;
        len += 1;
        true
    });
    if graph.is_directed() {
        let split = len;
        graph.for_each_in_neighbor(v, |u| {
            out[len] = u;
            len += 1;
            true
        });
        if split > 0 && split < out.len() && out[split - 1] > out[split] {
            out.sort_unstable();
        }
    }
}

/// A vector of `offsets[n]` items where `fill(v, slice)` writes vertex `v`'s items into
/// `offsets[v]..offsets[v + 1]`, filled on all threads.
pub(crate) fn par_fill<T: Copy + Default + Send>(
    offsets: &[usize],
    fill: impl Fn(VertexId, &mut [T]) + Sync,
) -> Vec<T> {
    let n = offsets.len() - 1;
    let mut items = vec![T::default(); offsets[n]];
    // Cut the output at block boundaries, so that each task owns its block's slice.
    let mut blocks = Vec::with_capacity(n.div_ceil(VERTEX_GRAIN));
    let mut rest: &mut [T] = &mut items;
    for start in (0..n).step_by(VERTEX_GRAIN) {
        let end = (start + VERTEX_GRAIN).min(n);
        let (block, tail) = rest.split_at_mut(offsets[end] - offsets[start]);
        blocks.push((start, end, block));
        rest = tail;
    }
    blocks.into_par_iter().for_each(|(start, end, block)| {
        let base = offsets[start];
        for v in start..end {
            fill(
                v as VertexId,
                &mut block[offsets[v] - base..offsets[v + 1] - base],
            );
        }
    });
    items
}

/// The bytes of `v`'s compressed neighbour runs: the run head, then one varint per delta
/// between consecutive neighbours, for the out-run and (directed) the in-run.
pub(crate) fn run_bytes<G: GraphRead>(graph: &G, v: VertexId) -> u32 {
    /// Adds the bytes of one more neighbour `u` of a run whose last one was `previous`.
    fn add(bytes: &mut u32, previous: &mut Option<VertexId>, u: VertexId) -> bool {
        *bytes += match *previous {
            None => RUN_HEAD_BYTES,
            Some(p) => varint::encoded_len(u64::from(u - p)) as u32,
        };
        *previous = Some(u);
        true
    }
    let mut bytes = 0u32;
    let mut previous = None;
    graph.for_each_out_neighbor(v, |u| add(&mut bytes, &mut previous, u));
    if graph.is_directed() {
        let mut previous = None;
        graph.for_each_in_neighbor(v, |u| add(&mut bytes, &mut previous, u));
    }
    bytes
}

/// [`run_bytes`] of every vertex, on all threads.
pub(crate) fn all_run_bytes<G: GraphRead>(graph: &G) -> Vec<u32> {
    (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .with_min_len(VERTEX_GRAIN)
        .map(|v| run_bytes(graph, v))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::Graph;

    #[test]
    fn directed_adjacency_merges_both_directions() {
        let g = Graph::from_edges(4, &[(0, 2), (3, 0), (1, 0), (0, 1)], true).unwrap();
        let adj = Adjacency::of(&g);
        assert_eq!(adj.neighbors(0), [1, 1, 2, 3]);
        assert_eq!(adj.neighbors(2), [0]);
        assert_eq!(adj.len(), 4);
    }

    #[test]
    fn parallel_fill_writes_every_block() {
        let n = 5 * VERTEX_GRAIN + 7;
        let offsets: Vec<usize> = (0..=n).map(|v| v * 2).collect();
        let items = par_fill(&offsets, |v, out: &mut [u32]| out.fill(v));
        assert!(items.chunks(2).enumerate().all(|(v, c)| c == [v as u32; 2]));
    }

    #[test]
    fn run_bytes_count_the_head_and_the_deltas() {
        let g = Graph::from_edges(300, &[(0, 1), (0, 2), (0, 299)], false).unwrap();
        // Head, delta 1 (one byte), delta 297 (two bytes).
        assert_eq!(run_bytes(&g, 0), RUN_HEAD_BYTES + 1 + 2);
        assert_eq!(run_bytes(&g, 5), 0);
    }
}
