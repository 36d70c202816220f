//! The text-parsing core shared by every text format: opening a file (gzip detected by its
//! magic bytes), reading it in blocks that end at line boundaries, and parsing each block's
//! lines on all threads with exact line numbers for errors.
//!
//! Blank lines and lines whose first non-blank character is `#` or `%` are comments.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rayon::prelude::*;

use super::error::LineError;
use crate::Error;

/// Bytes read per block (the unit of streaming); small in unit tests, so that their files
/// span many blocks.
const BLOCK_BYTES: usize = if cfg!(test) { 1 << 12 } else { 32 << 20 };
/// Bytes per parallel parsing task within a block.
const PIECE_BYTES: usize = 1 << 20;

/// Called with the number of file bytes consumed so far.
pub type Progress = Arc<dyn Fn(u64) + Send + Sync>;

/// A file opened for reading: transparently decompressed when it starts with the gzip magic
/// bytes, counting the file bytes consumed for progress reports.
pub(crate) struct Input {
    /// Buffered, so that header lines read one at a time cost no system call each; block
    /// reads larger than the buffer go straight to the source.
    reader: BufReader<Box<dyn Read + Send>>,
    /// Whether the content is gzip-compressed.
    pub(crate) gzip: bool,
    consumed: Arc<AtomicU64>,
}

struct Counting<R> {
    inner: R,
    consumed: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.consumed.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Opens `path`, refusing directories, and peeks for the gzip magic bytes.
pub(crate) fn open(path: &Path) -> Result<Input, Error> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, e))?;
    if meta.is_dir() {
        return Err(Error::invalid_file(
            path,
            "is a directory, not a graph file",
        ));
    }
    let mut file = File::open(path).map_err(|e| Error::io(path, e))?;
    let mut magic = [0u8; 2];
    let mut got = 0;
    while got < 2 {
        match file.read(&mut magic[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    let consumed = Arc::new(AtomicU64::new(got as u64));
    let head = std::io::Cursor::new(magic[..got].to_vec());
    let raw = Counting {
        inner: head.chain(file),
        consumed: Arc::clone(&consumed),
    };
    let gzip = magic[..got] == [0x1f, 0x8b];
    let reader: Box<dyn Read + Send> = if gzip {
        Box::new(flate2::read::MultiGzDecoder::new(BufReader::with_capacity(
            1 << 16,
            raw,
        )))
    } else {
        Box::new(raw)
    };
    Ok(Input {
        reader: BufReader::with_capacity(1 << 16, reader),
        gzip,
        consumed,
    })
}

impl Input {
    /// Reads until `buf` has grown by `want` bytes or the input ends; returns the bytes read.
    fn fill(&mut self, path: &Path, buf: &mut Vec<u8>, want: usize) -> Result<usize, Error> {
        buf.reserve(want);
        (&mut self.reader)
            .take(want as u64)
            .read_to_end(buf)
            .map_err(|e| self.read_error(path, e))
    }

    fn read_error(&self, path: &Path, e: std::io::Error) -> Error {
        if self.gzip
            && matches!(
                e.kind(),
                std::io::ErrorKind::UnexpectedEof | std::io::ErrorKind::InvalidInput
            )
        {
            Error::invalid_file(path, format!("gzip stream is truncated or corrupt ({e})"))
        } else if self.gzip && e.kind() == std::io::ErrorKind::InvalidData {
            Error::invalid_file(path, format!("gzip stream is corrupt ({e})"))
        } else {
            Error::io(path, e)
        }
    }

    /// The first `n` bytes of the (decompressed) input, fewer if it is shorter.
    pub(crate) fn head(&mut self, path: &Path, n: usize) -> Result<Vec<u8>, Error> {
        let mut buf = Vec::new();
        self.fill(path, &mut buf, n)?;
        Ok(buf)
    }

    /// Reads one line (without its terminator); `None` at the end of the input.
    pub(crate) fn read_line(&mut self, path: &Path) -> Result<Option<Vec<u8>>, Error> {
        let mut line = Vec::new();
        loop {
            match self.reader.read_until(b'\n', &mut line) {
                Ok(0) => return Ok((!line.is_empty()).then_some(line)),
                Ok(_) if line.last() == Some(&b'\n') => {
                    line.pop();
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    return Ok(Some(line));
                }
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.read_error(path, e)),
            }
        }
    }
}

/// Whether a line is blank or a comment.
#[inline]
pub(crate) fn is_comment(line: &[u8]) -> bool {
    match line.iter().find(|b| !b.is_ascii_whitespace()) {
        None => true,
        Some(&b) => b == b'#' || b == b'%',
    }
}

#[inline]
fn is_separator(b: u8, extra: u8) -> bool {
    b == b' ' || b == b'\t' || b == b',' || b == extra || b == b'\r' || b == b'\x0b' || b == b'\x0c'
}

/// Splits a line into fields separated by runs of blanks or commas (and one more
/// separator byte if asked, such as `;`).
#[derive(Debug, Clone)]
pub(crate) struct Fields<'a> {
    line: &'a [u8],
    pos: usize,
    extra: u8,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Self::with_separator(line, b',')
    }

    /// Fields separated by blanks, commas or `extra`.
    pub(crate) fn with_separator(line: &'a [u8], extra: u8) -> Self {
        Self {
            line,
            pos: 0,
            extra,
        }
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let line = self.line;
        let mut i = self.pos;
        while i < line.len() && is_separator(line[i], self.extra) {
            i += 1;
        }
        if i == line.len() {
            self.pos = i;
            return None;
        }
        let start = i;
        while i < line.len() && !is_separator(line[i], self.extra) {
            i += 1;
        }
        self.pos = i;
        Some(&line[start..i])
    }
}

/// Parses a vertex id: a decimal integer in `0..=u64::MAX`.
///
/// # Errors
/// Why `field` is not one (the caller adds file, line and the field).
#[inline]
pub fn parse_id(field: &[u8]) -> Result<u64, &'static str> {
    if field.len() <= 19 && !field.is_empty() {
        let mut value = 0u64;
        for &b in field {
            let digit = b.wrapping_sub(b'0');
            if digit > 9 {
                return Err(id_reason(field));
            }
            value = value * 10 + u64::from(digit);
        }
        return Ok(value);
    }
    let mut value = 0u64;
    for &b in field {
        let digit = b.wrapping_sub(b'0');
        if digit > 9 {
            return Err(id_reason(field));
        }
        value = value
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(digit)))
            .ok_or("vertex id beyond the supported range (0 to 2^64-1)")?;
    }
    if field.is_empty() {
        return Err("missing vertex id");
    }
    Ok(value)
}

#[cold]
fn id_reason(field: &[u8]) -> &'static str {
    if field.first() == Some(&b'-') && field.len() > 1 && field[1..].iter().all(u8::is_ascii_digit)
    {
        "negative vertex id"
    } else {
        "vertex id is not a non-negative integer"
    }
}

/// Parses a finite edge weight.
///
/// # Errors
/// Why `field` is not one (the caller adds file, line and the field).
pub fn parse_weight(field: &[u8]) -> Result<f64, &'static str> {
    let text = std::str::from_utf8(field).map_err(|_| "weight is not a number")?;
    let weight: f64 = text.parse().map_err(|_| "weight is not a number")?;
    if weight.is_finite() {
        Ok(weight)
    } else {
        Err("weight is not finite (NaN or infinity)")
    }
}

/// Pins a line parser's signature (the error borrows from the line), which closures
/// cannot infer on their own.
pub(crate) fn line_parser<T, F>(f: F) -> F
where
    F: for<'l> Fn(&'l [u8], &mut T) -> Result<(), (&'l [u8], &'static str)>,
{
    f
}

/// Parses the rest of `input` (its first line is numbered `first_line`) with
/// `parse_line`, in blocks and on all threads. Returns the per-piece outputs in file order,
/// each with the line number of its first record (0 if it has none).
///
/// A reader thread fills the next block (and, for gzip input, decompresses it) while the
/// pool parses the current one; at most two blocks wait beside the one being parsed. A
/// parse error stops the reader before the error is returned.
///
/// `parse_line(line, out)` appends the line's record to `out` or says what is wrong with it
/// (the offending text and the reason).
pub(crate) fn parse_lines<T, P>(
    path: &Path,
    input: &mut Input,
    first_line: u64,
    progress: Option<&Progress>,
    parse_line: P,
) -> Result<Vec<(u64, T)>, Error>
where
    T: Default + Send,
    P: for<'l> Fn(&'l [u8], &mut T) -> Result<(), (&'l [u8], &'static str)> + Sync,
{
    let consumed = Arc::clone(&input.consumed);
    std::thread::scope(|scope| {
        let (send, blocks) = std::sync::mpsc::sync_channel::<Result<Vec<u8>, Error>>(1);
        scope.spawn(move || read_blocks(path, input, &send));
        let mut pieces_out = Vec::new();
        let mut line = first_line;
        // Ends when the reader has sent the last block (or an error) and hung up.
        for block in blocks {
            let block = block?;
            let results: Vec<Result<(u64, u64, T), LineError>> = split_pieces(&block)
                .par_iter()
                .map(|piece| parse_piece(piece, &parse_line))
                .collect();
            for result in results {
                match result {
                    Ok((lines, first_record, out)) => {
                        let first = if first_record == 0 {
                            0
                        } else {
                            line + first_record - 1
                        };
                        pieces_out.push((first, out));
                        line += lines;
                    }
                    // Returning drops `blocks`, so the reader's next send fails and it
                    // stops; the scope then joins it.
                    Err(mut error) => {
                        error.line += line - 1;
                        return Err(error.in_file(path));
                    }
                }
            }
            if let Some(progress) = progress {
                progress(consumed.load(Ordering::Relaxed));
            }
        }
        Ok(pieces_out)
    })
}

/// Sends `input` as blocks of about [`BLOCK_BYTES`] that end at line boundaries (the last
/// one at the end of the input), then hangs up; stops at the first read error (sent) or
/// when the receiver is gone.
fn read_blocks(
    path: &Path,
    input: &mut Input,
    send: &std::sync::mpsc::SyncSender<Result<Vec<u8>, Error>>,
) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let mut buf = std::mem::take(&mut carry);
        let read = match input.fill(path, &mut buf, BLOCK_BYTES) {
            Ok(read) => read,
            Err(e) => {
                let _ = send.send(Err(e));
                return;
            }
        };
        if read == 0 {
            if !buf.is_empty() {
                let _ = send.send(Ok(buf));
            }
            return;
        }
        match memchr::memrchr(b'\n', &buf) {
            Some(i) => {
                carry = buf[i + 1..].to_vec();
                buf.truncate(i + 1);
                if send.send(Ok(buf)).is_err() {
                    return;
                }
            }
            // A line longer than a block: keep reading.
            None => carry = buf,
        }
    }
}

/// Splits a block into pieces of about `PIECE_BYTES` ending at line boundaries.
fn split_pieces(block: &[u8]) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(block.len() / PIECE_BYTES + 1);
    let mut start = 0;
    while start < block.len() {
        let goal = (start + PIECE_BYTES).min(block.len());
        let end = if goal == block.len() {
            goal
        } else {
            memchr::memchr(b'\n', &block[goal..]).map_or(block.len(), |i| goal + i + 1)
        };
        pieces.push(&block[start..end]);
        start = end;
    }
    pieces
}

/// Parses one piece; returns its line count, the line of its first record (0 if none) and
/// its output, or the first bad line (lines numbered from 1 within the piece).
fn parse_piece<T, P>(piece: &[u8], parse_line: &P) -> Result<(u64, u64, T), LineError>
where
    T: Default,
    P: for<'l> Fn(&'l [u8], &mut T) -> Result<(), (&'l [u8], &'static str)>,
{
    let mut out = T::default();
    let (mut lines, mut first_record) = (0, 0);
    for raw in piece.split_inclusive(|&b| b == b'\n') {
        lines += 1;
        let text = raw.strip_suffix(b"\n").unwrap_or(raw);
        if is_comment(text) {
            continue;
        }
        if let Err((value, reason)) = parse_line(text, &mut out) {
            return Err(LineError::new(lines, value, reason));
        }
        if first_record == 0 {
            first_record = lines;
        }
    }
    Ok((lines, first_record, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_and_reject_clearly() {
        assert_eq!(parse_id(b"0"), Ok(0));
        assert_eq!(parse_id(b"18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_id(b"18446744073709551616"),
            Err("vertex id beyond the supported range (0 to 2^64-1)")
        );
        assert_eq!(parse_id(b"-3"), Err("negative vertex id"));
        assert_eq!(
            parse_id(b"1.5"),
            Err("vertex id is not a non-negative integer")
        );
        assert_eq!(
            parse_id(b"x"),
            Err("vertex id is not a non-negative integer")
        );
        assert_eq!(parse_id(b""), Err("missing vertex id"));
        assert_eq!(parse_id(b"00000000000000000000042"), Ok(42));
    }

    #[test]
    fn weights_must_be_finite_numbers() {
        assert_eq!(parse_weight(b"0.5"), Ok(0.5));
        assert_eq!(parse_weight(b"-2e3"), Ok(-2000.0));
        assert!(parse_weight(b"nan").is_err());
        assert!(parse_weight(b"inf").is_err());
        assert!(parse_weight(b"1e999").is_err());
        assert!(parse_weight(b"abc").is_err());
    }

    #[test]
    fn fields_split_on_blanks_and_commas() {
        let fields: Vec<_> = Fields::new(b" 1,\t2 ,, 3.5\r").collect();
        assert_eq!(fields, [&b"1"[..], b"2", b"3.5"]);
        assert_eq!(Fields::new(b"   ").count(), 0);
    }

    #[test]
    fn pieces_cover_the_block_at_line_boundaries() {
        let block: Vec<u8> = (0..300_000)
            .flat_map(|i| format!("{i} {}\n", i + 1).into_bytes())
            .collect();
        let pieces = split_pieces(&block);
        assert!(pieces.len() > 1);
        assert_eq!(pieces.concat(), block);
        assert!(pieces.iter().all(|p| p.ends_with(b"\n")));
    }

    /// Pieces of pairs, each with the line of its first record.
    type Pieces = Vec<(u64, Vec<(u64, u64)>)>;

    /// Parses `text` (gzipped when `gzip`) as lines `a b` into pairs.
    fn parse_file(text: &[u8], gzip: bool) -> Result<Pieces, Error> {
        use std::io::Write;
        let mut file = tempfile::NamedTempFile::new().unwrap();
        if gzip {
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            encoder.write_all(text).unwrap();
            file.write_all(&encoder.finish().unwrap()).unwrap();
        } else {
            file.write_all(text).unwrap();
        }
        let mut input = open(file.path())?;
        parse_lines(
            file.path(),
            &mut input,
            1,
            None,
            |line, out: &mut Vec<(u64, u64)>| {
                let mut fields = Fields::new(line);
                let mut id = || {
                    let field = fields.next().unwrap_or_default();
                    parse_id(field).map_err(|reason| (field, reason))
                };
                out.push((id()?, id()?));
                Ok(())
            },
        )
    }

    #[test]
    fn blocks_read_ahead_keep_lines_whole_and_numbered() {
        // About 40 blocks, a comment every 7 lines and one line longer than a block.
        let mut text = Vec::new();
        let mut expected = Vec::new();
        for i in 0..20_000u64 {
            if i % 7 == 3 {
                text.extend_from_slice(b"# a comment\n");
            }
            if i == 9_000 {
                text.extend_from_slice(
                    format!("{i}{} 1\n", " ".repeat(3 * BLOCK_BYTES)).as_bytes(),
                );
                expected.push((i, 1));
                continue;
            }
            text.extend_from_slice(format!("{i} {}\n", i * 3).as_bytes());
            expected.push((i, i * 3));
        }
        for gzip in [false, true] {
            let pieces = parse_file(&text, gzip).unwrap();
            assert!(pieces.len() > 30);
            let got: Vec<(u64, u64)> = pieces.iter().flat_map(|(_, p)| p.clone()).collect();
            assert_eq!(got, expected);
            // Each piece's first record is on the line it names.
            let lines: Vec<&[u8]> = text.split(|&b| b == b'\n').collect();
            for (line, records) in &pieces {
                if let Some(&(a, _)) = records.first() {
                    let want = lines[*line as usize - 1];
                    assert!(want.starts_with(a.to_string().as_bytes()), "line {line}");
                }
            }
        }
    }

    #[test]
    fn an_error_in_a_late_block_names_its_line_and_stops_the_reader() {
        let mut text: Vec<u8> = (0..10_000u64)
            .flat_map(|i| format!("{i} {}\n", i + 1).into_bytes())
            .collect();
        text.extend_from_slice(b"7 x\n");
        text.extend((0..10_000u64).flat_map(|i| format!("{i} {i}\n").into_bytes()));
        for gzip in [false, true] {
            let message = parse_file(&text, gzip).unwrap_err().to_string();
            assert!(message.contains(":10001: "), "{message}");
            assert!(message.ends_with("`x`"), "{message}");
        }
        // An error in the first block, while the reader is still ahead.
        let mut early = b"1 2\n-5 3\n".to_vec();
        early.extend_from_slice(&text);
        let message = parse_file(&early, false).unwrap_err().to_string();
        assert!(message.contains(":2: negative"), "{message}");
    }

    #[test]
    fn a_truncated_gzip_stream_is_an_error_after_the_blocks_before_it() {
        use std::io::Write;
        let text: Vec<u8> = (0..50_000u64)
            .flat_map(|i| format!("{i} {}\n", i + 1).into_bytes())
            .collect();
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(&text).unwrap();
        let bytes = encoder.finish().unwrap();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes[..bytes.len() * 2 / 3]).unwrap();
        let mut input = open(file.path()).unwrap();
        let error = parse_lines(file.path(), &mut input, 1, None, |_, _: &mut ()| Ok(()))
            .unwrap_err()
            .to_string();
        assert!(error.contains("truncated or corrupt"), "{error}");
    }
}
