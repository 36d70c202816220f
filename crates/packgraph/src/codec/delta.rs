//! Delta-coded runs: a strictly increasing sequence stored as byte-coded differences.
//!
//! A run is encoded relative to a `base` (the value before its first element; a CPMA leaf
//! uses its uncompressed head). Element `i` is stored as `keys[i] - keys[i-1]` (with
//! `keys[-1] = base`), which is at least 1, so a run's bytes hold no zero byte.
//!
//! [`encode_run`] / [`decode_run`] are checked and work on untrusted input; [`DeltaIter`]
//! decodes while scanning and [`find_in_run`] locates the first element at or above a
//! target without materialising the run.

use super::varint::{self, decode_padded, encoded_len};
use super::CodecError;

/// Bytes the run would take when encoded after `base` (no checks).
pub fn run_len(base: u64, keys: &[u64]) -> usize {
    let mut prev = base;
    let mut total = 0;
    for &key in keys {
        total += encoded_len(key.wrapping_sub(prev));
        prev = key;
    }
    total
}

/// Encodes `keys`, which must be strictly increasing and above `base`, into `out`; returns
/// the number of bytes written.
///
/// # Errors
/// [`CodecError::NotIncreasing`] for an element not above its predecessor (or `base`),
/// [`CodecError::BufferTooSmall`] if `out` cannot hold the run; nothing past the error is
/// written.
pub fn encode_run(base: u64, keys: &[u64], out: &mut [u8]) -> Result<usize, CodecError> {
    let mut prev = base;
    let mut pos = 0;
    for (index, &key) in keys.iter().enumerate() {
        if key <= prev {
            return Err(CodecError::NotIncreasing { index, offset: pos });
        }
        let available = out.len();
        let written = varint::encode(key - prev, &mut out[pos.min(available)..]);
        pos += written.map_err(|_| CodecError::BufferTooSmall {
            needed: pos + run_len(prev, &keys[index..]),
            available,
        })?;
        prev = key;
    }
    Ok(pos)
}

/// Writes a run known to be strictly increasing into `out` (long enough); returns its length.
#[inline]
pub(crate) fn write_run(base: u64, keys: &[u64], out: &mut [u8]) -> usize {
    let mut prev = base;
    let mut pos = 0;
    for &key in keys {
        debug_assert!(key > prev, "run must be strictly increasing");
        pos += varint::write_code_at(key - prev, out, pos);
        prev = key;
    }
    pos
}

/// Like `write_run`, but stops and returns `None` as soon as the run does not fit in `out`
/// (leaving `out` partly written).
#[inline]
pub(crate) fn write_run_bounded(base: u64, keys: &[u64], out: &mut [u8]) -> Option<usize> {
    let mut prev = base;
    let mut pos = 0;
    for &key in keys {
        let delta = key - prev;
        if pos + encoded_len(delta) > out.len() {
            return None;
        }
        pos += varint::write_code_at(delta, out, pos);
        prev = key;
    }
    Some(pos)
}

/// Decodes a run of `bytes` encoded after `base`, appending its elements to `out`.
///
/// # Errors
/// [`CodecError::Truncated`] or [`CodecError::Overflow`] for a malformed code,
/// [`CodecError::NotIncreasing`] for a zero delta or a sum past `u64::MAX`. On error `out`
/// keeps the elements decoded before the bad one.
pub fn decode_run(bytes: &[u8], base: u64, out: &mut Vec<u64>) -> Result<(), CodecError> {
    let mut prev = base;
    let mut pos = 0;
    let mut index = 0;
    while pos < bytes.len() {
        let (delta, len) = decode_padded(bytes, pos)?;
        let key = match prev.checked_add(delta) {
            Some(key) if delta > 0 => key,
            _ => return Err(CodecError::NotIncreasing { index, offset: pos }),
        };
        out.push(key);
        prev = key;
        pos += len;
        index += 1;
    }
    Ok(())
}

/// Decode-while-scanning iterator over a run.
///
/// `bytes` may extend past the run; only the first `end` bytes are decoded. Yields what
/// [`for_each_in_run`] visits: a truncated or over-long code ends the iteration.
#[derive(Debug, Clone)]
pub struct DeltaIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    end: usize,
    prev: u64,
}

impl<'a> DeltaIter<'a> {
    /// Iterates the run in `bytes[..end]` encoded after `base`.
    pub fn new(bytes: &'a [u8], end: usize, base: u64) -> Self {
        Self {
            bytes,
            pos: 0,
            end: end.min(bytes.len()),
            prev: base,
        }
    }

    /// Byte offset of the next code.
    pub fn offset(&self) -> usize {
        self.pos
    }
}

impl Iterator for DeltaIter<'_> {
    type Item = u64;

    #[inline]
    fn next(&mut self) -> Option<u64> {
        if self.pos >= self.end {
            return None;
        }
        match scan_code(&self.bytes[..self.end], self.pos) {
            Some((delta, next)) => {
                self.prev = self.prev.wrapping_add(delta);
                self.pos = next;
                Some(self.prev)
            }
            None => {
                self.pos = self.end;
                None
            }
        }
    }
}

/// Where a target falls in a run: see [`find_in_run`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunPosition {
    /// Number of elements below the target.
    pub index: usize,
    /// Byte offset of the first element at or above the target (the run's length if none).
    pub offset: usize,
    /// The element before that one (`base` when `index == 0`).
    pub prev: u64,
    /// The first element at or above the target, if any.
    pub found: Option<u64>,
}

/// Finds the first element `>= target` in the run `bytes[..end]` encoded after `base`,
/// decoding only up to it.
pub fn find_in_run(bytes: &[u8], end: usize, base: u64, target: u64) -> RunPosition {
    let (mut index, mut offset, mut prev, mut found) = (0, 0, base, None);
    for_each_in_run(bytes, end, base, |key| {
        if key >= target {
            found = Some(key);
            return false;
        }
        offset += encoded_len(key - prev);
        prev = key;
        index += 1;
        true
    });
    RunPosition {
        index,
        offset,
        prev,
        found,
    }
}

/// Calls `f` on each element of the run `bytes[..end]` encoded after `base`, in order, until
/// it returns `false`; returns whether every element was visited. A malformed code ends the
/// scan as if the run ended there.
///
/// The scanning kernel. A byte-at-a-time loop: on sorted runs the continue-bit branch follows
/// a regular pattern that the branch predictor learns, and `codec/scan_run` measured it
/// faster than decoding whole words with shifts and masks (which `decode_padded` does for
/// single values).
#[inline]
pub fn for_each_in_run(
    bytes: &[u8],
    end: usize,
    base: u64,
    mut f: impl FnMut(u64) -> bool,
) -> bool {
    let bytes = &bytes[..end.min(bytes.len())];
    let (mut pos, mut key) = (0, base);
    while let Some((delta, next)) = scan_code(bytes, pos) {
        key = key.wrapping_add(delta);
        pos = next;
        if !f(key) {
            return false;
        }
    }
    true
}

/// The code at `pos`, byte by byte: its value and the offset after it; `None` at the end of
/// `bytes` or for a truncated or over-long code (bits past 64 are dropped, never a panic).
///
/// Codes of up to three bytes (deltas below 2^21, the common case) take an unrolled path
/// with constant shifts.
#[inline(always)]
pub(crate) fn scan_code(bytes: &[u8], pos: usize) -> Option<(u64, usize)> {
    let b0 = u64::from(*bytes.get(pos)?);
    if b0 < 0x80 {
        return Some((b0, pos + 1));
    }
    let b1 = u64::from(*bytes.get(pos + 1)?);
    if b1 < 0x80 {
        return Some(((b0 & 0x7f) | (b1 << 7), pos + 2));
    }
    let b2 = u64::from(*bytes.get(pos + 2)?);
    let low = (b0 & 0x7f) | ((b1 & 0x7f) << 7);
    if b2 < 0x80 {
        return Some((low | (b2 << 14), pos + 3));
    }
    scan_long_code(bytes, pos + 3, low | ((b2 & 0x7f) << 14))
}

/// Where a count-bounded scan stopped (see [`for_count_words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CountScan {
    /// Offset after the last code decoded.
    pub(crate) pos: usize,
    /// The last key produced (the base if none).
    pub(crate) key: u64,
    /// Codes decoded.
    pub(crate) decoded: usize,
    /// Whether `f` returned `false`.
    pub(crate) stopped: bool,
}

/// The value of a code of `len` (1 to 8) bytes held in the low bytes of `code` (bytes past
/// the code already cleared): the 7-bit groups packed together without branches.
#[inline(always)]
fn pack_groups(code: u64) -> u64 {
    (code & 0x7f)
        | ((code >> 1) & 0x3f80)
        | ((code >> 2) & 0x1f_c000)
        | ((code >> 3) & 0x0fe0_0000)
        | ((code >> 4) & 0x07_f000_0000)
        | ((code >> 5) & 0x03f8_0000_0000)
        | ((code >> 6) & 0x01_fc00_0000_0000)
        | ((code >> 7) & 0xfe_0000_0000_0000)
}

/// [`pack_groups`] for codes of at most four bytes.
#[inline(always)]
fn pack_short(code: u32) -> u64 {
    u64::from(
        (code & 0x7f)
            | ((code >> 1) & 0x3f80)
            | ((code >> 2) & 0x1f_c000)
            | ((code >> 3) & 0x0fe0_0000),
    )
}

/// Decodes up to `count` codes from `pos`, all ending at or before `end`, adding each to a
/// running key that starts at `key` and calling `f` on it until `f` returns `false`.
///
/// Reads `bytes` eight at a time: the code ends are the clear high bits of the word, found
/// with `trailing_zeros`, so consecutive codes are located without waiting for the previous
/// one's value and without a branch on its length — the serial dependence a byte-at-a-time
/// decoder has (one load per code) and the mispredicted length branches are both gone.
/// `bytes` may extend past `end`; codes longer than eight bytes and the last few bytes of
/// `bytes` take the byte loop.
#[inline(always)]
pub(crate) fn for_count_words(
    bytes: &[u8],
    mut pos: usize,
    end: usize,
    count: usize,
    mut key: u64,
    f: &mut impl FnMut(u64) -> bool,
) -> CountScan {
    let end = end.min(bytes.len());
    let mut decoded = 0;
    while decoded < count && pos < end {
        let word = match bytes.get(pos..pos + 8) {
            Some(w) => u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]),
            None => 0,
        };
        let mut stops = !word & 0x8080_8080_8080_8080;
        if bytes.len() < pos + 8 || stops == 0 {
            // Near the end of the buffer, or a code longer than eight bytes.
            let Some((delta, next)) = scan_code(&bytes[..end], pos) else {
                break;
            };
            key = key.wrapping_add(delta);
            pos = next;
            decoded += 1;
            if !f(key) {
                return CountScan {
                    pos,
                    key,
                    decoded,
                    stopped: true,
                };
            }
            continue;
        }
        // Keep only the code ends inside `end` and within the count, so the loop below
        // checks neither per code (both cuts are rare: the end of a leaf or of a run).
        let available = end - pos;
        if available < 8 {
            stops &= (1u64 << (available * 8)) - 1;
        }
        let wanted = count - decoded;
        if wanted < 8 {
            // A word holds at most eight code ends.
            stops = lowest_bits(stops, wanted);
        }
        if stops == 0 {
            break;
        }
        let mut start = 0;
        while stops != 0 {
            let stop = stops.trailing_zeros() + 1;
            let width = stop - start;
            let code = (word >> start) & (u64::MAX >> (64 - width));
            // Most gaps in a neighbour run take one or two bytes.
            let value = if width <= 16 {
                (code & 0x7f) | ((code >> 1) & 0x3f80)
            } else if width <= 32 {
                pack_short(code as u32)
            } else {
                pack_groups(code)
            };
            key = key.wrapping_add(value);
            start = stop;
            stops &= stops - 1;
            decoded += 1;
            if !f(key) {
                return CountScan {
                    pos: pos + (start / 8) as usize,
                    key,
                    decoded,
                    stopped: true,
                };
            }
        }
        pos += (start / 8) as usize;
    }
    CountScan {
        pos,
        key,
        decoded,
        stopped: false,
    }
}

/// The lowest `count` set bits of `bits`.
#[inline]
fn lowest_bits(mut bits: u64, count: usize) -> u64 {
    let mut kept = 0;
    for _ in 0..count {
        kept |= bits & bits.wrapping_neg();
        bits &= bits.wrapping_sub(1);
    }
    kept
}

/// The rest of a code longer than three bytes, from `pos`, with the first 21 bits in `value`.
#[inline(never)]
fn scan_long_code(bytes: &[u8], mut pos: usize, mut value: u64) -> Option<(u64, usize)> {
    let mut shift = 21;
    loop {
        let byte = *bytes.get(pos)?;
        value |= u64::from(byte & 0x7f) << shift;
        pos += 1;
        if byte & 0x80 == 0 {
            return Some((value, pos));
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn run_from(set: &BTreeSet<u64>) -> (u64, Vec<u64>) {
        let mut keys: Vec<u64> = set.iter().copied().collect();
        if keys.is_empty() {
            return (0, keys);
        }
        let base = keys.remove(0);
        (base, keys)
    }

    /// Codes of every length (1 to 10 bytes) in a buffer followed by `tail` junk bytes.
    fn mixed_codes(values: &[u64], tail: &[u8]) -> (Vec<u8>, usize) {
        let mut buf = vec![0u8; values.len() * 10];
        let mut end = 0;
        for &value in values {
            end += crate::codec::varint::encode(value, &mut buf[end..]).unwrap();
        }
        buf.truncate(end);
        buf.extend_from_slice(tail);
        (buf, end)
    }

    /// The byte-loop reference for [`for_count_words`].
    fn count_by_bytes(bytes: &[u8], end: usize, count: usize, stop_at: usize) -> CountScan {
        let (mut pos, mut key, mut decoded) = (0, 7u64, 0);
        while decoded < count {
            let Some((delta, next)) = scan_code(&bytes[..end], pos) else {
                break;
            };
            (key, pos, decoded) = (key.wrapping_add(delta), next, decoded + 1);
            if decoded == stop_at {
                return CountScan {
                    pos,
                    key,
                    decoded,
                    stopped: true,
                };
            }
        }
        CountScan {
            pos,
            key,
            decoded,
            stopped: false,
        }
    }

    fn any_code_value() -> impl Strategy<Value = u64> {
        (0u32..64, any::<u64>()).prop_map(|(bits, x)| x >> bits)
    }

    proptest! {
        #[test]
        fn word_scan_matches_byte_scan(
            values in proptest::collection::vec(any_code_value(), 0..60),
            tail in proptest::collection::vec(any::<u8>(), 0..12),
            count in 0usize..70,
            stop_at in 0usize..70,
        ) {
            let (buf, end) = mixed_codes(&values, &tail);
            let expected = count_by_bytes(&buf, end, count, stop_at);
            let mut seen = Vec::new();
            let got = for_count_words(&buf, 0, end, count, 7, &mut |key| {
                seen.push(key);
                seen.len() != stop_at
            });
            prop_assert_eq!(got, expected);
            prop_assert_eq!(seen.len(), expected.decoded);
        }
    }

    #[test]
    fn extreme_deltas_round_trip() {
        let keys = [1, 2, 1 << 40, (1 << 63) + 5, u64::MAX];
        let mut buf = vec![0u8; 64];
        let len = encode_run(0, &keys, &mut buf).unwrap();
        assert_eq!(len, run_len(0, &keys));
        let mut out = Vec::new();
        decode_run(&buf[..len], 0, &mut out).unwrap();
        assert_eq!(out, keys);
        assert!(DeltaIter::new(&buf, len, 0).eq(keys.iter().copied()));
        // The maximal delta: 0 then u64::MAX.
        let len = encode_run(0, &[u64::MAX], &mut buf).unwrap();
        assert_eq!(len, 10);
        out.clear();
        decode_run(&buf[..len], 0, &mut out).unwrap();
        assert_eq!(out, [u64::MAX]);
    }

    #[test]
    fn unsorted_input_and_small_buffers_are_rejected() {
        let mut buf = [0u8; 4];
        assert_eq!(
            encode_run(5, &[6, 6], &mut buf),
            Err(CodecError::NotIncreasing {
                index: 1,
                offset: 1
            })
        );
        assert_eq!(
            encode_run(5, &[5], &mut buf),
            Err(CodecError::NotIncreasing {
                index: 0,
                offset: 0
            })
        );
        assert!(matches!(
            encode_run(0, &[1, 1 << 30], &mut buf),
            Err(CodecError::BufferTooSmall {
                needed: 6,
                available: 4
            })
        ));
    }

    #[test]
    fn zero_delta_and_overflowing_sum_are_corrupt() {
        let mut out = Vec::new();
        assert_eq!(
            decode_run(&[1, 0], 0, &mut out),
            Err(CodecError::NotIncreasing {
                index: 1,
                offset: 1
            })
        );
        out.clear();
        assert!(decode_run(&[2], u64::MAX - 1, &mut out).is_err());
        assert!(decode_run(&[0x80], 0, &mut out).is_err());
    }

    #[test]
    fn find_reports_position_and_predecessor() {
        let keys = [10, 20, 300, 4000];
        let mut buf = vec![0u8; 32];
        let len = encode_run(5, &keys, &mut buf).unwrap();
        let at = find_in_run(&buf, len, 5, 300);
        assert_eq!((at.index, at.prev, at.found), (2, 20, Some(300)));
        assert_eq!(at.offset, 2);
        let past = find_in_run(&buf, len, 5, 5000);
        assert_eq!((past.index, past.offset, past.found), (4, len, None));
        assert_eq!(find_in_run(&buf, len, 5, 0).found, Some(10));
    }

    proptest! {
        #[test]
        fn runs_round_trip(set in proptest::collection::btree_set(any::<u64>(), 0..200), pad in 0usize..12) {
            let (base, keys) = run_from(&set);
            let mut buf = vec![0u8; run_len(base, &keys) + pad];
            let len = encode_run(base, &keys, &mut buf).unwrap();
            let mut out = Vec::new();
            decode_run(&buf[..len], base, &mut out).unwrap();
            prop_assert_eq!(&out, &keys);
            prop_assert!(DeltaIter::new(&buf, len, base).eq(keys.iter().copied()));
            let mut scanned = Vec::new();
            let complete = for_each_in_run(&buf, len, base, |k| {
                scanned.push(k);
                true
            });
            prop_assert!(complete);
            prop_assert_eq!(&scanned, &keys);
            let mut fast = vec![0u8; len + 8];
            prop_assert_eq!(write_run(base, &keys, &mut fast), len);
            prop_assert_eq!(&fast[..len], &buf[..len]);
        }

        #[test]
        fn find_matches_linear_search(set in proptest::collection::btree_set(0u64..10_000, 1..100), target in 0u64..11_000) {
            let (base, keys) = run_from(&set);
            let mut buf = vec![0u8; run_len(base, &keys) + 8];
            let len = encode_run(base, &keys, &mut buf).unwrap();
            let at = find_in_run(&buf, len, base, target);
            let index = keys.partition_point(|&k| k < target);
            prop_assert_eq!(at.index, index);
            prop_assert_eq!(at.found, keys.get(index).copied());
            prop_assert_eq!(at.prev, if index == 0 { base } else { keys[index - 1] });
            prop_assert_eq!(at.offset, run_len(base, &keys[..index]));
        }

        #[test]
        fn decoding_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64), base in any::<u64>()) {
            let mut out = Vec::new();
            let _ = decode_run(&bytes, base, &mut out);
            let iterated: Vec<u64> = DeltaIter::new(&bytes, bytes.len(), base).collect();
            let mut scanned = Vec::new();
            for_each_in_run(&bytes, bytes.len(), base, |k| { scanned.push(k); true });
            prop_assert_eq!(scanned, iterated);
        }
    }
}
