//! A message when a unit overflows its coroutine stack.
//!
//! Each unit runs on a stack of its own ([`super::StackPool`]) with a guard
//! page below it; Rust's stack probes touch the guard page first, so an
//! overflow is a `SIGSEGV` (`SIGBUS` on some systems) at an address inside
//! the stack's mapping. Rust's own handler recognises only its threads'
//! guard pages, so the process died with a bare "Segmentation fault" and
//! nothing to say which unit or what to do. The handler installed here
//! writes, when the faulting address is in the running unit's stack
//! ([`Running`], set around each resume), which unit overflowed, the
//! stack's size and how to raise it, and then hands the signal on to the
//! handler that was installed before it (Rust's, or the default action),
//! which ends the process as before. A unit cannot be stopped cleanly
//! from inside the handler: it may hold the checker's state borrowed.
//!
//! Only async-signal-safe work in the handler: a read of a thread-local
//! `Cell`, `write(2)` of a message formatted into a buffer on the signal
//! stack, and the previous handler.

use std::cell::Cell;

/// The running unit, the bounds of its stack's mapping (`[limit, base)`,
/// the guard page included: [`super::StackPool::spawn`]) and the stack's
/// size, while it runs on this thread.
#[derive(Clone, Copy)]
pub struct Running {
    pub unit: u32,
    pub stack: (usize, usize),
    pub size: usize,
}

impl Running {
    /// No unit runs (an empty mapping).
    const NONE: Running = Running { unit: 0, stack: (0, 0), size: 0 };
}

thread_local! {
    static RUNNING: Cell<Running> = const { Cell::new(Running::NONE) };
}

/// Run `f` (a resume of unit `r.unit`) with `r` as the running unit of
/// this thread, for the handler. Resumes do not nest, and a resume returns
/// (the unit's panics are caught on its own stack), so a set before and a
/// reset after are enough: with a guard that restored the previous value
/// it cost 78 instructions a resume.
#[inline]
pub fn running<R>(r: Running, f: impl FnOnce() -> R) -> R {
    RUNNING.set(r);
    let out = f();
    RUNNING.set(Running::NONE);
    out
}

#[cfg(unix)]
mod imp {
    use super::RUNNING;
    use std::sync::OnceLock;

    /// The actions installed before ours, for `SIGSEGV` and `SIGBUS`.
    static PREV: OnceLock<[(libc::c_int, libc::sigaction); 2]> = OnceLock::new();

    /// Install the handler, once per process.
    pub fn install() {
        PREV.get_or_init(|| {
            [libc::SIGSEGV, libc::SIGBUS].map(|sig| {
                // SAFETY: plain sigaction calls with zeroed, then filled,
                // structures; `on_fault` is async-signal-safe.
                unsafe {
                    let mut new: libc::sigaction = std::mem::zeroed();
                    new.sa_sigaction = on_fault as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, &new, &mut old);
                    (sig, old)
                }
            })
        });
    }

    extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler.
        let addr = unsafe { (*info).si_addr() } as usize;
        let r = RUNNING.get();
        if addr >= r.stack.0 && addr < r.stack.1 {
            let mut buf = [0u8; 512];
            let mut w = Writer { buf: &mut buf, len: 0 };
            w.text("\nclmm: unit ");
            w.num(r.unit as usize);
            w.text(" overflowed its coroutine stack of ");
            w.num(r.size);
            w.text(" bytes (every unit of a model check, the model closure, a work-item or a host thread, runs on a stack of its own). Raise it with Builder::stack_size or CLMM_STACK_SIZE, or move large arrays to the heap (Vec, Box). The units are numbered as in clmm's traces.\n");
            // SAFETY: write(2) is async-signal-safe; the buffer is ours.
            unsafe { libc::write(2, w.buf.as_ptr().cast(), w.len) };
        }
        chain(sig, info, ctx);
    }

    /// Hand the signal to the action installed before ours: call its
    /// handler, or restore it (the default action) and return, so that the
    /// fault happens again under it.
    fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
        let Some(&(_, prev)) = PREV.get().and_then(|p| p.iter().find(|(s, _)| *s == sig)) else { return };
        // SAFETY: the previous action as the kernel gave it to us; its
        // handler expects the arguments its flags say.
        unsafe {
            if prev.sa_sigaction == libc::SIG_DFL || prev.sa_sigaction == libc::SIG_IGN {
                libc::sigaction(sig, &prev, std::ptr::null_mut());
            } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) = std::mem::transmute(prev.sa_sigaction);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev.sa_sigaction);
                f(sig);
            }
        }
    }

    /// A message formatted without allocating.
    struct Writer<'a> {
        buf: &'a mut [u8],
        len: usize,
    }

    impl Writer<'_> {
        fn text(&mut self, s: &str) {
            s.bytes().for_each(|b| self.byte(b));
        }

        fn byte(&mut self, b: u8) {
            if self.len < self.buf.len() {
                self.buf[self.len] = b;
                self.len += 1;
            }
        }

        fn num(&mut self, mut n: usize) {
            let mut digits = [0u8; 20];
            let mut k = digits.len();
            loop {
                k -= 1;
                digits[k] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            for &d in &digits[k..] {
                self.byte(d);
            }
        }
    }
}

#[cfg(unix)]
pub use imp::install;

/// Nothing to install where there are no signals.
#[cfg(not(unix))]
pub fn install() {}
