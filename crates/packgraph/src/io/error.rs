//! A malformed line found while parsing text, before the file name is attached; it becomes
//! an [`Error::InvalidInput`] naming file, line and value.

use std::path::Path;

use crate::error::quote;
use crate::Error;

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
        Self {
            line,
            value: quote(&String::from_utf8_lossy(value)),
            reason: reason.into(),
        }
    }

    pub(crate) fn in_file(self, path: &Path) -> Error {
        Error::InvalidInput {
            path: Some(path.to_path_buf()),
            line: Some(self.line),
            value: Some(self.value),
            reason: self.reason,
        }
    }
}
