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
use packgraph::graph::{AnyGraph, IdKind};
use packgraph::io::updates::{build_update, UpdateReader};
use packgraph::io::{load, LoadOptions};
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
    };
    let mut data = load(&config.load.path, &options).expect("the reference loads");
    if let Some(path) = &config.updates {
        let file = std::fs::File::open(path).expect("the update file");
        for batch in UpdateReader::new(BufReader::new(file), path).ids(IdKind::Int) {
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
    if let Some(source) = &config.source {
        let id: u64 = source.parse().expect("an integer source");
        algorithm.source = data.ids().internal(id).expect("the source is a vertex");
    }
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
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let mut child = Command::new("mpirun")
        .args(["-n", &processes.to_string(), "--oversubscribe"])
        .arg(binary)
        .args(args)
        // Containers often run tests as root, which Open MPI refuses without these.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun on the PATH (apt-get install openmpi-bin libopenmpi-dev)");
    let start = Instant::now();
    while child.try_wait().expect("waiting for mpirun").is_none() {
        if start.elapsed() > hang {
            child.kill().expect("killing a hung mpirun");
            panic!("mpirun -n {processes} {args:?} hung for {hang:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().expect("mpirun's output")
}
