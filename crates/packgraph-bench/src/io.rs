//! `packgraph-bench io`: getting graphs in. For a Graph500 Kronecker graph: generation time;
//! loading its text edge list (every arc on its own line, as SNAP lists undirected graphs)
//! into a ready graph, against reading the same file's bytes (the I/O ceiling) in the same
//! run; reloading the binary snapshot, as a speed-up over the text load; and
//! `packgraph run bfs` end to end on the snapshot (a child process), split into start-up
//! and load versus the algorithm.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::Context;
use clap::Args;
use packgraph::graph::{AnyGraph, GraphRead};
use packgraph::io::generate::kronecker;
use packgraph::io::{load, save, Dataset, Format, LoadOptions};

use crate::args::{usage_error, CommonArgs};
use crate::{timed, Record, Reporter};

/// Options of `packgraph-bench io`.
#[derive(Args, Debug, Clone)]
pub(crate) struct IoArgs {
    /// log2 of the vertex count.
    #[arg(long, default_value_t = 20)]
    scale: u32,
    /// Generated edges per vertex.
    #[arg(long, default_value_t = 16)]
    edge_factor: usize,
    /// Directory for the files written (default: a temporary directory, removed after).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The `packgraph` binary that the run_bfs rows run (default: the one beside this
    /// binary, else `packgraph` on PATH).
    #[arg(long, value_name = "FILE")]
    packgraph: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

pub(crate) fn run(args: &IoArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.scale = args.scale.min(12);
    }
    let args = &args;
    if !(4..=26).contains(&args.scale) {
        return Err(usage_error(format!(
            "--scale {}: must be in 4..=26",
            args.scale
        )));
    }
    let temp = tempfile::tempdir().context("creating a temporary directory")?;
    let dir = args
        .dir
        .clone()
        .unwrap_or_else(|| temp.path().to_path_buf());
    let reporter = Reporter::new(args.common.json, 6);
    let scale = u64::from(args.scale);
    let emit = |structure, op, value, unit, keys: Option<u64>| {
        reporter.emit(Record {
            bench: "io",
            structure,
            op,
            param: scale,
            threads,
            value,
            unit,
            keys,
            dataset: Some("kronecker"),
        })
    };

    reporter.step("generating".into());
    let (edges, generated) = timed(|| kronecker(args.scale, args.edge_factor, args.common.seed));
    emit(
        "kronecker",
        "generate",
        generated.as_secs_f64(),
        "s",
        Some(edges.len() as u64),
    )?;
    reporter.advance();

    let data = Dataset::from_edges(1 << args.scale, &edges, None, false)?;
    drop(edges);
    let text = dir.join(format!("kronecker-{}.txt", args.scale));
    reporter.step("writing the text edge list".into());
    let arcs = write_arcs(&data, &text)?;
    let bytes = std::fs::metadata(&text)?.len();
    emit("text", "file_size", bytes as f64 / 1e6, "MB", Some(arcs))?;
    drop(data);
    reporter.advance();

    reporter.step("reading the raw bytes".into());
    let (raw, read_time) = timed(|| std::fs::read(&text));
    drop(raw.with_context(|| text.display().to_string())?);
    emit(
        "raw_bytes",
        "read",
        bytes as f64 / 1e6 / read_time.as_secs_f64(),
        "MB/s",
        None,
    )?;
    reporter.step("loading the text edge list".into());
    let (loaded, text_time) = timed(|| load(&text, &LoadOptions::default()));
    let loaded = loaded?;
    emit(
        "text",
        "load",
        bytes as f64 / 1e6 / text_time.as_secs_f64(),
        "MB/s",
        Some(arcs),
    )?;
    emit(
        "text",
        "load_time",
        text_time.as_secs_f64(),
        "s",
        Some(arcs),
    )?;
    reporter.advance();

    let snapshot = dir.join(format!("kronecker-{}.pgb", args.scale));
    reporter.step("writing the snapshot".into());
    let (saved, save_time) = timed(|| save(&loaded, &snapshot, Format::Binary));
    saved?;
    let snapshot_bytes = std::fs::metadata(&snapshot)?.len();
    emit("binary", "save_time", save_time.as_secs_f64(), "s", None)?;
    emit(
        "binary",
        "file_size",
        snapshot_bytes as f64 / 1e6,
        "MB",
        Some(arcs),
    )?;
    let edges_loaded = loaded.graph.num_arcs() as u64;
    drop(loaded);
    reporter.step("reloading the snapshot".into());
    let (reloaded, binary_time) = timed(|| load(&snapshot, &LoadOptions::default()));
    let reloaded = reloaded?;
    if reloaded.graph.num_arcs() as u64 != edges_loaded {
        anyhow::bail!("the snapshot reloaded a different graph");
    }
    drop(reloaded);
    emit(
        "binary",
        "load_time",
        binary_time.as_secs_f64(),
        "s",
        Some(edges_loaded),
    )?;
    emit(
        "binary",
        "reload_speedup",
        text_time.as_secs_f64() / binary_time.as_secs_f64(),
        "x",
        None,
    )?;
    reporter.advance();

    reporter.step("packgraph run bfs on the snapshot".into());
    measure_run_bfs(args, &snapshot, &dir, threads, &emit)?;
    reporter.advance();
    reporter.finish();
    Ok(())
}

/// `packgraph run bfs` on `snapshot` as a child process: its wall time, and the load,
/// algorithm, output and start-up times within it. Skipped, with a note, when there is no
/// `packgraph` binary to run.
fn measure_run_bfs(
    args: &IoArgs,
    snapshot: &Path,
    dir: &Path,
    threads: usize,
    emit: &dyn Fn(&'static str, &'static str, f64, &'static str, Option<u64>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let exe = packgraph_binary(args);
    let start = Instant::now();
    let output = Command::new(&exe)
        .args([
            "--threads",
            &threads.to_string(),
            "run",
            "bfs",
            "--json",
            "-o",
        ])
        .arg(dir.join("bfs.out"))
        .arg("--input")
        .arg(snapshot)
        .output();
    let wall = start.elapsed();
    let output = match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "bench io: no run_bfs rows: {} not found (build it with `cargo build --release \
                 -p packgraph-cli`, or name it with --packgraph FILE)",
                exe.display()
            );
            return Ok(());
        }
        other => other.with_context(|| format!("running {} run bfs", exe.display()))?,
    };
    if !output.status.success() {
        anyhow::bail!(
            "packgraph run bfs failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let summary: serde_json::Value = serde_json::from_slice(&output.stderr)
        .context("reading the summary of packgraph run bfs")?;
    let field = |name: &str| summary[name].as_f64().unwrap_or(f64::NAN);
    emit("run_bfs", "process_wall", wall.as_secs_f64(), "s", None)?;
    emit("run_bfs", "load", field("load_seconds"), "s", None)?;
    emit("run_bfs", "bfs", field("algorithm_seconds"), "s", None)?;
    emit("run_bfs", "write_output", field("write_seconds"), "s", None)?;
    emit(
        "run_bfs",
        "startup_other",
        wall.as_secs_f64() - field("total_seconds"),
        "s",
        None,
    )
}

/// The `packgraph` tool: `--packgraph`, else the one beside this binary (the same cargo
/// target directory), else the bare name, looked up on PATH when run.
fn packgraph_binary(args: &IoArgs) -> PathBuf {
    if let Some(path) = &args.packgraph {
        return path.clone();
    }
    let name = format!("packgraph{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe()
        .unwrap_or_default()
        .with_file_name(name);
    if beside.is_file() {
        beside
    } else {
        PathBuf::from("packgraph")
    }
}

/// Writes every arc as a `u v` line; returns the number of lines.
fn write_arcs(data: &Dataset, path: &std::path::Path) -> anyhow::Result<u64> {
    let AnyGraph::Unweighted(graph) = &data.graph else {
        anyhow::bail!("expected an unweighted graph");
    };
    let file = std::fs::File::create(path).with_context(|| path.display().to_string())?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
    let mut lines = 0;
    let mut line = Vec::with_capacity(32);
    for v in 0..graph.num_vertices() as u32 {
        graph.for_each_out_neighbor(v, |w| {
            line.clear();
            let _ = writeln!(line, "{v} {w}");
            lines += 1;
            out.write_all(&line).is_ok()
        });
    }
    out.flush()?;
    Ok(lines)
}
