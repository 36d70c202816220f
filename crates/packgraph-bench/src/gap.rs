//! GAP rows of `packgraph-bench graph --gap DIR`: the GAP Benchmark Suite's reference C++
//! kernels (static CSR, OpenMP), run as child processes in the same run as packgraph's.
//!
//! DIR holds GAP's built binaries `bfs`, `cc`, `pr` and `bc`. Each kernel generates its own
//! input: on the "kronecker" dataset GAP's Kronecker generator (`-g SCALE -k EDGE_FACTOR`),
//! on the "er" dataset GAP's uniform random generator (`-u SCALE -k EDGE_FACTOR`). GAP seeds
//! its generators itself, so these are not the very graphs packgraph builds but graphs of
//! the same kind and size (same vertex count and generated edges per vertex, symmetrized,
//! duplicates and self-loops removed); GAP's uniform random graph stands in for the
//! Erdős–Rényi graph. GAP's size line (from its bfs run) goes to stderr for comparison.
//!
//! The kernels run with `OMP_NUM_THREADS` set to the bench's thread count. GAP times each
//! trial without graph generation and building; the row is the median trial time (the
//! upper median for an even count, as packgraph's BFS row):
//!
//! | op | binary | trials |
//! |---|---|---|
//! | bfs | `bfs` | one per BFS source (GAP picks its own sources) |
//! | pagerank | `pr` | 3, exactly 10 iterations each (tolerance 0, so it never stops early) |
//! | wcc | `cc` | 3, GAP's default Afforest |
//! | bc | `bc` | one per BFS source, one source per trial |
//!
//! GAP prints seconds with five decimals, so its rows resolve 10 µs.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context};

use crate::args::usage_error;
use crate::workload::median;
use crate::{Record, Reporter};

/// Trials of the kernels that take no source (PageRank and WCC).
const WHOLE_GRAPH_TRIALS: usize = 3;

/// The label before each trial's seconds in GAP's output.
const TRIAL_LABEL: &str = "Trial Time:";

/// GAP's binaries in a directory, checked, and the bench's graph parameters.
#[derive(Debug)]
pub(crate) struct Gap {
    dir: PathBuf,
    scale: u32,
    edge_factor: usize,
    sources: usize,
}

/// One GAP kernel: the row's op, GAP's binary and the kernel's own arguments.
struct Kernel {
    op: &'static str,
    binary: &'static str,
    trials: usize,
    extra: &'static [&'static str],
}

impl Gap {
    /// Checks that `dir` holds GAP's `bfs`, `cc`, `pr` and `bc` (a [`usage_error`] naming
    /// the first missing one otherwise), before anything is measured.
    pub(crate) fn open(
        dir: &Path,
        scale: u32,
        edge_factor: usize,
        sources: usize,
    ) -> anyhow::Result<Self> {
        let gap = Self {
            dir: dir.to_path_buf(),
            scale,
            edge_factor,
            sources,
        };
        for kernel in gap.kernels() {
            let path = gap.dir.join(kernel.binary);
            if !path.is_file() {
                return Err(usage_error(format!(
                    "--gap {}: GAP binary {} not found (build GAP with `make` in its \
                     source directory and pass that directory)",
                    dir.display(),
                    path.display()
                )));
            }
        }
        Ok(gap)
    }

    fn kernels(&self) -> [Kernel; 4] {
        let per_source = self.sources.max(1);
        [
            Kernel {
                op: "bfs",
                binary: "bfs",
                trials: per_source,
                extra: &[],
            },
            Kernel {
                op: "pagerank",
                binary: "pr",
                trials: WHOLE_GRAPH_TRIALS,
                extra: &["-i", "10", "-t", "0"],
            },
            Kernel {
                op: "wcc",
                binary: "cc",
                trials: WHOLE_GRAPH_TRIALS,
                extra: &[],
            },
            Kernel {
                op: "bc",
                binary: "bc",
                trials: per_source,
                extra: &["-i", "1"],
            },
        ]
    }

    /// Runs the four kernels on GAP's graph for `dataset` and emits a "gap" row for each.
    pub(crate) fn run_algorithms(
        &self,
        reporter: &Reporter,
        dataset: &'static str,
        threads: usize,
    ) -> anyhow::Result<()> {
        let generator = match dataset {
            "kronecker" => "-g",
            "er" => "-u",
            other => bail!("GAP has no generator for the {other} dataset"),
        };
        for (index, kernel) in self.kernels().iter().enumerate() {
            reporter.step(format!("{dataset}: GAP {}", kernel.binary));
            let path = self.dir.join(kernel.binary);
            let mut command = Command::new(&path);
            command
                .args([generator, &self.scale.to_string()])
                .args(["-k", &self.edge_factor.to_string()])
                .args(["-n", &kernel.trials.to_string()])
                .args(kernel.extra)
                .env("OMP_NUM_THREADS", threads.to_string())
                .stdin(Stdio::null());
            let output = run_child(&path, &mut command)?;
            if index == 0 {
                if let Some(size) = output.lines().find_map(|l| l.strip_prefix("Graph has ")) {
                    eprintln!("{dataset}: GAP's graph has {size}");
                }
            }
            let times = parse_trial_times(&output, kernel.trials)
                .with_context(|| format!("reading the output of GAP binary {}", path.display()))?;
            reporter.emit(Record {
                bench: "graph",
                structure: "gap",
                op: kernel.op,
                param: u64::from(self.scale),
                threads,
                value: median(times),
                unit: "s",
                keys: None,
                dataset: Some(dataset),
            })?;
        }
        Ok(())
    }
}

/// Runs a GAP binary to completion; its stdout, or an error with its last output line.
fn run_child(path: &Path, command: &mut Command) -> anyhow::Result<String> {
    let output = command
        .output()
        .with_context(|| format!("starting GAP binary {}", path.display()))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last = last_line(&stderr)
            .or_else(|| last_line(&stdout))
            .unwrap_or("(no output)");
        bail!(
            "GAP binary {} failed ({}): {last}",
            path.display(),
            output.status
        );
    }
    Ok(stdout)
}

fn last_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).rfind(|line| !line.is_empty())
}

/// The seconds of each trial in a GAP kernel's output (`Trial Time:` lines), which must
/// number `expected`.
pub(crate) fn parse_trial_times(output: &str, expected: usize) -> anyhow::Result<Vec<f64>> {
    let mut times = Vec::with_capacity(expected);
    for line in output.lines() {
        let Some(rest) = line.trim().strip_prefix(TRIAL_LABEL) else {
            continue;
        };
        match rest.trim().parse::<f64>() {
            Ok(seconds) if seconds.is_finite() && seconds >= 0.0 => times.push(seconds),
            _ => bail!("unparsable trial time in the line {:?}", line.trim()),
        }
    }
    if times.len() != expected {
        bail!(
            "expected {expected} {TRIAL_LABEL:?} lines, found {}; last line: {:?}",
            times.len(),
            last_line(output).unwrap_or("")
        );
    }
    Ok(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What GAP's `bfs -g 10 -n 3` prints (format as GAP prints it; times made up).
    const BFS_OUTPUT: &str = "\
Generate Time:       0.00925
Build Time:          0.00231
Graph has 1024 nodes and 10496 undirected edges for degree: 10
Trial Time:          0.00042
Trial Time:          0.00017
Trial Time:          0.00020
Average Time:        0.00026
";

    #[test]
    fn trial_times_are_read_in_order() {
        assert_eq!(
            parse_trial_times(BFS_OUTPUT, 3).unwrap(),
            [0.00042, 0.00017, 0.00020]
        );
    }

    #[test]
    fn other_lines_between_trials_are_skipped() {
        let output = "\
Graph has 1024 nodes and 16125 undirected edges for degree: 15
Trial Time:          1.50000
Verification:           PASS
Verification Time:   0.10000
Trial Time:          2.25000
Average Time:        1.87500
";
        assert_eq!(parse_trial_times(output, 2).unwrap(), [1.5, 2.25]);
    }

    #[test]
    fn a_wrong_number_of_trials_is_an_error_naming_the_last_line() {
        let error = parse_trial_times(BFS_OUTPUT, 4).unwrap_err().to_string();
        assert!(error.contains("expected 4"), "{error}");
        assert!(error.contains("found 3"), "{error}");
        assert!(error.contains("Average Time:        0.00026"), "{error}");
        let error = parse_trial_times("No graph input specified. (Use -h for help)\n", 1)
            .unwrap_err()
            .to_string();
        assert!(error.contains("found 0"), "{error}");
        assert!(error.contains("No graph input specified"), "{error}");
        assert!(parse_trial_times("", 1).is_err());
    }

    #[test]
    fn malformed_trial_lines_are_errors_naming_the_line() {
        for line in [
            "Trial Time:          abc",
            "Trial Time:",
            "Trial Time:          -0.5",
            "Trial Time:          nan",
            "Trial Time:          inf",
            "Trial Time:          0.1 s",
        ] {
            let error = parse_trial_times(&format!("{line}\n"), 1)
                .unwrap_err()
                .to_string();
            assert!(error.contains(line), "{line}: {error}");
        }
    }

    #[test]
    fn a_missing_directory_is_a_usage_error_naming_the_binary() {
        let error = Gap::open(Path::new("/nonexistent/gapbs"), 10, 16, 1).unwrap_err();
        assert_eq!(crate::args::exit_code(&error), 2, "a usage error");
        let message = error.to_string();
        assert!(message.contains("/nonexistent/gapbs/bfs"), "{message}");
    }
}
