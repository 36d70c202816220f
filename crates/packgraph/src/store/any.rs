//! A store, or a loaded graph, of whichever kind a directory's manifest names: for callers
//! (the CLI, the Python bindings) that learn the kind from the directory.

use std::path::Path;

use super::recover::read_manifest;
use super::{load_graph, CheckpointStats, OsVfs, RecoveryStats, Seq, Store, StoreOptions};
use crate::graph::{AnyGraph, Applied, IdKind, Update};
use crate::pma::{GroupLeaf, GroupMapLeaf};
use crate::Result;

/// A store of either graph kind, as the directory's manifest says.
#[derive(Debug)]
pub enum AnyStore {
    /// Edges without weights.
    Unweighted(Store<GroupLeaf>),
    /// Edges with `f64` weights.
    Weighted(Store<GroupMapLeaf>),
}

/// Evaluates `$body` with `$store` bound to the store inside `$any`, whichever kind it is.
macro_rules! with_store {
    ($any:expr, $store:ident => $body:expr) => {
        match $any {
            AnyStore::Unweighted($store) => $body,
            AnyStore::Weighted($store) => $body,
        }
    };
}

impl AnyStore {
    /// Opens `dir` as whichever kind its manifest names.
    ///
    /// # Errors
    /// As [`Store::open`].
    pub fn open(dir: &Path, options: StoreOptions) -> Result<Self> {
        let manifest = read_manifest(&*options.vfs, dir)?;
        Ok(if manifest.weighted {
            Self::Weighted(Store::open(dir, options)?)
        } else {
            Self::Unweighted(Store::open(dir, options)?)
        })
    }

    /// Creates `dir` holding `graph`.
    ///
    /// # Errors
    /// As [`Store::create`].
    pub fn create(dir: &Path, options: StoreOptions, graph: AnyGraph) -> Result<Self> {
        Self::create_with_ids(dir, options, graph, None)
    }

    /// Creates `dir` holding `graph`, its vertex ids of kind `ids` (see
    /// [`Store::create_with_ids`]).
    ///
    /// # Errors
    /// As [`Store::create_with_ids`].
    pub fn create_with_ids(
        dir: &Path,
        options: StoreOptions,
        graph: AnyGraph,
        ids: Option<IdKind>,
    ) -> Result<Self> {
        Ok(match graph {
            AnyGraph::Unweighted(g) => {
                Self::Unweighted(Store::create_with_ids(dir, options, g, ids)?)
            }
            AnyGraph::Weighted(g) => Self::Weighted(Store::create_with_ids(dir, options, g, ids)?),
        })
    }

    /// See [`Store::id_kind`].
    pub fn id_kind(&self) -> Option<IdKind> {
        with_store!(self, s => s.id_kind())
    }

    /// Whether edges carry weights.
    pub fn is_weighted(&self) -> bool {
        matches!(self, Self::Weighted(_))
    }

    /// See [`Store::commit`].
    ///
    /// # Errors
    /// As [`Store::commit`].
    pub fn commit(&self, update: &Update) -> Result<(Seq, Applied)> {
        with_store!(self, s => s.commit(update))
    }

    /// See [`Store::append`].
    ///
    /// # Errors
    /// As [`Store::append`].
    pub fn append(&self, update: &Update) -> Result<(Seq, Applied)> {
        with_store!(self, s => s.append(update))
    }

    /// See [`Store::durable_seq`].
    pub fn durable_seq(&self) -> Seq {
        with_store!(self, s => s.durable_seq())
    }

    /// See [`Store::wait_durable`].
    ///
    /// # Errors
    /// As [`Store::wait_durable`].
    pub fn wait_durable(&self, seq: Seq) -> Result<()> {
        with_store!(self, s => s.wait_durable(seq))
    }

    /// See [`Store::sync`].
    ///
    /// # Errors
    /// As [`Store::sync`].
    pub fn sync(&self) -> Result<Seq> {
        with_store!(self, s => s.sync())
    }

    /// See [`Store::checkpoint`].
    ///
    /// # Errors
    /// As [`Store::checkpoint`].
    pub fn checkpoint(&self) -> Result<CheckpointStats> {
        with_store!(self, s => s.checkpoint())
    }

    /// See [`Store::checkpoint_full`].
    ///
    /// # Errors
    /// As [`Store::checkpoint`].
    pub fn checkpoint_full(&self) -> Result<CheckpointStats> {
        with_store!(self, s => s.checkpoint_full())
    }

    /// See [`Store::recovery`].
    pub fn recovery(&self) -> RecoveryStats {
        with_store!(self, s => s.recovery())
    }

    /// The latest committed version as a graph of its own (O(1), shares pages).
    pub fn graph(&self) -> AnyGraph {
        match self {
            Self::Unweighted(s) => AnyGraph::Unweighted(s.snapshot().to_graph()),
            Self::Weighted(s) => AnyGraph::Weighted(s.snapshot().to_graph()),
        }
    }
}

/// The latest durable state of `dir` as whichever graph kind it holds (no lock taken).
///
/// # Errors
/// As [`Store::open`].
pub fn load_any(dir: &Path) -> Result<AnyGraph> {
    let manifest = read_manifest(&OsVfs, dir)?;
    Ok(if manifest.weighted {
        AnyGraph::Weighted(load_graph(dir)?)
    } else {
        AnyGraph::Unweighted(load_graph(dir)?)
    })
}
