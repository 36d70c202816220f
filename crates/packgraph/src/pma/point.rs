//! Point operations (CPMA paper, section 3 "Updating a PMA" and section 5 "Point updates"):
//! search the heads, update one leaf in place, and rebalance only if that leaf breaks its
//! density bound.

use super::leaf::{LeafCodec, LeafInsert, LeafRemove};
use super::Pma;

impl<C: LeafCodec> Pma<C> {
    /// Inserts `item`; returns whether its key was absent (for a map, a present key gets
    /// the new value).
    ///
    /// # Complexity
    /// O(log n) cache lines to search plus O(log² n / B) amortized to rebalance.
    pub fn insert(&mut self, item: C::Item) -> bool {
        let key = C::key(item);
        let j = self.find_leaf(key);
        let used = self.leaf_used(j);
        let (new_used, overflow) = match C::insert(self.leaves_mut().leaf_mut(j), used, item) {
            LeafInsert::Present => return false,
            LeafInsert::Replaced => {
                // A map's new value may be coded longer or shorter: the leaf's bytes moved.
                self.log_leaf(j, key, 0);
                return false;
            }
            LeafInsert::Inserted(now) => (now, Vec::new()),
            LeafInsert::Full => {
                let mut items = Vec::with_capacity(used / 2 + 1);
                C::decode_into(self.leaf(j), used, &mut items);
                let at = items.partition_point(|&k| C::key(k) < key);
                items.insert(at, item);
                (C::encoded_len(&items), vec![(j, items)])
            }
        };
        self.len += 1;
        self.log_leaf(j, key, 1);
        // An insert can shorten a group-varint leaf (an escaped difference split in two).
        self.total_used = self.total_used + new_used - used;
        let old_head = self.head(j);
        let mut leaves = self.leaves_mut();
        leaves.set_used(j, new_used);
        // Only leaf 0 can receive a key below its head; an empty leaf takes the key as head.
        let head = if used == 0 { key } else { old_head.min(key) };
        if used == 0 || head != old_head {
            leaves.set_head(j, head);
            leaves.repair_heads(j..j + 1);
        }
        let bounds = self.bounds();
        if !overflow.is_empty() || bounds.violated(0, new_used, self.leaf_bytes, true) {
            self.rebalance(vec![j], overflow, true);
        }
        true
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&mut self, key: u64) -> bool {
        let j = self.find_leaf(key);
        let used = self.leaf_used(j);
        // Search before writing, so that an absent key copies no shared page.
        if C::lower_bound(self.leaf(j), used, key).is_none_or(|item| C::key(item) != key) {
            return false;
        }
        let (new_used, overflow) = match C::remove(self.leaves_mut().leaf_mut(j), used, key) {
            LeafRemove::Absent => return false,
            LeafRemove::Removed(now) => (now, Vec::new()),
            LeafRemove::Full => {
                let mut items = Vec::with_capacity(used / 2 + 1);
                C::decode_into(self.leaf(j), used, &mut items);
                items.retain(|&item| C::key(item) != key);
                (C::encoded_len(&items), vec![(j, items)])
            }
        };
        self.len -= 1;
        self.log_leaf(j, key, -1);
        // A removal can lengthen a group-varint leaf (merged differences).
        self.total_used = self.total_used + new_used - used;
        let old_head = self.head(j);
        let new_head = match overflow.first() {
            Some((_, items)) => Some(C::key(items[0])),
            None => (new_used > 0)
                .then(|| C::lower_bound(self.leaf(j), new_used, 0).map_or(u64::MAX, C::key)),
        };
        let mut leaves = self.leaves_mut();
        leaves.set_used(j, new_used);
        if key == old_head {
            if let Some(head) = new_head {
                leaves.set_head(j, head);
            }
            leaves.repair_heads(j..j + 1);
        }
        let grew = new_used > used;
        if !overflow.is_empty() || self.bounds().violated(0, new_used, self.leaf_bytes, grew) {
            self.rebalance(vec![j], overflow, grew);
        }
        true
    }

    /// Whether `key` is in the set.
    pub fn contains(&self, key: u64) -> bool {
        self.get(key).is_some()
    }

    /// The item with key `key`, if any (for a map: the key with its value).
    pub fn get(&self, key: u64) -> Option<C::Item> {
        let j = self.find_leaf(key);
        C::lower_bound(self.leaf(j), self.leaf_used(j), key).filter(|&item| C::key(item) == key)
    }

    /// The smallest key `>= key`, if any.
    pub fn successor(&self, key: u64) -> Option<u64> {
        let j = self.find_leaf(key);
        if let Some(found) = C::lower_bound(self.leaf(j), self.leaf_used(j), key) {
            return Some(C::key(found));
        }
        self.next_nonempty(j + 1).map(|next| self.head(next))
    }

    /// The smallest key.
    pub fn min(&self) -> Option<u64> {
        self.next_nonempty(0).map(|j| self.head(j))
    }

    /// The largest key.
    pub fn max(&self) -> Option<u64> {
        let j = (0..self.num_leaves())
            .rev()
            .find(|&j| self.leaf_used(j) > 0)?;
        C::last(self.leaf(j), self.leaf_used(j))
    }
}
