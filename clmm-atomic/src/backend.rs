//! The event vocabulary and the narrow interface between user-facing types
//! and the checker (DESIGN.md §2).
//!
//! Every operation on clmm memory becomes an [`Op`] handed to the active
//! [`Backend`], which returns the value the checker chose ([`Reply`]). When no
//! backend is active (outside `clmm::model`), the types run natively on `std`
//! atomics and real threads and never reach this module's trait.

use crate::ndrange::LaunchPlan;
use crate::order::{FenceFlags, Order, Scope};
use crate::value::{NumTy, RmwOp};
use std::cell::Cell;
use std::panic::Location;

/// A memory location known to the checker (one element of a buffer or one
/// atomic). Allocated by [`Backend::alloc`]; consecutive for the elements of
/// one allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct LocId(pub u32);

impl LocId {
    /// The location `i` elements after this one (same allocation).
    pub fn offset(self, i: usize) -> LocId {
        LocId(self.0 + u32::try_from(i).expect("clmm: location index overflow"))
    }
}

/// How an access is performed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A non-atomic access (`*x` in OpenCL C). Carries `memory_scope_work_item`
    /// in the formal model and never synchronises.
    Plain,
    /// An atomic access with its order and scope.
    Atomic(Order, Scope),
}

/// What a memory access does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// A load.
    Load,
    /// A store of the value.
    Store(u64),
    /// A read-modify-write (`atomic_fetch_*`, `atomic_exchange`) with its
    /// operand.
    Rmw(RmwOp, NumTy, u64),
    /// `atomic_compare_exchange_{strong,weak}`: on success an RMW writing
    /// `desired` (with the access's order), on failure a load with the
    /// `failure` order. A weak one may fail spuriously.
    Cas {
        /// The value compared with.
        expected: u64,
        /// The value written on success.
        desired: u64,
        /// The order of the load on failure.
        failure: Order,
        /// `compare_exchange_weak`: may fail even when the values are equal.
        weak: bool,
    },
}

/// What a barrier waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BarrierKind {
    /// `work_group_barrier`
    WorkGroup,
    /// `sub_group_barrier`
    SubGroup,
}

/// The identity of a barrier call: its call site, or a name the program gave
/// it with `barrier_with_id` (a litmus test's label).
#[derive(Clone, Copy, Debug, Eq)]
pub enum BarrierId {
    /// The source location of the call (`#[track_caller]`).
    Site(&'static Location<'static>),
    /// An explicit identity.
    Named(&'static str),
}

/// Equal call sites or names, by value; one site's `Location` is usually
/// one static, so its address is compared first, and two sites' lines
/// before their files (two barriers of a kernel are in one file).
impl PartialEq for BarrierId {
    #[inline]
    fn eq(&self, other: &BarrierId) -> bool {
        match (self, other) {
            (BarrierId::Site(a), BarrierId::Site(b)) => std::ptr::eq(*a, *b) || (a.line() == b.line() && a.column() == b.column() && a.file() == b.file()),
            (BarrierId::Named(a), BarrierId::Named(b)) => std::ptr::eq(*a, *b) || a == b,
            _ => false,
        }
    }
}

/// By value, as [`PartialEq`] compares (the derived hash: the variant,
/// then the site or name).
impl std::hash::Hash for BarrierId {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            BarrierId::Site(l) => l.hash(h),
            BarrierId::Named(n) => n.hash(h),
        }
    }
}

impl std::fmt::Display for BarrierId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BarrierId::Site(l) => write!(f, "{}:{}:{}", l.file(), l.line(), l.column()),
            BarrierId::Named(n) => write!(f, "`{n}`"),
        }
    }
}

/// One operation of a unit of execution, handed to the backend.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    /// A memory access.
    Mem {
        /// The location.
        loc: LocId,
        /// The access.
        access: Access,
        /// Atomic or not, with order and scope.
        mode: Mode,
    },
    /// `atomic_work_item_fence(flags, order, scope)`.
    Fence {
        /// The regions ordered.
        flags: FenceFlags,
        /// The fence's order.
        order: Order,
        /// The fence's scope.
        scope: Scope,
    },
    /// A work-group or sub-group barrier.
    Barrier {
        /// Which barrier this is.
        id: BarrierId,
        /// The regions it orders.
        flags: FenceFlags,
        /// Its scope (`work_group_barrier(flags, scope)`).
        scope: Scope,
        /// Work-group or sub-group.
        kind: BarrierKind,
        /// For a work-group or sub-group collective (broadcast, reduce,
        /// scan, all, any), the operation and this unit's contribution; the
        /// reply's value is the unit's result. `None` for a plain barrier.
        collective: Option<Collective>,
    },
    /// `clmm::hint::spin_loop()`: the end of one iteration of a busy-wait
    /// loop.
    SpinLoop,
}

/// The operation of a work-group or sub-group collective (OpenCL C 2.0
/// §6.13.15, `work_group_*` and `sub_group_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CollectiveOp {
    /// `work_group_broadcast(a, local_id)`: the value of the work-item whose
    /// (linear, or sub-group) local id is `source`.
    Broadcast {
        /// The local id whose value everybody receives.
        source: u32,
    },
    /// `work_group_reduce_<op>`: `op` over every contribution.
    Reduce(RmwOp),
    /// `work_group_scan_inclusive_<op>`: `op` over the contributions of the
    /// work-items with a local id up to and including the caller's.
    ScanInclusive(RmwOp),
    /// `work_group_scan_exclusive_<op>`: `op` over the contributions of the
    /// work-items with a smaller local id; the identity for the first.
    ScanExclusive(RmwOp),
    /// `work_group_all(predicate)`: whether every contribution is non-zero.
    All,
    /// `work_group_any(predicate)`: whether some contribution is non-zero.
    Any,
}

/// One work-item's part in a collective: the operation, the value type and
/// the value it contributes (as bits, see [`crate::Value`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Collective {
    /// The operation.
    pub op: CollectiveOp,
    /// The type of the values.
    pub ty: NumTy,
    /// This work-item's contribution.
    pub value: u64,
}

impl Collective {
    /// The OpenCL C name of the builtin, for example
    /// `work_group_reduce_add` or `sub_group_broadcast`.
    pub fn cl_name(&self, kind: BarrierKind) -> String {
        let prefix = match kind {
            BarrierKind::WorkGroup => "work_group",
            BarrierKind::SubGroup => "sub_group",
        };
        let op = |o: RmwOp| o.cl_name().trim_start_matches("atomic_fetch_");
        match self.op {
            CollectiveOp::Broadcast { .. } => format!("{prefix}_broadcast"),
            CollectiveOp::Reduce(o) => format!("{prefix}_reduce_{}", op(o)),
            CollectiveOp::ScanInclusive(o) => format!("{prefix}_scan_inclusive_{}", op(o)),
            CollectiveOp::ScanExclusive(o) => format!("{prefix}_scan_exclusive_{}", op(o)),
            CollectiveOp::All => format!("{prefix}_all"),
            CollectiveOp::Any => format!("{prefix}_any"),
        }
    }

    /// The call as the user wrote it, for messages (a `kind` collective):
    /// `work_group_broadcast from local id 0 (uint)`,
    /// `sub_group_reduce_add (float)`.
    pub fn named(&self, kind: BarrierKind) -> NamedCollective {
        NamedCollective { collective: *self, kind }
    }

    /// The result of the collective for the member at position `me`, given
    /// every member's part in local-id order (the same computation natively
    /// and in the checker). Reductions and scans combine left to right in
    /// local-id order (OpenCL leaves the order of floating-point operations
    /// unspecified; this is one of the allowed orders). An error when the
    /// members did not call the same collective (another operation, type,
    /// or broadcast source: "all work-items must encounter exactly the same
    /// work-group function") or a broadcast source is out of range; `kind`
    /// (work-group or sub-group) names the calls in it.
    pub fn result(all: &[Collective], me: usize, kind: BarrierKind) -> Result<u64, String> {
        let first = all.first().ok_or_else(|| "a collective without members".to_string())?;
        if let Some(other) = all.iter().find(|c| c.op != first.op || c.ty != first.ty) {
            return Err(format!("not the same collective: {} and {}", first.named(kind), other.named(kind)));
        }
        let ty = first.ty;
        let fold = |init: Option<u64>, op: RmwOp, upto: usize| -> u64 {
            let mut vals = all[..upto].iter().map(|c| c.value);
            let start = match init {
                Some(v) => v,
                None => vals.next().expect("a non-empty prefix"),
            };
            vals.fold(start, |acc, v| op.apply(ty, acc, v))
        };
        Ok(match first.op {
            CollectiveOp::Broadcast { source } => {
                all.get(source as usize).map(|c| c.value).ok_or_else(|| format!("broadcast from local id {source}, but only {} work-items take part", all.len()))?
            }
            CollectiveOp::Reduce(op) => fold(None, op, all.len()),
            CollectiveOp::ScanInclusive(op) => fold(None, op, me + 1),
            CollectiveOp::ScanExclusive(op) => fold(Some(identity(op, ty)), op, me),
            CollectiveOp::All => all.iter().all(|c| c.value != 0) as u64,
            CollectiveOp::Any => all.iter().any(|c| c.value != 0) as u64,
        })
    }
}

/// A [`Collective`] with its kind, displayed as the user's call (without
/// the contributed value): the builtin's name, a broadcast's source, and the
/// OpenCL C value type. Error messages use it rather than the Debug form of
/// the internal types.
#[derive(Clone, Copy, Debug)]
pub struct NamedCollective {
    collective: Collective,
    kind: BarrierKind,
}

impl std::fmt::Display for NamedCollective {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.collective;
        write!(f, "{}", c.cl_name(self.kind))?;
        if let CollectiveOp::Broadcast { source } = c.op {
            let id = match self.kind {
                BarrierKind::WorkGroup => "local id",
                BarrierKind::SubGroup => "sub-group local id",
            };
            write!(f, " from {id} {source}")?;
        }
        write!(f, " ({})", c.ty.cl_name())
    }
}

/// The identity of `op` on `ty` (the first result of an exclusive scan):
/// 0 for add, the type's largest value for min (+inf for float), its
/// smallest for max (-inf for float).
fn identity(op: RmwOp, ty: NumTy) -> u64 {
    use NumTy::*;
    match (op, ty) {
        (RmwOp::Min, U32) => u32::MAX as u64,
        (RmwOp::Min, I32) => i32::MAX as u32 as u64,
        (RmwOp::Min, U64) => u64::MAX,
        (RmwOp::Min, I64) => i64::MAX as u64,
        (RmwOp::Min, F32) => f32::INFINITY.to_bits() as u64,
        (RmwOp::Max, U32 | U64) => 0,
        (RmwOp::Max, I32) => i32::MIN as u32 as u64,
        (RmwOp::Max, I64) => i64::MIN as u64,
        (RmwOp::Max, F32) => f32::NEG_INFINITY.to_bits() as u64,
        (RmwOp::Add, _) => 0,
        (other, _) => panic!("clmm: no identity for {other:?} in a collective"),
    }
}

/// The checker's answer to an [`Op`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// The value read (loads, RMWs, CAS), the result of a collective (at
    /// its barrier's exit); 0 otherwise.
    pub value: u64,
    /// For a CAS, whether it succeeded; `true` otherwise.
    pub ok: bool,
}

/// Where newly allocated memory lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AllocRegion {
    /// Global memory (the default).
    Global,
    /// The local memory of the work-group whose local initialiser is running.
    Local,
    /// Fine-grained SVM with atomics support (`global_fga` in litmus tests;
    /// `SvmBuffer::fine`, `AtomicU32::new_svm`).
    GlobalFga,
    /// Coarse-grained SVM (`SvmBuffer::coarse`): global memory the host
    /// shares with kernels, consistent only at synchronisation points.
    SvmCoarse,
    /// Fine-grained SVM without atomics support
    /// (`SvmBuffer::fine_without_atomics`): shared with kernels element by
    /// element, consistent only at synchronisation points.
    SvmFine,
    /// Neither global nor local: herd's unqualified pointers (litmus
    /// compatibility only).
    Unqualified,
    /// Host memory (`HostBuffer`): only host threads and the buffer
    /// commands that copy to and from it touch it. The model treats it as
    /// global memory (plain memory that is not SVM); reports name it host
    /// memory.
    Host,
}

/// The interface a checker implements (DESIGN.md §2). Object safe: the active
/// backend is a `&dyn Backend` installed for the duration of a model run.
pub trait Backend {
    /// Allocate `len` consecutive locations with initial values `init(i)`.
    /// `atomic` locations are atomic objects (`nonatomicloc` is false).
    fn alloc(
        &self,
        region: AllocRegion,
        len: usize,
        atomic: bool,
        init: &mut dyn FnMut(usize) -> u64,
        site: &'static Location<'static>,
    ) -> LocId;
    /// Name the allocation that starts at `loc` in reports (a litmus
    /// test's variable) instead of by its allocation site. The default
    /// ignores the name.
    fn label(&self, loc: LocId, name: &'static str) {
        let _ = (loc, name);
    }
    /// Perform one operation of the running unit and return the checker's
    /// choice.
    fn op(&self, op: Op, site: &'static Location<'static>) -> Reply;
    /// Run a kernel: `local_init(g)` once for each work-group `g` of the
    /// plan (with allocations landing in that group's local memory), then
    /// `kernel` on every work-item as a unit of execution; return when all
    /// are done (enqueue + finish).
    fn launch(
        &self,
        plan: &LaunchPlan,
        local_init: &mut dyn FnMut(usize),
        kernel: &(dyn Fn(&crate::WorkItem) + Sync),
        site: &'static Location<'static>,
    );
    /// Whether allocations currently go to local memory (inside a local
    /// initialiser).
    fn in_local_init(&self) -> bool;
    /// A host-side operation (host threads, command queues, events; see
    /// [`HostOp`]). Returns the handle the operation creates (0 when it
    /// creates none), or a usage error for the caller to panic with.
    fn host(&self, op: HostOp<'_>, site: &'static Location<'static>) -> Result<u64, String>;
}

/// What a command enqueued on a command queue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Command {
    /// `clEnqueueNDRangeKernel`: its body launches the kernel.
    Kernel,
    /// `clEnqueueMarkerWithWaitList`.
    Marker,
    /// `clEnqueueBarrierWithWaitList`.
    Barrier,
    /// `clEnqueueReadBuffer` / `clEnqueueSVMMemcpy` to host memory.
    ReadBuffer,
    /// `clEnqueueWriteBuffer` / `clEnqueueSVMMemcpy` from host memory.
    WriteBuffer,
    /// `clEnqueueMapBuffer` / `clEnqueueSVMMap`.
    Map,
    /// `clEnqueueUnmapMemObject` / `clEnqueueSVMUnmap`.
    Unmap,
}

impl Command {
    /// The OpenCL name of what the command does, for reports.
    pub fn name(self) -> &'static str {
        match self {
            Command::Kernel => "kernel",
            Command::Marker => "marker",
            Command::Barrier => "barrier",
            Command::ReadBuffer => "read buffer",
            Command::WriteBuffer => "write buffer",
            Command::Map => "map",
            Command::Unmap => "unmap",
        }
    }
}

/// When a kernel enqueued by a kernel (device-side enqueue, OpenCL C
/// `enqueue_kernel`) may start, relative to its parent:
/// `kernel_enqueue_flags_t`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EnqueueFlags {
    /// `CLK_ENQUEUE_FLAGS_NO_WAIT`: once the events of its wait list are
    /// complete, possibly while the parent still runs. Only the parent's
    /// fine-grained SVM updates before the enqueue are ordered before it
    /// (rule 1 for device-side queues).
    NoWait,
    /// `CLK_ENQUEUE_FLAGS_WAIT_KERNEL`: after the parent kernel has ended,
    /// every work-group of it finished (rule 13: "the end state of the
    /// parent kernel instance global-synchronizes-with C").
    WaitKernel,
    /// `CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP`: after the enqueuing work-group
    /// has finished (rule 14: "the end state of the work-group
    /// global-synchronizes-with C").
    WaitWorkGroup,
}

impl EnqueueFlags {
    /// The OpenCL C name of the flag.
    pub fn cl_name(self) -> &'static str {
        match self {
            EnqueueFlags::NoWait => "CLK_ENQUEUE_FLAGS_NO_WAIT",
            EnqueueFlags::WaitKernel => "CLK_ENQUEUE_FLAGS_WAIT_KERNEL",
            EnqueueFlags::WaitWorkGroup => "CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP",
        }
    }
}

/// Handles of host-side objects (`u64`): a host thread or a command is
/// named by its unit, a user event by `USER_EVENT | key`.
pub const USER_EVENT: u64 = 1 << 63;

/// Set in the answer to [`HostOp::CurrentUnit`] when the calling unit is a
/// work-item.
pub const WORK_ITEM: u64 = 1 << 63;

/// A host-side operation of a unit: host threads, command queues and events
/// (spec excerpt `004_8d269728d13116e5.txt`, §3.2.1 command-queues, §3.2.4
/// synchronisation points, "memory ordering rules: host-side and
/// device-side commands").
pub enum HostOp<'a> {
    /// Start a host thread running `body` (returns the thread's handle).
    Spawn {
        /// The key of the host scope it belongs to (joined at its end).
        scope: u64,
        /// For an event callback (`clSetEventCallback`), the event's
        /// handle: the thread's body begins with
        /// [`HostOp::CallbackStart`].
        callback: Option<u64>,
        /// What the thread runs.
        body: Box<dyn FnOnce() + 'a>,
    },
    /// Wait until the host thread with this handle has finished.
    Join(u64),
    /// Create a command queue on `device` (returns its handle; no event).
    NewQueue {
        /// The key of the host scope it belongs to (finished at its end).
        scope: u64,
        /// The device of the queue.
        device: u32,
        /// In-order (`true`) or out-of-order execution.
        in_order: bool,
    },
    /// Enqueue a command (returns the handle of its event). The command
    /// runs `body` as a unit of its own once it starts; `body` begins with
    /// [`HostOp::CommandStart`].
    Enqueue {
        /// The queue's handle.
        queue: u64,
        /// The command's position in the queue's enqueue order: the value
        /// the enqueuing thread read from the queue's enqueue counter with
        /// an atomic increment just before (several host threads may
        /// enqueue on one queue; the explorer enumerates the orders).
        index: u64,
        /// What the command is.
        command: Command,
        /// The events it waits for (its wait list).
        wait: &'a [u64],
        /// What the command does.
        body: Box<dyn FnOnce() + 'a>,
    },
    /// Create a device-side command queue on `device` (returns its handle;
    /// no event): the queue work-items enqueue child kernels and markers on.
    NewDeviceQueue {
        /// The device of the queue.
        device: u32,
    },
    /// A work-item enqueueing a command on a device-side queue (returns
    /// the handle of its event). The command runs `body` as a unit of its
    /// own once it starts; `body` begins with [`HostOp::CommandStart`].
    /// Device-side queues are out-of-order.
    DeviceEnqueue {
        /// The device queue's handle.
        queue: u64,
        /// When the command may start relative to the enqueuing kernel.
        flags: EnqueueFlags,
        /// A kernel or a marker.
        command: Command,
        /// The events it waits for (device-side events of the same
        /// kernel family).
        wait: &'a [u64],
        /// What the command does.
        body: Box<dyn FnOnce() + 'a>,
    },
    /// The first operation of a command's body: returns once every event
    /// the command waits for is complete.
    CommandStart,
    /// The first operation of an event callback's body: returns once its
    /// event is complete.
    CallbackStart,
    /// `clCreateUserEvent` (returns its handle; no event).
    NewUserEvent,
    /// Which unit is calling (no event): its id, with [`WORK_ITEM`] set for
    /// a work-item.
    CurrentUnit,
    /// `clSetUserEventStatus(event, CL_COMPLETE)`.
    SetComplete(u64),
    /// `clWaitForEvents`.
    Wait(&'a [u64]),
    /// `clFinish` on a queue: waits for the commands enqueued before it.
    Finish {
        /// The queue's handle.
        queue: u64,
        /// How many commands were enqueued before it: the value the
        /// finishing thread read from the queue's enqueue counter.
        upto: u64,
    },
    /// The end of a host scope (`clmm::host::scope`): waits for the threads
    /// it spawned and the commands of the queues created in it. The key
    /// names the scope.
    ScopeEnd(u64),
}

thread_local! {
    static CURRENT: Cell<Option<*const (dyn Backend + 'static)>> = const { Cell::new(None) };
}

/// Run `f` with `backend` as the active backend of this thread.
///
/// The checker calls this around a model run; user code never needs it.
pub fn with_backend<R>(backend: &dyn Backend, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<*const (dyn Backend + 'static)>);
    impl Drop for Restore {
        fn drop(&mut self) {
            CURRENT.with(|c| c.set(self.0));
        }
    }
    // SAFETY: the pointer is only dereferenced while `f` runs (the guard
    // restores the previous value before `backend` can be dropped).
    let ptr: *const (dyn Backend + '_) = backend;
    let ptr: *const (dyn Backend + 'static) = unsafe { std::mem::transmute(ptr) };
    let _restore = Restore(CURRENT.with(|c| c.replace(Some(ptr))));
    f()
}

/// The active backend, if a model run is in progress on this thread.
pub fn current() -> Option<&'static dyn Backend> {
    // SAFETY: see `with_backend`: the pointer is valid while installed.
    CURRENT.with(|c| c.get()).map(|p| unsafe { &*p })
}

/// Whether a model run is active on this thread.
pub fn in_model() -> bool {
    CURRENT.with(|c| c.get()).is_some()
}
