//! Sorting update batches: an LSD radix sort for large batches of `u64`.
//!
//! Eight-bit digits, least significant first; one pass builds all eight histograms, and a
//! digit on which every key agrees (the high bytes of 40-bit keys, say) is skipped, so
//! random keys below 2^40 take five scatter passes. Measured against `par_sort_unstable`
//! in `packgraph bench pma` (batches of 1e5 and 1e6).

use rayon::prelude::*;

/// Batches at least this long are radix sorted.
const RADIX_MIN: usize = 1 << 15;
/// Batches at least this long, but too short for radix, are sorted in parallel.
const PARALLEL_SORT_MIN: usize = 1 << 14;

/// Inputs from which the radix sort splits by the most significant digit first and sorts
/// the buckets on all threads.
const PARALLEL_RADIX_MIN: usize = 1 << 21;

/// Sorts `keys` ascending: an LSD radix sort (eight-bit digits, digits every key shares
/// skipped) from 2^15 keys, split by the top digit across threads from 2^21, a comparison
/// sort below. The PMA sorts its batches with it; the distributed graph builder sorts arcs.
///
/// ```
/// let mut keys = vec![5u64, 1 << 40, 3, 3];
/// packgraph::pma::sort_keys(&mut keys);
/// assert_eq!(keys, [3, 3, 5, 1 << 40]);
/// ```
pub fn sort_keys(keys: &mut Vec<u64>) {
    if keys.len() >= PARALLEL_RADIX_MIN && rayon::current_num_threads() > 1 {
        parallel_radix_sort(keys);
    } else if keys.len() >= RADIX_MIN {
        radix_sort(keys);
    } else if keys.len() >= PARALLEL_SORT_MIN {
        keys.par_sort_unstable();
    } else {
        keys.sort_unstable();
    }
}

/// MSD radix pass on all threads, then each bucket sorted on its own: the keys are split by
/// the eight bits below their highest differing bit (histograms and scatter per chunk of
/// the input, every chunk writing its own disjoint pieces of the buffer), then the buckets
/// are sorted in parallel.
fn parallel_radix_sort(keys: &mut Vec<u64>) {
    let first = keys[0];
    let differing = keys
        .par_iter()
        .with_min_len(1 << 16)
        .map(|&k| k ^ first)
        .reduce(|| 0, |a, b| a | b);
    if differing == 0 {
        return;
    }
    let top = 63 - differing.leading_zeros();
    let shift = top.saturating_sub(7);
    let digit = |k: u64| ((k >> shift) & 0xff) as usize;
    let chunk_len = keys.len().div_ceil(rayon::current_num_threads() * 4);
    let histograms: Vec<[usize; 256]> = keys
        .par_chunks(chunk_len)
        .map(|chunk| {
            let mut counts = [0usize; 256];
            for &k in chunk {
                counts[digit(k)] += 1;
            }
            counts
        })
        .collect();
    let mut buffer = vec![0u64; keys.len()];
    // Carve the buffer into buckets, and each bucket into one piece per input chunk.
    let mut pieces: Vec<Vec<&mut [u64]>> = histograms.iter().map(|_| Vec::new()).collect();
    let mut bucket_slices: Vec<&mut [u64]> = Vec::with_capacity(256);
    {
        let mut rest: &mut [u64] = &mut buffer;
        for bucket in 0..256 {
            let size: usize = histograms.iter().map(|h| h[bucket]).sum();
            let (this, tail) = rest.split_at_mut(size);
            bucket_slices.push(this);
            rest = tail;
        }
    }
    let mut bucket_rest: Vec<&mut [u64]> = bucket_slices;
    for (chunk, histogram) in histograms.iter().enumerate() {
        for (bucket, rest) in bucket_rest.iter_mut().enumerate() {
            let (piece, tail) = std::mem::take(rest).split_at_mut(histogram[bucket]);
            pieces[chunk].push(piece);
            *rest = tail;
        }
    }
    keys.par_chunks(chunk_len)
        .zip(pieces.par_iter_mut())
        .for_each(|(chunk, pieces)| {
            let mut cursor = [0usize; 256];
            for &k in chunk {
                let d = digit(k);
                pieces[d][cursor[d]] = k;
                cursor[d] += 1;
            }
        });
    drop(pieces);
    // Sort each bucket: buckets are contiguous ranges of the buffer.
    let mut bounds = Vec::with_capacity(257);
    let mut sum = 0;
    bounds.push(0);
    for bucket in 0..256 {
        sum += histograms.iter().map(|h| h[bucket]).sum::<usize>();
        bounds.push(sum);
    }
    let mut slices: Vec<&mut [u64]> = Vec::with_capacity(256);
    let mut rest: &mut [u64] = &mut buffer;
    for w in bounds.windows(2) {
        let (this, tail) = rest.split_at_mut(w[1] - w[0]);
        slices.push(this);
        rest = tail;
    }
    slices.into_par_iter().for_each(|bucket| {
        if bucket.len() >= RADIX_MIN {
            let mut owned = bucket.to_vec();
            radix_sort(&mut owned);
            bucket.copy_from_slice(&owned);
        } else {
            bucket.sort_unstable();
        }
    });
    *keys = buffer;
}

/// LSD radix sort with eight-bit digits.
fn radix_sort(keys: &mut Vec<u64>) {
    let mut counts = [[0usize; 256]; 8];
    for &key in keys.iter() {
        for (digit, count) in counts.iter_mut().enumerate() {
            count[((key >> (8 * digit)) & 0xff) as usize] += 1;
        }
    }
    let mut buffer = vec![0u64; keys.len()];
    for (digit, count) in counts.iter().enumerate() {
        if count.contains(&keys.len()) {
            continue; // every key has the same byte here
        }
        let mut offsets = [0usize; 256];
        let mut sum = 0;
        for (offset, &c) in offsets.iter_mut().zip(count) {
            *offset = sum;
            sum += c;
        }
        scatter_digit(keys, &mut buffer, 8 * digit as u32, 0xff, &mut offsets);
        std::mem::swap(keys, &mut buffer);
    }
}

/// Moves `from` into `to` stably by the digit `key >> shift & mask`, each digit's keys from
/// `offsets[digit]` on (the digit counts' exclusive prefix sums, advanced as keys land).
#[inline]
fn scatter_digit(from: &[u64], to: &mut [u64], shift: u32, mask: u64, offsets: &mut [usize]) {
    for &key in from {
        let digit = (key >> shift & mask) as usize;
        to[offsets[digit]] = key;
        offsets[digit] += 1;
    }
}

/// Widest digit of [`sort_key_bits`]: 2^11 counters (16 KiB) stay in the first-level cache.
const MAX_DIGIT_BITS: u32 = 11;

/// Sorts `keys` by their bits `low..high`, stably, where every higher bit is zero and the
/// keys are already in order of their bits below `low` (or `low` is 0): the result is
/// sorted.
///
/// On one thread a least-significant-digit radix sort over just those bits, in as few
/// passes of at most 11 bits as they need, through `spare` (resized to the keys' length,
/// so a caller can lend a buffer whose pages are already mapped; the sorted keys may end up
/// in either vector, swapped into `keys`). Keys that arrive in order of their low half
/// need passes over the high half only: the distributed graph builder orders arcs sorted
/// by target by their 20-bit source in two passes, where a sort of the whole key took five.
/// On several threads, or below 2^12 keys, [`sort_keys`].
///
/// ```
/// // In order of the low 4 bits; sorted by bits 4..12.
/// let mut keys = vec![0x31u64, 0x12, 0x23, 0x14];
/// let mut spare = Vec::new();
/// packgraph::pma::sort_key_bits(&mut keys, &mut spare, 4, 12);
/// assert_eq!(keys, [0x12, 0x14, 0x23, 0x31]);
/// ```
pub fn sort_key_bits(keys: &mut Vec<u64>, spare: &mut Vec<u64>, low: u32, high: u32) {
    if rayon::current_num_threads() > 1 || keys.len() < 1 << 12 || high <= low {
        sort_keys(keys);
        return;
    }
    spare.resize(keys.len(), 0);
    let passes = (high - low).div_ceil(MAX_DIGIT_BITS);
    let width = (high - low).div_ceil(passes);
    let mask = (1u64 << width) - 1;
    let mut offsets = vec![0usize; 1 << width];
    for pass in 0..passes {
        let shift = low + pass * width;
        offsets.iter_mut().for_each(|o| *o = 0);
        for &key in keys.iter() {
            offsets[(key >> shift & mask) as usize] += 1;
        }
        let mut sum = 0;
        for offset in offsets.iter_mut() {
            let count = *offset;
            *offset = sum;
            sum += count;
        }
        scatter_digit(keys, spare, shift, mask, &mut offsets);
        std::mem::swap(keys, spare);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// On one thread (its radix path) and on two, `sort_key_bits` sorts keys that are in
        /// order of their low bits by the bits above, as `sort_unstable` sorts them.
        #[test]
        fn sorting_by_a_bit_range_matches_sort_unstable(
            seed in any::<u64>(),
            len in 0usize..20_000,
            low in 0u32..20,
            span in 1u32..30,
        ) {
            let mut state = seed | 1;
            let high = low + span;
            let mut keys: Vec<u64> = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state & ((1u64 << high) - 1)
                })
                .collect();
            keys.sort_by_key(|k| k & ((1u64 << low) - 1));
            let mut expected = keys.clone();
            expected.sort_unstable();
            for threads in [1, 2] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                let mut sorted = keys.clone();
                let mut spare = Vec::new();
                pool.install(|| sort_key_bits(&mut sorted, &mut spare, low, high));
                prop_assert_eq!(&sorted, &expected, "{} threads", threads);
            }
        }
    }

    #[test]
    fn radix_sorts_wide_and_narrow_keys() {
        let mut state = 7u64;
        let mut keys: Vec<u64> = (0..100_000)
            .map(|i| {
                state = state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1);
                if i % 3 == 0 {
                    state
                } else {
                    state >> 24
                }
            })
            .collect();
        let mut expected = keys.clone();
        expected.sort_unstable();
        sort_keys(&mut keys);
        assert_eq!(keys, expected);
        let mut wide: Vec<u64> = (0..(PARALLEL_RADIX_MIN as u64 + 77))
            .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (i % 40))
            .collect();
        let mut expected = wide.clone();
        expected.sort_unstable();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        pool.install(|| sort_keys(&mut wide));
        assert_eq!(wide, expected);
        let mut narrow: Vec<u64> = (0..PARALLEL_RADIX_MIN as u64)
            .map(|i| i % 5 + 100)
            .collect();
        let mut expected = narrow.clone();
        expected.sort_unstable();
        pool.install(|| sort_keys(&mut narrow));
        assert_eq!(narrow, expected);
        let mut same = vec![42u64; RADIX_MIN];
        sort_keys(&mut same);
        assert!(same.iter().all(|&k| k == 42));
    }

    proptest! {
        #[test]
        fn radix_matches_std_sort(mut keys in proptest::collection::vec(any::<u64>(), 0..2_000), shift in 0u32..64) {
            for key in &mut keys {
                *key >>= shift;
            }
            let mut expected = keys.clone();
            expected.sort_unstable();
            radix_sort(&mut keys);
            prop_assert_eq!(keys, expected);
        }
    }
}
