//! Edge lists: one edge per line, `u v` or `u v weight`, fields separated by blanks or
//! commas, `#` and `%` comment lines (SNAP files included). Ids are any `u64`; the vertices
//! are the endpoints, numbered by rank (see [`IdMap`]). Every data line must have the same
//! number of columns.
//!
//! Before the first data line, the reader looks at the file's head, line by line:
//! * a first line `# packgraph edge list: N vertices, M edges, directed|undirected` (what
//!   [`write`] puts there) states the vertex count and direction: the direction applies
//!   unless the caller says one, and a file naming other than `N` vertices is an error;
//! * `# isolated vertices: ID ID …` lines name vertices without edges, which are kept;
//! * a first data line none of whose fields is a number is a header (`source,target`),
//!   skipped ([`TextOptions::header`] forces or forbids this);
//! * a first data line holding `;` or `|` names that byte a separator, beside the blanks
//!   and commas that always are ([`TextOptions::delimiter`]).

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use super::error::LineError;
use super::text::{self, is_comment, parse_id, parse_weight, Fields, Progress};
use super::{Dataset, LoadReport, TextOptions};
use crate::graph::ids::{name_problem, ExternalId, IdMap, IdMapError, IntIds};
use crate::graph::{AnyGraph, GraphRead, Packing, VertexId, WeightedGraphRead};
use crate::Error;

/// Edges parsed from text, in file order.
#[derive(Debug, Default)]
pub(crate) struct EdgeChunk<I> {
    pub(crate) edges: Vec<(I, I)>,
    pub(crate) weights: Vec<f64>,
    /// Columns of this chunk's lines (0 before the first line).
    pub(crate) columns: usize,
}

/// Records the column count of a line, refusing a change within a chunk.
#[inline]
pub(crate) fn same_columns<I>(
    chunk: &mut EdgeChunk<I>,
    columns: usize,
) -> Result<(), &'static str> {
    if chunk.columns == 0 {
        chunk.columns = columns;
    } else if chunk.columns != columns {
        return Err(if columns == 3 {
            "this line has a weight column but earlier lines have none"
        } else {
            "this line has no weight column but earlier lines have one"
        });
    }
    Ok(())
}

/// Edges in file order, with their weights if the file has a weight column.
pub(crate) type Parsed<I> = (Vec<(I, I)>, Option<Vec<f64>>);

/// The column count the chunks agree on (0 if none has a line), or the first chunk that
/// disagrees.
fn columns<I>(path: &Path, chunks: &[(u64, EdgeChunk<I>)]) -> Result<usize, Error> {
    let mut columns = 0;
    for (line, chunk) in chunks {
        if chunk.columns == 0 {
            continue;
        }
        if columns == 0 {
            columns = chunk.columns;
        } else if chunk.columns != columns {
            // The words of `same_columns`, which finds the same within a chunk.
            let mut probe = EdgeChunk::<I> {
                edges: Vec::new(),
                weights: Vec::new(),
                columns,
            };
            let reason =
                same_columns(&mut probe, chunk.columns).expect_err("the column counts differ");
            return Err(Error::InvalidInput {
                path: Some(path.to_path_buf()),
                line: Some(*line),
                value: None,
                reason: reason.to_string(),
            });
        }
    }
    Ok(columns)
}

/// The chunks' weights in order, if they have a weight column.
fn weights<I>(chunks: &[(u64, EdgeChunk<I>)], columns: usize) -> Option<Vec<f64>> {
    (columns == 3).then(|| {
        chunks
            .iter()
            .flat_map(|(_, c)| c.weights.iter().copied())
            .collect()
    })
}

/// Concatenates chunks, checking that they agree on columns.
pub(crate) fn concat<I: Copy + Send + Sync>(
    path: &Path,
    chunks: Vec<(u64, EdgeChunk<I>)>,
) -> Result<Parsed<I>, Error> {
    let columns = columns(path, &chunks)?;
    let total: usize = chunks.iter().map(|(_, c)| c.edges.len()).sum();
    let mut edges = Vec::with_capacity(total);
    for (_, chunk) in &chunks {
        edges.extend_from_slice(&chunk.edges);
    }
    Ok((edges, weights(&chunks, columns)))
}

/// Parses a line `u v [w]` with external ids, fields separated by blanks, commas or
/// `separator`.
#[inline]
fn parse_line<'l>(
    line: &'l [u8],
    out: &mut EdgeChunk<u64>,
    separator: u8,
) -> Result<(), (&'l [u8], &'static str)> {
    let mut fields = Fields::with_separator(line, separator);
    let first = fields.next().ok_or((line, "missing vertex id"))?;
    let u = parse_id(first).map_err(|r| (first, r))?;
    let second = fields
        .next()
        .ok_or((line, "expected two vertex ids, found one"))?;
    let v = parse_id(second).map_err(|r| (second, r))?;
    push_edge(
        out,
        line,
        fields,
        (u, v),
        "too many columns: expected `u v` or `u v weight`",
    )
}

/// Ends a line whose two ids gave `edge`: reads the optional weight column from `fields`,
/// refuses anything after it (with `too_many`, naming the line's forms) and a column count
/// that differs from the chunk's earlier lines, then records the edge.
#[inline]
pub(crate) fn push_edge<'l, I>(
    out: &mut EdgeChunk<I>,
    line: &'l [u8],
    mut fields: Fields<'l>,
    edge: (I, I),
    too_many: &'static str,
) -> Result<(), (&'l [u8], &'static str)> {
    let columns = match fields.next() {
        None => 2,
        Some(field) => {
            out.weights
                .push(parse_weight(field).map_err(|r| (field, r))?);
            3
        }
    };
    if fields.next().is_some() {
        return Err((line, too_many));
    }
    same_columns(out, columns).map_err(|r| (line, r))?;
    out.edges.push(edge);
    Ok(())
}

/// The first line of a file [`write`] wrote, up to the counts.
pub const HEADER_PREFIX: &[u8] = b"# packgraph edge list:";
/// The start of a line listing vertices without edges.
pub const ISOLATED_PREFIX: &[u8] = b"# isolated vertices:";
/// Isolated vertices per `# isolated vertices:` line.
const ISOLATED_PER_LINE: usize = 16;

/// What the head of an edge list says, and its first data line parsed.
#[derive(Default)]
struct Head {
    /// The vertex count and direction a packgraph header states.
    declared: Option<(u64, bool)>,
    /// Vertices named by `# isolated vertices:` lines.
    isolated: Vec<u64>,
    /// The header line skipped, if any.
    header: Option<String>,
    /// The separator besides blanks and commas.
    separator: Option<u8>,
    /// The first data line (its number) and its edge.
    first: Option<(u64, EdgeChunk<u64>)>,
    /// The number of the line after the head.
    next_line: u64,
}

/// Reads the head of an edge list up to and including its first data line (see the
/// module documentation).
fn read_head(path: &Path, input: &mut text::Input, options: &TextOptions) -> Result<Head, Error> {
    let mut head = Head {
        separator: options.delimiter,
        ..Head::default()
    };
    let mut line_no = 0;
    while let Some(line) = input.read_line(path)? {
        line_no += 1;
        let bad = |value: &[u8], reason: &str| LineError::new(line_no, value, reason).in_file(path);
        if is_comment(&line) {
            if line_no == 1 && line.starts_with(HEADER_PREFIX) {
                head.declared =
                    Some(parse_declared(&line[HEADER_PREFIX.len()..]).ok_or_else(|| {
                        bad(&line, "expected `N vertices, M edges, directed|undirected`")
                    })?);
            } else if let Some(ids) = line.strip_prefix(ISOLATED_PREFIX) {
                for field in Fields::new(ids) {
                    head.isolated
                        .push(parse_id(field).map_err(|reason| bad(field, reason))?);
                }
            }
            continue;
        }
        if head.separator.is_none() {
            head.separator = [b';', b'|'].into_iter().find(|b| line.contains(b));
        }
        let separator = head.separator.unwrap_or(b',');
        let is_header = match options.header {
            Some(header) => header && head.header.is_none(),
            None => {
                head.header.is_none()
                    && Fields::with_separator(&line, separator).all(|f| parse_id(f).is_err())
                    && Fields::with_separator(&line, separator).nth(1).is_some()
            }
        };
        if is_header {
            head.header = Some(String::from_utf8_lossy(&line).into_owned());
            continue;
        }
        let mut chunk = EdgeChunk::default();
        parse_line(&line, &mut chunk, separator).map_err(|(value, reason)| bad(value, reason))?;
        head.first = Some((line_no, chunk));
        break;
    }
    head.next_line = line_no + 1;
    Ok(head)
}

/// `(vertices, directed)` from the rest of a packgraph header line (after
/// [`HEADER_PREFIX`]); `None` if it does not say both.
pub fn parse_declared(rest: &[u8]) -> Option<(u64, bool)> {
    let text = std::str::from_utf8(rest).ok()?;
    let mut words = text.split([' ', ',']).filter(|w| !w.is_empty());
    let vertices = words.next()?.parse().ok()?;
    (words.next()? == "vertices").then_some(())?;
    let directed = words.find(|w| *w == "directed" || *w == "undirected")? == "directed";
    Some((vertices, directed))
}

/// Reads an edge list (plain or gzip): undirected unless `directed` or the file's
/// packgraph header says otherwise.
pub(crate) fn read(
    path: &Path,
    directed: Option<bool>,
    options: &TextOptions,
    progress: Option<&Progress>,
    packing: Packing,
) -> Result<(Dataset, LoadReport), Error> {
    let mut input = text::open(path)?;
    let head = read_head(path, &mut input, options)?;
    let separator = head.separator.unwrap_or(b',');
    let parse =
        text::line_parser(|line: &[u8], out: &mut EdgeChunk<u64>| parse_line(line, out, separator));
    let mut chunks = text::parse_lines(path, &mut input, head.next_line, progress, parse)?;
    if let Some(first) = head.first {
        chunks.insert(0, first);
    }
    let columns = columns(path, &chunks)?;
    let weights = weights(&chunks, columns);
    if chunks.iter().all(|(_, c)| c.edges.is_empty()) {
        return Err(Error::invalid_file(
            path,
            "contains no edges (an edge list needs lines `u v` or `u v weight`)",
        ));
    }
    // The ids are mapped straight from the parser's chunks, which are freed before the
    // graph is built (the external-id edges are the largest buffer of a load). The
    // isolated vertices come last, as loops that are cut off after the mapping.
    let isolated: Vec<(u64, u64)> = head.isolated.iter().map(|&v| (v, v)).collect();
    let mut pieces: Vec<&[(u64, u64)]> = chunks.iter().map(|(_, c)| &c.edges[..]).collect();
    pieces.push(&isolated);
    let mapped = IdMap::from_endpoint_chunks(&pieces);
    drop(pieces);
    drop(chunks);
    let (ids, mut edges) = mapped.map_err(|e| match e {
        IdMapError::TooMany(n) => Error::invalid_file(
            path,
            format!("{n} distinct vertices: more than the 2^32-1 supported"),
        ),
        IdMapError::Duplicate(id) => Error::invalid_file(path, format!("vertex {id} repeated")),
    })?;
    edges.truncate(edges.len() - isolated.len());
    if let Some((declared, _)) = head.declared {
        if declared != ids.len() as u64 {
            return Err(Error::invalid_file(
                path,
                format!(
                    "the first line declares {declared} vertices but the file names {} (edge endpoints and `# isolated vertices:` lines); correct or delete that line",
                    ids.len()
                ),
            ));
        }
    }
    let from_file = head.declared.map(|(_, d)| d);
    let directed = directed.or(from_file).unwrap_or(false);
    let (data, reciprocal_pairs) = super::build(path, ids, edges, weights, directed, packing)?;
    let report = LoadReport {
        reciprocal_pairs,
        header: head.header,
        delimiter: head.separator,
        direction_from_file: from_file.is_some(),
    };
    Ok((data, report))
}

/// Writes the graph as an edge list in external ids: each undirected edge once (smaller id
/// first), with a weight column for weighted graphs, after a `#` header stating the
/// vertex count and direction and `# isolated vertices:` lines naming the vertices without
/// edges, which [`read`] honours.
pub fn write(dataset: &Dataset, out: &mut dyn Write) -> std::io::Result<()> {
    let graph = &dataset.graph;
    writeln!(
        out,
        "# packgraph edge list: {} vertices, {} edges, {}{}",
        graph.num_vertices(),
        graph.num_edges(),
        if graph.is_directed() {
            "directed"
        } else {
            "undirected"
        },
        if graph.is_weighted() {
            ", weighted"
        } else {
            ""
        }
    )?;
    write_isolated(dataset, out)?;
    write_edges(dataset, out)
}

/// `# isolated vertices:` lines naming the vertices without edges in either direction.
fn write_isolated(dataset: &Dataset, out: &mut dyn Write) -> std::io::Result<()> {
    let graph = &dataset.graph;
    let ids = Tokens::of(dataset.ids())?;
    let isolated = |v: VertexId| match graph {
        AnyGraph::Unweighted(g) => g.out_degree(v) == 0 && g.in_degree(v) == 0,
        AnyGraph::Weighted(g) => g.out_degree(v) == 0 && g.in_degree(v) == 0,
    };
    let isolated: Vec<VertexId> = (0..graph.num_vertices() as VertexId)
        .into_par_iter()
        .filter(|&v| isolated(v))
        .collect();
    for line in isolated.chunks(ISOLATED_PER_LINE) {
        let mut text = ISOLATED_PREFIX.to_vec();
        for &v in line {
            text.push(b' ');
            ids.write(v, &mut text);
        }
        text.push(b'\n');
        out.write_all(&text)?;
    }
    Ok(())
}

/// Writes `u v` or `u v weight` lines in external ids: each undirected edge once (smaller
/// internal id first). Named vertices are written by their names ([`Tokens`]).
pub(crate) fn write_edges(dataset: &Dataset, out: &mut dyn Write) -> std::io::Result<()> {
    let graph = &dataset.graph;
    let ids = Tokens::of(dataset.ids())?;
    let lines = |v: VertexId| -> Vec<u8> {
        let mut text = Vec::new();
        let keep = |w: VertexId| graph.is_directed() || v < w;
        let edge = |text: &mut Vec<u8>, w: VertexId| {
            ids.write(v, text);
            text.push(b' ');
            ids.write(w, text);
        };
        match graph {
            AnyGraph::Unweighted(g) => {
                g.for_each_out_neighbor(v, |w| {
                    if keep(w) {
                        edge(&mut text, w);
                        text.push(b'\n');
                    }
                    true
                });
            }
            AnyGraph::Weighted(g) => {
                g.for_each_out_edge(v, |w, weight| {
                    if keep(w) {
                        edge(&mut text, w);
                        let _ = writeln!(text, " {weight}");
                    }
                    true
                });
            }
        }
        text
    };
    write_in_blocks(graph.num_vertices(), lines, out)
}

/// The integer ids of every vertex, or an error for a graph with named vertices (for
/// formats that hold integers only).
pub(crate) fn int_ids(ids: &IdMap) -> std::io::Result<IntIds> {
    ids.int_ids().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "this format names vertices by integers, and this graph's vertices are named; write an edge list or a snapshot (.pgb)",
        )
    })
}

/// Every vertex's external id as a word of text: integers in decimal, names as they are.
pub(crate) enum Tokens {
    /// No vertex is named.
    Ints(IntIds),
    /// Some vertex is named: every external id, in internal order.
    Named(Vec<ExternalId>),
}

impl Tokens {
    /// The words of `ids`; an error if a name cannot be one word of text ([`name_problem`]:
    /// empty, or holding whitespace, `#` or control characters).
    pub(crate) fn of(ids: &IdMap) -> std::io::Result<Self> {
        if let Some(ints) = ids.int_ids() {
            return Ok(Tokens::Ints(ints));
        }
        let all: Vec<ExternalId> = ids.iter().collect();
        for id in &all {
            if let ExternalId::Name(name) = id {
                if let Some(reason) = name_problem(name) {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("vertex {name:?} cannot be written as a word of text: {reason}"),
                    ));
                }
            }
        }
        Ok(Tokens::Named(all))
    }

    /// Appends vertex `v`'s word to `out`.
    #[inline]
    pub(crate) fn write(&self, v: VertexId, out: &mut Vec<u8>) {
        match self {
            Tokens::Ints(ints) => {
                let _ = write!(out, "{}", ints.get(v));
            }
            Tokens::Named(all) => match &all[v as usize] {
                ExternalId::Int(id) => {
                    let _ = write!(out, "{id}");
                }
                ExternalId::Name(name) => out.extend_from_slice(name.as_bytes()),
            },
        }
    }
}

/// Writes the text `lines(v)` of every vertex in order, formatting blocks of vertices in
/// parallel.
pub(crate) fn write_in_blocks(
    num_vertices: usize,
    lines: impl Fn(VertexId) -> Vec<u8> + Sync,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    const VERTICES_PER_BLOCK: usize = 1 << 16;
    let blocks = num_vertices.div_ceil(VERTICES_PER_BLOCK);
    let per_round = rayon::current_num_threads() * 4;
    for round in (0..blocks).step_by(per_round.max(1)) {
        let texts: Vec<Vec<u8>> = (round..blocks.min(round + per_round))
            .into_par_iter()
            .map(|b| {
                let end = ((b + 1) * VERTICES_PER_BLOCK).min(num_vertices);
                (b * VERTICES_PER_BLOCK..end)
                    .flat_map(|v| lines(v as VertexId))
                    .collect()
            })
            .collect();
        for text in texts {
            out.write_all(&text)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{load, load_with, save, Format, LoadOptions};

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.txt");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    fn read(text: &str, options: TextOptions) -> Result<(Dataset, LoadReport), Error> {
        let (_dir, path) = file(text);
        load_with(&path, &LoadOptions::default(), &options)
    }

    #[test]
    fn isolated_vertices_and_direction_survive_a_round_trip() {
        let edges = [(0, 3), (3, 0), (5, 6)];
        let data = Dataset::from_edges(9, &edges, None, true).unwrap();
        let (dir, path) = file("");
        save(&data, &path, Format::EdgeList).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# packgraph edge list: 9 vertices, 3 edges, directed\n"));
        assert!(text.contains("# isolated vertices: 1 2 4 7 8\n"), "{text}");
        let back = load(&path, &LoadOptions::default()).unwrap();
        assert_eq!(back.graph.num_vertices(), 9);
        assert!(back.graph.is_directed());
        assert_eq!(back.graph.num_edges(), 3);
        // A caller's direction wins over the file's; the arcs 0 3 and 3 0 then merge.
        let (undirected, report) = load_with(
            &path,
            &LoadOptions {
                directed: Some(false),
                ..LoadOptions::default()
            },
            &TextOptions::default(),
        )
        .unwrap();
        assert_eq!(undirected.graph.num_edges(), 2);
        assert_eq!(report.reciprocal_pairs, 1);
        drop(dir);
    }

    #[test]
    fn a_header_count_the_file_contradicts_is_an_error() {
        let text = "# packgraph edge list: 5 vertices, 1 edges, undirected\n1 2\n";
        let error = read(text, TextOptions::default()).unwrap_err().to_string();
        assert!(
            error.contains("declares 5 vertices but the file names 2"),
            "{error}"
        );
        let text = "# packgraph edge list: many vertices\n1 2\n";
        let error = read(text, TextOptions::default()).unwrap_err().to_string();
        assert!(error.contains("g.txt:1:"), "{error}");
        let text = "# isolated vertices: 4 x\n1 2\n";
        let error = read(text, TextOptions::default()).unwrap_err().to_string();
        assert!(
            error.contains("g.txt:1:") && error.contains("`x`"),
            "{error}"
        );
    }

    #[test]
    fn headers_and_delimiters_are_detected_or_given() {
        let (data, report) = read(
            "# a comment\nsrc;dst;w\n1;2;0.5\n2;3;1\n",
            TextOptions::default(),
        )
        .unwrap();
        assert_eq!(data.graph.num_edges(), 2);
        assert!(data.graph.is_weighted());
        assert_eq!(report.header.as_deref(), Some("src;dst;w"));
        assert_eq!(report.delimiter, Some(b';'));
        // A header is found by content only on the first data line.
        let error = read("1 2\nfrom to\n", TextOptions::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("g.txt:2:"), "{error}");
        let forced = TextOptions {
            header: Some(true),
            ..TextOptions::default()
        };
        let (data, report) = read("1 2\n2 3\n3 4\n", forced).unwrap();
        assert_eq!(
            (data.graph.num_edges(), report.header.as_deref()),
            (2, Some("1 2"))
        );
        let refused = TextOptions {
            header: Some(false),
            ..TextOptions::default()
        };
        let error = read("a,b\n1,2\n", refused).unwrap_err().to_string();
        assert!(
            error.contains("g.txt:1:") && error.contains("`a`"),
            "{error}"
        );
        let pipe = TextOptions {
            delimiter: Some(b'|'),
            ..TextOptions::default()
        };
        let (data, _) = read("1|2\n2|3\n", pipe).unwrap();
        assert_eq!(data.graph.num_edges(), 2);
        // Line numbers stay exact after a head read line by line.
        let error = read("# c\nsource target\n1 2\n2 y\n", TextOptions::default())
            .unwrap_err()
            .to_string();
        assert!(error.contains("g.txt:4:"), "{error}");
    }
}
