//! Configuration of a run. Environment variables (`CLMM_*`) are read in one
//! place, [`Config::from_env`], and documented in the README.

use crate::model::{ScModel, Semantics};

/// How a run explores and what it checks.
#[derive(Clone, Debug)]
pub struct Config {
    /// The semantics (SC model, compatibility rules).
    pub sem: Semantics,
    /// Events a unit may produce in one execution before the run reports a
    /// possible livelock (`CLMM_MAX_STEPS`).
    pub max_steps: u32,
    /// Coroutine stack size in bytes (`CLMM_STACK_SIZE`).
    pub stack_size: usize,
    /// Stop after this many executions (complete + blocked), if set
    /// (`CLMM_MAX_EXECUTIONS`); the run then reports that it was cut short.
    pub max_executions: Option<u64>,
    /// Stop at the first failure (`check`), or explore everything
    /// (`explore`).
    pub stop_at_first_failure: bool,
    /// Compatibility: a work-item that finishes while others wait at a
    /// barrier is not divergence (the reference's partial participation).
    pub barrier_partial: bool,
    /// Compatibility: barriers are matched by identity (label) per dynamic
    /// instance rather than by order.
    pub barrier_by_id: bool,
    /// Compatibility: local memory may be accessed from another work-group.
    pub local_across_groups: bool,
    /// Replay exactly this execution (`CLMM_REPLAY`).
    pub replay: Option<String>,
    /// Report the final state of memory after each execution (the litmus
    /// front end's final conditions).
    pub collect_memory: bool,
    /// Write the failing execution as Graphviz DOT into this directory
    /// (`CLMM_DOT=<dir>`).
    pub dot_dir: Option<std::path::PathBuf>,
    /// Show a progress line (`CLMM_PROGRESS=1`; by default when stderr is a
    /// terminal).
    pub progress: Option<bool>,
    /// Print the statistics of each run to stderr (`CLMM_STATS=1`).
    pub print_stats: bool,
    /// The `tracing` level of the execution log (`CLMM_LOG`).
    pub log: Option<tracing::Level>,
    /// Debug: fingerprint every complete execution graph and count those
    /// explored more than once in [`crate::Stats::duplicates`]
    /// (`CLMM_CHECK_UNIQUE=1`).
    pub check_unique: bool,
    /// Debug: print each exploration step of the explorer to stderr
    /// (`CLMM_DEBUG_EXPLORE=1`).
    pub debug_explore: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sem: Semantics::default(),
            max_steps: 10_000,
            stack_size: 1 << 20,
            max_executions: None,
            stop_at_first_failure: true,
            barrier_partial: false,
            barrier_by_id: false,
            local_across_groups: false,
            replay: None,
            collect_memory: false,
            check_unique: false,
            debug_explore: false,
            dot_dir: None,
            progress: None,
            print_stats: false,
            log: None,
        }
    }
}

impl Config {
    /// The defaults overridden by the `CLMM_*` environment variables:
    /// `CLMM_SC_MODEL` (`spec` or `scoped`), `CLMM_MAX_STEPS`,
    /// `CLMM_STACK_SIZE`, `CLMM_MAX_EXECUTIONS`, `CLMM_REPLAY`,
    /// `CLMM_CHECK_UNIQUE`, `CLMM_DEBUG_EXPLORE`, `CLMM_DOT`,
    /// `CLMM_PROGRESS`, `CLMM_STATS` (and `CLMM_LOG`, read by
    /// [`crate::log::level_from_env`]).
    pub fn from_env() -> Config {
        let mut c = Config::default();
        let num = |k: &str| std::env::var(k).ok().and_then(|v| v.trim().parse::<u64>().ok());
        if let Ok(v) = std::env::var("CLMM_SC_MODEL") {
            c.sem.sc = match v.trim() {
                "scoped" => ScModel::Scoped,
                _ => ScModel::Spec,
            };
        }
        if let Some(n) = num("CLMM_MAX_STEPS") {
            c.max_steps = n as u32;
        }
        if let Some(n) = num("CLMM_STACK_SIZE") {
            c.stack_size = n as usize;
        }
        c.max_executions = num("CLMM_MAX_EXECUTIONS");
        c.replay = std::env::var("CLMM_REPLAY").ok().filter(|s| !s.trim().is_empty());
        let flag = |k: &str| std::env::var(k).is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"));
        c.check_unique = flag("CLMM_CHECK_UNIQUE");
        c.dot_dir = std::env::var_os("CLMM_DOT").filter(|d| !d.is_empty()).map(Into::into);
        c.progress = std::env::var("CLMM_PROGRESS").ok().map(|v| !matches!(v.trim(), "" | "0" | "false"));
        c.print_stats = flag("CLMM_STATS");
        c.log = crate::log::level_from_env();
        c.debug_explore = flag("CLMM_DEBUG_EXPLORE");
        c
    }
}
