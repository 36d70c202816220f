//! The binary encoding of an [`Update`]: what the write-ahead log stores. Byte diagram in
//! `docs/formats/update.md`.
//!
//! ```text
//! version: u8 = 1
//! flags: u8                        bit 0: weights present; other bits must be 0
//! min_vertices: varint
//! vertices: varint count, then per id: tag u8 (0 = integer, 1 = name),
//!           integer: varint; name: varint length + UTF-8 bytes
//! deletes:  varint count, then edges (below)
//! inserts:  varint count, then edges, then (flag 0) one f64 little-endian per insert
//! properties: varint count, then per change: varint name length + UTF-8 name,
//!           varint vertex, tag u8 (0 = remove, 1 = int, 2 = float, 3 = bool, 4 = text),
//!           int: zigzag varint; float: f64 LE; bool: u8 0/1; text: varint length + UTF-8
//! edges: per edge, zigzag varint of (u - previous u), then varint v
//! ```
//!
//! Decoding trusts nothing: every count is checked against the bytes left before anything
//! is allocated, every tag and flag must be known, text must be UTF-8, ids must fit 32 bits,
//! and no byte may follow the last field. Errors are [`Error::Corrupt`] with the offset.

use std::sync::Arc;

use super::{PropertyChange, Update};
use crate::codec::varint;
use crate::graph::{ExternalId, PropertyValue, VertexId};
use crate::{Error, Result};

/// The version byte [`Update::encode`] writes and [`Update::decode`] reads.
pub const UPDATE_FORMAT_VERSION: u8 = 1;

const FLAG_WEIGHTS: u8 = 1;
const ID_INT: u8 = 0;
const ID_NAME: u8 = 1;
const VALUE_REMOVE: u8 = 0;
const VALUE_INT: u8 = 1;
const VALUE_FLOAT: u8 = 2;
const VALUE_BOOL: u8 = 3;
const VALUE_TEXT: u8 = 4;

fn zigzag(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

fn unzigzag(x: u64) -> i64 {
    ((x >> 1) as i64) ^ -((x & 1) as i64)
}

fn put(out: &mut Vec<u8>, x: u64) {
    varint::encode_to_vec(x, out);
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    put(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_edges(out: &mut Vec<u8>, edges: &[(VertexId, VertexId)]) {
    put(out, edges.len() as u64);
    let mut previous = 0i64;
    for &(u, v) in edges {
        put(out, zigzag(i64::from(u) - previous));
        put(out, u64::from(v));
        previous = i64::from(u);
    }
}

impl Update {
    /// The update's bytes (format version [`UPDATE_FORMAT_VERSION`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(16 + 4 * (self.inserts.len() + self.deletes.len()));
        out.push(UPDATE_FORMAT_VERSION);
        out.push(if self.weights.is_some() {
            FLAG_WEIGHTS
        } else {
            0
        });
        put(&mut out, self.min_vertices as u64);
        put(&mut out, self.vertices.len() as u64);
        for id in &self.vertices {
            match id {
                ExternalId::Int(x) => {
                    out.push(ID_INT);
                    put(&mut out, *x);
                }
                ExternalId::Name(name) => {
                    out.push(ID_NAME);
                    put_text(&mut out, name);
                }
            }
        }
        put_edges(&mut out, &self.deletes);
        put_edges(&mut out, &self.inserts);
        for w in self.weights.iter().flatten() {
            out.extend_from_slice(&w.to_le_bytes());
        }
        put(&mut out, self.properties.len() as u64);
        for change in &self.properties {
            put_text(&mut out, &change.name);
            put(&mut out, u64::from(change.vertex));
            match &change.value {
                None => out.push(VALUE_REMOVE),
                Some(PropertyValue::Int(x)) => {
                    out.push(VALUE_INT);
                    put(&mut out, zigzag(*x));
                }
                Some(PropertyValue::Float(x)) => {
                    out.push(VALUE_FLOAT);
                    out.extend_from_slice(&x.to_le_bytes());
                }
                Some(PropertyValue::Bool(x)) => {
                    out.push(VALUE_BOOL);
                    out.push(u8::from(*x));
                }
                Some(PropertyValue::Text(text)) => {
                    out.push(VALUE_TEXT);
                    put_text(&mut out, text);
                }
            }
        }
        out
    }

    /// The update encoded in `bytes` (all of them).
    ///
    /// # Errors
    /// [`Error::Corrupt`] naming the byte offset of the first thing that does not decode:
    /// an unknown version, flag or tag, a count past the end, a truncated or overlong
    /// number, an id past 32 bits, text that is not UTF-8, or bytes after the end.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader { bytes, pos: 0 };
        let version = r.byte()?;
        if version != UPDATE_FORMAT_VERSION {
            return Err(r.error(
                0,
                format!("update format version {version} is not readable (supported: {UPDATE_FORMAT_VERSION})"),
            ));
        }
        let flags = r.byte()?;
        if flags & !FLAG_WEIGHTS != 0 {
            return Err(r.error(1, format!("unknown flags {flags:#04x}")));
        }
        let min_vertices = r.count(0)?;
        let vertices = r.list(2, |r| {
            let at = r.pos;
            match r.byte()? {
                ID_INT => Ok(ExternalId::Int(r.varint()?)),
                ID_NAME => Ok(ExternalId::Name(r.text()?.into())),
                tag => Err(r.error(at, format!("unknown vertex id tag {tag}"))),
            }
        })?;
        let deletes = r.edges()?;
        let inserts = r.edges()?;
        let weights = if flags & FLAG_WEIGHTS != 0 {
            r.need(inserts.len().saturating_mul(8))?;
            Some((0..inserts.len()).map(|_| r.f64()).collect::<Result<_>>()?)
        } else {
            None
        };
        let properties = r.list(4, |r| {
            let name = r.text()?.to_string();
            let vertex = r.vertex()?;
            let at = r.pos;
            let value = match r.byte()? {
                VALUE_REMOVE => None,
                VALUE_INT => Some(PropertyValue::Int(unzigzag(r.varint()?))),
                VALUE_FLOAT => Some(PropertyValue::Float(r.f64()?)),
                VALUE_BOOL => match r.byte()? {
                    b @ (0 | 1) => Some(PropertyValue::Bool(b == 1)),
                    b => return Err(r.error(at + 1, format!("boolean byte {b}"))),
                },
                VALUE_TEXT => Some(PropertyValue::Text(Arc::from(r.text()?))),
                tag => return Err(r.error(at, format!("unknown property value tag {tag}"))),
            };
            Ok(PropertyChange {
                name,
                vertex,
                value,
            })
        })?;
        if r.pos != bytes.len() {
            return Err(r.error(
                r.pos,
                format!("{} bytes after the update", bytes.len() - r.pos),
            ));
        }
        Ok(Self {
            vertices,
            min_vertices,
            deletes,
            inserts,
            weights,
            properties,
        })
    }
}

/// A cursor over untrusted bytes.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, offset: usize, reason: String) -> Error {
        Error::Corrupt {
            path: None,
            offset: Some(offset as u64),
            reason: format!("update record: {reason}"),
        }
    }

    fn need(&self, len: usize) -> Result<()> {
        if self.bytes.len() - self.pos < len {
            return Err(self.error(
                self.pos,
                format!("needs {len} bytes, {} left", self.bytes.len() - self.pos),
            ));
        }
        Ok(())
    }

    fn byte(&mut self) -> Result<u8> {
        self.need(1)?;
        self.pos += 1;
        Ok(self.bytes[self.pos - 1])
    }

    fn varint(&mut self) -> Result<u64> {
        let (value, len) = varint::decode(self.bytes, self.pos).map_err(|e| {
            let mut error = Error::from(e);
            if let Error::Corrupt { reason, .. } = &mut error {
                *reason = format!("update record: {reason}");
            }
            error
        })?;
        self.pos += len;
        Ok(value)
    }

    /// A count of items of at least `min_bytes` each, checked against the bytes left.
    fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let at = self.pos;
        let count = self.varint()?;
        let left = (self.bytes.len() - self.pos) as u64;
        match usize::try_from(count) {
            Ok(count)
                if (count as u64)
                    .checked_mul(min_bytes as u64)
                    .is_some_and(|bytes| bytes <= left) =>
            {
                Ok(count)
            }
            _ => Err(self.error(at, format!("count {count} runs past the end"))),
        }
    }

    fn list<T>(
        &mut self,
        min_item_bytes: usize,
        mut item: impl FnMut(&mut Self) -> Result<T>,
    ) -> Result<Vec<T>> {
        let count = self.count(min_item_bytes)?;
        (0..count).map(|_| item(self)).collect()
    }

    fn vertex(&mut self) -> Result<VertexId> {
        let at = self.pos;
        let v = self.varint()?;
        VertexId::try_from(v).map_err(|_| self.error(at, format!("vertex {v} exceeds 32 bits")))
    }

    fn edges(&mut self) -> Result<Vec<(VertexId, VertexId)>> {
        let mut previous = 0i64;
        self.list(2, |r| {
            let at = r.pos;
            let delta = unzigzag(r.varint()?);
            let u = previous
                .checked_add(delta)
                .and_then(|u| VertexId::try_from(u).ok())
                .ok_or_else(|| r.error(at, format!("source delta {delta} leaves 32 bits")))?;
            previous = i64::from(u);
            Ok((u, r.vertex()?))
        })
    }

    fn text(&mut self) -> Result<&str> {
        let len = self.count(1)?;
        let at = self.pos;
        self.pos += len;
        std::str::from_utf8(&self.bytes[at..self.pos])
            .map_err(|e| self.error(at, format!("text is not UTF-8 ({e})")))
    }

    fn f64(&mut self) -> Result<f64> {
        self.need(8)?;
        let bytes: [u8; 8] = self.bytes[self.pos..self.pos + 8]
            .try_into()
            .expect("8 bytes were checked");
        self.pos += 8;
        Ok(f64::from_le_bytes(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = Option<PropertyValue>> {
        prop_oneof![
            Just(None),
            any::<i64>().prop_map(|x| Some(PropertyValue::Int(x))),
            any::<f64>().prop_map(|x| Some(PropertyValue::Float(x))),
            any::<bool>().prop_map(|x| Some(PropertyValue::Bool(x))),
            "\\PC{0,12}".prop_map(|x| Some(PropertyValue::Text(x.as_str().into()))),
        ]
    }

    fn update() -> impl Strategy<Value = Update> {
        let id = prop_oneof![
            any::<u64>().prop_map(ExternalId::Int),
            "\\PC{0,10}".prop_map(ExternalId::from),
        ];
        let edges = proptest::collection::vec((any::<u32>(), any::<u32>()), 0..40);
        let change = ("[a-z]{0,6}", any::<u32>(), value()).prop_map(|(name, vertex, value)| {
            PropertyChange {
                name,
                vertex,
                value,
            }
        });
        (
            proptest::collection::vec(id, 0..8),
            0usize..1 << 40,
            edges.clone(),
            edges,
            any::<bool>(),
            proptest::collection::vec(change, 0..8),
        )
            .prop_map(
                |(vertices, min_vertices, deletes, inserts, weighted, properties)| {
                    let weights = weighted.then(|| {
                        inserts
                            .iter()
                            .map(|&(u, v)| f64::from(u) - f64::from(v) / 3.0)
                            .collect()
                    });
                    Update {
                        vertices,
                        min_vertices,
                        deletes,
                        inserts,
                        weights,
                        properties,
                    }
                },
            )
    }

    /// Equality that treats NaN payloads bit for bit (a NaN property must survive).
    fn same(a: &Update, b: &Update) -> bool {
        a.encode() == b.encode()
    }

    proptest! {
        #[test]
        fn decode_inverts_encode(u in update()) {
            let bytes = u.encode();
            let back = Update::decode(&bytes).unwrap();
            prop_assert!(same(&u, &back));
            prop_assert_eq!(back.encode(), bytes);
        }

        #[test]
        fn every_truncation_is_an_error(u in update()) {
            let bytes = u.encode();
            for len in 0..bytes.len() {
                prop_assert!(Update::decode(&bytes[..len]).is_err(), "prefix of {len} bytes decoded");
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Update::decode(&bytes);
        }

        #[test]
        fn flipped_bytes_never_panic(u in update(), at in any::<prop::sample::Index>(), bit in 0u8..8) {
            let mut bytes = u.encode();
            let i = at.index(bytes.len());
            bytes[i] ^= 1 << bit;
            let _ = Update::decode(&bytes);
        }
    }

    #[test]
    fn the_empty_update_is_seven_bytes() {
        assert_eq!(Update::new().encode(), [1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            Update::decode(&[1, 0, 0, 0, 0, 0, 0]).unwrap(),
            Update::new()
        );
    }

    #[test]
    fn errors_name_the_offset() {
        let mut bytes = Update::from_edges(vec![(1, 2)]).encode();
        bytes.push(0);
        let error = Update::decode(&bytes).unwrap_err();
        assert!(
            matches!(error, Error::Corrupt { offset: Some(o), .. } if o as usize == bytes.len() - 1)
        );
        let error = Update::decode(&[2]).unwrap_err();
        assert!(error.to_string().contains("version 2"), "{error}");
        let huge_count = [1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(Update::decode(&huge_count)
            .unwrap_err()
            .to_string()
            .contains("runs past the end"));
        // A count near 2^64: its bytes overflow u64, still an error (not a wrapped product).
        let overflowing = [
            1, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        assert!(Update::decode(&overflowing)
            .unwrap_err()
            .to_string()
            .contains("runs past the end"));
    }
}
