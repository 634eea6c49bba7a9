//! Logging through `tracing` (DESIGN.md §6): with `CLMM_LOG=debug` each
//! execution's end and its events (the trace of the report) are logged under
//! the target `clmm`; `CLMM_LOG=trace` also logs each exploration step. If
//! the program has no `tracing` subscriber, [`init`] installs a minimal one
//! that prints to stderr at the requested level.

use tracing::Level;

/// The level named by `CLMM_LOG` (`error`, `warn`, `info`, `debug`,
/// `trace`; `off` or nothing: none); another value is an error naming the
/// variable ([`crate::config::Config::env_error`]), as for the others.
pub fn level_from_env() -> Result<Option<Level>, String> {
    let Ok(v) = std::env::var("CLMM_LOG") else { return Ok(None) };
    Ok(match v.trim().to_ascii_lowercase().as_str() {
        "" | "0" | "off" => None,
        "error" => Some(Level::ERROR),
        "warn" => Some(Level::WARN),
        "info" => Some(Level::INFO),
        "debug" | "1" | "on" => Some(Level::DEBUG),
        "trace" => Some(Level::TRACE),
        _ => return Err(format!("CLMM_LOG={v:?}: expected off, error, warn, info, debug or trace")),
    })
}

/// Install a stderr subscriber at `level`, unless one is installed already.
pub fn init(level: Option<Level>) {
    if let Some(level) = level {
        let _ = tracing_subscriber::fmt().with_max_level(level).with_writer(std::io::stderr).with_target(true).try_init();
    }
}
