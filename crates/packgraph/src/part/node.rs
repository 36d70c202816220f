//! Nodes of the persistent adaptive radix tree: leaves holding a whole key (lazy
//! expansion), and inner nodes of 4, 16, 48 and 256 children with a compressed path.
//!
//! Every node is one reference-counted allocation of its own size (a child pointer is a
//! tagged [`NodeRef`]); a node is changed in place when only one version holds it and
//! copied first otherwise ([`Arc::make_mut`] on the child slot).

use std::sync::Arc;

/// A key of up to `INLINE` bytes is stored inside its leaf; longer keys on the heap.
const INLINE: usize = 14;

/// A key's bytes, inline when short.
#[derive(Clone)]
pub(crate) enum Key {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl Key {
    pub(crate) fn new(key: &[u8]) -> Self {
        if key.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..key.len()].copy_from_slice(key);
            Key::Inline {
                len: key.len() as u8,
                bytes,
            }
        } else {
            Key::Heap(key.into())
        }
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Key::Inline { len, bytes } => &bytes[..*len as usize],
            Key::Heap(bytes) => bytes,
        }
    }
}

/// A leaf: one key and its value.
#[derive(Clone)]
pub(crate) struct Leaf<V> {
    pub(crate) key: Key,
    pub(crate) value: V,
}

/// What every inner node has besides its children: the compressed path below the byte
/// that led here, and the entry whose key ends exactly at this node (a key that is a
/// prefix of others).
#[derive(Clone)]
pub(crate) struct Header<V> {
    pub(crate) prefix: Box<[u8]>,
    pub(crate) terminal: Option<Arc<Leaf<V>>>,
    /// Children.
    pub(crate) count: u16,
    /// Entries in the subtree (terminal included), so that a whole subtree's size is known
    /// without walking it (lengths of unions and intersections).
    pub(crate) entries: usize,
}

impl<V: Clone> Header<V> {
    /// Sets the value of `key`, the key that ends at this node; returns the previous value.
    pub(crate) fn set_terminal(&mut self, key: &[u8], value: V) -> Option<V> {
        match &mut self.terminal {
            Some(l) => Some(std::mem::replace(&mut Arc::make_mut(l).value, value)),
            None => {
                self.terminal = Some(Arc::new(Leaf {
                    key: Key::new(key),
                    value,
                }));
                self.entries += 1;
                None
            }
        }
    }

    /// Removes the entry that ends at this node; returns its value.
    pub(crate) fn take_terminal(&mut self) -> Option<V> {
        let leaf = self.terminal.take()?;
        self.entries -= 1;
        Some(leaf.value.clone())
    }
}

impl<V> Header<V> {
    pub(crate) fn new(prefix: &[u8]) -> Self {
        Self {
            prefix: prefix.into(),
            terminal: None,
            count: 0,
            entries: 0,
        }
    }
}

/// Up to 4 children, keys sorted, searched linearly.
#[derive(Clone)]
pub(crate) struct Node4<V> {
    pub(crate) header: Header<V>,
    pub(crate) keys: [u8; 4],
    pub(crate) children: [Option<NodeRef<V>>; 4],
}

/// Up to 16 children, keys sorted, searched branch-free (a count of smaller keys over all
/// 16 lanes, which the compiler vectorises).
#[derive(Clone)]
pub(crate) struct Node16<V> {
    pub(crate) header: Header<V>,
    pub(crate) keys: [u8; 16],
    pub(crate) children: [Option<NodeRef<V>>; 16],
}

/// Up to 48 children: a byte-indexed table of slot numbers (0 = none, else slot + 1).
#[derive(Clone)]
pub(crate) struct Node48<V> {
    pub(crate) header: Header<V>,
    pub(crate) index: [u8; 256],
    pub(crate) children: [Option<NodeRef<V>>; 48],
}

/// Up to 256 children, indexed by byte, held in 16 reference-counted chunks of 16.
///
/// The widest nodes sit near the root, where every version's path passes: copying one for a
/// new version copies 16 chunk pointers, and a write then copies only the chunk it touches
/// (16 child pointers), instead of 4 KB and 256 reference-count increments.
#[derive(Clone)]
pub(crate) struct Node256<V> {
    pub(crate) header: Header<V>,
    chunks: [Arc<Chunk<V>>; 16],
}

/// Sixteen child slots of a [`Node256`].
type Chunk<V> = [Option<NodeRef<V>>; 16];

impl<V: Clone> Node256<V> {
    /// The child under byte `byte` (as an index).
    #[inline]
    pub(crate) fn slot(&self, byte: usize) -> Option<&NodeRef<V>> {
        self.chunks[byte >> 4][byte & 15].as_ref()
    }

    /// Chunks this node shares with `other`. For tests.
    #[cfg(test)]
    pub(crate) fn shared_chunks(&self, other: &Self) -> usize {
        self.chunks
            .iter()
            .zip(&other.chunks)
            .filter(|(a, b)| Arc::ptr_eq(a, b))
            .count()
    }

    /// The chunk of `byte`, copied first if another node shares it.
    #[inline]
    fn chunk_mut(&mut self, byte: u8) -> &mut Chunk<V> {
        Arc::make_mut(&mut self.chunks[usize::from(byte >> 4)])
    }
}

/// The most entries a value node holds before it becomes an inner node.
pub(crate) const VALUES_MAX: usize = 256;

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
        if self.width <= 8 {
            // Keys of up to 8 bytes compare as big-endian integers (zero-padded alike):
            // no call to `memcmp` per probe.
            let as_int = |k: &[u8]| {
                let mut buf = [0u8; 8];
                buf[..k.len()].copy_from_slice(k);
                u64::from_be_bytes(buf)
            };
            let target = as_int(key);
            let probe = |i| as_int(self.key(i)).cmp(&target);
            let n = self.len();
            if n <= 16 || self.shared >= 8 {
                return self.search(0, n, probe);
            }
            // Interpolation: below the shared path the keys of ids are spread evenly, so
            // the two bytes after it place the key to within a few entries; a binary
            // search of a small window around that guess touches one or two cache lines
            // where a search of the whole node touches four or five.
            let spread = (target << (8 * self.shared)) >> 48;
            let guess = ((spread as usize * n) >> 16).min(n - 1);
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

/// A pointer to a node of any kind.
pub(crate) enum NodeRef<V> {
    Leaf(Arc<Leaf<V>>),
    N4(Arc<Node4<V>>),
    N16(Arc<Node16<V>>),
    N48(Arc<Node48<V>>),
    N256(Arc<Node256<V>>),
    Values(Arc<ValueNode<V>>),
}

impl<V> NodeRef<V> {
    /// Entries in the subtree.
    #[inline]
    pub(crate) fn entries(&self) -> usize {
        match self {
            NodeRef::Leaf(_) => 1,
            NodeRef::N4(n) => n.header.entries,
            NodeRef::N16(n) => n.header.entries,
            NodeRef::N48(n) => n.header.entries,
            NodeRef::N256(n) => n.header.entries,
            NodeRef::Values(n) => n.header.entries,
        }
    }

    /// The node's address: the same for every version that shares it.
    pub(crate) fn id(&self) -> usize {
        match self {
            NodeRef::Leaf(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N4(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N16(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N48(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::N256(n) => Arc::as_ptr(n) as *const u8 as usize,
            NodeRef::Values(n) => Arc::as_ptr(n) as *const u8 as usize,
        }
    }
}

impl<V> Clone for NodeRef<V> {
    fn clone(&self) -> Self {
        match self {
            NodeRef::Leaf(n) => NodeRef::Leaf(Arc::clone(n)),
            NodeRef::N4(n) => NodeRef::N4(Arc::clone(n)),
            NodeRef::N16(n) => NodeRef::N16(Arc::clone(n)),
            NodeRef::N48(n) => NodeRef::N48(Arc::clone(n)),
            NodeRef::N256(n) => NodeRef::N256(Arc::clone(n)),
            NodeRef::Values(n) => NodeRef::Values(Arc::clone(n)),
        }
    }
}

/// The inner node kinds behind one interface.
pub(crate) trait Inner<V: Clone>: Clone {
    const CAPACITY: usize;
    /// A node with no children and an empty header.
    fn empty() -> Self;
    /// Wraps the node in a pointer of its kind.
    fn wrap(node: Arc<Self>) -> NodeRef<V>;
    fn header(&self) -> &Header<V>;
    fn header_mut(&mut self) -> &mut Header<V>;
    fn child(&self, byte: u8) -> Option<&NodeRef<V>>;
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>>;
    /// Adds a child for a byte that has none; the node must have room.
    fn add(&mut self, byte: u8, child: NodeRef<V>);
    /// Removes the child of `byte`, if any.
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>>;
    /// The children in byte order.
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>));
}

/// Inserts `child` under `byte` into sorted parallel arrays of `header.count` entries
/// (nodes 4 and 16); there must be room.
fn sorted_add<V>(
    header: &mut Header<V>,
    keys: &mut [u8],
    children: &mut [Option<NodeRef<V>>],
    byte: u8,
    child: NodeRef<V>,
) {
    let n = header.count as usize;
    let at = keys[..n].iter().filter(|&&k| k < byte).count();
    keys.copy_within(at..n, at + 1);
    children[at..=n].rotate_right(1);
    keys[at] = byte;
    children[at] = Some(child);
    header.count += 1;
}

/// Removes the entry at `at` from sorted parallel arrays (nodes 4 and 16).
fn sorted_take<V>(
    header: &mut Header<V>,
    keys: &mut [u8],
    children: &mut [Option<NodeRef<V>>],
    at: usize,
) -> Option<NodeRef<V>> {
    let n = header.count as usize;
    let child = children[at].take();
    keys.copy_within(at + 1..n, at);
    children[at..n].rotate_left(1);
    header.count -= 1;
    child
}

/// Visits the entries of sorted parallel arrays in order (nodes 4 and 16).
fn sorted_for_each<V>(
    header: &Header<V>,
    keys: &[u8],
    children: &[Option<NodeRef<V>>],
    f: &mut dyn FnMut(u8, &NodeRef<V>),
) {
    for (i, child) in children[..header.count as usize].iter().enumerate() {
        if let Some(child) = child {
            f(keys[i], child);
        }
    }
}

impl<V: Clone> Node4<V> {
    pub(crate) fn new(prefix: &[u8]) -> Self {
        Self {
            header: Header::new(prefix),
            keys: [0; 4],
            children: Default::default(),
        }
    }
}

impl<V: Clone> Inner<V> for Node4<V> {
    const CAPACITY: usize = 4;
    fn empty() -> Self {
        Self::new(&[])
    }
    fn wrap(node: Arc<Self>) -> NodeRef<V> {
        NodeRef::N4(node)
    }
    fn header(&self) -> &Header<V> {
        &self.header
    }
    fn header_mut(&mut self) -> &mut Header<V> {
        &mut self.header
    }
    fn child(&self, byte: u8) -> Option<&NodeRef<V>> {
        let n = self.header.count as usize;
        let at = self.keys[..n].iter().position(|&k| k == byte)?;
        self.children[at].as_ref()
    }
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>> {
        let n = self.header.count as usize;
        let at = self.keys[..n].iter().position(|&k| k == byte)?;
        self.children[at].as_mut()
    }
    fn add(&mut self, byte: u8, child: NodeRef<V>) {
        sorted_add(
            &mut self.header,
            &mut self.keys,
            &mut self.children,
            byte,
            child,
        );
    }
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>> {
        let n = self.header.count as usize;
        let at = self.keys[..n].iter().position(|&k| k == byte)?;
        sorted_take(&mut self.header, &mut self.keys, &mut self.children, at)
    }
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
        sorted_for_each(&self.header, &self.keys, &self.children, f);
    }
}

impl<V: Clone> Node16<V> {
    /// Slot of `byte` among the sorted keys, branch-free over all 16 lanes.
    #[inline]
    fn find(&self, byte: u8) -> Option<usize> {
        let n = self.header.count as usize;
        let mut mask = 0u32;
        for (i, &k) in self.keys.iter().enumerate() {
            mask |= u32::from(k == byte) << i;
        }
        mask &= (1u32 << n) - 1;
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }
}

impl<V: Clone> Inner<V> for Node16<V> {
    const CAPACITY: usize = 16;
    fn empty() -> Self {
        Self {
            header: Header::new(&[]),
            keys: [0; 16],
            children: Default::default(),
        }
    }
    fn wrap(node: Arc<Self>) -> NodeRef<V> {
        NodeRef::N16(node)
    }
    fn header(&self) -> &Header<V> {
        &self.header
    }
    fn header_mut(&mut self) -> &mut Header<V> {
        &mut self.header
    }
    fn child(&self, byte: u8) -> Option<&NodeRef<V>> {
        self.children[self.find(byte)?].as_ref()
    }
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>> {
        let at = self.find(byte)?;
        self.children[at].as_mut()
    }
    fn add(&mut self, byte: u8, child: NodeRef<V>) {
        sorted_add(
            &mut self.header,
            &mut self.keys,
            &mut self.children,
            byte,
            child,
        );
    }
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>> {
        let at = self.find(byte)?;
        sorted_take(&mut self.header, &mut self.keys, &mut self.children, at)
    }
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
        sorted_for_each(&self.header, &self.keys, &self.children, f);
    }
}

impl<V: Clone> Inner<V> for Node48<V> {
    const CAPACITY: usize = 48;
    fn empty() -> Self {
        Self {
            header: Header::new(&[]),
            index: [0; 256],
            children: std::array::from_fn(|_| None),
        }
    }
    fn wrap(node: Arc<Self>) -> NodeRef<V> {
        NodeRef::N48(node)
    }
    fn header(&self) -> &Header<V> {
        &self.header
    }
    fn header_mut(&mut self) -> &mut Header<V> {
        &mut self.header
    }
    fn child(&self, byte: u8) -> Option<&NodeRef<V>> {
        match self.index[byte as usize] {
            0 => None,
            slot => self.children[slot as usize - 1].as_ref(),
        }
    }
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>> {
        match self.index[byte as usize] {
            0 => None,
            slot => self.children[slot as usize - 1].as_mut(),
        }
    }
    fn add(&mut self, byte: u8, child: NodeRef<V>) {
        let slot = self
            .children
            .iter()
            .position(Option::is_none)
            .expect("a node 48 with room has a free slot");
        self.children[slot] = Some(child);
        self.index[byte as usize] = slot as u8 + 1;
        self.header.count += 1;
    }
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>> {
        let slot = std::mem::take(&mut self.index[byte as usize]);
        if slot == 0 {
            return None;
        }
        self.header.count -= 1;
        self.children[slot as usize - 1].take()
    }
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
        for byte in 0..=255u8 {
            if let Some(child) = self.child(byte) {
                f(byte, child);
            }
        }
    }
}

impl<V: Clone> Inner<V> for Node256<V> {
    const CAPACITY: usize = 256;
    fn empty() -> Self {
        // One empty chunk shared by all slots until written.
        let empty: Arc<Chunk<V>> = Arc::new(std::array::from_fn(|_| None));
        Self {
            header: Header::new(&[]),
            chunks: std::array::from_fn(|_| Arc::clone(&empty)),
        }
    }
    fn wrap(node: Arc<Self>) -> NodeRef<V> {
        NodeRef::N256(node)
    }
    fn header(&self) -> &Header<V> {
        &self.header
    }
    fn header_mut(&mut self) -> &mut Header<V> {
        &mut self.header
    }
    fn child(&self, byte: u8) -> Option<&NodeRef<V>> {
        self.slot(usize::from(byte))
    }
    fn child_mut(&mut self, byte: u8) -> Option<&mut NodeRef<V>> {
        self.child(byte)?;
        self.chunk_mut(byte)[usize::from(byte & 15)].as_mut()
    }
    fn add(&mut self, byte: u8, child: NodeRef<V>) {
        self.chunk_mut(byte)[usize::from(byte & 15)] = Some(child);
        self.header.count += 1;
    }
    fn take(&mut self, byte: u8) -> Option<NodeRef<V>> {
        self.child(byte)?;
        self.header.count -= 1;
        self.chunk_mut(byte)[usize::from(byte & 15)].take()
    }
    fn for_each_child(&self, f: &mut dyn FnMut(u8, &NodeRef<V>)) {
        for (hi, chunk) in self.chunks.iter().enumerate() {
            for (lo, child) in chunk.iter().enumerate() {
                if let Some(child) = child {
                    f((hi << 4 | lo) as u8, child);
                }
            }
        }
    }
}

/// Moves every child and the header of `from` into an empty node `to` (grow or shrink).
pub(crate) fn move_into<V: Clone, A: Inner<V>, B: Inner<V>>(from: &A, mut to: B) -> B {
    let mut pairs = Vec::with_capacity(from.header().count as usize);
    from.for_each_child(&mut |byte, child| pairs.push((byte, child.clone())));
    let header = from.header().clone();
    *to.header_mut() = Header { count: 0, ..header };
    for (byte, child) in pairs {
        to.add(byte, child);
    }
    to
}
