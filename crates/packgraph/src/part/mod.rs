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
//!   the same keys when it would pass 256 keys or meets a key of another length. At 1e7
//!   random 4-byte keys this took the map from 101 to 14 bytes per entry and scans from
//!   8 to 124 million keys/s.
//!
//! Incremental checkpoints (section 4.1) are in `checkpoint.rs`, hashed keys (section 3.5,
//! [`HashedPart`], off unless chosen) in `hashed.rs`; sorted batches, bulk building in
//! traversal order, union and intersection by tree shape in `bulk.rs`. Every inner node
//! counts the entries below it, so a subtree's size is known without walking it. Left for
//! later: a node arena (nodes come from the global allocator, so `compact` and bulk
//! building give traversal order only within each node size).

mod bulk;
mod checkpoint;
mod hashed;
mod node;
#[cfg(test)]
mod tests;

use std::ops::Bound;
use std::sync::Arc;

pub use self::checkpoint::Checkpoint;
pub use self::hashed::HashedPart;
use self::node::{move_into, Inner, Key, Leaf, Node16, Node256, Node4, Node48, NodeRef, ValueNode};

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

/// What an inner node's insert step asks its slot's owner to do.
enum Step<V> {
    Done(Option<V>),
    /// The compressed path differs from the key at this offset: split it.
    Split(usize, V),
    /// No room for a new child: grow the node, then retry.
    Full(V),
    /// A value node meets a key that goes deeper: make it an inner node, then retry.
    Expand(V),
}

/// Whether a slot keeps its node after a removal below it.
#[derive(PartialEq, Eq)]
enum After {
    Keep,
    Delete,
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn leaf<V>(key: &[u8], value: V) -> Arc<Leaf<V>> {
    Arc::new(Leaf {
        key: Key::new(key),
        value,
    })
}

/// Runs `$body` with `$n` bound to the inner node behind `$slot` (an `&mut Arc<_>`),
/// `$leaf` for a leaf, and `$vals` for a value node.
macro_rules! dispatch_mut {
    ($slot:expr, $n:ident => $body:expr, $l:ident => $leaf:expr, $v:ident => $vals:expr) => {
        match $slot {
            NodeRef::Leaf($l) => $leaf,
            NodeRef::N4($n) => $body,
            NodeRef::N16($n) => $body,
            NodeRef::N48($n) => $body,
            NodeRef::N256($n) => $body,
            NodeRef::Values($v) => $vals,
        }
    };
}

/// The header of the node behind `slot`, copied first if another version holds the node;
/// `None` for a leaf.
fn header_mut<V: Clone>(slot: &mut NodeRef<V>) -> Option<&mut node::Header<V>> {
    dispatch_mut!(slot, n => Some(Arc::make_mut(n).header_mut()), _l => None, v => Some(&mut Arc::make_mut(v).header))
}
pub(crate) use dispatch_mut;

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

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        bulk::entry_in(self.root.as_ref()?, key, 0).map(|(_, v)| v)
    }

    /// The value of `key`, to change in place (the nodes on its path are copied first if
    /// another version holds them).
    pub fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        // Search first, so that a missing key copies nothing.
        if !self.contains_key(key) {
            return None;
        }
        get_mut_in(self.root.as_mut()?, key, 0)
    }

    /// Whether `key` is present.
    pub fn contains_key(&self, key: &[u8]) -> bool {
        self.get(key).is_some()
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: &[u8], value: V) -> Option<V> {
        let old = match &mut self.root {
            None => {
                self.root = Some(NodeRef::Leaf(leaf(key, value)));
                None
            }
            Some(root) => insert(root, key, 0, value),
        };
        if old.is_none() {
            self.len += 1;
        }
        old
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &[u8]) -> Option<V> {
        let root = self.root.as_mut()?;
        let (old, after) = remove(root, key, 0);
        if after == After::Delete {
            self.root = None;
        }
        if old.is_some() {
            self.len -= 1;
        }
        old
    }

    /// [`Part::insert`] of a `u64` key (big-endian, so iteration is numeric order).
    pub fn insert_u64(&mut self, key: u64, value: V) -> Option<V> {
        self.insert(&key.to_be_bytes(), value)
    }

    /// [`Part::get`] of a `u64` key.
    pub fn get_u64(&self, key: u64) -> Option<&V> {
        self.get(&key.to_be_bytes())
    }

    /// [`Part::remove`] of a `u64` key.
    pub fn remove_u64(&mut self, key: u64) -> Option<V> {
        self.remove(&key.to_be_bytes())
    }

    /// Inserts every item (of equal keys the last wins); returns how many keys were new.
    ///
    /// The batch is sorted and walks the tree once: each node on the way is visited, and
    /// copied if another version holds it, once for the whole batch, and a run of new keys
    /// under a missing child is built directly as a subtree.
    pub fn insert_batch<K: AsRef<[u8]>>(
        &mut self,
        items: impl IntoIterator<Item = (K, V)>,
    ) -> usize {
        let items = sorted_last_wins(items.into_iter().collect());
        if items.is_empty() {
            return 0;
        }
        let added = match &mut self.root {
            None => {
                self.root = Some(bulk::build(&items, 0));
                items.len()
            }
            Some(root) => bulk::insert_sorted(root, &items, 0),
        };
        self.len += added;
        added
    }

    /// Removes every key; returns how many were present. Sorted first, then one walk.
    pub fn remove_batch<K: AsRef<[u8]>>(&mut self, keys: impl IntoIterator<Item = K>) -> usize {
        let mut keys: Vec<K> = keys.into_iter().collect();
        keys.sort_unstable_by(|a, b| a.as_ref().cmp(b.as_ref()));
        keys.dedup_by(|a, b| a.as_ref() == b.as_ref());
        let Some(root) = self.root.as_mut() else {
            return 0;
        };
        let (removed, after) = bulk::remove_sorted(root, &keys, 0);
        if after == After::Delete {
            self.root = None;
        }
        self.len -= removed;
        removed
    }

    /// Every entry of `self` and `other`; for a key in both, `self`'s value.
    ///
    /// Walks both trees together: a subtree the two share (versions of one map share all
    /// they did not change) is taken whole without being visited, as is a subtree only one
    /// side has, so uniting two versions costs in proportion to their differences.
    pub fn union(&self, other: &Part<V>) -> Part<V> {
        let root = match (&self.root, &other.root) {
            (None, root) | (root, None) => root.clone(),
            (Some(a), Some(b)) => Some(bulk::union(a, b, 0)),
        };
        Part::from_root(root)
    }

    /// The entries of `self` whose keys are also in `other`, with `self`'s values. Shared
    /// subtrees are taken whole, as in [`Part::union`].
    pub fn intersection(&self, other: &Part<V>) -> Part<V> {
        let root = match (&self.root, &other.root) {
            (Some(a), Some(b)) => bulk::intersection(a, b, 0),
            _ => None,
        };
        Part::from_root(root)
    }

    fn from_root(root: Option<NodeRef<V>>) -> Self {
        let len = root.as_ref().map_or(0, NodeRef::entries);
        Self { root, len }
    }

    /// Entries in key order.
    pub fn iter(&self) -> Iter<'_, V> {
        let mut iter = Iter { stack: Vec::new() };
        if let Some(root) = &self.root {
            iter.stack.push(Frame::new(root));
        }
        iter
    }

    /// Entries with keys in `(start, end)` bounds, in key order. Descends once to the start
    /// rather than scanning from the first key.
    pub fn range<'a>(&'a self, start: Bound<&[u8]>, end: Bound<&'a [u8]>) -> Range<'a, V> {
        let mut stack = Vec::new();
        if let Some(root) = &self.root {
            match start {
                Bound::Unbounded => stack.push(Frame::new(root)),
                Bound::Included(lo) => seek(&mut stack, root, lo, 0),
                Bound::Excluded(lo) => {
                    // The smallest key after `lo` is `lo` followed by a zero byte.
                    let mut after = lo.to_vec();
                    after.push(0);
                    seek(&mut stack, root, &after, 0);
                }
            }
        }
        Range {
            iter: Iter { stack },
            end,
        }
    }

    /// A copy of this version laid out in traversal order (section 3.4, compaction): the
    /// tree is rebuilt bottom-up from its entries in key order, each node allocated before
    /// its children and children in key order, the order a scan visits them. Shares
    /// nothing with `self`.
    pub fn compact(&self) -> Part<V> {
        let items: Vec<(&[u8], V)> = self.iter().map(|(k, v)| (k, v.clone())).collect();
        Part::from_root((!items.is_empty()).then(|| bulk::build(&items, 0)))
    }

    /// Checks the tree's invariants: every inner node's entry count is its subtree's,
    /// its child count is right, and no inner node is empty or a lone child without a
    /// terminal (path compression). For tests.
    #[cfg(test)]
    pub(crate) fn audit(&self) {
        fn walk<V: Clone>(node: &NodeRef<V>) -> usize {
            let Some(header) = header_of(node) else {
                return 1;
            };
            if let NodeRef::Values(values) = node {
                assert_eq!(values.len(), header.count as usize, "value count");
                let entries = values.len() + usize::from(header.terminal.is_some());
                assert_eq!(entries, header.entries, "entry count");
                assert!(values.len() <= node::VALUES_MAX);
                assert!(
                    values.len() >= 2 || (values.len() == 1 && header.terminal.is_some()),
                    "a value node with {} entries",
                    values.len()
                );
                return entries;
            }
            let mut children = 0;
            let mut entries = usize::from(header.terminal.is_some());
            for_each_child(node, &mut |_, child| {
                children += 1;
                entries += walk(child);
            });
            assert_eq!(children, header.count as usize, "child count");
            assert_eq!(entries, header.entries, "entry count");
            assert!(
                children >= 2 || (children == 1 && header.terminal.is_some()),
                "an inner node with {children} children"
            );
            entries
        }
        let entries = self.root.as_ref().map_or(0, walk);
        assert_eq!(entries, self.len, "length");
    }

    /// Value nodes in this version. For tests.
    #[cfg(test)]
    pub(crate) fn value_nodes(&self) -> usize {
        fn walk<V: Clone>(node: &NodeRef<V>) -> usize {
            let mut count = usize::from(matches!(node, NodeRef::Values(_)));
            for_each_child(node, &mut |_, child| count += walk(child));
            count
        }
        self.root.as_ref().map_or(0, walk)
    }

    /// The addresses of every node of this version. For tests of sharing.
    #[cfg(test)]
    pub(crate) fn node_ids(&self) -> std::collections::HashSet<usize> {
        fn walk<V: Clone>(node: &NodeRef<V>, out: &mut std::collections::HashSet<usize>) {
            out.insert(node.id());
            if let Some(t) = header_of(node).and_then(|h| h.terminal.as_ref()) {
                out.insert(Arc::as_ptr(t) as usize);
            }
            for_each_child(node, &mut |_, child| walk(child, out));
        }
        let mut out = std::collections::HashSet::new();
        if let Some(root) = &self.root {
            walk(root, &mut out);
        }
        out
    }

    /// Nodes reachable from this version: (leaves, inner nodes). For tests and sizing.
    pub fn node_counts(&self) -> (usize, usize) {
        fn walk<V: Clone>(node: &NodeRef<V>, counts: &mut (usize, usize)) {
            let mut visit = |h: &node::Header<V>| {
                counts.1 += 1;
                counts.0 += usize::from(h.terminal.is_some());
            };
            match node {
                NodeRef::Leaf(_) => counts.0 += 1,
                NodeRef::N4(n) => visit(n.header()),
                NodeRef::N16(n) => visit(n.header()),
                NodeRef::N48(n) => visit(n.header()),
                NodeRef::N256(n) => visit(n.header()),
                NodeRef::Values(n) => {
                    visit(&n.header);
                    counts.0 += n.len();
                }
            }
            let mut children = Vec::new();
            for_each_child(node, &mut |_, c| children.push(c.clone()));
            for child in &children {
                walk(child, counts);
            }
        }
        let mut counts = (0, 0);
        if let Some(root) = &self.root {
            walk(root, &mut counts);
        }
        counts
    }
}

/// `items` sorted by key, keeping the last of equal keys.
fn sorted_last_wins<K: AsRef<[u8]>, V>(mut items: Vec<(K, V)>) -> Vec<(K, V)> {
    // Stable: equal keys keep their order, so the last one given is the last of its run.
    items.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
    let mut out: Vec<(K, V)> = Vec::with_capacity(items.len());
    for item in items {
        match out.last_mut() {
            Some(last) if last.0.as_ref() == item.0.as_ref() => *last = item,
            _ => out.push(item),
        }
    }
    out
}

impl<K: AsRef<[u8]>, V: Clone> FromIterator<(K, V)> for Part<V> {
    /// A map of the entries (of equal keys the last wins), built bottom-up in traversal
    /// order.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let items = sorted_last_wins(iter.into_iter().collect());
        Part::from_root((!items.is_empty()).then(|| bulk::build(&items, 0)))
    }
}

fn for_each_child<V: Clone>(node: &NodeRef<V>, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
    match node {
        NodeRef::Leaf(_) => {}
        NodeRef::N4(n) => n.for_each_child(f),
        NodeRef::N16(n) => n.for_each_child(f),
        NodeRef::N48(n) => n.for_each_child(f),
        NodeRef::N256(n) => n.for_each_child(f),
        // Entries, not nodes: see `ValueNode::entry`.
        NodeRef::Values(_) => {}
    }
}

fn get_mut_in<'a, V: Clone>(
    slot: &'a mut NodeRef<V>,
    key: &[u8],
    depth: usize,
) -> Option<&'a mut V> {
    fn inner<'a, V: Clone, N: Inner<V>>(
        node: &'a mut Arc<N>,
        key: &[u8],
        depth: usize,
    ) -> Option<&'a mut V> {
        let node = Arc::make_mut(node);
        let depth = depth + node.header().prefix.len();
        match key.get(depth) {
            None => node
                .header_mut()
                .terminal
                .as_mut()
                .map(|l| &mut Arc::make_mut(l).value),
            Some(&byte) => get_mut_in(node.child_mut(byte)?, key, depth + 1),
        }
    }
    dispatch_mut!(slot, n => inner(n, key, depth), l => Some(&mut Arc::make_mut(l).value), v => {
        let node = Arc::make_mut(v);
        let depth = depth + node.header.prefix.len();
        match key.get(depth) {
            None => node.header.terminal.as_mut().map(|l| &mut Arc::make_mut(l).value),
            Some(_) => node.get_mut(key),
        }
    })
}

fn insert<V: Clone>(slot: &mut NodeRef<V>, key: &[u8], depth: usize, value: V) -> Option<V> {
    let mut value = value;
    loop {
        let step = dispatch_mut!(slot, n => insert_inner(n, key, depth, value), l => {
            if l.key.as_slice() == key {
                let leaf = Arc::make_mut(l);
                return Some(std::mem::replace(&mut leaf.value, value));
            }
            split_leaf(slot, key, depth, value);
            return None;
        }, v => insert_values(v, key, depth, value));
        match step {
            Step::Done(old) => return old,
            Step::Expand(v) => {
                expand(slot, depth);
                value = v;
            }
            Step::Split(at, v) => {
                split_prefix(slot, key, depth, at, v);
                return None;
            }
            Step::Full(v) => {
                grow(slot);
                value = v;
            }
        }
    }
}

fn insert_inner<V: Clone, N: Inner<V>>(
    node: &mut Arc<N>,
    key: &[u8],
    depth: usize,
    value: V,
) -> Step<V> {
    let prefix = &node.header().prefix;
    let matched = common_prefix(prefix, &key[depth.min(key.len())..]);
    if matched < prefix.len() {
        return Step::Split(matched, value);
    }
    let depth = depth + prefix.len();
    let Some(&byte) = key.get(depth) else {
        return Step::Done(Arc::make_mut(node).header_mut().set_terminal(key, value));
    };
    if node.child(byte).is_some() {
        let node = Arc::make_mut(node);
        let child = node.child_mut(byte).expect("the child was just found");
        let old = insert(child, key, depth + 1, value);
        node.header_mut().entries += usize::from(old.is_none());
        return Step::Done(old);
    }
    if (node.header().count as usize) < N::CAPACITY {
        let node = Arc::make_mut(node);
        node.add(byte, NodeRef::Leaf(leaf(key, value)));
        node.header_mut().entries += 1;
        return Step::Done(None);
    }
    Step::Full(value)
}

fn insert_values<V: Clone>(
    node: &mut Arc<ValueNode<V>>,
    key: &[u8],
    depth: usize,
    value: V,
) -> Step<V> {
    let prefix = &node.header.prefix;
    let matched = common_prefix(prefix, &key[depth.min(key.len())..]);
    if matched < prefix.len() {
        return Step::Split(matched, value);
    }
    let depth = depth + prefix.len();
    if key.len() == depth {
        return Step::Done(Arc::make_mut(node).header.set_terminal(key, value));
    }
    if !node.fits(key) {
        return Step::Expand(value);
    }
    let node = Arc::make_mut(node);
    let old = node.put(key, value);
    node.header.entries += usize::from(old.is_none());
    Step::Done(old)
}

/// Replaces the value node in `slot` (reached at `depth`) by an inner node over the same
/// entries, built as a bulk load would build them.
fn expand<V: Clone>(slot: &mut NodeRef<V>, depth: usize) {
    let NodeRef::Values(node) = &*slot else {
        unreachable!("only value nodes expand")
    };
    let mut items: Vec<(&[u8], V)> = Vec::with_capacity(node.len() + 1);
    if let Some(t) = &node.header.terminal {
        items.push((t.key.as_slice(), t.value.clone()));
    }
    items.extend(node.items());
    *slot = bulk::build_inner(&items, depth);
}

/// Places `child`, whose key is `key`, in `node` at depth `depth` (the terminal if the key
/// ends there).
fn place<V: Clone>(node: &mut Node4<V>, key: &[u8], depth: usize, child: NodeRef<V>) {
    match (key.get(depth), child) {
        (Some(&byte), child) => node.add(byte, child),
        (None, NodeRef::Leaf(l)) => node.header.terminal = Some(l),
        (None, _) => unreachable!("only a leaf's key can end at a node"),
    }
}

fn split_leaf<V: Clone>(slot: &mut NodeRef<V>, key: &[u8], depth: usize, value: V) {
    let NodeRef::Leaf(old_leaf) = &*slot else {
        unreachable!("split_leaf is called on a leaf")
    };
    let old_key = old_leaf.key.as_slice().to_vec();
    let start = depth.min(key.len()).min(old_key.len());
    let at = start + common_prefix(&old_key[start..], &key[start..]);
    if key.len() == old_key.len() {
        // Keys of one length: a bucket of them.
        let mut header = node::Header::new(&key[start..at]);
        header.entries = 2;
        let mut node = ValueNode::new(header, key.len(), at);
        node.put(&old_key, old_leaf.value.clone());
        node.put(key, value);
        *slot = NodeRef::Values(Arc::new(node));
        return;
    }
    let new = leaf(key, value);
    let old = std::mem::replace(slot, NodeRef::Leaf(Arc::clone(&new)));
    let mut node = Node4::new(&key[start..at]);
    node.header.entries = 2;
    place(&mut node, &old_key, at, old);
    place(&mut node, key, at, NodeRef::Leaf(new));
    *slot = NodeRef::N4(Arc::new(node));
}

fn split_prefix<V: Clone>(slot: &mut NodeRef<V>, key: &[u8], depth: usize, at: usize, value: V) {
    let prefix: Vec<u8> = header_of(slot)
        .expect("leaves do not split by prefix")
        .prefix
        .to_vec();
    header_mut(slot).expect("an inner node").prefix = prefix[at + 1..].into();
    let new = leaf(key, value);
    let old = std::mem::replace(slot, NodeRef::Leaf(Arc::clone(&new)));
    let mut node = Node4::new(&prefix[..at]);
    node.header.entries = old.entries() + 1;
    node.add(prefix[at], old);
    place(&mut node, key, depth + at, NodeRef::Leaf(new));
    *slot = NodeRef::N4(Arc::new(node));
}

/// Replaces a full inner node by the next larger kind.
fn grow<V: Clone>(slot: &mut NodeRef<V>) {
    *slot = match &*slot {
        NodeRef::N4(n) => NodeRef::N16(Arc::new(move_into(&**n, Node16::empty()))),
        NodeRef::N16(n) => NodeRef::N48(Arc::new(move_into(&**n, Node48::empty()))),
        NodeRef::N48(n) => NodeRef::N256(Arc::new(move_into(&**n, Node256::empty()))),
        NodeRef::N256(_) | NodeRef::Leaf(_) | NodeRef::Values(_) => {
            unreachable!("only 4, 16 and 48 grow")
        }
    };
}

fn remove<V: Clone>(slot: &mut NodeRef<V>, key: &[u8], depth: usize) -> (Option<V>, After) {
    let result = dispatch_mut!(slot, n => remove_inner(n, key, depth), l => {
        return if l.key.as_slice() == key {
            (Some(l.value.clone()), After::Delete)
        } else {
            (None, After::Keep)
        };
    }, v => remove_values(v, key, depth));
    if result.is_some() {
        return (result, normalize(slot));
    }
    (None, After::Keep)
}

fn remove_inner<V: Clone, N: Inner<V>>(node: &mut Arc<N>, key: &[u8], depth: usize) -> Option<V> {
    let prefix = &node.header().prefix;
    if !key.get(depth..)?.starts_with(prefix) {
        return None;
    }
    let depth = depth + prefix.len();
    let Some(&byte) = key.get(depth) else {
        // The path matched, so a terminal here is `key`; searched first to copy nothing.
        node.header().terminal.as_ref()?;
        return Arc::make_mut(node).header_mut().take_terminal();
    };
    // Search first, so that a missing key copies nothing.
    node.child(byte)?;
    let node_mut = Arc::make_mut(node);
    let child = node_mut.child_mut(byte).expect("the child was just found");
    let (value, after) = remove(child, key, depth + 1);
    if after == After::Delete {
        node_mut.take(byte);
    }
    if value.is_some() {
        node_mut.header_mut().entries -= 1;
    }
    value
}

fn remove_values<V: Clone>(node: &mut Arc<ValueNode<V>>, key: &[u8], depth: usize) -> Option<V> {
    let prefix = &node.header.prefix;
    if !key.get(depth..)?.starts_with(prefix) {
        return None;
    }
    let depth = depth + prefix.len();
    if key.len() == depth {
        node.header.terminal.as_ref()?;
        return Arc::make_mut(node).header.take_terminal();
    }
    // Search first, so that a missing key copies nothing.
    node.get(key)?;
    let node = Arc::make_mut(node);
    let value = node.take(key);
    node.header.entries -= 1;
    value
}

/// Restores the node shapes after a removal below `slot`: an inner node left with no child
/// becomes its terminal leaf (or goes), one with a single child and no terminal merges
/// into it (path compression), and a sparse node shrinks to the smaller kind.
fn normalize<V: Clone>(slot: &mut NodeRef<V>) -> After {
    let Some(header) = header_of(slot) else {
        return After::Keep;
    };
    let (count, has_terminal) = (header.count as usize, header.terminal.is_some());
    if count == 0 {
        let terminal = header.terminal.clone();
        return match terminal {
            Some(l) => {
                *slot = NodeRef::Leaf(l);
                After::Keep
            }
            None => After::Delete,
        };
    }
    if let NodeRef::Values(node) = &*slot {
        if count == 1 && !has_terminal {
            // A lone entry becomes a leaf (its key is whole in the node).
            let (key, value) = node.entry(0);
            *slot = NodeRef::Leaf(leaf(key, value.clone()));
        }
        return After::Keep;
    }
    if count == 1 && !has_terminal {
        // Take the only child out (copying this node first if another version holds it),
        // then give it this node's path: path compression.
        let (mut prefix, byte, mut child) = dispatch_mut!(slot, n => {
            let node = Arc::make_mut(n);
            let mut byte = 0;
            node.for_each_child(&mut |b, _| byte = b);
            let child = node.take(byte).expect("the node has one child");
            (node.header().prefix.to_vec(), byte, child)
        }, _l => unreachable!("leaves were handled above"), _v => unreachable!("value nodes were handled above"));
        prefix.push(byte);
        if let Some(h) = header_mut(&mut child) {
            prefix.extend_from_slice(&h.prefix);
            h.prefix = prefix.into();
        }
        *slot = child;
        return After::Keep;
    }
    let shrunk = match &*slot {
        NodeRef::N16(n) if count <= 3 => {
            Some(NodeRef::N4(Arc::new(move_into(&**n, Node4::empty()))))
        }
        NodeRef::N48(n) if count <= 12 => {
            Some(NodeRef::N16(Arc::new(move_into(&**n, Node16::empty()))))
        }
        NodeRef::N256(n) if count <= 36 => {
            Some(NodeRef::N48(Arc::new(move_into(&**n, Node48::empty()))))
        }
        _ => None,
    };
    if let Some(node) = shrunk {
        *slot = node;
    }
    After::Keep
}

/// One node being iterated: its terminal first, then its children from position `next`.
struct Frame<'a, V> {
    node: &'a NodeRef<V>,
    /// Whether the terminal (or, for a leaf, the leaf) is still to be yielded.
    fresh: bool,
    /// Next child position: a slot for nodes 4 and 16, a byte for 48 and 256.
    next: usize,
}

impl<'a, V> Frame<'a, V> {
    fn new(node: &'a NodeRef<V>) -> Self {
        Self {
            node,
            fresh: true,
            next: 0,
        }
    }
}

/// The child at or after position `from`, and the position after it.
fn child_from<V: Clone>(node: &NodeRef<V>, from: usize) -> Option<(&NodeRef<V>, usize)> {
    match node {
        NodeRef::Leaf(_) => None,
        NodeRef::N4(n) => (from < n.header.count as usize)
            .then(|| n.children[from].as_ref().map(|c| (c, from + 1)))
            .flatten(),
        NodeRef::N16(n) => (from < n.header.count as usize)
            .then(|| n.children[from].as_ref().map(|c| (c, from + 1)))
            .flatten(),
        NodeRef::N48(n) => (from..256).find_map(|b| n.child(b as u8).map(|c| (c, b + 1))),
        NodeRef::N256(n) => (from..256).find_map(|b| n.slot(b).map(|c| (c, b + 1))),
        NodeRef::Values(_) => None,
    }
}

/// The position of the first child with byte `>= byte`.
fn position_of<V: Clone>(node: &NodeRef<V>, byte: u8) -> usize {
    match node {
        NodeRef::N4(n) => n.keys[..n.header.count as usize]
            .iter()
            .take_while(|&&k| k < byte)
            .count(),
        NodeRef::N16(n) => n.keys[..n.header.count as usize]
            .iter()
            .take_while(|&&k| k < byte)
            .count(),
        NodeRef::N48(_) | NodeRef::N256(_) => byte as usize,
        NodeRef::Values(_) => 0, // searched by key in `seek`
        NodeRef::Leaf(_) => 0,
    }
}

fn header_of<V: Clone>(node: &NodeRef<V>) -> Option<&node::Header<V>> {
    match node {
        NodeRef::Leaf(_) => None,
        NodeRef::N4(n) => Some(&n.header),
        NodeRef::N16(n) => Some(&n.header),
        NodeRef::N48(n) => Some(&n.header),
        NodeRef::N256(n) => Some(&n.header),
        NodeRef::Values(n) => Some(&n.header),
    }
}

/// Pushes the frames that iterate the keys `>= lo` under `node` (reached at `depth`).
fn seek<'a, V: Clone>(
    stack: &mut Vec<Frame<'a, V>>,
    node: &'a NodeRef<V>,
    lo: &[u8],
    depth: usize,
) {
    let Some(header) = header_of(node) else {
        if let NodeRef::Leaf(l) = node {
            if l.key.as_slice() >= lo {
                stack.push(Frame::new(node));
            }
        }
        return;
    };
    let rest = &lo[depth.min(lo.len())..];
    let prefix = &header.prefix;
    let n = common_prefix(prefix, rest);
    if n < prefix.len() {
        // The paths part inside the prefix: all of this subtree is above `lo` or below it.
        if n == rest.len() || prefix[n] > rest[n] {
            stack.push(Frame::new(node));
        }
        return;
    }
    let depth = depth + prefix.len();
    let Some(&byte) = lo.get(depth) else {
        // `lo` ends here: everything under this node, terminal included, is >= lo.
        stack.push(Frame::new(node));
        return;
    };
    // The terminal (a proper prefix of `lo`) is below `lo`; children after `byte` are above.
    if let NodeRef::Values(values) = node {
        stack.push(Frame {
            node,
            fresh: false,
            next: values.lower_bound(lo),
        });
        return;
    }
    let at = position_of(node, byte);
    let (next, exact) = match child_from(node, at) {
        Some((child, after)) if child_key_byte(node, at) == Some(byte) => (after, Some(child)),
        _ => (at, None),
    };
    stack.push(Frame {
        node,
        fresh: false,
        next,
    });
    if let Some(child) = exact {
        seek(stack, child, lo, depth + 1);
    }
}

/// The byte of the child at or after position `at`.
fn child_key_byte<V: Clone>(node: &NodeRef<V>, at: usize) -> Option<u8> {
    match node {
        NodeRef::N4(n) => (at < n.header.count as usize).then(|| n.keys[at]),
        NodeRef::N16(n) => (at < n.header.count as usize).then(|| n.keys[at]),
        NodeRef::N48(n) => (at..256).find(|&b| n.index[b] != 0).map(|b| b as u8),
        NodeRef::N256(n) => (at..256).find(|&b| n.slot(b).is_some()).map(|b| b as u8),
        NodeRef::Leaf(_) | NodeRef::Values(_) => None,
    }
}

/// Iterator over entries in key order.
pub struct Iter<'a, V> {
    stack: Vec<Frame<'a, V>>,
}

impl<'a, V: Clone> Iterator for Iter<'a, V> {
    type Item = (&'a [u8], &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let frame = self.stack.last_mut()?;
            let node = frame.node;
            if let NodeRef::Leaf(l) = node {
                self.stack.pop();
                return Some((l.key.as_slice(), &l.value));
            }
            if frame.fresh {
                frame.fresh = false;
                if let Some(t) = header_of(node).and_then(|h| h.terminal.as_ref()) {
                    return Some((t.key.as_slice(), &t.value));
                }
            }
            if let NodeRef::Values(values) = node {
                if frame.next < values.len() {
                    frame.next += 1;
                    return Some(values.entry(frame.next - 1));
                }
                self.stack.pop();
                continue;
            }
            match child_from(node, frame.next) {
                Some((child, after)) => {
                    frame.next = after;
                    self.stack.push(Frame::new(child));
                }
                None => {
                    self.stack.pop();
                }
            }
        }
    }
}

/// Iterator over the entries of a key range.
pub struct Range<'a, V> {
    iter: Iter<'a, V>,
    end: Bound<&'a [u8]>,
}

impl<'a, V: Clone> Iterator for Range<'a, V> {
    type Item = (&'a [u8], &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        let (key, value) = self.iter.next()?;
        let inside = match self.end {
            Bound::Unbounded => true,
            Bound::Included(end) => key <= end,
            Bound::Excluded(end) => key < end,
        };
        if inside {
            Some((key, value))
        } else {
            self.iter.stack.clear();
            None
        }
    }
}
