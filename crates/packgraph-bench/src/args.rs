//! What the suites' options share: the `--quick`/`--seed`/`--json` block, count lists such
//! as `1e3,1e4`, and the error of a bad option value (exit code 2).

use clap::Args;
use packgraph::io::{parse_count, CountError};

/// Options every suite takes (flattened into each suite's own).
#[derive(Args, Debug, Clone)]
pub(crate) struct CommonArgs {
    /// A small, fast preset: caps the suite's sizes (the suite's help says at what);
    /// smaller sizes given with it still apply.
    #[arg(long)]
    pub(crate) quick: bool,
    /// Random seed (of the inputs, keys, weights, orders and sources a suite draws).
    #[arg(long, default_value_t = 42)]
    pub(crate) seed: u64,
    /// Print JSON Lines instead of a table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// A comma-separated list of counts; an empty text or `none` is the empty list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CountList(pub(crate) Vec<usize>);

impl std::ops::Deref for CountList {
    type Target = Vec<usize>;

    fn deref(&self) -> &Vec<usize> {
        &self.0
    }
}

impl std::ops::DerefMut for CountList {
    fn deref_mut(&mut self) -> &mut Vec<usize> {
        &mut self.0
    }
}

impl CountList {
    /// Caps every count at `max` (for `--quick`), dropping the repeats this makes.
    pub(crate) fn cap(&mut self, max: usize) {
        for count in &mut self.0 {
            *count = (*count).min(max);
        }
        self.0.dedup();
    }
}

/// Parses a [`CountList`] such as `1e3,1e4` (each item as [`parse_count`]).
pub(crate) fn parse_count_list(text: &str) -> Result<CountList, CountError> {
    let text = text.trim();
    if text.is_empty() || text.eq_ignore_ascii_case("none") {
        return Ok(CountList(Vec::new()));
    }
    text.split(',')
        .map(|item| parse_count(item.trim()))
        .collect::<Result<_, _>>()
        .map(CountList)
}

/// A bad option value found after parsing, or an input file the library cannot read: the
/// library's error for input the user can fix (an argument out of range), so exit code 2.
pub(crate) fn usage_error(reason: String) -> anyhow::Error {
    packgraph::Error::invalid_reason(reason).into()
}

/// Exit code 2 for what the user can fix (a [`usage_error`], or a file the library found
/// malformed), 1 for everything else (the disk, the operating system, a child process).
pub(crate) fn exit_code(error: &anyhow::Error) -> u8 {
    let fixable = |cause: &(dyn std::error::Error + 'static)| {
        (cause.downcast_ref::<packgraph::Error>()).is_some_and(packgraph::Error::is_input_error)
    };
    if error.chain().any(fixable) {
        2
    } else {
        1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_lists_parse_items_and_the_empty_list() {
        assert_eq!(
            parse_count_list("1e3, 10_000"),
            Ok(CountList(vec![1_000, 10_000]))
        );
        assert_eq!(parse_count_list(""), Ok(CountList(Vec::new())));
        assert_eq!(parse_count_list("None"), Ok(CountList(Vec::new())));
        assert!(parse_count_list("1e3,lots").is_err());
    }

    #[test]
    fn capping_a_count_list_drops_the_repeats() {
        let mut list = CountList(vec![10, 1_000, 10_000, 100_000]);
        list.cap(1_000);
        assert_eq!(list, CountList(vec![10, 1_000]));
    }

    #[test]
    fn usage_and_input_errors_exit_2_others_1() {
        assert_eq!(exit_code(&usage_error("bad".into())), 2);
        let wrapped = usage_error("bad".into()).context("reading");
        assert_eq!(exit_code(&wrapped), 2);
        assert_eq!(exit_code(&anyhow::anyhow!("disk full")), 1);
    }
}
