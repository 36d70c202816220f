//! Keeping a version's flat index up to date from the arrays' change logs of a small
//! update ([`RunIndex::apply_log`]), without comparing versions.

use std::ops::Range;

use super::derive::first_run_from;
use super::{Entry, RunIndex};
use crate::pma::{ChangeLog, LeafCodec, Pma};

impl RunIndex {
    /// Brings this index, of `edges` before the changes `log` describes, up to date with
    /// `edges` now, without comparing versions: only the leaves the log names are decoded.
    /// Each vertex's degree changes by its keys added and removed; a vertex whose first key
    /// now lies in a logged leaf range gets its start from there, one whose run started in
    /// a range and lost its keys there gets the next run start after it. `None` (the caller
    /// drops the index) when the log is broken, the vertex count changed or the counts
    /// contradict an entry, or an offset does not fit the packing; the index is then left
    /// half updated.
    pub(crate) fn apply_log<C: LeafCodec>(
        &mut self,
        edges: &Pma<C>,
        log: &ChangeLog,
        num_vertices: usize,
    ) -> Option<()> {
        if log.broken || self.len != num_vertices {
            return None;
        }
        let mut ranges = log.leaves.clone();
        ranges.sort_unstable_by_key(|r| (r.start, r.end));
        let mut merged: Vec<Range<usize>> = Vec::with_capacity(ranges.len());
        for range in ranges {
            match merged.last_mut() {
                Some(last) if range.start <= last.end => last.end = last.end.max(range.end),
                _ => merged.push(range),
            }
        }
        let vertex = |key: u64| usize::try_from(key >> 32).unwrap_or(usize::MAX);
        let mut deltas: Vec<(usize, i64)> = log
            .keys
            .iter()
            .map(|&(key, d)| (vertex(key), i64::from(d)))
            .collect();
        deltas.sort_unstable_by_key(|&(v, _)| v);
        // Vertices that lost a key: their run may have started where they now have none.
        let mut lost: Vec<usize> = deltas.iter().filter(|d| d.1 < 0).map(|d| d.0).collect();
        lost.dedup();
        // Vertices without keys before this update whose start it set.
        let mut started: Vec<usize> = Vec::new();
        for range in &merged {
            let pieces = edges.run_pieces_in(32, range.clone());
            let mut previous = None;
            for piece in &pieces {
                let v = usize::try_from(piece.group).ok()?;
                if v >= self.len {
                    return None;
                }
                if previous == Some(v) {
                    continue;
                }
                previous = Some(v);
                let entry = self.entry(v);
                let had_start = entry.degree > 0 || started.contains(&v);
                if had_start && entry.start.leaf() < range.start {
                    continue;
                }
                if entry.degree == 0 {
                    started.push(v);
                }
                let start = edges.short_cursor(piece.start, piece.first);
                self.set_entry(v, Entry { start, ..entry })?;
            }
            for &v in &lost {
                let entry = self.entry(v);
                let had_start = entry.degree > 0 || started.contains(&v);
                if !had_start || !range.contains(&entry.start.leaf()) {
                    continue;
                }
                if pieces.iter().any(|p| p.group == v as u64) {
                    continue;
                }
                // None: no key of `v` at or after the range; its degree must come to 0.
                let start = first_run_from(edges, range.end, v).unwrap_or_default();
                self.set_entry(v, Entry { start, ..entry })?;
            }
        }
        let mut at = 0;
        while at < deltas.len() {
            let v = deltas[at].0;
            let mut sum = 0;
            while at < deltas.len() && deltas[at].0 == v {
                sum += deltas[at].1;
                at += 1;
            }
            if v >= self.len {
                return None;
            }
            let entry = self.entry(v);
            let degree = u32::try_from(i64::from(entry.degree) + sum).ok()?;
            if degree > 0 && entry.degree == 0 && !started.contains(&v) {
                return None;
            }
            let next = if degree == 0 {
                Entry::default()
            } else {
                Entry { degree, ..entry }
            };
            self.set_entry(v, next)?;
        }
        Some(())
    }
}
