//! Value nodes: a run of up to [`VALUES_MAX`] keys of one length under one path, held in
//! two sorted arrays (keys back to back, values) instead of a leaf each.

use super::Header;

/// The most entries a value node holds before it becomes an inner node.
pub(crate) const VALUES_MAX: usize = 256;

/// A key of up to 8 bytes as a big-endian integer, zero-padded: the integers order as the
/// keys do when all have one length.
#[inline]
fn as_int(key: &[u8]) -> u64 {
    // The common widths (`u32` and `u64` ids) without a call to `memcpy` per probe.
    match *key {
        [a, b, c, d] => u64::from(u32::from_be_bytes([a, b, c, d])) << 32,
        [a, b, c, d, e, f, g, h] => u64::from_be_bytes([a, b, c, d, e, f, g, h]),
        _ => {
            let mut buf = [0u8; 8];
            buf[..key.len()].copy_from_slice(key);
            u64::from_be_bytes(buf)
        }
    }
}

/// A bucket of entries whose keys all have the same length (the lower levels of a tree of
/// fixed-length keys, such as `u32` or `u64` ids), held in two arrays rather than a leaf
/// allocation each and a chain of inner nodes. Keys are stored whole, back to back
/// (`width` bytes each, sorted), so iteration hands out slices of them and a lookup is a
/// binary search. Copying one for a new version copies the arrays and changes no
/// reference count.
///
/// A key of another length, or more than [`VALUES_MAX`] entries, turn the node into an
/// inner node first (`expand`); its terminal (a key ending where the node's path does) is
/// kept in the header as for inner nodes.
#[derive(Clone)]
pub(crate) struct ValueNode<V> {
    /// Its `count` is the number of entries.
    pub(crate) header: Header<V>,
    /// The length of every entry's key.
    width: usize,
    /// The entries' keys agree on every byte before this one (the node's whole path).
    shared: usize,
    keys: Vec<u8>,
    values: Vec<V>,
}

impl<V: Clone> ValueNode<V> {
    /// An empty node for keys of `width` bytes whose first `shared` bytes are the node's
    /// path, with `header`'s compressed path and terminal.
    pub(crate) fn new(header: Header<V>, width: usize, shared: usize) -> Self {
        Self {
            header: Header { count: 0, ..header },
            width,
            shared,
            keys: Vec::new(),
            values: Vec::new(),
        }
    }

    /// The number of entries.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// The depth where the node's path ends: every key agrees with the path before it.
    pub(crate) fn shared(&self) -> usize {
        self.shared
    }

    /// What is wrong with the node's arrays, if anything (for `Part::check_invariants`):
    /// the header counts the values, the keys are `width` bytes per value, and there are
    /// at most [`VALUES_MAX`].
    pub(crate) fn check_arrays(&self) -> Result<(), String> {
        let (count, len) = (self.header.count, self.values.len());
        if usize::from(count) != len {
            return Err(format!(
                "value node counts {count} entries but holds {len} values"
            ));
        }
        if self.keys.len() != len * self.width {
            return Err(format!(
                "value node holds {} key bytes for {len} keys of {} bytes",
                self.keys.len(),
                self.width
            ));
        }
        if len > VALUES_MAX {
            return Err(format!(
                "value node holds {len} entries, more than {VALUES_MAX}"
            ));
        }
        Ok(())
    }

    /// The key and value arrays, to corrupt in tests of `Part::check_invariants`.
    #[cfg(test)]
    pub(crate) fn arrays_mut(&mut self) -> (&mut Vec<u8>, &mut Vec<V>) {
        (&mut self.keys, &mut self.values)
    }

    #[inline]
    fn key(&self, i: usize) -> &[u8] {
        &self.keys[i * self.width..(i + 1) * self.width]
    }

    /// Entry `i` in key order.
    #[inline]
    pub(crate) fn entry(&self, i: usize) -> (&[u8], &V) {
        (self.key(i), &self.values[i])
    }

    /// The entries in key order, values cloned (to rebuild them elsewhere).
    pub(crate) fn items(&self) -> impl Iterator<Item = (&[u8], V)> + '_ {
        (0..self.len()).map(|i| (self.key(i), self.values[i].clone()))
    }

    /// The position of `key` (`width` bytes), or where it would go.
    #[inline]
    fn find(&self, key: &[u8]) -> Result<usize, usize> {
        let n = self.len();
        let skip = self.width.saturating_sub(8);
        if skip <= self.shared && n > 0 {
            // The last 8 bytes (or fewer) of the keys compare as big-endian integers
            // (zero-padded alike): no call to `memcmp` per probe. Longer keys (a tag byte
            // and a `u64`, as the id dictionary's) agree on the bytes before those, which
            // are part of the node's path: one comparison of them places a key that
            // does not.
            if skip > 0 {
                match key[..skip].cmp(&self.key(0)[..skip]) {
                    std::cmp::Ordering::Less => return Err(0),
                    std::cmp::Ordering::Greater => return Err(n),
                    std::cmp::Ordering::Equal => {}
                }
            }
            let target = as_int(&key[skip..]);
            let probe = |i| as_int(&self.key(i)[skip..]).cmp(&target);
            if n <= 16 || self.shared - skip >= 8 {
                return self.search(0, n, probe);
            }
            // Interpolation: below the shared path the keys of ids are spread evenly, so
            // the two bytes after it place the key to within a few entries; a binary
            // search of a small window around that guess touches one or two cache lines
            // where a search of the whole node touches four or five.
            let guess = self.guess(target, skip);
            const WINDOW: usize = 16;
            return match probe(guess) {
                std::cmp::Ordering::Equal => Ok(guess),
                std::cmp::Ordering::Less => {
                    let end = (guess + 1 + WINDOW).min(n);
                    if end == n || probe(end - 1).is_ge() {
                        self.search(guess + 1, end, probe)
                    } else {
                        self.search(end, n, probe)
                    }
                }
                std::cmp::Ordering::Greater => {
                    let start = guess.saturating_sub(WINDOW);
                    if start == 0 || probe(start).is_le() {
                        self.search(start, guess, probe)
                    } else {
                        self.search(0, start, probe)
                    }
                }
            };
        }
        self.search(0, self.len(), |i| self.key(i).cmp(key))
    }

    /// The interpolation guess of `find` for the integer `target` of a key's last
    /// `width - skip <= 8` bytes, in a node of more than 16 entries whose path ends less
    /// than 8 bytes after `skip`.
    #[inline]
    fn guess(&self, target: u64, skip: usize) -> usize {
        let n = self.len();
        let spread = (target << (8 * (self.shared - skip))) >> 48;
        ((spread as usize * n) >> 16).min(n - 1)
    }

    /// The key bytes a lookup of `key` will most likely read first (the interpolation
    /// guess, else the middle entry), for a batched lookup to prefetch before it searches.
    #[inline]
    pub(crate) fn likely_key(&self, key: &[u8]) -> *const u8 {
        let n = self.len();
        let skip = self.width.saturating_sub(8);
        let at =
            if key.len() == self.width && n > 16 && skip <= self.shared && self.shared - skip < 8 {
                self.guess(as_int(&key[skip..]), skip)
            } else {
                n / 2
            };
        self.keys.as_ptr().wrapping_add(at * self.width)
    }

    /// The position of `key`, if present.
    #[inline]
    pub(crate) fn position(&self, key: &[u8]) -> Option<usize> {
        if key.len() != self.width {
            return None;
        }
        self.find(key).ok()
    }

    /// The value of entry `i`.
    #[inline]
    pub(crate) fn value(&self, i: usize) -> &V {
        &self.values[i]
    }

    /// The position of `key` by a plain binary search of byte strings: the reference twin
    /// of [`ValueNode::find`]. For tests.
    #[cfg(test)]
    pub(crate) fn find_serial(&self, key: &[u8]) -> Result<usize, usize> {
        self.search(0, self.len(), |i| self.key(i).cmp(key))
    }

    /// The position of `key`, or where it would go. For tests of `find`.
    #[cfg(test)]
    pub(crate) fn find_fast(&self, key: &[u8]) -> Result<usize, usize> {
        self.find(key)
    }

    /// Binary search over entries `lo..hi` with `probe(i)` ordering entry `i` against the
    /// target, which is known not to lie outside them.
    #[inline]
    fn search(
        &self,
        lo: usize,
        hi: usize,
        probe: impl Fn(usize) -> std::cmp::Ordering,
    ) -> Result<usize, usize> {
        let (mut lo, mut hi) = (lo, hi);
        while lo < hi {
            let mid = (lo + hi) / 2;
            match probe(mid) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(mid),
            }
        }
        Err(lo)
    }

    /// The first entry whose key is `>= lo`.
    pub(crate) fn lower_bound(&self, lo: &[u8]) -> usize {
        let (mut a, mut b) = (0, self.len());
        while a < b {
            let mid = (a + b) / 2;
            if self.key(mid) < lo {
                a = mid + 1;
            } else {
                b = mid;
            }
        }
        a
    }

    /// The entry of `key`.
    #[inline]
    pub(crate) fn get(&self, key: &[u8]) -> Option<(&[u8], &V)> {
        if key.len() != self.width {
            return None;
        }
        self.find(key).ok().map(|i| self.entry(i))
    }

    /// The value of `key`, to change.
    pub(crate) fn get_mut(&mut self, key: &[u8]) -> Option<&mut V> {
        if key.len() != self.width {
            return None;
        }
        let i = self.find(key).ok()?;
        Some(&mut self.values[i])
    }

    /// Whether `key` can be added without expanding the node.
    pub(crate) fn fits(&self, key: &[u8]) -> bool {
        key.len() == self.width && (self.len() < VALUES_MAX || self.find(key).is_ok())
    }

    /// Sets the entry of `key` (which [`ValueNode::fits`]); returns the previous value.
    pub(crate) fn put(&mut self, key: &[u8], value: V) -> Option<V> {
        debug_assert!(self.fits(key));
        match self.find(key) {
            Ok(i) => Some(std::mem::replace(&mut self.values[i], value)),
            Err(i) => {
                let at = i * self.width;
                let end = self.keys.len();
                self.keys.extend_from_slice(key);
                self.keys.copy_within(at..end, at + self.width);
                self.keys[at..at + self.width].copy_from_slice(key);
                self.values.insert(i, value);
                self.header.count += 1;
                None
            }
        }
    }

    /// Removes the entry of `key`; returns its value.
    pub(crate) fn take(&mut self, key: &[u8]) -> Option<V> {
        if key.len() != self.width {
            return None;
        }
        let i = self.find(key).ok()?;
        self.keys.drain(i * self.width..(i + 1) * self.width);
        self.header.count -= 1;
        Some(self.values.remove(i))
    }
}
