//! The durable commands: `create`, `ingest`, `checkpoint` and `verify` on a data directory
//! (`packgraph::store`), and the text format of update batches that `ingest` reads.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use packgraph::graph::{AnyGraph, ExternalId, Graph, Update, VertexId, WeightedGraph};
use packgraph::store::{AnyStore, Seq, StoreOptions, SyncPolicy};

use crate::input::{self, BadInput, ReadArgs};
use crate::UsageError;

/// Arguments of `packgraph create`.
#[derive(Args, Debug)]
pub(crate) struct CreateArgs {
    /// The new data directory (created; if it exists it must be empty).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Start from this graph file (any file `run` reads) instead of an empty graph.
    #[arg(long, value_name = "FILE")]
    from: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Edges carry weights (an empty graph; a file's own columns decide otherwise).
    #[arg(long)]
    weighted: bool,
}

/// Arguments of `packgraph ingest`.
#[derive(Args, Debug)]
pub(crate) struct IngestArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Update batches, one operation a line: `+ SRC DST [WEIGHT]` inserts, `- SRC DST`
    /// deletes, `#` starts a comment, a line `commit` ends a batch (the end of the input
    /// ends the last). `-` or nothing reads standard input.
    #[arg(long, value_name = "FILE", default_value = "-")]
    updates: String,
    #[command(flatten)]
    sync: SyncArgs,
}

/// When batches become durable.
#[derive(Args, Debug, Clone)]
pub(crate) struct SyncArgs {
    /// `batch`: fsync the log before each acknowledgement; `group:MS`: one fsync every MS
    /// milliseconds for all batches waiting (higher throughput, acks up to MS later);
    /// `none`: never fsync (UNSAFE: a power cut loses acknowledged batches).
    #[arg(long, value_name = "POLICY", default_value = "batch", value_parser = parse_sync)]
    pub(crate) sync: SyncPolicy,
}

fn parse_sync(text: &str) -> Result<SyncPolicy, String> {
    text.parse().map_err(|e: packgraph::Error| e.to_string())
}

impl SyncArgs {
    pub(crate) fn options(&self) -> StoreOptions {
        StoreOptions {
            sync: self.sync,
            ..StoreOptions::default()
        }
    }
}

/// Arguments of `packgraph checkpoint` and `packgraph verify`.
#[derive(Args, Debug)]
pub(crate) struct DirArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub(crate) fn create(args: &CreateArgs) -> anyhow::Result<()> {
    let graph = match &args.from {
        Some(path) => {
            let (data, _) = input::read(path, &args.read)
                .with_context(|| format!("reading {}", path.display()))?;
            if args.weighted && !data.graph.is_weighted() {
                return Err(UsageError(format!(
                    "--weighted: {} has no weights; leave the flag out, or add a weight column",
                    path.display()
                ))
                .into());
            }
            data.graph
        }
        None if args.weighted => {
            AnyGraph::Weighted(WeightedGraph::new_weighted(args.read.directed))
        }
        None => AnyGraph::Unweighted(Graph::new(args.read.directed)),
    };
    let bar = input::spinner("writing the first checkpoint");
    let store = AnyStore::create(&args.dir, StoreOptions::default(), graph).map_err(BadInput)?;
    bar.finish_and_clear();
    let g = store.graph();
    println!(
        "created {}: {} vertices, {} edges ({}, {})",
        args.dir.display(),
        g.num_vertices(),
        g.num_edges(),
        if g.is_directed() {
            "directed"
        } else {
            "undirected"
        },
        if g.is_weighted() {
            "weighted"
        } else {
            "unweighted"
        }
    );
    Ok(())
}

/// One operation of an update file, in external ids.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Op {
    Insert(ExternalId, ExternalId, Option<f64>),
    Delete(ExternalId, ExternalId),
}

/// Reads update batches from text (see [`IngestArgs::updates`]).
pub(crate) struct BatchReader<R> {
    reader: R,
    name: PathBuf,
    line: u64,
    text: String,
    done: bool,
}

fn parse_id(text: &str) -> ExternalId {
    match text.parse::<u64>() {
        Ok(id) => ExternalId::Int(id),
        Err(_) => ExternalId::Name(text.into()),
    }
}

impl<R: BufRead> BatchReader<R> {
    pub(crate) fn new(reader: R, name: impl Into<PathBuf>) -> Self {
        Self {
            reader,
            name: name.into(),
            line: 0,
            text: String::new(),
            done: false,
        }
    }

    fn bad(&self, value: &str, reason: &str) -> anyhow::Error {
        BadInput(packgraph::Error::InvalidInput {
            path: Some(self.name.clone()),
            line: Some(self.line),
            value: Some(value.to_owned()),
            reason: reason.to_owned(),
        })
        .into()
    }

    /// The next batch and the number of its last line; `None` at the end of the input. A
    /// batch may be empty (two `commit` lines in a row).
    ///
    /// # Errors
    /// A line that is not an operation (exit code 2, naming file and line), or a read error.
    pub(crate) fn next_batch(&mut self) -> anyhow::Result<Option<(Vec<Op>, u64)>> {
        if self.done {
            return Ok(None);
        }
        let mut ops = Vec::new();
        loop {
            self.text.clear();
            let read = self
                .reader
                .read_line(&mut self.text)
                .with_context(|| format!("reading {}", self.name.display()))?;
            if read == 0 {
                self.done = true;
                return Ok((!ops.is_empty()).then_some((ops, self.line)));
            }
            self.line += 1;
            let text = std::mem::take(&mut self.text);
            let content = text.split('#').next().unwrap_or("").trim();
            let result = self.parse_line(content, &mut ops);
            self.text = text;
            match result? {
                true => return Ok(Some((ops, self.line))),
                false => continue,
            }
        }
    }

    /// Parses one line (comment removed) into `ops`; true at `commit`.
    fn parse_line(&self, content: &str, ops: &mut Vec<Op>) -> anyhow::Result<bool> {
        let mut fields = content.split_whitespace();
        let Some(kind) = fields.next() else {
            return Ok(false);
        };
        let fields: Vec<&str> = fields.collect();
        match kind {
            "commit" if fields.is_empty() => Ok(true),
            "commit" => Err(self.bad(content, "`commit` takes nothing after it")),
            "+" => match fields[..] {
                [u, v] => {
                    ops.push(Op::Insert(parse_id(u), parse_id(v), None));
                    Ok(false)
                }
                [u, v, w] => {
                    let weight: f64 = w
                        .parse()
                        .map_err(|_| self.bad(w, "the weight is not a number"))?;
                    if !weight.is_finite() {
                        return Err(self.bad(w, "weights must be finite"));
                    }
                    ops.push(Op::Insert(parse_id(u), parse_id(v), Some(weight)));
                    Ok(false)
                }
                _ => Err(self.bad(content, "an insert is `+ SRC DST [WEIGHT]`")),
            },
            "-" => match fields[..] {
                [u, v] => {
                    ops.push(Op::Delete(parse_id(u), parse_id(v)));
                    Ok(false)
                }
                _ => Err(self.bad(content, "a delete is `- SRC DST`")),
            },
            _ => Err(self.bad(
                content,
                "expected `+ SRC DST [WEIGHT]`, `- SRC DST`, `commit` or a `#` comment",
            )),
        }
    }
}

/// The update of `ops` against the current graph: new vertices interned in order of first
/// appearance in inserts, deletes of unknown vertices dropped (they name no edge). Within a
/// batch, deletes apply before inserts.
fn build_update<C: packgraph::store::StoreLeaf>(
    g: &Graph<C>,
    ops: &[Op],
    weighted: bool,
) -> Result<Update, String> {
    let mut ids = Vec::new();
    for op in ops {
        if let Op::Insert(u, v, w) = op {
            if w.is_some() && !weighted {
                return Err(
                    "a weight given to an unweighted graph (create the directory with --weighted)"
                        .into(),
                );
            }
            ids.push(u.clone());
            ids.push(v.clone());
        }
    }
    let planned = g.plan_vertices(&ids);
    let mut update = Update::new();
    let mut inserts = Vec::with_capacity(planned.len() / 2);
    let mut weights = Vec::with_capacity(planned.len() / 2);
    let mut deletes = Vec::new();
    let mut next = planned.chunks_exact(2);
    for op in ops {
        match op {
            Op::Insert(_, _, w) => {
                if let Some(pair) = next.next() {
                    inserts.push((pair[0], pair[1]));
                    weights.push(w.unwrap_or(1.0));
                }
            }
            Op::Delete(u, v) => {
                let find = |id: &ExternalId| g.ids().internal_id(id);
                if let (Some(a), Some(b)) = (find(u), find(v)) {
                    deletes.push((a, b));
                }
            }
        }
    }
    update.add_vertices(ids);
    update.delete_edges(&deletes);
    if weighted {
        let edges: Vec<(VertexId, VertexId, f64)> = inserts
            .iter()
            .zip(&weights)
            .map(|(&(u, v), &w)| (u, v, w))
            .collect();
        update.insert_weighted_edges(&edges);
    } else {
        update.insert_edges(&inserts);
    }
    Ok(update)
}

pub(crate) fn ingest(args: &IngestArgs) -> anyhow::Result<()> {
    let store = AnyStore::open(&args.dir, args.sync.options()).map_err(|e| match e {
        e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
        e => BadInput(e).into(),
    })?;
    if store.recovery().torn_bytes > 0 {
        eprintln!(
            "recovered: cut a torn last log record ({} bytes) left by a crash",
            store.recovery().torn_bytes
        );
    }
    let (reader, name): (Box<dyn BufRead>, PathBuf) = if args.updates == "-" {
        (Box::new(BufReader::new(io::stdin())), "<stdin>".into())
    } else {
        let path = PathBuf::from(&args.updates);
        let file = File::open(&path).map_err(|e| BadInput(packgraph::Error::io(&path, e)))?;
        (Box::new(BufReader::with_capacity(1 << 20, file)), path)
    };
    let mut batches = BatchReader::new(reader, name);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    let mut pending: VecDeque<(Seq, u64)> = VecDeque::new();
    let started = Instant::now();
    let (mut count, mut ops_total) = (0u64, 0u64);
    let ack = |out: &mut io::StdoutLock<'_>, pending: &mut VecDeque<(Seq, u64)>, upto: Seq| {
        let mut wrote = false;
        while let Some(&(seq, line)) = pending.front() {
            if seq > upto {
                break;
            }
            writeln!(out, "acked {seq} {line}")?;
            pending.pop_front();
            wrote = true;
        }
        if wrote {
            out.flush()?;
        }
        io::Result::Ok(())
    };
    let result = (|| -> anyhow::Result<()> {
        while let Some((ops, line)) = batches.next_batch()? {
            if ops.is_empty() {
                continue;
            }
            let appended = match &store {
                AnyStore::Unweighted(s) => {
                    let update = build_update(&s.snapshot(), &ops, false)
                        .map_err(|reason| batches.bad("", &reason))?;
                    s.append(&update)
                }
                AnyStore::Weighted(s) => {
                    let update = build_update(&s.snapshot(), &ops, true)
                        .map_err(|reason| batches.bad("", &reason))?;
                    s.append(&update)
                }
            };
            let (seq, _) = appended.map_err(|e| match e {
                e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
                e => BadInput(e).into(),
            })?;
            pending.push_back((seq, line));
            count += 1;
            ops_total += ops.len() as u64;
            match args.sync.sync {
                // Acknowledge what the group syncs have covered so far.
                SyncPolicy::Group(_) => ack(&mut out, &mut pending, store.durable_seq())?,
                _ => {
                    store.wait_durable(seq)?;
                    ack(&mut out, &mut pending, seq)?;
                }
            }
        }
        Ok(())
    })();
    // Whatever happened, acknowledge the batches that were applied once they are durable.
    if let Some(&(last, _)) = pending.back() {
        store.wait_durable(last)?;
        ack(&mut out, &mut pending, last)?;
    }
    result?;
    let secs = started.elapsed().as_secs_f64();
    let g = store.graph();
    eprintln!(
        "ingested {count} batches ({ops_total} operations) in {secs:.3} s ({:.3e} operations/s, sync {}); the graph has {} vertices and {} edges",
        ops_total as f64 / secs.max(1e-9),
        args.sync.sync,
        g.num_vertices(),
        g.num_edges()
    );
    Ok(())
}

fn open_for_maintenance(dir: &Path) -> anyhow::Result<AnyStore> {
    AnyStore::open(dir, StoreOptions::default()).map_err(|e| match e {
        e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
        e => BadInput(e).into(),
    })
}

pub(crate) fn checkpoint(args: &DirArgs) -> anyhow::Result<()> {
    let store = open_for_maintenance(&args.dir)?;
    let bar = input::spinner("writing a checkpoint");
    let stats = store.checkpoint()?;
    bar.finish_and_clear();
    println!(
        "checkpoint of {} at record {}: {} bytes written, {} bytes reused ({} units new, {} reused; {})",
        args.dir.display(),
        stats.seq,
        stats.bytes_written,
        stats.bytes_reused,
        stats.units_written,
        stats.units_reused,
        if stats.delta {
            "a delta against the last full checkpoint"
        } else {
            "a full checkpoint"
        }
    );
    Ok(())
}

/// Damage found by `verify`: exit code 3.
#[derive(Debug)]
pub(crate) struct Damaged(pub(crate) packgraph::Error);

impl std::fmt::Display for Damaged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "damaged: {}", self.0)
    }
}

impl std::error::Error for Damaged {}

pub(crate) fn verify(args: &DirArgs) -> anyhow::Result<()> {
    match packgraph::store::verify(&args.dir) {
        Ok(report) => {
            println!(
                "{}: ok: {} packs ({} units), {} log records after the checkpoint; {} vertices, {} arcs",
                args.dir.display(),
                report.packs,
                report.units,
                report.records,
                report.num_vertices,
                report.num_arcs
            );
            if report.torn_bytes > 0 {
                println!(
                    "note: the log ends in {} bytes of a torn record (a write a crash cut short, never acknowledged; the next open removes it)",
                    report.torn_bytes
                );
            }
            Ok(())
        }
        Err(e @ (packgraph::Error::Corrupt { .. } | packgraph::Error::Unsupported { .. })) => {
            Err(Damaged(e).into())
        }
        Err(e @ packgraph::Error::Io { .. }) => Err(e.into()),
        Err(e) => Err(BadInput(e).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(text: &str) -> anyhow::Result<Vec<(Vec<Op>, u64)>> {
        let mut reader = BatchReader::new(text.as_bytes(), "updates.txt");
        let mut out = Vec::new();
        while let Some(batch) = reader.next_batch()? {
            out.push(batch);
        }
        Ok(out)
    }

    #[test]
    fn batches_end_at_commit_and_at_the_end() {
        let text = "# header\n+ 1 2\n+ alice bob 2.5  # a comment\ncommit\n\n- 1 2\ncommit\ncommit\n+ 3 4\n";
        let got = batches(text).unwrap();
        assert_eq!(got.len(), 4);
        assert_eq!(
            got[0],
            (
                vec![
                    Op::Insert(ExternalId::Int(1), ExternalId::Int(2), None),
                    Op::Insert("alice".into(), "bob".into(), Some(2.5)),
                ],
                4
            )
        );
        assert_eq!(
            got[1],
            (vec![Op::Delete(ExternalId::Int(1), ExternalId::Int(2))], 7)
        );
        assert_eq!(got[2], (vec![], 8));
        assert_eq!(got[3].1, 9);
    }

    #[test]
    fn bad_lines_name_file_line_and_text() {
        for (text, line, what) in [
            ("+ 1 2\n+ 1\n", 2, "an insert is"),
            ("+ 1 2 x\n", 1, "not a number"),
            ("+ 1 2 inf\n", 1, "finite"),
            ("commit\n- 1 2 3\n", 2, "a delete is"),
            ("* 1 2\n", 1, "expected"),
            ("commit now\n", 1, "takes nothing"),
        ] {
            let err = batches(text).unwrap_err().to_string();
            assert!(
                err.contains(&format!("updates.txt:{line}")),
                "{text:?}: {err}"
            );
            assert!(err.contains(what), "{text:?}: {err}");
        }
    }

    #[test]
    fn updates_intern_new_ids_and_drop_deletes_of_unknown_ones() {
        let mut g = Graph::new(false);
        g.apply(Update::new().add_vertices([10u64, 20])).unwrap();
        let ops = vec![
            Op::Insert(ExternalId::Int(10), "x".into(), None),
            Op::Delete(ExternalId::Int(10), "nobody".into()),
            Op::Delete(ExternalId::Int(10), ExternalId::Int(20)),
        ];
        let update = build_update(&g, &ops, false).unwrap();
        assert_eq!(update.inserts(), [(0, 2)]);
        assert_eq!(update.deletes(), [(0, 1)]);
        g.apply(&update).unwrap();
        assert_eq!(g.ids().internal_id(&"x".into()), Some(2));
        let weighted = vec![Op::Insert(
            ExternalId::Int(1),
            ExternalId::Int(2),
            Some(3.0),
        )];
        assert!(build_update(&g, &weighted, false).is_err());
    }
}
