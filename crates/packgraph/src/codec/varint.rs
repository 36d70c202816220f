//! Byte codes for single `u64` values.
//!
//! A value is cut into seven-bit groups, lowest first; each group takes one byte whose high
//! bit (the continue bit) is set when another byte of the same value follows. Values below
//! 2^7 take one byte, below 2^14 two, …, and `u64::MAX` takes [`MAX_VARINT_BYTES`].
//! Minimal codes never end in a zero byte unless the value is 0.

use super::CodecError;

/// The longest code: ⌈64 / 7⌉ bytes.
pub const MAX_VARINT_BYTES: usize = 10;

const CONTINUE_BITS: u64 = 0x8080_8080_8080_8080;

/// Number of bytes the code of `value` takes (1 to 10).
#[inline]
pub fn encoded_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros() as usize;
    // ⌈bits / 7⌉ for bits in 1..=64 without a division (checked for every bit count).
    ((bits + 6) * 37) >> 8
}

/// Writes the code of `value` at the start of `out` and returns its length.
///
/// # Errors
/// [`CodecError::BufferTooSmall`] if `out` is shorter than [`encoded_len`]`(value)`.
#[inline]
pub fn encode(value: u64, out: &mut [u8]) -> Result<usize, CodecError> {
    let needed = encoded_len(value);
    let Some(dst) = out.get_mut(..needed) else {
        return Err(CodecError::BufferTooSmall {
            needed,
            available: out.len(),
        });
    };
    write_code(value, dst);
    Ok(needed)
}

/// Writes the code of `value` into `dst`, whose length must be `encoded_len(value)`.
#[inline]
pub(crate) fn write_code(mut value: u64, dst: &mut [u8]) {
    let last = dst.len() - 1;
    for byte in &mut dst[..last] {
        *byte = (value as u8) | 0x80;
        value >>= 7;
    }
    dst[last] = value as u8;
}

/// Spreads the low 56 bits of `value` into eight 7-bit groups, one per byte (the inverse of
/// `compress_groups`), without continue bits.
#[inline(always)]
fn spread_groups(value: u64) -> u64 {
    let x = (value & 0x0fff_ffff) | ((value & 0x00ff_ffff_f000_0000) << 4);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x0fff_c000_0fff_c000) << 2);
    (x & 0x007f_007f_007f_007f) | ((x & 0x3f80_3f80_3f80_3f80) << 1)
}

/// Writes the code of `value` at `out[pos..]` and returns its length. Where eight bytes
/// fit, codes of up to eight bytes are built in a register and stored at once (the bytes
/// past the code are scratch for the next one); otherwise byte by byte.
///
/// # Panics
/// If `out[pos..]` is shorter than the code (callers size their buffers first).
#[inline(always)]
pub(crate) fn write_code_at(value: u64, out: &mut [u8], pos: usize) -> usize {
    let len = encoded_len(value);
    if len <= 8 {
        if let Some(dst) = out.get_mut(pos..pos + 8) {
            let continues = CONTINUE_BITS & ((1u64 << (8 * (len - 1))) - 1);
            dst.copy_from_slice(&(spread_groups(value) | continues).to_le_bytes());
            return len;
        }
    }
    write_code(value, &mut out[pos..pos + len]);
    len
}

/// Appends the code of `value` to `out`.
#[inline]
pub fn encode_to_vec(value: u64, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + encoded_len(value), 0);
    write_code(value, &mut out[start..]);
}

/// Decodes the code starting at `bytes[offset]`, returning the value and the code's length.
///
/// # Errors
/// [`CodecError::Truncated`] if the buffer ends inside the code, [`CodecError::Overflow`] if
/// the code is longer than ten bytes or carries bits beyond 64.
#[inline]
pub fn decode(bytes: &[u8], offset: usize) -> Result<(u64, usize), CodecError> {
    let mut value = 0u64;
    for i in 0..MAX_VARINT_BYTES {
        let Some(&byte) = bytes.get(offset + i) else {
            return Err(CodecError::Truncated {
                offset,
                len: bytes.len(),
            });
        };
        let group = u64::from(byte & 0x7f);
        if i == MAX_VARINT_BYTES - 1 && (byte > 1) {
            return Err(CodecError::Overflow { offset });
        }
        value |= group << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    Err(CodecError::Overflow { offset })
}

/// Squeezes the seven-bit groups of up to eight little-endian code bytes into one value.
#[inline(always)]
fn compress_groups(word: u64) -> u64 {
    let x = word & !CONTINUE_BITS;
    let x = (x & 0x007f_007f_007f_007f) | ((x & 0x7f00_7f00_7f00_7f00) >> 1);
    let x = (x & 0x0000_3fff_0000_3fff) | ((x & 0x3fff_0000_3fff_0000) >> 2);
    (x & 0x0000_0000_0fff_ffff) | ((x & 0x0fff_ffff_0000_0000) >> 4)
}

/// Fast decoder: like [`decode`], but when eight bytes are readable at `offset` it decodes
/// codes of up to eight bytes without a loop (the end is found from the continue bits, the
/// groups are squeezed together with shifts and masks).
///
/// Longer codes and codes near the end of `bytes` take the checked path. Invalid input yields
/// an error, exactly as [`decode`] would.
///
/// # Errors
/// As [`decode`].
#[inline(always)]
pub fn decode_padded(bytes: &[u8], offset: usize) -> Result<(u64, usize), CodecError> {
    if let Some(word) = read_word(bytes, offset) {
        let stops = !word & CONTINUE_BITS;
        if stops != 0 {
            let len = (stops.trailing_zeros() as usize >> 3) + 1;
            let keep = u64::MAX >> (64 - 8 * len);
            return Ok((compress_groups(word & keep), len));
        }
    }
    decode(bytes, offset)
}

/// Eight little-endian bytes at `offset`, if that many are there.
#[inline(always)]
pub(crate) fn read_word(bytes: &[u8], offset: usize) -> Option<u64> {
    let chunk: [u8; 8] = bytes.get(offset..offset + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const EDGES: [u64; 12] = [
        0,
        1,
        127,
        128,
        16_383,
        16_384,
        (1 << 56) - 1,
        1 << 56,
        (1 << 63) - 1,
        1 << 63,
        u64::MAX - 1,
        u64::MAX,
    ];

    #[test]
    fn encoded_len_formula_is_exact_for_every_bit_count() {
        for bits in 1..=64u32 {
            let value = if bits == 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            assert_eq!(encoded_len(value), bits.div_ceil(7) as usize, "bits {bits}");
            assert_eq!(encoded_len(1u64 << (bits - 1)), bits.div_ceil(7) as usize);
        }
    }

    #[test]
    fn encoded_len_matches_group_count() {
        assert_eq!(encoded_len(0), 1);
        assert_eq!(encoded_len(127), 1);
        assert_eq!(encoded_len(128), 2);
        assert_eq!(encoded_len((1 << 56) - 1), 8);
        assert_eq!(encoded_len(1 << 56), 9);
        assert_eq!(encoded_len(u64::MAX), MAX_VARINT_BYTES);
    }

    #[test]
    fn edge_values_round_trip_through_both_decoders() {
        for value in EDGES {
            let mut buf = vec![0u8; 24];
            let len = encode(value, &mut buf).unwrap();
            assert_eq!(decode(&buf, 0).unwrap(), (value, len), "value {value}");
            assert_eq!(
                decode_padded(&buf, 0).unwrap(),
                (value, len),
                "value {value}"
            );
            // Near the end of a buffer the fast path must fall back, not misread.
            assert_eq!(decode_padded(&buf[..len], 0).unwrap(), (value, len));
        }
    }

    #[test]
    fn truncated_and_overlong_codes_are_errors() {
        assert_eq!(
            decode(&[], 0),
            Err(CodecError::Truncated { offset: 0, len: 0 })
        );
        assert_eq!(
            decode(&[0x80, 0x80], 0),
            Err(CodecError::Truncated { offset: 0, len: 2 })
        );
        let overlong = [0xffu8; 11];
        assert_eq!(
            decode(&overlong, 0),
            Err(CodecError::Overflow { offset: 0 })
        );
        assert_eq!(
            decode_padded(&overlong, 0),
            Err(CodecError::Overflow { offset: 0 })
        );
        let mut too_big = [0xffu8; 10];
        too_big[9] = 0x02; // bit 64
        assert_eq!(decode(&too_big, 0), Err(CodecError::Overflow { offset: 0 }));
    }

    #[test]
    fn encode_reports_short_buffer() {
        let mut buf = [0u8; 2];
        assert_eq!(
            encode(1 << 20, &mut buf),
            Err(CodecError::BufferTooSmall {
                needed: 3,
                available: 2
            })
        );
    }

    proptest! {
        #[test]
        fn register_and_byte_writers_agree(value in any::<u64>(), shift in 0u32..64, room in 0usize..12) {
            let value = value >> shift;
            let len = encoded_len(value);
            let mut slow = vec![0u8; len];
            write_code(value, &mut slow);
            let mut fast = vec![0xaau8; len + room];
            prop_assert_eq!(write_code_at(value, &mut fast, 0), len);
            prop_assert_eq!(&fast[..len], &slow[..]);
        }

        #[test]
        fn any_value_round_trips(value in any::<u64>(), shift in 0u32..64, pad in 0usize..10) {
            let value = value >> shift;
            let mut buf = Vec::new();
            encode_to_vec(value, &mut buf);
            prop_assert_eq!(buf.len(), encoded_len(value));
            buf.resize(buf.len() + pad, 0xff);
            prop_assert_eq!(decode(&buf, 0).unwrap(), (value, encoded_len(value)));
            prop_assert_eq!(decode_padded(&buf, 0).unwrap(), (value, encoded_len(value)));
        }

        #[test]
        fn fast_and_checked_decoders_agree_on_any_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..24), offset in 0usize..24) {
            let offset = offset.min(bytes.len());
            prop_assert_eq!(decode_padded(&bytes, offset), decode(&bytes, offset));
        }
    }
}
