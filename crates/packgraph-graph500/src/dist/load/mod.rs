//! Loading a graph file in parallel: each process reads its byte range of the file (the
//! lines whose first byte falls in it), parses them, numbers the vertices through the
//! distributed dictionary and sends every edge to the owners of its endpoints.
//!
//! Inputs: an edge list (`u v` or `u v weight` a line, fields separated by blanks or commas,
//! `#` and `%` comment lines, integer ids) or a Graphalytics dataset (`NAME.v` and `NAME.e`,
//! named by either file or their prefix; `graph.NAME.directed` of `NAME.properties` sets the
//! direction unless `--directed` is given). A snapshot (`.pgb`) or a data directory is read
//! whole by every process with the core's reader, which keeps its share (see `stored`).
//! Compressed files and the other formats of `packgraph run` are refused with a message.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use packgraph::graph::{Graph, VertexId, MAX_VERTICES};
use packgraph::io::graphalytics::Files;
use rayon::prelude::*;

use super::{agree, alltoall_u64, owner_of_id, DistError, IntMap, Part, Store};
use crate::comm::{Comm, Group};

/// What to load.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// The edge list, or a Graphalytics dataset's `.v`/`.e` file or prefix.
    pub path: PathBuf,
    /// Edges are directed; `None`: the dataset's properties say, else undirected.
    pub directed: Option<bool>,
    /// Require a weight column.
    pub weighted: bool,
}

/// Bytes read at a time past a range's end, looking for the end of its last line.
const TAIL_READ: usize = 1 << 16;

/// The lines of `path` whose first byte lies in this process's share of the file: the text
/// and its offset in the file.
pub fn read_range(path: &Path, rank: usize, size: usize) -> std::io::Result<(Vec<u8>, u64)> {
    let mut file = File::open(path)?;
    let len = file.metadata()?.len();
    let share = |k: usize| (u128::from(len) * k as u128 / size as u128) as u64;
    let (start, end) = (share(rank), share(rank + 1));
    // Read from one byte before the range, to see whether a line starts at `start`.
    let from = start.saturating_sub(1);
    file.seek(SeekFrom::Start(from))?;
    let mut text = vec![0u8; (end - from) as usize];
    file.read_exact(&mut text)?;
    let first = if start == 0 {
        0
    } else {
        match memchr::memchr(b'\n', &text) {
            Some(k) => k + 1,
            None => return Ok((Vec::new(), end)),
        }
    };
    if first >= text.len() {
        return Ok((Vec::new(), from + first as u64));
    }
    // The last line may run past the range: read on to its newline (or the end).
    if end < len && text.last() != Some(&b'\n') {
        let mut chunk = vec![0u8; TAIL_READ];
        loop {
            let got = file.read(&mut chunk)?;
            if got == 0 {
                break;
            }
            if let Some(k) = memchr::memchr(b'\n', &chunk[..got]) {
                text.extend_from_slice(&chunk[..=k]);
                break;
            }
            text.extend_from_slice(&chunk[..got]);
        }
    }
    text.drain(..first);
    Ok((text, from + first as u64))
}

/// The number of the first line of this process's text (1-based), from the `newlines` of
/// the processes before it. A collective.
///
/// Also whether a process before this one has a data line (`data`: whether this one has).
fn first_line(comm: &dyn Comm, newlines: u64, data: bool) -> (u64, bool) {
    let message = crate::comm::u64s_to_bytes(&[newlines, u64::from(data)]);
    let all = comm.allgather(Group::World, &message);
    let before: Vec<Vec<u64>> = (0..comm.rank())
        .map(|k| crate::comm::bytes_to_u64s(all.part(k)))
        .collect();
    let lines: u64 = before.iter().map(|w| w.first().copied().unwrap_or(0)).sum();
    let data_before = before.iter().any(|w| w.get(1).copied().unwrap_or(0) != 0);
    (lines + 1, data_before)
}

mod parse;
mod stored;
pub use parse::line_error;
use parse::*;
pub(crate) use stored::source_key;
use stored::{load_stored, Stored};

/// Edges parsed from one process's lines, in file order, piece after piece.
#[derive(Debug, Default)]
struct Parsed {
    pieces: Vec<Piece>,
    /// Columns of the lines (0: no data line).
    columns: usize,
    /// The first line with data, for a column mismatch between processes.
    first_data_line: u64,
    /// Vertices named by `# isolated vertices:` lines before this process's first data
    /// line.
    isolated: Vec<u64>,
}

impl Parsed {
    fn edges(&self) -> usize {
        self.pieces.iter().map(|p| p.edges.len()).sum()
    }

    /// Numbers the pieces' lines from `line` and returns the first error of the lines in
    /// file order: a bad line, or a line whose columns differ from the lines before it.
    /// `data_before`: an earlier process has a data line, so none of these lines is in the
    /// file's head.
    fn settle(&mut self, path: &Path, mut line: u64, data_before: bool) -> Result<(), DistError> {
        for piece in &mut self.pieces {
            piece.first_line = line;
            let in_head = !data_before && self.columns == 0;
            if let Some(bad) = piece.bad_head.as_ref().filter(|_| in_head) {
                return Err(line_error(
                    path,
                    line + bad.line - 1,
                    bad.reason,
                    &bad.value,
                ));
            }
            let (first, text) = &piece.first_data;
            if piece.columns != 0 && self.columns != 0 && piece.columns != self.columns {
                let reason = column_change(piece.columns);
                return Err(line_error(path, line + first - 1, reason, text));
            }
            if let Some(bad) = &piece.bad {
                return Err(line_error(
                    path,
                    line + bad.line - 1,
                    bad.reason,
                    &bad.value,
                ));
            }
            if in_head {
                self.isolated.append(&mut piece.isolated);
                if piece.columns != 0 {
                    self.columns = piece.columns;
                    self.first_data_line = line + first - 1;
                }
            }
            line += piece.newlines;
        }
        Ok(())
    }
}

/// Reads this process's share of `path`: its text, checked not to be gzip, and the file's
/// number of its first line. A collective.
fn read_text(comm: &dyn Comm, path: &Path) -> Result<(Vec<u8>, u64), DistError> {
    let read = read_range(path, comm.rank(), comm.size())
        .map_err(|e| DistError::Usage(format!("{}: {e}", path.display())));
    let (text, offset) = agree(comm, read)?;
    // A gzip file starts with its magic bytes, which rank 0 reads.
    let plain = if comm.rank() == 0 && text.starts_with(&[0x1f, 0x8b]) {
        Err(DistError::Usage(format!(
            "{}: a gzip file; packgraph-dist reads plain text (decompress it first)",
            path.display()
        )))
    } else {
        Ok(())
    };
    agree(comm, plain)?;
    Ok((text, offset))
}

/// Parses `text` (at `offset` in its file) in pieces of about `piece_bytes`, on all threads.
fn parse_pieces(text: &[u8], offset: u64, piece_bytes: usize) -> Vec<Piece> {
    split_pieces(text, piece_bytes)
        .par_iter()
        .map(|r| {
            let mut piece = parse_piece(&text[r.clone()], offset + r.start as u64 == 0);
            piece.bytes = offset + r.start as u64..offset + r.end as u64;
            piece
        })
        .collect()
}

/// Reads and parses this process's share of an edge list, in pieces on all threads. A
/// collective.
fn read_edges(comm: &dyn Comm, path: &Path) -> Result<Parsed, DistError> {
    let (text, offset) = read_text(comm, path)?;
    let pieces = parse_pieces(&text, offset, PIECE_BYTES);
    drop(text);
    let newlines: u64 = pieces.iter().map(|p| p.newlines).sum();
    let data = pieces.iter().any(|p| p.columns != 0);
    let (line, data_before) = first_line(comm, newlines, data);
    let mut parsed = Parsed {
        pieces,
        ..Parsed::default()
    };
    let settled = parsed.settle(path, line, data_before);
    agree(comm, settled)?;
    Ok(parsed)
}

/// Reads and parses this process's share of a vertex file. A collective.
fn read_vertices(comm: &dyn Comm, path: &Path) -> Result<Vec<u64>, DistError> {
    let (text, _) = read_text(comm, path)?;
    let newlines = memchr::memchr_iter(b'\n', &text).count() as u64;
    let (line, _) = first_line(comm, newlines, false);
    agree(comm, parse_vertices(path, &text, line))
}

/// `graph.NAME.directed` of a dataset's properties file, if it says.
fn directed_property(files: &Files) -> Result<Option<bool>, DistError> {
    let text = match std::fs::read_to_string(&files.properties) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            let e = format!("{}: {e}", files.properties.display());
            return Err(DistError::Usage(e));
        }
    };
    let name = files.vertices.file_stem().unwrap_or_default();
    let key = format!("graph.{}.directed", name.to_string_lossy());
    for (i, line) in text.lines().enumerate() {
        if let Some((k, value)) = line.split_once('=') {
            if k.trim() == key {
                return match value.trim() {
                    "true" => Ok(Some(true)),
                    "false" => Ok(Some(false)),
                    other => Err(line_error(
                        &files.properties,
                        i as u64 + 1,
                        &format!("{key} must be true or false"),
                        other.as_bytes(),
                    )),
                };
            }
        }
    }
    Ok(None)
}

/// Loads the graph of `options`: every process returns its part. A collective.
///
/// A snapshot or data directory: see [`stored`]. Otherwise each process parses its byte range in pieces on its threads, finds the distinct
/// endpoints of its edges (a bitmap over their range when the ids are dense enough, a
/// parallel sort otherwise), asks the dictionary once for their dense ids, and sends each
/// edge, 8 bytes (16 with a weight), to the owners of its endpoints; the owners receive the
/// edges in file order and build their stores in one batch.
///
/// # Errors
/// [`DistError::Usage`] on every process for a file that cannot be read, a malformed line
/// in any process's range (naming file and line), an edge endpoint missing from a
/// dataset's vertex file, a vertex listed twice, `--weighted` without weights or an empty
/// graph; [`DistError::Failed`] past 2^32 − 1 vertex slots.
pub fn load(comm: &dyn Comm, options: &LoadOptions) -> Result<Part, DistError> {
    if let Some(kind) = Stored::agreed(comm, &options.path)? {
        return load_stored(comm, options, kind);
    }
    let dataset = agree(comm, Ok(Files::find(&options.path)))?;
    let (edge_path, directed) = match &dataset {
        Some(files) => {
            let property = agree(comm, directed_property(files))?;
            let directed = options.directed.or(property).unwrap_or(false);
            (files.edges.clone(), directed)
        }
        None => (options.path.clone(), options.directed.unwrap_or(false)),
    };
    let vertex_list = match &dataset {
        Some(files) => Some(read_vertices(comm, &files.vertices)?),
        None => None,
    };
    let mut parsed = read_edges(comm, &edge_path)?;
    let (columns, declared) = head(comm, &edge_path, &mut parsed)?;
    // A packgraph header's direction applies unless the caller says one.
    let directed = match (&dataset, options.directed, declared) {
        (None, None, Some((_, declared))) => declared,
        _ => directed,
    };
    let weighted = columns == 3;
    if options.weighted && !weighted {
        let e = format!("--weighted: {} has no edge weights", options.path.display());
        return Err(DistError::Usage(e));
    }
    let ends = endpoints(&parsed);
    let distinct = ends.values();
    let ids = match (&vertex_list, &dataset) {
        (Some(list), Some(files)) => dictionary(comm, list, Some(&files.vertices))?,
        _ if parsed.isolated.is_empty() => dictionary(comm, &distinct, None)?,
        _ => {
            let named: Vec<u64> = distinct.iter().chain(&parsed.isolated).copied().collect();
            dictionary(comm, &named, None)?
        }
    };
    let mut part = empty_part(comm, ids, directed, weighted)?;
    if part.num_vertices == 0 {
        let e = format!("{} has no vertices", options.path.display());
        return Err(DistError::Usage(e));
    }
    if let Some((n, _)) = declared.filter(|&(n, _)| n != part.num_vertices as u64) {
        return Err(DistError::Usage(format!(
            "{}: the first line declares {n} vertices but the file names {} (edge endpoints and `# isolated vertices:` lines); correct or delete that line",
            edge_path.display(),
            part.num_vertices
        )));
    }
    let dense = resolve(comm, &part, &distinct);
    drop(distinct);
    let records = route(comm, &part, &parsed, &ends, &dense, &edge_path)?;
    drop(parsed);
    build(comm, &mut part, records)?;
    Ok(part)
}

/// What the processes agree on from the lines they read: the column count (0 without data
/// lines) and what a packgraph header on the file's first line declares (vertices and
/// direction). A collective.
///
/// # Errors
/// A column count that differs from the earlier processes', naming the first line of the
/// first process that disagrees.
fn head(
    comm: &dyn Comm,
    path: &Path,
    parsed: &mut Parsed,
) -> Result<(usize, Option<(u64, bool)>), DistError> {
    let declared = parsed.pieces.first().and_then(|p| p.declared);
    let mut message = vec![parsed.columns as u64, 0, 0];
    if let (0, Some((n, directed))) = (comm.rank(), declared) {
        message[1] = 1 + u64::from(directed);
        message[2] = n;
    }
    let all = comm.allgather(Group::World, &crate::comm::u64s_to_bytes(&message));
    let words: Vec<Vec<u64>> = (0..all.parts())
        .map(|k| crate::comm::bytes_to_u64s(all.part(k)))
        .collect();
    let word = |k: usize, i: usize| words[k].get(i).copied().unwrap_or(0);
    let cols: Vec<u64> = (0..words.len()).map(|k| word(k, 0)).collect();
    let declared = match word(0, 1) {
        0 => None,
        d => Some((word(0, 2), d == 2)),
    };
    let first = cols.iter().copied().find(|&c| c != 0).unwrap_or(0);
    let bad = cols.iter().position(|&c| c != 0 && c != first);
    let outcome = match bad {
        Some(k) if k == comm.rank() => Err(DistError::Usage(format!(
            "{}:{}: {} columns, but earlier lines have {first}",
            path.display(),
            parsed.first_data_line,
            parsed.columns
        ))),
        _ => Ok((first as usize, declared)),
    };
    agree(comm, outcome)
}

/// The distributed dictionary: each id goes to its owner, which keeps its ids sorted.
/// `vertex_file`: the ids are a vertex list, where an id listed twice is an error.
/// Returns this process's ids in local-index order. A collective.
fn dictionary(
    comm: &dyn Comm,
    ids: &[u64],
    vertex_file: Option<&Path>,
) -> Result<Vec<u64>, DistError> {
    let size = comm.size();
    let mut parts = vec![Vec::new(); size];
    for &x in ids {
        parts[owner_of_id(x, size)].push(x);
    }
    if vertex_file.is_none() {
        for p in &mut parts {
            p.sort_unstable();
            p.dedup();
        }
    }
    let mut mine: Vec<u64> = alltoall_u64(comm, parts).concat();
    mine.sort_unstable();
    let before = mine.len();
    let duplicate = mine.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]);
    mine.dedup();
    let outcome = match (vertex_file, duplicate) {
        (Some(path), Some(id)) if before != mine.len() => Err(DistError::Usage(format!(
            "{}: vertex {id} is listed twice",
            path.display()
        ))),
        _ => Ok(mine),
    };
    agree(comm, outcome)
}

/// A part with the owned ids `ids` and no edges. A collective.
fn empty_part(
    comm: &dyn Comm,
    ids: Vec<u64>,
    directed: bool,
    weighted: bool,
) -> Result<Part, DistError> {
    let size = comm.size();
    let mut counts = [ids.len() as u64];
    comm.allreduce_max(Group::World, &mut counts);
    let mut total = [ids.len() as u64];
    comm.allreduce_sum(Group::World, &mut total);
    let slots = counts[0] as usize * size;
    if slots > MAX_VERTICES {
        let e = format!(
            "{slots} vertex slots over {size} processes: more than the {MAX_VERTICES} dense ids"
        );
        return Err(DistError::Failed(e));
    }
    let store = if weighted {
        Store::Weighted(
            packgraph::graph::WeightedGraph::from_weighted_edges(ids.len(), &[], directed)
                .map_err(|e| DistError::Failed(e.to_string()))?,
        )
    } else {
        Store::Plain(
            Graph::from_edges(ids.len(), &[], directed)
                .map_err(|e| DistError::Failed(e.to_string()))?,
        )
    };
    let mut part = Part {
        rank: comm.rank(),
        size,
        directed,
        ids: Vec::with_capacity(ids.len()),
        index: IntMap::with_capacity_and_hasher(ids.len(), Default::default()),
        slots,
        rows: Vec::with_capacity(ids.len()),
        dense_of: Vec::with_capacity(ids.len()),
        store_of: IntMap::with_capacity_and_hasher(ids.len(), Default::default()),
        num_vertices: total[0] as usize,
        store,
        numbered: false,
        file_ids: None,
    };
    for x in ids {
        part.add_owned(x);
    }
    Ok(part)
}

/// Marks an id a dictionary does not hold.
pub(crate) const MISSING: u64 = u64::MAX;

/// Dense ids of `ids` (any order, repeats allowed): [`MISSING`] for ids no process holds.
/// A collective.
pub(crate) fn resolve(comm: &dyn Comm, part: &Part, ids: &[u64]) -> Vec<u64> {
    let size = comm.size();
    let mut parts = vec![Vec::new(); size];
    let mut slot = Vec::with_capacity(ids.len());
    for &x in ids {
        let o = owner_of_id(x, size);
        slot.push((o, parts[o].len()));
        parts[o].push(x);
    }
    let asked = alltoall_u64(comm, parts);
    let answers: Vec<Vec<u64>> = asked
        .iter()
        .map(|xs| {
            xs.iter()
                .map(|x| {
                    part.index
                        .get(x)
                        .map_or(MISSING, |&i| part.dense(i as usize) as u64)
                })
                .collect()
        })
        .collect();
    let got = alltoall_u64(comm, answers);
    slot.iter()
        .map(|&(o, k)| got[o].get(k).copied().unwrap_or(MISSING))
        .collect()
}

/// A set of `u64`s, with each member's position among them in increasing order.
#[derive(Debug)]
enum IdSet {
    /// Bits over `min..`, with the number of members before each 64-bit word.
    Bits {
        min: u64,
        words: Vec<u64>,
        before: Vec<usize>,
    },
    /// The members, increasing.
    Sorted(Vec<u64>),
}

impl IdSet {
    /// Whether a bitmap over `min..=max` costs at most a byte per one of `count` values
    /// (each thread fills one).
    fn bits_pay(min: u64, max: u64, count: usize) -> bool {
        (max - min) / 64 < count as u64 / 8
    }

    /// Bits over `min..=max` set by `visit` on each of `items`, on all threads.
    fn collect_bits<T: Sync>(
        items: &[T],
        (min, max): (u64, u64),
        visit: impl Fn(&T, &mut dyn FnMut(u64)) + Sync,
    ) -> Self {
        let len = ((max - min) / 64 + 1) as usize;
        let per_task = items.len().div_ceil(rayon::current_num_threads()).max(1);
        let words = items
            .par_chunks(per_task)
            .map(|group| {
                let mut words = vec![0u64; len];
                for item in group {
                    visit(item, &mut |x| {
                        let off = x - min;
                        words[(off / 64) as usize] |= 1 << (off % 64);
                    });
                }
                words
            })
            .reduce_with(|mut a, b| {
                a.iter_mut().zip(&b).for_each(|(x, y)| *x |= y);
                a
            })
            .unwrap_or_default();
        let mut before = Vec::with_capacity(words.len());
        let mut count = 0;
        for w in &words {
            before.push(count);
            count += w.count_ones() as usize;
        }
        Self::Bits { min, words, before }
    }

    /// The members, increasing.
    fn values(&self) -> Vec<u64> {
        match self {
            Self::Sorted(values) => values.clone(),
            Self::Bits { min, words, .. } => {
                let mut out = Vec::new();
                for (k, &w) in words.iter().enumerate() {
                    let mut w = w;
                    while w != 0 {
                        out.push(min + 64 * k as u64 + u64::from(w.trailing_zeros()));
                        w &= w - 1;
                    }
                }
                out
            }
        }
    }

    /// The position of `x` among the members, if it is one.
    #[inline]
    fn position(&self, x: u64) -> Option<usize> {
        match self {
            Self::Sorted(values) => values.binary_search(&x).ok(),
            Self::Bits { min, words, before } => {
                let off = x.checked_sub(*min)?;
                let (k, bit) = ((off / 64) as usize, off % 64);
                let w = *words.get(k)?;
                (w >> bit & 1 == 1)
                    .then(|| before[k] + (w & ((1 << bit) - 1)).count_ones() as usize)
            }
        }
    }
}

/// The distinct endpoints of the parsed edges.
fn endpoints(parsed: &Parsed) -> IdSet {
    let count = 2 * parsed.edges();
    let (min, max) = parsed
        .pieces
        .par_iter()
        .flat_map_iter(|p| p.edges.iter().map(|&(u, v)| (u.min(v), u.max(v))))
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    if count == 0 {
        return IdSet::Sorted(Vec::new());
    }
    if IdSet::bits_pay(min, max, count) {
        return IdSet::collect_bits(&parsed.pieces, (min, max), |piece, set| {
            for &(u, v) in &piece.edges {
                set(u);
                set(v);
            }
        });
    }
    let mut all: Vec<u64> = parsed
        .pieces
        .par_iter()
        .flat_map_iter(|p| p.edges.iter().flat_map(|&(u, v)| [u, v]))
        .collect();
    all.par_sort_unstable();
    all.dedup();
    IdSet::Sorted(all)
}

/// The bytes `range` of `path`.
fn read_bytes(path: &Path, range: &std::ops::Range<u64>) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    file.seek(SeekFrom::Start(range.start))?;
    let mut text = vec![0u8; (range.end - range.start) as usize];
    file.read_exact(&mut text)?;
    Ok(text)
}

/// The error for endpoint `id` of edge `k` of `piece`, which the vertex file does not list.
fn missing_error(path: &Path, piece: &Piece, k: usize, id: u64) -> DistError {
    let reason = "edge endpoint is not listed in the vertex file";
    // The line is found again in the file (an error path: the loader keeps no line numbers).
    match read_bytes(path, &piece.bytes)
        .ok()
        .and_then(|text| data_line(&text, k))
    {
        Some(line) => line_error(
            path,
            piece.first_line + line - 1,
            reason,
            id.to_string().as_bytes(),
        ),
        None => DistError::Usage(format!("{}: {reason}: `{id}`", path.display())),
    }
}

/// A routed edge: `u << 32 | v` in dense ids (then the weight's bits, if weighted).
#[inline]
fn record(u: u64, v: u64) -> u64 {
    u << 32 | v
}

/// A piece's records for each owner, or its first edge (index, endpoint) with an endpoint
/// no process holds.
type Routed = Result<Vec<Vec<u64>>, (usize, u64)>;

/// Appends a routed edge and its weight's bits, if any.
#[inline]
fn put(out: &mut Vec<u64>, record: u64, weight: Option<u64>) {
    out.push(record);
    if let Some(w) = weight {
        out.push(w);
    }
}

/// Sends each edge to the owners of its endpoints, as dense ids (self-loops are dropped,
/// as the core drops them); returns the edges this process stores, in file order (each
/// process's edges in order, processes in rank order). An endpoint missing from the vertex
/// file is an error naming its line. A collective.
fn route(
    comm: &dyn Comm,
    part: &Part,
    parsed: &Parsed,
    ends: &IdSet,
    dense: &[u64],
    path: &Path,
) -> Result<Vec<u64>, DistError> {
    let size = part.size;
    let weighted = part.weighted();
    let dense_of = |x: u64| ends.position(x).map_or(MISSING, |k| dense[k]);
    let routed: Vec<Routed> = parsed
        .pieces
        .par_iter()
        .map(|piece| {
            let mut out = vec![Vec::with_capacity(piece.edges.len() * 2 / size); size];
            for (k, &(u, v)) in piece.edges.iter().enumerate() {
                let (du, dv) = (dense_of(u), dense_of(v));
                if du == MISSING || dv == MISSING {
                    return Err((k, if du == MISSING { u } else { v }));
                }
                if du == dv {
                    continue;
                }
                let w = weighted.then(|| piece.weights[k].to_bits());
                let (ou, ov) = (du as usize % size, dv as usize % size);
                put(&mut out[ou], record(du, dv), w);
                if ov != ou {
                    put(&mut out[ov], record(du, dv), w);
                }
            }
            Ok(out)
        })
        .collect();
    let missing = routed
        .iter()
        .zip(&parsed.pieces)
        .find_map(|(r, piece)| r.as_ref().err().map(|&(k, id)| (piece, k, id)));
    let outcome = match missing {
        Some((piece, k, id)) => Err(missing_error(path, piece, k, id)),
        None => Ok(()),
    };
    agree(comm, outcome)?;
    let routed: Vec<Vec<Vec<u64>>> = routed.into_iter().flatten().collect();
    let counts: Vec<usize> = (0..size)
        .map(|o| routed.iter().map(|r| r[o].len()).sum())
        .collect();
    let mut send = Vec::with_capacity(counts.iter().sum());
    for o in 0..size {
        for r in &routed {
            send.extend_from_slice(&r[o]);
        }
    }
    drop(routed);
    Ok(comm.alltoallv_u64(Group::World, &send, &counts))
}

/// Builds this process's store from the routed edges `records` (see [`route`]): the owned
/// vertices keep their store vertices, the other endpoints (ghosts) follow them in
/// increasing dense id. A collective.
fn build(comm: &dyn Comm, part: &mut Part, records: Vec<u64>) -> Result<(), DistError> {
    const LOW: u64 = 0xffff_ffff;
    let (size, rank, owned) = (part.size, part.rank, part.owned());
    let step = if part.weighted() { 2 } else { 1 };
    // The endpoint of a record owned elsewhere, if any (at most one: each record came to an
    // owner of an endpoint).
    let ghost = |r: u64| {
        let (u, v) = (r >> 32, r & LOW);
        if u as usize % size != rank {
            Some(u)
        } else if v as usize % size != rank {
            Some(v)
        } else {
            None
        }
    };
    let per_task = (records.len() / step)
        .div_ceil(4 * rayon::current_num_threads())
        .max(1)
        * step;
    let chunks: Vec<&[u64]> = records.chunks(per_task).collect();
    let (min, max) = chunks
        .par_iter()
        .flat_map_iter(|c| c.iter().step_by(step).filter_map(|&r| ghost(r)))
        .map(|g| (g, g))
        .reduce(|| (u64::MAX, 0), |a, b| (a.0.min(b.0), a.1.max(b.1)));
    let ghosts = if min > max {
        IdSet::Sorted(Vec::new())
    } else if IdSet::bits_pay(min, max, records.len() / step) {
        IdSet::collect_bits(&chunks, (min, max), |chunk, set| {
            for &r in chunk.iter().step_by(step) {
                if let Some(g) = ghost(r) {
                    set(g);
                }
            }
        })
    } else {
        let mut all: Vec<u64> = chunks
            .par_iter()
            .flat_map_iter(|c| c.iter().step_by(step).filter_map(|&r| ghost(r)))
            .collect();
        all.par_sort_unstable();
        all.dedup();
        IdSet::Sorted(all)
    };
    for g in ghosts.values() {
        let x = part.dense_of.len() as VertexId;
        part.dense_of.push(g as VertexId);
        part.store_of.insert(g as VertexId, x);
    }
    let rows = &part.rows;
    let store = |d: u64| -> VertexId {
        if d as usize % size == rank {
            rows[d as usize / size]
        } else {
            let k = ghosts.position(d).expect("every ghost is in the set");
            (owned + k) as VertexId
        }
    };
    let built = match &mut part.store {
        Store::Plain(g) => {
            let edges: Vec<(VertexId, VertexId)> = records
                .par_iter()
                .with_min_len(1 << 12)
                .map(|&r| (store(r >> 32), store(r & LOW)))
                .collect();
            drop(records);
            g.insert_edges(&edges).map(drop)
        }
        Store::Weighted(g) => {
            let edges: Vec<(VertexId, VertexId, f64)> = records
                .par_chunks_exact(2)
                .with_min_len(1 << 12)
                .map(|c| (store(c[0] >> 32), store(c[0] & LOW), f64::from_bits(c[1])))
                .collect();
            drop(records);
            g.insert_edges(&edges).map(drop)
        }
    };
    agree(comm, built.map_err(|e| DistError::Failed(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_the_lines_of_a_file_exactly_once() {
        let dir = std::env::temp_dir().join(format!("pg-dist-range-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("lines.txt");
        let text: String = (0..37).map(|i| format!("{i} {}\n", i * 7)).collect();
        for ending in ["", "9 9"] {
            let all = format!("{text}{ending}");
            std::fs::write(&path, &all).unwrap();
            for size in 1..9 {
                let mut joined = Vec::new();
                let mut offset = 0;
                for rank in 0..size {
                    let (part, at) = read_range(&path, rank, size).unwrap();
                    if !part.is_empty() {
                        assert_eq!(at, offset);
                    }
                    offset = at + part.len() as u64;
                    joined.extend(part);
                }
                assert_eq!(String::from_utf8(joined).unwrap(), all, "size {size}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `text` parsed as one process's lines from line `line`, in pieces of `piece_bytes`.
    fn parse(text: &[u8], line: u64, piece_bytes: usize) -> Result<Parsed, DistError> {
        let mut parsed = Parsed {
            pieces: parse_pieces(text, 0, piece_bytes),
            ..Parsed::default()
        };
        parsed
            .settle(Path::new("g.el"), line, false)
            .map(|()| parsed)
    }

    #[test]
    fn a_bad_line_names_its_number_and_value() {
        for piece_bytes in [1, 5, 1 << 20] {
            let e = parse(b"# c\n1 2\n3 x\n", 1, piece_bytes).unwrap_err();
            assert_eq!(
                e.to_string(),
                "g.el:3: vertex id is not a non-negative integer: `x`"
            );
            let e = parse(b"1 2 0.5\n3 4\n", 10, piece_bytes).unwrap_err();
            assert_eq!(
                e.to_string(),
                "g.el:11: this line has no weight column but earlier lines have one: `3 4`"
            );
            let e = parse(b"% c\n\n1 2\n3 4 5 6\n", 1, piece_bytes).unwrap_err();
            assert_eq!(
                e.to_string(),
                "g.el:4: expected `source target` or `source target weight`: `3 4 5 6`"
            );
            // A change of columns is found at the first line that changes them, before a
            // later bad line of the same piece.
            let e = parse(b"1 2\n3 4\n5 6 1.5\n7 y 2\n", 1, piece_bytes).unwrap_err();
            assert!(
                e.to_string().starts_with("g.el:3: this line has a weight"),
                "{e}"
            );
        }
    }

    #[test]
    fn the_head_declares_direction_and_isolated_vertices() {
        let text = b"# packgraph edge list: 5 vertices, 1 edges, directed\n# isolated vertices: 7 9\n1 2\n# isolated vertices: 11 x\n";
        for piece_bytes in [1, 1 << 20] {
            let parsed = parse(text, 1, piece_bytes).unwrap();
            assert_eq!(parsed.isolated, vec![7, 9]);
            assert_eq!(parsed.pieces[0].declared, Some((5, true)));
        }
        // A header not on the first line is a comment; a bad list in the head an error.
        let parsed = parse(b"# c\n# packgraph edge list: 5 vertices\n1 2\n", 1, 1).unwrap();
        assert_eq!(parsed.pieces[1].declared, None);
        let e = parse(b"# isolated vertices: 3 -4\n1 2\n", 1, 1 << 20).unwrap_err();
        assert_eq!(e.to_string(), "g.el:1: negative vertex id: `-4`");
        let e = parse(b"# packgraph edge list: many\n1 2\n", 1, 1 << 20).unwrap_err();
        assert!(
            e.to_string().starts_with("g.el:1: expected `N vertices"),
            "{e}"
        );
    }

    #[test]
    fn pieces_keep_file_order_lines_and_weights() {
        let text: String = (0..300)
            .map(|i| {
                if i % 7 == 0 {
                    format!("# comment {i}\n")
                } else {
                    format!("{i},{} {}.5\n", i * 3, i % 5)
                }
            })
            .collect();
        let want = parse(text.as_bytes(), 1, 1 << 20).unwrap();
        assert_eq!(want.pieces.len(), 1);
        for piece_bytes in [1, 10, 100, 1000] {
            let got = parse(text.as_bytes(), 1, piece_bytes).unwrap();
            assert!(got.pieces.len() > 1);
            let edges: Vec<(u64, u64)> = got.pieces.iter().flat_map(|p| p.edges.clone()).collect();
            let weights: Vec<f64> = got.pieces.iter().flat_map(|p| p.weights.clone()).collect();
            assert_eq!(edges, want.pieces[0].edges);
            assert_eq!(weights, want.pieces[0].weights);
            assert_eq!((got.columns, got.first_data_line), (3, 2));
            // Each piece's first line, and the line of each of its edges, found again.
            for piece in &got.pieces {
                let bytes = &text.as_bytes()[piece.bytes.start as usize..piece.bytes.end as usize];
                for (k, &(u, _)) in piece.edges.iter().enumerate() {
                    let line = piece.first_line + data_line(bytes, k).unwrap() - 1;
                    assert_eq!(line, u + 1);
                }
            }
        }
    }

    fn oracle(values: &[u64]) -> Vec<u64> {
        let mut sorted = values.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        sorted
    }

    proptest::proptest! {
        /// Both forms of the set hold the same members at the same positions as a sorted,
        /// deduplicated list.
        #[test]
        fn id_sets_equal_a_sorted_list(
            base in proptest::prelude::any::<u64>(),
            offsets in proptest::collection::vec(0u64..5000, 0..300),
            probes in proptest::collection::vec(0u64..5100, 0..50),
        ) {
            let values: Vec<u64> = offsets.iter().map(|&o| base.saturating_sub(5000) + o).collect();
            let want = oracle(&values);
            let chunks: Vec<&[u64]> = values.chunks(7).collect();
            let sets = [
                IdSet::Sorted(want.clone()),
                match (values.iter().min(), values.iter().max()) {
                    (Some(&min), Some(&max)) => IdSet::collect_bits(&chunks, (min, max), |c, set| {
                        c.iter().for_each(|&x| set(x));
                    }),
                    _ => IdSet::Sorted(Vec::new()),
                },
            ];
            for set in &sets {
                proptest::prop_assert_eq!(&set.values(), &want);
                for (k, &x) in want.iter().enumerate() {
                    proptest::prop_assert_eq!(set.position(x), Some(k));
                }
                for &p in &probes {
                    let x = base.saturating_sub(5000).saturating_add(p);
                    proptest::prop_assert_eq!(set.position(x), want.binary_search(&x).ok());
                }
            }
        }
    }
}
