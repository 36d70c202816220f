//! Frontier messages: a strictly increasing list of vertex ids (`u32` or `u64`) as the bytes
//! one process sends another in a distributed breadth-first search.
//!
//! Sorted frontier ids have small gaps, so a list is stored as its first id and the gaps
//! minus one, bit-packed in blocks of [`BLOCK_LEN`] with one bit width per block (binary
//! packing of differences, the scheme of S4-BP128-D1 in Lemire and Boytsov, "Decoding billions
//! of integers per second through vectorization", 2015, written here as scalar code). Lists
//! shorter than [`RAW_THRESHOLD`], and lists whose packed form would not be smaller, go raw.
//!
//! Wire format, version [`FRONTIER_FORMAT_VERSION`] (byte diagram in
//! `docs/formats/frontier.md`):
//!
//! ```text
//! byte 0      version (1)
//! byte 1      flags: bit 0 = ids are 64-bit, bit 1 = packed; other bits zero
//! varint      count of ids
//! raw:        count ids, little-endian, 4 or 8 bytes each
//! packed:     varint first id, then ⌈(count-1)/128⌉ blocks of the gaps id[i]-id[i-1]-1:
//!             1 byte bit width b (0..=32 or 0..=64), then ⌈len·b/8⌉ bytes of `len` values,
//!             least significant bit first (len = 128 but in the last block)
//! ```
//!
//! [`decode`] takes untrusted bytes: it checks the version, flags, bit widths, lengths and
//! that every id fits its type, and returns [`FrontierError`]; it never panics and never
//! allocates more than the bytes can describe. Left out: SIMD packing (the scalar loops keep
//! up with shared-memory transfers at the sizes a frontier reaches) and patched exceptions.

use super::varint;
use super::CodecError;

/// The version byte this module writes and reads.
pub const FRONTIER_FORMAT_VERSION: u8 = 1;

/// Gaps per bit-packed block.
pub const BLOCK_LEN: usize = 128;

/// Lists with fewer ids go raw: packing them saves too little to pay for the call (the
/// threshold of the compressed-frontier Graph500 code).
pub const RAW_THRESHOLD: usize = 64;

const FLAG_WIDE: u8 = 1;
const FLAG_PACKED: u8 = 2;
const HEADER_BYTES: usize = 2;

/// How [`encode`] may store a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Packing {
    /// Always raw ids (no codec work beyond a copy).
    Raw,
    /// Bit-packed gaps when the list has at least [`RAW_THRESHOLD`] ids and packing is
    /// smaller, raw otherwise.
    Packed,
}

/// A frontier message that does not decode, or a list that cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrontierError {
    /// The version byte is not one this build reads.
    #[error(
        "frontier message version {found} is not readable (supported {FRONTIER_FORMAT_VERSION})"
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
    let packed = packing == Packing::Packed && ids.len() >= RAW_THRESHOLD && {
        let gaps = ids.len() - 1;
        let body: usize = widths
            .iter()
            .enumerate()
            .map(|(b, &w)| 1 + packed_len(BLOCK_LEN.min(gaps - b * BLOCK_LEN), u32::from(w)))
            .sum();
        body + varint::encoded_len(ids[0].to_u64()) < raw_len
    };
    let wide = if I::BITS == 64 { FLAG_WIDE } else { 0 };
    out.push(FRONTIER_FORMAT_VERSION);
    out.push(wide | if packed { FLAG_PACKED } else { 0 });
    varint::encode_to_vec(ids.len() as u64, out);
    if !packed {
        out.reserve(raw_len);
        for id in ids {
            out.extend_from_slice(&id.to_u64().to_le_bytes()[..I::BITS as usize / 8]);
        }
        return Ok(());
    }
    varint::encode_to_vec(ids[0].to_u64(), out);
    for (b, &width) in widths.iter().enumerate() {
        let pairs = &ids[b * BLOCK_LEN..(ids.len()).min((b + 1) * BLOCK_LEN + 1)];
        out.push(width);
        let gaps = pairs.windows(2).map(|p| p[1].to_u64() - p[0].to_u64() - 1);
        pack_block(gaps, u32::from(width), pairs.len() - 1, out);
    }
    Ok(())
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
    if version != FRONTIER_FORMAT_VERSION {
        return Err(FrontierError::Version { found: version });
    }
    check_flags::<I>(flags)?;
    let (count, used) = varint::decode(bytes, HEADER_BYTES)?;
    let mut pos = HEADER_BYTES + used;
    let id_bytes = I::BITS as usize / 8;
    if flags & FLAG_PACKED == 0 {
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

fn check_flags<I: FrontierId>(flags: u8) -> Result<(), FrontierError> {
    let reason = if flags & !(FLAG_WIDE | FLAG_PACKED) != 0 {
        "unknown bits set"
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
            e(&[2, 0, 0], &mut back),
            FrontierError::Version { found: 2 }
        ));
        assert!(matches!(
            e(&[1, 4, 0], &mut back),
            FrontierError::Flags { .. }
        ));
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
            for flags in 0..4u8 {
                let mut msg = vec![FRONTIER_FORMAT_VERSION, flags];
                msg.extend_from_slice(&bytes);
                let _ = decode::<u32>(&msg, &mut narrow);
                let _ = decode::<u64>(&msg, &mut wide);
            }
        }
    }
}
