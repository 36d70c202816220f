//! `packgraph-bench NAME --quick --json` on every suite: it runs, and every row it prints is
//! well formed, with every field named as the suites document them. Sizes given with
//! `--quick` below its caps keep each run to a second or two.

mod common;
use common::{json_records, packgraph_bench};
use serde_json::Value;

/// The fields of a suite's row (`Record`), and whether every row has it.
const RECORD_FIELDS: [(&str, bool); 9] = [
    ("bench", true),
    ("structure", true),
    ("op", true),
    ("param", true),
    ("threads", true),
    ("value", true),
    ("unit", true),
    ("keys", false),
    ("dataset", false),
];

/// Runs `SUITE --quick --json` on 2 threads with the options in `extra` (separated by
/// spaces); checks that it printed rows, each a `Record` of that suite with every field of
/// the right type and no other.
fn quick_records(suite: &str, extra: &str) -> Vec<Value> {
    let args: Vec<&str> = ["--threads", "2", suite, "--quick"]
        .into_iter()
        .chain(extra.split_whitespace())
        .collect();
    let records = json_records(&args);
    assert!(!records.is_empty(), "{suite}: no rows");
    for record in &records {
        let fields = record.as_object().expect("a row is a JSON object");
        for name in fields.keys() {
            assert!(
                RECORD_FIELDS.iter().any(|(field, _)| field == name),
                "{suite}: unknown field {name} in {record}"
            );
        }
        for (field, always) in RECORD_FIELDS {
            assert!(
                !always || fields.contains_key(field),
                "{suite}: no {field} in {record}"
            );
        }
        assert_eq!(record["bench"], suite, "{record}");
        for text in ["structure", "op", "unit"] {
            assert!(
                record[text].as_str().is_some_and(|t| !t.is_empty()),
                "{record}"
            );
        }
        assert!(record["param"].is_u64(), "{record}");
        assert!(
            record["threads"].as_u64().is_some_and(|t| t >= 1),
            "{record}"
        );
        assert!(
            record["value"].as_f64().is_some_and(f64::is_finite),
            "{record}"
        );
        assert!(fields.get("keys").is_none_or(Value::is_u64), "{record}");
        assert!(
            fields.get("dataset").is_none_or(Value::is_string),
            "{record}"
        );
    }
    records
}

fn ops(records: &[Value]) -> Vec<&str> {
    records.iter().map(|r| r["op"].as_str().unwrap()).collect()
}

#[test]
fn pma_quick_rows_are_well_formed() {
    let records = quick_records(
        "pma",
        "--keys 2e4 --max-batch-keys 5000 --size-keys 3e4 --budget 0.2",
    );
    for op in ["insert_batch", "remove_batch", "range", "scan", "size"] {
        assert!(ops(&records).contains(&op), "no {op} row");
    }
}

#[test]
fn graph_quick_rows_are_well_formed() {
    let records = quick_records("graph", "");
    // The preset caps the scale at 12 and the batches at 1e4.
    assert!(records.iter().all(|r| r["dataset"].is_string()));
    let inserts: Vec<&Value> = records
        .iter()
        .filter(|r| r["op"] == "insert_edges")
        .collect();
    assert_eq!(inserts.len(), 2, "batches of 1e3 and 1e4");
    assert!(records
        .iter()
        .filter(|r| r["unit"] == "s")
        .all(|r| r["param"] == 12));
}

#[test]
fn io_quick_rows_are_well_formed_and_say_when_packgraph_is_missing() {
    let missing = "--packgraph /nonexistent/packgraph";
    let output = packgraph_bench()
        .args(["io", "--quick", "--json"])
        .args(missing.split_whitespace())
        .output()
        .unwrap();
    assert!(output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no run_bfs rows"), "{stderr}");
    let records = quick_records("io", missing);
    assert_eq!(
        ops(&records),
        [
            "generate",
            "file_size",
            "read",
            "load",
            "load_time",
            "save_time",
            "file_size",
            "load_time",
            "reload_speedup"
        ]
    );
    assert!(records.iter().all(|r| r["param"] == 12));
}

#[test]
fn part_quick_rows_are_well_formed() {
    let records = quick_records(
        "part",
        "--keys 2e4 --lookups 5e3 --inserts 2e3 --budget 0.5",
    );
    // The map's rows run on one thread; the store's checkpoint rows on the pool.
    let (checkpoints, maps): (Vec<_>, Vec<_>) =
        records.iter().partition(|r| r["structure"] == "checkpoint");
    assert!(!checkpoints.is_empty() && !maps.is_empty());
    assert!(maps.iter().all(|r| r["threads"] == 1));
    assert!(checkpoints.iter().all(|r| r["threads"] == 2));
}

#[test]
fn snapshot_quick_rows_are_well_formed() {
    let records = quick_records(
        "snapshot",
        "--keys 2e4 --max-batch-keys 5000 --graph-arcs 2e4",
    );
    // Batches up to 1e4 (of 1e3..1e6), three modes each.
    let inserts = ops(&records)
        .into_iter()
        .filter(|op| *op == "insert_batch")
        .count();
    assert_eq!(inserts, 2 * 3);
}

#[test]
fn store_quick_rows_are_well_formed() {
    let records = quick_records(
        "store",
        "--scale 10 --insert-edges 5000 --replay-records 2000 --fsyncs 10",
    );
    assert_eq!(records.len(), 36, "every store row");
    assert!(
        records.iter().any(|r| r["op"] == "apply_batch"),
        "no apply_batch row (replay's floor)"
    );
    // The property-checkpoint rows: the delta after changing 1% of the values is a fraction
    // of the full checkpoint.
    for op in ["full_bytes", "ckpt_bytes", "ckpt_ratio", "ckpt_time"] {
        assert!(
            records
                .iter()
                .any(|r| r["structure"] == "properties" && r["op"] == op),
            "no properties {op} row"
        );
    }
}

/// Layout rows have fields of their own: graph and order, and the ratio to the random order.
#[test]
fn layout_quick_rows_are_well_formed() {
    let output = packgraph_bench()
        .args(["--threads", "2", "layout", "--quick", "--json"])
        .args(["--vertices", "5000", "--kronecker-scale", "8"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8(output.stdout).unwrap();
    let records: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let fields = [
        "bench", "graph", "vertices", "edges", "order", "op", "value", "unit", "ratio", "threads",
    ];
    for record in &records {
        let names: Vec<&str> = record
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        assert_eq!(names.len(), fields.len(), "{record}");
        assert!(fields.iter().all(|f| names.contains(f)), "{record}");
        assert_eq!(record["bench"], "layout");
        assert!(
            record["value"].as_f64().is_some_and(f64::is_finite),
            "{record}"
        );
    }
    // Five families, six orders, five figures each at least.
    assert!(records.len() >= 5 * 6 * 5, "{}", records.len());
}

/// `serve --quick`: the server on loopback against `ingest`'s loop, every row at each batch
/// size (tiny graph, short phases).
#[test]
fn serve_quick_rows_are_well_formed() {
    let records = quick_records(
        "serve",
        "--scale 8 --duration 0.5 --writers 2 --batch 1,100",
    );
    let has = |structure: &str, op: &str, param: u64| {
        records
            .iter()
            .any(|r| r["structure"] == structure && r["op"] == op && r["param"] == param)
    };
    assert!(has("http", "query_idle_p50", 0) && has("http", "query_idle_p99", 0));
    for size in [1, 100] {
        assert!(has("ingest", "update_tput", size), "ingest at {size}");
        for op in [
            "update_tput",
            "ingest_ratio",
            "ack_p50",
            "ack_p99",
            "query_p50",
            "query_p99",
            "query_ratio",
        ] {
            assert!(has("http", op, size), "no http {op} row at {size}");
        }
        // CPU per acknowledged request, read from /proc.
        if cfg!(target_os = "linux") {
            for op in ["server_cpu_us", "query_cpu_us", "client_cpu_us"] {
                assert!(has("http", op, size), "no http {op} row at {size}");
            }
        }
    }
}

/// `serve --client-threads` outside 1 to `--writers` exits 2 naming the flag, before any
/// server starts.
#[test]
fn serve_client_threads_out_of_range_exits_2() {
    for threads in ["0", "3"] {
        let output = packgraph_bench()
            .args([
                "serve",
                "--quick",
                "--writers",
                "2",
                "--client-threads",
                threads,
            ])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(&format!("--client-threads {threads}")),
            "{stderr}"
        );
    }
}
