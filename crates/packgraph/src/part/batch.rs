//! Sorted batches: a batch is sorted once and walks the tree once, each node on the way
//! visited (and copied, if another version holds it) once for the whole batch, and a run of
//! new keys under a missing child is built as a subtree.
//!
//! Every function takes the `depth` of the slot it works on (the key bytes consumed by the
//! path to it); every key passed in shares those bytes with the slot's keys.

use std::sync::Arc;

use super::build::{build, runs};
use super::node::{dispatch_mut, Inner, NodeRef};
use super::point::{grow, insert, normalize, remove};
use super::{After, Part};

impl<V: Clone> Part<V> {
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
                self.root = Some(build(&items, 0));
                items.len()
            }
            Some(root) => insert_sorted(root, &items, 0),
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
        let (removed, after) = remove_sorted(root, &keys, 0);
        if after == After::Delete {
            self.root = None;
        }
        self.len -= removed;
        removed
    }
}

/// `items` sorted by key, keeping the last of equal keys.
pub(super) fn sorted_last_wins<K: AsRef<[u8]>, V>(mut items: Vec<(K, V)>) -> Vec<(K, V)> {
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
fn insert_sorted<K: AsRef<[u8]>, V: Clone>(
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
fn remove_sorted<K: AsRef<[u8]>, V: Clone>(
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
