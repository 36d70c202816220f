//! The persistent adaptive radix tree (PART): an ordered map from byte-string keys to
//! values whose versions share structure.
//!
//! Follows Ankur Dave et al., "PART: Persistent Adaptive Radix Trees" (sections 3.1–3.3):
//!
//! * an adaptive radix tree (ART) with inner nodes of 4, 16, 48 and 256 children, path
//!   compression (each inner node holds the bytes its only path skips) and lazy leaf
//!   expansion (a leaf holds its whole key, so a lone key needs no inner nodes);
//! * persistence by path copying with reference-counted nodes: [`Part::clone`] (the paper's
//!   *snapshot*) copies one pointer; an update walks from the root and changes a node in
//!   place when only the updated version holds it and copies it first otherwise
//!   ([`std::sync::Arc::make_mut`] on the child slot), so between two snapshots each node
//!   is copied at most once;
//! * keys compare as byte strings; a key that is a prefix of another sorts first, and is held
//!   by the inner node where it ends. `u64` keys are stored big-endian
//!   ([`Part::insert_u64`]) so that iteration is numeric order;
//! * value nodes (our departure from the paper, for its "small leaves inline" advice): a
//!   run of up to 256 keys of one length under one path — the lower levels of a map of
//!   fixed-length ids — is held in two sorted arrays (keys back to back, values) instead of
//!   a leaf allocation per key and inner nodes above them. Copying one for a new version is
//!   a copy of the arrays with no reference count to touch; it becomes an inner node over
//!   the same keys when it would pass 256 keys or meets a key of another length. Measured
//!   on random 4-byte keys, this made the map several times smaller and its scans over
//!   ten times faster (see CHANGELOG).
//!
//! Every inner node counts the entries below it, so a subtree's size is known without
//! walking it. The invariants the code keeps and relies on are listed in `check.rs` and
//! checked by [`Part::check_invariants`]. Left for later: a node arena (nodes come from the
//! global allocator, so `compact` and bulk building give traversal order only within each
//! node size).
//!
//! Where things are: the node kinds in `node/` (`inner.rs`, `values.rs`); point operations
//! (get, insert, remove and the shape repairs after a removal) in `point.rs`; sorted
//! batches in `batch.rs`; bulk building in traversal order and `compact` in `build.rs`;
//! batched lookups with prefetching in `lookup.rs`; iteration and range seeks in
//! `iter.rs`; the self-check in `check.rs`; incremental checkpoints (section 4.1) in
//! `checkpoint.rs`.

mod batch;
mod build;
mod check;
mod checkpoint;
mod iter;
mod lookup;
mod node;
mod point;
#[cfg(test)]
mod tests;

pub use self::checkpoint::Checkpoint;
pub use self::iter::{Iter, Range};
use self::node::NodeRef;

/// A persistent ordered map from byte strings to `V`.
///
/// # Examples
/// ```
/// use packgraph::part::Part;
///
/// let mut map = Part::new();
/// map.insert(b"apple", 1);
/// map.insert(b"app", 2);
/// let before = map.clone(); // a snapshot: O(1)
/// map.insert(b"banana", 3);
/// map.remove(b"app");
/// assert_eq!(before.get(b"app"), Some(&2));
/// assert_eq!(map.get(b"app"), None);
/// let keys: Vec<Vec<u8>> = map.iter().map(|(k, _)| k.to_vec()).collect();
/// assert_eq!(keys, [b"apple".to_vec(), b"banana".to_vec()]);
/// ```
pub struct Part<V> {
    root: Option<NodeRef<V>>,
    len: usize,
}

impl<V> Clone for Part<V> {
    /// A snapshot: shares the whole tree (one reference-count increment).
    fn clone(&self) -> Self {
        Self {
            root: self.root.clone(),
            len: self.len,
        }
    }
}

impl<V> Default for Part<V> {
    fn default() -> Self {
        Self { root: None, len: 0 }
    }
}

impl<V: std::fmt::Debug + Clone> std::fmt::Debug for Part<V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

/// Errors of the PART layer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PartError {
    /// A broken internal invariant, found by [`Part::check_invariants`].
    #[error("PART invariant broken at {}: {what}", key_path(.path))]
    Invariant {
        /// Where: the key bytes leading from the root to the broken node (the node's own
        /// compressed path not included), or the offending stored key.
        path: Vec<u8>,
        /// What was wrong.
        what: String,
    },
}

/// `path` for a message: its bytes in hex, or "the root" when empty.
fn key_path(path: &[u8]) -> String {
    if path.is_empty() {
        return "the root".into();
    }
    format!("key path {}", hex(path))
}

/// Key bytes for a message, in hex: `[07 00 ff]`.
fn hex(bytes: &[u8]) -> String {
    let bytes: Vec<String> = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("[{}]", bytes.join(" "))
}

/// Whether a slot keeps its node after a removal below it.
#[derive(PartialEq, Eq)]
enum After {
    Keep,
    Delete,
}

impl<V: Clone> Part<V> {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The map of the tree under `root`, its length read from the root's entry count.
    fn from_root(root: Option<NodeRef<V>>) -> Self {
        let len = root.as_ref().map_or(0, NodeRef::entries);
        Self { root, len }
    }
}
