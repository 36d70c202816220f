//! Checkpoint files: packs of content-addressed units, and the manifest that names a
//! checkpoint's units. Byte diagrams in `docs/formats/store.md`; all integers little-endian.
//!
//! A unit is found by its [`UnitRef`]: pack number, byte offset and length, and the
//! XXH3-128 hash of its payload, which is also its identity: a checkpoint reuses a unit
//! whose hash an earlier checkpoint already stored instead of writing it again.

use std::path::Path;

use crate::codec::bytes::{ByteReader, ByteWriter, BytesError};
use crate::graph::IdKind;
use crate::{Error, Result};

/// The format version of packs and manifests this build writes. Version 2 added group-varint
/// pages ([`UnitKind::GroupPage`]) for unweighted graphs; version 3 the directory id in
/// every pack header and manifest; version 4 property changes in the delta unit, whose
/// manifest's properties unit then holds the base's values; version 5 the id dictionary
/// and the properties as subtree units under an index unit each
/// ([`UnitKind::IdsIndex`], [`UnitKind::PropertiesIndex`]), so that a new base rewrites
/// only the subtrees that changed; version 6 group-varint map pages
/// ([`UnitKind::GroupMapPage`]) for weighted graphs.
pub const STORE_FORMAT_VERSION: u32 = 6;
/// The oldest format version this build reads. Byte-coded pages (unweighted graphs of
/// version 1, weighted graphs before version 6) are re-encoded on load, and the next
/// checkpoint, a full one, writes the current version.
pub const STORE_OLDEST_READABLE: u32 = 1;

/// The first format version whose delta unit carries the property changes since the base
/// (the properties unit then holds the base's values, applied before the delta).
pub(super) const DELTA_PROPERTIES: u32 = 4;

/// The first format version whose ids and properties are subtree units listed by an index
/// unit each (the manifest's ids and properties references name the index units).
pub(super) const SUBTREE_UNITS: u32 = 5;

/// The first format version whose packs and manifests carry the directory id.
const FIRST_WITH_ID: u32 = 3;

/// Whether this build reads format `version`.
fn readable(version: u32) -> bool {
    (STORE_OLDEST_READABLE..=STORE_FORMAT_VERSION).contains(&version)
}
const PACK_MAGIC: &[u8; 8] = b"PGRAPHPK";
const PACK_END: &[u8; 8] = b"PGPKEND\0";
const MANIFEST_MAGIC: &[u8; 8] = b"PGRAPHMF";
/// A pack header's bytes: 24 before format 3, 40 (with the directory id) since.
/// The longest pack header (of any version this build reads).
pub(super) const PACK_HEADER_MAX: usize = 40;

fn pack_header_len(version: u32) -> usize {
    if version >= FIRST_WITH_ID {
        40
    } else {
        24
    }
}

/// A new data directory's id: 128 bits from the OS's random source, never 0 (0 stands for
/// "unknown": directories created before format 3 have no id). Falls back to std's
/// randomly keyed hasher over the time and the process id where `/dev/urandom` is missing.
pub(super) fn new_directory_id() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let from_os = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    let mut id = u128::from_le_bytes(bytes);
    if !from_os || id == 0 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let half = |salt: u64| {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u128(now);
            h.write_u32(std::process::id());
            h.write_u64(salt);
            h.finish()
        };
        id = u128::from(half(1)) << 64 | u128::from(half(2));
    }
    id.max(1)
}

/// The error for a file whose directory id is not its directory's.
pub(super) fn foreign_file(path: &Path, offset: u64, found: u128, expected: u128) -> Error {
    corrupt_at(
        path,
        offset,
        format!(
            "the file belongs to another data directory (its directory id is {found:032x}, \
             this directory's is {expected:032x})"
        ),
    )
}
pub(super) const UNIT_HEADER: usize = 32;
const PACK_TRAILER: usize = 20;

/// The file name of pack `n`.
pub(super) fn pack_name(n: u64) -> String {
    format!("pack-{n:08}.pack")
}

/// The pack number a file name gives, if it is a pack's name.
pub(super) fn parse_pack_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("pack-")?.strip_suffix(".pack")?;
    if digits.len() < 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What a unit holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub(super) enum UnitKind {
    /// One page of an edge array: its leaves' sizes, heads and used bytes, the leaves in
    /// byte codes (weighted graphs before format version 6; unweighted graphs of version
    /// 1).
    Page = 1,
    /// The base of a checkpoint: both arrays' shapes and the references to their pages.
    Base = 2,
    /// Vertex ids in internal order (an encoded update that adds them).
    Ids = 3,
    /// Every property value (an encoded update that sets them).
    Properties = 4,
    /// The net change of the edges and vertices since the base (an encoded update).
    Delta = 5,
    /// One page of an unweighted edge array, laid out like [`UnitKind::Page`] with the
    /// leaves in group varint (format version 2).
    GroupPage = 6,
    /// The id dictionary (format version 5): the dense range, then the references of its
    /// [`UnitKind::IdSubtree`] units in internal order.
    IdsIndex = 7,
    /// The external ids of one run of internal ids (an encoded update that adds them).
    IdSubtree = 8,
    /// The properties (format version 5): the references of its
    /// [`UnitKind::PropertySubtree`] units, in the order they are applied.
    PropertiesIndex = 9,
    /// Property values of one column for one run of vertices (an encoded update that sets
    /// them).
    PropertySubtree = 10,
    /// One page of a weighted edge array, laid out like [`UnitKind::Page`] with the leaves
    /// in group varint, each difference followed by its weight (format version 6).
    GroupMapPage = 11,
}

impl UnitKind {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            1 => Self::Page,
            2 => Self::Base,
            3 => Self::Ids,
            4 => Self::Properties,
            5 => Self::Delta,
            6 => Self::GroupPage,
            7 => Self::IdsIndex,
            8 => Self::IdSubtree,
            9 => Self::PropertiesIndex,
            10 => Self::PropertySubtree,
            11 => Self::GroupMapPage,
            _ => return None,
        })
    }
}

/// Where a unit is and what it must hash to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct UnitRef {
    pub(super) pack: u64,
    /// Offset of the unit's header in the pack.
    pub(super) offset: u64,
    /// Payload bytes.
    pub(super) len: u64,
    pub(super) hash: u128,
}

pub(super) const UNIT_REF_BYTES: usize = 40;

impl UnitRef {
    /// Bytes the unit takes in its pack.
    pub(super) fn stored_bytes(&self) -> u64 {
        UNIT_HEADER as u64 + self.len + 4
    }

    pub(super) fn put(&self, w: &mut ByteWriter) {
        w.u64(self.pack)
            .u64(self.offset)
            .u64(self.len)
            .u128(self.hash);
    }

    pub(super) fn get(r: &mut ByteReader<&[u8]>) -> Result<Self, BytesError> {
        Ok(Self {
            pack: r.u64("unit pack")?,
            offset: r.u64("unit offset")?,
            len: r.u64("unit length")?,
            hash: r.u128("unit hash")?,
        })
    }
}

/// The hash that names a unit: XXH3-128 of its payload, seeded with its kind (so that
/// equal bytes of two kinds are two units). twox-hash picks its AVX2 loop at run time where
/// the processor has one (SSE2 otherwise), with the same result.
pub(super) fn unit_hash(kind: UnitKind, payload: &[u8]) -> u128 {
    twox_hash::XxHash3_128::oneshot_with_seed(kind as u64, payload)
}

/// A pack being assembled in memory: header, units, and (on [`PackWriter::finish`]) the
/// trailer.
pub(super) struct PackWriter {
    pub(super) number: u64,
    bytes: ByteWriter,
    units: u64,
}

impl PackWriter {
    /// Pack `number` of the directory whose id is `dir_id`.
    pub(super) fn new(number: u64, dir_id: u128) -> Self {
        let mut bytes = ByteWriter::with_capacity(1 << 16);
        bytes
            .bytes(PACK_MAGIC)
            .u32(STORE_FORMAT_VERSION)
            .u64(number)
            .u128(dir_id);
        let sum = crc32c::crc32c(bytes.as_slice());
        bytes.u32(sum);
        Self {
            number,
            bytes,
            units: 0,
        }
    }

    /// Appends a unit whose payload hashes to `hash`; returns its reference.
    pub(super) fn add(&mut self, kind: UnitKind, payload: &[u8], hash: u128) -> UnitRef {
        let start = self.bytes.len();
        self.bytes
            .u8(kind as u8)
            .bytes(&[0u8; 7])
            .size(payload.len())
            .u128(hash)
            .bytes(payload);
        let sum = crc32c::crc32c(&self.bytes.as_slice()[start..]);
        self.bytes.u32(sum);
        self.units += 1;
        UnitRef {
            pack: self.number,
            offset: start as u64,
            len: payload.len() as u64,
            hash,
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.units == 0
    }

    /// The whole file: the units, then the end marker, the unit count and a CRC-32C of
    /// every byte before it.
    pub(super) fn finish(mut self) -> Vec<u8> {
        self.bytes.bytes(PACK_END).u64(self.units);
        let sum = crc32c::crc32c(self.bytes.as_slice());
        self.bytes.u32(sum);
        self.bytes.into_vec()
    }
}

fn corrupt_at(path: &Path, offset: u64, reason: impl Into<String>) -> Error {
    Error::Corrupt {
        path: Some(path.to_path_buf()),
        offset: Some(offset),
        reason: reason.into(),
    }
}

/// Checks a whole pack file (header, every unit's checksum and hash, trailer) of the
/// directory whose id is `dir_id`; returns the units it holds as (kind, reference).
pub(super) fn check_pack(
    path: &Path,
    number: u64,
    dir_id: u128,
    bytes: &[u8],
) -> Result<Vec<(UnitKind, UnitRef)>> {
    let header = check_pack_header(path, number, dir_id, bytes)?;
    if bytes.len() < header + PACK_TRAILER {
        return Err(corrupt_at(
            path,
            bytes.len() as u64,
            "the pack ends before its trailer",
        ));
    }
    let end = bytes.len() - PACK_TRAILER;
    let (marker, count, sum) =
        read_trailer(&mut reader(&bytes[end..], end as u64)).map_err(in_file(path))?;
    if marker != PACK_END {
        return Err(corrupt_at(
            path,
            end as u64,
            "the pack's end marker is missing",
        ));
    }
    if crc32c::crc32c(&bytes[..end + 16]) != sum {
        return Err(corrupt_at(
            path,
            (end + 16) as u64,
            "the pack's CRC-32C does not match",
        ));
    }
    let mut units = Vec::new();
    let mut at = header as u64;
    while (at as usize) < end {
        let (kind, unit) = unit_header(path, bytes, number, at, end)?;
        read_unit_checked(path, bytes, &unit, kind)?;
        at += unit.stored_bytes();
        units.push((kind, unit));
    }
    if count != units.len() as u64 {
        return Err(corrupt_at(
            path,
            (end + 8) as u64,
            format!(
                "the pack says it holds {count} units but holds {}",
                units.len()
            ),
        ));
    }
    Ok(units)
}

/// Checks the header of pack `number` of the directory whose id is `dir_id` (a pack of a
/// format before 3 has none, which reads as 0); returns the header's length.
pub(super) fn check_pack_header(
    path: &Path,
    number: u64,
    dir_id: u128,
    bytes: &[u8],
) -> Result<usize> {
    if bytes.len() < 12 || &bytes[..8] != PACK_MAGIC {
        return Err(corrupt_at(path, 0, "not a packgraph pack (bad magic)"));
    }
    let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
    let len = pack_header_len(version);
    if bytes.len() < len {
        return Err(corrupt_at(path, 0, "the pack ends inside its header"));
    }
    let (version, stored, id, sum) =
        read_pack_header(&mut reader(&bytes[8..len], 8), version).map_err(in_file(path))?;
    if !readable(version) {
        return Err(Error::Unsupported {
            path: Some(path.to_path_buf()),
            reason: format!(
                "pack format version {version}; this build reads versions \
                 {STORE_OLDEST_READABLE} to {STORE_FORMAT_VERSION}"
            ),
        });
    }
    if crc32c::crc32c(&bytes[..len - 4]) != sum {
        return Err(corrupt_at(
            path,
            (len - 4) as u64,
            "the pack header's CRC-32C does not match",
        ));
    }
    if id != dir_id {
        return Err(foreign_file(path, 20, id, dir_id));
    }
    if stored != number {
        return Err(corrupt_at(
            path,
            12,
            format!("the pack says it is pack {stored}, but its name says {number}"),
        ));
    }
    Ok(len)
}

/// A pack's header after its magic: format version, pack number, directory id (0 before
/// format 3), CRC-32C.
fn read_pack_header(
    r: &mut ByteReader<&[u8]>,
    version: u32,
) -> Result<(u32, u64, u128, u32), BytesError> {
    let version_read = r.u32("the pack format version")?;
    let number = r.u64("the pack number")?;
    let id = if version >= FIRST_WITH_ID {
        r.u128("the directory id")?
    } else {
        0
    };
    Ok((
        version_read,
        number,
        id,
        r.u32("the pack header's CRC-32C")?,
    ))
}

/// A pack's trailer: end marker, unit count, CRC-32C.
fn read_trailer<'a>(r: &mut ByteReader<&'a [u8]>) -> Result<(&'a [u8], u64, u32), BytesError> {
    Ok((
        r.take(PACK_END.len(), "the pack's end marker")?,
        r.u64("the pack's unit count")?,
        r.u32("the pack's CRC-32C")?,
    ))
}

/// A unit's header: kind byte, seven zero bytes, payload length, payload hash.
fn read_unit_header(r: &mut ByteReader<&[u8]>) -> Result<(u8, u64, u128), BytesError> {
    let kind = r.u8("the unit kind")?;
    r.take(7, "the unit header's padding")?;
    Ok((kind, r.u64("the unit length")?, r.u128("the unit hash")?))
}

fn unit_header(
    path: &Path,
    bytes: &[u8],
    pack: u64,
    at: u64,
    end: usize,
) -> Result<(UnitKind, UnitRef)> {
    unit_header_in(path, (bytes, 0), pack, at, end as u64)
}

/// [`unit_header`] in `piece`, the bytes of the pack from byte `base` on (they hold every
/// byte of the unit up to `end`, the end of the pack's units).
fn unit_header_in(
    path: &Path,
    (piece, base): (&[u8], u64),
    pack: u64,
    at: u64,
    end: u64,
) -> Result<(UnitKind, UnitRef)> {
    if at < base || at.saturating_add((UNIT_HEADER + 4) as u64) > end {
        return Err(corrupt_at(
            path,
            at,
            "a unit header runs past the end of the pack",
        ));
    }
    let start = (at - base) as usize;
    let header = piece
        .get(start..start + UNIT_HEADER)
        .ok_or_else(|| corrupt_at(path, at, "a unit header that was not read"))?;
    let (kind, len, hash) = read_unit_header(&mut reader(header, at)).map_err(in_file(path))?;
    let kind = UnitKind::from_byte(kind)
        .ok_or_else(|| corrupt_at(path, at, format!("unknown unit kind {kind}")))?;
    let unit = UnitRef {
        pack,
        offset: at,
        len,
        hash,
    };
    if unit.stored_bytes() > end - at {
        return Err(corrupt_at(
            path,
            at,
            format!("a unit of {len} bytes runs past the end of the pack"),
        ));
    }
    Ok((kind, unit))
}

/// The payload of `unit` in the pack `bytes`, after checking its header, CRC-32C and hash.
pub(super) fn read_unit_checked<'a>(
    path: &Path,
    bytes: &'a [u8],
    unit: &UnitRef,
    kind: UnitKind,
) -> Result<&'a [u8]> {
    read_unit_of(path, bytes, unit, &[kind]).map(|(_, payload)| payload)
}

/// [`read_unit_checked`] for a unit of any of `kinds`; returns its kind and payload.
pub(super) fn read_unit_of<'a>(
    path: &Path,
    bytes: &'a [u8],
    unit: &UnitRef,
    kinds: &[UnitKind],
) -> Result<(UnitKind, &'a [u8])> {
    read_unit_in(path, (bytes, 0), bytes.len() as u64, unit, kinds, false)
}

/// [`read_unit_of`] in `piece`, the bytes of a pack of `len` bytes from byte `base` on,
/// which hold at least the unit's bytes within the pack.
///
/// Where `listed`, the reader knows the unit's hash from elsewhere (a manifest, a base or
/// an index unit lists it): a payload that hashes to it, in a header with zero padding,
/// skips the CRC-32C, since the 128-bit hash checks the payload more strongly and every
/// other field of the header is compared with the reference. Any other unit is checked
/// CRC-32C first, so that damage is named as it is without `listed`.
pub(super) fn read_unit_in<'a>(
    path: &Path,
    (piece, base): (&'a [u8], u64),
    len: u64,
    unit: &UnitRef,
    kinds: &[UnitKind],
    listed: bool,
) -> Result<(UnitKind, &'a [u8])> {
    let end = len.saturating_sub(PACK_TRAILER as u64);
    let (kind, stored) = unit_header_in(path, (piece, base), unit.pack, unit.offset, end)?;
    if !kinds.contains(&kind) || stored.len != unit.len || stored.hash != unit.hash {
        return Err(corrupt_at(
            path,
            unit.offset,
            format!(
                "the manifest names a {:?} unit here that the pack does not hold",
                kinds[0]
            ),
        ));
    }
    let start = (unit.offset - base) as usize;
    let body = start + UNIT_HEADER + unit.len as usize;
    let Some(stored) = piece.get(start..body + 4) else {
        return Err(corrupt_at(path, unit.offset, "a unit that was not read"));
    };
    let (covered, sum) = stored.split_at(stored.len() - 4);
    let payload = &covered[UNIT_HEADER..];
    let hashed = listed.then(|| unit_hash(kind, payload) == unit.hash);
    // The padding: the 7 bytes after the kind.
    if hashed == Some(true) && covered[1..8] == [0; 7] {
        return Ok((kind, payload));
    }
    // The sum is read after the bytes before it, which bring it into cache.
    let computed = crc32c::crc32c(covered);
    let sum = u32::from_le_bytes(sum.try_into().unwrap_or_default());
    if computed != sum {
        return Err(corrupt_at(
            path,
            unit.offset,
            format!("the {kind:?} unit's CRC-32C does not match"),
        ));
    }
    if !hashed.unwrap_or_else(|| unit_hash(kind, payload) == unit.hash) {
        return Err(corrupt_at(
            path,
            unit.offset,
            format!("the {kind:?} unit's hash does not match"),
        ));
    }
    Ok((kind, payload))
}

/// A reader of the bytes of file `path` that start at byte `base` of it.
pub(super) fn reader(bytes: &[u8], base: u64) -> ByteReader<&[u8]> {
    ByteReader::new(bytes).starting_at(base)
}

/// A decoding error of file `path` as the library's error.
pub(super) fn in_file(path: &Path) -> impl Fn(BytesError) -> Error + '_ {
    move |e| e.into_error(Some(path), "")
}

/// What a manifest says: the checkpoint it names and what it covers.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Manifest {
    /// Checkpoints written in this directory before this one.
    pub(super) number: u64,
    /// The last log record the checkpoint includes.
    pub(super) log_seq: u64,
    /// The graph's version number.
    pub(super) graph_version: u64,
    pub(super) directed: bool,
    pub(super) weighted: bool,
    pub(super) num_vertices: u64,
    pub(super) num_arcs: u64,
    /// The next pack number to use.
    pub(super) next_pack: u64,
    /// The log position the base was taken at.
    pub(super) base_seq: u64,
    /// The directory's id (0: unknown, a directory created before format 3).
    pub(super) dir_id: u128,
    /// The kind of vertex ids `create` fixed (`None`: fixed by the first batch that adds
    /// vertices, and read back from the graph's ids).
    pub(super) id_kind: Option<IdKind>,
    /// The format version it was read in (this build writes [`STORE_FORMAT_VERSION`]).
    pub(super) version: u32,
    pub(super) base: UnitRef,
    pub(super) ids: UnitRef,
    pub(super) properties: UnitRef,
    pub(super) delta: Option<UnitRef>,
}

const FLAG_DIRECTED: u32 = 1;
const FLAG_WEIGHTED: u32 = 2;
const FLAG_DELTA: u32 = 4;
/// The directory's vertices are integers ([`IdKind::Int`]).
const FLAG_INT_IDS: u32 = 8;
/// The directory's vertices are names ([`IdKind::Name`]).
const FLAG_NAME_IDS: u32 = 16;
const KNOWN_FLAGS: u32 = FLAG_DIRECTED | FLAG_WEIGHTED | FLAG_DELTA | FLAG_INT_IDS | FLAG_NAME_IDS;
/// Byte offsets of manifest fields, for error messages.
const MANIFEST_NEXT_PACK_OFFSET: u64 = 56;
const MANIFEST_BASE_SEQ_OFFSET: u64 = 64;

/// The manifest's file name.
pub(super) const MANIFEST: &str = "MANIFEST";

impl Manifest {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut flags = 0;
        if self.directed {
            flags |= FLAG_DIRECTED;
        }
        if self.weighted {
            flags |= FLAG_WEIGHTED;
        }
        if self.delta.is_some() {
            flags |= FLAG_DELTA;
        }
        flags |= match self.id_kind {
            None => 0,
            Some(IdKind::Int) => FLAG_INT_IDS,
            Some(IdKind::Name) => FLAG_NAME_IDS,
        };
        let mut w = ByteWriter::with_capacity(256);
        w.bytes(MANIFEST_MAGIC)
            .u32(STORE_FORMAT_VERSION)
            .u32(flags)
            .u64(self.number)
            .u64(self.log_seq)
            .u64(self.graph_version)
            .u64(self.num_vertices)
            .u64(self.num_arcs)
            .u64(self.next_pack)
            .u64(self.base_seq)
            .u128(self.dir_id);
        for unit in [self.base, self.ids, self.properties]
            .iter()
            .chain(&self.delta)
        {
            unit.put(&mut w);
        }
        let sum = crc32c::crc32c(w.as_slice());
        w.u32(sum);
        w.into_vec()
    }

    pub(super) fn decode(path: &Path, bytes: &[u8]) -> Result<Self> {
        if bytes.len() < 16 || &bytes[..8] != MANIFEST_MAGIC {
            return Err(corrupt_at(path, 0, "not a packgraph manifest (bad magic)"));
        }
        let end = bytes.len() - 4;
        let sum = u32::from_le_bytes(bytes[end..].try_into().unwrap_or_default());
        if crc32c::crc32c(&bytes[..end]) != sum {
            return Err(corrupt_at(
                path,
                end as u64,
                "the manifest's CRC-32C does not match",
            ));
        }
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if !readable(version) {
            return Err(Error::Unsupported {
                path: Some(path.to_path_buf()),
                reason: format!(
                    "data directory format version {version}; this build reads versions \
                     {STORE_OLDEST_READABLE} to {STORE_FORMAT_VERSION}"
                ),
            });
        }
        let manifest = Self::decode_fields(&bytes[..end], version).map_err(in_file(path))?;
        manifest.check_references(path)?;
        Ok(manifest)
    }

    /// Checks what the manifest's fields say of each other: every unit it names lies in a
    /// pack numbered below its next pack number (else the next checkpoint would overwrite
    /// a live pack), and the base was taken no later than the checkpoint.
    fn check_references(&self, path: &Path) -> Result<()> {
        for (kind, unit) in self.units() {
            self.check_unit_pack(path, kind, &unit)?;
        }
        if self.base_seq > self.log_seq {
            return Err(corrupt_at(
                path,
                MANIFEST_BASE_SEQ_OFFSET,
                format!(
                    "the base was taken at log record {}, after the checkpoint's last record {}",
                    self.base_seq, self.log_seq
                ),
            ));
        }
        Ok(())
    }

    /// Checks that `unit`, named by this manifest (directly or through its base unit), lies
    /// in a pack the manifest's next pack number is above.
    pub(super) fn check_unit_pack(
        &self,
        path: &Path,
        kind: UnitKind,
        unit: &UnitRef,
    ) -> Result<()> {
        if unit.pack == 0 || unit.pack >= self.next_pack {
            return Err(corrupt_at(
                path,
                MANIFEST_NEXT_PACK_OFFSET,
                format!(
                    "a {kind:?} unit lies in pack {}, but the next pack number is {}",
                    unit.pack, self.next_pack
                ),
            ));
        }
        Ok(())
    }

    /// The manifest's fields after its magic and version, up to its checksum.
    fn decode_fields(bytes: &[u8], version: u32) -> Result<Self, BytesError> {
        let mut r = reader(bytes, 0);
        r.take(12, "magic and version")?;
        let flags = r.u32("flags")?;
        if flags & !KNOWN_FLAGS != 0 {
            return Err(r.invalid(
                12,
                "the manifest flags",
                format!("unknown flags {flags:#x}"),
            ));
        }
        let id_kind = match (flags & FLAG_INT_IDS != 0, flags & FLAG_NAME_IDS != 0) {
            (false, false) => None,
            (true, false) => Some(IdKind::Int),
            (false, true) => Some(IdKind::Name),
            (true, true) => {
                return Err(r.invalid(
                    12,
                    "the manifest flags",
                    "both integer and named vertex ids",
                ))
            }
        };
        let mut values = [0u64; 7];
        for v in &mut values {
            *v = r.u64("manifest field")?;
        }
        let dir_id = if version >= FIRST_WITH_ID {
            r.u128("the directory id")?
        } else {
            0
        };
        let base = UnitRef::get(&mut r)?;
        let ids = UnitRef::get(&mut r)?;
        let properties = UnitRef::get(&mut r)?;
        let delta = if flags & FLAG_DELTA != 0 {
            Some(UnitRef::get(&mut r)?)
        } else {
            None
        };
        r.finish("the manifest's last field")?;
        Ok(Self {
            number: values[0],
            log_seq: values[1],
            graph_version: values[2],
            directed: flags & FLAG_DIRECTED != 0,
            weighted: flags & FLAG_WEIGHTED != 0,
            num_vertices: values[3],
            num_arcs: values[4],
            next_pack: values[5],
            base_seq: values[6],
            dir_id,
            id_kind,
            version,
            base,
            ids,
            properties,
            delta,
        })
    }

    /// The kinds of the units the manifest's ids and properties references name: index
    /// units since format 5, whole units before.
    pub(super) fn side_kinds(&self) -> (UnitKind, UnitKind) {
        if self.version >= SUBTREE_UNITS {
            (UnitKind::IdsIndex, UnitKind::PropertiesIndex)
        } else {
            (UnitKind::Ids, UnitKind::Properties)
        }
    }

    /// Every unit the manifest names directly.
    pub(super) fn units(&self) -> impl Iterator<Item = (UnitKind, UnitRef)> + '_ {
        let (ids, properties) = self.side_kinds();
        [
            (UnitKind::Base, self.base),
            (ids, self.ids),
            (properties, self.properties),
        ]
        .into_iter()
        .chain(self.delta.map(|d| (UnitKind::Delta, d)))
    }
}

#[cfg(test)]
mod tests;
