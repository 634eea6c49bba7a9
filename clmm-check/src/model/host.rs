//! Host-side and device-side commands: the ordering rules of command
//! queues, events and host threads (spec excerpt
//! `004_8d269728d13116e5.txt`, §3.3 "memory ordering rules: host-side and
//! device-side commands", and the synchronisation points of §3.2.4). The
//! `.cat` model has no host; these are clmm's ghb edges for it
//! (Deviations, 5).
//!
//! Every command enqueued on a queue is a unit of execution whose first
//! event is its start ([`Kind::CmdStart`]) and whose last event is its
//! completion (for a kernel, the join of its work-items); the host thread
//! that enqueued it is its creator. The spec's rules then become these
//! global-synchronises-with edges (numbered as in the spec's list):
//!
//! 1. "If an API function call X enqueues a command C, then X
//!    global-synchronizes-with C": the enqueue event is ghb-before every
//!    global event of the command's unit (the creator edge of
//!    [`super::hb`]).
//! 2. "If E is an event upon which a command C waits, then E
//!    global-synchronizes-with C": the completion of every command (or the
//!    [`Kind::SetStatus`] of every user event) in C's wait set is
//!    ghb-before C's start ([`wait_edges`]; the wait set is
//!    [`command_waits`]).
//! 3. "If C has an event E that signals its completion, then C
//!    global-synchronizes-with E": E *is* C's last event.
//! 4. "E global-synchronizes-with the API call X that waits on E": a host
//!    [`Kind::Wait`] waits for those completion events ([`wait_edges`]).
//! 5. In-order queues: the completion of C is in the wait set of the next
//!    command C1 ([`command_waits`]). "Enqueued in that order" is the
//!    queue's enqueue order, which several host threads sharing a queue
//!    decide by an atomic increment of the queue's counter
//!    ([`QueueState`]); the explorer enumerates its orders.
//! 6. A marker with an empty wait list waits for every command enqueued
//!    before it ([`command_waits`]).
//! 7. A barrier likewise, and every command enqueued after it waits for it
//!    ([`command_waits`]).
//! 8. `clFinish` X: the events of every command enqueued before X on the
//!    queue global-synchronize-with X ([`finish_waits`]; X reads the
//!    queue's counter, so a command another thread enqueues concurrently
//!    is before X in some executions and after it in others).
//! 9. "The start of a kernel-instance K global-synchronizes-with all
//!    operations of the work items of K": the command's launch event is the
//!    creator of the work-items.
//! 10. "All operations of all work items of a kernel-instance K
//!     global-synchronizes-with the event signaling the completion of K":
//!     the work-items' global events are ghb-before the command's join, its
//!     last event.
//! 12. "If C is a command that waits for an event E's completion, and API
//!     function call X sets the status of a user event E's status to
//!     CL_COMPLETE, then X global-synchronizes-with C" (rule 2 with the
//!     set event as E's completion).
//!
//! 11. "If a callback procedure P is registered on an event E, then E
//!     global-synchronizes-with all operations of P": a callback
//!     (`Scope::set_event_callback`) is a host thread whose first event is
//!     a [`Kind::Wait`] for E ([`wait_edges`]). Like a spawn, its
//!     registration is also ghb-before it (the spec's list does not say
//!     so; an implementation can only call P after it was registered).
//!
//! Device-side enqueue (`DeviceQueue::enqueue_kernel` and
//! `enqueue_marker`, by a work-item): the command's unit is created by the
//! work-item's [`Kind::Enqueue`] event, and
//!
//! 1. (device-side form) "for device-side queues, global memory updates
//!    sequenced-before X happen-before C reads or writes to those memory
//!    locations only in the case of fine-grained SVM": the creator edge of
//!    such a command is only in the `ghb` of fine-grained SVM locations
//!    ([`super::hb::Relations::ghb_at`]);
//! 2. its wait list holds device-side events (completions of earlier
//!    device-side commands), as above;
//! 13. "If a device enqueues a command C with the
//!     CLK_ENQUEUE_FLAGS_WAIT_KERNEL flag, then the end state of the parent
//!     kernel instance global-synchronizes with C": the join of the
//!     parent's launch (its end: every work-item finished) is in C's wait
//!     set ([`ClEvent::KernelEnd`]);
//! 14. "If a work-group enqueues a command C with the
//!     CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP flag, then the end state of the
//!     work-group global-synchronizes with C": the last events of the
//!     work-group's work-items are ([`ClEvent::GroupEnd`]);
//!
//! and a kernel completes only after its children (§3.2.3: the parent does
//! not signal completion "until all of the child kernels have ended
//! execution and have signaled completion"): after the join of a launch
//! whose work-items enqueued commands, the launching unit waits for them
//! ([`Kind::Wait`]), so that a kernel's completion (rules 3, 4, 8) comes
//! after its children's. Rule 4 (waiting on an event) exists for host-side
//! queues only, as the spec says: a kernel cannot wait for an event.
//! Host threads (not in the spec's list, which assumes them) synchronise
//! like `std::thread`: a spawn is ghb-before the new thread's events, and
//! a thread's events are ghb-before its join.
//!
//! Buffer commands (`clEnqueueReadBuffer`, `clEnqueueWriteBuffer`,
//! `clEnqueueMapBuffer`, `clEnqueueUnmapMemObject` and their SVM forms)
//! are commands like kernels, with no work-items: their unit performs the
//! copy itself, as non-atomic reads and writes of the buffer and of host
//! memory between its start and its completion, so the rules above order
//! them (a blocking call is the enqueue followed by a wait, rule 4). A map
//! of a `cl_mem` or coarse-grained SVM buffer reads the region and writes
//! a host copy; the unmap of a writable mapping writes the copy back
//! ("visibility on these allocations is not guaranteed except at map and
//! unmap operations"; a map "may overwrite the entire target region").
//!
//! Commands that no rule orders are concurrent: their units run
//! interleaved with each other and with the host threads, and the
//! explorer enumerates every execution of them.

use super::Ctx;
use crate::graph::Kind;
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::Command;

/// An OpenCL event, as the runtime tracks it: a command's (complete with
/// its unit's last event) or a user event's (complete with its set event).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClEvent {
    /// The completion of the command whose unit this is.
    Command(UnitId),
    /// A user event, by its key.
    User(u64),
    /// The end of the kernel instance launched by this launch event: the
    /// join of its work-items (`CLK_ENQUEUE_FLAGS_WAIT_KERNEL`, rule 13).
    KernelEnd(EventId),
    /// The end of this work-group: every work-item of it has finished
    /// (`CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP`, rule 14).
    GroupEnd(crate::ids::GroupId),
    /// The command with this enqueue index on the queue with this key,
    /// whose enqueue is not in the graph yet (another host thread took the
    /// index and has not enqueued it yet): never complete.
    Queued {
        /// The queue's key.
        queue: u64,
        /// The command's position in the queue's enqueue order.
        index: u32,
    },
}

/// The commands of one queue so far, by enqueue index.
///
/// Several host threads may enqueue on one queue: each enqueue first takes
/// the next index of the queue with an atomic read-modify-write on a
/// location of the queue's own (relaxed, so it orders nothing by itself),
/// and the explorer enumerates the orders of those read-modify-writes like
/// any other. "Enqueued before" in rules 5 to 8 is that order, not the
/// order in which this execution's events happened to be added.
#[derive(Clone, Debug, Default)]
pub struct QueueState {
    /// The queue's key (for [`ClEvent::Queued`]).
    pub key: u64,
    /// In-order execution.
    pub in_order: bool,
    /// By enqueue index: the command's unit and kind, once enqueued.
    pub commands: Vec<Option<(UnitId, Command)>>,
}

impl QueueState {
    /// Record command `unit` enqueued at `index`.
    pub fn push(&mut self, index: u32, unit: UnitId, command: Command) {
        let i = index as usize;
        if self.commands.len() <= i {
            self.commands.resize(i + 1, None);
        }
        self.commands[i] = Some((unit, command));
    }

    /// The command at `index` as an event ([`ClEvent::Queued`] while its
    /// enqueue is not in the graph).
    fn at(&self, index: usize) -> ClEvent {
        match self.commands.get(index).copied().flatten() {
            Some((u, _)) => ClEvent::Command(u),
            None => ClEvent::Queued { queue: self.key, index: index as u32 },
        }
    }
}

/// Whether a command kind is a marker or barrier: with an empty wait list
/// it waits for every command enqueued before it (rules 6 and 7).
fn waits_for_all_before(command: Command) -> bool {
    matches!(command, Command::Marker | Command::Barrier)
}

/// What the command `command` enqueued at `index` on `queue` with wait
/// list `wait` waits for before it starts: its wait list (rule 2), the
/// previous command on an in-order queue (rule 5), the last barrier
/// enqueued before it (rule 7), and, for a marker or barrier with an empty
/// wait list, every command enqueued before it (rules 6 and 7). While a
/// command with a smaller index is not enqueued yet, it is waited for as
/// [`ClEvent::Queued`] (whether it is a barrier is not known yet).
pub fn command_waits(queue: &QueueState, index: u32, command: Command, wait: &[ClEvent]) -> Vec<ClEvent> {
    let index = index as usize;
    let mut out: Vec<ClEvent> = wait.to_vec();
    if let Some(j) = (0..index).find(|&j| queue.commands.get(j).copied().flatten().is_none()) {
        out.push(queue.at(j));
        return out;
    }
    if queue.in_order && index > 0 {
        out.push(queue.at(index - 1));
    }
    if let Some(j) = (0..index).rev().find(|&j| matches!(queue.commands[j], Some((_, Command::Barrier)))) {
        out.push(queue.at(j));
    }
    if waits_for_all_before(command) && wait.is_empty() {
        out.extend((0..index).map(|j| queue.at(j)));
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|e| seen.insert(*e));
    out
}

/// What `clFinish` on `queue` waits for: the commands enqueued before it,
/// that is the first `upto` of the queue's enqueue order (rule 8; `upto` is
/// what the finish read from the queue's enqueue counter).
pub fn finish_waits(queue: &QueueState, upto: u32) -> Vec<ClEvent> {
    (0..upto as usize).map(|j| queue.at(j)).collect()
}

/// Rules 2, 4, 8, 11 and 12 (and the join of a host thread) as ghb edges: from
/// each completion event an event waits for ([`crate::graph::Event::waits`])
/// to the waiting event. A completion event that is not global (a host
/// thread ending with a spin-loop hint) stands for the last global event of
/// its unit before it.
pub fn wait_edges(ctx: &Ctx<'_>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let g = ctx.graph;
    for (u, unit) in g.units.iter().enumerate() {
        for (i, ev) in unit.events.iter().enumerate() {
            let waits = g.waits(ev);
            if waits.is_empty() {
                continue;
            }
            let to = ctx.index(EventId { unit: UnitId(u as u32), index: i as u32 });
            for &t in waits.iter() {
                if !g.contains(t) {
                    continue;
                }
                let from = (0..=t.index).rev().map(|j| EventId { unit: t.unit, index: j }).map(|x| ctx.index(x)).find(|&x| ctx.attr[x].g);
                if let Some(f) = from {
                    out.push((f, to));
                }
            }
        }
    }
    debug_assert!(out.iter().all(|&(a, b)| matches!(ctx.attr[b].kind, Kind::CmdStart | Kind::Wait) && a != b));
    out
}
