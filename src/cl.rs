//! The OpenCL C spellings, so a port reads line by line like its source:
//! `atomic_load_explicit(&flag, memory_order_acquire, memory_scope_device)`,
//! `work_group_barrier(item, CLK_LOCAL_MEM_FENCE)`, `get_global_id(item, 0)`,
//! `work_group_reduce_add(item, x)`.

#![allow(non_upper_case_globals, missing_docs)]

use clmm_atomic::{AtomicI32, AtomicU32, FenceFlags, NumValue, Order, Scope, WorkItem};

pub const memory_order_relaxed: Order = Order::Relaxed;
pub const memory_order_acquire: Order = Order::Acquire;
pub const memory_order_release: Order = Order::Release;
pub const memory_order_acq_rel: Order = Order::AcqRel;
pub const memory_order_seq_cst: Order = Order::SeqCst;

pub const memory_scope_work_item: Scope = Scope::WorkItem;
pub const memory_scope_sub_group: Scope = Scope::SubGroup;
pub const memory_scope_work_group: Scope = Scope::WorkGroup;
pub const memory_scope_device: Scope = Scope::Device;
pub const memory_scope_all_svm_devices: Scope = Scope::AllSvmDevices;

pub const CLK_LOCAL_MEM_FENCE: FenceFlags = FenceFlags::LOCAL;
pub const CLK_GLOBAL_MEM_FENCE: FenceFlags = FenceFlags::GLOBAL;
pub const CLK_IMAGE_MEM_FENCE: FenceFlags = FenceFlags::IMAGE;

pub use clmm_atomic::{atomic_work_item_fence, mem_fence, read_mem_fence, write_mem_fence};

/// `get_global_id(d)`
pub fn get_global_id(item: &WorkItem, d: usize) -> usize {
    item.global_id(d)
}
/// `get_local_id(d)`
pub fn get_local_id(item: &WorkItem, d: usize) -> usize {
    item.local_id(d)
}
/// `get_group_id(d)`
pub fn get_group_id(item: &WorkItem, d: usize) -> usize {
    item.group_id(d)
}
/// `get_global_size(d)`
pub fn get_global_size(item: &WorkItem, d: usize) -> usize {
    item.global_size(d)
}
/// `get_local_size(d)`
pub fn get_local_size(item: &WorkItem, d: usize) -> usize {
    item.local_size(d)
}
/// `get_num_groups(d)`
pub fn get_num_groups(item: &WorkItem, d: usize) -> usize {
    item.num_groups(d)
}
/// `get_sub_group_id()`
pub fn get_sub_group_id(item: &WorkItem) -> usize {
    item.sub_group_id()
}
/// `get_sub_group_local_id()`
pub fn get_sub_group_local_id(item: &WorkItem) -> usize {
    item.sub_group_local_id()
}

/// `barrier(flags)`
#[track_caller]
pub fn barrier(item: &WorkItem, flags: FenceFlags) {
    item.barrier(flags)
}
/// `work_group_barrier(flags)`
#[track_caller]
pub fn work_group_barrier(item: &WorkItem, flags: FenceFlags) {
    item.barrier(flags)
}
/// `work_group_barrier(flags, scope)`
#[track_caller]
pub fn work_group_barrier_scoped(item: &WorkItem, flags: FenceFlags, scope: Scope) {
    item.barrier_scoped(flags, scope)
}
/// `sub_group_barrier(flags)`
#[track_caller]
pub fn sub_group_barrier(item: &WorkItem, flags: FenceFlags) {
    item.sub_group_barrier(flags)
}

macro_rules! cl_collectives {
    ($what:literal, $broadcast:ident, $all:ident, $any:ident, $($f:ident),*) => {
        #[doc = concat!("`", stringify!($broadcast), "(a, local_id)` (the ", $what, " local id of the source, linear for work-groups); see `WorkItem::", stringify!($broadcast), "`.")]
        #[track_caller]
        pub fn $broadcast<T: NumValue>(item: &WorkItem, a: T, local_id: usize) -> T {
            item.$broadcast(a, local_id)
        }
        #[doc = concat!("`int ", stringify!($all), "(int predicate)`: 1 when the predicate is non-zero in every work-item of the ", $what, ", else 0.")]
        #[track_caller]
        pub fn $all(item: &WorkItem, predicate: i32) -> i32 {
            item.$all(predicate != 0) as i32
        }
        #[doc = concat!("`int ", stringify!($any), "(int predicate)`: 1 when the predicate is non-zero in some work-item of the ", $what, ", else 0.")]
        #[track_caller]
        pub fn $any(item: &WorkItem, predicate: i32) -> i32 {
            item.$any(predicate != 0) as i32
        }
        $(
            #[doc = concat!("`", stringify!($f), "(x)`; see `WorkItem::", stringify!($f), "`.")]
            #[track_caller]
            pub fn $f<T: NumValue>(item: &WorkItem, x: T) -> T {
                item.$f(x)
            }
        )*
    };
}
cl_collectives!(
    "work-group", work_group_broadcast, work_group_all, work_group_any,
    work_group_reduce_add, work_group_reduce_min, work_group_reduce_max,
    work_group_scan_inclusive_add, work_group_scan_inclusive_min, work_group_scan_inclusive_max,
    work_group_scan_exclusive_add, work_group_scan_exclusive_min, work_group_scan_exclusive_max
);
cl_collectives!(
    "sub-group", sub_group_broadcast, sub_group_all, sub_group_any,
    sub_group_reduce_add, sub_group_reduce_min, sub_group_reduce_max,
    sub_group_scan_inclusive_add, sub_group_scan_inclusive_min, sub_group_scan_inclusive_max,
    sub_group_scan_exclusive_add, sub_group_scan_exclusive_min, sub_group_scan_exclusive_max
);

/// `spin_loop` hint (clmm extension).
#[track_caller]
pub fn spin_loop() {
    clmm_atomic::hint::spin_loop()
}

macro_rules! cl_atomics {
    ($($t:ty => $v:ty),*) => {
        /// The OpenCL C atomic builtins, as functions over clmm atomics.
        pub trait ClAtomic {
            /// Value type.
            type V;
        }
        $(impl ClAtomic for $t { type V = $v; })*
    };
}
cl_atomics!(AtomicI32 => i32, AtomicU32 => u32);

/// `atomic_load_explicit(obj, order, scope)`
#[track_caller]
pub fn atomic_load_explicit(obj: &AtomicI32, order: Order, scope: Scope) -> i32 {
    obj.load(order, scope)
}
/// `atomic_store_explicit(obj, v, order, scope)`
#[track_caller]
pub fn atomic_store_explicit(obj: &AtomicI32, v: i32, order: Order, scope: Scope) {
    obj.store(v, order, scope)
}
/// `atomic_load(obj)`: seq_cst, device scope.
#[track_caller]
pub fn atomic_load(obj: &AtomicI32) -> i32 {
    obj.load(Order::SeqCst, Scope::Device)
}
/// `atomic_store(obj, v)`: seq_cst, device scope.
#[track_caller]
pub fn atomic_store(obj: &AtomicI32, v: i32) {
    obj.store(v, Order::SeqCst, Scope::Device)
}
/// `atomic_exchange_explicit`
#[track_caller]
pub fn atomic_exchange_explicit(obj: &AtomicI32, v: i32, order: Order, scope: Scope) -> i32 {
    obj.exchange(v, order, scope)
}
/// `atomic_fetch_add_explicit`
#[track_caller]
pub fn atomic_fetch_add_explicit(obj: &AtomicI32, v: i32, order: Order, scope: Scope) -> i32 {
    obj.fetch_add(v, order, scope)
}
/// `atomic_fetch_sub_explicit`
#[track_caller]
pub fn atomic_fetch_sub_explicit(obj: &AtomicI32, v: i32, order: Order, scope: Scope) -> i32 {
    obj.fetch_sub(v, order, scope)
}
/// `atomic_compare_exchange_strong_explicit(obj, expected, desired, success,
/// failure, scope)`: on failure, `*expected` receives the value found.
#[track_caller]
pub fn atomic_compare_exchange_strong_explicit(
    obj: &AtomicI32,
    expected: &mut i32,
    desired: i32,
    success: Order,
    failure: Order,
    scope: Scope,
) -> bool {
    match obj.compare_exchange(*expected, desired, success, failure, scope) {
        Ok(_) => true,
        Err(v) => {
            *expected = v;
            false
        }
    }
}
/// `atomic_compare_exchange_weak_explicit`
#[track_caller]
pub fn atomic_compare_exchange_weak_explicit(
    obj: &AtomicI32,
    expected: &mut i32,
    desired: i32,
    success: Order,
    failure: Order,
    scope: Scope,
) -> bool {
    match obj.compare_exchange_weak(*expected, desired, success, failure, scope) {
        Ok(_) => true,
        Err(v) => {
            *expected = v;
            false
        }
    }
}
