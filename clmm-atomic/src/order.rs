//! Memory orders, memory scopes and fence flags (OpenCL C 2.0 §6.13.11,
//! spec excerpt `002_838a18ca613b0374.txt`, §3.3.5).

use bitflags::bitflags;
use std::fmt;

/// `memory_order`: the five orders of OpenCL C 2.0 (§6.13.11.4).
///
/// `memory_order_consume` does not exist in OpenCL C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Order {
    /// `memory_order_relaxed`
    Relaxed,
    /// `memory_order_acquire`
    Acquire,
    /// `memory_order_release`
    Release,
    /// `memory_order_acq_rel`
    AcqRel,
    /// `memory_order_seq_cst`
    SeqCst,
}

impl Order {
    /// True for `acquire`, `acq_rel` and `seq_cst` (`acq` in `opencl_base.cat`).
    pub fn is_acquire(self) -> bool {
        matches!(self, Order::Acquire | Order::AcqRel | Order::SeqCst)
    }
    /// True for `release`, `acq_rel` and `seq_cst` (`rel` in `opencl_base.cat`).
    pub fn is_release(self) -> bool {
        matches!(self, Order::Release | Order::AcqRel | Order::SeqCst)
    }
    /// True for `seq_cst` (`mo_sc`).
    pub fn is_sc(self) -> bool {
        self == Order::SeqCst
    }
    /// The OpenCL C spelling, `memory_order_acquire` and so on.
    pub fn cl_name(self) -> &'static str {
        match self {
            Order::Relaxed => "memory_order_relaxed",
            Order::Acquire => "memory_order_acquire",
            Order::Release => "memory_order_release",
            Order::AcqRel => "memory_order_acq_rel",
            Order::SeqCst => "memory_order_seq_cst",
        }
    }
}

impl fmt::Display for Order {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Order::Relaxed => "relaxed",
            Order::Acquire => "acquire",
            Order::Release => "release",
            Order::AcqRel => "acq_rel",
            Order::SeqCst => "seq_cst",
        })
    }
}

/// `memory_scope`: the set of work-items an atomic operation or fence
/// synchronises with (§3.3.5, "memory scope"). Ordered from narrowest to
/// widest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Scope {
    /// `memory_scope_work_item`: only the work-item itself (never synchronises
    /// with another unit).
    WorkItem,
    /// `memory_scope_sub_group`: the work-items of one sub-group.
    SubGroup,
    /// `memory_scope_work_group`: the work-items of one work-group.
    WorkGroup,
    /// `memory_scope_device`: the work-items of one device.
    Device,
    /// `memory_scope_all_svm_devices`: every device and the host.
    AllSvmDevices,
}

impl Scope {
    /// The OpenCL C spelling, `memory_scope_device` and so on.
    pub fn cl_name(self) -> &'static str {
        match self {
            Scope::WorkItem => "memory_scope_work_item",
            Scope::SubGroup => "memory_scope_sub_group",
            Scope::WorkGroup => "memory_scope_work_group",
            Scope::Device => "memory_scope_device",
            Scope::AllSvmDevices => "memory_scope_all_svm_devices",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.cl_name())
    }
}

bitflags! {
    /// `cl_mem_fence_flags`: the memory regions a fence or barrier orders
    /// (spec excerpt `001_96da91f170ff246f.txt`).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
    pub struct FenceFlags: u8 {
        /// `CLK_LOCAL_MEM_FENCE`
        const LOCAL = 1;
        /// `CLK_GLOBAL_MEM_FENCE`
        const GLOBAL = 2;
        /// `CLK_IMAGE_MEM_FENCE` (clmm has no images; accepted and ignored)
        const IMAGE = 4;
    }
}

impl fmt::Display for FenceFlags {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.contains(FenceFlags::GLOBAL) {
            parts.push("CLK_GLOBAL_MEM_FENCE");
        }
        if self.contains(FenceFlags::LOCAL) {
            parts.push("CLK_LOCAL_MEM_FENCE");
        }
        if self.contains(FenceFlags::IMAGE) {
            parts.push("CLK_IMAGE_MEM_FENCE");
        }
        if parts.is_empty() {
            f.write_str("0")
        } else {
            f.write_str(&parts.join(" | "))
        }
    }
}
