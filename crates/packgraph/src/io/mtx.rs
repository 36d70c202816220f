//! Matrix Market coordinate files: the banner
//! `%%MatrixMarket matrix coordinate <pattern|integer|real> <general|symmetric>`, `%`
//! comments, a size line `rows cols entries`, then one `i j [value]` line per entry with
//! 1-based indices. The matrix must be square; vertex `i` is row/column `i` (external ids
//! `1..=rows`). `symmetric` files give undirected graphs; `general` ones are directed unless
//! asked otherwise. `integer` and `real` values are edge weights. The number of entries
//! must be exactly what the size line says.
//!
//! [`write`] writes `symmetric` files for undirected graphs (each edge once, in the lower
//! triangle), `general` ones for directed graphs, `real` values for weights and `pattern`
//! otherwise; the size line keeps the vertex count, isolated vertices included.

use std::io::Write;
use std::path::Path;

use super::edgelist::{concat, same_columns, EdgeChunk};
use super::error::LineError;
use super::text::{self, is_comment, parse_id, parse_weight, Fields, Progress};
use super::{Dataset, LoadReport};
use crate::graph::ids::{IdMap, MAX_VERTICES};
use crate::graph::{AnyGraph, GraphRead, Packing, VertexId, WeightedGraphRead};
use crate::Error;

/// The banner's first word.
pub(crate) const BANNER: &[u8] = b"%%MatrixMarket";

/// Reads a Matrix Market file (plain or gzip). `directed` applies to `general` files.
pub(crate) fn read(
    path: &Path,
    directed: Option<bool>,
    progress: Option<&Progress>,
    packing: Packing,
) -> Result<(Dataset, LoadReport), Error> {
    let mut input = text::open(path)?;
    let Some(banner) = input.read_line(path)? else {
        return Err(Error::invalid_file(path, "file is empty"));
    };
    let (weighted, symmetric) = parse_banner(&banner).map_err(|e| e.in_file(path))?;
    let mut line_no = 1;
    let size_line = loop {
        let Some(line) = input.read_line(path)? else {
            return Err(Error::invalid_file(
                path,
                "ends before the size line `rows columns entries`",
            ));
        };
        line_no += 1;
        if !is_comment(&line) {
            break line;
        }
    };
    let (rows, cols, entries) = parse_size(&size_line).map_err(|(value, reason)| {
        LineError::new(line_no, value.as_bytes(), reason).in_file(path)
    })?;
    if rows != cols {
        return Err(Error::invalid_file(
            path,
            format!("the matrix is {rows} x {cols}: an adjacency matrix must be square"),
        ));
    }
    if rows > MAX_VERTICES as u64 {
        return Err(Error::invalid_file(
            path,
            format!("{rows} rows: more than the 2^32-1 vertices supported"),
        ));
    }
    let n = rows;
    let columns = if weighted { 3 } else { 2 };
    let parse = text::line_parser(|line: &[u8], out: &mut EdgeChunk<VertexId>| {
        let mut fields = Fields::new(line);
        let mut index = || -> Result<VertexId, (&[u8], &'static str)> {
            let field = fields.next().ok_or((line, "expected `row column`"))?;
            let i = parse_id(field).map_err(|r| (field, r))?;
            if i == 0 || i > n {
                return Err((field, "index outside 1..=rows of the size line"));
            }
            Ok((i - 1) as VertexId)
        };
        let (i, j) = (index()?, index()?);
        if weighted {
            let field = fields.next().ok_or((line, "missing the entry's value"))?;
            out.weights
                .push(parse_weight(field).map_err(|r| (field, r))?);
        }
        if fields.next().is_some() {
            return Err((
                line,
                if weighted {
                    "too many fields: expected `row column value`"
                } else {
                    "too many fields: a pattern entry is `row column`"
                },
            ));
        }
        same_columns(out, columns).map_err(|r| (line, r))?;
        out.edges.push((i, j));
        Ok(())
    });
    let chunks = text::parse_lines(path, &mut input, line_no + 1, progress, parse)?;
    let (edges, mut weights) = concat(path, chunks)?;
    if weighted && weights.is_none() {
        // No entries: still a weighted graph, as the banner says.
        weights = Some(Vec::new());
    }
    if edges.len() as u64 != entries {
        return Err(Error::invalid_file(
            path,
            format!(
                "the size line declares {entries} entries but the file has {}",
                edges.len()
            ),
        ));
    }
    let directed = !symmetric && directed.unwrap_or(true);
    let (data, reciprocal) = super::build(
        path,
        IdMap::range(1, n as usize),
        edges,
        weights,
        directed,
        packing,
    )?;
    let report = LoadReport {
        // A symmetric file's entries are edges already, whatever --directed says.
        reciprocal_pairs: if symmetric { 0 } else { reciprocal },
        direction_from_file: true,
        ..LoadReport::default()
    };
    Ok((data, report))
}

/// Writes the graph as a Matrix Market coordinate file: vertex `v` (internal id) is row and
/// column `v + 1`, so a graph read from Matrix Market (ids `1..=n`) keeps its numbering;
/// other ids are written by their internal order, which a `%` comment says. Undirected
/// graphs are `symmetric` with each edge once (row >= column), directed ones `general`;
/// weights are `real` values, unweighted graphs `pattern`.
///
/// # Errors
/// The writer's I/O errors.
pub fn write(dataset: &Dataset, out: &mut dyn Write) -> std::io::Result<()> {
    let graph = &dataset.graph;
    let n = graph.num_vertices();
    let entries = graph.num_edges();
    writeln!(
        out,
        "%%MatrixMarket matrix coordinate {} {}",
        if graph.is_weighted() {
            "real"
        } else {
            "pattern"
        },
        if graph.is_directed() {
            "general"
        } else {
            "symmetric"
        }
    )?;
    if dataset.ids().as_range() != Some((1, n)) && n > 0 {
        writeln!(
            out,
            "% written by packgraph: vertex i is the i-th vertex in the graph's order, not its id"
        )?;
    }
    writeln!(out, "{n} {n} {entries}")?;
    let lines = |v: VertexId| -> Vec<u8> {
        let mut text = Vec::new();
        let keep = |w: VertexId| graph.is_directed() || w <= v;
        match graph {
            AnyGraph::Unweighted(g) => {
                g.for_each_out_neighbor(v, |w| {
                    if keep(w) {
                        let _ = writeln!(text, "{} {}", v + 1, w + 1);
                    }
                    true
                });
            }
            AnyGraph::Weighted(g) => {
                g.for_each_out_edge(v, |w, weight| {
                    if keep(w) {
                        let _ = writeln!(text, "{} {} {weight}", v + 1, w + 1);
                    }
                    true
                });
            }
        }
        text
    };
    super::edgelist::write_in_blocks(n, lines, out)
}

/// `(weighted, symmetric)` from the banner line.
fn parse_banner(line: &[u8]) -> Result<(bool, bool), LineError> {
    let lower = line.to_ascii_lowercase();
    let words: Vec<&[u8]> = Fields::new(&lower).collect();
    let bad = |reason: &str| LineError::new(1, line, reason);
    if words.first() != Some(&&b"%%matrixmarket"[..]) {
        return Err(bad(
            "not a Matrix Market file: the first line must start with %%MatrixMarket",
        ));
    }
    if words.len() != 5 || words[1] != b"matrix" {
        return Err(bad(
            "expected `%%MatrixMarket matrix coordinate <field> <symmetry>`",
        ));
    }
    if words[2] != b"coordinate" {
        return Err(bad("only the coordinate format is supported, not array"));
    }
    let weighted = match words[3] {
        b"pattern" => false,
        b"integer" | b"real" => true,
        _ => return Err(bad("the field must be pattern, integer or real")),
    };
    let symmetric = match words[4] {
        b"general" => false,
        b"symmetric" => true,
        _ => return Err(bad("the symmetry must be general or symmetric")),
    };
    Ok((weighted, symmetric))
}

fn parse_size(line: &[u8]) -> Result<(u64, u64, u64), (String, &'static str)> {
    let text = || String::from_utf8_lossy(line).into_owned();
    let fields: Vec<&[u8]> = Fields::new(line).collect();
    if fields.len() != 3 {
        return Err((text(), "the size line must be `rows columns entries`"));
    }
    let mut numbers = [0u64; 3];
    for (slot, field) in numbers.iter_mut().zip(&fields) {
        *slot = parse_id(field).map_err(|_| {
            (
                String::from_utf8_lossy(field).into_owned(),
                "size is not a non-negative integer",
            )
        })?;
    }
    Ok((numbers[0], numbers[1], numbers[2]))
}

/// Whether bytes start like a Matrix Market file.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.len() >= BANNER.len() && head[..BANNER.len()].eq_ignore_ascii_case(BANNER)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::{load, save, Format, LoadOptions};
    use proptest::prelude::*;

    /// Every stored arc with its weight (1 when unweighted), in order.
    fn arcs(data: &Dataset) -> Vec<(u64, u64, String)> {
        let mut out = Vec::new();
        let ids = data.ids();
        for v in 0..data.graph.num_vertices() as VertexId {
            let mut push = |w: VertexId, weight: f64| {
                out.push((ids.external(v), ids.external(w), weight.to_string()));
                true
            };
            match &data.graph {
                AnyGraph::Unweighted(g) => {
                    g.for_each_out_neighbor(v, |w| push(w, 1.0));
                }
                AnyGraph::Weighted(g) => {
                    g.for_each_out_edge(v, &mut push);
                }
            }
        }
        out.sort_unstable_by_key(|a| (a.0, a.1));
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn written_files_read_back_the_same_graph(
            n in 1usize..30,
            edges in proptest::collection::vec((0u32..30, 0u32..30, -4.0f64..4.0), 0..60),
            directed: bool,
            weighted: bool,
        ) {
            let n_max = n as u32;
            let pairs: Vec<(VertexId, VertexId)> =
                edges.iter().map(|&(u, v, _)| (u % n_max, v % n_max)).collect();
            let weights: Vec<f64> = edges.iter().map(|e| e.2).collect();
            let data = Dataset::from_edges(n, &pairs, weighted.then_some(&weights[..]), directed)
                .unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("g.mtx");
            save(&data, &path, Format::MatrixMarket).unwrap();
            let text = std::fs::read_to_string(&path).unwrap();
            let banner = text.lines().next().unwrap();
            prop_assert_eq!(banner.ends_with("general"), directed);
            prop_assert_eq!(banner.contains(" real "), weighted);
            let back = load(&path, &LoadOptions::default()).unwrap();
            prop_assert_eq!(back.graph.num_vertices(), n);
            prop_assert_eq!(back.graph.is_directed(), directed);
            prop_assert_eq!(back.graph.is_weighted(), weighted);
            // Ids 0..n come back as 1..=n.
            let shifted: Vec<_> = arcs(&data).into_iter().map(|(u, v, w)| (u + 1, v + 1, w)).collect();
            prop_assert_eq!(arcs(&back), shifted);
        }
    }

    #[test]
    fn a_file_read_from_matrix_market_is_written_byte_for_byte_again() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.mtx");
        let text =
            "%%MatrixMarket matrix coordinate real symmetric\n4 4 3\n2 1 0.5\n3 1 -2\n4 3 0.25\n";
        std::fs::write(&path, text).unwrap();
        let data = load(&path, &LoadOptions::default()).unwrap();
        let again = dir.path().join("b.mtx");
        save(&data, &again, Format::MatrixMarket).unwrap();
        assert_eq!(std::fs::read_to_string(&again).unwrap(), text);
    }
}
