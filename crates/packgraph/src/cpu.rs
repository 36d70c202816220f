//! The CPU features a build was compiled to use, checked where a program starts.
//!
//! x86-64 builds count bits with POPCNT (`.cargo/config.toml` sets `target-feature=+popcnt`):
//! the flat vertex index takes the rank of a vertex's bit in its segment's mask on every
//! lookup. Every x86-64 CPU since 2008–2009 has the instruction; on one without it, the
//! program would stop with SIGILL ("illegal instruction") at the first lookup. The binaries
//! and the Python module call [`check`] first, so that such a CPU gets an error naming what
//! is missing and how to build for it instead.
//!
//! `is_x86_feature_detected!` cannot tell: it answers `true` at compile time for a feature
//! the build enables. The CPU is asked directly (CPUID).

use crate::error::{Error, Result};

/// The features this build requires, as CPUID leaf 1 reports them in ECX: (name, bit).
#[cfg(target_arch = "x86_64")]
const REQUIRED_ECX_1: &[(&str, u32)] = &[
    #[cfg(target_feature = "popcnt")]
    ("popcnt", 23),
];

/// The features of `required` whose bit is clear in `ecx`.
#[cfg(target_arch = "x86_64")]
fn missing_in(ecx: u32, required: &[(&'static str, u32)]) -> Vec<&'static str> {
    required
        .iter()
        .filter(|&&(_, bit)| ecx & (1 << bit) == 0)
        .map(|&(name, _)| name)
        .collect()
}

/// The CPU features this build was compiled to use that the running CPU lacks (none on
/// every x86-64 CPU since 2008–2009, and on other architectures).
pub fn missing_features() -> Vec<&'static str> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: CPUID exists on every x86-64 CPU, and leaf 1 on every one; the intrinsic
        // is only `unsafe` on older compilers (it became safe later, hence the allow).
        #[allow(unused_unsafe)]
        let ecx = unsafe { core::arch::x86_64::__cpuid(1) }.ecx;
        missing_in(ecx, REQUIRED_ECX_1)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec::new()
    }
}

/// The error for `missing` features: what is missing and how to build for such a CPU.
fn unsupported(missing: &[&str]) -> Error {
    Error::unsupported(format!(
        "this CPU lacks {}, which this build of packgraph uses (every x86-64 CPU since \
         2008-2009 has it); build it for this CPU with RUSTFLAGS=\"\" (README, Quick start)",
        missing.join(", ")
    ))
}

/// `Ok` if the running CPU has every feature this build was compiled to use; otherwise
/// [`Error::Unsupported`] naming the missing ones. Call it before any graph work.
pub fn check() -> Result<()> {
    let missing = missing_features();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(unsupported(&missing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_cpu_has_what_the_build_uses() {
        assert_eq!(missing_features(), Vec::<&str>::new());
        check().expect("the CPU that built the tests runs them");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_clear_bit_names_its_feature() {
        let required = [("popcnt", 23), ("sse4.2", 20)];
        assert_eq!(missing_in(0, &required), ["popcnt", "sse4.2"]);
        assert_eq!(missing_in(1 << 20, &required), ["popcnt"]);
        assert!(missing_in(u32::MAX, &required).is_empty());
        // The build's own list: POPCNT, from `.cargo/config.toml`.
        #[cfg(target_feature = "popcnt")]
        assert_eq!(missing_in(0, REQUIRED_ECX_1), ["popcnt"]);
    }

    #[test]
    fn the_error_says_what_is_missing_and_what_to_do() {
        let text = unsupported(&["popcnt"]).to_string();
        assert!(text.contains("this CPU lacks popcnt"), "{text}");
        assert!(text.contains("RUSTFLAGS=\"\""), "{text}");
    }
}
