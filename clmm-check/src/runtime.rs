//! Coroutines for units of execution (DESIGN.md §2 "runtime").
//!
//! Each unit (the model closure, each work-item) runs on a `corosensei`
//! coroutine. Stacks come from a pool and are reused across executions
//! (`Coroutine::with_stack` / `into_stack`): a fresh stack costs an mmap,
//! a reused one nothing. An abandoned execution is unwound: each suspended
//! unit is resumed with [`Resp::Abandon`], which makes the pending operation
//! unwind with the [`Abandon`] payload, so the unit's values are dropped
//! before its stack is reused.

mod overflow;

pub use overflow::{install as install_overflow_handler, running, Running};

use clmm_atomic::backend::{Op, Reply};
use corosensei::stack::{DefaultStack, Stack};
use corosensei::{Coroutine, CoroutineResult, Yielder};
use std::panic::{AssertUnwindSafe, Location};

/// What a unit asks of the checker when it suspends.
#[derive(Clone, Copy, Debug)]
pub enum Request {
    /// An operation on memory, a fence, a barrier or a spin-loop hint.
    Op(Op, &'static Location<'static>),
    /// The host launches a kernel (the plan is in the checker's shared state).
    Launch(&'static Location<'static>),
    /// The host waits for the kernel it launched.
    Join(&'static Location<'static>),
    /// A host-side operation (host threads, queues, events); its details
    /// are in the checker's shared state.
    Host(&'static Location<'static>),
}

impl Request {
    /// Where in the user's code it was made.
    pub fn site(self) -> &'static Location<'static> {
        match self {
            Request::Op(_, s) | Request::Launch(s) | Request::Join(s) | Request::Host(s) => s,
        }
    }
}

/// The checker's answer when it resumes a unit.
#[derive(Clone, Copy, Debug)]
pub enum Resp {
    /// Start (first resume).
    Start,
    /// The reply to the pending request.
    Reply(Reply),
    /// The execution is abandoned: unwind.
    Abandon,
}

/// The unwind payload of an abandoned execution.
pub struct Abandon;

/// How a unit ended.
#[derive(Debug)]
pub enum Exit {
    /// Its body returned.
    Done,
    /// It panicked with this message (the location comes from the panic
    /// hook).
    Panic(String),
    /// It was abandoned.
    Abandoned,
}

/// A unit's coroutine.
pub type UnitCo = Coroutine<Resp, (), Exit, DefaultStack>;

/// A pool of stacks reused across executions.
///
/// A fresh stack costs an `mmap`, an `mprotect` for its guard page and the
/// page faults of its first use; a check of a small test (a litmus shape)
/// is a few executions, so the stacks also outlive the check: a dropped
/// pool gives its stacks to a process-wide cache (`CACHE`, at most
/// `CACHE_CAP` stacks), which the next check's pool takes them from.
pub struct StackPool {
    free: Vec<DefaultStack>,
    size: usize,
}

/// Stacks of finished checks, with their sizes, for the next check.
static CACHE: std::sync::Mutex<Vec<(usize, DefaultStack)>> = std::sync::Mutex::new(Vec::new());

/// How many stacks the process-wide cache keeps: enough for the units of
/// a few concurrent tests; only the pages a check touched stay resident.
const CACHE_CAP: usize = 64;

impl StackPool {
    /// A pool of stacks of `size` bytes.
    pub fn new(size: usize) -> StackPool {
        StackPool { free: Vec::new(), size }
    }

    fn take(&mut self) -> DefaultStack {
        if let Some(s) = self.free.pop() {
            return s;
        }
        let cached = {
            let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            cache.iter().rposition(|&(size, _)| size == self.size).map(|i| cache.swap_remove(i).1)
        };
        cached.unwrap_or_else(|| {
            DefaultStack::new(self.size).unwrap_or_else(|e| {
                panic!("clmm: cannot allocate a coroutine stack of {} bytes ({e}): each unit that has started and not finished has its own stack, in two memory mappings (the stack and its guard page), and the process may be out of mappings (Linux's vm.max_map_count) or memory", self.size)
            })
        })
    }

    /// Create a coroutine running `body` on a pooled stack, with the
    /// bounds of the stack's mapping, guard page included (`[limit, base)`,
    /// for [`running`]).
    /// Generic, not boxed: the coroutine keeps both closures on its own
    /// stack (no allocation per unit and execution).
    pub fn spawn(&mut self, body: impl FnOnce() + 'static, on_start: impl FnOnce(*const Yielder<Resp, ()>) + 'static) -> (UnitCo, (usize, usize)) {
        let stack = self.take();
        let bounds = (stack.limit().get(), stack.base().get());
        let co = Coroutine::with_stack(stack, move |y: &Yielder<Resp, ()>, _start: Resp| {
            on_start(y as *const _);
            match std::panic::catch_unwind(AssertUnwindSafe(body)) {
                Ok(()) => Exit::Done,
                Err(p) if p.is::<Abandon>() => Exit::Abandoned,
                Err(p) => Exit::Panic(panic_message(&*p)),
            }
        });
        (co, bounds)
    }

    /// Take back the stack of a finished coroutine.
    pub fn recycle(&mut self, co: UnitCo) {
        if co.done() {
            self.free.push(co.into_stack());
        }
    }
}

impl Drop for StackPool {
    fn drop(&mut self) {
        let mut cache = CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        while cache.len() < CACHE_CAP {
            let Some(s) = self.free.pop() else { break };
            cache.push((self.size, s));
        }
    }
}

/// How many units may have a coroutine at once: each stack takes two
/// memory mappings (the stack and its guard page), and Linux allows a
/// process `vm.max_map_count` of them (65,530 by default), which the
/// program's other mappings share (a margin of 2,048). Past it the stack's
/// `mmap` fails, and so may the allocator's next one, which aborts the
/// process: `Engine::start_launch` (in [`crate::explore`](mod@crate::explore)) refuses a launch that
/// would go past it instead. Unlimited where the file does not exist.
pub fn max_live_units() -> usize {
    static MAX: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        let maps = std::fs::read_to_string("/proc/sys/vm/max_map_count").ok().and_then(|t| t.trim().parse::<usize>().ok());
        maps.map_or(usize::MAX, |m| m.saturating_sub(2048) / 2)
    })
}

/// Resume a coroutine; `Some(exit)` when it finished.
pub fn resume(co: &mut UnitCo, r: Resp) -> Option<Exit> {
    match co.resume(r) {
        CoroutineResult::Yield(()) => None,
        CoroutineResult::Return(e) => Some(e),
    }
}

/// The text of a panic payload.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic with a non-string payload)".to_string()
    }
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC: std::cell::RefCell<Option<(String, u32, u32)>> = const { std::cell::RefCell::new(None) };
    static CAPTURE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static LAST_PANIC_BT: std::cell::RefCell<Option<backtrace::Backtrace>> = const { std::cell::RefCell::new(None) };
}

/// Capture backtraces of quiet panics on this thread (replays only).
pub fn capture_panic_backtraces(on: bool) {
    CAPTURE.with(|c| c.set(on));
}

/// The backtrace of the last quiet panic, when captured.
pub fn take_panic_backtrace() -> Option<backtrace::Backtrace> {
    LAST_PANIC_BT.with(|p| p.borrow_mut().take())
}

/// Install (once) a panic hook that keeps panics inside model runs quiet and
/// records their location; other panics go to the previous hook.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if QUIET.with(|q| q.get()) {
                let loc = info.location().map(|l| (l.file().to_string(), l.line(), l.column()));
                LAST_PANIC.with(|p| *p.borrow_mut() = loc);
                if CAPTURE.with(|c| c.get()) {
                    LAST_PANIC_BT.with(|p| *p.borrow_mut() = Some(backtrace::Backtrace::new_unresolved()));
                }
            } else {
                prev(info)
            }
        }));
    });
}

/// Keep panics quiet while `f` runs on this thread.
pub fn quietly<R>(f: impl FnOnce() -> R) -> R {
    struct Reset(bool);
    impl Drop for Reset {
        fn drop(&mut self) {
            QUIET.with(|q| q.set(self.0));
        }
    }
    let _r = Reset(QUIET.with(|q| q.replace(true)));
    f()
}

/// The location of the last quiet panic.
pub fn take_panic_location() -> Option<(String, u32, u32)> {
    LAST_PANIC.with(|p| p.borrow_mut().take())
}
