//! External vertex ids: an integer or a name ([`ExternalId`]), the kind a data directory
//! holds ([`IdKind`]) and how a word of text reads as either, and which names can be
//! written as one word ([`name_problem`]).

use std::fmt;
use std::sync::Arc;

use super::ids::IdMap;

/// A vertex's external id: an integer or a name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExternalId {
    /// An integer id (what graph files use).
    Int(u64),
    /// A string id.
    Name(Arc<str>),
}

impl fmt::Display for ExternalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExternalId::Int(id) => write!(f, "{id}"),
            ExternalId::Name(name) => write!(f, "{name:?}"),
        }
    }
}

impl From<u64> for ExternalId {
    fn from(id: u64) -> Self {
        ExternalId::Int(id)
    }
}

impl From<&str> for ExternalId {
    fn from(name: &str) -> Self {
        ExternalId::Name(name.into())
    }
}

impl From<String> for ExternalId {
    fn from(name: String) -> Self {
        ExternalId::Name(name.into())
    }
}

/// What a directory (or a graph's source) names its vertices by: every vertex an integer,
/// or every vertex a name. A data directory's kind is fixed when it is created, or by its
/// first batch that adds vertices, so that one stray token cannot mix the two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IdKind {
    /// Vertices are `u64` integers (what graph files hold).
    Int,
    /// Vertices are names: every token of an update is a name, digits included.
    Name,
}

impl IdKind {
    /// The kind's name on the command line and in messages: `int` or `name`.
    pub fn name(self) -> &'static str {
        match self {
            IdKind::Int => "int",
            IdKind::Name => "name",
        }
    }

    /// The kind of `id`.
    pub fn of(id: &ExternalId) -> Self {
        match id {
            ExternalId::Int(_) => IdKind::Int,
            ExternalId::Name(_) => IdKind::Name,
        }
    }

    /// The kind the ids of `map` show: [`IdKind::Int`] if no vertex is named,
    /// [`IdKind::Name`] if every vertex is; `None` for no vertices, or for a map that mixes
    /// both (a data directory written before kinds were kept, or a graph built in memory).
    pub fn of_map(map: &IdMap) -> Option<Self> {
        match map.name_count() {
            _ if map.is_empty() => None,
            0 => Some(IdKind::Int),
            named if named == map.len() => Some(IdKind::Name),
            _ => None,
        }
    }

    /// The id a token of update text means under this kind: under [`IdKind::Int`] a
    /// decimal `u64`, under [`IdKind::Name`] the token itself (digits too). `None` if the
    /// token is no integer under [`IdKind::Int`].
    pub fn parse(self, token: &str) -> Option<ExternalId> {
        match self {
            IdKind::Int => parse_int_token(token).map(ExternalId::Int),
            IdKind::Name => Some(ExternalId::Name(token.into())),
        }
    }
}

/// A decimal `u64` as update text writes it: ASCII digits only (no sign), at most
/// `u64::MAX`.
fn parse_int_token(token: &str) -> Option<u64> {
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    token.parse().ok()
}

impl fmt::Display for IdKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for IdKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "int" => Ok(IdKind::Int),
            "name" => Ok(IdKind::Name),
            _ => Err(format!("unknown id kind {text:?}; one of: int, name")),
        }
    }
}

/// Why `name` cannot be a vertex name of text files and data directories, if it cannot:
/// the text formats separate words by whitespace and start comments at `#`, so a name must
/// be a non-empty word without whitespace, `#` or control characters.
pub fn name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("a vertex name cannot be empty")
    } else if name.chars().any(char::is_whitespace) {
        Some("a vertex name cannot hold whitespace (text formats separate words by it)")
    } else if name.contains('#') {
        Some("a vertex name cannot hold `#` (text formats start a comment at it)")
    } else if name.chars().any(char::is_control) {
        Some("a vertex name cannot hold control characters")
    } else {
        None
    }
}

impl ExternalId {
    /// The id as a word of text: the integer in decimal, the name as it is (see
    /// [`name_problem`] for the names that can be written).
    pub fn token(&self) -> std::borrow::Cow<'_, str> {
        match self {
            ExternalId::Int(id) => id.to_string().into(),
            ExternalId::Name(name) => std::borrow::Cow::Borrowed(name),
        }
    }
}
