//! Reading the graph a command works on: the shared `--input/--format/--directed` options,
//! a progress bar on a terminal, and errors that exit with code 2.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use packgraph::io::{load, Dataset, Format, LoadOptions};

/// Counts such as `1e6` in options (`value_parser = parse_count`).
pub(crate) use packgraph::io::parse_count;

/// How to read the input graph.
#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// The graph file: an edge list (`u v [weight]` lines, optionally gzip), a Matrix Market
    /// file, a Graphalytics dataset (its .v or .e file, or their common prefix), a
    /// packgraph snapshot (.pgb) or a data directory (`packgraph create`).
    #[arg(long, short, value_name = "FILE")]
    pub(crate) input: PathBuf,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

/// Format and direction options of a file to read.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReadArgs {
    /// The input's format (detected from the file when left out).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub(crate) format: Option<Format>,
    /// Edges are directed (edge lists and Graphalytics datasets are undirected otherwise;
    /// Matrix Market files follow their symmetry).
    #[arg(long, conflicts_with = "undirected")]
    pub(crate) directed: bool,
    /// Edges are undirected (each stored both ways), even for a general Matrix Market file
    /// or a Graphalytics dataset whose properties say directed.
    #[arg(long)]
    pub(crate) undirected: bool,
}

pub(crate) fn parse_format(text: &str) -> Result<Format, String> {
    Format::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Format::ALL.iter().map(|(_, n)| *n).collect();
        format!("unknown format {text:?}; one of: {}", names.join(", "))
    })
}

/// Input the user can fix: exit code 2.
#[derive(Debug)]
pub(crate) struct BadInput(pub(crate) packgraph::Error);

impl std::fmt::Display for BadInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for BadInput {}

/// A progress bar on stderr when it is a terminal, hidden otherwise.
pub(crate) fn progress_bar(len: u64, template: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(
        Some(len),
        if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        },
    );
    bar.set_style(
        ProgressStyle::with_template(template)
            .expect("the progress template is valid")
            .progress_chars("=> "),
    );
    bar
}

/// A spinner with a message, on a terminal only.
pub(crate) fn spinner(message: &str) -> ProgressBar {
    let bar = progress_bar(0, "{spinner} {msg} {elapsed}");
    bar.set_length(0);
    bar.set_message(message.to_string());
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// Reads `path` with a progress bar; returns the dataset and the time it took.
pub(crate) fn read(path: &Path, args: &ReadArgs) -> anyhow::Result<(Dataset, Duration)> {
    if packgraph::store::is_store(path) {
        // A data directory: its latest durable state, read without the writer's lock.
        let bar = spinner("loading the data directory");
        let start = Instant::now();
        let result = packgraph::store::load_any(path);
        bar.finish_and_clear();
        let graph = result.map_err(|e| match e {
            e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
            e => BadInput(e).into(),
        })?;
        return Ok((
            Dataset {
                graph,
                self_loops: 0,
            },
            start.elapsed(),
        ));
    }
    let size = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let bar = progress_bar(
        size,
        "loading {bar:30} {bytes}/{total_bytes} ({bytes_per_sec}, {eta})",
    );
    let reporter = bar.clone();
    let options = LoadOptions {
        format: args.format,
        directed: if args.directed {
            Some(true)
        } else if args.undirected {
            Some(false)
        } else {
            None
        },
        progress: Some(Arc::new(move |bytes| reporter.set_position(bytes))),
    };
    let start = Instant::now();
    let result = load(path, &options);
    bar.finish_and_clear();
    let data = result.map_err(BadInput)?;
    Ok((data, start.elapsed()))
}

/// The format to write `path` in: `--to` if given, else from its extension.
pub(crate) fn output_format(path: &Path, to: Option<Format>) -> Format {
    to.unwrap_or_else(|| Format::for_output(path))
}
