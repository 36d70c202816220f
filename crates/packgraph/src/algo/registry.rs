//! The algorithm registry: every algorithm by name, with its parameters and their defaults,
//! run on any [`GraphRead`](crate::graph::GraphRead) (or on an [`AnyGraph`], the one place that dispatches on edge
//! weights), giving an [`AlgoOutput`]: a value per vertex and a few summary figures.
//!
//! Three algorithms read the vertex numbering itself: wcc and cdlp break ties towards the
//! smallest label, mis hashes vertex ids into priorities. [`Algorithm::run_any`] runs them in
//! the order of the external ids when the graph's internal order differs (after a
//! [`relabel`](crate::graph::Graph::relabel), or ids interned out of order), so that their
//! output in external ids does not depend on the layout; for a file's graph the two orders
//! agree and nothing extra is done.
//!
//! `packgraph run`, the benchmarks and the Python bindings all go through [`Algorithm`];
//! a new algorithm is added here once (a variant of [`AlgorithmKind`], its name, summary and
//! parameters, and one arm of [`Algorithm::run`]). The Graphalytics `id value` form of an
//! output is written by [`AlgoOutput::write_graphalytics`] (in `io`, which owns files).

use std::fmt;
use std::str::FromStr;

use std::sync::atomic::AtomicBool;

use super::bc::betweenness_interruptible;
use super::bfs::bfs_limited;
use super::kcore::kcore_interruptible;
use super::khop::khop_interruptible;
use super::lcc::lcc_interruptible;
use super::mis::mis_interruptible;
use super::sssp::sssp_interruptible;
use super::stop::check;
use super::triangles::triangles_per_vertex_interruptible;
use super::wcc::wcc_interruptible;
use super::{cdlp_interruptible, pagerank_interruptible, UNREACHED};
use crate::graph::{AnyGraph, VertexId, WeightedGraphRead};
use crate::layout::{by_external_id, ids_increase, Permutation};
use crate::{Error, Result};

/// The algorithms of the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AlgorithmKind {
    /// Breadth-first search: hops from the source.
    Bfs,
    /// PageRank (Graphalytics definition).
    Pagerank,
    /// Weakly connected components.
    Wcc,
    /// Community detection by label propagation.
    Cdlp,
    /// Local clustering coefficient.
    Lcc,
    /// Single-source shortest paths by edge weight.
    Sssp,
    /// Betweenness centrality contributions of one source (Brandes).
    Bc,
    /// Maximal independent set.
    Mis,
    /// Vertices within a hop limit of the source.
    Khop,
    /// Triangles through each vertex.
    Tc,
    /// Core number of each vertex.
    Kcore,
}

/// A parameter of an algorithm, for help texts and bindings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Param {
    /// Its name (`source`, `iterations`, `damping`, `hops`, `seed`).
    pub name: &'static str,
    /// Its default, as text.
    pub default: &'static str,
}

const fn param(name: &'static str, default: &'static str) -> Param {
    Param { name, default }
}

const SOURCE: Param = param("source", "the smallest vertex id");
const DAMPING: Param = param("damping", "0.85");
const HOPS: Param = param("hops", "2");
const SEED: Param = param("seed", "1");

impl AlgorithmKind {
    /// Every algorithm, in the order help texts list them.
    pub const ALL: [AlgorithmKind; 11] = [
        Self::Bfs,
        Self::Pagerank,
        Self::Wcc,
        Self::Cdlp,
        Self::Lcc,
        Self::Sssp,
        Self::Bc,
        Self::Mis,
        Self::Khop,
        Self::Tc,
        Self::Kcore,
    ];

    /// The algorithm's name on the command line and in bindings.
    pub fn name(self) -> &'static str {
        match self {
            Self::Bfs => "bfs",
            Self::Pagerank => "pagerank",
            Self::Wcc => "wcc",
            Self::Cdlp => "cdlp",
            Self::Lcc => "lcc",
            Self::Sssp => "sssp",
            Self::Bc => "bc",
            Self::Mis => "mis",
            Self::Khop => "khop",
            Self::Tc => "tc",
            Self::Kcore => "kcore",
        }
    }

    /// Its other names, accepted wherever [`name`](Self::name) is (the Python package's
    /// function names: `triangles`, `core_number`, `betweenness`).
    pub fn aliases(self) -> &'static [&'static str] {
        match self {
            Self::Tc => &["triangles"],
            Self::Kcore => &["core_number"],
            Self::Bc => &["betweenness"],
            _ => &[],
        }
    }

    /// The algorithm whose name or alias is nearest to `name` by edit distance, if one is
    /// near enough to be a likely typo (at most a third of the name's letters differ).
    pub fn suggest(name: &str) -> Option<&'static str> {
        let name = name.to_ascii_lowercase();
        Self::ALL
            .iter()
            .flat_map(|k| std::iter::once(k.name()).chain(k.aliases().iter().copied()))
            .map(|candidate| (edit_distance(&name, candidate), candidate))
            .filter(|&(d, candidate)| d <= candidate.len().max(name.len()).div_ceil(3))
            .min_by_key(|&(d, _)| d)
            .map(|(_, candidate)| candidate)
    }

    /// One line on what it computes and how its output reads.
    pub fn summary(self) -> &'static str {
        match self {
            Self::Bfs => {
                "breadth-first search: hops from the source (unreached: 9223372036854775807)"
            }
            Self::Pagerank => "PageRank (Graphalytics definition)",
            Self::Wcc => "weakly connected components: a component label per vertex",
            Self::Cdlp => "community detection by label propagation",
            Self::Lcc => "local clustering coefficient",
            Self::Sssp => "single-source shortest paths by edge weight (unreached: Infinity)",
            Self::Bc => "betweenness centrality contributions of the source (Brandes)",
            Self::Mis => "maximal independent set: 1 for members, 0 otherwise",
            Self::Khop => {
                "vertices within the hop limit of the source: the hop count, or 9223372036854775807"
            }
            Self::Tc => "triangles through each vertex",
            Self::Kcore => "core number of each vertex (k-core decomposition)",
        }
    }

    /// The parameters it reads.
    pub fn parameters(self) -> &'static [Param] {
        const PAGERANK: [Param; 2] = [
            Param {
                name: "iterations",
                default: "20",
            },
            DAMPING,
        ];
        const CDLP: [Param; 1] = [Param {
            name: "iterations",
            default: "10",
        }];
        match self {
            Self::Bfs | Self::Sssp | Self::Bc => &[SOURCE],
            Self::Pagerank => &PAGERANK,
            Self::Cdlp => &CDLP,
            Self::Mis => &[SEED],
            Self::Khop => &[SOURCE, HOPS],
            Self::Wcc | Self::Lcc | Self::Tc | Self::Kcore => &[],
        }
    }

    /// Whether it starts from a source vertex.
    pub fn needs_source(self) -> bool {
        self.parameters().contains(&SOURCE)
    }

    /// Whether its output depends on the vertex numbering beyond renaming the vertices:
    /// ties towards the smallest label (wcc, cdlp) or priorities hashed from ids (mis).
    pub fn reads_vertex_order(self) -> bool {
        matches!(self, Self::Wcc | Self::Cdlp | Self::Mis)
    }
}

impl fmt::Display for AlgorithmKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for AlgorithmKind {
    type Err = Error;

    /// The algorithm named `name` or one of its [aliases](Self::aliases)
    /// (case-insensitive); an unknown name's error suggests the nearest one.
    fn from_str(name: &str) -> Result<Self> {
        Self::ALL
            .into_iter()
            .find(|kind| {
                kind.name().eq_ignore_ascii_case(name)
                    || kind.aliases().iter().any(|a| a.eq_ignore_ascii_case(name))
            })
            .ok_or_else(|| {
                let names: Vec<String> = Self::ALL
                    .iter()
                    .map(|k| match k.aliases() {
                        [] => k.name().to_string(),
                        aliases => format!("{} ({})", k.name(), aliases.join(", ")),
                    })
                    .collect();
                let hint = Self::suggest(name)
                    .map(|s| format!("did you mean {s}? "))
                    .unwrap_or_default();
                Error::invalid(
                    name,
                    format!("unknown algorithm; {hint}one of: {}", names.join(", ")),
                )
            })
    }
}

/// Levenshtein distance between two ASCII names.
fn edit_distance(a: &str, b: &str) -> usize {
    let b = b.as_bytes();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, &x) in a.as_bytes().iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &y) in b.iter().enumerate() {
            let next = (diagonal + usize::from(x != y))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// An algorithm with its parameters: what to run.
///
/// # Examples
/// ```
/// use packgraph::algo::{Algorithm, Values};
/// use packgraph::graph::Graph;
///
/// let g = Graph::from_edges(4, &[(0, 1), (1, 2)], false).unwrap();
/// let mut bfs = Algorithm::from_name("bfs").unwrap();
/// bfs.source = 1;
/// let output = bfs.run(&g).unwrap();
/// assert!(matches!(&output.values, Values::Hops(h) if h[..3] == [1, 0, 1]));
/// assert!(Algorithm::from_name("dijkstra").is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Algorithm {
    /// Which algorithm.
    pub kind: AlgorithmKind,
    /// Source vertex (internal id) of bfs, sssp, bc and khop.
    pub source: VertexId,
    /// Iterations of pagerank and cdlp; `None` for their defaults (20 and 10).
    pub iterations: Option<usize>,
    /// PageRank's damping factor, in [0, 1].
    pub damping: f64,
    /// Hop limit of khop.
    pub hops: u32,
    /// Seed of mis.
    pub seed: u64,
}

impl Algorithm {
    /// `kind` with every parameter at its default.
    pub fn new(kind: AlgorithmKind) -> Self {
        Self {
            kind,
            source: 0,
            iterations: None,
            damping: 0.85,
            hops: 2,
            seed: 1,
        }
    }

    /// The algorithm named `name` with default parameters.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] listing the names for an unknown one.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(Self::new(name.parse()?))
    }

    /// Iterations of pagerank and cdlp, with their defaults applied.
    pub fn iterations(&self) -> usize {
        self.iterations.unwrap_or(match self.kind {
            AlgorithmKind::Cdlp => 10,
            _ => 20,
        })
    }

    /// Checks the parameters.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a damping factor outside [0, 1].
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.damping) {
            return Err(Error::invalid(self.damping, "damping must be in [0, 1]"));
        }
        Ok(())
    }

    /// Runs on `graph` (unweighted graphs have weight 1 on every edge).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for invalid parameters or a negative weight (sssp);
    /// [`Error::VertexNotFound`] for a source that is not a vertex.
    pub fn run<G: WeightedGraphRead>(&self, graph: &G) -> Result<AlgoOutput> {
        self.run_interruptible(graph, &AtomicBool::new(false))
    }

    /// [`run`](Self::run), ending early once another thread sets `stop`: every algorithm
    /// looks at it between its rounds (iterations, BFS frontiers, buckets, waves) and
    /// between blocks of vertices in its long passes, so it returns soon after.
    ///
    /// # Errors
    /// As [`run`](Self::run); [`Error::Cancelled`] when `stop` was set before the
    /// algorithm finished.
    pub fn run_interruptible<G: WeightedGraphRead>(
        &self,
        graph: &G,
        stop: &AtomicBool,
    ) -> Result<AlgoOutput> {
        self.validate()?;
        let output = match self.kind {
            AlgorithmKind::Bfs => {
                let depths = bfs_limited(graph, self.source, u32::MAX, stop)?.depths;
                let reached = reached(&depths);
                let depth = depths.iter().filter(|&&d| d != UNREACHED).max();
                AlgoOutput::new(Values::Hops(depths.clone()))
                    .with("source", Stat::Vertex(self.source))
                    .with("reached", Stat::Count(reached))
                    .with("depth", Stat::Count(u64::from(*depth.unwrap_or(&0))))
            }
            AlgorithmKind::Pagerank => {
                let iterations = self.iterations();
                let ranks = pagerank_interruptible(graph, self.damping, iterations, stop);
                AlgoOutput::new(Values::Reals(ranks))
                    .with("iterations", Stat::Count(iterations as u64))
                    .with("damping", Stat::Real(self.damping))
            }
            AlgorithmKind::Wcc => {
                let labels = wcc_interruptible(graph, stop)?;
                let components = distinct(&labels);
                AlgoOutput::new(Values::Labels(labels)).with("components", Stat::Count(components))
            }
            AlgorithmKind::Cdlp => {
                let iterations = self.iterations();
                let labels = cdlp_interruptible(graph, iterations, stop);
                let communities = distinct(&labels);
                AlgoOutput::new(Values::Labels(labels))
                    .with("iterations", Stat::Count(iterations as u64))
                    .with("communities", Stat::Count(communities))
            }
            AlgorithmKind::Lcc => {
                let values = lcc_interruptible(graph, stop)?;
                let mean = values.iter().sum::<f64>() / values.len().max(1) as f64;
                AlgoOutput::new(Values::Reals(values)).with("mean", Stat::Real(mean))
            }
            AlgorithmKind::Sssp => {
                let distances = sssp_interruptible(graph, self.source, stop)?;
                let reached = distances.iter().filter(|d| d.is_finite()).count() as u64;
                AlgoOutput::new(Values::Reals(distances))
                    .with("source", Stat::Vertex(self.source))
                    .with("reached", Stat::Count(reached))
            }
            AlgorithmKind::Bc => AlgoOutput::new(Values::Reals(betweenness_interruptible(
                graph,
                self.source,
                stop,
            )?))
            .with("source", Stat::Vertex(self.source)),
            AlgorithmKind::Mis => {
                let members: Vec<u64> = mis_interruptible(graph, self.seed, stop)?
                    .into_iter()
                    .map(u64::from)
                    .collect();
                let size = members.iter().sum();
                AlgoOutput::new(Values::Counts(members))
                    .with("size", Stat::Count(size))
                    .with("seed", Stat::Count(self.seed))
            }
            AlgorithmKind::Khop => {
                let hops = khop_interruptible(graph, self.source, self.hops, stop)?;
                let reached = reached(&hops);
                AlgoOutput::new(Values::Hops(hops))
                    .with("source", Stat::Vertex(self.source))
                    .with("hops", Stat::Count(u64::from(self.hops)))
                    .with("reached", Stat::Count(reached))
            }
            AlgorithmKind::Tc => {
                let counts = triangles_per_vertex_interruptible(graph, stop)?;
                let triangles = counts.iter().sum::<u64>() / 3;
                AlgoOutput::new(Values::Counts(counts)).with("triangles", Stat::Count(triangles))
            }
            AlgorithmKind::Kcore => {
                let cores: Vec<u64> = kcore_interruptible(graph, stop)?
                    .into_iter()
                    .map(u64::from)
                    .collect();
                let max = cores.iter().max().copied().unwrap_or(0);
                AlgoOutput::new(Values::Counts(cores)).with("max_core", Stat::Count(max))
            }
        };
        // PageRank and CDLP end early with the iterations done: not a result either.
        check(stop)?;
        Ok(output)
    }

    /// Runs on a graph with or without edge weights. An algorithm that reads the vertex
    /// order ([`AlgorithmKind::reads_vertex_order`]) runs on the graph renumbered in
    /// external id order when its internal order differs, and its output is mapped back,
    /// so that in external ids it is the same for every layout.
    ///
    /// # Errors
    /// As [`Algorithm::run`].
    pub fn run_any(&self, graph: &AnyGraph) -> Result<AlgoOutput> {
        self.run_any_interruptible(graph, &AtomicBool::new(false))
    }

    /// [`Algorithm::run_any`], ending early once another thread sets `stop` (as
    /// [`Algorithm::run_interruptible`]).
    ///
    /// # Errors
    /// As [`Algorithm::run_interruptible`].
    pub fn run_any_interruptible(&self, graph: &AnyGraph, stop: &AtomicBool) -> Result<AlgoOutput> {
        if self.kind.reads_vertex_order() && !ids_increase(graph.ids()) {
            let ranks = Permutation::from_order(by_external_id(graph.ids()))?;
            check(stop)?;
            let output = self.run_numbered(&graph.relabel(&ranks)?, stop)?;
            return Ok(AlgoOutput {
                values: output.values.renumbered(&ranks),
                summary: output.summary,
            });
        }
        self.run_numbered(graph, stop)
    }

    /// [`Algorithm::run_interruptible`] on either kind of graph, in its own numbering.
    fn run_numbered(&self, graph: &AnyGraph, stop: &AtomicBool) -> Result<AlgoOutput> {
        match graph {
            AnyGraph::Unweighted(g) => self.run_interruptible(g, stop),
            AnyGraph::Weighted(g) => self.run_interruptible(g, stop),
        }
    }
}

fn reached(hops: &[u32]) -> u64 {
    hops.iter().filter(|&&d| d != UNREACHED).count() as u64
}

fn distinct(labels: &[VertexId]) -> u64 {
    let mut sorted = labels.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len() as u64
}

/// The per-vertex values of an algorithm, indexed by internal vertex id.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// Hop counts; [`UNREACHED`] for a vertex not reached.
    Hops(Vec<u32>),
    /// Real numbers; `f64::INFINITY` for a vertex not reached.
    Reals(Vec<f64>),
    /// Labels that are vertices (written as the label vertex's external id).
    Labels(Vec<VertexId>),
    /// Counts and flags.
    Counts(Vec<u64>),
}

impl Values {
    /// Number of vertices with a value.
    pub fn len(&self) -> usize {
        match self {
            Self::Hops(v) => v.len(),
            Self::Reals(v) => v.len(),
            Self::Labels(v) => v.len(),
            Self::Counts(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values computed on a graph renumbered by `perm`, given back to the vertices of the
    /// graph before: vertex `v` takes the value of `perm.new_id(v)`, and a label names the
    /// vertex it named before.
    fn renumbered(self, perm: &Permutation) -> Self {
        fn back<T: Copy>(values: &[T], perm: &Permutation) -> Vec<T> {
            perm.new_ids().iter().map(|&v| values[v as usize]).collect()
        }
        match self {
            Self::Hops(v) => Self::Hops(back(&v, perm)),
            Self::Reals(v) => Self::Reals(back(&v, perm)),
            Self::Counts(v) => Self::Counts(back(&v, perm)),
            Self::Labels(v) => {
                Self::Labels(back(&v, perm).into_iter().map(|l| perm.old_id(l)).collect())
            }
        }
    }
}

/// A summary figure of an output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stat {
    /// A count.
    Count(u64),
    /// A real number.
    Real(f64),
    /// A vertex (internal id; reported by its external id).
    Vertex(VertexId),
}

/// What an algorithm computed: a value per vertex and named summary figures.
#[derive(Debug, Clone, PartialEq)]
pub struct AlgoOutput {
    /// The value of each vertex.
    pub values: Values,
    /// Summary figures, in a fixed order per algorithm.
    pub summary: Vec<(&'static str, Stat)>,
}

impl AlgoOutput {
    fn new(values: Values) -> Self {
        Self {
            values,
            summary: Vec::new(),
        }
    }

    fn with(mut self, name: &'static str, stat: Stat) -> Self {
        self.summary.push((name, stat));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{CsrGraph, Graph};

    #[test]
    fn aliases_parse_and_typos_get_a_suggestion() {
        assert_eq!(
            "triangles".parse::<AlgorithmKind>().unwrap(),
            AlgorithmKind::Tc
        );
        assert_eq!(
            "Core_Number".parse::<AlgorithmKind>().unwrap(),
            AlgorithmKind::Kcore
        );
        assert_eq!(
            "betweenness".parse::<AlgorithmKind>().unwrap(),
            AlgorithmKind::Bc
        );
        assert_eq!(AlgorithmKind::suggest("pagernk"), Some("pagerank"));
        assert_eq!(AlgorithmKind::suggest("triangle"), Some("triangles"));
        assert_eq!(AlgorithmKind::suggest("dijkstra"), None);
        let error = "pagernk".parse::<AlgorithmKind>().unwrap_err().to_string();
        assert!(error.contains("did you mean pagerank?"), "{error}");
        assert!(error.contains("tc (triangles)"), "{error}");
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "bfs"), 3);
    }

    #[test]
    fn names_parse_back_and_unknown_names_list_the_choices() {
        for kind in AlgorithmKind::ALL {
            assert_eq!(kind.name().parse::<AlgorithmKind>().unwrap(), kind);
            assert_eq!(
                kind.to_string()
                    .to_uppercase()
                    .parse::<AlgorithmKind>()
                    .unwrap(),
                kind
            );
        }
        let error = "dfs".parse::<AlgorithmKind>().unwrap_err();
        assert!(
            error.to_string().contains("one of: bfs, pagerank"),
            "{error}"
        );
    }

    #[test]
    fn every_algorithm_runs_alike_on_the_dynamic_graph_and_the_csr() {
        let edges = [(0, 1), (1, 2), (2, 0), (2, 3), (4, 5)];
        let graph = Graph::from_edges(6, &edges, false).unwrap();
        let csr = CsrGraph::from_edges(6, &edges, false);
        for kind in AlgorithmKind::ALL {
            let mut algorithm = Algorithm::new(kind);
            algorithm.source = 2;
            let (a, b) = (algorithm.run(&graph).unwrap(), algorithm.run(&csr).unwrap());
            assert_eq!(a, b, "{kind}");
            assert_eq!(a.values.len(), 6, "{kind}");
        }
    }

    #[test]
    fn parameters_are_checked() {
        let graph = Graph::from_edges(2, &[(0, 1)], false).unwrap();
        let mut pr = Algorithm::new(AlgorithmKind::Pagerank);
        pr.damping = 1.5;
        assert!(matches!(pr.run(&graph), Err(Error::InvalidInput { .. })));
        let mut bfs = Algorithm::new(AlgorithmKind::Bfs);
        bfs.source = 9;
        assert!(matches!(bfs.run(&graph), Err(Error::VertexNotFound { .. })));
        assert_eq!(Algorithm::new(AlgorithmKind::Cdlp).iterations(), 10);
        assert!(AlgorithmKind::Khop.needs_source() && !AlgorithmKind::Wcc.needs_source());
    }
}
