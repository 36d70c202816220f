//! Statistics of the runs and the output block, in the Graph500 reference code's form.
//!
//! Times and edge counts are summarised by minimum, quartiles, maximum, mean and sample
//! standard deviation. TEPS are summarised through their reciprocals (seconds per edge), as
//! the reference code does: the harmonic mean of TEPS is the reciprocal of the mean of the
//! reciprocals, and its standard deviation is `stddev(1/TEPS) / (mean(1/TEPS)² · √(n-1))`.

use std::fmt::Write;

use serde::Serialize;

use crate::bfs::LevelStats;

/// Order statistics, mean and sample standard deviation of a sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Smallest value.
    pub min: f64,
    /// 25th percentile.
    pub firstquartile: f64,
    /// 50th percentile.
    pub median: f64,
    /// 75th percentile.
    pub thirdquartile: f64,
    /// Largest value.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation (0 for fewer than two values).
    pub stddev: f64,
}

/// The `q`-quantile of sorted `values` by linear interpolation between closest ranks.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Summary {
    /// The summary of `values` (all zero for none).
    pub fn of(values: &[f64]) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len() as f64;
        let mean = sorted.iter().sum::<f64>() / n;
        let var = if sorted.len() > 1 {
            sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Self {
            min: sorted[0],
            firstquartile: quantile(&sorted, 0.25),
            median: quantile(&sorted, 0.5),
            thirdquartile: quantile(&sorted, 0.75),
            max: sorted[sorted.len() - 1],
            mean,
            stddev: var.sqrt(),
        }
    }
}

/// TEPS of the runs, summarised through seconds per edge.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TepsSummary {
    /// Smallest TEPS.
    pub min: f64,
    /// 25th percentile.
    pub firstquartile: f64,
    /// 50th percentile.
    pub median: f64,
    /// 75th percentile.
    pub thirdquartile: f64,
    /// Largest TEPS.
    pub max: f64,
    /// Harmonic mean: the Graph500 figure of merit.
    pub harmonic_mean: f64,
    /// Standard deviation of the harmonic mean.
    pub harmonic_stddev: f64,
}

impl TepsSummary {
    /// The summary of the TEPS `nedge[i] / time[i]`.
    pub fn of(times: &[f64], nedges: &[f64]) -> Self {
        let inverse: Vec<f64> = times.iter().zip(nedges).map(|(t, m)| t / m).collect();
        let s = Summary::of(&inverse);
        let n = inverse.len() as f64;
        Self {
            min: 1.0 / s.max,
            firstquartile: 1.0 / s.thirdquartile,
            median: 1.0 / s.median,
            thirdquartile: 1.0 / s.firstquartile,
            max: 1.0 / s.min,
            harmonic_mean: 1.0 / s.mean,
            harmonic_stddev: if n > 1.0 {
                s.stddev / (s.mean * s.mean * (n - 1.0).sqrt())
            } else {
                0.0
            },
        }
    }
}

/// One search.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The search key.
    pub root: u32,
    /// Seconds of the search.
    pub time: f64,
    /// Input edges in the root's component.
    pub nedge: u64,
    /// `nedge / time`.
    pub teps: f64,
    /// Seconds validating the tree.
    pub validate_time: f64,
    /// An order-free digest of every vertex's level: equal digests mean equal level
    /// vectors (with high probability), whatever the grid or compression.
    pub levels_digest: u64,
    /// Levels of the search: bytes summed over the processes, times the slowest process's.
    pub levels: Vec<LevelStats>,
}

/// Everything a benchmark run measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// log2 of the vertex count (rounded up for an input file).
    pub scale: u32,
    /// Edges per vertex.
    pub edgefactor: f64,
    /// Searches run.
    pub nbfs: usize,
    /// Seconds generating (or reading) the graph.
    pub graph_generation: f64,
    /// Processes.
    pub num_mpi_processes: usize,
    /// The process grid, `RxC`.
    pub grid: String,
    /// Whether frontier messages crossing the wire were packed.
    pub compression: bool,
    /// Seconds of kernel 1.
    pub construction_time: f64,
    /// Vertices of the graph.
    pub num_vertices: usize,
    /// Edges of the input (duplicates and self-loops included).
    pub num_input_edges: u64,
    /// Search times.
    pub time: Summary,
    /// Edge counts.
    pub nedge: Summary,
    /// TEPS.
    pub teps: TepsSummary,
    /// Validation times.
    pub validate: Summary,
    /// Top-down frontier-gather bytes over all searches: uncompressed, then sent.
    pub frontier_raw_bytes: u64,
    /// See `frontier_raw_bytes`.
    pub frontier_sent_bytes: u64,
    /// All message bytes over all searches: uncompressed, then sent.
    pub raw_bytes: u64,
    /// See `raw_bytes`.
    pub sent_bytes: u64,
    /// The searches.
    pub runs: Vec<RunReport>,
    /// Validation failures (empty when every tree is valid).
    pub validation_errors: Vec<String>,
}

/// `value` as C's `%g`: six significant digits, exponent form outside 1e-4..1e6, trailing
/// zeros removed.
pub fn fmt_g(value: f64) -> String {
    if value == 0.0 || !value.is_finite() {
        return format!("{value}");
    }
    let exponent = value.abs().log10().floor() as i32;
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let sci = format!("{value:.5e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(exponent);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa.to_string()), exp.abs())
    } else {
        let decimals = (5 - exp).max(0) as usize;
        trim(format!("{value:.decimals$}"))
    }
}

impl Report {
    /// The output block of the reference code (only the BFS lines).
    pub fn output_block(&self) -> String {
        let mut out = String::new();
        let mut line = |name: &str, value: String| {
            let _ = writeln!(out, "{:<32}{value}", format!("{name}:"));
        };
        line("SCALE", self.scale.to_string());
        line("edgefactor", fmt_g(self.edgefactor));
        line("NBFS", self.nbfs.to_string());
        line("graph_generation", fmt_g(self.graph_generation));
        line("num_mpi_processes", self.num_mpi_processes.to_string());
        line("construction_time", fmt_g(self.construction_time));
        let summary = |line: &mut dyn FnMut(&str, String),
                       prefix: &str,
                       what: &str,
                       s: &Summary,
                       g: fn(f64) -> String| {
            line(&format!("{prefix}min_{what}"), g(s.min));
            line(&format!("{prefix}firstquartile_{what}"), g(s.firstquartile));
            line(&format!("{prefix}median_{what}"), g(s.median));
            line(&format!("{prefix}thirdquartile_{what}"), g(s.thirdquartile));
            line(&format!("{prefix}max_{what}"), g(s.max));
            line(&format!("{prefix}mean_{what}"), g(s.mean));
            line(&format!("{prefix}stddev_{what}"), g(s.stddev));
        };
        summary(&mut line, "bfs  ", "time", &self.time, fmt_g);
        summary(&mut line, "", "nedge", &self.nedge, |v| format!("{v:.0}"));
        let t = &self.teps;
        line("bfs  min_TEPS", fmt_g(t.min));
        line("bfs  firstquartile_TEPS", fmt_g(t.firstquartile));
        line("bfs  median_TEPS", fmt_g(t.median));
        line("bfs  thirdquartile_TEPS", fmt_g(t.thirdquartile));
        line("bfs  max_TEPS", fmt_g(t.max));
        let _ = writeln!(
            out,
            "{:<29}!  {}",
            "bfs  harmonic_mean_TEPS:",
            fmt_g(t.harmonic_mean)
        );
        let mut line = |name: &str, value: String| {
            let _ = writeln!(out, "{:<32}{value}", format!("{name}:"));
        };
        line("bfs  harmonic_stddev_TEPS", fmt_g(t.harmonic_stddev));
        summary(&mut line, "bfs  ", "validate", &self.validate, fmt_g);
        out
    }

    /// Per-level costs of every search, one line per level.
    pub fn levels_table(&self) -> String {
        let mut out = String::from(
            "root level dir frontier_ids raw_bytes sent_bytes codec_ms comm_ms compute_ms\n",
        );
        for run in &self.runs {
            for l in &run.levels {
                let _ = writeln!(
                    out,
                    "{} {} {} {} {} {} {:.3} {:.3} {:.3}",
                    run.root,
                    l.level,
                    if l.bottom_up { "BU" } else { "TD" },
                    l.frontier_ids,
                    l.raw_bytes,
                    l.sent_bytes,
                    l.codec_ns as f64 / 1e6,
                    l.comm_ns as f64 / 1e6,
                    l.compute_ns as f64 / 1e6
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_interpolate_quartiles() {
        let s = Summary::of(&[4.0, 1.0, 3.0, 2.0, 5.0]);
        assert_eq!(
            (s.min, s.firstquartile, s.median, s.thirdquartile, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert_eq!(s.mean, 3.0);
        assert!((s.stddev - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(Summary::of(&[7.0]).stddev, 0.0);
    }

    #[test]
    fn teps_are_summarised_by_their_harmonic_mean() {
        // 100 edges in 1 s and in 4 s: TEPS 100 and 25, harmonic mean 40.
        let t = TepsSummary::of(&[1.0, 4.0], &[100.0, 100.0]);
        assert!((t.harmonic_mean - 40.0).abs() < 1e-9);
        assert!((t.max - 100.0).abs() < 1e-9 && (t.min - 25.0).abs() < 1e-9);
        // stddev(0.01, 0.04) = 0.0212132; / (0.025² · 1)
        assert!((t.harmonic_stddev - 0.021_213_203_435_596_43 / 0.000_625).abs() < 1e-6);
    }

    #[test]
    fn numbers_print_like_c_g() {
        assert_eq!(fmt_g(0.5), "0.5");
        assert_eq!(fmt_g(123_456.0), "123456");
        assert_eq!(fmt_g(1_234_567.0), "1.23457e+06");
        assert_eq!(fmt_g(5.5e7), "5.5e+07");
        assert_eq!(fmt_g(0.000_012_5), "1.25e-05");
        assert_eq!(fmt_g(0.001_234_567), "0.00123457");
        assert_eq!(fmt_g(16.0), "16");
    }
}
