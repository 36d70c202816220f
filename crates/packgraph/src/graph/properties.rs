//! Per-vertex properties: named columns of values. Each column is a persistent radix tree
//! ([`Part`]) keyed by internal vertex id (big-endian, so a column iterates in vertex
//! order), and the columns sit in one more tree keyed by name. Cloning is O(1), so every
//! [`Snapshot`](super::Snapshot) reads the properties of its own version; a write copies
//! only the nodes on its path that a snapshot still holds.

use std::fmt;
use std::sync::Arc;

use crate::graph::VertexId;
use crate::part::Part;

/// A property value.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    /// A signed integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Text(Arc<str>),
}

impl fmt::Display for PropertyValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PropertyValue::Int(x) => write!(f, "{x}"),
            PropertyValue::Float(x) => write!(f, "{x}"),
            PropertyValue::Bool(x) => write!(f, "{x}"),
            PropertyValue::Text(x) => write!(f, "{x}"),
        }
    }
}

impl From<i64> for PropertyValue {
    fn from(x: i64) -> Self {
        PropertyValue::Int(x)
    }
}

impl From<f64> for PropertyValue {
    fn from(x: f64) -> Self {
        PropertyValue::Float(x)
    }
}

impl From<bool> for PropertyValue {
    fn from(x: bool) -> Self {
        PropertyValue::Bool(x)
    }
}

impl From<&str> for PropertyValue {
    fn from(x: &str) -> Self {
        PropertyValue::Text(x.into())
    }
}

/// The property columns of a graph version.
#[derive(Clone, Default)]
pub struct Properties {
    columns: Part<Part<PropertyValue>>,
}

impl fmt::Debug for Properties {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(
                self.columns
                    .iter()
                    .map(|(name, column)| (String::from_utf8_lossy(name), column.len())),
            )
            .finish()
    }
}

impl Properties {
    /// The value of property `name` of vertex `v`.
    pub fn get(&self, name: &str, v: VertexId) -> Option<&PropertyValue> {
        self.columns.get(name.as_bytes())?.get(&v.to_be_bytes())
    }

    /// The column `name`, creating it if absent.
    fn column_mut(&mut self, name: &str) -> &mut Part<PropertyValue> {
        if !self.columns.contains_key(name.as_bytes()) {
            self.columns.insert(name.as_bytes(), Part::new());
        }
        self.columns
            .get_mut(name.as_bytes())
            .expect("the column was just made")
    }

    /// Sets property `name` of many vertices (of a vertex given twice the last value wins);
    /// returns how many vertices had no value before.
    pub(crate) fn set_batch(
        &mut self,
        name: &str,
        items: impl IntoIterator<Item = (VertexId, PropertyValue)>,
    ) -> usize {
        let mut items = items
            .into_iter()
            .map(|(v, value)| (v.to_be_bytes(), value))
            .peekable();
        if items.peek().is_none() {
            return 0; // no empty column
        }
        self.column_mut(name).insert_batch(items)
    }

    /// Removes property `name` of vertex `v`; returns its value. A column left empty goes.
    pub(crate) fn remove(&mut self, name: &str, v: VertexId) -> Option<PropertyValue> {
        let column = self.columns.get_mut(name.as_bytes())?;
        let old = column.remove(&v.to_be_bytes());
        if column.is_empty() {
            self.columns.remove(name.as_bytes());
        }
        old
    }

    /// Checks the tree of columns and each column's tree.
    pub(crate) fn check_invariants(&self) -> crate::Result<()> {
        self.columns.check_invariants()?;
        for (_, column) in self.columns.iter() {
            column.check_invariants()?;
        }
        Ok(())
    }

    /// The names of the columns, in byte order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.columns
            .iter()
            .map(|(name, _)| std::str::from_utf8(name).expect("names are stored from &str"))
    }

    /// The values of column `name` in vertex order; `None` if there is no such column.
    pub fn column(
        &self,
        name: &str,
    ) -> Option<impl Iterator<Item = (VertexId, &PropertyValue)> + '_> {
        let column = self.columns.get(name.as_bytes())?;
        Some(column.iter().map(|(key, value)| {
            let key: [u8; 4] = key.try_into().expect("vertex keys are 4 bytes");
            (VertexId::from_be_bytes(key), value)
        }))
    }

    /// Vertices with a value in column `name`.
    pub fn count(&self, name: &str) -> usize {
        self.columns.get(name.as_bytes()).map_or(0, Part::len)
    }
}
