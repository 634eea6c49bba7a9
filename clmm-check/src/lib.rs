//! `clmm-check`: the checker behind clmm (DESIGN.md §2).
//!
//! * [`graph`]: execution graphs (events, po, rf, co, barrier instances).
//! * [`model`]: the OpenCL 2.x consistency model, one module per relation.
//! * [`mod@explore`]: the exploration of execution graphs.
//! * [`runtime`]: coroutines that run the units of execution.
//! * [`report`]: failures and their reports; [`replay`]: replay strings.
//!
//! The user-facing crate talks to the checker only through
//! [`clmm_atomic::backend`] events and [`explore::explore`].

pub mod config;
pub mod dot;
pub mod explore;
pub mod graph;
pub mod ids;
pub mod log;
pub mod model;
pub mod progress;
pub mod replay;
pub mod report;
pub mod runtime;
pub mod watchdog;

pub use config::{Config, Shard};
pub use explore::{explore, BlockedBy, Control, Delivery, ExecutionEnd, FinalLoc, Position, Stats};
pub use model::{ScModel, Semantics};
pub use report::{Failure, FailureKind};

/// Whether this crate was built with optimisations (an opt-level above 0,
/// `build.rs`). A test built in cargo's default `dev` profile builds the
/// checker at opt-level 0 too, and explores about 12 times slower (the
/// work-stealing example of `examples/`: 14.1 s against 1.15 s); clmm
/// then says so after a run of a second or more ([`unoptimized_note`]).
pub const OPTIMIZED: bool = !cfg!(clmm_unoptimized);

/// The note a run that took `elapsed` prints when the checker was built
/// without optimisations (`optimized` false), with the lines of
/// `Cargo.toml` that build it optimised in the `dev` profile; `None` for
/// an optimised checker or a run under a second.
pub fn unoptimized_note(elapsed: std::time::Duration, optimized: bool) -> Option<String> {
    (!optimized && elapsed >= std::time::Duration::from_secs(1)).then(|| {
        format!(
            "this run took {elapsed:.1?} with clmm's checker built without optimisations (opt-level 0, cargo's dev profile), \
             about 12 times slower than optimised: add `[profile.dev.package.clmm-check] opt-level = 3` and \
             `[profile.dev.package.clmm-atomic] opt-level = 3` to your Cargo.toml (your own code stays a debug build), \
             or run `cargo test --release`"
        )
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[test]
    fn an_unoptimised_checker_says_how_to_build_it_optimised() {
        let note = super::unoptimized_note(Duration::from_millis(14_100), false).expect("a note");
        assert!(note.starts_with("this run took 14.1s with clmm's checker built without optimisations"), "{note}");
        assert!(note.contains("`[profile.dev.package.clmm-check] opt-level = 3`") && note.contains("cargo test --release"), "{note}");
        assert_eq!(super::unoptimized_note(Duration::from_millis(999), false), None, "a short run");
        assert_eq!(super::unoptimized_note(Duration::from_secs(60), true), None, "an optimised checker");
    }
}
