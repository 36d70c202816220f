//! Parsing one process's text: splitting it into pieces for the threads, the lines of an
//! edge list (`u v` or `u v weight`, blanks or commas, comment lines, a `packgraph` header
//! and its isolated vertices) and of a Graphalytics vertex file, with the line of every
//! error.

use std::path::Path;

use packgraph::io::edgelist::{parse_declared, HEADER_PREFIX, ISOLATED_PREFIX};
use packgraph::io::{parse_id, parse_weight};

use crate::dist::DistError;

/// Whether `b` separates fields: a blank or a comma.
#[inline]
pub(super) fn is_separator(b: u8) -> bool {
    b.is_ascii_whitespace() || b == b','
}

/// Fields of a line: runs of bytes between blanks and commas.
pub(super) fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| is_separator(b)).filter(|f| !f.is_empty())
}

/// The first (up to) three fields of a line and the number of fields, counting at most 4.
#[inline]
pub(super) fn first_fields(line: &[u8]) -> ([&[u8]; 3], usize) {
    let mut out = [&line[..0]; 3];
    let (mut n, mut i) = (0, 0);
    while n < 4 {
        while i < line.len() && is_separator(line[i]) {
            i += 1;
        }
        if i == line.len() {
            break;
        }
        let start = i;
        while i < line.len() && !is_separator(line[i]) {
            i += 1;
        }
        if n < 3 {
            out[n] = &line[start..i];
        }
        n += 1;
    }
    (out, n)
}

pub(super) fn is_comment(line: &[u8]) -> bool {
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(&b) => b == b'#' || b == b'%',
    }
}

/// A line error as `file:line: reason: `value``.
pub fn line_error(path: &Path, line: u64, reason: &str, value: &[u8]) -> DistError {
    let mut value = String::from_utf8_lossy(value).into_owned();
    if value.len() > 60 {
        let cut = (0..=60)
            .rev()
            .find(|&i| value.is_char_boundary(i))
            .unwrap_or(0);
        value.truncate(cut);
        value.push('…');
    }
    DistError::Usage(format!("{}:{line}: {reason}: `{value}`", path.display()))
}

/// Bytes of text one task parses (pieces end at line ends).
pub(super) const PIECE_BYTES: usize = 1 << 20;

/// The pieces of `text`: about `piece_bytes` each, ending at line ends.
pub(super) fn split_pieces(text: &[u8], piece_bytes: usize) -> Vec<std::ops::Range<usize>> {
    let mut pieces = Vec::with_capacity(text.len() / piece_bytes + 1);
    let mut start = 0;
    while start < text.len() {
        let goal = (start + piece_bytes).min(text.len());
        let end = if goal == text.len() {
            goal
        } else {
            memchr::memchr(b'\n', &text[goal..]).map_or(text.len(), |i| goal + i + 1)
        };
        pieces.push(start..end);
        start = end;
    }
    pieces
}

/// A bad line of a piece: its number within the piece (from 1), why, and the value.
#[derive(Debug, Clone)]
pub(super) struct BadLine {
    pub(super) line: u64,
    pub(super) reason: &'static str,
    pub(super) value: Vec<u8>,
}

pub(super) const WRONG_COLUMNS: &str = "expected `source target` or `source target weight`";

/// The words for a line of `columns` columns after lines of the other count.
pub(super) fn column_change(columns: usize) -> &'static str {
    if columns == 3 {
        "this line has a weight column but earlier lines have none"
    } else {
        "this line has no weight column but earlier lines have one"
    }
}

/// The edges of one piece of a process's lines, in file order.
#[derive(Debug, Default)]
pub(super) struct Piece {
    pub(super) edges: Vec<(u64, u64)>,
    pub(super) weights: Vec<f64>,
    /// Columns of its data lines (0: none).
    pub(super) columns: usize,
    /// Its first data line, numbered within the piece from 1 (0: none), and its text.
    pub(super) first_data: (u64, Vec<u8>),
    /// Newlines in the piece.
    pub(super) newlines: u64,
    /// The first bad line, where parsing stopped.
    pub(super) bad: Option<BadLine>,
    /// A bad `# isolated vertices:` line before the piece's first data line, an error only
    /// if it is in the file's head (no data line before it).
    pub(super) bad_head: Option<BadLine>,
    /// The piece's bytes in the file.
    pub(super) bytes: std::ops::Range<u64>,
    /// The file's number of the piece's first line (set once every process has counted).
    pub(super) first_line: u64,
    /// Vertices named by `# isolated vertices:` lines before the piece's first data line.
    pub(super) isolated: Vec<u64>,
    /// What a packgraph header on the piece's first line declares: vertices and direction.
    pub(super) declared: Option<(u64, bool)>,
}

/// Reads a comment line before the piece's first data line: a packgraph header (on the
/// file's first line, `file_start`) or a list of isolated vertices; other comments say
/// nothing.
pub(super) fn parse_head_line<'l>(
    body: &'l [u8],
    piece: &mut Piece,
    file_start: bool,
) -> Result<(), (&'static str, &'l [u8])> {
    if file_start && body.starts_with(HEADER_PREFIX) {
        let declared = parse_declared(&body[HEADER_PREFIX.len()..]);
        piece.declared =
            Some(declared.ok_or(("expected `N vertices, M edges, directed|undirected`", body))?);
    } else if let Some(ids) = body.strip_prefix(ISOLATED_PREFIX) {
        for field in fields(ids) {
            piece
                .isolated
                .push(parse_id(field).map_err(|r| (r, field))?);
        }
    }
    Ok(())
}

/// Parses one line into `piece`, or says what is wrong and where.
#[inline]
pub(super) fn parse_edge_line<'l>(
    body: &'l [u8],
    piece: &mut Piece,
    line: u64,
) -> Result<(), (&'static str, &'l [u8])> {
    let (f, n) = first_fields(body);
    if !(2..=3).contains(&n) {
        return Err((WRONG_COLUMNS, body));
    }
    if piece.columns == 0 {
        piece.columns = n;
        piece.first_data = (line, body.to_vec());
    } else if piece.columns != n {
        return Err((column_change(n), body));
    }
    let u = parse_id(f[0]).map_err(|r| (r, f[0]))?;
    let v = parse_id(f[1]).map_err(|r| (r, f[1]))?;
    if n == 3 {
        piece
            .weights
            .push(parse_weight(f[2]).map_err(|r| (r, f[2]))?);
    }
    piece.edges.push((u, v));
    Ok(())
}

/// Parses one piece of edge lines (`file_start`: the piece starts the file); stops at the
/// first bad line.
pub(super) fn parse_piece(text: &[u8], file_start: bool) -> Piece {
    let mut piece = Piece {
        newlines: memchr::memchr_iter(b'\n', text).count() as u64,
        ..Piece::default()
    };
    let mut line = 0;
    for raw in text.split_inclusive(|&b| b == b'\n') {
        line += 1;
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        if is_comment(body) {
            if piece.columns == 0 && piece.bad_head.is_none() && body.starts_with(b"# ") {
                let at_start = file_start && line == 1;
                if let Err((reason, value)) = parse_head_line(body, &mut piece, at_start) {
                    piece.bad_head = Some(BadLine {
                        line,
                        reason,
                        value: value.to_vec(),
                    });
                }
            }
            continue;
        }
        if let Err((reason, value)) = parse_edge_line(body, &mut piece, line) {
            piece.bad = Some(BadLine {
                line,
                reason,
                value: value.to_vec(),
            });
            break;
        }
    }
    piece
}

/// The number within `text` (from 1) of its `k`-th data line (from 0).
pub(super) fn data_line(text: &[u8], k: usize) -> Option<u64> {
    text.split_inclusive(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, raw)| !is_comment(raw.strip_suffix(b"\n").unwrap_or(raw)))
        .nth(k)
        .map(|(i, _)| i as u64 + 1)
}

/// Parses vertex lines (one id each) starting at line `line`.
pub(super) fn parse_vertices(
    path: &Path,
    text: &[u8],
    mut line: u64,
) -> Result<Vec<u64>, DistError> {
    let mut out = Vec::new();
    for raw in text.split_inclusive(|&b| b == b'\n') {
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        if !is_comment(body) {
            let mut cols = fields(body);
            let field = cols.next().unwrap_or_default();
            if cols.next().is_some() {
                return Err(line_error(path, line, "a vertex line holds one id", body));
            }
            out.push(parse_id(field).map_err(|r| line_error(path, line, r, field))?);
        }
        line += 1;
    }
    Ok(out)
}
