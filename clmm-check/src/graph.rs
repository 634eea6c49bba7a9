//! Execution graphs (DESIGN.md §5): events per unit in program order
//! (`sb`/`po`), reads-from (`rf`), coherence order (`co`) per location, and
//! the insertion order (stamps) the explorer restores by. No memory-model
//! logic lives here: see [`crate::model`].
//!
//! A read-modify-write is two events, a read part and the write part right
//! after it in program order (as in GenMC); the model treats the pair as the
//! single `R & W` event of `opencl_base.cat`.

use crate::ids::{EventId, GroupId, SubGroupId, UnitId};
use clmm_atomic::backend::{Access, AllocRegion, BarrierId, BarrierKind, LocId, Op};
use clmm_atomic::{FenceFlags, Order, Scope};
use std::panic::Location;

/// What an event is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A load, or a compare-exchange that failed.
    Read,
    /// A store.
    Write,
    /// The read part of a read-modify-write (or of a successful CAS).
    RmwRead,
    /// The write part of a read-modify-write, right after its read part.
    RmwWrite,
    /// `atomic_work_item_fence`.
    Fence,
    /// A barrier's entry fence (release).
    BarrierEntry,
    /// A barrier's exit fence (acquire).
    BarrierExit,
    /// A host launching a kernel (global: orders the host's earlier global
    /// events before the kernel's).
    Launch,
    /// A host waiting for a kernel to finish.
    Join,
    /// The end of a spin-loop iteration (`hint::spin_loop`).
    Spin,
    /// A host thread starting another host thread (creates a unit).
    Spawn,
    /// A host thread enqueueing a command on a command queue (creates the
    /// command's unit).
    Enqueue,
    /// The start of a command (the first event of its unit), once the
    /// events it waits for are complete ([`Event::waits`]).
    CmdStart,
    /// A host thread waiting for events, a queue (`finish`), a host thread
    /// (`join`) or the end of a host scope ([`Event::waits`]).
    Wait,
    /// A host thread setting a user event complete.
    SetStatus,
}

impl Kind {
    /// Reads (including RMW read parts).
    pub fn is_read(self) -> bool {
        matches!(self, Kind::Read | Kind::RmwRead)
    }
    /// Writes (including RMW write parts).
    pub fn is_write(self) -> bool {
        matches!(self, Kind::Write | Kind::RmwWrite)
    }
    /// Memory accesses.
    pub fn is_access(self) -> bool {
        self.is_read() || self.is_write()
    }
    /// Fences, including barrier fences.
    pub fn is_fence(self) -> bool {
        matches!(self, Kind::Fence | Kind::BarrierEntry | Kind::BarrierExit)
    }
    /// The host-side synchronisation events (launches, host threads,
    /// commands, events): all in the global region.
    pub fn is_host_sync(self) -> bool {
        matches!(self, Kind::Launch | Kind::Join | Kind::Spawn | Kind::Enqueue | Kind::CmdStart | Kind::Wait | Kind::SetStatus)
    }
}

/// A dynamic barrier instance: which barrier, which group, which occurrence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BarrierInst {
    /// The barrier's identity (call site or name).
    pub id: BarrierId,
    /// Work-group or sub-group barrier.
    pub kind: BarrierKind,
    /// How many barriers of this kind the unit passed before this one (the
    /// dynamic instance).
    pub seq: u32,
}

/// A barrier instance told apart from the same instance of another group
/// ([`Graph::barrier_instance`]).
pub type InstanceKey = (BarrierInst, Option<UnitId>);

/// One event of an execution graph. `Copy`: a graph's events are copied
/// as plain memory when the explorer clones a graph.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    /// What it is.
    pub kind: Kind,
    /// The location accessed (accesses only).
    pub loc: Option<LocId>,
    /// Order and scope of atomic accesses and fences; `None` for plain
    /// accesses (which carry `memory_scope_work_item` in the model).
    pub atomic: Option<(Order, Scope)>,
    /// Fence and barrier flags.
    pub flags: FenceFlags,
    /// For reads: the write read from.
    pub rf: Option<EventId>,
    /// The value read (reads) or written (writes).
    pub value: u64,
    /// Insertion order.
    pub stamp: u32,
    /// A weak CAS that failed spuriously.
    pub spurious: bool,
    /// A read that speculatively reads from a write that is po∪rf-after it
    /// (load buffering, DESIGN.md §5); its source may not be produced yet.
    pub speculative: bool,
    /// A read that a revisit had made read a write added after the
    /// speculated read, in the graph a speculation started from, and whose
    /// write that speculation's start graph kept as a promise
    /// (`Engine::start_graph` in `explore::speculation`); a speculative
    /// read. Unlike the speculated read's own promise, it may be revisited
    /// or deleted by a revisit once its write is produced (`Engine::maximal`
    /// in `explore::revisit`).
    pub kept: bool,
    /// For a speculative read, the nesting level of its promise: 0 when
    /// the promised write's porf-prefix held no speculative read added
    /// before this one, else one more than the highest level there
    /// (`Levels` in `explore`; `Config::nesting_limit` bounds it).
    pub level: u8,
    /// For a speculative read: the stamp its promised write had in the
    /// graph the speculation was made from (`u32::MAX`: unknown). In a
    /// speculative run, the owing units that read no pending promise run
    /// in that order (`explore::execution`).
    pub rank: u32,
    /// For barrier fences, the dynamic instance.
    pub barrier: Option<BarrierInst>,
    /// The operation that produced it (checked on replay).
    pub op: Op,
    /// The source location of the operation.
    pub site: &'static Location<'static>,
    /// For [`Kind::CmdStart`] and [`Kind::Wait`]: the completion events it
    /// waits for (the last event of a command's or host thread's unit, or
    /// the [`Kind::SetStatus`] of a user event), in [`Graph::wait_lists`]
    /// ([`Graph::waits`]); each global-synchronises with it
    /// (`model::host`).
    pub waits: Option<WaitsId>,
}

/// Where an event's completion events are in [`Graph::wait_lists`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WaitsId(pub u32);

impl Event {
    /// Whether this event is a write of `value` to `loc`: what a read of
    /// `value` at `loc` may read from, and the write a speculation on such
    /// a read promised.
    pub fn writes(&self, loc: Option<LocId>, value: u64) -> bool {
        self.kind.is_write() && self.loc == loc && self.value == value
    }

    /// This read reads `value` from `w`, a write not in the graph yet: a
    /// speculative read (load buffering) at nesting `level`, whose promise
    /// the rest of the run must keep; `rank` as [`Event::rank`]. Through
    /// [`Graph::read_promise`], which notes it ([`Graph::speculated`]).
    fn read_promise(&mut self, w: EventId, value: u64, level: u8, rank: u32) {
        self.rf = Some(w);
        self.value = value;
        self.speculative = true;
        self.kept = false;
        self.level = level;
        self.rank = rank;
    }
}

/// The index of a promised write of a thin-air speculation (herd
/// compatibility, [`crate::Config::thin_air`]), kept by the first write of
/// the unit added after the read (by stamp) that fits: no unit has that
/// many events, so the graph never contains it.
pub const THIN_AIR: u32 = 1 << 31;

/// The index bit of a broken promise ([`Graph::settle_promise`]): the
/// position was filled by another event. No unit has that many events, so
/// the graph never contains the marked id.
pub const BROKEN: u32 = 1 << 30;

/// The position a broken promise's source `w` stands for, if `w` is one
/// ([`BROKEN`]).
pub fn broken_position(w: EventId) -> Option<EventId> {
    (!w.is_init() && w.index & BROKEN != 0 && w.index & THIN_AIR == 0).then_some(promised_position(w))
}

/// The position a promise's source `w` stands for, broken ([`BROKEN`]) or
/// not.
pub fn promised_position(w: EventId) -> EventId {
    EventId { unit: w.unit, index: w.index & !BROKEN }
}

/// Where a location lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Region {
    /// Global memory (`G`).
    Global,
    /// The local memory of one work-group (`L`).
    Local(GroupId),
    /// Neither region (herd's unqualified pointers; litmus front end only).
    Unqualified,
}

/// A memory location.
#[derive(Clone, Copy, Debug)]
pub struct LocInfo {
    /// Its region.
    pub region: Region,
    /// The memory it was allocated in (global, fine- or coarse-grained
    /// SVM, local, unqualified): [`LocInfo::svm`], [`LocInfo::fine`] and
    /// [`LocInfo::fga`] derive from it.
    pub memory: AllocRegion,
    /// Whether it is an atomic object (`!nonatomicloc`).
    pub atomic: bool,
    /// The first location of its allocation (the buffer it belongs to).
    pub alloc: u32,
    /// Initial value.
    pub init: u64,
    /// Where it was allocated ([`LocInfo::name`]).
    pub site: &'static Location<'static>,
    /// Its index in an allocation of several locations (a buffer); `None`
    /// for a single location.
    pub elem: Option<u32>,
    /// Its allocation's name, when the program gave one
    /// (`Backend::label`: a litmus test's variable).
    pub label: Option<&'static str>,
}

impl LocInfo {
    /// Shared virtual memory (fine- or coarse-grained).
    pub fn svm(&self) -> bool {
        matches!(self.memory, AllocRegion::GlobalFga | AllocRegion::SvmCoarse | AllocRegion::SvmFine)
    }

    /// Fine-grained SVM, with or without atomics support: shared with the
    /// host element by element (not as a whole buffer).
    pub fn fine(&self) -> bool {
        matches!(self.memory, AllocRegion::GlobalFga | AllocRegion::SvmFine)
    }

    /// Fine-grained SVM buffer with atomics support (`fga`).
    pub fn fga(&self) -> bool {
        self.memory == AllocRegion::GlobalFga
    }

    /// Host memory (a `HostBuffer`): global memory to the model, named
    /// apart in reports.
    pub fn host(&self) -> bool {
        self.memory == AllocRegion::Host
    }

    /// The kind of memory as the model distinguishes it: host memory is
    /// plain global memory.
    pub fn model_memory(&self) -> AllocRegion {
        if self.host() { AllocRegion::Global } else { self.memory }
    }

    /// Its name in reports: its allocation's label, or the file, line and
    /// column of its allocation, and the element index in a buffer
    /// (`lib.rs:3:9[2]`). Built only when a report needs it.
    pub fn name(&self) -> String {
        let file = self.site.file().rsplit('/').next().unwrap_or(self.site.file());
        let base = match self.label {
            Some(l) => l.to_string(),
            None => format!("{file}:{}:{}", self.site.line(), self.site.column()),
        };
        match self.elem {
            None => base,
            Some(i) => format!("{base}[{i}]"),
        }
    }
}

/// What a unit of execution is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// A host thread (the model closure is unit 0).
    Host,
    /// A work-item of a kernel.
    WorkItem {
        /// `get_global_id`
        global_id: [usize; 3],
        /// `get_group_id`
        group_id: [usize; 3],
        /// `get_local_id`
        local_id: [usize; 3],
        /// Its work-group.
        group: GroupId,
        /// Its sub-group.
        sub_group: SubGroupId,
        /// `get_sub_group_id`
        sub_group_index: usize,
        /// Its device.
        device: u32,
        /// `get_work_dim`: how many of the ids' dimensions reports show.
        work_dim: u8,
    },
    /// A command of a command queue: its events are its start
    /// ([`Kind::CmdStart`]) and, for a kernel, the launch of its work-items
    /// and the wait for them; its completion is its last event.
    Command {
        /// What it is.
        command: clmm_atomic::backend::Command,
        /// The device of its queue.
        device: u32,
    },
}

/// A unit of execution and its events in program order.
#[derive(Debug)]
pub struct Unit {
    /// Host thread or work-item.
    pub kind: UnitKind,
    /// The event that created it (the host's launch).
    pub parent: Option<EventId>,
    /// Its events, in program order.
    pub events: Vec<Event>,
}

impl Unit {
    /// The work-group of a work-item.
    pub fn group(&self) -> Option<GroupId> {
        match self.kind {
            UnitKind::WorkItem { group, .. } => Some(group),
            UnitKind::Host | UnitKind::Command { .. } => None,
        }
    }
    /// The sub-group of a work-item.
    pub fn sub_group(&self) -> Option<SubGroupId> {
        match self.kind {
            UnitKind::WorkItem { sub_group, .. } => Some(sub_group),
            UnitKind::Host | UnitKind::Command { .. } => None,
        }
    }
    /// The device of a work-item.
    pub fn device(&self) -> Option<u32> {
        match self.kind {
            UnitKind::WorkItem { device, .. } => Some(device),
            UnitKind::Host | UnitKind::Command { .. } => None,
        }
    }
    /// A host thread (the model closure or a spawned one).
    pub fn is_host(&self) -> bool {
        matches!(self.kind, UnitKind::Host)
    }
}

/// A work-group of the execution.
#[derive(Debug)]
pub struct GroupInfo {
    /// Its work-items.
    pub units: Vec<UnitId>,
}

/// An execution graph. `clone_from` reuses the target's buffers (the
/// explorer copies a graph for each backward revisit into a recycled one).
#[derive(Debug, Default)]
pub struct Graph {
    /// The units; index = `UnitId`.
    pub units: Vec<Unit>,
    /// The work-groups; index = `GroupId`.
    pub groups: Vec<GroupInfo>,
    /// Sub-groups: their work-items.
    pub sub_groups: Vec<Vec<UnitId>>,
    /// Coherence order per location (writes other than the initial one,
    /// which is first). For non-atomic locations, insertion order.
    pub co: Vec<Vec<EventId>>,
    /// The next stamp.
    pub next_stamp: u32,
    /// Exploration state, not part of the execution: the reads a twin
    /// speculation makes read a promise again ([`Pin`]).
    pub pins: Vec<Pin>,
    /// Exploration state, not part of the execution: in a speculative
    /// run, the units that owe a promise and read one go before the units
    /// that owe none (`explore`'s `Engine::owes`; the second order of a
    /// speculation's start graph, `Item::Speculate` with `owing_first`).
    pub owing_first: bool,
    /// The completion events of the waits ([`Event::waits`]), shared by
    /// the graph's clones. Kept out of [`Event`] so that events are plain
    /// memory; a list whose event a restriction removed may stay until
    /// the lists after it go.
    pub wait_lists: Vec<std::sync::Arc<[EventId]>>,
    /// Whether a read of this graph, or of the graph it was cloned from,
    /// was made speculative ([`Graph::read_promise`], the only way to):
    /// false, no event is, and the scans for speculative reads are
    /// skipped ([`Graph::settle_promises`]). It stays true when a
    /// restriction removes them.
    pub speculated: bool,
}

/// A promise that the start graph of a speculation cuts away, and that the
/// speculated write depends on, made again by the speculation's twin
/// (`explore`'s `Item::Speculate` with `twin`): when the unit adds its
/// event at position `r` and that event is a plain load of `loc`, it reads
/// `value` from the promised write `w` (at `level`), and no other write.
/// In `Wx1; a=Rx; b=Ry; Wz(b+1) || c=Rz; d=Rz; Wy2; Wx(d+1)`, `a <- Wx4`
/// needs `b <- Wy2`: `Wx4` is produced only in a run where b reads the
/// promise. The speculation of a cuts the graph at a, before b, and its
/// reruns cannot make b's promise again: `Wy2` comes after `Wx(d+1)`, which
/// breaks a's promise first (or, when it comes before, waits for a's
/// promise to be kept, [`crate::model`]'s Deviation 6). The twin starts
/// from the same graph with b pinned. The value comes from an explored run
/// where the promise was kept, as every speculated value does. (Until
/// session 15, Deviation 9: `tests/semantics.rs`,
/// `lb_promise_needing_a_later_promise_of_its_unit`.)
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Pin {
    /// The read's position.
    pub r: EventId,
    /// Its location.
    pub loc: LocId,
    /// The promised write's position.
    pub w: EventId,
    /// The promised value.
    pub value: u64,
    /// The promise's nesting level.
    pub level: u8,
    /// The promise's [`Event::rank`].
    pub rank: u32,
}

impl Pin {
    /// Whether the event at the pinned position in `g` read the promise
    /// (kept, pending, or broken: a broken one may be pending again after
    /// a revisit).
    pub fn taken(&self, g: &Graph) -> bool {
        g.contains(self.r) && g.ev(self.r).speculative && g.ev(self.r).rf.is_some_and(|w| promised_position(w) == self.w)
    }
}

impl Clone for Unit {
    fn clone(&self) -> Unit {
        Unit { kind: self.kind, parent: self.parent, events: self.events.clone() }
    }
    fn clone_from(&mut self, src: &Unit) {
        self.kind.clone_from(&src.kind);
        self.parent = src.parent;
        self.events.clone_from(&src.events);
    }
}

impl Clone for GroupInfo {
    fn clone(&self) -> GroupInfo {
        GroupInfo { units: self.units.clone() }
    }
    fn clone_from(&mut self, src: &GroupInfo) {
        self.units.clone_from(&src.units);
    }
}

impl Clone for Graph {
    fn clone(&self) -> Graph {
        Graph {
            units: self.units.clone(),
            groups: self.groups.clone(),
            sub_groups: self.sub_groups.clone(),
            co: self.co.clone(),
            next_stamp: self.next_stamp,
            pins: self.pins.clone(),
            owing_first: self.owing_first,
            wait_lists: self.wait_lists.clone(),
            speculated: self.speculated,
        }
    }
    fn clone_from(&mut self, src: &Graph) {
        self.units.clone_from(&src.units);
        self.groups.clone_from(&src.groups);
        self.sub_groups.clone_from(&src.sub_groups);
        self.co.clone_from(&src.co);
        self.next_stamp = src.next_stamp;
        self.pins.clone_from(&src.pins);
        self.owing_first = src.owing_first;
        self.wait_lists.clone_from(&src.wait_lists);
        self.speculated = src.speculated;
    }
}

impl Graph {
    /// The event `id` (not an initial write).
    pub fn ev(&self, id: EventId) -> &Event {
        &self.units[id.unit.index()].events[id.index as usize]
    }
    /// The completion events `ev` waits for ([`Event::waits`]; none for
    /// an event that is not a wait).
    pub fn waits(&self, ev: &Event) -> &[EventId] {
        ev.waits.map_or(&[][..], |w| &self.wait_lists[w.0 as usize][..])
    }
    /// Read `r` reads `value` from `w`, a write not in the graph yet: a
    /// speculative read (load buffering) at nesting `level`, whose promise
    /// the rest of the run must keep; `rank` as [`Event::rank`].
    pub fn read_promise(&mut self, r: EventId, w: EventId, value: u64, level: u8, rank: u32) {
        self.speculated = true;
        self.ev_mut(r).read_promise(w, value, level, rank);
    }
    /// Event `e` waits for `waits` ([`Event::waits`]).
    pub fn set_waits(&mut self, e: EventId, waits: Vec<EventId>) {
        let id = WaitsId(self.wait_lists.len() as u32);
        self.wait_lists.push(std::sync::Arc::from(waits));
        self.ev_mut(e).waits = Some(id);
    }
    /// Mutable access to event `id`.
    pub fn ev_mut(&mut self, id: EventId) -> &mut Event {
        &mut self.units[id.unit.index()].events[id.index as usize]
    }
    /// Whether `id` is in the graph (initial writes always are).
    pub fn contains(&self, id: EventId) -> bool {
        id.is_init() || self.units.get(id.unit.index()).is_some_and(|u| (id.index as usize) < u.events.len())
    }
    /// The stamp of `id` (initial writes: 0, before everything).
    pub fn stamp(&self, id: EventId) -> u32 {
        if id.is_init() {
            0
        } else {
            self.ev(id).stamp
        }
    }
    /// The value written by write `w`.
    pub fn write_value(&self, w: EventId, locs: &[LocInfo]) -> u64 {
        if w.is_init() {
            locs[w.index as usize].init
        } else {
            self.ev(w).value
        }
    }
    /// Every event id, unit by unit.
    pub fn event_ids(&self) -> impl Iterator<Item = EventId> + '_ {
        self.units.iter().enumerate().flat_map(|(u, unit)| {
            (0..unit.events.len()).map(move |i| EventId { unit: UnitId(u as u32), index: i as u32 })
        })
    }
    /// Every event with its id, in the order of [`Graph::event_ids`]
    /// (for scans that read each event: no second lookup by id).
    pub fn events(&self) -> impl Iterator<Item = (EventId, &Event)> + '_ {
        self.units.iter().enumerate().flat_map(|(u, unit)| unit.events.iter().enumerate().map(move |(i, ev)| (EventId { unit: UnitId(u as u32), index: i as u32 }, ev)))
    }
    /// `f` on every event with its id, in the order of
    /// [`Graph::event_ids`]: the scans of the explorer's fast path (a
    /// nested loop, cheaper than the iterators' `flat_map`).
    pub fn for_each_event(&self, mut f: impl FnMut(EventId, &Event)) {
        for (u, unit) in self.units.iter().enumerate() {
            for (i, ev) in unit.events.iter().enumerate() {
                f(EventId { unit: UnitId(u as u32), index: i as u32 }, ev);
            }
        }
    }
    /// Number of events (without initial writes).
    pub fn len(&self) -> usize {
        self.units.iter().map(|u| u.events.len()).sum()
    }
    /// Whether the graph has no events.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Position of write `w` in the coherence order of its location (the
    /// initial write is 0).
    pub fn co_pos(&self, w: EventId, loc: LocId) -> usize {
        if w.is_init() {
            0
        } else {
            // From the end: a new write is usually there.
            1 + self.co[loc.0 as usize].iter().rposition(|&x| x == w).expect("write in co")
        }
    }
    /// The coherence predecessor of write `w` of `loc`, a write in it
    /// (the initial write when `w` is first).
    pub fn co_pred(&self, w: EventId, loc: LocId) -> EventId {
        self.co_pos(w, loc).checked_sub(2).map_or(EventId::init(loc), |q| self.co[loc.0 as usize][q])
    }
    /// The co-maximal write to `loc`.
    pub fn co_max(&self, loc: LocId) -> EventId {
        self.co.get(loc.0 as usize).and_then(|c| c.last().copied()).unwrap_or(EventId::init(loc))
    }
    /// Insert write `w` into the coherence order of `loc` right after `pred`.
    pub fn co_insert_after(&mut self, loc: LocId, pred: EventId, w: EventId) {
        let l = loc.0 as usize;
        if self.co.len() <= l {
            self.co.resize(l + 1, Vec::new());
        }
        let pos = if pred.is_init() { 0 } else { self.co[l].iter().rposition(|&x| x == pred).expect("pred in co") + 1 };
        self.co[l].insert(pos, w);
    }
    /// Insert write `w` into the coherence order of `loc` right before
    /// `next`, a write in it.
    pub fn co_insert_before(&mut self, loc: LocId, next: EventId, w: EventId) {
        let c = &mut self.co[loc.0 as usize];
        let pos = c.iter().rposition(|&x| x == next).expect("next in co");
        c.insert(pos, w);
    }
    /// Remove write `w` from the coherence order of `loc`.
    pub fn co_remove(&mut self, loc: LocId, w: EventId) {
        if let Some(c) = self.co.get_mut(loc.0 as usize) {
            c.retain(|&x| x != w);
        }
    }
    /// The writes to `loc` in coherence order, the initial write first.
    pub fn writes_to(&self, loc: LocId) -> impl Iterator<Item = EventId> + '_ {
        std::iter::once(EventId::init(loc)).chain(self.co.get(loc.0 as usize).into_iter().flatten().copied())
    }
    /// The reads of `loc` that read from `w`.
    pub fn readers_of(&self, w: EventId) -> impl Iterator<Item = EventId> + '_ {
        self.events().filter(move |(_, ev)| ev.kind.is_read() && ev.rf == Some(w)).map(|(e, _)| e)
    }

    /// Keep only the events `keep` says to keep (a per-unit program-order
    /// prefix), dropping units whose creating event is gone, and co entries
    /// and group members of removed events and units.
    pub fn restrict(&mut self, mut keep: impl FnMut(EventId, &Event) -> bool) {
        // The latest stamp kept, for `next_stamp`, and how many wait lists
        // the kept events need.
        let (mut top, mut lists) = (0, 0);
        for u in 0..self.units.len() {
            let unit = UnitId(u as u32);
            let events = &self.units[u].events;
            let mut n = 0;
            while n < events.len() && keep(EventId { unit, index: n as u32 }, &events[n]) {
                top = top.max(events[n].stamp);
                if let Some(w) = events[n].waits {
                    lists = lists.max(w.0 as usize + 1);
                }
                n += 1;
            }
            self.units[u].events.truncate(n);
        }
        self.wait_lists.truncate(lists);
        // Units whose creating event (launch, spawn, enqueue) is gone are
        // dead: emptied, and dropped when at the end (a unit is created
        // after its creator, so its parent is decided first). With several
        // host threads they need not form a suffix; dead units in the
        // middle keep their ids (no event refers to them).
        let mut died = false;
        for u in 1..self.units.len() {
            let dead = match self.units[u].parent {
                Some(p) => !self.contains(p),
                None => true,
            };
            if dead {
                died |= self.units[u].parent.is_some() || !self.units[u].events.is_empty();
                self.units[u].events.clear();
                self.units[u].parent = None;
            }
        }
        while self.units.len() > 1 && self.units.last().is_some_and(|x| x.parent.is_none()) {
            self.units.pop();
        }
        // The groups lose members only when units die: a restriction of a
        // few events (most alternatives) skips them.
        if died {
            let units = &self.units;
            let is_alive = |x: &UnitId| x.index() == 0 || units.get(x.index()).is_some_and(|u| u.parent.is_some());
            for g in &mut self.groups {
                g.units.retain(is_alive);
            }
            while self.groups.last().is_some_and(|g| g.units.is_empty()) {
                self.groups.pop();
            }
            for s in &mut self.sub_groups {
                s.retain(is_alive);
            }
            while self.sub_groups.last().is_some_and(|s| s.is_empty()) {
                self.sub_groups.pop();
            }
        }
        let units = &self.units;
        let present = |e: EventId| units.get(e.unit.index()).is_some_and(|u| (e.index as usize) < u.events.len());
        for c in &mut self.co {
            c.retain(|&w| present(w));
        }
        self.next_stamp = if died { self.event_ids().map(|e| self.ev(e).stamp + 1).max().unwrap_or(1) } else { top + 1 }.max(1);
    }

    /// A 128-bit fingerprint of the graph as built: per unit, each
    /// event's kind, location, value and rf source, and the coherence
    /// order of every location, the insertion order of non-atomic ones
    /// included (not stamps or exploration flags), so that two
    /// explorations that built the same graph get the same fingerprint.
    /// A replay string names it ([`crate::replay`]), and a replay rebuilds
    /// the insertion order too.
    pub fn fingerprint(&self) -> u128 {
        with_scratch(|buf| {
            self.encode_execution(buf, None);
            xxhash_rust::xxh3::xxh3_128(buf)
        })
    }

    /// [`Graph::fingerprint`] of the graph as an execution: without the
    /// insertion order of the writes of non-atomic locations (`locs`),
    /// which have no coherence order (`mo = co & ((!nonatomicloc)^2)`,
    /// `opencl_base.cat` line 4). Two runs that add the plain stores of
    /// one execution in different orders build the same execution: the
    /// complete porf-cyclic executions that speculations reach along
    /// several paths are counted once by it, and `Config::check_unique`
    /// compares it (wide scoped seed 28331:
    /// `plain_store_order_is_no_part_of_an_execution` in
    /// `tests/scoped_differential.rs`, counted twice while this kept the
    /// order).
    pub fn execution_fingerprint(&self, locs: &[LocInfo]) -> u128 {
        with_scratch(|buf| {
            self.encode_execution(buf, Some(locs));
            xxhash_rust::xxh3::xxh3_128(buf)
        })
    }

    /// The fixed-width encoding that [`Graph::fingerprint`] hashes, appended
    /// to `buf` (hashed in one call: a streaming update per field cost
    /// 2,300 instructions on a load-buffering graph of six events). With
    /// `locs`, a non-atomic location's order is left out (its writes are
    /// in the units' events already), as for
    /// [`Graph::execution_fingerprint`].
    pub fn encode_execution(&self, buf: &mut Vec<u8>, locs: Option<&[LocInfo]>) {
        buf.extend_from_slice(&(self.units.len() as u64).to_le_bytes());
        for unit in &self.units {
            buf.extend_from_slice(&(unit.events.len() as u64).to_le_bytes());
            for e in &unit.events {
                let mut rec = [0u8; 24];
                rec[0] = e.kind as u8;
                rec[1] = u8::from(e.loc.is_some()) | u8::from(e.rf.is_some()) << 1 | u8::from(e.spurious) << 2;
                rec[4..8].copy_from_slice(&e.loc.map_or(0, |l| l.0).to_le_bytes());
                let rf = e.rf.unwrap_or(EventId { unit: UnitId(0), index: 0 });
                rec[8..12].copy_from_slice(&rf.unit.0.to_le_bytes());
                rec[12..16].copy_from_slice(&rf.index.to_le_bytes());
                rec[16..24].copy_from_slice(&e.value.to_le_bytes());
                buf.extend_from_slice(&rec);
            }
        }
        buf.extend_from_slice(&(self.co.len() as u64).to_le_bytes());
        for (l, c) in self.co.iter().enumerate() {
            let ordered = locs.is_none_or(|locs| locs.get(l).is_none_or(|info| info.atomic));
            let c: &[EventId] = if ordered { c } else { &[] };
            buf.extend_from_slice(&(c.len() as u64).to_le_bytes());
            for w in c {
                buf.extend_from_slice(&w.unit.0.to_le_bytes());
                buf.extend_from_slice(&w.index.to_le_bytes());
            }
        }
    }

    /// The reads whose rf source is not in the graph yet: speculative reads
    /// of a po∪rf-later write that the rest of the run must produce.
    /// Appended to `out` (a scan at each RMW an alternative restores:
    /// no iterator state).
    pub fn pending_reads_into(&self, out: &mut Vec<EventId>) {
        self.for_each_event(|e, ev| {
            if ev.rf.is_some_and(|w| !self.contains(w)) {
                out.push(e);
            }
        });
    }

    /// Bring speculative read `r`'s promise up to date with the graph: the
    /// promised position held by another event (not a write of `r`'s
    /// location and value) breaks it: its source becomes the [`BROKEN`]
    /// form of the position, not in the graph, so every check sees `r`
    /// unresolved, as for a pending promise. A broken promise whose
    /// position a revisit deleted is pending again; one whose position now
    /// holds a fitting write is kept: an RMW's write part that an
    /// alternative of its read added again (`Add x; Add y || a = Ry; Wx2;
    /// Wy1`, `a` promised Add y's 1: the run breaks it, Add y reading
    /// `Wy1`, and the alternative where Add y reads the initial write
    /// keeps it; `tests/ra_rmw_differential.rs` found the execution
    /// missing while such a promise stayed broken). Thin-air promises
    /// (bound by value, not by position) are left alone.
    pub fn settle_promise(&mut self, r: EventId) {
        let ev = self.ev(r);
        let Some(w) = ev.rf.filter(|w| ev.speculative && !w.is_init() && w.index & THIN_AIR == 0) else { return };
        let at = promised_position(w);
        let rf = if !self.contains(at) || self.ev(at).writes(ev.loc, ev.value) {
            at
        } else {
            EventId { unit: at.unit, index: at.index | BROKEN }
        };
        self.ev_mut(r).rf = Some(rf);
    }

    /// [`Graph::settle_promise`] for every speculative read (of a restored
    /// graph).
    pub fn settle_promises(&mut self) {
        if !self.speculated {
            return;
        }
        for u in 0..self.units.len() {
            // Most graphs have no speculative read: looked for first.
            let mut from = 0;
            while let Some(k) = self.units[u].events[from..].iter().position(|e| e.speculative) {
                self.settle_promise(EventId { unit: UnitId(u as u32), index: (from + k) as u32 });
                from += k + 1;
            }
        }
    }

    /// Whether one of units `a` and `b` is a host thread and the other a
    /// work-item (in either order). Their synchronisation through atomics
    /// orders no coarse-grained or non-SVM buffer, which is consistent only
    /// at synchronisation points (Deviations, 5;
    /// [`crate::model::hb::command_ghb`], and the vector clocks leave it to
    /// the explicit model), and their accesses to one such buffer conflict
    /// as a whole ([`crate::model::race::buffer_conflict_at`]).
    pub fn host_and_device(&self, a: UnitId, b: UnitId) -> bool {
        let (ka, kb) = (&self.units[a.index()], &self.units[b.index()]);
        (ka.is_host() && kb.device().is_some()) || (kb.is_host() && ka.device().is_some())
    }

    /// Whether unit `u` is a command that a work-item enqueued on a
    /// device-side queue (a child kernel or a device-side marker).
    pub fn device_enqueued(&self, u: UnitId) -> bool {
        let unit = &self.units[u.index()];
        matches!(unit.kind, UnitKind::Command { .. }) && unit.parent.is_some_and(|p| self.units[p.unit.index()].device().is_some())
    }

    /// The launch at the root of work-item `u`'s kernel family: its
    /// kernel's launch, or, for a child kernel (device-side enqueue), the
    /// root of the kernel that enqueued it. `None` for other units.
    pub fn kernel_root(&self, u: UnitId) -> Option<EventId> {
        let mut launch = self.units[u.index()].parent?;
        loop {
            let runner = launch.unit;
            if !self.device_enqueued(runner) {
                return Some(launch);
            }
            let enqueuer = self.units[runner.index()].parent.expect("a device-enqueued command has a parent");
            launch = self.units[enqueuer.unit.index()].parent?;
        }
    }

    /// The units that take part in a barrier of `kind` with unit `u`: its
    /// work-group or its sub-group.
    pub fn barrier_members(&self, u: UnitId, kind: BarrierKind) -> &[UnitId] {
        let unit = &self.units[u.index()];
        let members = match kind {
            BarrierKind::WorkGroup => unit.group().and_then(|g| self.groups.get(g.0 as usize)).map(|g| &g.units[..]),
            BarrierKind::SubGroup => unit.sub_group().and_then(|s| self.sub_groups.get(s.0 as usize)).map(|s| &s[..]),
        };
        members.unwrap_or(&[])
    }

    /// Barrier instance `inst` of unit `u`, told apart from the same
    /// instance of another group (or sub-group) by the group's first
    /// member: the key under which the walks and the scheduler handle an
    /// instance once for all its members.
    pub fn barrier_instance(&self, u: UnitId, inst: BarrierInst) -> InstanceKey {
        (inst, self.barrier_members(u, inst.kind).first().copied())
    }

    /// Unit `v`'s event of `kind` (entry or exit) at barrier instance
    /// `inst`, if it has one.
    ///
    /// Searched from `v`'s last event back to its previous instance of the
    /// same barrier (a unit's instances of one barrier come in order of
    /// `seq`, in either matching mode): a work-group of n work-items asks
    /// this of every member at every barrier, and a search from the first
    /// event made a kernel with barriers in a loop cost O(n^3).
    pub fn barrier_event(&self, v: UnitId, inst: BarrierInst, kind: Kind) -> Option<EventId> {
        for (i, x) in self.units[v.index()].events.iter().enumerate().rev() {
            let Some(b) = x.barrier.filter(|b| b.kind == inst.kind && b.seq <= inst.seq && b.id == inst.id) else { continue };
            if b.seq < inst.seq {
                return None;
            }
            if x.kind == kind {
                return Some(EventId { unit: v, index: i as u32 });
            }
        }
        None
    }

    /// [`Graph::barrier_event`] searched from the events of `v` added
    /// around `stamp` (a unit's stamps grow along program order): an
    /// entry back from the last event added before it, an exit on from
    /// the first added after it. Every exit of an instance is added after
    /// all its entries, so the stamp of one member's exit finds the
    /// others' entries a few events away, and an entry's finds the exits,
    /// however far the members have gone since: from the unit's last
    /// event, a walk over the porf-prefix of a graph with barriers in a
    /// loop cost O(n^2) in the events. An entry not found there is
    /// searched for in the whole unit (never needed so far: every entry
    /// is added before its instance's exits); an exit not found on from
    /// the stamp is not there.
    pub fn barrier_event_near(&self, v: UnitId, inst: BarrierInst, kind: Kind, stamp: u32) -> Option<EventId> {
        let evs = &self.units[v.index()].events;
        let p = evs.partition_point(|x| x.stamp < stamp);
        // The events of this barrier: `Some(true)` the one looked for,
        // `Some(false)` one beyond its instance (stop), `None` go on.
        // (The identities compared last: the occurrence decides most.)
        let at = |x: &Event, beyond: fn(u32, u32) -> bool| {
            let b = x.barrier.filter(|b| b.kind == inst.kind)?;
            if b.seq == inst.seq {
                (x.kind == kind && b.id == inst.id).then_some(true)
            } else {
                (beyond(b.seq, inst.seq) && b.id == inst.id).then_some(false)
            }
        };
        let found = if kind == Kind::BarrierEntry {
            evs[..p].iter().enumerate().rev().find_map(|(i, x)| at(x, |s, t| s < t).map(|hit| hit.then_some(i)))
        } else {
            evs[p..].iter().enumerate().find_map(|(i, x)| at(x, |s, t| s > t).map(|hit| hit.then_some(p + i)))
        };
        match found.flatten() {
            Some(i) => Some(EventId { unit: v, index: i as u32 }),
            None if kind == Kind::BarrierEntry => self.barrier_event(v, inst, kind),
            None => None,
        }
    }

    /// The dependencies of `e` that porf has besides po and rf: for a
    /// barrier exit, every member's entry of the same instance (leaving
    /// depends on every arrival); for a join, the last event of every unit
    /// its launches created (it waits for them); for a command's start or
    /// a host wait, the completion events it waits for.
    pub fn sync_preds(&self, e: EventId, out: &mut Vec<EventId>) {
        let ev = self.ev(e);
        out.extend_from_slice(self.waits(ev));
        match (ev.kind, ev.barrier) {
            (Kind::BarrierExit, Some(inst)) => {
                out.extend(self.barrier_members(e.unit, inst.kind).iter().filter_map(|&v| self.barrier_event_near(v, inst, Kind::BarrierEntry, ev.stamp)));
            }
            (Kind::Join, _) => {
                for (v, unit) in self.units.iter().enumerate() {
                    if unit.parent.is_some_and(|p| p.unit == e.unit && p.index < e.index) && !unit.events.is_empty() {
                        out.push(EventId { unit: UnitId(v as u32), index: unit.events.len() as u32 - 1 });
                    }
                }
            }
            _ => {}
        }
    }

    /// The inverse of [`Graph::sync_preds`] and of the creation of units:
    /// the events that depend on `e` other than by po and rf. For a barrier
    /// entry, the other members' exits of its instance; for the last event
    /// of a unit, the joins that wait for it; for an event another waits
    /// for, that waiter; for a launch, the first event of each unit it
    /// created. (A forward walk from an event that follows only po and rf
    /// would keep a barrier exit whose entry it drops, and let a unit
    /// leave a barrier that another has not reached.)
    pub fn sync_succs(&self, e: EventId, out: &mut Vec<EventId>) {
        let ev = self.ev(e);
        if let (Kind::BarrierEntry, Some(inst)) = (ev.kind, ev.barrier) {
            out.extend(self.barrier_members(e.unit, inst.kind).iter().filter(|&&v| v != e.unit).filter_map(|&v| self.barrier_event_near(v, inst, Kind::BarrierExit, ev.stamp)));
        }
        self.sync_succs_beyond_barrier(e, out);
    }

    /// [`Graph::sync_succs`] but a barrier entry's exits: the joins after
    /// the last event of a unit, the waiters, the units a launch created.
    pub fn sync_succs_beyond_barrier(&self, e: EventId, out: &mut Vec<EventId>) {
        let unit = &self.units[e.unit.index()];
        if let Some(p) = unit.parent.filter(|_| e.index as usize + 1 == unit.events.len()) {
            let joins = self.units[p.unit.index()].events.iter().enumerate().skip(p.index as usize + 1).filter(|(_, x)| x.kind == Kind::Join);
            out.extend(joins.map(|(i, _)| EventId { unit: p.unit, index: i as u32 }));
        }
        // Only a host command creates units (a launch, a spawn, an
        // enqueue), and only host threads and commands wait (`Wait`,
        // `CmdStart`): a work-item's other events were asked about every
        // unit (O(units) an event on a prefix walk of a wide kernel).
        let creates = self.ev(e).kind.is_host_sync();
        for (v, u) in self.units.iter().enumerate() {
            let work_item = matches!(u.kind, UnitKind::WorkItem { .. });
            if work_item && !creates {
                continue;
            }
            if u.parent == Some(e) && !u.events.is_empty() {
                out.push(EventId { unit: UnitId(v as u32), index: 0 });
            }
            if work_item {
                continue;
            }
            for (i, x) in u.events.iter().enumerate() {
                if self.waits(x).contains(&e) {
                    out.push(EventId { unit: UnitId(v as u32), index: i as u32 });
                }
            }
        }
    }

    /// The value the exit of barrier instance `inst` returns to unit `u`:
    /// for a collective, `u`'s result computed from every member's entry
    /// (in local-id order: the order of [`Graph::barrier_members`]); 0 for
    /// a plain barrier. An error message (barrier divergence) when a member
    /// has no entry at this instance (it never arrived: the reference's
    /// partial participation does not apply to collectives) or the members
    /// did not all call the same collective.
    pub fn collective_result(&self, u: UnitId, inst: BarrierInst) -> Result<u64, String> {
        let entry = |v: UnitId| self.barrier_event(v, inst, Kind::BarrierEntry).map(|e| self.ev(e));
        let name = |e: &Event| barrier_name(&e.op);
        let mine = entry(u).expect("a unit leaving a barrier entered it");
        let Op::Barrier { collective: Some(_), .. } = mine.op else {
            return Ok(0);
        };
        let members = self.barrier_members(u, inst.kind);
        let mut all = Vec::with_capacity(members.len());
        let mut me = 0;
        for &v in members {
            if v == u {
                me = all.len();
            }
            let who = || crate::report::unit_name(self, v);
            match entry(v) {
                None => return Err(format!("{} does not take part in {} at {} (instance {})", who(), name(mine), inst.id, inst.seq)),
                Some(e) => match e.op {
                    Op::Barrier { collective: Some(c), .. } => all.push(c),
                    _ => return Err(format!("{} calls {} where the others call {} at {}", who(), name(e), name(mine), inst.id)),
                },
            }
        }
        clmm_atomic::backend::Collective::result(&all, me, inst.kind).map_err(|e| format!("{} at {}: {e}", name(mine), inst.id))
    }

    /// The porf-prefix of `e`: `e` and every event before it in
    /// (po ∪ rf ∪ launch ∪ join ∪ barrier arrival)*, as a membership test over event ids.
    pub fn porf_prefix(&self, e: EventId) -> PrefixSet {
        self.porf_prefix_of(&[e])
    }

    /// The union of the porf-prefixes of `roots`.
    pub fn porf_prefix_of(&self, roots: &[EventId]) -> PrefixSet {
        let mut out = PrefixSet::default();
        self.porf_prefix_into(roots, &mut Vec::new(), &mut out);
        out
    }

    /// [`Graph::porf_prefix_of`] into `out`, with `stack` as a buffer (the
    /// explorer's fast path: no allocation once the buffers have grown).
    /// Records in `out` whether it followed a kept promise
    /// ([`PrefixSet::through_promise`]).
    pub fn porf_prefix_into(&self, roots: &[EventId], stack: &mut Vec<EventId>, out: &mut PrefixSet) {
        self.prefix_walk(roots, stack, out, true, None);
    }

    /// The revisit prefix of `roots` (TruSt's porf-prefix of a revisiting
    /// write, what a backward revisit keeps besides the events added before
    /// the read): [`Graph::porf_prefix_into`] without the rf edges of
    /// speculative reads. A speculative read reads its promised value
    /// whether or not the promised write is in the graph, so nothing of
    /// its unit depends on that write: a revisit may delete a kept
    /// promise's write, and the promise is pending again (the unit that
    /// owes it must produce it anew). Equal to the porf-prefix when the
    /// latter did not go through a kept promise.
    pub fn revisit_prefix_into(&self, roots: &[EventId], stack: &mut Vec<EventId>, out: &mut PrefixSet) {
        self.prefix_walk(roots, stack, out, false, None);
    }

    /// [`Graph::porf_prefix_into`], not following the rf edge of read
    /// `skip` (the prefix a speculation of `skip` starts from).
    pub fn porf_prefix_skipping_into(&self, roots: &[EventId], skip: Option<EventId>, stack: &mut Vec<EventId>, out: &mut PrefixSet) {
        self.prefix_walk(roots, stack, out, true, skip);
    }

    fn prefix_walk(&self, roots: &[EventId], stack: &mut Vec<EventId>, out: &mut PrefixSet, promises: bool, skip: Option<EventId>) {
        out.through_promise = false;
        let upto = &mut out.upto;
        upto.clear();
        upto.resize(self.units.len(), -1);
        stack.clear();
        stack.extend_from_slice(roots);
        // The barrier instances whose entries are on the stack already:
        // every exit of an instance has the same (each member's).
        let mut instances: Vec<InstanceKey> = Vec::new();
        while let Some(x) = stack.pop() {
            if x.is_init() {
                continue;
            }
            let u = x.unit.index();
            if upto[u] >= x.index as i64 {
                continue;
            }
            let from = (upto[u] + 1) as u32;
            upto[u] = x.index as i64;
            let events = &self.units[u].events;
            for i in from..=x.index {
                let id = EventId { unit: x.unit, index: i };
                let ev = &events[i as usize];
                if let Some(w) = ev.rf.filter(|&w| self.contains(w) && skip != Some(id)) {
                    out.through_promise |= ev.speculative;
                    if promises || !ev.speculative {
                        stack.push(w);
                    }
                }
                if let (Kind::BarrierExit, Some(inst)) = (ev.kind, ev.barrier) {
                    let key = self.barrier_instance(id.unit, inst);
                    if instances.contains(&key) {
                        continue;
                    }
                    instances.push(key);
                }
                // Only waits, barrier exits and joins have any (asked
                // here first: most events are memory operations).
                if ev.waits.is_some() || matches!(ev.kind, Kind::BarrierExit | Kind::Join) {
                    self.sync_preds(id, stack);
                }
            }
            if let Some(p) = self.units[u].parent {
                stack.push(p);
            }
        }
    }
}

/// A per-unit program-order prefix of a graph.
#[derive(Clone, Debug, Default)]
pub struct PrefixSet {
    upto: Vec<i64>,
    through_promise: bool,
}

impl PrefixSet {
    /// Whether the walk that made the prefix met a speculative read whose
    /// promised write is in the graph (a kept promise): only then can the
    /// revisit prefix ([`Graph::revisit_prefix_into`]) be smaller.
    pub fn through_promise(&self) -> bool {
        self.through_promise
    }

    /// Whether `e` is in the prefix (initial writes always are).
    pub fn contains(&self, e: EventId) -> bool {
        e.is_init() || self.upto.get(e.unit.index()).is_some_and(|&m| e.index as i64 <= m)
    }
}

/// The kind of event an operation produces, for replay checks.
pub fn same_op(a: &Op, b: &Op) -> bool {
    match (a, b) {
        (Op::Mem { loc: l1, access: a1, mode: m1 }, Op::Mem { loc: l2, access: a2, mode: m2 }) => {
            l1 == l2 && m1 == m2 && std::mem::discriminant(a1) == std::mem::discriminant(a2) && match (a1, a2) {
                (Access::Store(v1), Access::Store(v2)) => v1 == v2,
                (Access::Rmw(o1, t1, v1), Access::Rmw(o2, t2, v2)) => o1 == o2 && t1 == t2 && v1 == v2,
                (Access::Cas { expected: e1, desired: d1, .. }, Access::Cas { expected: e2, desired: d2, .. }) => e1 == e2 && d1 == d2,
                _ => true,
            }
        }
        (Op::Fence { flags: f1, order: o1, scope: s1 }, Op::Fence { flags: f2, order: o2, scope: s2 }) => f1 == f2 && o1 == o2 && s1 == s2,
        (Op::Barrier { id: i1, flags: f1, kind: k1, collective: c1, .. }, Op::Barrier { id: i2, flags: f2, kind: k2, collective: c2, .. }) => {
            i1 == i2 && f1 == f2 && k1 == k2 && c1 == c2
        }
        (Op::SpinLoop, Op::SpinLoop) => true,
        _ => false,
    }
}

/// What a barrier event is called in reports: `barrier`, or the
/// collective's OpenCL C name (`work_group_reduce_add`, ...).
pub fn barrier_name(op: &Op) -> String {
    match op {
        Op::Barrier { collective: Some(c), kind, .. } => c.cl_name(*kind),
        _ => "barrier".to_string(),
    }
}

/// Kind of a barrier op, for `BarrierInst`.
pub fn barrier_kind(op: &Op) -> Option<BarrierKind> {
    match op {
        Op::Barrier { kind, .. } => Some(*kind),
        _ => None,
    }
}

/// Run `f` on this thread's byte buffer, emptied (the encodings that
/// fingerprints hash; kept for its capacity).
pub fn with_scratch<R>(f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
    thread_local! {
        static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    SCRATCH.with(|b| {
        // A nested call (none today) gets a buffer of its own.
        let mut own = Vec::new();
        let mut guard = b.try_borrow_mut();
        let buf = match guard.as_deref_mut() {
            Ok(v) => v,
            Err(_) => &mut own,
        };
        buf.clear();
        f(buf)
    })
}

/// Room in a new unit's list, which has none yet, for as many entries
/// as its neighbour's has, at least 16: the work-items of a kernel have
/// about as many events each, and growing each one's events and views
/// from empty (`Engine::new_event`, `Clocks::add`) cost a
/// tree reduction 2.6% of its instructions more.
pub(crate) fn reserve_like_neighbour<T>(list: &mut Vec<T>, neighbour: usize) {
    list.reserve(neighbour.max(16));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host that wrote and launched two work-items of one work-group,
    /// each of which wrote twice: stamps 1 to 6 in that order.
    fn launched() -> Graph {
        let site = Location::caller();
        let op = Op::Mem { loc: LocId(0), access: Access::Load, mode: clmm_atomic::backend::Mode::Atomic(Order::Relaxed, Scope::Device) };
        let ev = |kind, stamp| Event { kind, loc: None, atomic: None, flags: FenceFlags::empty(), rf: None, value: 0, stamp, spurious: false, speculative: false, kept: false, level: 0, rank: u32::MAX, barrier: None, op, site, waits: None };
        let mut g = Graph::default();
        g.units.push(Unit { kind: UnitKind::Host, parent: None, events: vec![ev(Kind::Write, 1), ev(Kind::Launch, 2)] });
        let launch = EventId { unit: UnitId(0), index: 1 };
        for w in 0..2u32 {
            let kind = UnitKind::WorkItem { global_id: [w as usize, 0, 0], group_id: [0; 3], local_id: [w as usize, 0, 0], group: GroupId(0), sub_group: SubGroupId(0), sub_group_index: 0, device: 0, work_dim: 1 };
            g.units.push(Unit { kind, parent: Some(launch), events: vec![ev(Kind::Write, 3 + 2 * w), ev(Kind::Write, 4 + 2 * w)] });
        }
        g.groups = vec![GroupInfo { units: vec![UnitId(1), UnitId(2)] }];
        g.sub_groups = vec![vec![UnitId(1), UnitId(2)]];
        g.next_stamp = 7;
        g
    }

    /// A cut that keeps every unit leaves the groups as they are, and
    /// the next stamp after the latest kept; a cut of the launch kills
    /// its work-items, which leave their groups (session 55 skips the
    /// groups when no unit dies).
    #[test]
    fn restrict_keeps_the_groups_unless_a_unit_dies() {
        let mut g = launched();
        g.restrict(|_, e| e.stamp <= 5);
        assert_eq!(g.units.iter().map(|u| u.events.len()).collect::<Vec<_>>(), [2, 2, 1]);
        assert_eq!((g.groups[0].units.len(), g.sub_groups[0].len(), g.next_stamp), (2, 2, 6));
        let mut g = launched();
        g.restrict(|_, e| e.stamp <= 1);
        assert_eq!((g.units.len(), g.units[0].events.len(), g.groups.len(), g.sub_groups.len(), g.next_stamp), (1, 1, 0, 0, 2));
    }

    /// [`Graph::events`] and [`Graph::for_each_event`] give the events of
    /// [`Graph::event_ids`], in its order.
    #[test]
    fn events_in_the_order_of_event_ids() {
        let g = launched();
        let ids: Vec<EventId> = g.event_ids().collect();
        assert_eq!(g.events().map(|(e, ev)| (e, ev.stamp)).collect::<Vec<_>>(), ids.iter().map(|&e| (e, g.ev(e).stamp)).collect::<Vec<_>>());
        let mut seen = Vec::new();
        g.for_each_event(|e, _| seen.push(e));
        assert_eq!(seen, ids);
    }
}
