//! The durable commands: `create`, `ingest`, `checkpoint`, `verify` and `recover` on a data
//! directory
//! (`packgraph::store`); `ingest` reads batches with `packgraph::io::updates`.

use std::cell::Cell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use packgraph::graph::{AnyGraph, Graph, IdKind, Packing, WeightedGraph};
use packgraph::io::updates::{build_update, UnfitOp as Unfit, UpdateBatch, UpdateReader};
use packgraph::store::{AnyStore, AppendGroup, Seq, StoreLeaf, StoreOptions, SyncPolicy};

use crate::input::{self, BadInput, ReadArgs};
use crate::UsageError;

/// Arguments of `packgraph create`.
#[derive(Args, Debug)]
pub(crate) struct CreateArgs {
    /// The new data directory (created; if it exists it must be empty).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Start from this graph file (any file `run` reads) instead of an empty graph.
    #[arg(long, short = 'i', visible_alias = "input", value_name = "FILE")]
    from: Option<PathBuf>,
    #[command(flatten)]
    read: ReadArgs,
    /// Edges carry weights (an empty graph; a file's own columns decide otherwise).
    #[arg(long)]
    weighted: bool,
    /// What vertices are named by, for good: `int` (decimal integers, as graph files hold)
    /// or `name` (every word is a name, digits included). Taken from the file with
    /// `--from`; left out for an empty directory, its first batch fixes it. Updates with ids
    /// of the other kind are refused (exit 2, naming the line).
    #[arg(long, value_name = "KIND", value_parser = parse_id_kind)]
    ids: Option<IdKind>,
    /// Print the outcome as one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

fn parse_id_kind(text: &str) -> Result<IdKind, String> {
    text.parse()
}

/// Arguments of `packgraph ingest`.
#[derive(Args, Debug)]
pub(crate) struct IngestArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Update batches, one operation a line: `+ SRC DST [WEIGHT]` inserts, `- SRC DST`
    /// deletes, `#` starts a comment, a line `commit` ends a batch (the end of the input
    /// ends the last). `-` or nothing reads standard input. Ids are read as the
    /// directory's kind (`create --ids`): an id of the other kind exits 2 naming its line.
    /// The format is `packgraph::io::updates`.
    #[arg(long, value_name = "FILE", default_value = "-")]
    updates: String,
    /// The most operations a batch may hold (a longer one is an error naming its line;
    /// lines may hold at most 1 MiB). Load large graphs with `create --from` instead.
    #[arg(long, value_name = "N", default_value_t = packgraph::io::updates::DEFAULT_MAX_BATCH_OPS)]
    max_batch_ops: usize,
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

/// Arguments of `packgraph checkpoint`.
#[derive(Args, Debug)]
pub(crate) struct CheckpointArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// Print what the checkpoint wrote as one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

/// A data directory, the one argument of `checkpoint` and `verify`.
#[derive(Args, Debug)]
pub(crate) struct DirArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

pub(crate) fn create(args: &CreateArgs) -> anyhow::Result<()> {
    let graph = match &args.from {
        Some(path) => {
            let (data, _) = input::read(path, &args.read, Packing::Updates)
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
    if let (Some(IdKind::Name), Some(path)) = (args.ids, &args.from) {
        if !graph.ids().is_empty() && graph.ids().name_count() < graph.ids().len() {
            return Err(UsageError(format!(
                "--ids name: {} names its vertices by integers (graph files do); leave --ids out, or start empty and ingest named updates",
                path.display()
            ))
            .into());
        }
    }
    let bar = input::spinner("writing the first checkpoint");
    let store = AnyStore::create_with_ids(&args.dir, StoreOptions::default(), graph, args.ids)
        .map_err(BadInput)?;
    bar.finish_and_clear();
    let g = store.graph();
    if args.json {
        let summary = serde_json::json!({
            "dir": args.dir.display().to_string(),
            "vertices": g.num_vertices(),
            "edges": g.num_edges(),
            "directed": g.is_directed(),
            "weighted": g.is_weighted(),
            "ids": match store.id_kind() {
                Some(IdKind::Int) => Some("int"),
                Some(IdKind::Name) => Some("name"),
                None => None,
            },
        });
        return crate::files::print_stdout(&format!("{summary}\n"));
    }
    println!(
        "created {}: {} vertices, {} edges ({}, {}); vertex ids: {}",
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
        },
        match store.id_kind() {
            Some(IdKind::Int) => "integers",
            Some(IdKind::Name) => "names",
            None => "integers or names, as the first batch has them",
        }
    );
    Ok(())
}

pub(crate) fn ingest(args: &IngestArgs) -> anyhow::Result<()> {
    let store = open_store(&args.dir, args.sync.options())?;
    if store.recovery().torn_bytes > 0 {
        eprintln!(
            "recovered: cut a torn last log record ({} bytes) left by a crash",
            store.recovery().torn_bytes
        );
    }
    let (reader, name): (Box<dyn BufRead>, PathBuf) = if args.updates == "-" {
        (
            Box::new(BufReader::with_capacity(1 << 20, io::stdin())),
            "<stdin>".into(),
        )
    } else {
        let path = PathBuf::from(&args.updates);
        let file = File::open(&path).map_err(|e| BadInput(packgraph::Error::io(&path, e)))?;
        (Box::new(BufReader::with_capacity(1 << 20, file)), path)
    };
    let buffered = Rc::new(Cell::new(0));
    let reader = Watched {
        inner: reader,
        buffered: Rc::clone(&buffered),
    };
    let batches = UpdateReader::new(reader, name).max_batch_ops(args.max_batch_ops);
    // Words are read as the directory's kind of id; an empty one takes its first batch's.
    let mut batches = match store.id_kind() {
        Some(kind) => batches.ids(kind),
        None => batches.ids_from_first(),
    };
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
    // Batches whose input is already read are applied as a group (one version published
    // for all of them); a batch still to come from a pipe is not waited for.
    let more = || buffered.get() > 0;
    let result = (|| -> anyhow::Result<()> {
        loop {
            let group = match &store {
                AnyStore::Unweighted(s) => s.append_group(|g| ingest_group(g, &mut batches, more)),
                AnyStore::Weighted(s) => s.append_group(|g| ingest_group(g, &mut batches, more)),
            }
            .0;
            for batch in &group.appended {
                if batch.self_loops > 0 {
                    eprintln!(
                        "note: {}: the batch ending at line {} (record {}) has {} self-loops, not stored (a graph keeps none)",
                        batches.source_name().display(),
                        batch.line,
                        batch.seq,
                        batch.self_loops
                    );
                }
                pending.push_back((batch.seq, batch.line));
                count += 1;
                ops_total += batch.ops as u64;
            }
            match (args.sync.sync, pending.back()) {
                // No more input at hand (a pipe's writer may wait for these acks): wait for
                // the next group sync before reading on.
                (SyncPolicy::Group(_), Some(&(last, _))) if !more() => {
                    store.wait_durable(last)?;
                    ack(&mut out, &mut pending, last)?;
                }
                // Acknowledge what the group syncs have covered so far.
                (SyncPolicy::Group(_), _) => ack(&mut out, &mut pending, store.durable_seq())?,
                (_, Some(&(last, _))) => {
                    store.wait_durable(last)?;
                    ack(&mut out, &mut pending, last)?;
                }
                (_, None) => {}
            }
            match group.end {
                GroupEnd::More => {}
                GroupEnd::Done => return Ok(()),
                GroupEnd::Failed(e) => return Err(e),
            }
        }
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

/// How long `ingest` goes on reading batches into one group (published as one version).
const GROUP_TIME: Duration = Duration::from_millis(10);

/// The most batches in one group of `ingest`.
const GROUP_BATCHES: usize = 4096;

/// The most operations in one group of `ingest`: past this, a version's fixed cost is
/// small beside the batches'.
const GROUP_OPS: usize = 1 << 16;

/// A batch `ingest` appended.
struct Appended {
    seq: Seq,
    /// The line that ended it.
    line: u64,
    ops: usize,
    self_loops: usize,
}

/// Why a group of `ingest` ended.
enum GroupEnd {
    /// It was full, or no more input was at hand.
    More,
    /// The input ended.
    Done,
    /// A batch was bad or could not be logged: nothing of it was applied, and `ingest`
    /// stops after acknowledging the earlier batches.
    Failed(anyhow::Error),
}

/// What one group of `ingest` did.
struct IngestGroup {
    appended: Vec<Appended>,
    end: GroupEnd,
}

/// Reads batches and appends them to `group` one after another, each built from the graph
/// as the earlier ones left it, until the input ends, a batch fails, the group is full
/// ([`GROUP_TIME`], [`GROUP_BATCHES`], [`GROUP_OPS`]), or `more` says that reading the next
/// batch could wait for input.
fn ingest_group<C: StoreLeaf, R: BufRead>(
    group: &mut AppendGroup<'_, '_, C>,
    batches: &mut UpdateReader<R>,
    more: impl Fn() -> bool,
) -> IngestGroup {
    let started = Instant::now();
    let mut appended = Vec::new();
    let mut ops_in_group = 0;
    let end = loop {
        let batch = match batches.next_batch() {
            Ok(Some(batch)) => batch,
            Ok(None) => break GroupEnd::Done,
            Err(e) => break GroupEnd::Failed(packgraph::Error::from(e).into()),
        };
        let UpdateBatch {
            ops,
            lines,
            commit_line: line,
        } = batch;
        if !ops.is_empty() {
            // An operation that does not fit the graph is bad input at its line.
            let unfit = |unfit: Unfit| packgraph::Error::InvalidInput {
                path: Some(batches.source_name().to_path_buf()),
                line: Some(lines[unfit.op]),
                value: Some(unfit.value),
                reason: unfit.reason.into(),
            };
            // The update is built from the writer's own graph under its lock (a snapshot
            // of the latest version would need that version's vertex index); it only looks
            // up vertices, so a batch of edges between known vertices joins the group's
            // merged batch.
            match group.append_merged_with(|g| build_update(g, &ops, C::WEIGHTED).map_err(unfit)) {
                Ok((seq, merged)) => appended.push(Appended {
                    seq,
                    line,
                    ops: ops.len(),
                    self_loops: merged.self_loops,
                }),
                Err(e @ packgraph::Error::Io { .. }) => break GroupEnd::Failed(e.into()),
                Err(e) => break GroupEnd::Failed(BadInput(e).into()),
            }
            ops_in_group += ops.len();
        }
        if appended.len() >= GROUP_BATCHES
            || ops_in_group >= GROUP_OPS
            || started.elapsed() >= GROUP_TIME
            || !more()
        {
            break GroupEnd::More;
        }
    };
    IngestGroup { appended, end }
}

/// A reader that counts the bytes it holds already read: while it holds some, the next
/// batch is (at least partly) at hand, and reading it does not wait for a pipe's writer.
struct Watched {
    inner: Box<dyn BufRead>,
    buffered: Rc<Cell<usize>>,
}

impl io::Read for Watched {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let read = self.inner.read(buf)?;
        self.buffered.set(0);
        Ok(read)
    }
}

impl BufRead for Watched {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        let buf = self.inner.fill_buf()?;
        self.buffered.set(buf.len());
        Ok(buf)
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.buffered
            .set(self.buffered.get().saturating_sub(amount));
    }
}

/// Opens `dir` for writing; another writer holding it is the user's to sort out (exit 2).
pub(crate) fn open_store(dir: &Path, options: StoreOptions) -> anyhow::Result<AnyStore> {
    AnyStore::open(dir, options).map_err(|e| match e {
        packgraph::Error::Io { source, .. } if source.kind() == io::ErrorKind::WouldBlock => {
            UsageError(format!(
                "{}: another process has this data directory open for writing; wait for it to finish",
                dir.display()
            ))
            .into()
        }
        e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
        e @ packgraph::Error::Corrupt { .. } => Damaged(e).into(),
        e => BadInput(e).into(),
    })
}

fn open_for_maintenance(dir: &Path) -> anyhow::Result<AnyStore> {
    open_store(dir, StoreOptions::default())
}

pub(crate) fn checkpoint(options: &CheckpointArgs) -> anyhow::Result<()> {
    let args = &options.dir;
    let store = open_for_maintenance(&args.dir)?;
    let bar = input::spinner("writing a checkpoint");
    let stats = store.checkpoint()?;
    bar.finish_and_clear();
    if options.json {
        let summary = serde_json::json!({
            "dir": args.dir.display().to_string(),
            "seq": stats.seq,
            "delta": stats.delta,
            "bytes_written": stats.bytes_written,
            "bytes_reused": stats.bytes_reused,
            "units_written": stats.units_written,
            "units_reused": stats.units_reused,
        });
        return crate::files::print_stdout(&format!("{summary}\n"));
    }
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

/// Arguments of `packgraph verify`.
#[derive(Args, Debug)]
pub(crate) struct VerifyArgs {
    #[command(flatten)]
    dir: DirArgs,
    /// Print the outcome as one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn verify(options: &VerifyArgs) -> anyhow::Result<()> {
    let args = &options.dir;
    match packgraph::store::verify(&args.dir) {
        Ok(report) if options.json => {
            let summary = serde_json::json!({
                "dir": args.dir.display().to_string(),
                "ok": true,
                "packs": report.packs,
                "units": report.units,
                "records": report.records,
                "vertices": report.num_vertices,
                "arcs": report.num_arcs,
                "stray_packs": report.stray_packs,
                "torn_bytes": report.torn_bytes,
                "high_water": report.high_water,
            });
            crate::files::print_stdout(&format!("{summary}\n"))
        }
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
            if report.stray_packs > 0 {
                println!(
                    "note: {} pack files past the manifest's last do not check out (left by a checkpoint that never finished, named by no manifest; the next open removes them)",
                    report.stray_packs
                );
            }
            if report.torn_bytes > 0 {
                println!(
                    "note: the log ends in {} bytes of a torn record (a write a crash cut short, never acknowledged; the next open removes it)",
                    report.torn_bytes
                );
            }
            match report.high_water {
                Some(mark) => println!(
                    "the log reaches the high-water mark: batches up to {mark} were recorded as acknowledged"
                ),
                None => println!(
                    "note: no high-water mark (a directory from before marks were kept; the next writer records one)"
                ),
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

/// Arguments of `packgraph recover`.
#[derive(Args, Debug)]
pub(crate) struct RecoverArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Cut off a damaged last log record (all its bytes there, its checksum wrong), losing
    /// the batch it held, instead of refusing the directory.
    #[arg(long)]
    truncate_damaged_tail: bool,
    /// Accept a log that ends before the high-water mark (acknowledged batches lost: the log
    /// was cut back or deleted), or before the checkpoint, instead of refusing the
    /// directory: the lost batches are named, and new batches are numbered after them.
    #[arg(long)]
    accept_lost_log: bool,
    /// Print the outcome as one JSON object on stdout instead of text.
    #[arg(long)]
    json: bool,
}

pub(crate) fn recover(args: &RecoverArgs) -> anyhow::Result<()> {
    let options = StoreOptions {
        truncate_damaged_tail: args.truncate_damaged_tail,
        accept_lost_log: args.accept_lost_log,
        ..StoreOptions::default()
    };
    let store = AnyStore::open(&args.dir, options).map_err(|e| match e {
        e @ (packgraph::Error::Corrupt { .. } | packgraph::Error::Unsupported { .. }) => {
            anyhow::Error::new(Damaged(e))
        }
        e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
        e => BadInput(e).into(),
    })?;
    let stats = store.recovery();
    if args.json {
        let summary = serde_json::json!({
            "dir": args.dir.display().to_string(),
            "checkpoint_seq": stats.checkpoint_seq,
            "records_replayed": stats.records_replayed,
            "last_seq": store.durable_seq(),
            "damaged_seq": stats.damaged_seq,
            "damaged_bytes": stats.damaged_bytes,
            "lost_first": stats.lost_seqs.map(|(first, _)| first),
            "lost_last": stats.lost_seqs.map(|(_, last)| last),
            "torn_bytes": stats.torn_bytes,
        });
        return crate::files::print_stdout(&format!("{summary}\n"));
    }
    match stats.damaged_seq {
        Some(seq) => println!(
            "{}: cut off the damaged last log record {seq} ({} bytes): the batch acknowledged as {seq} is lost",
            args.dir.display(),
            stats.damaged_bytes
        ),
        None if stats.lost_seqs.is_none() => {
            println!("{}: no damaged log record; nothing lost", args.dir.display());
        }
        None => {}
    }
    if let Some((first, last)) = stats.lost_seqs {
        println!(
            "{}: the log lacked batches {first} to {last}, recorded as acknowledged: they are lost; new batches are numbered from {}",
            args.dir.display(),
            last + 1
        );
    }
    if stats.torn_bytes > 0 {
        println!(
            "note: also cut {} bytes of a torn record (a write a crash cut short, never acknowledged)",
            stats.torn_bytes
        );
    }
    println!(
        "recovered: the checkpoint at record {}, then {} log records; the last record is {}",
        stats.checkpoint_seq,
        stats.records_replayed,
        store.durable_seq()
    );
    Ok(())
}
