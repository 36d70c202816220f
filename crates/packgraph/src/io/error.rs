//! Errors of reading and writing graph files: each names the file and, for text formats,
//! the line and the offending value.

use std::path::{Path, PathBuf};

/// Why a graph file could not be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
    /// The operating system refused to open, read or write the file.
    #[error("{}: {source}", path.display())]
    Os {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A line of a text file is malformed.
    #[error("{}:{line}: {reason}: `{value}`", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The line, counted from 1.
        line: u64,
        /// The offending text (shortened to 60 characters).
        value: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The file is well formed line by line but wrong as a whole (an empty file, a header
    /// that disagrees with the contents, a compressed stream cut short).
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A binary snapshot is damaged: its checksum or structure does not hold.
    #[error("{}: corrupted packgraph snapshot: {reason}", path.display())]
    Corrupted {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The file's format could not be determined or is not supported for this use.
    #[error("{}: {reason}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

impl IoError {
    pub(crate) fn os(path: &Path, source: std::io::Error) -> Self {
        Self::Os {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn invalid(path: &Path, reason: impl Into<String>) -> Self {
        Self::Invalid {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    pub(crate) fn corrupted(path: &Path, reason: impl Into<String>) -> Self {
        Self::Corrupted {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    pub(crate) fn format(path: &Path, reason: impl Into<String>) -> Self {
        Self::Format {
            path: path.to_path_buf(),
            reason: reason.into(),
        }
    }

    /// The line of a [`IoError::Parse`] error.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::Parse { line, .. } => Some(*line),
            _ => None,
        }
    }
}

/// A malformed line found while parsing bytes, before the file name is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// The line, counted from 1 within the parsed text.
    pub line: u64,
    /// The offending text.
    pub value: String,
    /// What is wrong with it.
    pub reason: String,
}

impl LineError {
    pub(crate) fn new(line: u64, value: &[u8], reason: impl Into<String>) -> Self {
        let text = String::from_utf8_lossy(value);
        let value = if text.chars().count() > 60 {
            let cut: String = text.chars().take(57).collect();
            format!("{cut}...")
        } else {
            text.into_owned()
        };
        Self {
            line,
            value,
            reason: reason.into(),
        }
    }

    pub(crate) fn in_file(self, path: &Path) -> IoError {
        IoError::Parse {
            path: path.to_path_buf(),
            line: self.line,
            value: self.value,
            reason: self.reason,
        }
    }
}
