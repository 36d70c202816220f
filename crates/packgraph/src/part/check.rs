//! Self-inspection: [`Part::check_invariants`], the full structural validation that tests
//! and debugging call after each operation, and node counts for tests and sizing.
//!
//! What is checked, node by node in key order (the order iteration yields the entries in),
//! with "the path" the key bytes leading from the root to the node:
//!
//! * keys: every entry's key starts with the path (a leaf's, or a value node's followed by
//!   its compressed path) and comes after the entry before it, so keys strictly increase in
//!   iteration; a terminal's key is exactly the path followed by the node's compressed path
//!   (the key ends at the node); a key stored inline fits its inline buffer;
//! * counts: each inner and value node's `entries` is the number of entries below it, and
//!   the map's `len` is the total;
//! * node kinds: nodes 4 and 16 hold at most 4 and 16 children, their child bytes strictly
//!   increase and exactly their first `count` slots are filled; a node 48 holds at most 48,
//!   each byte it indexes names a filled slot in range that no other byte names, and no
//!   filled slot goes unindexed; every kind finds exactly `count` children by byte;
//! * shape (what removals, `normalize`, and bulk building keep): an inner node has two
//!   children or more, or one and a terminal (path compression: no inner node is empty or
//!   a lone child's parent without a terminal); a value node has two entries or more, or one
//!   and a terminal; a node 256 has more than `SHRINK_256_AT` (36) children. Nodes 16 and 48
//!   have no firmer lower bound: a sorted batch removal shrinks a node by one kind at most,
//!   so e.g. a node 256 left with 3 children becomes a node 48 with 3 until a later removal
//!   below it;
//! * value nodes: at most [`VALUES_MAX`] entries, key and value arrays aligned (`width` key
//!   bytes per value) and counted by the header, and their keys' shared bytes end where the
//!   node's path does (the interpolation search reads the bytes after them).
//!
//! Not checked, because the code does not promise it: that a value node's compressed path is
//! as long as its keys allow (after removals its entries may share more), and that a subtree
//! that could be a value node is one (only rebuilding makes one).

#[cfg(test)]
use std::sync::Arc;

#[cfg(test)]
use super::node::header_of;
#[cfg(doc)]
use super::node::VALUES_MAX;
use super::node::{for_each_child, Header, Inner, Key, Leaf, Node48, NodeRef, ValueNode};
use super::point::SHRINK_256_AT;
use super::{hex, Part, PartError};

impl<V: Clone> Part<V> {
    /// Checks every invariant the tree keeps (listed in `part/check.rs`): keys strictly
    /// increasing in iteration and each under the path that leads to it, every node's entry
    /// and child counts, each node kind's capacity and layout, path compression, value
    /// nodes' arrays, and that `len` is the number of entries. For tests and debugging;
    /// O(n) time.
    ///
    /// # Errors
    /// [`PartError::Invariant`] naming the first node found broken (by the key bytes that
    /// lead to it) and what is wrong.
    ///
    /// # Examples
    /// ```
    /// use packgraph::part::Part;
    ///
    /// let map: Part<u32> = (0..1000u32).map(|k| (k.to_be_bytes(), k)).collect();
    /// map.check_invariants().unwrap();
    /// ```
    pub fn check_invariants(&self) -> Result<(), PartError> {
        let mut walk = Walk {
            path: Vec::new(),
            last: None,
        };
        let entries = match &self.root {
            Some(root) => walk.node(root)?,
            None => 0,
        };
        if entries != self.len {
            return Err(PartError::Invariant {
                path: Vec::new(),
                what: format!("len is {} but the tree holds {entries} entries", self.len),
            });
        }
        Ok(())
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

/// One check of a tree: the position reached, and the last key seen.
struct Walk<'a> {
    /// The key bytes leading from the root to the node being checked.
    path: Vec<u8>,
    /// The greatest key seen so far (entries are visited in key order).
    last: Option<&'a [u8]>,
}

impl<'a> Walk<'a> {
    /// `what` is wrong at the node being checked.
    fn broken(&self, what: String) -> PartError {
        PartError::Invariant {
            path: self.path.clone(),
            what,
        }
    }

    /// Checks the subtree under `node` (reached by `self.path`); returns its entries.
    fn node<V: Clone + 'a>(&mut self, node: &'a NodeRef<V>) -> Result<usize, PartError> {
        match node {
            NodeRef::Leaf(l) => self.leaf(l),
            NodeRef::N4(n) => {
                let slots = sorted_slots(&n.header, &n.keys, &n.children, "node 4");
                slots.map_err(|what| self.broken(what))?;
                self.inner(&**n, "node 4", 0)
            }
            NodeRef::N16(n) => {
                let slots = sorted_slots(&n.header, &n.keys, &n.children, "node 16");
                slots.map_err(|what| self.broken(what))?;
                self.inner(&**n, "node 16", 0)
            }
            NodeRef::N48(n) => {
                indexed_slots(n).map_err(|what| self.broken(what))?;
                self.inner(&**n, "node 48", 0)
            }
            NodeRef::N256(n) => self.inner(&**n, "node 256", SHRINK_256_AT + 1),
            NodeRef::Values(v) => self.values(v),
        }
    }

    /// Checks a leaf below `self.path`; returns its one entry.
    fn leaf<V: 'a>(&mut self, leaf: &'a Leaf<V>) -> Result<usize, PartError> {
        self.inline_fits(&leaf.key)?;
        let path = self.path.clone();
        self.entry(leaf.key.as_slice(), &path)?;
        Ok(1)
    }

    /// Checks an inner node of kind `kind` (its slots already checked) and its subtree,
    /// which holds at least `fewest` children; returns the subtree's entries.
    fn inner<V: Clone + 'a, N: Inner<V>>(
        &mut self,
        node: &'a N,
        kind: &str,
        fewest: usize,
    ) -> Result<usize, PartError> {
        let header = node.header();
        // Every child as a lookup finds it, so a child the search cannot reach is missed.
        let children: Vec<(u8, &'a NodeRef<V>)> = (0..=255u8)
            .filter_map(|byte| node.child(byte).map(|child| (byte, child)))
            .collect();
        let count = usize::from(header.count);
        if children.len() != count {
            let found = children.len();
            return Err(self.broken(format!(
                "{kind} counts {count} children but {found} are found by byte"
            )));
        }
        shape(kind, count, header).map_err(|what| self.broken(what))?;
        if count < fewest {
            return Err(self.broken(format!(
                "{kind} holds {count} children, fewer than {fewest} (removals shrink it sooner)"
            )));
        }
        let mut entries = self.terminal(header)?;
        let depth = self.path.len();
        self.path.extend_from_slice(&header.prefix);
        for (byte, child) in children {
            self.path.push(byte);
            let below = self.node(child);
            self.path.pop();
            entries += below?;
        }
        self.path.truncate(depth);
        self.counted(header, entries)
    }

    /// Checks a value node and its entries; returns how many there are.
    fn values<V: Clone + 'a>(&mut self, node: &'a ValueNode<V>) -> Result<usize, PartError> {
        node.check_arrays().map_err(|what| self.broken(what))?;
        let header = &node.header;
        shape("value node", node.len(), header).map_err(|what| self.broken(what))?;
        let end = self.path.len() + header.prefix.len();
        if node.shared() != end {
            let shared = node.shared();
            return Err(self.broken(format!(
                "value node's keys share {shared} bytes by its count, but its path ends at {end}"
            )));
        }
        let mut entries = self.terminal(header)?;
        let under = [&self.path[..], &header.prefix[..]].concat();
        for i in 0..node.len() {
            self.entry(node.entry(i).0, &under)?;
        }
        entries += node.len();
        self.counted(header, entries)
    }

    /// Checks the terminal of a node at `self.path`, if any; returns 1 if there is one.
    fn terminal<V: 'a>(&mut self, header: &'a Header<V>) -> Result<usize, PartError> {
        let Some(terminal) = &header.terminal else {
            return Ok(0);
        };
        self.inline_fits(&terminal.key)?;
        let key = terminal.key.as_slice();
        let end = [&self.path[..], &header.prefix[..]].concat();
        if key != end {
            return Err(self.broken(format!(
                "terminal key {} is not the path to the node's end {}",
                hex(key),
                hex(&end)
            )));
        }
        self.entry(key, &end)?;
        Ok(1)
    }

    /// Checks that `key` is under `under` and comes after the last key seen.
    fn entry(&mut self, key: &'a [u8], under: &[u8]) -> Result<(), PartError> {
        if !key.starts_with(under) {
            return Err(self.broken(format!(
                "key {} is not under the path {} that leads to it",
                hex(key),
                hex(under)
            )));
        }
        if let Some(last) = self.last.filter(|&last| last >= key) {
            return Err(self.broken(format!(
                "key {} does not come after {}",
                hex(key),
                hex(last)
            )));
        }
        self.last = Some(key);
        Ok(())
    }

    /// Checks that an inline key fits its buffer (before anything reads it).
    fn inline_fits(&self, key: &Key) -> Result<(), PartError> {
        match key {
            Key::Inline { len, bytes } if usize::from(*len) > bytes.len() => {
                Err(self.broken(format!(
                    "an inline key of {len} bytes overflows its {}-byte buffer",
                    bytes.len()
                )))
            }
            _ => Ok(()),
        }
    }

    /// Checks a node's entry count against the `entries` found below it.
    fn counted<V>(&self, header: &Header<V>, entries: usize) -> Result<usize, PartError> {
        if header.entries != entries {
            let counted = header.entries;
            return Err(self.broken(format!("node counts {counted} entries but holds {entries}")));
        }
        Ok(entries)
    }
}

/// Path compression: a node holds two children (entries, for a value node) or more, or
/// one and a terminal.
fn shape<V>(kind: &str, count: usize, header: &Header<V>) -> Result<(), String> {
    let held = if kind == "value node" {
        "entries"
    } else {
        "children"
    };
    match (count, header.terminal.is_some()) {
        (0, _) => Err(format!("{kind} has no {held}")),
        (1, false) => Err(format!(
            "{kind} has one of its {held} and no terminal (it should have been compressed into a leaf or its child)"
        )),
        _ => Ok(()),
    }
}

/// The slots of a node 4 or 16: at most `children.len()`, child bytes strictly increasing,
/// exactly the first `count` filled.
fn sorted_slots<V>(
    header: &Header<V>,
    keys: &[u8],
    children: &[Option<NodeRef<V>>],
    kind: &str,
) -> Result<(), String> {
    let (count, capacity) = (usize::from(header.count), children.len());
    if count > capacity {
        return Err(format!(
            "{kind} counts {count} children, more than {capacity}"
        ));
    }
    if let Some(i) = (1..count).find(|&i| keys[i - 1] >= keys[i]) {
        let (before, byte) = (keys[i - 1], keys[i]);
        return Err(format!(
            "{kind}: child byte {byte:02x} at slot {i} does not come after {before:02x}"
        ));
    }
    if let Some(i) = (0..count).find(|&i| children[i].is_none()) {
        return Err(format!("{kind}: slot {i} of its {count} children is empty"));
    }
    if let Some(i) = (count..capacity).find(|&i| children[i].is_some()) {
        return Err(format!(
            "{kind}: slot {i}, past its {count} children, holds a child"
        ));
    }
    Ok(())
}

/// The slots of a node 48: at most 48 children; each byte's index entry (slot + 1, 0 for
/// none) names a filled slot in range that no other byte names; every filled slot is named.
fn indexed_slots<V>(node: &Node48<V>) -> Result<(), String> {
    let count = usize::from(node.header.count);
    let capacity = node.children.len();
    if count > capacity {
        return Err(format!(
            "node 48 counts {count} children, more than {capacity}"
        ));
    }
    let mut owner: Vec<Option<u8>> = vec![None; capacity];
    for byte in 0..=255u8 {
        let slot = match node.index[usize::from(byte)] {
            0 => continue,
            entry => usize::from(entry) - 1,
        };
        if slot >= capacity {
            return Err(format!(
                "node 48: byte {byte:02x} indexes slot {slot}, past {capacity}"
            ));
        }
        if node.children[slot].is_none() {
            return Err(format!(
                "node 48: byte {byte:02x} indexes the empty slot {slot}"
            ));
        }
        if let Some(other) = owner[slot].replace(byte) {
            return Err(format!(
                "node 48: bytes {other:02x} and {byte:02x} both index slot {slot}"
            ));
        }
    }
    if let Some(slot) = (0..capacity).find(|&s| node.children[s].is_some() && owner[s].is_none()) {
        return Err(format!(
            "node 48: slot {slot} holds a child that no byte indexes"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use crate::part::node::{Inner, Key, Leaf, Node256, Node4, Node48, NodeRef, ValueNode};
    use crate::part::point::SHRINK_256_AT;
    use crate::part::Part;

    /// `part` fails its check with a message that contains `what`.
    #[track_caller]
    fn assert_broken(part: &Part<u32>, what: &str) {
        let err = part.check_invariants().expect_err("a corrupted tree");
        let err = err.to_string();
        assert!(err.contains(what), "{err}");
    }

    /// Three keys of different lengths under different first bytes: a root node 4.
    fn with_node4() -> Part<u32> {
        let mut part = Part::new();
        for key in [&b"a"[..], b"bc", b"cde"] {
            part.insert(key, 1);
        }
        part.check_invariants().unwrap();
        part
    }

    /// Keys of one to three bytes under `children` first bytes, so that no value node forms.
    fn with_children(children: u8) -> Part<u32> {
        let part: Part<u32> = (0..children)
            .map(|b| (vec![b; usize::from(b % 3) + 1], 1))
            .collect();
        part.check_invariants().unwrap();
        part
    }

    /// Keys of one length under one path: a root value node.
    fn with_values(keys: impl IntoIterator<Item = [u8; 2]>) -> Part<u32> {
        let part: Part<u32> = keys.into_iter().map(|k| (k, 1)).collect();
        part.check_invariants().unwrap();
        part
    }

    fn node4(part: &mut Part<u32>) -> &mut Node4<u32> {
        match part.root.as_mut() {
            Some(NodeRef::N4(n)) => Arc::make_mut(n),
            _ => panic!("the root should be a node 4"),
        }
    }

    fn node48(part: &mut Part<u32>) -> &mut Node48<u32> {
        match part.root.as_mut() {
            Some(NodeRef::N48(n)) => Arc::make_mut(n),
            _ => panic!("the root should be a node 48"),
        }
    }

    fn node256(part: &mut Part<u32>) -> &mut Node256<u32> {
        match part.root.as_mut() {
            Some(NodeRef::N256(n)) => Arc::make_mut(n),
            _ => panic!("the root should be a node 256"),
        }
    }

    fn values(part: &mut Part<u32>) -> &mut ValueNode<u32> {
        match part.root.as_mut() {
            Some(NodeRef::Values(n)) => Arc::make_mut(n),
            _ => panic!("the root should be a value node"),
        }
    }

    fn leaf(key: &[u8]) -> NodeRef<u32> {
        NodeRef::Leaf(Arc::new(Leaf {
            key: Key::new(key),
            value: 1,
        }))
    }

    #[test]
    fn the_length_must_be_the_number_of_entries() {
        let mut part = with_node4();
        part.len += 1;
        assert_broken(&part, "len is 4 but the tree holds 3 entries");
    }

    #[test]
    fn entry_counts_must_match_the_subtree() {
        let mut part = with_node4();
        node4(&mut part).header.entries += 1;
        assert_broken(&part, "at the root: node counts 4 entries but holds 3");
        let mut part = with_values([[1, 1], [1, 2], [1, 3]]);
        values(&mut part).header.entries -= 1;
        assert_broken(&part, "node counts 2 entries but holds 3");
    }

    #[test]
    fn nodes_4_and_16_keep_sorted_bytes_and_filled_slots() {
        let mut part = with_node4();
        let node = node4(&mut part);
        node.keys.swap(0, 1);
        node.children.swap(0, 1);
        assert_broken(&part, "child byte 61 at slot 1 does not come after 62");

        let mut part = with_node4();
        node4(&mut part).header.count = 5;
        assert_broken(&part, "node 4 counts 5 children, more than 4");

        let mut part = with_node4();
        node4(&mut part).header.count = 2;
        assert_broken(&part, "slot 2, past its 2 children, holds a child");

        let mut part = with_node4();
        node4(&mut part).children[1] = None;
        assert_broken(&part, "slot 1 of its 3 children is empty");
    }

    #[test]
    fn node_48_keeps_its_index_consistent() {
        let mut part = with_children(20);
        let node = node48(&mut part);
        node.index[200] = node.index[0];
        assert_broken(&part, "bytes 00 and c8 both index slot");

        let mut part = with_children(20);
        node48(&mut part).index[200] = 49;
        assert_broken(&part, "byte c8 indexes slot 48, past 48");

        let mut part = with_children(20);
        node48(&mut part).index[200] = 21;
        assert_broken(&part, "byte c8 indexes the empty slot 20");

        let mut part = with_children(20);
        node48(&mut part).index[5] = 0;
        assert_broken(&part, "holds a child that no byte indexes");

        let mut part = with_children(20);
        node48(&mut part).header.count = 49;
        assert_broken(&part, "node 48 counts 49 children, more than 48");

        let mut part = with_children(20);
        node48(&mut part).header.count = 21;
        assert_broken(&part, "node 48 counts 21 children but 20 are found by byte");
    }

    #[test]
    fn node_256_counts_its_children_and_is_never_sparse() {
        let mut part = with_children(60);
        node256(&mut part).header.count -= 1;
        assert_broken(
            &part,
            "node 256 counts 59 children but 60 are found by byte",
        );

        let mut part = with_children(60);
        let node = node256(&mut part);
        let mut removed = 0;
        for byte in 0..(60 - SHRINK_256_AT as u8) {
            removed += node.take(byte).expect("a child").entries();
        }
        node.header.entries -= removed;
        part.len -= removed;
        assert_broken(&part, "node 256 holds 36 children, fewer than 37");
    }

    #[test]
    fn a_batch_removal_may_leave_a_wide_node_sparse() {
        // What the check accepts: removals shrink a node by one kind at a time.
        let mut part = with_children(60);
        let gone: Vec<Vec<u8>> = (3..60u8).map(|b| vec![b; usize::from(b % 3) + 1]).collect();
        part.remove_batch(&gone);
        part.check_invariants().unwrap();
        assert!(matches!(&part.root, Some(NodeRef::N48(n)) if n.header.count == 3));
    }

    #[test]
    fn paths_are_compressed() {
        let mut part = with_node4();
        let node = node4(&mut part);
        for byte in [b'a', b'b'] {
            node.take(byte);
        }
        node.header.entries = 1;
        part.len = 1;
        assert_broken(&part, "node 4 has one of its children and no terminal");

        let mut part = with_node4();
        let node = node4(&mut part);
        for byte in [b'a', b'b', b'c'] {
            node.take(byte);
        }
        node.header.entries = 0;
        part.len = 0;
        assert_broken(&part, "node 4 has no children");

        let mut part = with_values([[1, 1], [1, 2]]);
        let node = values(&mut part);
        let (keys, vals) = node.arrays_mut();
        keys.truncate(2);
        vals.truncate(1);
        node.header.count = 1;
        node.header.entries = 1;
        part.len = 1;
        assert_broken(&part, "value node has one of its entries and no terminal");
    }

    #[test]
    fn keys_sit_under_their_path_and_terminals_end_there() {
        let mut part = with_node4();
        node4(&mut part).children[0] = Some(leaf(b"zz"));
        assert_broken(&part, "key [7a 7a] is not under the path [61]");

        let mut part = with_node4();
        let node = node4(&mut part);
        let NodeRef::Leaf(wrong) = leaf(b"q") else {
            unreachable!()
        };
        node.header.terminal = Some(wrong);
        node.header.entries += 1;
        part.len += 1;
        assert_broken(
            &part,
            "terminal key [71] is not the path to the node's end []",
        );

        let mut part = with_values([[1, 1], [1, 2]]);
        values(&mut part).arrays_mut().0[0] = 9;
        assert_broken(&part, "key [09 01] is not under the path [01]");
    }

    #[test]
    fn keys_strictly_increase() {
        let mut part = with_values([[1, 1], [1, 2], [1, 3]]);
        let keys = values(&mut part).arrays_mut().0;
        keys.swap(1, 3);
        assert_broken(&part, "key [01 01] does not come after [01 02]");
    }

    #[test]
    fn value_nodes_keep_their_arrays_and_path() {
        let mut part = with_values([[1, 1], [1, 2], [1, 3]]);
        values(&mut part).header.count += 1;
        assert_broken(&part, "value node counts 4 entries but holds 3 values");

        let mut part = with_values([[1, 1], [1, 2], [1, 3]]);
        values(&mut part).arrays_mut().0.push(0);
        assert_broken(&part, "value node holds 7 key bytes for 3 keys of 2 bytes");

        let mut part = with_values((0..=255u8).map(|b| [1, b]));
        let node = values(&mut part);
        let (keys, vals) = node.arrays_mut();
        keys.extend_from_slice(&[1, 255]);
        vals.push(1);
        node.header.count += 1;
        assert_broken(&part, "value node holds 257 entries, more than 256");

        let mut part = with_values([[1, 1], [1, 2], [1, 3]]);
        values(&mut part).header.prefix = [1, 1].into();
        assert_broken(
            &part,
            "keys share 1 bytes by its count, but its path ends at 2",
        );
    }

    #[test]
    fn inline_keys_fit_their_buffer() {
        let mut part = Part::new();
        part.insert(b"k", 1);
        let Some(NodeRef::Leaf(l)) = part.root.as_mut() else {
            panic!("a lone key is a leaf")
        };
        let Key::Inline { len, .. } = &mut Arc::make_mut(l).key else {
            panic!("a short key is inline")
        };
        *len = 200;
        assert_broken(&part, "an inline key of 200 bytes overflows");
    }
}
