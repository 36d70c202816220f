//! The packgraph snapshot format: the graph's compressed arrays exactly as they are in
//! memory, so that reloading is a few large reads, a checksum and a parallel validation.
//! The layout is specified in `docs/formats/snapshot.md`. All integers are little-endian.

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::Dataset;
use crate::graph::IdMap;
use crate::graph::{AnyGraph, Graph, WeightedGraph};
use crate::pma::{PmaConfig, PmaParts, PmaPartsRef};
use crate::Error;

/// The first eight bytes of every snapshot.
pub const MAGIC: &[u8; 8] = b"PKGRAPH\0";
/// The format version this build writes. Version 2 stores unweighted graphs' leaves in
/// group varint (`GroupLeaf`); version 1, still read, in byte codes (`DeltaLeaf`).
pub const VERSION: u32 = 2;
/// The oldest format version this build reads.
pub const OLDEST_VERSION: u32 = 1;
/// Bytes of the fixed header.
const HEADER_BYTES: usize = 48;

const FLAG_DIRECTED: u32 = 1;
const FLAG_WEIGHTED: u32 = 2;
const FLAG_SORTED_IDS: u32 = 4;
const FLAG_ID_LIST: u32 = 8;
const KNOWN_FLAGS: u32 = FLAG_DIRECTED | FLAG_WEIGHTED | FLAG_SORTED_IDS | FLAG_ID_LIST;

/// Whether bytes start like a snapshot.
pub(crate) fn sniff(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

/// Writes `payload` while computing its checksum and length.
struct Payload<W> {
    out: W,
    hasher: crc32fast::Hasher,
    len: u64,
}

impl<W: Write> Payload<W> {
    fn bytes(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    fn u64(&mut self, value: u64) -> std::io::Result<()> {
        self.bytes(&value.to_le_bytes())
    }

    fn u64s(&mut self, values: impl Iterator<Item = u64>) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(1 << 16);
        for value in values {
            buf.extend_from_slice(&value.to_le_bytes());
            if buf.len() >= 1 << 16 {
                self.bytes(&buf)?;
                buf.clear();
            }
        }
        self.bytes(&buf)
    }

    fn pma(&mut self, parts: PmaPartsRef<'_>) -> std::io::Result<()> {
        let c = parts.config;
        self.u64(parts.leaf_bytes as u64)?;
        self.u64(parts.used.len() as u64)?;
        self.u64(parts.len as u64)?;
        for value in [
            c.growth_factor,
            c.upper_density_root,
            c.lower_density_root,
            c.lower_density_leaf,
        ] {
            self.u64(value.to_bits())?;
        }
        for value in [
            c.leaf_bytes.unwrap_or(0),
            c.point_batch_max,
            c.rebuild_divisor,
            c.parallel_grain,
        ] {
            self.u64(value as u64)?;
        }
        for page in &parts.data {
            self.bytes(page)?;
        }
        let mut used = Vec::with_capacity(parts.used.len() * 4);
        for &u in &parts.used {
            used.extend_from_slice(&u.to_le_bytes());
        }
        self.bytes(&used)?;
        self.u64s(parts.heads.iter().copied())
    }
}

/// Writes a snapshot of `dataset` to `path`.
pub fn write(dataset: &Dataset, path: &Path) -> Result<(), Error> {
    let graph = &dataset.graph;
    let ids = dataset.ids();
    // Checked before the file is created, so that a refusal leaves nothing behind.
    let id_list = match ids.as_range() {
        Some(_) => None,
        None => Some(ids.ints().ok_or_else(|| {
            Error::unsupported_file(
                path,
                "snapshot files hold integer vertex ids; this graph has vertices named by strings",
            )
        })?),
    };
    let os = |e| Error::io(path, e);
    let file = File::create(path).map_err(os)?;
    let mut out = BufWriter::with_capacity(1 << 20, file);
    out.write_all(&[0u8; HEADER_BYTES]).map_err(os)?;
    let mut payload = Payload {
        out,
        hasher: crc32fast::Hasher::new(),
        len: 0,
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
        payload.u64s(list.iter().copied()).map_err(os)?;
    }
    let Payload {
        out, hasher, len, ..
    } = payload;
    let mut flags = 0;
    if graph.is_directed() {
        flags |= FLAG_DIRECTED;
    }
    if graph.is_weighted() {
        flags |= FLAG_WEIGHTED;
    }
    if let Some(list) = &id_list {
        flags |= if list.windows(2).all(|w| w[0] < w[1]) {
            FLAG_SORTED_IDS
        } else {
            FLAG_ID_LIST
        };
    }
    let first_id = ids.as_range().map_or(0, |(first, _)| first);
    let mut header = Vec::with_capacity(HEADER_BYTES);
    header.extend_from_slice(MAGIC);
    header.extend_from_slice(&VERSION.to_le_bytes());
    header.extend_from_slice(&flags.to_le_bytes());
    header.extend_from_slice(&(graph.num_vertices() as u64).to_le_bytes());
    header.extend_from_slice(&first_id.to_le_bytes());
    header.extend_from_slice(&len.to_le_bytes());
    header.extend_from_slice(&hasher.finalize().to_le_bytes());
    let header_sum = crc32fast::hash(&header);
    header.extend_from_slice(&header_sum.to_le_bytes());
    let mut file = out.into_inner().map_err(|e| os(e.into_error()))?;
    file.seek(SeekFrom::Start(0)).map_err(os)?;
    file.write_all(&header).map_err(os)?;
    file.sync_all().map_err(os)?;
    Ok(())
}

/// Reads the payload, checking lengths against what is left and hashing as it goes.
struct Reader<'p> {
    file: File,
    path: &'p Path,
    left: u64,
    hasher: crc32fast::Hasher,
}

impl Reader<'_> {
    fn take(&mut self, bytes: u64, what: &str) -> Result<Vec<u8>, Error> {
        if bytes > self.left {
            return Err(corrupted(
                self.path,
                format!(
                    "{what} needs {bytes} bytes but only {} are left: the header lies about sizes or the file is truncated",
                    self.left
                ),
            ));
        }
        let mut buf = vec![0u8; bytes as usize];
        self.file
            .read_exact(&mut buf)
            .map_err(|e| Error::io(self.path, e))?;
        self.hasher.update(&buf);
        self.left -= bytes;
        Ok(buf)
    }

    fn u64(&mut self, what: &str) -> Result<u64, Error> {
        let bytes = self.take(8, what)?;
        Ok(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
    }

    fn u64s(&mut self, count: u64, what: &str) -> Result<Vec<u64>, Error> {
        let bytes = self.take(count.saturating_mul(8), what)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect())
    }

    fn size(&mut self, what: &str) -> Result<usize, Error> {
        let value = self.u64(what)?;
        usize::try_from(value)
            .map_err(|_| corrupted(self.path, format!("{what} {value} is too large")))
    }

    fn pma(&mut self) -> Result<PmaParts, Error> {
        let leaf_bytes = self.size("leaf size")?;
        let num_leaves = self.size("leaf count")?;
        let len = self.size("key count")?;
        let mut floats = [0f64; 4];
        for slot in &mut floats {
            *slot = f64::from_bits(self.u64("configuration")?);
        }
        let mut sizes = [0usize; 4];
        for slot in &mut sizes {
            *slot = self.size("configuration")?;
        }
        let config = PmaConfig {
            growth_factor: floats[0],
            upper_density_root: floats[1],
            lower_density_root: floats[2],
            lower_density_leaf: floats[3],
            leaf_bytes: (sizes[0] != 0).then_some(sizes[0]),
            point_batch_max: sizes[1],
            rebuild_divisor: sizes[2],
            parallel_grain: sizes[3],
            ..PmaConfig::default()
        };
        let data_bytes = (num_leaves as u64).saturating_mul(leaf_bytes as u64);
        let data = self.take(data_bytes, "the leaves")?;
        let used = self
            .take((num_leaves as u64).saturating_mul(4), "the leaf sizes")?
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap_or_default()))
            .collect();
        let heads = self.u64s(num_leaves as u64, "the leaf heads")?;
        Ok(PmaParts {
            config,
            leaf_bytes,
            len,
            data,
            used,
            heads,
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
    let u32_at = |at: usize| u32::from_le_bytes(header[at..at + 4].try_into().unwrap_or_default());
    let u64_at = |at: usize| u64::from_le_bytes(header[at..at + 8].try_into().unwrap_or_default());
    let (version, flags) = (u32_at(8), u32_at(12));
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
    if header_sum != u32_at(44) {
        return Err(corrupted(
            path,
            format!(
                "header checksum mismatch (stored {:#010x}, computed {header_sum:#010x})",
                u32_at(44)
            ),
        ));
    }
    if flags & !KNOWN_FLAGS != 0 {
        return Err(corrupted(path, format!("unknown flags {flags:#x}")));
    }
    let (num_vertices, first_id, payload_len, checksum) =
        (u64_at(16), u64_at(24), u64_at(32), u32_at(40));
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
    let mut reader = Reader {
        file,
        path,
        left: payload_len,
        hasher: crc32fast::Hasher::new(),
    };
    let directed = flags & FLAG_DIRECTED != 0;
    let out = reader.pma()?;
    let incoming = if directed { Some(reader.pma()?) } else { None };
    let ids = if flags & FLAG_SORTED_IDS != 0 && flags & FLAG_ID_LIST != 0 {
        return Err(corrupted(
            path,
            "flags say the vertex ids are both increasing and unordered",
        ));
    } else if flags & FLAG_SORTED_IDS != 0 {
        let ids = reader.u64s(num_vertices as u64, "the vertex ids")?;
        IdMap::from_sorted(ids).ok_or_else(|| corrupted(path, "vertex ids are not increasing"))?
    } else if flags & FLAG_ID_LIST != 0 {
        let ids = reader.u64s(num_vertices as u64, "the vertex ids")?;
        IdMap::from_list(&ids).ok_or_else(|| corrupted(path, "a vertex id is repeated"))?
    } else {
        if first_id.checked_add(num_vertices as u64).is_none() {
            return Err(corrupted(path, "vertex ids overflow 64 bits"));
        }
        IdMap::range(first_id, num_vertices)
    };
    if reader.left != 0 {
        return Err(corrupted(
            path,
            format!("{} unexpected bytes after the arrays", reader.left),
        ));
    }
    let found = reader.hasher.finalize();
    if found != checksum {
        return Err(corrupted(
            path,
            format!("checksum mismatch (header {checksum:#010x}, contents {found:#010x})"),
        ));
    }
    let bad = |e: Error| corrupted(path, e.to_string());
    let graph = if flags & FLAG_WEIGHTED != 0 {
        AnyGraph::Weighted(
            WeightedGraph::from_weighted_parts(directed, num_vertices, out, incoming)
                .map_err(bad)?,
        )
    } else if version == 1 {
        AnyGraph::Unweighted(
            Graph::from_byte_coded_parts(directed, num_vertices, out, incoming).map_err(bad)?,
        )
    } else {
        AnyGraph::Unweighted(Graph::from_parts(directed, num_vertices, out, incoming).map_err(bad)?)
    };
    let graph = graph
        .with_ids(ids)
        .map_err(|_| corrupted(path, "vertex id count disagrees"))?;
    Ok(Dataset {
        graph,
        self_loops: 0,
    })
}
/// A damaged snapshot file.
fn corrupted(path: &Path, reason: impl std::fmt::Display) -> Error {
    Error::corrupt_file(path, format!("corrupted packgraph snapshot: {reason}"))
}
