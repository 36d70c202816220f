//! Integer codes for sorted runs of `u64` keys, and the byte-format kit.
//!
//! * [`bytes`] (crate-private): the one bounded reader and the one writer that the stored
//!   formats (snapshots, checkpoint units and manifests, log records, encoded updates) are
//!   read and written with.
//! * [`varint`]: byte codes (LEB128 order: seven payload bits per byte, low group first,
//!   the high bit set on every byte but the last), with a branch-light decoder that reads
//!   eight bytes at once and finds the end of the code from the continue bits.
//! * [`delta`]: a strictly increasing run stored as differences from a base, each difference
//!   a byte code — the encoding of the compressed PMA's leaves (CPMA paper, section 5).
//!
//! Decoders that take untrusted bytes (`decode`, `decode_run`) validate everything and return
//! [`CodecError`]; they never panic and never read out of bounds. The `*_padded` fast paths
//! fall back to the checked path near the end of a buffer, so they are safe on any input.

pub(crate) mod bytes;
pub mod delta;
pub mod frontier;
pub mod varint;

/// A malformed or unsatisfiable byte-code input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The buffer ended inside a code.
    #[error("byte code at offset {offset} is truncated (buffer ends at {len})")]
    Truncated {
        /// Offset of the code's first byte.
        offset: usize,
        /// Length of the buffer.
        len: usize,
    },
    /// A code longer than ten bytes or with bits beyond 64.
    #[error("byte code at offset {offset} overflows 64 bits")]
    Overflow {
        /// Offset of the code's first byte.
        offset: usize,
    },
    /// A delta of zero (or a sum past `u64::MAX`) in a strictly increasing run.
    #[error("run is not strictly increasing at element {index} (byte offset {offset})")]
    NotIncreasing {
        /// Index of the offending element in the run.
        index: usize,
        /// Byte offset of its code (0 when encoding).
        offset: usize,
    },
    /// The output buffer cannot hold the encoding.
    #[error("output buffer of {available} bytes cannot hold {needed} bytes")]
    BufferTooSmall {
        /// Bytes the encoding needs.
        needed: usize,
        /// Bytes the buffer has.
        available: usize,
    },
}
