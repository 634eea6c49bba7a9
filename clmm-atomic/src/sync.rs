//! Fences (spec excerpt `001_96da91f170ff246f.txt`), barriers (§3.3.x
//! "work-group barrier", "sub-group barrier" of `004_8d269728d13116e5.txt`)
//! and the spin-loop hint.

use crate::atomic::std_order;
use crate::backend::{self, BarrierId, BarrierKind, Op};
use crate::ndrange::WorkItem;
use crate::order::{FenceFlags, Order, Scope};
use std::panic::Location;

/// `atomic_work_item_fence(flags, order, scope)`.
#[track_caller]
pub fn atomic_work_item_fence(flags: FenceFlags, order: Order, scope: Scope) {
    match backend::current() {
        Some(b) => {
            b.op(Op::Fence { flags, order, scope }, Location::caller());
        }
        None => {
            if order != Order::Relaxed {
                std::sync::atomic::fence(std_order(order));
            }
        }
    }
}

/// `mem_fence(flags)`: `atomic_work_item_fence(flags, memory_order_acq_rel,
/// memory_scope_work_group)`.
#[track_caller]
pub fn mem_fence(flags: FenceFlags) {
    atomic_work_item_fence(flags, Order::AcqRel, Scope::WorkGroup)
}

/// `read_mem_fence(flags)`: `atomic_work_item_fence(flags,
/// memory_order_acquire, memory_scope_work_group)`.
#[track_caller]
pub fn read_mem_fence(flags: FenceFlags) {
    atomic_work_item_fence(flags, Order::Acquire, Scope::WorkGroup)
}

/// `write_mem_fence(flags)`: `atomic_work_item_fence(flags,
/// memory_order_release, memory_scope_work_group)`.
#[track_caller]
pub fn write_mem_fence(flags: FenceFlags) {
    atomic_work_item_fence(flags, Order::Release, Scope::WorkGroup)
}

impl WorkItem {
    /// `barrier(flags)` / `work_group_barrier(flags)`: every work-item of the
    /// work-group must reach this call (the same call site) before any
    /// continues. Scope `memory_scope_work_group`.
    #[track_caller]
    pub fn barrier(&self, flags: FenceFlags) {
        self.barrier_op(BarrierId::Site(Location::caller()), flags, Scope::WorkGroup, BarrierKind::WorkGroup)
    }

    /// `work_group_barrier(flags, scope)`.
    #[track_caller]
    pub fn barrier_scoped(&self, flags: FenceFlags, scope: Scope) {
        self.barrier_op(BarrierId::Site(Location::caller()), flags, scope, BarrierKind::WorkGroup)
    }

    /// A work-group barrier whose identity is `id` rather than its call site:
    /// one barrier written in several branches (or a litmus test's label).
    #[track_caller]
    pub fn barrier_with_id(&self, id: &'static str, flags: FenceFlags) {
        self.barrier_op(BarrierId::Named(id), flags, Scope::WorkGroup, BarrierKind::WorkGroup)
    }

    /// `barrier_with_id` with an explicit scope.
    #[track_caller]
    pub fn barrier_with_id_scoped(&self, id: &'static str, flags: FenceFlags, scope: Scope) {
        self.barrier_op(BarrierId::Named(id), flags, scope, BarrierKind::WorkGroup)
    }

    /// `sub_group_barrier(flags)`: a barrier for the work-items of this
    /// sub-group. Scope `memory_scope_sub_group`.
    #[track_caller]
    pub fn sub_group_barrier(&self, flags: FenceFlags) {
        self.barrier_op(BarrierId::Site(Location::caller()), flags, Scope::SubGroup, BarrierKind::SubGroup)
    }

    /// `sub_group_barrier(flags, scope)`.
    #[track_caller]
    pub fn sub_group_barrier_scoped(&self, flags: FenceFlags, scope: Scope) {
        self.barrier_op(BarrierId::Site(Location::caller()), flags, scope, BarrierKind::SubGroup)
    }

    #[track_caller]
    fn barrier_op(&self, id: BarrierId, flags: FenceFlags, scope: Scope, kind: BarrierKind) {
        match backend::current() {
            Some(b) => {
                b.op(Op::Barrier { id, flags, scope, kind, collective: None }, Location::caller());
            }
            None => {
                let g = self.native.as_ref().expect("clmm: a WorkItem used outside its kernel");
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
                match kind {
                    BarrierKind::WorkGroup => {
                        g.barrier.wait();
                    }
                    BarrierKind::SubGroup => {
                        g.sub_barriers[self.sub_group_id()].wait();
                    }
                }
                std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            }
        }
    }
}

/// Hints for the checker.
pub mod hint {
    use super::*;

    /// Marks the end of one iteration of a busy-wait loop. Inside a model
    /// run, an iteration that wrote nothing and read the same writes as the
    /// previous one blocks until another unit writes a location it read, so
    /// spin loops terminate. Natively, `std::hint::spin_loop` and a yield.
    #[track_caller]
    pub fn spin_loop() {
        match backend::current() {
            Some(b) => {
                b.op(Op::SpinLoop, Location::caller());
            }
            None => {
                std::hint::spin_loop();
                std::thread::yield_now();
            }
        }
    }
}
