//! Processes reading a data directory while another process writes it: one writer loops
//! `packgraph ingest` and `packgraph checkpoint`, reader threads loop `verify`, `info` and
//! `run bfs` processes on the directory. No reader may fail (no lock is needed to read),
//! and every reader's graph is some acknowledged prefix of the batches.
//!
//! Batch `j` (from 1) inserts the edge `(j - 1, j)`, so the state after `k` batches is the
//! path `0 - 1 - … - k`: `k` edges, and a search from 0 reaches vertex `v` at depth `v`.

use std::io::Write;
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn packgraph() -> Command {
    Command::new(env!("CARGO_BIN_EXE_packgraph"))
}

/// Reader processes in all, at least.
const READER_RUNS: usize = 200;
const READERS: usize = 3;
/// Batches per `ingest` process.
const BATCHES_PER_INGEST: u64 = 8;
/// The test gives up (fails) past this.
const TIME_LIMIT: Duration = Duration::from_secs(120);

/// The writer's progress: batches acknowledged (durable) and batches handed to `ingest`.
#[derive(Default)]
struct Progress {
    acked: AtomicU64,
    attempted: AtomicU64,
    rounds: AtomicUsize,
    stop: AtomicBool,
}

fn ingest(dir: &str, first: u64, count: u64) -> Output {
    let mut text = String::new();
    for j in first..first + count {
        text.push_str(&format!("+ {} {j}\ncommit\n", j - 1));
    }
    let mut child = packgraph()
        .args(["ingest", dir, "--sync", "group:2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// One writer round: a batch of batches, then a checkpoint.
fn write_round(dir: &str, progress: &Progress) {
    let first = progress.attempted.load(Ordering::SeqCst) + 1;
    progress
        .attempted
        .store(first + BATCHES_PER_INGEST - 1, Ordering::SeqCst);
    let out = ingest(dir, first, BATCHES_PER_INGEST);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "ingest: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("acked ")?
                .split(' ')
                .next()?
                .parse::<u64>()
                .ok()
        })
        .max();
    assert_eq!(last, Some(first + BATCHES_PER_INGEST - 1), "{stdout}");
    progress
        .acked
        .store(first + BATCHES_PER_INGEST - 1, Ordering::SeqCst);
    let out = packgraph().args(["checkpoint", dir]).output().unwrap();
    assert!(
        out.status.success(),
        "checkpoint: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    progress.rounds.fetch_add(1, Ordering::SeqCst);
}

/// The number of batches a reader's output shows, checking that it is a path prefix.
fn batches_seen(kind: usize, stdout: &str) -> Result<u64, String> {
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(name).map(str::trim))
            .and_then(|v| v.parse::<u64>().ok())
            .ok_or_else(|| format!("no `{name}` in {stdout:?}"))
    };
    match kind {
        // verify: "…; N vertices, M arcs"; an undirected edge is two arcs.
        0 => {
            let arcs = stdout
                .lines()
                .next()
                .unwrap_or("")
                .split(", ")
                .find_map(|part| part.strip_suffix(" arcs")?.trim().parse::<u64>().ok())
                .ok_or_else(|| format!("no arc count in {stdout:?}"))?;
            Ok(arcs / 2)
        }
        1 => {
            let (vertices, edges) = (field("vertices")?, field("edges")?);
            if edges > 0 && vertices != edges + 1 {
                return Err(format!("{vertices} vertices and {edges} edges: no path"));
            }
            Ok(edges)
        }
        // run bfs: one `id depth` line per vertex; the path reaches v at depth v.
        _ => {
            let mut count = 0;
            for line in stdout.lines() {
                let (id, depth) = line.split_once(' ').ok_or(format!("line {line:?}"))?;
                if id != depth {
                    return Err(format!("vertex {id} at depth {depth}: not a path prefix"));
                }
                count += 1;
            }
            Ok(count.max(1) - 1)
        }
    }
}

fn read_loop(dir: &str, reader: usize, progress: &Progress, runs: &AtomicUsize) {
    let mut i = reader;
    while !progress.stop.load(Ordering::SeqCst) {
        let kind = i % 3;
        i += 1;
        let args: Vec<&str> = match kind {
            0 => vec!["verify", dir],
            1 => vec!["info", dir],
            _ => vec!["run", "bfs", "--input", dir, "--source", "0"],
        };
        let low = progress.acked.load(Ordering::SeqCst);
        let out = packgraph().args(&args).output().unwrap();
        let high = progress.attempted.load(Ordering::SeqCst);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "reader {args:?} failed beside the writer ({:?}): {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stderr)
        );
        let seen = batches_seen(kind, &stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"));
        assert!(
            (low..=high).contains(&seen),
            "{args:?} saw {seen} batches; {low} were acknowledged before it started, {high} handed to the writer by its end"
        );
        runs.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn readers_beside_a_writer_that_ingests_and_checkpoints_see_acknowledged_prefixes() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("g").display().to_string();
    let out = packgraph().args(["create", &dir]).output().unwrap();
    assert!(out.status.success());
    // A first round, so that every reader has vertex 0 to search from.
    let progress = Arc::new(Progress::default());
    write_round(&dir, &progress);
    let runs = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let readers: Vec<_> = (0..READERS)
        .map(|r| {
            let (dir, progress, runs) = (dir.clone(), Arc::clone(&progress), Arc::clone(&runs));
            std::thread::spawn(move || read_loop(&dir, r, &progress, &runs))
        })
        .collect();
    while runs.load(Ordering::SeqCst) < READER_RUNS
        && readers.iter().all(|r| !r.is_finished())
        && started.elapsed() < TIME_LIMIT
    {
        write_round(&dir, &progress);
    }
    progress.stop.store(true, Ordering::SeqCst);
    for reader in readers {
        reader.join().expect("a reader failed");
    }
    let runs = runs.load(Ordering::SeqCst);
    assert!(
        runs >= READER_RUNS,
        "only {runs} reader runs in {TIME_LIMIT:?}"
    );
    assert!(progress.rounds.load(Ordering::SeqCst) > 2);
    let out = packgraph().args(["verify", &dir]).output().unwrap();
    assert!(out.status.success());
    let seen = batches_seen(0, &String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(seen, progress.acked.load(Ordering::SeqCst));
}
