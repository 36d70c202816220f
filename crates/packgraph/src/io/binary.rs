//! The packgraph snapshot format: the graph's compressed arrays exactly as they are in
//! memory, so that reloading is a few large reads, a checksum and a parallel validation.
//! The layout is specified in `docs/formats/snapshot.md`. All integers are little-endian.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::Dataset;
use crate::codec::bytes::{ByteReader, ByteWriter, BytesError, FromRead};
use crate::graph::{AnyGraph, Graph, WeightedGraph};
use crate::graph::{ExternalId, IdMap};
use crate::pma::{ArrayDims, PmaConfig, PmaParts, PmaPartsRef};
use crate::Error;

/// The first eight bytes of every snapshot.
pub const MAGIC: &[u8; 8] = b"PKGRAPH\0";
/// The format version this build writes. Version 2 stores unweighted graphs' leaves in
/// group varint (`GroupLeaf`); version 1, still read, in byte codes (`DeltaLeaf`).
/// Version 3 stores weighted graphs' leaves in group varint with the weights
/// (`GroupMapLeaf`); versions 1 and 2, still read, in byte codes (`DeltaMapLeaf`).
pub const VERSION: u32 = 3;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// Bytes of the fixed header.
const HEADER_BYTES: usize = 48;

/// The bits of the header's flags.
#[derive(Debug, Clone, Copy)]
#[repr(u32)]
enum Flag {
    /// The graph is directed (an in-edge array follows the out-edge array).
    Directed = 1,
    /// Each key in the leaves carries an f64 weight.
    Weighted = 2,
    /// The vertex ids are stored, as a strictly increasing list.
    SortedIds = 4,
    /// The vertex ids are stored, as a list of distinct ids in any order.
    IdList = 8,
    /// The vertex ids are stored, as a list of distinct integers and names in any order
    /// (some vertex is named).
    NamedIds = 16,
}

impl Flag {
    /// Every bit a reader knows.
    const KNOWN: u32 = Self::Directed.bit()
        | Self::Weighted.bit()
        | Self::SortedIds.bit()
        | Self::IdList.bit()
        | Self::NamedIds.bit();

    const fn bit(self) -> u32 {
        self as u32
    }

    fn is_in(self, flags: u32) -> bool {
        flags & self.bit() != 0
    }
}

/// Whether bytes start like a snapshot.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// Elements of a bulk array staged per write.
const CHUNK_LEN: usize = 8192;

/// Writes the payload while computing its checksum and length: small fields are staged in
/// `buf`, the leaves' pages go straight out.
struct Payload<W> {
    out: W,
    hasher: crc32fast::Hasher,
    len: u64,
    buf: ByteWriter,
}

impl<W: Write> Payload<W> {
    fn raw(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let buf = std::mem::take(&mut self.buf);
        self.raw(buf.as_slice())?;
        self.buf = buf;
        self.buf.clear();
        Ok(())
    }

    fn u64s(&mut self, values: &[u64]) -> std::io::Result<()> {
        for chunk in values.chunks(CHUNK_LEN) {
            self.buf.u64s(chunk);
            self.flush()?;
        }
        Ok(())
    }

    /// Every vertex's external id in internal order: a tag byte, then an integer as `u64`
    /// (tag 0) or a name as its `u32` byte length and UTF-8 bytes (tag 1).
    fn named_ids(&mut self, ids: &IdMap) -> std::io::Result<()> {
        for (i, id) in ids.iter().enumerate() {
            match id {
                ExternalId::Int(id) => self.buf.u8(0).u64(id),
                ExternalId::Name(name) => {
                    self.buf.u8(1).u32(name.len() as u32).bytes(name.as_bytes())
                }
            };
            if i % CHUNK_LEN == CHUNK_LEN - 1 {
                self.flush()?;
            }
        }
        self.flush()
    }

    /// One edge array: dimensions, configuration, leaves, leaf sizes, heads.
    fn pma(&mut self, parts: PmaPartsRef<'_>) -> std::io::Result<()> {
        ArrayDims::of(&parts).write(&mut self.buf);
        parts.config.write_stored(&mut self.buf);
        self.flush()?;
        for page in &parts.data {
            self.raw(page)?;
        }
        for chunk in parts.used.chunks(CHUNK_LEN) {
            self.buf.u32s(chunk);
            self.flush()?;
        }
        self.u64s(&parts.heads)
    }
}

/// Writes a snapshot of `dataset` to `path`.
pub fn write(dataset: &Dataset, path: &Path) -> Result<(), Error> {
    let graph = &dataset.graph;
    let ids = dataset.ids();
    let named = ids.has_names();
    let id_list = match ids.as_range() {
        Some(_) => None,
        None if named => None,
        None => ids.ints(),
    };
    let os = |e| Error::io(path, e);
    let file = File::create(path).map_err(os)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; HEADER_BYTES]).map_err(os)?;
    let mut payload = Payload {
        out,
        hasher: crc32fast::Hasher::new(),
        len: 0,
        buf: ByteWriter::with_capacity(CHUNK_LEN * 8),
    };
    let (out_parts, in_parts) = match graph {
        AnyGraph::Unweighted(g) => g.parts(),
        AnyGraph::Weighted(g) => g.parts(),
    };
    payload.pma(out_parts).map_err(os)?;
    if let Some(parts) = in_parts {
        payload.pma(parts).map_err(os)?;
    }
    if let Some(list) = &id_list {
        payload.u64s(list).map_err(os)?;
    }
    if named {
        payload.named_ids(ids).map_err(os)?;
    }
    let Payload {
        out, hasher, len, ..
    } = payload;
    let mut flags = 0;
    if graph.is_directed() {
        flags |= Flag::Directed.bit();
    }
    if graph.is_weighted() {
        flags |= Flag::Weighted.bit();
    }
    if named {
        flags |= Flag::NamedIds.bit();
    }
    if let Some(list) = &id_list {
        flags |= if list.windows(2).all(|w| w[0] < w[1]) {
            Flag::SortedIds.bit()
        } else {
            Flag::IdList.bit()
        };
    }
    let first_id = ids.as_range().map_or(0, |(first, _)| first);
    let mut header = ByteWriter::with_capacity(HEADER_BYTES);
    header
        .bytes(MAGIC)
        .u32(VERSION)
        .u32(flags)
        .size(graph.num_vertices())
        .u64(first_id)
        .u64(len)
        .u32(hasher.finalize());
    let header_sum = crc32fast::hash(header.as_slice());
    header.u32(header_sum);
    let mut file = out.into_inner().map_err(|e| os(e.into_error()))?;
    file.seek(SeekFrom::Start(0)).map_err(os)?;
    file.write_all(header.as_slice()).map_err(os)?;
    file.sync_all().map_err(os)?;
    Ok(())
}

/// The payload as it is read, with its CRC-32 computed on the way.
struct Hashed<R> {
    inner: R,
    hasher: crc32fast::Hasher,
}

impl<R: Read> Read for Hashed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

type PayloadReader = ByteReader<FromRead<Hashed<File>>>;

/// One edge array, as [`Payload::pma`] writes it: every length is checked against the
/// bytes left before anything is allocated.
fn read_pma(r: &mut PayloadReader) -> Result<PmaParts, BytesError> {
    let dims = ArrayDims::read(r)?;
    let config = PmaConfig::read_stored(r)?;
    let data = r.bytes_vec(dims.data_bytes(), "the leaves")?;
    // The leaves were read whole, so the leaf count is below the bytes of the file.
    let mut used = Vec::new();
    r.words_into(dims.num_leaves, &mut used, "the leaf sizes")?;
    let heads = r.u64s(dims.num_leaves, "the leaf heads")?;
    Ok(PmaParts {
        config,
        leaf_bytes: dims.leaf_bytes,
        len: dims.len,
        data,
        used,
        heads,
    })
}

/// The fields of the fixed header, in order.
struct Header {
    version: u32,
    flags: u32,
    num_vertices: u64,
    first_id: u64,
    payload_len: u64,
    checksum: u32,
    header_sum: u32,
}

impl Header {
    fn read(bytes: &[u8; HEADER_BYTES]) -> Result<Self, BytesError> {
        let mut r = ByteReader::new(bytes);
        r.take(MAGIC.len(), "the magic")?;
        Ok(Self {
            version: r.u32("the format version")?,
            flags: r.u32("the flags")?,
            num_vertices: r.u64("the vertex count")?,
            first_id: r.u64("the first vertex id")?,
            payload_len: r.u64("the payload length")?,
            checksum: r.u32("the payload checksum")?,
            header_sum: r.u32("the header checksum")?,
        })
    }
}

/// Reads a snapshot, verifying its checksum and every structural invariant.
pub(crate) fn read(path: &Path) -> Result<Dataset, Error> {
    let os = |e| Error::io(path, e);
    let meta = std::fs::metadata(path).map_err(os)?;
    if meta.is_dir() {
        return Err(Error::invalid_file(
            path,
            "is a directory, not a graph file",
        ));
    }
    let mut file = File::open(path).map_err(os)?;
    let mut header = [0u8; HEADER_BYTES];
    let got = (meta.len() as usize).min(HEADER_BYTES);
    file.read_exact(&mut header[..got]).map_err(os)?;
    if !sniff(&header[..got]) {
        return Err(Error::unsupported_file(path, "not a packgraph snapshot"));
    }
    if got < HEADER_BYTES {
        return Err(corrupted(
            path,
            format!("{} bytes is shorter than the header", meta.len()),
        ));
    }
    let bad = |e: BytesError| e.into_error(Some(path), "corrupted packgraph snapshot: ");
    let Header {
        version,
        flags,
        num_vertices,
        first_id,
        payload_len,
        checksum,
        header_sum: stored_sum,
    } = Header::read(&header).map_err(bad)?;
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(Error::unsupported_file(
            path,
            format!(
                "snapshot format version {version}; this packgraph reads versions \
                 {OLDEST_VERSION} to {VERSION}"
            ),
        ));
    }
    let header_sum = crc32fast::hash(&header[..44]);
    if header_sum != stored_sum {
        return Err(corrupted(
            path,
            format!(
                "header checksum mismatch (stored {stored_sum:#010x}, computed {header_sum:#010x})"
            ),
        ));
    }
    if flags & !Flag::KNOWN != 0 {
        return Err(corrupted(path, format!("unknown flags {flags:#x}")));
    }
    let actual = meta.len() - HEADER_BYTES as u64;
    if payload_len != actual {
        return Err(corrupted(
            path,
            format!("the header says {payload_len} bytes follow it but {actual} do"),
        ));
    }
    let num_vertices = usize::try_from(num_vertices)
        .ok()
        .filter(|&n| n <= crate::graph::MAX_VERTICES)
        .ok_or_else(|| corrupted(path, format!("{num_vertices} vertices")))?;
    let source = Hashed {
        inner: file,
        hasher: crc32fast::Hasher::new(),
    };
    let mut reader =
        ByteReader::of_len(FromRead(source), payload_len).starting_at(HEADER_BYTES as u64);
    let directed = Flag::Directed.is_in(flags);
    let out = read_pma(&mut reader).map_err(bad)?;
    let incoming = if directed {
        Some(read_pma(&mut reader).map_err(bad)?)
    } else {
        None
    };
    let lists = [Flag::SortedIds, Flag::IdList, Flag::NamedIds]
        .iter()
        .filter(|f| f.is_in(flags))
        .count();
    let ids = if lists > 1 {
        return Err(corrupted(
            path,
            "flags name more than one way the vertex ids are stored",
        ));
    } else if Flag::NamedIds.is_in(flags) {
        read_named_ids(&mut reader, num_vertices).map_err(|e| match e {
            Named::Bytes(e) => bad(e),
            Named::Bad(reason) => corrupted(path, reason),
        })?
    } else if Flag::SortedIds.is_in(flags) {
        let ids = reader.u64s(num_vertices, "the vertex ids").map_err(bad)?;
        IdMap::from_sorted(ids).ok_or_else(|| corrupted(path, "vertex ids are not increasing"))?
    } else if Flag::IdList.is_in(flags) {
        let ids = reader.u64s(num_vertices, "the vertex ids").map_err(bad)?;
        IdMap::from_list(&ids).ok_or_else(|| corrupted(path, "a vertex id is repeated"))?
    } else {
        if first_id.checked_add(num_vertices as u64).is_none() {
            return Err(corrupted(path, "vertex ids overflow 64 bits"));
        }
        IdMap::range(first_id, num_vertices)
    };
    reader.finish("the arrays").map_err(bad)?;
    let found = reader.into_inner().0.hasher.finalize();
    if found != checksum {
        return Err(corrupted(
            path,
            format!("checksum mismatch (header {checksum:#010x}, contents {found:#010x})"),
        ));
    }
    let invalid = |e: Error| corrupted(path, e.to_string());
    let graph = if Flag::Weighted.is_in(flags) && version < 3 {
        AnyGraph::Weighted(
            WeightedGraph::from_byte_coded_weighted_parts(directed, num_vertices, out, incoming)
                .map_err(invalid)?,
        )
    } else if Flag::Weighted.is_in(flags) {
        AnyGraph::Weighted(
            WeightedGraph::from_weighted_parts(directed, num_vertices, out, incoming)
                .map_err(invalid)?,
        )
    } else if version == 1 {
        AnyGraph::Unweighted(
            Graph::from_byte_coded_parts(directed, num_vertices, out, incoming).map_err(invalid)?,
        )
    } else {
        AnyGraph::Unweighted(
            Graph::from_parts(directed, num_vertices, out, incoming).map_err(invalid)?,
        )
    };
    let graph = graph
        .with_ids(ids)
        .map_err(|_| corrupted(path, "vertex id count disagrees"))?;
    Ok(Dataset {
        graph,
        self_loops: 0,
    })
}
/// Why the named vertex ids could not be read.
enum Named {
    Bytes(BytesError),
    Bad(String),
}

impl From<BytesError> for Named {
    fn from(e: BytesError) -> Self {
        Named::Bytes(e)
    }
}

/// The `n` external ids [`Payload::named_ids`] wrote: every length is checked against the
/// bytes left before anything is allocated.
fn read_named_ids(r: &mut PayloadReader, n: usize) -> Result<IdMap, Named> {
    // Each id takes at least 5 bytes (a tag and a name's length).
    r.need(n as u64 * 5, "the vertex ids")?;
    let mut ids = Vec::with_capacity(n);
    for _ in 0..n {
        let id = match r.u8("a vertex id's tag")? {
            0 => ExternalId::Int(r.u64("an integer vertex id")?),
            1 => {
                let len = r.u32("a vertex name's length")?;
                let bytes = r.bytes_vec(u64::from(len), "a vertex name")?;
                let name = String::from_utf8(bytes)
                    .map_err(|_| Named::Bad("a vertex name is not UTF-8".into()))?;
                ExternalId::Name(name.into())
            }
            tag => return Err(Named::Bad(format!("unknown vertex id tag {tag}"))),
        };
        ids.push(id);
    }
    IdMap::from_split((0, 0), ids).map_err(|_| Named::Bad("a vertex id is repeated".into()))
}

/// A damaged snapshot file.
fn corrupted(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::corrupt_file(path, format!("corrupted packgraph snapshot: {reason}"))
}
