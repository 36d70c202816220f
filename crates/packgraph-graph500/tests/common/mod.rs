//! What the tests of `packgraph-dist` share: the single-process reference (`packgraph run`
//! through the core's API), the comparison, and a generated weighted directed graph with an
//! update file; and `mpirun` with a hang limit, for the MPI binaries.

#![allow(dead_code)]

use std::ffi::OsStr;
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use packgraph::algo::{Algorithm, AlgorithmKind};
use packgraph::graph::{AnyGraph, Graph, IdKind};
use packgraph::io::updates::{build_update, UpdateReader};
use packgraph::io::{load, save, Dataset, Format, LoadOptions};
use packgraph::store::{AnyStore, StoreOptions};
use packgraph_graph500::dist::run::RunConfig;

pub(crate) const KINDS: [AlgorithmKind; 6] = [
    AlgorithmKind::Bfs,
    AlgorithmKind::Pagerank,
    AlgorithmKind::Wcc,
    AlgorithmKind::Sssp,
    AlgorithmKind::Cdlp,
    AlgorithmKind::Lcc,
];

pub(crate) fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/graphalytics")
        .join(name)
}

/// `packgraph run`'s output: the core's loader, updates applied as `packgraph ingest`
/// applies them, the registry's algorithm and the Graphalytics writer.
pub(crate) fn reference(config: &RunConfig) -> String {
    let options = LoadOptions {
        format: None,
        directed: config.load.directed,
        progress: None,
        ..LoadOptions::default()
    };
    let path = &config.load.path;
    let mut data = if packgraph::store::is_store(path) {
        // A data directory, as `packgraph run` reads it.
        Dataset {
            graph: packgraph::store::load_any(path).expect("the reference recovers"),
            self_loops: 0,
        }
    } else {
        load(path, &options).expect("the reference loads")
    };
    // `packgraph run`'s default source: the vertex of the file's smallest id (updates add
    // vertices after it).
    let default_source = data
        .ids()
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.cmp(&b.1))
        .map_or(0, |(v, _)| v as u32);
    // Update files name a named graph's vertices by names, as `packgraph ingest` reads them.
    let kind = if data.ids().has_names() {
        IdKind::Name
    } else {
        IdKind::Int
    };
    if let Some(path) = &config.updates {
        let file = std::fs::File::open(path).expect("the update file");
        for batch in UpdateReader::new(BufReader::new(file), path).ids(kind) {
            let batch = batch.expect("a well-formed batch");
            match &mut data.graph {
                AnyGraph::Unweighted(g) => {
                    let update = build_update(g, &batch.ops, false).expect("fits");
                    g.apply(&update).expect("applies");
                }
                AnyGraph::Weighted(g) => {
                    let update = build_update(g, &batch.ops, true).expect("fits");
                    g.apply(&update).expect("applies");
                }
            }
        }
    }
    let mut algorithm = Algorithm::new(config.algorithm);
    algorithm.iterations = config.iterations;
    algorithm.damping = config.damping;
    let ids = data.ids();
    algorithm.source = match &config.source {
        Some(name) if ids.has_names() => ids.internal_name(name).expect("the source is a vertex"),
        Some(source) => {
            let id: u64 = source.parse().expect("an integer source");
            ids.internal(id).expect("the source is a vertex")
        }
        None => default_source,
    };
    let output = algorithm.run_any(&data.graph).expect("the reference runs");
    let mut text = Vec::new();
    output
        .write_graphalytics(data.ids(), &mut text)
        .expect("writes");
    String::from_utf8(text).expect("text")
}

/// Asserts `got` equals `want`: PageRank within 1e-9 relative, the rest exactly.
pub(crate) fn assert_same(kind: AlgorithmKind, got: &str, want: &str, what: &str) {
    if kind != AlgorithmKind::Pagerank {
        assert_eq!(got, want, "{what}");
        return;
    }
    let (got, want): (Vec<&str>, Vec<&str>) = (got.lines().collect(), want.lines().collect());
    assert_eq!(got.len(), want.len(), "{what}: vertices");
    for (g, w) in got.iter().zip(&want) {
        let (gi, gv) = g.split_once(' ').expect("id value");
        let (wi, wv) = w.split_once(' ').expect("id value");
        assert_eq!(gi, wi, "{what}: ids");
        let (gv, wv): (f64, f64) = (gv.parse().expect("real"), wv.parse().expect("real"));
        assert!(
            (gv - wv).abs() <= 1e-9 * wv.abs(),
            "{what}: vertex {gi}: {gv} against {wv}"
        );
    }
}

/// A weighted directed graph on sparse ids (`7 · i + 3`), as an edge list, and an update
/// file of three batches: inserts with new vertices, deletes (one of an unknown vertex, one
/// of an edge inserted in the same batch), weight changes.
pub(crate) fn weighted_directed(dir: &Path, n: u64, m: usize, seed: u64) -> (PathBuf, PathBuf) {
    let mut state = seed;
    let mut next = |bound: u64| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) % bound
    };
    let id = |i: u64| 7 * i + 3;
    let mut text = String::from("# generated: weighted, directed\n");
    for _ in 0..m {
        let (u, v) = (next(n), next(n));
        let w = (next(1000) + 1) as f64 / 64.0;
        text.push_str(&format!("{} {} {w}\n", id(u), id(v)));
    }
    let graph = dir.join("graph.el");
    std::fs::write(&graph, text).expect("writes the graph");
    let mut updates = String::new();
    for batch in 0..3 {
        for _ in 0..m / 8 {
            let (u, v) = (next(n + 6), next(n + 6));
            let w = (next(1000) + 1) as f64 / 32.0;
            match next(3) {
                0 => updates.push_str(&format!("- {} {}\n", id(u), id(v))),
                _ => updates.push_str(&format!("+ {} {} {w}\n", id(u), id(v))),
            }
        }
        updates.push_str(&format!("- 999999 {}\n", id(batch)));
        updates.push_str(&format!(
            "+ {} {} 0.5\n- {} {}\ncommit\n",
            id(1),
            id(n + 9),
            id(1),
            id(n + 9)
        ));
    }
    let path = dir.join("updates.txt");
    std::fs::write(&path, updates).expect("writes the updates");
    (graph, path)
}

pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pg-dist-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// One `mpirun` at a time: two starting together race on Open MPI's session directory.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `binary` under `mpirun -n processes --oversubscribe`; kills it after `hang`.
pub(crate) fn mpirun<A: AsRef<OsStr> + std::fmt::Debug>(
    binary: &str,
    processes: usize,
    args: &[A],
    hang: Duration,
) -> Output {
    let mut command = Command::new("mpirun");
    command
        .args(["-n", &processes.to_string(), "--oversubscribe"])
        .arg(binary)
        .args(args)
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    run_with_limit(command, hang)
}

/// Runs an `mpirun` command line (one at a time, root allowed); kills it after `hang`.
pub(crate) fn run_with_limit(mut command: Command, hang: Duration) -> Output {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = command
        // Containers often run tests as root, which Open MPI refuses without these.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun on the PATH (apt-get install openmpi-bin libopenmpi-dev)");
    let start = Instant::now();
    while child.try_wait().expect("waiting for mpirun").is_none() {
        if start.elapsed() > hang {
            child.kill().expect("killing a hung mpirun");
            panic!("{command:?} hung for {hang:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("mpirun's output")
}

/// The graph of the edge list `graph` as `packgraph convert` writes a snapshot
/// (`NAME.pgb`) and as `packgraph create --from` then `packgraph ingest` leave a data
/// directory (`NAME.dir`): `batches` (an update file) committed to its log after the first
/// checkpoint, so that reading it replays them. Returns (snapshot, directory).
pub(crate) fn stored_inputs(
    dir: &Path,
    graph: &Path,
    directed: bool,
    batches: Option<&Path>,
) -> (PathBuf, PathBuf) {
    let options = LoadOptions {
        format: None,
        directed: Some(directed),
        progress: None,
        ..LoadOptions::default()
    };
    let stem = graph.file_stem().expect("a file name").to_string_lossy();
    let snapshot = dir.join(format!("{stem}.pgb"));
    let data = load(graph, &options).expect("the edge list loads");
    save(&data, &snapshot, Format::Binary).expect("writes the snapshot");
    let store_dir = dir.join(format!("{stem}.dir"));
    let store = AnyStore::create(&store_dir, StoreOptions::default(), data.graph)
        .expect("creates the data directory");
    if let Some(path) = batches {
        commit_file(&store, path, IdKind::Int);
    }
    (snapshot, store_dir)
}

/// Commits every batch of the update file `path` to `store`, as `packgraph ingest` does.
pub(crate) fn commit_file(store: &AnyStore, path: &Path, kind: IdKind) {
    let file = std::fs::File::open(path).expect("the update file");
    for batch in UpdateReader::new(BufReader::new(file), path).ids(kind) {
        let batch = batch.expect("a well-formed batch");
        let update = match store.graph() {
            AnyGraph::Unweighted(g) => build_update(&g, &batch.ops, false),
            AnyGraph::Weighted(g) => build_update(&g, &batch.ops, true),
        }
        .expect("fits");
        store.commit(&update).expect("commits");
    }
}

/// A data directory of named vertices (`packgraph create --ids name`, then `ingest`): a
/// ring and chords over names given out of their sorted order, and an update file of named
/// batches (a new name, a delete of an unknown name). Returns (directory, updates).
pub(crate) fn named_directory(dir: &Path, directed: bool) -> (PathBuf, PathBuf) {
    let name = |i: usize| format!("v{}", (i * 37) % 101);
    let mut text = String::new();
    for i in 0..60 {
        text.push_str(&format!("+ {} {}\n", name(i), name(i + 1)));
        if i % 7 == 0 {
            text.push_str(&format!("+ {} {}\n", name(i), name(i * 3 + 5)));
        }
        if i % 20 == 19 {
            text.push_str("commit\n");
        }
    }
    // Two vertices on their own, to have more than one component.
    text.push_str("+ zeta omega\ncommit\n");
    let batches = dir.join("named-batches.txt");
    std::fs::write(&batches, text).expect("writes");
    let store_dir = dir.join(format!("named-{directed}.dir"));
    let store = AnyStore::create_with_ids(
        &store_dir,
        StoreOptions::default(),
        AnyGraph::Unweighted(Graph::new(directed)),
        Some(IdKind::Name),
    )
    .expect("creates the data directory");
    commit_file(&store, &batches, IdKind::Name);
    drop(store);
    let updates = dir.join("named-updates.txt");
    std::fs::write(
        &updates,
        "+ alpha v3\n- nobody v3\n- v0 v37\n+ omega v74\ncommit\n+ alpha beta\ncommit\n",
    )
    .expect("writes");
    (store_dir, updates)
}

/// A snapshot of a generated weighted directed graph (100 vertices, 400 edges) written into
/// `dir`, with one byte in its middle flipped: damage every reader must report.
pub(crate) fn damaged_snapshot(dir: &Path) -> PathBuf {
    let (graph, _) = weighted_directed(dir, 100, 400, 3);
    let (snapshot, _) = stored_inputs(dir, &graph, true, None);
    let mut bytes = std::fs::read(&snapshot).expect("reads");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x5a;
    std::fs::write(&snapshot, &bytes).expect("writes");
    snapshot
}
