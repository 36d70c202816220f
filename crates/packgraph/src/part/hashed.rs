//! Hashed keys (PART paper, section 3.5): for long keys whose distribution defeats path
//! compression (many keys sharing long prefixes and differing late), each key is stored
//! behind an 8-byte seeded hash of itself, which spreads the keys evenly over the first
//! levels of the tree. The original key follows the hash in the stored key, so distinct
//! keys never collide; iteration is in hash order, not key order. Off unless chosen.

use super::{Part, PartError};

/// A [`Part`] whose keys are stored hashed; same operations, unordered iteration.
///
/// # Examples
/// ```
/// use packgraph::part::HashedPart;
///
/// let mut map = HashedPart::new(7);
/// map.insert(b"user/2024/11/22/events/000001", 1);
/// map.insert(b"user/2024/11/22/events/000002", 2);
/// assert_eq!(map.get(b"user/2024/11/22/events/000002"), Some(&2));
/// assert_eq!(map.len(), 2);
/// ```
#[derive(Clone)]
pub struct HashedPart<V> {
    inner: Part<V>,
    seed: u64,
}

impl<V: Clone> HashedPart<V> {
    /// An empty map hashing with `seed` (pick it at random to avoid adversarial keys).
    pub fn new(seed: u64) -> Self {
        Self {
            inner: Part::new(),
            seed,
        }
    }

    fn stored(&self, key: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + key.len());
        out.extend_from_slice(&hash(self.seed, key).to_be_bytes());
        out.extend_from_slice(key);
        out
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.inner.len()
    }

    /// Whether the map is empty.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The value of `key`.
    pub fn get(&self, key: &[u8]) -> Option<&V> {
        self.inner.get(&self.stored(key))
    }

    /// Inserts or replaces; returns the previous value.
    pub fn insert(&mut self, key: &[u8], value: V) -> Option<V> {
        let stored = self.stored(key);
        self.inner.insert(&stored, value)
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &[u8]) -> Option<V> {
        let stored = self.stored(key);
        self.inner.remove(&stored)
    }

    /// Every entry, in hash order (the original keys).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], &V)> {
        self.inner.iter().map(|(k, v)| (&k[8..], v))
    }

    /// The tree underneath, for sizing (keys as stored).
    pub fn as_part(&self) -> &Part<V> {
        &self.inner
    }

    /// Checks the tree underneath ([`Part::check_invariants`]) and that every stored key
    /// is the 8-byte hash of the original key followed by the key. For tests and
    /// debugging; O(n) time.
    ///
    /// # Errors
    /// [`PartError::Invariant`] naming the first broken node, or the stored key whose hash
    /// does not match.
    pub fn check_invariants(&self) -> Result<(), PartError> {
        self.inner.check_invariants()?;
        for (stored, _) in self.inner.iter() {
            let hashed =
                stored.len() >= 8 && stored[..8] == hash(self.seed, &stored[8..]).to_be_bytes();
            if !hashed {
                return Err(PartError::Invariant {
                    path: stored.to_vec(),
                    what: "the stored key does not begin with the hash of the rest".into(),
                });
            }
        }
        Ok(())
    }
}

/// A seeded 64-bit hash of `bytes`: 8-byte words mixed with a multiply-xorshift (the
/// splitmix64 finaliser), the length folded in. Stable across runs and platforms.
fn hash(seed: u64, bytes: &[u8]) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    let mut h = mix(seed ^ (bytes.len() as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        h = mix(h ^ word);
    }
    let mut tail = [0u8; 8];
    tail[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
    mix(h ^ u64::from_le_bytes(tail) ^ 0xff)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn hashed_map_holds_the_same_entries(
            ops in vec((vec(prop::sample::select(vec![0u8, 1, 47]), 0..40), any::<u16>(), any::<bool>()), 0..200),
            seed in any::<u64>(),
        ) {
            let mut map = HashedPart::new(seed);
            let mut oracle = BTreeMap::new();
            for (key, value, insert) in ops {
                if insert {
                    prop_assert_eq!(map.insert(&key, value), oracle.insert(key.clone(), value));
                } else {
                    prop_assert_eq!(map.remove(&key), oracle.remove(&key));
                }
                map.check_invariants().unwrap();
                prop_assert_eq!(map.get(&key), oracle.get(&key));
            }
            prop_assert_eq!(map.len(), oracle.len());
            let mut got: Vec<(Vec<u8>, u16)> = map.iter().map(|(k, &v)| (k.to_vec(), v)).collect();
            got.sort();
            let want: Vec<(Vec<u8>, u16)> = oracle.into_iter().collect();
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn skewed_long_keys_make_a_shallower_tree() {
        // Keys sharing a 32-byte prefix that differ in scattered late bytes.
        let keys: Vec<Vec<u8>> = (0..5_000u32)
            .map(|i| {
                let mut k = vec![b'x'; 32];
                k.extend_from_slice(&i.to_le_bytes());
                k
            })
            .collect();
        let mut plain = Part::new();
        let mut hashed = HashedPart::new(99);
        for (i, k) in keys.iter().enumerate() {
            plain.insert(k, i);
            hashed.insert(k, i);
        }
        for (i, k) in keys.iter().enumerate() {
            assert_eq!(hashed.get(k), Some(&i));
        }
        hashed.check_invariants().unwrap();
        // Both are correct; the hashed tree spreads at its first byte.
        assert_eq!(plain.len(), hashed.len());
        let first_bytes: std::collections::HashSet<u8> =
            hashed.as_part().iter().map(|(k, _)| k[0]).collect();
        assert!(first_bytes.len() > 200, "{}", first_bytes.len());
    }

    #[test]
    fn check_invariants_catches_a_key_stored_without_its_hash() {
        let mut map = HashedPart::new(3);
        map.insert(b"kept", 1);
        map.check_invariants().unwrap();
        map.inner.insert(b"01234567unhashed", 2);
        let err = map.check_invariants().unwrap_err().to_string();
        assert!(err.contains("does not begin with the hash"), "{err}");
        let mut short = HashedPart::new(3);
        short.inner.insert(b"short", 1);
        assert!(short.check_invariants().is_err());
    }
}
