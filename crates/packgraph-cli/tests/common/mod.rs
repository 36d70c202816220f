//! Helpers shared by the integration tests that run the built `packgraph` binary.
#![allow(dead_code)] // each test file uses its own subset

use std::collections::BTreeMap;
use std::path::Path;

use assert_cmd::Command;

pub(crate) fn packgraph() -> Command {
    Command::cargo_bin("packgraph").expect("the packgraph binary is built")
}

/// Runs `packgraph args`, expects success; returns stdout.
pub(crate) fn ok(args: &[&str]) -> String {
    let output = packgraph().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "packgraph {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Runs `packgraph args`, expects exit code 2 and nothing on stdout; returns stderr.
pub(crate) fn bad(args: &[&str]) -> String {
    let output = packgraph().args(args).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(2),
        "packgraph {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.stdout.is_empty());
    String::from_utf8(output.stderr).unwrap()
}

/// `id value` lines.
pub(crate) fn parse_output(text: &str) -> BTreeMap<u64, String> {
    text.lines()
        .map(|line| {
            let (id, value) = line.split_once(' ').expect("`id value`");
            (id.parse().unwrap(), value.to_string())
        })
        .collect()
}

pub(crate) fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// Runs `packgraph ingest DIR extra…` with `updates` on its standard input; returns its
/// output whatever its status.
pub(crate) fn ingest(dir: &str, updates: &str, extra: &[&str]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_packgraph"))
        .args(["ingest", dir])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A writer that stops at a bad line closes the pipe early: not this helper's failure.
    let _ = child.stdin.take().unwrap().write_all(updates.as_bytes());
    child.wait_with_output().unwrap()
}
