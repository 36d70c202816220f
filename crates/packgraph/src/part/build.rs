//! Bulk building: a tree from sorted entries, its nodes allocated in traversal order (each
//! node before its children, children in key order), which is what [`Part::compact`],
//! [`Part::from_iter`] and batches that meet a missing child use (PART paper, section 3.4).

use std::sync::Arc;

use super::batch::sorted_last_wins;
use super::node::{
    common_prefix, leaf, Header, Inner, Node16, Node256, Node4, Node48, NodeRef, ValueNode,
    VALUES_MAX,
};
use super::Part;

impl<V: Clone> Part<V> {
    /// A copy of this version laid out in traversal order (section 3.4, compaction): the
    /// tree is rebuilt bottom-up from its entries in key order, each node allocated before
    /// its children and children in key order, the order a scan visits them. Shares
    /// nothing with `self`.
    pub fn compact(&self) -> Part<V> {
        let items: Vec<(&[u8], V)> = self.iter().map(|(k, v)| (k, v.clone())).collect();
        Part::from_root((!items.is_empty()).then(|| build(&items, 0)))
    }
}

impl<K: AsRef<[u8]>, V: Clone> FromIterator<(K, V)> for Part<V> {
    /// A map of the entries (of equal keys the last wins), built bottom-up in traversal
    /// order.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        let items = sorted_last_wins(iter.into_iter().collect());
        Part::from_root((!items.is_empty()).then(|| build(&items, 0)))
    }
}

/// A node of the smallest kind for `count` children, with `header` (its child count is
/// recomputed), the children added in order after the node itself is allocated.
pub(super) fn assemble<V: Clone>(
    header: Header<V>,
    count: usize,
    children: impl Iterator<Item = (u8, NodeRef<V>)>,
) -> NodeRef<V> {
    fn fill<V: Clone, N: Inner<V>>(
        header: Header<V>,
        children: impl Iterator<Item = (u8, NodeRef<V>)>,
    ) -> NodeRef<V> {
        let mut node = Arc::new(N::empty());
        let inner = Arc::get_mut(&mut node).expect("a new node is unshared");
        *inner.header_mut() = Header { count: 0, ..header };
        for (byte, child) in children {
            inner.add(byte, child);
        }
        N::wrap(node)
    }
    match count {
        0..=4 => fill::<V, Node4<V>>(header, children),
        5..=16 => fill::<V, Node16<V>>(header, children),
        17..=48 => fill::<V, Node48<V>>(header, children),
        _ => fill::<V, Node256<V>>(header, children),
    }
}

/// `items` (every key longer than `depth`) split into the runs that share the byte at
/// `depth`.
pub(super) fn runs<T>(items: &[T], depth: usize, key: impl Fn(&T) -> &[u8]) -> Vec<(u8, &[T])> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < items.len() {
        let byte = key(&items[start])[depth];
        let len = items[start..].partition_point(|item| key(item)[depth] == byte);
        out.push((byte, &items[start..start + len]));
        start += len;
    }
    out
}

/// The subtree holding `items`: sorted by key, no key twice, at least one. Runs of at
/// most [`VALUES_MAX`] keys of one length become value nodes.
pub(super) fn build<K: AsRef<[u8]>, V: Clone>(items: &[(K, V)], depth: usize) -> NodeRef<V> {
    build_node(items, depth, true)
}

/// [`build`], but the top is an inner node even where a value node would do (how a value
/// node that must change kind is rebuilt); `items` are at least two.
pub(super) fn build_inner<K: AsRef<[u8]>, V: Clone>(items: &[(K, V)], depth: usize) -> NodeRef<V> {
    build_node(items, depth, false)
}

fn build_node<K: AsRef<[u8]>, V: Clone>(
    items: &[(K, V)],
    depth: usize,
    values: bool,
) -> NodeRef<V> {
    let first = items[0].0.as_ref();
    if items.len() == 1 {
        return NodeRef::Leaf(leaf(first, items[0].1.clone()));
    }
    let last = items[items.len() - 1].0.as_ref();
    let at = depth + common_prefix(&first[depth..], &last[depth..]);
    let mut header = Header::new(&first[depth..at]);
    header.entries = items.len();
    let mut rest = items;
    if first.len() == at {
        // Sorted: only the first key can end where the keys part.
        header.terminal = Some(leaf(first, items[0].1.clone()));
        rest = &items[1..];
    }
    let width = rest[0].0.as_ref().len();
    if values && rest.len() <= VALUES_MAX && rest.iter().all(|(k, _)| k.as_ref().len() == width) {
        let mut node = ValueNode::new(header, width, at);
        for (key, value) in rest {
            node.put(key.as_ref(), value.clone());
        }
        return NodeRef::Values(Arc::new(node));
    }
    let groups = runs(rest, at, |(k, _)| k.as_ref());
    assemble(
        header,
        groups.len(),
        groups
            .into_iter()
            .map(|(byte, group)| (byte, build(group, at + 1))),
    )
}
