//! The text format of update batches, one operation a line, and its reader.
//!
//! ```text
//! # a comment runs to the end of its line
//! + SRC DST [WEIGHT]     insert an edge (a finite weight, for weighted graphs)
//! - SRC DST              delete an edge
//! commit                 end the batch
//! ```
//!
//! Vertex ids are integers (`u64`) or names (any other word without whitespace or `#`), as
//! [`ExternalId`] holds them. How a word is read depends on the reader's id kind
//! ([`UpdateReader::ids`]): by default each word on its own (a decimal `u64` is an integer,
//! any other word a name); under [`IdKind::Int`] every word must be a decimal integer from 0
//! to `u64::MAX` (`x7y`, `-5` and `18446744073709551616` are errors naming their line);
//! under [`IdKind::Name`] every word is a name, digits included (`5` is the vertex named
//! "5"); [`UpdateReader::ids_from_first`] takes the kind of the first word read and holds
//! to it. A data directory reads its updates under its own kind. Blank lines are skipped; the end of the input ends the last
//! batch unless it is empty, and two `commit` lines in a row make an empty batch. The reader
//! turns text into operations only: interning new ids and dropping deletes of unknown
//! vertices is the job of whoever applies a batch to a graph. Within a batch, operations
//! take effect in line order (of the operations on one edge the last wins; see
//! [`Update`](crate::graph::Update)).
//!
//! Memory is bounded whatever the input: a line may hold at most [`MAX_LINE_BYTES`]
//! bytes, and a batch at most [`DEFAULT_MAX_BATCH_OPS`] operations unless
//! [`UpdateReader::max_batch_ops`] says otherwise, and at most [`MAX_BATCH_TEXT_BYTES`] of
//! operation text; past any of them the reader stops with an error naming the line,
//! having kept at most one line and one batch. Text must be UTF-8.
//!
//! ```
//! use packgraph::io::updates::{UpdateOp, UpdateReader};
//! use packgraph::io::ExternalId;
//!
//! let text = "+ 1 2\n+ alice bob 2.5  # weighted\ncommit\n- 1 2\n";
//! let batches: Vec<_> = UpdateReader::new(text.as_bytes(), "<stdin>")
//!     .collect::<Result<_, _>>()
//!     .unwrap();
//! assert_eq!(batches.len(), 2);
//! assert_eq!(batches[0].commit_line, 3);
//! assert_eq!(batches[1].ops, [UpdateOp::Delete(ExternalId::Int(1), ExternalId::Int(2))]);
//!
//! let error = UpdateReader::new("+ 1\n".as_bytes(), "<stdin>").next().unwrap().unwrap_err();
//! assert_eq!(error.to_string(), "<stdin>:1: an insert is `+ SRC DST [WEIGHT]`: `+ 1`");
//! ```

use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use super::text::parse_weight;
use crate::error::quote;
use crate::graph::{
    name_problem, EdgeLeaf, ExternalId, Graph, GraphRead, IdKind, Update, VertexId,
};
use crate::Error;

/// One operation of an update batch, in external ids.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateOp {
    /// Insert the edge `SRC DST`, with a weight if the line gave one.
    Insert(ExternalId, ExternalId, Option<f64>),
    /// Delete the edge `SRC DST`.
    Delete(ExternalId, ExternalId),
}

/// The operations of one batch and the line that ended it.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateBatch {
    /// The operations in the order of their lines.
    pub ops: Vec<UpdateOp>,
    /// The line of each operation, counted from 1.
    pub lines: Vec<u64>,
    /// The line of the batch's `commit`, counted from 1 (the last line of the input for a
    /// batch the end of the input ended).
    pub commit_line: u64,
}

/// A line of update text that could not be read or parsed.
///
/// Converts into [`Error`]: a malformed line is [`Error::InvalidInput`] (an input error, see
/// [`Error::is_input_error`]), a failed read is [`Error::Io`].
#[derive(Debug, thiserror::Error)]
pub enum UpdatesError {
    /// A line that is not an operation, a `commit` or a comment.
    #[error("{}:{line}: {reason}: `{text}`", source_name.display())]
    Syntax {
        /// Where the text came from: a file name, or `<stdin>`.
        source_name: PathBuf,
        /// The line, counted from 1.
        line: u64,
        /// The offending text (shortened to 60 characters).
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A vertex id of the other kind than the reader's ([`UpdateReader::ids`]): a word that
    /// is no integer where vertices are integers, or a word that cannot be a name.
    #[error("{}:{line}: {reason}: `{value}`", source_name.display())]
    IdKind {
        /// Where the text came from: a file name, or `<stdin>`.
        source_name: PathBuf,
        /// The line, counted from 1.
        line: u64,
        /// The offending word (shortened to 60 characters).
        value: String,
        /// The kind the reader holds to.
        kind: IdKind,
        /// What is wrong with the word.
        reason: String,
    },
    /// The underlying reader failed (or the text is not UTF-8).
    #[error("{}:{line}: {error}", source_name.display())]
    Read {
        /// Where the text came from: a file name, or `<stdin>`.
        source_name: PathBuf,
        /// The line being read, counted from 1.
        line: u64,
        /// The reader's error.
        #[source]
        error: std::io::Error,
    },
}

impl UpdatesError {
    /// Whether the text is at fault (a malformed line) rather than the reader: the same
    /// split as [`Error::is_input_error`] after conversion.
    pub fn is_input_error(&self) -> bool {
        matches!(self, Self::Syntax { .. } | Self::IdKind { .. })
    }

    /// The line the error is on, counted from 1.
    pub fn line(&self) -> u64 {
        match self {
            Self::Syntax { line, .. } | Self::IdKind { line, .. } | Self::Read { line, .. } => {
                *line
            }
        }
    }
}

impl From<UpdatesError> for Error {
    fn from(error: UpdatesError) -> Self {
        match error {
            UpdatesError::Syntax {
                source_name,
                line,
                text,
                reason,
            } => Error::InvalidInput {
                path: Some(source_name),
                line: Some(line),
                value: Some(text),
                reason,
            },
            UpdatesError::IdKind {
                source_name,
                line,
                value,
                reason,
                ..
            } => Error::InvalidInput {
                path: Some(source_name),
                line: Some(line),
                value: Some(value),
                reason,
            },
            UpdatesError::Read {
                source_name, error, ..
            } => Error::io(&source_name, error),
        }
    }
}

/// The longest line the reader takes, in bytes (its end of line included): 1 MiB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most operations a batch may hold unless [`UpdateReader::max_batch_ops`] says
/// otherwise: a million, a few hundred bytes each while a batch is read, built and applied.
pub const DEFAULT_MAX_BATCH_OPS: usize = 1_000_000;

/// The most bytes of operation text (comments and spacing left out) a batch may hold:
/// 128 MiB, so that long names cannot make a batch of few operations large.
pub const MAX_BATCH_TEXT_BYTES: usize = 128 << 20;

/// Reads [`UpdateBatch`]es from text (the format in the [module docs](self)).
///
/// Also an [`Iterator`] of `Result<UpdateBatch, UpdatesError>`; after an error it yields
/// nothing more.
#[derive(Debug)]
pub struct UpdateReader<R> {
    reader: R,
    source_name: PathBuf,
    line: u64,
    bytes: Vec<u8>,
    max_batch_ops: usize,
    ids: IdMode,
    done: bool,
}

/// How an [`UpdateReader`] reads vertex ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdMode {
    /// Each word on its own ([`parse_id`]).
    Each,
    /// The kind of the first word read, then that kind.
    First,
    /// One kind.
    Fixed(IdKind),
}

/// An id as written: an integer if the word is one, else a name.
pub fn parse_id(text: &str) -> ExternalId {
    match text.parse::<u64>() {
        Ok(id) => ExternalId::Int(id),
        Err(_) => ExternalId::Name(text.into()),
    }
}

impl<R: BufRead> UpdateReader<R> {
    /// A reader of `reader`, whose errors name `source_name` (a file name, or `<stdin>`).
    pub fn new(reader: R, source_name: impl Into<PathBuf>) -> Self {
        Self {
            reader,
            source_name: source_name.into(),
            line: 0,
            bytes: Vec::new(),
            max_batch_ops: DEFAULT_MAX_BATCH_OPS,
            ids: IdMode::Each,
            done: false,
        }
    }

    /// Sets the most operations a batch may hold (at least 1; default
    /// [`DEFAULT_MAX_BATCH_OPS`]).
    pub fn max_batch_ops(mut self, max: usize) -> Self {
        self.max_batch_ops = max.max(1);
        self
    }

    /// Reads every vertex id as `kind` (see the [module docs](self)): a word of the other
    /// kind is an [`UpdatesError::IdKind`] naming its line.
    pub fn ids(mut self, kind: IdKind) -> Self {
        self.ids = IdMode::Fixed(kind);
        self
    }

    /// Reads every vertex id as the kind of the first one read (a decimal `u64` makes it
    /// [`IdKind::Int`], any other word [`IdKind::Name`]): for a data directory whose kind
    /// its first batch fixes.
    pub fn ids_from_first(mut self) -> Self {
        self.ids = IdMode::First;
        self
    }

    /// The kind the reader holds every vertex id to: the one given, or the one its first
    /// word fixed; `None` when it reads each word on its own or has read none yet.
    pub fn id_kind(&self) -> Option<IdKind> {
        match self.ids {
            IdMode::Fixed(kind) => Some(kind),
            IdMode::Each | IdMode::First => None,
        }
    }

    /// The name errors give the text's source.
    pub fn source_name(&self) -> &Path {
        &self.source_name
    }

    /// The last line read, counted from 1 (0 before the first).
    pub fn line(&self) -> u64 {
        self.line
    }

    /// The next batch; `None` at the end of the input. A batch may be empty (two `commit`
    /// lines in a row).
    ///
    /// # Errors
    /// [`UpdatesError::Syntax`] for a line that is not an operation, naming the source, the
    /// line and its text; [`UpdatesError::Read`] if the reader fails. The batch the error
    /// interrupts is lost, and later calls return `None`.
    pub fn next_batch(&mut self) -> Result<Option<UpdateBatch>, UpdatesError> {
        if self.done {
            return Ok(None);
        }
        let result = self.read_batch();
        if !matches!(result, Ok(Some(_))) {
            self.done = true;
        }
        result
    }

    fn read_batch(&mut self) -> Result<Option<UpdateBatch>, UpdatesError> {
        let mut batch = UpdateBatch {
            ops: Vec::new(),
            lines: Vec::new(),
            commit_line: 0,
        };
        let mut text_bytes = 0;
        loop {
            if !self.read_line()? {
                batch.commit_line = self.line;
                return Ok((!batch.ops.is_empty()).then_some(batch));
            }
            self.line += 1;
            let text = std::str::from_utf8(&self.bytes).map_err(|e| {
                let valid = &self.bytes[..e.valid_up_to()];
                self.syntax(
                    &String::from_utf8_lossy(valid),
                    "bytes that are not UTF-8 follow",
                )
            })?;
            let content = text.split('#').next().unwrap_or("").trim();
            match parse_line(content, &mut self.ids) {
                Ok(Line::Commit) => {
                    batch.commit_line = self.line;
                    return Ok(Some(batch));
                }
                Ok(Line::Blank) => {}
                Ok(Line::Op(_)) if batch.ops.len() >= self.max_batch_ops => {
                    let reason = format!(
                        "a batch holds at most {} operations: end it with `commit` sooner",
                        self.max_batch_ops
                    );
                    return Err(self.syntax(content, &reason));
                }
                Ok(Line::Op(_)) if text_bytes + content.len() > MAX_BATCH_TEXT_BYTES => {
                    let reason = format!(
                        "a batch holds at most {MAX_BATCH_TEXT_BYTES} bytes of operations: end it with `commit` sooner"
                    );
                    return Err(self.syntax(content, &reason));
                }
                Ok(Line::Op(op)) => {
                    text_bytes += content.len();
                    batch.ops.push(op);
                    batch.lines.push(self.line);
                }
                Err(Bad::Syntax(text, reason)) => return Err(self.syntax(text, reason)),
                Err(Bad::Kind(word, kind, reason)) => {
                    return Err(UpdatesError::IdKind {
                        source_name: self.source_name.clone(),
                        line: self.line,
                        value: quote(word),
                        kind,
                        reason: reason.to_owned(),
                    })
                }
            }
        }
    }

    /// Reads the next line into `self.bytes`, at most [`MAX_LINE_BYTES`] of it; false at
    /// the end of the input.
    fn read_line(&mut self) -> Result<bool, UpdatesError> {
        self.bytes.clear();
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(error) => {
                    return Err(UpdatesError::Read {
                        source_name: self.source_name.clone(),
                        line: self.line + 1,
                        error,
                    })
                }
            };
            if buf.is_empty() {
                return Ok(!self.bytes.is_empty());
            }
            let (take, end) = match memchr::memchr(b'\n', buf) {
                Some(at) => (at + 1, true),
                None => (buf.len(), false),
            };
            if self.bytes.len() + take > MAX_LINE_BYTES {
                let kept = self.bytes.len().min(60);
                let start = String::from_utf8_lossy(&self.bytes[..kept]).into_owned();
                self.line += 1;
                let reason =
                    format!("a line may hold at most {MAX_LINE_BYTES} bytes; this one starts");
                return Err(self.syntax(&start, &reason));
            }
            self.bytes.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if end {
                return Ok(true);
            }
        }
    }

    /// A syntax error on the current line.
    fn syntax(&self, text: &str, reason: &str) -> UpdatesError {
        UpdatesError::Syntax {
            source_name: self.source_name.clone(),
            line: self.line,
            text: quote(text),
            reason: reason.to_owned(),
        }
    }
}

impl<R: BufRead> Iterator for UpdateReader<R> {
    type Item = Result<UpdateBatch, UpdatesError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().transpose()
    }
}

/// What a line holds.
enum Line {
    Blank,
    Commit,
    Op(UpdateOp),
}

/// What is wrong with a line: its offending text and why.
enum Bad<'a> {
    /// Not an operation.
    Syntax(&'a str, &'static str),
    /// A vertex id of the other kind than the reader holds to.
    Kind(&'a str, IdKind, &'static str),
}

/// The id `word` means under `mode`; under [`IdMode::First`] the first word fixes the kind.
fn read_id<'a>(word: &'a str, mode: &mut IdMode) -> Result<ExternalId, Bad<'a>> {
    let kind = match *mode {
        IdMode::Each => return Ok(parse_id(word)),
        IdMode::Fixed(kind) => kind,
        IdMode::First => {
            let kind = match IdKind::Int.parse(word) {
                Some(_) => IdKind::Int,
                None => IdKind::Name,
            };
            *mode = IdMode::Fixed(kind);
            kind
        }
    };
    match kind.parse(word) {
        None => Err(Bad::Kind(
            word,
            kind,
            "not an integer vertex id (this graph's vertices are integers, 0 to 18446744073709551615)",
        )),
        Some(ExternalId::Name(name)) => match name_problem(&name) {
            Some(reason) => Err(Bad::Kind(word, kind, reason)),
            None => Ok(ExternalId::Name(name)),
        },
        Some(id) => Ok(id),
    }
}

/// Parses one line, its comment removed, reading vertex ids under `ids`.
fn parse_line<'a>(content: &'a str, ids: &mut IdMode) -> Result<Line, Bad<'a>> {
    let mut fields = content.split_whitespace();
    let Some(kind) = fields.next() else {
        return Ok(Line::Blank);
    };
    let fields: Vec<&str> = fields.collect();
    let syntax = |reason| Err(Bad::Syntax(content, reason));
    let op = match (kind, &fields[..]) {
        ("commit", []) => return Ok(Line::Commit),
        ("commit", _) => return syntax("`commit` takes nothing after it"),
        ("+", [u, v]) => UpdateOp::Insert(read_id(u, ids)?, read_id(v, ids)?, None),
        ("+", [u, v, w]) => {
            let (u, v) = (read_id(u, ids)?, read_id(v, ids)?);
            let weight = parse_weight(w.as_bytes()).map_err(|reason| Bad::Syntax(w, reason))?;
            UpdateOp::Insert(u, v, Some(weight))
        }
        ("+", _) => return syntax("an insert is `+ SRC DST [WEIGHT]`"),
        ("-", [u, v]) => UpdateOp::Delete(read_id(u, ids)?, read_id(v, ids)?),
        ("-", _) => return syntax("a delete is `- SRC DST`"),
        _ => {
            return syntax("expected `+ SRC DST [WEIGHT]`, `- SRC DST`, `commit` or a `#` comment")
        }
    };
    Ok(Line::Op(op))
}

/// An operation of a batch that does not fit the graph: its index in the batch, the
/// offending value and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub struct UnfitOp {
    /// The operation's index in the batch.
    pub op: usize,
    /// The offending value, as text.
    pub value: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// The update of `ops` against graph `g`, its operations in line order: new vertices
/// interned in order of first appearance in inserts, deletes of ids that neither the graph
/// nor an insert of the batch knows dropped (they name no edge). Every writer of batches
/// in external ids (`packgraph ingest`, `packgraph serve`) builds its updates here.
///
/// # Errors
/// [`UnfitOp`] for a weight given to an unweighted graph (`weighted` false).
pub fn build_update<C: EdgeLeaf>(
    g: &Graph<C>,
    ops: &[UpdateOp],
    weighted: bool,
) -> Result<Update, UnfitOp> {
    let mut ids = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        if let UpdateOp::Insert(u, v, w) = op {
            if let (Some(w), false) = (w, weighted) {
                return Err(UnfitOp {
                    op: i,
                    value: w.to_string(),
                    reason: "a weight given to an unweighted graph (create the directory with --weighted)",
                });
            }
            ids.push(u.clone());
            ids.push(v.clone());
        }
    }
    let planned = g.plan_vertices(&ids);
    // The internal ids of this batch's new vertices, for deletes that name them.
    let fresh: HashMap<&ExternalId, VertexId> = ids
        .iter()
        .zip(&planned)
        .filter(|&(_, &v)| v as usize >= g.num_vertices())
        .map(|(id, &v)| (id, v))
        .collect();
    let find = |id: &ExternalId| g.ids().internal_id(id).or_else(|| fresh.get(id).copied());
    let mut update = Update::new();
    let mut next = planned.chunks_exact(2);
    let is_insert = |op: &UpdateOp| matches!(op, UpdateOp::Insert(..));
    for run in ops.chunk_by(|a, b| is_insert(a) == is_insert(b)) {
        if let UpdateOp::Delete(..) = run[0] {
            let deletes: Vec<(VertexId, VertexId)> = run
                .iter()
                .filter_map(|op| match op {
                    UpdateOp::Delete(u, v) => Some((find(u)?, find(v)?)),
                    UpdateOp::Insert(..) => None,
                })
                .collect();
            update.delete_edges(&deletes);
            continue;
        }
        let inserts: Vec<(VertexId, VertexId, f64)> = run
            .iter()
            .filter_map(|op| match op {
                UpdateOp::Insert(_, _, w) => Some(w.unwrap_or(1.0)),
                UpdateOp::Delete(..) => None,
            })
            .zip(next.by_ref())
            .map(|(w, pair)| (pair[0], pair[1], w))
            .collect();
        if weighted {
            update.insert_weighted_edges(&inserts);
        } else {
            let pairs: Vec<(VertexId, VertexId)> = inserts.iter().map(|e| (e.0, e.1)).collect();
            update.insert_edges(&pairs);
        }
    }
    update.add_vertices(ids);
    Ok(update)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn batches(text: &str) -> Result<Vec<UpdateBatch>, UpdatesError> {
        UpdateReader::new(text.as_bytes(), "updates.txt").collect()
    }

    fn batch(ops: Vec<UpdateOp>, lines: Vec<u64>, commit_line: u64) -> UpdateBatch {
        UpdateBatch {
            ops,
            lines,
            commit_line,
        }
    }

    #[test]
    fn batches_end_at_commit_and_at_the_end() {
        let text = "# header\n+ 1 2\n+ alice bob 2.5  # a comment\ncommit\n\n- 1 2\ncommit\ncommit\n+ 3 4\n";
        let got = batches(text).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(
            got[0],
            batch(
                vec![
                    UpdateOp::Insert(ExternalId::Int(1), ExternalId::Int(2), None),
                    UpdateOp::Insert("alice".into(), "bob".into(), Some(2.5)),
                ],
                vec![2, 3],
                4
            )
        );
        assert_eq!(
            got[1],
            batch(
                vec![UpdateOp::Delete(ExternalId::Int(1), ExternalId::Int(2))],
                vec![6],
                7
            )
        );
        assert_eq!(got[2], batch(vec![], vec![], 8));
        assert_eq!(got[3].commit_line, 9);
    }

    #[test]
    fn bad_lines_name_file_line_and_text() {
        for (text, line, what, quoted) in [
            ("+ 1 2\n+ 1\n", 2, "an insert is", "+ 1"),
            ("+ 1 2 x\n", 1, "not a number", "x"),
            ("+ 1 2 inf\n", 1, "finite", "inf"),
            ("commit\n- 1 2 3\n", 2, "a delete is", "- 1 2 3"),
            ("* 1 2\n", 1, "expected", "* 1 2"),
            ("commit now\n", 1, "takes nothing", "commit now"),
        ] {
            let err = batches(text).unwrap_err();
            assert!(err.is_input_error());
            assert_eq!(err.line(), line);
            let message = err.to_string();
            assert!(
                message.starts_with(&format!("updates.txt:{line}: ")),
                "{text:?}: {message}"
            );
            assert!(message.contains(what), "{text:?}: {message}");
            assert!(
                message.ends_with(&format!("`{quoted}`")),
                "{text:?}: {message}"
            );
            let err = Error::from(err);
            assert!(err.is_input_error());
            assert_eq!(err.line(), Some(line));
            assert_eq!(err.to_string(), message);
        }
    }

    #[test]
    fn a_fixed_id_kind_refuses_words_of_the_other_kind_at_their_line() {
        let read = |text: &str, kind: IdKind| -> Result<Vec<UpdateBatch>, UpdatesError> {
            UpdateReader::new(text.as_bytes(), "u.txt")
                .ids(kind)
                .collect()
        };
        let int = |x| ExternalId::Int(x);
        let got = read("+ 0 18446744073709551615\n- 007 1\n", IdKind::Int).unwrap();
        assert_eq!(
            got[0].ops,
            [
                UpdateOp::Insert(int(0), int(u64::MAX), None),
                UpdateOp::Delete(int(7), int(1))
            ]
        );
        for (text, line, value) in [
            ("+ 1 2\n+ 5 x7y\n", 2, "x7y"),
            ("- -5 1\n", 1, "-5"),
            ("+ 18446744073709551616 1\n", 1, "18446744073709551616"),
            ("+ +5 1\n", 1, "+5"),
            ("+ 1 2 1.5\n+ 1e3 2\n", 2, "1e3"),
        ] {
            let err = read(text, IdKind::Int).unwrap_err();
            assert!(err.is_input_error());
            assert_eq!(err.line(), line);
            assert!(
                matches!(&err, UpdatesError::IdKind { kind: IdKind::Int, value: v, .. } if v == value),
                "{text:?}: {err}"
            );
            assert!(
                err.to_string()
                    .starts_with(&format!("u.txt:{line}: not an integer vertex id")),
                "{err}"
            );
            assert_eq!(Error::from(err).line(), Some(line));
        }
        // Under names every word is a name, digits included.
        let got = read("+ 5 x7y\n- -5 007\n", IdKind::Name).unwrap();
        assert_eq!(
            got[0].ops,
            [
                UpdateOp::Insert("5".into(), "x7y".into(), None),
                UpdateOp::Delete("-5".into(), "007".into())
            ]
        );
        let err = read("+ a b\n+ a\u{1}b c\n", IdKind::Name).unwrap_err();
        assert_eq!(err.line(), 2);
        assert!(err.to_string().contains("control characters"), "{err}");
    }

    #[test]
    fn the_first_word_fixes_the_kind() {
        let mut reader =
            UpdateReader::new("+ 5 6\ncommit\n+ 7 x7y\n".as_bytes(), "u.txt").ids_from_first();
        assert_eq!(reader.id_kind(), None);
        assert!(reader.next().unwrap().is_ok());
        assert_eq!(reader.id_kind(), Some(IdKind::Int));
        assert_eq!(reader.next().unwrap().unwrap_err().line(), 3);
        let mut reader = UpdateReader::new("+ alice 5\n".as_bytes(), "u.txt").ids_from_first();
        let batch = reader.next().unwrap().unwrap();
        assert_eq!(
            batch.ops,
            [UpdateOp::Insert("alice".into(), "5".into(), None)]
        );
        assert_eq!(reader.id_kind(), Some(IdKind::Name));
        // The default reads each word on its own.
        let batch = UpdateReader::new("+ alice 5\n".as_bytes(), "u.txt")
            .next()
            .unwrap()
            .unwrap();
        assert_eq!(
            batch.ops,
            [UpdateOp::Insert("alice".into(), ExternalId::Int(5), None)]
        );
    }

    #[test]
    fn nothing_follows_an_error() {
        let mut reader = UpdateReader::new("+ 1\n+ 2 3\ncommit\n".as_bytes(), "<stdin>");
        assert!(reader.next().unwrap().is_err());
        assert!(reader.next().is_none());
    }

    #[test]
    fn text_that_is_not_utf8_is_an_input_error_naming_its_line() {
        let bytes: &[u8] = b"+ 1 2\n+ 2 \xff\n";
        let err = UpdateReader::new(bytes, "u.txt")
            .next()
            .unwrap()
            .unwrap_err();
        assert!(err.is_input_error());
        assert_eq!(err.line(), 2);
        assert_eq!(
            err.to_string(),
            "u.txt:2: bytes that are not UTF-8 follow: `+ 2 `"
        );
        assert!(Error::from(err).is_input_error());
    }

    #[test]
    fn read_failures_are_not_input_errors() {
        struct Failing;
        impl std::io::Read for Failing {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                Err(std::io::Error::other("disk on fire"))
            }
        }
        let err = UpdateReader::new(std::io::BufReader::new(Failing), "u.txt")
            .next()
            .unwrap()
            .unwrap_err();
        assert!(!err.is_input_error());
        assert_eq!(err.line(), 1);
        assert!(!Error::from(err).is_input_error());
    }

    #[test]
    fn an_endless_line_stops_at_the_limit() {
        // An endless source of one line: the reader must stop, not grow without end.
        let endless = std::io::BufReader::new(std::io::repeat(b'x'));
        let mut reader = UpdateReader::new(endless, "/dev/zero");
        let err = reader.next().unwrap().unwrap_err();
        assert!(err.is_input_error());
        assert_eq!(err.line(), 1);
        let message = err.to_string();
        assert!(
            message.starts_with("/dev/zero:1: a line may hold at most 1048576 bytes"),
            "{message}"
        );
        assert!(reader.bytes.capacity() <= 2 * MAX_LINE_BYTES);
        assert!(reader.next().is_none());
        // A line of exactly the limit is read.
        let mut text = "+ 1 2".to_string();
        text.push_str(&" ".repeat(MAX_LINE_BYTES - text.len() - 1));
        text.push('\n');
        assert_eq!(batches(&text).unwrap().len(), 1);
        text.insert(0, ' ');
        assert!(batches(&text).is_err());
    }

    #[test]
    fn a_batch_past_the_limit_names_the_operation_that_passes_it() {
        let text = "+ 1 2\n- 1 2\ncommit\n+ 1 2\n# note\n+ 2 3\n+ 3 4\n";
        let mut reader = UpdateReader::new(text.as_bytes(), "u.txt").max_batch_ops(2);
        assert_eq!(reader.next().unwrap().unwrap().ops.len(), 2);
        let err = reader.next().unwrap().unwrap_err();
        assert!(err.is_input_error());
        assert_eq!(err.line(), 7);
        assert_eq!(
            err.to_string(),
            "u.txt:7: a batch holds at most 2 operations: end it with `commit` sooner: `+ 3 4`"
        );
    }

    /// Words that read back as the same [`ExternalId`]: integers, and names that are not
    /// integers and hold no whitespace or `#`.
    fn id() -> impl Strategy<Value = ExternalId> {
        prop_oneof![
            any::<u64>().prop_map(ExternalId::Int),
            "[a-zA-Z_][a-zA-Z0-9_.-]{0,8}".prop_map(|name| ExternalId::Name(name.into())),
        ]
    }

    fn op() -> impl Strategy<Value = UpdateOp> {
        let weight = prop_oneof![Just(None), (-1e12..1e12f64).prop_map(Some)];
        prop_oneof![
            (id(), id(), weight).prop_map(|(u, v, w)| UpdateOp::Insert(u, v, w)),
            (id(), id()).prop_map(|(u, v)| UpdateOp::Delete(u, v)),
        ]
    }

    /// `ops` written one a line, with comments, blank lines and spacing the reader skips.
    fn format(batches: &[Vec<UpdateOp>], noise: &[u8]) -> String {
        let mut text = String::new();
        let mut noise = noise.iter().cycle();
        for ops in batches {
            for op in ops {
                match noise.next().copied().unwrap_or(0) % 4 {
                    1 => text.push_str("# a comment line\n"),
                    2 => text.push_str("\n  \t\n"),
                    _ => {}
                }
                match op {
                    UpdateOp::Insert(u, v, None) => {
                        text.push_str(&format!("+ {} {}", word(u), word(v)))
                    }
                    UpdateOp::Insert(u, v, Some(w)) => {
                        text.push_str(&format!("+\t{}  {} {w}", word(u), word(v)));
                    }
                    UpdateOp::Delete(u, v) => text.push_str(&format!("- {} {}", word(u), word(v))),
                }
                text.push_str(if noise.next().copied().unwrap_or(0) % 3 == 0 {
                    "   # trailing\n"
                } else {
                    "\n"
                });
            }
            text.push_str("commit\n");
        }
        text
    }

    fn word(id: &ExternalId) -> String {
        match id {
            ExternalId::Int(id) => id.to_string(),
            ExternalId::Name(name) => name.to_string(),
        }
    }

    proptest! {
        #[test]
        fn formatted_batches_read_back_equal(
            expected in prop::collection::vec(prop::collection::vec(op(), 0..6), 0..6),
            noise in prop::collection::vec(any::<u8>(), 1..16),
        ) {
            let text = format(&expected, &noise);
            let got = batches(&text).unwrap();
            let ops: Vec<Vec<UpdateOp>> = got.iter().map(|b| b.ops.clone()).collect();
            prop_assert_eq!(ops, expected);
            // Each batch ends on its own `commit` line.
            let lines: Vec<&str> = text.lines().collect();
            for b in &got {
                prop_assert_eq!(lines[b.commit_line as usize - 1], "commit");
                prop_assert_eq!(b.lines.len(), b.ops.len());
                for &line in &b.lines {
                    prop_assert!(lines[line as usize - 1].trim_start().starts_with(['+', '-']));
                }
            }
        }
    }

    #[test]
    fn updates_intern_new_ids_and_drop_deletes_of_unknown_ones() {
        let mut g = Graph::new(false);
        g.apply(Update::new().add_vertices([10u64, 20])).unwrap();
        let ops = vec![
            UpdateOp::Insert(ExternalId::Int(10), "x".into(), None),
            UpdateOp::Delete(ExternalId::Int(10), "nobody".into()),
            UpdateOp::Delete(ExternalId::Int(10), ExternalId::Int(20)),
        ];
        let update = build_update(&g, &ops, false).unwrap();
        assert_eq!(update.inserts(), [(0, 2)]);
        assert_eq!(update.deletes(), [(0, 1)]);
        g.apply(&update).unwrap();
        assert_eq!(g.ids().internal_id(&"x".into()), Some(2));
        let weighted = vec![UpdateOp::Insert(
            ExternalId::Int(1),
            ExternalId::Int(2),
            Some(3.0),
        )];
        assert_eq!(
            build_update(&g, &weighted, false),
            Err(UnfitOp {
                op: 0,
                value: "3".into(),
                reason:
                    "a weight given to an unweighted graph (create the directory with --weighted)",
            })
        );
    }

    #[test]
    fn deletes_of_ids_an_earlier_insert_added_keep_their_place() {
        let g: Graph = Graph::new(false);
        let ops = vec![
            UpdateOp::Insert("a".into(), "b".into(), None),
            UpdateOp::Delete("b".into(), "a".into()),
            UpdateOp::Insert("a".into(), "c".into(), None),
        ];
        let update = build_update(&g, &ops, false).unwrap();
        assert_eq!(update.deletes(), [(1, 0)]);
        assert_eq!(update.deletes_after().collect::<Vec<_>>(), [1]);
        let mut g = g;
        g.apply(&update).unwrap();
        assert_eq!(g.num_edges(), 1);
    }
}
