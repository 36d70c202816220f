//! Counts as people write them for the command-line tools: sizes such as `1e6` or
//! `10_000_000` ([`parse_count`]) and the worker thread count ([`thread_count`]).
//!
//! Both binaries (`packgraph` and `packgraph-bench`) take these the same way; they live
//! here, free of any argument parser, so that neither reaches into the other.

use std::num::NonZeroUsize;

/// A text that is not a count (see [`parse_count`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a count (digits or 1eN): {text:?}")]
pub struct CountError {
    /// The text as given.
    pub text: String,
}

/// Parses a count written as digits (`10000000`, with `_` separators allowed:
/// `10_000_000`) or as a mantissa and a power of ten (`1e7`, `25E2`).
///
/// # Errors
/// [`CountError`] for anything else: a sign, a fraction, an empty text, or a value that
/// does not fit in `usize`.
///
/// # Examples
/// ```
/// use packgraph::io::parse_count;
///
/// assert_eq!(parse_count("1e6"), Ok(1_000_000));
/// assert_eq!(parse_count("10_000"), Ok(10_000));
/// assert!(parse_count("ten").is_err());
/// ```
pub fn parse_count(text: &str) -> Result<usize, CountError> {
    let clean = text.replace('_', "");
    let value = match clean.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => digits(mantissa)
            .zip(digits(exponent).and_then(|e| u32::try_from(e).ok()))
            .and_then(|(m, e)| 10u64.checked_pow(e)?.checked_mul(m)),
        None => digits(&clean),
    };
    value
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| CountError {
            text: text.to_string(),
        })
}

/// `text` as an unsigned integer, if it is only ASCII digits.
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The number of worker threads to run with: `requested` (a `--threads` option) if given,
/// else `RAYON_NUM_THREADS` if it holds a positive number, else one per core.
///
/// The library never configures rayon's global pool; a binary builds its pool with this
/// many threads and runs its work inside it.
pub fn thread_count(requested: Option<NonZeroUsize>) -> usize {
    requested
        .or_else(|| std::env::var("RAYON_NUM_THREADS").ok()?.parse().ok())
        .or_else(|| std::thread::available_parallelism().ok())
        .map_or(1, NonZeroUsize::get)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_parse_in_both_notations() {
        assert_eq!(parse_count("1e6"), Ok(1_000_000));
        assert_eq!(parse_count("10_000"), Ok(10_000));
        assert_eq!(parse_count("25e2"), Ok(2_500));
        assert_eq!(parse_count("7E0"), Ok(7));
        assert_eq!(parse_count("0"), Ok(0));
    }

    #[test]
    fn anything_else_is_an_error_naming_the_text() {
        for text in [
            "1e99", "-3", "+3", "ten", "", "1e", "e3", "1.5e3", "1e-2", "0x10",
        ] {
            let error = parse_count(text).unwrap_err();
            assert_eq!(error.text, text);
            assert!(error.to_string().starts_with("not a count"), "{error}");
        }
    }

    #[test]
    fn a_requested_thread_count_wins() {
        assert_eq!(thread_count(NonZeroUsize::new(3)), 3);
        assert!(thread_count(None) >= 1);
    }
}
