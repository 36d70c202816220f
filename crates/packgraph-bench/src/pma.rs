//! `packgraph-bench pma`: the CPMA paper's microbenchmarks scaled to this machine.
//!
//! Start from `--keys` uniform random 40-bit keys; for each batch size insert
//! min(`--max-batch-keys`, 2000 × batch) more in batches (inserts/s), then remove the same
//! batches (removes/s), which restores the start set for the next size; range queries that
//! return about 1e2, 1e4 and 1e6 keys, run in parallel (keys/s); a full parallel scan
//! (keys/s); and bytes per key after inserting N keys in 100 batches into an empty set.
//! Baselines in the same run: the uncompressed PMA, `BTreeSet` and a sorted `Vec` rebuilt
//! by merging each batch. A baseline that would exceed `--budget` seconds for one
//! measurement stops early; its record says how many keys it processed.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure};
use clap::Args;
use packgraph::pma::{Cpma, LeafCodec, PlainPma, Pma, PmaConfig};
use rayon::prelude::*;

use crate::args::{usage_error, CommonArgs};
use crate::{parse_count, parse_count_list, timed, CountList, Record, Reporter};
use packgraph::io::generate::SplitMix64;

/// Options of `packgraph-bench pma`.
#[derive(Args, Debug, Clone)]
pub(crate) struct PmaArgs {
    /// Keys in the set before the batch, range and scan measurements.
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    keys: usize,
    /// Batch sizes to measure (comma-separated; empty or `none` for none).
    #[arg(long, default_value = "1e1,1e2,1e3,1e4,1e5,1e6", value_parser = parse_count_list)]
    batch_sizes: CountList,
    /// Most keys inserted per batch size (the run inserts min(this, 2000 × batch)).
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    max_batch_keys: usize,
    /// Expected keys per range query (comma-separated; empty or `none` for none).
    #[arg(long, default_value = "1e2,1e4,1e6", value_parser = parse_count_list)]
    range_sizes: CountList,
    /// Set sizes at which to report bytes per key (comma-separated; empty for none).
    #[arg(long, default_value = "1e6,1e7,1e8", value_parser = parse_count_list)]
    size_keys: CountList,
    /// Largest set size at which BTreeSet and the sorted Vec are also sized.
    #[arg(long, default_value = "1e7", value_parser = parse_count)]
    baseline_size_max: usize,
    /// Structures to run (cpma, pma, btreeset, sorted_vec).
    #[arg(long, value_delimiter = ',', default_value = ALL_STRUCTURES)]
    structures: Vec<String>,
    /// Seconds a single baseline measurement may take before it stops early.
    #[arg(long, default_value_t = 15.0)]
    budget: f64,
    /// Fixed CPMA/PMA leaf size in bytes (default: chosen from the size).
    #[arg(long)]
    leaf_bytes: Option<usize>,
    /// CPMA/PMA growth factor.
    #[arg(long)]
    growth: Option<f64>,
    #[command(flatten)]
    pub(crate) common: CommonArgs,
}

const KNOWN: [&str; 4] = ["cpma", "pma", "btreeset", "sorted_vec"];
/// [`KNOWN`] as `--structures` takes them: every structure runs by default.
const ALL_STRUCTURES: &str = "cpma,pma,btreeset,sorted_vec";
const KEY_BITS: u32 = 40;

/// The operations every benchmarked set offers.
trait BenchSet: Send + Sync {
    fn insert_batch(&mut self, keys: &[u64]) -> usize;
    fn remove_batch(&mut self, keys: &[u64]) -> usize;
    fn len(&self) -> usize;
    /// Number and sum of keys in `[start, end)`.
    fn range_sum(&self, start: u64, end: u64) -> (u64, u64);
    /// Number and sum of all keys.
    fn scan_sum(&self) -> (u64, u64);
}

impl<C: LeafCodec<Item = u64>> BenchSet for Pma<C> {
    fn insert_batch(&mut self, keys: &[u64]) -> usize {
        Pma::insert_batch(self, keys)
    }
    fn remove_batch(&mut self, keys: &[u64]) -> usize {
        Pma::remove_batch(self, keys)
    }
    fn len(&self) -> usize {
        Pma::len(self)
    }
    fn range_sum(&self, start: u64, end: u64) -> (u64, u64) {
        let mut sum = 0u64;
        let count = self.map_range(start, end, |k| sum = sum.wrapping_add(k));
        (count as u64, sum)
    }
    fn scan_sum(&self) -> (u64, u64) {
        self.par_fold(
            || (0u64, 0u64),
            |acc, k| *acc = (acc.0 + 1, acc.1.wrapping_add(k)),
            |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)),
        )
    }
}

impl BenchSet for BTreeSet<u64> {
    fn insert_batch(&mut self, keys: &[u64]) -> usize {
        keys.iter().filter(|&&k| self.insert(k)).count()
    }
    fn remove_batch(&mut self, keys: &[u64]) -> usize {
        keys.iter().filter(|k| self.remove(k)).count()
    }
    fn len(&self) -> usize {
        BTreeSet::len(self)
    }
    fn range_sum(&self, start: u64, end: u64) -> (u64, u64) {
        self.range(start..end)
            .fold((0, 0), |(n, s), &k| (n + 1, s.wrapping_add(k)))
    }
    fn scan_sum(&self) -> (u64, u64) {
        self.iter()
            .fold((0, 0), |(n, s), &k| (n + 1, s.wrapping_add(k)))
    }
}

/// A sorted `Vec` that absorbs each batch by sorting it and merging it in (a new array).
struct SortedVec(Vec<u64>);

impl BenchSet for SortedVec {
    fn insert_batch(&mut self, keys: &[u64]) -> usize {
        let mut batch = keys.to_vec();
        batch.sort_unstable();
        batch.dedup();
        let mut merged = Vec::with_capacity(self.0.len() + batch.len());
        let (a, b) = (&self.0, &batch);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let next = a[i].min(b[j]);
            i += usize::from(a[i] == next);
            j += usize::from(b[j] == next);
            merged.push(next);
        }
        merged.extend_from_slice(&a[i..]);
        merged.extend_from_slice(&b[j..]);
        let added = merged.len() - self.0.len();
        self.0 = merged;
        added
    }
    fn remove_batch(&mut self, keys: &[u64]) -> usize {
        let mut batch = keys.to_vec();
        batch.sort_unstable();
        let before = self.0.len();
        let mut j = 0;
        let kept: Vec<u64> = self
            .0
            .iter()
            .copied()
            .filter(|&k| {
                while j < batch.len() && batch[j] < k {
                    j += 1;
                }
                j == batch.len() || batch[j] != k
            })
            .collect();
        self.0 = kept;
        before - self.0.len()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn range_sum(&self, start: u64, end: u64) -> (u64, u64) {
        let lo = self.0.partition_point(|&k| k < start);
        let hi = self.0.partition_point(|&k| k < end);
        let slice = &self.0[lo..hi];
        (
            slice.len() as u64,
            slice.iter().fold(0, |s, &k| s.wrapping_add(k)),
        )
    }
    fn scan_sum(&self) -> (u64, u64) {
        let sum = self
            .0
            .par_iter()
            .fold(|| 0u64, |s, &k| s.wrapping_add(k))
            .reduce(|| 0, u64::wrapping_add);
        (self.0.len() as u64, sum)
    }
}

/// `count` distinct random keys, none of them in `sorted` (so that every insert adds a key
/// and removing the same keys restores the set).
pub(crate) fn fresh_keys(count: usize, seed: u64, sorted: &[u64]) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed, 0);
    let mut seen = std::collections::HashSet::with_capacity(count);
    let mut keys = Vec::with_capacity(count);
    while keys.len() < count {
        let key = rng.next_u64() >> (64 - KEY_BITS);
        if sorted.binary_search(&key).is_err() && seen.insert(key) {
            keys.push(key);
        }
    }
    keys
}

pub(crate) fn random_keys(count: usize, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed, 0);
    (0..count)
        .map(|_| rng.next_u64() >> (64 - KEY_BITS))
        .collect()
}

fn pma_config(args: &PmaArgs) -> anyhow::Result<PmaConfig> {
    let mut config = PmaConfig::default();
    if let Some(bytes) = args.leaf_bytes {
        config.leaf_bytes = Some(bytes);
    }
    if let Some(growth) = args.growth {
        config.growth_factor = growth;
    }
    config.validate().map_err(|e| usage_error(e.to_string()))?;
    Ok(config)
}

/// Builds structure `name` holding `sorted` (sorted, unique).
fn build(name: &str, sorted: &[u64], config: &PmaConfig) -> anyhow::Result<Box<dyn BenchSet>> {
    Ok(match name {
        "cpma" => Box::new(Cpma::from_sorted_with_config(sorted, config.clone())?),
        "pma" => Box::new(PlainPma::from_sorted_with_config(sorted, config.clone())?),
        "btreeset" => Box::new(sorted.iter().copied().collect::<BTreeSet<u64>>()),
        "sorted_vec" => Box::new(SortedVec(sorted.to_vec())),
        other => bail!("unknown structure {other:?}"),
    })
}

fn static_name(name: &str) -> &'static str {
    KNOWN.into_iter().find(|k| *k == name).unwrap_or("unknown")
}

pub(crate) fn run(args: &PmaArgs, threads: usize) -> anyhow::Result<()> {
    let mut args = args.clone();
    if args.common.quick {
        args.keys = args.keys.min(1_000_000);
        args.max_batch_keys = args.max_batch_keys.min(1_000_000);
        args.batch_sizes.retain(|&b| b <= 100_000);
        args.size_keys.cap(1_000_000);
        args.range_sizes.retain(|&r| r <= 10_000);
        args.budget = args.budget.min(2.0);
    }
    let args = &args;
    for name in &args.structures {
        if !KNOWN.contains(&name.as_str()) {
            return Err(usage_error(format!(
                "--structures: unknown structure {name:?} (known: {})",
                KNOWN.join(", ")
            )));
        }
    }
    if args.keys == 0 || args.batch_sizes.contains(&0) || args.range_sizes.contains(&0) {
        return Err(usage_error(
            "--keys, --batch-sizes and --range-sizes must be positive".into(),
        ));
    }
    let config = pma_config(args)?;
    let steps = (args.structures.len() * (args.batch_sizes.len() + args.range_sizes.len() + 1)
        + args.size_keys.len() * args.structures.len()) as u64;
    let reporter = Reporter::new(args.common.json, steps);
    eprintln!(
        "bench pma: {} threads, {} start keys ({KEY_BITS}-bit uniform), seed {}",
        threads, args.keys, args.common.seed
    );
    let mut start = random_keys(args.keys, args.common.seed);
    start.par_sort_unstable();
    start.dedup();
    for name in &args.structures {
        let mut set = build(name, &start, &config)?;
        let name = static_name(name);
        for &batch in args.batch_sizes.iter() {
            reporter.step(format!("{name}: batches of {batch}"));
            measure_batches(&reporter, args, &start, set.as_mut(), name, batch, threads)?;
            if name == "cpma" && batch >= 100_000 && threads > 1 {
                let one = rayon::ThreadPoolBuilder::new().num_threads(1).build()?;
                one.install(|| {
                    measure_batches(&reporter, args, &start, set.as_mut(), name, batch, 1)
                })?;
            }
            reporter.advance();
        }
        for &size in args.range_sizes.iter() {
            reporter.step(format!("{name}: ranges of {size}"));
            measure_ranges(&reporter, args, set.as_ref(), name, size, threads)?;
            reporter.advance();
        }
        reporter.step(format!("{name}: scan"));
        measure_scan(&reporter, set.as_ref(), name, threads)?;
        reporter.advance();
    }
    for &count in args.size_keys.iter() {
        for name in &args.structures {
            reporter.step(format!("{name}: size at {count} keys"));
            let baseline = !matches!(name.as_str(), "cpma" | "pma");
            if !baseline || count <= args.baseline_size_max {
                measure_size(&reporter, args, &config, static_name(name), count, threads)?;
            }
            reporter.advance();
        }
    }
    reporter.finish();
    Ok(())
}

/// Inserts then removes min(max_batch_keys, 2000 × batch) keys in batches of `batch`.
fn measure_batches(
    reporter: &Reporter,
    args: &PmaArgs,
    start: &[u64],
    set: &mut dyn BenchSet,
    name: &'static str,
    batch: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let total = args.max_batch_keys.min(2000 * batch);
    let keys = fresh_keys(
        total,
        args.common.seed ^ (batch as u64).wrapping_mul(0x9e37),
        start,
    );
    let budget = Duration::from_secs_f64(args.budget);
    let before = set.len();
    let (done, insert_time) = run_batches(&keys, batch, budget, |b| set.insert_batch(b));
    let after_insert = set.len();
    let (_, remove_time) =
        run_batches(&keys[..done], batch, Duration::MAX, |b| set.remove_batch(b));
    ensure!(
        set.len() == before,
        "{name}: remove did not restore the set ({} != {before})",
        set.len()
    );
    let added = (after_insert - before) as u64;
    for (op, time) in [("insert_batch", insert_time), ("remove_batch", remove_time)] {
        reporter.emit(Record {
            bench: "pma",
            structure: name,
            op,
            param: batch as u64,
            threads,
            value: done as f64 / time.as_secs_f64(),
            unit: "ops/s",
            keys: Some(if op == "insert_batch" {
                done as u64
            } else {
                added
            }),
            dataset: None,
        })?;
    }
    Ok(())
}

/// Applies `apply` to consecutive batches of `keys` until done or `budget` is spent; returns
/// the keys processed and the time taken.
pub(crate) fn run_batches(
    keys: &[u64],
    batch: usize,
    budget: Duration,
    mut apply: impl FnMut(&[u64]) -> usize,
) -> (usize, Duration) {
    let start = Instant::now();
    let mut done = 0;
    for chunk in keys.chunks(batch) {
        apply(chunk);
        done += chunk.len();
        if start.elapsed() > budget {
            break;
        }
    }
    (done, start.elapsed())
}

fn measure_ranges(
    reporter: &Reporter,
    args: &PmaArgs,
    set: &dyn BenchSet,
    name: &'static str,
    size: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let width = ((size as u128) << KEY_BITS) / set.len().max(1) as u128;
    let width = u64::try_from(width).unwrap_or(u64::MAX);
    let queries = (2 * set.len() / size).clamp(8, 200_000);
    let mut rng = SplitMix64::new(args.common.seed ^ 0x5eed, size as u64);
    let starts: Vec<u64> = (0..queries)
        .map(|_| rng.next_u64() >> (64 - KEY_BITS))
        .collect();
    let ((count, _sum), time) = timed(|| {
        starts
            .par_iter()
            .map(|&s| set.range_sum(s, s.saturating_add(width)))
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)))
    });
    reporter.emit(Record {
        bench: "pma",
        structure: name,
        op: "range",
        param: size as u64,
        threads,
        value: count as f64 / time.as_secs_f64(),
        unit: "keys/s",
        keys: Some(count),
        dataset: None,
    })
}

fn measure_scan(
    reporter: &Reporter,
    set: &dyn BenchSet,
    name: &'static str,
    threads: usize,
) -> anyhow::Result<()> {
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let ((count, _), time) = timed(|| set.scan_sum());
        ensure!(
            count as usize == set.len(),
            "{name}: scan saw {count} of {} keys",
            set.len()
        );
        best = best.min(time);
    }
    reporter.emit(Record {
        bench: "pma",
        structure: name,
        op: "scan",
        param: set.len() as u64,
        threads,
        value: set.len() as f64 / best.as_secs_f64(),
        unit: "keys/s",
        keys: Some(set.len() as u64),
        dataset: None,
    })
}

/// Bytes per key (net bytes allocated while building) after inserting `count` random keys
/// into an empty structure in 100 batches.
fn measure_size(
    reporter: &Reporter,
    args: &PmaArgs,
    config: &PmaConfig,
    name: &'static str,
    count: usize,
    threads: usize,
) -> anyhow::Result<()> {
    let keys = random_keys(count, args.common.seed ^ 0x512e ^ count as u64);
    let batch = (count / 100).max(1_000);
    let region = stats_alloc::Region::new(&crate::GLOBAL);
    let mut set = build(name, &[], config)?;
    for chunk in keys.chunks(batch) {
        set.insert_batch(chunk);
    }
    let change = region.change();
    // Reallocations are already folded into the allocated/deallocated byte counts.
    let bytes = change.bytes_allocated as isize - change.bytes_deallocated as isize;
    let stored = set.len();
    reporter.emit(Record {
        bench: "pma",
        structure: name,
        op: "size",
        param: count as u64,
        threads,
        value: bytes as f64 / stored as f64,
        unit: "bytes/key",
        keys: Some(stored as u64),
        dataset: None,
    })
}
