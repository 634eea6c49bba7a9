//! `clmm-atomic`: what user code touches (DESIGN.md §2).
//!
//! Scoped atomics ([`AtomicU32`] and friends, each operation taking an
//! [`Order`] and a [`Scope`]), non-atomic [`GlobalBuffer`] and
//! [`LocalBuffer`], fences, work-group and sub-group barriers and
//! collectives (broadcast, reduce, scan, all, any), [`NdRange`],
//! [`Topology`], [`WorkItem`] and [`fn@launch`]; on the host side ([`host`]),
//! host threads, contexts, command queues, events and [`SvmBuffer`].
//! Inside a model run every operation becomes an event ([`backend::Op`],
//! [`backend::HostOp`]) handed to the active
//! [`backend::Backend`]; outside, the same types run natively on `std`
//! atomics and real threads, so a port is runnable code too.

#![warn(missing_docs)]

mod atomic;
pub mod backend;
mod buffer;
mod collective;
pub mod host;
mod launch;
mod ndrange;
mod order;
mod sync;
mod value;

pub use atomic::{AtomicF32, AtomicFlag, AtomicI32, AtomicI64, AtomicU32, AtomicU64, AtomicUsize};
pub use buffer::{GlobalBuffer, HostBuffer, LocalBuffer, MemKind, MemObject, SvmBuffer};
pub use launch::{launch, launch_with_local, Range, WorkGroup};
pub use ndrange::{GroupPlan, LaunchPlan, NdRange, NdRangeError, Topology, WorkItem};
pub use order::{FenceFlags, Order, Scope};
pub use sync::{atomic_work_item_fence, hint, mem_fence, read_mem_fence, write_mem_fence};
pub use value::{NumTy, NumValue, RmwOp, Value};
