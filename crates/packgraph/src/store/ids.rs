//! The kind of vertex ids a data directory holds, and the check that keeps every write to
//! it: all integers or all names ([`IdKind`]), so that one stray token cannot turn an
//! integer directory into a named one (after which no graph file could hold it).
//!
//! The kind is fixed at [`Store::create_with_ids`] (or taken from a non-empty first graph)
//! and kept in two manifest flag bits; a directory created empty without a kind takes the
//! kind of the first batch that adds vertices. A manifest without either bit (an older
//! directory, or one whose kind its first batch fixed) has the kind its graph's ids show
//! ([`IdKind::of_map`]): integers if no vertex is named, names if every vertex is. Ids
//! never leave a graph, so that kind cannot change across a restart. A directory that
//! already mixes both (one stray token, before kinds were kept) stays unset: the first
//! batch of each opening that adds vertices fixes the kind until it closes, so that its
//! integer vertices keep taking integer updates.
//!
//! [`Store::append`] checks each update under the writer's lock, after applying it and
//! before logging it: the vertices it added must all be of the kind (in a named directory a
//! vertex created by an edge over internal ids, which gets an integer id, is refused too),
//! and every name must be a word text formats can write ([`name_problem`]). A refused
//! update is neither applied nor logged.

use std::sync::atomic::{AtomicU8, Ordering};

use super::{Store, StoreLeaf};
use crate::graph::{name_problem, ExternalId, Graph, GraphRead, IdKind, IdMap, Outcome, Update};
use crate::{Error, Result};

/// The vertex and name counts of a graph before an update, for [`IdKindCell::check`].
#[derive(Debug, Clone, Copy)]
pub(super) struct IdCounts {
    pub(super) vertices: usize,
    names: usize,
}

impl IdCounts {
    /// The counts of `graph`.
    pub(super) fn of<C: StoreLeaf>(graph: &Graph<C>) -> Self {
        Self {
            vertices: graph.num_vertices(),
            names: graph.ids().name_count(),
        }
    }
}

const UNSET: u8 = 0;
const INT: u8 = 1;
const NAME: u8 = 2;

/// A directory's id kind, once known; set at most once, by the writer.
#[derive(Debug)]
pub(super) struct IdKindCell(AtomicU8);

impl IdKindCell {
    pub(super) fn new(kind: Option<IdKind>) -> Self {
        Self(AtomicU8::new(match kind {
            None => UNSET,
            Some(IdKind::Int) => INT,
            Some(IdKind::Name) => NAME,
        }))
    }

    pub(super) fn get(&self) -> Option<IdKind> {
        match self.0.load(Ordering::Acquire) {
            INT => Some(IdKind::Int),
            NAME => Some(IdKind::Name),
            _ => None,
        }
    }

    /// Checks the vertices `update` adds to a graph with the counts `before`, which it
    /// leaves as `after` (checked before it is applied), fixing the kind if it was unset
    /// and the update adds vertices. Runs under the writer's lock, so two updates cannot
    /// both fix it.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the first offending id.
    pub(super) fn check(&self, update: &Update, before: IdCounts, after: Outcome) -> Result<()> {
        if let Some((name, reason)) = update.vertices().iter().find_map(|id| match id {
            ExternalId::Name(name) => name_problem(name).map(|r| (name, r)),
            ExternalId::Int(_) => None,
        }) {
            return Err(Error::invalid(name, reason));
        }
        let added = after.vertices.saturating_sub(before.vertices);
        let named = after.names.saturating_sub(before.names);
        if added == 0 {
            return Ok(());
        }
        let (kind, fixing) = match self.get() {
            Some(kind) => (kind, false),
            None if named == 0 => (IdKind::Int, true),
            None => (IdKind::Name, true),
        };
        match kind {
            IdKind::Int if named > 0 => {
                return Err(wrong_kind(update, IdKind::Int, fixing));
            }
            IdKind::Name if named < added => {
                return Err(wrong_kind(update, IdKind::Name, fixing));
            }
            _ => {}
        }
        if fixing {
            self.0.store(
                match kind {
                    IdKind::Int => INT,
                    IdKind::Name => NAME,
                },
                Ordering::Release,
            );
        }
        Ok(())
    }
}

/// The error of an update that adds vertices of the other kind than `kind`: naming the
/// first such id it lists, or the vertices its edges created over internal ids.
fn wrong_kind(update: &Update, kind: IdKind, fixing: bool) -> Error {
    let whose = if fixing {
        "the batch mixes integer and named vertex ids; a data directory holds one kind, and its first batch fixes it"
    } else {
        match kind {
            IdKind::Int => {
                "a name, but this data directory's vertices are integers (`create --ids int`)"
            }
            IdKind::Name => {
                "an integer, but this data directory's vertices are names (`create --ids name`)"
            }
        }
    };
    let stray = update.vertices().iter().find(|id| match kind {
        IdKind::Int => matches!(id, ExternalId::Name(_)),
        // Under a fixed kind the other kind is stray; a first batch's minority is.
        IdKind::Name => matches!(id, ExternalId::Int(_)),
    });
    match stray {
        Some(id) => Error::invalid(id.token(), whose),
        None => Error::invalid_reason(format!(
            "the update creates vertices by internal id, which get integer ids: {whose}"
        )),
    }
}

/// The kind a directory created holding a graph with `ids` takes: `asked` if its ids are of
/// that kind, else the ids' own kind (`None` for no vertices).
pub(super) fn kind_to_create(ids: &IdMap, asked: Option<IdKind>) -> Result<Option<IdKind>> {
    let Some(asked) = asked else {
        return Ok(IdKind::of_map(ids));
    };
    let fits = match asked {
        IdKind::Int => !ids.has_names(),
        IdKind::Name => ids.name_count() == ids.len(),
    };
    if !fits {
        let has = match asked {
            IdKind::Int => "named",
            IdKind::Name => "integer",
        };
        return Err(Error::invalid_reason(format!(
            "the graph has {has} vertices, so a directory of {} ids cannot start from it",
            asked.name(),
        )));
    }
    if let Some(ExternalId::Name(name)) = ids.iter().find(|id| match id {
        ExternalId::Name(name) => name_problem(name).is_some(),
        ExternalId::Int(_) => false,
    }) {
        let reason = name_problem(&name).unwrap_or_default();
        return Err(Error::invalid(name, reason));
    }
    Ok(Some(asked))
}

impl<C: StoreLeaf> Store<C> {
    /// The kind of vertex ids the directory holds: fixed at creation, or by the first batch
    /// that added vertices; `None` while neither happened. Updates that add vertices of the
    /// other kind are refused ([`Store::commit`]).
    pub fn id_kind(&self) -> Option<IdKind> {
        self.inner.id_kind.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::GraphRead;
    use crate::pma::GroupLeaf;
    use crate::store::StoreOptions;

    fn options() -> StoreOptions {
        StoreOptions {
            sync: crate::store::SyncPolicy::None,
            ..StoreOptions::default()
        }
    }

    fn adding(ids: &[ExternalId], edges: &[(u32, u32)]) -> Update {
        let mut update = Update::new();
        update.add_vertices(ids.iter().cloned()).insert_edges(edges);
        update
    }

    fn reopen(dir: &std::path::Path) -> Store<GroupLeaf> {
        Store::open(dir, options()).unwrap()
    }

    #[test]
    fn a_stray_id_is_refused_and_nothing_of_it_applied() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("g");
        let store: Store<GroupLeaf> = Store::create(&dir, options(), Graph::new(false)).unwrap();
        assert_eq!(store.id_kind(), None);
        store
            .commit(&adding(&[1u64.into(), 2u64.into()], &[(0, 1)]))
            .unwrap();
        assert_eq!(store.id_kind(), Some(IdKind::Int));
        let error = store
            .commit(&adding(&[5u64.into(), "x7y".into()], &[(2, 3)]))
            .unwrap_err();
        assert!(error.is_input_error());
        assert!(error.to_string().contains("`x7y`"), "{error}");
        assert_eq!(store.snapshot().num_vertices(), 2);
        assert_eq!(store.last_seq(), 1);
        // Ids already there, and edges between them, are fine.
        store
            .commit(&adding(&[2u64.into(), 1u64.into()], &[(1, 0)]))
            .unwrap();
        drop(store);
        // No flag (created empty): the kind comes back from the graph's ids.
        let store = reopen(&dir);
        assert_eq!(store.id_kind(), Some(IdKind::Int));
        assert!(store.commit(&adding(&["bob".into()], &[])).is_err());
        assert_eq!(store.snapshot().ids().name_count(), 0);
    }

    #[test]
    fn a_named_directory_refuses_integers_and_vertices_by_internal_id() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("g");
        let store: Store<GroupLeaf> =
            Store::create_with_ids(&dir, options(), Graph::new(true), Some(IdKind::Name)).unwrap();
        assert_eq!(store.id_kind(), Some(IdKind::Name));
        drop(store);
        // The flag holds across a reopen of a directory that has no vertices yet.
        let store = reopen(&dir);
        assert_eq!(store.id_kind(), Some(IdKind::Name));
        let error = store
            .commit(&adding(&["a".into(), 5u64.into()], &[(0, 1)]))
            .unwrap_err();
        assert!(error.to_string().contains("`5`"), "{error}");
        // An edge past the vertices creates vertices with integer ids: refused.
        let error = store.commit(&adding(&[], &[(0, 1)])).unwrap_err();
        assert!(error.to_string().contains("internal id"), "{error}");
        store
            .commit(&adding(&["a".into(), "5".into()], &[(0, 1)]))
            .unwrap();
        // Names must be words of text.
        for bad in ["a b", "", "x#y", "tab\there", "bell\u{7}"] {
            let error = store.commit(&adding(&[bad.into()], &[])).unwrap_err();
            assert!(error.is_input_error(), "{bad:?}: {error}");
        }
        assert_eq!(store.snapshot().num_vertices(), 2);
    }

    #[test]
    fn the_first_batch_fixes_the_kind_and_may_not_mix() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("g");
        let store: Store<GroupLeaf> = Store::create(&dir, options(), Graph::new(false)).unwrap();
        let error = store
            .commit(&adding(&["alice".into(), 7u64.into()], &[(0, 1)]))
            .unwrap_err();
        assert!(error.to_string().contains("mixes"), "{error}");
        assert_eq!(store.id_kind(), None);
        // A batch adding no vertex fixes nothing.
        store.commit(&Update::new()).unwrap();
        assert_eq!(store.id_kind(), None);
        store
            .commit(&adding(&["alice".into(), "bob".into()], &[(0, 1)]))
            .unwrap();
        assert_eq!(store.id_kind(), Some(IdKind::Name));
        store.checkpoint().unwrap();
        drop(store);
        let store = reopen(&dir);
        assert_eq!(store.id_kind(), Some(IdKind::Name));
        assert!(store.commit(&adding(&[7u64.into()], &[])).is_err());
    }

    #[test]
    fn a_directory_that_mixes_both_takes_each_opening_s_first_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("g");
        let mut mixed: Graph = Graph::new(false);
        mixed
            .apply(&adding(&[1u64.into(), "x7y".into()], &[(0, 1)]))
            .unwrap();
        let store = Store::create(&dir, options(), mixed).unwrap();
        assert_eq!(store.id_kind(), None);
        store
            .commit(&adding(&[1u64.into(), 2u64.into()], &[(0, 2)]))
            .unwrap();
        assert_eq!(store.id_kind(), Some(IdKind::Int));
        assert!(store.commit(&adding(&["y".into()], &[])).is_err());
        drop(store);
        let store = reopen(&dir);
        assert_eq!(store.id_kind(), None);
        store.commit(&adding(&["y".into()], &[])).unwrap();
        assert_eq!(store.id_kind(), Some(IdKind::Name));
        assert_eq!(store.snapshot().num_vertices(), 4);
    }

    fn any_id() -> impl proptest::strategy::Strategy<Value = ExternalId> {
        use proptest::prelude::*;
        prop_oneof![
            (0u64..6).prop_map(ExternalId::Int),
            "[a-c0-2]".prop_map(|s| ExternalId::Name(s.into())),
        ]
    }

    proptest::proptest! {
        /// Random batches of ids against an oracle of the rule: a batch is taken iff every
        /// vertex it adds is of the directory's kind (the kind `create` fixed, else the
        /// first taken batch's, which must not mix); a refused batch changes nothing, and
        /// the kind survives a reopen.
        #[test]
        fn every_taken_batch_keeps_the_directory_to_one_kind(
            start in proptest::option::of(proptest::prop_oneof![
                proptest::strategy::Just(IdKind::Int),
                proptest::strategy::Just(IdKind::Name)
            ]),
            batches in proptest::collection::vec(proptest::collection::vec(any_id(), 0..4), 1..8),
            reopen_at in 0usize..8,
        ) {
            let vfs = crate::store::SimVfs::new();
            let options = || StoreOptions {
                sync: crate::store::SyncPolicy::None,
                vfs: std::sync::Arc::new(vfs.clone()),
                ..StoreOptions::default()
            };
            let dir = std::path::Path::new("/g");
            let mut store: Store<GroupLeaf> =
                Store::create_with_ids(dir, options(), Graph::new(false), start).unwrap();
            let mut kind = start;
            let mut vertices: Vec<ExternalId> = Vec::new();
            for (i, ids) in batches.iter().enumerate() {
                if i == reopen_at {
                    drop(store);
                    store = Store::open(dir, options()).unwrap();
                }
                proptest::prop_assert_eq!(store.id_kind(), kind);
                let new: Vec<&ExternalId> = {
                    let mut new = Vec::new();
                    for id in ids {
                        if !vertices.contains(id) && !new.contains(&id) {
                            new.push(id);
                        }
                    }
                    new
                };
                let kinds: std::collections::BTreeSet<&str> =
                    new.iter().map(|id| IdKind::of(id).name()).collect();
                let fits = match (kind, kinds.len()) {
                    (_, 0) => true,
                    (None, 1) => true,
                    (Some(k), 1) => kinds.contains(k.name()),
                    _ => false,
                };
                let result = store.commit(&adding(ids, &[]));
                proptest::prop_assert_eq!(result.is_ok(), fits, "{:?} on {:?}", ids, kind);
                if fits {
                    if let Some(first) = new.first() {
                        kind = Some(IdKind::of(first));
                    }
                    vertices.extend(new.into_iter().cloned());
                }
                let ids: Vec<ExternalId> = store.snapshot().ids().iter().collect();
                proptest::prop_assert_eq!(&ids, &vertices);
            }
        }
    }

    #[test]
    fn create_checks_the_graph_against_the_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let ints = || {
            let mut g: Graph = Graph::new(false);
            g.insert_edges(&[(0, 1)]).unwrap();
            g
        };
        let error =
            Store::create_with_ids(&tmp.path().join("a"), options(), ints(), Some(IdKind::Name))
                .unwrap_err();
        assert!(error.to_string().contains("integer vertices"), "{error}");
        // Without a kind, the graph's: integers, kept in the manifest.
        let dir = tmp.path().join("b");
        drop(Store::create(&dir, options(), ints()).unwrap());
        let manifest = super::super::recover::read_manifest(&crate::store::OsVfs, &dir).unwrap();
        assert_eq!(manifest.id_kind, Some(IdKind::Int));
        assert_eq!(reopen(&dir).id_kind(), Some(IdKind::Int));
    }
}
