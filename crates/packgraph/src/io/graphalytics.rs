//! LDBC Graphalytics datasets: a vertex file `NAME.v` (one id per line) and an edge file
//! `NAME.e` (`src dst` or `src dst weight` per line), ids any `u64`, with an optional
//! `NAME.properties` beside them whose `graph.NAME.directed` says whether edges are
//! directed. Every edge endpoint must be listed in the vertex file. Also the benchmark's
//! output format: `id value` per line.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::edgelist::{
    concat, int_ids, push_edge, write_edges, write_in_blocks, EdgeChunk, Tokens,
};
use super::text::{self, parse_id, Fields, Progress};
use super::Dataset;
use crate::algo::{AlgoOutput, Values, UNREACHED};
use crate::graph::ids::{IdMap, IdMapError};
use crate::graph::{Packing, VertexId};
use crate::Error;

/// The files of one dataset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Files {
    /// The vertex file.
    pub vertices: PathBuf,
    /// The edge file.
    pub edges: PathBuf,
    /// The properties file (it may not exist).
    pub properties: PathBuf,
}

impl Files {
    /// The files with common prefix `prefix` (`prefix.v`, `prefix.e`, `prefix.properties`).
    pub fn with_prefix(prefix: &Path) -> Self {
        let with = |ext: &str| {
            let mut name = prefix.as_os_str().to_owned();
            name.push(ext);
            PathBuf::from(name)
        };
        Self {
            vertices: with(".v"),
            edges: with(".e"),
            properties: with(".properties"),
        }
    }

    /// The dataset `path` names: its `.v` file, its `.e` file or their common prefix; `None`
    /// unless both files exist.
    pub fn find(path: &Path) -> Option<Self> {
        let text = path.to_string_lossy();
        let prefix = text
            .strip_suffix(".v")
            .or_else(|| text.strip_suffix(".e"))
            .unwrap_or(&text);
        let files = Self::with_prefix(Path::new(prefix));
        (files.vertices.is_file() && files.edges.is_file()).then_some(files)
    }

    /// The dataset's name (the prefix's file name).
    fn name(&self) -> String {
        let stem = self.vertices.file_stem().unwrap_or_default();
        stem.to_string_lossy().into_owned()
    }
}

/// `graph.NAME.directed` from the properties file, if it exists and says.
fn directed_property(files: &Files) -> Result<Option<bool>, Error> {
    let text = match std::fs::read_to_string(&files.properties) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&files.properties, e)),
    };
    let key = format!("graph.{}.directed", files.name());
    for (i, line) in text.lines().enumerate() {
        let Some((k, value)) = line.split_once('=') else {
            continue;
        };
        if k.trim() == key {
            return match value.trim() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                other => Err(Error::InvalidInput {
                    path: Some(files.properties.clone()),
                    line: Some(i as u64 + 1),
                    value: Some(other.into()),
                    reason: format!("{key} must be true or false"),
                }),
            };
        }
    }
    Ok(None)
}

/// Whether `graph.NAME.edge-properties.names` in the properties file lists `weight`: how a
/// dataset without edges says it is weighted (otherwise the edge lines' columns say).
fn weighted_property(files: &Files) -> Result<bool, Error> {
    let text = match std::fs::read_to_string(&files.properties) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(&files.properties, e)),
    };
    let key = format!("graph.{}.edge-properties.names", files.name());
    Ok(text.lines().any(|line| {
        line.split_once('=').is_some_and(|(k, names)| {
            k.trim() == key && names.split(',').any(|name| name.trim() == "weight")
        })
    }))
}

/// Reads a dataset. Directedness: `directed` if given, else the properties file, else
/// undirected.
pub(crate) fn read(
    files: &Files,
    directed: Option<bool>,
    progress: Option<&Progress>,
    packing: Packing,
) -> Result<(Dataset, super::LoadReport), Error> {
    let property = directed_property(files)?;
    let directed = directed.or(property).unwrap_or(false);
    let ids = read_vertices(&files.vertices)?;
    let path = files.edges.as_path();
    let mut input = text::open(path)?;
    let parse = text::line_parser(|line: &[u8], out: &mut EdgeChunk<VertexId>| {
        let mut fields = Fields::new(line);
        let mut endpoint = || -> Result<VertexId, (&[u8], &'static str)> {
            let field = fields.next().ok_or((line, "expected `source target`"))?;
            let id = parse_id(field).map_err(|r| (field, r))?;
            ids.internal(id)
                .ok_or((field, "edge endpoint is not listed in the vertex file"))
        };
        let edge = (endpoint()?, endpoint()?);
        push_edge(
            out,
            line,
            fields,
            edge,
            "too many columns: expected `src dst` or `src dst weight`",
        )
    });
    let chunks = text::parse_lines(path, &mut input, 1, progress, parse)?;
    let (edges, mut weights) = concat(path, chunks)?;
    if edges.is_empty() && weights.is_none() && weighted_property(files)? {
        weights = Some(Vec::new());
    }
    let (data, reciprocal_pairs) = super::build(path, ids, edges, weights, directed, packing)?;
    let report = super::LoadReport {
        reciprocal_pairs,
        direction_from_file: property.is_some(),
        ..super::LoadReport::default()
    };
    Ok((data, report))
}

fn read_vertices(path: &Path) -> Result<IdMap, Error> {
    let mut input = text::open(path)?;
    let parse = text::line_parser(|line: &[u8], out: &mut Vec<u64>| {
        let mut fields = Fields::new(line);
        let field = fields.next().ok_or((line, "missing vertex id"))?;
        out.push(parse_id(field).map_err(|r| (field, r))?);
        if fields.next().is_some() {
            return Err((line, "a vertex line holds one id"));
        }
        Ok(())
    });
    let chunks = text::parse_lines(path, &mut input, 1, None, parse)?;
    let ids: Vec<u64> = chunks.into_iter().flat_map(|(_, ids)| ids).collect();
    if ids.is_empty() {
        return Err(Error::invalid_file(
            path,
            "the vertex file lists no vertices",
        ));
    }
    IdMap::from_vertex_list(ids).map_err(|e| match e {
        IdMapError::TooMany(n) => Error::invalid_file(
            path,
            format!("{n} vertices: more than the 2^32-1 supported"),
        ),
        IdMapError::Duplicate(id) => duplicate_error(path, id),
    })
}

/// The error for a vertex listed twice, naming its second line (found by reading again).
fn duplicate_error(path: &Path, id: u64) -> Error {
    let text = std::fs::read(path).unwrap_or_default();
    let mut seen = false;
    for (i, line) in text.split(|&b| b == b'\n').enumerate() {
        let first = Fields::new(line).next().and_then(|f| parse_id(f).ok());
        if first == Some(id) && !text::is_comment(line) {
            if seen {
                return Error::InvalidInput {
                    path: Some(path.to_path_buf()),
                    line: Some(i as u64 + 1),
                    value: Some(id.to_string()),
                    reason: "vertex listed twice".into(),
                };
            }
            seen = true;
        }
    }
    Error::invalid_file(path, format!("vertex {id} is listed twice"))
}

/// Writes `prefix.v`, `prefix.e` and `prefix.properties`; returns the files.
pub fn write(dataset: &Dataset, prefix: &Path) -> Result<Files, Error> {
    let files = Files::with_prefix(prefix);
    let graph = &dataset.graph;
    // Checked before a file is created, so that a refusal leaves nothing behind.
    if dataset.ids().has_names() {
        return Err(Error::unsupported_file(
            &files.vertices,
            "Graphalytics datasets name vertices by integers, and this graph's vertices are named; write an edge list or a snapshot (.pgb)",
        ));
    }
    super::write_file(&files.vertices, |out| {
        let ids = int_ids(dataset.ids())?;
        write_in_blocks(
            graph.num_vertices(),
            |v| format!("{}\n", ids.get(v)).into_bytes(),
            out,
        )
    })?;
    super::write_file(&files.edges, |out| write_edges(dataset, out))?;
    let name = files.name();
    let file_name = |p: &Path| {
        p.file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned()
    };
    let mut properties = format!(
        "# Written by packgraph\n\
         graph.{name}.vertex-file = {}\n\
         graph.{name}.edge-file = {}\n\
         graph.{name}.meta.vertices = {}\n\
         graph.{name}.meta.edges = {}\n\
         graph.{name}.directed = {}\n",
        file_name(&files.vertices),
        file_name(&files.edges),
        graph.num_vertices(),
        graph.num_edges(),
        graph.is_directed(),
    );
    if graph.is_weighted() {
        properties.push_str(&format!(
            "graph.{name}.edge-properties.names = weight\n\
             graph.{name}.edge-properties.types = real\n"
        ));
    }
    super::write_file(&files.properties, |out| {
        out.write_all(properties.as_bytes())
    })?;
    Ok(files)
}

/// The value Graphalytics writes for a vertex a traversal does not reach.
pub const GRAPHALYTICS_UNREACHED: &str = "9223372036854775807";

impl AlgoOutput {
    /// Writes one `id value` line per vertex in vertex order, as LDBC Graphalytics does:
    /// ids are `ids`' external ids, labels are written as the label vertex's external id,
    /// unreached hops as 9223372036854775807 and unreached distances as `Infinity`.
    ///
    /// # Errors
    /// As [`write_output`].
    pub fn write_graphalytics(&self, ids: &IdMap, out: &mut dyn Write) -> std::io::Result<()> {
        let labels = match &self.values {
            Values::Labels(_) => Some(Tokens::of(ids)?),
            _ => None,
        };
        write_output(
            ids,
            |v, line| {
                let v = v as usize;
                let _ = match &self.values {
                    Values::Hops(hops) if hops[v] == UNREACHED => {
                        line.extend_from_slice(GRAPHALYTICS_UNREACHED.as_bytes());
                        Ok(())
                    }
                    Values::Hops(hops) => write!(line, "{}", hops[v]),
                    Values::Reals(reals) if reals[v] == f64::INFINITY => {
                        line.extend_from_slice(b"Infinity");
                        Ok(())
                    }
                    Values::Reals(reals) => write_real(reals[v], line),
                    Values::Labels(l) => {
                        if let Some(ids) = &labels {
                            ids.write(l[v], line);
                        }
                        Ok(())
                    }
                    Values::Counts(counts) => write!(line, "{}", counts[v]),
                };
            },
            out,
        )
    }
}

/// A real in Graphalytics' style: plain decimals, exponent form for very small or large.
fn write_real(x: f64, line: &mut Vec<u8>) -> std::io::Result<()> {
    if x != 0.0 && !(1e-4..1e15).contains(&x.abs()) {
        write!(line, "{x:e}")
    } else {
        write!(line, "{x}")
    }
}

/// Writes per-vertex results as Graphalytics output lines `id value`, in external ids and in
/// increasing external id order (internal order for ids loaded from a file; a relabeled
/// graph is written in the same order as before); `value(v, out)` appends vertex `v`'s
/// value. Named vertices are written by their names (integers before names, names in byte
/// order).
///
/// # Errors
/// The writer's errors, or [`std::io::ErrorKind::InvalidInput`] if a name cannot be written
/// as one word of text (see [`name_problem`](crate::graph::name_problem)).
pub fn write_output(
    ids: &IdMap,
    value: impl Fn(VertexId, &mut Vec<u8>) + Sync,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let len = ids.len();
    let order = (!crate::layout::ids_increase(ids)).then(|| crate::layout::by_external_id(ids));
    let ids = Tokens::of(ids)?;
    write_in_blocks(
        len,
        |i| {
            let v = order.as_ref().map_or(i, |order| order[i as usize]);
            let mut line = Vec::with_capacity(24);
            ids.write(v, &mut line);
            line.push(b' ');
            value(v, &mut line);
            line.push(b'\n');
            line
        },
        out,
    )
}
