//! Running the built `packgraph-bench` binary from the integration tests.

use assert_cmd::Command;

pub(crate) fn packgraph_bench() -> Command {
    Command::cargo_bin("packgraph-bench").expect("the packgraph-bench binary is built")
}

/// Runs `packgraph-bench` with `args` (and `--json`), expects success, parses its JSON Lines.
pub(crate) fn json_records(args: &[&str]) -> Vec<serde_json::Value> {
    let output = packgraph_bench().args(args).arg("--json").output().unwrap();
    assert!(
        output.status.success(),
        "packgraph-bench {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}
