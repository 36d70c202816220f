//! Every error as a JSON answer `{"error":"…"}` with a fitting status, and extra fields
//! where they help (`line`, `item`, `acked`, `valid`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value};

/// An error answer.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    /// More fields of the JSON object.
    pub(crate) fields: Map<String, Value>,
    /// Seconds for `Retry-After` (503).
    pub(crate) retry_after: Option<u32>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            fields: Map::new(),
            retry_after: None,
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    pub(crate) fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// Adds the field `name` to the answer.
    pub(crate) fn with(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(name.to_string(), value.into());
        self
    }

    /// A core error: bad input is the client's (400), the rest is the server's (500).
    pub(crate) fn from_core(error: &packgraph::Error) -> Self {
        match error {
            packgraph::Error::VertexNotFound { .. } => Self::not_found(error.to_string()),
            e if e.is_input_error() => Self::bad_request(e.to_string()),
            e => Self::internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut object = Map::new();
        object.insert("error".into(), json!(self.message));
        object.extend(self.fields);
        let mut response = (self.status, json_body(&Value::Object(object))).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// A JSON answer body with its content type.
pub(crate) fn json_body(value: &Value) -> Response {
    json_text(format!("{value}\n"))
}

/// An answer of JSON text already written, with its content type.
pub(crate) fn json_text(text: String) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        text,
    )
        .into_response()
}
