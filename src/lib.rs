//! # clmm: a model checker for Rust ports of OpenCL 2.x kernels
//!
//! Write an ordinary `#[test]` that calls [`model`] with a closure that
//! launches your kernel; clmm reruns the closure over every execution the
//! OpenCL 2.x memory model allows and reports data races (including races
//! between non-inclusive scopes), barrier divergence, deadlocks and failed
//! assertions, with a trace and a replay string.
//!
//! ```
//! use clmm::{launch, model, AtomicU32, GlobalBuffer, NdRange, Order, Scope};
//!
//! model(|| {
//!     let data = GlobalBuffer::<u32>::new(1);
//!     let flag = AtomicU32::new(0);
//!     launch(NdRange::new([2], [1]), |item| {
//!         if item.group_id(0) == 0 {
//!             data.write(0, 42);
//!             flag.store(1, Order::Release, Scope::Device);
//!         } else if flag.load(Order::Acquire, Scope::Device) == 1 {
//!             assert_eq!(data.read(0), 42);
//!         }
//!     });
//! });
//! ```

#![warn(missing_docs)]

mod builder;
pub mod litmus;
pub mod cl;

pub use builder::{Builder, Explored, Outcome};
pub use clmm_atomic::{
    atomic_work_item_fence, hint, launch, launch_with_local, mem_fence, read_mem_fence, write_mem_fence, AtomicF32, AtomicFlag,
    AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicUsize, FenceFlags, GlobalBuffer, HostBuffer, LocalBuffer, MemKind, MemObject, NdRange, NdRangeError, NumValue,
    Order, Range, Scope, SvmBuffer, Topology, Value, WorkGroup, WorkItem,
};
/// Host threads, contexts, command queues, events and user events (see the
/// README's "Host side").
pub use clmm_atomic::host;
pub use clmm_check::{BlockedBy, Failure, FailureKind, ScModel, Shard, Stats};

/// Explore every execution of `f` allowed by the OpenCL 2.x memory model and
/// panic with a report at the first failure. Configure with [`Builder`] (and
/// the `CLMM_*` environment variables, see the README).
#[track_caller]
pub fn model<F: Fn() + Sync>(f: F) {
    Builder::new().model(f)
}

/// The most used names.
pub mod prelude {
    pub use crate::{
        atomic_work_item_fence, launch, launch_with_local, model, AtomicI32, AtomicU32, Builder, FenceFlags, GlobalBuffer, LocalBuffer,
        NdRange, Order, Scope, WorkItem,
    };
}
