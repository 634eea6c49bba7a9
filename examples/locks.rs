//! Two spin locks protecting a non-atomic counter: a ticket lock and a
//! test-and-test-and-set (TTAS) lock, each taken by work-items of several
//! work-groups.
//!
//! ```c
//! // ticket lock
//! void lock(global atomic_uint *next, global atomic_uint *serving) {
//!     uint my = atomic_fetch_add_explicit(next, 1, memory_order_relaxed, memory_scope_device);
//!     while (atomic_load_explicit(serving, memory_order_acquire, memory_scope_device) != my) ;
//! }
//! void unlock(global atomic_uint *serving, uint my) {
//!     atomic_store_explicit(serving, my + 1, memory_order_release, memory_scope_device);
//! }
//! // test-and-test-and-set lock
//! void lock(global atomic_uint *l) {
//!     for (;;) {
//!         while (atomic_load_explicit(l, memory_order_relaxed, memory_scope_device) != 0) ;
//!         if (atomic_exchange_explicit(l, 1, memory_order_acquire, memory_scope_device) == 0) break;
//!     }
//! }
//! void unlock(global atomic_uint *l) {
//!     atomic_store_explicit(l, 0, memory_order_release, memory_scope_device);
//! }
//! kernel void count(global uint *counter, ...) {
//!     for (int i = 0; i < ITERS; i++) { lock(...); *counter += 1; unlock(...); }
//! }
//! ```
//!
//! Bugs: the acquire weakened to relaxed, the release weakened to relaxed,
//! and the device scope narrowed to `memory_scope_work_group` while two
//! work-groups contend. Each lets two critical sections overlap (in the
//! model: no happens-before between them), a data race on the counter.
//!
//! `cargo run --release --example locks` runs both correct locks natively;
//! `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch, AtomicU32, GlobalBuffer, NdRange, Order, Scope};

/// The memory orders and scope a lock uses.
#[derive(Clone, Copy, Debug)]
pub struct LockOrders {
    /// Order of the operation that takes the lock (the read that sees it free).
    pub acquire: Order,
    /// Order of the store that frees it.
    pub release: Order,
    /// Scope of every lock operation.
    pub scope: Scope,
}

impl LockOrders {
    /// The correct orders: acquire / release at device scope.
    pub const CORRECT: LockOrders = LockOrders { acquire: Order::Acquire, release: Order::Release, scope: Scope::Device };
}

/// A ticket lock: `next` hands out tickets, `serving` says whose turn it is.
pub struct TicketLock {
    next: AtomicU32,
    serving: AtomicU32,
    o: LockOrders,
}

impl TicketLock {
    pub fn new(o: LockOrders) -> TicketLock {
        TicketLock { next: AtomicU32::new(0), serving: AtomicU32::new(0), o }
    }
    /// Take a ticket and wait for it; returns the ticket (needed by unlock).
    pub fn lock(&self) -> u32 {
        let my = self.next.fetch_add(1, Order::Relaxed, self.o.scope);
        while self.serving.load(self.o.acquire, self.o.scope) != my {
            clmm::hint::spin_loop();
        }
        my
    }
    pub fn unlock(&self, my: u32) {
        self.serving.store(my.wrapping_add(1), self.o.release, self.o.scope);
    }
}

/// A test-and-test-and-set lock: spin reading until free, then exchange.
pub struct TtasLock {
    l: AtomicU32,
    o: LockOrders,
}

impl TtasLock {
    pub fn new(o: LockOrders) -> TtasLock {
        TtasLock { l: AtomicU32::new(0), o }
    }
    pub fn lock(&self) {
        loop {
            while self.l.load(Order::Relaxed, self.o.scope) != 0 {
                clmm::hint::spin_loop();
            }
            if self.l.exchange(1, self.o.acquire, self.o.scope) == 0 {
                return;
            }
            clmm::hint::spin_loop();
        }
    }
    pub fn unlock(&self) {
        self.l.store(0, self.o.release, self.o.scope);
    }
}

/// Which lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockKind {
    Ticket,
    Ttas,
}

/// Every work-item of `groups` x `items` takes the lock `iters` times and
/// increments the non-atomic counter inside; returns the final counter.
pub fn count(kind: LockKind, o: LockOrders, groups: usize, items: usize, iters: u32) -> u32 {
    let counter = GlobalBuffer::<u32>::new(1);
    let ticket = TicketLock::new(o);
    let ttas = TtasLock::new(o);
    launch(NdRange::new([groups * items], [items]), |_item| {
        for _ in 0..iters {
            match kind {
                LockKind::Ticket => {
                    let my = ticket.lock();
                    counter.write(0, counter.read(0) + 1);
                    ticket.unlock(my);
                }
                LockKind::Ttas => {
                    ttas.lock();
                    counter.write(0, counter.read(0) + 1);
                    ttas.unlock();
                }
            }
        }
    });
    counter.read(0)
}

/// The variants: each lock correct, and with its three bugs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Ticket,
    TicketRelaxedAcquire,
    TicketRelaxedRelease,
    TicketWorkGroupScope,
    Ttas,
    TtasRelaxedAcquire,
    TtasRelaxedRelease,
    TtasWorkGroupScope,
}

impl Variant {
    pub const ALL: [Variant; 8] = [
        Variant::Ticket,
        Variant::TicketRelaxedAcquire,
        Variant::TicketRelaxedRelease,
        Variant::TicketWorkGroupScope,
        Variant::Ttas,
        Variant::TtasRelaxedAcquire,
        Variant::TtasRelaxedRelease,
        Variant::TtasWorkGroupScope,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Ticket => "ticket",
            Variant::TicketRelaxedAcquire => "ticket-relaxed-acquire",
            Variant::TicketRelaxedRelease => "ticket-relaxed-release",
            Variant::TicketWorkGroupScope => "ticket-work-group-scope",
            Variant::Ttas => "ttas",
            Variant::TtasRelaxedAcquire => "ttas-relaxed-acquire",
            Variant::TtasRelaxedRelease => "ttas-relaxed-release",
            Variant::TtasWorkGroupScope => "ttas-work-group-scope",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Ticket | Variant::Ttas => "correct: acquire on lock, release on unlock, memory_scope_device",
            Variant::TicketRelaxedAcquire | Variant::TtasRelaxedAcquire => "the read that takes the lock is relaxed",
            Variant::TicketRelaxedRelease | Variant::TtasRelaxedRelease => "the unlocking store is relaxed",
            Variant::TicketWorkGroupScope | Variant::TtasWorkGroupScope => {
                "every lock operation at memory_scope_work_group, contended by two work-groups"
            }
        }
    }
    pub fn is_correct(self) -> bool {
        matches!(self, Variant::Ticket | Variant::Ttas)
    }
    pub fn kind(self) -> LockKind {
        match self {
            Variant::Ticket | Variant::TicketRelaxedAcquire | Variant::TicketRelaxedRelease | Variant::TicketWorkGroupScope => {
                LockKind::Ticket
            }
            _ => LockKind::Ttas,
        }
    }
    pub fn orders(self) -> LockOrders {
        let c = LockOrders::CORRECT;
        match self {
            Variant::Ticket | Variant::Ttas => c,
            Variant::TicketRelaxedAcquire | Variant::TtasRelaxedAcquire => LockOrders { acquire: Order::Relaxed, ..c },
            Variant::TicketRelaxedRelease | Variant::TtasRelaxedRelease => LockOrders { release: Order::Relaxed, ..c },
            Variant::TicketWorkGroupScope | Variant::TtasWorkGroupScope => LockOrders { scope: Scope::WorkGroup, ..c },
        }
    }
}

/// The model-checked program: two work-groups of one work-item each take
/// the lock once.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 1, 1)
}

/// The same with other sizes.
pub fn program_sized(v: Variant, groups: usize, items: usize, iters: u32) -> impl Fn() + Sync {
    move || {
        let n = count(v.kind(), v.orders(), groups, items, iters);
        assert_eq!(n, (groups * items) as u32 * iters, "lost increments");
    }
}

fn native() {
    let (groups, items, iters) = (4, 8, 50);
    for (name, kind) in [("ticket lock", LockKind::Ticket), ("test-and-test-and-set lock", LockKind::Ttas)] {
        let t = std::time::Instant::now();
        let n = count(kind, LockOrders::CORRECT, groups, items, iters);
        let expect = (groups * items) as u32 * iters;
        println!(
            "{name}: {groups} work-groups x {items} work-items x {iters} increments: counter = {n} (expected {expect}): {} in {:?}",
            if n == expect { "correct" } else { "WRONG" },
            t.elapsed()
        );
    }
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "locks",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
