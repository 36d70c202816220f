//! [`Version`]: one version of a graph, with or without edge weights, as every class that
//! reads a graph (`Graph`, `Snapshot`, `Store`) hands it to the read methods and the
//! algorithms; and [`on_version!`], which runs code on it whatever its edge kind.

use packgraph::graph::{
    AnyGraph, GraphRead, IdMap, Snapshot as CoreSnapshot, VertexId, WeightedGraphRead,
};
use packgraph::pma::{GroupLeaf, GroupMapLeaf};

/// One version, with or without edge weights.
#[derive(Clone)]
pub(crate) enum Version {
    Plain(CoreSnapshot<GroupLeaf>),
    Weighted(CoreSnapshot<GroupMapLeaf>),
}

/// Runs `$body` with `$g` bound to the version's snapshot, whatever its edge kind.
macro_rules! on_version {
    ($version:expr, $g:ident => $body:expr) => {
        match $version {
            $crate::version::Version::Plain($g) => $body,
            $crate::version::Version::Weighted($g) => $body,
        }
    };
}
pub(crate) use on_version;

impl Version {
    /// The version of `graph` as it is now (O(1)).
    pub(crate) fn of(graph: &AnyGraph) -> Self {
        match graph {
            AnyGraph::Unweighted(g) => Self::Plain(g.snapshot()),
            AnyGraph::Weighted(g) => Self::Weighted(g.snapshot()),
        }
    }

    pub(crate) fn ids(&self) -> &IdMap {
        on_version!(self, g => g.ids())
    }

    pub(crate) fn is_weighted(&self) -> bool {
        matches!(self, Self::Weighted(_))
    }

    /// Every stored arc `(u, v, weight)` in internal ids; with `once`, an undirected
    /// edge only as `u <= v`.
    pub(crate) fn arcs(&self, once: bool) -> (Vec<VertexId>, Vec<VertexId>, Vec<f64>) {
        on_version!(self, g => collect_arcs(&**g, once && !g.is_directed()))
    }

    /// The version as an owned graph (O(1)), for the writers of `io`.
    pub(crate) fn to_any(&self) -> AnyGraph {
        match self {
            Self::Plain(g) => AnyGraph::Unweighted(g.to_graph()),
            Self::Weighted(g) => AnyGraph::Weighted(g.to_graph()),
        }
    }
}

fn collect_arcs<G: WeightedGraphRead>(
    graph: &G,
    once: bool,
) -> (Vec<VertexId>, Vec<VertexId>, Vec<f64>) {
    let (mut src, mut dst, mut weights) = (Vec::new(), Vec::new(), Vec::new());
    for u in 0..graph.num_vertices() as VertexId {
        graph.for_each_out_edge(u, |v, w| {
            if !once || u <= v {
                src.push(u);
                dst.push(v);
                weights.push(w);
            }
            true
        });
    }
    (src, dst, weights)
}
