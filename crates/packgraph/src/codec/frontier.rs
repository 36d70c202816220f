//! Frontier messages: a strictly increasing list of vertex ids (`u32` or `u64`) as the bytes
//! one process sends another in a distributed breadth-first search.
//!
//! Sorted frontier ids have small gaps, so a list is stored in the smaller of two compressed
//! forms, or raw:
//! * its first id and the gaps minus one, bit-packed in blocks of [`BLOCK_LEN`] with one bit
//!   width per block (binary packing of differences, the scheme of S4-BP128-D1 in Lemire and
//!   Boytsov, "Decoding billions of integers per second through vectorization", 2015, written
//!   here as scalar code);
//! * its first id and the rest as an Elias–Fano sequence (Elias 1974, Fano 1971): each value
//!   split into `l` low bits, stored packed, and a high part, stored in unary in a bitmap.
//!   It takes at most `2 + ⌈log2(u / n)⌉` bits per id for `n` ids spread over `u`, within
//!   about half a bit of the entropy of a random subset, where bit-packing pays for each
//!   block's largest gap.
//!
//! Lists shorter than [`RAW_THRESHOLD`], and lists whose compressed forms would not be
//! smaller, go raw.
//!
//! Wire format, version [`FRONTIER_FORMAT_VERSION`] (byte diagram in
//! `docs/formats/frontier.md`; version 1, without Elias–Fano, is still read):
//!
//! ```text
//! byte 0      version (2)
//! byte 1      flags: bit 0 = ids are 64-bit, bit 1 = packed, bit 2 = Elias–Fano (not with
//!             bit 1); other bits zero
//! varint      count of ids
//! raw:        count ids, little-endian, 4 or 8 bytes each
//! packed:     varint first id, then ⌈(count-1)/128⌉ blocks of the gaps id[i]-id[i-1]-1:
//!             1 byte bit width b (0..=32 or 0..=64), then ⌈len·b/8⌉ bytes of `len` values,
//!             least significant bit first (len = 128 but in the last block)
//! Elias–Fano: varint first id, 1 byte l (low bits, 0..=63), varint top; with m = count-1
//!             and y[i] = id[i+1]-id[0]-1 (strictly increasing), ⌈m·l/8⌉ bytes of the low
//!             l bits of each y[i] packed as above, then ⌈(m+top+1)/8⌉ bytes of a bitmap
//!             (least significant bit first) with bit (y[i] >> l) + i set for each i, no
//!             other bit set, and top = y[m-1] >> l
//! ```
//!
//! [`decode`] takes untrusted bytes: it checks the version, flags, bit widths, lengths and
//! that every id fits its type, and returns [`FrontierError`]; it never panics and never
//! allocates more than the bytes can describe. Left out: SIMD packing (the scalar loops keep
//! up with shared-memory transfers at the sizes a frontier reaches) and patched exceptions.

use super::varint;
use super::CodecError;

/// The version byte this module writes and reads.
pub const FRONTIER_FORMAT_VERSION: u8 = 2;

/// Gaps per bit-packed block.
pub const BLOCK_LEN: usize = 128;

/// Lists with fewer ids go raw: packing them saves too little to pay for the call (the
/// threshold of the compressed-frontier Graph500 code).
pub const RAW_THRESHOLD: usize = 64;

const FLAG_WIDE: u8 = 1;
const FLAG_PACKED: u8 = 2;
const FLAG_ELIAS_FANO: u8 = 4;
const HEADER_BYTES: usize = 2;

/// How [`encode`] may store a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Always raw ids (no codec work beyond a copy).
    Raw,
    /// The smaller of bit-packed gaps and Elias–Fano when the list has at least
    /// [`RAW_THRESHOLD`] ids and that is smaller than raw, raw otherwise.
    Packed,
}

/// A frontier message that does not decode, or a list that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// The version byte is not one this build reads.
    #[error(
        "frontier message version {found} is not readable (supported 1 to {FRONTIER_FORMAT_VERSION})"
    )]
    Version {
        /// The version byte found.
        found: u8,
    },
    /// Unknown flag bits, or ids of another width than the caller asked for.
    #[error("frontier message flags {found:#04x} are invalid: {reason}")]
    Flags {
        /// The flag byte found.
        found: u8,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The message ends before what its header announces.
    #[error("frontier message is truncated at byte {offset} (it has {len} bytes)")]
    Truncated {
        /// Where more bytes were needed.
        offset: usize,
        /// Length of the message.
        len: usize,
    },
    /// A count or first id whose byte code does not decode.
    #[error("frontier message: {0}")]
    Varint(#[from] CodecError),
    /// A count larger than the message could hold.
    #[error("frontier message at byte {offset}: count {count} exceeds what {len} bytes can hold")]
    Count {
        /// The count announced.
        count: u64,
        /// Offset of the count.
        offset: usize,
        /// Length of the message.
        len: usize,
    },
    /// A block bit width wider than the ids.
    #[error("frontier message at byte {offset}: bit width {width} exceeds {max}")]
    BitWidth {
        /// Offset of the width byte.
        offset: usize,
        /// The width found.
        width: u8,
        /// The id width.
        max: u32,
    },
    /// An id past the largest value of its type.
    #[error("frontier message: id {index} overflows {bits}-bit ids")]
    Overflow {
        /// Index of the id in the list.
        index: usize,
        /// The id width.
        bits: u32,
    },
    /// Bytes after the last id.
    #[error("frontier message has {extra} bytes after its end at byte {offset}")]
    Trailing {
        /// Where the message ends.
        offset: usize,
        /// Bytes left over.
        extra: usize,
    },
    /// Encoding a list that is not strictly increasing.
    #[error("frontier ids are not strictly increasing at index {index}")]
    NotIncreasing {
        /// Index of the first id not above its predecessor.
        index: usize,
    },
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for u64 {}
}

/// A vertex id type a frontier message can hold: `u32` or `u64`.
pub trait FrontierId: Copy + Ord + sealed::Sealed {
    /// Bits of the type.
    const BITS: u32;
    /// Widens to `u64`.
    fn to_u64(self) -> u64;
    /// Narrows from `u64`; `None` if the value does not fit.
    fn from_u64(value: u64) -> Option<Self>;
}

impl FrontierId for u32 {
    const BITS: u32 = 32;
    #[inline]
    fn to_u64(self) -> u64 {
        u64::from(self)
    }
    #[inline]
    fn from_u64(value: u64) -> Option<Self> {
        u32::try_from(value).ok()
    }
}

impl FrontierId for u64 {
    const BITS: u32 = 64;
    #[inline]
    fn to_u64(self) -> u64 {
        self
    }
    #[inline]
    fn from_u64(value: u64) -> Option<Self> {
        Some(value)
    }
}

/// Bits needed for `value` (0 for 0).
#[inline]
fn bit_width(value: u64) -> u32 {
    64 - value.leading_zeros()
}

/// Packed bytes of `len` values of `width` bits.
#[inline]
fn packed_len(len: usize, width: u32) -> usize {
    (len * width as usize).div_ceil(8)
}

/// Bit width of each block of gaps of `ids` (which must be strictly increasing), or the index
/// of the first id not above its predecessor.
fn block_widths<I: FrontierId>(ids: &[I]) -> Result<Vec<u8>, FrontierError> {
    let gaps = ids.len().saturating_sub(1);
    let mut widths = Vec::with_capacity(gaps.div_ceil(BLOCK_LEN));
    for start in (0..gaps).step_by(BLOCK_LEN) {
        let mut all = 0u64;
        for i in start + 1..=(start + BLOCK_LEN).min(gaps) {
            let (prev, id) = (ids[i - 1].to_u64(), ids[i].to_u64());
            if id <= prev {
                return Err(FrontierError::NotIncreasing { index: i });
            }
            all |= id - prev - 1;
        }
        widths.push(bit_width(all) as u8);
    }
    Ok(widths)
}

/// Writes `values` packed at `width` bits each (least significant bit first) after `out`.
fn pack_block(values: impl Iterator<Item = u64>, width: u32, len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.resize(start + packed_len(len, width), 0);
    if width == 0 {
        return;
    }
    let dst = &mut out[start..];
    let mut acc = 0u128;
    let mut bits = 0u32;
    let mut pos = 0;
    for value in values {
        acc |= u128::from(value) << bits;
        bits += width;
        while bits >= 8 {
            dst[pos] = acc as u8;
            acc >>= 8;
            bits -= 8;
            pos += 1;
        }
    }
    if bits > 0 {
        dst[pos] = acc as u8;
    }
}

/// Appends the message for `ids` (strictly increasing) to `out`.
///
/// # Errors
/// [`FrontierError::NotIncreasing`] if an id is not above its predecessor; `out` is left as
/// it was.
pub fn encode<I: FrontierId>(
    ids: &[I],
    packing: Packing,
    out: &mut Vec<u8>,
) -> Result<(), FrontierError> {
    let widths = block_widths(ids)?;
    let raw_len = ids.len() * (I::BITS as usize / 8);
    let fano =
        (packing == Packing::Packed && ids.len() >= RAW_THRESHOLD).then(|| EliasFano::plan(ids));
    let form = match fano {
        Some(fano) => {
            let packed = packed_body_len(&widths, ids.len() - 1);
            let (flag, body) = if fano.body_len() < packed {
                (FLAG_ELIAS_FANO, fano.body_len())
            } else {
                (FLAG_PACKED, packed)
            };
            if varint::encoded_len(ids[0].to_u64()) + body < raw_len {
                flag
            } else {
                0
            }
        }
        None => 0,
    };
    let wide = if I::BITS == 64 { FLAG_WIDE } else { 0 };
    out.push(FRONTIER_FORMAT_VERSION);
    out.push(wide | form);
    varint::encode_to_vec(ids.len() as u64, out);
    if form == 0 {
        out.reserve(raw_len);
        for id in ids {
            out.extend_from_slice(&id.to_u64().to_le_bytes()[..I::BITS as usize / 8]);
        }
        return Ok(());
    }
    varint::encode_to_vec(ids[0].to_u64(), out);
    if let (FLAG_ELIAS_FANO, Some(fano)) = (form, fano) {
        fano.write(ids, out);
        return Ok(());
    }
    for (b, &width) in widths.iter().enumerate() {
        let pairs = &ids[b * BLOCK_LEN..(ids.len()).min((b + 1) * BLOCK_LEN + 1)];
        out.push(width);
        let gaps = pairs.windows(2).map(|p| p[1].to_u64() - p[0].to_u64() - 1);
        pack_block(gaps, u32::from(width), pairs.len() - 1, out);
    }
    Ok(())
}

/// Bytes of the bit-packed blocks of `gaps` gaps with block widths `widths`.
fn packed_body_len(widths: &[u8], gaps: usize) -> usize {
    widths
        .iter()
        .enumerate()
        .map(|(b, &w)| 1 + packed_len(BLOCK_LEN.min(gaps - b * BLOCK_LEN), u32::from(w)))
        .sum()
}

/// The Elias–Fano form of the ids after the first: `m` values `y[i] = id[i+1] - id[0] - 1`,
/// strictly increasing, split into `low` low bits and a high part below `top + 1`.
#[derive(Debug, Clone, Copy)]
struct EliasFano {
    m: usize,
    low: u32,
    top: u64,
}

impl EliasFano {
    /// The split for `ids` (strictly increasing, at least one id): the smallest of
    /// `low = ⌊log2(u / m)⌋` for values below `u` (the textbook choice, which keeps the
    /// bitmap under `2m + 1` bits) and its two neighbours.
    fn plan<I: FrontierId>(ids: &[I]) -> Self {
        let textbook = Self::textbook(ids);
        let mut best = textbook;
        if textbook.m == 0 {
            return best;
        }
        let last_value = ids[textbook.m].to_u64() - ids[0].to_u64() - 1;
        for low in [textbook.low.saturating_sub(1), textbook.low + 1] {
            if low < 64 {
                let other = Self {
                    low,
                    top: last_value >> low,
                    ..textbook
                };
                if other.body_len() < best.body_len() {
                    best = other;
                }
            }
        }
        best
    }

    fn textbook<I: FrontierId>(ids: &[I]) -> Self {
        let m = ids.len() - 1;
        if m == 0 {
            return Self { m, low: 0, top: 0 };
        }
        let last = ids[m].to_u64() - ids[0].to_u64() - 1;
        let per = (last / m as u64).max(1);
        let low = 63 - per.leading_zeros();
        Self {
            m,
            low,
            top: last >> low,
        }
    }

    /// Bytes of the bitmap: one set bit per value and one clear bit per high step.
    fn high_len(&self) -> Option<usize> {
        let bits = (self.m as u64).checked_add(self.top)?.checked_add(1)?;
        usize::try_from(bits.div_ceil(8)).ok()
    }

    /// Bytes after the first id: `low`, `top`, the low bits and the bitmap.
    fn body_len(&self) -> usize {
        1 + varint::encoded_len(self.top)
            + packed_len(self.m, self.low)
            + self.high_len().unwrap_or(usize::MAX / 2)
    }

    fn write<I: FrontierId>(&self, ids: &[I], out: &mut Vec<u8>) {
        out.push(self.low as u8);
        varint::encode_to_vec(self.top, out);
        // With one id there are no values, and the first id may be the largest.
        let base = ids[0].to_u64().wrapping_add(1);
        let values = || ids[1..].iter().map(move |id| id.to_u64() - base);
        let mask = (1u64 << self.low) - 1;
        pack_block(values().map(|y| y & mask), self.low, self.m, out);
        let start = out.len();
        out.resize(start + self.high_len().expect("planned from real ids"), 0);
        for (i, y) in values().enumerate() {
            let bit = (y >> self.low) as usize + i;
            out[start + bit / 8] |= 1 << (bit % 8);
        }
    }
}

/// Bytes of the message [`encode`] would write for `ids` raw: what the list costs uncompressed.
pub fn raw_len<I: FrontierId>(count: usize) -> usize {
    HEADER_BYTES + varint::encoded_len(count as u64) + count * (I::BITS as usize / 8)
}

/// Reads `len` values of `width` bits from `src` (exactly `packed_len(len, width)` bytes),
/// calling `f` on each.
#[inline]
fn unpack_block(src: &[u8], width: u32, len: usize, mut f: impl FnMut(u64)) {
    if width == 0 {
        (0..len).for_each(|_| f(0));
        return;
    }
    let mask = if width == 64 {
        u64::MAX
    } else {
        (1u64 << width) - 1
    };
    let mut acc = 0u128;
    let mut bits = 0u32;
    let mut bytes = src.iter();
    for _ in 0..len {
        while bits < width {
            // `src` holds ⌈len·width/8⌉ bytes, so it never runs dry before the last value.
            acc |= u128::from(bytes.next().copied().unwrap_or(0)) << bits;
            bits += 8;
        }
        f(acc as u64 & mask);
        acc >>= width;
        bits -= width;
    }
}

/// Decodes the message `bytes` (the whole buffer) into `out` (cleared first).
///
/// # Errors
/// [`FrontierError`] for a message that is not a well-formed frontier of `I` ids: wrong
/// version or flags (ids of the other width included), a truncated or overlong buffer, a bit
/// width above the id width, or an id that overflows `I`. `out` holds a prefix then.
pub fn decode<I: FrontierId>(bytes: &[u8], out: &mut Vec<I>) -> Result<(), FrontierError> {
    out.clear();
    let len = bytes.len();
    let (&version, &flags) = match bytes {
        [v, f, ..] => (v, f),
        _ => return Err(FrontierError::Truncated { offset: len, len }),
    };
    if !(1..=FRONTIER_FORMAT_VERSION).contains(&version) {
        return Err(FrontierError::Version { found: version });
    }
    check_flags::<I>(version, flags)?;
    let (count, used) = varint::decode(bytes, HEADER_BYTES)?;
    let mut pos = HEADER_BYTES + used;
    let id_bytes = I::BITS as usize / 8;
    if flags & (FLAG_PACKED | FLAG_ELIAS_FANO) == 0 {
        let body = &bytes[pos..];
        if count > (body.len() / id_bytes) as u64 {
            return Err(FrontierError::Count {
                count,
                offset: HEADER_BYTES,
                len,
            });
        }
        let count = count as usize;
        out.extend(body[..count * id_bytes].chunks_exact(id_bytes).map(|c| {
            let mut word = [0u8; 8];
            word[..id_bytes].copy_from_slice(c);
            I::from_u64(u64::from_le_bytes(word)).expect("an id of I's width fits I")
        }));
        return check_end(pos + count * id_bytes, len);
    }
    // A packed message has at least one id and one byte per block of gaps.
    let blocks_max = (len - pos) as u64;
    if count == 0 || (count - 1).div_ceil(BLOCK_LEN as u64) > blocks_max {
        return Err(FrontierError::Count {
            count,
            offset: HEADER_BYTES,
            len,
        });
    }
    let (first, used) = varint::decode(bytes, pos)?;
    pos += used;
    let mut prev = I::from_u64(first).ok_or(FrontierError::Overflow {
        index: 0,
        bits: I::BITS,
    })?;
    if flags & FLAG_ELIAS_FANO != 0 {
        out.push(prev);
        return decode_elias_fano(bytes, pos, count as usize - 1, first, out);
    }
    out.reserve(count as usize);
    out.push(prev);
    let mut left = count as usize - 1;
    while left > 0 {
        let block = BLOCK_LEN.min(left);
        pos = unpack_checked(bytes, pos, block, &mut prev, out)?;
        left -= block;
    }
    check_end(pos, len)
}

fn check_flags<I: FrontierId>(version: u8, flags: u8) -> Result<(), FrontierError> {
    let known = if version == 1 {
        FLAG_WIDE | FLAG_PACKED
    } else {
        FLAG_WIDE | FLAG_PACKED | FLAG_ELIAS_FANO
    };
    let reason = if flags & !known != 0 {
        "unknown bits set"
    } else if flags & FLAG_PACKED != 0 && flags & FLAG_ELIAS_FANO != 0 {
        "both packed and Elias-Fano"
    } else if (flags & FLAG_WIDE != 0) != (I::BITS == 64) {
        "ids of another width than expected"
    } else {
        return Ok(());
    };
    Err(FrontierError::Flags {
        found: flags,
        reason,
    })
}

fn check_end(pos: usize, len: usize) -> Result<(), FrontierError> {
    if pos == len {
        Ok(())
    } else {
        Err(FrontierError::Trailing {
            offset: pos,
            extra: len - pos,
        })
    }
}

/// Decodes the Elias–Fano body at `pos` of `m` ids after `first` (already in `out`) and
/// checks that the message ends with it.
fn decode_elias_fano<I: FrontierId>(
    bytes: &[u8],
    mut pos: usize,
    m: usize,
    first: u64,
    out: &mut Vec<I>,
) -> Result<(), FrontierError> {
    let len = bytes.len();
    let low = *bytes
        .get(pos)
        .ok_or(FrontierError::Truncated { offset: pos, len })?;
    if u32::from(low) >= I::BITS {
        return Err(FrontierError::BitWidth {
            offset: pos,
            width: low,
            max: I::BITS - 1,
        });
    }
    let (top, used) = varint::decode(bytes, pos + 1)?;
    pos += 1 + used;
    let plan = EliasFano {
        m,
        low: u32::from(low),
        top,
    };
    let lows_end = pos + packed_len(m, plan.low);
    let end = plan
        .high_len()
        .and_then(|high| lows_end.checked_add(high))
        .filter(|&end| end <= len)
        .ok_or(FrontierError::Truncated {
            offset: lows_end,
            len,
        })?;
    let (lows, high) = (&bytes[pos..lows_end], &bytes[lows_end..end]);
    let overflow = |index| FrontierError::Overflow {
        index,
        bits: I::BITS,
    };
    // The bitmap holds m + top + 1 bits, so m is bounded by the bytes present.
    out.reserve(m);
    let mut set_bits = high.iter().enumerate().flat_map(|(b, &byte)| {
        (0..8)
            .filter(move |k| byte >> k & 1 != 0)
            .map(move |k| b * 8 + k)
    });
    let mut previous: Option<u64> = None;
    let mut result = Ok(());
    unpack_block(lows, plan.low, m, |low_bits| {
        if result.is_err() {
            return;
        }
        let i = out.len() - 1;
        let Some(bit) = set_bits.next() else {
            result = Err(FrontierError::Count {
                count: m as u64 + 1,
                offset: HEADER_BYTES,
                len,
            });
            return;
        };
        let high_part = (bit - i) as u64;
        let y = high_part
            .checked_shl(plan.low)
            .filter(|v| v >> plan.low == high_part)
            .map(|v| v | low_bits);
        let id = y
            .and_then(|y| first.checked_add(y)?.checked_add(1))
            .and_then(I::from_u64);
        match (id, y) {
            (Some(id), Some(y)) if previous.is_none_or(|p| y > p) => {
                previous = Some(y);
                out.push(id);
            }
            (Some(_), Some(_)) => result = Err(FrontierError::NotIncreasing { index: i + 1 }),
            _ => result = Err(overflow(i + 1)),
        }
    });
    result?;
    // Canonical: no set bit past the m-th, and the last high part is `top`.
    let last_high = previous.map_or(0, |y| y >> plan.low);
    if set_bits.next().is_some() || (m > 0 && last_high != top) || (m == 0 && top != 0) {
        return Err(FrontierError::Count {
            count: m as u64 + 1,
            offset: HEADER_BYTES,
            len,
        });
    }
    check_end(end, len)
}

/// Decodes one block of `block` gaps at `pos`, appending ids after `prev`; returns the
/// offset after the block.
fn unpack_checked<I: FrontierId>(
    bytes: &[u8],
    pos: usize,
    block: usize,
    prev: &mut I,
    out: &mut Vec<I>,
) -> Result<usize, FrontierError> {
    let len = bytes.len();
    let width = *bytes
        .get(pos)
        .ok_or(FrontierError::Truncated { offset: pos, len })?;
    if u32::from(width) > I::BITS {
        return Err(FrontierError::BitWidth {
            offset: pos,
            width,
            max: I::BITS,
        });
    }
    let end = pos + 1 + packed_len(block, u32::from(width));
    let src = bytes
        .get(pos + 1..end)
        .ok_or(FrontierError::Truncated { offset: end, len })?;
    let mut last = prev.to_u64();
    let mut overflow = false;
    unpack_block(src, u32::from(width), block, |gap| {
        match last.checked_add(gap).and_then(|v| v.checked_add(1)) {
            Some(next) => last = next,
            None => overflow = true,
        }
        if let Some(id) = I::from_u64(last) {
            out.push(id);
        } else {
            overflow = true;
        }
    });
    if overflow {
        let index = out.len();
        return Err(FrontierError::Overflow {
            index,
            bits: I::BITS,
        });
    }
    *prev = I::from_u64(last).expect("checked above: the last id fits I");
    Ok(end)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn round_trip<I: FrontierId + std::fmt::Debug>(ids: &[I], packing: Packing) -> Vec<u8> {
        let mut bytes = Vec::new();
        encode(ids, packing, &mut bytes).unwrap();
        let mut back = Vec::new();
        decode::<I>(&bytes, &mut back).unwrap();
        assert_eq!(back, ids);
        bytes
    }

    fn sorted<I: Ord + Copy>(mut ids: Vec<I>) -> Vec<I> {
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    #[test]
    fn empty_one_and_threshold_lists_round_trip() {
        for packing in [Packing::Raw, Packing::Packed] {
            assert_eq!(round_trip::<u32>(&[], packing).len(), 3);
            round_trip(&[7u32], packing);
            round_trip(&[u64::MAX], packing);
            let below: Vec<u32> = (0..RAW_THRESHOLD as u32 - 1).collect();
            assert_eq!(round_trip(&below, packing)[1], 0);
            let at: Vec<u32> = (0..RAW_THRESHOLD as u32).map(|i| i * 3).collect();
            let bytes = round_trip(&at, packing);
            assert_eq!(bytes[1] & FLAG_PACKED != 0, packing == Packing::Packed);
        }
    }

    #[test]
    fn dense_lists_pack_to_a_few_bits_per_id() {
        let ids: Vec<u32> = (1_000..101_000).step_by(3).collect();
        let bytes = round_trip(&ids, Packing::Packed);
        assert!(bytes.len() * 8 < ids.len() * 3, "{} bytes", bytes.len());
        assert_eq!(
            raw_len::<u32>(ids.len()),
            round_trip(&ids, Packing::Raw).len()
        );
    }

    #[test]
    fn maximal_gaps_round_trip_and_go_raw_when_packing_does_not_pay() {
        // 63 dense ids above 2^62, then u64::MAX: the block needs 64 bits per gap, and with
        // the first id's 9-byte code packing would take 514 bytes against 512 raw.
        let ids: Vec<u64> = (0..63).map(|i| (1 << 62) + i).chain([u64::MAX]).collect();
        let bytes = round_trip(&ids, Packing::Packed);
        assert_eq!(bytes[1] & FLAG_PACKED, 0);
        let wide: Vec<u64> = (0..200).map(|i| i << 56).chain([u64::MAX]).collect();
        assert_ne!(round_trip(&wide, Packing::Packed)[1] & FLAG_PACKED, 0);
        let spread: Vec<u32> = (0..300u32).map(|i| i * (u32::MAX / 300)).collect();
        round_trip(&spread, Packing::Packed);
        let full: Vec<u64> = [0, u64::MAX].into_iter().collect();
        round_trip(&full, Packing::Packed);
    }

    #[test]
    fn a_64_bit_gap_packs_and_decodes() {
        // One gap of 2^64 - 2 forces a 64-bit block; the rest are dense.
        let mut ids: Vec<u64> = (0..100).collect();
        ids.push(u64::MAX);
        let mut bytes = Vec::new();
        encode(&ids, Packing::Packed, &mut bytes).unwrap();
        let mut back = Vec::new();
        decode::<u64>(&bytes, &mut back).unwrap();
        assert_eq!(back, ids);
        // Hand-made packed message: two ids with a 64-bit gap.
        let mut msg = vec![FRONTIER_FORMAT_VERSION, FLAG_WIDE | FLAG_PACKED, 2, 0, 64];
        msg.extend_from_slice(&(u64::MAX - 1).to_le_bytes());
        decode::<u64>(&msg, &mut back).unwrap();
        assert_eq!(back, [0, u64::MAX]);
    }

    /// A sorted random subset of `0..universe` with about `count` ids.
    fn sparse_ids(universe: u32, count: usize, seed: u64) -> Vec<u32> {
        let mut state = seed | 1;
        let ids = (0..count)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state % u64::from(universe)) as u32
            })
            .collect();
        sorted(ids)
    }

    #[test]
    fn sparse_random_lists_take_elias_fano_near_the_entropy() {
        for (universe, count) in [(1 << 19, 300), (1 << 19, 5_000), (1 << 24, 2_000)] {
            let ids = sparse_ids(universe, count, u64::from(universe) ^ count as u64);
            let bytes = round_trip(&ids, Packing::Packed);
            assert_eq!(bytes[1], FLAG_ELIAS_FANO, "{universe} {count}");
            // At most 2 + ⌈log2(u / n)⌉ bits per id, plus the header.
            let n = ids.len() as f64;
            let bound = n * (2.0 + (f64::from(universe) / n).log2().ceil()) / 8.0 + 16.0;
            assert!((bytes.len() as f64) <= bound, "{} > {bound}", bytes.len());
            // Never larger than the bit-packed form.
            let packed = packed_body_len(&block_widths(&ids).unwrap(), ids.len() - 1);
            assert!(bytes.len() <= packed + 8);
        }
    }

    #[test]
    fn corrupt_elias_fano_bodies_give_clear_errors() {
        let ids = sparse_ids(1 << 19, 400, 9);
        let mut bytes = Vec::new();
        encode(&ids, Packing::Packed, &mut bytes).unwrap();
        assert_eq!(bytes[1], FLAG_ELIAS_FANO);
        let mut back = Vec::<u32>::new();
        // Every truncation is an error.
        for end in 0..bytes.len() {
            assert!(decode(&bytes[..end], &mut back).is_err(), "cut at {end}");
        }
        // A trailing byte, an extra set bit in the bitmap's padding, a too-wide low part.
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(matches!(
            decode(&longer, &mut back),
            Err(FrontierError::Trailing { .. })
        ));
        let mut extra = bytes.clone();
        *extra.last_mut().unwrap() |= 0x80;
        assert!(decode(&extra, &mut back).is_err());
        let low_at =
            2 + varint::encoded_len(ids.len() as u64) + varint::encoded_len(u64::from(ids[0]));
        let mut wide = bytes.clone();
        wide[low_at] = 32;
        assert!(matches!(
            decode(&wide, &mut back),
            Err(FrontierError::BitWidth { width: 32, .. })
        ));
        // A huge `top` cannot make the decoder allocate or read past the message.
        let mut huge = bytes[..low_at + 1].to_vec();
        varint::encode_to_vec(u64::MAX - 3, &mut huge);
        huge.extend_from_slice(&[0xff; 16]);
        assert!(matches!(
            decode(&huge, &mut back),
            Err(FrontierError::Truncated { .. })
        ));
    }

    #[test]
    fn unsorted_input_is_refused_and_nothing_is_written() {
        let mut bytes = vec![9];
        let error = encode(&[1u32, 5, 5], Packing::Packed, &mut bytes).unwrap_err();
        assert_eq!(error, FrontierError::NotIncreasing { index: 2 });
        assert_eq!(bytes, [9]);
    }

    #[test]
    fn corrupt_headers_give_clear_errors() {
        let mut back = Vec::<u32>::new();
        let e = |bytes: &[u8], back: &mut Vec<u32>| decode(bytes, back).unwrap_err();
        assert!(matches!(e(&[], &mut back), FrontierError::Truncated { .. }));
        assert!(matches!(
            e(&[3, 0, 0], &mut back),
            FrontierError::Version { found: 3 }
        ));
        assert!(matches!(
            e(&[0, 0, 0], &mut back),
            FrontierError::Version { found: 0 }
        ));
        // Elias–Fano is not a version 1 form, and never packed as well.
        assert!(matches!(
            e(&[1, 4, 0], &mut back),
            FrontierError::Flags { .. }
        ));
        assert!(matches!(
            e(&[2, 6, 0], &mut back),
            FrontierError::Flags { .. }
        ));
        assert!(matches!(
            e(&[2, 8, 0], &mut back),
            FrontierError::Flags { .. }
        ));
        // Version 1 messages still read.
        back.clear();
        decode::<u32>(&[1, 0, 1, 7, 0, 0, 0], &mut back).unwrap();
        assert_eq!(back, [7]);
        assert!(matches!(
            e(&[1, 1, 0], &mut back),
            FrontierError::Flags { .. }
        ));
        assert!(matches!(
            e(&[1, 0, 0, 0], &mut back),
            FrontierError::Trailing { .. }
        ));
        assert!(matches!(
            e(&[1, 2, 0], &mut back),
            FrontierError::Count { .. }
        ));
        let huge = [1, 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 0];
        assert!(matches!(e(&huge, &mut back), FrontierError::Count { .. }));
        assert!(matches!(
            e(&[1, 2, 2, 0, 33, 0, 0, 0, 0, 0], &mut back),
            FrontierError::BitWidth { .. }
        ));
        // first id 2^32 - 1, then a gap that passes the 32-bit range
        let over = [1, 2, 2, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 0];
        assert!(matches!(
            e(&over, &mut back),
            FrontierError::Overflow { index: 1, .. }
        ));
        let error: crate::Error = FrontierError::Version { found: 3 }.into();
        assert!(error.to_string().contains("version 3"), "{error}");
    }

    fn ids_u32() -> impl Strategy<Value = Vec<u32>> {
        prop_oneof![
            prop::collection::vec(any::<u32>(), 0..600),
            prop::collection::vec(0u32..5_000, 0..2_000),
            prop::collection::vec(
                prop::sample::select(vec![0, 1, u32::MAX - 1, u32::MAX]),
                0..5
            ),
        ]
        .prop_map(sorted)
    }

    fn ids_u64() -> impl Strategy<Value = Vec<u64>> {
        prop_oneof![
            prop::collection::vec(any::<u64>(), 0..600),
            prop::collection::vec((0u64..1 << 20).prop_map(|v| v + (1 << 40)), 0..2_000),
            prop::collection::vec(
                prop::sample::select(vec![0, 1, u64::MAX - 1, u64::MAX]),
                0..5
            ),
        ]
        .prop_map(sorted)
    }

    proptest! {
        #[test]
        fn u32_lists_round_trip(ids in ids_u32()) {
            round_trip(&ids, Packing::Packed);
            round_trip(&ids, Packing::Raw);
        }

        #[test]
        fn elias_fano_round_trips_any_list(ids in ids_u32(), wide in ids_u64()) {
            // Forced Elias–Fano, whatever size it comes to.
            fn forced<I: FrontierId + std::fmt::Debug>(ids: &[I]) -> Vec<I> {
                let mut msg = vec![FRONTIER_FORMAT_VERSION, FLAG_ELIAS_FANO | if I::BITS == 64 { FLAG_WIDE } else { 0 }];
                varint::encode_to_vec(ids.len() as u64, &mut msg);
                varint::encode_to_vec(ids[0].to_u64(), &mut msg);
                EliasFano::plan(ids).write(ids, &mut msg);
                let mut back = Vec::new();
                decode::<I>(&msg, &mut back).unwrap();
                back
            }
            let ids = sorted(ids);
            if !ids.is_empty() {
                prop_assert_eq!(forced(&ids), ids);
            }
            let wide = sorted(wide);
            if !wide.is_empty() {
                prop_assert_eq!(forced(&wide), wide);
            }
        }

        #[test]
        fn u64_lists_round_trip(ids in ids_u64()) {
            let packed = round_trip(&ids, Packing::Packed);
            let raw = round_trip(&ids, Packing::Raw);
            prop_assert!(packed.len() <= raw.len());
        }

        #[test]
        fn ids_of_the_other_width_are_refused(ids in ids_u32()) {
            let mut bytes = Vec::new();
            encode(&ids, Packing::Packed, &mut bytes).unwrap();
            let mut wide = Vec::new();
            let is_flags_error = matches!(decode::<u64>(&bytes, &mut wide), Err(FrontierError::Flags { .. }));
            prop_assert!(is_flags_error);
        }

        #[test]
        fn corrupt_or_truncated_messages_never_panic(
            ids in ids_u32(),
            flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
            cut in any::<prop::sample::Index>(),
        ) {
            let mut bytes = Vec::new();
            encode(&ids, Packing::Packed, &mut bytes).unwrap();
            for (at, value) in flips {
                let i = at.index(bytes.len());
                bytes[i] = value;
            }
            let mut back = Vec::new();
            let _ = decode::<u32>(&bytes, &mut back);
            let end = cut.index(bytes.len() + 1);
            if end < bytes.len() {
                let _ = decode::<u32>(&bytes[..end], &mut back);
                let mut wide = Vec::new();
                let _ = decode::<u64>(&bytes[..end], &mut wide);
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
            let mut narrow = Vec::new();
            let _ = decode::<u32>(&bytes, &mut narrow);
            let mut wide = Vec::new();
            let _ = decode::<u64>(&bytes, &mut wide);
            // Same, with a valid header so that the body is what gets tested.
            for flags in 0..8u8 {
                let mut msg = vec![FRONTIER_FORMAT_VERSION, flags];
                msg.extend_from_slice(&bytes);
                let _ = decode::<u32>(&msg, &mut narrow);
                let _ = decode::<u64>(&msg, &mut wide);
            }
        }
    }
}
