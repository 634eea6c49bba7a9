//! Work-group reduction that finishes inside one sub-group, in two
//! styles: the tree in local memory whose last steps, inside one
//! sub-group (a CUDA warp), are "warp-synchronous" (the CUDA SDK's
//! `reduce6` unrolls them with no `__syncthreads()` and a `volatile`
//! pointer), and the same with OpenCL 2.0 sub-group collectives:
//!
//! ```c
//! kernel void reduce(global const uint *in, global uint *out, local uint *scratch) {
//!     uint lid = get_local_id(0), n = get_local_size(0), sg = get_max_sub_group_size();
//!     scratch[lid] = in[get_global_id(0)];
//!     barrier(CLK_LOCAL_MEM_FENCE);
//!     for (uint s = n / 2; s >= sg; s >>= 1) {              // across sub-groups
//!         if (lid < s) scratch[lid] += scratch[lid + s];
//!         barrier(CLK_LOCAL_MEM_FENCE);
//!     }
//!     if (lid < sg)                                          // sub-group 0 only
//!         for (uint s = sg / 2; s > 0; s >>= 1) {
//!             uint v = scratch[lid] + scratch[lid + s];      // read, then
//!             sub_group_barrier(CLK_LOCAL_MEM_FENCE);
//!             if (lid < s) scratch[lid] = v;                 // write
//!             sub_group_barrier(CLK_LOCAL_MEM_FENCE);
//!         }
//!     if (lid == 0) out[get_group_id(0)] = scratch[0];
//! }
//! ```
//!
//! The collectives version: `uint s = sub_group_reduce_add(in[gid])`; each
//! sub-group's first work-item stores `s` in `scratch[sub_group_id]`; a
//! work-group barrier; work-item 0 adds the partial sums.
//!
//! Bugs: the warp-synchronous last steps without the sub-group barriers
//! (work-items of a sub-group are not in lockstep: OpenCL, like CUDA since
//! Volta's independent thread scheduling, guarantees nothing; a data race
//! in local memory); a `sub_group_barrier` where the tree still crosses
//! sub-groups (it orders one sub-group only: a data race); the
//! collectives version with a `sub_group_barrier` instead of the
//! work-group barrier before the partial sums are added (a data race).
//!
//! `cargo run --release --example subgroup_reduction` runs the correct
//! kernels natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, FenceFlags, GlobalBuffer, LocalBuffer, NdRange};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    WarpSynchronous,
    SubGroupBarrierAcross,
    Collectives,
    CollectivesSubGroupBarrier,
}

impl Variant {
    pub const ALL: [Variant; 5] =
        [Variant::Correct, Variant::WarpSynchronous, Variant::SubGroupBarrierAcross, Variant::Collectives, Variant::CollectivesSubGroupBarrier];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::WarpSynchronous => "warp-synchronous",
            Variant::SubGroupBarrierAcross => "sub-group-barrier-across",
            Variant::Collectives => "collectives",
            Variant::CollectivesSubGroupBarrier => "collectives-sub-group-barrier",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "tree in local memory; the last steps inside sub-group 0 with sub_group_barrier",
            Variant::WarpSynchronous => "the last steps inside sub-group 0 with no barrier (CUDA's implicit warp synchrony)",
            Variant::SubGroupBarrierAcross => "sub_group_barrier at a step that still crosses sub-groups",
            Variant::Collectives => "sub_group_reduce_add, partial sums in local memory, a work-group barrier",
            Variant::CollectivesSubGroupBarrier => "the collectives version with sub_group_barrier before the partial sums are added",
        }
    }
    pub fn is_correct(self) -> bool {
        matches!(self, Variant::Correct | Variant::Collectives)
    }
}

/// Per work-group sums of `input` by `groups` work-groups of `items`
/// work-items (a power of two) in sub-groups of `sg` (a power of two, at
/// most `items`).
pub fn reduce(input: &[u32], groups: usize, items: usize, sg: usize, v: Variant) -> Vec<u32> {
    assert!(items.is_power_of_two() && sg.is_power_of_two() && sg <= items);
    let data = GlobalBuffer::from_slice(input);
    let out = GlobalBuffer::<u32>::new(groups);
    let range = NdRange::new([groups * items], [items]).with_sub_group_size(sg);
    launch_with_local(range, |_| LocalBuffer::<u32>::new(items), |it, scratch| {
        let lid = it.local_id(0);
        let x = data.read(it.global_id(0));
        if matches!(v, Variant::Collectives | Variant::CollectivesSubGroupBarrier) {
            let s = it.sub_group_reduce_add(x);
            if it.sub_group_local_id() == 0 {
                scratch.write(it.sub_group_id(), s);
            }
            if v == Variant::CollectivesSubGroupBarrier {
                it.sub_group_barrier(FenceFlags::LOCAL);
            } else {
                it.barrier(FenceFlags::LOCAL);
            }
            if lid == 0 {
                let total = (0..items / sg).fold(0u32, |t, k| t.wrapping_add(scratch.read(k)));
                out.write(it.group_id(0), total);
            }
            return;
        }
        scratch.write(lid, x);
        it.barrier(FenceFlags::LOCAL);
        let mut s = items / 2;
        while s >= sg {
            if lid < s {
                scratch.write(lid, scratch.read(lid).wrapping_add(scratch.read(lid + s)));
            }
            if v == Variant::SubGroupBarrierAcross && s == items / 2 {
                it.sub_group_barrier(FenceFlags::LOCAL);
            } else {
                it.barrier(FenceFlags::LOCAL);
            }
            s /= 2;
        }
        if lid < sg {
            let mut s = sg / 2;
            while s > 0 {
                let sum = scratch.read(lid).wrapping_add(scratch.read(lid + s));
                if v != Variant::WarpSynchronous {
                    it.sub_group_barrier(FenceFlags::LOCAL);
                }
                if lid < s {
                    scratch.write(lid, sum);
                }
                if v != Variant::WarpSynchronous {
                    it.sub_group_barrier(FenceFlags::LOCAL);
                }
                s /= 2;
            }
        }
        if lid == 0 {
            out.write(it.group_id(0), scratch.read(0));
        }
    });
    out.to_vec()
}

/// The model-checked program: one work-group of 16 work-items in
/// sub-groups of 4, the values 1 to 16: two steps cross sub-groups (the
/// second reads what the first wrote in another sub-group), two stay in
/// sub-group 0 (the second reads what the first wrote in another lane).
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 1, 16, 4)
}

/// The same with other sizes (the values 1 to `groups * items`).
pub fn program_sized(v: Variant, groups: usize, items: usize, sg: usize) -> impl Fn() + Sync {
    move || {
        let input: Vec<u32> = (1..=(groups * items) as u32).collect();
        let sums = reduce(&input, groups, items, sg, v);
        for g in 0..groups {
            let expect: u32 = input[g * items..(g + 1) * items].iter().sum();
            assert_eq!(sums[g], expect, "sum of work-group {g}");
        }
    }
}

fn native() {
    let (groups, items, sg) = (8, 64, 16);
    let input: Vec<u32> = (0..(groups * items) as u32).map(|i| i.wrapping_mul(2654435761) % 1000).collect();
    for v in [Variant::Correct, Variant::Collectives] {
        let t = std::time::Instant::now();
        let sums = reduce(&input, groups, items, sg, v);
        let ok = (0..groups).all(|g| sums[g] == input[g * items..(g + 1) * items].iter().sum::<u32>());
        println!(
            "{} reduction by {groups} work-groups x {items} work-items in sub-groups of {sg}: {} in {:?}",
            v.name(),
            if ok { "correct" } else { "WRONG" },
            t.elapsed()
        );
    }
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "subgroup_reduction",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
