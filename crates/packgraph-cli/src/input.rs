//! Reading the graph a command works on: the input named positionally or by `--input`, the
//! shared `--format/--directed/--header/--delimiter` options, a progress bar on a terminal,
//! errors that exit with code 2, and the checks of an output path made before any work.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use packgraph::graph::Packing;
use packgraph::io::{load_with, Dataset, Format, LoadOptions, TextOptions};

use crate::UsageError;

/// Counts such as `1e6` in options (`value_parser = parse_count`).
pub(crate) use packgraph::io::parse_count;

/// The input graph: positional (`packgraph run bfs g.txt`) or `--input` (`-i`).
#[derive(Args, Debug, Clone)]
pub(crate) struct InputArgs {
    /// The graph file: an edge list (`u v [weight]` lines, optionally gzip), a Matrix Market
    /// file, a Graphalytics dataset (its .v or .e file, or their common prefix), a
    /// packgraph snapshot (.pgb) or a data directory (`packgraph create`).
    #[arg(value_name = "FILE", required_unless_present = "input")]
    file: Option<PathBuf>,
    /// The graph file, as an option: the same as FILE.
    #[arg(long, short, value_name = "FILE", conflicts_with = "file")]
    input: Option<PathBuf>,
    #[command(flatten)]
    pub(crate) read: ReadArgs,
}

impl InputArgs {
    /// The input file, however it was given.
    pub(crate) fn path(&self) -> &Path {
        self.input
            .as_deref()
            .or(self.file.as_deref())
            .expect("clap requires FILE or --input")
    }
}

/// An input and an output file: `INPUT OUTPUT`, or either as `--input`/`--output`.
#[derive(Args, Debug, Clone)]
pub(crate) struct InOutArgs {
    /// The file to read and the file to write (either may be given as an option instead).
    #[arg(value_names = ["INPUT", "OUTPUT"], num_args = 0..=2)]
    files: Vec<PathBuf>,
    /// The file to read, as an option.
    #[arg(long, short, value_name = "FILE")]
    input: Option<PathBuf>,
    /// The file to write, as an option.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

impl InOutArgs {
    /// `(input, output)`, or a usage error saying what is missing or given twice.
    pub(crate) fn paths(&self) -> anyhow::Result<(PathBuf, PathBuf)> {
        let mut files = self.files.iter().cloned();
        let input = match &self.input {
            Some(path) => path.clone(),
            None => files.next().ok_or_else(|| {
                UsageError("name the file to read (INPUT or --input FILE)".into())
            })?,
        };
        let output = match &self.output {
            Some(path) => path.clone(),
            None => files.next().ok_or_else(|| {
                UsageError("name the file to write (OUTPUT or --output FILE)".into())
            })?,
        };
        if let Some(extra) = files.next() {
            return Err(UsageError(format!(
                "{}: one file too many (INPUT and OUTPUT are given, positionally or by --input/--output)",
                extra.display()
            ))
            .into());
        }
        Ok((input, output))
    }
}

/// Format and direction options of a file to read.
#[derive(Args, Debug, Clone)]
pub(crate) struct ReadArgs {
    /// The input's format (detected from the file when left out).
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    pub(crate) format: Option<Format>,
    /// Edges are directed (edge lists and Graphalytics datasets are undirected otherwise,
    /// unless the file says; Matrix Market files follow their symmetry).
    #[arg(long, conflicts_with = "undirected")]
    pub(crate) directed: bool,
    /// Edges are undirected (each stored both ways), even for a general Matrix Market file
    /// or a Graphalytics dataset whose properties say directed.
    #[arg(long)]
    pub(crate) undirected: bool,
    /// The edge list's first data line is a header (`source,target`) to skip (detected
    /// when neither --header nor --no-header is given: a line without a number).
    #[arg(long, conflicts_with = "no_header")]
    pub(crate) header: bool,
    /// The edge list has no header line: a first line without numbers is an error.
    #[arg(long)]
    pub(crate) no_header: bool,
    /// A field separator of edge lists besides blanks and commas (which always separate):
    /// one ASCII punctuation character such as `;` or `|` (detected from the first data
    /// line when left out).
    #[arg(long, value_name = "CHAR", value_parser = parse_delimiter)]
    pub(crate) delimiter: Option<u8>,
}

impl ReadArgs {
    fn text_options(&self) -> TextOptions {
        TextOptions {
            header: if self.header {
                Some(true)
            } else if self.no_header {
                Some(false)
            } else {
                None
            },
            delimiter: self.delimiter,
        }
    }
}

fn parse_delimiter(text: &str) -> Result<u8, String> {
    match text {
        "tab" | "\\t" => Ok(b'\t'),
        "space" => Ok(b' '),
        _ if text.len() == 1 && text.as_bytes()[0].is_ascii_punctuation() && !matches!(text, "#" | "%" | "-" | "." | "+") => {
            Ok(text.as_bytes()[0])
        }
        _ => Err(format!(
            "{text:?}: one ASCII punctuation character (such as , ; | :), `tab` or `space`; not # or % (comments) nor - . + (parts of numbers)"
        )),
    }
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

/// Reads `path` with a progress bar, a graph file's edges packed as `packing` says (a data
/// directory keeps its layout); returns the dataset and the time it took. Says on stderr
/// what the read decided on its own: reciprocal arcs merged by an undirected read, a
/// header line skipped.
pub(crate) fn read(
    path: &Path,
    args: &ReadArgs,
    packing: Packing,
) -> anyhow::Result<(Dataset, Duration)> {
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
        packing,
    };
    let start = Instant::now();
    let result = load_with(path, &options, &args.text_options());
    bar.finish_and_clear();
    let (data, report) = result.map_err(BadInput)?;
    if report.reciprocal_pairs > 0 && !args.undirected {
        eprintln!(
            "{}: read as undirected: {} reciprocal arc {} (u v and v u) merged into one edge each; pass --directed to keep them",
            path.display(),
            report.reciprocal_pairs,
            if report.reciprocal_pairs == 1 {
                "pair"
            } else {
                "pairs"
            }
        );
    }
    if let (Some(header), false) = (&report.header, args.header) {
        eprintln!(
            "{}: skipped the header line {header:?} (--no-header reads it as data)",
            path.display()
        );
    }
    Ok((data, start.elapsed()))
}

/// The format to write `path` in: `--to` if given, else from its extension; an unknown
/// extension is a usage error naming the ones known.
pub(crate) fn output_format(path: &Path, to: Option<Format>) -> anyhow::Result<Format> {
    if let Some(format) = to {
        return Ok(format);
    }
    Format::from_extension(path).ok_or_else(|| {
        let known: Vec<String> = Format::OUTPUT_EXTENSIONS
            .iter()
            .map(|(e, f)| format!(".{e} ({})", f.name()))
            .collect();
        let what = match path.extension() {
            Some(e) => format!("unknown output extension .{}", e.to_string_lossy()),
            None => "no extension".to_string(),
        };
        UsageError(format!(
            "{}: {what}; use one of {}, or name the format with --to FORMAT",
            path.display(),
            known.join(", ")
        ))
        .into()
    })
}

/// The files [`packgraph::io::save`] writes for `path` in `format`: the three files of a
/// Graphalytics dataset, else `path` itself.
pub(crate) fn written_files(path: &Path, format: Format) -> Vec<PathBuf> {
    if format != Format::Graphalytics {
        return vec![path.to_path_buf()];
    }
    let text = path.to_string_lossy();
    let prefix = ["v", "e", "properties"]
        .iter()
        .find_map(|e| text.strip_suffix(&format!(".{e}")))
        .unwrap_or(&text);
    ["v", "e", "properties"]
        .iter()
        .map(|e| PathBuf::from(format!("{prefix}.{e}")))
        .collect()
}

/// Checks, before any work, that `path` can be written: its directory exists and lets us
/// create it (or it exists and lets us write it). A file this check creates is removed.
/// A failure is a usage error (exit 2) naming the path.
pub(crate) fn check_writable(path: &Path) -> anyhow::Result<()> {
    let refuse = |reason: String| -> anyhow::Result<()> {
        Err(UsageError(format!(
            "{}: cannot write the output here: {reason}",
            path.display()
        ))
        .into())
    };
    if path.is_dir() {
        return refuse("it is a directory; name a file".into());
    }
    let existed = path.exists();
    match std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
    {
        Ok(_) => {
            if !existed {
                let _ = std::fs::remove_file(path);
            }
            Ok(())
        }
        Err(e) => refuse(e.to_string()),
    }
}
