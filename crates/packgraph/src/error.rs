//! The library's one error type, [`Error`]: a variant per thing a caller can do about it.
//!
//! * [`Error::InvalidInput`]: the caller's input is wrong and can be fixed (a malformed line,
//!   a NaN weight, an argument out of range); names the file, line and value when there is
//!   one.
//! * [`Error::VertexNotFound`], [`Error::PropertyNotFound`]: a lookup of something absent.
//! * [`Error::Corrupt`]: stored bytes that do not decode (a damaged snapshot or record);
//!   names the file and byte offset when known.
//! * [`Error::Io`]: the operating system refused a file operation.
//! * [`Error::Unsupported`]: a well-formed request this build or format cannot serve.
//! * [`Error::Cancelled`]: a computation stopped early because another thread asked it to.
//!
//! The lowest layers keep small errors of their own ([`CodecError`], [`PmaError`],
//! [`PartError`]), which know no files; they convert into [`Error`] by kind. The CLI maps
//! variants to exit codes and the Python bindings to exceptions.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::codec::frontier::FrontierError;
use crate::codec::CodecError;
use crate::part::PartError;
use crate::pma::PmaError;

/// Any error the packgraph library returns.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Input the caller can fix: a malformed line of a file, an invalid value in a batch or
    /// an argument out of range.
    #[error("{}", Located { path: path.as_deref(), line: *line, offset: None, what: reason, value: value.as_deref() })]
    InvalidInput {
        /// The file, if the input came from one.
        path: Option<PathBuf>,
        /// The line of the file, counted from 1.
        line: Option<u64>,
        /// The offending text or value (shortened to 60 characters).
        value: Option<String>,
        /// What is wrong with it.
        reason: String,
    },
    /// A vertex that is not in the graph.
    #[error("vertex {vertex} is not in the graph (it has {num_vertices} vertices)")]
    VertexNotFound {
        /// The vertex as the caller named it (an internal or external id).
        vertex: String,
        /// Vertices in the graph.
        num_vertices: usize,
    },
    /// A property that no vertex (or not the vertex asked for) has.
    #[error("{}", match vertex { Some(v) => format!("vertex {v} has no property {name:?}"), None => format!("no vertex has property {name:?}") })]
    PropertyNotFound {
        /// The property's name.
        name: String,
        /// The vertex asked for, if one was.
        vertex: Option<String>,
    },
    /// Stored bytes that do not decode: a checksum, a structure or a length does not hold.
    #[error("{}", Located { path: path.as_deref(), line: None, offset: *offset, what: reason, value: None })]
    Corrupt {
        /// The file, if the bytes came from one.
        path: Option<PathBuf>,
        /// The byte offset where the damage was found, if known.
        offset: Option<u64>,
        /// What failed.
        reason: String,
    },
    /// The operating system refused to open, read, write or sync a file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A well-formed request that cannot be served: a format that cannot be written, a
    /// graph kind a file cannot hold.
    #[error("{}", Located { path: path.as_deref(), line: None, offset: None, what: reason, value: None })]
    Unsupported {
        /// The file concerned, if any.
        path: Option<PathBuf>,
        /// What is not supported, and what to do instead.
        reason: String,
    },
    /// A computation that another thread stopped before it finished (a query past its
    /// time limit, a client that went away, Ctrl-C); it has no result.
    #[error("cancelled: the computation was stopped before it finished")]
    Cancelled,
}

/// `Result` with the crate's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Formats `path:line: what: `value`` (or `path: byte N: what`), leaving out what is absent.
struct Located<'a> {
    path: Option<&'a Path>,
    line: Option<u64>,
    offset: Option<u64>,
    what: &'a str,
    value: Option<&'a str>,
}

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(path) = self.path {
            write!(f, "{}", path.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        if let Some(offset) = self.offset {
            write!(f, "byte {offset}: ")?;
        }
        f.write_str(self.what)?;
        if let Some(value) = self.value {
            write!(f, ": `{value}`")?;
        }
        Ok(())
    }
}

/// The longest value an error quotes, in characters.
const QUOTED_CHARS: usize = 60;

/// `text` cut to [`QUOTED_CHARS`] characters.
pub(crate) fn quote(text: &str) -> String {
    if text.chars().count() > QUOTED_CHARS {
        let cut: String = text.chars().take(QUOTED_CHARS - 3).collect();
        format!("{cut}...")
    } else {
        text.to_string()
    }
}

impl Error {
    /// Invalid input with no file: a bad value in a batch or an argument.
    pub fn invalid(value: impl fmt::Display, reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            path: None,
            line: None,
            value: Some(quote(&value.to_string())),
            reason: reason.into(),
        }
    }

    /// Invalid input described by `reason` alone.
    pub fn invalid_reason(reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            path: None,
            line: None,
            value: None,
            reason: reason.into(),
        }
    }

    /// A file that is wrong as a whole (an empty file, a header that disagrees with the
    /// contents, a compressed stream cut short).
    pub fn invalid_file(path: &Path, reason: impl Into<String>) -> Self {
        Self::InvalidInput {
            path: Some(path.to_path_buf()),
            line: None,
            value: None,
            reason: reason.into(),
        }
    }

    /// A vertex that is not among `num_vertices`.
    pub fn vertex_not_found(vertex: impl fmt::Display, num_vertices: usize) -> Self {
        Self::VertexNotFound {
            vertex: vertex.to_string(),
            num_vertices,
        }
    }

    /// Damaged bytes, with no file known (yet: [`Error::in_file`] adds it).
    pub fn corrupt(reason: impl Into<String>) -> Self {
        Self::Corrupt {
            path: None,
            offset: None,
            reason: reason.into(),
        }
    }

    /// Damaged bytes of file `path`.
    pub fn corrupt_file(path: &Path, reason: impl Into<String>) -> Self {
        Self::Corrupt {
            path: Some(path.to_path_buf()),
            offset: None,
            reason: reason.into(),
        }
    }

    /// A refused file operation.
    pub fn io(path: &Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// An unsupported request concerning file `path`.
    pub fn unsupported_file(path: &Path, reason: impl Into<String>) -> Self {
        Self::Unsupported {
            path: Some(path.to_path_buf()),
            reason: reason.into(),
        }
    }

    /// An unsupported request.
    pub fn unsupported(reason: impl Into<String>) -> Self {
        Self::Unsupported {
            path: None,
            reason: reason.into(),
        }
    }

    /// The error with `path` as its file where it names none yet (input that came from a
    /// file is reported against it).
    #[must_use]
    pub fn in_file(mut self, file: &Path) -> Self {
        match &mut self {
            Self::InvalidInput { path, .. }
            | Self::Corrupt { path, .. }
            | Self::Unsupported { path, .. }
                if path.is_none() =>
            {
                *path = Some(file.to_path_buf());
            }
            _ => {}
        }
        self
    }

    /// The line of the file an [`Error::InvalidInput`] names.
    pub fn line(&self) -> Option<u64> {
        match self {
            Self::InvalidInput { line, .. } => *line,
            _ => None,
        }
    }

    /// Whether the caller can fix it by changing its input or arguments (everything but
    /// [`Error::Io`] and [`Error::Cancelled`]); the CLI exits with code 2 for these.
    pub fn is_input_error(&self) -> bool {
        !matches!(self, Self::Io { .. } | Self::Cancelled)
    }
}

impl From<CodecError> for Error {
    fn from(error: CodecError) -> Self {
        let offset = match error {
            CodecError::Truncated { offset, .. }
            | CodecError::Overflow { offset }
            | CodecError::NotIncreasing { offset, .. } => Some(offset as u64),
            _ => None,
        };
        Self::Corrupt {
            path: None,
            offset,
            reason: format!("corrupted data: {error}"),
        }
    }
}

impl From<FrontierError> for Error {
    fn from(error: FrontierError) -> Self {
        let offset = match error {
            FrontierError::Truncated { offset, .. }
            | FrontierError::Count { offset, .. }
            | FrontierError::BitWidth { offset, .. }
            | FrontierError::Trailing { offset, .. } => Some(offset as u64),
            _ => None,
        };
        Self::Corrupt {
            path: None,
            offset,
            reason: format!("corrupted data: {error}"),
        }
    }
}

impl From<PmaError> for Error {
    fn from(error: PmaError) -> Self {
        match error {
            PmaError::Invariant { .. } => Self::corrupt(format!("corrupted data: {error}")),
            _ => Self::invalid_reason(error.to_string()),
        }
    }
}

impl From<PartError> for Error {
    fn from(error: PartError) -> Self {
        Self::corrupt(error.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_file_line_offset_and_value() {
        let e = Error::InvalidInput {
            path: Some("g.txt".into()),
            line: Some(812),
            value: Some("-3".into()),
            reason: "negative vertex id".into(),
        };
        assert_eq!(e.to_string(), "g.txt:812: negative vertex id: `-3`");
        let e = Error::Corrupt {
            path: Some("g.pgb".into()),
            offset: Some(40),
            reason: "checksum mismatch".into(),
        };
        assert_eq!(e.to_string(), "g.pgb: byte 40: checksum mismatch");
        assert_eq!(
            Error::invalid(f64::NAN, "weights must be finite").to_string(),
            "weights must be finite: `NaN`"
        );
        assert_eq!(
            Error::invalid_reason("bad")
                .in_file(Path::new("x"))
                .to_string(),
            "x: bad"
        );
    }

    #[test]
    fn long_values_are_shortened() {
        let e = Error::invalid("x".repeat(100), "too long");
        let Error::InvalidInput { value: Some(v), .. } = e else {
            panic!("an input error")
        };
        assert_eq!(v.chars().count(), QUOTED_CHARS);
        assert!(v.ends_with("..."));
    }

    #[test]
    fn only_os_errors_are_not_input_errors() {
        let os = Error::io(Path::new("f"), std::io::ErrorKind::NotFound.into());
        assert!(!os.is_input_error());
        assert!(Error::corrupt("x").is_input_error());
        assert!(Error::vertex_not_found(3, 2).is_input_error());
    }
}
