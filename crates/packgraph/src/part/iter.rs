//! Iteration in key order and range seeks: a stack of frames, one per node on the path to
//! the next entry; a range descends once to its start rather than scanning from the first
//! key.

use std::ops::Bound;

use super::node::{common_prefix, header_of, Inner, NodeRef};
use super::Part;

impl<V: Clone> Part<V> {
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
}

/// One node being iterated: its terminal first, then its children from position `next`.
pub(super) struct Frame<'a, V> {
    node: &'a NodeRef<V>,
    /// Whether the terminal (or, for a leaf, the leaf) is still to be yielded.
    fresh: bool,
    /// Next child position: a slot for nodes 4 and 16, a byte for 48 and 256.
    next: usize,
}

impl<'a, V> Frame<'a, V> {
    pub(super) fn new(node: &'a NodeRef<V>) -> Self {
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
    pub(super) stack: Vec<Frame<'a, V>>,
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
