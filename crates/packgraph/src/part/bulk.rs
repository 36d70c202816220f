//! Operations on many keys at once that follow the tree's shape:
//!
//! * [`build`]: a tree from sorted entries, its nodes allocated in traversal order (each
//!   node before its children, children in key order), which is what [`Part::compact`]
//!   and bulk loading use;
//! * [`insert_sorted`] and [`remove_sorted`]: a sorted batch walks the tree once, each
//!   node on the way visited (and copied, if another version holds it) once for the whole
//!   batch, and a run of new keys under a missing child is built as a subtree;
//! * [`union`] and [`intersection`]: recursion over both trees at once; a subtree the two
//!   share (the same node, as versions of one map do) is taken whole in O(1), and a subtree
//!   only one side has is shared into the result without being visited.
//!
//! Every function takes the `depth` of the slot it works on (the key bytes consumed by the
//! path to it); every key passed in shares those bytes with the slot's keys.
//!
//! [`Part::compact`]: super::Part::compact

use std::sync::Arc;

use super::node::{
    Header, Inner, Leaf, Node16, Node256, Node4, Node48, NodeRef, ValueNode, VALUES_MAX,
};
use super::{
    common_prefix, dispatch_mut, grow, header_mut, header_of, insert, leaf, normalize, remove,
    After,
};

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
fn runs<T>(items: &[T], depth: usize, key: impl Fn(&T) -> &[u8]) -> Vec<(u8, &[T])> {
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

/// What a batch step on an inner node asks its slot's owner to do.
enum BatchStep {
    Done(usize),
    /// Some keys leave the compressed path: insert them one by one (splits the path).
    OneByOne,
    /// The node needs room for this many children.
    Grow(usize),
}

fn capacity<V>(node: &NodeRef<V>) -> usize {
    match node {
        NodeRef::Leaf(_) => 0,
        NodeRef::N4(_) => 4,
        NodeRef::N16(_) => 16,
        NodeRef::N48(_) => 48,
        NodeRef::N256(_) | NodeRef::Values(_) => 256,
    }
}

/// Inserts `items` (sorted, no key twice) below `slot`; returns how many keys were new.
pub(super) fn insert_sorted<K: AsRef<[u8]>, V: Clone>(
    slot: &mut NodeRef<V>,
    items: &[(K, V)],
    depth: usize,
) -> usize {
    if let [(key, value)] = items {
        return usize::from(insert(slot, key.as_ref(), depth, value.clone()).is_none());
    }
    loop {
        let step = dispatch_mut!(slot, n => insert_sorted_inner(n, items, depth), l => {
            // A lone leaf meets a run of keys: build the subtree of both.
            let (key, value) = (l.key.as_slice().to_vec(), l.value.clone());
            let mut merged: Vec<(&[u8], V)> = Vec::with_capacity(items.len() + 1);
            let at = items.partition_point(|(k, _)| k.as_ref() < key.as_slice());
            merged.extend(items[..at].iter().map(|(k, v)| (k.as_ref(), v.clone())));
            let replaced = items.get(at).is_some_and(|(k, _)| k.as_ref() == key.as_slice());
            if !replaced {
                merged.push((&key, value));
            }
            merged.extend(items[at..].iter().map(|(k, v)| (k.as_ref(), v.clone())));
            *slot = build(&merged, depth);
            return items.len() - usize::from(replaced);
        }, _v => BatchStep::OneByOne);
        match step {
            BatchStep::Done(added) => return added,
            BatchStep::OneByOne => {
                return items
                    .iter()
                    .filter(|(k, v)| insert(slot, k.as_ref(), depth, v.clone()).is_none())
                    .count()
            }
            BatchStep::Grow(needed) => {
                while capacity(slot) < needed {
                    grow(slot);
                }
            }
        }
    }
}

fn insert_sorted_inner<K: AsRef<[u8]>, V: Clone, N: Inner<V>>(
    node: &mut Arc<N>,
    items: &[(K, V)],
    depth: usize,
) -> BatchStep {
    let prefix = &node.header().prefix;
    let under = |k: &[u8]| k.get(depth..).is_some_and(|rest| rest.starts_with(prefix));
    // Sorted: if the first and the last key follow the path, every key between does.
    let (first, last) = (items[0].0.as_ref(), items[items.len() - 1].0.as_ref());
    if !under(first) || !under(last) {
        return BatchStep::OneByOne;
    }
    let at = depth + prefix.len();
    let (terminal, rest) = match items.split_first() {
        Some((item, rest)) if item.0.as_ref().len() == at => (Some(item), rest),
        _ => (None, items),
    };
    let groups = runs(rest, at, |(k, _)| k.as_ref());
    let new_children = groups
        .iter()
        .filter(|(b, _)| node.child(*b).is_none())
        .count();
    let needed = node.header().count as usize + new_children;
    if needed > N::CAPACITY {
        return BatchStep::Grow(needed);
    }
    let node = Arc::make_mut(node);
    let mut added = 0;
    if let Some((key, value)) = terminal {
        let old = node.header_mut().set_terminal(key.as_ref(), value.clone());
        added += usize::from(old.is_none());
    }
    let mut below = 0;
    for (byte, group) in groups {
        match node.child_mut(byte) {
            Some(child) => below += insert_sorted(child, group, at + 1),
            None => {
                node.add(byte, build(group, at + 1));
                below += group.len();
            }
        }
    }
    node.header_mut().entries += below;
    BatchStep::Done(added + below)
}

/// Removes `keys` (sorted, no key twice) below `slot`; returns how many were present and
/// whether the slot keeps a node.
pub(super) fn remove_sorted<K: AsRef<[u8]>, V: Clone>(
    slot: &mut NodeRef<V>,
    keys: &[K],
    depth: usize,
) -> (usize, After) {
    match keys {
        [] => return (0, After::Keep),
        [key] => {
            let (old, after) = remove(slot, key.as_ref(), depth);
            return (usize::from(old.is_some()), after);
        }
        _ => {}
    }
    let removed = dispatch_mut!(slot, n => remove_sorted_inner(n, keys, depth), l => {
        let key = l.key.as_slice();
        return match keys.binary_search_by(|k| k.as_ref().cmp(key)) {
            Ok(_) => (1, After::Delete),
            Err(_) => (0, After::Keep),
        };
    }, _v => {
        // One by one: each removal keeps the node's shape right.
        let mut removed = 0;
        for key in keys {
            let (old, after) = remove(slot, key.as_ref(), depth);
            removed += usize::from(old.is_some());
            if after == After::Delete {
                return (removed, After::Delete);
            }
        }
        return (removed, After::Keep);
    });
    if removed == 0 {
        return (0, After::Keep);
    }
    (removed, normalize(slot))
}

fn remove_sorted_inner<K: AsRef<[u8]>, V: Clone, N: Inner<V>>(
    node: &mut Arc<N>,
    keys: &[K],
    depth: usize,
) -> usize {
    let prefix = &node.header().prefix;
    fn tail<K: AsRef<[u8]>>(k: &K, depth: usize) -> &[u8] {
        k.as_ref().get(depth..).unwrap_or(&[])
    }
    // The keys that follow the compressed path are one run of the sorted keys.
    let lo = keys.partition_point(|k| tail(k, depth) < &prefix[..]);
    let len = keys[lo..].partition_point(|k| tail(k, depth).starts_with(prefix));
    let keys = &keys[lo..lo + len];
    let at = depth + prefix.len();
    let (ends_here, rest) = match keys.split_first() {
        Some((key, rest)) if key.as_ref().len() == at => (true, rest),
        _ => (false, keys),
    };
    let groups = runs(rest, at, |k| k.as_ref());
    let terminal = ends_here && node.header().terminal.is_some();
    // Copy nothing when nothing can be removed here.
    if !terminal && groups.iter().all(|(b, _)| node.child(*b).is_none()) {
        return 0;
    }
    let node = Arc::make_mut(node);
    let mut removed = 0;
    if terminal {
        removed += usize::from(node.header_mut().take_terminal().is_some());
    }
    let mut below = 0;
    for (byte, group) in groups {
        if let Some(child) = node.child_mut(byte) {
            let (count, after) = remove_sorted(child, group, at + 1);
            below += count;
            if after == After::Delete {
                node.take(byte);
            }
        }
    }
    node.header_mut().entries -= below;
    removed + below
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
        if !key.get(depth..)?.starts_with(&header.prefix) {
            return None;
        }
        depth += header.prefix.len();
        let Some(&byte) = key.get(depth) else {
            return header
                .terminal
                .as_ref()
                .filter(|l| l.key.as_slice() == key)
                .map(|l| (l.key.as_slice(), &l.value));
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
    super::for_each_child(node, &mut |byte, child| out.push((byte, child.clone())));
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
pub(super) fn union<V: Clone>(a: &NodeRef<V>, b: &NodeRef<V>, depth: usize) -> NodeRef<V> {
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
pub(super) fn intersection<V: Clone>(
    a: &NodeRef<V>,
    b: &NodeRef<V>,
    depth: usize,
) -> Option<NodeRef<V>> {
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
