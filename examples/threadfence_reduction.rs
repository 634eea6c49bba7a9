//! The "threadfence reduction" of the CUDA samples (`threadFenceReduction`):
//! a single-pass sum. Each work-group reduces its part in local memory and
//! writes its partial sum to global memory; the last work-group to finish
//! (the one whose ticket from an atomic counter is `groups - 1`) adds the
//! partial sums.
//!
//! ```c
//! // (block reduction of this group's part into sdata[0])
//! if (tid == 0) {
//!     g_odata[blockIdx.x] = sdata[0];
//!     __threadfence();                       // make the partial visible first
//!     unsigned ticket = atomicInc(&retirementCount, gridDim.x);
//!     amLast = (ticket == gridDim.x - 1);
//! }
//! __syncthreads();
//! if (amLast) {                              // the last group sums the partials
//!     sum = 0; for (i = tid; i < gridDim.x; i += blockDim.x) sum += g_odata[i];
//!     // (block reduction of sum)
//!     if (tid == 0) { g_odata[0] = sdata[0]; retirementCount = 0; }
//! }
//! ```
//!
//! In OpenCL 2.0 terms: `__threadfence()` is
//! `atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_release,
//! memory_scope_device)` before a relaxed `atomic_fetch_add`; the last
//! group, having seen the final count, needs the matching acquire fence
//! (CUDA's `volatile` loads leave it implicit) before reading the partials,
//! and `barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)` passes both the
//! verdict (in local memory) and what the acquire made visible (global) to
//! the rest of the group.
//!
//! Bug: the fence removed (the partial sum may not be visible to the last
//! group: a data race on it, and a wrong total). A second variant drops the
//! reader's acquire fence instead (the same race, seen from the other end).
//!
//! `cargo run --release --example threadfence_reduction` runs the correct
//! kernel natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{atomic_work_item_fence, launch_with_local, AtomicU32, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    NoFence,
    NoAcquire,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Correct, Variant::NoFence, Variant::NoAcquire];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::NoFence => "no-fence",
            Variant::NoAcquire => "no-acquire",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "release fence before the ticket, acquire fence in the last group",
            Variant::NoFence => "the __threadfence() (release fence) before the ticket removed",
            Variant::NoAcquire => "the last group's acquire fence removed",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

/// Sum `input` with `groups` work-groups of `items` work-items (a power of
/// two) in one kernel; returns `g_odata[0]`.
pub fn reduce(input: &[u32], groups: usize, items: usize, v: Variant) -> u32 {
    assert!(items.is_power_of_two());
    let n = input.len();
    let data = GlobalBuffer::from_slice(input);
    let g_odata = GlobalBuffer::<u32>::new(groups);
    let retirement_count = AtomicU32::new(0);
    launch_with_local(
        NdRange::new([groups * items], [items]),
        |_| (LocalBuffer::<u32>::new(items), LocalBuffer::<u32>::new(1)),
        |it, (sdata, am_last)| {
            let tid = it.local_id(0);
            let block_reduce = |x: u32| -> u32 {
                sdata.write(tid, x);
                it.barrier(FenceFlags::LOCAL);
                let mut s = it.local_size(0) / 2;
                while s > 0 {
                    if tid < s {
                        sdata.write(tid, sdata.read(tid).wrapping_add(sdata.read(tid + s)));
                    }
                    it.barrier(FenceFlags::LOCAL);
                    s /= 2;
                }
                sdata.read(0)
            };
            let mut sum = 0u32;
            let mut i = it.global_id(0);
            while i < n {
                sum = sum.wrapping_add(data.read(i));
                i += it.global_size(0);
            }
            let part = block_reduce(sum);
            if tid == 0 {
                g_odata.write(it.group_id(0), part);
                if v != Variant::NoFence {
                    atomic_work_item_fence(FenceFlags::GLOBAL, Order::Release, Scope::Device);
                }
                let ticket = retirement_count.fetch_add(1, Order::Relaxed, Scope::Device);
                let last = ticket as usize == it.num_groups(0) - 1;
                if last && v != Variant::NoAcquire {
                    atomic_work_item_fence(FenceFlags::GLOBAL, Order::Acquire, Scope::Device);
                }
                am_last.write(0, last as u32);
            }
            it.barrier(FenceFlags::LOCAL | FenceFlags::GLOBAL);
            if am_last.read(0) == 1 {
                let mut sum = 0u32;
                let mut i = tid;
                while i < it.num_groups(0) {
                    sum = sum.wrapping_add(g_odata.read(i));
                    i += it.local_size(0);
                }
                // `block_reduce` starts by overwriting sdata: every work-item
                // has read sdata[0] above, before the barrier.
                let total = block_reduce(sum);
                if tid == 0 {
                    g_odata.write(0, total);
                    retirement_count.store(0, Order::Relaxed, Scope::Device);
                }
            }
        },
    );
    g_odata.read(0)
}

/// The model-checked program: 2 work-groups of 2 work-items over 4 values.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 2)
}

/// The same with other sizes (`groups * items` values).
pub fn program_sized(v: Variant, groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let input: Vec<u32> = (1..=(groups * items) as u32).collect();
        assert_eq!(reduce(&input, groups, items, v), input.iter().sum::<u32>(), "total");
    }
}

fn native() {
    let (groups, items, n) = (16, 32, 16 * 32 * 8 + 3);
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % 1000).collect();
    let t = std::time::Instant::now();
    let got = reduce(&input, groups, items, Variant::Correct);
    let expect: u32 = input.iter().sum();
    println!(
        "threadfence reduction of {n} values by {groups} work-groups x {items} work-items: {got} (sequential: {expect}): {} in {:?}",
        if got == expect { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "threadfence_reduction",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
