//! The inner node kinds of an adaptive radix tree, with 4, 16, 48 and 256 children, behind
//! the [`Inner`] interface: nodes 4 and 16 keep sorted parallel arrays of child bytes and
//! children, node 48 a byte-indexed table of slots, node 256 a child per byte.

use std::sync::Arc;

use super::{Header, Inner, NodeRef};

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
pub(crate) type Chunk<V> = [Option<NodeRef<V>>; 16];

impl<V: Clone> Node256<V> {
    /// The child under byte `byte` (as an index).
    #[inline]
    pub(crate) fn slot(&self, byte: usize) -> Option<&NodeRef<V>> {
        self.chunks[byte >> 4][byte & 15].as_ref()
    }

    /// The chunk holding the child under `byte` (at `byte & 15`): batched lookups fetch it
    /// as a step of its own.
    #[inline]
    pub(crate) fn chunk(&self, byte: u8) -> &Chunk<V> {
        &self.chunks[usize::from(byte >> 4)]
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
