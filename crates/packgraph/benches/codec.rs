//! Criterion benchmarks of the byte codes: decoding a delta run (fast word-at-a-time decoder
//! against the checked byte-at-a-time one) and encoding it.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use packgraph::codec::{delta, varint};

fn run_of(count: usize, gap_bits: u32) -> (u64, Vec<u64>) {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut key = 1u64 << 40;
    let keys = (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            key += 1 + (state >> (64 - gap_bits));
            key
        })
        .collect();
    (1 << 40, keys)
}

fn codec(c: &mut Criterion) {
    let mut group = c.benchmark_group("codec");
    for gap_bits in [7u32, 20] {
        let (base, keys) = run_of(100_000, gap_bits);
        let mut bytes = vec![0u8; delta::run_len(base, &keys) + 16];
        let len = delta::encode_run(base, &keys, &mut bytes).expect("buffer sized by run_len");
        group.throughput(Throughput::Elements(keys.len() as u64));
        group.bench_function(format!("codec/decode_run_fast/gap{gap_bits}"), |b| {
            b.iter(|| {
                delta::DeltaIter::new(black_box(&bytes), len, base).fold(0u64, u64::wrapping_add)
            })
        });
        group.bench_function(format!("codec/scan_run/gap{gap_bits}"), |b| {
            b.iter(|| {
                let mut sum = 0u64;
                delta::for_each_in_run(black_box(&bytes), len, base, |k| {
                    sum = sum.wrapping_add(k);
                    true
                });
                sum
            })
        });
        group.bench_function(format!("codec/decode_run_checked/gap{gap_bits}"), |b| {
            b.iter(|| {
                let (mut pos, mut key, mut sum) = (0, base, 0u64);
                while pos < len {
                    let (d, l) = varint::decode(black_box(&bytes), pos).expect("valid run");
                    key += d;
                    sum = sum.wrapping_add(key);
                    pos += l;
                }
                sum
            })
        });
        group.bench_function(format!("codec/encode_run/gap{gap_bits}"), |b| {
            let mut out = vec![0u8; len + 16];
            b.iter(|| delta::encode_run(base, black_box(&keys), &mut out).expect("fits"))
        });
    }
    group.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
