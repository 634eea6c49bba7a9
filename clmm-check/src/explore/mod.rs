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
//!   graph. A write's placements, new or revisiting, start at the co-latest
//!   write its own past observes (`Clocks::co_floor`, `placement_floor`):
//!   those below are incoherent.
//! * Before an alternative's prefix is checked on its views, `O-Rmw` is
//!   checked on the graph itself (`model::axioms::rmw_atomic_at`): two RMWs
//!   reading one write is the commonest way for an RMW's alternative to
//!   fail.
//! * Every prefix is checked with the model's prefix conditions; complete
//!   graphs with the exact model (`model::Phase`). Graphs that end
//!   inconsistent, or with a spin loop blocked, count as blocked.
//!
//! Its parts:
//! * this file: the run ([`explore`], its workers and their shared
//!   alternatives) and the engine's stack of frames (a graph and the
//!   alternatives it pushed), from which each execution starts;
//! * `backend`: the [`clmm_atomic::backend::Backend`] that user code calls,
//!   turning each operation into a request to the engine;
//! * `execution`: one execution, from the units' first steps to its end
//!   (complete, blocked or failed), launches, barriers and spin loops;
//! * `revisit`: TruSt's alternatives (forward, coherence, backward
//!   revisits under maximality) and how one is applied;
//! * `speculation`: load buffering by promises;
//! * `host`: host threads, queues, commands and events.

use crate::config::Config;
use crate::config::Shard;
use crate::graph::{Graph, LocInfo};
use crate::ids::{EventId, UnitId};
use crate::model::vclock;
use speculation::UnitKinds;
use crate::replay;
use crate::report::{self, Failure, FailureKind};
use crate::runtime::{self, StackPool, UnitCo};
use clmm_atomic::backend::LocId;
use crossbeam_deque::{Injector, Steal};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

mod backend;
mod execution;
mod host;
mod promises;
mod ready;
mod revisit;
mod speculation;
mod start_graph;

use backend::{Checker, LocTable, Shared};
use speculation::Deferred;

/// Statistics of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Complete, consistent executions explored.
    pub complete: u64,
    /// Explorations that ended blocked (a spin loop that saw nothing new, a
    /// prefix that turned out inconsistent when complete).
    pub blocked: u64,
    /// [`Stats::blocked`] by why the exploration ended blocked.
    pub blocked_by: BlockedBy,
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
    /// Graphs (prefixes and complete ones) checked by the explicit model
    /// ([`crate::model::check`], every relation as a bit matrix: O(n^3/64)
    /// a graph, where a view costs O(units) an event): those the vector
    /// clocks leave to it (commands of device-side queues, a release
    /// sequence beyond RMW chains that orders what the views do not in a
    /// complete graph, a complete graph with host threads synchronising
    /// with work-items), and the graph of each panic or
    /// deadlock, whose consistency and races it decides for the report.
    /// Where a check is slow, this says whether that path is why.
    pub explicit: u64,
    /// Whether the run stopped early (first failure, execution bound).
    pub stopped_early: bool,
    /// A shard (`CLMM_SHARD`) met load-buffering speculation and explored
    /// the whole space, keeping its share.
    pub shard_restarted: bool,
    /// A work-item allocated a location after load buffering was ruled
    /// out for a kernel with one atomic location, and the run explored
    /// everything again without that rule (`Engine::coherence_isolated` in
    /// `clmm-check/src/explore/speculation.rs`).
    pub isolation_restarted: bool,
    /// Without [`Config::speculate_rmw`]: an explored execution had an
    /// RMW (or a compare-exchange that would succeed) po- and rf-before a
    /// write of its location, along a cycle that only RMW reads could
    /// close, so executions where it reads that write (load buffering
    /// through RMW reads alone, Deviation 7 of [`crate::model`]) may
    /// exist, and were not explored, nor those that a load's speculation
    /// reaches only from such an execution. Turn the option on to explore
    /// them.
    pub rmw_cycles_unexplored: bool,
    /// With [`Config::speculate_compare_exchange`] off: an explored
    /// execution had a compare-exchange that fails on the value of a
    /// write of its location po- and rf-after it, so executions where it
    /// reads that write may exist, and were not explored (that option's
    /// cycles through failing compare-exchanges). Turn it on (the default)
    /// to explore them.
    pub cas_cycles_unexplored: bool,
    /// Wall-clock time.
    pub time: Duration,
}

/// The blocked explorations of a run ([`Stats::blocked`]) by why each
/// ended without a complete execution: the work that found none, and
/// where a program's cost goes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockedBy {
    /// Spin loops whose iterations read nothing new (`hint::spin_loop`),
    /// waiting for a write that did not come.
    pub spin: u64,
    /// Load-buffering speculations whose promised write was never
    /// produced.
    pub unkept: u64,
    /// Speculations whose promise was broken (the promised position wrote
    /// another value or location) or could no longer be kept consistently
    /// (a doom, found before the write comes).
    pub broken: u64,
    /// Prefixes that no extension makes consistent, and complete graphs
    /// the axioms reject (the model is not prefix-closed: C11 release
    /// sequences, the SC axiom's condition).
    pub inconsistent: u64,
    /// Speculative runs whose execution another part of the exploration
    /// counts (it has no load-buffering cycle, or it is a start graph's
    /// plain run).
    pub elsewhere: u64,
}

impl BlockedBy {
    /// All of them: [`Stats::blocked`].
    pub fn total(&self) -> u64 {
        self.spin + self.unkept + self.broken + self.inconsistent + self.elsewhere
    }
}

impl std::fmt::Display for BlockedBy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts = [
            (self.spin, "spin waits"),
            (self.unkept, "promises not kept"),
            (self.broken, "promises broken"),
            (self.inconsistent, "inconsistent"),
            (self.elsewhere, "counted elsewhere"),
        ];
        let mut first = true;
        for (n, what) in parts.into_iter().filter(|p| p.0 > 0) {
            write!(f, "{}{n} {what}", if first { "" } else { ", " })?;
            first = false;
        }
        Ok(())
    }
}

impl Stats {
    /// What [`Stats::rmw_cycles_unexplored`] tells a user (the statistics
    /// line, `Builder::check`'s note, the litmus front end's).
    pub const RMW_CYCLES_NOTE: &'static str = "load buffering that needs an RMW read to read a later write may have executions not explored \
        (Deviation 7 of clmm_check::model; Builder::speculate_rmw(true) or CLMM_SPECULATE_RMW=1 explores them)";

    /// What [`Stats::cas_cycles_unexplored`] tells a user.
    pub const CAS_CYCLES_NOTE: &'static str = "load buffering through a compare-exchange that fails may have executions not explored \
        (failing compare-exchanges do not speculate: Builder::speculate_compare_exchange(true), the default, or CLMM_SPECULATE_CAS=1 explores them)";

    /// The notes of this run: executions the settings leave out may
    /// exist ([`Stats::RMW_CYCLES_NOTE`], [`Stats::CAS_CYCLES_NOTE`]).
    pub fn notes(&self) -> impl Iterator<Item = &'static str> {
        [(self.rmw_cycles_unexplored, Stats::RMW_CYCLES_NOTE), (self.cas_cycles_unexplored, Stats::CAS_CYCLES_NOTE)].into_iter().filter_map(|(on, note)| on.then_some(note))
    }
}

impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} complete executions, {} blocked", self.complete, self.blocked)?;
        if self.blocked > 0 {
            write!(f, " ({})", self.blocked_by)?;
        }
        write!(f, ", {} failed, in {:.3?}", self.failed, self.time)?;
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
        if self.explicit > 0 {
            write!(f, ", {} graphs checked by the explicit model", self.explicit)?;
        }
        if self.duplicates > 0 {
            write!(f, ", {} duplicates (a bug)", self.duplicates)?;
        }
        if self.shard_restarted {
            f.write_str(" (this shard explored the whole space: load buffering needs it)")?;
        }
        for note in self.notes() {
            write!(f, " ({note})")?;
        }
        if self.isolation_restarted {
            f.write_str(" (explored again with load buffering: a work-item allocated a location after it was ruled out)")?;
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
    /// The value the location holds at the end: its co-maximal write's,
    /// or, for a non-atomic location, its happens-before-maximal write's
    /// (`clmm_check::model::final_writes`).
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
    /// (`None`: co-maximally, then the other placements from `floor` on
    /// are pushed: the co-latest write that `w`'s program-order
    /// predecessor observes, [`Engine::placement_floor`]).
    Backward { r: EventId, w: EventId, pred: Option<EventId>, floor: EventId },
    /// Load buffering: read `r`, in the porf-prefix of `w`, reads `value`
    /// from `w` in a rerun that must produce `w` again; `level` is the
    /// promise's nesting level ([`Engine::speculations`]). With `twin`,
    /// the same start graph with the promises its cut drops and `w`
    /// depends on made again ([`Pin`](crate::graph::Pin), [`Engine::push_speculation`]).
    /// `at`: the stamp of the graph's last event when it was pushed
    /// ([`Engine::speculate`] starts from the graph as it was then). With
    /// `owing_first`, the reruns schedule the owing units that read a
    /// promise before the units that owe none ([`Graph::owing_first`](crate::graph::Graph::owing_first)).
    Speculate { r: EventId, w: EventId, value: u64, level: u8, twin: bool, owing_first: bool, at: u32 },
    /// Out-of-thin-air (herd compatibility, [`Config::thin_air`]): read `r`
    /// reads `value` from a write of `unit` not produced yet, the first one
    /// of that value to `r`'s location the unit adds after `r`; `at` as
    /// for `Speculate`.
    ThinAir { r: EventId, unit: UnitId, value: u64, at: u32 },
    /// In a speculative run: read `r` reads `value` from `w`, the write
    /// its unit's previous read of the location was promised, not produced
    /// yet ([`Engine::push_read_promised`]); `level` and `rank` are that
    /// read's.
    ReadPromised { r: EventId, w: EventId, value: u64, level: u8, rank: u32 },
}

impl Item {
    /// The event an alternative changes in the current frame's graph,
    /// which it cuts after that event ([`Engine::apply`]); `None` for the
    /// alternatives that start a frame of their own (speculations and
    /// backward revisits).
    fn in_place(&self) -> Option<EventId> {
        match *self {
            Item::ReadFw { r, .. } | Item::Spurious { r } | Item::ReadPromised { r, .. } | Item::WriteCo { w: r, .. } => Some(r),
            Item::Backward { .. } | Item::Speculate { .. } | Item::ThinAir { .. } => None,
        }
    }

    /// The event an alternative changes in the current frame's graph:
    /// [`Item::in_place`]'s, or the read a speculation makes read a
    /// promise; `None` for a backward revisit (what it keeps is the
    /// revisiting write's prefix, [`Engine::push_revisits`]).
    fn changed(&self) -> Option<EventId> {
        match *self {
            Item::Speculate { r, .. } | Item::ThinAir { r, .. } => Some(r),
            _ => self.in_place(),
        }
    }
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

/// The body of a unit whose coroutine is not made yet ([`UnitRt::body`]).
/// A coroutine and its stack are made when the unit starts
/// ([`Engine::start_unit`]), so a kernel's work-items that run one after
/// another share a few stacks: every work-item of a launch took one at
/// once, and 32,768 work-items ran out of memory mappings (two a stack).
enum Body {
    /// The model closure.
    Host(&'static (dyn Fn() + Sync)),
    /// A work-item of a launch: its kernel and its place in the launch's
    /// plan, both owned by the host's `Backend::launch`, which stays
    /// suspended until every work-item ends (or is unwound).
    Item { kernel: &'static (dyn Fn(&clmm_atomic::WorkItem) + Sync), plan: *const clmm_atomic::LaunchPlan, index: u32 },
    /// A host thread or a command.
    Boxed(Box<dyn FnOnce() + 'static>),
}

struct UnitRt {
    /// Its coroutine, once started.
    co: Option<UnitCo>,
    /// Its body until it starts.
    body: Option<Body>,
    /// It may start: the units a step creates start once no unit can go
    /// on without them, as a launch's work-items once the host waits for
    /// its kernel ([`Engine::release_pending_units`]).
    startable: bool,
    /// The bounds of its coroutine's stack mapping, for the message of a
    /// stack overflow ([`runtime::Running`]).
    stack: (usize, usize),
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
    Blocked(Blocked),
    Failed(Vec<Failure>),
}

/// Why an exploration ended blocked ([`Stats::blocked_by`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Blocked {
    /// Spin loops whose iterations read nothing new (`hint::spin_loop`).
    Spin,
    /// A speculation whose promised write did not come (no unit left to
    /// produce it, or the run ended with it pending).
    Unkept,
    /// A speculation whose promise was broken (its position wrote
    /// something else) or doomed (`Doom` in `speculation`).
    Broken,
    /// A prefix no extension makes consistent, or a complete graph the
    /// axioms reject (the model is not prefix-closed).
    Inconsistent,
    /// A speculative run whose execution is explored elsewhere (acyclic,
    /// TruSt's; or a start graph's pins not taken).
    Elsewhere,
}

impl Blocked {
    /// How many kinds there are (the counters of [`Counts`]).
    const KINDS: usize = Blocked::Elsewhere as usize + 1;
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
    runtime::install_overflow_handler();
    crate::log::init(cfg.log);
    let start = Instant::now();
    let fail_early = |kind: FailureKind, msg: String, on_end: &mut (dyn FnMut(Delivery<'_>) -> Control + Send)| {
        let f = Failure::new(kind, msg);
        let pos = Position::default();
        on_end(Delivery::Execution(ExecutionEnd { failures: std::slice::from_ref(&f), memory: &[], graph: &Graph::default(), locs: &[], position: &pos }));
        Stats { failed: 1, time: start.elapsed(), ..Stats::default() }
    };
    if let Some(e) = &cfg.env_error {
        // The report's first line says "clmm: configuration error: " already.
        return fail_early(FailureKind::Configuration, e.clone(), on_end);
    }
    let plan = match cfg.replay.as_deref().map(replay::decode) {
        None => None,
        Some(Ok(plan)) => Some(plan),
        Some(Err(e)) => return fail_early(FailureKind::Replay, format!("CLMM_REPLAY: {e}"), on_end),
    };
    let workers = cfg.worker_count();
    let mut progress = Mutex::new(crate::progress::Progress::new(cfg.progress));
    let mut full = false;
    let mut isolation = true;
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
            isolation: Isolation { on: isolation, ..Isolation::default() },
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
        run.tasks.push(Box::new(Task { graph: Graph::default(), work: None }));
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
        if run.restarting() {
            full |= run.restart.load(Relaxed);
            isolation &= !run.isolation.broken.load(Relaxed);
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
        stats.isolation_restarted = !isolation;
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
    /// Boxed: the injector allocates (and zeroes) a block of 63 slots up
    /// front, a noticeable part of a small check when the slots are
    /// graphs.
    tasks: Injector<Box<Task>>,
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
    /// Load buffering ruled out for kernels with one atomic location.
    isolation: Isolation,
    stop: AtomicBool,
    restart: AtomicBool,
    best: Mutex<Option<Best>>,
    /// Whether `best` holds a failure (read without the lock on every
    /// alternative).
    has_best: AtomicBool,
    /// Speculations already explored (the key of the graph they start
    /// from, [`met_before`](start_graph::met_before)), so that one found from several executions runs once;
    /// so too the graphs of backward revisits that make a promise pending
    /// again, which several graphs may make (`Engine::revisits`).
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

/// A set of graph fingerprints shared by the workers of a run. A mutex
/// around one set: insertions are rare next to the executions around them
/// (a speculation, a porf-cyclic execution, a complete graph with
/// [`Config::check_unique`]), and an empty set allocates nothing, where
/// a `DashSet` allocated its shards up front, 3% of the time of a check of
/// LB (session 29, `perf`).
#[derive(Default)]
struct Seen(Mutex<std::collections::HashSet<u128, std::hash::BuildHasherDefault<Fingerprint>>>);

impl Seen {
    /// Add `fp`; whether it was new.
    fn insert(&self, fp: u128) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(fp)
    }

    /// Whether `fp` is in.
    fn contains(&self, fp: u128) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).contains(&fp)
    }
}

/// The hasher of [`Seen`]: its keys are xxh3-128 fingerprints already, so
/// hashing them again (SipHash, a random state per set) is wasted work.
#[derive(Default)]
struct Fingerprint(u64);

impl std::hash::Hasher for Fingerprint {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write_u128(&mut self, fp: u128) {
        self.0 = (fp as u64) ^ ((fp >> 64) as u64);
    }
    fn write(&mut self, bytes: &[u8]) {
        // Only `u128` keys are hashed (`write_u128`); any other input
        // still gets a usable hash.
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
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
    explicit: AtomicU64,
    blocked_by: [AtomicU64; Blocked::KINDS],
    rmw_cycles_unexplored: AtomicBool,
    cas_cycles_unexplored: AtomicBool,
}

impl Counts {
    fn stats(&self) -> Stats {
        Stats {
            complete: self.complete.load(Relaxed),
            blocked: self.blocked.load(Relaxed),
            blocked_by: {
                let n = |b: Blocked| self.blocked_by[b as usize].load(Relaxed);
                BlockedBy { spin: n(Blocked::Spin), unkept: n(Blocked::Unkept), broken: n(Blocked::Broken), inconsistent: n(Blocked::Inconsistent), elsewhere: n(Blocked::Elsewhere) }
            },
            failed: self.failed.load(Relaxed),
            duplicates: self.duplicates.load(Relaxed),
            pruned: self.pruned.load(Relaxed),
            explicit: self.explicit.load(Relaxed),
            rmw_cycles_unexplored: self.rmw_cycles_unexplored.load(Relaxed),
            cas_cycles_unexplored: self.cas_cycles_unexplored.load(Relaxed),
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

/// The guard of [`Engine::coherence_isolated`], which decides from the
/// locations allocated so far: a location a work-item allocates after the
/// rule was used (`LocTable::isolation_used`) may be a second atomic one,
/// and the run then starts again without the rule
/// ([`Stats::isolation_restarted`]).
#[derive(Default)]
pub(super) struct Isolation {
    /// The rule may be used in this attempt.
    pub(super) on: bool,
    /// A location was allocated after the rule was used.
    pub(super) broken: AtomicBool,
}

impl Run<'_, '_> {
    /// Whether the run must start again (a shard that met speculation, or
    /// [`Isolation::broken`]).
    fn restarting(&self) -> bool {
        self.restart.load(Relaxed) || self.isolation.broken.load(Relaxed)
    }

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
    fn next_task(&self) -> Option<Box<Task>> {
        let backoff = crossbeam_utils::Backoff::new();
        let mut idle = false;
        let found = loop {
            if self.stop.load(Relaxed) || self.restarting() {
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
        let checker = Checker { s: RefCell::new(shared), table: &self.table, isolation: &self.isolation };
        let capture = plan.is_some();
        let mut eng = Engine {
            cfg: self.cfg,
            body: self.body,
            run: self,
            checker: &checker,
            pool: StackPool::new(self.cfg.stack_size),
            live: 0,
            rt,
            frames,
            cur: Position::default(),
            pushes: 0,
            promises,
            kept_promise: false,
            irregular_floor: std::cell::Cell::new(None),
            unit_kinds: std::cell::Cell::new(UnitKinds::default()),
            deferred: Vec::new(),
            clocks,
            cyclic_fp: None,
            plan,
            step: 0,
            forced: None,
            replay_error: None,
            too_deep: None,
            backtraces: HashMap::new(),
            ready: ready::Ready::default(),
            behind: true,
            joins: Vec::new(),
            bufs,
            watch: self.cfg.stall_warning.map(crate::watchdog::Watcher::new),
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
                eng.task(*task);
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

impl Bufs {
    /// An empty event list for a new unit, with the capacity of a spare
    /// one when there is one.
    fn spare_events(&mut self) -> Vec<crate::graph::Event> {
        self.events.pop().unwrap_or_default()
    }
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
    /// How many units have a coroutine (started and not finished):
    /// [`Engine::start_unit`] keeps it under [`runtime::max_live_units`].
    live: usize,
    rt: Vec<UnitRt>,
    frames: Vec<Frame>,
    /// The position of the current execution, and how many alternatives
    /// it pushed (positions are only computed when [`Run::keyed`]).
    cur: Position,
    pushes: u32,
    /// Speculative reads of this run whose write is not produced yet.
    promises: Vec<EventId>,
    /// A speculative read of the run's graph reads a produced write (a
    /// kept promise): revisit prefixes may then be smaller than
    /// porf-prefixes, and no hb doom is taken ([`promises::Doom`]).
    kept_promise: bool,
    /// At most the lowest stamp of an irregular read of the frame's graph
    /// (`u32::MAX`: none), once asked ([`Engine::irregular_floor`]);
    /// forgotten when the graph changes other than by a run's new events.
    irregular_floor: std::cell::Cell<Option<u32>>,
    /// The kinds of the units of the frame's graph, scanned as far as
    /// asked ([`Engine::unit_kinds`]); forgotten with
    /// [`Engine::irregular_floor`].
    unit_kinds: std::cell::Cell<UnitKinds>,
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
    /// The units that may take the next step ([`ready::Ready`]).
    ready: ready::Ready,
    /// Some unit may have events in the graph it has not replayed yet
    /// ([`Engine::drive`] looks for them before a new step).
    behind: bool,
    /// Per launch its host waits for, the units before which none of the
    /// launch's is still running ([`Engine::enabled`]).
    joins: Vec<(EventId, u32)>,
    /// Buffers of the fast path, kept for their capacity.
    bufs: Bufs,
    /// Tells the stall watchdog when a unit runs the user's code
    /// ([`crate::watchdog`]; `None`: [`Config::stall_warning`] is off).
    watch: Option<crate::watchdog::Watcher>,
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
    /// The events added after the lowest of them, with their stamps
    /// ([`Engine::revisits`]).
    later: Vec<(u32, EventId)>,
    /// A launch's first sub-group index per work-group.
    sub_bases: Vec<usize>,
    /// The graphs of finished frames, reused by backward revisits.
    graphs: Vec<Graph>,
    /// Emptied event lists, for the units of a run's first execution
    /// (which starts from the empty graph): a long execution does not grow
    /// its units' lists again on every check ([`Engine::task`]).
    events: Vec<Vec<crate::graph::Event>>,
    /// The spin-loop records of finished units ([`UnitRt::spin_cur`]),
    /// reused by the next execution's units.
    spins: Vec<Vec<(LocId, EventId)>>,
    /// The alternative stacks of finished frames.
    works: Vec<Vec<Work>>,
    /// Views for the consistency checks of graphs other than the run's
    /// ([`Engine::consistent_prefix_of`]).
    scratch_clocks: std::cell::RefCell<vclock::Clocks>,
    /// The graphs those checks look at (TruSt's Previous(e) of
    /// maximality, [`Engine::later_choice_consistent`]), copied into its
    /// buffers rather than cloned: a clone and its drop were 1.5% of the
    /// work-stealing example.
    scratch_graph: std::cell::RefCell<Graph>,
    /// The frame's graph before an alternative that changes it in place,
    /// put back if the alternative is pruned ([`Engine::next_item`]).
    before: Graph,
    /// The prefix walks of the checks [`Engine::push`] makes
    /// ([`Engine::depends_on_doom`], [`Engine::keeps_promise_acyclically`]):
    /// a stack and a prefix.
    push_stack: Vec<EventId>,
    push_deps: crate::graph::PrefixSet,
    /// The run's dooms, computed once per check that needs them
    /// ([`Engine::depends_on_doom`], [`Engine::reads_doom`],
    /// `Engine::repairable`).
    dooms: Vec<promises::Doom>,
    /// During a replay pass (`Some`), the run's dooms once computed, and
    /// what they were computed from ([`Engine::replaying_dooms`]).
    doom_cache: Option<Option<(promises::DoomKey, Vec<promises::Doom>)>>,
    /// This run's answers of `Engine::repairable`'s walks
    /// ([`promises::Reach`]).
    reach: Vec<promises::Reach>,
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
        self.forget_graph_summaries();
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
        if let Some(r) = item.in_place() {
            let g = &self.frames.last().expect("frame").graph;
            if !g.pins.is_empty() && self.untaken_pin(g.ev(r).stamp, None) {
                return;
            }
        }
        if item.changed().is_some_and(|c| self.depends_on_doom(c, None)) {
            return;
        }
        if let Item::ReadFw { r, w } = item {
            if self.reads_doom(w) || self.keeps_promise_acyclically(r, w) {
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
            // The event lists of a spare graph (the last run's), for this
            // first execution's units.
            if self.bufs.events.is_empty() {
                if let Some(g) = self.bufs.graphs.last_mut() {
                    self.bufs.events.extend(g.units.drain(..).map(|u| {
                        let mut events = u.events;
                        events.clear();
                        events
                    }));
                    g.clone_from(&Graph::default());
                }
            }
        } else if !self.next_item() {
            return;
        }
        let run = self.run;
        loop {
            let ended = self.run_one();
            if ended || run.stop.load(Relaxed) || run.restarting() {
                return;
            }
            if (run.workers > 1 && run.idle.load(Relaxed) > 0 && run.tasks.is_empty()) || self.cfg.donate_every_run {
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
        self.run.tasks.push(Box::new(Task { graph, work: Some(work) }));
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
            end = End::Blocked(Blocked::Elsewhere);
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
            } else if matches!(end, End::Complete | End::Blocked(_)) {
                end = End::Failed(vec![Failure::new(
                    FailureKind::Replay,
                    "CLMM_REPLAY: the replayed execution passed (the failure it recorded did not happen again)".into(),
                )]);
            }
        }
        if run.restarting() {
            return true;
        }
        if !run.owns(&self.cur.0, self.cyclic_fp) {
            // Another shard's execution (explored here on the way to ours).
            return false;
        }
        if let (true, End::Blocked(why)) = (self.cfg.debug_explore, &end) {
            eprintln!("blocked ({why:?})");
            self.debug_graph();
        }
        if self.cfg.check_unique && !matches!(end, End::Blocked(_)) {
            let fp = self.frames.last().expect("frame").graph.execution_fingerprint(&self.locs());
            if !run.unique.insert(fp) {
                run.counts.duplicates.fetch_add(1, Relaxed);
            }
            if self.cfg.debug_explore {
                eprintln!("complete {fp:x}");
                self.debug_graph();
            }
        }
        let memory = if self.cfg.collect_memory && !matches!(end, End::Blocked(_)) { self.final_memory() } else { Vec::new() };
        let checker = self.checker;
        let shared = checker.s.borrow();
        let locs = &shared.locs;
        let graph = &self.frames.last().expect("frame").graph;
        let position = &self.cur;
        if tracing::enabled!(target: "clmm", tracing::Level::DEBUG) {
            let what = match &end {
                End::Complete => "complete".to_string(),
                End::Blocked(why) => format!("blocked ({why:?})"),
                End::Failed(f) => format!("failed: {}", f.iter().map(|x| x.kind.to_string()).collect::<Vec<_>>().join(", ")),
            };
            let n = run.counts.complete.load(Relaxed) + run.counts.blocked.load(Relaxed) + 1;
            tracing::debug!(target: "clmm", execution = n, "{what}\n{}", report::trace(graph, locs, &[], true));
        }
        let deliver = |end: ExecutionEnd<'_>| (run.sink.lock().unwrap_or_else(|e| e.into_inner()))(Delivery::Execution(end));
        let control = match end {
            End::Complete => {
                run.counts.complete.fetch_add(1, Relaxed);
                deliver(ExecutionEnd { failures: &[], memory: &memory, graph, locs, position })
            }
            End::Blocked(why) => {
                run.counts.blocked.fetch_add(1, Relaxed);
                run.counts.blocked_by[why as usize].fetch_add(1, Relaxed);
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
        let last = crate::model::final_writes(g, &locs.locs, self.cfg.sem);
        (0..locs.locs.len())
            .map(|l| {
                let writes: Vec<u64> = g.co.get(l).into_iter().flatten().map(|&w| g.ev(w).value).collect();
                FinalLoc { last: g.write_value(last[l], &locs.locs), writes, atomic: locs.locs[l].atomic }
            })
            .collect()
    }

    // -------------------------------------------------------------
    // Running one execution
    // -------------------------------------------------------------

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
}
