//! The stall watchdog: says on stderr which unit has been running the
//! user's code for a long time without reaching a clmm operation.
//!
//! The checker gets control back only at a unit's next operation. A unit
//! that never reaches one (an endless loop over plain Rust values, a wait
//! on a `std` mutex, channel, `Barrier` or thread, which clmm does not
//! schedule: every unit of a run shares one thread) would hang the test
//! without a word, and a hanging test's captured output is never shown.
//! A thread per process samples each worker's [`Watch`] and, once a unit
//! has been in the user's code longer than [`Config::stall_warning`](crate::config::Config::stall_warning)
//! (`CLMM_STALL_SECS`, 10 s by default), writes one warning straight to
//! stderr (past libtest's capture): the unit, and where its last operation
//! was. It cannot stop the unit (a coroutine is not preempted); the
//! warning says why the test does not end.
//!
//! The explorer's cost is two relaxed stores a resume ([`Watch::enter`],
//! [`Watch::leave`]); the thread runs while some run is registered, and
//! ends at its first tick without one.

use crate::graph::UnitKind;
use crate::ids::UnitId;
use std::io::Write;
use std::panic::Location;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// How often the watchdog samples, at most (a shorter threshold samples
/// four times within it).
const TICK: Duration = Duration::from_millis(100);

/// One worker's switches between the checker and the user's code.
pub struct Watch {
    /// Odd while a unit runs the user's code; one more at each switch.
    gen: AtomicU64,
    /// The unit running (valid while `gen` is odd).
    unit: AtomicU32,
    /// Where that unit's last operation was (null: none yet).
    site: AtomicPtr<Location<'static>>,
    /// What each unit of the current execution is, as its coroutine was
    /// created ([`Watch::name_unit`]), for the warning to name it.
    kinds: Mutex<Vec<Option<UnitKind>>>,
    after: Duration,
    /// The watchdog's own: the odd generation it last saw, since when,
    /// and whether it warned about it.
    seen: Mutex<Option<(u64, Instant, bool)>>,
}

impl Watch {
    /// No unit in the user's code yet; warning after `after`.
    fn new(after: Duration) -> Watch {
        Watch { gen: AtomicU64::new(0), unit: AtomicU32::new(0), site: AtomicPtr::new(std::ptr::null_mut()), kinds: Mutex::new(Vec::new()), after, seen: Mutex::new(None) }
    }

    /// Unit `u` is a `kind` (`None`: not in the graph).
    fn name_unit(&self, u: usize, kind: Option<UnitKind>) {
        let mut kinds = self.kinds.lock().unwrap_or_else(|e| e.into_inner());
        if kinds.len() <= u {
            kinds.resize(u + 1, None);
        }
        kinds[u] = kind;
    }

    /// Unit `u` resumes running the user's code, after its operation at
    /// `site` (`None`: its first resume).
    pub fn enter(&self, u: usize, site: Option<&'static Location<'static>>) {
        self.unit.store(u as u32, Ordering::Relaxed);
        self.site.store(site.map_or(std::ptr::null_mut(), |s| s as *const Location<'static> as *mut _), Ordering::Relaxed);
        let g = self.gen.load(Ordering::Relaxed);
        self.gen.store(g | 1, Ordering::Release);
    }

    /// The unit is back in the checker.
    pub fn leave(&self) {
        let g = self.gen.load(Ordering::Relaxed);
        self.gen.store((g | 1) + 1, Ordering::Release);
    }

    /// The watchdog's sample at `now`: the warning to write, once per stay
    /// in the user's code longer than `after`.
    fn sample(&self, now: Instant) -> Option<String> {
        let g = self.gen.load(Ordering::Acquire);
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if g % 2 == 0 {
            *seen = None;
            return None;
        }
        match &mut *seen {
            Some((s, since, warned)) if *s == g => {
                if *warned || now.duration_since(*since) < self.after {
                    return None;
                }
                *warned = true;
            }
            other => {
                *other = Some((g, now, false));
                return None;
            }
        }
        let unit = self.unit.load(Ordering::Relaxed);
        let site = self.site.load(Ordering::Relaxed);
        // SAFETY: a non-null `site` is a `&'static Location` (`enter`).
        let site = unsafe { site.as_ref() };
        let kind = self.kinds.lock().unwrap_or_else(|e| e.into_inner()).get(unit as usize).copied().flatten();
        Some(warning(unit, kind, site, self.after))
    }
}

/// The explorer's side of its [`Watch`]: what it told it each unit is.
pub struct Watcher {
    watch: Arc<Watch>,
    told: Vec<Option<UnitKind>>,
}

impl Watcher {
    /// A watcher with a new watch, warning after `after`
    /// ([`watch`]).
    pub fn new(after: Duration) -> Watcher {
        Watcher { watch: watch(after), told: Vec::new() }
    }

    /// Its watch.
    pub fn watch(&self) -> &Watch {
        &self.watch
    }

    /// Unit `u`'s coroutine is created; it is a `kind` (`None`: not in
    /// the graph). The watch is told only a change: locking it for each
    /// unit of each execution cost SB 1.5% more instructions.
    #[inline]
    pub fn name_unit(&mut self, u: usize, kind: Option<&UnitKind>) {
        if let (Some(Some(t)), Some(k)) = (self.told.get(u), kind) {
            if t == k {
                return;
            }
        }
        self.retell(u, kind.copied());
    }

    /// Tell the watch that unit `u` is now a `kind`.
    #[cold]
    fn retell(&mut self, u: usize, kind: Option<UnitKind>) {
        if self.told.len() <= u {
            self.told.resize(u + 1, None);
        }
        self.told[u] = kind;
        self.watch.name_unit(u, kind);
    }
}

/// `f`, which runs unit `u`'s code after its operation at `site` (`None`:
/// from its start), told to `watch` if there is one
/// ([`Watch::enter`], [`Watch::leave`]).
/// (Inlined: as a call it cost SB 1.2% more instructions with no watch.)
#[inline(always)]
pub fn in_user_code<R>(watch: Option<&Watch>, u: usize, site: Option<&'static Location<'static>>, f: impl FnOnce() -> R) -> R {
    if let Some(w) = watch {
        w.enter(u, site);
    }
    let r = f();
    if let Some(w) = watch {
        w.leave();
    }
    r
}

/// The text of a warning.
fn warning(unit: u32, kind: Option<UnitKind>, site: Option<&'static Location<'static>>, after: Duration) -> String {
    let who = match kind {
        Some(k) => format!("unit {unit}, {},", crate::report::unit_kind_name(UnitId(unit), &k)),
        None => format!("unit {unit}"),
    };
    let since = match site {
        Some(s) => format!("since its operation at {}", crate::report::SourceLoc::from(s)),
        None => "since it started, before any operation".to_string(),
    };
    format!(
        "clmm: {who} has been running your code for {after:?} {since},\n  \
         without reaching another clmm operation. clmm regains control only at an operation (the units of a run\n  \
         share one thread), so this check cannot end if the unit never reaches one: a loop over plain Rust values\n  \
         only, or a wait on a std Mutex, channel, Barrier or thread, which clmm does not schedule (use clmm's\n  \
         atomics, barriers and host operations instead). The units are numbered as in clmm's traces;\n  \
         CLMM_STALL_SECS sets when this is said (0: never).\n"
    )
}

struct Registry {
    watches: Vec<Weak<Watch>>,
    running: bool,
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry { watches: Vec::new(), running: false });

/// A watch for one worker, warning after `after`; the watchdog thread is
/// started if it is not running.
pub fn watch(after: Duration) -> Arc<Watch> {
    let w = Arc::new(Watch::new(after));
    let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
    r.watches.retain(|w| w.strong_count() > 0);
    r.watches.push(Arc::downgrade(&w));
    if !r.running {
        // Without the thread (none can be spawned) there is no warning;
        // the check itself goes on.
        r.running = std::thread::Builder::new().name("clmm-watchdog".into()).spawn(run).is_ok();
    }
    w
}

/// The watchdog thread: samples every watch until none is left.
fn run() {
    loop {
        let live: Vec<Arc<Watch>> = {
            let mut r = REGISTRY.lock().unwrap_or_else(|e| e.into_inner());
            r.watches.retain(|w| w.strong_count() > 0);
            if r.watches.is_empty() {
                r.running = false;
                return;
            }
            r.watches.iter().filter_map(Weak::upgrade).collect()
        };
        let tick = live.iter().map(|w| w.after / 4).min().unwrap_or(TICK).clamp(Duration::from_millis(5), TICK);
        let now = Instant::now();
        for w in &live {
            if let Some(text) = w.sample(now) {
                // Straight to the process's stderr: libtest captures
                // `eprintln!` and shows it only when a test fails.
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
            }
        }
        drop(live);
        std::thread::sleep(tick);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warns_once_per_stay_in_user_code() {
        let w = Watch::new(Duration::from_secs(10));
        let t0 = Instant::now();
        let later = |s: u64| t0 + Duration::from_secs(s);
        // In the checker: nothing.
        assert_eq!(w.sample(t0), None);
        w.enter(3, Some(Location::caller()));
        assert_eq!(w.sample(later(1)), None);
        assert_eq!(w.sample(later(10)), None);
        let text = w.sample(later(11)).expect("a warning after 10 s");
        assert!(text.starts_with("clmm: unit 3 has been running your code for 10s since its operation at "), "{text}");
        // Named once its coroutine is created with a kind.
        w.leave();
        let item = UnitKind::WorkItem { global_id: [5, 0, 0], group_id: [1, 0, 0], local_id: [1, 0, 0], group: crate::ids::GroupId(1), sub_group: crate::ids::SubGroupId(1), sub_group_index: 0, device: 0, work_dim: 1 };
        w.name_unit(3, Some(item));
        w.enter(3, Some(Location::caller()));
        assert_eq!(w.sample(later(12)), None);
        let text = w.sample(later(23)).expect("a warning after 10 s");
        assert!(text.starts_with("clmm: unit 3, work-item global (5) group (1) local (1) sub-group 0, has been running your code for 10s since "), "{text}");
        assert!(text.contains("watchdog.rs:"), "{text}");
        assert_eq!(w.sample(later(30)), None, "one warning per stay");
        // A switch starts the count again.
        w.leave();
        assert_eq!(w.sample(later(31)), None);
        w.name_unit(0, Some(UnitKind::Host));
        w.enter(0, None);
        assert_eq!(w.sample(later(32)), None);
        let text = w.sample(later(43)).expect("a warning for the new stay");
        assert!(text.starts_with("clmm: unit 0, the host (model closure), has been running your code for 10s since it started"), "{text}");
    }
}
