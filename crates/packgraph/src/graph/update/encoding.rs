//! The binary encoding of an [`Update`]: what the write-ahead log stores. Byte diagram in
//! `docs/formats/update.md`.
//!
//! ```text
//! version: u8 = 1
//! flags: u8                        bit 0: weights present; bit 1: deletes interleaved;
//!                                  other bits must be 0
//! min_vertices: varint
//! vertices: varint count, then per id: tag u8 (0 = integer, 1 = name),
//!           integer: varint; name: varint length + UTF-8 bytes
//! deletes:  varint count, then edges (below)
//! inserts:  varint count, then edges, then (flag 0) one f64 little-endian per insert
//! (flag 1) per delete, varint: inserts before it minus inserts before the previous delete
//! properties: varint count, then per change: varint name length + UTF-8 name,
//!           varint vertex, tag u8 (0 = remove, 1 = int, 2 = float, 3 = bool, 4 = text),
//!           int: zigzag varint; float: f64 LE; bool: u8 0/1; text: varint length + UTF-8
//! edges: per edge, zigzag varint of (u - previous u), then varint v
//! ```
//!
//! Decoding trusts nothing: every count is checked against the bytes left before anything
//! is allocated, every tag and flag must be known, text must be UTF-8, ids must fit 32 bits,
//! and no byte may follow the last field (the checks of the byte kit,
//! [`crate::codec::bytes`]). Errors are [`Error::Corrupt`](crate::Error::Corrupt) with the
//! offset.

use std::sync::Arc;

use super::{PropertyChange, Update};
use crate::codec::bytes::{ByteReader, ByteWriter, BytesError};
use crate::graph::{ExternalId, PropertyValue, VertexId};
use crate::Result;

/// The version byte [`Update::encode`] writes and [`Update::decode`] reads.
pub const UPDATE_FORMAT_VERSION: u8 = 1;

const FLAG_WEIGHTS: u8 = 1;
/// Some delete follows an insert: each delete's place among the inserts is stored.
const FLAG_INTERLEAVED: u8 = 2;
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

fn put_edges(w: &mut ByteWriter, edges: &[(VertexId, VertexId)]) {
    w.varint(edges.len() as u64);
    let mut previous = 0i64;
    for &(u, v) in edges {
        w.varint(zigzag(i64::from(u) - previous))
            .varint(u64::from(v));
        previous = i64::from(u);
    }
}

fn put_value(w: &mut ByteWriter, value: Option<&PropertyValue>) {
    match value {
        None => w.u8(VALUE_REMOVE),
        Some(PropertyValue::Int(x)) => w.u8(VALUE_INT).varint(zigzag(*x)),
        Some(PropertyValue::Float(x)) => w.u8(VALUE_FLOAT).f64(*x),
        Some(PropertyValue::Bool(x)) => w.u8(VALUE_BOOL).u8(u8::from(*x)),
        Some(PropertyValue::Text(text)) => w.u8(VALUE_TEXT).text(text),
    };
}

impl Update {
    /// The update's bytes (format version [`UPDATE_FORMAT_VERSION`]).
    pub fn encode(&self) -> Vec<u8> {
        let mut w = ByteWriter::with_capacity(16 + 4 * (self.inserts.len() + self.deletes.len()));
        let mut flags = 0;
        if self.weights.is_some() {
            flags |= FLAG_WEIGHTS;
        }
        if !self.deletes_after.is_empty() {
            flags |= FLAG_INTERLEAVED;
        }
        w.u8(UPDATE_FORMAT_VERSION)
            .u8(flags)
            .varint(self.min_vertices as u64)
            .varint(self.vertices.len() as u64);
        for id in &self.vertices {
            match id {
                ExternalId::Int(x) => w.u8(ID_INT).varint(*x),
                ExternalId::Name(name) => w.u8(ID_NAME).text(name),
            };
        }
        put_edges(&mut w, &self.deletes);
        put_edges(&mut w, &self.inserts);
        for &weight in self.weights.iter().flatten() {
            w.f64(weight);
        }
        let mut previous = 0;
        for &after in &self.deletes_after {
            w.varint((after - previous) as u64);
            previous = after;
        }
        w.varint(self.properties.len() as u64);
        for change in &self.properties {
            w.text(&change.name).varint(u64::from(change.vertex));
            put_value(&mut w, change.value.as_ref());
        }
        w.into_vec()
    }

    /// The update encoded in `bytes` (all of them).
    ///
    /// # Errors
    /// [`Error::Corrupt`](crate::Error::Corrupt) naming the byte offset of the first thing
    /// that does not decode: an unknown version, flag or tag, a count past the end, a
    /// truncated or overlong number, an id past 32 bits, text that is not UTF-8, or bytes
    /// after the end.
    pub fn decode(bytes: &[u8]) -> Result<Self> {
        let mut update = Update::new();
        update.decode_into(bytes)?;
        Ok(update)
    }

    /// Replaces this update with the one encoded in `bytes`, as [`Update::decode`] does,
    /// reusing its lists' memory: decoding many records into one `Update` allocates only
    /// while their lists grow.
    ///
    /// # Errors
    /// As [`Update::decode`]; after an error the update's content is unspecified (but
    /// valid to decode into again).
    pub fn decode_into(&mut self, bytes: &[u8]) -> Result<()> {
        read_update(&mut ByteReader::new(bytes), self)
            .map_err(|e| e.into_error(None, "update record: "))
    }
}

type Reader<'a> = ByteReader<&'a [u8]>;

fn read_update(r: &mut Reader<'_>, update: &mut Update) -> Result<(), BytesError> {
    let version = r.u8("the format version")?;
    if version != UPDATE_FORMAT_VERSION {
        return Err(r.invalid(
            0,
            "the format version",
            format!("update format version {version} is not readable (supported: {UPDATE_FORMAT_VERSION})"),
        ));
    }
    let flags = r.u8("the flags")?;
    if flags & !(FLAG_WEIGHTS | FLAG_INTERLEAVED) != 0 {
        return Err(r.invalid(1, "the flags", format!("unknown flags {flags:#04x}")));
    }
    update.min_vertices = r.varint_count(0, "the vertex count")?;
    list_into(r, 2, "the vertex ids", read_id, &mut update.vertices)?;
    read_edges(r, "the deleted edges", &mut update.deletes)?;
    read_edges(r, "the inserted edges", &mut update.inserts)?;
    let mut weights = update.weights.take();
    if flags & FLAG_WEIGHTS != 0 {
        let count = update.inserts.len();
        r.need((count as u64).saturating_mul(8), "the weights")?;
        let weights = weights.get_or_insert_with(Vec::new);
        weights.clear();
        weights.reserve(count);
        for _ in 0..count {
            weights.push(r.f64("a weight")?);
        }
        update.weights = Some(std::mem::take(weights));
    }
    update.deletes_after.clear();
    if flags & FLAG_INTERLEAVED != 0 {
        update.deletes_after = read_places(r, update.deletes.len(), update.inserts.len())?;
    }
    list_into(
        r,
        4,
        "the property changes",
        read_change,
        &mut update.properties,
    )?;
    r.finish("the update")?;
    Ok(())
}

/// The places of `deletes` deletes among `inserts` inserts: gaps that may not pass the end.
fn read_places(
    r: &mut Reader<'_>,
    deletes: usize,
    inserts: usize,
) -> Result<Vec<usize>, BytesError> {
    let mut after = 0usize;
    (0..deletes)
        .map(|_| {
            let at = r.offset();
            let gap = r.varint("a delete's place")?;
            after = usize::try_from(gap)
                .ok()
                .and_then(|gap| after.checked_add(gap))
                .filter(|&a| a <= inserts)
                .ok_or_else(|| {
                    r.invalid(
                        at,
                        "a delete's place",
                        format!("a delete after insert {after} + {gap} of {inserts}"),
                    )
                })?;
            Ok(after)
        })
        .collect()
}

/// A varint count of items of at least `min_item_bytes` each, then the items, in place of
/// `items`' content (its memory reused).
fn list_into<'a, T>(
    r: &mut Reader<'a>,
    min_item_bytes: u64,
    what: &'static str,
    mut item: impl FnMut(&mut Reader<'a>) -> Result<T, BytesError>,
    items: &mut Vec<T>,
) -> Result<(), BytesError> {
    items.clear();
    let count = r.varint_count(min_item_bytes, what)?;
    items.reserve(count);
    for _ in 0..count {
        items.push(item(r)?);
    }
    Ok(())
}

fn read_id(r: &mut Reader<'_>) -> Result<ExternalId, BytesError> {
    let at = r.offset();
    match r.u8("a vertex id tag")? {
        ID_INT => Ok(ExternalId::Int(r.varint("a vertex id")?)),
        ID_NAME => Ok(ExternalId::Name(r.text("a vertex name")?.into())),
        tag => Err(r.invalid(at, "a vertex id", format!("unknown vertex id tag {tag}"))),
    }
}

fn read_vertex(r: &mut Reader<'_>) -> Result<VertexId, BytesError> {
    let at = r.offset();
    let v = r.varint("a vertex")?;
    VertexId::try_from(v)
        .map_err(|_| r.invalid(at, "a vertex", format!("vertex {v} exceeds 32 bits")))
}

fn read_edges(
    r: &mut Reader<'_>,
    what: &'static str,
    edges: &mut Vec<(VertexId, VertexId)>,
) -> Result<(), BytesError> {
    let mut previous = 0i64;
    list_into(
        r,
        2,
        what,
        |r| {
            let at = r.offset();
            let delta = unzigzag(r.varint("an edge source")?);
            let u = previous
                .checked_add(delta)
                .and_then(|u| VertexId::try_from(u).ok())
                .ok_or_else(|| {
                    r.invalid(
                        at,
                        "an edge source",
                        format!("source delta {delta} leaves 32 bits"),
                    )
                })?;
            previous = i64::from(u);
            Ok((u, read_vertex(r)?))
        },
        edges,
    )
}

fn read_change(r: &mut Reader<'_>) -> Result<PropertyChange, BytesError> {
    let name = r.text("a property name")?.to_string();
    let vertex = read_vertex(r)?;
    let at = r.offset();
    let value = match r.u8("a property value tag")? {
        VALUE_REMOVE => None,
        VALUE_INT => Some(PropertyValue::Int(unzigzag(r.varint("an integer value")?))),
        VALUE_FLOAT => Some(PropertyValue::Float(r.f64("a float value")?)),
        VALUE_BOOL => match r.u8("a boolean value")? {
            b @ (0 | 1) => Some(PropertyValue::Bool(b == 1)),
            b => return Err(r.invalid(at + 1, "a boolean value", format!("boolean byte {b}"))),
        },
        VALUE_TEXT => Some(PropertyValue::Text(Arc::from(r.text("a text value")?))),
        tag => {
            return Err(r.invalid(
                at,
                "a property value",
                format!("unknown property value tag {tag}"),
            ))
        }
    };
    Ok(PropertyChange {
        name,
        vertex,
        value,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
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
            proptest::option::of(any::<u64>()),
        )
            .prop_map(
                |(vertices, min_vertices, deletes, inserts, weighted, properties, order)| {
                    let weights = weighted.then(|| {
                        inserts
                            .iter()
                            .map(|&(u, v)| f64::from(u) - f64::from(v) / 3.0)
                            .collect()
                    });
                    let mut update = Update::new();
                    update.vertices = vertices;
                    update.min_vertices = min_vertices;
                    // Places among the inserts from the bits of `order`, sorted.
                    if let (Some(bits), false) = (order, deletes.is_empty()) {
                        let mut places: Vec<usize> = (0..deletes.len())
                            .map(|i| {
                                (bits.rotate_left(i as u32) % (inserts.len() as u64 + 1)) as usize
                            })
                            .collect();
                        places.sort_unstable();
                        update.deletes_after = places;
                    }
                    update.deletes = deletes;
                    update.inserts = inserts;
                    update.weights = weights;
                    update.properties = properties;
                    update
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

        /// Decoding into an update that held others (of every shape, a failed decode
        /// among them) gives what a fresh decode gives.
        #[test]
        fn decode_into_a_used_update_is_decode(a in update(), b in update(), c in update()) {
            let mut reused = Update::new();
            reused.decode_into(&a.encode()).unwrap();
            let bytes = b.encode();
            prop_assert!(reused.decode_into(&bytes[..bytes.len() - 1]).is_err());
            for u in [&c, &a, &b] {
                let bytes = u.encode();
                reused.decode_into(&bytes).unwrap();
                prop_assert!(same(u, &reused));
                prop_assert_eq!(reused.encode(), bytes);
            }
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
    fn interleaved_deletes_set_flag_1_and_store_their_places() {
        let mut update = Update::new();
        update
            .delete_edges(&[(0, 1)])
            .insert_edges(&[(1, 2), (2, 3)])
            .delete_edges(&[(1, 2)]);
        #[rustfmt::skip]
        let want = [
            1, FLAG_INTERLEAVED, 0, 0,
            2, 0, 1, 2, 2,          // deletes (0, 1), (1, 2)
            2, 2, 2, 2, 3,          // inserts (1, 2), (2, 3)
            0, 2,                   // places: before any insert, after both
            0,
        ];
        assert_eq!(update.encode(), want);
        assert_eq!(Update::decode(&want).unwrap(), update);
        // Deletes given first store no places: the bytes of format version 1 before the
        // flag existed.
        let mut first = Update::new();
        first.delete_edges(&[(0, 1)]).insert_edges(&[(1, 2)]);
        assert_eq!(first.encode()[1], 0);
        // A place past the inserts is damage.
        let mut bad = want;
        bad[15] = 3;
        assert!(Update::decode(&bad).is_err());
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
