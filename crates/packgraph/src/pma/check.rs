//! `check_invariants`: a full validation of the structure, for tests and debugging.

use super::leaf::LeafCodec;
use super::{Pma, PmaError, PADDING_BYTES};

impl<C: LeafCodec> Pma<C> {
    /// Checks every invariant listed in the module documentation, the page table's shape,
    /// and the stored copy of the leaves if one was made.
    ///
    /// # Errors
    /// [`PmaError::Invariant`] naming the first leaf found broken.
    pub fn check_invariants(&self) -> Result<(), PmaError> {
        let broken = |leaf, what: String| Err(PmaError::Invariant { leaf, what });
        let num_leaves = self.num_leaves();
        self.check_table()?;
        self.check_spare()?;
        let table = &self.table;
        for (p, page) in table.pages().enumerate() {
            let leaves = (num_leaves - p * self.page_leaves()).min(self.page_leaves());
            if page.len() != leaves * self.leaf_bytes + PADDING_BYTES {
                return broken(
                    p * self.page_leaves(),
                    format!("page {p} has the wrong size"),
                );
            }
        }
        if let Some(copy) = table.stored_copy.get() {
            if copy.len() != num_leaves * self.leaf_bytes {
                return broken(0, "the stored copy has the wrong size".into());
            }
            for (j, bytes) in copy.chunks(self.leaf_bytes).enumerate() {
                if bytes != &self.leaf(j)[..self.leaf_bytes] {
                    return broken(j, "the stored copy differs from the leaf".into());
                }
            }
        }
        let mut previous: Option<u64> = None;
        let (mut count, mut bytes) = (0, 0);
        let mut keys = Vec::new();
        for j in 0..num_leaves {
            let used = self.leaf_used(j);
            if used > self.leaf_bytes {
                return broken(j, format!("uses {used} of {} bytes", self.leaf_bytes));
            }
            if used == 0 {
                let next = self.next_nonempty(j).map_or(u64::MAX, |n| self.head(n));
                if self.head(j) != next {
                    return broken(j, format!("empty leaf head {} != {next}", self.head(j)));
                }
                continue;
            }
            if used < C::HEAD {
                return broken(j, format!("uses {used} bytes, less than a head"));
            }
            keys.clear();
            C::decode_into(self.leaf(j), used, &mut keys);
            let first = C::key(keys[0]);
            if first != self.head(j) {
                return broken(j, format!("head {} != first key {first}", self.head(j)));
            }
            if C::encoded_len(&keys) != used {
                return broken(j, format!("used {used} != encoded length"));
            }
            for key in keys.iter().map(|&item| C::key(item)) {
                if previous.is_some_and(|p| p >= key) {
                    return broken(j, format!("key {key} after {previous:?}"));
                }
                previous = Some(key);
            }
            count += keys.len();
            bytes += used;
        }
        if count != self.len {
            return broken(0, format!("len {} but {count} keys stored", self.len));
        }
        if bytes != self.total_used {
            return broken(
                0,
                format!("total_used {} but {bytes} bytes used", self.total_used),
            );
        }
        Ok(())
    }

    /// Checks the page table's shape: each level's lengths (every supergroup, group and
    /// page full but the last), and each first head kept at the level above.
    fn check_table(&self) -> Result<(), PmaError> {
        let broken = |leaf, what: String| Err(PmaError::Invariant { leaf, what });
        let num_leaves = self.num_leaves();
        let table = &self.table;
        let (gs, ss) = (table.group_shift, table.super_shift);
        if gs < self.page_shift
            || ss < gs
            || table.super_heads.len() != table.supers.len()
            || table.supers.len() != num_leaves.div_ceil(1 << ss)
            || table.num_leaves() != num_leaves
            || table.num_pages() != num_leaves.div_ceil(self.page_leaves())
        {
            return broken(
                0,
                "page table top level disagrees with the leaf count".into(),
            );
        }
        for (s, sup) in table.supers.iter().enumerate() {
            let first = s << ss;
            let leaves = (num_leaves - first).min(1 << ss);
            if sup.groups.len() != leaves.div_ceil(1 << gs)
                || sup.group_heads.len() != sup.groups.len()
                || table.super_heads[s] != sup.group_heads[0]
            {
                return broken(first, format!("supergroup {s}'s lengths or first head"));
            }
            for (k, group) in sup.groups.iter().enumerate() {
                let first = first + (k << gs);
                let leaves = (num_leaves - first).min(1 << gs);
                if group.heads.len() != leaves
                    || group.used.len() != leaves
                    || group.pages.len() != leaves.div_ceil(self.page_leaves())
                    || sup.group_heads[k] != group.heads[0]
                {
                    return broken(first, format!("group {k} of supergroup {s} is stale"));
                }
            }
        }
        Ok(())
    }
}
