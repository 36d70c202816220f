//! `/run`'s answer bodies, formatted into one buffer: the text `packgraph run` writes
//! ([`AlgoOutput::write_graphalytics`], byte for byte) and the JSON form.
//!
//! An answer has a line or an entry per vertex (262,144 for a Kronecker graph of scale 18),
//! so its cost is per vertex: integers are written by a table of digit pairs, straight into
//! a block's buffer, with no allocation or formatting machinery per line; blocks of
//! vertices are formatted in parallel (in the pool the caller runs in) and joined once.
//! Reals keep the standard library's formatting (the text form must equal `run`'s).

use std::io::Write;

use packgraph::algo::{AlgoOutput, AlgorithmKind, Values, UNREACHED};
use packgraph::graph::{name_problem, ExternalId, IdMap, IntIds, VertexId};
use packgraph::layout::{by_external_id, ids_increase};
use rayon::prelude::*;

use crate::error::ApiError;

/// What the text form writes for a vertex a traversal does not reach (`i64::MAX`, as
/// LDBC Graphalytics does).
const TEXT_UNREACHED: &[u8] = b"9223372036854775807";

/// Vertices per block formatted as one job.
const BLOCK: usize = 1 << 14;

/// The decimal digits of 0..100, two bytes each.
const DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Appends `n` in decimal.
#[inline]
pub(crate) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        digits[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        digits[at] = b'0' + n as u8;
    }
    out.extend_from_slice(&digits[at..]);
}

/// Every vertex's external id, in the form fastest to write.
enum Ids {
    /// Vertex `v` is the integer `first + v`.
    Range(u64),
    /// Every vertex is an integer.
    Ints(IntIds),
    /// Some vertex is named: every external id, in internal order.
    Named(Vec<ExternalId>),
}

impl Ids {
    /// The ids of `ids`.
    fn of(ids: &IdMap) -> Self {
        if let Some((first, _)) = ids.as_range() {
            return Self::Range(first);
        }
        match ids.int_ids() {
            Some(ints) => Self::Ints(ints),
            None => Self::Named(ids.iter().collect()),
        }
    }

    /// Refuses a name that cannot be one word of text ([`name_problem`]: empty, or
    /// holding whitespace, `#` or control characters), as `packgraph run` does.
    fn check_words(&self) -> Result<(), ApiError> {
        let Self::Named(all) = self else {
            return Ok(());
        };
        for id in all {
            if let ExternalId::Name(name) = id {
                if let Some(reason) = name_problem(name) {
                    return Err(ApiError::internal(format!(
                        "vertex {name:?} cannot be written as a word of text: {reason}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Appends vertex `v`'s id as a word of text.
    #[inline]
    fn write_text(&self, v: VertexId, out: &mut Vec<u8>) {
        match self {
            Self::Range(first) => push_u64(out, first + u64::from(v)),
            Self::Ints(ints) => push_u64(out, ints.get(v)),
            Self::Named(all) => match &all[v as usize] {
                ExternalId::Int(n) => push_u64(out, *n),
                ExternalId::Name(name) => out.extend_from_slice(name.as_bytes()),
            },
        }
    }

    /// Appends vertex `v`'s id as a JSON string (an object key).
    #[inline]
    fn write_key(&self, v: VertexId, out: &mut Vec<u8>) {
        match self {
            Self::Named(all) => match &all[v as usize] {
                ExternalId::Int(n) => quoted_u64(out, *n),
                ExternalId::Name(name) => json_string(out, name),
            },
            _ => {
                out.push(b'"');
                self.write_text(v, out);
                out.push(b'"');
            }
        }
    }

    /// Appends vertex `v`'s id as a JSON value: a number, or a string for a name.
    #[inline]
    fn write_json(&self, v: VertexId, out: &mut Vec<u8>) {
        match self {
            Self::Named(all) => match &all[v as usize] {
                ExternalId::Int(n) => push_u64(out, *n),
                ExternalId::Name(name) => json_string(out, name),
            },
            _ => self.write_text(v, out),
        }
    }
}

fn quoted_u64(out: &mut Vec<u8>, n: u64) {
    out.push(b'"');
    push_u64(out, n);
    out.push(b'"');
}

/// Appends `text` as a JSON string, escaped.
fn json_string(out: &mut Vec<u8>, text: &str) {
    // Writing to memory cannot fail, and a string always serializes.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// Formats `len` items in parallel blocks with `item(i, block)`, joined in order, after
/// `head` and before `tail`; `per_item` guesses an item's bytes.
fn in_blocks(
    len: usize,
    per_item: usize,
    head: &[u8],
    tail: &[u8],
    item: impl Fn(usize, &mut Vec<u8>) + Sync,
) -> Vec<u8> {
    let blocks: Vec<Vec<u8>> = (0..len.div_ceil(BLOCK))
        .into_par_iter()
        .map(|b| {
            let end = ((b + 1) * BLOCK).min(len);
            let mut text = Vec::with_capacity((end - b * BLOCK) * per_item);
            for i in b * BLOCK..end {
                item(i, &mut text);
            }
            text
        })
        .collect();
    let total = head.len() + tail.len() + blocks.iter().map(Vec::len).sum::<usize>();
    let mut body = Vec::with_capacity(total);
    body.extend_from_slice(head);
    for block in &blocks {
        body.extend_from_slice(block);
    }
    body.extend_from_slice(tail);
    body
}

/// The output as text, as `packgraph run` writes it: one `id value` line per vertex, in
/// increasing external id order (integers before names).
///
/// # Errors
/// 500 for a vertex name that cannot be one word of text.
pub(crate) fn output_text(output: &AlgoOutput, ids: &IdMap) -> Result<Vec<u8>, ApiError> {
    let words = Ids::of(ids);
    words.check_words()?;
    let order = (!ids_increase(ids)).then(|| by_external_id(ids));
    let values = &output.values;
    let body = in_blocks(ids.len(), 16, b"", b"", |i, out| {
        let v = order.as_ref().map_or(i as VertexId, |order| order[i]);
        words.write_text(v, out);
        out.push(b' ');
        let at = v as usize;
        match values {
            Values::Hops(hops) if hops[at] == UNREACHED => out.extend_from_slice(TEXT_UNREACHED),
            Values::Hops(hops) => push_u64(out, u64::from(hops[at])),
            Values::Reals(reals) => write_real(reals[at], out),
            Values::Labels(labels) => words.write_text(labels[at], out),
            Values::Counts(counts) => push_u64(out, counts[at]),
        }
        out.push(b'\n');
    });
    Ok(body)
}

/// A real as the text form writes it: `Infinity` for an unreached vertex, plain decimals,
/// exponent form for very small or large magnitudes.
fn write_real(x: f64, out: &mut Vec<u8>) {
    // Writing to memory cannot fail.
    let _ = if x == f64::INFINITY {
        out.write_all(b"Infinity")
    } else if x != 0.0 && !(1e-4..1e15).contains(&x.abs()) {
        write!(out, "{x:e}")
    } else {
        write!(out, "{x}")
    };
}

/// The output as a JSON object, `{"version":V,"algorithm":A,"values":{"id":value,…}}`,
/// values keyed by external id in internal order; an unreached vertex's value is `null`.
pub(crate) fn output_json(
    output: &AlgoOutput,
    ids: &IdMap,
    kind: AlgorithmKind,
    version: u64,
) -> Vec<u8> {
    // Names need not be words here: JSON escapes them.
    let words = Ids::of(ids);
    let mut head = Vec::new();
    head.extend_from_slice(b"{\"version\":");
    push_u64(&mut head, version);
    head.extend_from_slice(b",\"algorithm\":");
    json_string(&mut head, kind.name());
    head.extend_from_slice(b",\"values\":{");
    let values = &output.values;
    in_blocks(ids.len(), 20, &head, b"}}\n", |v, out| {
        if v > 0 {
            out.push(b',');
        }
        words.write_key(v as VertexId, out);
        out.push(b':');
        match values {
            Values::Hops(hops) if hops[v] == UNREACHED => out.extend_from_slice(b"null"),
            Values::Hops(hops) => push_u64(out, u64::from(hops[v])),
            Values::Reals(reals) if reals[v].is_finite() => {
                // A finite real always serializes.
                let _ = serde_json::to_writer(&mut *out, &reals[v]);
            }
            Values::Reals(_) => out.extend_from_slice(b"null"),
            Values::Labels(labels) if (labels[v] as usize) < ids.len() => {
                words.write_json(labels[v], out)
            }
            Values::Labels(_) => out.extend_from_slice(b"null"),
            Values::Counts(counts) => push_u64(out, counts[v]),
        }
    })
}

#[cfg(test)]
mod tests {
    use packgraph::graph::{Graph, GraphRead, Update};
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::*;

    /// The JSON form as the server wrote it before, through `serde_json::Value`s: the
    /// oracle of [`output_json`].
    fn json_oracle(output: &AlgoOutput, ids: &IdMap, kind: AlgorithmKind, version: u64) -> String {
        let id_json = |id: ExternalId| match id {
            ExternalId::Int(n) => json!(n),
            ExternalId::Name(name) => json!(&*name),
        };
        let mut text = format!("{{\"version\":{version},\"algorithm\":\"{kind}\",\"values\":{{");
        for (v, id) in ids.iter().enumerate() {
            if v > 0 {
                text.push(',');
            }
            let key = match &id {
                ExternalId::Int(n) => n.to_string(),
                ExternalId::Name(name) => name.to_string(),
            };
            text.push_str(&Value::String(key).to_string());
            text.push(':');
            let value = match &output.values {
                Values::Hops(h) if h[v] == UNREACHED => Value::Null,
                Values::Hops(h) => json!(h[v]),
                Values::Reals(r) if r[v].is_finite() => json!(r[v]),
                Values::Reals(_) => Value::Null,
                Values::Labels(l) => ids.external_id(l[v]).map_or(Value::Null, id_json),
                Values::Counts(c) => json!(c[v]),
            };
            text.push_str(&value.to_string());
        }
        text.push_str("}}\n");
        text
    }

    /// Both forms of `values` on `ids`, each against its oracle: the text against
    /// `packgraph run`'s writer, the JSON against [`json_oracle`].
    fn check(ids: &IdMap, values: Values) {
        let output = AlgoOutput {
            values,
            summary: Vec::new(),
        };
        let mut expected = Vec::new();
        output.write_graphalytics(ids, &mut expected).unwrap();
        let text = output_text(&output, ids).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&text),
            String::from_utf8_lossy(&expected)
        );
        let json = output_json(&output, ids, AlgorithmKind::Bfs, 7);
        let expected = json_oracle(&output, ids, AlgorithmKind::Bfs, 7);
        assert_eq!(String::from_utf8_lossy(&json), expected);
    }

    /// The ids of a graph whose vertices are `ids`, in that order.
    fn id_map(ids: &[ExternalId]) -> IdMap {
        let mut graph = Graph::new(false);
        graph
            .apply(Update::new().add_vertices(ids.iter().cloned()))
            .unwrap();
        assert_eq!(graph.num_vertices(), ids.len());
        graph.ids().clone()
    }

    fn values(n: usize) -> impl Strategy<Value = Values> {
        let hop = prop_oneof![Just(UNREACHED), 0..40u32, any::<u32>()];
        let real = prop_oneof![
            any::<f64>(),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::NAN),
            Just(0.0),
            Just(-0.0),
            1e-6..1e-3f64,
            0.0..1.0f64,
            1e14..1e16f64,
        ];
        let label = 0..n.max(1) as VertexId;
        prop_oneof![
            proptest::collection::vec(hop, n).prop_map(Values::Hops),
            proptest::collection::vec(real, n).prop_map(Values::Reals),
            proptest::collection::vec(label, n).prop_map(Values::Labels),
            proptest::collection::vec(any::<u64>(), n).prop_map(Values::Counts),
        ]
    }

    /// Distinct external ids: integers, and names with characters JSON escapes.
    fn external_ids() -> impl Strategy<Value = Vec<ExternalId>> {
        let id = prop_oneof![
            any::<u64>().prop_map(ExternalId::Int),
            (0..50u64).prop_map(ExternalId::Int),
            "[a-c\"\\\\é\u{1}]{1,3}".prop_map(|name| ExternalId::Name(name.into())),
        ];
        proptest::collection::vec(id, 0..24).prop_map(|mut ids| {
            let mut seen = std::collections::HashSet::new();
            ids.retain(|id| seen.insert(id.clone()));
            ids
        })
    }

    proptest! {
        #[test]
        fn integers_are_written_as_display_writes_them(n in any::<u64>(), small in 0..1000u64) {
            for n in [n, small, u64::MAX, 0] {
                let mut out = b"x".to_vec();
                push_u64(&mut out, n);
                prop_assert_eq!(out, format!("x{n}").into_bytes());
            }
        }

        #[test]
        fn answers_equal_the_oracles(
            (ids, values) in external_ids().prop_flat_map(|ids| {
                let n = ids.len();
                (Just(ids), values(n))
            })
        ) {
            let ids = id_map(&ids);
            // A name the text form cannot write is refused by both.
            let mut expected = Vec::new();
            let output = AlgoOutput { values, summary: Vec::new() };
            match output.write_graphalytics(&ids, &mut expected) {
                Ok(()) => check(&ids, output.values),
                Err(e) => {
                    let error = output_text(&output, &ids).unwrap_err();
                    prop_assert!(error.message.contains("cannot be written"), "{} / {e}", error.message);
                    let json = output_json(&output, &ids, AlgorithmKind::Bfs, 7);
                    prop_assert_eq!(String::from_utf8_lossy(&json), json_oracle(&output, &ids, AlgorithmKind::Bfs, 7));
                }
            }
        }
    }

    /// Answers spanning several blocks, for a range of ids, for integer ids out of order
    /// (written sorted by id) and for names.
    #[test]
    fn answers_over_several_blocks_keep_their_order() {
        let n = 2 * BLOCK + 3;
        let hops = || Values::Hops((0..n as u32).map(|v| v % 7).collect());
        check(&IdMap::range(5, n), hops());
        let shuffled: Vec<u64> = (0..n as u64).map(|i| (i * 7919) % n as u64 * 3).collect();
        let ids = IdMap::from_list(&shuffled).unwrap();
        assert!(ids.as_range().is_none());
        check(&ids, hops());
        check(&ids, Values::Labels((0..n as VertexId).rev().collect()));
        let named: Vec<ExternalId> = (0..n)
            .map(|i| match i % 3 {
                0 => ExternalId::Name(format!("v{i}").into()),
                _ => ExternalId::Int(i as u64),
            })
            .collect();
        check(
            &id_map(&named),
            Values::Reals((0..n).map(|i| i as f64 / 3.0).collect()),
        );
    }
}
