//! The backend seen by user code: [`Checker`] implements
//! [`clmm_atomic::backend::Backend`], the only way the user-facing crates
//! reach the checker (DESIGN.md §2). An operation suspends the calling
//! unit's coroutine with a [`Request`] and resumes with the engine's
//! [`Reply`]; allocations, labels and launches are recorded in [`Shared`].

use super::host;
use crate::graph::{LocInfo, Region};
use crate::ids::GroupId;
use crate::runtime::{self, Request, Resp};
use clmm_atomic::backend::{AllocRegion, Backend, LocId, Op, Reply};
use clmm_atomic::{LaunchPlan, WorkItem};
use corosensei::Yielder;
use std::cell::RefCell;
use std::panic::Location;
use std::sync::Mutex;

#[derive(Default)]
pub(super) struct Shared {
    pub(super) current: usize,
    pub(super) yielders: Vec<*const Yielder<Resp, ()>>,
    pub(super) pending: Vec<Option<Request>>,
    pub(super) abandoning: bool,
    pub(super) local_ctx: Option<GroupId>,
    /// The plan and kernel of each unit's pending launch.
    pub(super) launch: Vec<Option<PendingLaunch>>,
    pub(super) launch_groups: Vec<GroupId>,
    pub(super) allocs: Vec<u32>,
    pub(super) locs: Vec<LocInfo>,
    pub(super) loc_keys: AllocKeys,
    /// Host threads, queues and events of this execution.
    pub(super) host: host::HostShared,
    /// Capture a backtrace at each operation (replays only).
    pub(super) capture: bool,
    /// Per unit, the backtrace of its pending operation (replays only):
    /// one slot for all units gave an operation the backtrace of another
    /// unit's operation, suspended after it and added before it.
    pub(super) bt: Vec<Option<backtrace::Backtrace>>,
}

impl Shared {
    /// Emptied for the next run, keeping its buffers.
    pub(super) fn recycled(self) -> Shared {
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
pub(super) struct LocTable {
    pub(super) locs: Vec<LocInfo>,
    pub(super) keys: AllocKeys,
    /// Load buffering was ruled out from these locations
    /// (`Engine::coherence_isolated`): a new one breaks the rule
    /// ([`super::Isolation`]). Under the table's lock, so that a worker
    /// that uses the rule and one that allocates agree on which came
    /// first.
    pub(super) isolation_used: bool,
    /// Whether the rule holds on the first `.0` locations: it depends on
    /// the table only, which grows (`Engine::coherence_isolated`).
    pub(super) isolation_holds: Option<(usize, bool)>,
}

/// The location of each allocation, by unit and by the allocation's rank
/// among its unit's (a unit allocates in program order, so each unit's
/// list fills in order): a lookup on every allocation of every execution.
#[derive(Default, Clone)]
pub(super) struct AllocKeys(Vec<Vec<LocId>>);

impl AllocKeys {
    fn get(&self, unit: u32, n: u32) -> Option<LocId> {
        self.0.get(unit as usize)?.get(n as usize).copied()
    }

    fn insert(&mut self, unit: u32, n: u32, l: LocId) {
        if self.0.len() <= unit as usize {
            self.0.resize_with(unit as usize + 1, Vec::new);
        }
        let v = &mut self.0[unit as usize];
        assert_eq!(v.len(), n as usize, "clmm internal error: a unit's allocations are keyed out of order");
        v.push(l);
    }

    fn clear(&mut self) {
        self.0.iter_mut().for_each(Vec::clear);
    }
}

/// A unit's pending launch: its plan and its kernel.
pub(super) type PendingLaunch = (*const LaunchPlan, *const (dyn Fn(&WorkItem) + Sync));

pub(super) struct Checker<'r> {
    pub(super) s: RefCell<Shared>,
    pub(super) table: &'r Mutex<LocTable>,
    pub(super) isolation: &'r super::Isolation,
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
    pub(super) fn sync_locs(&self) {
        let t = self.table.lock().unwrap_or_else(|e| e.into_inner());
        catch_up(&mut self.s.borrow_mut(), &t);
    }

    pub(super) fn suspend(&self, req: Request) -> Reply {
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
                if s.bt.len() <= cur {
                    s.bt.resize_with(cur + 1, || None);
                }
                s.bt[cur] = Some(backtrace::Backtrace::new_unresolved());
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
        if let Some(l) = s.loc_keys.get(cur, n) {
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
        if let Some(l) = t.keys.get(cur, n) {
            // Another worker allocated it first: the same id here.
            return l;
        }
        let memory = region;
        let region = match memory {
            AllocRegion::Global | AllocRegion::GlobalFga | AllocRegion::SvmCoarse | AllocRegion::SvmFine | AllocRegion::Host => Region::Global,
            AllocRegion::Unqualified => Region::Unqualified,
            AllocRegion::Local => Region::Local(s.local_ctx.expect("clmm: local allocation outside a local initialiser")),
        };
        let base = LocId(s.locs.len() as u32);
        for (i, init) in inits.into_iter().enumerate() {
            let elem = (len != 1).then_some(i as u32);
            s.locs.push(LocInfo { region, memory, atomic, alloc: base.0, init, site, elem, label: None });
        }
        s.loc_keys.insert(cur, n, base);
        if t.isolation_used {
            // Load buffering was ruled out from the locations before this
            // one (`Engine::coherence_isolated`).
            self.isolation.broken.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        t.locs.extend_from_slice(&s.locs[base.0 as usize..]);
        t.keys.insert(cur, n, base);
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
            if s.launch.len() <= cur {
                s.launch.resize(cur + 1, None);
            }
            s.launch[cur] = Some((plan as *const LaunchPlan, k));
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
