//! Union and intersection by tree shape: recursion over both trees at once; a subtree the
//! two share (the same node, as versions of one map do) is taken whole in O(1), and a
//! subtree only one side has is shared into the result without being visited.
//!
//! Every function takes the `depth` of the slot it works on (the key bytes consumed by the
//! path to it).

use std::sync::Arc;

use super::build::{assemble, build, runs};
use super::node::{
    common_prefix, for_each_child, header_mut, header_of, leaf, Header, Leaf, NodeRef,
};
use super::point::{entry_in, insert};
use super::Part;

impl<V: Clone> Part<V> {
    /// Every entry of `self` and `other`; for a key in both, `self`'s value.
    ///
    /// Walks both trees together: a subtree the two share (versions of one map share all
    /// they did not change) is taken whole without being visited, as is a subtree only one
    /// side has, so uniting two versions costs in proportion to their differences.
    pub fn union(&self, other: &Part<V>) -> Part<V> {
        let root = match (&self.root, &other.root) {
            (None, root) | (root, None) => root.clone(),
            (Some(a), Some(b)) => Some(union(a, b, 0)),
        };
        Part::from_root(root)
    }

    /// The entries of `self` whose keys are also in `other`, with `self`'s values. Shared
    /// subtrees are taken whole, as in [`Part::union`].
    pub fn intersection(&self, other: &Part<V>) -> Part<V> {
        let root = match (&self.root, &other.root) {
            (Some(a), Some(b)) => intersection(a, b, 0),
            _ => None,
        };
        Part::from_root(root)
    }
}

/// `node` with its compressed path replaced by `prefix` (a copy of the node if another
/// version holds it; a leaf is returned as it is).
fn with_prefix<V: Clone>(node: &NodeRef<V>, prefix: &[u8]) -> NodeRef<V> {
    let mut node = node.clone();
    if let Some(header) = header_mut(&mut node) {
        header.prefix = prefix.into();
    }
    node
}

/// The children of an inner node (reached at `depth`) in byte order; a value node's
/// entries are grouped and built into children as an inner node would hold them.
fn children<V: Clone>(node: &NodeRef<V>, depth: usize) -> Vec<(u8, NodeRef<V>)> {
    if let NodeRef::Values(values) = node {
        let at = depth + values.header.prefix.len();
        let items: Vec<(&[u8], V)> = values.items().collect();
        return runs(&items, at, |(k, _)| k)
            .into_iter()
            .map(|(byte, group)| (byte, build(group, at + 1)))
            .collect();
    }
    let mut out = Vec::new();
    for_each_child(node, &mut |byte, child| out.push((byte, child.clone())));
    out
}

/// A node with `prefix` and `terminal` over the union of two child lists (each in byte
/// order); children under the same byte are united, `a`'s entries winning.
fn merge_node<V: Clone>(
    prefix: &[u8],
    terminal: Option<Arc<Leaf<V>>>,
    a: Vec<(u8, NodeRef<V>)>,
    b: Vec<(u8, NodeRef<V>)>,
    depth: usize,
) -> NodeRef<V> {
    let at = depth + prefix.len();
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (None, None) => break,
            (Some(_), None) => a.next(),
            (None, Some(_)) => b.next(),
            (Some(x), Some(y)) if x.0 < y.0 => a.next(),
            (Some(x), Some(y)) if x.0 > y.0 => b.next(),
            (Some(_), Some(_)) => {
                let ((byte, x), (_, y)) = (a.next().expect("peeked"), b.next().expect("peeked"));
                Some((byte, union(&x, &y, at + 1)))
            }
        };
        merged.extend(next);
    }
    // A value node's entries may share more than its path (after removals), so the union
    // can have a single child: `shape` compresses that path.
    shape(prefix, terminal, merged).expect("a union is never empty")
}

/// Every entry of the subtrees `a` and `b` (reached at `depth`); for a key in both, `a`'s
/// value.
fn union<V: Clone>(a: &NodeRef<V>, b: &NodeRef<V>, depth: usize) -> NodeRef<V> {
    if a.id() == b.id() {
        return a.clone();
    }
    if let NodeRef::Leaf(l) = a {
        let mut out = b.clone();
        insert(&mut out, l.key.as_slice(), depth, l.value.clone());
        return out;
    }
    if let NodeRef::Leaf(l) = b {
        let mut out = a.clone();
        if entry_in(a, l.key.as_slice(), depth).is_none() {
            insert(&mut out, l.key.as_slice(), depth, l.value.clone());
        }
        return out;
    }
    if let Some(node) = merge_values(a, b, depth, Merge::Union) {
        return node.expect("a union is never empty");
    }
    let (ha, hb) = (header_of(a).expect("inner"), header_of(b).expect("inner"));
    let (pa, pb) = (&ha.prefix[..], &hb.prefix[..]);
    let n = common_prefix(pa, pb);
    match (n == pa.len(), n == pb.len()) {
        (true, true) => merge_node(
            pa,
            ha.terminal.clone().or_else(|| hb.terminal.clone()),
            children(a, depth),
            children(b, depth),
            depth,
        ),
        // `b`'s path goes on below `a`: `b` joins `a`'s children.
        (true, false) => merge_node(
            pa,
            ha.terminal.clone(),
            children(a, depth),
            vec![(pb[n], with_prefix(b, &pb[n + 1..]))],
            depth,
        ),
        (false, true) => merge_node(
            pb,
            hb.terminal.clone(),
            vec![(pa[n], with_prefix(a, &pa[n + 1..]))],
            children(b, depth),
            depth,
        ),
        // The paths part: a new node above both.
        (false, false) => merge_node(
            &pa[..n],
            None,
            vec![(pa[n], with_prefix(a, &pa[n + 1..]))],
            vec![(pb[n], with_prefix(b, &pb[n + 1..]))],
            depth,
        ),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Merge {
    Union,
    Intersection,
}

/// Union or intersection of two value nodes with the same path and key length, by merging
/// their sorted arrays (`a`'s values win); `None` if `a` and `b` are not such a pair.
/// The result is rebuilt as a bulk load would build it (usually one value node).
fn merge_values<V: Clone>(
    a: &NodeRef<V>,
    b: &NodeRef<V>,
    depth: usize,
    how: Merge,
) -> Option<Option<NodeRef<V>>> {
    let (NodeRef::Values(x), NodeRef::Values(y)) = (a, b) else {
        return None;
    };
    if x.header.prefix != y.header.prefix || x.len() == 0 || y.len() == 0 {
        return None;
    }
    if x.entry(0).0.len() != y.entry(0).0.len() {
        return None;
    }
    let mut items: Vec<(&[u8], V)> = Vec::with_capacity(x.len() + y.len() + 1);
    let terminal = match how {
        Merge::Union => x.header.terminal.as_ref().or(y.header.terminal.as_ref()),
        Merge::Intersection => x
            .header
            .terminal
            .as_ref()
            .filter(|_| y.header.terminal.is_some()),
    };
    if let Some(t) = terminal {
        items.push((t.key.as_slice(), t.value.clone()));
    }
    let (mut i, mut j) = (0, 0);
    while i < x.len() || j < y.len() {
        let order = match (i < x.len(), j < y.len()) {
            (true, true) => x.entry(i).0.cmp(y.entry(j).0),
            (true, false) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let both = order == std::cmp::Ordering::Equal;
        let (key, value) = if order.is_gt() {
            y.entry(j)
        } else {
            x.entry(i)
        };
        if how == Merge::Union || both {
            items.push((key, value.clone()));
        }
        i += usize::from(!order.is_gt());
        j += usize::from(!order.is_lt());
    }
    Some((!items.is_empty()).then(|| build(&items, depth)))
}

/// `node` placed below the path `path`: a leaf as it is, an inner node with `path` in
/// front of its compressed path.
fn below<V: Clone>(path: Vec<u8>, node: NodeRef<V>) -> NodeRef<V> {
    match header_of(&node) {
        None => node,
        Some(header) => {
            let mut prefix = path;
            prefix.extend_from_slice(&header.prefix);
            with_prefix(&node, &prefix)
        }
    }
}

/// The entries of `a` whose keys are also in `b` (subtrees reached at `depth`), with `a`'s
/// values; `None` if there are none.
fn intersection<V: Clone>(a: &NodeRef<V>, b: &NodeRef<V>, depth: usize) -> Option<NodeRef<V>> {
    if a.id() == b.id() {
        return Some(a.clone());
    }
    if let NodeRef::Leaf(l) = a {
        return entry_in(b, l.key.as_slice(), depth).map(|_| a.clone());
    }
    if let NodeRef::Leaf(l) = b {
        return entry_in(a, l.key.as_slice(), depth)
            .map(|(k, v)| NodeRef::Leaf(leaf(k, v.clone())));
    }
    if let Some(node) = merge_values(a, b, depth, Merge::Intersection) {
        return node;
    }
    let (ha, hb) = (header_of(a).expect("inner"), header_of(b).expect("inner"));
    let (pa, pb) = (&ha.prefix[..], &hb.prefix[..]);
    let n = common_prefix(pa, pb);
    let at = depth + n;
    match (n == pa.len(), n == pb.len()) {
        (true, true) => {
            let terminal = ha.terminal.clone().filter(|_| hb.terminal.is_some());
            let b_children = children(b, depth);
            let mut kept = Vec::new();
            for (byte, x) in children(a, depth) {
                if let Ok(i) = b_children.binary_search_by_key(&byte, |(k, _)| *k) {
                    kept.extend(intersection(&x, &b_children[i].1, at + 1).map(|c| (byte, c)));
                }
            }
            shape(pa, terminal, kept)
        }
        (true, false) => {
            let child = children(a, depth)
                .into_iter()
                .find(|(byte, _)| *byte == pb[n])?
                .1;
            let inner = intersection(&child, &with_prefix(b, &pb[n + 1..]), at + 1)?;
            Some(below(pb[..=n].to_vec(), inner))
        }
        (false, true) => {
            let child = children(b, depth)
                .into_iter()
                .find(|(byte, _)| *byte == pa[n])?
                .1;
            let inner = intersection(&with_prefix(a, &pa[n + 1..]), &child, at + 1)?;
            Some(below(pa[..=n].to_vec(), inner))
        }
        (false, false) => None,
    }
}

/// The normal form of a node with `prefix`, `terminal` and `children`: nothing, a lone
/// leaf, a lone child with the path in front, or an inner node.
fn shape<V: Clone>(
    prefix: &[u8],
    terminal: Option<Arc<Leaf<V>>>,
    mut children: Vec<(u8, NodeRef<V>)>,
) -> Option<NodeRef<V>> {
    match (children.len(), terminal) {
        (0, None) => None,
        (0, Some(l)) => Some(NodeRef::Leaf(l)),
        (1, None) => {
            let (byte, child) = children.pop().expect("one child");
            let mut path = prefix.to_vec();
            path.push(byte);
            Some(below(path, child))
        }
        (count, terminal) => {
            let mut header = Header::new(prefix);
            header.entries = usize::from(terminal.is_some())
                + children.iter().map(|(_, c)| c.entries()).sum::<usize>();
            header.terminal = terminal;
            Some(assemble(header, count, children.into_iter()))
        }
    }
}
