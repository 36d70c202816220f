//! Edge lists: one edge per line, `u v` or `u v weight`, fields separated by blanks or
//! commas, `#` and `%` comment lines (SNAP files included). Ids are any `u64`; the vertices
//! are the endpoints, numbered by rank (see [`IdMap`]). Every data line must have the same
//! number of columns.

use std::io::Write;
use std::path::Path;

use rayon::prelude::*;

use super::text::{self, parse_id, parse_weight, Fields, Progress};
use super::Dataset;
use crate::graph::ids::{name_problem, ExternalId, IdMap, IdMapError, IntIds};
use crate::graph::{AnyGraph, GraphRead, VertexId, WeightedGraphRead};
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
            return Err(Error::InvalidInput {
                path: Some(path.to_path_buf()),
                line: Some(*line),
                value: Some(format!("{} columns", chunk.columns)),
                reason: format!("earlier lines have {columns} columns"),
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

/// Parses a line `u v [w]` with external ids.
#[inline]
fn parse_line<'l>(
    line: &'l [u8],
    out: &mut EdgeChunk<u64>,
) -> Result<(), (&'l [u8], &'static str)> {
    let mut fields = Fields::new(line);
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

/// Reads an edge list (plain or gzip).
pub(crate) fn read(
    path: &Path,
    directed: bool,
    progress: Option<&Progress>,
) -> Result<Dataset, Error> {
    let mut input = text::open(path)?;
    let chunks = text::parse_lines(path, &mut input, 1, progress, parse_line)?;
    let columns = columns(path, &chunks)?;
    let weights = weights(&chunks, columns);
    if chunks.iter().all(|(_, c)| c.edges.is_empty()) {
        return Err(Error::invalid_file(
            path,
            "contains no edges (an edge list needs lines `u v` or `u v weight`)",
        ));
    }
    // The ids are mapped straight from the parser's chunks, which are freed before the
    // graph is built (the external-id edges are the largest buffer of a load).
    let pieces: Vec<&[(u64, u64)]> = chunks.iter().map(|(_, c)| &c.edges[..]).collect();
    let mapped = IdMap::from_endpoint_chunks(&pieces);
    drop(pieces);
    drop(chunks);
    let (ids, edges) = mapped.map_err(|e| match e {
        IdMapError::TooMany(n) => Error::invalid_file(
            path,
            format!("{n} distinct vertices: more than the 2^32-1 supported"),
        ),
        IdMapError::Duplicate(id) => Error::invalid_file(path, format!("vertex {id} repeated")),
    })?;
    super::build(path, ids, edges, weights, directed)
}

/// Writes the graph as an edge list in external ids: each undirected edge once (smaller id
/// first), with a weight column for weighted graphs, after a `#` header.
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
    write_edges(dataset, out)
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
