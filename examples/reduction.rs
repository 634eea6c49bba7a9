//! Work-group tree reduction in local memory (the classic first OpenCL
//! reduction, e.g. the AMD/NVIDIA SDK samples):
//!
//! ```c
//! kernel void reduce(global const uint *in, global uint *partial, local uint *scratch) {
//!     uint lid = get_local_id(0), sum = 0;
//!     for (uint i = get_global_id(0); i < n; i += get_global_size(0)) sum += in[i];
//!     scratch[lid] = sum;
//!     barrier(CLK_LOCAL_MEM_FENCE);
//!     for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
//!         if (lid < s) scratch[lid] += scratch[lid + s];
//!         barrier(CLK_LOCAL_MEM_FENCE);
//!     }
//!     if (lid == 0) partial[get_group_id(0)] = scratch[0];
//! }
//! ```
//!
//! Bugs: the barrier of the loop removed (a data race on `scratch`);
//! `CLK_GLOBAL_MEM_FENCE` where `CLK_LOCAL_MEM_FENCE` is needed (the barrier
//! synchronises only global memory: a data race on `scratch`, in local
//! memory); the barrier moved inside `if (lid < s)`, which is
//! `if (lid == 0)` in the last step (barrier divergence).
//!
//! `cargo run --release --example reduction` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, FenceFlags, GlobalBuffer, LocalBuffer, NdRange};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    NoBarrier,
    GlobalFence,
    DivergentBarrier,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Correct, Variant::NoBarrier, Variant::GlobalFence, Variant::DivergentBarrier];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::NoBarrier => "no-barrier",
            Variant::GlobalFence => "global-fence",
            Variant::DivergentBarrier => "divergent-barrier",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "barrier(CLK_LOCAL_MEM_FENCE) after the load and after each step",
            Variant::NoBarrier => "no barrier after each step of the tree",
            Variant::GlobalFence => "barrier(CLK_GLOBAL_MEM_FENCE): does not order local memory",
            Variant::DivergentBarrier => "the step's barrier inside `if (lid < s)` (in the last step: `if (lid == 0)`)",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

/// Reduce `input` with `groups` work-groups of `items` work-items (a power
/// of two); returns the per-group partial sums (the host adds them).
pub fn reduce(input: &[u32], groups: usize, items: usize, v: Variant) -> Vec<u32> {
    assert!(items.is_power_of_two());
    let data = GlobalBuffer::from_slice(input);
    let partial = GlobalBuffer::<u32>::new(groups);
    let flags = if v == Variant::GlobalFence { FenceFlags::GLOBAL } else { FenceFlags::LOCAL };
    launch_with_local(
        NdRange::new([groups * items], [items]),
        |_| LocalBuffer::<u32>::new(items),
        |it, scratch| {
            let lid = it.local_id(0);
            let mut sum = 0u32;
            let mut i = it.global_id(0);
            while i < data.len() {
                sum = sum.wrapping_add(data.read(i));
                i += it.global_size(0);
            }
            scratch.write(lid, sum);
            it.barrier(flags);
            let mut s = it.local_size(0) / 2;
            while s > 0 {
                if lid < s {
                    scratch.write(lid, scratch.read(lid).wrapping_add(scratch.read(lid + s)));
                    if v == Variant::DivergentBarrier {
                        it.barrier(flags);
                    }
                }
                if v != Variant::NoBarrier && v != Variant::DivergentBarrier {
                    it.barrier(flags);
                }
                s /= 2;
            }
            if lid == 0 {
                partial.write(it.group_id(0), scratch.read(0));
            }
        },
    );
    partial.to_vec()
}

/// The model-checked program: 2 work-groups of 4 work-items over 8 values.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 4)
}

/// The same with other sizes (input of `groups * items` values).
pub fn program_sized(v: Variant, groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let input: Vec<u32> = (1..=(groups * items) as u32).collect();
        let partial = reduce(&input, groups, items, v);
        for g in 0..groups {
            let expect: u32 = input[g * items..(g + 1) * items].iter().sum();
            assert_eq!(partial[g], expect, "partial sum of work-group {g}");
        }
    }
}

fn native() {
    let (groups, items, n) = (8, 32, 8 * 32 * 16 + 5);
    let input: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) % 1000).collect();
    let t = std::time::Instant::now();
    let partial = reduce(&input, groups, items, Variant::Correct);
    let total: u32 = partial.iter().sum();
    let expect: u32 = input.iter().sum();
    println!(
        "reduction of {n} values by {groups} work-groups x {items} work-items: {total} (sequential: {expect}): {} in {:?}",
        if total == expect { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "reduction",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
