//! The MPI binary under `mpirun` on 1, 2 and 4 processes (`--oversubscribe`): validation
//! passes, and every grid and both compression settings find the same levels. Needs an MPI
//! launcher on the PATH (Open MPI's `mpirun`); built only with the feature `mpi`.

#![cfg(feature = "mpi")]

mod common;

use std::process::Output;
use std::time::Duration;

use serde_json::Value;

/// How long one `mpirun` may take before the test calls it a hang.
const HANG: Duration = Duration::from_secs(120);

/// Runs the benchmark on `processes` processes; kills it after [`HANG`].
fn mpirun(processes: usize, args: &[&str]) -> Output {
    common::mpirun(
        env!("CARGO_BIN_EXE_packgraph-graph500"),
        processes,
        args,
        HANG,
    )
}

/// The JSON report of a run that must succeed.
fn report(processes: usize, args: &[&str]) -> Value {
    let out = mpirun(processes, &[args, &["--json", "--roots", "6"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "mpirun -n {processes} {args:?}: {stderr}"
    );
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// `(root, nedge, levels digest)` of each search.
fn searches(report: &Value) -> Vec<(u64, u64, u64)> {
    report["runs"]
        .as_array()
        .expect("runs")
        .iter()
        .map(|r| {
            let get = |k: &str| r[k].as_u64().expect("an integer");
            (get("root"), get("nedge"), get("levels_digest"))
        })
        .collect()
}

#[test]
fn one_two_and_four_processes_find_the_same_levels_with_and_without_compression() {
    for scale in ["10", "13"] {
        let mut seen = Vec::new();
        for processes in [1, 2, 4] {
            for compression in ["on", "off"] {
                let r = report(processes, &["--scale", scale, "--compression", compression]);
                assert_eq!(r["num_mpi_processes"], processes);
                assert!(r["validation_errors"]
                    .as_array()
                    .expect("errors")
                    .is_empty());
                assert_eq!(r["compression"], compression == "on");
                seen.push((processes, compression, searches(&r)));
            }
        }
        for (processes, compression, runs) in &seen[1..] {
            assert_eq!(
                runs, &seen[0].2,
                "scale {scale}, {processes} processes, {compression}"
            );
        }
    }
}

#[test]
fn one_dimensional_grids_and_scale_14_pass_validation() {
    let wide = report(
        2,
        &["--scale", "12", "--grid", "1x2", "--compression", "on"],
    );
    let tall = report(
        2,
        &["--scale", "12", "--grid", "2x1", "--compression", "on"],
    );
    assert_eq!(searches(&wide), searches(&tall));
    let big = report(4, &["--scale", "14", "--compression", "on"]);
    let raw = big["frontier_raw_bytes"].as_u64().expect("bytes");
    let sent = big["frontier_sent_bytes"].as_u64().expect("bytes");
    assert!(sent < raw, "frontier bytes sent {sent} of {raw} raw");
    let off = report(4, &["--scale", "14", "--compression", "off"]);
    assert_eq!(searches(&big), searches(&off));
}

/// A run that must fail with `code`, with `message` printed once (by rank 0).
fn refused(processes: usize, args: &[&str], code: i32, message: &str) {
    let out = mpirun(processes, args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
    assert_eq!(stderr.matches(message).count(), 1, "{args:?}: {stderr}");
}

#[test]
fn bad_input_stops_every_process_with_one_message() {
    refused(2, &["--scale", "0"], 2, "--scale 0 is out of range");
    refused(
        2,
        &["--scale", "12", "--edgefactor", "0"],
        2,
        "--edgefactor 0 is out of range",
    );
    refused(
        3,
        &["--scale", "10", "--grid", "2x2"],
        2,
        "--grid 2x2 needs 4 processes",
    );
    refused(
        2,
        &["--input", "/nonexistent/graph.txt"],
        2,
        "/nonexistent/graph.txt",
    );
    refused(2, &["--compression", "maybe"], 2, "invalid value 'maybe'");
}
