//! Leaf encodings: how one PMA leaf lays out its sorted keys in bytes.
//!
//! Every encoding keeps a leaf packed left (its keys in the first `used` bytes, the rest
//! free) and starts with the head, the leaf's smallest key, as eight little-endian bytes, so
//! a leaf's head can be read without decoding and the same PMA code serves all of them:
//!
//! ```text
//! PlainLeaf:    | k0 (8 B) | k1 (8 B) | k2 (8 B) | ... | free |
//! DeltaLeaf:    | k0 (8 B) | code(k1-k0) | code(k2-k1) | ... | free |   (codes: 1–10 B each)
//! DeltaMapLeaf: | k0 (8 B) | v0 (8 B) | code(k1-k0) | v1 (8 B) | ... | free |
//! GroupLeaf:    | k0 (8 B) | ctrl | d1 | d2 | d3 | d4 | ctrl | ... | free |   (group varint)
//! GroupMapLeaf: | k0 (8 B) | v0 (8 B) | ctrl | d1 | v1 | ... | d4 | v4 | ctrl | ... | free |
//! ```
//!
//! Functions reading a leaf take a slice that starts at the leaf and may extend past it (into
//! the next leaves and the array's padding); only `used` bytes are decoded, and the extra bytes
//! let the word-at-a-time decoder skip its bounds fallback. Functions writing a leaf take
//! exactly the leaf's bytes, whose length is its capacity.
//!
//! This file holds the codec trait, [`LeafCodec`], and the head helpers the codecs share;
//! each codec has its own file: `plain.rs` ([`PlainLeaf`]), `delta.rs` ([`DeltaLeaf`]),
//! `delta_map.rs` ([`DeltaMapLeaf`]), `group/mod.rs` ([`GroupLeaf`], the unweighted graph's)
//! and `group/map.rs` ([`GroupMapLeaf`], the weighted graph's).

mod delta;
mod delta_map;
mod group;
mod plain;

pub use self::delta::DeltaLeaf;
pub use self::delta_map::DeltaMapLeaf;
pub use self::group::{GroupLeaf, GroupMapLeaf};
pub use self::plain::PlainLeaf;

/// Bytes of a leaf's uncompressed head.
pub(crate) const HEAD_BYTES: usize = 8;

/// The result of inserting one key into a leaf in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafInsert {
    /// The key was already there with this value; nothing changed.
    Present,
    /// The key was already there; its value was replaced in place (maps only).
    Replaced,
    /// The key was added; the leaf now uses this many bytes.
    Inserted(usize),
    /// The key is absent but does not fit; nothing changed.
    Full,
}

/// The result of removing one key from a leaf in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafRemove {
    /// The key was not there; nothing changed.
    Absent,
    /// The key was removed; the leaf now uses this many bytes (0: it is empty).
    Removed(usize),
    /// The key is there, but the leaf without it does not fit in place (its neighbours'
    /// differences merge into a longer code); nothing changed.
    Full,
}

/// What a leaf holds, as [`LeafCodec::check_encoding`] found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeafKeys {
    /// How many keys.
    pub count: usize,
    /// The first key (the head).
    pub first: u64,
    /// The last key.
    pub last: u64,
}

/// Where a run decoded by [`LeafCodec::low_halves_pair`] starts: a leaf (as the read
/// functions take it), its number, the bytes it uses, and the first entry's offset and
/// predecessor.
#[derive(Debug, Clone, Copy)]
pub struct SliceRun<'a> {
    /// The leaf and whatever follows it in its page.
    pub leaf: &'a [u8],
    /// The leaf's number in its array: the run goes on in the leaves after it.
    pub index: usize,
    /// Bytes the leaf uses.
    pub used: usize,
    /// Offset of the first entry to decode.
    pub offset: usize,
    /// The key before it (unused at offset 0).
    pub prev: u64,
}

mod sealed {
    pub trait Sealed {}
}

/// The check of every item of an array rebuilt from untrusted bytes
/// ([`IntoPma`](super::IntoPma), [`LeafCodec::check_encoding`]): any `Fn(Item) -> bool`,
/// or [`ArcCheck`], a graph's, whose shape a codec may use to check whole groups of keys
/// at once.
pub trait ItemCheck<C: LeafCodec + ?Sized>: Sync {
    /// Whether `item` may be stored.
    fn ok(&self, item: C::Item) -> bool;

    /// `Some(n)` where [`ItemCheck::ok`] is exactly: the key's low half (an arc's target)
    /// below `n`, its high half (the source) not equal to it, and [`ItemCheck::rest`].
    #[inline(always)]
    fn arcs_below(&self) -> Option<u64> {
        None
    }

    /// What [`ItemCheck::ok`] checks besides the bounds of [`ItemCheck::arcs_below`].
    #[inline(always)]
    fn rest(&self, item: C::Item) -> bool {
        self.ok(item)
    }
}

impl<C: LeafCodec + ?Sized, F: Fn(C::Item) -> bool + Sync> ItemCheck<C> for F {
    #[inline(always)]
    fn ok(&self, item: C::Item) -> bool {
        self(item)
    }
}

/// A graph's [`ItemCheck`] on keys `source << 32 | target`: the target below `n`, no self
/// loop, and `rest` on the item.
#[derive(Debug, Clone, Copy)]
pub struct ArcCheck<F> {
    n: u64,
    rest: F,
}

impl<F> ArcCheck<F> {
    /// Arcs between `n` vertices, each item also passing `rest`.
    pub fn new(n: u64, rest: F) -> Self {
        Self { n, rest }
    }
}

impl<C: LeafCodec + ?Sized, F: Fn(C::Item) -> bool + Sync> ItemCheck<C> for ArcCheck<F> {
    #[inline(always)]
    fn ok(&self, item: C::Item) -> bool {
        let key = C::key(item);
        let (u, v) = (key >> 32, key & 0xffff_ffff);
        v < self.n && u != v && (self.rest)(item)
    }

    #[inline(always)]
    fn arcs_below(&self) -> Option<u64> {
        Some(self.n)
    }

    #[inline(always)]
    fn rest(&self, item: C::Item) -> bool {
        (self.rest)(item)
    }
}

/// A leaf encoding for [`Pma`](super::Pma). Implemented by [`DeltaLeaf`] (the CPMA's byte
/// codes), [`GroupLeaf`] (group varint, the graph's), [`GroupMapLeaf`] (group varint with
/// values, the weighted graph's), [`DeltaMapLeaf`] (byte codes with values) and
/// [`PlainLeaf`] (the uncompressed PMA); sealed.
pub trait LeafCodec: sealed::Sealed + Send + Sync + 'static {
    /// What the array stores: a key (`u64`, a set) or a key with its value (a map).
    type Item: Copy + Default + PartialEq + Send + Sync + std::fmt::Debug + 'static;

    /// Short name used in reports (`"cpma"`, `"pma"`).
    const NAME: &'static str;

    /// Bytes of a leaf's first entry (its uncompressed head).
    const HEAD: usize;

    /// Whether items carry a value beside the key (a map): reading a run's first item
    /// then reads the leaf, even where its key is known.
    const VALUES: bool = false;

    /// Free bytes a leaf's upper density bound keeps so that any redistribution fits (see
    /// `density.rs`): at least the largest entry, plus a head's extra bytes, plus 2.
    const SLACK: usize;

    /// The key of an item.
    fn key(item: Self::Item) -> u64;

    /// Bytes `item` takes when it follows the key `prev` inside a leaf.
    fn entry_bytes(prev: u64, item: Self::Item) -> usize;

    /// What `item` costs after `prev`, in quarter bytes, when leaves are cut by size (a
    /// head costs `4 * HEAD`): a leaf of entries costing `c` in all takes at most
    /// `c / 4 + 1` bytes. Codecs with per-group bytes charge each entry its share.
    #[inline(always)]
    fn entry_cost(prev: u64, item: Self::Item) -> u64 {
        4 * Self::entry_bytes(prev, item) as u64
    }

    /// Writes `items` (non-empty, keys strictly increasing) into `out`, which is long
    /// enough; returns the bytes written.
    fn encode(items: &[Self::Item], out: &mut [u8]) -> usize;

    /// Writes `items` (non-empty, keys strictly increasing) into `out` if they fit and
    /// returns the bytes written; `None` (with `out` partly overwritten) if they do not.
    fn encode_bounded(items: &[Self::Item], out: &mut [u8]) -> Option<usize>;

    /// The leaf byte that a read of a run known by its first key first touches, when that
    /// key's entry ends at `end` (an offset as [`LeafCodec::entry_end`] gives it): what a
    /// prefetch loads. The entry at `end` by default; a map reads the first key's value.
    #[inline(always)]
    fn first_read_byte(end: usize) -> usize {
        end
    }

    /// Calls `f` on each item of the leaf in order until it returns `false`; returns
    /// whether every item was visited.
    fn for_each_while(leaf: &[u8], used: usize, f: impl FnMut(Self::Item) -> bool) -> bool;

    /// Calls `f` on the items from the entry at byte `offset` (whose predecessor's key is
    /// `prev`) on, until it returns `false`; returns whether the leaf's end was reached.
    fn for_each_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        f: impl FnMut(Self::Item) -> bool,
    ) -> bool;

    /// Calls `f` on at most `count` keys from the entry at byte `offset` (predecessor `prev`)
    /// until it returns `false`; returns how many keys it visited and whether `f` stopped.
    fn for_count_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        count: usize,
        f: &mut impl FnMut(Self::Item) -> bool,
    ) -> (usize, bool);

    /// Writes the low 32 bits of the keys from the entry at byte `offset` (predecessor
    /// `prev`) on into `out`, until it is full or the leaf ends; returns how many it wrote.
    /// A graph's keys are `source << 32 | target`, so this decodes arc targets in bulk.
    fn low_halves_from(
        leaf: &[u8],
        used: usize,
        offset: usize,
        prev: u64,
        out: &mut [u32],
    ) -> usize {
        let mut slots = out.iter_mut();
        let count = slots.len();
        Self::for_count_from(leaf, used, offset, prev, count, &mut |item| {
            if let Some(slot) = slots.next() {
                *slot = Self::key(item) as u32;
            }
            true
        })
        .0
    }

    /// [`LeafCodec::low_halves_from`] for two runs at once, each into its own slice until
    /// it is full or the leaves end, going on from leaf to leaf (`next_leaf(j)`: leaf `j`
    /// and its used bytes, `None` past the last); returns how many each wrote. A codec whose
    /// decode is a chain of dependent loads can keep two chains in flight. The default
    /// decodes one run after the other.
    fn low_halves_pair<'a>(
        runs: [SliceRun<'a>; 2],
        outs: [&mut [u32]; 2],
        next_leaf: impl Fn(usize) -> Option<(&'a [u8], usize)>,
    ) -> [usize; 2] {
        let mut written = [0; 2];
        for ((run, out), written) in runs.into_iter().zip(outs).zip(&mut written) {
            let mut place = Some((run.leaf, run.used));
            let (mut index, mut offset, mut prev) = (run.index, run.offset, run.prev);
            while let Some((leaf, used)) = place.filter(|_| *written < out.len()) {
                *written += Self::low_halves_from(leaf, used, offset, prev, &mut out[*written..]);
                (index, offset, prev) = (index + 1, 0, 0);
                place = next_leaf(index);
            }
        }
        written
    }

    /// The byte after the entry at `offset` (the head's end for an offset inside the head).
    fn entry_end(leaf: &[u8], offset: usize) -> usize;

    /// The item whose entry ends at byte `end` and whose key is `key` (known to the caller):
    /// the key itself for sets; maps read the value, the only call of `leaf`.
    fn item_ending_at<'a>(leaf: impl FnOnce() -> &'a [u8], end: usize, key: u64) -> Self::Item;

    /// Calls `f(key, offset, prev)` on every entry: the key, the byte offset of its entry and
    /// the key before it in the leaf (0 for the head).
    fn for_each_entry(leaf: &[u8], used: usize, f: impl FnMut(u64, usize, u64));

    /// The first item whose key is `>= target` in the leaf, if any.
    fn lower_bound(leaf: &[u8], used: usize, target: u64) -> Option<Self::Item>;

    /// The leaf's largest key.
    fn last(leaf: &[u8], used: usize) -> Option<u64>;

    /// Inserts `item` in place (replacing the value of an item with the same key).
    fn insert(leaf: &mut [u8], used: usize, item: Self::Item) -> LeafInsert;

    /// Removes `key` in place.
    fn remove(leaf: &mut [u8], used: usize, key: u64) -> LeafRemove;

    /// Bytes the encoding of `items` (non-empty, keys strictly increasing) takes.
    fn encoded_len(items: &[Self::Item]) -> usize {
        Self::HEAD
            + items
                .windows(2)
                .map(|w| Self::entry_bytes(Self::key(w[0]), w[1]))
                .sum::<usize>()
    }

    /// Sorts `items` by key, stably (items with equal keys keep their order).
    fn sort_items(items: &mut Vec<Self::Item>) {
        use rayon::slice::ParallelSliceMut;
        items.par_sort_by_key(|&item| Self::key(item));
    }

    /// Checks a leaf read from outside (a file) in one decode: that its `used` bytes (at
    /// least [`LeafCodec::HEAD`]; `leaf` holds at least 8 bytes past them) are exactly what
    /// [`LeafCodec::encode`] writes for some keys in strictly increasing order, each item
    /// passing `item_ok`. Returns what the leaf holds, or what does not hold.
    ///
    /// `None` where the codec has no check of its own: the caller then decodes the leaf and
    /// measures the encoding of what it decoded against `used`.
    #[inline]
    fn check_encoding(
        leaf: &[u8],
        used: usize,
        item_ok: &impl ItemCheck<Self>,
    ) -> Option<Result<LeafKeys, String>> {
        let _ = (leaf, used, item_ok);
        None
    }

    /// [`LeafCodec::check_encoding`] of two leaves `(leaf, used)`, each as there, with the
    /// same results; a codec may check the two side by side, so that the dependency chains
    /// of their decodes overlap.
    #[inline]
    fn check_encoding_pair(
        a: (&[u8], usize),
        b: (&[u8], usize),
        item_ok: &impl ItemCheck<Self>,
    ) -> Option<[Result<LeafKeys, String>; 2]> {
        check_each::<Self>(a, b, item_ok)
    }

    /// Appends the leaf's items to `out`.
    fn decode_into(leaf: &[u8], used: usize, out: &mut Vec<Self::Item>) {
        Self::for_each_while(leaf, used, |item| {
            out.push(item);
            true
        });
    }
}

/// A map leaf's in-place insert by decoding it, editing and encoding it again (a leaf is at
/// most a few kilobytes): a present key's value replaced, an absent key added if the leaf
/// still fits (else nothing written).
pub(super) fn map_insert<C: LeafCodec<Item = (u64, u64)>>(
    leaf: &mut [u8],
    used: usize,
    item: (u64, u64),
) -> LeafInsert {
    let mut items = Vec::with_capacity(used / 9 + 1);
    C::decode_into(leaf, used, &mut items);
    let at = items.partition_point(|&(key, _)| key < item.0);
    if items.get(at).is_some_and(|&(key, _)| key == item.0) {
        if items[at].1 == item.1 {
            return LeafInsert::Present;
        }
        // Only the value's bytes change: the encoding keeps its length.
        items[at].1 = item.1;
        C::encode(&items, leaf);
        return LeafInsert::Replaced;
    }
    items.insert(at, item);
    if C::encoded_len(&items) > leaf.len() {
        return LeafInsert::Full;
    }
    LeafInsert::Inserted(C::encode(&items, leaf))
}

/// A map leaf's in-place removal by decoding, editing and encoding it again. A removal
/// takes out the value's eight bytes, more than the merge of the two differences around
/// the key can add, so it fits (`Full` is only the guard of a leaf that would not).
pub(super) fn map_remove<C: LeafCodec<Item = (u64, u64)>>(
    leaf: &mut [u8],
    used: usize,
    key: u64,
) -> LeafRemove {
    let mut items = Vec::with_capacity(used / 9 + 1);
    C::decode_into(leaf, used, &mut items);
    let at = items.partition_point(|&(k, _)| k < key);
    if items.get(at).is_none_or(|&(k, _)| k != key) {
        return LeafRemove::Absent;
    }
    items.remove(at);
    if items.is_empty() {
        return LeafRemove::Removed(0);
    }
    if C::encoded_len(&items) > leaf.len() {
        return LeafRemove::Full;
    }
    LeafRemove::Removed(C::encode(&items, leaf))
}

/// A map leaf's first item whose key is `>= target`, by a scan.
pub(super) fn map_lower_bound<C: LeafCodec<Item = (u64, u64)>>(
    leaf: &[u8],
    used: usize,
    target: u64,
) -> Option<(u64, u64)> {
    let mut found = None;
    C::for_each_while(leaf, used, |item| {
        if item.0 >= target {
            found = Some(item);
        }
        found.is_none()
    });
    found
}

/// A map leaf's largest key, by a scan.
pub(super) fn map_last<C: LeafCodec<Item = (u64, u64)>>(leaf: &[u8], used: usize) -> Option<u64> {
    let mut last = None;
    C::for_each_while(leaf, used, |(key, _)| {
        last = Some(key);
        true
    });
    last
}

#[inline(always)]
fn read_head(leaf: &[u8]) -> u64 {
    let bytes: [u8; 8] = leaf[..HEAD_BYTES]
        .try_into()
        .expect("a leaf holds its 8-byte head");
    u64::from_le_bytes(bytes)
}

#[inline(always)]
fn write_head(leaf: &mut [u8], key: u64) {
    leaf[..HEAD_BYTES].copy_from_slice(&key.to_le_bytes());
}

/// [`LeafCodec::check_encoding`] of two leaves `(leaf, used)`, one after the other: the
/// pair check of a codec that does not check two side by side.
pub(crate) fn check_each<C: LeafCodec + ?Sized>(
    a: (&[u8], usize),
    b: (&[u8], usize),
    item_ok: &impl ItemCheck<C>,
) -> Option<[Result<LeafKeys, String>; 2]> {
    Some([
        C::check_encoding(a.0, a.1, item_ok)?,
        C::check_encoding(b.0, b.1, item_ok)?,
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// Applies `ops` (insert if true, else remove) to one leaf of `capacity` bytes and
    /// compares it with a `BTreeSet` after each.
    pub(super) fn check_ops<C: LeafCodec<Item = u64>>(ops: &[(bool, u64)], capacity: usize) {
        let mut leaf = vec![0u8; capacity];
        let mut used = 0;
        let mut oracle = BTreeSet::new();
        for &(insert, key) in ops {
            if insert {
                match C::insert(&mut leaf, used, key) {
                    LeafInsert::Present => assert!(oracle.contains(&key)),
                    LeafInsert::Replaced => panic!("a set never replaces"),
                    LeafInsert::Inserted(now) => {
                        assert!(oracle.insert(key));
                        used = now;
                    }
                    LeafInsert::Full => {
                        assert!(!oracle.contains(&key));
                        let mut all: Vec<u64> = oracle.iter().copied().collect();
                        all.push(key);
                        all.sort_unstable();
                        assert!(C::encoded_len(&all) > capacity);
                    }
                }
            } else {
                match C::remove(&mut leaf, used, key) {
                    LeafRemove::Removed(now) => {
                        assert!(oracle.remove(&key));
                        used = now;
                    }
                    LeafRemove::Absent => assert!(!oracle.contains(&key)),
                    LeafRemove::Full => {
                        assert!(oracle.contains(&key));
                        let rest: Vec<u64> = oracle.iter().copied().filter(|&k| k != key).collect();
                        assert!(C::encoded_len(&rest) > capacity);
                    }
                }
            }
            let keys: Vec<u64> = oracle.iter().copied().collect();
            let mut decoded = Vec::new();
            C::decode_into(&leaf, used, &mut decoded);
            assert_eq!(decoded, keys);
            if !keys.is_empty() {
                assert_eq!(used, C::encoded_len(&keys));
                // What the edits leave is what the encoder writes: a checkpoint of it
                // passes the check of a leaf read back.
                let mut padded = leaf[..used].to_vec();
                padded.resize(used + 16, 0);
                if let Some(found) = C::check_encoding(&padded, used, &|_| true) {
                    let want = (keys.len(), keys[0], keys[keys.len() - 1]);
                    assert_eq!(found.map(|k| (k.count, k.first, k.last)), Ok(want));
                }
            }
            assert_eq!(C::last(&leaf, used), keys.last().copied());
            assert_eq!(
                C::lower_bound(&leaf, used, key),
                oracle.range(key..).next().copied()
            );
        }
    }

    #[test]
    fn head_replacement_and_extreme_keys() {
        let ops = [
            (true, 100),
            (true, 0),
            (true, u64::MAX),
            (false, 0),
            (true, 1),
            (false, u64::MAX),
        ];
        check_ops::<DeltaLeaf>(&ops, 64);
        check_ops::<PlainLeaf>(&ops, 64);
    }
}
