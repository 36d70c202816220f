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
use crate::graph::{AnyGraph, Graph, Packing, Update, VertexId, WeightedGraph};
use crate::{Error, Result};

pub use self::count::{parse_count, thread_count, CountError};
pub use self::error::LineError;
pub use self::text::{parse_id, parse_weight, Progress};
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
    /// `.pgb` → snapshot, `.mtx` → Matrix Market, anything else → edge list. Prefer
    /// [`Format::from_extension`], which refuses what it does not know.
    pub fn for_output(path: &Path) -> Self {
        Self::from_extension(path).unwrap_or(Self::EdgeList)
    }

    /// The format an output path's extension names ([`Format::OUTPUT_EXTENSIONS`]), `None`
    /// for an extension that names none (or no extension).
    ///
    /// # Examples
    /// ```
    /// use std::path::Path;
    /// use packgraph::io::Format;
    ///
    /// assert_eq!(Format::from_extension(Path::new("g.mtx")), Some(Format::MatrixMarket));
    /// assert_eq!(Format::from_extension(Path::new("g.txt")), Some(Format::EdgeList));
    /// assert_eq!(Format::from_extension(Path::new("g.xlsx")), None);
    /// ```
    pub fn from_extension(path: &Path) -> Option<Self> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        Self::OUTPUT_EXTENSIONS
            .iter()
            .find(|(e, _)| *e == extension)
            .map(|&(_, f)| f)
    }

    /// The output extensions [`Format::from_extension`] knows, with their formats.
    pub const OUTPUT_EXTENSIONS: [(&'static str, Format); 9] = [
        ("txt", Format::EdgeList),
        ("el", Format::EdgeList),
        ("edges", Format::EdgeList),
        ("edgelist", Format::EdgeList),
        ("mtx", Format::MatrixMarket),
        ("v", Format::Graphalytics),
        ("e", Format::Graphalytics),
        ("properties", Format::Graphalytics),
        ("pgb", Format::Binary),
    ];
}

/// How to read text edge lists beyond what is detected: a header line and a delimiter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Whether the first data line is a header (`source,target`) to skip: `None` detects it
    /// (a first line none of whose fields is a number is a header).
    pub header: Option<bool>,
    /// A field separator besides blanks and commas (which always separate), such as `;` or
    /// `|`: `None` detects `;` or `|` from the first data line.
    pub delimiter: Option<u8>,
}

/// What a read found besides the graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Pairs of opposite arcs (`u v` and `v u`, `u != v`) in the file that an undirected
    /// read merged into one edge each; 0 for a directed read.
    pub reciprocal_pairs: usize,
    /// The header line an edge list's reader skipped, if any.
    pub header: Option<String>,
    /// The separator besides blanks and commas that the reader used, if any.
    pub delimiter: Option<u8>,
    /// Whether the direction came from the file itself (a packgraph edge list's first
    /// line, a Matrix Market banner, a Graphalytics properties file or a snapshot) rather
    /// than the undirected default of edge lists.
    pub direction_from_file: bool,
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
    /// How tightly the graph's edge arrays are packed ([`Packing::Compact`] for a graph
    /// that is analysed, not changed). A snapshot (`.pgb`) keeps the layout it was saved
    /// in.
    pub packing: Packing,
}

impl std::fmt::Debug for LoadOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadOptions")
            .field("format", &self.format)
            .field("directed", &self.directed)
            .field("progress", &self.progress.is_some())
            .field("packing", &self.packing)
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
            Packing::Updates,
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
        Self::build(Some(ids), n, edges, weights, directed, Packing::Updates)
    }

    /// The one edge list → graph builder: a graph over at least `num_vertices` vertices
    /// with `edges` (weighted if `weights` is given) applied as one [`Update`] with
    /// `packing`, then given the external ids `ids` (if any; they must name exactly the
    /// vertices).
    pub(crate) fn build(
        ids: Option<IdMap>,
        num_vertices: usize,
        edges: Vec<(VertexId, VertexId)>,
        weights: Option<Vec<f64>>,
        directed: bool,
        packing: Packing,
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
            graph.set_packing(packing);
            let applied = graph.apply(&update)?;
            (AnyGraph::Weighted(graph), applied)
        } else {
            let mut graph = Graph::new(directed);
            graph.set_packing(packing);
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
    load_with(path, options, &TextOptions::default()).map(|(data, _)| data)
}

/// [`load`] with options for text edge lists, also saying what the read found
/// ([`LoadReport`]: reciprocal arcs merged, a header skipped).
///
/// # Errors
/// As [`load`]; also a header or delimiter that does not fit the file.
pub fn load_with(
    path: &Path,
    options: &LoadOptions,
    text: &TextOptions,
) -> Result<(Dataset, LoadReport)> {
    let format = match options.format {
        Some(format) => format,
        None => Format::detect(path)?,
    };
    let progress = options.progress.as_ref();
    let packing = options.packing;
    match format {
        Format::EdgeList => edgelist::read(path, options.directed, text, progress, packing),
        Format::MatrixMarket => mtx::read(path, options.directed, progress, packing),
        Format::Graphalytics => {
            let files = graphalytics::Files::find(path).ok_or_else(|| {
                Error::unsupported_file(
                    path,
                    "a Graphalytics dataset needs both NAME.v and NAME.e beside each other",
                )
            })?;
            graphalytics::read(&files, options.directed, progress, packing)
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
            let report = LoadReport {
                direction_from_file: true,
                ..LoadReport::default()
            };
            Ok((data, report))
        }
    }
}

/// Writes a graph file in `format`. For Graphalytics, `path` may name the `.v` or `.e` file
/// or the prefix; the `.v`, `.e` and `.properties` files are written.
///
/// Named vertices: a snapshot keeps their names; an edge list writes each name as its word
/// (a name that is no single word of text, see [`name_problem`], is an error; edge lists
/// with names are for reading by other tools, [`load`] reads integer ids); Graphalytics
/// datasets hold integers only. Matrix Market numbers the vertices `1..=n` in the graph's
/// internal order (see [`mtx::write`]).
///
/// An edge list states the vertex count and direction in its first line and lists the
/// vertices without edges in `# isolated vertices:` lines, which [`load`] honours.
///
/// # Errors
/// [`Error`] if a file cannot be written, or for a graph with named vertices in a format
/// that cannot hold them; nothing is written then.
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
        Format::MatrixMarket => write_file(path, |out| mtx::write(dataset, out)),
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
/// errors name the file. Also returns the pairs of opposite arcs an undirected graph merged
/// ([`LoadReport::reciprocal_pairs`]).
pub(crate) fn build(
    path: &Path,
    ids: IdMap,
    edges: Vec<(VertexId, VertexId)>,
    weights: Option<Vec<f64>>,
    directed: bool,
    packing: Packing,
) -> Result<(Dataset, usize)> {
    let n = ids.len();
    let reciprocal = if directed {
        0
    } else {
        reciprocal_pairs(&edges)
    };
    let data = Dataset::build(Some(ids), n, edges, weights, directed, packing)
        .map_err(|e| e.in_file(path))?;
    Ok((data, reciprocal))
}

/// The pairs `{u, v}` (`u != v`) of which both arcs `u v` and `v u` occur in `edges`
/// (repeats counted once). Sorts a copy of the arcs: 8 bytes an edge, less than the
/// external-id edges a reader frees before building.
pub(crate) fn reciprocal_pairs(edges: &[(VertexId, VertexId)]) -> usize {
    use rayon::prelude::*;
    let key = |u: VertexId, v: VertexId| (u64::from(u) << 32) | u64::from(v);
    let mut arcs: Vec<u64> = edges
        .par_iter()
        .filter(|(u, v)| u != v)
        .map(|&(u, v)| key(u, v))
        .collect();
    arcs.par_sort_unstable();
    arcs.dedup();
    arcs.par_iter()
        .filter(|&&arc| {
            let (u, v) = ((arc >> 32) as VertexId, arc as VertexId);
            u < v && arcs.binary_search(&key(v, u)).is_ok()
        })
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::HashSet;

    proptest! {
        #[test]
        fn reciprocal_pairs_match_a_set(edges in proptest::collection::vec((0u32..12, 0u32..12), 0..80)) {
            let set: HashSet<(u32, u32)> = edges.iter().copied().collect();
            let expected = set.iter().filter(|&&(u, v)| u < v && set.contains(&(v, u))).count();
            prop_assert_eq!(reciprocal_pairs(&edges), expected);
        }
    }
}
