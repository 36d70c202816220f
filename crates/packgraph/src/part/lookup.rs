//! Batched lookups: up to [`LANES`] keys walk down the tree together, one step of each key
//! in turn, and every step prefetches what that key's next step reads (the child node, a
//! node 256's chunk, a value node's keys around the interpolation guess, the value found).
//! A single lookup waits on three or four cache misses one after another; here the misses
//! of sixteen keys overlap, as in group prefetching for hash joins (Chen, Ailamaki, Gibbons
//! and Mowry, "Improving hash join performance through prefetching", 2004).
//!
//! The walk is the one of [`Part::get`] (`point::entry_in`) cut into steps; the tests check
//! the two agree on present keys, missing keys, keys of other lengths and keys that are
//! prefixes of others.

use super::node::{header_of, Chunk, Inner, NodeRef, ValueNode};
use super::point::past_header;
use super::Part;

/// Keys in flight at once. Sixteen covers the misses a core keeps outstanding (10-12 line
/// fill buffers) with room for keys that finish early.
const LANES: usize = 16;

/// Where one key's walk stands.
enum Lane<'a, V> {
    /// At `node` (prefetched), `depth` key bytes consumed.
    Node(&'a NodeRef<V>, usize),
    /// At slot `slot` of a node 256's chunk (prefetched); `depth` counts the child's byte.
    Chunk(&'a Chunk<V>, usize, usize),
    /// In a value node whose likely keys are prefetched.
    Search(&'a ValueNode<V>),
    /// Found at entry `i` of a value node, the value prefetched.
    Found(&'a ValueNode<V>, usize),
    /// Finished: the result is written.
    Done,
}

impl<V: Clone> Part<V> {
    /// The values of `keys`, in order: [`Part::get`] of each, with the cache misses of
    /// different keys overlapped (several times the rate of one `get` after another on a
    /// map much larger than the cache; `packgraph bench part` measures both).
    pub fn get_many<'a, K: AsRef<[u8]>>(&'a self, keys: &[K]) -> Vec<Option<&'a V>> {
        let mut out = Vec::with_capacity(keys.len());
        let Some(root) = self.root.as_ref() else {
            out.resize(keys.len(), None);
            return out;
        };
        let mut found = [None; LANES];
        for group in keys.chunks(LANES) {
            let n = group.len();
            let slices: [&[u8]; LANES] =
                std::array::from_fn(|i| group.get(i).map_or(&[][..], AsRef::as_ref));
            walk(root, &slices[..n], &mut found[..n]);
            out.extend_from_slice(&found[..n]);
        }
        out
    }

    /// [`Part::get_many`] of `u64` keys (big-endian, as [`Part::insert_u64`] stores them).
    pub fn get_many_u64(&self, keys: &[u64]) -> Vec<Option<&V>> {
        let keys: Vec<[u8; 8]> = keys.iter().map(|k| k.to_be_bytes()).collect();
        self.get_many(&keys)
    }
}

/// Looks up `keys` (at most [`LANES`]) below `root` into `found`.
fn walk<'a, V: Clone>(root: &'a NodeRef<V>, keys: &[&[u8]], found: &mut [Option<&'a V>]) {
    debug_assert!(keys.len() <= LANES && keys.len() == found.len());
    let mut lanes: [Lane<'a, V>; LANES] = std::array::from_fn(|_| Lane::Done);
    for lane in &mut lanes[..keys.len()] {
        *lane = Lane::Node(root, 0);
    }
    let mut active = keys.len();
    while active > 0 {
        for (i, lane) in lanes[..keys.len()].iter_mut().enumerate() {
            if matches!(lane, Lane::Done) {
                continue;
            }
            if let Some(result) = step(lane, keys[i]) {
                found[i] = result;
                *lane = Lane::Done;
                active -= 1;
            }
        }
    }
}

/// Takes one step of a key's walk: moves `lane` on (prefetching what the next step reads)
/// or returns the result.
#[inline]
fn step<'a, V: Clone>(lane: &mut Lane<'a, V>, key: &[u8]) -> Option<Option<&'a V>> {
    match *lane {
        Lane::Node(node, depth) => {
            if let NodeRef::Leaf(l) = node {
                return Some((l.key.as_slice() == key).then_some(&l.value));
            }
            let header = header_of(node).expect("inner and value nodes have headers");
            let (depth, byte) = match past_header(header, key, depth) {
                Ok(next) => next,
                Err(answer) => return Some(answer.map(|(_, v)| v)),
            };
            let child = match node {
                NodeRef::Leaf(_) => unreachable!("leaves returned above"),
                NodeRef::N4(n) => n.child(byte),
                NodeRef::N16(n) => n.child(byte),
                NodeRef::N48(n) => n.child(byte),
                NodeRef::N256(n) => {
                    let chunk = n.chunk(byte);
                    prefetch(chunk.as_ptr());
                    *lane = Lane::Chunk(chunk, usize::from(byte & 15), depth + 1);
                    return None;
                }
                NodeRef::Values(n) => {
                    prefetch(n.likely_key(key));
                    *lane = Lane::Search(n);
                    return None;
                }
            };
            enter(lane, child, depth + 1)
        }
        Lane::Chunk(chunk, slot, depth) => enter(lane, chunk[slot].as_ref(), depth),
        Lane::Search(n) => match n.position(key) {
            Some(i) => {
                prefetch(n.value(i));
                *lane = Lane::Found(n, i);
                None
            }
            None => Some(None),
        },
        Lane::Found(n, i) => Some(Some(n.value(i))),
        Lane::Done => unreachable!("finished lanes take no steps"),
    }
}

/// Moves `lane` to `child` at `depth` and prefetches it; a missing child ends the walk.
#[inline]
fn enter<'a, V: Clone>(
    lane: &mut Lane<'a, V>,
    child: Option<&'a NodeRef<V>>,
    depth: usize,
) -> Option<Option<&'a V>> {
    let Some(child) = child else {
        return Some(None);
    };
    prefetch(child.id() as *const u8);
    *lane = Lane::Node(child, depth);
    None
}

/// Asks the cache for the line holding `address` without waiting for it.
#[inline(always)]
fn prefetch<T>(address: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint: it reads no memory the program can observe and does not
    // fault on any address, so any pointer value is sound (SSE, which provides it, is part
    // of the x86_64 baseline).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(address.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}
