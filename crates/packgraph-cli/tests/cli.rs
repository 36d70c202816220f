//! Runs the built `packgraph` binary: output formats and exit codes of `bench` (built with
//! the default feature `bench`).
#![cfg(feature = "bench")]

use assert_cmd::Command;

fn packgraph() -> Command {
    Command::cargo_bin("packgraph").expect("the packgraph binary is built")
}

/// Runs `packgraph` with `args` (and `--json`), expects success, parses its JSON Lines.
fn json_records(args: &[&str]) -> Vec<serde_json::Value> {
    let output = packgraph().args(args).arg("--json").output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

const TINY: [&str; 14] = [
    "bench",
    "pma",
    "--keys",
    "20000",
    "--batch-sizes",
    "10,1000",
    "--max-batch-keys",
    "5000",
    "--range-sizes",
    "100",
    "--size-keys",
    "3e4",
    "--budget",
    "1",
];

#[test]
fn bench_pma_json_lines_carry_every_field() {
    let args: Vec<&str> = ["--threads", "2"].into_iter().chain(TINY).collect();
    let records = json_records(&args);
    // 4 structures × (2 batch sizes × 2 ops + 1 range + 1 scan + 1 size).
    assert_eq!(records.len(), 4 * 7, "{records:?}");
    for record in &records {
        for field in [
            "bench",
            "structure",
            "op",
            "param",
            "threads",
            "value",
            "unit",
        ] {
            assert!(record.get(field).is_some(), "{field} missing in {record}");
        }
        assert_eq!(record["bench"], "pma");
        assert_eq!(record["threads"], 2);
        assert!(record["value"].as_f64().unwrap() > 0.0, "{record}");
    }
    let size = records
        .iter()
        .find(|r| r["structure"] == "cpma" && r["op"] == "size")
        .expect("a cpma size record");
    assert_eq!(size["unit"], "bytes/key");
    let ops: Vec<&str> = records.iter().map(|r| r["op"].as_str().unwrap()).collect();
    for op in ["insert_batch", "remove_batch", "range", "scan", "size"] {
        assert!(ops.contains(&op), "no {op} record");
    }
}

#[test]
fn bench_pma_table_has_a_header_and_rows() {
    let output = packgraph()
        .args(TINY)
        .args(["--structures", "cpma"])
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let mut lines = stdout.lines();
    assert!(lines.next().unwrap().starts_with("bench"));
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), 7, "{stdout}");
    assert!(rows
        .iter()
        .all(|row| row.starts_with("pma") && row.contains("cpma")));
    assert!(
        rows.iter()
            .all(|row| row.split_whitespace().nth(4) == Some("1")),
        "{stdout}"
    );
}

#[test]
fn bad_arguments_exit_with_code_2_and_say_what_is_wrong() {
    let cases: [(&[&str], &str); 6] = [
        (&["bench", "pma", "--keys", "lots"], "not a count"),
        (
            &["bench", "pma", "--structures", "skiplist"],
            "unknown structure \"skiplist\"",
        ),
        (&["bench", "pma", "--growth", "9"], "growth_factor"),
        (&["bench", "pma", "--batch-sizes", "0"], "must be positive"),
        (&["--threads", "0", "bench", "pma"], "--threads"),
        (
            &["bench", "graph", "--scale", "0"],
            "--scale must be in 1..=30",
        ),
    ];
    for (args, message) in cases {
        let output = packgraph().args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(
            output.stdout.is_empty() || !String::from_utf8_lossy(&output.stdout).contains("pma  ")
        );
    }
}

#[test]
fn bench_graph_reports_both_structures_and_updates() {
    let records = json_records(&[
        "--threads",
        "2",
        "bench",
        "graph",
        "--scale",
        "10",
        "--batch-sizes",
        "100",
    ]);
    for dataset in ["kronecker", "er"] {
        for structure in ["packgraph", "csr"] {
            for op in ["build", "bfs", "pagerank", "wcc", "bc", "size"] {
                assert!(
                    records.iter().any(|r| r["dataset"] == dataset
                        && r["structure"] == structure
                        && r["op"] == op),
                    "no {dataset}/{structure}/{op}"
                );
            }
        }
    }
    let inserts = records
        .iter()
        .find(|r| r["op"] == "insert_edges")
        .expect("an insert record");
    assert_eq!(
        (inserts["param"].as_u64(), inserts["unit"].as_str()),
        (Some(100), Some("edges/s"))
    );
    assert!(records
        .iter()
        .all(|r| r["bench"] == "graph" && r["value"].as_f64().unwrap() >= 0.0));
}

#[test]
fn bench_layout_quick_reports_every_order_against_random() {
    let records = json_records(&[
        "--threads",
        "2",
        "bench",
        "layout",
        "--quick",
        "--families",
        "mesh,tree",
        "--kronecker-scale",
        "0",
    ]);
    for field in ["bench", "graph", "order", "op", "value", "unit", "ratio"] {
        assert!(records.iter().all(|r| r.get(field).is_some()), "{field}");
    }
    assert!(records.iter().all(|r| r["bench"] == "layout"));
    for order in ["random", "natural", "bfs", "rcm", "degree", "hba"] {
        for op in ["bfs", "sssp", "pagerank", "bytes_per_edge", "log2_gap"] {
            assert!(
                records
                    .iter()
                    .any(|r| r["order"] == order && r["op"] == op && r["graph"] == "mesh"),
                "{order} {op}"
            );
        }
    }
    let random_bytes = records
        .iter()
        .find(|r| r["order"] == "random" && r["op"] == "bytes_per_edge")
        .unwrap();
    assert_eq!(random_bytes["ratio"], 1.0);
    let output = packgraph()
        .args(["bench", "layout", "--quick", "--levels", "1K,64"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`64`"));
}
