//! [`GroupLeaf`]'s check of a leaf read from a file ([`LeafCodec::check_encoding`]): one
//! pass over the groups that decodes each one as the scans do and checks that its bytes are
//! the ones the encoder writes for the keys they decode to.
//!
//! A leaf passes exactly when its `used` bytes equal `encode(keys)` for the strictly
//! increasing keys it decodes to, so that every operation on it meets a leaf the encoder
//! could have written:
//!
//! * every group but the last holds four slots; the last one ends exactly at `used`, and
//!   its unused slots have code 0 (a control byte alone is not a group);
//! * every slot lies within `used` and has the shortest code for its difference: an
//!   escape only for a difference of at least `2^40 - 1`;
//! * every difference is at least 1 and no key wraps past `u64::MAX`.
//!
//! Whole groups without escapes take the fast path: the four differences at once, as
//! the scans read them, each tested once against both bounds of its code
//! ([`shortest_group`]): at least the least difference its code is the shortest for
//! ([`LEAST`], one row per control byte: a slot of `n` bytes holds less than `2^(8n)`, so
//! its code is the shortest exactly when the difference needs more bytes than the next
//! shorter code has, and every difference is at least 1), and not the escape;
//! their sum checked for a key wrapping past `u64::MAX`, and `item_ok` on the four keys,
//! all combined without a branch per key. A leaf's last group, when it is short, is
//! taken the same way ([`shortest_last_group`]: the slots it has end exactly at `used`,
//! the others have code 0). Anything else (escapes, a failed check) goes slot by slot,
//! which also names what does not hold.
//!
//! A graph's check ([`ItemCheck::arcs_below`]: targets below `n`, no self loops) goes
//! faster still where the CPU has SSSE3: whole groups of at most 16 bytes, four keys in
//! 32-bit lanes at once (`x86::arc_groups_ssse3`), until a group it does not take, which
//! the scalar path above checks before handing back; the scalar path is its twin, and the
//! tests run both. Two leaves are checked side by side ([`check_pair`], through
//! [`LeafCodec::check_encoding_pair`](crate::pma::LeafCodec::check_encoding_pair)): one
//! SIMD loop takes a group of each per step, so that the two chains of control byte,
//! length and next control byte overlap, as the slice decode's pairs do.

use super::{
    code_of, group_at, last_group_at, load, per_slot, read_head, GroupLeaf, ESCAPE, ESCAPED_BYTES,
    HEAD_BYTES, LEN, MASK,
};
use crate::pma::leaf::{ItemCheck, LeafKeys};

/// The largest vertex count whose arcs the SIMD path of a graph's check takes
/// (`x86::arc_groups_ssse3`): a target below it plus the four differences of a group of 1
/// to 3 byte slots (each below `2^24`) stays below `2^31`, so that the targets are exact in
/// 32-bit lanes, compare as signed numbers and never carry into the source.
pub(super) const ARC_VERTICES_MAX: u64 = 1 << 30;

/// The least difference each length code is the shortest code for (and at least 1): a
/// difference below `LEAST_BY_CODE[c]` fits in a shorter code than `c`.
const LEAST_BY_CODE: [u64; 4] = [1, 1 << 8, 1 << 16, 1 << 24];

/// For each control byte, [`LEAST_BY_CODE`] of its four slots' codes.
static LEAST: [[u64; 4]; 256] = per_slot(LEAST_BY_CODE);

/// How many differences from [`LEAST_BY_CODE`] on each length code is the shortest code
/// for without being an escape: up to `2^(8n)` for a slot of `n < 5` bytes, up to the
/// escape `2^40 - 1` for the five-byte code.
const SPAN_BY_CODE: [u64; 4] = [
    (1 << 8) - 1,
    (1 << 16) - (1 << 8),
    (1 << 24) - (1 << 16),
    ESCAPE - (1 << 24),
];

/// For each control byte, [`SPAN_BY_CODE`] of its four slots' codes.
static SPAN: [[u64; 4]; 256] = per_slot(SPAN_BY_CODE);

/// The four differences of the whole group whose control byte is at `c < used` and the
/// next group's control offset, if each difference has the shortest code and none is an
/// escape (`d - LEAST` below `SPAN`: one test a slot, both bounds at once); `None`
/// otherwise, or for a short group (the leaf's last).
#[inline(always)]
fn shortest_group<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], usize)> {
    let (d, ctrl, end) = group_at::<PADDED>(leaf, used, c)?;
    let (least, span) = (&LEAST[ctrl], &SPAN[ctrl]);
    let shortest = (d[0].wrapping_sub(least[0]) < span[0])
        & (d[1].wrapping_sub(least[1]) < span[1])
        & (d[2].wrapping_sub(least[2]) < span[2])
        & (d[3].wrapping_sub(least[3]) < span[3]);
    shortest.then_some((d, end))
}

/// [`shortest_group`] for the leaf's last group when it is short ([`last_group_at`]): its
/// differences (0 in the unused slots) and its number of slots, if each slot it has holds
/// the shortest code and none is an escape; `None` otherwise.
#[inline(always)]
fn shortest_last_group<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
) -> Option<([u64; 4], usize)> {
    let (d, ctrl, slots) = last_group_at::<PADDED>(leaf, used, c)?;
    let (least, span) = (&LEAST[ctrl], &SPAN[ctrl]);
    let shortest = (0..slots).all(|i| d[i].wrapping_sub(least[i]) < span[i]);
    shortest.then_some((d, slots))
}

/// The last of the keys after `key` by the differences `d` (each below `2^40`), if none
/// wraps past `u64::MAX` and each passes `item_ok`.
#[inline(always)]
fn keys_pass(
    key: u64,
    [d0, d1, d2, d3]: [u64; 4],
    item_ok: &impl ItemCheck<GroupLeaf>,
) -> Option<u64> {
    // Each difference is below 2^40 (no escape): their sum does not overflow.
    let (k3, wrapped) = key.overflowing_add(d0 + d1 + d2 + d3);
    let k0 = key.wrapping_add(d0);
    let k1 = k0.wrapping_add(d1);
    let k2 = k1.wrapping_add(d2);
    let valid = item_ok.ok(k0) & item_ok.ok(k1) & item_ok.ok(k2) & item_ok.ok(k3);
    (!wrapped & valid).then_some(k3)
}

/// [`LeafCodec::check_encoding`](crate::pma::LeafCodec::check_encoding) for a leaf of
/// `used >= HEAD_BYTES` bytes; `PADDED`: `leaf` holds at least 8 bytes past `used`.
/// `simd` (the caller checked [`simd_available`](super::slice::simd_available)): a graph's
/// check ([`ItemCheck::arcs_below`]) takes the groups of arcs within one source's run by
/// SSSE3 shuffles (`x86.rs`), whose twin is the scalar check here.
pub(super) fn check<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    item_ok: &impl ItemCheck<GroupLeaf>,
    simd: bool,
) -> Result<LeafKeys, String> {
    let head = check_head(leaf, used, item_ok)?;
    let (last, count) = check_from::<PADDED>(leaf, used, (HEAD_BYTES, head, 1), item_ok, simd)?;
    Ok(LeafKeys {
        count,
        first: head,
        last,
    })
}

/// The leaf's head, if `used` fits the leaf and the head passes `item_ok`.
#[inline(always)]
fn check_head(
    leaf: &[u8],
    used: usize,
    item_ok: &impl ItemCheck<GroupLeaf>,
) -> Result<u64, String> {
    if used < HEAD_BYTES || used > leaf.len() {
        return Err(format!("uses {used} bytes of a {}-byte leaf", leaf.len()));
    }
    let head = read_head(leaf);
    if !item_ok.ok(head) {
        return Err(format!("item {head} is not valid here"));
    }
    Ok(head)
}

/// [`check`] from the control byte at `c` on, after the key `key` (which passed), `count`
/// keys so far: the last key and the count.
#[inline(always)]
fn check_from<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    (mut c, mut key, mut count): (usize, u64, usize),
    item_ok: &impl ItemCheck<GroupLeaf>,
    simd: bool,
) -> Result<(u64, usize), String> {
    let arcs = simd && item_ok.arcs_below().is_some();
    while c < used {
        #[cfg(target_arch = "x86_64")]
        if arcs {
            let taken;
            // SAFETY: `simd` is true only where the CPU has SSSE3; `key` passed `item_ok`.
            (c, key, taken) = unsafe { super::x86::arc_groups_ssse3(leaf, used, c, key, item_ok) };
            count += taken;
            if c >= used {
                break;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = arcs;
        c = scalar_step::<PADDED>(leaf, used, c, (&mut key, &mut count), item_ok)?;
    }
    Ok((key, count))
}

/// Checks the group whose control byte is at `c < used` without SIMD: whole (or the
/// leaf's short last group) and with the shortest codes at once where it can, else slot
/// by slot ([`check_group`]); returns the next group's control offset, or what does not
/// hold.
#[inline(always)]
fn scalar_step<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    c: usize,
    (key, count): (&mut u64, &mut usize),
    item_ok: &impl ItemCheck<GroupLeaf>,
) -> Result<usize, String> {
    if let Some((d, end)) = shortest_group::<PADDED>(leaf, used, c) {
        if let Some(last) = keys_pass(*key, d, item_ok) {
            (*key, *count) = (last, *count + 4);
            return Ok(end);
        }
    } else if let Some((d, slots)) = shortest_last_group::<PADDED>(leaf, used, c) {
        // The unused slots' differences are 0: their keys repeat the last one.
        if let Some(last) = keys_pass(*key, d, item_ok) {
            (*key, *count) = (last, *count + slots);
            return Ok(used);
        }
    }
    check_group(leaf, used, c, (key, count), item_ok)
}

/// One leaf's check in progress in [`check_pair`]: the next control byte, the last key
/// and the count so far.
#[cfg(target_arch = "x86_64")]
struct Walk<'a> {
    leaf: &'a [u8],
    used: usize,
    head: u64,
    c: usize,
    key: u64,
    count: usize,
}

#[cfg(target_arch = "x86_64")]
impl<'a> Walk<'a> {
    /// The check of `leaf` (using `used` bytes) past its head, if the head passes.
    #[inline(always)]
    fn start((leaf, used): (&'a [u8], usize), item_ok: &impl ItemCheck<GroupLeaf>) -> Option<Self> {
        let head = check_head(leaf, used, item_ok).ok()?;
        Some(Self {
            leaf,
            used,
            head,
            c: HEAD_BYTES,
            key: head,
            count: 1,
        })
    }

    fn keys(&self) -> LeafKeys {
        LeafKeys {
            count: self.count,
            first: self.head,
            last: self.key,
        }
    }
}

/// [`check`] of two graph leaves `(leaf, used)` side by side, their groups taken by one
/// SSSE3 loop (`x86::arc_pair_ssse3`) while both go on; the groups it leaves go through
/// the scalar step, and once one leaf is done the other goes on alone. Any leaf that does
/// not pass is checked again by [`check`] alone, so that results and messages are
/// exactly [`check`]'s.
///
/// Callers check [`simd_available`](super::slice::simd_available) first, and both leaves
/// hold at least 8 bytes past their `used` (the padded check).
#[cfg(target_arch = "x86_64")]
pub(super) fn check_pair(
    a: (&[u8], usize),
    b: (&[u8], usize),
    item_ok: &impl ItemCheck<GroupLeaf>,
) -> [Result<LeafKeys, String>; 2] {
    use super::x86::{arc_pair_ssse3, ArcBounds, ArcRun};
    let alone = |(leaf, used): (&[u8], usize)| check::<true>(leaf, used, item_ok, true);
    let singles = || [alone(a), alone(b)];
    let Some((n, bounds)) = item_ok
        .arcs_below()
        .and_then(|n| Some((n, ArcBounds::new(n)?)))
    else {
        return singles();
    };
    let (Some(mut x), Some(mut y)) = (Walk::start(a, item_ok), Walk::start(b, item_ok)) else {
        return singles();
    };
    while x.c < x.used && y.c < y.used {
        let mut first = ArcRun::new(x.leaf, x.used, x.c, x.key, n);
        let mut second = ArcRun::new(y.leaf, y.used, y.c, y.key, n);
        // SAFETY: the caller checked that the CPU has SSSE3; both keys passed `item_ok`.
        let took = unsafe { arc_pair_ssse3(&mut first, &mut second, &bounds, item_ok) };
        for (w, run, took) in [(&mut x, first, took.0), (&mut y, second, took.1)] {
            let taken;
            (w.c, w.key, taken) = run.finish();
            w.count += taken;
            if !took && w.c < w.used {
                let step =
                    scalar_step::<true>(w.leaf, w.used, w.c, (&mut w.key, &mut w.count), item_ok);
                match step {
                    Ok(c) => w.c = c,
                    Err(_) => return singles(),
                }
            }
        }
    }
    let rest = |w: &mut Walk<'_>| {
        (w.key, w.count) =
            check_from::<true>(w.leaf, w.used, (w.c, w.key, w.count), item_ok, true)?;
        Ok::<_, String>(w.keys())
    };
    match (rest(&mut x), rest(&mut y)) {
        (Ok(kx), Ok(ky)) => [Ok(kx), Ok(ky)],
        _ => singles(),
    }
}

/// Checks the group whose control byte is at `c < used` slot by slot, going on from the
/// key `last` (`count` keys so far); returns the next group's control offset, or what does
/// not hold.
#[inline(never)]
fn check_group(
    leaf: &[u8],
    used: usize,
    c: usize,
    (last, count): (&mut u64, &mut usize),
    item_ok: &impl ItemCheck<GroupLeaf>,
) -> Result<usize, String> {
    let ctrl = usize::from(leaf[c]);
    let mut p = c + 1;
    if p >= used {
        return Err(format!(
            "the control byte at byte {c} ends the leaf without a difference"
        ));
    }
    for slot in 0..4 {
        if p == used {
            if ctrl >> (2 * slot) != 0 {
                return Err(format!(
                    "the last group's control byte {ctrl:#04x} at byte {c} gives a length to \
                     slot {slot} past the leaf's end"
                ));
            }
            return Ok(p);
        }
        let code = (ctrl >> (2 * slot)) & 3;
        let past = |len: usize| {
            format!("the difference at byte {p} runs past the {used} bytes used ({len} bytes)")
        };
        if p + LEN[code] > used {
            return Err(past(LEN[code]));
        }
        let mut delta = load(leaf, p) & MASK[code];
        let len = if code == 3 && delta == ESCAPE {
            if p + ESCAPED_BYTES > used {
                return Err(past(ESCAPED_BYTES));
            }
            delta = load(leaf, p + 5);
            if delta < ESCAPE {
                return Err(format!(
                    "the difference {delta} at byte {p} is escaped but fits in {} bytes",
                    LEN[code_of(delta)]
                ));
            }
            ESCAPED_BYTES
        } else {
            if code_of(delta) != code {
                return Err(format!(
                    "the difference {delta} at byte {p} takes {} bytes where {} do",
                    LEN[code],
                    LEN[code_of(delta)]
                ));
            }
            LEN[code]
        };
        let key = last.wrapping_add(delta);
        if key <= *last {
            return Err(format!("key {key} after {last}"));
        }
        if !item_ok.ok(key) {
            return Err(format!("item {key} is not valid here"));
        }
        (*last, *count, p) = (key, *count + 1, p + len);
    }
    Ok(p)
}

#[cfg(test)]
mod tests;
