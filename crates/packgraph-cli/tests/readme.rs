//! The README stays true: every ```sh or ```bash block of README.md runs, command by command,
//! as a user on a fresh clone would type it, and a failing command fails this test naming
//! its README line.
//!
//! How a block runs:
//! * Each `## ` section runs in a temporary directory of its own that looks like the
//!   clone's root (`data/` and `examples/` linked in), its blocks in order, one shell
//!   (`sh -c`) per command; a line ending in `\` continues on the next, and lines that are
//!   only a `# comment` are skipped.
//! * `packgraph` and `packgraph-bench` are the built binaries (first on `PATH`), and
//!   `cargo run --release -p packgraph-cli --` / `-p packgraph-bench --` stand for them.
//! * `cargo test …` is not run (this test is part of it): it must be a line of `.ci/run`,
//!   so the README's test command is the one CI runs. `cargo build --release` and
//!   `export PATH=…` are what this test does itself (it runs the binaries cargo built, first
//!   on `PATH`), so they are not run either. Any other `cargo` command needs a marker.
//! * Each command gets [`COMMAND_TIMEOUT`]; the whole test takes a few seconds in debug.
//!
//! A block may be preceded (on the line before its fence) by a marker with a reason:
//! * `<!-- readme-test: args-only (REASON) -->`: a measurement or the long main job; each
//!   command runs with `--help` appended, so every subcommand, flag and value in it must
//!   parse (clap stops at the first bad one with exit code 2).
//! * `<!-- readme-test: skip (REASON) -->`: cannot run here at all (MPI, a server in the
//!   background, a cluster); keep these few.
//!
//! `packgraph-bench` must be built beside `packgraph` (`cargo test --workspace` builds it;
//! alone, `cargo build -p packgraph-bench` first).
#![cfg(unix)]

use std::fmt::Write as _;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The longest one README command may run (debug build, a loaded machine).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Run,
    ArgsOnly,
    Skip,
}

/// One command of a block: its first README line and its text (continuations joined).
#[derive(Debug)]
struct Line {
    number: usize,
    text: String,
}

#[derive(Debug)]
struct Block {
    section: String,
    fence_line: usize,
    mode: Mode,
    commands: Vec<Line>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The marker on the line before a fence, if any: `Err` for a malformed one.
fn marker(line: &str) -> Result<Option<Mode>, String> {
    let Some(rest) = line.trim().strip_prefix("<!-- readme-test:") else {
        return Ok(None);
    };
    let rest = rest.trim();
    let (mode, reason) = if let Some(r) = rest.strip_prefix("skip") {
        (Mode::Skip, r)
    } else if let Some(r) = rest.strip_prefix("args-only") {
        (Mode::ArgsOnly, r)
    } else {
        return Err(format!("unknown marker {line:?} (skip or args-only)"));
    };
    let reason = reason
        .trim()
        .strip_suffix("-->")
        .map(str::trim)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.strip_suffix(')'));
    match reason {
        Some(r) if !r.trim().is_empty() => Ok(Some(mode)),
        _ => Err(format!("marker {line:?} needs a reason in parentheses")),
    }
}

/// Every sh/bash block of `readme`, with its section and marker.
fn blocks(readme: &str) -> Result<Vec<Block>, String> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut found = Vec::new();
    let mut section = String::from("(top)");
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if let Some(title) = line.strip_prefix("## ") {
            section = title.trim().to_string();
        }
        let fence = line.trim_start();
        if !fence.starts_with("```") {
            i += 1;
            continue;
        }
        let lang = fence.trim_start_matches('`').trim();
        let start = i;
        i += 1;
        while i < lines.len() && !lines[i].trim_start().starts_with("```") {
            i += 1;
        }
        if i == lines.len() {
            return Err(format!("README.md:{}: unclosed code block", start + 1));
        }
        let body = &lines[start + 1..i];
        i += 1;
        let previous = start.checked_sub(1).map_or("", |p| lines[p]);
        let mark = marker(previous).map_err(|e| format!("README.md:{start}: {e}"))?;
        if !matches!(lang, "sh" | "bash") {
            if mark.is_some() {
                return Err(format!(
                    "README.md:{start}: a marker before a {lang:?} block"
                ));
            }
            continue;
        }
        found.push(Block {
            section: section.clone(),
            fence_line: start + 1,
            mode: mark.unwrap_or(Mode::Run),
            commands: commands(body, start + 2),
        });
    }
    Ok(found)
}

/// The commands of a block whose first line is README line `first`.
fn commands(body: &[&str], first: usize) -> Vec<Line> {
    let mut out: Vec<Line> = Vec::new();
    let mut open: Option<Line> = None;
    for (k, raw) in body.iter().enumerate() {
        let number = first + k;
        if let Some(mut line) = open.take() {
            let (text, more) = continued(raw);
            line.text.push(' ');
            line.text.push_str(text.trim());
            if more {
                open = Some(line);
            } else {
                out.push(line);
            }
            continue;
        }
        let trimmed = raw.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (text, more) = continued(trimmed);
        let line = Line {
            number,
            text: text.trim().to_string(),
        };
        if more {
            open = Some(line);
        } else {
            out.push(line);
        }
    }
    out.extend(open);
    out
}

fn continued(line: &str) -> (&str, bool) {
    match line.trim_end().strip_suffix('\\') {
        Some(text) => (text, true),
        None => (line, false),
    }
}

/// `line` without a trailing `# comment` (a `#` after a blank, outside quotes).
fn strip_comment(line: &str) -> &str {
    let (mut single, mut double, mut previous) = (false, false, ' ');
    for (at, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return line[..at].trim_end(),
            _ => {}
        }
        previous = c;
    }
    line.trim_end()
}

/// The command as the shell runs it: the `cargo run` forms replaced by the binaries.
fn substitute(text: &str) -> String {
    text.replace("cargo run --release -p packgraph-cli --", "packgraph")
        .replace(
            "cargo run --release -p packgraph-bench --",
            "packgraph-bench",
        )
}

/// A directory holding links to the built binaries, to go first on `PATH`.
fn bin_dir(tmp: &Path) -> Result<PathBuf, String> {
    let packgraph = PathBuf::from(env!("CARGO_BIN_EXE_packgraph"));
    let bench = packgraph.with_file_name("packgraph-bench");
    if !bench.is_file() {
        return Err(format!(
            "{} not found: build it first (`cargo build -p packgraph-bench`; `cargo test \
             --workspace` builds it)",
            bench.display()
        ));
    }
    let dir = tmp.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&packgraph, dir.join("packgraph")).unwrap();
    std::os::unix::fs::symlink(&bench, dir.join("packgraph-bench")).unwrap();
    Ok(dir)
}

/// A fresh directory that looks like the clone's root for the README's relative paths.
fn clone_like(tmp: &Path, name: &str) -> PathBuf {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for shipped in ["data", "examples"] {
        std::os::unix::fs::symlink(repo_root().join(shipped), dir.join(shipped)).unwrap();
    }
    dir
}

/// Runs `script` with `sh -c` in `cwd`; `Err` with its exit and output unless it exits 0
/// within [`COMMAND_TIMEOUT`].
fn run_shell(script: &str, cwd: &Path, path: &std::ffi::OsStr) -> Result<(), String> {
    use std::os::unix::process::CommandExt;
    let out_path = cwd.join(".readme-test-out");
    let err_path = cwd.join(".readme-test-err");
    let mut child = Command::new("sh")
        .args(["-c", script])
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("RAYON_NUM_THREADS")
        .stdin(Stdio::null())
        .stdout(File::create(&out_path).unwrap())
        .stderr(File::create(&err_path).unwrap())
        .process_group(0)
        .spawn()
        .map_err(|e| format!("cannot start sh: {e}"))?;
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if started.elapsed() > COMMAND_TIMEOUT {
            // The whole process group: sh and whatever it started.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    match status {
        Some(s) if s.success() => Ok(()),
        Some(s) => Err(format!("exited with {s}; stderr:\n{}", tail(&stderr))),
        None => Err(format!(
            "ran past {COMMAND_TIMEOUT:?}; stderr:\n{}",
            tail(&stderr)
        )),
    }
}

fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// Runs one section's blocks in order; returns the failures, each naming its README line.
fn run_section(blocks: &[&Block], cwd: &Path, path: &std::ffi::OsStr, ci: &str) -> Vec<String> {
    let mut failures = Vec::new();
    for block in blocks {
        for line in &block.commands {
            let command = substitute(strip_comment(&line.text));
            let result = if command.starts_with("cargo test") {
                if ci.lines().any(|l| l.trim() == command) {
                    Ok(())
                } else {
                    Err(format!("`{command}` is not a line of .ci/run"))
                }
            } else if command == "cargo build --release" || command.starts_with("export PATH=") {
                Ok(())
            } else if command.starts_with("cargo ") {
                Err("a cargo command in a block without a marker".to_string())
            } else if block.mode == Mode::ArgsOnly {
                run_shell(&format!("{command} --help >/dev/null"), cwd, path)
            } else {
                run_shell(&command, cwd, path)
            };
            if let Err(why) = result {
                failures.push(format!("README.md:{}: `{}`: {why}", line.number, line.text));
            }
        }
    }
    failures
}

#[test]
fn every_readme_shell_block_runs() {
    let root = repo_root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
    let blocks = blocks(&readme).unwrap_or_else(|e| panic!("{e}"));
    let tmp = tempfile::tempdir().unwrap();
    let bin = bin_dir(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();

    let mut sections: Vec<(String, Vec<&Block>)> = Vec::new();
    for block in blocks.iter().filter(|b| b.mode != Mode::Skip) {
        match sections.iter_mut().find(|(s, _)| *s == block.section) {
            Some((_, list)) => list.push(block),
            None => sections.push((block.section.clone(), vec![block])),
        }
    }
    let started = Instant::now();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let handles: Vec<_> = sections
            .iter()
            .enumerate()
            .map(|(k, (_, list))| {
                let cwd = clone_like(tmp.path(), &format!("section{k}"));
                let (path, ci) = (&path, &ci);
                scope.spawn(move || run_section(list, &cwd, path, ci))
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let ran: usize = blocks
        .iter()
        .filter(|b| b.mode != Mode::Skip)
        .map(|b| b.commands.len())
        .sum();
    let mut report = String::new();
    for f in &failures {
        writeln!(report, "{f}").unwrap();
    }
    assert!(
        failures.is_empty(),
        "{} of {ran} README commands failed:\n{report}",
        failures.len()
    );
    eprintln!(
        "{ran} README commands in {} blocks ran in {:.1?}",
        blocks.iter().filter(|b| b.mode != Mode::Skip).count(),
        started.elapsed()
    );
}

#[test]
fn markers_are_few_and_give_reasons() {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let blocks = blocks(&readme).unwrap_or_else(|e| panic!("{e}"));
    let skipped: Vec<String> = blocks
        .iter()
        .filter(|b| b.mode == Mode::Skip)
        .map(|b| format!("README.md:{} ({})", b.fence_line, b.section))
        .collect();
    // Only blocks that cannot run on a CI machine are skipped: MPI, a cluster, a server.
    assert!(skipped.len() <= 5, "too many skipped blocks: {skipped:?}");
    // The CLI sections' blocks run for real, the main job's and measurements' parse.
    for block in &blocks {
        if ["Your own graph", "Durable graphs"].contains(&block.section.as_str()) {
            assert_eq!(block.mode, Mode::Run, "README.md:{}", block.fence_line);
        }
    }
    assert!(blocks.iter().filter(|b| b.mode == Mode::Run).count() >= 3);
}

#[test]
fn the_block_parser_reads_markers_continuations_and_comments() {
    let readme = "## A\n\n<!-- readme-test: skip (a server) -->\n```sh\nserve &\n```\n\
                  ```sh\n# only a comment\npackgraph info x \\\n    --json   # trailing\n```\n\
                  ```python\nprint(1)\n```\n## B\n<!-- readme-test: args-only (long) -->\n\
                  ```bash\nbench pma\n```\n";
    let found = blocks(readme).unwrap();
    assert_eq!(found.len(), 3);
    assert_eq!(
        (found[0].mode, found[0].section.as_str()),
        (Mode::Skip, "A")
    );
    assert_eq!(found[1].mode, Mode::Run);
    assert_eq!(found[1].commands.len(), 1);
    assert_eq!(found[1].commands[0].number, 9);
    assert_eq!(
        strip_comment(&found[1].commands[0].text),
        "packgraph info x --json"
    );
    assert_eq!(
        (found[2].mode, found[2].section.as_str()),
        (Mode::ArgsOnly, "B")
    );
    assert_eq!(
        strip_comment("printf '+ a # b\\n' | x # c"),
        "printf '+ a # b\\n' | x"
    );
    assert!(blocks("<!-- readme-test: skip -->\n```sh\nx\n```\n").is_err());
    assert!(blocks("<!-- readme-test: later (x) -->\n```sh\nx\n```\n").is_err());
    assert!(blocks("```sh\nx\n").is_err());
}
