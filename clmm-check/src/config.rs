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
    /// Compatibility (herd): plain loads also read these values out of
    /// thin air, from a write another work-item has not produced yet and
    /// must produce later (a cycle through control dependencies, which the
    /// `.cat` model allows and clmm's own semantics does not: Deviation 6
    /// of `model`). The litmus front end passes the test's constants.
    pub thin_air: Option<std::sync::Arc<[u64]>>,
    /// How deep load-buffering speculations may chain before the run stops
    /// with [`crate::FailureKind::ExplorationLimit`] (default 32). Each
    /// speculation on a write that depends on earlier promises is one level
    /// deeper than they are (a unit whose `n` reads read `n` writes that
    /// depend on them chains `n - 1` deep); the deepest chain in clmm's
    /// tests is 5. The limit turns speculations that would feed each other
    /// without end into a clear failure instead of a hang.
    pub nesting_limit: u8,
    /// A compare-exchange that fails speculates as a load does: it may
    /// read a write porf-after it, which some explored execution produced
    /// and the rerun must produce again (on by default;
    /// `CLMM_SPECULATE_CAS=0` turns it off). Off, load buffering whose
    /// cycle needs a failing compare-exchange to read such a write is not
    /// explored (Deviation 7 of `model`), and a run that met such a
    /// compare-exchange says so (`Stats::cas_cycles_unexplored`, a note on
    /// stderr); on, it is, and CAS retry loops
    /// pay for it in speculative runs that end blocked, except on a
    /// kernel's only atomic location, where no cycle can pass
    /// (`explore::Engine::coherence_isolated`): the hash table of
    /// `examples/` 20 blocked runs become 732 (session 36), the
    /// work-stealing kernel 575 become 1,915 (0.20 to 0.43 s, session
    /// 35), the Treiber stack and the spin locks of the benchmarks none.
    pub speculate_compare_exchange: bool,
    /// The read part of an RMW, or of a compare-exchange that succeeds,
    /// speculates as a load does (off by default; `CLMM_SPECULATE_RMW=1`
    /// turns it on):
    /// it reads a write porf-after it, and its write part takes a place
    /// in coherence of its own, where the promised write goes right
    /// before it once produced (O-Rmw). Off, load buffering whose cycle
    /// runs through RMW reads alone is not explored (Deviation 7 of
    /// `model`); on, it is, and only on writes an RMW read reaches through
    /// RMW reads with an rf edge on another location: the kernels of
    /// `examples/` pay little for it (the work-stealing deque's 1,918
    /// blocked runs become 2,024), but random programs with many RMWs and
    /// compare-exchanges on two locations pay up to a hundred times more
    /// (Deviation 7 has the figures), which is why it is off.
    pub speculate_rmw: bool,
    /// Replay exactly this execution (`CLMM_REPLAY`).
    pub replay: Option<String>,
    /// Report the final state of memory after each execution (the litmus
    /// front end's final conditions).
    pub collect_memory: bool,
    /// Write the failing execution as Graphviz DOT into this directory
    /// (`CLMM_DOT=<dir>`).
    pub dot_dir: Option<std::path::PathBuf>,
    /// Show every event in a failure's trace (`CLMM_FULL_TRACE=1`); by
    /// default a unit of more than [`crate::report::TRACE_FULL_UNIT`]
    /// events shows its first and last ones and those around the accesses
    /// the failure is about.
    pub full_trace: bool,
    /// Show a progress line (`CLMM_PROGRESS=1`; by default when stderr is a
    /// terminal).
    pub progress: Option<bool>,
    /// Print the statistics of each run to stderr (`CLMM_STATS=1`).
    pub print_stats: bool,
    /// Warn on stderr when a unit has been running the user's code this
    /// long without reaching a clmm operation (`CLMM_STALL_SECS`, default
    /// 10 s; `CLMM_STALL_SECS=0` or `None`: never). Such a unit hangs the
    /// check (an endless loop over plain Rust values, a wait on a `std`
    /// lock or thread), and the warning says which unit and where its
    /// last operation was ([`crate::watchdog`]).
    pub stall_warning: Option<std::time::Duration>,
    /// The `tracing` level of the execution log (`CLMM_LOG`).
    pub log: Option<tracing::Level>,
    /// Debug: fingerprint every complete execution graph and count those
    /// explored more than once in [`crate::Stats::duplicates`]
    /// (`CLMM_CHECK_UNIQUE=1`).
    pub check_unique: bool,
    /// Debug: check every prefix with both the vector clocks and the
    /// explicit model and panic if they disagree (`CLMM_CROSSCHECK=1`).
    pub crosscheck: bool,
    /// Debug: after every execution, hand the oldest alternative of the
    /// lowest frame to the task queue, as an idle worker of a run on several
    /// workers would take it (`CLMM_DONATE=1`). It then starts from the
    /// graph as it is at that moment, not as the sequential order leaves
    /// it: every count must stay the same, and one worker makes that
    /// deterministic to test (`tests/parallel.rs`).
    pub donate_every_run: bool,
    /// Debug: print each exploration step of the explorer to stderr
    /// (`CLMM_DEBUG_EXPLORE=1`).
    pub debug_explore: bool,
    /// Explorer workers in this process (`CLMM_WORKERS`; default 1, 0 means
    /// one per core).
    pub workers: usize,
    /// Explore only this run's share of the executions (`CLMM_SHARD=k/n`).
    pub shard: Option<Shard>,
    /// A `CLMM_*` variable that could not be read: the run reports it as a
    /// usage error instead of exploring.
    pub env_error: Option<String>,
}

/// One share of a run split across processes: shard `index` (1-based) of
/// `count` (`CLMM_SHARD=index/count`). The shares of `1/n` to `n/n` are
/// disjoint and together explore every execution once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// This share, from 1 to `count`.
    pub index: u32,
    /// The number of shares.
    pub count: u32,
}

impl Shard {
    /// Shard `index` of `count`; an error naming the problem when `index`
    /// is not in `1..=count`.
    pub fn new(index: u32, count: u32) -> Result<Shard, String> {
        if count == 0 || index == 0 || index > count {
            return Err(format!("shard {index}/{count}: the shard must be k/n with 1 <= k <= n"));
        }
        Ok(Shard { index, count })
    }

    /// Parse `k/n`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("CLMM_SHARD={s:?}: expected k/n with 1 <= k <= n, for example 2/4");
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let k: u32 = k.trim().parse().map_err(|_| bad())?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        Shard::new(k, n).map_err(|_| bad())
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
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
            thin_air: None,
            nesting_limit: 32,
            speculate_compare_exchange: true,
            speculate_rmw: false,
            replay: None,
            collect_memory: false,
            check_unique: false,
            donate_every_run: false,
            crosscheck: false,
            debug_explore: false,
            dot_dir: None,
            full_trace: false,
            progress: None,
            print_stats: false,
            stall_warning: Some(std::time::Duration::from_secs(10)),
            log: None,
            workers: 1,
            shard: None,
            env_error: None,
        }
    }
}

impl Config {
    /// The defaults overridden by the `CLMM_*` environment variables:
    /// `CLMM_SC_MODEL` (`spec` or `scoped`), `CLMM_MAX_STEPS`,
    /// `CLMM_STACK_SIZE`, `CLMM_MAX_EXECUTIONS`, `CLMM_REPLAY`,
    /// `CLMM_CHECK_UNIQUE`, `CLMM_CROSSCHECK`, `CLMM_DONATE`, `CLMM_SPECULATE_CAS`, `CLMM_SPECULATE_RMW`, `CLMM_DEBUG_EXPLORE`, `CLMM_DOT`, `CLMM_FULL_TRACE`,
    /// `CLMM_PROGRESS`, `CLMM_STATS`, `CLMM_STALL_SECS`, `CLMM_WORKERS`, `CLMM_SHARD` (and
    /// `CLMM_LOG`, read by [`crate::log::level_from_env`]). A value that
    /// cannot be read is kept in [`Config::env_error`]: the run reports it
    /// instead of exploring with a setting the user did not ask for.
    ///
    /// The environment is read once per process, at the first call: the
    /// variables are meant to be set when the test process starts, and
    /// reading them again on every check cost about 0.5 µs (17 `getenv`
    /// scans), some 6% of checking a small litmus shape. A program that
    /// changes its settings between checks sets the [`Config`]
    /// fields (the facade's `Builder` methods) instead.
    pub fn from_env() -> Config {
        static ENV: std::sync::OnceLock<Config> = std::sync::OnceLock::new();
        ENV.get_or_init(Config::read_env).clone()
    }

    /// [`Config::from_env`]'s one reading of the environment.
    fn read_env() -> Config {
        /// The smallest `CLMM_STACK_SIZE`: a unit's coroutine needs room
        /// for the checker's own frames below the user's code.
        const MIN_STACK: usize = 16 * 1024;
        let mut c = Config::default();
        let mut errors: Vec<String> = Vec::new();
        let mut num = |k: &str| match std::env::var(k) {
            Ok(v) if !v.trim().is_empty() => match v.trim().parse::<u64>() {
                Ok(n) => Some(n),
                Err(_) => {
                    errors.push(format!("{k}={v:?} is not a number"));
                    None
                }
            },
            _ => None,
        };
        let max_steps = num("CLMM_MAX_STEPS");
        let stack_size = num("CLMM_STACK_SIZE");
        let max_executions = num("CLMM_MAX_EXECUTIONS");
        let workers = num("CLMM_WORKERS");
        if let Some(n) = num("CLMM_STALL_SECS") {
            c.stall_warning = (n > 0).then(|| std::time::Duration::from_secs(n));
        }
        if let Ok(v) = std::env::var("CLMM_SC_MODEL") {
            match v.trim() {
                "scoped" => c.sem.sc = ScModel::Scoped,
                "spec" | "" => c.sem.sc = ScModel::Spec,
                _ => errors.push(format!("CLMM_SC_MODEL={v:?}: expected spec or scoped")),
            }
        }
        if let Some(n) = workers {
            c.workers = n as usize;
        }
        if let Ok(v) = std::env::var("CLMM_SHARD") {
            if !v.trim().is_empty() {
                match Shard::parse(&v) {
                    Ok(s) => c.shard = Some(s),
                    Err(e) => errors.push(e),
                }
            }
        }
        // Bounds: a value past them was cut (`CLMM_MAX_STEPS=4294967296`
        // made every run a livelock of 0 steps) or made every run fail
        // (0 steps, a stack too small for any unit).
        match max_steps {
            Some(n @ 1..=0xFFFF_FFFF) => c.max_steps = n as u32,
            Some(n) => errors.push(format!("CLMM_MAX_STEPS={n}: expected a number of steps from 1 to {}", u32::MAX)),
            None => {}
        }
        match stack_size {
            Some(n) if n >= MIN_STACK as u64 && n <= usize::MAX as u64 => c.stack_size = n as usize,
            Some(n) => errors.push(format!("CLMM_STACK_SIZE={n}: expected a stack size of at least {MIN_STACK} bytes")),
            None => {}
        }
        match max_executions {
            Some(0) => errors.push("CLMM_MAX_EXECUTIONS=0: expected at least 1 execution".to_string()),
            n => c.max_executions = n,
        }
        c.replay = std::env::var("CLMM_REPLAY").ok().filter(|s| !s.trim().is_empty());
        // A switch is on with 1, true, yes or on, off with 0, false, no,
        // off or nothing; any other value is an error (`CLMM_STATS=off`
        // turned the statistics on).
        let mut flag = |k: &str| -> Option<bool> {
            let v = std::env::var(k).ok()?;
            match v.trim().to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Some(true),
                "" | "0" | "false" | "no" | "off" => Some(false),
                _ => {
                    errors.push(format!("{k}={v:?}: expected 1 or 0 (true or false, yes or no, on or off)"));
                    None
                }
            }
        };
        c.check_unique = flag("CLMM_CHECK_UNIQUE").unwrap_or(false);
        c.crosscheck = flag("CLMM_CROSSCHECK").unwrap_or(false);
        c.donate_every_run = flag("CLMM_DONATE").unwrap_or(false);
        // On by default.
        c.speculate_compare_exchange = flag("CLMM_SPECULATE_CAS").unwrap_or(true);
        c.speculate_rmw = flag("CLMM_SPECULATE_RMW").unwrap_or(false);
        c.full_trace = flag("CLMM_FULL_TRACE").unwrap_or(false);
        // Unset: when stderr is a terminal (`Config::progress`).
        c.progress = flag("CLMM_PROGRESS");
        c.print_stats = flag("CLMM_STATS").unwrap_or(false);
        c.debug_explore = flag("CLMM_DEBUG_EXPLORE").unwrap_or(false);
        c.dot_dir = std::env::var_os("CLMM_DOT").filter(|d| !d.is_empty()).map(Into::into);
        match crate::log::level_from_env() {
            Ok(level) => c.log = level,
            Err(e) => errors.push(e),
        }
        if !errors.is_empty() {
            c.env_error = Some(errors.join("; "));
        }
        c
    }

    /// The number of workers to run: [`Config::workers`], with 0 meaning one
    /// per core; always 1 for a replay.
    pub fn worker_count(&self) -> usize {
        if self.replay.is_some() {
            return 1;
        }
        match self.workers {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        }
    }
}
