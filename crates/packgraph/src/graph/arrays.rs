//! A graph's edge arrays as they are in memory, out and back: what snapshot files store.
//! Rebuilding from arrays validates everything, since they may come from a damaged file.

use std::sync::OnceLock;

use super::{Graph, IdMap, Properties};
use crate::pma::{
    ArcCheck, DeltaLeaf, DeltaMapLeaf, GroupLeaf, GroupMapLeaf, IntoPma, LeafCodec, Pma, PmaParts,
    PmaPartsRef, RebuildError,
};
use crate::{Error, Result};

impl<C: LeafCodec> Graph<C> {
    /// The edge arrays as they are in memory: out-edges, and in-edges for a directed graph.
    pub fn parts(&self) -> (PmaPartsRef<'_>, Option<PmaPartsRef<'_>>) {
        (self.out.parts(), self.incoming.as_ref().map(Pma::parts))
    }

    /// Rebuilds a graph from its edge arrays (as [`Graph::parts`] gives them, or filled in
    /// place), checking every structural invariant and that each edge joins two distinct
    /// vertices below `num_vertices`; `item_ok` adds a check per stored item.
    fn from_parts_checked<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
        item_ok: impl Fn(C::Item) -> bool + Sync,
    ) -> Result<Self> {
        if num_vertices > u32::MAX as usize {
            return Err(Error::corrupt(format!(
                "invalid graph arrays: {num_vertices} vertices is more than 32-bit ids allow"
            )));
        }
        if incoming.is_some() != directed {
            return Err(Error::corrupt(
                "invalid graph arrays: in-edge arrays must be present exactly for directed graphs",
            ));
        }
        let n = num_vertices as u64;
        // Sources are the keys' high halves and the keys increase through the whole array
        // (checked while rebuilding it), so `u < n` holds for every item once it holds for
        // the largest key ([`sources_below`]): the per-item check leaves it out.
        let ok = ArcCheck::new(n, &item_ok);
        let bad = |e: RebuildError| match e {
            RebuildError::Invalid(e) => Error::corrupt(format!("invalid graph arrays: {e}")),
            RebuildError::Unreadable(e) => e,
        };
        let out = sources_below(out.into_pma(ok).map_err(bad)?, n)?;
        let incoming = incoming
            .map(|parts| sources_below(parts.into_pma(ok).map_err(bad)?, n))
            .transpose()?;
        if let Some(incoming) = &incoming {
            if incoming.len() != out.len() {
                return Err(Error::corrupt(format!(
                    "invalid graph arrays: {} in-edges but {} out-edges",
                    incoming.len(),
                    out.len()
                )));
            }
        }
        Ok(Self {
            directed,
            num_vertices,
            out,
            incoming,
            index: OnceLock::new(),
            version: 0,
            ids: IdMap::identity(num_vertices),
            properties: Properties::default(),
        })
    }
}

/// `pma` if the source of its largest key (and so of every key) is below `n`.
fn sources_below<C: LeafCodec>(pma: Pma<C>, n: u64) -> Result<Pma<C>> {
    match pma.max().map(|key| key >> 32) {
        Some(u) if u >= n => Err(Error::corrupt(format!(
            "invalid graph arrays: an edge leaves vertex {u}, past the {n} vertices"
        ))),
        _ => Ok(pma),
    }
}

impl Graph<GroupLeaf> {
    /// Rebuilds a graph from its edge arrays (see [`Graph::parts`]), validating them fully.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first thing that does not hold.
    pub fn from_parts<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
    ) -> Result<Self> {
        Self::from_parts_checked(directed, num_vertices, out, incoming, |_| true)
    }

    /// [`Graph::from_parts`] for arrays whose leaves are in byte codes ([`DeltaLeaf`], the
    /// unweighted layout of store format 1 and snapshot format 1): validated as such, then
    /// re-encoded in group varint.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first thing that does not hold.
    pub fn from_byte_coded_parts<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
    ) -> Result<Self> {
        let out = reencode::<DeltaLeaf, GroupLeaf, _>(out, |_| true)?;
        let incoming = incoming
            .map(|parts| reencode::<DeltaLeaf, GroupLeaf, _>(parts, |_| true))
            .transpose()?;
        Self::from_parts(directed, num_vertices, out, incoming)
    }
}

/// An edge array whose leaves are in codec `Old`, validated as such (each item passing
/// `item_ok`), as the parts of the same array in codec `New` with the same configuration.
fn reencode<Old, New, A>(parts: A, item_ok: impl Fn(Old::Item) -> bool + Sync) -> Result<PmaParts>
where
    Old: LeafCodec,
    New: LeafCodec<Item = Old::Item>,
    A: IntoPma,
{
    let old = parts.into_pma::<Old>(item_ok).map_err(|e| match e {
        RebuildError::Invalid(e) => Error::corrupt(format!("a byte-coded edge array: {e}")),
        RebuildError::Unreadable(e) => e,
    })?;
    let config = old.config().clone();
    let items: Vec<Old::Item> = old.iter().collect();
    drop(old);
    let new = Pma::<New>::from_sorted_with_config(&items, config)
        .map_err(|e| Error::corrupt(format!("re-encoding a byte-coded edge array: {e}")))?;
    Ok(new.into_parts())
}

/// Whether a stored weight is one a graph takes (finite).
fn finite_weight((_, bits): (u64, u64)) -> bool {
    f64::from_bits(bits).is_finite()
}

impl Graph<GroupMapLeaf> {
    /// Rebuilds a weighted graph from its edge arrays (see [`Graph::parts`]), validating
    /// them fully, weights included.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first thing that does not hold.
    pub fn from_weighted_parts<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
    ) -> Result<Self> {
        Self::from_parts_checked(directed, num_vertices, out, incoming, finite_weight)
    }

    /// [`Graph::from_weighted_parts`] for arrays whose leaves are in byte codes
    /// ([`DeltaMapLeaf`], the weighted layout before store format 6 and snapshot format 3):
    /// validated as such, then re-encoded in group varint.
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the first thing that does not hold.
    pub fn from_byte_coded_weighted_parts<A: IntoPma>(
        directed: bool,
        num_vertices: usize,
        out: A,
        incoming: Option<A>,
    ) -> Result<Self> {
        let out = reencode::<DeltaMapLeaf, GroupMapLeaf, _>(out, finite_weight)?;
        let incoming = incoming
            .map(|parts| reencode::<DeltaMapLeaf, GroupMapLeaf, _>(parts, finite_weight))
            .transpose()?;
        Self::from_weighted_parts(directed, num_vertices, out, incoming)
    }
}

impl<C: LeafCodec> Graph<C> {
    /// The graph with `ids` as its vertices' external ids.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] if `ids` does not name exactly the graph's vertices.
    pub fn with_ids(mut self, ids: IdMap) -> Result<Self> {
        if ids.len() != self.num_vertices {
            return Err(Error::invalid_reason(format!(
                "{} vertex ids for {} vertices",
                ids.len(),
                self.num_vertices
            )));
        }
        self.ids = ids;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphRead;

    /// The arrays of a directed graph on `n` vertices, whose edges leave vertex `n - 1`.
    fn directed_parts(n: usize) -> (PmaParts, PmaParts) {
        let last = (n - 1) as u32;
        let graph = Graph::from_edges(n, &[(0, 1), (last, 0), (last, 1)], true).unwrap();
        let (out, incoming) = graph.parts();
        (out.into_owned(), incoming.unwrap().into_owned())
    }

    #[test]
    fn arrays_rebuild_with_their_vertex_count() {
        let (out, incoming) = directed_parts(5);
        let graph = Graph::from_parts(true, 5, out, Some(incoming)).unwrap();
        assert_eq!(graph.num_edges(), 3);
        graph.check_invariants().unwrap();
    }

    #[test]
    fn a_source_past_the_vertex_count_is_refused() {
        // With 4 vertices the out-arcs of vertex 4 leave a vertex past the count (their
        // targets are valid), and so do the in-arcs of vertices 0 and 1 (their sources).
        let (out, incoming) = directed_parts(5);
        let err = Graph::from_parts(true, 4, out.clone(), Some(incoming.clone())).unwrap_err();
        assert!(
            err.to_string()
                .contains("an edge leaves vertex 4, past the 4 vertices"),
            "{err}"
        );
        // The in-arcs alone: their largest source is 1, below the count; their targets
        // (4) are not.
        let err = Graph::from_parts(true, 4, incoming.clone(), Some(incoming)).unwrap_err();
        assert!(err.to_string().contains("not valid here"), "{err}");
    }

    #[test]
    fn a_self_loop_is_refused() {
        let (mut out, incoming) = directed_parts(5);
        // The out-array's first key is (0, 1), the head of leaf 0; make it (1, 1).
        let j = out.used.iter().position(|&u| u > 0).unwrap();
        out.heads[j] = (1 << 32) | 1;
        let head = out.heads[j].to_le_bytes();
        let at = j * out.leaf_bytes;
        out.data[at..at + 8].copy_from_slice(&head);
        let err = Graph::from_parts(true, 5, out, Some(incoming)).unwrap_err();
        assert!(err.to_string().contains("not valid here"), "{err}");
    }
}
