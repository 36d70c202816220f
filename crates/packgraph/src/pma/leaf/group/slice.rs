//! Decoding a group leaf's targets into a slice: the bulk read behind
//! [`LeafCodec::low_halves_from`] and [`LeafCodec::low_halves_pair`].
//!
//! Whole groups go four targets at a time: by SSSE3 byte shuffles where the CPU has them
//! (`x86.rs`), else by [`group_into`], their scalar twin, which also takes what the SIMD
//! loop leaves. A run that starts inside a group, a group holding an escape and the
//! slice's last slots go through the key-at-a-time [`scan`]. Two runs decode side by side
//! in [`low_halves_two`]: each group's position waits on the previous group's control byte
//! and length, a chain of two loads that one run alone cannot hide. The SIMD pair loop
//! also goes on from leaf to leaf by itself; the scalar code takes over only at escapes,
//! near a page's end and at the slices' ends.

use super::{full_group, read_head, scan, GroupLeaf, FIRST};
use crate::pma::leaf::{LeafCodec, SliceRun};

/// A decode of low halves into a slice, standing at a control byte: the next group's
/// offset, the key before it and how many targets are written.
pub(super) struct SliceDecode {
    pub(super) c: usize,
    pub(super) key: u64,
    pub(super) written: usize,
}

/// The start of [`low_halves`]: the head and the rest of the group a run starts inside of,
/// one key at a time, into `out` from slot `written`. `Err` with the count written (from
/// `out`'s start) if the leaf or the slice ends first.
#[inline(always)]
fn low_halves_prefix(
    leaf: &[u8],
    used: usize,
    offset: usize,
    prev: u64,
    out: &mut [u32],
    mut written: usize,
) -> Result<SliceDecode, usize> {
    if used == 0 || written == out.len() {
        return Err(written);
    }
    let (mut pos, mut key) = (offset, prev);
    if pos < FIRST {
        key = read_head(leaf);
        out[written] = key as u32;
        (pos, written) = (FIRST, written + 1);
    }
    if pos & 3 != 0 {
        // Finish the group the run starts in, then go on from the next control byte.
        let want = (4 - (pos & 3)).min(out.len() - written);
        let visited;
        (visited, key) = scan_low_halves(leaf, used, pos, key, &mut out[written..written + want]);
        written += visited;
        if visited < want || written == out.len() {
            return Err(written);
        }
        pos = GroupLeaf::entry_end(leaf, pos | 3);
    }
    Ok(SliceDecode {
        c: pos >> 2,
        key,
        written,
    })
}

/// One whole group into `out` with no per-key checks; `false` (nothing done) at the leaf's
/// end, with fewer than four slots left, or at a short or escaped group.
#[inline(always)]
fn group_into<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    d: &mut SliceDecode,
    out: &mut [u32],
) -> bool {
    if d.c >= used || out.len() - d.written < 4 {
        return false;
    }
    let Some(([d0, d1, d2, d3], end)) = full_group::<PADDED>(leaf, used, d.c) else {
        return false;
    };
    let k0 = d.key.wrapping_add(d0);
    let k1 = k0.wrapping_add(d1);
    let k2 = k1.wrapping_add(d2);
    let k3 = k2.wrapping_add(d3);
    let slots: &mut [u32; 4] = (&mut out[d.written..d.written + 4])
        .try_into()
        .expect("four slots");
    *slots = [k0 as u32, k1 as u32, k2 as u32, k3 as u32];
    d.key = k3;
    d.written += 4;
    d.c = end;
    true
}

/// The end of [`low_halves`]: what [`group_into`] leaves (a short last group, escapes, the
/// slice's last slots) through [`scan`]; returns the count written.
#[inline(always)]
fn low_halves_rest(leaf: &[u8], used: usize, d: &SliceDecode, out: &mut [u32]) -> usize {
    let mut written = d.written;
    if d.c < used && written < out.len() {
        written += scan_low_halves(leaf, used, 4 * d.c, d.key, &mut out[written..]).0;
    }
    written
}

/// [`LeafCodec::low_halves_from`]: whole groups four targets at a time, with no per-key
/// checks; a run that starts or ends inside a group, a short last group and escapes go
/// through [`scan`]. `PADDED` as in [`scan_groups`].
#[inline(always)]
pub(super) fn low_halves<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    offset: usize,
    prev: u64,
    out: &mut [u32],
    simd: bool,
) -> usize {
    match low_halves_prefix(leaf, used, offset, prev, out, 0) {
        Err(written) => written,
        Ok(mut d) => {
            groups_into::<PADDED>(leaf, used, &mut d, out, simd);
            low_halves_rest(leaf, used, &d, out)
        }
    }
}

/// Whether the SIMD group decode runs on this machine.
#[inline(always)]
pub(super) fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        super::x86::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whole groups from `d` on while [`group_into`] takes them: by SIMD shuffles where `simd`
/// (the caller checked [`simd_available`]), else by [`group_into`], its scalar twin, which
/// also takes the groups the SIMD loop leaves (near a page's end, or a possible escape).
#[inline(always)]
fn groups_into<const PADDED: bool>(
    leaf: &[u8],
    used: usize,
    d: &mut SliceDecode,
    out: &mut [u32],
    simd: bool,
) {
    loop {
        #[cfg(target_arch = "x86_64")]
        if simd {
            // SAFETY: `simd` is true only where the CPU has SSSE3.
            unsafe { super::x86::groups_ssse3(leaf, used, d, out) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = simd;
        if !group_into::<PADDED>(leaf, used, d, out) {
            return;
        }
    }
}

/// One run of [`LeafCodec::low_halves_pair`]: its leaf, the leaf's number and used bytes,
/// and the decode in it.
pub(super) struct PairRun<'a> {
    pub(super) leaf: &'a [u8],
    pub(super) index: usize,
    pub(super) used: usize,
    pub(super) d: SliceDecode,
}

impl<'a> PairRun<'a> {
    /// The run from `run` on, past its partial first group; `Err` with the count written
    /// once `out` is full or the leaves end.
    fn start(
        run: SliceRun<'a>,
        out: &mut [u32],
        next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>,
    ) -> Result<Self, usize> {
        let (mut leaf, mut index, mut used) = (run.leaf, run.index, run.used);
        let (mut offset, mut prev, mut written) = (run.offset, run.prev, 0);
        loop {
            match low_halves_prefix(leaf, used, offset, prev, out, written) {
                Ok(d) => {
                    return Ok(Self {
                        leaf,
                        index,
                        used,
                        d,
                    })
                }
                Err(done) if done == out.len() => return Err(done),
                Err(done) => written = done,
            }
            index += 1;
            (leaf, used) = next_leaf(index).ok_or(written)?;
            (offset, prev) = (0, 0);
        }
    }

    /// Takes the next group by [`group_into`], or, where it cannot, decodes the rest of the
    /// leaf through [`scan`] and starts the next leaf; `Err` with the count written once
    /// `out` is full or the leaves end.
    fn advance(
        &mut self,
        out: &mut [u32],
        next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>,
    ) -> Result<(), usize> {
        let padded = self.used.saturating_add(8) <= self.leaf.len();
        let took = if padded {
            group_into::<true>(self.leaf, self.used, &mut self.d, out)
        } else {
            group_into::<false>(self.leaf, self.used, &mut self.d, out)
        };
        if took {
            return Ok(());
        }
        let written = low_halves_rest(self.leaf, self.used, &self.d, out);
        if written == out.len() {
            return Err(written);
        }
        let (leaf, used) = next_leaf(self.index + 1).ok_or(written)?;
        let next = SliceRun {
            leaf,
            index: self.index + 1,
            used,
            offset: 0,
            prev: 0,
        };
        // `start` counts from 0: hand it the slice past what is written.
        let mut run = Self::start(next, &mut out[written..], next_leaf).map_err(|n| written + n)?;
        run.d.written += written;
        *self = run;
        Ok(())
    }

    /// Takes groups through SIMD shuffles while they come whole, where `simd`.
    #[inline(always)]
    fn simd_groups(&mut self, out: &mut [u32], simd: bool) {
        #[cfg(target_arch = "x86_64")]
        if simd {
            // SAFETY: `simd` is true only where the CPU has SSSE3.
            unsafe { super::x86::groups_ssse3(self.leaf, self.used, &mut self.d, out) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (out, simd);
    }
}

/// [`LeafCodec::low_halves_pair`] for group leaves: the two runs' groups alternate in one
/// loop, by SIMD shuffles where the CPU has them. Each group's position waits on the
/// previous group's control byte and its length (two dependent loads); with two runs in
/// flight, one's waits overlap the other's.
pub(super) fn low_halves_two<'a>(
    runs: [SliceRun<'a>; 2],
    outs: [&mut [u32]; 2],
    next_leaf: impl Fn(usize) -> Option<(&'a [u8], usize)>,
    simd: bool,
) -> [usize; 2] {
    let [a_out, b_out] = outs;
    let [a, b] = runs;
    let mut a = match PairRun::start(a, a_out, &next_leaf) {
        Ok(run) => run,
        Err(written) => return [written, low_halves_one(b, b_out, &next_leaf, simd)],
    };
    let mut b = match PairRun::start(b, b_out, &next_leaf) {
        Ok(run) => run,
        Err(written) => return [finish_one(a, a_out, &next_leaf, simd), written],
    };
    loop {
        #[cfg(target_arch = "x86_64")]
        if simd {
            // SAFETY: `simd` is true only where the CPU has SSSE3.
            unsafe { super::x86::pair_ssse3((&mut a, a_out), (&mut b, b_out), &next_leaf) };
        }
        // One of them stopped (or SIMD is off): a step of each without SIMD.
        match (a.advance(a_out, &next_leaf), b.advance(b_out, &next_leaf)) {
            (Ok(()), Ok(())) => continue,
            (Err(a_written), Ok(())) => return [a_written, finish_one(b, b_out, &next_leaf, simd)],
            (Ok(()), Err(b_written)) => return [finish_one(a, a_out, &next_leaf, simd), b_written],
            (Err(a_written), Err(b_written)) => return [a_written, b_written],
        }
    }
}

/// One run of [`low_halves_two`] from its start, alone.
fn low_halves_one<'a>(
    run: SliceRun<'a>,
    out: &mut [u32],
    next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>,
    simd: bool,
) -> usize {
    match PairRun::start(run, out, next_leaf) {
        Ok(run) => finish_one(run, out, next_leaf, simd),
        Err(written) => written,
    }
}

/// The rest of one run of [`low_halves_two`], alone.
fn finish_one<'a>(
    mut run: PairRun<'a>,
    out: &mut [u32],
    next_leaf: &impl Fn(usize) -> Option<(&'a [u8], usize)>,
    simd: bool,
) -> usize {
    loop {
        run.simd_groups(out, simd);
        if let Err(written) = run.advance(out, next_leaf) {
            return written;
        }
    }
}

/// The low halves of the keys from `pos` (predecessor `prev`) into `out` through [`scan`];
/// returns how many it wrote and the last key written (`prev` if none).
fn scan_low_halves(
    leaf: &[u8],
    used: usize,
    pos: usize,
    prev: u64,
    out: &mut [u32],
) -> (usize, u64) {
    let mut slots = out.iter_mut();
    let mut last = prev;
    let (visited, _) = scan(leaf, used, pos, prev, slots.len(), &mut |key| {
        if let Some(slot) = slots.next() {
            *slot = key as u32;
        }
        last = key;
        true
    });
    (visited, last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pma::leaf::LeafCodec;
    use proptest::prelude::*;

    /// [`low_halves_two`], with and without SIMD, against the keys: `keys` in leaves of
    /// `per_leaf` keys laid out one after another as in a page with `tail` bytes after the
    /// last, an empty leaf after every `empty_after` (none if 0), two runs from entries
    /// picked by `starts`, into slices of `lens` slots.
    fn check_pair(
        keys: &[u64],
        (per_leaf, empty_after): (usize, usize),
        tail: usize,
        starts: (prop::sample::Index, prop::sample::Index),
        lens: (usize, usize),
    ) {
        let mut chunks: Vec<&[u64]> = Vec::new();
        for (i, chunk) in keys.chunks(per_leaf).enumerate() {
            chunks.push(chunk);
            if empty_after > 0 && i % empty_after == empty_after - 1 {
                chunks.push(&[]);
            }
        }
        let leaf_bytes = chunks
            .iter()
            .filter(|c| !c.is_empty())
            .map(|c| GroupLeaf::encoded_len(c))
            .max()
            .unwrap_or(0);
        let mut page = vec![0xA5u8; chunks.len() * leaf_bytes + tail];
        let mut used = Vec::new();
        for (j, chunk) in chunks.iter().enumerate() {
            let leaf = &mut page[j * leaf_bytes..(j + 1) * leaf_bytes];
            used.push(if chunk.is_empty() {
                0
            } else {
                GroupLeaf::encode(chunk, leaf)
            });
        }
        // Every entry: (leaf, offset, predecessor, index of its key).
        let mut entries = Vec::new();
        for (j, &u) in used.iter().enumerate() {
            GroupLeaf::for_each_entry(&page[j * leaf_bytes..], u, |_, pos, prev| {
                entries.push((j, pos, prev, entries.len()));
            });
        }
        assert_eq!(entries.len(), keys.len());
        let next_leaf = |j: usize| (j < used.len()).then(|| (&page[j * leaf_bytes..], used[j]));
        let run = |at: prop::sample::Index| {
            let (j, offset, prev, key) = entries[at.index(entries.len())];
            let run = SliceRun {
                leaf: &page[j * leaf_bytes..],
                index: j,
                used: used[j],
                offset,
                prev,
            };
            (run, key)
        };
        let ((a, a_key), (b, b_key)) = (run(starts.0), run(starts.1));
        let want = |from: usize, len: usize| -> Vec<u32> {
            keys[from..].iter().take(len).map(|&k| k as u32).collect()
        };
        for simd in [false, simd_available()] {
            let mut a_out = vec![0xDEAD_BEEF_u32; lens.0];
            let mut b_out = vec![0xDEAD_BEEF_u32; lens.1];
            let [a_written, b_written] =
                low_halves_two([a, b], [&mut a_out, &mut b_out], next_leaf, simd);
            let (a_want, b_want) = (want(a_key, lens.0), want(b_key, lens.1));
            assert_eq!(&a_out[..a_written], &a_want[..], "run a, simd {simd}");
            assert_eq!(&b_out[..b_written], &b_want[..], "run b, simd {simd}");
            assert!(a_out[a_written..]
                .iter()
                .chain(&b_out[b_written..])
                .all(|&x| x == 0xDEAD_BEEF));
        }
    }

    fn sorted(mut keys: Vec<u64>) -> Vec<u64> {
        keys.sort_unstable();
        keys.dedup();
        keys
    }

    proptest! {
        #[test]
        fn pair_decode_matches_the_keys(
            raw in proptest::collection::vec((0u32..64, any::<u32>(), 0u8..4), 1..600),
            per_leaf in 1usize..70,
            empty_after in 0usize..4,
            tail in prop_oneof![Just(0usize), Just(8), Just(32)],
            starts in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            lens in (0usize..700, 0usize..700),
        ) {
            // Graph-shaped keys (vertex in the high half); the low halves' widths vary.
            let keys = sorted(raw.into_iter().map(|(v, t, width)| {
                u64::from(v) << 32 | u64::from(t >> (8 * u32::from(width)))
            }).collect());
            check_pair(&keys, (per_leaf, empty_after), tail, starts, lens);
        }

    }
}
