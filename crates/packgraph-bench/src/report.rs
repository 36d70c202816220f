//! Where measurements go: every measurement is a [`Record`]; with `--json` each is printed
//! as one JSON object per line (JSON Lines), otherwise as a row of a readable table.
//! Progress goes to stderr, drawn only when it is a terminal.

use std::io::Write;

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;

/// One measurement.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Record {
    pub(crate) bench: &'static str,
    pub(crate) structure: &'static str,
    pub(crate) op: &'static str,
    pub(crate) param: u64,
    pub(crate) threads: usize,
    pub(crate) value: f64,
    pub(crate) unit: &'static str,
    /// Keys processed to get the figure (inserts run, keys visited, keys stored).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) keys: Option<u64>,
    /// Input the figure was measured on, where a bench has several.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) dataset: Option<&'static str>,
}

/// A bar of `steps` steps on stderr; indicatif draws nothing when stderr is not a
/// terminal, so piped and captured runs stay clean.
pub(crate) fn progress_bar(steps: u64) -> ProgressBar {
    let style = ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
        .expect("the progress template is valid")
        .progress_chars("=> ");
    ProgressBar::new(steps).with_style(style)
}

/// Prints `line` to stdout with `progress` out of the way.
pub(crate) fn print_line(progress: &ProgressBar, line: &str) -> anyhow::Result<()> {
    progress.suspend(|| {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").and_then(|()| out.flush())
    })?;
    Ok(())
}

/// Prints records as JSON Lines or as a table.
pub(crate) struct Reporter {
    json: bool,
    progress: ProgressBar,
}

impl Reporter {
    pub(crate) fn new(json: bool, steps: u64) -> Self {
        if !json {
            println!(
                "{:<10} {:<12} {:<14} {:>12} {:>7} {:>14} {:<10} {:>12}",
                "bench", "structure", "op", "param", "threads", "value", "unit", "keys"
            );
        }
        Self {
            json,
            progress: progress_bar(steps),
        }
    }

    /// Says what runs next (progress bar on a terminal only).
    pub(crate) fn step(&self, message: String) {
        self.progress.set_message(message);
    }

    pub(crate) fn advance(&self) {
        self.progress.inc(1);
    }

    pub(crate) fn emit(&self, record: Record) -> anyhow::Result<()> {
        let line = if self.json {
            serde_json::to_string(&record)?
        } else {
            format!(
                "{:<10} {:<12} {:<14} {:>12} {:>7} {:>14} {:<10} {:>12}",
                record.dataset.map_or(record.bench.to_string(), |d| format!(
                    "{}/{d}",
                    record.bench
                )),
                record.structure,
                record.op,
                record.param,
                record.threads,
                format_value(record.value),
                record.unit,
                record.keys.map_or(String::new(), |k| k.to_string()),
            )
        };
        print_line(&self.progress, &line)
    }

    pub(crate) fn finish(&self) {
        self.progress.finish_and_clear();
    }
}

fn format_value(value: f64) -> String {
    if value >= 1e5 || (value > 0.0 && value < 1e-2) {
        format!("{value:.4e}")
    } else {
        format!("{value:.4}")
    }
}
