//! The crate's top-level error type; each layer keeps its own error next to its code.

use crate::algo::AlgoError;
use crate::codec::CodecError;
use crate::graph::GraphError;
use crate::io::IoError;
use crate::pma::PmaError;

/// Any error the packgraph library can return.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Malformed encoded bytes.
    #[error(transparent)]
    Codec(#[from] CodecError),
    /// An invalid argument or configuration for a packed memory array.
    #[error(transparent)]
    Pma(#[from] PmaError),
    /// An invalid graph operation.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// An invalid algorithm argument.
    #[error(transparent)]
    Algo(#[from] AlgoError),
    /// A graph file that cannot be read or written.
    #[error(transparent)]
    Io(#[from] IoError),
}

/// `Result` with the crate's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
