//! k-hop neighborhood: the vertices within `k` edges of a source along edge directions,
//! found by `k` rounds of breadth-first search.

use std::sync::atomic::AtomicBool;

use super::bfs::{bfs_limited, UNREACHED};
use super::stop::NEVER;
use crate::graph::{GraphRead, VertexId};
use crate::Result;

/// Hop distance from `source` of every vertex within `k` hops ([`UNREACHED`] beyond).
///
/// # Errors
/// [`Error::VertexNotFound`](crate::Error::VertexNotFound) if `source` is not a vertex of `graph`.
pub fn khop<G: GraphRead>(graph: &G, source: VertexId, k: u32) -> Result<Vec<u32>> {
    khop_interruptible(graph, source, k, &NEVER)
}

/// [`khop`], looking at `stop` before each round.
///
/// # Errors
/// As [`khop`]; [`Error::Cancelled`](crate::Error::Cancelled) once `stop` is set.
pub(crate) fn khop_interruptible<G: GraphRead>(
    graph: &G,
    source: VertexId,
    k: u32,
    stop: &AtomicBool,
) -> Result<Vec<u32>> {
    Ok(bfs_limited(graph, source, k, stop)?.depths)
}

/// The vertices within `k` hops, ascending.
///
/// # Errors
/// As [`khop`].
pub fn khop_vertices<G: GraphRead>(graph: &G, source: VertexId, k: u32) -> Result<Vec<VertexId>> {
    let depths = khop(graph, source, k)?;
    Ok((0..depths.len() as VertexId)
        .filter(|&v| depths[v as usize] != UNREACHED)
        .collect())
}
