//! One execution (DESIGN.md §5, "Stateless"): the units' coroutines,
//! replaying the events already in the graph and adding the next one
//! (`drive`), launches and barriers, spin loops (DESIGN.md §6), and the
//! end of the run: complete (the exact model), blocked, or a failure with
//! its report.

use super::backend::Shared;
use super::ready::Ready;
use super::{Blocked, Body, Engine, End, Status, UnitRt};
use crate::graph::{BarrierInst, Event, Graph, GroupInfo, Kind, Region, Unit, UnitKind};
use crate::ids::{EventId, GroupId, SubGroupId, UnitId};
use crate::model::{self, vclock, Phase};
use crate::report::{self, Failure, FailureKind};
use crate::runtime::{self, Exit, Request, Resp};
use crate::watchdog;
use clmm_atomic::backend::{Access, LocId, Mode, Op, Reply};
use clmm_atomic::{FenceFlags, LaunchPlan, Order, WorkItem};
use std::cell::RefCell;
use std::panic::Location;

impl Engine<'_, '_> {
    fn reset_runtime(&mut self) {
        let mut s = self.checker.s.borrow_mut();
        s.current = 0;
        s.yielders.clear();
        s.pending.clear();
        s.abandoning = false;
        s.local_ctx = None;
        s.launch.clear();
        s.allocs.clear();
        s.host.clear();
    }

    fn add_unit_rt(&mut self, body: Option<Body>) {
        let spin_cur = self.bufs.spins.pop().unwrap_or_default();
        self.rt.push(UnitRt { co: None, body, startable: false, stack: (0, 0), pos: 0, status: Status::Running, spin_cur, spin_prev: None, spin_wrote: false });
        self.ready.insert(self.rt.len() - 1);
        self.behind = true;
        let mut s = self.checker.s.borrow_mut();
        s.yielders.push(std::ptr::null());
        s.pending.push(None);
    }

    fn spawn_unit(&mut self, body: Body) {
        let u = self.rt.len();
        self.spawn_unit_at(u, body);
    }

    /// Create unit `u` with `body`, to start later ([`Engine::start_unit`];
    /// units may be created out of id order when several host threads
    /// create units).
    pub(super) fn spawn_unit_at(&mut self, u: usize, body: Body) {
        while self.rt.len() < u {
            self.add_unit_rt(None);
            self.rt.last_mut().expect("rt").status = Status::Unborn;
        }
        if let Some(w) = &mut self.watch {
            w.name_unit(u, self.frames.last().and_then(|f| f.graph.units.get(u)).map(|x| &x.kind));
        }
        if u < self.rt.len() {
            // An unborn placeholder (`add_unit_rt`): its empty spin record
            // is reused.
            let spin_cur = std::mem::take(&mut self.rt[u].spin_cur);
            self.rt[u] = UnitRt { co: None, body: Some(body), startable: false, stack: (0, 0), pos: 0, status: Status::Running, spin_cur, spin_prev: None, spin_wrote: false };
            self.ready.insert(u);
            self.behind = true;
        } else {
            self.add_unit_rt(Some(body));
        }
    }

    /// Start unit `u`: make its coroutine on a pooled stack and run it to
    /// its first operation. An [`FailureKind::ExplorationLimit`] failure
    /// when more units would run at once than the process may map stacks
    /// for ([`runtime::max_live_units`]).
    pub(super) fn start_unit(&mut self, u: usize) -> Option<End> {
        let body = self.rt[u].body.take().expect("a unit not started has its body");
        let max = runtime::max_live_units();
        if self.live >= max {
            let name = report::unit_name(self.graph(), UnitId(u as u32));
            let message = format!(
                "{name} cannot start: {} units have started and not finished, each with its own coroutine stack in two memory mappings (the stack and its guard page), and this process may have {max} (Linux's vm.max_map_count, /proc/sys/vm/max_map_count, less a margin for the program's other mappings). Work-items that wait for each other (at a barrier) all run at once: check a smaller work-group or NDRange (every execution is explored: a few work-groups show most bugs), or raise vm.max_map_count",
                self.live
            );
            return Some(self.simple_failure(FailureKind::ExplorationLimit, message, None));
        }
        let shared: *const RefCell<Shared> = &self.checker.s;
        let on_start = move |y| {
            // SAFETY: the checker outlives every coroutine of the run.
            unsafe { &*shared }.borrow_mut().yielders[u] = y;
        };
        let (co, stack) = match body {
            Body::Host(f) => self.pool.spawn(f, on_start),
            Body::Item { kernel, plan, index } => {
                // SAFETY: the plan is the suspended host's (`Body::Item`).
                let item = unsafe { &*plan }.items[index as usize].clone();
                self.pool.spawn(move || kernel(&item), on_start)
            }
            Body::Boxed(f) => self.pool.spawn(f, on_start),
        };
        (self.rt[u].co, self.rt[u].stack) = (Some(co), stack);
        self.live += 1;
        match self.resume(u, Resp::Start, None) {
            None | Some(Exit::Done) | Some(Exit::Abandoned) => None,
            Some(Exit::Panic(m)) => Some(self.panic_failure(UnitId(u as u32), m)),
        }
    }

    /// Resume unit `u` with `r`, after its operation at `site` (`None`:
    /// its first resume), until its next operation or its end.
    fn resume(&mut self, u: usize, r: Resp, site: Option<&'static Location<'static>>) -> Option<Exit> {
        let running = runtime::Running { unit: u as u32, stack: self.rt[u].stack, size: self.cfg.stack_size };
        let co = self.rt[u].co.as_mut().expect("unit coroutine");
        let exit = resume_in_user_code(&self.checker.s, self.watch.as_ref(), running, co, r, site);
        if exit.is_some() {
            self.rt[u].status = Status::Done;
            self.ready.finish(u);
            if let Some(co) = self.rt[u].co.take() {
                self.pool.recycle(co);
                self.live -= 1;
            }
        }
        exit
    }

    pub(super) fn abandon_all(&mut self) {
        self.checker.s.borrow_mut().abandoning = true;
        for u in (0..self.rt.len()).rev() {
            if let Some(mut co) = self.rt[u].co.take() {
                if co.started() && !co.done() {
                    // Unwinding runs the unit's drops: the user's code.
                    let site = self.checker.s.borrow().pending[u].map(|r| r.site());
                    let running = runtime::Running { unit: u as u32, stack: self.rt[u].stack, size: self.cfg.stack_size };
                    let _ = resume_in_user_code(&self.checker.s, self.watch.as_ref(), running, &mut co, Resp::Abandon, site);
                }
                if co.done() {
                    self.pool.recycle(co);
                } else {
                    // Not started: dropping it runs no user code.
                    drop(co);
                }
            }
            // A unit never started: its body's captures are dropped, no
            // user code runs.
            self.rt[u].body = None;
        }
        self.live = 0;
        for rt in self.rt.drain(..) {
            for mut v in [rt.spin_cur].into_iter().chain(rt.spin_prev) {
                v.clear();
                self.bufs.spins.push(v);
            }
        }
    }

    pub(super) fn run_execution(&mut self) -> End {
        let end = self.run_execution_inner();
        // A replay pass that ended the run leaves no dooms for the
        // alternatives pushed after it.
        self.replaying_dooms(false);
        end
    }

    fn run_execution_inner(&mut self) -> End {
        self.reset_runtime();
        self.rt.clear();
        self.ready.clear();
        self.joins.clear();
        self.promises.clear();
        self.forget_graph_summaries();
        self.bufs.reach.clear();
        // The pending promises, and whether a promise is kept, in one pass.
        let g = &self.frames.last().expect("frame").graph;
        self.kept_promise = false;
        for e in g.event_ids() {
            let ev = g.ev(e);
            match ev.rf {
                Some(w) if !g.contains(w) => self.promises.push(e),
                Some(_) => self.kept_promise |= ev.speculative,
                None => {}
            }
        }
        self.rederive_deferred();
        if self.graph().units.is_empty() {
            let events = self.bufs.spare_events();
            self.graph().units.push(Unit { kind: UnitKind::Host, parent: None, events });
            self.graph().next_stamp = self.graph().next_stamp.max(1);
        }
        let body: *const (dyn Fn() + Sync + '_) = self.body;
        // SAFETY: the body outlives the run; units are unwound before return.
        let body: &'static (dyn Fn() + Sync) = unsafe { &*std::mem::transmute::<*const (dyn Fn() + Sync + '_), *const (dyn Fn() + Sync + 'static)>(body) };
        self.spawn_unit(Body::Host(body));
        if let Some(end) = self.start_unit(0) {
            return end;
        }
        self.drive()
    }

    fn livelock(&mut self, u: usize, req: Request) -> End {
        if !self.promises.is_empty() {
            return End::Blocked(Blocked::Unkept);
        }
        let site = req.site();
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
    pub(super) fn prefix_consistent(&mut self) -> bool {
        let locs = self.checker.s.borrow();
        let g = &self.frames.last().expect("frame").graph;
        if self.plan.is_some() {
            // A replay forces rf and coherence choices that need not
            // append (a write placed before others).
            self.clocks.note_changed();
        }
        let fast = self.clocks.check(g, &locs.locs, self.cfg.sem);
        let explicit = || model::check(g, &locs.locs, self.cfg.sem, Phase::Prefix).violation;
        self.prefix_verdict(fast, explicit, "this prefix", || {
            self.debug_graph();
            eprintln!("{}", self.clocks.describe());
        })
    }

    /// One more graph for the explicit model ([`super::Stats::explicit`]).
    fn count_explicit(&self) {
        self.run.counts.explicit.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The verdict of a prefix: the vector clocks' `fast`, the explicit
    /// model's where they cannot decide; with `CLMM_CROSSCHECK` both, and
    /// on a disagreement `dump` shows the graph (`what` names it) before
    /// the panic.
    fn prefix_verdict(&self, fast: vclock::Outcome, explicit: impl Fn() -> Option<model::Violation>, what: &str, dump: impl FnOnce()) -> bool {
        match fast {
            vclock::Outcome::Unsure(_) => {
                self.count_explicit();
                explicit().is_none()
            }
            vclock::Outcome::Consistent | vclock::Outcome::Inconsistent(_) => {
                if self.cfg.crosscheck {
                    let slow = explicit();
                    if slow.is_none() != (fast == vclock::Outcome::Consistent) {
                        dump();
                        panic!("clmm internal error: the vector clocks say {fast:?} and the explicit model {slow:?} on {what} (CLMM_CROSSCHECK)");
                    }
                }
                fast == vclock::Outcome::Consistent
            }
        }
    }

    /// [`Engine::prefix_consistent`] for a graph other than the run's (a
    /// revisit's prefix whose maximality is judged): vector clocks of
    /// their own, computed from scratch, and the explicit model where they
    /// cannot decide. The explicit model alone (bit matrices of every
    /// relation, O(n^3 / 64) a check) made the maximality checks of plain
    /// loads take 40% of checking a prefix scan with 16 work-items a tile.
    pub(super) fn consistent_prefix_of(&self, h: &Graph, locs: &[crate::graph::LocInfo]) -> bool {
        // The graphs checked here are mostly restrictions of one graph,
        // checked one after another: the views of their common prefix
        // stay ([`vclock::Clocks::note_changed`] drops those its
        // signatures no longer match), and only the rest is computed
        // again. Resetting them for each graph made these checks three
        // quarters of the maximality checks' cost on the work-stealing
        // kernel.
        let mut clocks = self.bufs.scratch_clocks.borrow_mut();
        clocks.note_changed();
        let fast = clocks.check(h, locs, self.cfg.sem);
        let explicit = || model::check(h, locs, self.cfg.sem, Phase::Prefix).violation;
        self.prefix_verdict(fast, explicit, "a revisit's prefix", || eprintln!("{}", clocks.describe()))
    }

    /// Resume `u` with `reply`; `Some(end)` if the execution ends.
    fn reply(&mut self, u: usize, reply: Reply) -> Option<End> {
        let site = self.checker.s.borrow_mut().pending[u].take().map(|r| r.site());
        match self.resume(u, Resp::Reply(reply), site) {
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
                // Every unit `launch` created has finished. The units
                // before the first one found running are not asked again
                // (a finished unit stays so in the run): asked of every
                // unit at each step, this cost a kernel of n work-items
                // O(n) a step while the host waited.
                let launch = self.last_launch(u);
                let k = match self.joins.iter().position(|j| j.0 == launch) {
                    Some(k) => k,
                    None => {
                        self.joins.push((launch, 0));
                        self.joins.len() - 1
                    }
                };
                let g = &self.frames.last().expect("frame").graph;
                let n = self.rt.len();
                let first = (self.joins[k].1 as usize..n).find(|&v| g.units.get(v).and_then(|x| x.parent) == Some(launch) && self.rt[v].status != Status::Done).unwrap_or(n);
                self.joins[k].1 = first as u32;
                first == n
            }
            Request::Host(_) => self.host_enabled(u),
            _ => true,
        }
    }

    pub(super) fn last_launch(&self, u: usize) -> EventId {
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
                return End::Blocked(Blocked::Inconsistent);
            }
            self.simple_failure(FailureKind::BarrierDivergence, format!("the work-items of a group do not all reach the same collective: {msg}"), Some(site))
        })
    }

    /// Whether every other member of the barrier instance `u` waits at is
    /// there too, or past it. A member waiting at the instance is never
    /// the one the others wait for, so the answer holds for every member
    /// waiting there ([`Engine::schedule`] asks once per instance).
    fn barrier_ready(&self, u: usize) -> bool {
        let Some(inst) = self.waiting_at(u) else { return false };
        let g = &self.frames.last().expect("frame").graph;
        g.barrier_members(UnitId(u as u32), inst.kind).iter().filter(|v| v.index() != u).all(|&v| self.at_or_past(v, inst))
    }

    /// Whether member `v` of barrier instance `inst` is there (waits at
    /// it) or past it (its exit fence is there, or it finished with
    /// partial participation). The search only when not waiting there.
    fn at_or_past(&self, v: UnitId, inst: BarrierInst) -> bool {
        self.waiting_at(v.index()) == Some(inst) || (self.cfg.barrier_partial && self.rt[v.index()].status == Status::Done) || self.frames.last().expect("frame").graph.barrier_event(v, inst, Kind::BarrierExit).is_some()
    }

    /// [`Engine::at_or_past`], the first `seen` events of `v` known not to
    /// be the instance's exit (the run only appends to them): only the
    /// others are looked at, and `seen` becomes all of them.
    fn at_or_past_since(&self, v: UnitId, inst: BarrierInst, seen: &mut u32) -> bool {
        if self.waiting_at(v.index()) == Some(inst) || (self.cfg.barrier_partial && self.rt[v.index()].status == Status::Done) {
            return true;
        }
        let evs = &self.frames.last().expect("frame").graph.units[v.index()].events;
        let from = (*seen as usize).min(evs.len());
        let past = evs[from..].iter().any(|x| x.kind == Kind::BarrierExit && x.barrier == Some(inst));
        *seen = evs.len() as u32;
        past
    }

    // -------------------------------------------------------------
    // Replaying events already in the graph
    // -------------------------------------------------------------

    fn replay(&mut self, u: usize, req: Request) -> Result<Option<Reply>, End> {
        struct Replayed {
            kind: Kind,
            value: u64,
            op: Op,
            barrier: Option<crate::graph::BarrierInst>,
            site: &'static std::panic::Location<'static>,
        }
        let pos = self.rt[u].pos as usize;
        let g = &self.frames.last().expect("frame").graph;
        // The fields replay needs, copied (not the event: its clone
        // touches the reference count of a host wait's list).
        let ev = {
            let e = &g.units[u].events[pos];
            Replayed { kind: e.kind, value: e.value, op: e.op, barrier: e.barrier, site: e.site }
        };
        let at = EventId { unit: UnitId(u as u32), index: pos as u32 };
        let checker = self.checker;
        let mismatch = |what: &str| -> End { non_determinism(g, &checker.s.borrow().locs, at, what) };
        match req {
            Request::Op(op, site) => {
                if !crate::graph::same_op(&op, &ev.op) {
                    let (was, now) = {
                        let locs = &checker.s.borrow().locs;
                        (report::request_text(locs, &ev.op), report::request_text(locs, &op))
                    };
                    return Err(mismatch(&was_and_now(&was, ev.site, &now, site)));
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
                            Err(mismatch("was a barrier's exit, and is now a barrier's entry"))
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
                    return Err(mismatch("was not a launch, and is now one"));
                }
                self.rt[u].pos += 1;
                self.start_launch(u, EventId { unit: UnitId(u as u32), index: pos as u32 })?;
                Ok(Some(Reply { value: 0, ok: true }))
            }
            Request::Join(_) => {
                if ev.kind != Kind::Join {
                    return Err(mismatch("was not the wait for a kernel, and is now one"));
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

    pub(super) fn new_event(&mut self, u: usize, kind: Kind, op: Op, site: &'static Location<'static>) -> EventId {
        let g = self.graph();
        let stamp = g.next_stamp;
        g.next_stamp += 1;
        let (loc, atomic, flags) = match op {
            Op::Mem { loc, mode, .. } => (Some(loc), match mode { Mode::Plain => None, Mode::Atomic(o, s) => Some((o, s)) }, FenceFlags::empty()),
            Op::Fence { flags, order, scope } => (None, Some((order, scope)), flags),
            Op::Barrier { flags, scope, .. } => (None, Some((if kind == Kind::BarrierEntry { Order::Release } else { Order::Acquire }, scope)), flags),
            Op::SpinLoop => (None, None, FenceFlags::empty()),
        };
        let ev = Event { kind, loc, atomic, flags, rf: None, value: 0, stamp, spurious: false, speculative: false, kept: false, level: 0, rank: u32::MAX, barrier: None, op, site, waits: None };
        // A new unit's events take the room its neighbour's needed.
        if u > 0 && g.units[u].events.capacity() == 0 {
            let neighbour = g.units[u - 1].events.len();
            crate::graph::reserve_like_neighbour(&mut g.units[u].events, neighbour);
        }
        let unit = &mut g.units[u];
        unit.events.push(ev);
        let index = (unit.events.len() - 1) as u32;
        self.clocks.note_appended(UnitId(u as u32));
        self.rt[u].pos += 1;
        let id = EventId { unit: UnitId(u as u32), index };
        if !kind.is_write() {
            // A write settles its promises once its value is known
            // (`push_revisits`).
            self.settle_promises_at(id);
        }
        if self.plan.is_some() {
            if let Some(bt) = self.checker.s.borrow_mut().bt.get_mut(u).and_then(Option::take) {
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
                            // A pinned compare-exchange fails on its pin
                            // (`speculation::speculates_on`).
                            let v = match self.pinned(r) {
                                Some(v) => v,
                                None => self.choose_rf(r),
                            };
                            if self.replay_error.is_some() {
                                // A replay string's step that gives this
                                // read no write (a string of another
                                // program): no write part without a
                                // source; `drive` reports the mismatch.
                                return Ok(Some(Reply { value: v, ok: false }));
                            }
                            let ok = self.resolve_rmw(r);
                            self.note_spin_access(u, r);
                            if ok {
                                self.rt[u].pos += 1; // the write part (`note_spin_access` tells whether it wrote)
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
                        // Entry fence with its dynamic instance: one more
                        // than the unit's last entry of the barrier (its
                        // entries come in order of `seq`; counting every
                        // earlier one made barriers in a loop O(n^2)).
                        let by_id = self.cfg.barrier_by_id;
                        let matches = |e: &&crate::graph::Event| e.kind == Kind::BarrierEntry && e.barrier.is_some_and(|b| b.kind == kind && (!by_id || b.id == id));
                        let crosscheck = self.cfg.crosscheck;
                        let events = &self.frames.last().expect("frame").graph.units[u].events;
                        let seq = events.iter().rev().find(matches).and_then(|e| e.barrier).map_or(0, |b| b.seq + 1);
                        if crosscheck {
                            assert_eq!(seq, events.iter().filter(matches).count() as u32, "clmm internal error: a barrier entry's instance is not one more than the unit's last (CLMM_CROSSCHECK)");
                        }
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
                self.start_launch(u, l)?;
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

    /// Register the units of a launch (graph and runtime), to start once
    /// the host waits for its kernel ([`Engine::release_pending_units`]).
    fn start_launch(&mut self, host: usize, launch: EventId) -> Result<(), End> {
        let (plan, kernel) = self.checker.s.borrow().launch.get(host).copied().flatten().expect("a launch request carries its plan");
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
        let g = &mut self.frames.last_mut().expect("frame").graph;
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
                        work_dim: item.work_dim() as u8,
                    },
                    parent: Some(launch),
                    events: self.bufs.spare_events(),
                });
                g.groups[groups[gi].0 as usize].units.push(uid);
                g.sub_groups[sg.0 as usize].push(uid);
            }
        }
        self.checker.s.borrow_mut().launch_groups = groups;
        self.bufs.sub_bases = sub_of_group;
        for i in 0..plan.items.len() {
            self.spawn_unit_at(first_unit + i, Body::Item { kernel, plan, index: i as u32 });
        }
        Ok(())
    }

    /// Let the units created so far start (after the host finished its
    /// local initialisers and asked to join): those with events of the
    /// graph to replay start now, so that every recorded event is replayed
    /// before a new one is added, as when all started here; the others
    /// once the scheduler reaches them ([`Engine::pick`]). Their first
    /// request is made by the user's code and adds no event, so the steps
    /// are those of starting them all here, but a kernel whose work-items
    /// run one after another does not hold a stack for each. Whether a
    /// unit was let start or started.
    fn release_pending_units(&mut self) -> Result<bool, End> {
        let mut any = false;
        for u in 0..self.rt.len() {
            let rt = &mut self.rt[u];
            if rt.status != Status::Running || rt.body.is_none() || rt.startable {
                continue;
            }
            rt.startable = true;
            any = true;
            let recorded = (rt.pos as usize) < self.frames.last().expect("frame").graph.units[u].events.len();
            if recorded {
                if let Some(end) = self.start_unit(u) {
                    return Err(end);
                }
            }
        }
        Ok(any)
    }

    /// Record read `e` of unit `u` in its spin iteration
    /// ([`Engine::end_spin_iteration`]), and whether it wrote.
    fn note_spin_access(&mut self, u: usize, e: EventId) {
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.ev(e);
        if let (Some(l), Some(w)) = (ev.loc, ev.rf) {
            self.rt[u].spin_cur.push((l, w));
        }
        if ev.kind == Kind::RmwRead && g.units[u].events.len() > e.index as usize + 1 && !silent_rmw(g, e) {
            self.rt[u].spin_wrote = true;
        }
    }

    /// End a spin-loop iteration; true if the unit is blocked (it wrote
    /// nothing and read the same writes as in the previous iteration).
    ///
    /// An RMW that writes back the value it read (a failed test-and-set,
    /// `exchange(1)` over 1, `fetch_or` of bits already set) is silent: it
    /// counts as no write, and a read of one of the unit's own silent RMWs
    /// as a read of what that RMW read ([`spin_source`]). A test-and-set
    /// lock writes at every failed try, so its spin loop never blocked and
    /// each execution ran to the step bound: a correct lock was reported
    /// as a possible livelock (user-acceptance run, session 56). Nothing is
    /// lost: the repeated iteration reads the same values, and its silent
    /// write adds nothing another unit could observe but a later place in
    /// coherence with the same value and, through it, the same release
    /// sequences and the unit's own program-order past up to the same loop.
    ///
    /// The first iteration's record also holds what the unit did before
    /// the loop, so an iteration is compared with the *end* of the previous
    /// record (its last `cur.len()` reads).
    fn end_spin_iteration(&mut self, u: usize) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        let rt = &mut self.rt[u];
        let cur = &rt.spin_cur;
        let wrote = std::mem::replace(&mut rt.spin_wrote, false);
        // Each read by the write it observes through the unit's own silent
        // RMWs (asked here, at the iteration's end, not at every read).
        let same = |p: &[(LocId, EventId)]| p.iter().zip(cur).all(|(&(l, w), &(m, x))| l == m && (w == x || spin_source(g, u, w) == spin_source(g, u, x)));
        let blocked = !wrote && rt.spin_prev.as_ref().is_some_and(|p| p.len() >= cur.len() && same(&p[p.len() - cur.len()..]));
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
        match self.release_pending_units() {
            Err(end) => return end,
            Ok(true) => return self.drive(),
            Ok(false) => {}
        }
        let pending = |e: &Self, u: usize| if e.rt[u].status == Status::Running { e.checker.s.borrow().pending[u] } else { None };
        let running = (0..self.rt.len()).any(|u| pending(self, u).is_some_and(|r| self.enabled(u, r)));
        if !running && !self.promises.is_empty() && self.plan.is_none() {
            // A speculated write that can no longer come.
            return End::Blocked(Blocked::Unkept);
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
                        None => match self.checker.s.borrow().pending.get(v).copied().flatten() {
                            Some(req) => format!("waits elsewhere, at {}:{}", req.site().file(), req.site().line()),
                            None => "waits elsewhere".to_string(),
                        },
                    };
                    desc.push(format!("{} {}", report::unit_name(g, UnitId(v as u32)), what));
                }
                let site = g.units[u].events.last().map(|e| e.site);
                if !self.prefix_consistent() {
                    return End::Blocked(Blocked::Inconsistent);
                }
                return self.simple_failure(
                    FailureKind::BarrierDivergence,
                    format!("the work-items of a group do not all reach the same barrier: {}", desc.join("; ")),
                    site,
                );
            }
        }
        let desc: Vec<String> = stuck.iter().map(|&u| self.wait_text(u)).collect();
        let msg = format!("no unit can proceed: {}", desc.join("; "));
        self.simple_failure(FailureKind::Deadlock, msg, None)
    }

    /// What running unit `u` waits for, and where, for a deadlock's report:
    /// a host wait's events and threads ([`Engine::host_wait_text`]), the
    /// kernel a join waits for, or the operation it is suspended at. The
    /// reports said only "waits" (a user-acceptance run, session 56).
    fn wait_text(&self, u: usize) -> String {
        if let Some(t) = self.host_wait_text(u) {
            return t;
        }
        let g = &self.frames.last().expect("frame").graph;
        let name = report::unit_name(g, UnitId(u as u32));
        let at = |s: &Location<'_>| format!("{}:{}", s.file(), s.line());
        match self.checker.s.borrow().pending.get(u).copied().flatten() {
            Some(Request::Join(site)) => format!("{name} waits for the work-items of the kernel it launched at {}", at(site)),
            Some(Request::Op(op @ Op::Barrier { .. }, site)) => format!("{name} waits at {} at {}", crate::graph::barrier_name(&op), at(site)),
            Some(req) => format!("{name} waits at {}", at(req.site())),
            None => format!("{name} waits"),
        }
    }

    /// Every unit is finished or waiting and some spin: if each spinning
    /// unit's last iteration read the newest write of every location it
    /// read, nothing can ever change what it sees, so it waits forever (a
    /// deadlock, GenMC's liveness violation); otherwise a newer write would
    /// eventually be seen and this exploration only blocked.
    fn spin_deadlock(&mut self, spinning: &[usize]) -> End {
        if !self.promises.is_empty() {
            return End::Blocked(Blocked::Unkept);
        }
        let g = &self.frames.last().expect("frame").graph;
        // A weak CAS that failed spuriously would eventually succeed.
        let spurious = |u: usize| g.units[u].events.iter().rev().skip(1).take_while(|e| e.kind != Kind::Spin).any(|e| e.spurious);
        // The newest write seen through the unit's own silent RMWs
        // (`spin_source`): a test-and-set lock nobody releases.
        let stale = spinning
            .iter()
            .any(|&u| spurious(u) || self.rt[u].spin_prev.as_ref().is_none_or(|reads| reads.iter().any(|&(l, w)| g.co_max(l) != w && spin_source(g, u, g.co_max(l)) != spin_source(g, u, w))));
        if stale {
            return End::Blocked(Blocked::Spin);
        }
        let locs = self.checker.s.borrow().locs.clone();
        self.count_explicit();
        if model::check(g, &locs, self.cfg.sem, Phase::Complete).violation.is_some() {
            return End::Blocked(Blocked::Inconsistent);
        }
        let desc: Vec<String> = spinning
            .iter()
            .map(|&u| {
                let reads = self.rt[u].spin_prev.as_deref().unwrap_or(&[]);
                let seen: Vec<String> = reads.iter().map(|&(l, w)| format!("{} = {}", locs[l.0 as usize].name(), g.write_value(w, &locs) as i64)).collect();
                if seen.is_empty() {
                    format!("{} spins forever in a loop that reads no memory", report::unit_name(g, UnitId(u as u32)))
                } else {
                    format!("{} spins forever on {}", report::unit_name(g, UnitId(u as u32)), seen.join(", "))
                }
            })
            .collect();
        let others: Vec<String> = (0..self.rt.len())
            .filter(|&u| self.rt[u].status == Status::Running)
            .map(|u| self.wait_text(u))
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
            if self.cfg.crosscheck && !self.behind {
                let g = &self.frames.last().expect("frame").graph;
                assert!((0..self.rt.len()).all(|u| self.rt[u].pos as usize >= g.units[u].events.len()), "clmm internal error: a unit has events to replay that Engine::behind does not know of (CLMM_CROSSCHECK)");
            }
            // Once every unit has replayed its events, only a new unit
            // (`add_unit_rt`, `spawn_unit_at`) can have some: asking every
            // unit at every step cost O(units) a step.
            let was = std::mem::replace(&mut self.behind, false);
            if was {
                self.replaying_dooms(true);
            }
            for u in 0..if was { self.rt.len() } else { 0 } {
                let pos = self.rt[u].pos as usize;
                if pos >= self.frames.last().expect("frame").graph.units[u].events.len() {
                    continue;
                }
                self.behind = true;
                if self.rt[u].status != Status::Running {
                    continue;
                }
                let Some(req) = self.checker.s.borrow().pending[u] else { continue };
                if matches!(req, Request::Join(_) | Request::Host(_)) && !self.enabled(u, req) {
                    // A recorded join or wait still waits for its
                    // kernel, command, thread or event.
                    continue;
                }
                match self.replay(u, req) {
                    Ok(Some(reply)) => {
                        if !self.keep_promises() {
                            return End::Blocked(Blocked::Broken);
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
            if progress {
                continue;
            }
            self.replaying_dooms(false);
            let mut chosen = None;
            if let Some(step) = self.plan.as_ref().and_then(|p| p.steps.get(self.step)).cloned() {
                // Replaying: the recorded unit takes the next step.
                let u = step.unit as usize;
                if u < self.rt.len() && self.rt[u].status == Status::Running && self.rt[u].body.is_some() {
                    // The recorded step of a unit not started yet (work-items
                    // start once the host waits for its kernel).
                    self.rt[u].startable = true;
                    if let Some(end) = self.start_unit(u) {
                        return end;
                    }
                }
                let req = (u < self.rt.len() && self.rt[u].status == Status::Running).then(|| self.checker.s.borrow().pending[u]).flatten();
                match req.filter(|&r| self.enabled(u, r)) {
                    Some(req) => chosen = Some((u, req)),
                    None => {
                        self.replay_error = Some(replay_mismatch(format!("step {} of the replay string expects unit {u} to go on, and it cannot here", self.step)));
                        return End::Blocked(Blocked::Inconsistent);
                    }
                }
                self.step += 1;
                self.forced = Some(step);
            }
            if chosen.is_none() {
                chosen = match self.schedule() {
                    Ok(c) => c,
                    Err(end) => return end,
                };
            }
            let Some((u, req)) = chosen else { return self.finish() };
            if self.rt[u].pos >= self.cfg.max_steps {
                return self.livelock(u, req);
            }
            let added = self.add_new(u, req);
            self.forced = None;
            if self.replay_error.is_some() {
                return End::Blocked(Blocked::Inconsistent);
            }
            if added.is_ok() && !self.keep_promises() {
                return End::Blocked(Blocked::Broken);
            }
            match added {
                Ok(Some(reply)) => {
                    if !self.prefix_consistent() {
                        return End::Blocked(Blocked::Inconsistent);
                    }
                    if let Some(end) = self.reply(u, reply) {
                        return end;
                    }
                }
                Ok(None) => {
                    if !self.prefix_consistent() {
                        return End::Blocked(Blocked::Inconsistent);
                    }
                }
                Err(end) => return end,
            }
        }
    }

    /// The unit that takes the next step when not replaying, and its request;
    /// `None` if no unit can go on. The lowest enabled unit goes on; in a
    /// speculative run, the units that owe a promised write go after the
    /// others, so that their reads (the promised write's porf-prefix) see every
    /// other unit's writes when they are added. A read of that prefix that
    /// needs a write depending on the speculation could not get it by a revisit
    /// once the promise is kept (it would be in the writer's porf-prefix
    /// through the promise): with the owing unit first,
    /// `lb_with_rmw_in_first_item` (`tests/semantics.rs`) and seeds 1884 and
    /// 2243 of `tests/lb_differential.rs` missed their cycle.
    ///
    /// Among the owing units, one that has itself read a pending promise goes
    /// first: its writes after that read depend on the speculation, so a read
    /// of another owing unit's prefix gets them only if they come before it,
    /// for the same reason (`a=Add x; Wy1 || Rx; Wy2; Rx || Add y; b=Ry; Wx2`,
    /// `b` promised `Wy1` and the first `Rx` promised `Wx2`: `Add x` reads
    /// `Wx2`, which the third unit writes after `b`; seeds 1371842 and, with
    /// `RA_SHAPE=wide`, 5032 of `tests/ra_rmw_differential.rs`).
    ///
    /// In a twin's run, the unit whose write a pin promises goes last while the
    /// pin is not taken ([`Pin`](crate::graph::Pin)): the pinned read reads the
    /// promise only if that write is not produced yet (seed 193020 of
    /// `tests/ra_rmw_differential.rs`: the pinned read's unit owed another
    /// promise, and went after the pin's writer).
    ///
    /// Among the owing units that read no pending promise, the one whose owed
    /// write came first in the graph the speculation was made from goes first
    /// ([`Event::rank`]): that graph produced the promised writes in that
    /// order, each unit's reads taking the writes they needed forward, and
    /// these units, reading no promise, can do the same again. By unit number,
    /// a unit could run before the one whose write its read needs, and the
    /// revisit that would fix it deletes a non-maximal read (`a=Ry; b=Rx; Wy2
    /// || Add x; Add y || Wy2; Add y; Add x`, seed 461635 of
    /// `tests/ra_rmw_differential.rs`: the middle unit's `Add x` needs the
    /// third's). A unit that read a pending promise runs differently from that
    /// graph (the promise gives it a value it did not read there), so the
    /// others keep the unit order: ranking them too cost the work-stealing
    /// kernels 16% to 5x more blocked explorations.
    ///
    /// A start graph with a unit that owes a promise and reads one is
    /// explored in a second order too, with such units before the units
    /// that owe none ([`Graph::owing_first`], `owing_first_matters` in
    /// `speculation.rs`).
    ///
    /// A unit that may start and has not ([`Engine::release_pending_units`])
    /// starts when the scheduler reaches it, and the choice is made again.
    fn schedule(&mut self) -> Result<Option<(usize, Request)>, End> {
        loop {
            let mut ready = std::mem::take(&mut self.ready);
            {
                let g = &self.frames.last().expect("frame").graph;
                ready.wake(|at, key| g.barrier_members(UnitId(at as u32), key.0.kind), |key, v, seen| self.at_or_past_since(v, key.0, seen));
            }
            let chosen = self.pick(Some(&mut ready));
            self.ready = ready;
            let chosen = match chosen {
                Some(Pick::Start(u)) => {
                    if let Some(end) = self.start_unit(u) {
                        return Err(end);
                    }
                    continue;
                }
                Some(Pick::Step(u, req)) => Some((u, req)),
                None => None,
            };
            if self.cfg.crosscheck {
                let every = match self.pick(None) {
                    Some(Pick::Step(u, _)) => Some(u),
                    Some(Pick::Start(u)) => panic!("clmm internal error: unit {u} is not started when the ready set chose {chosen:?} (CLMM_CROSSCHECK)"),
                    None => None,
                };
                assert_eq!(chosen.map(|c| c.0), every, "clmm internal error: the ready set chose another unit than asking every unit (CLMM_CROSSCHECK)");
            }
            return Ok(chosen);
        }
    }

    /// [`Engine::schedule`]'s choice among the units of `ready` (parking
    /// those that wait at a barrier instance not every member has
    /// reached, [`Ready`]), or among all units with `None`.
    fn pick(&mut self, mut ready: Option<&mut Ready>) -> Option<Pick> {
        let speculative = !self.promises.is_empty() || !self.frames.last().expect("frame").graph.pins.is_empty();
        // Lowest (tier, rank) first, then the lowest unit; tier 0 is a
        // unit that owes no promise.
        let mut best: Option<(u8, u32, usize, Request)> = None;
        // A barrier instance whose members wait for one that is not there
        // yet ([`Graph::barrier_instance`]): the same answer for each of
        // them (asking each made a work-group of n work-items cost O(n^2)
        // a step while they arrived).
        let mut blocked: Option<crate::graph::InstanceKey> = None;
        let mut next = 0;
        loop {
            let u = match ready.as_deref() {
                Some(r) => match r.next_from(next) {
                    Some(u) => u,
                    None => break,
                },
                None if next < self.rt.len() => next,
                None => break,
            };
            next = u + 1;
            if u >= self.rt.len() {
                break;
            }
            if self.rt[u].status != Status::Running {
                if let (Some(r), Status::Done | Status::SpinBlocked) = (ready.as_deref_mut(), self.rt[u].status) {
                    r.leave(u);
                }
                continue;
            }
            if self.rt[u].startable && self.rt[u].body.is_some() {
                return Some(Pick::Start(u));
            }
            let Some(req) = self.checker.s.borrow().pending[u] else { continue };
            let exit = match req {
                Request::Op(Op::Barrier { .. }, _) => self.waiting_at(u).map(|inst| (inst, self.frames.last().expect("frame").graph.barrier_instance(UnitId(u as u32), inst))),
                _ => None,
            };
            if let Some((inst, key)) = exit {
                let go = match ready.as_deref_mut() {
                    Some(r) => {
                        let g = &self.frames.last().expect("frame").graph;
                        r.wait(key, u, g.barrier_members(UnitId(u as u32), inst.kind), |v| self.at_or_past(v, inst))
                    }
                    None => blocked != Some(key) && self.barrier_ready(u),
                };
                if !go {
                    blocked = Some(key);
                    continue;
                }
            } else if !self.enabled(u, req) {
                if let (Some(r), Request::Join(_)) = (ready.as_deref_mut(), req) {
                    r.park_join(u);
                }
                continue;
            }
            let (tier, rank) = if speculative { self.owes(u) } else { (0, 0) };
            if tier == 0 {
                return Some(Pick::Step(u, req));
            }
            // Tier 1 keeps the unit order (its rank is 0).
            if best.is_none_or(|(t, k, ..)| (tier, rank) < (t, k)) {
                best = Some((tier, rank, u, req));
            }
        }
        best.map(|(.., u, req)| Pick::Step(u, req))
    }

    /// The scheduling tier of unit `u` in a speculative run and its rank
    /// ([`Engine::schedule`]): 0 owes no promise, 1 owes one and read one,
    /// 2 owes one and read none (with the lowest rank of those it owes),
    /// 4 is the writer of an untaken pin. In the second order of a start
    /// graph ([`Graph::owing_first`]) the owing units that read one go
    /// first: 0 owes one and read one, 1 owes none, 2 owes one and read
    /// none.
    fn owes(&self, u: usize) -> (u8, u32) {
        let g = &self.frames.last().expect("frame").graph;
        if g.pins.iter().any(|p| p.w.unit.index() == u && !p.taken(g)) {
            return (4, 0);
        }
        // Whether `u` owes a pending promise (the lowest rank of those it
        // owes), and whether it read one.
        let (rank, read) = self.promises.iter().fold((None::<u32>, false), |(k, rd), r| {
            let ev = g.ev(*r);
            let owed = ev.rf.is_some_and(|w| w.unit.index() == u);
            (if owed { Some(k.unwrap_or(u32::MAX).min(ev.rank)) } else { k }, rd || r.unit.index() == u)
        });
        if g.owing_first {
            // The second order ([`Graph::owing_first`]): the owing units
            // that read a promise before the units that owe none.
            return match (rank, read) {
                (Some(_), true) => (0, 0),
                (None, _) => (1, 0),
                (Some(k), false) => (2, k),
            };
        }
        match (rank, read) {
            (None, _) => (0, 0),
            (Some(_), true) => (1, 0),
            (Some(k), false) => (2, k),
        }
    }

    fn complete(&mut self) -> End {
        if !self.promises.is_empty() {
            // A speculated write was never produced.
            return End::Blocked(Blocked::Unkept);
        }
        if !self.pins_taken() {
            // The plain start graph's run, explored there.
            return End::Blocked(Blocked::Elsewhere);
        }
        let checker = self.checker;
        let shared = checker.s.borrow();
        let locs = &shared.locs;
        let g = &self.frames.last().expect("frame").graph;
        let well_formed = g.events().all(|(_, ev)| {
            ev.rf.is_none_or(|w| {
                (w.is_init() && ev.loc == Some(LocId(w.index)) && ev.value == locs[w.index as usize].init)
                    || (!w.is_init() && g.contains(w) && g.ev(w).writes(ev.loc, ev.value))
            })
        });
        if !well_formed {
            debug_assert!(false, "an execution graph with a read of a non-write");
            return End::Blocked(Blocked::Inconsistent);
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
            None => {
                self.count_explicit();
                model::check(g, locs, self.cfg.sem, Phase::Complete)
            }
        };
        if v.violation.is_some() {
            return End::Blocked(Blocked::Inconsistent);
        }
        drop(shared);
        if !self.speculation_counts() {
            return End::Blocked(Blocked::Elsewhere);
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

    /// The failure of the current execution: its trace, replay string and
    /// (when asked for) picture, with `marked` as the accesses it is about
    /// (their replay backtraces too). The one place a report is built:
    /// only when an execution fails.
    pub(super) fn failure(&self, kind: FailureKind, message: String, marked: &[EventId]) -> Failure {
        let shared = self.checker.s.borrow();
        let locs = &shared.locs;
        let g = &self.frames.last().expect("frame").graph;
        Failure {
            message,
            accesses: marked.iter().map(|&e| report::access_info(g, locs, e)).collect(),
            reason: None,
            panic_site: None,
            trace: report::trace(g, locs, marked, self.cfg.full_trace),
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

    pub(super) fn simple_failure(&self, kind: FailureKind, message: String, site: Option<&'static Location<'static>>) -> End {
        End::Failed(vec![Failure { panic_site: site.map(Into::into), ..self.failure(kind, message, &[]) }])
    }

    fn panic_failure(&mut self, u: UnitId, msg: String) -> End {
        // clmm's own usage errors start with "clmm: " so that a native run
        // says whose panic it is; in a report, whose first line already
        // starts with "clmm: panic: ", the prefix would read twice.
        let msg = match msg.strip_prefix("clmm: ") {
            Some(rest) => rest.to_string(),
            None => msg,
        };
        let site = runtime::take_panic_location();
        let bt = runtime::take_panic_backtrace();
        if !self.promises.is_empty() {
            // A speculation whose write never came: not a real execution.
            return End::Blocked(Blocked::Unkept);
        }
        let (v, who) = {
            let shared = self.checker.s.borrow();
            let g = &self.frames.last().expect("frame").graph;
            // A panic in an execution that cannot be completed consistently
            // is not a real one; a race in its prefix is the root cause.
            self.count_explicit();
            (model::check(g, &shared.locs, self.cfg.sem, Phase::Complete), report::unit_name(g, u))
        };
        if v.violation.is_some() {
            return End::Blocked(Blocked::Inconsistent);
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
}

/// A unit that did something else when rerun with the values it read
/// before: the closure is not deterministic (DESIGN.md §5, "Stateless").
/// `what` says how its event `at` differs; the trace is the execution
/// recorded before the rerun, up to where the runs part.
pub(super) fn non_determinism(g: &Graph, locs: &[crate::graph::LocInfo], at: EventId, what: &str) -> End {
    let mut f = Failure::new(
        FailureKind::NonDeterminism,
        format!(
            "{} did something else when rerun with the same values: its event {}.{} {what}; the closure must be deterministic given the values its reads return (no randomness, time, or thread-local state). The execution below is the one recorded before the rerun",
            report::unit_name(g, at.unit),
            at.unit.0,
            at.index
        ),
    );
    f.trace = report::trace(g, locs, &[], false);
    End::Failed(vec![f])
}

/// How a rerun's operation differs from the one recorded, for
/// [`non_determinism`]: `was `{was}` at {site}, and is now ...`.
pub(super) fn was_and_now(was: &str, was_at: &'static Location<'static>, now: &str, now_at: &'static Location<'static>) -> String {
    format!("was `{was}` at {}, and is now `{now}` at {}", report::SourceLoc::from(was_at), report::SourceLoc::from(now_at))
}

pub(super) fn replay_mismatch(detail: String) -> String {
    format!("{detail}: the string comes from another test, or the test changed since")
}

/// The write a read of unit `u` that reads `w` observes in a spin loop:
/// through `u`'s own silent RMWs ([`silent_rmw`]), what the first of them
/// read. ([`Engine::end_spin_iteration`].)
fn spin_source(g: &crate::graph::Graph, u: usize, mut w: EventId) -> EventId {
    while !w.is_init() && w.unit.index() == u && w.index > 0 && g.contains(w) && g.ev(w).kind == Kind::RmwWrite {
        let r = EventId { unit: w.unit, index: w.index - 1 };
        match g.ev(r).rf {
            Some(src) if silent_rmw(g, r) && (src.is_init() || g.contains(src)) => w = src,
            _ => break,
        }
    }
    w
}

/// Whether RMW read part `r` has a write part that wrote back the value `r`
/// read (a failed test-and-set, for example).
fn silent_rmw(g: &crate::graph::Graph, r: EventId) -> bool {
    let w = EventId { unit: r.unit, index: r.index + 1 };
    g.contains(w) && g.ev(w).kind == Kind::RmwWrite && g.ev(w).value == g.ev(r).value
}

/// [`Engine::pick`]'s choice: a unit's next step, or a unit to start first.
#[derive(Debug)]
enum Pick {
    Step(usize, Request),
    Start(usize),
}

/// Resume the coroutine `co` of unit `running.unit` with `r`, in the user's
/// code: as the checker's current unit, for the stall watchdog and the
/// stack-overflow message, with its panics kept quiet. ([`Engine::resume`]
/// and the unwinding of [`Engine::abandon_all`]; fields, not the engine,
/// so that `co` may stay borrowed from it.)
fn resume_in_user_code(shared: &RefCell<Shared>, watch: Option<&watchdog::Watcher>, running: runtime::Running, co: &mut runtime::UnitCo, r: Resp, site: Option<&'static Location<'static>>) -> Option<Exit> {
    let u = running.unit as usize;
    shared.borrow_mut().current = u;
    watchdog::in_user_code(watch.map(watchdog::Watcher::watch), u, site, || runtime::running(running, || runtime::quietly(|| runtime::resume(co, r))))
}
