//! A graph put together from arrays another module of the crate built in full (the
//! relabeling in `layout`): no checks beyond debug assertions, since the caller built every
//! part from a valid graph in this process.

use std::sync::OnceLock;

use super::{Graph, IdMap, Properties};
use crate::pma::{LeafCodec, Pma};

impl<C: LeafCodec> Graph<C> {
    /// The graph of these parts, at version `version`. The caller guarantees what
    /// [`Graph::check_invariants`] checks: `incoming` is present exactly when `directed` and
    /// holds every arc of `out` reversed, every endpoint is below `num_vertices`, and `ids`
    /// and `properties` name only those vertices.
    pub(crate) fn assemble(
        directed: bool,
        num_vertices: usize,
        (out, incoming): (Pma<C>, Option<Pma<C>>),
        ids: IdMap,
        properties: Properties,
        version: u64,
    ) -> Self {
        debug_assert_eq!(incoming.is_some(), directed);
        debug_assert_eq!(ids.len(), num_vertices);
        Self {
            directed,
            num_vertices,
            out,
            incoming,
            index: OnceLock::new(),
            version,
            ids,
            properties,
        }
    }
}
