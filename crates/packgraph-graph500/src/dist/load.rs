//! Loading a graph file in parallel: each process reads its byte range of the file (the
//! lines whose first byte falls in it), parses them, numbers the vertices through the
//! distributed dictionary and sends every edge to the owners of its endpoints.
//!
//! Inputs: an edge list (`u v` or `u v weight` a line, fields separated by blanks or commas,
//! `#` and `%` comment lines, integer ids) or a Graphalytics dataset (`NAME.v` and `NAME.e`,
//! named by either file or their prefix; `graph.NAME.directed` of `NAME.properties` sets the
//! direction unless `--directed` is given). Compressed files and the other formats of
//! `packgraph run` are refused with a message.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use packgraph::graph::{Graph, MAX_VERTICES};
use packgraph::io::graphalytics::Files;
use packgraph::io::{parse_id, parse_weight};

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
        match memchr(b'\n', &text) {
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
            if let Some(k) = memchr(b'\n', &chunk[..got]) {
                text.extend_from_slice(&chunk[..=k]);
                break;
            }
            text.extend_from_slice(&chunk[..got]);
        }
    }
    text.drain(..first);
    Ok((text, from + first as u64))
}

fn memchr(byte: u8, text: &[u8]) -> Option<usize> {
    text.iter().position(|&b| b == byte)
}

/// The number of the first line of this process's text (1-based), from the newlines of the
/// processes before it. A collective.
fn first_line(comm: &dyn Comm, text: &[u8]) -> u64 {
    let newlines = text.iter().filter(|&&b| b == b'\n').count() as u64;
    let all = comm.allgather(Group::World, &newlines.to_le_bytes());
    let before: u64 = (0..comm.rank())
        .map(|k| u64::from_le_bytes(all.part(k).try_into().unwrap_or([0; 8])))
        .sum();
    before + 1
}

/// Fields of a line: runs of bytes between blanks and commas.
fn fields(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b.is_ascii_whitespace() || b == b',')
        .filter(|f| !f.is_empty())
}

fn is_comment(line: &[u8]) -> bool {
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

/// Edges parsed from one process's lines, in file order.
#[derive(Debug, Default)]
struct Parsed {
    edges: Vec<(u64, u64)>,
    weights: Vec<f64>,
    /// The line of each edge.
    lines: Vec<u64>,
    /// Columns of the lines (0: no data line).
    columns: usize,
    /// The first line with data, for a column mismatch between processes.
    first_data_line: u64,
}

/// Parses edge lines starting at line `line`.
fn parse_edges(path: &Path, text: &[u8], mut line: u64) -> Result<Parsed, DistError> {
    let mut out = Parsed::default();
    for raw in text.split_inclusive(|&b| b == b'\n') {
        let body = raw.strip_suffix(b"\n").unwrap_or(raw);
        if !is_comment(body) {
            let cols: Vec<&[u8]> = fields(body).collect();
            if !(2..=3).contains(&cols.len()) {
                let reason = "expected `source target` or `source target weight`";
                return Err(line_error(path, line, reason, body));
            }
            if out.columns == 0 {
                out.columns = cols.len();
                out.first_data_line = line;
            } else if out.columns != cols.len() {
                let reason = if cols.len() == 3 {
                    "this line has a weight column but earlier lines have none"
                } else {
                    "this line has no weight column but earlier lines have one"
                };
                return Err(line_error(path, line, reason, body));
            }
            let id = |f: &[u8]| parse_id(f).map_err(|r| line_error(path, line, r, f));
            out.edges.push((id(cols[0])?, id(cols[1])?));
            if cols.len() == 3 {
                let w = parse_weight(cols[2]).map_err(|r| line_error(path, line, r, cols[2]))?;
                out.weights.push(w);
            }
            out.lines.push(line);
        }
        line += 1;
    }
    Ok(out)
}

/// Parses vertex lines (one id each) starting at line `line`.
fn parse_vertices(path: &Path, text: &[u8], mut line: u64) -> Result<Vec<u64>, DistError> {
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

/// Reads and parses this process's share of `path`. A collective.
fn read_share<T>(
    comm: &dyn Comm,
    path: &Path,
    parse: impl FnOnce(&[u8], u64) -> Result<T, DistError>,
) -> Result<T, DistError> {
    let read = read_range(path, comm.rank(), comm.size())
        .map_err(|e| DistError::Usage(format!("{}: {e}", path.display())));
    let text = agree(comm, read.map(|(text, _)| text))?;
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
    let line = first_line(comm, &text);
    agree(comm, parse(&text, line))
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
/// # Errors
/// [`DistError::Usage`] on every process for a file that cannot be read, a malformed line
/// in any process's range (naming file and line), an edge endpoint missing from a
/// dataset's vertex file, a vertex listed twice, `--weighted` without weights or an empty
/// graph; [`DistError::Failed`] past 2^32 − 1 vertex slots.
pub fn load(comm: &dyn Comm, options: &LoadOptions) -> Result<Part, DistError> {
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
        Some(files) => Some(read_share(comm, &files.vertices, |text, line| {
            parse_vertices(&files.vertices, text, line)
        })?),
        None => None,
    };
    let parsed = read_share(comm, &edge_path, |text, line| {
        parse_edges(&edge_path, text, line)
    })?;
    let weighted = columns(comm, &edge_path, &parsed)? == 3;
    if options.weighted && !weighted {
        let e = format!("--weighted: {} has no edge weights", options.path.display());
        return Err(DistError::Usage(e));
    }
    let ids = match &vertex_list {
        Some(list) => {
            let path = dataset
                .as_ref()
                .map(|f| f.vertices.clone())
                .unwrap_or_default();
            dictionary(comm, list, Some(&path))?
        }
        None => {
            let ends: Vec<u64> = parsed.edges.iter().flat_map(|&(u, v)| [u, v]).collect();
            dictionary(comm, &ends, None)?
        }
    };
    let mut part = empty_part(comm, ids, directed, weighted)?;
    if part.num_vertices == 0 {
        let e = format!("{} has no vertices", options.path.display());
        return Err(DistError::Usage(e));
    }
    let dense = lookup_edges(comm, &part, &parsed, &edge_path)?;
    route_and_build(comm, &mut part, &parsed, &dense)?;
    Ok(part)
}

/// The column count all processes agree on (0 without data lines), or an error naming the
/// first line of the first process that disagrees. A collective.
fn columns(comm: &dyn Comm, path: &Path, parsed: &Parsed) -> Result<usize, DistError> {
    let all = comm.allgather(Group::World, &(parsed.columns as u64).to_le_bytes());
    let cols: Vec<u64> = (0..all.parts())
        .map(|k| u64::from_le_bytes(all.part(k).try_into().unwrap_or([0; 8])))
        .collect();
    let first = cols.iter().copied().find(|&c| c != 0).unwrap_or(0);
    let bad = cols.iter().position(|&c| c != 0 && c != first);
    let outcome = match bad {
        Some(k) if k == comm.rank() => Err(DistError::Usage(format!(
            "{}:{}: {} columns, but earlier lines have {first}",
            path.display(),
            parsed.first_data_line,
            parsed.columns
        ))),
        _ => Ok(first as usize),
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

/// Dense endpoints of the parsed edges; an endpoint missing from the vertex file is an
/// error naming its line. A collective.
fn lookup_edges(
    comm: &dyn Comm,
    part: &Part,
    parsed: &Parsed,
    path: &Path,
) -> Result<Vec<(u32, u32)>, DistError> {
    let mut distinct: Vec<u64> = parsed.edges.iter().flat_map(|&(u, v)| [u, v]).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let dense = resolve(comm, part, &distinct);
    let find = |x: u64| {
        let k = distinct
            .binary_search(&x)
            .expect("every endpoint was asked");
        dense[k]
    };
    let mut out = Vec::with_capacity(parsed.edges.len());
    let mut outcome = Ok(());
    for (&(u, v), &line) in parsed.edges.iter().zip(&parsed.lines) {
        let (du, dv) = (find(u), find(v));
        if du == MISSING || dv == MISSING {
            let id = if du == MISSING { u } else { v };
            let reason = "edge endpoint is not listed in the vertex file";
            outcome = Err(line_error(path, line, reason, id.to_string().as_bytes()));
            break;
        }
        out.push((du as u32, dv as u32));
    }
    agree(comm, outcome)?;
    Ok(out)
}

/// Sends each edge to the owners of its endpoints (self-loops are dropped, as the core
/// drops them) and builds each process's store in file order (of duplicate weighted edges
/// the last wins, as in one process). A collective.
fn route_and_build(
    comm: &dyn Comm,
    part: &mut Part,
    parsed: &Parsed,
    dense: &[(u32, u32)],
) -> Result<(), DistError> {
    let size = part.size;
    let weighted = part.weighted();
    let mut parts = vec![Vec::new(); size];
    for (k, &(u, v)) in dense.iter().enumerate() {
        if u == v {
            continue;
        }
        let w = if weighted { parsed.weights[k] } else { 1.0 };
        let record = [u64::from(u), u64::from(v), w.to_bits(), parsed.lines[k]];
        let (ou, ov) = (u as usize % size, v as usize % size);
        parts[ou].extend_from_slice(&record);
        if ov != ou {
            parts[ov].extend_from_slice(&record);
        }
    }
    let mut records: Vec<[u64; 4]> = alltoall_u64(comm, parts)
        .iter()
        .flat_map(|p| p.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]))
        .collect();
    records.sort_by_key(|r| r[3]);
    let edges: Vec<(u32, u32, f64)> = records
        .iter()
        .map(|r| {
            let u = part.store_vertex(r[0] as u32);
            let v = part.store_vertex(r[1] as u32);
            (u, v, f64::from_bits(r[2]))
        })
        .collect();
    let built = match &mut part.store {
        Store::Plain(g) => {
            let edges: Vec<(u32, u32)> = edges.iter().map(|e| (e.0, e.1)).collect();
            g.insert_edges(&edges).map(drop)
        }
        Store::Weighted(g) => g.insert_edges(&edges).map(drop),
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

    #[test]
    fn a_bad_line_names_its_number_and_value() {
        let e = parse_edges(Path::new("g.el"), b"# c\n1 2\n3 x\n", 1).unwrap_err();
        assert_eq!(
            e.to_string(),
            "g.el:3: vertex id is not a non-negative integer: `x`"
        );
        let e = parse_edges(Path::new("g.el"), b"1 2 0.5\n3 4\n", 10).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("g.el:11: this line has no weight"));
    }
}
