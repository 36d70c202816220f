//! The plain types a [`Store`](super::Store) is configured with and reports through: when
//! it syncs, how it writes, what a checkpoint wrote and what recovery found.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use super::{OsVfs, Seq, Vfs};
use crate::{Error, Result};

/// When a committed batch is made durable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SyncPolicy {
    /// `fsync` the log before acknowledging each batch (concurrent commits share one).
    #[default]
    Batch,
    /// Group commit: a background thread syncs the log at most every interval, and a
    /// commit waits for the sync that covers it.
    Group(Duration),
    /// Never sync the log (only checkpoints sync). **Unsafe**: a power cut or OS crash
    /// loses acknowledged batches; a killed process does not.
    None,
}

impl FromStr for SyncPolicy {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "batch" => Ok(Self::Batch),
            "none" => Ok(Self::None),
            _ => {
                let ms = text
                    .strip_prefix("group:")
                    .and_then(|ms| ms.parse::<u64>().ok())
                    .filter(|&ms| (1..=60_000).contains(&ms))
                    .ok_or_else(|| {
                        Error::invalid(
                            text,
                            "sync policy must be batch, group:MS (1 to 60000 milliseconds) or none",
                        )
                    })?;
                Ok(Self::Group(Duration::from_millis(ms)))
            }
        }
    }
}

impl fmt::Display for SyncPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Batch => f.write_str("batch"),
            Self::Group(d) => write!(f, "group:{}", d.as_millis()),
            Self::None => f.write_str("none"),
        }
    }
}

/// How a [`Store`](super::Store) writes.
#[derive(Clone)]
pub struct StoreOptions {
    /// When commits are synced.
    pub sync: SyncPolicy,
    /// A log segment is closed and a new one started past this size.
    pub segment_bytes: u64,
    /// A checkpoint starts in the background once this many bytes of log were written
    /// since the last one; `None` checkpoints only on demand.
    pub checkpoint_log_bytes: Option<u64>,
    /// The file system.
    pub vfs: Arc<dyn Vfs>,
    /// On open, cut off a damaged last log record (all its bytes there, its checksum
    /// wrong) instead of refusing the directory; the batch it held, and any after it, are
    /// lost ([`RecoveryStats::damaged_seq`] says which). A torn last record (cut short by a
    /// crash) is cut either way.
    pub truncate_damaged_tail: bool,
    /// On open, accept a log that ends before the high-water mark (acknowledged batches
    /// missing: the log was cut back or deleted) or before the checkpoint, or is missing,
    /// instead of refusing the directory: the batches it lacks are lost
    /// ([`RecoveryStats::lost_seqs`] says which), a checkpoint is written at the mark and
    /// new batches are numbered after it, so no sequence number is given out twice.
    pub accept_lost_log: bool,
    /// The id [`Store::create`](super::Store::create) gives a new directory, written into
    /// every file's header; `None` (the default) draws 128 random bits. Set it only to
    /// write reproducible files (golden files of tests): two directories must not share
    /// an id. Opening ignores it.
    pub directory_id: Option<u128>,
    /// Called first on each thread the store starts: the group-commit syncer and its mark
    /// writer, and background checkpoints. A server that runs its write path at a lower
    /// priority than its queries lowers these threads with it.
    pub on_thread_start: Option<ThreadStart>,
}

/// A hook run first on a store's background threads ([`StoreOptions::on_thread_start`]).
pub type ThreadStart = Arc<dyn Fn() + Send + Sync>;

impl Default for StoreOptions {
    fn default() -> Self {
        Self {
            sync: SyncPolicy::Batch,
            segment_bytes: 64 << 20,
            checkpoint_log_bytes: Some(256 << 20),
            vfs: Arc::new(OsVfs),
            truncate_damaged_tail: false,
            accept_lost_log: false,
            directory_id: None,
            on_thread_start: None,
        }
    }
}

impl fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreOptions")
            .field("sync", &self.sync)
            .field("segment_bytes", &self.segment_bytes)
            .field("checkpoint_log_bytes", &self.checkpoint_log_bytes)
            .field("truncate_damaged_tail", &self.truncate_damaged_tail)
            .field("accept_lost_log", &self.accept_lost_log)
            .field("directory_id", &self.directory_id)
            .finish_non_exhaustive()
    }
}

/// What one checkpoint wrote.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckpointStats {
    /// The last log record it includes.
    pub seq: Seq,
    /// Whether it wrote only the change since the base (else a new base).
    pub delta: bool,
    /// Bytes of new units written (the manifest included).
    pub bytes_written: u64,
    /// Bytes of units it references that earlier checkpoints wrote.
    pub bytes_reused: u64,
    /// New units written.
    pub units_written: u64,
    /// Units reused.
    pub units_reused: u64,
}

/// What opening a directory found and did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RecoveryStats {
    /// The last log record the checkpoint included.
    pub checkpoint_seq: Seq,
    /// Bytes of checkpoint units read.
    pub checkpoint_bytes: u64,
    /// Log records replayed after the checkpoint.
    pub records_replayed: u64,
    /// Bytes of log read.
    pub log_bytes: u64,
    /// Bytes of a torn last record cut off (0 if the log ended cleanly).
    pub torn_bytes: u64,
    /// The sequence number of a damaged last record cut off on request
    /// ([`StoreOptions::truncate_damaged_tail`]): that batch was lost. `None` if none was.
    pub damaged_seq: Option<Seq>,
    /// Bytes of the damaged last record cut off (0 if none).
    pub damaged_bytes: u64,
    /// Seconds spent loading the checkpoint.
    pub checkpoint_seconds: f64,
    /// Seconds spent replaying the log.
    pub replay_seconds: f64,
    /// The high-water mark the directory recorded: the last batch known acknowledged
    /// (`None` for a directory made before marks were kept).
    pub high_water: Option<Seq>,
    /// The acknowledged batches (first and last sequence number) a lost log took, when
    /// [`StoreOptions::accept_lost_log`] let the directory open without them; `None` if
    /// none were lost.
    pub lost_seqs: Option<(Seq, Seq)>,
}
