//! Configuring and running a model check.

use clmm_check::{Config, Control, Delivery, Failure, FailureKind, Position, ScModel, Shard, Stats};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::thread::ThreadId;
use std::sync::Mutex;

/// Configures a model run. Every setting has an environment variable that
/// overrides the default (see the README); settings made here win over the
/// environment.
#[derive(Clone, Debug)]
pub struct Builder {
    cfg: Config,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// One outcome of [`Builder::explore`]: a value the closure returned, how
/// many executions returned it, and which failure kinds those executions
/// had.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Outcome {
    /// Number of complete executions that returned this value.
    pub executions: u64,
    /// The kinds of failure among them (empty when all passed).
    pub failures: BTreeSet<String>,
}

/// Everything [`Builder::explore`] found.
#[derive(Debug)]
pub struct Explored<T> {
    /// Each value returned, with its executions and failures.
    pub outcomes: BTreeMap<T, Outcome>,
    /// The first failure of each kind, with its report.
    pub failures: Vec<Failure>,
    /// Statistics.
    pub stats: Stats,
}

impl Builder {
    /// The defaults, overridden by `CLMM_*` environment variables.
    pub fn new() -> Builder {
        Builder { cfg: Config::from_env() }
    }

    /// Which SC axiom to check: `opencl.cat` (default) or scoped SC.
    pub fn sc_model(mut self, m: ScModel) -> Builder {
        self.cfg.sem.sc = m;
        self
    }

    /// The step bound per unit and execution (default 10 000): a unit that
    /// produces more events is reported as a possible livelock.
    pub fn max_steps(mut self, n: u32) -> Builder {
        self.cfg.max_steps = n;
        self
    }

    /// How deep load-buffering speculations may chain before the run stops
    /// with [`FailureKind::ExplorationLimit`] (default 32; see
    /// `Config::nesting_limit`). A safety bound: the deepest chain in
    /// clmm's own tests is 5.
    pub fn nesting_limit(mut self, levels: u8) -> Builder {
        self.cfg.nesting_limit = levels;
        self
    }

    /// Stop after this many executions.
    pub fn max_executions(mut self, n: u64) -> Builder {
        self.cfg.max_executions = Some(n);
        self
    }

    /// Coroutine stack size in bytes (default 1 MiB).
    pub fn stack_size(mut self, bytes: usize) -> Builder {
        self.cfg.stack_size = bytes;
        self
    }

    /// The reference's rules instead of clmm's deviations (the litmus front
    /// end's compatibility mode): sub-group scope never inclusive, no scope
    /// widening on local memory, partial barrier participation accepted,
    /// barriers matched by identity, local memory shared across groups.
    pub fn compat(mut self, on: bool) -> Builder {
        self.cfg.sem.compat = on;
        self.cfg.barrier_partial = on;
        self.cfg.barrier_by_id = on;
        self.cfg.local_across_groups = on;
        self
    }

    /// The reference's out-of-thin-air executions (Deviation 6 of
    /// `clmm_check::model` switched off): plain loads also read each of
    /// `values` from a write another work-item has not produced yet and
    /// produces later, so that a cycle through control dependencies
    /// (`if (r0 == 1) y = 1;` on both sides of load buffering) is explored
    /// as the `.cat` model allows. The litmus front end passes a test's
    /// constants in compatibility mode. An empty slice switches it off.
    pub fn thin_air(mut self, values: &[u64]) -> Builder {
        self.cfg.thin_air = (!values.is_empty()).then(|| values.into());
        self
    }

    /// Rerun exactly the execution of a failure report's replay string
    /// (the same as `CLMM_REPLAY`), with backtraces of the accesses
    /// involved. A string that is malformed, of another version, or from
    /// another test gives a failure of kind [`FailureKind::Replay`] that
    /// says so.
    pub fn replay(mut self, s: impl Into<String>) -> Builder {
        self.cfg.replay = Some(s.into());
        self
    }

    /// Write the execution of a failure as Graphviz DOT into `dir` (the
    /// same as `CLMM_DOT=<dir>`); the report says where.
    pub fn dot_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Builder {
        self.cfg.dot_dir = Some(dir.into());
        self
    }

    /// Show every event of a failure's trace (the same as
    /// `CLMM_FULL_TRACE=1`). By default a unit of more than 48 events (a
    /// livelock stopped at the step bound has thousands) shows its first 8
    /// and last 24, and two on either side of each access the failure is
    /// about; a line says what is left out.
    pub fn full_trace(mut self, on: bool) -> Builder {
        self.cfg.full_trace = on;
        self
    }

    /// Show a progress line on stderr (the same as `CLMM_PROGRESS=1`) from
    /// the start of the run; when stderr is not a terminal, as plain lines
    /// `clmm: progress: ...`, one a second. By default it is shown when
    /// stderr is a terminal and a run lasts more than a second.
    pub fn progress(mut self, on: bool) -> Builder {
        self.cfg.progress = Some(on);
        self
    }

    /// Warn on stderr when a unit has been running your code this long
    /// without reaching a clmm operation (the same as `CLMM_STALL_SECS`;
    /// default 10 s, `None`: never). clmm regains control only at an
    /// operation, so a unit that never reaches one (a loop over plain Rust
    /// values, a wait on a `std` mutex, channel or thread) hangs the
    /// check; the warning names the unit and where its last operation was.
    pub fn stall_warning(mut self, after: Option<std::time::Duration>) -> Builder {
        self.cfg.stall_warning = after;
        self
    }

    /// Print the statistics of the run to stderr at its end (the same as
    /// `CLMM_STATS=1`).
    pub fn print_stats(mut self, on: bool) -> Builder {
        self.cfg.print_stats = on;
        self
    }

    /// Debug: fingerprint every complete execution and count those explored
    /// twice in [`Stats::duplicates`] (the same as `CLMM_CHECK_UNIQUE=1`).
    pub fn check_unique(mut self, on: bool) -> Builder {
        self.cfg.check_unique = on;
        self
    }

    /// Whether a compare-exchange that fails speculates as a load does, so
    /// that load buffering whose cycle needs it to read a write porf-after
    /// it is explored (on by default; `false` is the same as
    /// `CLMM_SPECULATE_CAS=0`: such cycles are then missed, Deviation 7 of
    /// the model's documentation, and a run that may have missed one says
    /// so, `Stats::cas_cycles_unexplored`). CAS retry loops cost more with it:
    /// speculative runs that end blocked (the hash table of `examples/`
    /// 732 instead of 20), except on a kernel's only atomic location.
    pub fn speculate_compare_exchange(mut self, on: bool) -> Builder {
        self.cfg.speculate_compare_exchange = on;
        self
    }

    /// Whether the read part of an RMW (or of a compare-exchange that
    /// succeeds) speculates as a load does, so that load buffering whose
    /// cycle runs through RMW reads alone is explored (off by default;
    /// `true` is the same as `CLMM_SPECULATE_RMW=1`; off, such cycles are
    /// missed, Deviation 7 of the model's documentation). Only an RMW read
    /// that reaches the write through RMW reads speculates, so the kernels
    /// of `examples/` pay little for it (the work-stealing deque 2,024
    /// blocked runs instead of 1,918), but random programs with many RMWs
    /// and compare-exchanges on two locations up to a hundred times more.
    pub fn speculate_rmw(mut self, on: bool) -> Builder {
        self.cfg.speculate_rmw = on;
        self
    }

    /// Debug: after every execution, give the oldest alternative left to
    /// the task queue, as an idle worker would take it in a run on several
    /// workers (the same as `CLMM_DONATE=1`). The counts must not change:
    /// this tests, on one worker and deterministically, that an
    /// alternative explores the same whichever worker takes it, and when.
    pub fn donate_every_run(mut self, on: bool) -> Builder {
        self.cfg.donate_every_run = on;
        self
    }

    /// Debug: check every prefix with both implementations of the model,
    /// the vector clocks and the explicit relations, and panic with the
    /// graph if they disagree (`CLMM_CROSSCHECK=1`). Slower; for testing
    /// clmm itself.
    pub fn crosscheck(mut self, on: bool) -> Builder {
        self.cfg.crosscheck = on;
        self
    }

    /// Explore with `n` workers on their own threads (the same as
    /// `CLMM_WORKERS=n`; default 1, so that test runners that already run
    /// tests in parallel are not oversubscribed; 0 means one per core). The
    /// statistics, outcomes and the failure reported do not depend on `n`:
    /// the failure is the first one a single worker would meet.
    pub fn workers(mut self, n: usize) -> Builder {
        self.cfg.workers = n;
        self
    }

    /// Explore only share `index` of `count` (1-based; the same as
    /// `CLMM_SHARD=index/count`): `count` runs with the shares 1 to `count`
    /// (CI jobs, batch array tasks) together explore every execution
    /// exactly once. Panics when `index` is not in `1..=count`.
    #[track_caller]
    pub fn shard(mut self, index: u32, count: u32) -> Builder {
        match Shard::new(index, count) {
            Ok(s) => self.cfg.shard = Some(s),
            Err(e) => panic!("clmm: Builder::shard: {e}"),
        }
        self
    }

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Explore every execution; panic with the report at the first failure.
    #[track_caller]
    pub fn model<F: Fn() + Sync>(self, f: F) {
        if let Err(failure) = self.check(f) {
            panic!("{failure}");
        }
    }

    /// Explore every execution; the statistics, or the first failure.
    pub fn check<F: Fn() + Sync>(mut self, f: F) -> Result<Stats, Box<Failure>> {
        self.cfg.stop_at_first_failure = true;
        let mut first: Option<Failure> = None;
        let stats = clmm_check::explore(&self.cfg, &f, &mut |d| {
            match d {
                Delivery::Execution(end) => {
                    if let Some(fl) = end.failures.first() {
                        first = Some(fl.clone());
                        return Control::Stop;
                    }
                }
                Delivery::Restart => first = None,
            }
            Control::Continue
        });
        self.after_run(&stats);
        match first {
            Some(mut f) => {
                self.write_dot(&mut f);
                Err(Box::new(f))
            }
            None => Ok(stats),
        }
    }

    /// The exact set of values `f` returns over all executions (panics with
    /// the report if an execution fails).
    #[track_caller]
    pub fn outcomes<T: Ord + Send, F: Fn() -> T + Sync>(self, f: F) -> BTreeSet<T> {
        let ex = self.explore(f);
        if let Some(fl) = ex.failures.first() {
            panic!("{fl}");
        }
        ex.outcomes.into_keys().collect()
    }

    /// Explore every execution without stopping at failures: every value
    /// returned with its number of executions and failure kinds.
    pub fn explore<T: Ord + Send, F: Fn() -> T + Sync>(mut self, f: F) -> Explored<T> {
        self.cfg.stop_at_first_failure = false;
        let slot = WorkerSlot::new();
        let body = || {
            slot.begin();
            slot.put(f());
        };
        let mut outcomes: BTreeMap<T, Outcome> = BTreeMap::new();
        // The first failure of each kind in the sequential order.
        // (With one worker all positions are equal: the order of arrival.)
        let mut first: BTreeMap<String, (Position, u64, Failure)> = BTreeMap::new();
        let mut arrivals = 0u64;
        let stats = clmm_check::explore(&self.cfg, &body, &mut |d| {
            let end = match d {
                Delivery::Execution(end) => end,
                Delivery::Restart => {
                    outcomes.clear();
                    first.clear();
                    arrivals = 0;
                    slot.clear();
                    return Control::Continue;
                }
            };
            let v = slot.take();
            let kinds: BTreeSet<String> = end.failures.iter().map(|f| kind_name(&f.kind)).collect();
            for fl in end.failures {
                let k = kind_name(&fl.kind);
                arrivals += 1;
                if first.get(&k).is_none_or(|(p, _, _)| end.position < p) {
                    first.insert(k, (end.position.clone(), arrivals, fl.clone()));
                }
            }
            // An execution that failed before returning has no value.
            if let Some(v) = v {
                let o = outcomes.entry(v).or_insert(Outcome { executions: 0, failures: BTreeSet::new() });
                o.executions += 1;
                o.failures.extend(kinds);
            }
            Control::Continue
        });
        self.after_run(&stats);
        let mut failures: Vec<(Position, u64, Failure)> = first.into_values().collect();
        failures.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        let mut failures: Vec<Failure> = failures.into_iter().map(|(_, _, f)| f).collect();
        for f in &mut failures {
            self.write_dot(f);
        }
        Explored { outcomes, failures, stats }
    }

    fn after_run(&self, stats: &Stats) {
        // Once per process: every test of a suite would say it again.
        static TOLD: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if let Some(note) = clmm_check::unoptimized_note(stats.time, clmm_check::OPTIMIZED) {
            if !TOLD.swap(true, std::sync::atomic::Ordering::Relaxed) {
                eprintln!("clmm: note: {note}");
            }
        }
        if self.cfg.print_stats {
            eprintln!("clmm: {stats}");
        } else {
            // Not silent: the executions Deviation 7 (or the settings)
            // leave out may exist.
            for note in stats.notes() {
                eprintln!("clmm: note: {note}");
            }
        }
    }

    /// Write the failure's DOT picture into the configured directory.
    fn write_dot(&self, f: &mut Failure) {
        let (Some(dir), Some(dot)) = (&self.cfg.dot_dir, &f.dot) else { return };
        let test = std::thread::current().name().unwrap_or("clmm").replace("::", "-");
        let kind = f.kind.to_string().replace(' ', "-");
        let kind = kind.split('(').next().unwrap_or("failure").trim_end_matches('-');
        let path = dir.join(format!("{test}-{kind}.dot"));
        match std::fs::create_dir_all(dir).and_then(|_| std::fs::write(&path, dot)) {
            Ok(()) => f.dot_file = Some(path.display().to_string()),
            Err(e) => f.dot_file = Some(format!("{}{}: {e})", clmm_check::report::DOT_NOT_WRITTEN, path.display())),
        }
    }
}

fn kind_name(k: &FailureKind) -> String {
    k.to_string()
}

/// The value of each worker's current execution: put by the body when it
/// returns, taken when the execution is delivered (executions end on the
/// worker thread that delivers them). An execution that is not delivered
/// (blocked, or another shard's) leaves its value behind, so the body
/// clears its worker's entry first: an execution that fails before
/// returning then has no value, never the previous one's.
pub(crate) struct WorkerSlot<T>(Mutex<HashMap<ThreadId, T>>);

impl<T> WorkerSlot<T> {
    pub(crate) fn new() -> Self {
        WorkerSlot(Mutex::new(HashMap::new()))
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<ThreadId, T>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// At the start of the body: forget this worker's previous value.
    pub(crate) fn begin(&self) {
        self.map().remove(&std::thread::current().id());
    }

    /// The body's value.
    pub(crate) fn put(&self, v: T) {
        self.map().insert(std::thread::current().id(), v);
    }

    /// At delivery: the value of this worker's execution, if it returned.
    pub(crate) fn take(&self) -> Option<T> {
        self.map().remove(&std::thread::current().id())
    }

    /// On a restart (`Delivery::Restart`).
    pub(crate) fn clear(&self) {
        self.map().clear();
    }
}
