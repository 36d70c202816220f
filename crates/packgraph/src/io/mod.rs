//! Getting graphs in and out: file readers and writers, and generators.
//!
//! Formats ([`Format`]):
//! * edge lists and SNAP text files ([`edgelist`]), optionally gzip-compressed (detected by
//!   content);
//! * Matrix Market coordinate files ([`mtx`]);
//! * LDBC Graphalytics `.v`/`.e` datasets and its `id value` output ([`graphalytics`]);
//! * packgraph snapshots ([`binary`]): the in-memory arrays with a checksum;
//! * update batches as text, `+ SRC DST [WEIGHT]` / `- SRC DST` / `commit` lines
//!   ([`updates`]).
//!
//! Text readers parse blocks of the file on all threads. Files name vertices by arbitrary
//! `u64` ids; a loaded [`Dataset`] holds the graph over dense ids `0..n`, and the graph
//! carries the [`IdMap`] back to the file's ids (versioned with it, see
//! [`Graph::snapshot`](crate::graph::Graph::snapshot)). Every error names the file, and for text the line and the value.
//!
//! ```
//! use packgraph::io::{load, LoadOptions};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let path = dir.path().join("g.txt");
//! std::fs::write(&path, "# a triangle and a tail\n10 20\n20 30\n30 10\n30 99\n").unwrap();
//! let data = load(&path, &LoadOptions::default()).unwrap();
//! assert_eq!(data.graph.num_vertices(), 4);
//! assert_eq!(data.graph.num_edges(), 4);
//! assert_eq!(data.ids().internal(99), Some(3));
//!
//! std::fs::write(&path, "10 20\n20 x\n").unwrap();
//! let error = load(&path, &LoadOptions::default()).unwrap_err();
//! assert!(error.to_string().ends_with("g.txt:2: vertex id is not a non-negative integer: `x`"));
//! ```

pub mod binary;
mod count;
pub mod edgelist;
mod error;
pub mod generate;
pub mod graphalytics;
pub mod mtx;
mod text;
pub mod updates;

use std::io::{BufWriter, Write};
use std::path::Path;

use crate::graph::ids::IdMapError;
use crate::graph::{AnyGraph, Graph, Update, VertexId, WeightedGraph};
use crate::{Error, Result};

pub use self::count::{parse_count, thread_count, CountError};
pub use self::error::LineError;
pub use self::text::Progress;
pub use crate::graph::{name_problem, ExternalId, IdKind, IdMap, IntIds, MAX_VERTICES};

/// A graph file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `u v [weight]` lines (SNAP text files included).
    EdgeList,
    /// Matrix Market coordinate.
    MatrixMarket,
    /// LDBC Graphalytics `.v` + `.e`.
    Graphalytics,
    /// packgraph snapshot.
    Binary,
}

impl Format {
    /// Every format, with its name on the command line.
    pub const ALL: [(Format, &'static str); 4] = [
        (Format::EdgeList, "edgelist"),
        (Format::MatrixMarket, "mtx"),
        (Format::Graphalytics, "graphalytics"),
        (Format::Binary, "binary"),
    ];

    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(f, _)| *f == self)
            .map_or("?", |(_, n)| n)
    }

    /// The format named `name` (as [`Format::name`] gives it).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.iter().find(|(_, n)| *n == name).map(|(f, _)| *f)
    }

    /// The format of the file(s) `path` names: a Graphalytics pair if `path` is (the prefix
    /// of) an existing `.v`/`.e` pair, else by the first bytes (snapshot magic, Matrix Market
    /// banner, after gzip decompression), else an edge list.
    ///
    /// # Errors
    /// [`Error`] if the file cannot be opened.
    pub fn detect(path: &Path) -> Result<Self> {
        if graphalytics::Files::find(path).is_some() {
            return Ok(Self::Graphalytics);
        }
        let head = text::open(path)?.head(path, 16)?;
        Ok(if binary::sniff(&head) {
            Self::Binary
        } else if mtx::sniff(&head) {
            Self::MatrixMarket
        } else {
            Self::EdgeList
        })
    }

    /// The format to write for an output path: `.v`, `.e` or `.properties` → Graphalytics,
    /// `.pgb` → snapshot, anything else → edge list.
    pub fn for_output(path: &Path) -> Self {
        match path.extension().and_then(|e| e.to_str()) {
            Some("v" | "e" | "properties") => Self::Graphalytics,
            Some("pgb") => Self::Binary,
            _ => Self::EdgeList,
        }
    }
}

/// How to read a file.
#[derive(Clone, Default)]
pub struct LoadOptions {
    /// The format; detected when `None`.
    pub format: Option<Format>,
    /// Whether edges are directed. `None`: edge lists and Graphalytics datasets without a
    /// properties file are undirected, Matrix Market files follow their symmetry, snapshots
    /// say themselves.
    pub directed: Option<bool>,
    /// Called with the file bytes consumed so far.
    pub progress: Option<Progress>,
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("format", &self.format)
            .field("directed", &self.directed)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

/// A graph read from a file; the graph carries the file's vertex ids ([`Dataset::ids`]).
#[derive(Debug)]
pub struct Dataset {
    /// The graph over dense vertex ids.
    pub graph: AnyGraph,
    /// Self-loops in the file, which the graph does not store.
    pub self_loops: usize,
}

impl Dataset {
    /// Dense ids to the file's ids and back (the graph's own dictionary).
    pub fn ids(&self) -> &IdMap {
        self.graph.ids()
    }

    /// A dataset over vertices `0..num_vertices` (grown to cover every endpoint) whose ids
    /// are their own, with `weights[i]` on `edges[i]` when given.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for a NaN or infinite weight, or weights and edges of
    /// different lengths.
    pub fn from_edges(
        num_vertices: usize,
        edges: &[(VertexId, VertexId)],
        weights: Option<&[f64]>,
        directed: bool,
    ) -> Result<Self> {
        Self::build(
            None,
            num_vertices,
            edges.to_vec(),
            weights.map(<[f64]>::to_vec),
            directed,
        )
    }

    /// A dataset of edges between arbitrary `u64` external ids, numbered by rank as the
    /// file readers number them (the smallest id is vertex 0), with `weights[i]` on
    /// `edges[i]` when given.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for more than 2^32 − 1 distinct ids, a NaN or infinite
    /// weight, or weights and edges of different lengths.
    ///
    /// # Examples
    /// ```
    /// use packgraph::io::Dataset;
    ///
    /// let data = Dataset::from_external_edges(&[(10, 7), (7, 500)], None, false).unwrap();
    /// assert_eq!(data.graph.num_edges(), 2);
    /// assert_eq!(data.ids().internal(7), Some(0));
    /// assert_eq!(data.ids().external(2), 500);
    /// ```
    pub fn from_external_edges(
        edges: &[(u64, u64)],
        weights: Option<Vec<f64>>,
        directed: bool,
    ) -> Result<Self> {
        let (ids, edges) = IdMap::from_endpoints(edges).map_err(|e| match e {
            IdMapError::TooMany(n) => Error::invalid_reason(format!(
                "{n} distinct vertices: more than the 2^32-1 supported"
            )),
            IdMapError::Duplicate(id) => Error::invalid_reason(format!("vertex {id} repeated")),
        })?;
        let n = ids.len();
        Self::build(Some(ids), n, edges, weights, directed)
    }

    /// The one edge list → graph builder: a graph over at least `num_vertices` vertices
    /// with `edges` (weighted if `weights` is given) applied as one [`Update`], then given
    /// the external ids `ids` (if any; they must name exactly the vertices).
    pub(crate) fn build(
        ids: Option<IdMap>,
        num_vertices: usize,
        edges: Vec<(VertexId, VertexId)>,
        weights: Option<Vec<f64>>,
        directed: bool,
    ) -> Result<Self> {
        let mut update = match weights {
            None => Update::from_edges(edges),
            Some(weights) if weights.len() == edges.len() => {
                Update::from_weighted_edges(edges, weights)
            }
            Some(weights) => {
                return Err(Error::invalid_reason(format!(
                    "{} weights for {} edges",
                    weights.len(),
                    edges.len()
                )))
            }
        };
        update.min_vertices(num_vertices);
        let (graph, applied) = if update.weights().is_some() {
            let mut graph = WeightedGraph::new_weighted(directed);
            let applied = graph.apply(&update)?;
            (AnyGraph::Weighted(graph), applied)
        } else {
            let mut graph = Graph::new(directed);
            let applied = graph.apply(&update)?;
            (AnyGraph::Unweighted(graph), applied)
        };
        let graph = match ids {
            Some(ids) => graph.with_ids(ids)?,
            None => graph,
        };
        Ok(Self {
            graph,
            self_loops: applied.self_loops,
        })
    }
}

/// Reads a graph file.
///
/// # Errors
/// [`Error`] naming the file (and line and value for text) for anything unreadable or
/// malformed; nothing is returned partially.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Dataset> {
    let format = match options.format {
        Some(format) => format,
        None => Format::detect(path)?,
    };
    let progress = options.progress.as_ref();
    match format {
        Format::EdgeList => edgelist::read(path, options.directed.unwrap_or(false), progress),
        Format::MatrixMarket => mtx::read(path, options.directed, progress),
        Format::Graphalytics => {
            let files = graphalytics::Files::find(path).ok_or_else(|| {
                Error::unsupported_file(
                    path,
                    "a Graphalytics dataset needs both NAME.v and NAME.e beside each other",
                )
            })?;
            graphalytics::read(&files, options.directed, progress)
        }
        Format::Binary => {
            let data = binary::read(path)?;
            if options
                .directed
                .is_some_and(|d| d != data.graph.is_directed())
            {
                return Err(Error::unsupported_file(
                    path,
                    format!(
                        "the snapshot holds a {} graph",
                        if data.graph.is_directed() {
                            "directed"
                        } else {
                            "undirected"
                        }
                    ),
                ));
            }
            Ok(data)
        }
    }
}

/// Writes a graph file in `format`. For Graphalytics, `path` may name the `.v` or `.e` file
/// or the prefix; the `.v`, `.e` and `.properties` files are written.
///
/// Named vertices: a snapshot keeps their names; an edge list writes each name as its word
/// (a name that is no single word of text, see [`name_problem`], is an error; edge lists
/// with names are for reading by other tools, [`load`] reads integer ids); Graphalytics
/// datasets hold integers only.
///
/// # Errors
/// [`Error`] if a file cannot be written, for Matrix Market, which is read-only, or for a
/// graph with named vertices in a format that cannot hold them; nothing is written then.
pub fn save(dataset: &Dataset, path: &Path, format: Format) -> Result<()> {
    if format == Format::EdgeList {
        // Checked before the file is created, so that a refusal leaves nothing behind.
        edgelist::Tokens::of(dataset.ids())
            .map_err(|e| Error::unsupported_file(path, e.to_string()))?;
    }
    match format {
        Format::EdgeList if dataset.graph.num_edges() == 0 => Err(Error::unsupported_file(
            path,
            "an edge list cannot hold a graph without edges (it would read back as an empty file); write Graphalytics or a snapshot (.pgb)",
        )),
        Format::EdgeList => write_file(path, |out| edgelist::write(dataset, out)),
        Format::Graphalytics => {
            let text = path.to_string_lossy();
            let prefix = text
                .strip_suffix(".v")
                .or_else(|| text.strip_suffix(".e"))
                .or_else(|| text.strip_suffix(".properties"))
                .unwrap_or(&text);
            graphalytics::write(dataset, Path::new(prefix)).map(|_| ())
        }
        Format::Binary => binary::write(dataset, path),
        Format::MatrixMarket => Err(Error::unsupported_file(
            path,
            "writing Matrix Market is not supported; write an edge list, Graphalytics or a snapshot (.pgb)",
        )),
    }
}

/// Creates `path` and writes it through a buffer; any failure names the file.
pub(crate) fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let os = |e| Error::io(path, e);
    let file = std::fs::File::create(path).map_err(os)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    write(&mut out).map_err(os)?;
    out.flush().map_err(os)
}

/// Builds the graph of parsed edges (dense ids), weighted if a weight column was present;
/// errors name the file.
pub(crate) fn build(
    path: &Path,
    ids: IdMap,
    edges: Vec<(VertexId, VertexId)>,
    weights: Option<Vec<f64>>,
    directed: bool,
) -> Result<Dataset> {
    let n = ids.len();
    Dataset::build(Some(ids), n, edges, weights, directed).map_err(|e| e.in_file(path))
}
