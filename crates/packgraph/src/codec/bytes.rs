//! The byte-format kit: one bounded reader ([`ByteReader`]) and one writer ([`ByteWriter`])
//! for the formats the library stores (snapshots, checkpoint units and manifests, log
//! records, encoded updates).
//!
//! Every integer is little-endian; varints are the LEB128 byte codes of [`super::varint`].
//!
//! The reader trusts nothing it reads. It knows how many bytes are left, so every read is
//! checked, and every length or element count taken from the bytes is checked against what
//! is left (count × the smallest size of an element ≤ bytes left) *before* anything is
//! allocated: a count that lies cannot make it allocate or read past the end. Errors
//! ([`BytesError`]) name the byte offset and what was being read. Bulk reads of arrays are
//! one bounds check and one copy, not one checked read per element.
//!
//! The reader takes a [`ByteSource`] whose length is known: a byte slice (which also lends
//! out borrowed bytes, varints and text without copying, and converts arrays straight from
//! its bytes) or any [`Read`] wrapped in [`FromRead`] (a file read in order, so that a
//! snapshot's arrays go from the file to their vectors in one copy). Left out: seeking, and
//! big-endian data (no format uses either).

use std::io::Read;

use super::varint;
use super::CodecError;
use crate::Error;

/// Bytes one bulk read converts at a time when its source is not a slice.
const CHUNK_BYTES: usize = 1 << 16;

/// Bytes that do not decode: where, what was being read, and what was wrong.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum BytesError {
    /// Fewer bytes are left than a field needs.
    #[error("byte {offset}: {what} runs past the end (needs {needed} bytes, {left} left)")]
    Truncated {
        /// Where the field starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Bytes the field needs.
        needed: u64,
        /// Bytes left.
        left: u64,
    },
    /// A count whose elements cannot fit in the bytes left.
    #[error(
        "byte {offset}: {what}: count {count} runs past the end ({left} bytes left, \
         elements of at least {min_bytes} bytes)"
    )]
    Count {
        /// Where the count is stored.
        offset: u64,
        /// What was being counted.
        what: &'static str,
        /// The count read.
        count: u64,
        /// The smallest size of one element in bytes.
        min_bytes: u64,
        /// Bytes left after the count.
        left: u64,
    },
    /// A size or value above the largest the format allows.
    #[error("byte {offset}: {what} {value} is more than {max}")]
    TooLarge {
        /// Where the value is stored.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// The value read.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A varint that is cut short or overflows 64 bits.
    #[error("byte {offset}: {what}: the byte code {problem}")]
    Varint {
        /// Where the varint starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// What is wrong with its bytes.
        problem: &'static str,
    },
    /// Text that is not UTF-8.
    #[error("byte {offset}: {what} is not UTF-8 ({source})")]
    Utf8 {
        /// Where the text starts.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// Where the encoding breaks.
        #[source]
        source: std::str::Utf8Error,
    },
    /// A value the format does not allow (an unknown tag, version or flag).
    #[error("byte {offset}: {what}: {reason}")]
    Invalid {
        /// Where the value is stored.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The source failed (only a file source can).
    #[error("byte {offset}: reading {what}: {source}")]
    Io {
        /// Where the read started.
        offset: u64,
        /// What was being read.
        what: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl BytesError {
    /// The byte offset the error names.
    pub(crate) fn offset(&self) -> u64 {
        match self {
            Self::Truncated { offset, .. }
            | Self::Count { offset, .. }
            | Self::TooLarge { offset, .. }
            | Self::Varint { offset, .. }
            | Self::Utf8 { offset, .. }
            | Self::Invalid { offset, .. }
            | Self::Io { offset, .. } => *offset,
        }
    }

    /// What is wrong, without the offset.
    pub(crate) fn reason(&self) -> String {
        let text = self.to_string();
        let prefix = format!("byte {}: ", self.offset());
        text.strip_prefix(&prefix).unwrap_or(&text).to_string()
    }

    /// As the library's error: [`Error::Corrupt`] with the offset (an I/O failure is
    /// [`Error::Io`]), against file `path` if there is one, its reason after `context`.
    pub(crate) fn into_error(self, path: Option<&std::path::Path>, context: &str) -> Error {
        let offset = Some(self.offset());
        match self {
            Self::Io { source, .. } => Error::io(path.unwrap_or(std::path::Path::new("")), source),
            other => Error::Corrupt {
                path: path.map(std::path::Path::to_path_buf),
                offset,
                reason: format!("{context}{}", other.reason()),
            },
        }
    }
}

impl From<BytesError> for Error {
    fn from(error: BytesError) -> Self {
        error.into_error(None, "")
    }
}

/// Where a [`ByteReader`] gets its bytes. The reader checks lengths before it asks, so a
/// source fails only if it is shorter than the reader was told (or its I/O fails).
pub(crate) trait ByteSource {
    /// Most bytes [`ByteSource::read_with`] is asked for at once in bulk reads.
    const CHUNK_BYTES: usize;

    /// Fills `buf` with the next bytes.
    ///
    /// # Errors
    /// The source's I/O error, or [`std::io::ErrorKind::UnexpectedEof`].
    fn read_into(&mut self, buf: &mut [u8]) -> std::io::Result<()>;

    /// Calls `f` on the next `len` bytes.
    ///
    /// # Errors
    /// As [`ByteSource::read_into`].
    fn read_with<T>(&mut self, len: usize, f: impl FnOnce(&[u8]) -> T) -> std::io::Result<T>;
}

impl ByteSource for &[u8] {
    const CHUNK_BYTES: usize = usize::MAX;

    fn read_into(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.read_exact(buf)
    }

    fn read_with<T>(&mut self, len: usize, f: impl FnOnce(&[u8]) -> T) -> std::io::Result<T> {
        let (head, tail) = self
            .split_at_checked(len)
            .ok_or(std::io::ErrorKind::UnexpectedEof)?;
        *self = tail;
        Ok(f(head))
    }
}

/// A [`Read`] as a [`ByteSource`]: bulk reads go through a buffer of [`CHUNK_BYTES`].
#[derive(Debug)]
pub(crate) struct FromRead<R>(pub(crate) R);

impl<R: Read> ByteSource for FromRead<R> {
    const CHUNK_BYTES: usize = CHUNK_BYTES;

    fn read_into(&mut self, buf: &mut [u8]) -> std::io::Result<()> {
        self.0.read_exact(buf)
    }

    fn read_with<T>(&mut self, len: usize, f: impl FnOnce(&[u8]) -> T) -> std::io::Result<T> {
        let mut buf = vec![0u8; len];
        self.0.read_exact(&mut buf)?;
        Ok(f(&buf))
    }
}

/// Reads a format from `src`, `left` bytes of it, checking every read against what is left.
#[derive(Debug)]
pub(crate) struct ByteReader<R> {
    src: R,
    /// Offset of the next byte (from the start the caller gave).
    offset: u64,
    /// Bytes not yet read.
    left: u64,
}

impl<'a> ByteReader<&'a [u8]> {
    /// A reader of all of `bytes`, its first byte at offset 0.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self::of_len(bytes, bytes.len() as u64)
    }

    /// The next `len` bytes, borrowed.
    ///
    /// # Errors
    /// [`BytesError::Truncated`] if fewer are left.
    pub(crate) fn take(&mut self, len: usize, what: &'static str) -> Result<&'a [u8], BytesError> {
        self.need(len as u64, what)?;
        let src = self.src;
        let (Some(head), Some(tail)) = (src.get(..len), src.get(len..)) else {
            // Only a reader built with a wrong length gets here.
            return Err(BytesError::Truncated {
                offset: self.offset,
                what,
                needed: len as u64,
                left: src.len() as u64,
            });
        };
        self.advance(tail, len);
        Ok(head)
    }

    /// Every byte not yet read, borrowed (the reader is then at the end).
    pub(crate) fn take_rest(&mut self) -> &'a [u8] {
        let rest = self.src;
        self.advance(&rest[rest.len()..], rest.len());
        rest
    }

    /// A varint (LEB128 byte code).
    ///
    /// # Errors
    /// [`BytesError::Varint`] if it is cut short or overflows 64 bits.
    pub(crate) fn varint(&mut self, what: &'static str) -> Result<u64, BytesError> {
        let src = self.src;
        let (value, len) = varint::decode(src, 0).map_err(|e| BytesError::Varint {
            offset: self.offset,
            what,
            problem: match e {
                CodecError::Truncated { .. } => "is cut short by the end",
                _ => "overflows 64 bits",
            },
        })?;
        self.advance(&src[len..], len);
        Ok(value)
    }

    /// A varint count of elements of at least `min_bytes` each, checked against the bytes
    /// left after it.
    ///
    /// # Errors
    /// [`BytesError::Varint`], or [`BytesError::Count`] if the elements cannot fit.
    pub(crate) fn varint_count(
        &mut self,
        min_bytes: u64,
        what: &'static str,
    ) -> Result<usize, BytesError> {
        self.counted(min_bytes, what, |r| r.varint(what))
    }

    /// Length-prefixed text: a varint byte count, then that many bytes of UTF-8.
    ///
    /// # Errors
    /// [`BytesError::Varint`], [`BytesError::Count`] or [`BytesError::Utf8`].
    pub(crate) fn text(&mut self, what: &'static str) -> Result<&'a str, BytesError> {
        let len = self.varint_count(1, what)?;
        let at = self.offset;
        let bytes = self.take(len, what)?;
        std::str::from_utf8(bytes).map_err(|source| BytesError::Utf8 {
            offset: at,
            what,
            source,
        })
    }

    fn advance(&mut self, tail: &'a [u8], len: usize) {
        self.src = tail;
        self.offset += len as u64;
        self.left = self.left.saturating_sub(len as u64);
    }
}

impl<R: ByteSource> ByteReader<R> {
    /// A reader of the next `len` bytes of `src`, the first at offset 0.
    pub(crate) fn of_len(src: R, len: u64) -> Self {
        Self {
            src,
            offset: 0,
            left: len,
        }
    }

    /// The reader with its next byte numbered `offset` in errors (where its bytes sit in a
    /// file).
    #[must_use]
    pub(crate) fn starting_at(mut self, offset: u64) -> Self {
        self.offset = offset;
        self
    }

    /// Offset of the next byte.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Bytes not yet read.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// The source, for what it did beyond giving bytes (a checksum it kept).
    pub(crate) fn into_inner(self) -> R {
        self.src
    }

    /// A [`BytesError::Invalid`] at `offset`: a value read there that the format does not
    /// allow.
    pub(crate) fn invalid(
        &self,
        offset: u64,
        what: &'static str,
        reason: impl Into<String>,
    ) -> BytesError {
        BytesError::Invalid {
            offset,
            what,
            reason: reason.into(),
        }
    }

    /// Checks that `len` more bytes are left.
    ///
    /// # Errors
    /// [`BytesError::Truncated`] if they are not.
    pub(crate) fn need(&self, len: u64, what: &'static str) -> Result<(), BytesError> {
        if len > self.left {
            return Err(BytesError::Truncated {
                offset: self.offset,
                what,
                needed: len,
                left: self.left,
            });
        }
        Ok(())
    }

    /// Checks that nothing is left.
    ///
    /// # Errors
    /// [`BytesError::Invalid`] naming the bytes left after `what`.
    pub(crate) fn finish(&self, what: &'static str) -> Result<(), BytesError> {
        if self.left() != 0 {
            return Err(self.invalid(
                self.offset,
                what,
                format!("{} unexpected bytes follow its end", self.left),
            ));
        }
        Ok(())
    }

    /// Fills `buf` from the source (after [`ByteReader::need`]).
    fn fill(&mut self, buf: &mut [u8], what: &'static str) -> Result<(), BytesError> {
        self.need(buf.len() as u64, what)?;
        self.src.read_into(buf).map_err(|source| BytesError::Io {
            offset: self.offset,
            what,
            source,
        })?;
        self.offset += buf.len() as u64;
        self.left -= buf.len() as u64;
        Ok(())
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], BytesError> {
        let mut buf = [0u8; N];
        self.fill(&mut buf, what)?;
        Ok(buf)
    }

    /// One byte.
    ///
    /// # Errors
    /// [`BytesError::Truncated`] at the end (so for every fixed-size read below).
    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, BytesError> {
        Ok(self.array::<1>(what)?[0])
    }

    /// A little-endian `u32`.
    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, BytesError> {
        self.array(what).map(u32::from_le_bytes)
    }

    /// A little-endian `u64`.
    pub(crate) fn u64(&mut self, what: &'static str) -> Result<u64, BytesError> {
        self.array(what).map(u64::from_le_bytes)
    }

    /// A little-endian `u128`.
    pub(crate) fn u128(&mut self, what: &'static str) -> Result<u128, BytesError> {
        self.array(what).map(u128::from_le_bytes)
    }

    /// An `f64` from its little-endian bits.
    pub(crate) fn f64(&mut self, what: &'static str) -> Result<f64, BytesError> {
        self.u64(what).map(f64::from_bits)
    }

    /// A `u64` that must be at most `max` (and fit `usize`).
    ///
    /// # Errors
    /// [`BytesError::TooLarge`] if it is larger.
    pub(crate) fn size_at_most(
        &mut self,
        max: u64,
        what: &'static str,
    ) -> Result<usize, BytesError> {
        let at = self.offset;
        let value = self.u64(what)?;
        let max = max.min(usize::MAX as u64);
        if value > max {
            return Err(BytesError::TooLarge {
                offset: at,
                what,
                value,
                max,
            });
        }
        Ok(value as usize)
    }

    /// A `u64` that must fit `usize`.
    pub(crate) fn size(&mut self, what: &'static str) -> Result<usize, BytesError> {
        self.size_at_most(u64::MAX, what)
    }

    /// A `u64` count of elements of at least `min_bytes` each, checked against the bytes
    /// left after it.
    ///
    /// # Errors
    /// [`BytesError::Count`] if the elements cannot fit.
    pub(crate) fn count(
        &mut self,
        min_bytes: u64,
        what: &'static str,
    ) -> Result<usize, BytesError> {
        self.counted(min_bytes, what, |r| r.u64(what))
    }

    /// A `u32` count, as [`ByteReader::count`].
    pub(crate) fn count_u32(
        &mut self,
        min_bytes: u64,
        what: &'static str,
    ) -> Result<usize, BytesError> {
        self.counted(min_bytes, what, |r| r.u32(what).map(u64::from))
    }

    /// A count that `read` reads, checked by [`ByteReader::fits`] against the bytes left
    /// after it.
    fn counted(
        &mut self,
        min_bytes: u64,
        what: &'static str,
        read: impl FnOnce(&mut Self) -> Result<u64, BytesError>,
    ) -> Result<usize, BytesError> {
        let at = self.offset;
        let count = read(self)?;
        self.fits(at, count, min_bytes, what)
    }

    /// `count` (read at `at`) as a `usize`, if `count` elements of at least `min_bytes`
    /// each fit in the bytes left.
    ///
    /// # Errors
    /// [`BytesError::Count`] if they do not.
    pub(crate) fn fits(
        &self,
        at: u64,
        count: u64,
        min_bytes: u64,
        what: &'static str,
    ) -> Result<usize, BytesError> {
        match count.checked_mul(min_bytes) {
            Some(bytes) if bytes <= self.left && usize::try_from(count).is_ok() => {
                Ok(count as usize)
            }
            _ => Err(BytesError::Count {
                offset: at,
                what,
                count,
                min_bytes,
                left: self.left,
            }),
        }
    }

    /// The next `len` bytes as a new vector (zeroed by the allocator, then filled: one copy).
    ///
    /// # Errors
    /// [`BytesError::Truncated`] if fewer are left; nothing is allocated then.
    pub(crate) fn bytes_vec(
        &mut self,
        len: u64,
        what: &'static str,
    ) -> Result<Vec<u8>, BytesError> {
        self.need(len, what)?;
        let mut out = vec![0u8; len as usize];
        self.fill(&mut out, what)?;
        Ok(out)
    }

    /// Appends `count` little-endian words (`u32` or `u64`) to `out`: one bounds check, then
    /// one conversion straight from a slice source's bytes (a [`FromRead`] source goes
    /// through a buffer of [`CHUNK_BYTES`]).
    ///
    /// # Errors
    /// [`BytesError::Truncated`] if fewer than `count` words' bytes are left; nothing is
    /// read or allocated then.
    pub(crate) fn words_into<T: LeWord>(
        &mut self,
        count: usize,
        out: &mut Vec<T>,
        what: &'static str,
    ) -> Result<(), BytesError> {
        self.need((count as u64).saturating_mul(T::BYTES as u64), what)?;
        out.reserve(count);
        let per_chunk = (R::CHUNK_BYTES / T::BYTES).max(1);
        let mut left = count;
        while left > 0 {
            let n = left.min(per_chunk);
            let words = |bytes: &[u8]| out.extend(bytes.chunks_exact(T::BYTES).map(T::from_le));
            self.src
                .read_with(n * T::BYTES, words)
                .map_err(|source| BytesError::Io {
                    offset: self.offset,
                    what,
                    source,
                })?;
            self.offset += (n * T::BYTES) as u64;
            self.left -= (n * T::BYTES) as u64;
            left -= n;
        }
        Ok(())
    }

    /// `count` little-endian `u64`s as a new vector.
    pub(crate) fn u64s(
        &mut self,
        count: usize,
        what: &'static str,
    ) -> Result<Vec<u64>, BytesError> {
        let mut out = Vec::new();
        self.words_into(count, &mut out, what)?;
        Ok(out)
    }
}

/// A word that [`ByteReader::words_into`] reads in bulk.
pub(crate) trait LeWord: Sized {
    /// Bytes of the word (a power of two, at most [`CHUNK_BYTES`]).
    const BYTES: usize;
    /// The word whose little-endian bytes are `bytes` (exactly [`LeWord::BYTES`] of them).
    fn from_le(bytes: &[u8]) -> Self;
}

impl LeWord for u32 {
    const BYTES: usize = 4;
    fn from_le(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl LeWord for u64 {
    const BYTES: usize = 8;
    fn from_le(b: &[u8]) -> Self {
        u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]])
    }
}

/// Writes a format into a vector; the reads of [`ByteReader`] undo its writes.
#[derive(Debug, Default, Clone)]
pub(crate) struct ByteWriter {
    bytes: Vec<u8>,
}

impl ByteWriter {
    /// An empty writer with room for `capacity` bytes.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(capacity),
        }
    }

    /// Bytes written.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// The bytes written.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes
    }

    /// The bytes written, as a vector.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        self.bytes
    }

    /// Forgets the bytes written, keeping the room.
    pub(crate) fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Raw bytes.
    pub(crate) fn bytes(&mut self, bytes: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(bytes);
        self
    }

    /// One byte.
    pub(crate) fn u8(&mut self, value: u8) -> &mut Self {
        self.bytes.push(value);
        self
    }

    /// A little-endian `u32`.
    pub(crate) fn u32(&mut self, value: u32) -> &mut Self {
        self.bytes(&value.to_le_bytes())
    }

    /// A little-endian `u64`.
    pub(crate) fn u64(&mut self, value: u64) -> &mut Self {
        self.bytes(&value.to_le_bytes())
    }

    /// A little-endian `u128`.
    pub(crate) fn u128(&mut self, value: u128) -> &mut Self {
        self.bytes(&value.to_le_bytes())
    }

    /// An `f64`'s bits, little-endian.
    pub(crate) fn f64(&mut self, value: f64) -> &mut Self {
        self.u64(value.to_bits())
    }

    /// A size or count as a `u64`.
    pub(crate) fn size(&mut self, value: usize) -> &mut Self {
        self.u64(value as u64)
    }

    /// A varint (LEB128 byte code).
    pub(crate) fn varint(&mut self, value: u64) -> &mut Self {
        varint::encode_to_vec(value, &mut self.bytes);
        self
    }

    /// Length-prefixed text: a varint byte count, then the UTF-8 bytes.
    pub(crate) fn text(&mut self, text: &str) -> &mut Self {
        self.varint(text.len() as u64).bytes(text.as_bytes())
    }

    /// Little-endian `u32`s, one after another.
    pub(crate) fn u32s(&mut self, values: &[u32]) -> &mut Self {
        self.words(values.iter().map(|v| v.to_le_bytes()))
    }

    /// Little-endian `u64`s, one after another.
    pub(crate) fn u64s(&mut self, values: &[u64]) -> &mut Self {
        self.words(values.iter().map(|v| v.to_le_bytes()))
    }

    fn words<const N: usize>(
        &mut self,
        words: impl ExactSizeIterator<Item = [u8; N]>,
    ) -> &mut Self {
        self.bytes.reserve(words.len() * N);
        for word in words {
            self.bytes.extend_from_slice(&word);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn fixed_ints_round_trip_little_endian() {
        let mut w = ByteWriter::default();
        w.u8(7)
            .u32(0x0102_0304)
            .u64(u64::MAX - 1)
            .u128(1 << 100)
            .f64(-0.5)
            .size(12);
        assert_eq!(&w.as_slice()[1..5], &[4, 3, 2, 1]);
        let bytes = w.into_vec();
        let mut r = ByteReader::new(&bytes);
        assert_eq!(r.u8("a").unwrap(), 7);
        assert_eq!(r.u32("b").unwrap(), 0x0102_0304);
        assert_eq!(r.u64("c").unwrap(), u64::MAX - 1);
        assert_eq!(r.u128("d").unwrap(), 1 << 100);
        assert_eq!(r.f64("e").unwrap(), -0.5);
        assert_eq!(r.size("f").unwrap(), 12);
        r.finish("the test").unwrap();
    }

    #[test]
    fn errors_name_offset_and_what() {
        let bytes = [1u8, 2, 3, 4, 5, 6];
        let mut r = ByteReader::new(&bytes[..]);
        r.u32("the head").unwrap();
        let e = r.u64("the leaf count").unwrap_err();
        assert_eq!(e.offset(), 4);
        assert_eq!(
            e.to_string(),
            "byte 4: the leaf count runs past the end (needs 8 bytes, 2 left)"
        );
        let Error::Corrupt { offset, reason, .. } = Error::from(e) else {
            panic!("a corruption")
        };
        assert_eq!(offset, Some(4));
        assert_eq!(
            reason,
            "the leaf count runs past the end (needs 8 bytes, 2 left)"
        );
        assert!(r
            .finish("the test")
            .unwrap_err()
            .to_string()
            .contains("2 unexpected bytes"));
    }

    #[test]
    fn counts_are_bounded_by_the_bytes_left_before_allocating() {
        let mut w = ByteWriter::default();
        w.u64(3).bytes(&[0; 24]);
        let bytes = w.into_vec();
        assert_eq!(ByteReader::new(&bytes).count(8, "ids").unwrap(), 3);
        assert!(matches!(
            ByteReader::new(&bytes).count(9, "ids"),
            Err(BytesError::Count {
                count: 3,
                left: 24,
                ..
            })
        ));
        // A product past 2^64 is a count error, not a wrapped product.
        let huge = u64::MAX.to_le_bytes();
        assert!(ByteReader::new(&huge[..]).count(2, "ids").is_err());
        let mut r = ByteReader::new(&bytes[..16]);
        r.u64("n").unwrap();
        assert!(r.u64s(2, "ids").is_err());
        assert_eq!(r.offset(), 8, "a refused bulk read reads nothing");
        assert!(r.bytes_vec(u64::MAX, "data").is_err());
    }

    #[test]
    fn varints_and_text_round_trip() {
        let mut w = ByteWriter::default();
        w.varint(300).text("héllo").varint(u64::MAX);
        let bytes = w.into_vec();
        let mut r = ByteReader::new(&bytes);
        assert_eq!(r.varint("a").unwrap(), 300);
        assert_eq!(r.text("b").unwrap(), "héllo");
        assert_eq!(r.varint("c").unwrap(), u64::MAX);
        assert_eq!(r.left(), 0);
        let bad = [3u8, b'a', 0xff, b'c'];
        let e = ByteReader::new(&bad[..]).text("a name").unwrap_err();
        assert!(matches!(e, BytesError::Utf8 { offset: 1, .. }), "{e}");
        let cut = [0x80u8, 0x80];
        let e = ByteReader::new(&cut[..]).varint("a count").unwrap_err();
        assert!(matches!(e, BytesError::Varint { offset: 0, .. }), "{e}");
    }

    #[test]
    fn bulk_reads_cross_chunk_boundaries_from_any_source() {
        let values: Vec<u64> = (0..20_000u64).map(|i| i * 0x0101_0101).collect();
        let halves: Vec<u32> = (0..20_001u32).collect();
        let mut w = ByteWriter::default();
        w.u64s(&values).u32s(&halves);
        let bytes = w.into_vec();
        // A plain `Read` (not a slice) takes the generic path.
        let mut r = ByteReader::of_len(FromRead(std::io::Cursor::new(&bytes)), bytes.len() as u64)
            .starting_at(100);
        assert_eq!(r.u64s(values.len(), "a").unwrap(), values);
        let mut back = vec![9];
        r.words_into(halves.len(), &mut back, "b").unwrap();
        assert_eq!(back[1..], halves[..]);
        assert_eq!(r.offset(), 100 + bytes.len() as u64);
    }

    #[test]
    fn sizes_are_capped() {
        let bytes = 5u64.to_le_bytes();
        assert_eq!(ByteReader::new(&bytes[..]).size_at_most(5, "n").unwrap(), 5);
        let e = ByteReader::new(&bytes[..])
            .size_at_most(4, "n")
            .unwrap_err();
        assert_eq!(e.to_string(), "byte 0: n 5 is more than 4");
    }

    #[derive(Debug, Clone)]
    enum Field {
        U8(u8),
        U32(u32),
        U64(u64),
        U128(u128),
        F64(f64),
        Varint(u64),
        Text(String),
        Bytes(Vec<u8>),
        U32s(Vec<u32>),
        U64s(Vec<u64>),
    }

    fn field() -> impl Strategy<Value = Field> {
        prop_oneof![
            any::<u8>().prop_map(Field::U8),
            any::<u32>().prop_map(Field::U32),
            any::<u64>().prop_map(Field::U64),
            any::<u128>().prop_map(Field::U128),
            any::<f64>().prop_map(Field::F64),
            any::<u64>().prop_map(Field::Varint),
            "\\PC{0,12}".prop_map(Field::Text),
            proptest::collection::vec(any::<u8>(), 0..40).prop_map(Field::Bytes),
            proptest::collection::vec(any::<u32>(), 0..20).prop_map(Field::U32s),
            proptest::collection::vec(any::<u64>(), 0..20).prop_map(Field::U64s),
        ]
    }

    fn write(fields: &[Field]) -> Vec<u8> {
        let mut w = ByteWriter::default();
        for f in fields {
            match f {
                Field::U8(x) => w.u8(*x),
                Field::U32(x) => w.u32(*x),
                Field::U64(x) => w.u64(*x),
                Field::U128(x) => w.u128(*x),
                Field::F64(x) => w.f64(*x),
                Field::Varint(x) => w.varint(*x),
                Field::Text(x) => w.text(x),
                Field::Bytes(x) => w.size(x.len()).bytes(x),
                Field::U32s(x) => w.varint(x.len() as u64).u32s(x),
                Field::U64s(x) => w.u64(x.len() as u64).u64s(x),
            };
        }
        w.into_vec()
    }

    /// Reads `fields`' shapes back, checking each value when `expect` is set.
    fn read(bytes: &[u8], fields: &[Field]) -> Result<(), BytesError> {
        let mut r = ByteReader::new(bytes);
        for f in fields {
            let same = match f {
                Field::U8(x) => r.u8("u8")? == *x,
                Field::U32(x) => r.u32("u32")? == *x,
                Field::U64(x) => r.u64("u64")? == *x,
                Field::U128(x) => r.u128("u128")? == *x,
                Field::F64(x) => r.f64("f64")?.to_bits() == x.to_bits(),
                Field::Varint(x) => r.varint("varint")? == *x,
                Field::Text(x) => r.text("text")? == x,
                Field::Bytes(x) => {
                    let len = r.count(1, "bytes")?;
                    r.take(len, "bytes")? == &x[..]
                }
                Field::U32s(x) => {
                    let count = r.varint_count(4, "u32s")?;
                    let mut out: Vec<u32> = Vec::new();
                    r.words_into(count, &mut out, "u32s")?;
                    out == *x
                }
                Field::U64s(x) => {
                    let count = r.count(8, "u64s")?;
                    r.u64s(count, "u64s")? == *x
                }
            };
            assert!(same, "{f:?} read back differently");
        }
        r.finish("fields")
    }

    proptest! {
        #[test]
        fn writes_read_back(fields in proptest::collection::vec(field(), 0..12)) {
            let bytes = write(&fields);
            prop_assert!(read(&bytes, &fields).is_ok());
            let mut from_file = ByteReader::of_len(FromRead(std::io::Cursor::new(&bytes)), bytes.len() as u64);
            for f in &fields {
                if let Field::U64(x) = f {
                    prop_assert_eq!(from_file.u64("u64").unwrap(), *x);
                } else {
                    break;
                }
            }
        }

        #[test]
        fn every_truncation_is_an_error(fields in proptest::collection::vec(field(), 1..8)) {
            let bytes = write(&fields);
            for len in 0..bytes.len() {
                prop_assert!(read(&bytes[..len], &fields).is_err(), "prefix of {len} bytes");
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..96),
            ops in proptest::collection::vec(0u8..12, 0..24),
        ) {
            let mut r = ByteReader::new(&bytes);
            for op in ops {
                let _ = match op {
                    0 => r.u8("x").map(|_| ()),
                    1 => r.u32("x").map(|_| ()),
                    2 => r.u64("x").map(|_| ()),
                    3 => r.u128("x").map(|_| ()),
                    4 => r.varint("x").map(|_| ()),
                    5 => r.text("x").map(|_| ()),
                    6 => r.count(1, "x").and_then(|n| r.take(n, "x")).map(|_| ()),
                    7 => r.count(8, "x").and_then(|n| r.u64s(n, "x")).map(|_| ()),
                    8 => r.varint_count(4, "x").and_then(|n| {
                        let mut out: Vec<u32> = Vec::new();
                        r.words_into(n, &mut out, "x")
                    }),
                    9 => r.size_at_most(1 << 20, "x").map(|_| ()),
                    10 => r.count_u32(2, "x").map(|_| ()),
                    _ => r.u64("x").and_then(|n| r.bytes_vec(n, "x")).map(|_| ()),
                };
                prop_assert_eq!(r.offset() + r.left(), bytes.len() as u64);
            }
        }
    }
}
