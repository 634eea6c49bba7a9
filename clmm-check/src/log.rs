//! Logging through `tracing` (DESIGN.md §6): with `CLMM_LOG=debug` each
//! execution's end and its events (the trace of the report) are logged under
//! the target `clmm`; `CLMM_LOG=trace` also logs each exploration step. If
//! the program has no `tracing` subscriber, [`init`] installs a minimal one
//! that prints to stderr at the requested level.

use tracing::Level;

/// The level named by `CLMM_LOG` (`error`, `warn`, `info`, `debug`,
/// `trace`), if set.
pub fn level_from_env() -> Option<Level> {
    let v = std::env::var("CLMM_LOG").ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "off" => None,
        "error" => Some(Level::ERROR),
        "warn" => Some(Level::WARN),
        "info" => Some(Level::INFO),
        "trace" => Some(Level::TRACE),
        _ => Some(Level::DEBUG),
    }
}

/// Install a stderr subscriber at `level`, unless one is installed already.
pub fn init(level: Option<Level>) {
    if let Some(level) = level {
        let _ = tracing_subscriber::fmt().with_max_level(level).with_writer(std::io::stderr).with_target(true).try_init();
    }
}
