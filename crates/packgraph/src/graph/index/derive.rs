//! Deriving a version's flat index from an earlier version's ([`RunIndex::update_from`]):
//! only the leaves that differ between the two arrays are decoded, and only the entries of
//! the vertices with keys in them change.

use std::ops::Range;

use super::segment::vertices_of;
use super::{Entry, RunIndex};
use crate::pma::{LeafCodec, Pma, ShortCursor};

/// Most vertex ids per changed leaf whose entries [`RunIndex::old_counts`] walks to learn
/// the earlier version's counts there instead of decoding the leaf; a sparser span (long
/// gaps of vertices without arcs) is decoded.
pub(super) const OLD_WALK_PER_LEAF: usize = 256;

/// A vertex with keys in a range of changed leaves: how many it had there in the earlier
/// version and has now, and where its first key there is now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Touched {
    vertex: usize,
    before: u32,
    after: u32,
    first: Option<ShortCursor>,
}

/// The vertices with keys in the leaves `leaves` of `edges` or, before, of its earlier
/// version, in order: `old` gives each vertex's key count there in the earlier version (a
/// vertex may appear in several consecutive pieces), the leaves of `edges` are decoded.
fn touched_vertices<C: LeafCodec>(
    old: &[(u64, u32)],
    edges: &Pma<C>,
    leaves: Range<usize>,
) -> Vec<Touched> {
    let new = edges.run_pieces_in(32, leaves);
    let mut touched: Vec<Touched> = Vec::with_capacity(old.len().max(new.len()));
    let mut add = |vertex: u64, before: u32, after: u32, first: Option<ShortCursor>| {
        let vertex = usize::try_from(vertex).unwrap_or(usize::MAX);
        match touched.last_mut() {
            Some(t) if t.vertex == vertex => {
                t.before += before;
                t.after += after;
                t.first = t.first.or(first);
            }
            _ => touched.push(Touched {
                vertex,
                before,
                after,
                first,
            }),
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if j == new.len() || (i < old.len() && old[i].0 < new[j].group) {
            add(old[i].0, old[i].1, 0, None);
            i += 1;
        } else {
            let piece = &new[j];
            let start = edges.short_cursor(piece.start, piece.first);
            add(piece.group, 0, piece.len, Some(start));
            j += 1;
        }
    }
    touched
}

/// Every vertex's key count in the leaves `leaves` of `base_edges`, decoded.
pub(super) fn decoded_counts<C: LeafCodec>(
    base_edges: &Pma<C>,
    leaves: Range<usize>,
) -> Vec<(u64, u32)> {
    base_edges
        .run_pieces_in(32, leaves)
        .iter()
        .map(|piece| (piece.group, piece.len))
        .collect()
}

/// Where `v`'s run starts in `edges` when its first key is the first key at or after leaf
/// `from`; `None` if that key is not `v`'s.
pub(super) fn first_run_from<C: LeafCodec>(
    edges: &Pma<C>,
    from: usize,
    v: usize,
) -> Option<ShortCursor> {
    (from..edges.num_leaves()).find_map(|j| {
        let pieces = edges.run_pieces_in(32, j..j + 1);
        let piece = pieces.first()?;
        Some((piece.group == v as u64).then(|| edges.short_cursor(piece.start, piece.first)))
    })?
}

impl RunIndex {
    /// The index of `edges` derived from `base`, the index of an earlier version `base_edges`
    /// of the same array: only the leaves whose contents differ between the two versions
    /// are decoded, in `edges` (the earlier counts there come from `base`,
    /// [`RunIndex::old_counts`]), and only the entries of the vertices with keys in them
    /// are changed, each by the difference of its key counts there (so a vertex whose
    /// run spans many unchanged leaves is not re-scanned); only the segments whose entries
    /// change (and the chunks holding them) are copied, every other one is shared with
    /// `base`. `None` when the layouts differ or most leaves changed (a full build is then
    /// as cheap).
    pub(crate) fn update_from<C: LeafCodec>(
        base: &Self,
        base_edges: &Pma<C>,
        edges: &Pma<C>,
        num_vertices: usize,
    ) -> Option<Self> {
        let changed = edges.changed_since(base_edges)?;
        let changed_leaves: usize = changed.iter().map(|r| r.len()).sum();
        if changed_leaves * 4 > edges.num_leaves() || base.len > num_vertices {
            return None;
        }
        let mut index = base.clone();
        index.grow(num_vertices);
        // Ranges in order: each is applied to the entries as the ranges before it left
        // them, which describe the array with those ranges new and the rest old.
        // The highest vertex an earlier range changed the entry of: entries above it are
        // still those of `base_edges`.
        let mut changed_up_to = None;
        for leaves in &changed {
            let old = index
                .old_counts(base_edges, leaves.clone(), changed_up_to)
                .unwrap_or_else(|| decoded_counts(base_edges, leaves.clone()));
            let touched = touched_vertices(&old, edges, leaves.clone());
            for touched in &touched {
                index.apply_touched(edges, leaves, touched)?;
            }
            changed_up_to = touched.last().map(|t| t.vertex).or(changed_up_to);
        }
        Some(index)
    }

    /// Every vertex's key count in the leaves `leaves` of `base_edges`, in order, read from
    /// this index without decoding those leaves whole, when every entry above the vertex
    /// `changed_up_to` is still that of `base_edges`. The leaves hold exactly the keys in
    /// [`Pma::key_span`] (two heads); of the vertices there, those strictly between the
    /// first and the last have all their keys inside, so their counts are their degrees.
    /// Only the first vertex's keys at the leaves' start and the last one's from its run's
    /// start are decoded (runs that may cross the leaves' ends). `None` (the caller
    /// decodes) when an earlier range changed an entry read here, or the span holds more
    /// vertex ids than [`OLD_WALK_PER_LEAF`] a leaf.
    pub(super) fn old_counts<C: LeafCodec>(
        &self,
        base_edges: &Pma<C>,
        leaves: Range<usize>,
        changed_up_to: Option<usize>,
    ) -> Option<Vec<(u64, u32)>> {
        let keys = base_edges.key_span(leaves.clone());
        if keys.start >= keys.end {
            return Some(Vec::new());
        }
        let first = usize::try_from(keys.start >> 32).ok()?;
        let last = usize::try_from((keys.end - 1) >> 32)
            .ok()?
            .min(self.len.checked_sub(1)?);
        if first >= self.len
            || changed_up_to.is_some_and(|v| v > first)
            || last - first > OLD_WALK_PER_LEAF * leaves.len()
        {
            return None;
        }
        let mut counts = Vec::new();
        let leading = base_edges.count_leading_run(32, leaves, first as u64, keys.end);
        if leading > 0 {
            counts.push((first as u64, u32::try_from(leading).ok()?));
        }
        if last > first {
            self.entry_slices(first + 1..last, |base, mask, entries| {
                for (v, p) in vertices_of(base, mask).zip(entries) {
                    let degree = self.degree_of(v, p);
                    if degree > 0 {
                        counts.push((v as u64, degree));
                    }
                }
            });
            let entry = self.entry(last);
            if entry.degree > 0 {
                let high = u32::try_from(last).ok()?;
                let inside =
                    base_edges.count_run_below(entry.start, high, entry.degree as usize, keys.end);
                if inside > 0 {
                    counts.push((last as u64, u32::try_from(inside).ok()?));
                }
            }
        }
        Some(counts)
    }

    /// Brings the entry of `touched.vertex` up to date for the leaves `leaves`, which now
    /// hold their contents in `edges`: its degree changes by the difference of its key
    /// counts there; its start stays if its run starts before them, and is otherwise its
    /// first key there, or after them if it has none there any more. `None` if the counts
    /// contradict the entry (the caller then builds the index in full).
    fn apply_touched<C: LeafCodec>(
        &mut self,
        edges: &Pma<C>,
        leaves: &Range<usize>,
        touched: &Touched,
    ) -> Option<()> {
        let v = touched.vertex;
        if v >= self.len {
            return None;
        }
        let entry = self.entry(v);
        let degree = entry
            .degree
            .checked_sub(touched.before)?
            .checked_add(touched.after)?;
        let next = if degree == 0 {
            Entry::default()
        } else if entry.degree > 0 && entry.start.leaf() < leaves.start {
            Entry { degree, ..entry }
        } else if let Some(start) = touched.first {
            Entry { start, degree }
        } else {
            let start = first_run_from(edges, leaves.end, v)?;
            Entry { start, degree }
        };
        self.set_entry(v, next)
    }
}
