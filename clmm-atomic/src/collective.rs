//! Work-group and sub-group collectives: broadcast, reduce, inclusive and
//! exclusive scan, all, any (OpenCL C 2.0 §6.13.15 "Work-group Functions",
//! the `sub_group_*` functions of `cl_khr_subgroups` / OpenCL C 2.1).
//!
//! # Semantics
//!
//! * **Participation.** Every work-item of the work-group (of the
//!   sub-group, for `sub_group_*`) must encounter the same collective call
//!   (the same call site, the same dynamic instance): "all work-items in the
//!   work-group must encounter exactly the same work-group function". A
//!   work-item that finishes or waits elsewhere while others wait at a
//!   collective is **barrier divergence**, reported like a barrier's, naming
//!   the collective and its call site. So is a dynamic instance whose
//!   members called different collectives (another operation or value
//!   type) or broadcast from different local ids.
//! * **Execution.** A collective synchronises execution like a barrier: no
//!   work-item continues past it before all have reached it (spec excerpt
//!   `004_8d269728d13116e5.txt`, §3.2 "synchronisation": work-group
//!   functions "perform collective operations across all work-items of a
//!   work-group ... all work-items of the work-group must execute the
//!   work-group function ... before any are allowed to continue").
//! * **Memory.** A collective carries **no memory fence** (flags empty):
//!   inside a model run it is a barrier whose entry and exit fences have no
//!   region, so it orders no memory access of one work-item before another
//!   work-item's. The memory-ordering rules of the specification
//!   (`004_8d269728d13116e5.txt`, "Memory ordering rules: work-group
//!   functions") give entry and exit fences with flags to barriers only,
//!   and say of the other work-group functions only that they imply the
//!   sequenced-before needed by their data dependencies ("a work-item that
//!   provides a value to a work-group function must behave as if it
//!   generated that value before beginning execution of that work-group
//!   function"). To order memory around a collective, call a barrier. The
//!   values travel with the collective, not through memory: a collective
//!   adds no read or write and no execution to explore. (Natively the
//!   exchange goes through real barriers, which are stronger.) The
//!   execution model's summary (§3.2) says the work-items "complete reads
//!   and writes to memory" before any continues; clmm does not read that
//!   as a fence (Deviations, 8, in `clmm_check::model`).
//! * **Values.** Each work-item receives its result computed from every
//!   member's contribution in local-id order (the linear local id for
//!   `work_group_*`, the sub-group local id for `sub_group_*`): the
//!   broadcast value of the given local id, the reduction of all values,
//!   the inclusive scan up to its own value, the exclusive scan of the
//!   values before its own (the identity for the first: 0 for add, the
//!   type's maximum for min and minimum for max, ±infinity for `f32`),
//!   whether all / any predicate holds. Integer arithmetic wraps in the
//!   type's width; floating-point sums are computed left to right in
//!   local-id order (OpenCL leaves that order unspecified).
//! * **Scope.** A work-group collective has scope `memory_scope_work_group`
//!   and a sub-group one `memory_scope_sub_group`, like the barriers.
//!
//! `work_group_broadcast` takes the linear local id (`get_local_linear_id`)
//! of the source; it must be the same in every work-item and smaller than
//! the work-group's size (a panic otherwise).

use crate::backend::{self, BarrierId, BarrierKind, Collective, CollectiveOp, Op};
use crate::ndrange::WorkItem;
use crate::order::{FenceFlags, Scope};
use crate::value::{NumValue, RmwOp};
use std::panic::Location;
use std::sync::atomic::Ordering;

macro_rules! collectives {
    ($kind:expr, $scope:expr, $what:literal,
     $broadcast:ident, $reduce_add:ident, $reduce_min:ident, $reduce_max:ident,
     $scan_in_add:ident, $scan_in_min:ident, $scan_in_max:ident,
     $scan_ex_add:ident, $scan_ex_min:ident, $scan_ex_max:ident,
     $all:ident, $any:ident) => {
        #[doc = concat!("`", stringify!($broadcast), "(a, local_id)`: the value `a` of the work-item of this ", $what, " whose local id is `local_id` (see the module documentation of collectives).")]
        #[track_caller]
        pub fn $broadcast<T: NumValue>(&self, a: T, local_id: usize) -> T {
            let n = self.collective_size($kind);
            assert!(local_id < n, "clmm: {}: local id {local_id} out of range (the {} has {n} work-items)", stringify!($broadcast), $what);
            T::from_bits(self.collective($kind, $scope, CollectiveOp::Broadcast { source: local_id as u32 }, T::TY, a.to_bits()))
        }
        #[doc = concat!("`", stringify!($reduce_add), "(x)`: the sum of `x` over the ", $what, ".")]
        #[track_caller]
        pub fn $reduce_add<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::Reduce(RmwOp::Add), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($reduce_min), "(x)`: the minimum of `x` over the ", $what, ".")]
        #[track_caller]
        pub fn $reduce_min<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::Reduce(RmwOp::Min), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($reduce_max), "(x)`: the maximum of `x` over the ", $what, ".")]
        #[track_caller]
        pub fn $reduce_max<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::Reduce(RmwOp::Max), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_in_add), "(x)`: the sum of `x` over the work-items of the ", $what, " with a local id up to and including this one's.")]
        #[track_caller]
        pub fn $scan_in_add<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanInclusive(RmwOp::Add), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_in_min), "(x)`: the minimum of `x` over the work-items of the ", $what, " with a local id up to and including this one's.")]
        #[track_caller]
        pub fn $scan_in_min<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanInclusive(RmwOp::Min), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_in_max), "(x)`: the maximum of `x` over the work-items of the ", $what, " with a local id up to and including this one's.")]
        #[track_caller]
        pub fn $scan_in_max<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanInclusive(RmwOp::Max), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_ex_add), "(x)`: the sum of `x` over the work-items of the ", $what, " with a smaller local id (0 for the first).")]
        #[track_caller]
        pub fn $scan_ex_add<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanExclusive(RmwOp::Add), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_ex_min), "(x)`: the minimum of `x` over the work-items of the ", $what, " with a smaller local id (the type's maximum, or +infinity, for the first).")]
        #[track_caller]
        pub fn $scan_ex_min<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanExclusive(RmwOp::Min), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($scan_ex_max), "(x)`: the maximum of `x` over the work-items of the ", $what, " with a smaller local id (the type's minimum, or -infinity, for the first).")]
        #[track_caller]
        pub fn $scan_ex_max<T: NumValue>(&self, x: T) -> T {
            T::from_bits(self.collective($kind, $scope, CollectiveOp::ScanExclusive(RmwOp::Max), T::TY, x.to_bits()))
        }
        #[doc = concat!("`", stringify!($all), "(predicate)`: whether `predicate` holds in every work-item of the ", $what, ".")]
        #[track_caller]
        pub fn $all(&self, predicate: bool) -> bool {
            self.collective($kind, $scope, CollectiveOp::All, crate::NumTy::I32, predicate as u64) != 0
        }
        #[doc = concat!("`", stringify!($any), "(predicate)`: whether `predicate` holds in some work-item of the ", $what, ".")]
        #[track_caller]
        pub fn $any(&self, predicate: bool) -> bool {
            self.collective($kind, $scope, CollectiveOp::Any, crate::NumTy::I32, predicate as u64) != 0
        }
    };
}

impl WorkItem {
    collectives!(
        BarrierKind::WorkGroup, Scope::WorkGroup, "work-group",
        work_group_broadcast, work_group_reduce_add, work_group_reduce_min, work_group_reduce_max,
        work_group_scan_inclusive_add, work_group_scan_inclusive_min, work_group_scan_inclusive_max,
        work_group_scan_exclusive_add, work_group_scan_exclusive_min, work_group_scan_exclusive_max,
        work_group_all, work_group_any
    );

    collectives!(
        BarrierKind::SubGroup, Scope::SubGroup, "sub-group",
        sub_group_broadcast, sub_group_reduce_add, sub_group_reduce_min, sub_group_reduce_max,
        sub_group_scan_inclusive_add, sub_group_scan_inclusive_min, sub_group_scan_inclusive_max,
        sub_group_scan_exclusive_add, sub_group_scan_exclusive_min, sub_group_scan_exclusive_max,
        sub_group_all, sub_group_any
    );

    /// The number of work-items taking part in a collective of `kind`.
    fn collective_size(&self, kind: BarrierKind) -> usize {
        match kind {
            BarrierKind::WorkGroup => self.local_size(0) * self.local_size(1) * self.local_size(2),
            BarrierKind::SubGroup => self.sub_group_size(),
        }
    }

    /// Contribute `value` to a collective and return this work-item's
    /// result (as bits).
    #[track_caller]
    fn collective(&self, kind: BarrierKind, scope: Scope, op: CollectiveOp, ty: crate::NumTy, value: u64) -> u64 {
        let mine = Collective { op, ty, value };
        match backend::current() {
            Some(b) => {
                let site = Location::caller();
                let op = Op::Barrier { id: BarrierId::Site(site), flags: FenceFlags::empty(), scope, kind, collective: Some(mine) };
                b.op(op, site).value
            }
            None => {
                let g = self.native.as_ref().expect("clmm: a WorkItem used outside its kernel");
                let (barrier, base, me) = match kind {
                    BarrierKind::WorkGroup => (&g.barrier, 0, self.local_linear_id()),
                    BarrierKind::SubGroup => {
                        (&g.sub_barriers[self.sub_group_id()], self.local_linear_id() - self.sub_group_local_id(), self.sub_group_local_id())
                    }
                };
                let n = self.collective_size(kind);
                // Publish, wait for everybody, read every member's value,
                // and wait again before a later collective reuses the slots.
                g.slots[base + me].store(value, Ordering::Relaxed);
                barrier.wait();
                let all: Vec<Collective> = (0..n).map(|i| Collective { value: g.slots[base + i].load(Ordering::Relaxed), ..mine }).collect();
                barrier.wait();
                match Collective::result(&all, me, kind) {
                    Ok(v) => v,
                    Err(e) => panic!("clmm: {}: {e}", mine.cl_name(kind)),
                }
            }
        }
    }
}
