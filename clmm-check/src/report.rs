//! Failures and their reports (DESIGN.md §6). A failure is built only when
//! an execution fails (the fast path returns small results); its `Display`
//! is the report: the kind, the units and accesses involved, the execution
//! unit by unit, and the replay string.

use crate::graph::{Graph, Kind, LocInfo, Region, UnitKind};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::{Access, Op};
use std::fmt::{self, Write as _};

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// Two conflicting accesses unordered by happens-before, not inclusive
    /// (`dr`).
    DataRace,
    /// Work-items of one group not meeting at the same barrier (`bd`, and
    /// clmm's stricter participation rule).
    BarrierDivergence,
    /// Every remaining unit waits and none can proceed.
    Deadlock,
    /// A unit panicked (a failed assertion, for example).
    Panic,
    /// A unit exceeded the step bound: a loop that never ends, or a spin
    /// loop without `hint::spin_loop()`.
    Livelock,
    /// Local memory touched from outside its work-group, or from the host.
    LocalMemoryMisuse,
    /// The closure did something else when rerun with the same values.
    NonDeterminism,
    /// A replay string that cannot be replayed in this test (malformed, of
    /// another version, or from another test).
    Replay,
    /// A setting that cannot be used (an unreadable `CLMM_*` variable).
    Configuration,
    /// clmm met one of its own limits and cannot vouch for the rest of the
    /// exploration (load-buffering promises nested deeper than it follows,
    /// `Config::nesting_limit`).
    ExplorationLimit,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::DataRace => "data race",
            FailureKind::BarrierDivergence => "barrier divergence",
            FailureKind::Deadlock => "deadlock",
            FailureKind::Panic => "panic",
            FailureKind::Livelock => "possible livelock (step bound exceeded)",
            FailureKind::Configuration => "configuration error",
            FailureKind::LocalMemoryMisuse => "local memory misuse",
            FailureKind::NonDeterminism => "non-determinism",
            FailureKind::Replay => "replay failed",
            FailureKind::ExplorationLimit => "exploration limit reached",
        })
    }
}

/// A source location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceLoc {
    /// File.
    pub file: String,
    /// Line.
    pub line: u32,
    /// Column.
    pub column: u32,
}

impl fmt::Display for SourceLoc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.column)
    }
}

impl From<&'static std::panic::Location<'static>> for SourceLoc {
    fn from(l: &'static std::panic::Location<'static>) -> SourceLoc {
        SourceLoc { file: l.file().to_string(), line: l.line(), column: l.column() }
    }
}

/// How [`Failure::dot_file`] starts when the picture could not be written
/// (the reason follows).
pub const DOT_NOT_WRITTEN: &str = "(could not write ";

/// One access involved in a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AccessInfo {
    /// The unit, as text (`work-item global (1) group (1) local (0)`).
    pub unit: String,
    /// The unit id.
    pub unit_id: u32,
    /// The operation (`non-atomic write of 42`, `atomic_load acquire
    /// memory_scope_work_group`).
    pub op: String,
    /// The location's name and region.
    pub location: String,
    /// Where in the source.
    pub site: SourceLoc,
}

/// A failed execution.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What went wrong.
    pub kind: FailureKind,
    /// One line that says it.
    pub message: String,
    /// The accesses (or events) involved, for races both.
    pub accesses: Vec<AccessInfo>,
    /// Why the accesses are unordered, in words (races).
    pub reason: Option<String>,
    /// The source location of a panic.
    pub panic_site: Option<SourceLoc>,
    /// The execution, unit by unit.
    pub trace: String,
    /// The string that replays this execution (`CLMM_REPLAY`).
    pub replay: String,
    /// Backtraces of the accesses (races) or of the panic, captured during
    /// a replay only (empty otherwise).
    pub backtraces: Vec<String>,
    /// The execution as Graphviz DOT (with `CLMM_DOT` / `Builder::dot_dir`).
    pub dot: Option<String>,
    /// Where the DOT file was written, or why it was not (starting with
    /// [`DOT_NOT_WRITTEN`]).
    pub dot_file: Option<String>,
}

impl Failure {
    /// A failure with only a kind and a message (no execution).
    pub fn new(kind: FailureKind, message: String) -> Failure {
        Failure {
            kind,
            message,
            accesses: Vec::new(),
            reason: None,
            panic_site: None,
            trace: String::new(),
            replay: String::new(),
            backtraces: Vec::new(),
            dot: None,
            dot_file: None,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "clmm: {}: {}", self.kind, self.message)?;
        for (i, a) in self.accesses.iter().enumerate() {
            writeln!(f, "  {}. {} by {}", i + 1, a.op, a.unit)?;
            writeln!(f, "     on {}", a.location)?;
            writeln!(f, "     at {}", a.site)?;
        }
        if let Some(r) = &self.reason {
            writeln!(f, "  why: {r}")?;
        }
        if let Some(p) = &self.panic_site {
            let what = if self.kind == FailureKind::Panic { "panicked at" } else { "at" };
            writeln!(f, "  {what} {p}")?;
        }
        for (i, b) in self.backtraces.iter().enumerate() {
            let what = if self.accesses.len() > i { format!("access {}", i + 1) } else { "the panic".to_string() };
            writeln!(f, "\nbacktrace of {what}:")?;
            f.write_str(b)?;
        }
        if !self.trace.is_empty() {
            writeln!(f, "\nexecution:")?;
            f.write_str(&self.trace)?;
        }
        match &self.dot_file {
            // The file could not be written: the reason, without a command
            // that names it (the report read "(Graphviz: dot -Tsvg (could
            // not write ...)", a user-acceptance run).
            Some(p) if p.starts_with(DOT_NOT_WRITTEN) => writeln!(f, "\npicture: {p}")?,
            Some(p) => writeln!(f, "\npicture: {p} (Graphviz: dot -Tsvg {p} -o execution.svg)")?,
            None => {}
        }
        if !self.replay.is_empty() {
            let test = std::thread::current().name().filter(|n| *n != "main").map(str::to_string).unwrap_or_else(|| "<this test>".into());
            writeln!(f, "\nreplay (with backtraces): CLMM_REPLAY='{}' cargo test {test}", self.replay)?;
        }
        Ok(())
    }
}

impl std::error::Error for Failure {}

/// Render a backtrace captured during a replay: resolved, the user's
/// frames only. The frames of clmm, the coroutine runtime and the standard
/// library are left out, and the backtrace ends at the first of them past
/// the user's code: beyond it are clmm's runner (a kernel's closure is
/// called by its work-item's coroutine) and, as the unwinder follows the
/// coroutine back to the stack that resumed it, the test harness.
pub fn render_backtrace(mut bt: backtrace::Backtrace) -> String {
    bt.resolve();
    let mut s = String::new();
    let internal = ["backtrace::", "clmm_check::", "clmm_atomic::", "corosensei::", "std::", "core::", "alloc::", "<alloc::", "<core::", "<std::", "__rust", "rust_begin_unwind", "<clmm_check::", "<clmm_atomic::"];
    let mut user = false;
    'frames: for frame in bt.frames() {
        for sym in frame.symbols() {
            let name = sym.name().map(|n| format!("{n:#}")).unwrap_or_else(|| "?".into());
            let at = match (sym.filename(), sym.lineno()) {
                (Some(file), Some(line)) if !internal_file(file) && !internal.iter().any(|p| name.starts_with(p)) => format!("{}:{line}", file.display()),
                // Past the user's code: clmm's runner, then the harness.
                _ if user => break 'frames,
                _ => continue,
            };
            user = true;
            let _ = writeln!(s, "    {name}\n        at {at}");
        }
    }
    s
}

/// Whether a frame's source file is clmm's, the coroutine runtime's, the
/// backtrace crate's or the standard library's: symbol names alone miss
/// the frames that debug info names without their path (`suspend`,
/// `write_at<u32>`).
fn internal_file(file: &std::path::Path) -> bool {
    file.starts_with("/rustc")
        || file.components().any(|c| {
            let c = c.as_os_str().to_string_lossy();
            ["clmm-check", "clmm-atomic"].contains(&c.as_ref()) || ["clmm-check-", "clmm-atomic-", "corosensei-", "backtrace-"].iter().any(|p| c.starts_with(p))
        })
}

/// An NDRange id in its first `d` dimensions (`get_work_dim`), and in
/// any beyond them that is not 0: `(3)`, `(0, 1)`, `(2, 0, 1)`.
fn dims(v: &[usize; 3], d: u8) -> String {
    if v[2] > 0 || d >= 3 {
        format!("({}, {}, {})", v[0], v[1], v[2])
    } else if v[1] > 0 || d == 2 {
        format!("({}, {})", v[0], v[1])
    } else {
        format!("({})", v[0])
    }
}

/// A unit in a few words: `work-item 3 (group 1)` by its global id, or
/// `the host`.
pub fn short_unit_name(g: &Graph, u: UnitId) -> String {
    match &g.units[u.index()].kind {
        UnitKind::Host => if u.0 == 0 { "the host".to_string() } else { format!("host thread {}", u.0) },
        UnitKind::Command { .. } => format!("command {}", u.0),
        UnitKind::WorkItem { global_id, group_id, work_dim, .. } => {
            let id = |v: &[usize; 3]| if v[1] > 0 || v[2] > 0 || *work_dim > 1 { dims(v, *work_dim) } else { v[0].to_string() };
            format!("work-item {} (group {}){}", id(global_id), id(group_id), child_of(g, u))
        }
    }
}

/// Which kernel a work-item belongs to, where its ids could be another's:
/// for a work-item of a kernel command (of a host or a device-side queue),
/// its command; for one of a `launch`, the launch event, when the
/// execution has work-items of several launches. The work-items of two
/// kernels have the same ids, and reports named two different work-items
/// alike for host queues and launches until session 56 (a user-acceptance
/// run).
fn child_of(g: &Graph, u: UnitId) -> String {
    match g.units[u.index()].parent {
        Some(p) if matches!(g.units[p.unit.index()].kind, UnitKind::Command { .. }) => format!(" of command {}", p.unit.0),
        Some(p) if g.contains(p) && several_kernels(g) => format!(" of the kernel of launch {}.{} at {}:{}", p.unit.0, p.index, g.ev(p).site.file(), g.ev(p).site.line()),
        _ => String::new(),
    }
}

/// Whether the work-items of `g` come from more than one launch. A launch
/// creates its work-items together, after the units before them, so the
/// first and the last work-item have different launches exactly when
/// there are several: found from both ends past the few other units, in
/// O(1) for a wide kernel (`unit_name` names every unit of a trace).
fn several_kernels(g: &Graph) -> bool {
    let launch = |x: &crate::graph::Unit| match x.kind {
        UnitKind::WorkItem { .. } => x.parent,
        _ => None,
    };
    let first = g.units.iter().find_map(launch);
    let last = g.units.iter().rev().find_map(launch);
    first != last
}

/// Describe a unit for reports.
pub fn unit_name(g: &Graph, u: UnitId) -> String {
    match &g.units[u.index()].kind {
        UnitKind::Command { command, device } => {
            let what = command.name();
            let parent = g.units[u.index()].parent.filter(|&p| g.contains(p));
            let at = parent.map(|p| format!(" enqueued at {}:{}", g.ev(p).site.file(), g.ev(p).site.line())).unwrap_or_default();
            let by = parent.filter(|_| g.device_enqueued(u)).map(|p| format!(" by {}", short_unit_name(g, p.unit))).unwrap_or_default();
            format!("command {} ({what} on device {device}{at}{by})", u.0)
        }
        kind => format!("{}{}", unit_kind_name(u, kind), child_of(g, u)),
    }
}

/// Describe a unit from its kind alone, as [`unit_name`] does but without
/// its graph: a command by its id only, and a child kernel's work-item
/// without its command (the stall watchdog's, [`crate::watchdog`]).
pub fn unit_kind_name(u: UnitId, kind: &UnitKind) -> String {
    match kind {
        UnitKind::Host => if u.0 == 0 { "the host (model closure)".to_string() } else { format!("host thread {}", u.0) },
        UnitKind::Command { command, device } => format!("command {} ({} on device {device})", u.0, command.name()),
        UnitKind::WorkItem { global_id, group_id, local_id, sub_group_index, device, work_dim, .. } => {
            let dev = if *device > 0 { format!(" on device {device}") } else { String::new() };
            let d = *work_dim;
            format!("work-item global {} group {} local {} sub-group {}{}", dims(global_id, d), dims(group_id, d), dims(local_id, d), sub_group_index, dev)
        }
    }
}

/// Describe a location.
pub fn loc_name(locs: &[LocInfo], l: clmm_atomic::backend::LocId) -> String {
    let info = &locs[l.0 as usize];
    let region = match info.region {
        Region::Global if info.fga() => "fine-grained SVM".to_string(),
        Region::Global if info.fine() => "fine-grained SVM without atomics support".to_string(),
        Region::Global if info.svm() => "coarse-grained SVM".to_string(),
        Region::Global if info.host() => "host memory".to_string(),
        Region::Global => "global memory".to_string(),
        Region::Local(g) => format!("local memory of work-group {}", g.0),
        Region::Unqualified => "unqualified memory".to_string(),
    };
    format!("{} ({}, {})", info.name(), region, if info.atomic { "atomic" } else { "non-atomic" })
}

/// Describe an event's operation.
pub fn op_text(g: &Graph, e: EventId) -> String {
    let ev = g.ev(e);
    let mode = match ev.atomic {
        Some((o, s)) => format!(" {o} {s}"),
        None => String::new(),
    };
    match ev.kind {
        Kind::Read => match ev.op {
            Op::Mem { access: Access::Cas { .. }, .. } => format!("failed atomic_compare_exchange{mode} (read {})", ev.value as i64),
            _ if ev.atomic.is_some() => format!("atomic_load{mode} (read {})", ev.value as i64),
            _ => format!("non-atomic read (read {})", ev.value as i64),
        },
        Kind::Write => {
            if ev.atomic.is_some() {
                format!("atomic_store{mode} of {}", ev.value as i64)
            } else {
                format!("non-atomic write of {}", ev.value as i64)
            }
        }
        Kind::RmwRead => match ev.op {
            Op::Mem { access: Access::Rmw(op, ..), .. } => format!("{}{mode} (read {})", op.cl_name(), ev.value as i64),
            _ => format!("atomic_compare_exchange{mode} (read {})", ev.value as i64),
        },
        Kind::RmwWrite => format!("  (its write of {})", ev.value as i64),
        Kind::Fence => format!("atomic_work_item_fence({}){mode}", ev.flags),
        Kind::BarrierEntry | Kind::BarrierExit if matches!(ev.op, Op::Barrier { collective: Some(_), .. }) => {
            let end = if ev.kind == Kind::BarrierEntry { "entry" } else { "exit" };
            let scope = ev.atomic.map(|(_, s)| format!(" {s}")).unwrap_or_default();
            format!("{} {end} (no memory fence){scope}", crate::graph::barrier_name(&ev.op))
        }
        Kind::BarrierEntry => format!("barrier({}) entry{mode}", ev.flags),
        Kind::BarrierExit => format!("barrier({}) exit{mode}", ev.flags),
        Kind::CmdStart | Kind::Wait => format!("{}{}", kind_text(ev.kind), waits_text(g.waits(ev))),
        _ => kind_text(ev.kind).to_string(),
    }
}

/// The name of an event kind: a host step, a launch or a spin-loop hint
/// by its name, a memory access, fence or barrier only by its kind (its
/// full text needs the event: [`op_text`]).
pub fn kind_text(kind: Kind) -> &'static str {
    match kind {
        Kind::Launch => "launch",
        Kind::Join => "wait for the kernel to finish",
        Kind::Spawn => "spawn a host thread",
        Kind::Enqueue => "enqueue a command",
        Kind::CmdStart => "command start",
        Kind::Wait => "wait",
        Kind::SetStatus => "set a user event complete",
        Kind::Spin => "spin_loop",
        Kind::Read | Kind::RmwRead => "read",
        Kind::Write | Kind::RmwWrite => "write",
        Kind::Fence => "fence",
        Kind::BarrierEntry | Kind::BarrierExit => "barrier",
    }
}

/// Describe an operation a unit asks for, before it is an event (the
/// non-determinism report compares it with the event a replay expected):
/// `atomic_store relaxed memory_scope_device of 1 on x`.
pub fn request_text(locs: &[LocInfo], op: &Op) -> String {
    match *op {
        Op::Mem { loc, access, mode } => {
            let on = locs.get(loc.0 as usize).map(|_| loc_name(locs, loc)).unwrap_or_else(|| format!("location {}", loc.0));
            let (atomic, mode) = match mode {
                clmm_atomic::backend::Mode::Plain => (false, String::new()),
                clmm_atomic::backend::Mode::Atomic(o, s) => (true, format!(" {o} {s}")),
            };
            let what = match access {
                Access::Load if atomic => format!("atomic_load{mode}"),
                Access::Load => "non-atomic read".to_string(),
                Access::Store(v) if atomic => format!("atomic_store{mode} of {}", v as i64),
                Access::Store(v) => format!("non-atomic write of {}", v as i64),
                Access::Rmw(rmw, _, v) => format!("{}{mode} with {}", rmw.cl_name(), v as i64),
                Access::Cas { expected, desired, weak, .. } => {
                    format!("atomic_compare_exchange_{}{mode} of {} for {}", if weak { "weak" } else { "strong" }, expected as i64, desired as i64)
                }
            };
            format!("{what} on {on}")
        }
        Op::Fence { flags, order, scope } => format!("atomic_work_item_fence({flags}) {order} {scope}"),
        Op::Barrier { collective: Some(c), .. } => format!("{}({})", crate::graph::barrier_name(op), c.ty.cl_name()),
        Op::Barrier { flags, scope, .. } => format!("barrier({flags}) {scope}"),
        Op::SpinLoop => "spin_loop".to_string(),
    }
}

fn waits_text(waits: &[EventId]) -> String {
    if waits.is_empty() {
        return String::new();
    }
    let ids: Vec<String> = waits.iter().map(|x| format!("{}.{}", x.unit.0, x.index)).collect();
    format!(" (after {})", ids.join(", "))
}

/// Describe an access for a failure.
pub fn access_info(g: &Graph, locs: &[LocInfo], e: EventId) -> AccessInfo {
    if e.is_init() {
        let l = clmm_atomic::backend::LocId(e.index);
        return AccessInfo {
            unit: "the initial state".into(),
            unit_id: u32::MAX,
            op: format!("initial write of {}", locs[e.index as usize].init as i64),
            location: loc_name(locs, l),
            site: SourceLoc { file: "<initial state>".into(), line: 0, column: 0 },
        };
    }
    let ev = g.ev(e);
    AccessInfo {
        unit: unit_name(g, e.unit),
        unit_id: e.unit.0,
        op: op_text(g, e),
        location: ev.loc.map(|l| loc_name(locs, l)).unwrap_or_default(),
        site: ev.site.into(),
    }
}

/// A unit with more events than this shows only some of them in a
/// report's trace ([`trace`]): a livelock stopped at the step bound has
/// thousands, and nobody reads them all.
pub const TRACE_FULL_UNIT: usize = 48;
/// The first events of a long unit that a trace shows.
const TRACE_HEAD: u32 = 8;
/// The last events of a long unit that a trace shows (where a livelock
/// loops, or where a unit stopped).
const TRACE_TAIL: u32 = 24;
/// The events shown on either side of a marked event of a long unit.
const TRACE_CONTEXT: u32 = 2;

/// The execution, unit by unit, with the write each read read from; the
/// events of `marked` (the accesses of a race) are marked with their number.
///
/// Unless `full`, a unit of more than [`TRACE_FULL_UNIT`] events shows its
/// first and last events, each marked event with two events either side,
/// and the write each marked read read from; each run of events left out
/// is one line that says how many, which ones, and how to see them
/// (`CLMM_FULL_TRACE=1`, `Builder::full_trace`).
pub fn trace(g: &Graph, locs: &[LocInfo], marked: &[EventId], full: bool) -> String {
    let mut s = String::new();
    for (u, unit) in g.units.iter().enumerate() {
        let uid = UnitId(u as u32);
        let _ = writeln!(s, "  unit {u}: {}", unit_name(g, uid));
        let n = unit.events.len() as u32;
        let shown = shown_events(g, uid, marked, full);
        let mut i = 0;
        while i < n {
            if !shown(i) {
                let from = i;
                let end = (from..n).find(|&k| shown(k)).unwrap_or(n);
                // A gap of one event is shown: its line is no longer.
                if end - from > 1 {
                    let _ = writeln!(s, "    ... {} events not shown ({u}.{from} to {u}.{}; CLMM_FULL_TRACE=1 shows them)", end - from, end - 1);
                    i = end;
                    continue;
                }
            }
            let id = EventId { unit: uid, index: i };
            let ev = g.ev(id);
            let mut line = format!("    {u}.{i:<3} {}", op_text(g, id));
            if let Some(l) = ev.loc {
                let _ = write!(line, " on {}", locs[l.0 as usize].name());
            }
            if let Some(w) = ev.rf {
                let src = if w.is_init() { "initial value".to_string() } else { format!("{}.{}", w.unit.0, w.index) };
                let _ = write!(line, " <- {src}");
            }
            let _ = write!(line, "   [{}:{}]", ev.site.file(), ev.site.line());
            if let Some(k) = marked.iter().position(|&m| m == id) {
                let _ = write!(line, "   <== access {}", k + 1);
            }
            let _ = writeln!(s, "{line}");
            i += 1;
        }
    }
    s
}

/// Which events of unit `u` a trace shows ([`trace`]).
fn shown_events<'a>(g: &'a Graph, u: UnitId, marked: &'a [EventId], full: bool) -> impl Fn(u32) -> bool + 'a {
    let n = g.units[u.index()].events.len() as u32;
    let all = full || n as usize <= TRACE_FULL_UNIT;
    // The marked events of this unit, and the writes of this unit that
    // marked reads (of any unit) read from.
    let anchors: Vec<(u32, u32)> = marked
        .iter()
        .filter(|m| !m.is_init())
        .flat_map(|&m| {
            let near = (m.unit == u).then(|| (m.index.saturating_sub(TRACE_CONTEXT), m.index + TRACE_CONTEXT));
            let src = g.ev(m).rf.filter(|w| !w.is_init() && w.unit == u).map(|w| (w.index, w.index));
            near.into_iter().chain(src)
        })
        .collect();
    move |i: u32| all || i < TRACE_HEAD || i + TRACE_TAIL >= n || anchors.iter().any(|&(a, b)| (a..=b).contains(&i))
}
