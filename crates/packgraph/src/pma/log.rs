//! A record of what point updates changed, for a caller that keeps something derived from
//! the leaves (the graph's flat vertex index) up to date without comparing versions: the
//! leaves whose bytes changed and the keys added or removed, or that a change could not be
//! described so (a batch merge, a rebuild).

use std::ops::Range;

use super::{LeafCodec, Pma};

/// What a [`Pma`]'s updates changed since [`Pma::start_log`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct ChangeLog {
    /// Leaves whose bytes changed, in the order changed (ranges may overlap or repeat).
    /// Leaf numbers hold: a logged change never moves a leaf.
    pub(crate) leaves: Vec<Range<usize>>,
    /// Keys inserted (`1`) or removed (`-1`), in order.
    pub(crate) keys: Vec<(u64, i8)>,
    /// Some change was not logged (a batch merge, a rebuild or resize): `leaves` and `keys`
    /// then say nothing.
    pub(crate) broken: bool,
}

impl<C: LeafCodec> Pma<C> {
    /// Starts logging changes afresh ([`Pma::take_log`]).
    pub(crate) fn start_log(&mut self) {
        self.log = Some(Box::default());
    }

    /// The changes logged since [`Pma::start_log`], and stops logging; `None` if logging
    /// was not started.
    pub(crate) fn take_log(&mut self) -> Option<Box<ChangeLog>> {
        self.log.take()
    }

    /// Logs a change of leaf `j`'s bytes, and of `key` (`delta` 1 or -1; 0 for none).
    pub(super) fn log_leaf(&mut self, j: usize, key: u64, delta: i8) {
        if let Some(log) = self.log.as_mut() {
            log.leaves.push(j..j + 1);
            if delta != 0 {
                log.keys.push((key, delta));
            }
        }
    }

    /// Logs a redistribution of the leaves `regions` (their keys stay inside them).
    pub(super) fn log_regions(&mut self, regions: &[Range<usize>]) {
        if let Some(log) = self.log.as_mut() {
            log.leaves.extend(regions.iter().cloned());
        }
    }

    /// Logs a change that the log cannot describe.
    pub(super) fn log_broken(&mut self) {
        if let Some(log) = self.log.as_mut() {
            log.broken = true;
        }
    }
}
