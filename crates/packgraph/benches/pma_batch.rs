//! Criterion benchmarks of PMA kernels: batch insert (+ remove, to restore the set) into a
//! 1e6-key CPMA and PMA against `BTreeSet`, and a full scan. Whole workloads at paper scale
//! are in `packgraph bench pma`.

use std::collections::BTreeSet;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use packgraph::pma::{Cpma, PlainPma};

fn keys(count: usize, mut state: u64) -> Vec<u64> {
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state >> 24
        })
        .collect()
}

fn pma_batch(c: &mut Criterion) {
    let mut start = keys(1_000_000, 7);
    start.sort_unstable();
    start.dedup();
    let cpma = Cpma::from_sorted(&start).expect("sorted");
    let pma = PlainPma::from_sorted(&start).expect("sorted");
    let btree: BTreeSet<u64> = start.iter().copied().collect();
    let mut group = c.benchmark_group("pma");
    group.sample_size(10);
    for batch in [1_000usize, 100_000] {
        let batch_keys = keys(batch, 99);
        group.throughput(Throughput::Elements(batch as u64));
        group.bench_function(format!("pma/insert_batch_cpma/{batch}"), |b| {
            b.iter_batched_ref(
                || cpma.clone(),
                |s| s.insert_batch(black_box(&batch_keys)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("pma/insert_batch_pma/{batch}"), |b| {
            b.iter_batched_ref(
                || pma.clone(),
                |s| s.insert_batch(black_box(&batch_keys)),
                BatchSize::LargeInput,
            )
        });
        group.bench_function(format!("pma/insert_batch_btreeset/{batch}"), |b| {
            b.iter_batched_ref(
                || btree.clone(),
                |s| batch_keys.iter().filter(|&&k| s.insert(k)).count(),
                BatchSize::LargeInput,
            )
        });
    }
    group.throughput(Throughput::Elements(start.len() as u64));
    group.bench_function("pma/scan_cpma/1e6", |b| {
        b.iter(|| cpma.par_fold(|| 0u64, |s, k| *s = s.wrapping_add(k), u64::wrapping_add))
    });
    group.bench_function("pma/scan_btreeset/1e6", |b| {
        b.iter(|| btree.iter().fold(0u64, |s, &k| s.wrapping_add(k)))
    });
    group.finish();
}

criterion_group!(benches, pma_batch);
criterion_main!(benches);
