//! `POST /updates`: a request body as update batches, applied one by one (within the
//! writer's group, [`Backend::apply_group`]) and acknowledged once durable, with `ingest`'s
//! semantics.
//!
//! * `text/plain` (or no content type): the `ingest` line format
//!   ([`packgraph::io::updates`]); `commit` lines separate batches.
//! * `application/json`: one batch `{"insert":[[u,v],[u,v,w],…],"delete":[[u,v],…]}`, the
//!   inserts before the deletes; ids are non-negative integers or strings (a string of
//!   digits names the same vertex as the integer, as in the line format).
//!
//! A bad line or item stops the request: no part of its batch or of any later one is
//! applied, earlier batches stay applied and are acknowledged in the error answer.

use std::fmt::Write;

use axum::http::StatusCode;
use packgraph::graph::ExternalId;
use packgraph::io::updates::{parse_id, UpdateOp, UpdateReader, UpdatesError};
use serde_json::{json, Value};

use crate::backend::{Applied, ApplyBatch, Backend, WriteError};
use crate::error::ApiError;

/// The name errors give the body.
const BODY: &str = "request body";

/// The batches a request applied, and the error that stopped it, if one did.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    pub(crate) acked: Vec<Applied>,
    /// Operations in the acknowledged batches.
    pub(crate) ops: u64,
    pub(crate) error: Option<ApiError>,
}

impl Outcome {
    fn apply(
        &mut self,
        apply: &mut ApplyBatch<'_>,
        ops: &[UpdateOp],
        locate: impl Fn(WriteError) -> ApiError,
    ) {
        match apply(ops) {
            Ok(Some(applied)) => {
                self.acked.push(applied);
                self.ops += ops.len() as u64;
            }
            Ok(None) => {}
            Err(e) => self.error = Some(locate(e)),
        }
    }

    /// Acknowledges every batch with `version`, the one its group was published as.
    pub(crate) fn published_as(&mut self, version: u64) {
        for applied in &mut self.acked {
            applied.version = version;
        }
    }

    /// The answer to a request all of whose batches were acknowledged,
    /// `{"acked":[{"seq":…,"version":…},…]}` and a newline, as [`json_body`] writes
    /// [`Outcome::acked_json`] under `acked`, without building the JSON value first.
    ///
    /// [`json_body`]: crate::error::json_body
    pub(crate) fn acked_body(&self) -> String {
        let mut body = String::with_capacity(16 + 40 * self.acked.len());
        body.push_str("{\"acked\":[");
        for (i, a) in self.acked.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            let _ = write!(body, "{sep}{{\"seq\":{},\"version\":{}}}", a.seq, a.version);
        }
        body.push_str("]}\n");
        body
    }

    /// The acknowledgements as JSON.
    pub(crate) fn acked_json(&self) -> Value {
        let acked: Vec<Value> = self
            .acked
            .iter()
            .map(|a| json!({"seq": a.seq, "version": a.version}))
            .collect();
        Value::Array(acked)
    }
}

/// A write error as an answer; `place` names where the batch came from.
fn write_error(
    error: WriteError,
    place: impl FnOnce(usize) -> (String, &'static str, u64),
) -> ApiError {
    match error {
        WriteError::Unfit(unfit) => {
            let (at, field, index) = place(unfit.op);
            ApiError::bad_request(format!("{at}: `{}`: {}", unfit.value, unfit.reason))
                .with(field, index)
        }
        WriteError::Graph(e) if e.is_input_error() => ApiError::bad_request(e.to_string()),
        WriteError::Graph(e) => ApiError::internal(e.to_string()),
    }
}

/// Applies the batches of a text body in order with `apply` (within a group of `backend`'s),
/// stopping at the first bad line.
pub(crate) fn apply_text(
    backend: &Backend,
    apply: &mut ApplyBatch<'_>,
    body: &[u8],
    max_batch_ops: usize,
) -> Outcome {
    let mut outcome = Outcome::default();
    let reader = UpdateReader::new(body, BODY).max_batch_ops(max_batch_ops);
    // Words are read as the directory's kind of id, as `packgraph ingest` reads them; an
    // empty directory takes its first batch's.
    let mut reader = match backend.store().map(|store| store.id_kind()) {
        Some(Some(kind)) => reader.ids(kind),
        Some(None) => reader.ids_from_first(),
        None => reader,
    };
    while outcome.error.is_none() {
        match reader.next_batch() {
            Ok(Some(batch)) => {
                let lines = &batch.lines;
                outcome.apply(apply, &batch.ops, |e| {
                    let error =
                        write_error(e, |op| (format!("{BODY}:{}", lines[op]), "line", lines[op]));
                    match error.fields.contains_key("line") {
                        true => error,
                        false => error.with("line", batch.commit_line),
                    }
                });
            }
            Ok(None) => break,
            Err(e @ UpdatesError::Syntax { .. }) => {
                let line = e.line();
                outcome.error = Some(ApiError::bad_request(e.to_string()).with("line", line));
            }
            Err(e) => {
                outcome.error = Some(ApiError::bad_request(e.to_string()).with("line", e.line()))
            }
        }
    }
    outcome
}

/// Applies the one batch of a JSON body with `apply` (within a group).
pub(crate) fn apply_json(apply: &mut ApplyBatch<'_>, body: &[u8], max_batch_ops: usize) -> Outcome {
    let mut outcome = Outcome::default();
    let (ops, lists) = match parse_json(body, max_batch_ops) {
        Ok(parsed) => parsed,
        Err(e) => {
            outcome.error = Some(e);
            return outcome;
        }
    };
    outcome.apply(apply, &ops, |e| {
        let list = match &e {
            WriteError::Unfit(unfit) => Some(lists[unfit.op].0),
            WriteError::Graph(_) => None,
        };
        let error = write_error(e, |op| {
            let (list, item) = lists[op];
            (format!("{list} item {item}"), "item", item as u64)
        });
        match list {
            Some(list) => error.with("list", list),
            None => error,
        }
    });
    outcome
}

/// The operations of a JSON batch, each with its list and index there.
type JsonBatch = (Vec<UpdateOp>, Vec<(&'static str, usize)>);

fn parse_json(body: &[u8], max_batch_ops: usize) -> Result<JsonBatch, ApiError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad_request(format!("{BODY}: not JSON: {e}")))?;
    let Value::Object(object) = value else {
        return Err(ApiError::bad_request(
            "the body must be an object {\"insert\":[[u,v],…],\"delete\":[[u,v],…]}",
        ));
    };
    if let Some(key) = object
        .keys()
        .find(|k| !matches!(k.as_str(), "insert" | "delete"))
    {
        return Err(ApiError::bad_request(format!(
            "unknown field `{key}`: the fields are insert and delete"
        )));
    }
    let mut ops = Vec::new();
    let mut places = Vec::new();
    for list in ["insert", "delete"] {
        let items = match object.get(list) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => return Err(ApiError::bad_request(format!("`{list}` must be an array"))),
        };
        for (i, item) in items.iter().enumerate() {
            let bad = |reason: String| {
                ApiError::bad_request(format!("{list} item {i}: {reason}"))
                    .with("item", i as u64)
                    .with("list", list)
            };
            if ops.len() == max_batch_ops {
                return Err(bad(format!(
                    "a batch holds at most {max_batch_ops} operations"
                )));
            }
            ops.push(parse_item(item, list == "insert").map_err(bad)?);
            places.push((list, i));
        }
    }
    Ok((ops, places))
}

/// One item: `[u, v]`, or `[u, v, w]` for an insert.
fn parse_item(item: &Value, insert: bool) -> Result<UpdateOp, String> {
    let shape = match insert {
        true => "an insert is [u, v] or [u, v, weight]",
        false => "a delete is [u, v]",
    };
    let Value::Array(parts) = item else {
        return Err(format!("{shape}, not {item}"));
    };
    match (parts.as_slice(), insert) {
        ([u, v], _) => {
            let (u, v) = (parse_vertex(u)?, parse_vertex(v)?);
            Ok(match insert {
                true => UpdateOp::Insert(u, v, None),
                false => UpdateOp::Delete(u, v),
            })
        }
        ([u, v, w], true) => {
            let weight = w
                .as_f64()
                .filter(|w| w.is_finite())
                .ok_or_else(|| format!("the weight must be a finite number, not {w}"))?;
            Ok(UpdateOp::Insert(
                parse_vertex(u)?,
                parse_vertex(v)?,
                Some(weight),
            ))
        }
        _ => Err(format!("{shape}, not {item}")),
    }
}

/// A vertex id: a non-negative integer or a non-empty string without whitespace.
pub(crate) fn parse_vertex(value: &Value) -> Result<ExternalId, String> {
    match value {
        Value::Number(n) => n
            .as_u64()
            .map(ExternalId::Int)
            .ok_or_else(|| format!("a vertex id must be a non-negative integer or a string, not {n}")),
        Value::String(s) if !s.is_empty() && !s.contains(|c: char| c.is_whitespace() || c == '#') => {
            Ok(parse_id(s))
        }
        other => Err(format!(
            "a vertex id must be a non-negative integer or a string without whitespace or `#`, not {other}"
        )),
    }
}

/// How a body is written, from its content type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BodyKind {
    Text,
    Json,
}

/// The body kind of `content_type`.
///
/// # Errors
/// 415 for any other type.
pub(crate) fn body_kind(content_type: Option<&str>) -> Result<BodyKind, ApiError> {
    // Compared without a lowercased copy: every update request asks.
    let essence = content_type.map(|t| t.split(';').next().unwrap_or("").trim());
    match essence {
        None => Ok(BodyKind::Text),
        Some(t) if t.eq_ignore_ascii_case("text/plain") => Ok(BodyKind::Text),
        Some(t) if t.eq_ignore_ascii_case("application/json") => Ok(BodyKind::Json),
        Some(other) => Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!(
                "content type {}: send text/plain (the ingest line format) or application/json",
                other.to_ascii_lowercase()
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use packgraph::graph::Graph;

    use super::*;

    /// A text body applied as a group of its own.
    fn apply_text(backend: &Backend, body: &[u8], max_batch_ops: usize) -> Outcome {
        let (mut outcome, version) =
            backend.apply_group(|apply| super::apply_text(backend, apply, body, max_batch_ops));
        outcome.published_as(version);
        outcome
    }

    /// A JSON body applied as a group of its own.
    fn apply_json(backend: &Backend, body: &[u8], max_batch_ops: usize) -> Outcome {
        let (mut outcome, version) =
            backend.apply_group(|apply| super::apply_json(apply, body, max_batch_ops));
        outcome.published_as(version);
        outcome
    }

    #[test]
    fn a_bad_line_keeps_earlier_batches_and_drops_its_own() {
        let backend = Backend::memory(Graph::new(false));
        let outcome = apply_text(&backend, b"+ 1 2\ncommit\n+ 2 3\n+ 3\ncommit\n+ 4 5\n", 100);
        assert_eq!(outcome.acked.len(), 1);
        let error = outcome.error.unwrap();
        assert_eq!(error.fields["line"], 4);
        assert_eq!(backend.latest().num_edges(), 1);
    }

    #[test]
    fn a_weight_on_an_unweighted_graph_names_its_line() {
        let backend = Backend::memory(Graph::new(false));
        let outcome = apply_text(&backend, b"+ 1 2\n+ a b 2.5\n", 100);
        assert!(outcome.acked.is_empty());
        let error = outcome.error.unwrap();
        assert_eq!(error.fields["line"], 2);
        assert!(error.message.contains("unweighted"), "{}", error.message);
    }

    #[test]
    fn json_batches_insert_before_they_delete_and_name_bad_items() {
        let backend = Backend::memory(Graph::new(false));
        let body = br#"{"insert":[[1,2],["a",2],["7",1]],"delete":[[1,2]]}"#;
        let outcome = apply_json(&backend, body, 100);
        assert!(outcome.error.is_none());
        assert_eq!(outcome.ops, 4);
        let g = backend.latest();
        assert_eq!((g.num_vertices(), g.num_edges()), (4, 2));
        assert_eq!(g.ids().internal_id(&ExternalId::Int(7)), Some(3));
        for (body, item) in [
            (&br#"{"insert":[[1,2],[1,-2]]}"#[..], 1),
            (br#"{"delete":[[1,2,3]]}"#, 0),
            (br#"{"insert":[[1,2,"x"]]}"#, 0),
            (br#"{"insert":[[1,"a b"]]}"#, 0),
        ] {
            let error = apply_json(&backend, body, 100).error.unwrap();
            assert_eq!(error.fields["item"], item, "{}", error.message);
        }
        for body in [&b"[1]"[..], b"{\"add\":[]}", b"{", b"{\"insert\":3}"] {
            let error = apply_json(&backend, body, 100).error.unwrap();
            assert_eq!(error.status, StatusCode::BAD_REQUEST);
        }
        let error = apply_json(&backend, br#"{"insert":[[1,2],[2,3]]}"#, 1)
            .error
            .unwrap();
        assert_eq!(error.fields["item"], 1);
        assert_eq!(backend.latest().num_edges(), 2);
    }

    #[test]
    fn acked_bodies_are_the_json_of_their_acknowledgements() {
        for count in [0, 1, 3] {
            let outcome = Outcome {
                acked: (1..=count)
                    .map(|i| Applied {
                        seq: i,
                        version: 10 * i + u64::MAX / 2,
                    })
                    .collect(),
                ..Outcome::default()
            };
            let value = json!({ "acked": outcome.acked_json() });
            assert_eq!(outcome.acked_body(), format!("{value}\n"));
        }
    }

    #[test]
    fn content_types_choose_the_format() {
        assert_eq!(body_kind(None).unwrap(), BodyKind::Text);
        assert_eq!(
            body_kind(Some("text/plain; charset=utf-8")).unwrap(),
            BodyKind::Text
        );
        assert_eq!(body_kind(Some("Application/JSON")).unwrap(), BodyKind::Json);
        let error = body_kind(Some("application/xml")).unwrap_err();
        assert_eq!(error.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let error = body_kind(Some("Text/HTML; charset=utf-8")).unwrap_err();
        assert!(
            error.message.starts_with("content type text/html:"),
            "{}",
            error.message
        );
    }
}
