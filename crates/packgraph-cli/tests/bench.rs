//! `packgraph bench`: hands its arguments to the packgraph-bench binary beside it or on PATH,
//! or, with none to be found, exits 2 saying how to build it. Each test runs its own link to
//! the built `packgraph` in a directory of its own, so what sits beside the real one (a
//! packgraph-bench built earlier, or not) does not matter.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A directory holding only a link to (or a copy of) the built `packgraph`.
fn lone_packgraph() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let link = dir.path().join("packgraph");
    let built = env!("CARGO_BIN_EXE_packgraph");
    if std::fs::hard_link(built, &link).is_err() {
        std::fs::copy(built, &link).unwrap();
    }
    (dir, link)
}

/// Runs `packgraph args` with only `path` on PATH.
fn run(packgraph: &Path, args: &[&str], path: &Path) -> Output {
    Command::new(packgraph)
        .args(args)
        .env("PATH", path)
        .output()
        .unwrap()
}

/// A stand-in packgraph-bench at `path` that prints its arguments, one a line, and exits 7.
fn fake_bench(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, "#!/bin/sh\nprintf '%s\\n' \"$@\"\nexit 7\n").unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn bench_without_packgraph_bench_exits_2_saying_how_to_build_it() {
    let (dir, packgraph) = lone_packgraph();
    let output = run(&packgraph, &["bench", "pma", "--quick"], dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("packgraph-bench"), "{stderr}");
    assert!(
        stderr.contains("cargo build --release -p packgraph-bench"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cargo run --release -p packgraph-bench -- NAME"),
        "{stderr}"
    );
    assert!(output.stdout.is_empty());
}

#[test]
fn bench_hands_threads_and_every_argument_over_and_returns_the_exit_code() {
    let (dir, packgraph) = lone_packgraph();
    let elsewhere = dir.path().join("bin");
    fake_bench(&dir.path().join("packgraph-bench"));
    let args = [
        "--threads",
        "3",
        "bench",
        "pma",
        "--quick",
        "--keys",
        "-5",
        "--help",
    ];
    let output = run(&packgraph, &args, &elsewhere);
    assert_eq!(output.status.code(), Some(7), "the exit code comes back");
    assert_eq!(
        String::from_utf8(output.stdout).unwrap(),
        "--threads\n3\npma\n--quick\n--keys\n-5\n--help\n"
    );
    // `--help` right after `bench` is the suites' help; no --threads when none is given.
    let output = run(&packgraph, &["bench", "--help"], &elsewhere);
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "--help\n");

    // Not beside packgraph: found on PATH.
    std::fs::rename(dir.path().join("packgraph-bench"), dir.path().join("gone")).unwrap();
    fake_bench(&elsewhere.join("packgraph-bench"));
    let output = run(&packgraph, &["bench", "graph", "--json"], &elsewhere);
    assert_eq!(output.status.code(), Some(7));
    assert_eq!(String::from_utf8(output.stdout).unwrap(), "graph\n--json\n");
}
