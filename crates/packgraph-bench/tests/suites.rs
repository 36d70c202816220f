//! Runs the built `packgraph-bench` binary: output formats and exit codes of the suites.

mod common;
use common::{json_records, packgraph_bench};

/// Whether `records` hold a row of `dataset`, `structure` and `op`.
fn has_row(records: &[serde_json::Value], dataset: &str, structure: &str, op: &str) -> bool {
    records
        .iter()
        .any(|r| r["dataset"] == dataset && r["structure"] == structure && r["op"] == op)
}

const TINY: [&str; 13] = [
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
    let output = packgraph_bench()
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
        (&["pma", "--keys", "lots"], "not a count"),
        (
            &["pma", "--structures", "skiplist"],
            "unknown structure \"skiplist\"",
        ),
        (&["pma", "--growth", "9"], "growth_factor"),
        (&["pma", "--batch-sizes", "0"], "must be positive"),
        (&["--threads", "0", "pma"], "--threads"),
        (&["graph", "--scale", "0"], "--scale must be in 1..=30"),
    ];
    for (args, message) in cases {
        let output = packgraph_bench().args(args).output().unwrap();
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
                    has_row(&records, dataset, structure, op),
                    "no {dataset}/{structure}/{op}"
                );
            }
        }
    }
    for structure in ["packgraph", "csr"] {
        for op in ["sssp", "size-weighted"] {
            assert!(
                has_row(&records, "kronecker", structure, op),
                "no kronecker/{structure}/{op}"
            );
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

const TINY_GRAPH: [&str; 7] = [
    "--threads",
    "2",
    "graph",
    "--scale",
    "8",
    "--batch-sizes",
    "",
];

#[test]
fn bench_graph_measures_input_files_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ring.txt");
    let ring: String = (0..200)
        .map(|i| format!("{i} {}\n", (i + 1) % 200))
        .collect();
    std::fs::write(&file, ring).unwrap();
    let mut args: Vec<&str> = TINY_GRAPH.to_vec();
    let inputs = file.to_str().unwrap();
    args.extend(["--inputs", inputs]);
    let records = json_records(&args);
    for structure in ["packgraph", "csr"] {
        for op in [
            "build",
            "bfs",
            "pagerank",
            "wcc",
            "bc",
            "size",
            "decode",
            "decode-slice",
        ] {
            assert!(
                has_row(&records, "ring.txt", structure, op),
                "no ring.txt/{structure}/{op}"
            );
        }
    }
    let size = records
        .iter()
        .find(|r| r["dataset"] == "ring.txt" && r["structure"] == "csr" && r["op"] == "size")
        .unwrap();
    assert_eq!(size["keys"], 400, "200 undirected edges are 400 arcs");
}

#[test]
fn bench_graph_with_an_unreadable_input_or_no_gap_fails_before_measuring() {
    let cases: [(&str, &str, &[&str]); 2] = [
        ("--inputs", "/nonexistent/g.txt", &["/nonexistent/g.txt"]),
        ("--gap", "/nonexistent", &["/nonexistent/bfs", "not found"]),
    ];
    for (option, value, messages) in cases {
        let output = packgraph_bench()
            .args(TINY_GRAPH)
            .args([option, value, "--json"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{option}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        for message in messages {
            assert!(stderr.contains(message), "{option}: {stderr}");
        }
        assert!(
            output.stdout.is_empty(),
            "{option}: measured before failing"
        );
    }
}

/// Writes stand-ins for GAP's binaries into `dir`: each logs its name, OMP_NUM_THREADS and
/// arguments to `calls.log`, then prints output in GAP's format with one trial line per
/// `-n` (trial i taking i/100 s); the binary named in `failing` runs its given body instead.
#[cfg(unix)]
fn fake_gap(dir: &std::path::Path, failing: Option<(&str, &str)>) {
    use std::os::unix::fs::PermissionsExt;
    for binary in ["bfs", "cc", "pr", "bc"] {
        let body = match failing {
            Some((name, body)) if name == binary => body.to_string(),
            _ => "n=16\n\
                  while [ $# -gt 0 ]; do [ \"$1\" = -n ] && n=$2; shift; done\n\
                  echo 'Generate Time:       0.01000'\n\
                  echo 'Graph has 256 nodes and 3000 undirected edges for degree: 11'\n\
                  i=0\n\
                  while [ $i -lt $n ]; do echo \"Trial Time:          0.0$((i + 1))000\"; i=$((i + 1)); done\n\
                  echo 'Average Time:        0.02000'\n"
                .to_string(),
        };
        let script = format!(
            "#!/bin/sh\necho \"{binary} OMP_NUM_THREADS=$OMP_NUM_THREADS $*\" >> \"$(dirname \"$0\")/calls.log\"\n{body}"
        );
        let path = dir.join(binary);
        std::fs::write(&path, script).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[cfg(unix)]
#[test]
fn bench_graph_runs_gap_kernels_and_reports_their_median_trial() {
    let dir = tempfile::tempdir().unwrap();
    fake_gap(dir.path(), None);
    let gap = dir.path().to_str().unwrap();
    let mut args: Vec<&str> = TINY_GRAPH.to_vec();
    args.extend(["--sources", "4", "--gap", gap]);
    let records = json_records(&args);
    for dataset in ["kronecker", "er"] {
        for op in ["bfs", "pagerank", "wcc", "bc"] {
            let record = records
                .iter()
                .find(|r| r["dataset"] == dataset && r["structure"] == "gap" && r["op"] == op)
                .unwrap_or_else(|| panic!("no {dataset}/gap/{op}"));
            // Trials print 0.01, 0.02, …: the upper median of 4 is 0.03, of 3 is 0.02.
            let median = if matches!(op, "bfs" | "bc") {
                0.03
            } else {
                0.02
            };
            assert_eq!(record["value"].as_f64(), Some(median), "{record}");
            assert_eq!(
                (record["unit"].as_str(), record["param"].as_u64()),
                (Some("s"), Some(8))
            );
            assert_eq!(record["threads"], 2);
        }
    }
    let calls = std::fs::read_to_string(dir.path().join("calls.log")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(
        calls,
        [
            "bfs OMP_NUM_THREADS=2 -g 8 -k 16 -n 4",
            "pr OMP_NUM_THREADS=2 -g 8 -k 16 -n 3 -i 10 -t 0",
            "cc OMP_NUM_THREADS=2 -g 8 -k 16 -n 3",
            "bc OMP_NUM_THREADS=2 -g 8 -k 16 -n 4 -i 1",
            "bfs OMP_NUM_THREADS=2 -u 8 -k 16 -n 4",
            "pr OMP_NUM_THREADS=2 -u 8 -k 16 -n 3 -i 10 -t 0",
            "cc OMP_NUM_THREADS=2 -u 8 -k 16 -n 3",
            "bc OMP_NUM_THREADS=2 -u 8 -k 16 -n 4 -i 1",
        ]
    );
}

#[cfg(unix)]
#[test]
fn bench_graph_names_the_gap_binary_and_line_when_it_fails() {
    let cases = [
        (
            ("cc", "echo 'No graph input specified.'\nexit 3\n"),
            "No graph input specified.",
        ),
        (("pr", "echo 'Trial Time:          soon'\n"), "Trial Time:"),
        (
            ("bc", "echo 'Segmentation fault' >&2\nexit 139\n"),
            "Segmentation fault",
        ),
    ];
    for ((binary, body), line) in cases {
        let dir = tempfile::tempdir().unwrap();
        fake_gap(dir.path(), Some((binary, body)));
        let output = packgraph_bench()
            .args(TINY_GRAPH)
            .args(["--gap", dir.path().to_str().unwrap()])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{binary}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        let path = dir.path().join(binary);
        assert!(stderr.contains(path.to_str().unwrap()), "{stderr}");
        assert!(stderr.contains(line), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn bench_layout_quick_reports_every_order_against_random() {
    let records = json_records(&[
        "--threads",
        "2",
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
    let output = packgraph_bench()
        .args(["layout", "--quick", "--levels", "1K,64"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`64`"));
}

#[test]
fn bench_snapshot_compares_the_three_modes() {
    let out = json_records(&[
        "--threads",
        "2",
        "snapshot",
        "--keys",
        "20000",
        "--batch-sizes",
        "100,1000",
        "--max-batch-keys",
        "5000",
        "--graph-arcs",
        "20000",
    ]);
    for mode in ["none", "held", "fresh"] {
        let inserts = out
            .iter()
            .filter(|r| r["structure"] == mode && r["op"] == "insert_batch")
            .count();
        assert_eq!(inserts, 2, "{mode}");
    }
    let copied = |mode: &str| {
        out.iter()
            .filter(|r| r["structure"] == mode && r["op"] == "pages_copied")
            .map(|r| r["value"].as_f64().unwrap())
            .sum::<f64>()
    };
    assert_eq!(copied("none"), 0.0);
    assert!(copied("fresh") > copied("held"));
    // Under a fresh snapshot, a batch copies at least the bytes of the leaves it changes.
    let fresh = |op: &str, batch: u64| {
        out.iter()
            .find(|r| r["structure"] == "fresh" && r["op"] == op && r["param"] == batch)
            .unwrap_or_else(|| panic!("no {op} row for {batch}"))["value"]
            .as_f64()
            .unwrap()
    };
    for batch in [100, 1000] {
        let (copied, changed) = (fresh("bytes_copied", batch), fresh("bytes_changed", batch));
        assert!(changed > 0.0 && copied >= changed, "{copied} < {changed}");
        assert!(fresh("bytes_table", batch) <= copied);
        assert!((fresh("copy_ratio", batch) - copied / changed).abs() < 1e-6 * copied);
    }
    for op in [
        "snapshot",
        "update_alone",
        "update_after_snapshot",
        "shared_commit_one_edge",
        "shared_commit_one_edge_read",
    ] {
        let row = out
            .iter()
            .find(|r| r["structure"] == "graph" && r["op"] == op)
            .unwrap_or_else(|| panic!("no {op} row"));
        assert!(row["value"].as_f64().unwrap() > 0.0, "{op}: {row}");
    }
}

#[test]
fn bench_part_reports_every_structure_and_op() {
    let out = json_records(&[
        "part",
        "--keys",
        "20000",
        "--lookups",
        "5000",
        "--inserts",
        "2000",
        "--budget",
        "0.5",
        "--checkpoint-vertices",
        "2e4",
    ]);
    for structure in ["part", "hashmap", "btreemap", "imbl_ordmap"] {
        let ops: Vec<(String, u64)> = out
            .iter()
            .filter(|r| r["structure"] == structure)
            .map(|r| {
                (
                    r["op"].as_str().unwrap().to_string(),
                    r["param"].as_u64().unwrap(),
                )
            })
            .collect();
        for (op, param) in [
            ("insert", 0),
            ("size", 0),
            ("lookup", 0),
            ("scan", 0),
            ("snapshot", 0),
            ("insert", 1),
            ("insert", 1000),
            ("insert_batch", 1000),
        ] {
            assert!(
                ops.iter()
                    .any(|(o, p)| o == op && (op == "size" || *p == param)),
                "{structure}: no {op}/{param} in {ops:?}"
            );
        }
    }
    assert!(out.iter().all(|r| r["bench"] == "part"));
    // The maps' rows run on one thread; the store's checkpoint rows on the pool.
    let checkpoints: Vec<&str> = out
        .iter()
        .filter(|r| r["structure"] == "checkpoint")
        .map(|r| r["op"].as_str().unwrap())
        .collect();
    for op in [
        "full_bytes",
        "props_delta",
        "props_base",
        "ids_base",
        "chain_max",
    ] {
        assert!(
            checkpoints.contains(&op),
            "no checkpoint/{op} in {checkpoints:?}"
        );
    }
    assert!(out
        .iter()
        .filter(|r| r["structure"] != "checkpoint")
        .all(|r| r["threads"] == 1));
    let output = packgraph_bench()
        .args(["part", "--keys", "0"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
}
