//! The explorer (DESIGN.md §5): TruSt-style exploration of execution graphs
//! (Kokologiannakis et al., POPL 2022), rerunning the user's closure for
//! each graph and replaying the recorded choices.
//!
//! * A read takes its maximal write (the co-maximal one for atomic
//!   locations; for non-atomic locations the newest write consistent with
//!   visibility) and every other write is pushed as a forward alternative.
//! * A write is placed co-maximally; its other coherence placements are
//!   forward alternatives; the reads it may backward-revisit (not in its
//!   porf-prefix, with every deleted event maximally added: the paper's
//!   conditions, see `revisits`) are pushed as backward revisits, each of
//!   which explores every coherence placement of the write in the restricted
//!   graph.
//! * Every prefix is checked with the model's prefix conditions; complete
//!   graphs with the exact model (`model::Phase`). Graphs that end
//!   inconsistent, or with a spin loop blocked, count as blocked.

use crate::config::Config;
use crate::graph::{broken_position, promised_position, BarrierInst, BROKEN, Event, Graph, GroupInfo, Kind, LocInfo, Pin, Region, Unit, UnitKind, THIN_AIR};
use crate::ids::{EventId, GroupId, SubGroupId, UnitId};
use crate::model::{self, vclock, Phase};
use crate::replay;
use crate::report::{self, Failure, FailureKind};
use crate::runtime::{self, Exit, Request, Resp, StackPool, UnitCo};
use clmm_atomic::backend::{Access, AllocRegion, Backend, LocId, Mode, Op, Reply};
use clmm_atomic::{FenceFlags, LaunchPlan, Order, Scope, WorkItem};
use corosensei::Yielder;
use crate::config::Shard;
use crossbeam_deque::{Injector, Steal};
use dashmap::DashSet;
use std::cell::RefCell;
use std::collections::HashMap;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[path = "explore_host.rs"]
mod host;

/// Statistics of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Complete, consistent executions explored.
    pub complete: u64,
    /// Explorations that ended blocked (a spin loop that saw nothing new, a
    /// prefix that turned out inconsistent when complete).
    pub blocked: u64,
    /// Executions that failed.
    pub failed: u64,
    /// Complete executions whose graph was explored before (always 0; only
    /// counted with [`Config::check_unique`]).
    pub duplicates: u64,
    /// Alternatives dropped before running, their prefix being
    /// inconsistent (or breaking a load-buffering promise): the work the
    /// exploration spent on no execution. The explorer offers a new access
    /// only the writes coherence allows it ([`vclock::Clocks::co_floor`]),
    /// so a unit alone has none.
    pub pruned: u64,
    /// Whether the run stopped early (first failure, execution bound).
    pub stopped_early: bool,
    /// A shard (`CLMM_SHARD`) met load-buffering speculation and explored
    /// the whole space, keeping its share.
    pub shard_restarted: bool,
    /// Wall-clock time.
    pub time: Duration,
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} complete executions, {} blocked, {} failed, in {:.3?}", self.complete, self.blocked, self.failed, self.time)?;
        let n = self.complete + self.blocked;
        if n > 0 && !self.time.is_zero() {
            write!(f, " ({:.1} µs per execution)", self.time.as_secs_f64() * 1e6 / n as f64)?;
        }
        if self.stopped_early {
            f.write_str(", stopped early")?;
        }
        if self.pruned > 0 {
            write!(f, ", {} alternatives pruned", self.pruned)?;
        }
        if self.duplicates > 0 {
            write!(f, ", {} duplicates (a bug)", self.duplicates)?;
        }
        if self.shard_restarted {
            f.write_str(" (this shard explored the whole space: load buffering needs it)")?;
        }
        Ok(())
    }
}

/// What the caller is told after each complete execution.
pub struct ExecutionEnd<'a> {
    /// The failures of this execution (empty when it passed).
    pub failures: &'a [Failure],
    /// The final state of memory, by location (when
    /// [`Config::collect_memory`] is set).
    pub memory: &'a [FinalLoc],
    /// The execution graph (for pictures: [`crate::dot::render`]).
    pub graph: &'a Graph,
    /// Its locations.
    pub locs: &'a [LocInfo],
    /// Where the execution comes in the sequential exploration order (with
    /// several workers they finish out of order; the smallest position is
    /// the one a single worker meets first).
    pub position: &'a Position,
}

/// What the explorer tells its caller.
pub enum Delivery<'a> {
    /// An execution ended.
    Execution(ExecutionEnd<'a>),
    /// Forget every execution delivered so far: the run starts again (a
    /// shard that meets load-buffering speculation explores the whole space
    /// and keeps its share, see [`crate::config::Shard`]).
    Restart,
}

/// The position of an execution in the sequential (one-worker) exploration
/// order: a path in the tree of alternatives, compared lexicographically.
/// Empty (all equal) when a single worker runs without sharding, whose
/// order of delivery is the sequential order itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position(Vec<u32>);

/// The final state of one location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalLoc {
    /// The value of the co-maximal write.
    pub last: u64,
    /// The values of every write other than the initial one, in coherence
    /// (for non-atomic locations: insertion) order.
    pub writes: Vec<u64>,
    /// Whether the location is atomic.
    pub atomic: bool,
}

/// Whether to go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Explore the next execution.
    Continue,
    /// Stop the run.
    Stop,
}

// ---------------------------------------------------------------------
// The backend seen by user code
// ---------------------------------------------------------------------

#[derive(Default)]
struct Shared {
    current: usize,
    yielders: Vec<*const Yielder<Resp, ()>>,
    pending: Vec<Option<Request>>,
    abandoning: bool,
    local_ctx: Option<GroupId>,
    /// The plan and kernel of each unit's pending launch.
    launch: HashMap<usize, PendingLaunch>,
    launch_groups: Vec<GroupId>,
    allocs: Vec<u32>,
    locs: Vec<LocInfo>,
    loc_keys: HashMap<(u32, u32), LocId>,
    /// Host threads, queues and events of this execution.
    host: host::HostShared,
    /// Capture a backtrace at each operation (replays only).
    capture: bool,
    bt: Option<backtrace::Backtrace>,
}

impl Shared {
    /// Emptied for the next run, keeping its buffers.
    fn recycled(self) -> Shared {
        let Shared { mut yielders, mut pending, mut launch, mut launch_groups, mut allocs, mut locs, mut loc_keys, .. } = self;
        yielders.clear();
        pending.clear();
        launch.clear();
        launch_groups.clear();
        allocs.clear();
        locs.clear();
        loc_keys.clear();
        Shared { yielders, pending, launch, launch_groups, allocs, locs, loc_keys, ..Shared::default() }
    }
}

/// The locations of a run, shared by its workers so that a location has
/// the same id in every worker (graphs move between workers).
#[derive(Default)]
struct LocTable {
    locs: Vec<LocInfo>,
    keys: HashMap<(u32, u32), LocId>,
}

/// A unit's pending launch: its plan and its kernel.
type PendingLaunch = (*const LaunchPlan, *const (dyn Fn(&WorkItem) + Sync));

struct Checker<'r> {
    s: RefCell<Shared>,
    table: &'r Mutex<LocTable>,
}

/// Catch up with the locations other workers allocated (this worker's
/// table is always a prefix of the shared one).
fn catch_up(s: &mut Shared, t: &LocTable) {
    if s.locs.len() < t.locs.len() {
        s.locs = t.locs.clone();
        s.loc_keys = t.keys.clone();
    }
}

impl Checker<'_> {
    /// Catch up with the locations other workers allocated.
    fn sync_locs(&self) {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        catch_up(&mut self.s.borrow_mut(), &t);
    }

    fn suspend(&self, req: Request) -> Reply {
        let y = {
            let mut s = self.s.borrow_mut();
            if s.abandoning {
                drop(s);
                if std::thread::panicking() {
                    return Reply { value: 0, ok: false };
                }
                std::panic::resume_unwind(Box::new(runtime::Abandon));
            }
            let cur = s.current;
            if s.capture && matches!(req, Request::Op(..)) {
                // Replays only: where in the user's code this operation is.
                s.bt = Some(backtrace::Backtrace::new_unresolved());
            }
            s.pending[cur] = Some(req);
            s.yielders[cur]
        };
        // SAFETY: the yielder lives on the suspended unit's own stack for the
        // whole life of its coroutine, and we are running on that coroutine.
        match unsafe { &*y }.suspend(()) {
            Resp::Reply(r) => r,
            Resp::Abandon | Resp::Start => {
                if std::thread::panicking() {
                    return Reply { value: 0, ok: false };
                }
                std::panic::resume_unwind(Box::new(runtime::Abandon))
            }
        }
    }
}

impl Backend for Checker<'_> {
    fn alloc(&self, region: AllocRegion, len: usize, atomic: bool, init: &mut dyn FnMut(usize) -> u64, site: &'static Location<'static>) -> LocId {
        let mut s = self.s.borrow_mut();
        let cur = s.current as u32;
        if s.allocs.len() <= cur as usize {
            s.allocs.resize(cur as usize + 1, 0);
        }
        let n = s.allocs[cur as usize];
        s.allocs[cur as usize] += 1;
        if let Some(&l) = s.loc_keys.get(&(cur, n)) {
            return l;
        }
        // The initial values of a new allocation only (the same allocation
        // in a later execution has them already), computed with nothing
        // borrowed (the initialiser is user code).
        drop(s);
        let inits: Vec<u64> = (0..len).map(&mut *init).collect();
        let mut s = self.s.borrow_mut();
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        catch_up(&mut s, &t);
        if let Some(&l) = t.keys.get(&(cur, n)) {
            // Another worker allocated it first: the same id here.
            return l;
        }
        let memory = region;
        let region = match memory {
            AllocRegion::Global | AllocRegion::GlobalFga | AllocRegion::SvmCoarse | AllocRegion::SvmFine => Region::Global,
            AllocRegion::Unqualified => Region::Unqualified,
            AllocRegion::Local => Region::Local(s.local_ctx.expect("clmm: local allocation outside a local initialiser")),
        };
        let base = LocId(s.locs.len() as u32);
        for (i, init) in inits.into_iter().enumerate() {
            let elem = (len != 1).then_some(i as u32);
            s.locs.push(LocInfo { region, memory, atomic, alloc: base.0, init, site, elem, label: None });
        }
        s.loc_keys.insert((cur, n), base);
        t.locs.extend_from_slice(&s.locs[base.0 as usize..]);
        t.keys.insert((cur, n), base);
        base
    }

    fn label(&self, loc: LocId, name: &'static str) {
        let mut s = self.s.borrow_mut();
        if s.locs.get(loc.0 as usize).is_some_and(|l| l.label == Some(name)) {
            return;
        }
        let mut t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        for locs in [&mut s.locs, &mut t.locs] {
            for l in locs.iter_mut().filter(|l| l.alloc == loc.0) {
                l.label = Some(name);
            }
        }
    }

    fn op(&self, op: Op, site: &'static Location<'static>) -> Reply {
        self.suspend(Request::Op(op, site))
    }

    fn launch(&self, plan: &LaunchPlan, local_init: &mut dyn FnMut(usize), kernel: &(dyn Fn(&WorkItem) + Sync), site: &'static Location<'static>) {
        {
            let mut s = self.s.borrow_mut();
            // SAFETY: the pointers are only used while this call is suspended
            // in `Launch`/`Join` below (the units finish or are unwound first).
            let k: *const (dyn Fn(&WorkItem) + Sync + '_) = kernel;
            let k: *const (dyn Fn(&WorkItem) + Sync + 'static) = unsafe { std::mem::transmute(k) };
            let cur = s.current;
            s.launch.insert(cur, (plan as *const LaunchPlan, k));
        }
        self.suspend(Request::Launch(site));
        let n = self.s.borrow().launch_groups.len();
        for g in 0..n {
            let gid = self.s.borrow().launch_groups[g];
            self.s.borrow_mut().local_ctx = Some(gid);
            local_init(g);
            self.s.borrow_mut().local_ctx = None;
        }
        self.suspend(Request::Join(site));
        // The kernel has ended; it completes once the kernels (and
        // markers) its work-items enqueued have (`model::host`).
        let children = host::take_children(self);
        if !children.is_empty() {
            if let Err(e) = host::host_op(self, clmm_atomic::backend::HostOp::Wait(&children), site) {
                panic!("clmm: {e}");
            }
        }
    }

    fn in_local_init(&self) -> bool {
        self.s.borrow().local_ctx.is_some()
    }

    fn host(&self, op: clmm_atomic::backend::HostOp<'_>, site: &'static Location<'static>) -> Result<u64, String> {
        host::host_op(self, op, site)
    }
}

// ---------------------------------------------------------------------
// Exploration state
// ---------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Item {
    /// Read `r` reads from `w` instead.
    ReadFw { r: EventId, w: EventId },
    /// Weak CAS `r` fails spuriously.
    Spurious { r: EventId },
    /// Write `w` goes right after `pred` in coherence order.
    WriteCo { w: EventId, pred: EventId },
    /// Read `r` is revisited by the later write `w`, placed after `pred`
    /// (`None`: co-maximally, then the other placements are pushed).
    Backward { r: EventId, w: EventId, pred: Option<EventId> },
    /// Load buffering: read `r`, in the porf-prefix of `w`, reads `value`
    /// from `w` in a rerun that must produce `w` again; `level` is the
    /// promise's nesting level ([`Engine::speculations`]). With `twin`,
    /// the same start graph with the promises its cut drops and `w`
    /// depends on made again ([`Pin`], [`Engine::push_speculation`]).
    Speculate { r: EventId, w: EventId, value: u64, level: u8, twin: bool },
    /// Out-of-thin-air (herd compatibility, [`Config::thin_air`]): read `r`
    /// reads `value` from a write of `unit` not produced yet, the first one
    /// of that value to `r`'s location the unit adds after `r`.
    ThinAir { r: EventId, unit: UnitId, value: u64 },
    /// In a speculative run: read `r` reads `value` from `w`, the write
    /// its unit's previous read of the location was promised, not produced
    /// yet ([`Engine::push_read_promised`]).
    ReadPromised { r: EventId, w: EventId, value: u64, level: u8 },
}


/// An alternative with its position in the sequential order.
struct Work {
    item: Item,
    key: Vec<u32>,
}

struct Frame {
    graph: Graph,
    work: Vec<Work>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    Running,
    Done,
    SpinBlocked,
    /// A slot for a unit not created (yet) in this run.
    Unborn,
}

struct UnitRt {
    co: Option<UnitCo>,
    pos: u32,
    status: Status,
    /// Reads (location, write read) of the current spin iteration and of
    /// the previous one, and whether the current one wrote.
    spin_cur: Vec<(LocId, EventId)>,
    spin_prev: Option<Vec<(LocId, EventId)>>,
    spin_wrote: bool,
}

enum End {
    Complete,
    Blocked,
    Failed(Vec<Failure>),
}

/// Run the exploration of `body` under `cfg`, delivering each execution to
/// `on_end` (from one worker at a time).
///
/// With [`Config::workers`] above 1, workers on their own threads share the
/// alternatives (a sub-exploration is a graph and the alternative that
/// changes it, as TruSt's exploration tree allows); graphs that must be
/// explored once across the run (speculations, porf-cyclic executions) are
/// deduplicated in concurrent sets, so the statistics and outcome sets do
/// not depend on the number of workers. When the run stops at the first
/// failure, the failure reported is the first in the sequential order
/// ([`Position`]): workers go on with the alternatives before it only.
///
/// With [`Config::shard`] `k/n`, the alternatives two levels below the
/// first execution are dealt to the shards by a hash of their position;
/// every shard explores the levels above (a handful of executions) and
/// counts its share of them. Load buffering needs speculations found
/// anywhere in the space and explored once, so a shard that meets one
/// starts again over the whole space, keeping its share ([`Delivery::Restart`]).
pub fn explore(cfg: &Config, body: &(dyn Fn() + Sync), on_end: &mut (dyn FnMut(Delivery<'_>) -> Control + Send)) -> Stats {
    runtime::install_panic_hook();
    crate::log::init(cfg.log);
    let start = Instant::now();
    let fail_early = |kind: FailureKind, msg: String, on_end: &mut (dyn FnMut(Delivery<'_>) -> Control + Send)| {
        let f = Failure::new(kind, msg);
        let pos = Position::default();
        on_end(Delivery::Execution(ExecutionEnd { failures: std::slice::from_ref(&f), memory: &[], graph: &Graph::default(), locs: &[], position: &pos }));
        Stats { failed: 1, time: start.elapsed(), ..Stats::default() }
    };
    if let Some(e) = &cfg.env_error {
        return fail_early(FailureKind::Configuration, format!("clmm: {e}"), on_end);
    }
    let plan = match cfg.replay.as_deref().map(replay::decode) {
        None => None,
        Some(Ok(plan)) => Some(plan),
        Some(Err(e)) => return fail_early(FailureKind::Replay, format!("CLMM_REPLAY: {e}"), on_end),
    };
    let workers = cfg.worker_count();
    let mut progress = Mutex::new(crate::progress::Progress::new(cfg.progress));
    let mut full = false;
    let mut stats = loop {
        let run = Run {
            cfg,
            body,
            sink: Mutex::new(&mut *on_end),
            tasks: Injector::new(),
            outstanding: AtomicUsize::new(1),
            idle: AtomicUsize::new(0),
            workers,
            keyed: workers > 1 || cfg.shard.is_some(),
            shard: cfg.shard,
            full,
            stop: AtomicBool::new(false),
            restart: AtomicBool::new(false),
            best: Mutex::new(None),
            has_best: AtomicBool::new(false),
            spec_seen: Seen::default(),
            cyclic_seen: Seen::default(),
            unique: Seen::default(),
            table: Mutex::new(LocTable::default()),
            counts: Counts::default(),
            progress: &progress,
        };
        run.tasks.push(Task { graph: Graph::default(), work: None });
        if workers <= 1 {
            run.worker(plan.clone());
        } else {
            std::thread::scope(|sc| {
                let handles: Vec<_> = (0..workers)
                    .map(|i| {
                        let run = &run;
                        std::thread::Builder::new()
                            .name(format!("clmm-worker-{i}"))
                            .spawn_scoped(sc, move || run.worker(None))
                            .expect("clmm: cannot start an explorer worker thread")
                    })
                    .collect();
                for h in handles {
                    if let Err(p) = h.join() {
                        std::panic::resume_unwind(p);
                    }
                }
            })
        }
        if run.restart.load(Relaxed) {
            full = true;
            (run.sink.into_inner().unwrap_or_else(|e| e.into_inner()))(Delivery::Restart);
            continue;
        }
        let mut stats = run.counts.stats();
        stats.stopped_early = run.stop.load(Relaxed);
        let best = run.best.into_inner().unwrap_or_else(|e| e.into_inner());
        let sink = run.sink.into_inner().unwrap_or_else(|e| e.into_inner());
        if let Some(b) = best {
            // The first failure in the sequential order, found by one of
            // several workers.
            stats.stopped_early = true;
            sink(Delivery::Execution(ExecutionEnd { failures: &b.failures, memory: &b.memory, graph: &b.graph, locs: &b.locs, position: &b.position }));
        }
        stats.shard_restarted = full;
        break stats;
    };
    progress.get_mut().unwrap_or_else(|e| e.into_inner()).finish();
    runtime::capture_panic_backtraces(false);
    stats.time = start.elapsed();
    stats
}

/// How deep in the tree of alternatives the shards split (see [`explore`]).
const SHARD_DEPTH: usize = 2;

/// A sub-exploration: a graph and the alternative to apply to it (`None`:
/// the first execution of the run, from the empty graph).
struct Task {
    graph: Graph,
    work: Option<Work>,
}

/// The first failure in the sequential order, kept while several workers
/// run (stop at the first failure).
struct Best {
    position: Position,
    failures: Vec<Failure>,
    memory: Vec<FinalLoc>,
    graph: Graph,
    locs: Vec<LocInfo>,
}

/// What the workers of one run share.
struct Run<'r, 's> {
    cfg: &'r Config,
    body: &'r (dyn Fn() + Sync),
    sink: Mutex<&'s mut (dyn FnMut(Delivery<'_>) -> Control + Send)>,
    tasks: Injector<Task>,
    /// Tasks queued or running.
    outstanding: AtomicUsize,
    /// Workers waiting for a task.
    idle: AtomicUsize,
    workers: usize,
    /// Whether positions are computed (several workers, or a shard).
    keyed: bool,
    shard: Option<Shard>,
    /// The shard explores the whole space and keeps its share (after a
    /// speculation).
    full: bool,
    stop: AtomicBool,
    restart: AtomicBool,
    best: Mutex<Option<Best>>,
    /// Whether `best` holds a failure (read without the lock on every
    /// alternative).
    has_best: AtomicBool,
    /// Speculations already explored ([`start_key`] of the graph they
    /// start from), so that one found from several executions runs once.
    spec_seen: Seen,
    /// Complete porf-cyclic executions already counted (only speculation
    /// reaches them, possibly along several paths).
    cyclic_seen: Seen,
    /// With [`Config::check_unique`]: fingerprints of complete graphs.
    unique: Seen,
    table: Mutex<LocTable>,
    /// The statistics of all workers.
    counts: Counts,
    progress: &'r Mutex<crate::progress::Progress>,
}

/// A set of graph fingerprints shared by the workers of a run, created at
/// its first insertion: most runs never speculate nor fingerprint, and a
/// `DashSet` allocates all its shards up front (a noticeable part of a
/// small check).
#[derive(Default)]
struct Seen(std::sync::OnceLock<DashSet<u128>>);

impl Seen {
    /// Add `fp`; whether it was new.
    fn insert(&self, fp: u128) -> bool {
        self.0.get_or_init(DashSet::new).insert(fp)
    }
}

/// The counts of [`Stats`], kept by all the workers of a run together.
#[derive(Default)]
struct Counts {
    complete: AtomicU64,
    blocked: AtomicU64,
    failed: AtomicU64,
    duplicates: AtomicU64,
    pruned: AtomicU64,
}

impl Counts {
    fn stats(&self) -> Stats {
        Stats {
            complete: self.complete.load(Relaxed),
            blocked: self.blocked.load(Relaxed),
            failed: self.failed.load(Relaxed),
            duplicates: self.duplicates.load(Relaxed),
            pruned: self.pruned.load(Relaxed),
            ..Stats::default()
        }
    }
}

/// A 64-bit mix of a position prefix, for dealing sub-explorations to
/// shards.
fn shard_hash(key: &[u32]) -> u64 {
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15;
    for &k in key {
        h = (h ^ u64::from(k)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
    }
    h
}

impl Run<'_, '_> {
    /// Whether this shard explores the alternative at `key`: those above
    /// the split depth belong to every shard; at the split depth one shard
    /// takes each (by its position without the last component, which the
    /// coherence placements of one revisit share).
    fn explores(&self, key: &[u32]) -> bool {
        match self.shard {
            Some(sh) if !self.full && key.len() / 2 == SHARD_DEPTH => shard_hash(&key[..key.len() - 1]) % u64::from(sh.count) == u64::from(sh.index - 1),
            _ => true,
        }
    }

    /// Whether this shard counts the execution at `key` (`cyclic`: the
    /// fingerprint of a complete porf-cyclic execution, which speculations
    /// reach from several places and which is dealt by its fingerprint).
    fn owns(&self, key: &[u32], cyclic: Option<u128>) -> bool {
        let Some(sh) = self.shard else { return true };
        let h = match cyclic {
            Some(fp) => shard_hash(&[fp as u32, (fp >> 32) as u32, (fp >> 64) as u32, (fp >> 96) as u32]),
            None if key.len() / 2 < SHARD_DEPTH => shard_hash(key),
            None => shard_hash(&key[..2 * SHARD_DEPTH - 1]),
        };
        h % u64::from(sh.count) == u64::from(sh.index - 1)
    }

    /// The next task for a worker, or `None` when the run is over.
    fn next_task(&self) -> Option<Task> {
        let backoff = crossbeam_utils::Backoff::new();
        let mut idle = false;
        let found = loop {
            if self.stop.load(Relaxed) || self.restart.load(Relaxed) {
                break None;
            }
            match self.tasks.steal() {
                Steal::Success(t) => break Some(t),
                Steal::Retry => continue,
                Steal::Empty => {}
            }
            if self.outstanding.load(std::sync::atomic::Ordering::Acquire) == 0 {
                break None;
            }
            if !idle {
                idle = true;
                self.idle.fetch_add(1, Relaxed);
            }
            if backoff.is_completed() {
                std::thread::sleep(Duration::from_micros(50));
            } else {
                backoff.snooze();
            }
        };
        if idle {
            self.idle.fetch_sub(1, Relaxed);
        }
        found
    }

    /// One worker: its own coroutines and branch stack, taking tasks until
    /// none are left.
    fn worker(&self, plan: Option<replay::Plan>) {
        let warm = WARM.take().unwrap_or_default();
        let Warm { shared, bufs, mut clocks, rt, frames, promises } = *warm;
        clocks.reset();
        let checker = Checker { s: RefCell::new(shared), table: &self.table };
        let capture = plan.is_some();
        let mut eng = Engine {
            cfg: self.cfg,
            body: self.body,
            run: self,
            checker: &checker,
            pool: StackPool::new(self.cfg.stack_size),
            rt,
            frames,
            cur: Position::default(),
            pushes: 0,
            promises,
            deferred: Vec::new(),
            clocks,
            cyclic_fp: None,
            plan,
            step: 0,
            forced: None,
            replay_error: None,
            too_deep: None,
            backtraces: HashMap::new(),
            bufs,
        };
        eng.clocks.verify = self.cfg.crosscheck;
        if capture {
            checker.s.borrow_mut().capture = true;
            runtime::capture_panic_backtraces(true);
        }
        // A worker that panics (a bug in clmm) stops the others, which would
        // otherwise wait for its tasks forever; the panic reaches the caller.
        struct StopOnPanic<'a>(&'a AtomicBool);
        impl Drop for StopOnPanic<'_> {
            fn drop(&mut self) {
                if std::thread::panicking() {
                    self.0.store(true, Relaxed);
                }
            }
        }
        let _guard = StopOnPanic(&self.stop);
        clmm_atomic::backend::with_backend(&checker, || {
            while let Some(task) = self.next_task() {
                eng.task(task);
                self.outstanding.fetch_sub(1, std::sync::atomic::Ordering::Release);
            }
        });
        // Every unit has ended or been unwound (`run_one`): keep the
        // buffers for this thread's next run.
        while let Some(f) = eng.frames.pop() {
            eng.recycle_frame(f);
        }
        eng.rt.clear();
        eng.promises.clear();
        let Engine { mut bufs, clocks, rt, frames, promises, .. } = eng;
        // Each run's first graph is new (its task's): keep as many as a
        // run of a small test uses.
        bufs.graphs.truncate(WARM_GRAPHS);
        bufs.works.truncate(WARM_GRAPHS);
        let shared = checker.s.into_inner().recycled();
        WARM.set(Some(Box::new(Warm { shared, bufs, clocks, rt, frames, promises })));
    }
}

/// What a worker keeps for the next run on its thread: the buffers of the
/// fast path, emptied. A check of a small test is a handful of executions
/// and would otherwise spend a noticeable part of its time growing them
/// (the coroutine stacks are kept the same way, [`StackPool`]).
#[derive(Default)]
struct Warm {
    shared: Shared,
    bufs: Bufs,
    clocks: vclock::Clocks,
    rt: Vec<UnitRt>,
    frames: Vec<Frame>,
    promises: Vec<EventId>,
}

/// How many spare graphs [`Warm`] keeps.
const WARM_GRAPHS: usize = 16;

thread_local! {
    static WARM: std::cell::Cell<Option<Box<Warm>>> = const { std::cell::Cell::new(None) };
}

struct Engine<'a, 's> {
    cfg: &'a Config,
    body: &'a (dyn Fn() + Sync),
    run: &'a Run<'a, 's>,
    checker: &'a Checker<'a>,
    pool: StackPool,
    rt: Vec<UnitRt>,
    frames: Vec<Frame>,
    /// The position of the current execution, and how many alternatives
    /// it pushed (positions are only computed when [`Run::keyed`]).
    cur: Position,
    pushes: u32,
    /// Speculative reads of this run whose write is not produced yet.
    promises: Vec<EventId>,
    /// Speculations of this run waiting for promises to be kept
    /// ([`Deferred`]).
    deferred: Vec<Deferred>,
    /// The happens-before views of the current graph.
    clocks: vclock::Clocks,
    /// The fingerprint of the current execution when it is a complete
    /// porf-cyclic one (reached by speculation).
    cyclic_fp: Option<u128>,
    /// Replaying one execution (`Config::replay`): its steps, the next one,
    /// the choices of the step being added, and what went wrong.
    plan: Option<replay::Plan>,
    step: usize,
    forced: Option<replay::Step>,
    replay_error: Option<String>,
    /// A speculation nested its promises deeper than [`Config::nesting_limit`]:
    /// the run that starts from it fails with the level.
    too_deep: Option<u8>,
    /// Backtraces of the events added during a replay.
    backtraces: HashMap<EventId, backtrace::Backtrace>,
    /// Buffers of the fast path, kept for their capacity.
    bufs: Bufs,
}

/// The explorer's reusable buffers: adding an event allocates nothing once
/// they have grown.
#[derive(Default)]
struct Bufs {
    /// The rf candidates of a read, the coherence placements of a write.
    ids: Vec<EventId>,
    /// [`Graph::porf_prefix_into`]'s stack and result.
    stack: Vec<EventId>,
    porf: crate::graph::PrefixSet,
    /// A new write's revisit prefix, when it differs from its porf-prefix.
    kept: crate::graph::PrefixSet,
    /// The reads a new write revisits.
    reads: Vec<EventId>,
    /// A launch's first sub-group index per work-group.
    sub_bases: Vec<usize>,
    /// The graphs of finished frames, reused by backward revisits.
    graphs: Vec<Graph>,
    /// The spin-loop records of finished units ([`UnitRt::spin_cur`]),
    /// reused by the next execution's units.
    spins: Vec<Vec<(LocId, EventId)>>,
    /// The alternative stacks of finished frames.
    works: Vec<Vec<Work>>,
}

impl Engine<'_, '_> {
    fn graph(&mut self) -> &mut Graph {
        &mut self.frames.last_mut().expect("a frame").graph
    }

    fn locs(&self) -> std::cell::Ref<'_, Vec<LocInfo>> {
        std::cell::Ref::map(self.checker.s.borrow(), |s| &s.locs)
    }

    /// Explore the alternatives of `graph` next (a revisit or a speculation).
    fn push_frame(&mut self, graph: Graph) {
        let work = self.bufs.works.pop().unwrap_or_default();
        self.frames.push(Frame { graph, work });
    }

    /// Keep a finished frame's buffers for the next ones.
    fn recycle_frame(&mut self, f: Frame) {
        let Frame { graph, mut work } = f;
        work.clear();
        self.bufs.graphs.push(graph);
        self.bufs.works.push(work);
    }

    /// Push an alternative of the current execution.
    fn push(&mut self, item: Item) {
        let key = if self.run.keyed {
            let mut k = Vec::with_capacity(self.cur.0.len() + 2);
            k.extend_from_slice(&self.cur.0);
            k.push(u32::MAX - self.pushes);
            k.push(0);
            k
        } else {
            Vec::new()
        };
        self.pushes += 1;
        if let Item::ReadFw { r, .. } | Item::Spurious { r } | Item::ReadPromised { r, .. } | Item::WriteCo { w: r, .. } = item {
            let g = &self.frames.last().expect("frame").graph;
            if !g.pins.is_empty() && self.untaken_pin(g.ev(r).stamp, None) {
                return;
            }
        }
        if matches!(item, Item::Speculate { .. } | Item::ThinAir { .. }) && self.run.shard.is_some() && !self.run.full {
            // A shard cannot know which other shard meets this speculation
            // too: start again over the whole space (see `explore`).
            self.run.restart.store(true, Relaxed);
        }
        if self.run.explores(&key) {
            self.frames.last_mut().expect("frame").work.push(Work { item, key });
        }
    }

    /// Push an alternative of the alternative being applied (explored after
    /// everything that alternative leads to): the `k`-th other coherence
    /// placement of a backward revisit.
    fn push_sibling(&mut self, item: Item, k: u32) {
        let key = if self.run.keyed {
            let mut key = self.cur.0.clone();
            if let Some(last) = key.last_mut() {
                *last = u32::MAX - k;
            }
            key
        } else {
            Vec::new()
        };
        self.frames.last_mut().expect("frame").work.push(Work { item, key });
    }

    /// Explore a task to its end (or until the run stops).
    fn task(&mut self, task: Task) {
        while let Some(f) = self.frames.pop() {
            self.recycle_frame(f);
        }
        self.deferred.clear();
        self.checker.sync_locs();
        self.clocks.note_changed();
        let root = task.work.is_none();
        self.push_frame(task.graph);
        self.frames.last_mut().expect("frame").work.extend(task.work);
        if root {
            self.cur.0.clear();
            self.pushes = 0;
        } else if !self.next_item() {
            return;
        }
        let run = self.run;
        loop {
            let ended = self.run_one();
            if ended || run.stop.load(Relaxed) || run.restart.load(Relaxed) {
                return;
            }
            if run.workers > 1 && run.idle.load(Relaxed) > 0 && run.tasks.is_empty() {
                self.donate();
            }
            if !self.next_item() {
                return;
            }
        }
    }

    /// Give the oldest alternative of the lowest frame to an idle worker.
    fn donate(&mut self) {
        let Some(frame) = self.frames.iter_mut().find(|f| !f.work.is_empty()) else { return };
        let work = frame.work.remove(0);
        let graph = frame.graph.clone();
        self.run.outstanding.fetch_add(1, Relaxed);
        self.run.tasks.push(Task { graph, work: Some(work) });
    }

    /// Run one execution and deliver it; true when the run is over for this
    /// worker (stop, replay done, bound reached).
    fn run_one(&mut self) -> bool {
        let run = self.run;
        self.cyclic_fp = None;
        let mut end = self.run_execution();
        self.abandon_all();
        if matches!(end, End::Failed(_)) && self.plan.is_none() && (!self.pins_taken() || !self.speculation_counts()) {
            // A failure that ended a speculative run early (a panic, a
            // deadlock) is reported where the exploration meets it without
            // speculation, unless it is porf-cyclic; one of a twin's run
            // that did not take its pins, where the plain start graph's
            // run meets it.
            end = End::Blocked;
        }
        if let Some(level) = self.too_deep.take() {
            let g = &self.frames.last().expect("frame").graph;
            let deep: Vec<EventId> = g.event_ids().filter(|&e| g.ev(e).speculative).collect();
            let msg = format!(
                "clmm stopped: load-buffering speculations chained {level} deep, past the limit of {} (the marked reads read writes po- and rf-after them, \
                 each speculated on a write that depends on the promises before it): the exploration stops here and cannot vouch for the executions beyond. \
                 The deepest chain in clmm's own tests is 5: please report this program (or raise Builder::nesting_limit)",
                self.cfg.nesting_limit
            );
            let mut f = self.failure(FailureKind::ExplorationLimit, msg, &deep);
            // Replaying the execution would not stop at the limit (a replay
            // makes no speculation), and it is not the problem.
            f.replay.clear();
            end = End::Failed(vec![f]);
        }
        if let Some(plan) = &self.plan {
            let fp = self.frames.last().expect("frame").graph.fingerprint() as u64;
            let msg = self.replay_error.take().or_else(|| {
                (self.step < plan.steps.len() || fp != plan.fingerprint).then(|| {
                    format!(
                        "the replay rebuilt another execution than the one recorded ({} of {} steps replayed): the string comes from another test, or the test changed since",
                        self.step,
                        plan.steps.len()
                    )
                })
            });
            if let Some(m) = msg {
                end = End::Failed(vec![Failure::new(FailureKind::Replay, format!("CLMM_REPLAY: {m}"))]);
            } else if matches!(end, End::Complete | End::Blocked) {
                end = End::Failed(vec![Failure::new(
                    FailureKind::Replay,
                    "CLMM_REPLAY: the replayed execution passed (the failure it recorded did not happen again)".into(),
                )]);
            }
        }
        if run.restart.load(Relaxed) {
            return true;
        }
        if !run.owns(&self.cur.0, self.cyclic_fp) {
            // Another shard's execution (explored here on the way to ours).
            return false;
        }
        if self.cfg.check_unique && !matches!(end, End::Blocked) {
            let fp = self.frames.last().expect("frame").graph.fingerprint();
            if !run.unique.insert(fp) {
                run.counts.duplicates.fetch_add(1, Relaxed);
            }
            if self.cfg.debug_explore {
                eprintln!("complete {fp:x}");
                self.debug_graph();
            }
        }
        let memory = if self.cfg.collect_memory && !matches!(end, End::Blocked) { self.final_memory() } else { Vec::new() };
        let checker = self.checker;
        let shared = checker.s.borrow();
        let locs = &shared.locs;
        let graph = &self.frames.last().expect("frame").graph;
        let position = &self.cur;
        if tracing::enabled!(target: "clmm", tracing::Level::DEBUG) {
            let what = match &end {
                End::Complete => "complete".to_string(),
                End::Blocked => "blocked".to_string(),
                End::Failed(f) => format!("failed: {}", f.iter().map(|x| x.kind.to_string()).collect::<Vec<_>>().join(", ")),
            };
            let n = run.counts.complete.load(Relaxed) + run.counts.blocked.load(Relaxed) + 1;
            tracing::debug!(target: "clmm", execution = n, "{what}\n{}", report::trace(graph, locs, &[]));
        }
        let deliver = |end: ExecutionEnd<'_>| (run.sink.lock().unwrap_or_else(|e| e.into_inner()))(Delivery::Execution(end));
        let control = match end {
            End::Complete => {
                run.counts.complete.fetch_add(1, Relaxed);
                deliver(ExecutionEnd { failures: &[], memory: &memory, graph, locs, position })
            }
            End::Blocked => {
                run.counts.blocked.fetch_add(1, Relaxed);
                Control::Continue
            }
            End::Failed(f) => {
                run.counts.complete.fetch_add(1, Relaxed);
                run.counts.failed.fetch_add(1, Relaxed);
                if self.cfg.stop_at_first_failure && run.workers > 1 {
                    // Keep the first in the sequential order; go on with
                    // what comes before it.
                    let mut best = run.best.lock().unwrap_or_else(|e| e.into_inner());
                    if best.as_ref().is_none_or(|b| *position < b.position) {
                        run.has_best.store(true, Relaxed);
                        *best = Some(Best { position: position.clone(), failures: f, memory, graph: graph.clone(), locs: locs.clone() });
                    }
                    Control::Continue
                } else {
                    let c = deliver(ExecutionEnd { failures: &f, memory: &memory, graph, locs, position });
                    if self.cfg.stop_at_first_failure {
                        Control::Stop
                    } else {
                        c
                    }
                }
            }
        };
        drop(shared);
        if control == Control::Stop {
            run.stop.store(true, Relaxed);
            return true;
        }
        if self.plan.is_some() {
            return true;
        }
        if let Some(max) = self.cfg.max_executions {
            if run.counts.complete.load(Relaxed) + run.counts.blocked.load(Relaxed) >= max {
                run.stop.store(true, Relaxed);
                return true;
            }
        }
        let n = run.counts.complete.load(Relaxed) + run.counts.blocked.load(Relaxed);
        if n % 64 == 0 {
            if let Ok(mut p) = run.progress.try_lock() {
                p.tick(&run.counts.stats(), self.frames.iter().map(|f| f.work.len()).sum());
            }
        }
        false
    }

    fn final_memory(&self) -> Vec<FinalLoc> {
        let locs = self.checker.s.borrow();
        let g = &self.frames.last().expect("frame").graph;
        (0..locs.locs.len())
            .map(|l| {
                let loc = LocId(l as u32);
                let writes: Vec<u64> = g.co.get(l).into_iter().flatten().map(|&w| g.ev(w).value).collect();
                FinalLoc { last: g.write_value(g.co_max(loc), &locs.locs), writes, atomic: locs.locs[l].atomic }
            })
            .collect()
    }

    // -------------------------------------------------------------
    // Running one execution
    // -------------------------------------------------------------

    fn reset_runtime(&mut self) {
        let mut s = self.checker.s.borrow_mut();
        s.current = 0;
        s.yielders.clear();
        s.pending.clear();
        s.abandoning = false;
        s.local_ctx = None;
        s.launch.clear();
        s.allocs.clear();
        s.host = host::HostShared::default();
    }

    fn add_unit_rt(&mut self, co: Option<UnitCo>) {
        let spin_cur = self.bufs.spins.pop().unwrap_or_default();
        self.rt.push(UnitRt { co, pos: 0, status: Status::Running, spin_cur, spin_prev: None, spin_wrote: false });
        let mut s = self.checker.s.borrow_mut();
        s.yielders.push(std::ptr::null());
        s.pending.push(None);
    }

    fn spawn_unit(&mut self, body: impl FnOnce() + 'static) {
        let u = self.rt.len();
        self.spawn_unit_at(u, body);
    }

    /// Create unit `u`'s coroutine (units may be created out of id order
    /// when several host threads create units).
    fn spawn_unit_at(&mut self, u: usize, body: impl FnOnce() + 'static) {
        while self.rt.len() < u {
            self.add_unit_rt(None);
            self.rt.last_mut().expect("rt").status = Status::Unborn;
        }
        let shared: *const RefCell<Shared> = &self.checker.s;
        let co = self.pool.spawn(
            body,
            move |y| {
                // SAFETY: the checker outlives every coroutine of the run.
                unsafe { &*shared }.borrow_mut().yielders[u] = y;
            },
        );
        if u < self.rt.len() {
            // An unborn placeholder (`add_unit_rt`): its empty spin record
            // is reused.
            let spin_cur = std::mem::take(&mut self.rt[u].spin_cur);
            self.rt[u] = UnitRt { co: Some(co), pos: 0, status: Status::Running, spin_cur, spin_prev: None, spin_wrote: false };
        } else {
            self.add_unit_rt(Some(co));
        }
    }

    /// Resume unit `u` with `r` until it asks for something or finishes.
    fn resume(&mut self, u: usize, r: Resp) -> Option<Exit> {
        self.checker.s.borrow_mut().current = u;
        let co = self.rt[u].co.as_mut().expect("unit coroutine");
        let exit = runtime::quietly(|| runtime::resume(co, r));
        if let Some(e) = &exit {
            let _ = e;
            self.rt[u].status = Status::Done;
            if let Some(co) = self.rt[u].co.take() {
                self.pool.recycle(co);
            }
        }
        exit
    }

    fn abandon_all(&mut self) {
        self.checker.s.borrow_mut().abandoning = true;
        for u in (0..self.rt.len()).rev() {
            if let Some(mut co) = self.rt[u].co.take() {
                if co.started() && !co.done() {
                    self.checker.s.borrow_mut().current = u;
                    let _ = runtime::quietly(|| runtime::resume(&mut co, Resp::Abandon));
                }
                if co.done() {
                    self.pool.recycle(co);
                } else {
                    // Not started: dropping it runs no user code.
                    drop(co);
                }
            }
        }
        for rt in self.rt.drain(..) {
            for mut v in [rt.spin_cur].into_iter().chain(rt.spin_prev) {
                v.clear();
                self.bufs.spins.push(v);
            }
        }
    }

    fn run_execution(&mut self) -> End {
        self.reset_runtime();
        self.rt.clear();
        self.promises.clear();
        self.promises.extend(self.frames.last().expect("frame").graph.pending_reads());
        self.rederive_deferred();
        if self.graph().units.is_empty() {
            self.graph().units.push(Unit { kind: UnitKind::Host, parent: None, events: Vec::new() });
            self.graph().next_stamp = self.graph().next_stamp.max(1);
        }
        let body: *const (dyn Fn() + Sync + '_) = self.body;
        // SAFETY: the body outlives the run; units are unwound before return.
        let body: &'static (dyn Fn() + Sync) = unsafe { &*std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(body) };
        self.spawn_unit(body);
        if let Some(Exit::Panic(m)) = self.resume(0, Resp::Start) {
            return self.panic_failure(UnitId(0), m);
        }
        self.drive()
    }

    fn livelock(&mut self, u: usize, req: Request) -> End {
        if !self.promises.is_empty() {
            return End::Blocked;
        }
        let site = match req {
            Request::Op(_, s) | Request::Launch(s) | Request::Join(s) | Request::Host(s) => s,
        };
        let who = report::unit_name(self.graph(), UnitId(u as u32));
        let msg = format!(
            "{who} made {} steps without finishing (at {}:{}): a loop that never ends, or a busy-wait without `clmm::hint::spin_loop()`; raise the bound with `Builder::max_steps` or CLMM_MAX_STEPS",
            self.rt[u].pos,
            site.file(),
            site.line()
        );
        self.simple_failure(FailureKind::Livelock, msg, Some(site))
    }

    /// The consistency check of a prefix: the vector clocks, and the
    /// explicit model where they cannot decide (or both, cross-checked,
    /// with `CLMM_CROSSCHECK`).
    fn prefix_consistent(&mut self) -> bool {
        let locs = self.checker.s.borrow();
        let g = &self.frames.last().expect("frame").graph;
        if self.plan.is_some() {
            // A replay forces rf and coherence choices that need not
            // append (a write placed before others).
            self.clocks.note_changed();
        }
        let fast = self.clocks.check(g, &locs.locs, self.cfg.sem);
        let explicit = || model::check(g, &locs.locs, self.cfg.sem, Phase::Prefix).violation;
        match fast {
            vclock::Outcome::Unsure(_) => explicit().is_none(),
            vclock::Outcome::Consistent | vclock::Outcome::Inconsistent(_) => {
                if self.cfg.crosscheck {
                    let slow = explicit();
                    if slow.is_none() != (fast == vclock::Outcome::Consistent) {
                        self.debug_graph();
                        eprintln!("{}", self.clocks.describe());
                        panic!("clmm internal error: the vector clocks say {fast:?} and the explicit model {slow:?} on this prefix (CLMM_CROSSCHECK)");
                    }
                }
                fast == vclock::Outcome::Consistent
            }
        }
    }

    /// Resume `u` with `reply`; `Some(end)` if the execution ends.
    fn reply(&mut self, u: usize, reply: Reply) -> Option<End> {
        self.checker.s.borrow_mut().pending[u] = None;
        match self.resume(u, Resp::Reply(reply)) {
            None => None,
            Some(Exit::Done) | Some(Exit::Abandoned) => None,
            Some(Exit::Panic(m)) => Some(self.panic_failure(UnitId(u as u32), m)),
        }
    }

    fn enabled(&mut self, u: usize, req: Request) -> bool {
        match req {
            Request::Op(Op::Barrier { .. }, _) => {
                // The entry fence can always be added; the exit fence once
                // every other member is at the same instance.
                self.waiting_at(u).is_none() || self.barrier_ready(u)
            }
            Request::Join(_) => {
                let g = &self.frames.last().expect("frame").graph;
                let launch = self.last_launch(u);
                (0..self.rt.len()).all(|v| g.units.get(v).and_then(|x| x.parent) != Some(launch) || self.rt[v].status == Status::Done)
            }
            Request::Host(_) => self.host_enabled(u),
            _ => true,
        }
    }

    fn last_launch(&self, u: usize) -> EventId {
        let g = &self.frames.last().expect("frame").graph;
        let i = g.units[u].events.iter().rposition(|e| e.kind == Kind::Launch).expect("a launch before a join");
        EventId { unit: UnitId(u as u32), index: i as u32 }
    }

    /// The barrier instance unit `u` waits at (its entry is its last event).
    fn waiting_at(&self, u: usize) -> Option<BarrierInst> {
        let g = &self.frames.last().expect("frame").graph;
        let evs = &g.units.get(u)?.events;
        let pos = self.rt[u].pos as usize;
        if pos == 0 || pos != evs.len() {
            return None;
        }
        let last = &evs[pos - 1];
        (last.kind == Kind::BarrierEntry).then_some(last.barrier).flatten()
    }


    /// What the exit of barrier instance `inst` returns to `u`: a
    /// collective's result, 0 for a plain barrier; barrier divergence when
    /// the members did not all call the same collective.
    fn collective_reply(&mut self, u: usize, inst: BarrierInst, site: &'static Location<'static>) -> Result<u64, End> {
        let r = self.frames.last().expect("frame").graph.collective_result(UnitId(u as u32), inst);
        r.map_err(|msg| {
            if !self.prefix_consistent() {
                return End::Blocked;
            }
            self.simple_failure(FailureKind::BarrierDivergence, format!("the work-items of a group do not all reach the same collective: {msg}"), Some(site))
        })
    }

    fn barrier_ready(&self, u: usize) -> bool {
        let Some(inst) = self.waiting_at(u) else { return false };
        let g = &self.frames.last().expect("frame").graph;
        g.barrier_members(UnitId(u as u32), inst.kind).iter().filter(|v| v.index() != u).all(|&v| {
            // Already past this instance (its exit fence is there)?
            let passed = g.barrier_event(v, inst, Kind::BarrierExit).is_some();
            self.waiting_at(v.index()) == Some(inst) || passed || (self.cfg.barrier_partial && self.rt[v.index()].status == Status::Done)
        })
    }

    // -------------------------------------------------------------
    // Replaying events already in the graph
    // -------------------------------------------------------------

    fn replay(&mut self, u: usize, req: Request) -> Result<Option<Reply>, End> {
        let pos = self.rt[u].pos as usize;
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.units[u].events[pos].clone();
        let mismatch = |what: &str| -> End { non_determinism(g, UnitId(u as u32), what) };
        match req {
            Request::Op(op, _) => {
                if !crate::graph::same_op(&op, &ev.op) {
                    return Err(mismatch(&format!("expected {:?}, got {:?}", ev.op, op)));
                }
                match op {
                    Op::Mem { .. } => {
                        self.rt[u].pos += 1;
                        let mut reply = Reply { value: if ev.kind.is_read() { ev.value } else { 0 }, ok: ev.kind != Kind::Read };
                        if let Op::Mem { access: Access::Cas { .. }, .. } = op {
                            reply.ok = ev.kind == Kind::RmwRead;
                        } else {
                            reply.ok = true;
                        }
                        if ev.kind == Kind::RmwRead {
                            if pos + 1 < g.units[u].events.len() {
                                self.rt[u].pos += 1;
                            } else {
                                // The write part is missing: add it now.
                                self.add_rmw_write(u, EventId { unit: UnitId(u as u32), index: pos as u32 });
                                self.rt[u].pos += 1;
                            }
                        }
                        self.note_spin_access(u, EventId { unit: UnitId(u as u32), index: pos as u32 });
                        Ok(Some(reply))
                    }
                    Op::Fence { .. } => {
                        self.rt[u].pos += 1;
                        Ok(Some(Reply { value: 0, ok: true }))
                    }
                    Op::Barrier { .. } => {
                        if ev.kind == Kind::BarrierEntry {
                            self.rt[u].pos += 1;
                            let has_exit = pos + 1 < g.units[u].events.len();
                            if has_exit {
                                self.rt[u].pos += 1;
                                let inst = ev.barrier.expect("a barrier entry has its instance");
                                let value = self.collective_reply(u, inst, ev.site)?;
                                return Ok(Some(Reply { value, ok: true }));
                            }
                            Ok(None)
                        } else {
                            Err(mismatch("a barrier"))
                        }
                    }
                    Op::SpinLoop => {
                        self.rt[u].pos += 1;
                        let last = pos + 1 == self.frames.last().expect("frame").graph.units[u].events.len();
                        if self.end_spin_iteration(u) && last {
                            // It blocked its unit when it was added.
                            self.rt[u].status = Status::SpinBlocked;
                            return Ok(None);
                        }
                        Ok(Some(Reply { value: 0, ok: true }))
                    }
                }
            }
            Request::Launch(_) => {
                if ev.kind != Kind::Launch {
                    return Err(mismatch("a launch"));
                }
                self.rt[u].pos += 1;
                self.start_launch(u, EventId { unit: UnitId(u as u32), index: pos as u32 });
                Ok(Some(Reply { value: 0, ok: true }))
            }
            Request::Join(_) => {
                if ev.kind != Kind::Join {
                    return Err(mismatch("the end of a launch"));
                }
                self.rt[u].pos += 1;
                Ok(Some(Reply { value: 0, ok: true }))
            }
            Request::Host(site) => self.host_step(u, site, true),
        }
    }

    // -------------------------------------------------------------
    // Adding new events
    // -------------------------------------------------------------

    fn new_event(&mut self, u: usize, kind: Kind, op: Op, site: &'static Location<'static>) -> EventId {
        let g = self.graph();
        let stamp = g.next_stamp;
        g.next_stamp += 1;
        let (loc, atomic, flags) = match op {
            Op::Mem { loc, mode, .. } => (Some(loc), match mode { Mode::Plain => None, Mode::Atomic(o, s) => Some((o, s)) }, FenceFlags::empty()),
            Op::Fence { flags, order, scope } => (None, Some((order, scope)), flags),
            Op::Barrier { flags, scope, .. } => (None, Some((if kind == Kind::BarrierEntry { Order::Release } else { Order::Acquire }, scope)), flags),
            Op::SpinLoop => (None, None, FenceFlags::empty()),
        };
        let ev = Event { kind, loc, atomic, flags, rf: None, value: 0, stamp, spurious: false, speculative: false, level: 0, barrier: None, op, site, waits: None };
        let unit = &mut g.units[u];
        unit.events.push(ev);
        let index = (unit.events.len() - 1) as u32;
        self.rt[u].pos += 1;
        let id = EventId { unit: UnitId(u as u32), index };
        if !kind.is_write() {
            // A write settles its promises once its value is known
            // (`push_revisits`).
            self.settle_promises_at(id);
        }
        if self.plan.is_some() {
            if let Some(bt) = self.checker.s.borrow_mut().bt.take() {
                self.backtraces.insert(id, bt);
            }
        }
        id
    }

    fn add_new(&mut self, u: usize, req: Request) -> Result<Option<Reply>, End> {
        match req {
            Request::Op(op, site) => match op {
                Op::Mem { loc, access, mode } => {
                    self.check_local_access(u, loc, site)?;
                    match access {
                        Access::Load => {
                            let r = self.new_event(u, Kind::Read, op, site);
                            let v = match self.pinned(r) {
                                Some(v) => v,
                                None => self.choose_rf(r),
                            };
                            self.note_spin_access(u, r);
                            Ok(Some(Reply { value: v, ok: true }))
                        }
                        Access::Store(v) => {
                            let w = self.new_event(u, Kind::Write, op, site);
                            self.graph().ev_mut(w).value = v;
                            self.place_new_write(w);
                            self.rt[u].spin_wrote = true;
                            Ok(Some(Reply { value: 0, ok: true }))
                        }
                        Access::Rmw(..) | Access::Cas { .. } => {
                            let _ = mode;
                            let r = self.new_event(u, Kind::RmwRead, op, site);
                            let v = self.choose_rf(r);
                            let ok = self.resolve_rmw(r);
                            self.note_spin_access(u, r);
                            if ok {
                                self.rt[u].pos += 1; // the write part
                                self.rt[u].spin_wrote = true;
                            }
                            Ok(Some(Reply { value: v, ok }))
                        }
                    }
                }
                Op::Fence { .. } => {
                    self.new_event(u, Kind::Fence, op, site);
                    Ok(Some(Reply { value: 0, ok: true }))
                }
                Op::Barrier { id, kind, .. } => {
                    let pos = self.rt[u].pos as usize;
                    if pos == self.graph().units[u].events.len() && self.waiting_at(u).is_none() {
                        if self.graph().units[u].group().is_none() {
                            return Err(self.simple_failure(FailureKind::BarrierDivergence, "a barrier called from the host".into(), Some(site)));
                        }
                        // Entry fence with its dynamic instance.
                        let by_id = self.cfg.barrier_by_id;
                        let seq = self.graph().units[u]
                            .events
                            .iter()
                            .filter(|e| e.kind == Kind::BarrierEntry)
                            .filter(|e| e.barrier.is_some_and(|b| b.kind == kind && (!by_id || b.id == id)))
                            .count() as u32;
                        let e = self.new_event(u, Kind::BarrierEntry, op, site);
                        self.graph().ev_mut(e).barrier = Some(BarrierInst { id, kind, seq });
                        Ok(None)
                    } else {
                        let inst = self.waiting_at(u).expect("waiting at a barrier");
                        let value = self.collective_reply(u, inst, site)?;
                        let e = self.new_event(u, Kind::BarrierExit, op, site);
                        self.graph().ev_mut(e).barrier = Some(inst);
                        Ok(Some(Reply { value, ok: true }))
                    }
                }
                Op::SpinLoop => {
                    self.new_event(u, Kind::Spin, op, site);
                    if self.end_spin_iteration(u) {
                        self.rt[u].status = Status::SpinBlocked;
                        return Ok(None);
                    }
                    Ok(Some(Reply { value: 0, ok: true }))
                }
            },
            Request::Launch(site) => {
                let l = self.new_event(u, Kind::Launch, Op::SpinLoop, site);
                self.start_launch(u, l);
                Ok(Some(Reply { value: 0, ok: true }))
            }
            Request::Join(site) => {
                self.new_event(u, Kind::Join, Op::SpinLoop, site);
                Ok(Some(Reply { value: 0, ok: true }))
            }
            Request::Host(site) => self.host_step(u, site, false),
        }
    }

    fn check_local_access(&mut self, u: usize, loc: LocId, site: &'static Location<'static>) -> Result<(), End> {
        let region = self.locs()[loc.0 as usize].region;
        if let Region::Local(g) = region {
            let mine = self.graph().units[u].group();
            if mine != Some(g) && !self.cfg.local_across_groups {
                let who = report::unit_name(self.graph(), UnitId(u as u32));
                let name = self.locs()[loc.0 as usize].name();
                let why = if self.graph().units[u].group().is_none() { ": host threads can touch global memory only" } else { "" };
                return Err(self.simple_failure(
                    FailureKind::LocalMemoryMisuse,
                    format!("local memory of work-group {} ({name}) accessed by {who}{why}", g.0),
                    Some(site),
                ));
            }
        }
        Ok(())
    }

    /// Register the units of a launch (graph and runtime) and start them.
    fn start_launch(&mut self, host: usize, launch: EventId) {
        let (plan, kernel) = *self.checker.s.borrow().launch.get(&host).expect("a launch request carries its plan");
        // SAFETY: the host is suspended inside `Backend::launch`, which owns both.
        let plan: &LaunchPlan = unsafe { &*plan };
        let kernel: &'static (dyn Fn(&WorkItem) + Sync) = unsafe { &*kernel };
        let g = self.graph();
        let existing = g.units.iter().position(|x| x.parent == Some(launch));
        let exists = existing.is_some();
        let first_unit = existing.unwrap_or(g.units.len());
        let group_base = if exists {
            g.units[first_unit].group().map(|x| x.0 as usize).unwrap_or(g.groups.len())
        } else {
            g.groups.len()
        };
        let sub_base = if exists { g.units[first_unit].sub_group().map(|x| x.0 as usize).unwrap_or(g.sub_groups.len()) } else { g.sub_groups.len() };
        // Buffers of the previous launch (no allocation per execution).
        let mut groups = std::mem::take(&mut self.checker.s.borrow_mut().launch_groups);
        groups.clear();
        let mut sub_of_group = std::mem::take(&mut self.bufs.sub_bases);
        sub_of_group.clear();
        let g = self.graph();
        let mut sub_index = sub_base;
        for (gi, gp) in plan.groups.iter().enumerate() {
            let gid = GroupId((group_base + gi) as u32);
            groups.push(gid);
            sub_of_group.push(sub_index);
            sub_index += gp.size.div_ceil(gp.sub_group_size);
            if !exists {
                g.groups.push(GroupInfo { units: Vec::new() });
            }
        }
        if !exists {
            g.sub_groups.resize(sub_index, Vec::new());
        }
        for (i, item) in plan.items.iter().enumerate() {
            let uid = UnitId((first_unit + i) as u32);
            let gi = item.flat_group();
            let sg = SubGroupId((sub_of_group[gi] + item.sub_group_id()) as u32);
            if !exists {
                g.units.push(Unit {
                    kind: UnitKind::WorkItem {
                        global_id: [item.global_id(0), item.global_id(1), item.global_id(2)],
                        group_id: [item.group_id(0), item.group_id(1), item.group_id(2)],
                        local_id: [item.local_id(0), item.local_id(1), item.local_id(2)],
                        group: groups[gi],
                        sub_group: sg,
                        sub_group_index: item.sub_group_id(),
                        device: item.device() as u32,
                    },
                    parent: Some(launch),
                    events: Vec::new(),
                });
                g.groups[groups[gi].0 as usize].units.push(uid);
                g.sub_groups[sg.0 as usize].push(uid);
            }
        }
        self.checker.s.borrow_mut().launch_groups = groups;
        self.bufs.sub_bases = sub_of_group;
        for (i, item) in plan.items.iter().enumerate() {
            let item = item.clone();
            self.spawn_unit_at(first_unit + i, move || kernel(&item));
        }
    }

    /// Start units that have not run yet (after the host finished its local
    /// initialisers and asked to join).
    fn start_pending_units(&mut self) -> Option<End> {
        for u in 0..self.rt.len() {
            let started = self.rt[u].co.as_ref().is_some_and(|c| c.started());
            if self.rt[u].status == Status::Running && self.rt[u].co.is_some() && !started {
                match self.resume(u, Resp::Start) {
                    None | Some(Exit::Done) | Some(Exit::Abandoned) => {}
                    Some(Exit::Panic(m)) => return Some(self.panic_failure(UnitId(u as u32), m)),
                }
            }
        }
        None
    }

    /// The value read by `r` after choosing its write: the maximal one, the
    /// others pushed as alternatives.
    fn choose_rf(&mut self, r: EventId) -> u64 {
        if let Some(step) = self.forced.clone() {
            return self.forced_rf(r, &step);
        }
        let g = &self.frames.last().expect("frame").graph;
        let loc = g.ev(r).loc.expect("read has a location");
        let locs = self.checker.s.borrow();
        let atomic = locs.locs[loc.0 as usize].atomic;
        // Writes coherence-before one that happens before `r` (or that a
        // read happening before `r` reads), and for a non-atomic read the
        // writes `vis` hides, are never offered: no extension of this
        // prefix makes them consistent, and an RMW reading one would push
        // only revisits whose porf-prefix keeps the violation. (A write
        // another RMW reads is still offered to an RMW: that alternative
        // is inconsistent, but the backward revisits of its write part are
        // how the other RMW comes to read it.)
        let floor = self.clocks.co_floor(g, &locs.locs, r);
        let mut cands = std::mem::take(&mut self.bufs.ids);
        cands.clear();
        cands.extend(g.writes_to(loc).skip(floor));
        if !atomic {
            self.clocks.drop_hidden(g, &locs.locs, r, &mut cands);
        }
        drop(locs);
        let chosen = if atomic { *cands.last().expect("initial write") } else { self.max_visible(r, &cands) };
        for &w in &cands {
            if w != chosen {
                self.push(Item::ReadFw { r, w });
            }
        }
        self.bufs.ids = cands;
        self.push_thin_air(r);
        self.push_read_promised(r);
        self.set_rf(r, chosen)
    }

    /// Load buffering where several reads of one unit read one write
    /// porf-after them (`a=Rx; b=Rx; Wy || c=Ry; Wx` with a and b reading
    /// `Wx`): a speculation makes a read `Wx` before it exists, and the
    /// write then has that read in its porf-prefix, so no revisit can make
    /// a later read of the unit read it too (a nested speculation can, in
    /// a rerun of its own, [`Engine::speculations`]). So a new plain load
    /// whose unit's previous read of the location reads a promised write
    /// that is not produced yet may read that promise as well: same write, same value, a
    /// speculative read kept or broken with the other (`keep_promises`).
    /// Only the unit's previous read: a later one that read another write
    /// in between could not read the promise consistently (coherence
    /// order of reads, which the promise cannot be checked against until
    /// it is kept), and a spin loop alternating between the promise and
    /// another write would never block. Termination: the read takes the
    /// promise's value and level, and each read adds at most one
    /// alternative. Found with `tests/lb_differential.rs` (5 of its 6 gaps,
    /// seed 1766 among them).
    fn push_read_promised(&mut self, r: EventId) {
        if self.promises.is_empty() || self.plan.is_some() {
            return;
        }
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.ev(r);
        if !matches!(ev.op, Op::Mem { access: Access::Load, .. }) {
            return;
        }
        let loc = ev.loc;
        let prev = (0..r.index).rev().map(|index| EventId { unit: r.unit, index }).find(|&e| g.ev(e).kind.is_read() && g.ev(e).loc == loc);
        let Some(p) = prev else { return };
        let pev = g.ev(p);
        let Some(w) = pev.rf else { return };
        if !pev.speculative || promise(g, p) != Promise::Pending || w.unit == r.unit {
            return;
        }
        let (value, level) = (pev.value, pev.level);
        self.push(Item::ReadPromised { r, w, value, level });
    }

    /// In a twin's run ([`Pin`]): when new plain load `r` is pinned and
    /// its promised write not produced yet, `r` reads the promise, and no
    /// other write (those are the plain start graph's runs); its value.
    fn pinned(&mut self, r: EventId) -> Option<u64> {
        let g = &self.frames.last().expect("frame").graph;
        let pin = *g.pins.iter().find(|p| p.r == r)?;
        if g.ev(r).loc != Some(pin.loc) || g.contains(pin.w) || self.plan.is_some() {
            return None;
        }
        self.graph().ev_mut(r).read_promise(pin.w, pin.value, pin.level);
        self.promises.push(r);
        Some(pin.value)
    }

    /// Replaying: read what the step says.
    fn forced_rf(&mut self, r: EventId, step: &replay::Step) -> u64 {
        let loc = self.graph().ev(r).loc;
        let Some(w) = step.rf else {
            self.replay_error = Some(replay_mismatch(format!("step {} of the replay string is not a read, but unit {} reads here", self.step - 1, r.unit.0)));
            return 0;
        };
        self.graph().ev_mut(r).spurious = step.spurious;
        let g = &self.frames.last().expect("frame").graph;
        let fits = if w.is_init() { loc == Some(LocId(w.index)) } else { g.contains(w) && g.ev(w).kind.is_write() && g.ev(w).loc == loc };
        if fits {
            return self.set_rf(r, w);
        }
        match step.value {
            Some(v) if !g.contains(w) => {
                self.graph().ev_mut(r).read_promise(w, v, 0);
                self.promises.push(r);
                v
            }
            _ => {
                self.replay_error = Some(replay_mismatch(format!("step {} of the replay string reads from an event that is not a write to this location", self.step - 1)));
                0
            }
        }
    }

    /// For a non-atomic read: the newest write it may read consistently.
    fn max_visible(&mut self, r: EventId, cands: &[EventId]) -> EventId {
        for &w in cands.iter().rev() {
            self.set_rf(r, w);
            if self.prefix_consistent() {
                return w;
            }
        }
        cands[0]
    }

    fn set_rf(&mut self, r: EventId, w: EventId) -> u64 {
        let v = {
            let locs = self.checker.s.borrow();
            self.frames.last().expect("frame").graph.write_value(w, &locs.locs)
        };
        let ev = self.graph().ev_mut(r);
        ev.rf = Some(w);
        ev.value = v;
        ev.speculative = false;
        v
    }

    /// After the read part `r` of an RMW or CAS has its value: decide
    /// success, add the write part. Returns success.
    fn resolve_rmw(&mut self, r: EventId) -> bool {
        let ev = self.graph().ev(r).clone();
        let Op::Mem { access, .. } = ev.op else { unreachable!("rmw op") };
        let success = match access {
            Access::Rmw(..) => true,
            Access::Cas { expected, weak, .. } => {
                let eq = ev.value == expected;
                if eq && weak && !ev.spurious {
                    self.push(Item::Spurious { r });
                }
                eq && !ev.spurious
            }
            _ => unreachable!("rmw access"),
        };
        if success {
            let e = self.graph().ev_mut(r);
            e.kind = Kind::RmwRead;
            if let Op::Mem { mode: Mode::Atomic(o, sc), .. } = e.op {
                e.atomic = Some((o, sc));
            }
            self.add_rmw_write(r.unit.index(), r);
        } else {
            let e = self.graph().ev_mut(r);
            e.kind = Kind::Read;
            if let Op::Mem { access: Access::Cas { failure, .. }, mode: Mode::Atomic(_, s), .. } = e.op {
                e.atomic = Some((failure, s));
            }
        }
        success
    }

    /// Add the write part after read part `r` (co right after its source)
    /// and push the backward revisits of the new write.
    fn add_rmw_write(&mut self, u: usize, r: EventId) {
        let ev = self.graph().ev(r).clone();
        let Op::Mem { loc, access, .. } = ev.op else { unreachable!() };
        let value = match access {
            Access::Rmw(op, ty, arg) => op.apply(ty, ev.value, arg),
            Access::Cas { desired, .. } => desired,
            _ => unreachable!(),
        };
        let g = self.graph();
        let stamp = g.next_stamp;
        g.next_stamp += 1;
        let mut wev = ev.clone();
        wev.kind = Kind::RmwWrite;
        wev.rf = None;
        wev.value = value;
        wev.stamp = stamp;
        wev.barrier = None;
        let unit = &mut g.units[u];
        unit.events.truncate(r.index as usize + 1);
        unit.events.push(wev);
        let w = EventId { unit: r.unit, index: r.index + 1 };
        g.co_insert_after(loc, ev.rf.expect("read part reads"), w);
        self.push_revisits(w);
    }

    /// Place a new plain write co-maximally, push its other placements and
    /// its backward revisits.
    fn place_new_write(&mut self, w: EventId) {
        let loc = self.graph().ev(w).loc.expect("write location");
        let atomic = self.locs()[loc.0 as usize].atomic;
        if let Some(step) = self.forced.clone() {
            let g = self.graph();
            let pred = match step.co_pred {
                Some(p) if (p.is_init() && p.index == loc.0) || (!p.is_init() && g.contains(p) && g.ev(p).kind.is_write() && g.ev(p).loc == Some(loc)) => p,
                _ => {
                    let msg = replay_mismatch(format!("step {} of the replay string does not fit the write unit {} makes here", self.step - 1, w.unit.0));
                    self.replay_error = Some(msg);
                    self.graph().co_max(loc)
                }
            };
            self.graph().co_insert_after(loc, pred, w);
            return;
        }
        self.push_revisits(w);
        let g = &self.frames.last().expect("frame").graph;
        let max = g.co_max(loc);
        if atomic {
            // Not after a write before one that happens before `w` (or
            // that a read happening before `w` reads).
            let floor = self.clocks.co_floor(g, &self.checker.s.borrow().locs, w);
            let mut places = std::mem::take(&mut self.bufs.ids);
            placements(g, loc, floor, &mut places);
            for &p in &places {
                if p != max {
                    self.push(Item::WriteCo { w, pred: p });
                }
            }
            self.bufs.ids = places;
        }
        self.graph().co_insert_after(loc, max, w);
    }

    /// Backward revisits of the new write `w` (not yet in co), and its
    /// speculations.
    fn push_revisits(&mut self, w: EventId) {
        // Before anything reads the graph: a read must not seem to read a
        // write that broke its promise.
        self.settle_promises_at(w);
        if !self.deferred.is_empty() {
            self.push_deferred();
        }
        let mut porf = std::mem::take(&mut self.bufs.porf);
        self.frames.last().expect("frame").graph.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
        // A read in `w`'s porf-prefix only through kept promises may be
        // revisited too, keeping `w`'s revisit prefix
        // (`Graph::revisit_prefix_into`).
        let mut kept = std::mem::take(&mut self.bufs.kept);
        let open = porf.through_promise().then(|| {
            self.frames.last().expect("frame").graph.revisit_prefix_into(&[w], &mut self.bufs.stack, &mut kept);
            &kept
        });
        let mut reads = std::mem::take(&mut self.bufs.reads);
        self.revisits(w, &porf, open, &mut reads);
        if !self.graph().pins.is_empty() {
            let g = &self.frames.last().expect("frame").graph;
            reads.retain(|&r| !self.untaken_pin(g.ev(r).stamp, Some(revisit_keeps(&porf, open, r).0)));
        }
        self.bufs.kept = kept;
        let (specs, nesting) = self.speculations(w, &porf);
        let value = self.graph().ev(w).value;
        match nesting {
            Nesting::At(levels) => {
                for r in specs {
                    let level = levels.of(self.graph(), r);
                    self.push_speculation(r, w, value, level, &porf);
                }
            }
            // `speculations` says `No` when there are no reads to speculate.
            Nesting::Waiting(levels, waits) => self.deferred.push(Deferred { w, levels, reads: specs, waits }),
            Nesting::No => {}
        }
        self.bufs.porf = porf;
        for &r in &reads {
            self.push(Item::Backward { r, w, pred: None });
        }
        self.bufs.reads = reads;
    }

    /// Load buffering (DESIGN.md §5): the loads of `w`'s location in its
    /// porf-prefix, which no revisit can make read from `w`. Each may read
    /// `w`'s value in a rerun that produces `w` again (same unit, position,
    /// location and value); only porf-cyclic complete executions are kept
    /// (`complete`). Values are never invented: only writes that some
    /// explored execution produced are speculated on. RMW and CAS reads do
    /// not speculate (their write part's coherence position needs the
    /// source), see the Deviations of `model`.
    ///
    /// A write whose porf-prefix holds speculative reads is speculated on
    /// too, once their promises are kept ([`promise_level`]): one unit
    /// reading two writes porf-after it (`a=Rx; b=Ry; Wz1 || c=Rz; Wx1;
    /// Wy2`, a <- Wx1, b <- Wy2) needs `b`'s speculation in the run where
    /// `a` reads its promise, and nesting goes as deep as the promises
    /// depend on each other (`lb_speculation_nested_n_deep` in
    /// `tests/semantics.rs`). A speculative read in that prefix may itself
    /// be `r` (re-promised to `w`: `a` and `b` both read `Wx2` there, then
    /// `b` moves on to a later write). Returns the reads and whether and
    /// at which levels they speculate.
    fn speculations(&self, w: EventId, porf: &crate::graph::PrefixSet) -> (Vec<EventId>, Nesting) {
        let g = &self.frames.last().expect("frame").graph;
        if self.plan.is_some() {
            return (Vec::new(), Nesting::No);
        }
        let wev = g.ev(w);
        let (loc, sw) = (wev.loc, wev.stamp);
        // A read of a po-later write of its own unit is inconsistent
        // (`irreflexive rf; (ghb | lhb)`, sb ⊆ hb) except on herd's
        // unqualified locations.
        let unqualified = loc.is_some_and(|l| self.locs()[l.0 as usize].region == Region::Unqualified);
        let reads = g
            .event_ids()
            .filter(|&r| {
                let ev = g.ev(r);
                ev.kind == Kind::Read
                    && ev.loc == loc
                    && ev.stamp < sw
                    && ev.rf != Some(w)
                    && matches!(ev.op, Op::Mem { access: Access::Load, .. })
                    && (r.unit != w.unit || unqualified)
                    && porf.contains(r)
            })
            .collect::<Vec<_>>();
        if reads.is_empty() {
            // The levels (a scan of the graph) only for writes with reads
            // to speculate: most writes have none.
            return (reads, Nesting::No);
        }
        match promise_level(g, porf) {
            Nesting::No => (Vec::new(), Nesting::No),
            nesting => (reads, nesting),
        }
    }

    /// The deferred speculations ([`Deferred`]) whose awaited promises are
    /// now all kept, pushed; those with one broken, dropped.
    fn push_deferred(&mut self) {
        let mut deferred = std::mem::take(&mut self.deferred);
        deferred.retain_mut(|d| {
            let g = &self.frames.last().expect("frame").graph;
            if d.waits.iter().any(|&r| promise(g, r) == Promise::Lost) {
                return false;
            }
            d.waits.retain(|&r| promise(g, r) == Promise::Pending);
            if d.waits.is_empty() {
                let value = g.ev(d.w).value;
                let porf = g.porf_prefix(d.w);
                for &r in &d.reads {
                    let level = d.levels.of(self.graph(), r);
                    self.push_speculation(r, d.w, value, level, &porf);
                }
                return false;
            }
            true
        });
        self.deferred = deferred;
    }

    /// The deferred speculations of the run's graph, made again: those of
    /// its writes whose porf-prefix holds pending promises. A run that
    /// starts from an alternative has lost the ones the run that pushed
    /// the alternative made (that run may have broken the promise they
    /// wait for: a read after the write read something else, and its
    /// alternative keeps the promise; `dependent_values_deferred_in_an_alternative`
    /// in `tests/lb_differential.rs`). A speculation pushed again meets its
    /// start graph in [`Run::spec_seen`].
    fn rederive_deferred(&mut self) {
        self.deferred.clear();
        if self.promises.is_empty() || self.plan.is_some() {
            return;
        }
        let mut porf = std::mem::take(&mut self.bufs.porf);
        let writes: Vec<EventId> = {
            let g = &self.frames.last().expect("frame").graph;
            // Only writes with a plain load of their location added before
            // them (`speculations` looks at no other) get a walk: the
            // stamp of each location's first plain load, in one pass.
            let mut first_load: Vec<u32> = Vec::new();
            for e in g.event_ids() {
                let ev = g.ev(e);
                if let (Some(l), Op::Mem { access: Access::Load, .. }) = (ev.loc, ev.op) {
                    let l = l.0 as usize;
                    if first_load.len() <= l {
                        first_load.resize(l + 1, u32::MAX);
                    }
                    first_load[l] = first_load[l].min(ev.stamp);
                }
            }
            let loaded_before = |w: EventId| g.ev(w).loc.and_then(|l| first_load.get(l.0 as usize)).is_some_and(|&s| s < g.ev(w).stamp);
            g.event_ids().filter(|&w| g.ev(w).kind.is_write() && loaded_before(w)).collect()
        };
        for w in writes {
            self.frames.last().expect("frame").graph.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
            if let (reads, Nesting::Waiting(levels, waits)) = self.speculations(w, &porf) {
                self.deferred.push(Deferred { w, levels, reads, waits });
            }
        }
        self.bufs.porf = porf;
    }

    /// Push the speculation `r <- w` (`value`, at `level`), and its twin
    /// when `w`'s porf-prefix `porf` holds another promise, which the
    /// start graph may cut away ([`Pin`]; [`Engine::twin_pins`] tells).
    /// The twin comes after the plain one in the exploration order.
    fn push_speculation(&mut self, r: EventId, w: EventId, value: u64, level: u8, porf: &crate::graph::PrefixSet) {
        let g = &self.frames.last().expect("frame").graph;
        let other = |e: EventId| e != r && g.ev(e).speculative && g.ev(e).rf.is_some_and(|w| w.index & THIN_AIR == 0) && porf.contains(e);
        if g.event_ids().any(other) {
            self.push(Item::Speculate { r, w, value, level, twin: true });
        }
        self.push(Item::Speculate { r, w, value, level, twin: false });
    }

    /// Herd compatibility ([`Config::thin_air`]): a plain load `r` may also
    /// read each of the given values from a write that another work-item
    /// has not produced yet, out of thin air (the `.cat` model has no
    /// dependencies: `if (r0) y = 1;` on both sides of load buffering is
    /// consistent). One such speculation at a time, as for [`Item::Speculate`].
    fn push_thin_air(&mut self, r: EventId) {
        let Some(values) = self.cfg.thin_air.clone() else { return };
        let g = &self.frames.last().expect("frame").graph;
        let thin = |e: EventId| g.ev(e).speculative && g.ev(e).rf.is_some_and(|w| w.index & THIN_AIR != 0 || !g.contains(w));
        if self.plan.is_some() || !matches!(g.ev(r).op, Op::Mem { access: Access::Load, .. }) || g.event_ids().filter(|&e| thin(e)).count() >= 2 {
            return;
        }
        let units: Vec<UnitId> = (0..g.units.len() as u32).map(UnitId).filter(|&u| u != r.unit && matches!(g.units[u.index()].kind, UnitKind::WorkItem { .. })).collect();
        for unit in units {
            for &value in values.iter() {
                self.push(Item::ThinAir { r, unit, value });
            }
        }
    }

    /// After a step: bind the thin-air promises a write of their unit now
    /// keeps, and tell whether the run may go on: false when a promise is
    /// broken ([`Graph::settle_promise`]) and nothing the run can still
    /// add could repair it ([`Engine::repairable`]). A broken run goes on
    /// while it can: its complete graph never counts, but the alternatives
    /// it pushes may delete the event that broke the promise, and the
    /// rerun then keeps it (a unit that wrote the wrong value because it
    /// ran before the unit whose write it reads, `lb_three_units_copying_values`
    /// in `tests/litmus_table.rs`).
    fn keep_promises(&mut self) -> bool {
        if self.promises.is_empty() {
            return true;
        }
        let g = &self.frames.last().expect("frame").graph;
        let mut bound = Vec::new();
        self.promises.retain(|&r| {
            let ev = g.ev(r);
            let w = ev.rf.expect("speculative read");
            if w.index & THIN_AIR != 0 {
                let unit = &g.units[w.unit.index()].events;
                let found = unit.iter().enumerate().find(|(_, e)| e.stamp > ev.stamp && e.writes(ev.loc, ev.value));
                return match found {
                    Some((i, _)) => {
                        bound.push((r, EventId { unit: w.unit, index: i as u32 }));
                        false
                    }
                    None => true,
                };
            }
            // Kept (a broken one stays pending: it is not in the graph).
            !g.contains(w)
        });
        for (r, w) in bound {
            self.graph().ev_mut(r).rf = Some(w);
            self.clocks.note_changed();
        }
        self.repairable()
    }

    /// Settle the pending promises of position `id`, which an event just
    /// took ([`Graph::settle_promise`]); O(promises), not O(events).
    fn settle_promises_at(&mut self, id: EventId) {
        for i in 0..self.promises.len() {
            let r = self.promises[i];
            if self.graph().ev(r).rf == Some(id) {
                self.graph().settle_promise(r);
            }
        }
    }

    /// Whether every broken promise of the run could still be repaired: a
    /// revisit that deletes the event at the promised position `(u, i)`
    /// needs a write that a unit other than `u` adds later without `(u,
    /// i)` in its porf-prefix (a write of `u` itself, or one that depends
    /// on `(u, i)`, keeps it). So some other unit must be able to go on
    /// (running, or spinning until a new write) without depending on the
    /// event at the position.
    fn repairable(&mut self) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        let broken = |r: &EventId| g.ev(*r).rf.and_then(broken_position);
        if !self.promises.iter().any(|r| broken(r).is_some()) {
            return true;
        }
        let mut stack = std::mem::take(&mut self.bufs.stack);
        let mut porf = std::mem::take(&mut self.bufs.porf);
        let ok = self.promises.iter().filter_map(broken).all(|at| {
            (0..self.rt.len()).any(|v| {
                if v == at.unit.index() || !matches!(self.rt[v].status, Status::Running | Status::SpinBlocked) {
                    return false;
                }
                let n = g.units[v].events.len();
                if n == 0 {
                    return true;
                }
                g.porf_prefix_into(&[EventId { unit: UnitId(v as u32), index: n as u32 - 1 }], &mut stack, &mut porf);
                !porf.contains(at)
            })
        });
        self.bufs.stack = stack;
        self.bufs.porf = porf;
        ok
    }

    /// The reads `w` may backward-revisit: same location, added before `w`,
    /// not in its porf-prefix, and every event the revisit deletes (and the
    /// read itself) maximally added (TruSt, POPL'22, §5):
    /// for `e` in Deleted ∪ {r}, with Previous(e) = {e' ≤ e} ∪ porf(w) \ {w}:
    /// a write `e` has no reader in Previous(e); a read `e` reads from a write
    /// in Previous(e) which is its maximal choice there.
    ///
    /// With `open` (`w`'s revisit prefix, when its porf-prefix goes through
    /// a kept promise), a read in the porf-prefix but not in `open` is a
    /// candidate too: the revisit keeps `open` and deletes the promised
    /// writes that put the read there, whose promises are pending again
    /// (a unit that owes a promise ran before the unit whose write its
    /// read needs, and that write depends on the promise:
    /// `dependent_values_owing_units_out_of_order` in
    /// `tests/lb_differential.rs`). The other reads keep the porf-prefix.
    fn revisits(&self, w: EventId, porf: &crate::graph::PrefixSet, open: Option<&crate::graph::PrefixSet>, out: &mut Vec<EventId>) {
        let g = &self.frames.last().expect("frame").graph;
        let wev = g.ev(w);
        let loc = wev.loc.expect("write location");
        let sw = wev.stamp;
        let outside = open.unwrap_or(porf);
        out.clear();
        out.extend(g.event_ids().filter(|&e| {
            let ev = g.ev(e);
            ev.kind.is_read() && ev.loc == Some(loc) && ev.stamp < sw && !outside.contains(e) && !(e.unit == w.unit && e.index + 1 == w.index)
        }));
        out.sort_by_key(|&e| std::cmp::Reverse(g.ev(e).stamp));
        let shared = self.checker.s.borrow();
        let locs = &shared.locs;
        out.retain(|&r| {
            let sr = g.ev(r).stamp;
            let (keeps, reopens) = revisit_keeps(porf, open, r);
            let mut deleted = g.event_ids().filter(|&e| g.ev(e).stamp > sr && !keeps.contains(e));
            deleted.all(|e| self.maximal(g, locs, keeps, reopens, w, e)) && self.maximal(g, locs, keeps, reopens, w, r)
        });
    }

    /// TruSt's maximality of `e` for a revisit by `w` that keeps `porf`.
    /// With `reopens` (the revisit deletes kept promises' writes), a write
    /// read only by speculative reads may be deleted.
    fn maximal(&self, g: &Graph, locs: &[LocInfo], porf: &crate::graph::PrefixSet, reopens: bool, w: EventId, e: EventId) -> bool {
        let ev = g.ev(e);
        let se = ev.stamp;
        let prev = |x: EventId| x != w && (x.is_init() || g.ev(x).stamp <= se || porf.contains(x));
        if ev.kind.is_write() {
            // (1) it revisited no read of Previous(e). A speculative reader
            // was not revisited: `e` kept its promise, and deleting `e`
            // leaves the promise pending (`Graph::revisit_prefix_into`).
            if g.readers_of(e).any(|x| prev(x) && !(reopens && g.ev(x).speculative)) {
                return false;
            }
            // (3) it is co-maximal in Previous(e) (atomic locations: the
            // others have a single coherence placement, insertion order)
            let loc = ev.loc.expect("loc");
            if locs[loc.0 as usize].atomic && g.writes_to(loc).skip_while(|&x| x != e).skip(1).any(prev) {
                return false;
            }
        }
        if ev.kind.is_read() {
            if ev.spurious || ev.speculative {
                // A weak CAS's spurious failure and a speculative read (load
                // buffering) are alternatives, never the maximal choice.
                return false;
            }
            let rf = ev.rf.expect("read has rf");
            if !g.contains(rf) || !prev(rf) {
                return false;
            }
            let loc = ev.loc.expect("loc");
            if locs[loc.0 as usize].atomic {
                // co-maximal among the writes in Previous(e)
                let later = g.writes_to(loc).skip_while(|&x| x != rf).skip(1).any(|x| prev(x) && !(x.unit == e.unit && x.index == e.index + 1));
                if later {
                    return false;
                }
            } else {
                // The newest write of Previous(e) that e may read consistently.
                let mut h = g.clone();
                h.restrict(|id, _| prev(id) || id == e);
                // Every read of h must read inside h (a thin-air read's
                // promised write is not produced yet anywhere; with
                // `reopens`, h may leave a kept promise pending).
                let closed = h.event_ids().all(|x| (reopens && h.ev(x).speculative) || h.ev(x).rf.is_none_or(|s| h.contains(s) || s.index & THIN_AIR != 0));
                if !closed || !h.contains(e) {
                    return false;
                }
                let cands: Vec<EventId> = h.writes_to(loc).collect();
                for &c in cands.iter().rev() {
                    let v = h.write_value(c, locs);
                    let x = h.ev_mut(e);
                    x.rf = Some(c);
                    x.value = v;
                    if model::check(&h, locs, self.cfg.sem, Phase::Prefix).violation.is_none() {
                        return c == rf;
                    }
                }
                return false;
            }
        }
        true
    }

    fn note_spin_access(&mut self, u: usize, e: EventId) {
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.ev(e);
        if let (Some(l), Some(w)) = (ev.loc, ev.rf) {
            self.rt[u].spin_cur.push((l, w));
        }
        if ev.kind == Kind::RmwRead && g.units[u].events.len() > e.index as usize + 1 {
            self.rt[u].spin_wrote = true;
        }
    }

    /// End a spin-loop iteration; true if the unit is blocked (it wrote
    /// nothing and read the same writes as in the previous iteration).
    ///
    /// The first iteration's record also holds what the unit did before
    /// the loop, so an iteration is compared with the *end* of the previous
    /// record (its last `cur.len()` reads).
    fn end_spin_iteration(&mut self, u: usize) -> bool {
        let rt = &mut self.rt[u];
        let cur = &rt.spin_cur;
        let wrote = std::mem::replace(&mut rt.spin_wrote, false);
        let blocked = !wrote && rt.spin_prev.as_ref().is_some_and(|p| p.len() >= cur.len() && p[p.len() - cur.len()..] == cur[..]);
        // The current record becomes the previous one; the old previous
        // one's buffer records the next iteration.
        match &mut rt.spin_prev {
            Some(prev) => {
                std::mem::swap(prev, &mut rt.spin_cur);
                rt.spin_cur.clear();
            }
            None => rt.spin_prev = Some(std::mem::replace(&mut rt.spin_cur, self.bufs.spins.pop().unwrap_or_default())),
        }
        blocked
    }

    // -------------------------------------------------------------
    // The end of an execution
    // -------------------------------------------------------------

    fn finish(&mut self) -> End {
        if let Some(end) = self.start_pending_units() {
            return end;
        }
        let pending = |e: &Self, u: usize| if e.rt[u].status == Status::Running { e.checker.s.borrow().pending[u] } else { None };
        let running = (0..self.rt.len()).any(|u| pending(self, u).is_some_and(|r| self.enabled(u, r)));
        if !running && !self.promises.is_empty() && self.plan.is_none() {
            // A speculated write that can no longer come.
            return End::Blocked;
        }
        // Starting units may have produced requests.
        let any_pending =
            running || (0..self.rt.len()).any(|u| pending(self, u).is_some() && (self.rt[u].pos as usize) < self.frames.last().expect("frame").graph.units[u].events.len());
        if any_pending {
            return self.drive();
        }
        let stuck: Vec<usize> = (0..self.rt.len()).filter(|&u| self.rt[u].status == Status::Running).collect();
        if stuck.is_empty() {
            return self.complete();
        }
        let spinning: Vec<usize> = (0..self.rt.len()).filter(|&u| self.rt[u].status == Status::SpinBlocked).collect();
        if !spinning.is_empty() {
            return self.spin_deadlock(&spinning);
        }
        // Barrier divergence: someone waits at a barrier that cannot complete.
        for &u in &stuck {
            if let Some(inst) = self.waiting_at(u) {
                let g = &self.frames.last().expect("frame").graph;
                let mut desc = Vec::new();
                for v in g.barrier_members(UnitId(u as u32), inst.kind).iter().map(|v| v.index()) {
                    let what = match self.waiting_at(v) {
                        Some(b) => format!("waits at {} {} (instance {})", g.units[v].events.last().map_or("barrier".into(), |e| crate::graph::barrier_name(&e.op)), b.id, b.seq),
                        None if self.rt[v].status == Status::Done => "finished".to_string(),
                        None => "waits elsewhere".to_string(),
                    };
                    desc.push(format!("{} {}", report::unit_name(g, UnitId(v as u32)), what));
                }
                let site = g.units[u].events.last().map(|e| e.site);
                if !self.prefix_consistent() {
                    return End::Blocked;
                }
                return self.simple_failure(
                    FailureKind::BarrierDivergence,
                    format!("the work-items of a group do not all reach the same barrier: {}", desc.join("; ")),
                    site,
                );
            }
        }
        let waits: Vec<String> = stuck.iter().filter_map(|&u| self.host_wait_text(u)).collect();
        let g = &self.frames.last().expect("frame").graph;
        let desc: Vec<String> = stuck.iter().map(|&u| report::unit_name(g, UnitId(u as u32))).collect();
        let mut msg = format!("no unit can proceed: {} wait", desc.join(", "));
        if !waits.is_empty() {
            msg = format!("{msg}; {}", waits.join("; "));
        }
        self.simple_failure(FailureKind::Deadlock, msg, None)
    }

    /// Every unit is finished or waiting and some spin: if each spinning
    /// unit's last iteration read the newest write of every location it
    /// read, nothing can ever change what it sees, so it waits forever (a
    /// deadlock, GenMC's liveness violation); otherwise a newer write would
    /// eventually be seen and this exploration only blocked.
    fn spin_deadlock(&mut self, spinning: &[usize]) -> End {
        if !self.promises.is_empty() {
            return End::Blocked;
        }
        let g = &self.frames.last().expect("frame").graph;
        // A weak CAS that failed spuriously would eventually succeed.
        let spurious = |u: usize| g.units[u].events.iter().rev().skip(1).take_while(|e| e.kind != Kind::Spin).any(|e| e.spurious);
        let stale = spinning
            .iter()
            .any(|&u| spurious(u) || self.rt[u].spin_prev.as_ref().is_none_or(|reads| reads.iter().any(|&(l, w)| g.co_max(l) != w)));
        if stale {
            return End::Blocked;
        }
        let locs = self.checker.s.borrow().locs.clone();
        if model::check(g, &locs, self.cfg.sem, Phase::Complete).violation.is_some() {
            return End::Blocked;
        }
        let desc: Vec<String> = spinning
            .iter()
            .map(|&u| {
                let reads = self.rt[u].spin_prev.as_deref().unwrap_or(&[]);
                let seen: Vec<String> = reads.iter().map(|&(l, w)| format!("{} = {}", locs[l.0 as usize].name(), g.write_value(w, &locs) as i64)).collect();
                format!("{} spins forever on {}", report::unit_name(g, UnitId(u as u32)), seen.join(", "))
            })
            .collect();
        let others: Vec<String> = (0..self.rt.len())
            .filter(|&u| self.rt[u].status == Status::Running)
            .map(|u| self.host_wait_text(u).unwrap_or_else(|| format!("{} waits", report::unit_name(g, UnitId(u as u32)))))
            .collect();
        let site = spinning.first().and_then(|&u| g.units[u].events.last()).map(|e| e.site);
        let mut msg = format!("{}: no unit left can write a new value there", desc.join("; "));
        if !others.is_empty() {
            msg = format!("{msg}; {}", others.join(", "));
        }
        self.simple_failure(FailureKind::Deadlock, msg, site)
    }

    /// The main loop of an execution: replay every request whose event is
    /// already in the graph, then add the next new event (the lowest enabled
    /// unit), until no unit can go on (`finish`).
    fn drive(&mut self) -> End {
        loop {
            let mut progress = false;
            for u in 0..self.rt.len() {
                if self.rt[u].status != Status::Running {
                    continue;
                }
                let Some(req) = self.checker.s.borrow().pending[u] else { continue };
                if (self.rt[u].pos as usize) < self.graph().units[u].events.len() {
                    if matches!(req, Request::Join(_) | Request::Host(_)) && !self.enabled(u, req) {
                        // A recorded join or wait still waits for its
                        // kernel, command, thread or event.
                        continue;
                    }
                    match self.replay(u, req) {
                        Ok(Some(reply)) => {
                            if !self.keep_promises() {
                                return End::Blocked;
                            }
                            if let Some(end) = self.reply(u, reply) {
                                return end;
                            }
                            progress = true;
                        }
                        Ok(None) => {}
                        Err(end) => return end,
                    }
                }
            }
            if progress {
                continue;
            }
            let mut chosen = None;
            if let Some(step) = self.plan.as_ref().and_then(|p| p.steps.get(self.step)).cloned() {
                // Replaying: the recorded unit takes the next step.
                let u = step.unit as usize;
                if u < self.rt.len() && self.rt[u].co.as_ref().is_some_and(|c| !c.started()) {
                    // Work-items start once the host waits for its kernel.
                    if let Some(end) = self.start_pending_units() {
                        return end;
                    }
                }
                let req = (u < self.rt.len() && self.rt[u].status == Status::Running).then(|| self.checker.s.borrow().pending[u]).flatten();
                match req.filter(|&r| self.enabled(u, r)) {
                    Some(req) => chosen = Some((u, req)),
                    None => {
                        self.replay_error = Some(replay_mismatch(format!("step {} of the replay string expects unit {u} to go on, and it cannot here", self.step)));
                        return End::Blocked;
                    }
                }
                self.step += 1;
                self.forced = Some(step);
            }
            // The lowest enabled unit goes on; in a speculative run, the
            // units that owe a promised write go after the others, so that
            // their reads (the promised write's porf-prefix) see every
            // other unit's writes when they are added. A read of that
            // prefix that needs a write depending on the speculation could
            // not get it by a revisit once the promise is kept (it would be
            // in the writer's porf-prefix through the promise): with the
            // owing unit first, `lb_with_rmw_in_first_item`
            // (`tests/semantics.rs`) and seeds 1884 and 2243 of
            // `tests/lb_differential.rs` missed their cycle.
            let owes = |e: &Self, u: usize| {
                let g = &e.frames.last().expect("frame").graph;
                e.promises.iter().any(|r| g.ev(*r).rf.is_some_and(|w| w.unit.index() == u))
            };
            let mut owing = None;
            for u in 0..self.rt.len() {
                if chosen.is_some() {
                    break;
                }
                if self.rt[u].status != Status::Running {
                    continue;
                }
                let Some(req) = self.checker.s.borrow().pending[u] else { continue };
                if !self.enabled(u, req) {
                    continue;
                }
                if !self.promises.is_empty() && owes(self, u) {
                    owing = owing.or(Some((u, req)));
                } else {
                    chosen = Some((u, req));
                }
            }
            chosen = chosen.or(owing);
            let Some((u, req)) = chosen else { return self.finish() };
            if self.rt[u].pos >= self.cfg.max_steps {
                return self.livelock(u, req);
            }
            let added = self.add_new(u, req);
            self.forced = None;
            if self.replay_error.is_some() {
                return End::Blocked;
            }
            if added.is_ok() && !self.keep_promises() {
                return End::Blocked;
            }
            match added {
                Ok(Some(reply)) => {
                    if !self.prefix_consistent() {
                        return End::Blocked;
                    }
                    if let Some(end) = self.reply(u, reply) {
                        return end;
                    }
                }
                Ok(None) => {
                    if !self.prefix_consistent() {
                        return End::Blocked;
                    }
                }
                Err(end) => return end,
            }
        }
    }

    fn complete(&mut self) -> End {
        if !self.promises.is_empty() {
            // A speculated write was never produced.
            return End::Blocked;
        }
        if !self.pins_taken() {
            // The plain start graph's run, explored there.
            return End::Blocked;
        }
        let checker = self.checker;
        let shared = checker.s.borrow();
        let locs = &shared.locs;
        let g = &self.frames.last().expect("frame").graph;
        let well_formed = g.event_ids().all(|r| {
            let ev = g.ev(r);
            ev.rf.is_none_or(|w| {
                (w.is_init() && ev.loc == Some(LocId(w.index)) && ev.value == locs[w.index as usize].init)
                    || (!w.is_init() && g.contains(w) && g.ev(w).writes(ev.loc, ev.value))
            })
        });
        if !well_formed {
            debug_assert!(false, "an execution graph with a read of a non-write");
            return End::Blocked;
        }
        let v = match self.clocks.complete(g, locs, self.cfg.sem) {
            Some(fast) => {
                if self.cfg.crosscheck {
                    let slow = model::check(g, locs, self.cfg.sem, Phase::Complete);
                    if fast.violation.is_some() != slow.violation.is_some() || (fast.violation.is_none() && (fast.races != slow.races || fast.divergence != slow.divergence)) {
                        self.debug_graph();
                        panic!("clmm internal error: on a complete graph the vector clocks say {fast:?} and the explicit model {slow:?} (CLMM_CROSSCHECK)");
                    }
                }
                fast
            }
            None => model::check(g, locs, self.cfg.sem, Phase::Complete),
        };
        if v.violation.is_some() {
            return End::Blocked;
        }
        drop(shared);
        if !self.speculation_counts() {
            return End::Blocked;
        }
        let g = &self.frames.last().expect("frame").graph;
        let mut failures = Vec::new();
        if let Some(&(a, b)) = v.races.first() {
            failures.push(self.race_failure(a, b));
        }
        if let Some(&e) = v.divergence.first() {
            let ev = g.ev(e);
            let msg = format!("the barrier entry of {} synchronises with no other work-item of its group (flags {})", report::unit_name(g, e.unit), ev.flags);
            if let End::Failed(f) = self.simple_failure(FailureKind::BarrierDivergence, msg, Some(ev.site)) {
                failures.extend(f);
            }
        }
        if failures.is_empty() {
            End::Complete
        } else {
            End::Failed(failures)
        }
    }

    /// In a twin's run ([`Pin`]): whether an alternative that keeps the
    /// events added up to `stamp` (and `porf`, for a backward revisit)
    /// keeps an event at a pinned position that did not take its pin: its
    /// runs all end blocked, being the plain start graph's, so it is not
    /// pushed.
    fn untaken_pin(&self, stamp: u32, porf: Option<&crate::graph::PrefixSet>) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.pins.iter().any(|p| g.contains(p.r) && !p.taken(g) && (g.ev(p.r).stamp <= stamp || porf.is_some_and(|x| x.contains(p.r))))
    }

    /// Whether every pin of a twin's run ([`Pin`]) made its read read the
    /// promise, and the promise is not broken.
    fn pins_taken(&self) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.pins.iter().all(|p| p.taken(g) && g.ev(p.r).rf == Some(p.w))
    }

    /// Whether the execution that ends here counts (complete or failed):
    /// one without speculation does; a speculative one only if it is
    /// porf-cyclic and was not counted before (the acyclic ones are
    /// TruSt's, explored exactly once there; speculations from different
    /// graphs may meet the same cycle). Sets `cyclic_fp`.
    fn speculation_counts(&mut self) -> bool {
        if self.cyclic_fp.is_some() {
            return true;
        }
        let g = &self.frames.last().expect("frame").graph;
        if !g.event_ids().any(|e| g.ev(e).speculative) {
            return true;
        }
        // Only a speculative read can read a write porf-after it: a
        // revisit needs the read outside the write's porf-prefix, which
        // never grows.
        let (mut stack, mut porf) = (std::mem::take(&mut self.bufs.stack), std::mem::take(&mut self.bufs.porf));
        let cyclic = g.event_ids().any(|r| {
            let ev = g.ev(r);
            ev.speculative
                && ev.rf.is_some_and(|w| {
                    !w.is_init() && g.contains(w) && {
                        g.porf_prefix_into(&[w], &mut stack, &mut porf);
                        porf.contains(r)
                    }
                })
        });
        (self.bufs.stack, self.bufs.porf) = (stack, porf);
        let fp = g.fingerprint();
        if !cyclic || !self.run.cyclic_seen.insert(fp) {
            return false;
        }
        self.cyclic_fp = Some(fp);
        true
    }

    /// The failure of the current execution: its trace, replay string and
    /// (when asked for) picture, with `marked` as the accesses it is about
    /// (their replay backtraces too). The one place a report is built:
    /// only when an execution fails.
    fn failure(&self, kind: FailureKind, message: String, marked: &[EventId]) -> Failure {
        let shared = self.checker.s.borrow();
        let locs = &shared.locs;
        let g = &self.frames.last().expect("frame").graph;
        Failure {
            message,
            accesses: marked.iter().map(|&e| report::access_info(g, locs, e)).collect(),
            reason: None,
            panic_site: None,
            trace: report::trace(g, locs, marked),
            replay: crate::replay::encode(g),
            backtraces: marked.iter().filter_map(|&e| self.backtraces.get(&crate::replay::node(g, e)).cloned()).map(report::render_backtrace).collect(),
            dot: self.cfg.dot_dir.as_ref().map(|_| crate::dot::render(g, locs, self.cfg.sem, marked, &kind.to_string())),
            kind,
            dot_file: None,
        }
    }

    fn race_failure(&self, a: EventId, b: EventId) -> Failure {
        let (a, b) = if a.is_init() { (b, a) } else { (a, b) };
        let (message, reason) = {
            let shared = self.checker.s.borrow();
            let g = &self.frames.last().expect("frame").graph;
            let ctx = model::Ctx::new(g, &shared.locs, self.cfg.sem);
            let loc = g.ev(a).loc.expect("access");
            (format!("on {}", report::loc_name(&shared.locs, loc)), model::race::explain(&ctx, ctx.index(a), ctx.index(b)))
        };
        Failure { reason: Some(reason), ..self.failure(FailureKind::DataRace, message, &[a, b]) }
    }

    fn simple_failure(&self, kind: FailureKind, message: String, site: Option<&'static Location<'static>>) -> End {
        End::Failed(vec![Failure { panic_site: site.map(Into::into), ..self.failure(kind, message, &[]) }])
    }

    fn panic_failure(&mut self, u: UnitId, msg: String) -> End {
        let site = runtime::take_panic_location();
        let bt = runtime::take_panic_backtrace();
        if !self.promises.is_empty() {
            // A speculation whose write never came: not a real execution.
            return End::Blocked;
        }
        let (v, who) = {
            let shared = self.checker.s.borrow();
            let g = &self.frames.last().expect("frame").graph;
            // A panic in an execution that cannot be completed consistently
            // is not a real one; a race in its prefix is the root cause.
            (model::check(g, &shared.locs, self.cfg.sem, Phase::Complete), report::unit_name(g, u))
        };
        if v.violation.is_some() {
            return End::Blocked;
        }
        if let Some(&(a, b)) = v.races.first() {
            let mut f = self.race_failure(a, b);
            f.message = format!("{} (and then {who} panicked: {msg})", f.message);
            return End::Failed(vec![f]);
        }
        End::Failed(vec![Failure {
            panic_site: site.map(|(file, line, column)| crate::report::SourceLoc { file, line, column }),
            backtraces: bt.map(report::render_backtrace).into_iter().collect(),
            ..self.failure(FailureKind::Panic, format!("{who} panicked: {msg}"), &[])
        }])
    }

    // -------------------------------------------------------------
    // Alternatives
    // -------------------------------------------------------------

    /// Start a speculation: read `r` reads `value` from `w`, a write not
    /// in the graph yet (a thin-air promise, or a position the rerun must
    /// fill with a fitting write); false when the graph cannot be built or
    /// was speculated from already.
    fn speculate(&mut self, r: EventId, w: EventId, value: u64, level: u8, twin: bool) -> bool {
        let Some(mut g) = self.speculation_prefix(r) else {
            if self.cfg.debug_explore {
                eprintln!("  (no start graph)");
            }
            return false;
        };
        // A nested start graph is no twin: the pins it keeps are
        // speculative reads now, and those it cuts away are its own twin's.
        g.pins.clear();
        if twin {
            self.twin_pins(r, w, &mut g);
            if g.pins.is_empty() {
                if self.cfg.debug_explore {
                    eprintln!("  (no twin: the cut keeps the promises w depends on)");
                }
                self.bufs.graphs.push(g);
                return false;
            }
        }
        if g.contains(w) && !g.ev(w).writes(g.ev(r).loc, value) {
            self.bufs.graphs.push(g);
            return false;
        }
        g.ev_mut(r).read_promise(w, value, level);
        if (0..g.units.len()).any(|u| returns_to_a_promise(&g, UnitId(u as u32))) || !promises_agree(&g) {
            if self.cfg.debug_explore {
                eprintln!("  (incoherent: returns to a promised write, or two values promised for one write)");
            }
            self.bufs.graphs.push(g);
            return false;
        }
        if !self.run.spec_seen.insert(start_key(&g)) {
            if self.cfg.debug_explore {
                eprintln!("  (start graph seen)");
            }
            self.bufs.graphs.push(g);
            return false;
        }
        let deepest = g.event_ids().filter(|&e| g.ev(e).speculative).map(|e| g.ev(e).level).max();
        if deepest.is_some_and(|d| d > self.cfg.nesting_limit) {
            self.too_deep = deepest;
        }
        self.push_frame(g);
        true
    }

    /// The graph a speculation of read `r` starts from: what was added up
    /// to `r`, closed under porf (a read revisited earlier keeps its later
    /// write). A read added before `r` that a revisit made read a write
    /// porf-after `r` keeps that write as a promise of its own (the rerun
    /// must produce it again, as for `r`): in `a=Rx; Wy2 || b=Ry; Wx1 ||
    /// c=Ry; Wy1` the cycle `a <- Wx1, c <- Wy2, b <- Wy1` is only reached
    /// by speculating `b` from the graph where `a` already reads `Wx1`
    /// (`lb_three_units_shared_location` in `tests/litmus_table.rs`).
    /// `None` when such a write depends on a speculation (values would no
    /// longer come from speculation-free prefixes) or `r` on itself.
    fn speculation_prefix(&mut self, r: EventId) -> Option<Graph> {
        let g0 = &self.frames.last().expect("frame").graph;
        let sr = g0.ev(r).stamp;
        let roots: Vec<EventId> = g0
            .units
            .iter()
            .enumerate()
            .filter_map(|(u, unit)| {
                let n = unit.events.iter().take_while(|e| e.stamp <= sr).count();
                (n > 0).then(|| EventId { unit: UnitId(u as u32), index: n as u32 - 1 })
            })
            .collect();
        // The reads added before `r` that read a write added after it.
        let cut: Vec<EventId> = g0
            .event_ids()
            .filter(|&e| {
                let ev = g0.ev(e);
                ev.stamp < sr && ev.kind == Kind::Read && ev.rf.is_some_and(|w| !w.is_init() && g0.contains(w) && g0.ev(w).stamp > sr)
            })
            .collect();
        // The first event of each unit that depends on `r` (po and rf
        // successors from `r`'s po-successor on), not through the reads
        // in `cut`.
        let mut first_dep: Vec<u32> = g0.units.iter().map(|u| u.events.len() as u32).collect();
        let mut todo = vec![EventId { unit: r.unit, index: r.index + 1 }];
        while let Some(e) = todo.pop() {
            let u = e.unit.index();
            if e.index >= first_dep[u] || !g0.contains(e) {
                continue;
            }
            let old = first_dep[u];
            first_dep[u] = e.index;
            for i in e.index..old {
                let x = EventId { unit: e.unit, index: i };
                if g0.ev(x).kind.is_write() {
                    // `r` itself reads anew (a speculative `r` may read
                    // a write that depends on it: re-promised).
                    todo.extend(g0.readers_of(x).filter(|y| !cut.contains(y) && *y != r));
                }
            }
        }
        let depends = |e: EventId| !e.is_init() && e.index >= first_dep[e.unit.index()];
        if depends(r) {
            return None;
        }
        let keep = g0.porf_prefix_of(&roots);
        let mut promised = Vec::new();
        for &e in &cut {
            let w = g0.ev(e).rf.expect("a read");
            if depends(w) && keep.contains(e) {
                // A speculative read keeps its promise's level.
                let level = if g0.ev(e).speculative {
                    g0.ev(e).level
                } else {
                    match promise_level(g0, &g0.porf_prefix(w)) {
                        Nesting::At(levels) => levels.of(g0, e),
                        _ => return None,
                    }
                };
                promised.push((e, level));
            }
        }
        let mut g = self.bufs.graphs.pop().unwrap_or_default();
        g.clone_from(g0);
        g.restrict(|id, _| keep.contains(id) && !depends(id));
        for (e, level) in promised {
            if g.contains(e) {
                // It keeps its write, now a promise the rerun must keep.
                let ev = g.ev_mut(e);
                let (w, value) = (ev.rf.expect("a read"), ev.value);
                ev.read_promise(w, value, level);
            }
        }
        Some(g)
    }

    /// The pins of the twin of speculation `r <- w` whose start graph is
    /// `g` ([`Pin`]): the speculative plain loads of the current graph
    /// that `w` depends on (in its porf-prefix) and that the cut drops,
    /// with the writes and values they were promised. A broken promise
    /// pins its position again (its write, cut away, is pending there).
    fn twin_pins(&self, r: EventId, w: EventId, g: &mut Graph) {
        let g0 = &self.frames.last().expect("frame").graph;
        if !g0.contains(w) {
            return;
        }
        let porf = g0.porf_prefix(w);
        for e in g0.event_ids() {
            let ev = g0.ev(e);
            let Some(pw) = ev.rf else { continue };
            if e == r || !ev.speculative || pw.index & THIN_AIR != 0 || g.contains(e) || !porf.contains(e) || !matches!(ev.op, Op::Mem { access: Access::Load, .. }) {
                continue;
            }
            let pw = promised_position(pw);
            if pw == w && e.unit == r.unit {
                // Its unit's reads of the location from `r` to it all read
                // `w` (CoRR), and the plain start graph's runs offer each
                // the promise its previous one read ([`Item::ReadPromised`]).
                continue;
            }
            g.pins.push(Pin { r: e, loc: ev.loc.expect("a read"), w: pw, value: ev.value, level: ev.level });
        }
    }

    /// Pop the next alternative and restore its graph; false when done.
    fn next_item(&mut self) -> bool {
        // The finished run's promises say nothing about the alternatives
        // (`run_execution` takes the next run's from its graph).
        self.promises.clear();
        loop {
            // Nor do its deferred speculations, or those of an alternative
            // pruned below: `run_execution` makes the next run's again from
            // its graph (`rederive_deferred`), those of writes an
            // alternative adds while it is applied included.
            self.deferred.clear();
            let Some(frame) = self.frames.last_mut() else { return false };
            let Some(Work { item, key }) = frame.work.pop() else {
                if self.frames.len() == 1 {
                    return false;
                }
                let f = self.frames.pop().expect("a frame");
                self.recycle_frame(f);
                continue;
            };
            if self.run.has_best.load(Relaxed) {
                // A failure earlier in the sequential order is reported
                // whatever this alternative leads to.
                let best = self.run.best.lock().unwrap_or_else(|e| e.into_inner());
                if best.as_ref().is_some_and(|b| b.position.0 < key) {
                    continue;
                }
            }
            self.cur = Position(key);
            self.pushes = 0;
            if self.cfg.debug_explore {
                eprintln!("pop {item:?}");
            }
            tracing::trace!(target: "clmm", "alternative {item:?}");
            self.clocks.note_changed();
            if self.apply(item) {
                // A revisit may have deleted the event that broke a promise.
                self.graph().settle_promises();
                if self.prefix_consistent() {
                    if self.cfg.debug_explore {
                        self.debug_graph();
                    }
                    return true;
                }
            }
            if self.cfg.debug_explore {
                eprintln!("  (pruned)");
            }
            self.run.counts.pruned.fetch_add(1, Relaxed);
        }
    }

    fn debug_graph(&self) {
        let g = &self.frames.last().expect("frame").graph;
        for (u, unit) in g.units.iter().enumerate() {
            let evs: Vec<String> = unit
                .events
                .iter()
                .map(|e| {
                    let rf = e.rf.map(|w| if w.is_init() { " <-init".to_string() } else { format!(" <-{}:{}", w.unit.0, w.index) }).unwrap_or_default();
                    format!("{:?}#{}={}{rf}", e.kind, e.stamp, e.value)
                })
                .collect();
            eprintln!("  u{u}: {}", evs.join(", "));
        }
        for (l, c) in g.co.iter().enumerate() {
            eprintln!("  co{l}: {:?}", c.iter().map(|w| (w.unit.0, w.index)).collect::<Vec<_>>());
        }
    }

    fn cut(&mut self, stamp: u32) {
        self.graph().restrict(|_, e| e.stamp <= stamp);
    }

    fn apply(&mut self, item: Item) -> bool {
        match item {
            Item::ReadFw { r, w } => {
                let s = self.graph().ev(r).stamp;
                self.cut(s);
                self.graph().ev_mut(r).spurious = false;
                self.set_rf(r, w);
                if matches!(self.graph().ev(r).op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) {
                    self.graph().ev_mut(r).kind = Kind::RmwRead;
                    self.resolve_rmw(r);
                }
                true
            }
            Item::Spurious { r } => {
                // The CAS keeps its write but fails: keep what was added up
                // to it and the porf-prefix of that write, which a backward
                // revisit of `r` added after it (cutting at `r` alone
                // would leave `r` reading a deleted write).
                let s = self.graph().ev(r).stamp;
                let src = self.graph().ev(r).rf.expect("a CAS reads");
                let keep = self.frames.last().expect("frame").graph.porf_prefix(src);
                self.graph().restrict(|id, e| e.stamp <= s || keep.contains(id));
                self.graph().ev_mut(r).spurious = true;
                self.resolve_rmw(r);
                true
            }
            Item::WriteCo { w, pred } => {
                let s = self.graph().ev(w).stamp;
                self.cut(s);
                let loc = self.graph().ev(w).loc.expect("loc");
                if !self.graph().contains(pred) {
                    return false;
                }
                self.graph().co_remove(loc, w);
                self.graph().co_insert_after(loc, pred, w);
                true
            }
            Item::Speculate { r, w, value, level, twin } => self.speculate(r, w, value, level, twin),
            Item::ThinAir { r, unit, value } => self.speculate(r, EventId { unit, index: THIN_AIR }, value, 0, false),
            Item::ReadPromised { r, w, value, level } => {
                let s = self.graph().ev(r).stamp;
                self.cut(s);
                self.graph().ev_mut(r).read_promise(w, value, level);
                true
            }
            Item::Backward { r, w, pred } => {
                let sw = self.graph().ev(w).stamp;
                self.cut(sw);
                let mut g = self.bufs.graphs.pop().unwrap_or_default();
                g.clone_from(&self.frames.last().expect("frame").graph);
                let sr = g.ev(r).stamp;
                let mut porf = std::mem::take(&mut self.bufs.porf);
                g.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
                if porf.contains(r) {
                    // In the porf-prefix only through kept promises
                    // (`Engine::revisits`).
                    g.revisit_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
                }
                g.restrict(|id, e| e.stamp <= sr || porf.contains(id));
                self.bufs.porf = porf;
                let (kind, loc) = (g.ev(w).kind, g.ev(w).loc.expect("loc"));
                if kind == Kind::Write && self.locs()[loc.0 as usize].atomic {
                    g.co_remove(loc, w);
                    let mut places = std::mem::take(&mut self.bufs.ids);
                    placements(&g, loc, 0, &mut places);
                    let max = g.co_max(loc);
                    let p = match pred {
                        Some(p) => p,
                        None => {
                            let mut k = 0;
                            for &p in &places {
                                if p != max {
                                    k += 1;
                                    self.push_sibling(Item::Backward { r, w, pred: Some(p) }, k);
                                }
                            }
                            max
                        }
                    };
                    self.bufs.ids = places;
                    if !g.contains(p) {
                        self.bufs.graphs.push(g);
                        return false;
                    }
                    g.co_insert_after(loc, p, w);
                }
                self.push_frame(g);
                self.set_rf(r, w);
                if matches!(self.graph().ev(r).op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) {
                    // Drop the old write part (deleted with the events after r).
                    let u = r.unit.index();
                    self.graph().units[u].events.truncate(r.index as usize + 1);
                    self.graph().ev_mut(r).spurious = false;
                    self.resolve_rmw(r);
                }
                true
            }
        }
    }
}

/// What a revisit of `r` by a write keeps besides the events added up to
/// `r`: the write's porf-prefix `porf`, or its revisit prefix `open` when
/// `r` is in the porf-prefix only through kept promises; and whether it is
/// the latter ([`Engine::revisits`]).
fn revisit_keeps<'p>(porf: &'p crate::graph::PrefixSet, open: Option<&'p crate::graph::PrefixSet>, r: EventId) -> (&'p crate::graph::PrefixSet, bool) {
    match open {
        Some(open) if porf.contains(r) => (open, true),
        _ => (porf, false),
    }
}

/// The key of a speculation's start graph in [`Run::spec_seen`]: the
/// graph's fingerprint and which reads are speculative (a speculative read
/// whose promise is kept reads what a plain read could). Not the promises'
/// levels: they only measure nesting ([`Config::nesting_limit`]). Session 12 told
/// start graphs apart by their levels, when nesting was bounded (a start
/// graph met first at a deeper level could nest less); with no bound that
/// costs reruns and finds nothing more.
fn start_key(g: &Graph) -> u128 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(&g.fingerprint().to_le_bytes());
    for e in g.event_ids() {
        if g.ev(e).speculative {
            h.update(&e.unit.0.to_le_bytes());
            h.update(&e.index.to_le_bytes());
        }
    }
    for p in &g.pins {
        for n in [p.r.unit.0, p.r.index, p.w.unit.0, p.w.index] {
            h.update(&n.to_le_bytes());
        }
        h.update(&p.value.to_le_bytes());
    }
    h.digest128()
}

/// Whether a read of unit `u` reads a pending promise after an earlier
/// read of the same location read that promise and a read between them
/// read another write. Coherence orders what a unit's reads of one
/// location read (`irreflexive coh(ghb)` and `coh(lhb)`, O-CohG and
/// O-CohL, `opencl_base.cat` lines 79-81, with po in hb): reading `w`, then
/// `w'`, then `w` again needs `w` both before and after `w'`. So once the
/// promised write is produced the graph is inconsistent; until then
/// nothing tells, the promise having no coherence position. A spin loop reading the promise and another write
/// in turn never blocks, and each of its reads would be speculated on
/// again from a longer start graph: the three-unit ticket lock
/// (`tests/kernels.rs`) nested 17 levels deep that way, and growing,
/// before this check.
fn returns_to_a_promise(g: &Graph, u: UnitId) -> bool {
    // Per location: the write read last, and the promises read and left.
    let mut seen: Vec<(LocId, EventId, Vec<EventId>)> = Vec::new();
    for ev in &g.units[u.index()].events {
        let (Some(loc), Some(w), true) = (ev.loc, ev.rf, ev.kind.is_read()) else { continue };
        let pending = ev.speculative && !w.is_init() && !g.contains(w);
        match seen.iter_mut().find(|(l, ..)| *l == loc) {
            None => seen.push((loc, w, Vec::new())),
            Some((_, last, left)) => {
                if pending && left.contains(&w) {
                    return true;
                }
                if *last != w {
                    if !last.is_init() && !g.contains(*last) {
                        left.push(*last);
                    }
                    *last = w;
                }
            }
        }
    }
    false
}

/// Whether the pending promises of `g`, and the pins of a twin ([`Pin`]),
/// promise each write one value. A start graph may keep a promise that its
/// write broke in the run it was taken from (the write, after the cut, is
/// pending again), and that run may have produced the write with another
/// value, which a new speculation then promises too: `b` promised 5 by
/// `Wx(e+1)`, which wrote 4, and `f` then promised 4 by the same write.
/// Such a start graph is broken from the outset: its runs can only end
/// blocked (found with random programs of value-dependent stores in
/// session 13). A pin is also never taken when its position or its write
/// is in the start graph already.
fn promises_agree(g: &Graph) -> bool {
    if g.pins.iter().any(|p| g.contains(p.r) || g.contains(p.w)) {
        return false;
    }
    let pending = g.event_ids().filter_map(|e| {
        let ev = g.ev(e);
        // A broken promise is pending again once its write is cut away.
        let w = promised_position(ev.rf.filter(|w| ev.speculative && !w.is_init() && w.index & THIN_AIR == 0)?);
        (!g.contains(w)).then_some((w, ev.value))
    });
    let mut seen: Vec<(EventId, u64)> = Vec::new();
    for (w, value) in pending.chain(g.pins.iter().map(|p| (p.w, p.value))) {
        match seen.iter().find(|(x, _)| *x == w) {
            Some(&(_, v)) if v != value => return false,
            Some(_) => {}
            None => seen.push((w, value)),
        }
    }
    true
}

/// Whether, and at which levels, a write with porf-prefix `prefix` is
/// speculated on ([`promise_level`]).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Nesting {
    /// Now.
    At(Levels),
    /// Once these pending promises in the prefix are kept ([`Deferred`]).
    Waiting(Levels, Vec<EventId>),
    /// Never: a promise in the prefix is broken or out of thin air.
    No,
}

/// The levels of the speculative reads in a write's porf-prefix
/// ([`Levels`]). A nested promise is made only once the promises it depends on are kept (their
/// writes produced with the promised values): a pending one may still be
/// broken, and nesting on it at once cost twice as much as nesting on
/// kept ones (session 11). So a write with pending promises in its prefix
/// waits for them ([`Nesting::Waiting`]).
fn promise_level(g: &Graph, prefix: &crate::graph::PrefixSet) -> Nesting {
    let mut levels = Levels(Vec::new());
    let mut waits = Vec::new();
    for e in g.event_ids() {
        let ev = g.ev(e);
        if ev.speculative && prefix.contains(e) {
            match promise(g, e) {
                Promise::Kept => {}
                Promise::Lost => return Nesting::No,
                Promise::Pending => waits.push(e),
            }
            levels.0.push((ev.stamp, ev.level));
        }
    }
    if waits.is_empty() {
        Nesting::At(levels)
    } else {
        Nesting::Waiting(levels, waits)
    }
}

/// The speculative reads in a write's porf-prefix: their stamps and
/// levels. A promise on the write nests one level below those that stay
/// in the promise's start graph ([`Levels::of`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Levels(Vec<(u32, u8)>);

impl Levels {
    /// The level of read `r`'s promise on the write: 0, or one more than
    /// the highest level of the speculative reads in the write's
    /// porf-prefix added before `r`. The others are not in `r`'s start
    /// graph ([`Engine::speculation_prefix`] cuts at `r`), so the promise
    /// does not nest in theirs: `r` itself when it is re-promised, and
    /// reads after it in program order, which the rerun reads afresh.
    /// Counting them made levels grow with every speculation of a chain,
    /// 7 deep on four-access programs of `tests/lb_differential.rs` that
    /// nest 2 deep.
    fn of(&self, g: &Graph, r: EventId) -> u8 {
        let sr = g.ev(r).stamp;
        self.0.iter().filter(|&&(s, _)| s < sr).map(|&(_, l)| l.saturating_add(1)).max().unwrap_or(0)
    }
}

/// Where the promise of speculative read `r` stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Promise {
    /// Its write is produced.
    Kept,
    /// Not produced yet.
    Pending,
    /// Broken, or out of thin air (flagged ids, [`BROKEN`], [`THIN_AIR`]):
    /// never a write of this graph.
    Lost,
}

fn promise(g: &Graph, r: EventId) -> Promise {
    match g.ev(r).rf {
        Some(w) if w.is_init() || g.contains(w) => Promise::Kept,
        Some(w) if w.index & (BROKEN | THIN_AIR) != 0 => Promise::Lost,
        _ => Promise::Pending,
    }
}

/// A speculation on write `w` ([`Engine::speculations`]) whose write's
/// porf-prefix holds pending promises: pushed when they are all kept
/// ([`Engine::push_deferred`]), dropped when one breaks. In `Wx1; a=Rx;
/// b=Ry; Wz1 || c=Rz; Wy2; Wx2` with a <- Wx2 and b <- Wy2, `a`'s promise
/// is made first, and `Wy2`, on which `b` is speculated, is produced before
/// `Wx2` keeps it. Run state, made again from the graph when a run starts
/// ([`Engine::rederive_deferred`]).
struct Deferred {
    w: EventId,
    levels: Levels,
    reads: Vec<EventId>,
    waits: Vec<EventId>,
}

/// A unit that did something else when rerun with the values it read
/// before: the closure is not deterministic (DESIGN.md §5, "Stateless").
fn non_determinism(g: &Graph, u: UnitId, what: &str) -> End {
    End::Failed(vec![Failure::new(
        FailureKind::NonDeterminism,
        format!(
            "{} did something else when rerun with the same values ({what}); the closure must be deterministic given the values its reads return (no randomness, time, or thread-local state)",
            report::unit_name(g, u)
        ),
    )])
}

fn replay_mismatch(detail: String) -> String {
    format!("{detail}: the string comes from another test, or the test changed since")
}

/// The coherence predecessors a new plain write to `loc` may be placed
/// after: any write from coherence position `floor` on
/// ([`vclock::Clocks::co_floor`]) not immediately followed by an RMW that
/// reads it.
fn placements(g: &Graph, loc: LocId, floor: usize, out: &mut Vec<EventId>) {
    out.clear();
    let co = g.co.get(loc.0 as usize).map_or(&[][..], |c| &c[..]);
    // `writes_to` is the initial write, then `co`: write `i` is followed
    // by `co[i]`.
    for (i, p) in g.writes_to(loc).enumerate().skip(floor) {
        if let Some(&next) = co.get(i) {
            if g.ev(next).kind == Kind::RmwWrite {
                let read = EventId { unit: next.unit, index: next.index - 1 };
                if g.ev(read).rf == Some(p) {
                    continue;
                }
            }
        }
        out.push(p);
    }
}

// Scope is used by the report helpers through the graph.
#[allow(dead_code)]
fn _scope(_: Scope) {}
