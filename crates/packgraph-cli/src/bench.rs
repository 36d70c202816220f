//! `packgraph bench NAME …`: the benchmark suites, run by the `packgraph-bench` binary.
//!
//! The suites, their peer baselines and their counting allocator live in the
//! `packgraph-bench` crate, so that this tool carries none of them. This command finds that
//! binary beside the running `packgraph` (the same cargo target directory), else on `PATH`,
//! and hands over to it with `--threads` (if given) and every argument after `bench`
//! unchanged, `--help` included: its exit code is this command's.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::num::NonZeroUsize;
use std::path::PathBuf;
use std::process::Command;

use anyhow::Context;
use clap::Args;

use crate::UsageError;

/// The binary that runs the suites.
const BENCH_BINARY: &str = "packgraph-bench";

/// Arguments of `packgraph bench`, passed on unread.
#[derive(Args, Debug)]
pub(crate) struct BenchArgs {
    /// The suite (pma, graph, io, snapshot, part, store, layout) and its options;
    /// `packgraph bench --help` lists the suites, `packgraph bench NAME --help` the options.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "NAME [OPTIONS]"
    )]
    args: Vec<OsString>,
}

/// Runs `packgraph-bench` with `args`; returns only if it could not be started (a
/// [`UsageError`] saying how to build it when it is not found).
pub(crate) fn run(args: &BenchArgs, threads: Option<NonZeroUsize>) -> anyhow::Result<()> {
    let program = program();
    let mut command = Command::new(&program);
    if let Some(threads) = threads {
        command.arg("--threads").arg(threads.to_string());
    }
    command.args(&args.args);
    let error = hand_over(command);
    if error.kind() == ErrorKind::NotFound {
        return Err(UsageError(format!(
            "`packgraph bench` runs the {BENCH_BINARY} binary, which is neither beside this \
             packgraph nor on PATH: build it with `cargo build --release -p {BENCH_BINARY}` \
             (it lands beside packgraph), or run a suite directly with \
             `cargo run --release -p {BENCH_BINARY} -- NAME`"
        ))
        .into());
    }
    Err(error).with_context(|| format!("running {}", program.display()))
}

/// `packgraph-bench` beside the running executable if it is there, else the bare name
/// (looked up on `PATH` when run).
fn program() -> PathBuf {
    let name = format!("{BENCH_BINARY}{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .map(|exe| exe.with_file_name(name))
        .ok()
        .filter(|beside| beside.is_file())
        .unwrap_or_else(|| PathBuf::from(BENCH_BINARY))
}

/// Replaces this process with `command`; returns only the error that prevented it.
#[cfg(unix)]
fn hand_over(mut command: Command) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    command.exec()
}

/// Runs `command` and exits with its exit code; returns only the error that prevented it.
#[cfg(not(unix))]
fn hand_over(mut command: Command) -> std::io::Error {
    match command.status() {
        Ok(status) => std::process::exit(status.code().unwrap_or(1)),
        Err(error) => error,
    }
}
