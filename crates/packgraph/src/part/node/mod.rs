//! Nodes of the persistent adaptive radix tree: leaves holding a whole key (lazy
//! expansion), and inner nodes of 4, 16, 48 and 256 children with a compressed path.
//!
//! Every node is one reference-counted allocation of its own size (a child pointer is a
//! tagged [`NodeRef`]); a node is changed in place when only one version holds it and
//! copied first otherwise ([`Arc::make_mut`] on the child slot).
//!
//! This file holds what every kind shares (keys, leaves, the inner-node header, the tagged
//! pointer, the [`Inner`] interface and the helpers that dispatch on a pointer's kind); the
//! inner node kinds are in `inner.rs`, value nodes in `values.rs`.

mod inner;
mod values;

use std::sync::Arc;

pub(crate) use self::inner::{Chunk, Node16, Node256, Node4, Node48};
pub(crate) use self::values::{ValueNode, VALUES_MAX};

/// A key of up to `INLINE` bytes is stored inside its leaf; longer keys on the heap.
const INLINE: usize = 14;

/// A key's bytes, inline when short.
#[derive(Clone)]
pub(crate) enum Key {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Key {
    pub(crate) fn new(key: &[u8]) -> Self {
        if key.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..key.len()].copy_from_slice(key);
            Key::Inline {
                len: key.len() as u8,
                bytes,
            }
        } else {
            Key::Heap(key.into())
        }
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..*len as usize],
            Key::Heap(bytes) => bytes,
        }
    }
}

/// A leaf: one key and its value.
#[derive(Clone)]
pub(crate) struct Leaf<V> {
    pub(crate) key: Key,
    pub(crate) value: V,
}

/// What every inner node has besides its children: the compressed path below the byte
/// that led here, and the entry whose key ends exactly at this node (a key that is a
/// prefix of others).
#[derive(Clone)]
pub(crate) struct Header<V> {
    pub(crate) prefix: Box<[u8]>,
    pub(crate) terminal: Option<Arc<Leaf<V>>>,
    /// Children.
    pub(crate) count: u16,
    /// Entries in the subtree (terminal included), so that a whole subtree's size is known
    /// without walking it (`len` of any subtree in O(1)).
    pub(crate) entries: usize,
}

impl<V: Clone> Header<V> {
    /// Sets the value of `key`, the key that ends at this node; returns the previous value.
    pub(crate) fn set_terminal(&mut self, key: &[u8], value: V) -> Option<V> {
        match &mut self.terminal {
            Some(l) => Some(std::mem::replace(&mut Arc::make_mut(l).value, value)),
            None => {
                self.terminal = Some(Arc::new(Leaf {
                    key: Key::new(key),
                    value,
                }));
                self.entries += 1;
                None
            }
        }
    }

    /// Removes the entry that ends at this node; returns its value.
    pub(crate) fn take_terminal(&mut self) -> Option<V> {
        let leaf = self.terminal.take()?;
        self.entries -= 1;
        Some(leaf.value.clone())
    }
}

impl<V> Header<V> {
    pub(crate) fn new(prefix: &[u8]) -> Self {
        Self {
            prefix: prefix.into(),
            terminal: None,
            count: 0,
            entries: 0,
        }
    }
}

/// A pointer to a node of any kind.
pub(crate) enum NodeRef<V> {
    Leaf(Arc<Leaf<V>>),
    N4(Arc<Node4<V>>),
    N16(Arc<Node16<V>>),
    N48(Arc<Node48<V>>),
    N256(Arc<Node256<V>>),
    Values(Arc<ValueNode<V>>),
}

impl<V> NodeRef<V> {
    /// Entries in the subtree.
    #[inline]
    pub(crate) fn entries(&self) -> usize {
        match self {
            NodeRef::Leaf(_) => 1,
            NodeRef::N4(n) => n.header.entries,
            NodeRef::N16(n) => n.header.entries,
            NodeRef::N48(n) => n.header.entries,
            NodeRef::N256(n) => n.header.entries,
            NodeRef::Values(n) => n.header.entries,
        }
    }

    /// The node's address: the same for every version that shares it.
    pub(crate) fn id(&self) -> usize {
        match self {
            NodeRef::Leaf(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N4(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N16(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N48(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N256(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::Values(n) => Arc::as_ptr(n) as *const u8 as usize,
        }
    }
}

impl<V> Clone for NodeRef<V> {
    fn clone(&self) -> Self {
        match self {
            NodeRef::Leaf(n) => NodeRef::Leaf(Arc::clone(n)),
            NodeRef::N4(n) => NodeRef::N4(Arc::clone(n)),
            NodeRef::N16(n) => NodeRef::N16(Arc::clone(n)),
            NodeRef::N48(n) => NodeRef::N48(Arc::clone(n)),
            NodeRef::N256(n) => NodeRef::N256(Arc::clone(n)),
            NodeRef::Values(n) => NodeRef::Values(Arc::clone(n)),
        }
    }
}

/// The inner node kinds behind one interface.
pub(crate) trait Inner<V: Clone>: Clone {
    const CAPACITY: usize;
    /// A node with no children and an empty header.
    fn empty() -> Self;
    /// Wraps the node in a pointer of its kind.
    fn wrap(node: Arc<Self>) -> NodeRef<V>;
    fn header(&self) -> &Header<V>;
    fn header_mut(&mut self) -> &mut Header<V>;
    fn child(&self, byte: u8) -> Option<&NodeRef<V>>;
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>>;
    /// Adds a child for a byte that has none; the node must have room.
    fn add(&mut self, byte: u8, child: NodeRef<V>);
    /// Removes the child of `byte`, if any.
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>>;
    /// The children in byte order.
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>));
}

/// Moves every child and the header of `from` into an empty node `to` (grow or shrink).
pub(crate) fn move_into<V: Clone, A: Inner<V>, B: Inner<V>>(from: &A, mut to: B) -> B {
    let mut pairs = Vec::with_capacity(from.header().count as usize);
    from.for_each_child(&mut |byte, child| pairs.push((byte, child.clone())));
    let header = from.header().clone();
    *to.header_mut() = Header { count: 0, ..header };
    for (byte, child) in pairs {
        to.add(byte, child);
    }
    to
}

/// The length of the longest common prefix of `a` and `b`.
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// A new leaf holding `key` and `value`.
pub(super) fn leaf<V>(key: &[u8], value: V) -> Arc<Leaf<V>> {
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
pub(super) fn header_mut<V: Clone>(slot: &mut NodeRef<V>) -> Option<&mut Header<V>> {
    dispatch_mut!(slot, n => Some(Arc::make_mut(n).header_mut()), _l => None, v => Some(&mut Arc::make_mut(v).header))
}
pub(crate) use dispatch_mut;

/// The header of the node behind `node`; `None` for a leaf.
pub(super) fn header_of<V: Clone>(node: &NodeRef<V>) -> Option<&Header<V>> {
    match node {
        NodeRef::Leaf(_) => None,
        NodeRef::N4(n) => Some(&n.header),
        NodeRef::N16(n) => Some(&n.header),
        NodeRef::N48(n) => Some(&n.header),
        NodeRef::N256(n) => Some(&n.header),
        NodeRef::Values(n) => Some(&n.header),
    }
}

/// Calls `f` on the children of an inner node in byte order (none for a leaf or a value
/// node).
pub(super) fn for_each_child<V: Clone>(node: &NodeRef<V>, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
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
