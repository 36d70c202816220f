//! `packgraph stream` (the main job), run as a user would.

mod common;
use common::packgraph;

fn records(args: &[&str]) -> Vec<serde_json::Value> {
    let output = packgraph().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn value(records: &[serde_json::Value], op: &str) -> f64 {
    records
        .iter()
        .find(|r| r["op"] == op)
        .unwrap_or_else(|| panic!("no {op} record"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn stream_reports_every_figure_as_json_lines() {
    let out = records(&[
        "--threads",
        "2",
        "stream",
        "--scale",
        "10",
        "--duration",
        "0.5",
        "--batch-size",
        "200",
        "--readers",
        "2",
        "--json",
    ]);
    let ops: Vec<&str> = out.iter().map(|r| r["op"].as_str().unwrap()).collect();
    assert_eq!(
        ops,
        [
            "update",
            "update_latency_p50",
            "update_latency_p99",
            "query_concurrent",
            "query_isolated",
            "snapshot_concurrent",
            "snapshot_isolated",
            "versions",
            "size",
            "bytes_copied"
        ]
    );
    assert!(out
        .iter()
        .all(|r| r["bench"] == "stream" && r["param"] == 200));
    assert!(value(&out, "update") > 0.0);
    assert!(value(&out, "versions") >= 1.0);
    assert!(value(&out, "update_latency_p99") >= value(&out, "update_latency_p50"));
    assert!(value(&out, "query_concurrent") > 0.0 && value(&out, "query_isolated") > 0.0);
    // The snapshot is part of each query's time (each one is, so the medians are too).
    let (snap, query) = (
        value(&out, "snapshot_concurrent"),
        value(&out, "query_concurrent"),
    );
    assert!(snap >= 0.0 && snap <= query, "{snap} against {query}");
    assert!(value(&out, "size") > 0.5 && value(&out, "size") < 100.0);
    // Reported even when no page was copied (then 0), and never NaN.
    let copied = value(&out, "bytes_copied");
    assert!(copied >= 0.0 && copied.is_finite());
}

#[test]
fn stream_prints_a_table_and_reads_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.txt");
    std::fs::write(&file, "1 2\n2 3\n3 4\n4 1\n10 11\n").unwrap();
    let output = packgraph()
        .args([
            "stream",
            "--duration",
            "0.3",
            "--batch-size",
            "5",
            "--algorithms",
            "khop",
        ])
        .arg("--input")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let table = String::from_utf8(output.stdout).unwrap();
    for row in [
        "updates",
        "batch latency",
        "query latency",
        "snapshot",
        "versions",
        "memory",
        "copy on write",
    ] {
        assert!(table.contains(row), "no {row} row in:\n{table}");
    }
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stderr.contains("6 vertices"), "{stderr}");
}

#[test]
fn bad_stream_options_exit_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let weighted = dir.path().join("w.txt");
    std::fs::write(&weighted, "1 2 0.5\n").unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--duration".into(), "0".into()], "--duration 0"),
        (vec!["--duration".into(), "nan".into()], "--duration NaN"),
        (vec!["--readers".into(), "300".into()], "--readers 300"),
        (vec!["--batch-size".into(), "0".into()], "--batch-size"),
        (
            vec!["--query-threads".into(), "0".into()],
            "--query-threads",
        ),
        (
            vec!["--delete-fraction".into(), "1.5".into()],
            "--delete-fraction 1.5",
        ),
        (vec!["--scale".into(), "40".into()], "--scale 40"),
        (
            vec!["--input".into(), weighted.display().to_string()],
            "unweighted",
        ),
        (
            vec![
                "--input".into(),
                dir.path().join("missing.txt").display().to_string(),
            ],
            "missing.txt",
        ),
    ];
    for (args, expected) in cases {
        let output = packgraph().arg("stream").args(&args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
        assert!(output.stdout.is_empty(), "{args:?}");
    }
    // clap rejects unknown algorithms itself (exit 2, naming the value).
    let output = packgraph()
        .args(["stream", "--algorithms", "bfs,dijkstra"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8(output.stderr)
        .unwrap()
        .contains("dijkstra"));
}

/// An existing data directory is not filled with the stream's synthetic edges unless asked
/// (`--synthetic`): refused with exit 2, the directory unchanged.
#[test]
fn stream_into_an_existing_directory_needs_synthetic() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("e.txt");
    std::fs::write(&edges, "1 2\n2 3\n").unwrap();
    let data = dir.path().join("d").display().to_string();
    let created = packgraph()
        .args(["create", &data, "--from", &edges.display().to_string()])
        .output()
        .unwrap();
    assert!(created.status.success());
    let info = || {
        let out = packgraph()
            .args(["info", &data, "--json"])
            .output()
            .unwrap();
        let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        json["edges"].as_u64().unwrap()
    };
    assert_eq!(info(), 2);
    let args = ["stream", "--data", &data, "--duration", "0.3", "--json"];
    let refused = packgraph().args(args).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8(refused.stderr).unwrap();
    assert!(stderr.contains("--synthetic"), "{stderr}");
    assert_eq!(info(), 2, "nothing written");
    // No deletions: the synthetic edges fall among the directory's three vertices, so with
    // deletions the count could end anywhere from 0 to 3.
    let ran = packgraph()
        .args(args)
        .args(["--synthetic", "--delete-fraction", "0"])
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert!(info() > 2, "the synthetic edges are in the directory");
}

/// Batches of one edge come from edges generated ahead in blocks; deleting earlier batches
/// (one edge each) goes on working beside them, and every figure is reported.
#[test]
fn stream_of_single_edges_inserts_and_deletes() {
    let out = records(&[
        "--threads",
        "2",
        "stream",
        "--scale",
        "10",
        "--duration",
        "0.3",
        "--batch-size",
        "1",
        "--delete-fraction",
        "0.3",
        "--algorithms",
        "bfs",
        "--json",
    ]);
    assert!(out.iter().all(|r| r["param"] == 1));
    assert!(value(&out, "update") > 0.0);
    assert!(value(&out, "versions") >= 1.0);
}
