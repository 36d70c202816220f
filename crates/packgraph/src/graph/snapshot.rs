//! Versions of a graph: cheap, immutable snapshots that readers keep while the single writer
//! goes on (Aspen, section 5.2; PART, sections 3.2–3.4).
//!
//! A [`Snapshot`] holds a clone of the graph whose edge arrays share every page with the
//! writer ([`Pma`]'s `Clone`): taking one copies no edge data, only bumps a reference count.
//! The writer's next batch copies the page table (one pointer per page) and each page it
//! writes that a snapshot still holds, once; pages no snapshot holds are written in place.
//! A batch is applied to the writer's own arrays, so a snapshot sees it entirely (taken after)
//! or not at all (taken before). Dropping the last handle on a version frees the pages only it
//! held.
//!
//! [`SharedGraph`] (`shared.rs`) packages the pattern for many threads.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use super::{EdgeLeaf, Graph, GraphRead, VertexId, WeightedGraphRead};
use crate::pma::{GroupLeaf, LeafCodec, PageStats, Pma};

/// An immutable version of a [`Graph`]: `Send + Sync + Clone`, readable with every algorithm,
/// unchanged however long it is held and however the writer goes on.
///
/// Dereferences to the [`Graph`] as of its version for the read-only methods.
///
/// # Examples
/// ```
/// use packgraph::graph::{Graph, GraphRead};
/// use packgraph::algo;
///
/// let mut g = Graph::from_edges(4, &[(0, 1), (1, 2)], false).unwrap();
/// let before = g.snapshot();
/// g.insert_edges(&[(2, 3)]).unwrap();
/// g.delete_edges(&[(0, 1)]).unwrap();
/// assert_eq!(before.version() + 2, g.version());
/// assert_eq!((before.num_edges(), before.num_arcs()), (2, 4)); // each edge both ways
/// assert!(before.has_edge(0, 1) && !before.has_edge(2, 3));
/// let tree = algo::bfs(&before, 0).unwrap();
/// assert_eq!(tree.depths[2], 2);
/// ```
pub struct Snapshot<C: LeafCodec = GroupLeaf> {
    pub(super) graph: Arc<Graph<C>>,
}

impl<C: LeafCodec> Clone for Snapshot<C> {
    fn clone(&self) -> Self {
        Self {
            graph: Arc::clone(&self.graph),
        }
    }
}

impl<C: LeafCodec> std::fmt::Debug for Snapshot<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Snapshot")
            .field("version", &self.graph.version)
            .field("num_vertices", &self.graph.num_vertices)
            .field("num_arcs", &self.graph.out.len())
            .finish()
    }
}

impl<C: LeafCodec> Deref for Snapshot<C> {
    type Target = Graph<C>;

    fn deref(&self) -> &Graph<C> {
        &self.graph
    }
}

impl<C: LeafCodec> Snapshot<C> {
    /// The version number: how many batches the writer had applied when it was taken.
    pub fn version(&self) -> u64 {
        self.graph.version
    }

    /// Whether two handles are the same version (the same memory).
    pub fn same_version(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.graph, &other.graph)
    }

    /// The version as a graph of its own, to save with [`io::save`](crate::io::save) or to
    /// go on writing from. O(1): shares every page (the writer copies a page before it
    /// changes one another version holds).
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead};
    ///
    /// let mut g = Graph::from_edges(3, &[(0, 1)], false).unwrap();
    /// let before = g.snapshot();
    /// g.insert_edges(&[(1, 2)]).unwrap();
    /// let mut copy = before.to_graph();
    /// assert_eq!(copy.num_edges(), 1);
    /// copy.insert_edges(&[(0, 2)]).unwrap();
    /// assert!(!before.has_edge(0, 2) && !g.has_edge(0, 2));
    /// ```
    pub fn to_graph(&self) -> Graph<C> {
        self.graph.version_copy()
    }
}

/// How a graph version's pages are shared: the out-array's and the in-array's
/// [`PageStats`] added up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct VersionStats {
    /// Pages in the version.
    pub pages: usize,
    /// Of those, pages another version also holds.
    pub shared: usize,
    /// Pages the writer copied since it was created because a version shared them.
    pub copied: usize,
    /// Bytes of those pages.
    pub copied_bytes: usize,
}

impl VersionStats {
    fn add(&mut self, stats: PageStats) {
        self.pages += stats.pages;
        self.shared += stats.shared;
        self.copied += stats.copied;
        self.copied_bytes += stats.copied * stats.page_bytes;
    }
}

impl<C: LeafCodec> Graph<C> {
    /// How many updates have been applied (each [`Graph::apply`] is one version).
    pub fn version(&self) -> u64 {
        self.version
    }

    /// An immutable snapshot of the graph as it is now. O(1): shares every page and the flat
    /// vertex index if it was built; copies no edge data.
    pub fn snapshot(&self) -> Snapshot<C> {
        Snapshot {
            graph: Arc::new(self.version_copy()),
        }
    }

    /// A graph of its own holding this version: shares every page and the flat index.
    pub(super) fn version_copy(&self) -> Graph<C> {
        let index = OnceLock::new();
        if let Some(built) = self.index.get() {
            let _ = index.set(Arc::clone(built));
        }
        Graph {
            directed: self.directed,
            num_vertices: self.num_vertices,
            out: self.out.clone(),
            incoming: self.incoming.clone(),
            index,
            version: self.version,
            ids: self.ids.clone(),
            properties: self.properties.clone(),
        }
    }

    /// How this version's pages are shared with snapshots, and how many the writer copied.
    pub fn version_stats(&self) -> VersionStats {
        let mut stats = VersionStats::default();
        stats.add(self.out.page_stats());
        if let Some(incoming) = &self.incoming {
            stats.add(incoming.page_stats());
        }
        stats
    }

    /// Sets the version number (a graph loaded from a checkpoint takes the saved one).
    pub(crate) fn set_version(&mut self, version: u64) {
        self.version = version;
    }

    /// The out-edge array (for page-level inspection in tests and benchmarks).
    pub fn out_array(&self) -> &Pma<C> {
        &self.out
    }
}

impl<C: LeafCodec> GraphRead for Snapshot<C> {
    fn num_vertices(&self) -> usize {
        self.graph.num_vertices()
    }

    fn num_arcs(&self) -> usize {
        self.graph.num_arcs()
    }

    fn is_directed(&self) -> bool {
        self.graph.is_directed()
    }

    fn out_degree(&self, v: VertexId) -> usize {
        self.graph.out_degree(v)
    }

    fn in_degree(&self, v: VertexId) -> usize {
        self.graph.in_degree(v)
    }

    fn for_each_out_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        self.graph.for_each_out_neighbor(v, f)
    }

    fn for_each_in_neighbor(&self, v: VertexId, f: impl FnMut(VertexId) -> bool) -> bool {
        self.graph.for_each_in_neighbor(v, f)
    }

    #[inline]
    fn prefetch_in_neighbors(&self, v: VertexId) {
        self.graph.prefetch_in_neighbors(v);
    }

    fn for_each_in_neighbor_of_word(
        &self,
        base: VertexId,
        vertices: u64,
        f: impl FnMut(VertexId, VertexId) -> bool,
    ) {
        self.graph.for_each_in_neighbor_of_word(base, vertices, f);
    }

    const OUT_PREFETCH_STAGES: usize = <Graph<C> as GraphRead>::OUT_PREFETCH_STAGES;

    #[inline]
    fn prefetch_out(&self, v: VertexId, stage: usize) {
        self.graph.prefetch_out(v, stage);
    }

    fn for_each_out_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        f: impl FnMut(VertexId, VertexId),
    ) {
        self.graph.for_each_out_arc_in(vertices, f);
    }

    fn for_each_in_arc_in(
        &self,
        vertices: std::ops::Range<VertexId>,
        f: impl FnMut(VertexId, VertexId),
    ) {
        self.graph.for_each_in_arc_in(vertices, f);
    }

    fn out_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.graph.out_arcs_in(vertices, scratch)
    }

    fn in_arcs_in<'a>(
        &'a self,
        vertices: std::ops::Range<VertexId>,
        scratch: &'a mut Vec<VertexId>,
    ) -> &'a [VertexId] {
        self.graph.in_arcs_in(vertices, scratch)
    }
}

impl<C: EdgeLeaf> WeightedGraphRead for Snapshot<C> {
    const DECODES: bool = true;

    fn for_each_out_edge(&self, v: VertexId, f: impl FnMut(VertexId, f64) -> bool) -> bool {
        self.graph.for_each_out_edge(v, f)
    }
}
