//! The group-varint decode of targets into a slice with SSSE3 byte shuffles: the x86-64 fast
//! path of `slice.rs`, whose scalar twin is `group_into` there.
//!
//! A graph's key is `source << 32 | target`, so the low half of each key is the running sum,
//! modulo 2^32, of the low halves of the differences. One group's four differences come out
//! of two 16-byte loads and two shuffles (slots 0 and 1 from the group's first byte, slots 2
//! and 3 from slot 2's), each slot's low four bytes (a five-byte slot's fifth byte is only
//! above the target) zero-extended into a 32-bit lane. Two shifted adds and the previous
//! target make the four targets.
//!
//! A five-byte slot whose low four bytes are all ones is an escape (see `mod.rs`) if its
//! fifth byte is all ones too, which a third pair of shuffles tests in the registers: a
//! group holding an escape, and any group too near the end of the leaf's page for the
//! 16-byte loads, is left to the scalar code.
//!
//! The same lanes check a graph's leaf read from a file ([`arc_groups_ssse3`], the fast
//! path of `check.rs`): each group's shortest codes, targets and sources (a five-byte
//! slot's fifth byte and the carry out of the targets) in the registers, compared with the
//! vertex count and each other.

use std::arch::x86_64::{
    __m128i, _mm_add_epi32, _mm_add_epi8, _mm_alignr_epi8, _mm_and_si128, _mm_andnot_si128,
    _mm_cmpeq_epi32, _mm_cmpgt_epi32, _mm_cvtsi128_si32, _mm_loadu_si128, _mm_movemask_epi8,
    _mm_or_si128, _mm_set1_epi32, _mm_set1_epi8, _mm_setzero_si128, _mm_shuffle_epi32,
    _mm_shuffle_epi8, _mm_slli_si128, _mm_storeu_si128, _mm_sub_epi32, _mm_xor_si128,
};

use std::marker::PhantomData;

use super::check::ARC_VERTICES_MAX;
use super::slice::{PairRun, SliceDecode};
use super::{per_slot, read_head, GroupLeaf, HEAD_BYTES, LEN};
use crate::pma::leaf::ItemCheck;

/// Bytes a group's loads may reach past its control byte: slot 2 starts at most 10 bytes
/// after the first slot, which is one byte after the control byte, and 16 are loaded there.
pub(super) const REACH_BYTES: usize = 27;

/// The two shuffles of a control byte: the first picks slots 0 and 1 from the bytes after
/// the control byte into lanes 0 and 1; the second slots 2 and 3 from slot 2's first byte
/// into lanes 2 and 3. Bytes past a slot's length, and lanes the shuffle does not fill, are
/// `0x80` (zero).
#[repr(align(16))]
struct Shuffles([[[u8; 16]; 2]; 256]);

static SHUFFLES: Shuffles = Shuffles(shuffle_table());

const fn shuffle_table() -> [[[u8; 16]; 2]; 256] {
    let mut table = [[[0x80u8; 16]; 2]; 256];
    let mut ctrl = 0;
    while ctrl < 256 {
        let mut offset = 0;
        let mut slot = 0;
        let mut slot2 = 0;
        while slot < 4 {
            let len = LEN[(ctrl >> (2 * slot)) & 3];
            if slot == 2 {
                slot2 = offset;
            }
            let (half, from) = if slot < 2 {
                (0, offset)
            } else {
                (1, offset - slot2)
            };
            let mut byte = 0;
            while byte < len && byte < 4 {
                table[ctrl][half][4 * slot + byte] = (from + byte) as u8;
                byte += 1;
            }
            offset += len;
            slot += 1;
        }
        ctrl += 1;
    }
    table
}

/// For each control byte: where slots 1, 2 and 3 start after the control byte (bits 0..8,
/// 8..16, 16..24) and the group's bytes after it (bits 24..32).
static STEPS: [u32; 256] = step_table();

const fn step_table() -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut ctrl = 0;
    while ctrl < 256 {
        let one = LEN[ctrl & 3];
        let two = one + LEN[(ctrl >> 2) & 3];
        let three = two + LEN[(ctrl >> 4) & 3];
        let bytes = three + LEN[ctrl >> 6];
        table[ctrl] = (one | two << 8 | three << 16 | bytes << 24) as u32;
        ctrl += 1;
    }
    table
}

/// The index of each 32-bit lane's last byte, in all four of its bytes.
static BYTE3: [u8; 16] = [3, 3, 3, 3, 7, 7, 7, 7, 11, 11, 11, 11, 15, 15, 15, 15];

/// Shuffles that copy lane `i` of four 32-bit lanes into all four.
static BROADCAST: [[u8; 16]; 4] = broadcast_table();

const fn broadcast_table() -> [[u8; 16]; 4] {
    let mut table = [[0u8; 16]; 4];
    let mut lane = 0;
    while lane < 4 {
        let mut byte = 0;
        while byte < 16 {
            table[lane][byte] = (4 * lane + byte % 4) as u8;
            byte += 1;
        }
        lane += 1;
    }
    table
}

/// Whether this CPU has SSSE3 (checked once, then cached by the standard library).
#[inline(always)]
pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("ssse3")
}

/// Decodes the next group of a [`Lanes`] into its slice four targets at a time, if it is
/// full (or the leaf's last), holds no escape, ends by `used`, has `REACH_BYTES` of the leaf
/// after its control byte, and the slice has four slots left; evaluates to whether it did.
/// A macro, so that it is inlined into the SIMD loops (a function with a target feature
/// cannot be `#[inline(always)]`, and a call per group costs a third of the time). `$lazy`
/// tests for escapes behind a branch on lanes of all ones: the pair decode, which runs on
/// blocks of high-degree vertices, sets it; the one-run decode, which low-degree graphs
/// take, does not (measured: the branch slows a road network's one-run decode and speeds
/// Kronecker pairs; see CHANGELOG).
///
/// The state is five addresses (the next control byte, the last one with room for the
/// loads, the leaf's end of use, the next slot and the last with room for four), so that
/// two decodes in one loop keep all of it in registers: with a leaf, offsets and a slice
/// each, the pair loop spilled one decode's control-byte offset and previous target to the
/// stack, lengthening the chain each group waits on (measured faster; see CHANGELOG).
macro_rules! group_step {
    ($lanes:expr, $lazy:expr) => {{
        let lanes: &mut Lanes<'_, '_> = $lanes;
        'step: {
            if lanes.c >= lanes.last_c || lanes.dst > lanes.last_dst {
                break 'step false;
            }
            // SAFETY: `c < last_c`, inside the leaf, and so is the byte after it.
            let (ctrl, first) = unsafe { (usize::from(*lanes.c), lanes.c.add(1)) };
            let step = STEPS[ctrl] as usize;
            let end = first.wrapping_add(step >> 24);
            // Slots present: all four, or in the leaf's last group those starting before
            // `used`; and the bytes of their lanes, in a mask.
            let (slots, present) = if end <= lanes.used {
                (4, 0xFFFF)
            } else {
                // SAFETY: `first <= used`, both inside the leaf.
                let room = unsafe { lanes.used.offset_from(first) } as usize;
                let slots = 1
                    + usize::from(step & 0xFF < room)
                    + usize::from((step >> 8) & 0xFF < room)
                    + usize::from((step >> 16) & 0xFF < room);
                (slots, (1 << (4 * slots)) - 1)
            };
            let second = first.wrapping_add((step >> 8) & 0xFF);
            let shuffles = &SHUFFLES.0[ctrl];
            // SAFETY: `c + REACH_BYTES <= leaf end` (`c < last_c`), and both 16-byte loads
            // end by `c + REACH_BYTES`; the loads are unaligned ones. The shuffle masks are
            // 16 bytes each.
            let (low, high, low_mask, high_mask) = unsafe {
                (
                    _mm_loadu_si128(first.cast::<__m128i>()),
                    _mm_loadu_si128(second.cast::<__m128i>()),
                    _mm_loadu_si128(shuffles[0].as_ptr().cast::<__m128i>()),
                    _mm_loadu_si128(shuffles[1].as_ptr().cast::<__m128i>()),
                )
            };
            let deltas = _mm_or_si128(
                _mm_shuffle_epi8(low, low_mask),
                _mm_shuffle_epi8(high, high_mask),
            );
            // A lane of all ones is a five-byte slot, and an escape only if the slot's fifth
            // byte is all ones too: each lane's fifth byte, picked by the shuffles' byte-3
            // indices plus one (`0x80`, zero, stays zero), fills a lane for the same test.
            // Lanes of absent slots hold whatever follows the leaf: only present ones count.
            let all_ones = _mm_set1_epi32(-1);
            let ones = _mm_cmpeq_epi32(deltas, all_ones);
            // `$lazy`: the fifth bytes only for a group with a lane of all ones. Road
            // networks make such lanes without escapes (a vertex's last target `u + 1`, then
            // the next vertex's first, `u`) at random, and there a branch on them
            // mispredicts; elsewhere they are rare and the branch saves the work.
            let escapes = if $lazy && _mm_movemask_epi8(ones) & present == 0 {
                0
            } else {
                // SAFETY: `BYTE3` is 16 bytes; the load is an unaligned one.
                let byte3 = unsafe { _mm_loadu_si128(BYTE3.as_ptr().cast::<__m128i>()) };
                let one = _mm_set1_epi8(1);
                let fifth = _mm_or_si128(
                    _mm_shuffle_epi8(low, _mm_add_epi8(_mm_shuffle_epi8(low_mask, byte3), one)),
                    _mm_shuffle_epi8(high, _mm_add_epi8(_mm_shuffle_epi8(high_mask, byte3), one)),
                );
                _mm_movemask_epi8(_mm_and_si128(ones, _mm_cmpeq_epi32(fifth, all_ones))) & present
            };
            if escapes != 0 {
                break 'step false;
            }
            let sums = _mm_add_epi32(deltas, _mm_slli_si128::<4>(deltas));
            let sums = _mm_add_epi32(sums, _mm_slli_si128::<8>(sums));
            let targets = _mm_add_epi32(sums, lanes.base);
            if slots == 4 {
                // SAFETY: `dst <= last_dst`, so four slots are left; the store is an
                // unaligned one of four `u32`s.
                unsafe { _mm_storeu_si128(lanes.dst.cast::<__m128i>(), targets) };
                lanes.base = _mm_shuffle_epi32::<0xFF>(targets);
                // SAFETY: `dst <= last_dst`, so `dst + 4` is at most the slice's end; the
                // group ends by `used`.
                (lanes.dst, lanes.c) = unsafe { (lanes.dst.add(4), end) };
            } else {
                // The leaf's last group: only its present slots, one at a time (a copy
                // would call `memcpy`, and around a call the loop keeps its vectors on the
                // stack), leaving the rest of the slice as it was.
                let mut kept = [0u32; 4];
                // SAFETY: `kept` is 16 bytes; the store is an unaligned one.
                unsafe { _mm_storeu_si128(kept.as_mut_ptr().cast::<__m128i>(), targets) };
                for (slot, &target) in kept.iter().enumerate().take(slots) {
                    // SAFETY: `slot < slots < 4`, and four slots were left.
                    unsafe { lanes.dst.add(slot).write(target) };
                }
                let mask = BROADCAST[slots - 1].as_ptr().cast::<__m128i>();
                // SAFETY: the broadcast masks are 16 bytes each.
                let last = unsafe { _mm_loadu_si128(mask) };
                lanes.base = _mm_shuffle_epi8(targets, last);
                // SAFETY: `slots < 4` and four slots were left.
                lanes.dst = unsafe { lanes.dst.add(slots) };
                lanes.c = lanes.used;
            }
            true
        }
    }};
}

/// A decode in progress, its state in registers as addresses: the next control byte, the
/// last with `REACH_BYTES` of the leaf after it, the end of the leaf's used bytes, the next
/// slot of the slice and the last with four slots from it, and the previous target in every
/// lane; [`Lanes::finish`] writes it back.
pub(super) struct Lanes<'a, 'b> {
    c: *const u8,
    last_c: *const u8,
    used: *const u8,
    dst: *mut u32,
    last_dst: *mut u32,
    base: __m128i,
    /// The leaf, its number (for [`Lanes::next_leaf`]) and where the slice starts.
    leaf: &'a [u8],
    index: usize,
    out: *mut u32,
    d: &'b mut SliceDecode,
    /// The borrow the slice's addresses come from.
    borrows: PhantomData<&'b mut [u32]>,
}

impl<'a, 'b> Lanes<'a, 'b> {
    /// Starts a decode of `leaf` (number `index`, which uses `used` bytes) at `d`, into
    /// `out`.
    #[target_feature(enable = "ssse3")]
    #[inline]
    pub(super) fn new(
        leaf: &'a [u8],
        index: usize,
        used: usize,
        d: &'b mut SliceDecode,
        out: &'b mut [u32],
    ) -> Self {
        let at = leaf.as_ptr();
        let slots = out.as_mut_ptr();
        // With fewer than four slots left, `last_dst` is null, below `dst`: no group is taken.
        let last_dst = if out.len() - d.written >= 4 {
            slots.wrapping_add(out.len() - 4)
        } else {
            std::ptr::null_mut()
        };
        Self {
            c: at.wrapping_add(d.c),
            last_c: at.wrapping_add(used.min(leaf.len().saturating_sub(REACH_BYTES))),
            used: at.wrapping_add(used),
            dst: slots.wrapping_add(d.written),
            last_dst,
            base: _mm_set1_epi32(d.key as u32 as i32),
            leaf,
            index,
            out: slots,
            d,
            borrows: PhantomData,
        }
    }

    /// Goes on to the next leaf with keys (`next_leaf(j)`: leaf `j` and its used bytes,
    /// `None` past the last) if this one is decoded to its end and the slice has four slots
    /// left: writes the new leaf's head and stands at its first control byte. Returns
    /// whether it did. Decoding on from leaf to leaf here spares a pair decode its way out
    /// to the scalar code and back at every leaf's end.
    #[target_feature(enable = "ssse3")]
    #[inline]
    fn next_leaf(&mut self, next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>) -> bool {
        if self.c != self.used || self.dst > self.last_dst {
            return false;
        }
        let mut index = self.index;
        let (leaf, used) = loop {
            index += 1;
            match next_leaf(index) {
                None => return false,
                Some((_, 0)) => continue,
                Some(found) => break found,
            }
        };
        let head = read_head(leaf) as u32;
        // SAFETY: `dst <= last_dst`: four slots are left, and the head takes one.
        self.dst = unsafe {
            self.dst.write(head);
            self.dst.add(1)
        };
        self.base = _mm_set1_epi32(head as i32);
        let at = leaf.as_ptr();
        self.c = at.wrapping_add(HEAD_BYTES);
        self.last_c = at.wrapping_add(used.min(leaf.len().saturating_sub(REACH_BYTES)));
        self.used = at.wrapping_add(used);
        (self.leaf, self.index) = (leaf, index);
        true
    }

    /// Writes the state back: the next control byte, the count written, and the last
    /// target as the key's low half (the high half is left as it was, since only low
    /// halves are written); returns the leaf it stands in, its number and used bytes.
    #[target_feature(enable = "ssse3")]
    #[inline]
    pub(super) fn finish(self) -> (&'a [u8], usize, usize) {
        let low = _mm_cvtsi128_si32(self.base) as u32;
        self.d.key = (self.d.key & !0xFFFF_FFFF) | u64::from(low);
        // SAFETY: `c` and `used` lie in `leaf` (or at its end), and `dst` only moves forward
        // from inside `out`, to at most its end.
        let used = unsafe {
            self.d.c = self.c.offset_from(self.leaf.as_ptr()) as usize;
            self.d.written = self.dst.offset_from(self.out) as usize;
            self.used.offset_from(self.leaf.as_ptr()) as usize
        };
        (self.leaf, self.index, used)
    }
}

/// Decodes whole groups from `d` on into `out` while [`group_step`] takes them.
///
/// Callers outside SSSE3 code must check [`available`] first.
#[target_feature(enable = "ssse3")]
pub(super) fn groups_ssse3(leaf: &[u8], used: usize, d: &mut SliceDecode, out: &mut [u32]) {
    let mut lanes = Lanes::new(leaf, 0, used, d, out);
    while group_step!(&mut lanes, false) {}
    lanes.finish();
}

/// [`groups_ssse3`] for two decodes at once, a group of each per step, while both go on,
/// and from leaf to leaf (`next_leaf` as in [`Lanes::next_leaf`]): each group's position
/// waits on the previous group's control byte and its length (two dependent loads), so two
/// decodes in one loop overlap their waits.
///
/// Callers outside SSSE3 code must check [`available`] first.
#[target_feature(enable = "ssse3")]
pub(super) fn pair_ssse3<'a>(
    a: (&mut PairRun<'a>, &mut [u32]),
    b: (&mut PairRun<'a>, &mut [u32]),
    next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>,
) {
    let ((a, a_out), (b, b_out)) = (a, b);
    let mut first = Lanes::new(a.leaf, a.index, a.used, &mut a.d, a_out);
    let mut second = Lanes::new(b.leaf, b.index, b.used, &mut b.d, b_out);
    loop {
        while group_step!(&mut first, true) & group_step!(&mut second, true) {}
        // Both calls run: each decode at its leaf's end goes on to the next.
        if !(first.next_leaf(next_leaf) | second.next_leaf(next_leaf)) {
            break;
        }
    }
    (a.leaf, a.index, a.used) = first.finish();
    (b.leaf, b.index, b.used) = second.finish();
}

/// The shuffles of [`arc_groups_ssse3`], for a control byte whose group spans at most 16
/// bytes after it (one load): `low` takes each slot's low four bytes (all of a slot of 1 to
/// 3) into its 32-bit lane, zero-extended; `top` the bytes that must not all be zero for
/// the slot's code to be the shortest (the last byte of a slot of 1 to 3 bytes, the last
/// two of a five-byte one: its value is at least `2^24`); `high` a five-byte slot's fifth
/// byte (a jump of the source). Bytes not taken, and rows of longer groups, are `0x80`
/// (zero).
#[repr(align(16))]
struct ArcShuffles {
    low: [[u8; 16]; 256],
    top: [[u8; 16]; 256],
    high: [[u8; 16]; 256],
}

static ARC_SHUFFLES: ArcShuffles = arc_shuffle_table();

const fn arc_shuffle_table() -> ArcShuffles {
    let mut table = ArcShuffles {
        low: [[0x80u8; 16]; 256],
        top: [[0x80u8; 16]; 256],
        high: [[0x80u8; 16]; 256],
    };
    let mut ctrl = 0;
    while ctrl < 256 {
        if ARC_STEPS[ctrl] != NEVER {
            let mut offset = 0;
            let mut slot = 0;
            while slot < 4 {
                let len = LEN[(ctrl >> (2 * slot)) & 3];
                let lane = 4 * slot;
                let mut byte = 0;
                while byte < len && byte < 4 {
                    table.low[ctrl][lane + byte] = (offset + byte) as u8;
                    byte += 1;
                }
                if len == 5 {
                    table.top[ctrl][lane] = (offset + 3) as u8;
                    table.top[ctrl][lane + 1] = (offset + 4) as u8;
                    table.high[ctrl][lane] = (offset + 4) as u8;
                } else {
                    table.top[ctrl][lane] = (offset + len - 1) as u8;
                }
                offset += len;
                slot += 1;
            }
        }
        ctrl += 1;
    }
    table
}

/// For each control byte, one below the least difference each slot's code is the shortest
/// for (0, `2^8 - 1`, `2^16 - 1` for 1, 2 and 3 bytes): a slot of `n < 4` bytes holds the
/// shortest code of a nonzero difference exactly when its difference is above this. Rows
/// of control bytes with a five-byte slot are not used.
#[repr(align(16))]
struct ArcLeast([[i32; 4]; 256]);

static ARC_LEAST: ArcLeast = ArcLeast(per_slot([0, (1 << 8) - 1, (1 << 16) - 1, (1 << 24) - 1]));

/// [`ARC_STEPS`] of a group with a five-byte slot, over its length: such a group ends past
/// any leaf's end for the loop of groups of 1 to 3 byte slots (a slice on x86-64 holds
/// fewer than `2^57` bytes).
const WIDE: usize = 1 << 62;
/// [`ARC_STEPS`] of a group of more than 16 bytes, which [`arc_groups_ssse3`] never takes:
/// it ends past any leaf's end, and is not [`WIDE`].
const NEVER: usize = 1 << 63;

/// For each control byte: its group's length, the control byte included (so that the next
/// control byte is one add away, the step the check's loop waits on); `WIDE` added where a
/// slot has five bytes and the group's slots fit in 16 bytes; `NEVER` for longer groups.
static ARC_STEPS: [usize; 256] = arc_step_table();

const fn arc_step_table() -> [usize; 256] {
    let mut table = [0usize; 256];
    let mut ctrl = 0;
    while ctrl < 256 {
        let mut bytes = 0;
        let mut slot = 0;
        while slot < 4 {
            bytes += LEN[(ctrl >> (2 * slot)) & 3];
            slot += 1;
        }
        table[ctrl] = if bytes > 16 {
            NEVER
        } else if ctrl & (ctrl >> 1) & 0x55 != 0 {
            WIDE | (1 + bytes)
        } else {
            1 + bytes
        };
        ctrl += 1;
    }
    table
}

/// The bounds [`arc_step`] checks targets against, in every lane.
pub(super) struct ArcBounds {
    /// `n`, for targets of groups without a five-byte slot (exact and below `2^31`).
    bound: __m128i,
    /// `n` with its top bit flipped, for the targets of other groups (flipped too), so
    /// that a signed compare is an unsigned one.
    bound_flipped: __m128i,
}

impl ArcBounds {
    /// The bounds of [`ItemCheck::arcs_below`] `n`, if the SIMD check takes any group
    /// (`n <= ARC_VERTICES_MAX`).
    #[inline(always)]
    pub(super) fn new(n: u64) -> Option<Self> {
        // SAFETY: SSE2, part of x86-64.
        (n <= ARC_VERTICES_MAX).then(|| unsafe {
            Self {
                bound: _mm_set1_epi32(n as i32),
                bound_flipped: _mm_set1_epi32((n as u32 ^ 1 << 31) as i32),
            }
        })
    }
}

/// One leaf's check by [`arc_step`] in progress: the leaf's bytes, the next control byte
/// `c`, the offset `limit` every group taken ends by (whole, and with 16 bytes of the leaf
/// after its control byte for the load), and the key before the next group, its source and
/// target each in every lane; `taken` counts the keys taken.
#[derive(Clone, Copy)]
pub(super) struct ArcRun {
    at: *const u8,
    c: usize,
    limit: usize,
    source: __m128i,
    target: __m128i,
    taken: usize,
}

impl ArcRun {
    /// The check of `leaf` (using `used` bytes) from the control byte at `c` on, after
    /// `key` (which passed the check): a run that takes no group where `key`'s target is
    /// not below `n`, its source not below `2^31`, or no group fits before `limit`.
    #[inline(always)]
    pub(super) fn new(leaf: &[u8], used: usize, c: usize, key: u64, n: u64) -> Self {
        let (source, target) = (key >> 32, key & 0xFFFF_FFFF);
        let limit = used.min(leaf.len().saturating_sub(16));
        let takes = target < n && source < 1 << 31;
        // SAFETY: SSE2, part of x86-64.
        let (source, target) =
            unsafe { (_mm_set1_epi32(source as i32), _mm_set1_epi32(target as i32)) };
        Self {
            at: leaf.as_ptr(),
            c,
            limit: if takes { limit } else { 0 },
            source,
            target,
            taken: 0,
        }
    }

    /// Whether a group may be taken (`c < limit`), as [`arc_step`] needs before its loop.
    #[inline(always)]
    fn takes(&self) -> bool {
        self.c < self.limit
    }

    /// The next control byte, the last key taken (or the one it started after) and how
    /// many keys were taken.
    #[inline(always)]
    pub(super) fn finish(self) -> (usize, u64, usize) {
        // SAFETY: SSE2, part of x86-64.
        let (source, target) = unsafe {
            (
                _mm_cvtsi128_si32(self.source) as u32,
                _mm_cvtsi128_si32(self.target) as u32,
            )
        };
        (
            self.c,
            u64::from(source) << 32 | u64::from(target),
            self.taken,
        )
    }
}

/// Prefix sums of four 32-bit lanes, modulo `2^32`, by two shifted adds.
#[inline(always)]
fn prefix_sums(lanes: __m128i) -> __m128i {
    // SAFETY: SSE2, part of x86-64.
    unsafe {
        let sums = _mm_add_epi32(lanes, _mm_slli_si128::<4>(lanes));
        _mm_add_epi32(sums, _mm_slli_si128::<8>(sums))
    }
}

/// Takes the next group of an [`ArcRun`] if it is whole (ends by `limit`), spans at most
/// 16 bytes, gives each slot its shortest code, has no five-byte slot whose fifth byte is
/// all ones (every escape is one), and makes four keys that pass the check: targets below
/// the [`ArcBounds`] `n`, none equal to its source, and [`ItemCheck::rest`]; evaluates to
/// whether it did, leaving the run as it was where it did not. The run must take before
/// the loop of steps starts ([`ArcRun::takes`]). A macro, so that it is
/// inlined into the SIMD loops (a function with a target feature cannot be
/// `#[inline(always)]`), as [`group_step`] is.
///
/// A group's differences come out of one 16-byte load and shuffles, each slot's low four
/// bytes in a 32-bit lane; the targets are the previous target plus their prefix sums,
/// modulo `2^32`, as in [`groups_ssse3`]. Within one source's run (slots of 1 to 3 bytes,
/// the common group) the sums stay below `2^31`, since the target before is below `n` and
/// the group adds less than `2^26`: they are exact, compare as signed numbers, and never
/// carry into the source. A five-byte slot (the next source's first arc) adds its fifth
/// byte to the source, plus one where the target wrapped (the new target is below the
/// one before), a second prefix sum.
macro_rules! arc_step {
    ($run:expr, $bounds:expr, $check:expr) => {{
        let run: &mut ArcRun = $run;
        let bounds: &ArcBounds = $bounds;
        'step: {
            // SAFETY: `c <= limit <= leaf.len() - 16`: checked before the loop, and every
            // group taken ends by `limit`.
            let ctrl = usize::from(unsafe { *run.at.add(run.c) });
            let step = ARC_STEPS[ctrl];
            let mut end = run.c + step;
            // SAFETY (both loads of the group's bytes below): `end <= limit` for a group
            // taken, so `c + 1 + 16 <= end + 12 <= leaf.len()`; the loads are unaligned ones.
            if end <= run.limit {
                // SAFETY: as above; the tables' rows are 16 bytes.
                let (bytes, low, below) = unsafe {
                    (
                        _mm_loadu_si128(run.at.add(run.c + 1).cast::<__m128i>()),
                        _mm_loadu_si128(ARC_SHUFFLES.low[ctrl].as_ptr().cast::<__m128i>()),
                        _mm_loadu_si128(ARC_LEAST.0[ctrl].as_ptr().cast::<__m128i>()),
                    )
                };
                let deltas = _mm_shuffle_epi8(bytes, low);
                let targets = _mm_add_epi32(prefix_sums(deltas), run.target);
                let good = _mm_and_si128(
                    _mm_cmpgt_epi32(deltas, below),
                    _mm_cmpgt_epi32(bounds.bound, targets),
                );
                let good = _mm_andnot_si128(_mm_cmpeq_epi32(targets, run.source), good);
                if _mm_movemask_epi8(good) != 0xFFFF || !rest_passes($check, run.source, targets) {
                    break 'step false;
                }
                run.target = _mm_shuffle_epi32::<0xFF>(targets);
            } else {
                end = run.c + (step & 0xFF);
                if step & WIDE == 0 || end > run.limit {
                    break 'step false;
                }
                // SAFETY: as above; the tables' rows are 16 bytes.
                let (bytes, low, top, high) = unsafe {
                    (
                        _mm_loadu_si128(run.at.add(run.c + 1).cast::<__m128i>()),
                        _mm_loadu_si128(ARC_SHUFFLES.low[ctrl].as_ptr().cast::<__m128i>()),
                        _mm_loadu_si128(ARC_SHUFFLES.top[ctrl].as_ptr().cast::<__m128i>()),
                        _mm_loadu_si128(ARC_SHUFFLES.high[ctrl].as_ptr().cast::<__m128i>()),
                    )
                };
                let targets = _mm_add_epi32(prefix_sums(_mm_shuffle_epi8(bytes, low)), run.target);
                let high = _mm_shuffle_epi8(bytes, high);
                // The target before each: where a target is below it, the low halves
                // carried. (A signed compare: once every target is below `n`, all are
                // below `2^31`.)
                let before = _mm_alignr_epi8::<12>(targets, run.target);
                let carried = _mm_cmpgt_epi32(before, targets);
                let sources = _mm_add_epi32(prefix_sums(_mm_sub_epi32(high, carried)), run.source);
                let zero = _mm_setzero_si128();
                let bad = _mm_or_si128(
                    _mm_cmpeq_epi32(_mm_shuffle_epi8(bytes, top), zero),
                    _mm_cmpeq_epi32(high, _mm_set1_epi32(0xFF)),
                );
                let bad = _mm_or_si128(bad, _mm_cmpeq_epi32(sources, targets));
                // Sources stay below `2^31` (they grow by less than 2^10 a group).
                let bad = _mm_or_si128(bad, _mm_cmpgt_epi32(zero, sources));
                let flipped = _mm_xor_si128(targets, _mm_set1_epi32(i32::MIN));
                let below = _mm_cmpgt_epi32(bounds.bound_flipped, flipped);
                if _mm_movemask_epi8(_mm_andnot_si128(bad, below)) != 0xFFFF
                    || !rest_passes($check, sources, targets)
                {
                    break 'step false;
                }
                run.source = _mm_shuffle_epi32::<0xFF>(sources);
                run.target = _mm_shuffle_epi32::<0xFF>(targets);
            }
            run.c = end;
            run.taken += 4;
            true
        }
    }};
}

/// The graph's leaf check ([`super::check`]) for whole groups of arcs, from the control
/// byte at `c < used` on, after the key `key` (which passed `check`): takes groups while
/// [`arc_step`] does. Returns the next control byte, the last key taken and how many keys
/// were taken; anything else is left to the scalar check, which also names what does not
/// hold. Sources from `2^31` on, and `n` past [`ARC_VERTICES_MAX`], take nothing.
///
/// Callers outside SSSE3 code must check [`available`] first.
#[target_feature(enable = "ssse3")]
pub(super) fn arc_groups_ssse3<C: ItemCheck<GroupLeaf>>(
    leaf: &[u8],
    used: usize,
    c: usize,
    key: u64,
    check: &C,
) -> (usize, u64, usize) {
    let Some((n, bounds)) = check
        .arcs_below()
        .and_then(|n| Some((n, ArcBounds::new(n)?)))
    else {
        return (c, key, 0);
    };
    let mut run = ArcRun::new(leaf, used, c, key, n);
    if run.takes() {
        while arc_step!(&mut run, &bounds, check) {}
    }
    run.finish()
}

/// [`arc_groups_ssse3`] for two leaves at once, a group of each per step, while both
/// take theirs: each group's position waits on the previous group's control byte and
/// its length (two dependent loads), so two checks in one loop overlap their waits, as
/// [`pair_ssse3`] does for decodes. Returns whether each run could go on: `false` for
/// one that stopped at a group it leaves to the scalar check (or could take none).
///
/// Callers outside SSSE3 code must check [`available`] first.
#[target_feature(enable = "ssse3")]
pub(super) fn arc_pair_ssse3<C: ItemCheck<GroupLeaf>>(
    a: &mut ArcRun,
    b: &mut ArcRun,
    bounds: &ArcBounds,
    check: &C,
) -> (bool, bool) {
    let (mut first, mut second) = (*a, *b);
    if !(first.takes() && second.takes()) {
        return (first.takes(), second.takes());
    }
    let stopped = loop {
        let took = (
            arc_step!(&mut first, bounds, check),
            arc_step!(&mut second, bounds, check),
        );
        if !(took.0 & took.1) {
            break took;
        }
    };
    (*a, *b) = (first, second);
    stopped
}

/// Whether the four keys of a group, their sources and targets in lanes, pass
/// [`ItemCheck::rest`] (nothing to compute where it is always true).
#[inline(always)]
fn rest_passes<C: ItemCheck<GroupLeaf>>(check: &C, sources: __m128i, targets: __m128i) -> bool {
    let (mut high, mut low) = ([0u32; 4], [0u32; 4]);
    // SAFETY: `high` and `low` are 16 bytes each; the stores are unaligned ones (SSE2).
    unsafe {
        _mm_storeu_si128(high.as_mut_ptr().cast::<__m128i>(), sources);
        _mm_storeu_si128(low.as_mut_ptr().cast::<__m128i>(), targets);
    }
    let arc = |i: usize| u64::from(high[i]) << 32 | u64::from(low[i]);
    check.rest(arc(0)) & check.rest(arc(1)) & check.rest(arc(2)) & check.rest(arc(3))
}
