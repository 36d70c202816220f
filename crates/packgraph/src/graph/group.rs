//! Write groups: several updates applied as the only writer of a [`SharedGraph`] and
//! published as one version ([`SharedGraph::commit_group`]), the edge-only ones among them
//! merged into one batch ([`GroupCommit::commit_merged_with`]).

use super::shared::{ApplyFn, WriterGuard};
use super::{Applied, EdgeLeaf, Graph, Outcome, SharedGraph, Update};
use crate::pma::{GroupLeaf, LeafCodec};
use crate::Result;

/// Several updates applied as the only writer and committed as one: what
/// [`SharedGraph::commit_group`] hands its closure.
///
/// Each update is built from the writer's graph as the group's earlier updates left it, and
/// applied whole or, on an error, not at all; the group's other updates stay. When the
/// closure returns, the group ends as one commit (published at once if large, by the next
/// snapshot otherwise, as [`SharedGraph::commit`]): a snapshot sees every update of the
/// group or none of them. Version numbers still count updates, so the version a snapshot
/// sees is the last update's, and the versions of the earlier ones are never published.
pub struct GroupCommit<'a, C: LeafCodec = GroupLeaf> {
    shared: &'a SharedGraph<C>,
    /// The writer; the updates the group applied count in its `unpublished`.
    writer: WriterGuard<'a, C>,
    /// How many updates the group applied (not counting `merged`), and their edges.
    applied: usize,
    applied_edges: usize,
    /// The updates [`GroupCommit::commit_merged_with`] took and has not applied yet, merged
    /// in order into one ([`Update::append`]).
    merged: Update,
    /// How many updates `merged` holds.
    merged_count: u64,
    /// [`Graph::apply`], for [`GroupCommit::apply_merged`] (also run when a panic ends the
    /// group, where the edge-leaf bound that `apply` needs is not at hand).
    apply: ApplyFn<C>,
}

/// What [`GroupCommit::commit_merged_with`] did with an update.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Merged {
    /// The graph's version after the update: the group's earlier updates and this one
    /// counted one each, as if each had been applied alone.
    pub version: u64,
    /// Self-loops among its inserts, which are not stored.
    pub self_loops: usize,
}

impl<C: EdgeLeaf> SharedGraph<C> {
    /// Runs `group` as the only writer (other writers wait): the updates it applies through
    /// the [`GroupCommit`] are committed as one when it returns, instead of one each, which
    /// spares each update but the first the cost of a version (copying the pages and
    /// page-table groups the previous version shares, deriving its index) when it is
    /// published. Returns `group`'s value and the writer's version then, which every
    /// snapshot taken afterwards has (the latest version if nothing was applied).
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead, SharedGraph, Update};
    ///
    /// let shared = SharedGraph::new(Graph::new(false));
    /// let (results, version) = shared.commit_group(|group| {
    ///     vec![
    ///         group.commit(Update::new().insert_edges(&[(0, 1)])),
    ///         // Refused whole (a property of a vertex the graph lacks); the others stay.
    ///         group.commit(Update::new().set_property("x", 9, 1i64.into())),
    ///         group.commit(Update::new().insert_edges(&[(1, 2)])),
    ///     ]
    /// });
    /// assert!(results[0].is_ok() && results[1].is_err() && results[2].is_ok());
    /// assert_eq!(version, 2);
    /// assert_eq!(shared.snapshot().num_edges(), 2);
    /// ```
    pub fn commit_group<T>(&self, group: impl FnOnce(&mut GroupCommit<'_, C>) -> T) -> (T, u64) {
        let mut writer = self.lock();
        // The group's closure may take a snapshot from this thread.
        self.keep_published(&mut writer);
        let mut commit = GroupCommit {
            shared: self,
            writer,
            applied: 0,
            applied_edges: 0,
            merged: Update::new(),
            merged_count: 0,
            apply: |graph, update| graph.apply(update),
        };
        let value = group(&mut commit);
        commit.apply_merged();
        let version = commit.writer.graph.version();
        drop(commit);
        (value, version)
    }
}

impl<C: EdgeLeaf> GroupCommit<'_, C> {
    /// The writer's graph as the group's updates so far left it (not yet published),
    /// except the edges of those [`GroupCommit::commit_merged_with`] took since the last
    /// other commit of the group, which are applied when the group ends.
    pub fn graph(&self) -> &Graph<C> {
        &self.writer.graph
    }

    /// How many updates the group took so far.
    pub fn len(&self) -> usize {
        self.applied + self.merged_count as usize
    }

    /// Whether the group took no update yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Applies `update` after the group's earlier ones.
    ///
    /// # Errors
    /// As [`Graph::apply`]: nothing of `update` is applied, the earlier updates stay.
    pub fn commit(&mut self, update: &Update) -> Result<Applied> {
        self.commit_with(|_| Ok(update))
    }

    /// Builds an update from the graph as the group's earlier updates left it, then applies
    /// it (as [`SharedGraph::commit_with`], within the group).
    ///
    /// # Errors
    /// `build`'s error, or as [`Graph::apply`]: nothing of the update is applied, the
    /// earlier updates stay.
    pub fn commit_with<U: std::borrow::Borrow<Update>>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<Applied> {
        self.commit_logged_with(build, |_, _| Ok(()))
            .map(|(applied, ())| applied)
    }

    /// [`GroupCommit::commit_with`] with a step between checking the update and applying
    /// it, as [`SharedGraph::commit_logged_with`] has: if `log` fails, nothing of this
    /// update is applied.
    pub(crate) fn commit_logged_with<U: std::borrow::Borrow<Update>, T>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
        log: impl FnOnce(Outcome, &Update) -> Result<T>,
    ) -> Result<(Applied, T)> {
        self.apply_merged();
        let update = build(&self.writer.graph)?;
        self.apply_logged(update.borrow(), log)
    }

    /// Takes an update built from the graph into the group, as [`GroupCommit::commit_with`]
    /// does, but applies an update that only inserts and deletes edges between vertices
    /// the graph has later, merged with the other such updates of the group into one batch
    /// (in their order, so an edge ends as the last of them left it). That batch is applied
    /// when the group ends or a plain [`GroupCommit::commit_with`] comes: the sorted batch
    /// costs far less per edge than an apply per update, which a group of many one-edge
    /// updates pays otherwise. Any other update is applied at once, after the merged ones.
    ///
    /// `build` sees the graph without the edges of the merged updates not yet applied (their
    /// vertices, ids and counts are the same either way): it may look up vertices, not
    /// edges. The result gives the update's version, counted as if each update of the
    /// group were applied alone, and its self-loops; an error refuses the update alone, as
    /// [`Graph::apply`] would.
    ///
    /// # Examples
    /// ```
    /// use packgraph::graph::{Graph, GraphRead, SharedGraph, Update};
    ///
    /// let shared = SharedGraph::new(Graph::new(false));
    /// shared.commit(Update::new().min_vertices(4)).unwrap();
    /// let (merged, version) = shared.commit_group(|group| {
    ///     [(0, 1), (1, 2), (2, 3)]
    ///         .map(|e| group.commit_merged_with(|_| Ok(Update::from_edges(vec![e]))).unwrap())
    /// });
    /// assert_eq!(merged.map(|m| m.version), [2, 3, 4]);
    /// assert_eq!((version, shared.snapshot().num_edges()), (4, 3));
    /// ```
    ///
    /// # Errors
    /// `build`'s error, or as [`Graph::apply`]: nothing of the update is taken, the
    /// earlier updates stay.
    pub fn commit_merged_with<U: std::borrow::Borrow<Update>>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
    ) -> Result<Merged> {
        self.commit_merged_logged_with(build, |_, _| Ok(()))
            .map(|(merged, ())| merged)
    }

    /// [`GroupCommit::commit_merged_with`] with a step before the update is taken (the
    /// durable store logs it there): if `log` fails, nothing of the update is taken.
    pub(crate) fn commit_merged_logged_with<U: std::borrow::Borrow<Update>, T>(
        &mut self,
        build: impl FnOnce(&Graph<C>) -> Result<U>,
        log: impl FnOnce(Outcome, &Update) -> Result<T>,
    ) -> Result<(Merged, T)> {
        let update = build(&self.writer.graph)?;
        let update = update.borrow();
        let Some(self_loops) = self.writer.graph.check_mergeable(update)? else {
            self.apply_merged();
            let (applied, value) = self.apply_logged(update, log)?;
            let merged = Merged {
                version: applied.version,
                self_loops: applied.self_loops,
            };
            return Ok((merged, value));
        };
        let outcome = self.writer.graph.outcome_unchanged(self.merged_count + 1);
        let value = log(outcome, update)?;
        self.merged.append(update);
        self.merged_count += 1;
        let version = self.writer.graph.version() + self.merged_count;
        Ok((
            Merged {
                version,
                self_loops,
            },
            value,
        ))
    }

    /// Checks `update` against the graph the group's earlier updates left, runs `log`,
    /// then applies it; if either step fails, nothing of `update` is applied.
    fn apply_logged<T>(
        &mut self,
        update: &Update,
        log: impl FnOnce(Outcome, &Update) -> Result<T>,
    ) -> Result<(Applied, T)> {
        let done = self
            .writer
            .apply_logged(update, |outcome| log(outcome, update))?;
        self.applied += 1;
        self.applied_edges += update.edges();
        Ok(done)
    }
}

impl<C: LeafCodec> GroupCommit<'_, C> {
    /// Applies the updates [`GroupCommit::commit_merged_with`] took as one batch, each
    /// counted as a version.
    fn apply_merged(&mut self) {
        if self.merged_count == 0 {
            return;
        }
        let merged = std::mem::take(&mut self.merged);
        let count = std::mem::take(&mut self.merged_count);
        let version = self.writer.graph.version();
        match (self.apply)(&mut self.writer.graph, &merged) {
            Ok(_) => {
                self.writer.graph.set_version(version + count);
                self.applied += 1;
                self.applied_edges += merged.edges();
                self.writer.unpublished += 1;
            }
            // Each update passed `check_mergeable` on this very state: it adds no vertex or
            // id and its weights are valid, which is all `apply` checks, and merging
            // changes neither. So this does not happen.
            Err(e) => debug_assert!(false, "a group's merged batch does not apply: {e}"),
        }
    }
}

impl<C: LeafCodec> Drop for GroupCommit<'_, C> {
    /// Ends the group's updates as one commit ([`SharedGraph::end_commit`]) unless a panic
    /// ends the group: then, as after a panicking [`SharedGraph::commit`], the writer's
    /// graph is not published. Merged updates not applied yet are applied either way: they
    /// were logged, and the writer's graph must stay what the log replays.
    fn drop(&mut self) {
        self.apply_merged();
        if self.applied > 0 && !std::thread::panicking() {
            self.shared.end_commit(&mut self.writer, self.applied_edges);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::super::tests::{edges, state};
    use super::*;
    use crate::graph::{GraphRead, VertexId};
    use crate::Error;

    /// One update of a write group (`merged_groups_match_updates_applied_one_by_one`).
    #[derive(Debug, Clone)]
    enum GroupStep {
        /// Inserts, then deletes, then more inserts, between the first 12 vertices.
        Edges(
            Vec<(VertexId, VertexId)>,
            Vec<(VertexId, VertexId)>,
            Vec<(VertexId, VertexId)>,
        ),
        /// An edge to a vertex past the graph's: grows it, so it is applied alone.
        Grow(VertexId),
        /// A property of an existing vertex: applied alone.
        Property(VertexId),
        /// Weights given to the unweighted graph: refused.
        Bad,
    }

    impl GroupStep {
        fn update(&self) -> Update {
            let mut update = Update::new();
            match self {
                Self::Edges(a, d, b) => {
                    update.insert_edges(a).delete_edges(d).insert_edges(b);
                }
                Self::Grow(v) => {
                    update.insert_edges(&[(1, 12 + v)]);
                }
                Self::Property(v) => {
                    update.set_property("p", *v, i64::from(*v).into());
                }
                Self::Bad => {
                    update.insert_weighted_edges(&[(1, 2, 0.5)]);
                }
            }
            update
        }
    }

    fn group_step() -> impl Strategy<Value = GroupStep> {
        let few = || vec((0..12 as VertexId, 0..12 as VertexId), 0..4);
        prop_oneof![
            6 => (few(), few(), few()).prop_map(|(a, d, b)| GroupStep::Edges(a, d, b)),
            1 => (0..3 as VertexId).prop_map(GroupStep::Grow),
            1 => (0..12 as VertexId).prop_map(GroupStep::Property),
            1 => Just(GroupStep::Bad),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        /// A write group whose updates join its merged batch ends as the same updates applied
        /// one by one: each update's result (refused or its version and self-loops), the
        /// published graph and its version. Updates whose `log` step fails are left out of
        /// both, merged ones (never taken) and plain ones (undone) alike.
        #[test]
        fn merged_groups_match_updates_applied_one_by_one(
            start in edges(12),
            steps in vec((group_step(), any::<bool>(), 0..8u8), 0..40),
            directed: bool,
        ) {
            let mut one_by_one = Graph::from_edges(12, &start, directed).unwrap();
            let shared = SharedGraph::new(Graph::from_edges(12, &start, directed).unwrap());
            let (results, version) = shared.commit_group(|group| {
                steps
                    .iter()
                    .map(|(step, merged, fail)| {
                        let update = step.update();
                        // One in eight logs fails.
                        let log = |_: Outcome, _: &Update| match fail {
                            0 => Err(Error::invalid_reason("the log refused it")),
                            _ => Ok(()),
                        };
                        if *merged {
                            group
                                .commit_merged_logged_with(|_| Ok(&update), log)
                                .map(|(m, ())| (m.version, m.self_loops))
                        } else {
                            group
                                .commit_logged_with(|_| Ok(&update), log)
                                .map(|(a, ())| (a.version, a.self_loops))
                        }
                    })
                    .collect::<Vec<_>>()
            });
            for ((step, _, fail), result) in steps.iter().zip(&results) {
                let mut alone = one_by_one.snapshot().to_graph();
                match (alone.apply(&step.update()), result) {
                    (Ok(_), Err(_)) if *fail == 0 => {}
                    (Ok(applied), Ok(got)) => {
                        prop_assert_eq!((applied.version, applied.self_loops), *got);
                        one_by_one = alone;
                    }
                    (Err(_), Err(_)) => {}
                    (want, got) => prop_assert!(false, "{step:?}: {want:?} one by one, {got:?} merged"),
                }
            }
            let published = shared.snapshot();
            prop_assert_eq!(version, one_by_one.version());
            prop_assert_eq!(state(&*published), state(&one_by_one));
            published.check_invariants().unwrap();
        }
    }

    /// A group that panics after merging updates still applies them to the writer's graph
    /// (a durable store has logged them): the next commit publishes them with its own.
    #[test]
    fn a_panicking_group_keeps_its_merged_updates_for_the_writer() {
        let shared = SharedGraph::new(Graph::from_edges(4, &[], false).unwrap());
        let start = shared.snapshot().version();
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            shared.commit_group(|group| {
                group
                    .commit_merged_with(|_| Ok(Update::from_edges(vec![(0, 1)])))
                    .unwrap();
                panic!("the group's caller fails");
            })
        }));
        assert!(panicked.is_err());
        // Not published by the panicking group...
        assert_eq!(shared.snapshot().num_edges(), 0);
        // ... but in the writer's graph, which the next commit publishes.
        shared
            .commit(Update::new().insert_edges(&[(2, 3)]))
            .unwrap();
        let after = shared.snapshot();
        assert!(after.has_edge(0, 1) && after.has_edge(2, 3));
        assert_eq!(after.version(), start + 2);
    }
}
