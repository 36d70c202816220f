//! [`Levels`]: the block sizes of the memory hierarchy HBA lays a graph out for.

use std::fmt;
use std::str::FromStr;

use crate::{Error, Result};

/// Block sizes in bytes, strictly increasing and nonzero: one per level of the memory
/// hierarchy, smallest first. The default is the paper's: a 64 B cache line, a 1 KiB DRAM
/// page, a 4 KiB VM page and a 2 MiB huge page.
///
/// # Examples
/// ```
/// use packgraph::layout::Levels;
///
/// let levels: Levels = "64,1K,4KiB,2M".parse().unwrap();
/// assert_eq!(levels, Levels::default());
/// assert_eq!(levels.bytes(), [64, 1024, 4096, 2 << 20]);
/// let error = "64,32".parse::<Levels>().unwrap_err();
/// assert!(error.to_string().contains("`32`"), "{error}");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels(Vec<u64>);

impl Default for Levels {
    fn default() -> Self {
        Self(vec![64, 1 << 10, 4 << 10, 2 << 20])
    }
}

impl Levels {
    /// Levels of `bytes` (smallest first).
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the value if there is none, one is zero, or they do
    /// not strictly increase.
    pub fn new(bytes: Vec<u64>) -> Result<Self> {
        if bytes.is_empty() {
            return Err(Error::invalid_reason("HBA needs at least one level size"));
        }
        if bytes[0] == 0 {
            return Err(Error::invalid(0, "a level size must be at least one byte"));
        }
        if let Some(w) = bytes.windows(2).find(|w| w[1] <= w[0]) {
            return Err(Error::invalid(
                w[1],
                format!(
                    "level sizes must strictly increase, but {} follows {}",
                    w[1], w[0]
                ),
            ));
        }
        Ok(Self(bytes))
    }

    /// The sizes in bytes, smallest first.
    pub fn bytes(&self) -> &[u64] {
        &self.0
    }
}

/// One size: digits with an optional binary unit (`K`/`KiB`, `M`/`MiB`, `G`/`GiB`, `B`).
fn parse_size(text: &str) -> Result<u64> {
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => {
            return Err(Error::invalid(
                text,
                "not a size (digits with an optional K, M or G)",
            ))
        }
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1 << shift))
        .ok_or_else(|| Error::invalid(text, "not a size (digits with an optional K, M or G)"))
}

impl FromStr for Levels {
    type Err = Error;

    /// Comma-separated sizes such as `64,1K,4K,2M`; an error quotes the size as written.
    fn from_str(text: &str) -> Result<Self> {
        let tokens: Vec<&str> = text.split(',').map(str::trim).collect();
        let bytes = tokens
            .iter()
            .map(|t| parse_size(t))
            .collect::<Result<Vec<_>>>()?;
        if let Some(i) = bytes.iter().position(|&b| b == 0) {
            return Err(Error::invalid(
                tokens[i],
                format!("level sizes must be at least one byte (in `{text}`)"),
            ));
        }
        if let Some(i) = (1..bytes.len()).find(|&i| bytes[i] <= bytes[i - 1]) {
            return Err(Error::invalid(
                tokens[i],
                format!(
                    "level sizes must strictly increase, but it follows `{}` (in `{text}`)",
                    tokens[i - 1]
                ),
            ));
        }
        Self::new(bytes)
    }
}

impl fmt::Display for Levels {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sizes: Vec<String> = self
            .0
            .iter()
            .map(|&b| match b {
                b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}M", b >> 20),
                b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{}K", b >> 10),
                b => b.to_string(),
            })
            .collect();
        f.write_str(&sizes.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_levels_name_the_value() {
        for (text, named) in [
            ("64,0", "`0`"),
            ("0", "`0`"),
            ("4K,1K", "`1K`"),
            ("64,64", "`64`"),
            ("64,x", "`x`"),
            ("64,,1K", "``"),
            ("99999999999999999999", "`99999999999999999999`"),
            ("1T", "`1T`"),
        ] {
            let error = text.parse::<Levels>().unwrap_err();
            assert!(error.is_input_error(), "{text}");
            assert!(error.to_string().contains(named), "{text}: {error}");
        }
    }

    #[test]
    fn levels_print_as_they_parse() {
        for text in ["64,1K,4K,2M", "100,3000"] {
            assert_eq!(text.parse::<Levels>().unwrap().to_string(), text);
        }
    }
}
