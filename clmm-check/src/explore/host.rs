//! The runtime of the host side (a submodule of `explore`): host threads,
//! command queues, commands and events as units and events of the graph.
//!
//! * `spawn` adds a [`Kind::Spawn`] event and a host unit created by it;
//! * an enqueue adds a [`Kind::Enqueue`] event and a command unit created
//!   by it, whose body (from `clmm_atomic::host`) starts with
//!   `CommandStart` ([`Kind::CmdStart`]) and, for a kernel, launches it;
//! * waits (`Event::wait`, `finish`, `join`, the end of a scope) are
//!   [`Kind::Wait`] events, enabled once what they wait for is complete;
//! * `UserEvent::set_complete` is a [`Kind::SetStatus`] event;
//! * an event callback is a spawn whose host unit begins with
//!   `CallbackStart`, a [`Kind::Wait`] for its event (rule 11);
//! * an enqueue carries the position its thread read from the queue's
//!   counter, and what a command waits for is resolved from those
//!   positions when it tries to start (another thread may not have
//!   enqueued an earlier position yet);
//! * `CurrentUnit` answers at once (no event): which unit calls, and
//!   whether it is a work-item (host memory and mapping checks).
//!
//! What a command waits for comes from [`crate::model::host`]; the events a
//! start or a wait synchronises with are recorded in [`crate::graph::Event::waits`], from
//! which the model draws the ghb edges. Queue and user-event handles are
//! keyed by the creating unit and a per-unit counter, so a rerun gives them
//! the same names whatever the schedule.

use super::{End, Engine, Status};
use crate::graph::{Kind, Unit, UnitKind};
use crate::ids::{EventId, UnitId};
use crate::model::host::{command_waits, finish_waits, ClEvent, QueueState};
use crate::report::{self, FailureKind};
use crate::runtime::Request;
use clmm_atomic::backend::{Command, EnqueueFlags, HostOp, Op, Reply, USER_EVENT, WORK_ITEM};
use std::collections::HashMap;
use std::panic::Location;

/// A host operation a unit is suspended in (lifetimes erased: the scope
/// that created the bodies waits for them, and units are unwound children
/// first).
pub(super) enum PendingHost {
    Spawn { scope: u64, callback: Option<u64>, body: Option<Box<dyn FnOnce() + 'static>> },
    CallbackStart,
    Join(u64),
    Enqueue { queue: u64, index: u32, command: Command, wait: Vec<u64>, body: Option<Box<dyn FnOnce() + 'static>> },
    DeviceEnqueue { queue: u64, flags: EnqueueFlags, command: Command, wait: Vec<u64>, body: Option<Box<dyn FnOnce() + 'static>> },
    CommandStart,
    SetComplete(u64),
    Wait(Vec<u64>),
    Finish { queue: u64, upto: u32 },
    ScopeEnd(u64),
}

struct QueueRt {
    device: u32,
    state: QueueState,
}

/// What a command waits for, resolved when it tries to start (the
/// commands enqueued before it may not all be in the graph yet when it is
/// enqueued: see [`QueueState`]).
struct CmdInfo {
    /// The host queue and position, `None` for a device-side command
    /// (out-of-order: it waits for `wait` only).
    queue: Option<(u64, u32)>,
    command: Command,
    /// Its wait list (and, device-side, the end its flags wait for).
    wait: Vec<ClEvent>,
}

#[derive(Default)]
struct ScopeRt {
    threads: Vec<usize>,
    queues: Vec<u64>,
}

/// The host side's state in one execution (rebuilt by each rerun).
#[derive(Default)]
pub(super) struct HostShared {
    /// Per unit: queues and user events created so far.
    counters: Vec<(u32, u32)>,
    /// Per unit: the pending host operation.
    pub(super) ops: Vec<Option<PendingHost>>,
    /// Per unit: a usage error to report to the caller.
    errors: Vec<Option<String>>,
    queues: HashMap<u64, QueueRt>,
    /// Device-side queues: their devices.
    device_queues: HashMap<u64, u32>,
    /// Per launching unit: the commands the work-items of its current
    /// launch enqueued on device-side queues (waited for after the join).
    children: HashMap<usize, Vec<u64>>,
    /// User events: the event that set each, once set.
    user_events: HashMap<u64, Option<EventId>>,
    /// What each command unit waits for before it starts.
    cmd_waits: HashMap<usize, CmdInfo>,
    scopes: HashMap<u64, ScopeRt>,
    /// Per unit: whether it is a host thread or a command (created here;
    /// unit 0, the model closure, is a host thread; work-items are created
    /// by launches).
    host_units: Vec<bool>,
    /// Event callbacks: the unit of each, and the event it waits for.
    callbacks: HashMap<usize, ClEvent>,
}

impl HostShared {
    /// Empty, keeping the buffers (the next execution's).
    pub(super) fn clear(&mut self) {
        let HostShared { counters, ops, errors, queues, device_queues, children, user_events, cmd_waits, scopes, host_units, callbacks } = self;
        counters.clear();
        ops.clear();
        errors.clear();
        queues.clear();
        device_queues.clear();
        children.clear();
        user_events.clear();
        cmd_waits.clear();
        scopes.clear();
        host_units.clear();
        callbacks.clear();
    }
}

fn grow<T: Default>(v: &mut Vec<T>, u: usize) {
    if v.len() <= u {
        v.resize_with(u + 1, T::default);
    }
}

/// `Backend::host` of the checker: handles and suspensions.
pub(super) fn host_op(checker: &super::Checker, op: HostOp<'_>, site: &'static Location<'static>) -> Result<u64, String> {
    let pending = {
        let mut s = checker.s.borrow_mut();
        let cur = s.current;
        let h = &mut s.host;
        grow(&mut h.counters, cur);
        grow(&mut h.ops, cur);
        grow(&mut h.errors, cur);
        // SAFETY (both transmutes): the bodies borrow from a host scope that
        // waits for every thread and command created in it before it ends;
        // an abandoned execution unwinds units in reverse creation order
        // (children first).
        let erase = |b: Box<dyn FnOnce() + '_>| -> Box<dyn FnOnce() + 'static> { unsafe { std::mem::transmute(b) } };
        match op {
            HostOp::NewQueue { scope, device, in_order } => {
                let n = h.counters[cur].0;
                h.counters[cur].0 += 1;
                let key = ((cur as u64) << 32) | u64::from(n);
                h.queues.insert(key, QueueRt { device, state: QueueState { key, in_order, ..QueueState::default() } });
                h.scopes.entry(scope).or_default().queues.push(key);
                return Ok(key);
            }
            HostOp::NewDeviceQueue { device } => {
                let n = h.counters[cur].0;
                h.counters[cur].0 += 1;
                let key = ((cur as u64) << 32) | u64::from(n);
                h.device_queues.insert(key, device);
                return Ok(key);
            }
            HostOp::CurrentUnit => {
                let host = cur == 0 || h.host_units.get(cur).copied().unwrap_or(false);
                return Ok(cur as u64 | if host { 0 } else { WORK_ITEM });
            }
            HostOp::NewUserEvent => {
                let n = h.counters[cur].1;
                h.counters[cur].1 += 1;
                let key = USER_EVENT | ((cur as u64) << 32) | u64::from(n);
                h.user_events.insert(key, None);
                return Ok(key);
            }
            HostOp::Spawn { scope, callback, body } => PendingHost::Spawn { scope, callback, body: Some(erase(body)) },
            HostOp::CallbackStart => PendingHost::CallbackStart,
            HostOp::Join(t) => PendingHost::Join(t),
            HostOp::Enqueue { queue, index, command, wait, body } => {
                PendingHost::Enqueue { queue, index: index as u32, command, wait: wait.to_vec(), body: Some(erase(body)) }
            }
            HostOp::DeviceEnqueue { queue, flags, command, wait, body } => {
                PendingHost::DeviceEnqueue { queue, flags, command, wait: wait.to_vec(), body: Some(erase(body)) }
            }
            HostOp::CommandStart => PendingHost::CommandStart,
            HostOp::SetComplete(e) => PendingHost::SetComplete(e),
            HostOp::Wait(es) => PendingHost::Wait(es.to_vec()),
            HostOp::Finish { queue, upto } => PendingHost::Finish { queue, upto: upto as u32 },
            HostOp::ScopeEnd(k) => PendingHost::ScopeEnd(k),
        }
    };
    let cur = {
        let mut s = checker.s.borrow_mut();
        let cur = s.current;
        s.host.ops[cur] = Some(pending);
        cur
    };
    let r = checker.suspend(Request::Host(site));
    let mut s = checker.s.borrow_mut();
    if let Some(o) = s.host.ops.get_mut(cur) {
        *o = None;
    }
    match s.host.errors.get_mut(cur).and_then(Option::take) {
        Some(e) => Err(e),
        None => Ok(r.value),
    }
}

/// After the join of a launch by the current unit: the commands its
/// work-items enqueued on device-side queues, which the kernel's
/// completion waits for (empty for a kernel without children).
pub(super) fn take_children(checker: &super::Checker) -> Vec<u64> {
    let mut s = checker.s.borrow_mut();
    let cur = s.current;
    s.host.children.remove(&cur).unwrap_or_default()
}

impl Engine<'_, '_> {
    fn cl_event(&self, h: u64) -> Result<ClEvent, String> {
        let s = self.checker.s.borrow();
        if h & USER_EVENT != 0 {
            return if s.host.user_events.contains_key(&h) { Ok(ClEvent::User(h)) } else { Err(format!("unknown user event {h:#x}")) };
        }
        let g = &self.frames.last().expect("frame").graph;
        match g.units.get(h as usize).map(|x| &x.kind) {
            Some(UnitKind::Command { .. }) => Ok(ClEvent::Command(UnitId(h as u32))),
            _ => Err(format!("unknown event {h:#x}")),
        }
    }

    fn unit_done(&self, u: usize) -> bool {
        self.rt.get(u).is_some_and(|r| r.status == Status::Done)
    }

    fn cl_complete(&self, e: ClEvent) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        match e {
            ClEvent::Command(u) => self.unit_done(u.index()),
            ClEvent::User(k) => self.checker.s.borrow().host.user_events.get(&k).is_some_and(Option::is_some),
            ClEvent::Queued { .. } => false,
            ClEvent::KernelEnd(launch) => crate::model::hb::join_of_launch(g, launch).is_some(),
            ClEvent::GroupEnd(gr) => g.groups[gr.0 as usize].units.iter().all(|v| self.unit_done(v.index())),
        }
    }

    /// The completion events of a complete event: the last event of the
    /// command's (or thread's) unit, the set event of a user event, the
    /// join of a kernel, or the last events of a work-group's work-items.
    fn completions(&self, e: ClEvent) -> Vec<EventId> {
        let g = &self.frames.last().expect("frame").graph;
        match e {
            ClEvent::Command(u) => self.last_event(u.index()).into_iter().collect(),
            ClEvent::User(k) => self.checker.s.borrow().host.user_events.get(&k).copied().flatten().into_iter().collect(),
            ClEvent::Queued { .. } => Vec::new(),
            ClEvent::KernelEnd(launch) => crate::model::hb::join_of_launch(g, launch).into_iter().collect(),
            ClEvent::GroupEnd(gr) => g.groups[gr.0 as usize].units.iter().filter_map(|v| self.last_event(v.index())).collect(),
        }
    }

    fn last_event(&self, u: usize) -> Option<EventId> {
        let g = &self.frames.last().expect("frame").graph;
        let n = g.units.get(u)?.events.len();
        (n > 0).then(|| EventId { unit: UnitId(u as u32), index: n as u32 - 1 })
    }

    /// Whether unit `v`'s pending host operation waits for the end of unit
    /// `u` (a host thread or command, or a work-item of the kernel command,
    /// kernel or work-group it waits for: their completions come after the
    /// work-item's last event) or for a unit blocked in a spin loop, which
    /// never ends (`Engine::waits_for`).
    pub(super) fn host_waits_for(&self, v: usize, u: UnitId) -> bool {
        let Ok((evs, threads)) = self.wait_targets(v) else { return false };
        let g = &self.frames.last().expect("frame").graph;
        let parent = g.units[u.index()].parent;
        threads.iter().any(|&t| t == u.index() || self.spin_blocked(t))
            || evs.iter().any(|&e| match e {
                // A kernel command ends after the work-items it launched.
                ClEvent::Command(c) => c == u || self.spin_blocked(c.index()) || self.created_gates(c, u, None),
                ClEvent::KernelEnd(launch) => parent == Some(launch),
                ClEvent::GroupEnd(gr) => g.groups[gr.0 as usize].units.contains(&u),
                ClEvent::User(_) | ClEvent::Queued { .. } => false,
            })
    }

    /// What a pending wait waits for: events, and host threads (by unit).
    fn wait_targets(&self, u: usize) -> Result<(Vec<ClEvent>, Vec<usize>), String> {
        let s = self.checker.s.borrow();
        match s.host.ops.get(u).and_then(Option::as_ref) {
            Some(op) => self.targets_of(u, op),
            None => Ok((Vec::new(), Vec::new())),
        }
    }

    /// What operation `op` of unit `u` waits for: events, and host threads
    /// (by unit).
    fn targets_of(&self, u: usize, op: &PendingHost) -> Result<(Vec<ClEvent>, Vec<usize>), String> {
        let s = self.checker.s.borrow();
        let thread = |t: u64| -> Result<usize, String> {
            let g = &self.frames.last().expect("frame").graph;
            match g.units.get(t as usize) {
                Some(x) if x.is_host() && t > 0 => Ok(t as usize),
                _ => Err(format!("unknown host thread {t}")),
            }
        };
        let queue = |q: u64| -> Result<&QueueRt, String> { s.host.queues.get(&q).ok_or_else(|| format!("unknown command queue {q:#x}")) };
        match op {
            PendingHost::Join(t) => Ok((Vec::new(), vec![thread(*t)?])),
            PendingHost::Wait(es) => Ok((es.iter().map(|&h| self.cl_event(h)).collect::<Result<_, _>>()?, Vec::new())),
            PendingHost::Finish { queue: q, upto } => Ok((finish_waits(&queue(*q)?.state, *upto), Vec::new())),
            PendingHost::ScopeEnd(k) => {
                let Some(sc) = s.host.scopes.get(k) else { return Ok((Vec::new(), Vec::new())) };
                let mut evs = Vec::new();
                for q in &sc.queues {
                    if let Some(qr) = s.host.queues.get(q) {
                        evs.extend(finish_waits(&qr.state, qr.state.commands.len() as u32));
                    }
                }
                Ok((evs, sc.threads.clone()))
            }
            PendingHost::CallbackStart => Ok((s.host.callbacks.get(&u).copied().into_iter().collect(), Vec::new())),
            PendingHost::CommandStart => {
                let Some(c) = s.host.cmd_waits.get(&u) else { return Ok((Vec::new(), Vec::new())) };
                match c.queue {
                    Some((q, index)) => Ok((command_waits(&queue(q)?.state, index, c.command, &c.wait), Vec::new())),
                    None => Ok((c.wait.clone(), Vec::new())),
                }
            }
            _ => Ok((Vec::new(), Vec::new())),
        }
    }

    /// Whether unit `u`'s pending host operation can be added (a wait only
    /// once what it waits for is complete; a usage error is reported at
    /// once).
    pub(super) fn host_enabled(&self, u: usize) -> bool {
        match self.wait_targets(u) {
            Ok((evs, threads)) => evs.iter().all(|&e| self.cl_complete(e)) && threads.iter().all(|&t| self.unit_done(t)),
            Err(_) => true,
        }
    }

    /// What a stuck unit waits for, in words (deadlock reports).
    pub(super) fn host_wait_text(&self, u: usize) -> Option<String> {
        let g = &self.frames.last().expect("frame").graph;
        let pending = matches!(self.checker.s.borrow().pending.get(u), Some(Some(Request::Host(_))));
        if !pending {
            return None;
        }
        let (evs, threads) = self.wait_targets(u).ok()?;
        let mut what: Vec<String> = Vec::new();
        for e in evs.into_iter().filter(|&e| !self.cl_complete(e)) {
            what.push(match e {
                ClEvent::Command(c) => report::unit_name(g, c),
                ClEvent::User(k) => {
                    let creator = ((k & !USER_EVENT) >> 32) as u32;
                    format!("a user event created by {} that is never set complete", report::unit_name(g, UnitId(creator)))
                }
                ClEvent::Queued { index, .. } => format!("the command at position {index} of its queue, not enqueued yet"),
                ClEvent::KernelEnd(launch) => format!("the end of the kernel launched by {} (CLK_ENQUEUE_FLAGS_WAIT_KERNEL)", report::unit_name(g, launch.unit)),
                ClEvent::GroupEnd(gr) => format!("the end of work-group {} (CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP)", gr.0),
            });
        }
        for t in threads.into_iter().filter(|&t| !self.unit_done(t)) {
            what.push(report::unit_name(g, UnitId(t as u32)));
        }
        let verb = if matches!(g.units[u].kind, UnitKind::Command { .. }) { "cannot start: it waits for" } else { "waits for" };
        Some(format!("{} {verb} {}", report::unit_name(g, UnitId(u as u32)), what.join(", ")))
    }

    /// Create (or, replaying, find) the unit created by event `parent`, and
    /// its coroutine.
    fn host_unit(&mut self, parent: EventId, kind: UnitKind, body: Box<dyn FnOnce() + 'static>) -> usize {
        let g = self.graph();
        let id = match g.units.iter().position(|x| x.parent == Some(parent)) {
            Some(i) => i,
            None => {
                g.units.push(Unit { kind, parent: Some(parent), events: Vec::new() });
                g.units.len() - 1
            }
        };
        self.spawn_unit_at(id, super::Body::Boxed(body));
        let mut s = self.checker.s.borrow_mut();
        grow(&mut s.host.host_units, id);
        s.host.host_units[id] = true;
        id
    }

    fn host_error(&mut self, u: usize, e: String) -> Result<Option<Reply>, End> {
        let mut s = self.checker.s.borrow_mut();
        grow(&mut s.host.errors, u);
        s.host.errors[u] = Some(e);
        Ok(Some(Reply { value: 0, ok: false }))
    }

    /// Add (`replay` false) or replay (true) unit `u`'s pending host
    /// operation.
    pub(super) fn host_step(&mut self, u: usize, site: &'static Location<'static>, replay: bool) -> Result<Option<Reply>, End> {
        let Some(mut op) = self.checker.s.borrow_mut().host.ops.get_mut(u).and_then(Option::take) else {
            return Err(self.simple_failure(FailureKind::NonDeterminism, "a host operation without its details".into(), Some(site)));
        };
        let kind = match op {
            PendingHost::Spawn { .. } => Kind::Spawn,
            PendingHost::Enqueue { .. } | PendingHost::DeviceEnqueue { .. } => Kind::Enqueue,
            PendingHost::CommandStart => Kind::CmdStart,
            PendingHost::SetComplete(_) => Kind::SetStatus,
            _ => Kind::Wait,
        };
        // Who may do what: host threads everything but device-side
        // enqueues, work-items only those, commands their start and (a
        // kernel command) the wait for its children.
        let unit = &self.frames.last().expect("frame").graph.units[u];
        let allowed = match (&op, &unit.kind) {
            (PendingHost::DeviceEnqueue { .. }, k) => matches!(k, UnitKind::WorkItem { .. }),
            (_, UnitKind::Host) => true,
            (PendingHost::CommandStart, _) => true,
            (PendingHost::Wait(_), UnitKind::Command { .. }) => true,
            _ => false,
        };
        if !allowed {
            let who = report::unit_name(self.graph(), UnitId(u as u32));
            let what = if matches!(op, PendingHost::DeviceEnqueue { .. }) {
                format!("a device-side enqueue called by {who}: only work-items enqueue on a device-side queue")
            } else {
                format!("a host operation ({kind:?}) called by {who}: only host threads spawn threads, enqueue commands on host queues, wait for events or set them")
            };
            return self.host_error(u, what);
        }
        // Usage errors first (no event is added).
        if matches!(op, PendingHost::Wait(_) | PendingHost::Finish { .. }) && self.checker.s.borrow().host.callbacks.contains_key(&u) {
            let what = if matches!(op, PendingHost::Finish { .. }) { "clFinish" } else { "a wait for events (Event::wait, wait_for_events, or a blocking read, write or map)" };
            return self.host_error(u, format!("{what} in an event callback: blocking OpenCL calls in a callback are undefined behaviour (clSetEventCallback)"));
        }
        let targets = match self.wait_targets_of(u, &op) {
            Ok(t) => t,
            Err(e) => return self.host_error(u, e),
        };
        if let PendingHost::SetComplete(k) = op {
            let state = self.checker.s.borrow().host.user_events.get(&k).copied();
            match state {
                None => return self.host_error(u, format!("set_complete on an unknown user event {k:#x}")),
                Some(Some(_)) if !replay => return self.host_error(u, "user event set complete twice (CL_INVALID_OPERATION)".into()),
                _ => {}
            }
        }
        let e = if replay {
            let pos = self.rt[u].pos as usize;
            let g = &self.frames.last().expect("frame").graph;
            let ev = &g.units[u].events[pos];
            if ev.kind != kind {
                let what = super::execution::was_and_now(crate::report::kind_text(ev.kind), ev.site, crate::report::kind_text(kind), site);
                let at = EventId { unit: UnitId(u as u32), index: pos as u32 };
                return Err(super::execution::non_determinism(g, &self.locs(), at, &what));
            }
            self.rt[u].pos += 1;
            EventId { unit: UnitId(u as u32), index: pos as u32 }
        } else {
            let e = self.new_event(u, kind, Op::SpinLoop, site);
            if matches!(kind, Kind::CmdStart | Kind::Wait) {
                let waits: Vec<EventId> = targets.iter().flat_map(|&t| self.completions(t)).collect();
                self.graph().set_waits(e, waits);
            }
            e
        };
        let value = match &mut op {
            PendingHost::Spawn { scope, callback, body } => {
                let id = self.host_unit(e, UnitKind::Host, body.take().expect("a spawn body"));
                let mut s = self.checker.s.borrow_mut();
                s.host.scopes.entry(*scope).or_default().threads.push(id);
                if let Some(&ev) = targets.first().filter(|_| callback.is_some()) {
                    s.host.callbacks.insert(id, ev);
                }
                id as u64
            }
            PendingHost::Enqueue { queue, index, command, body, .. } => {
                let device = self.checker.s.borrow().host.queues[queue].device;
                let id = self.host_unit(e, UnitKind::Command { command: *command, device }, body.take().expect("a command body"));
                let mut s = self.checker.s.borrow_mut();
                s.host.queues.get_mut(queue).expect("queue").state.push(*index, UnitId(id as u32), *command);
                s.host.cmd_waits.insert(id, CmdInfo { queue: Some((*queue, *index)), command: *command, wait: targets.clone() });
                id as u64
            }
            PendingHost::DeviceEnqueue { queue, flags, command, body, .. } => {
                let device = self.checker.s.borrow().host.device_queues[queue];
                let g = &self.frames.last().expect("frame").graph;
                let launch = g.units[u].parent.expect("a work-item has a launch");
                let mut wait = targets.clone();
                match flags {
                    EnqueueFlags::NoWait => {}
                    EnqueueFlags::WaitKernel => wait.push(ClEvent::KernelEnd(launch)),
                    EnqueueFlags::WaitWorkGroup => wait.push(ClEvent::GroupEnd(g.units[u].group().expect("a work-item has a group"))),
                }
                let id = self.host_unit(e, UnitKind::Command { command: *command, device }, body.take().expect("a command body"));
                let mut s = self.checker.s.borrow_mut();
                s.host.cmd_waits.insert(id, CmdInfo { queue: None, command: *command, wait });
                s.host.children.entry(launch.unit.index()).or_default().push(id as u64);
                id as u64
            }
            PendingHost::SetComplete(k) => {
                self.checker.s.borrow_mut().host.user_events.insert(*k, Some(e));
                0
            }
            _ => 0,
        };
        Ok(Some(Reply { value, ok: true }))
    }

    /// The events an operation waits for (as completions: threads become
    /// their units), and for an enqueue its wait list; usage errors.
    fn wait_targets_of(&self, u: usize, op: &PendingHost) -> Result<Vec<ClEvent>, String> {
        match op {
            PendingHost::Enqueue { queue, wait, .. } => {
                if !self.checker.s.borrow().host.queues.contains_key(queue) {
                    return Err(format!("unknown command queue {queue:#x}"));
                }
                wait.iter().map(|&h| self.cl_event(h)).collect()
            }
            PendingHost::DeviceEnqueue { queue, wait, .. } => {
                let g = &self.frames.last().expect("frame").graph;
                let Some(&device) = self.checker.s.borrow().host.device_queues.get(queue) else {
                    return Err(format!("unknown device-side queue {queue:#x}"));
                };
                if g.units[u].device() != Some(device) {
                    return Err(format!("a work-item of device {:?} enqueues on a device-side queue of device {device}", g.units[u].device()));
                }
                wait.iter()
                    .map(|&h| match self.cl_event(h)? {
                        ClEvent::Command(c) if g.device_enqueued(c) => Ok(ClEvent::Command(c)),
                        _ => Err(format!("event {h:#x} in the wait list of a device-side enqueue is not a device-side event (CLK_INVALID_EVENT_WAIT_LIST)")),
                    })
                    .collect()
            }
            PendingHost::Spawn { callback, .. } => callback.iter().map(|&h| self.cl_event(h)).collect(),
            PendingHost::SetComplete(_) => Ok(Vec::new()),
            _ => {
                let (evs, threads) = self.targets_of(u, op)?;
                Ok(evs.into_iter().chain(threads.into_iter().map(|t| ClEvent::Command(UnitId(t as u32)))).collect())
            }
        }
    }
}
