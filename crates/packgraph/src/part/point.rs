//! Point operations: get, insert and remove of one key. An update walks from the root and
//! copies each node on its path that another version holds (path copying); a removal then
//! restores the node shapes on its way back up (`normalize`).

use std::sync::Arc;

use super::build::build_inner;
use super::node::{
    common_prefix, dispatch_mut, header_mut, header_of, leaf, move_into, Header, Inner, Node16,
    Node256, Node4, Node48, NodeRef, ValueNode,
};
use super::{After, Part};

impl<V: Clone> Part<V> {
    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        entry_in(self.root.as_ref()?, key, 0).map(|(_, v)| v)
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
}

/// The entry of `key` below `node` (reached at `depth`): the key as stored, and the value.
pub(super) fn entry_in<'a, V: Clone>(
    mut node: &'a NodeRef<V>,
    key: &[u8],
    mut depth: usize,
) -> Option<(&'a [u8], &'a V)> {
    loop {
        let header = match node {
            NodeRef::Leaf(l) => {
                return (l.key.as_slice() == key).then(|| (l.key.as_slice(), &l.value));
            }
            NodeRef::N4(n) => n.header(),
            NodeRef::N16(n) => n.header(),
            NodeRef::N48(n) => n.header(),
            NodeRef::N256(n) => n.header(),
            NodeRef::Values(n) => &n.header,
        };
        let byte;
        (depth, byte) = match past_header(header, key, depth) {
            Ok(next) => next,
            Err(answer) => return answer,
        };
        node = match node {
            NodeRef::Leaf(_) => unreachable!("leaves returned above"),
            NodeRef::N4(n) => n.child(byte)?,
            NodeRef::N16(n) => n.child(byte)?,
            NodeRef::N48(n) => n.child(byte)?,
            NodeRef::N256(n) => n.child(byte)?,
            NodeRef::Values(n) => return n.get(key),
        };
        depth += 1;
    }
}

/// An entry as a lookup returns it: the key as stored, and the value.
pub(super) type Entry<'a, V> = (&'a [u8], &'a V);

/// The first step of a lookup at an inner or value node reached at `depth`: `Ok` with the
/// depth of the byte that picks the child and that byte, or `Err` with the answer where
/// the walk ends here (the key leaves the node's compressed path, or ends at the node and
/// the answer is its terminal).
#[inline]
pub(super) fn past_header<'a, V>(
    header: &'a Header<V>,
    key: &[u8],
    depth: usize,
) -> Result<(usize, u8), Option<Entry<'a, V>>> {
    // Most nodes of fixed-length keys have no compressed path: no call to compare one.
    if !header.prefix.is_empty()
        && !key
            .get(depth..)
            .is_some_and(|rest| rest.starts_with(&header.prefix))
    {
        return Err(None);
    }
    let depth = depth + header.prefix.len();
    match key.get(depth) {
        Some(&byte) => Ok((depth, byte)),
        None => Err(header
            .terminal
            .as_ref()
            .filter(|l| l.key.as_slice() == key)
            .map(|l| (l.key.as_slice(), &l.value))),
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

pub(super) fn insert<V: Clone>(
    slot: &mut NodeRef<V>,
    key: &[u8],
    depth: usize,
    value: V,
) -> Option<V> {
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
    *slot = build_inner(&items, depth);
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
        let mut header = Header::new(&key[start..at]);
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
pub(super) fn grow<V: Clone>(slot: &mut NodeRef<V>) {
    *slot = match &*slot {
        NodeRef::N4(n) => NodeRef::N16(Arc::new(move_into(&**n, Node16::empty()))),
        NodeRef::N16(n) => NodeRef::N48(Arc::new(move_into(&**n, Node48::empty()))),
        NodeRef::N48(n) => NodeRef::N256(Arc::new(move_into(&**n, Node256::empty()))),
        NodeRef::N256(_) | NodeRef::Leaf(_) | NodeRef::Values(_) => {
            unreachable!("only 4, 16 and 48 grow")
        }
    };
}

pub(super) fn remove<V: Clone>(
    slot: &mut NodeRef<V>,
    key: &[u8],
    depth: usize,
) -> (Option<V>, After) {
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

/// A node 16 left with at most this many children by a removal below it becomes a node 4.
const SHRINK_16_AT: usize = 3;
/// A node 48 left with at most this many children by a removal below it becomes a node 16.
const SHRINK_48_AT: usize = 12;
/// A node 256 left with at most this many children by a removal below it becomes a node 48.
/// Nothing else makes or leaves a node 256 this sparse, so every node 256 has more.
pub(super) const SHRINK_256_AT: usize = 36;

/// Restores the node shapes after a removal below `slot`: an inner node left with no child
/// becomes its terminal leaf (or goes), one with a single child and no terminal merges
/// into it (path compression), and a sparse node shrinks to the smaller kind.
pub(super) fn normalize<V: Clone>(slot: &mut NodeRef<V>) -> After {
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
        NodeRef::N16(n) if count <= SHRINK_16_AT => {
            Some(NodeRef::N4(Arc::new(move_into(&**n, Node4::empty()))))
        }
        NodeRef::N48(n) if count <= SHRINK_48_AT => {
            Some(NodeRef::N16(Arc::new(move_into(&**n, Node16::empty()))))
        }
        NodeRef::N256(n) if count <= SHRINK_256_AT => {
            Some(NodeRef::N48(Arc::new(move_into(&**n, Node48::empty()))))
        }
        _ => None,
    };
    if let Some(node) = shrunk {
        *slot = node;
    }
    After::Keep
}
