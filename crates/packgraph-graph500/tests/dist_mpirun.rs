//! `packgraph-dist` under `mpirun` on 1, 2 and 4 processes (`--oversubscribe`): every
//! algorithm's output equals `packgraph run`'s (the core's, PageRank within 1e-9 relative)
//! on Graphalytics graphs and on a generated weighted directed graph before and after an
//! update file, and on a snapshot, a data directory and a named data directory; a malformed
//! line in one process's range, or a damaged snapshot, stops every process with one error
//! (file and line where there is one), and no hang. Needs Open MPI's `mpirun`; built with feature `mpi`.

#![cfg(feature = "mpi")]

mod common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use packgraph::algo::AlgorithmKind;
use packgraph_graph500::dist::run::RunConfig;

use common::{
    assert_same, damaged_snapshot, data, named_directory, reference, stored_inputs, temp_dir,
    weighted_directed, KINDS,
};

/// How long one `mpirun` may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(60);

/// Runs `packgraph-dist` on `processes` processes; kills it after [`HANG`].
fn mpirun(processes: usize, args: &[String]) -> Output {
    common::mpirun(env!("CARGO_BIN_EXE_packgraph-dist"), processes, args, HANG)
}

/// The command line of `config`.
fn args(config: &RunConfig) -> Vec<String> {
    let mut args = vec![
        "run".to_string(),
        config.algorithm.name().to_string(),
        "--input".to_string(),
        config.load.path.display().to_string(),
    ];
    if config.load.directed == Some(true) {
        args.push("--directed".into());
    }
    if config.load.weighted {
        args.push("--weighted".into());
    }
    if let Some(source) = &config.source {
        args.extend(["--source".into(), source.clone()]);
    }
    if let Some(updates) = &config.updates {
        args.extend(["--updates".into(), updates.display().to_string()]);
    }
    if let Some(n) = config.iterations {
        args.extend(["--iterations".into(), n.to_string()]);
    }
    args
}

fn check(processes: usize, config: &RunConfig, what: &str) {
    let out = mpirun(processes, &args(config));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what} on {processes}: {stderr}");
    let got = String::from_utf8(out.stdout).expect("text");
    assert_same(
        config.algorithm,
        &got,
        &reference(config),
        &format!("{what} on {processes}"),
    );
}

#[test]
fn every_algorithm_equals_packgraph_run_on_one_two_and_four_processes() {
    let dir = temp_dir("mpirun");
    let (graph, updates) = weighted_directed(&dir, 400, 2400, 11);
    // Five runs per algorithm keep the test near half a minute: the generated graph after
    // the updates on 1, 2 and 4 processes, before them on 4, and one example graph on 4
    // (directed and undirected in turn; tests/dist.rs covers every graph on 1, 2 and 4
    // simulated processes).
    for (k, kind) in KINDS.into_iter().enumerate() {
        for processes in [1, 2, 4] {
            let mut config = RunConfig::new(kind, &graph);
            config.load.directed = Some(true);
            config.load.weighted = true;
            config.source = Some("10".into());
            if processes == 4 {
                check(processes, &config, &format!("{kind} (generated)"));
            }
            config.updates = Some(updates.clone());
            check(processes, &config, &format!("{kind} (generated, updated)"));
        }
        let (name, directed, source) = [
            ("example-directed", true, "1"),
            ("example-undirected", false, "2"),
        ][k % 2];
        let mut config = RunConfig::new(kind, data(&format!("{name}.e")));
        config.load.directed = Some(directed);
        config.iterations = Some(2);
        config.source = Some(source.into());
        check(4, &config, &format!("{kind} ({name})"));
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn snapshots_and_data_directories_equal_packgraph_run_on_one_two_and_four_processes() {
    use packgraph::algo::AlgorithmKind::{Bfs, Cdlp, Lcc, Pagerank, Sssp, Wcc};
    let dir = temp_dir("mpirun-stored");
    let (graph, updates) = weighted_directed(&dir, 300, 1800, 13);
    let (snapshot, store) = stored_inputs(&dir, &graph, true, Some(&updates));
    let (named, named_updates) = named_directory(&dir, false);
    for processes in [1, 2, 4] {
        for (kind, input) in [(Bfs, &snapshot), (Pagerank, &snapshot), (Sssp, &store)] {
            let mut config = RunConfig::new(kind, input);
            config.source = Some("17".into());
            check(
                processes,
                &config,
                &format!("{kind} on {}", input.display()),
            );
        }
        let mut config = RunConfig::new(Cdlp, &named);
        config.updates = Some(named_updates.clone());
        check(processes, &config, &format!("cdlp on {}", named.display()));
    }
    for kind in [Wcc, Lcc] {
        check(
            4,
            &RunConfig::new(kind, &store),
            &format!("{kind} on the directory"),
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

#[test]
fn two_network_namespaces_over_tcp_equal_packgraph_run() {
    // Two processes as two hosts: namespaces joined by a veth pair, Open MPI over TCP.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/netns-mpirun.sh");
    let dir = temp_dir("netns");
    let (graph, updates) = weighted_directed(&dir, 300, 1800, 17);
    for kind in [AlgorithmKind::Bfs, AlgorithmKind::Pagerank] {
        let mut config = RunConfig::new(kind, &graph);
        config.load.directed = Some(true);
        config.source = Some("24".into());
        config.updates = Some(updates.clone());
        let mut command = std::process::Command::new(&script);
        command
            .arg(env!("CARGO_BIN_EXE_packgraph-dist"))
            .args(args(&config))
            .arg("--json");
        let out = common::run_with_limit(command, HANG);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.code() == Some(77) {
            eprintln!("{}", stderr.trim());
            break;
        }
        assert!(out.status.success(), "{kind} across namespaces: {stderr}");
        // The processes saw two hosts: frontiers are packed by default.
        assert!(stderr.contains("\"compression\":true"), "{stderr}");
        let got = String::from_utf8(out.stdout).expect("text");
        assert_same(
            kind,
            &got,
            &reference(&config),
            &format!("{kind} across namespaces"),
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

/// A run that must fail: its exit code and rank 0's one error line.
fn failure(processes: usize, args: &[String]) -> (i32, String) {
    let out = mpirun(processes, args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "one error line, from rank 0: {stderr}");
    (out.status.code().unwrap_or(-1), errors[0].to_string())
}

#[test]
fn a_bad_line_in_any_process_range_stops_every_process_with_one_error() {
    let dir = temp_dir("mpirun-bad");
    let path = dir.join("bad.el");
    // 400 good lines, then a bad one: in the last process's range on 2 and 4 processes.
    let mut text: String = (0..400).map(|i| format!("{i} {}\n", i + 1)).collect();
    text.push_str("5 6 7 8\n");
    std::fs::write(&path, &text).expect("writes");
    let run = |p: &Path| {
        vec![
            "run".into(),
            "wcc".into(),
            "--input".into(),
            p.display().to_string(),
        ]
    };
    for processes in [2, 4] {
        let (code, line) = failure(processes, &run(&path));
        assert_eq!(code, 2);
        assert_eq!(
            line,
            format!(
                "error: {}:401: expected `source target` or `source target weight`: `5 6 7 8`",
                path.display()
            )
        );
    }
    // A bad line in the first process's range, with good lines after it.
    let text = format!(
        "1 x\n{}",
        (0..400)
            .map(|i| format!("{i} {}\n", i + 1))
            .collect::<String>()
    );
    std::fs::write(&path, &text).expect("writes");
    let (code, line) = failure(4, &run(&path));
    assert_eq!(code, 2);
    assert!(
        line.contains(":1: vertex id is not a non-negative integer"),
        "{line}"
    );
    let (code, line) = failure(2, &run(&dir.join("missing.el")));
    assert_eq!(code, 2);
    assert!(line.contains("missing.el"), "{line}");
    // A damaged snapshot: one error from rank 0, every process exits with code 3.
    let snapshot = damaged_snapshot(&dir);
    for processes in [2, 4] {
        let (code, line) = failure(processes, &run(&snapshot));
        assert_eq!(code, 3, "{line}");
        assert!(line.contains(&snapshot.display().to_string()), "{line}");
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}
