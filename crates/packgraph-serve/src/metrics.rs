//! The server's counters and latency histograms, written in the Prometheus text exposition
//! format (version 0.0.4) by `GET /metrics`.
//!
//! Everything is a relaxed atomic: a scrape may see a request counted in one series and not
//! yet in another, which Prometheus tolerates.

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use packgraph::algo::AlgorithmKind;

/// Upper bounds of the latency buckets, in seconds.
const BUCKETS_SECONDS: [f64; 14] = [
    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0,
];

/// A latency histogram with fixed buckets.
#[derive(Debug, Default)]
pub(crate) struct Histogram {
    /// Observations per bucket (not cumulative), the last one past every bound.
    buckets: [AtomicU64; BUCKETS_SECONDS.len() + 1],
    count: AtomicU64,
    sum_micros: AtomicU64,
}

impl Histogram {
    pub(crate) fn observe(&self, elapsed: Duration) {
        let seconds = elapsed.as_secs_f64();
        let bucket = BUCKETS_SECONDS
            .iter()
            .position(|&bound| seconds <= bound)
            .unwrap_or(BUCKETS_SECONDS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let micros = u64::try_from(elapsed.as_micros()).unwrap_or(u64::MAX);
        self.sum_micros.fetch_add(micros, Ordering::Relaxed);
    }

    /// Writes the series `name` (its `_bucket`, `_sum` and `_count`), with `labels`
    /// (`key="value"` pairs, comma-separated) on each.
    fn write(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        let mut cumulative = 0;
        for (i, bound) in BUCKETS_SECONDS.iter().enumerate() {
            cumulative += self.buckets[i].load(Ordering::Relaxed);
            let _ = writeln!(
                out,
                "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {cumulative}"
            );
        }
        cumulative += self.buckets[BUCKETS_SECONDS.len()].load(Ordering::Relaxed);
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {cumulative}"
        );
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let braces = |labels: &str| match labels.is_empty() {
            true => String::new(),
            false => format!("{{{labels}}}"),
        };
        let _ = writeln!(out, "{name}_sum{} {sum}", braces(labels));
        let _ = writeln!(out, "{name}_count{} {cumulative}", braces(labels));
    }
}

/// A counter per algorithm of the registry.
#[derive(Debug, Default)]
pub(crate) struct PerAlgorithm([AtomicU64; AlgorithmKind::ALL.len()]);

impl PerAlgorithm {
    pub(crate) fn add(&self, kind: AlgorithmKind) {
        if let Some(i) = AlgorithmKind::ALL.iter().position(|&k| k == kind) {
            self.0[i].fetch_add(1, Ordering::Relaxed);
        }
    }

    fn write(&self, out: &mut String, name: &str) {
        for (kind, count) in AlgorithmKind::ALL.iter().zip(&self.0) {
            let count = count.load(Ordering::Relaxed);
            let _ = writeln!(out, "{name}{{algorithm=\"{kind}\"}} {count}");
        }
    }
}

/// What the server counts.
#[derive(Debug, Default)]
pub(crate) struct Metrics {
    pub(crate) update_requests: AtomicU64,
    pub(crate) batches_acked: AtomicU64,
    pub(crate) edges_acked: AtomicU64,
    pub(crate) updates_refused: AtomicU64,
    pub(crate) queries: PerAlgorithm,
    pub(crate) queries_rejected: AtomicU64,
    pub(crate) queries_timed_out: AtomicU64,
    pub(crate) queries_cancelled: AtomicU64,
    pub(crate) write_groups: AtomicU64,
    pub(crate) ack_latency: Histogram,
    pub(crate) query_latency: Histogram,
    pub(crate) update_apply: Histogram,
    pub(crate) write_group: Histogram,
    pub(crate) durable_wait: Histogram,
}

/// Gauges read at scrape time.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Gauges {
    pub(crate) version: u64,
    pub(crate) durable_seq: u64,
    pub(crate) pinned_versions: usize,
    pub(crate) vertices: usize,
    pub(crate) edges: usize,
    pub(crate) graph_bytes: usize,
    pub(crate) queries_running: usize,
}

fn write_metric(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    value: impl std::fmt::Display,
) {
    let _ = writeln!(
        out,
        "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}"
    );
}

impl Metrics {
    /// The Prometheus text of every series.
    pub(crate) fn render(&self, gauges: &Gauges) -> String {
        let mut out = String::new();
        let counter = |out: &mut String, name: &str, help: &str, value: &AtomicU64| {
            write_metric(out, name, "counter", help, value.load(Ordering::Relaxed));
        };
        counter(
            &mut out,
            "packgraph_update_requests_total",
            "POST /updates requests received.",
            &self.update_requests,
        );
        counter(
            &mut out,
            "packgraph_batches_acked_total",
            "Update batches acknowledged (durable).",
            &self.batches_acked,
        );
        counter(
            &mut out,
            "packgraph_edges_acked_total",
            "Edge operations (inserts and deletes) in acknowledged batches.",
            &self.edges_acked,
        );
        counter(
            &mut out,
            "packgraph_updates_refused_total",
            "Update requests answered with an error.",
            &self.updates_refused,
        );
        out.push_str("# HELP packgraph_queries_total Queries answered, by algorithm.\n# TYPE packgraph_queries_total counter\n");
        self.queries.write(&mut out, "packgraph_queries_total");
        counter(
            &mut out,
            "packgraph_queries_rejected_total",
            "Queries refused with 503: too many running.",
            &self.queries_rejected,
        );
        counter(
            &mut out,
            "packgraph_queries_timed_out_total",
            "Queries past the time limit (504).",
            &self.queries_timed_out,
        );
        counter(
            &mut out,
            "packgraph_queries_cancelled_total",
            "Queries whose algorithm was stopped before its end: past the time limit, or the client went away.",
            &self.queries_cancelled,
        );
        counter(
            &mut out,
            "packgraph_write_groups_total",
            "Groups of update requests the writer took from its queue at once (each batch still its own record).",
            &self.write_groups,
        );
        out.push_str("# HELP packgraph_ack_latency_seconds Time from receiving an update request to acknowledging it.\n# TYPE packgraph_ack_latency_seconds histogram\n");
        self.ack_latency
            .write(&mut out, "packgraph_ack_latency_seconds", "");
        out.push_str("# HELP packgraph_query_latency_seconds Time to answer a query.\n# TYPE packgraph_query_latency_seconds histogram\n");
        self.query_latency
            .write(&mut out, "packgraph_query_latency_seconds", "");
        out.push_str("# HELP packgraph_update_apply_seconds Time to parse, build, apply and log the batches of one update request (the store commits, without the sync); batches of edges between known vertices are applied when their group ends, in packgraph_write_group_seconds.\n# TYPE packgraph_update_apply_seconds histogram\n");
        self.update_apply
            .write(&mut out, "packgraph_update_apply_seconds", "");
        out.push_str("# HELP packgraph_write_group_seconds Time the writer spent on one group of update requests: parsing, building, applying (the group's merged batch included), logging and publishing its version, without the sync.\n# TYPE packgraph_write_group_seconds histogram\n");
        self.write_group
            .write(&mut out, "packgraph_write_group_seconds", "");
        out.push_str("# HELP packgraph_durable_wait_seconds Time the acknowledger waited for a group of batches to become durable.\n# TYPE packgraph_durable_wait_seconds histogram\n");
        self.durable_wait
            .write(&mut out, "packgraph_durable_wait_seconds", "");
        let gauge = |out: &mut String, name: &str, help: &str, value: u64| {
            write_metric(out, name, "gauge", help, value);
        };
        gauge(
            &mut out,
            "packgraph_version",
            "The latest graph version.",
            gauges.version,
        );
        gauge(
            &mut out,
            "packgraph_durable_seq",
            "The last log record known durable.",
            gauges.durable_seq,
        );
        gauge(
            &mut out,
            "packgraph_pinned_versions",
            "Versions pinned by POST /snapshots.",
            gauges.pinned_versions as u64,
        );
        gauge(
            &mut out,
            "packgraph_vertices",
            "Vertices of the latest version.",
            gauges.vertices as u64,
        );
        gauge(
            &mut out,
            "packgraph_edges",
            "Edges of the latest version.",
            gauges.edges as u64,
        );
        gauge(
            &mut out,
            "packgraph_graph_bytes",
            "Bytes of the latest version's edge arrays and index.",
            gauges.graph_bytes as u64,
        );
        gauge(
            &mut out,
            "packgraph_queries_running",
            "Queries running now.",
            gauges.queries_running as u64,
        );
        if let Some(bytes) = resident_bytes() {
            gauge(
                &mut out,
                "process_resident_memory_bytes",
                "Resident memory of the process.",
                bytes,
            );
        }
        out
    }
}

/// The process's resident memory, where the system says it (Linux: `/proc/self/statm`).
fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_are_cumulative_and_count_every_observation() {
        let h = Histogram::default();
        h.observe(Duration::from_micros(300));
        h.observe(Duration::from_millis(3));
        h.observe(Duration::from_secs(60));
        let mut out = String::new();
        h.write(&mut out, "x", "");
        assert!(out.contains("x_bucket{le=\"0.0005\"} 1\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"0.005\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"10\"} 2\n"), "{out}");
        assert!(out.contains("x_bucket{le=\"+Inf\"} 3\n"), "{out}");
        assert!(out.contains("x_count 3\n"), "{out}");
        assert!(out.contains("x_sum 60.0033\n"), "{out}");
    }
}
