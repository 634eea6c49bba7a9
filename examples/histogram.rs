//! Histogram with per-work-group bins in local memory (Sanders and Kandrot,
//! *CUDA by Example*, section 9.4, `histo_kernel` with shared-memory
//! atomics; the OpenCL SDK histogram samples have the same shape):
//!
//! ```c
//! kernel void histogram(global const uint *data, uint n, global atomic_uint *bins,
//!                       local atomic_uint *temp) {
//!     uint lid = get_local_id(0);
//!     for (uint b = lid; b < BINS; b += get_local_size(0)) atomic_init(&temp[b], 0);
//!     barrier(CLK_LOCAL_MEM_FENCE);
//!     for (uint i = get_global_id(0); i < n; i += get_global_size(0))
//!         atomic_fetch_add_explicit(&temp[data[i] % BINS], 1, memory_order_relaxed,
//!                                   memory_scope_work_group);
//!     barrier(CLK_LOCAL_MEM_FENCE);
//!     for (uint b = lid; b < BINS; b += get_local_size(0))
//!         atomic_fetch_add_explicit(&bins[b], atomic_load_explicit(&temp[b],
//!                                   memory_order_relaxed, memory_scope_work_group),
//!                                   memory_order_relaxed, memory_scope_device);
//! }
//! ```
//!
//! Bugs: the barrier between counting and merging removed (a work-item
//! merges a bin before the others have counted into it: a wrong
//! histogram); the merge into the global bins at `memory_scope_work_group`
//! (the work-groups' atomics are not inclusive: a data race on a bin); the
//! local bins counted with a plain read and write instead of an atomic
//! (a data race in local memory).
//!
//! `cargo run --release --example histogram` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, AtomicU32, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    NoBarrier,
    WorkGroupScope,
    PlainLocal,
}

impl Variant {
    pub const ALL: [Variant; 4] = [Variant::Correct, Variant::NoBarrier, Variant::WorkGroupScope, Variant::PlainLocal];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::NoBarrier => "no-barrier",
            Variant::WorkGroupScope => "work-group-scope",
            Variant::PlainLocal => "plain-local",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "local atomic bins, a barrier, then a merge into the global bins at memory_scope_device",
            Variant::NoBarrier => "no barrier between counting into the local bins and merging them",
            Variant::WorkGroupScope => "the merge into the global bins at memory_scope_work_group",
            Variant::PlainLocal => "the local bins counted with a plain read and write",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

/// The local bins of one work-group.
pub enum LocalBins {
    Atomic(Vec<AtomicU32>),
    Plain(LocalBuffer<u32>),
}

/// The histogram of `data` into `bins` bins (`value % bins`), by `groups`
/// work-groups of `items` work-items.
pub fn histogram(data: &[u32], bins: usize, groups: usize, items: usize, v: Variant) -> Vec<u32> {
    let input = GlobalBuffer::from_slice(data);
    let global: Vec<AtomicU32> = (0..bins).map(|_| AtomicU32::new(0)).collect();
    let merge_scope = if v == Variant::WorkGroupScope { Scope::WorkGroup } else { Scope::Device };
    launch_with_local(
        NdRange::new([groups * items], [items]),
        |_| match v {
            // Created zero in the work-group's local memory: the
            // `atomic_init` loop and its barrier.
            Variant::PlainLocal => LocalBins::Plain(LocalBuffer::new(bins)),
            _ => LocalBins::Atomic((0..bins).map(|_| AtomicU32::new(0)).collect()),
        },
        |it, local| {
            let mut i = it.global_id(0);
            while i < input.len() {
                let b = input.read(i) as usize % bins;
                match local {
                    LocalBins::Atomic(t) => {
                        t[b].fetch_add(1, Order::Relaxed, Scope::WorkGroup);
                    }
                    LocalBins::Plain(t) => t.write(b, t.read(b) + 1),
                }
                i += it.global_size(0);
            }
            if v != Variant::NoBarrier {
                it.barrier(FenceFlags::LOCAL);
            }
            let mut b = it.local_id(0);
            while b < bins {
                let count = match local {
                    LocalBins::Atomic(t) => t[b].load(Order::Relaxed, Scope::WorkGroup),
                    LocalBins::Plain(t) => t.read(b),
                };
                if count > 0 {
                    global[b].fetch_add(count, Order::Relaxed, merge_scope);
                }
                b += it.local_size(0);
            }
        },
    );
    global.iter().map(|b| b.load(Order::Relaxed, Scope::Device)).collect()
}

/// The histogram of `data` computed sequentially.
pub fn expected(data: &[u32], bins: usize) -> Vec<u32> {
    let mut h = vec![0; bins];
    for &x in data {
        h[x as usize % bins] += 1;
    }
    h
}

/// The model-checked program: 2 work-groups of 2 work-items, 6 values, 2
/// bins.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 2, 6)
}

/// The same with other sizes, into 2 bins: each pass of the work-items
/// over the data (`get_global_size(0)` values) counts into one bin, the
/// next pass into the other, so that the work-items of a group share the
/// bins they count into.
pub fn program_sized(v: Variant, groups: usize, items: usize, n: usize) -> impl Fn() + Sync {
    move || {
        let data: Vec<u32> = (0..n).map(|i| (i / (groups * items) % 2) as u32).collect();
        assert_eq!(histogram(&data, 2, groups, items, v), expected(&data, 2), "the histogram");
    }
}

fn native() {
    let (groups, items, bins, n) = (8, 32, 61, 100_003);
    let data: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 7).collect();
    let t = std::time::Instant::now();
    let h = histogram(&data, bins, groups, items, Variant::Correct);
    println!(
        "histogram of {n} values into {bins} bins by {groups} work-groups x {items} work-items: {} in {:?}",
        if h == expected(&data, bins) { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "histogram",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
