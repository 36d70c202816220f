//! Self-inspection: the invariant check the tests call, and node counts for tests and
//! sizing.

#[cfg(test)]
use std::sync::Arc;

use super::node::{for_each_child, Header, Inner, NodeRef};
#[cfg(test)]
use super::node::{header_of, VALUES_MAX};
use super::Part;

impl<V: Clone> Part<V> {
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
                assert!(values.len() <= VALUES_MAX);
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
            let mut visit = |h: &Header<V>| {
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
