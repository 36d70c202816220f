//! `packgraph upgrade DIR`: rewrites a data directory of an earlier format version in this
//! build's format. Opening such a directory already works (it is read as it is, and its
//! next checkpoint is written in the current format); `upgrade` does that checkpoint now,
//! a full one, so that the directory's manifest and the units it names are current.

use std::path::PathBuf;

use clap::Args;
use packgraph::store::{self, AnyStore, StoreOptions, STORE_FORMAT_VERSION};

use crate::durable::Damaged;
use crate::input::BadInput;

/// Options of `packgraph upgrade`.
#[derive(Args, Debug)]
pub(crate) struct UpgradeArgs {
    /// The data directory.
    #[arg(value_name = "DIR")]
    dir: PathBuf,
}

/// A store error as the CLI reports it: damage (and a version this build cannot read)
/// exits 3, a file problem 1, anything else (no data directory there) 2.
fn classify(error: packgraph::Error) -> anyhow::Error {
    match error {
        e @ (packgraph::Error::Corrupt { .. } | packgraph::Error::Unsupported { .. }) => {
            anyhow::Error::new(Damaged(e))
        }
        e @ packgraph::Error::Io { .. } => anyhow::Error::new(e),
        e => BadInput(e).into(),
    }
}

pub(crate) fn upgrade(args: &UpgradeArgs) -> anyhow::Result<()> {
    let dir = args.dir.display();
    let before = store::format_version(&args.dir).map_err(classify)?;
    if before == STORE_FORMAT_VERSION {
        println!("{dir}: already format {before}; nothing to do");
        return Ok(());
    }
    let opened = AnyStore::open(&args.dir, StoreOptions::default()).map_err(classify)?;
    let stats = opened.checkpoint_full().map_err(classify)?;
    drop(opened);
    println!(
        "{dir}: upgraded from format {before} to {STORE_FORMAT_VERSION}: a full checkpoint at \
         record {} ({} bytes written, {} bytes of current units kept)",
        stats.seq, stats.bytes_written, stats.bytes_reused
    );
    Ok(())
}
