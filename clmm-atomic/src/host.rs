//! The host side: host threads, contexts with devices, command queues,
//! events and user events (spec excerpt `004_8d269728d13116e5.txt`, §3.2.1
//! "command-queues", §3.2.4 "synchronisation points" and "memory ordering
//! rules: host-side and device-side commands").
//!
//! ```
//! use clmm_atomic::host::{self, Context, QueueOrder};
//! use clmm_atomic::{NdRange, SvmBuffer};
//!
//! // (Natively here; the same code inside `clmm::model` is model-checked.)
//! let data = SvmBuffer::<u32>::coarse(1);
//! let ctx = Context::new(1);
//! host::scope(|s| {
//!     let q = s.queue(&ctx, 0, QueueOrder::OutOfOrder);
//!     data.write(0, 1); // before the enqueue: visible to the kernel
//!     let done = q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| {
//!         assert_eq!(data.read(0), 1);
//!         data.write(0, 2);
//!     });
//!     done.wait(); // the kernel's writes are visible after the wait
//!     assert_eq!(data.read(0), 2);
//! });
//! ```
//!
//! Inside `clmm::model` every host thread and every command is a unit of
//! execution of the checker, and each synchronisation rule of the
//! specification is a global-synchronises-with edge (see
//! `clmm_check::model::host`); commands that no rule orders run
//! concurrently, and the checker explores them so. Outside, host threads
//! are real threads (`std::thread::scope`) and each command runs on a
//! thread of its own once the events it waits for are complete.
//!
//! Kernels enqueue child kernels on a [`DeviceQueue`] (device-side
//! enqueue, OpenCL C `enqueue_kernel` with `CLK_ENQUEUE_FLAGS_NO_WAIT`,
//! `WAIT_KERNEL` or `WAIT_WORK_GROUP`, and `enqueue_marker`); a kernel
//! completes only after its children.
//!
//! Queues and events may be shared by host threads: several threads may
//! enqueue on one queue (in the model each enqueue takes the queue's next
//! position with an atomic increment of a counter of the queue's own, and
//! the checker explores every order of the enqueues of different threads,
//! as it explores any other concurrency); events may be waited on and set
//! by any host thread.

use crate::backend::{self, Access, AllocRegion, Command, HostOp, LocId, Mode, Op};
use crate::buffer::{HostBuffer, MemKind, MemObject};
use crate::value::Value;
use crate::order::{Order, Scope as MemScope};
use crate::value::{NumTy, RmwOp};
use crate::launch::{launch_plan, NativeEvent, Range, SetOnDrop};
use crate::ndrange::WorkItem;
use std::panic::Location;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Hand a host operation to the checker; its refusal (a usage error the
/// checker found) panics at the user's call (`#[track_caller]` here and
/// along every path from the public API).
#[track_caller]
pub(crate) fn call(op: HostOp<'_>, site: &'static Location<'static>) -> u64 {
    let b = backend::current().expect("clmm: a host operation outside a model run");
    match b.host(op, site) {
        Ok(v) => v,
        Err(e) => panic!("clmm: {e}"),
    }
}

/// A scope for host threads and command queues, like
/// [`std::thread::scope`]: threads and kernels may borrow from outside it,
/// and it returns once every thread spawned in it has finished and every
/// command enqueued on its queues is complete.
#[repr(transparent)]
pub struct Scope<'scope, 'env: 'scope> {
    inner: std::thread::Scope<'scope, 'env>,
}

/// Create a [`Scope`] for host threads and command queues (the model
/// closure is the first host thread). Returns what `f` returns, after
/// joining every thread spawned in the scope and waiting for every command
/// enqueued on its queues.
#[track_caller]
pub fn scope<'env, F, T>(f: F) -> T
where
    F: for<'scope> FnOnce(&'scope Scope<'scope, 'env>) -> T,
{
    let site = Location::caller();
    std::thread::scope(|s| {
        // SAFETY: `Scope` is `repr(transparent)` over `std::thread::Scope`.
        let ours: &Scope<'_, 'env> = unsafe { &*(s as *const std::thread::Scope<'_, 'env> as *const Scope<'_, 'env>) };
        let r = f(ours);
        if backend::in_model() {
            call(HostOp::ScopeEnd(ours.key()), site);
        }
        r
    })
}

impl<'scope, 'env> Scope<'scope, 'env> {
    fn key(&self) -> u64 {
        self as *const Self as usize as u64
    }

    /// Spawn a host thread running `f` (in the model: a unit of execution
    /// outside every device; it may touch global and SVM memory, never
    /// local memory).
    #[track_caller]
    pub fn spawn<F, T>(&'scope self, f: F) -> JoinHandle<'scope, T>
    where
        F: FnOnce() -> T + Send + 'scope,
        T: Send + 'scope,
    {
        if !backend::in_model() {
            return JoinHandle { imp: JoinImp::Native(self.inner.spawn(f)) };
        }
        let slot: Arc<Mutex<Option<T>>> = Arc::new(Mutex::new(None));
        let out = slot.clone();
        let body: Box<dyn FnOnce() + 'scope> = Box::new(move || {
            let r = f();
            *out.lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        });
        let id = call(HostOp::Spawn { scope: self.key(), callback: None, body }, Location::caller());
        JoinHandle { imp: JoinImp::Model { id, slot } }
    }

    /// `clSetEventCallback(event, CL_COMPLETE, ...)`: run `f` once `event`
    /// is complete, as a host thread of its own (spec rule 11: "if a
    /// callback procedure P is registered on an event E, then E
    /// global-synchronizes-with all operations of P"; and, as for
    /// [`Scope::spawn`], the registration happens before P). The scope's
    /// end waits for the callback, so a callback on an event that never
    /// completes (a user event never set) is reported as a deadlock.
    /// Blocking OpenCL calls in a callback (`Event::wait`,
    /// `wait_for_events`, `finish`, blocking reads, writes and maps) are
    /// undefined behaviour in OpenCL and reported.
    #[track_caller]
    pub fn set_event_callback<F>(&'scope self, event: &Event, f: F)
    where
        F: FnOnce() + Send + 'scope,
    {
        let site = Location::caller();
        match &event.core.imp {
            EventImp::Native(n) => {
                let n = n.clone();
                self.inner.spawn(move || {
                    n.wait();
                    f();
                });
            }
            EventImp::Model(h) => {
                let body: Box<dyn FnOnce() + 'scope> = Box::new(move || {
                    call(HostOp::CallbackStart, site);
                    f();
                });
                call(HostOp::Spawn { scope: self.key(), callback: Some(*h), body }, site);
            }
        }
    }

    /// A command queue of `context` on `device`, in-order or out-of-order
    /// (`clCreateCommandQueueWithProperties`). Panics if the context has no
    /// such device.
    #[track_caller]
    pub fn queue(&'scope self, context: &Context, device: usize, order: QueueOrder) -> Queue<'scope, 'env> {
        context.check_device(device);
        let imp = if let Some(b) = backend::current() {
            let site = Location::caller();
            let q = call(HostOp::NewQueue { scope: self.key(), device: device as u32, in_order: order == QueueOrder::InOrder }, site);
            // The queue's enqueue counter: fine-grained SVM with atomics, so
            // that the relaxed all-svm-devices increments of host threads
            // are inclusive and never race.
            let counter = b.alloc(AllocRegion::GlobalFga, 1, true, &mut |_| 0, site);
            // Named as what it is in traces, not as a user's atomic
            // allocated at the `queue` call.
            b.label(counter, "a command queue's enqueue counter");
            QueueImp::Model { handle: q, counter }
        } else {
            QueueImp::Native(Arc::new(Mutex::new(NativeQueue::default())))
        };
        Queue { scope: self, context: context.id, device, order, imp }
    }
}

/// The handle of a host thread spawned with [`Scope::spawn`].
pub struct JoinHandle<'scope, T> {
    imp: JoinImp<'scope, T>,
}

enum JoinImp<'scope, T> {
    Native(std::thread::ScopedJoinHandle<'scope, T>),
    Model { id: u64, slot: Arc<Mutex<Option<T>>> },
}

impl<T> JoinHandle<'_, T> {
    /// Wait for the thread to finish and return its result (a panic of the
    /// thread is propagated; in the model it is reported as a failure).
    #[track_caller]
    pub fn join(self) -> T {
        match self.imp {
            JoinImp::Native(h) => h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)),
            JoinImp::Model { id, slot } => {
                call(HostOp::Join(id), Location::caller());
                let r = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
                r.expect("clmm: a joined host thread has no result")
            }
        }
    }
}

static NEXT_CONTEXT: AtomicU64 = AtomicU64::new(1);

/// An OpenCL context: a set of devices sharing memory objects, queues and
/// events (`clCreateContext`). Events of one context cannot be waited on
/// with events or queues of another.
#[derive(Clone, Debug)]
pub struct Context {
    id: u64,
    devices: usize,
}

impl Context {
    /// A context with `devices` devices (numbered from 0).
    #[track_caller]
    pub fn new(devices: usize) -> Context {
        if devices == 0 {
            panic!("clmm: a context needs at least one device");
        }
        Context { id: NEXT_CONTEXT.fetch_add(1, Ordering::Relaxed), devices }
    }

    /// Its number of devices.
    pub fn devices(&self) -> usize {
        self.devices
    }

    #[track_caller]
    fn check_device(&self, device: usize) {
        if device >= self.devices {
            panic!("clmm: device {device} does not exist: the context has {} device(s) (CL_INVALID_DEVICE)", self.devices);
        }
    }

    /// A user event (`clCreateUserEvent`): complete once
    /// [`UserEvent::set_complete`] is called. A command waiting for a user
    /// event that is never set never starts (reported as a deadlock).
    #[track_caller]
    pub fn user_event(&self) -> UserEvent {
        let imp = if backend::in_model() {
            EventImp::Model(call(HostOp::NewUserEvent, Location::caller()))
        } else {
            EventImp::Native(Arc::new(NativeEvent::default()))
        };
        UserEvent { event: Event { core: EventCore { context: self.id, imp } } }
    }
}

impl Default for Context {
    fn default() -> Context {
        Context::new(1)
    }
}

/// An event (`cl_event`): the completion of a command, or a user event.
#[derive(Clone)]
pub struct Event {
    core: EventCore,
}

/// What an [`Event`] and a [`ClkEvent`] hold (the two differ only in
/// their wait lists): the event's context, and the checker's handle of the
/// event (model runs) or the native event.
#[derive(Clone)]
struct EventCore {
    context: u64,
    imp: EventImp,
}

#[derive(Clone)]
enum EventImp {
    Model(u64),
    Native(Arc<NativeEvent>),
}

impl EventCore {
    /// `Debug` of an event, as `name(handle)` or `name(native)`.
    fn fmt_as(&self, name: &str, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.imp {
            EventImp::Model(h) => write!(f, "{name}({h:#x})"),
            EventImp::Native(_) => write!(f, "{name}(native)"),
        }
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt_as("Event", f)
    }
}

impl Event {
    /// Block until the event is complete (`clWaitForEvents(1, &e)`): the
    /// command's memory operations happen before what follows.
    #[track_caller]
    pub fn wait(&self) {
        wait_inner(std::slice::from_ref(self), Location::caller())
    }
}

/// `clWaitForEvents`: block until every event is complete. Panics if they
/// belong to different contexts (`CL_INVALID_CONTEXT`).
#[track_caller]
pub fn wait_for_events(events: &[Event]) {
    wait_inner(events, Location::caller())
}

/// [`Event`] and [`ClkEvent`], for [`wait_list`].
trait HasCore {
    fn core(&self) -> &EventCore;
}

impl HasCore for Event {
    fn core(&self) -> &EventCore {
        &self.core
    }
}

impl HasCore for ClkEvent {
    fn core(&self) -> &EventCore {
        &self.core
    }
}

/// A wait list whose events all belong to one context.
struct WaitList<'a, E>(&'a [E]);

/// The wait list `events` of `what` (an OpenCL call or command, for the
/// message), checked: panics (with OpenCL's error `code`) unless every
/// event belongs to `context`.
#[track_caller]
fn wait_list<'a, E: HasCore>(events: &'a [E], context: u64, what: &str, code: &str) -> WaitList<'a, E> {
    if let Some(i) = events.iter().position(|e| e.core().context != context) {
        panic!("clmm: {what}: event {i} belongs to another context ({code})");
    }
    WaitList(events)
}

impl<E: HasCore> WaitList<'_, E> {
    /// The checker's handles of the events (a model run). A loop, not a
    /// closure, so that a misuse panics at the user's call.
    #[track_caller]
    fn handles(&self) -> Vec<u64> {
        let mut v = Vec::with_capacity(self.0.len());
        for e in self.0 {
            v.push(e.core().imp.handle());
        }
        v
    }
    /// The native events (a native run).
    #[track_caller]
    fn natives(&self) -> Vec<Arc<NativeEvent>> {
        let mut v = Vec::with_capacity(self.0.len());
        for e in self.0 {
            v.push(e.core().imp.native());
        }
        v
    }
}

impl EventImp {
    /// The checker's handle of an event of this model run.
    #[track_caller]
    fn handle(&self) -> u64 {
        match self {
            EventImp::Model(h) => *h,
            EventImp::Native(_) => panic!("clmm: an event created outside this model run"),
        }
    }
    /// The event of a native run.
    #[track_caller]
    fn native(&self) -> Arc<NativeEvent> {
        match self {
            EventImp::Native(n) => n.clone(),
            EventImp::Model(_) => panic!("clmm: an event of a model run used outside it"),
        }
    }
}

/// Run a native command on a thread of `scope`: wait for `deps`, run
/// `body`, then set `done` (also when `body` panics, so that nobody waits
/// forever).
fn spawn_native<'scope>(scope: &'scope std::thread::Scope<'scope, '_>, done: Arc<NativeEvent>, deps: Vec<Arc<NativeEvent>>, body: Box<dyn FnOnce() + Send + 'scope>) {
    scope.spawn(move || {
        let _complete = SetOnDrop(done);
        for d in deps {
            d.wait();
        }
        body();
    });
}

/// The body of a command: in the model it first waits to start (until
/// every event the command waits for is complete), then runs `f`.
fn command_body<'scope>(site: &'static Location<'static>, f: impl FnOnce() + Send + 'scope) -> Box<dyn FnOnce() + Send + 'scope> {
    let model = backend::in_model();
    Box::new(move || {
        if model {
            call(HostOp::CommandStart, site);
        }
        f();
    })
}

/// `clWaitForEvents` on `events`, for [`Event::wait`],
/// [`wait_for_events`] and blocking commands.
#[track_caller]
fn wait_inner(events: &[Event], site: &'static Location<'static>) {
    // The events must share the first one's context (an empty list has
    // nothing to check).
    let context = events.first().map_or(0, |e| e.core.context);
    let list = wait_list(events, context, "clWaitForEvents", "CL_INVALID_CONTEXT");
    if backend::in_model() {
        call(HostOp::Wait(&list.handles()), site);
    } else {
        for e in list.natives() {
            e.wait();
        }
    }
}

/// A user event (`clCreateUserEvent`), created with
/// [`Context::user_event`].
pub struct UserEvent {
    event: Event,
}

impl UserEvent {
    /// The event, for wait lists and waits.
    pub fn event(&self) -> Event {
        self.event.clone()
    }

    /// `clSetUserEventStatus(e, CL_COMPLETE)`: the calling thread's earlier
    /// operations happen before the commands waiting for it. Setting it
    /// twice panics (`CL_INVALID_OPERATION`).
    #[track_caller]
    pub fn set_complete(&self) {
        match &self.event.core.imp {
            EventImp::Model(h) => {
                call(HostOp::SetComplete(*h), Location::caller());
            }
            EventImp::Native(n) => {
                if !n.set() {
                    panic!("clmm: user event set complete twice (CL_INVALID_OPERATION)");
                }
            }
        }
    }
}

/// How a region is mapped (`cl_map_flags` of `clEnqueueMapBuffer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapFlags {
    /// `CL_MAP_READ`: the host only reads the region; the unmap copies
    /// nothing back, and writing through the mapping panics.
    Read,
    /// `CL_MAP_WRITE`: the region is copied in (OpenCL guarantees its
    /// contents) and written back by the unmap; like `ReadWrite`.
    Write,
    /// `CL_MAP_READ | CL_MAP_WRITE`.
    ReadWrite,
    /// `CL_MAP_WRITE_INVALIDATE_REGION`: nothing is copied in (the contents
    /// are undefined until written: reading an element through the mapping
    /// before writing it panics); the unmap writes the region back.
    WriteInvalidateRegion,
}

/// A mapped region of a buffer ([`Queue::enqueue_map_buffer`]): host
/// memory standing for elements `offset..offset + len` of the buffer,
/// indexed from 0, until it is passed to [`Queue::enqueue_unmap`]. Used by
/// one host thread at a time (it is `Send`, not `Sync`).
pub struct Mapped<'scope, T: Value> {
    buffer: &'scope dyn MemObject<T>,
    /// The host copy (`None` for a fine-grained SVM buffer: the buffer
    /// itself).
    copy: Option<Arc<HostBuffer<T>>>,
    id: u64,
    offset: usize,
    len: usize,
    flags: MapFlags,
    event: Event,
    context: u64,
    /// For `WriteInvalidateRegion`: the elements written so far.
    written: std::cell::RefCell<Vec<bool>>,
    /// Where it was mapped, for the panic of a mapping dropped without
    /// its unmap.
    site: &'static Location<'static>,
    /// Passed to [`Queue::enqueue_unmap`].
    unmapped: bool,
}

/// A mapping dropped without [`Queue::enqueue_unmap`] leaves the buffer
/// mapped: the host's writes to it never reach the buffer, and in OpenCL a
/// command that then reads or writes the region is undefined. It panics
/// (unless the thread is already unwinding) instead of losing the writes
/// silently, as it did until a user-acceptance run found it (session 56).
impl<T: Value> Drop for Mapped<'_, T> {
    fn drop(&mut self) {
        if !self.unmapped && !std::thread::panicking() {
            panic!(
                "clmm: the mapping of elements {}..{} made at {}:{} was dropped without enqueue_unmap: the buffer stays mapped, the host's writes through the mapping never reach it, and a command that then reads or writes the region is undefined in OpenCL",
                self.offset,
                self.offset + self.len,
                self.site.file(),
                self.site.line()
            );
        }
    }
}

impl<T: Value> Mapped<'_, T> {
    /// The map command's event: the mapping may be touched once it is
    /// complete (after a blocking map, at once).
    pub fn event(&self) -> Event {
        self.event.clone()
    }
    /// Number of elements mapped.
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether no element is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The flags it was mapped with.
    pub fn flags(&self) -> MapFlags {
        self.flags
    }
    #[track_caller]
    fn check(&self, i: usize) {
        if i >= self.len {
            panic!("clmm: mapped element {i} out of bounds (the mapping has {} element(s))", self.len);
        }
    }
    /// Read element `i` of the mapping (element `offset + i` of the
    /// buffer): a non-atomic host read.
    #[track_caller]
    pub fn read(&self, i: usize) -> T {
        self.check(i);
        if self.flags == MapFlags::WriteInvalidateRegion && !self.written.borrow()[i] {
            panic!("clmm: mapped element {i} read before it was written: the region was mapped with CL_MAP_WRITE_INVALIDATE_REGION, so its contents are undefined until the host writes them");
        }
        match &self.copy {
            Some(c) => c.read_at(i, Location::caller()),
            None => self.buffer.mem_read(self.offset + i, Location::caller()),
        }
    }
    /// Write element `i` of the mapping: a non-atomic host write, copied
    /// into the buffer by the unmap. Panics for a read-only mapping.
    #[track_caller]
    pub fn write(&self, i: usize, v: T) {
        self.check(i);
        if self.flags == MapFlags::Read {
            panic!("clmm: mapped element {i} written through a mapping made with MapFlags::Read (CL_MAP_READ): the unmap does not copy it back; map with MapFlags::Write");
        }
        if let Some(w) = self.written.borrow_mut().get_mut(i) {
            *w = true;
        }
        match &self.copy {
            Some(c) => c.write_at(i, v, Location::caller()),
            None => self.buffer.mem_write(self.offset + i, v, Location::caller()),
        }
    }
}

impl<T: Value> std::fmt::Debug for Mapped<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Mapped({:?}, elements {}..{})", self.flags, self.offset, self.offset + self.len)
    }
}

/// A key for the calling OS thread (native runs).
fn native_thread_key() -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    std::thread::current().id().hash(&mut h);
    h.finish()
}

/// In-order or out-of-order execution of a [`Queue`]
/// (`CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueOrder {
    /// Each command starts after the previous one completed.
    InOrder,
    /// Commands are ordered only by wait lists, markers and barriers.
    OutOfOrder,
}

#[derive(Default)]
struct NativeQueue {
    commands: Vec<Arc<NativeEvent>>,
    barrier: Option<Arc<NativeEvent>>,
}

#[derive(Clone)]
enum QueueImp {
    /// The checker's handle, and the queue's enqueue counter.
    Model { handle: u64, counter: LocId },
    Native(Arc<Mutex<NativeQueue>>),
}

/// An access to a queue's enqueue counter: relaxed, at all-svm-devices
/// scope (it orders nothing; the command rules do).
#[track_caller]
fn counter_op(counter: LocId, access: Access, site: &'static Location<'static>) -> u64 {
    let op = Op::Mem { loc: counter, access, mode: Mode::Atomic(Order::Relaxed, MemScope::AllSvmDevices) };
    backend::current().expect("clmm: a host operation outside a model run").op(op, site).value
}

/// The body of a kernel command on `device` (host-side or device-side):
/// in the model it first waits to start, then launches `kernel` over
/// `range` on that device. An invalid range panics at the enqueue.
#[track_caller]
fn kernel_command<'scope, L, I, F>(range: impl Range, device: usize, init: I, kernel: F, site: &'static Location<'static>) -> Box<dyn FnOnce() + Send + 'scope>
where
    L: Send + Sync,
    I: Fn(&crate::WorkGroup) -> L + Send + 'scope,
    F: Fn(&WorkItem, &L) + Send + Sync + 'scope,
{
    let mut plan = range.to_plan();
    for g in &mut plan.groups {
        g.device += device;
    }
    for it in &mut plan.items {
        it.set_device(it.device() + device);
    }
    command_body(site, move || {
        launch_plan(&plan, init, kernel, site);
    })
}

/// A command queue on one device of a context, created with
/// [`Scope::queue`]. Commands enqueued on it may borrow what the scope may.
/// A clone is another handle to the same queue (`clRetainCommandQueue`),
/// for example for another host thread of the scope.
#[derive(Clone)]
pub struct Queue<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    /// Its context's id (for the context checks of wait lists and unmaps).
    context: u64,
    device: usize,
    order: QueueOrder,
    imp: QueueImp,
}

impl<'scope, 'env> Queue<'scope, 'env> {
    /// The queue's device.
    pub fn device(&self) -> usize {
        self.device
    }

    /// In-order or out-of-order.
    pub fn order(&self) -> QueueOrder {
        self.order
    }

    /// `clEnqueueNDRangeKernel`: run `kernel` on every work-item of `range`
    /// (on this queue's device) once the events of `wait` are complete (and,
    /// on an in-order queue, the previous command). Returns the event of its
    /// completion. The enqueue itself does not wait.
    #[track_caller]
    pub fn enqueue_kernel<F>(&self, range: impl Range, wait: &[Event], kernel: F) -> Event
    where
        F: Fn(&WorkItem) + Send + Sync + 'scope,
    {
        self.enqueue_kernel_with_local(range, wait, |_| (), move |item, _: &()| kernel(item))
    }

    /// [`Queue::enqueue_kernel`] with local memory created once per
    /// work-group by `init`, as in `launch_with_local`.
    #[track_caller]
    pub fn enqueue_kernel_with_local<L, I, F>(&self, range: impl Range, wait: &[Event], init: I, kernel: F) -> Event
    where
        L: Send + Sync,
        I: Fn(&crate::WorkGroup) -> L + Send + 'scope,
        F: Fn(&WorkItem, &L) + Send + Sync + 'scope,
    {
        let site = Location::caller();
        let body = kernel_command(range, self.device, init, kernel, site);
        self.enqueue(Command::Kernel, wait, body, site)
    }

    /// `clEnqueueMarkerWithWaitList`: an event complete once the events of
    /// `wait` are, or with an empty list once every command enqueued before
    /// it is.
    #[track_caller]
    pub fn enqueue_marker(&self, wait: &[Event]) -> Event {
        self.command(Command::Marker, wait, Location::caller(), || {})
    }

    /// `clEnqueueBarrierWithWaitList`: like a marker, and every command
    /// enqueued after it starts only once it is complete.
    #[track_caller]
    pub fn enqueue_barrier(&self, wait: &[Event]) -> Event {
        self.command(Command::Barrier, wait, Location::caller(), || {})
    }

    /// A blocking enqueue returns once its command is complete (an
    /// enqueue followed by a wait on its event, rule 4).
    #[track_caller]
    fn block_if(ev: Event, blocking: bool, site: &'static Location<'static>) -> Event {
        if blocking {
            wait_inner(std::slice::from_ref(&ev), site);
        }
        ev
    }

    /// Enqueue a command whose body (after its start) runs `f`.
    #[track_caller]
    fn command(&self, command: Command, wait: &[Event], site: &'static Location<'static>, f: impl FnOnce() + Send + 'scope) -> Event {
        self.enqueue(command, wait, command_body(site, f), site)
    }

    #[track_caller]
    fn check_region(len: usize, offset: usize, count: usize, what: &str) {
        if offset.checked_add(count).is_none_or(|end| end > len) {
            panic!("clmm: {what}: elements {offset}..{} are out of bounds of a memory object of {len} element(s) (CL_INVALID_VALUE)", offset.saturating_add(count));
        }
    }

    /// `clEnqueueReadBuffer` (for an [`SvmBuffer`](crate::SvmBuffer),
    /// `clEnqueueSVMMemcpy` to host memory): a command that copies
    /// `dst.len()` elements of `buffer`, from element `offset`, into the
    /// host memory `dst`, once the events of `wait` are complete (and, on
    /// an in-order queue, the previous command). It synchronises like any
    /// command (rules 1 to 8): `blocking` returns once it is complete (an
    /// enqueue followed by a wait on its event, rule 4), so the host's
    /// later accesses to `dst` see the copy; a non-blocking read returns at
    /// once, and touching `dst` before waiting for the returned event is a
    /// data race with the command's writes.
    #[track_caller]
    pub fn enqueue_read_buffer<T: Value, B: MemObject<T>>(&self, buffer: &'scope B, blocking: bool, offset: usize, dst: &'scope HostBuffer<T>, wait: &[Event]) -> Event {
        let site = Location::caller();
        Self::check_region(buffer.mem_len(), offset, dst.len(), "enqueue_read_buffer");
        let ev = self.command(Command::ReadBuffer, wait, site, move || {
            for i in 0..dst.len() {
                dst.write_at(i, buffer.mem_read(offset + i, site), site);
            }
        });
        Self::block_if(ev, blocking, site)
    }

    /// `clEnqueueWriteBuffer` (for an [`SvmBuffer`](crate::SvmBuffer),
    /// `clEnqueueSVMMemcpy` from host memory): a command that copies the
    /// host memory `src` into `buffer` from element `offset`. Blocking: the
    /// call returns once the copy is complete; non-blocking: `src` must not
    /// be written before the returned event is complete (a data race with
    /// the command's reads).
    #[track_caller]
    pub fn enqueue_write_buffer<T: Value, B: MemObject<T>>(&self, buffer: &'scope B, blocking: bool, offset: usize, src: &'scope HostBuffer<T>, wait: &[Event]) -> Event {
        let site = Location::caller();
        Self::check_region(buffer.mem_len(), offset, src.len(), "enqueue_write_buffer");
        let ev = self.command(Command::WriteBuffer, wait, site, move || {
            for i in 0..src.len() {
                buffer.mem_write(offset + i, src.read_at(i, site), site);
            }
        });
        Self::block_if(ev, blocking, site)
    }

    /// `clEnqueueMapBuffer` (for an [`SvmBuffer`](crate::SvmBuffer),
    /// `clEnqueueSVMMap`): map elements `offset..offset + len` of `buffer`
    /// into host memory, returning the [`Mapped`] region the host reads and
    /// writes, and whose [`Mapped::event`] is the map command's.
    ///
    /// For a `cl_mem` buffer and a coarse-grained SVM buffer, which are
    /// consistent only at synchronisation points and map/unmap (spec
    /// excerpt `004_8d269728d13116e5.txt`, "shared virtual memory": "visibility
    /// on these allocations is not guaranteed except at map and unmap
    /// operations"), the mapped region is a host copy: the map command
    /// reads the region and writes the copy (it "may overwrite the entire
    /// target region with the latest runtime view of the data", so a
    /// kernel writing the region while the map runs races with it), and
    /// [`Queue::enqueue_unmap`] of a writable mapping is a command that
    /// writes the copy back. With [`MapFlags::WriteInvalidateRegion`] the
    /// map copies nothing in (reading an element before writing it through
    /// the mapping is reported). For a fine-grained SVM buffer the mapping
    /// is the buffer itself and map and unmap only synchronise.
    ///
    /// `blocking` returns once the map is complete; otherwise touching the
    /// mapping before waiting for its event is a data race with the map
    /// command. Mapping a region that overlaps one this thread mapped and
    /// has not unmapped, when either maps for writing, panics
    /// (`CL_INVALID_OPERATION`); overlapping mappings of different threads
    /// conflict through their map and unmap commands (data races) unless
    /// ordered.
    #[track_caller]
    pub fn enqueue_map_buffer<T: Value, B: MemObject<T>>(
        &self,
        buffer: &'scope B,
        blocking: bool,
        flags: MapFlags,
        offset: usize,
        len: usize,
        wait: &[Event],
    ) -> Mapped<'scope, T> {
        let site = Location::caller();
        Self::check_region(buffer.mem_len(), offset, len, "enqueue_map_buffer");
        let owner = if backend::in_model() { crate::buffer::current_unit() } else { native_thread_key() };
        let id = match buffer.mem_maps().map(owner, offset, offset + len, flags != MapFlags::Read) {
            Ok(id) => id,
            Err(e) => panic!("clmm: enqueue_map_buffer: {e}"),
        };
        let copy = (buffer.mem_kind() != MemKind::SvmFine).then(|| Arc::new(HostBuffer::<T>::new(len)));
        // Fine-grained SVM: no copy, the map only synchronises.
        let target = copy.clone();
        let event = self.command(Command::Map, wait, site, move || {
            if let Some(c) = target {
                for i in 0..len {
                    let v = if flags == MapFlags::WriteInvalidateRegion { T::from_bits(0) } else { buffer.mem_read(offset + i, site) };
                    c.write_at(i, v, site);
                }
            }
        });
        let event = Self::block_if(event, blocking, site);
        Mapped {
            buffer,
            copy,
            id,
            offset,
            len,
            flags,
            event,
            context: self.context,
            written: std::cell::RefCell::new(vec![false; if flags == MapFlags::WriteInvalidateRegion { len } else { 0 }]),
            site,
            unmapped: false,
        }
    }

    /// `clEnqueueUnmapMemObject` (`clEnqueueSVMUnmap`): a command that ends
    /// the mapping, once the events of `wait` are complete; for a writable
    /// mapping of a `cl_mem` or coarse-grained SVM buffer it writes the
    /// host copy back into the buffer, so the commands it synchronises
    /// with (an in-order queue, a wait list holding its event) see the
    /// host's writes, and a kernel touching the region unordered with it
    /// races with it. Panics for a mapping of another context
    /// (`CL_INVALID_CONTEXT`).
    #[track_caller]
    pub fn enqueue_unmap<T: Value>(&self, mut mapped: Mapped<'scope, T>, wait: &[Event]) -> Event {
        let site = Location::caller();
        if mapped.context != self.context {
            panic!("clmm: enqueue_unmap: the mapping belongs to another context (CL_INVALID_CONTEXT)");
        }
        mapped.unmapped = true;
        let (buffer, copy, id, offset, len, flags) = (mapped.buffer, mapped.copy.take(), mapped.id, mapped.offset, mapped.len, mapped.flags);
        drop(mapped);
        buffer.mem_maps().unmap(id);
        // A read-only or fine-grained mapping has nothing to write back.
        let source = copy.filter(|_| flags != MapFlags::Read);
        self.command(Command::Unmap, wait, site, move || {
            if let Some(c) = source {
                for i in 0..len {
                    buffer.mem_write(offset + i, c.read_at(i, site), site);
                }
            }
        })
    }

    /// Enqueue a command with its body on this queue (a wait list of
    /// another context panics at the user's enqueue).
    #[track_caller]
    fn enqueue(&self, command: Command, wait: &[Event], body: Box<dyn FnOnce() + Send + 'scope>, site: &'static Location<'static>) -> Event {
        let list = wait_list(wait, self.context, "the wait list of an enqueue", "CL_INVALID_CONTEXT");
        let imp = match &self.imp {
            QueueImp::Model { handle, counter } => {
                let hs = list.handles();
                let index = counter_op(*counter, Access::Rmw(RmwOp::Add, NumTy::U32, 1), site);
                EventImp::Model(call(HostOp::Enqueue { queue: *handle, index, command, wait: &hs, body }, site))
            }
            QueueImp::Native(nq) => {
                let mut deps = list.natives();
                let mut nq = nq.lock().unwrap_or_else(|e| e.into_inner());
                if self.order == QueueOrder::InOrder {
                    deps.extend(nq.commands.last().cloned());
                }
                deps.extend(nq.barrier.clone());
                if matches!(command, Command::Marker | Command::Barrier) && wait.is_empty() {
                    deps.extend(nq.commands.iter().cloned());
                }
                let ev = Arc::new(NativeEvent::default());
                if command == Command::Barrier {
                    nq.barrier = Some(ev.clone());
                }
                nq.commands.push(ev.clone());
                drop(nq);
                spawn_native(&self.scope.inner, ev.clone(), deps, body);
                EventImp::Native(ev)
            }
        };
        Event { core: EventCore { context: self.context, imp } }
    }

    /// `clFinish`: block until every command enqueued on this queue before
    /// it is complete (rule 8). With several host threads enqueueing on
    /// the queue, "before" is the queue's enqueue order: the commands
    /// another thread enqueues concurrently are waited for in some
    /// executions and not in others.
    #[track_caller]
    pub fn finish(&self) {
        match &self.imp {
            QueueImp::Model { handle, counter } => {
                let site = Location::caller();
                let upto = counter_op(*counter, Access::Load, site);
                call(HostOp::Finish { queue: *handle, upto }, site);
            }
            QueueImp::Native(nq) => {
                let all: Vec<Arc<NativeEvent>> = nq.lock().unwrap_or_else(|e| e.into_inner()).commands.clone();
                for e in all {
                    e.wait();
                }
            }
        }
    }
}

pub use crate::backend::EnqueueFlags;

impl<'scope, 'env> Scope<'scope, 'env> {
    /// A device-side command queue on `device` of `context`
    /// (`clCreateCommandQueueWithProperties` with `CL_QUEUE_ON_DEVICE`):
    /// the `queue_t` a kernel receives as an argument or from
    /// `get_default_queue()`. Kernels running on `device` enqueue child
    /// kernels and markers on it with [`DeviceQueue::enqueue_kernel`] and
    /// [`DeviceQueue::enqueue_marker`]; the host cannot enqueue on it.
    /// Like every device-side queue it is out-of-order. Panics if the
    /// context has no such device.
    #[track_caller]
    pub fn device_queue(&'scope self, context: &Context, device: usize) -> DeviceQueue<'scope, 'env> {
        context.check_device(device);
        let imp = if backend::in_model() {
            DeviceQueueImp::Model(call(HostOp::NewDeviceQueue { device: device as u32 }, Location::caller()))
        } else {
            DeviceQueueImp::Native
        };
        DeviceQueue { scope: self, context: context.id, device, imp }
    }
}

/// A device-side command queue (`queue_t`), created on the host with
/// [`Scope::device_queue`] and used by kernels on its device to enqueue
/// child kernels (OpenCL C `enqueue_kernel`) and markers
/// (`enqueue_marker`): device-side enqueue, spec excerpt
/// `004_8d269728d13116e5.txt` §3.2.3. It is `Copy`: a kernel closure
/// takes it by value (`move`), as an OpenCL kernel takes its `queue_t`
/// argument.
///
/// ```
/// use clmm_atomic::host::{self, Context, EnqueueFlags, QueueOrder};
/// use clmm_atomic::{GlobalBuffer, NdRange};
///
/// let data = GlobalBuffer::<u32>::new(1);
/// let ctx = Context::new(1);
/// host::scope(|s| {
///     let q = s.queue(&ctx, 0, QueueOrder::InOrder);
///     let dq = s.device_queue(&ctx, 0);
///     let data = &data;
///     q.enqueue_kernel(NdRange::new([1], [1]), &[], move |item| {
///         data.write(0, 1);
///         // The child starts once the parent kernel has ended (rule 13),
///         // so it sees the parent's write.
///         dq.enqueue_kernel(item, EnqueueFlags::WaitKernel, NdRange::new([1], [1]), &[], move |_| {
///             assert_eq!(data.read(0), 1);
///             data.write(0, 2);
///         });
///     })
///     .wait(); // the parent completes only after its child
///     assert_eq!(data.read(0), 2);
/// });
/// ```
///
/// The ordering rules (spec list "memory ordering rules: host-side and
/// device-side commands"):
/// * the enqueue orders the enqueuing work-item's earlier updates before
///   the child only on fine-grained SVM memory (rule 1 for device-side
///   queues): with [`EnqueueFlags::NoWait`], a child reading a `cl_mem`
///   buffer or coarse-grained SVM the parent wrote races with the write;
/// * [`EnqueueFlags::WaitKernel`]: the parent kernel's end (all its
///   work-groups finished) happens before the child (rule 13);
/// * [`EnqueueFlags::WaitWorkGroup`]: the end of the enqueuing work-group
///   happens before the child (rule 14);
/// * a command waits for the events of its wait list, the completions of
///   earlier device-side commands (rule 2);
/// * a kernel completes only after its children have completed (§3.2.3:
///   the parent does not signal completion "until all of the child
///   kernels have ended execution and have signaled completion"), so
///   whoever waits for the parent sees the children's updates;
/// * device-scope atomics of a parent kernel and the kernels it enqueued
///   are inclusive on every global memory ("including a parent kernel and
///   any number of child kernels enqueued by that kernel").
#[derive(Clone, Copy)]
pub struct DeviceQueue<'scope, 'env> {
    scope: &'scope Scope<'scope, 'env>,
    context: u64,
    device: usize,
    imp: DeviceQueueImp,
}

#[derive(Clone, Copy)]
enum DeviceQueueImp {
    Model(u64),
    Native,
}

/// A device-side event (`clk_event_t`): the completion of a command
/// enqueued on a [`DeviceQueue`], for the wait lists of later device-side
/// commands.
#[derive(Clone)]
pub struct ClkEvent {
    core: EventCore,
}

impl std::fmt::Debug for ClkEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.core.fmt_as("ClkEvent", f)
    }
}

impl<'scope, 'env> DeviceQueue<'scope, 'env> {
    /// The queue's device.
    pub fn device(&self) -> usize {
        self.device
    }

    /// OpenCL C `enqueue_kernel(queue, flags, ndrange, ..., block)`, called
    /// by the work-item `item`: run `kernel` on every work-item of `range`
    /// (a child kernel, on this queue's device) once the events of `wait`
    /// are complete and, with [`EnqueueFlags::WaitKernel`] or
    /// [`EnqueueFlags::WaitWorkGroup`], once the parent kernel or the
    /// enqueuing work-group has ended. Returns the child's event. The
    /// enqueue does not wait; the parent kernel completes only after the
    /// child. Panics if `item` runs on another device than the queue's.
    #[track_caller]
    pub fn enqueue_kernel<F>(&self, item: &WorkItem, flags: EnqueueFlags, range: impl Range, wait: &[ClkEvent], kernel: F) -> ClkEvent
    where
        F: Fn(&WorkItem) + Send + Sync + 'scope,
    {
        self.enqueue_kernel_with_local(item, flags, range, wait, |_| (), move |child, _: &()| kernel(child))
    }

    /// [`DeviceQueue::enqueue_kernel`] with local memory created once per
    /// work-group of the child by `init` (OpenCL C's `local void *`
    /// arguments of a block).
    #[track_caller]
    pub fn enqueue_kernel_with_local<L, I, F>(&self, item: &WorkItem, flags: EnqueueFlags, range: impl Range, wait: &[ClkEvent], init: I, kernel: F) -> ClkEvent
    where
        L: Send + Sync,
        I: Fn(&crate::WorkGroup) -> L + Send + 'scope,
        F: Fn(&WorkItem, &L) + Send + Sync + 'scope,
    {
        let site = Location::caller();
        self.check_item(item, "enqueue_kernel");
        let body = kernel_command(range, self.device, init, kernel, site);
        self.enqueue(item, flags, Command::Kernel, wait, body, site)
    }

    /// OpenCL C `enqueue_marker(queue, n, wait_list, &event)`, called by
    /// the work-item `item`: an event complete once every event of `wait`
    /// is. Panics when `wait` is empty (`CLK_INVALID_EVENT_WAIT_LIST`: a
    /// device-side marker needs a wait list).
    #[track_caller]
    pub fn enqueue_marker(&self, item: &WorkItem, wait: &[ClkEvent]) -> ClkEvent {
        let site = Location::caller();
        self.check_item(item, "enqueue_marker");
        if wait.is_empty() {
            panic!("clmm: enqueue_marker with an empty wait list (CLK_INVALID_EVENT_WAIT_LIST): a device-side marker waits for the events it is given");
        }
        self.enqueue(item, EnqueueFlags::NoWait, Command::Marker, wait, command_body(site, || {}), site)
    }

    #[track_caller]
    fn check_item(&self, item: &WorkItem, what: &str) {
        if item.device() != self.device {
            panic!(
                "clmm: {what}: a work-item of device {} enqueues on a device queue of device {} (a kernel enqueues only on a device-side queue of its own device)",
                item.device(),
                self.device
            );
        }
    }

    /// Enqueue a device-side command with its body on this queue, from the
    /// work-item `item`.
    #[track_caller]
    fn enqueue(&self, item: &WorkItem, flags: EnqueueFlags, command: Command, wait: &[ClkEvent], body: Box<dyn FnOnce() + Send + 'scope>, site: &'static Location<'static>) -> ClkEvent {
        let list = wait_list(wait, self.context, "the wait list of a device-side enqueue", "CLK_INVALID_EVENT_WAIT_LIST");
        let imp = match self.imp {
            DeviceQueueImp::Model(queue) => {
                EventImp::Model(call(HostOp::DeviceEnqueue { queue, flags, command, wait: &list.handles(), body }, site))
            }
            DeviceQueueImp::Native => {
                let group = item.native.clone().expect("clmm: a WorkItem used outside its kernel");
                let mut deps = list.natives();
                match flags {
                    EnqueueFlags::NoWait => {}
                    EnqueueFlags::WaitKernel => deps.push(group.kernel.ended.clone()),
                    EnqueueFlags::WaitWorkGroup => deps.push(group.ended.clone()),
                }
                let ev = Arc::new(NativeEvent::default());
                group.kernel.children.lock().unwrap_or_else(|e| e.into_inner()).push(ev.clone());
                spawn_native(&self.scope.inner, ev.clone(), deps, body);
                EventImp::Native(ev)
            }
        };
        ClkEvent { core: EventCore { context: self.context, imp } }
    }
}
