//! The lock-free inter-work-group barrier of Xiao and Feng ("Inter-block
//! GPU communication via fast barrier synchronization", IPDPS 2010), as
//! ported to OpenCL 2.0 atomics by Sorensen et al. ("Portable inter-workgroup
//! barrier synchronisation for GPUs", OOPSLA 2016), used between two phases
//! of a kernel: phase 1 writes, the barrier, phase 2 reads what another
//! work-group wrote.
//!
//! ```c
//! void xf_barrier(global atomic_uint *in, global atomic_uint *out, uint goal) {
//!     uint tid = get_local_id(0), bid = get_group_id(0), groups = get_num_groups(0);
//!     barrier(CLK_GLOBAL_MEM_FENCE);                 // the group's phase is done
//!     if (tid == 0) atomic_store_explicit(&in[bid], goal, memory_order_release, memory_scope_device);
//!     if (bid == 0) {                                 // the master group
//!         if (tid < groups) while (atomic_load_explicit(&in[tid], memory_order_acquire, memory_scope_device) != goal) ;
//!         barrier(CLK_GLOBAL_MEM_FENCE);
//!         if (tid < groups) atomic_store_explicit(&out[tid], goal, memory_order_release, memory_scope_device);
//!     }
//!     if (tid == 0) while (atomic_load_explicit(&out[bid], memory_order_acquire, memory_scope_device) != goal) ;
//!     barrier(CLK_GLOBAL_MEM_FENCE);
//! }
//! ```
//!
//! Work-item `i` of the master group watches group `i`'s arrival flag, so
//! the master group needs at least as many work-items as there are groups.
//! (The original uses block 1 as the master; any fixed group will do.) Like
//! every inter-work-group barrier it needs all work-groups to be resident
//! at once; the checker and the native backend run them all.
//!
//! Bugs: the arrival/departure loads weakened to relaxed (phase 2 may read
//! stale phase-1 data: a data race), and the arrival/departure stores
//! weakened to relaxed (the same race, from the writing side).
//!
//! `cargo run --release --example global_barrier` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch, AtomicU32, FenceFlags, GlobalBuffer, NdRange, Order, Scope, WorkItem};

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    RelaxedAcquire,
    RelaxedRelease,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Correct, Variant::RelaxedAcquire, Variant::RelaxedRelease];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::RelaxedAcquire => "relaxed-acquire",
            Variant::RelaxedRelease => "relaxed-release",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "flag stores release, flag loads acquire, memory_scope_device",
            Variant::RelaxedAcquire => "the spinning flag loads relaxed",
            Variant::RelaxedRelease => "the flag stores relaxed",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
}

/// The barrier's flags, for `groups` work-groups.
pub struct XfBarrier {
    arrive: Vec<AtomicU32>,
    depart: Vec<AtomicU32>,
    acquire: Order,
    release: Order,
}

impl XfBarrier {
    pub fn new(groups: usize, v: Variant) -> XfBarrier {
        XfBarrier {
            arrive: (0..groups).map(|_| AtomicU32::new(0)).collect(),
            depart: (0..groups).map(|_| AtomicU32::new(0)).collect(),
            acquire: if v == Variant::RelaxedAcquire { Order::Relaxed } else { Order::Acquire },
            release: if v == Variant::RelaxedRelease { Order::Relaxed } else { Order::Release },
        }
    }

    /// The `goal`-th use of the barrier (goals must differ between uses).
    pub fn wait(&self, it: &WorkItem, goal: u32) {
        let (tid, bid, groups) = (it.local_id(0), it.group_id(0), it.num_groups(0));
        it.barrier(FenceFlags::GLOBAL);
        if tid == 0 {
            self.arrive[bid].store(goal, self.release, Scope::Device);
        }
        if bid == 0 {
            if tid < groups {
                while self.arrive[tid].load(self.acquire, Scope::Device) != goal {
                    clmm::hint::spin_loop();
                }
            }
            it.barrier(FenceFlags::GLOBAL);
            if tid < groups {
                self.depart[tid].store(goal, self.release, Scope::Device);
            }
        }
        if tid == 0 {
            while self.depart[bid].load(self.acquire, Scope::Device) != goal {
                clmm::hint::spin_loop();
            }
        }
        it.barrier(FenceFlags::GLOBAL);
    }
}

/// Phase 1: work-item `g` writes `f(g)` to `data[g]`; the global barrier;
/// phase 2: it reads the value written by the work-item one work-group
/// further (`(g + items) % n`) and returns it.
pub fn two_phases(groups: usize, items: usize, v: Variant) -> Vec<u32> {
    assert!(items >= groups, "the master work-group needs a work-item per work-group");
    let n = groups * items;
    let data = GlobalBuffer::<u32>::new(n);
    let bar = XfBarrier::new(groups, v);
    launch(NdRange::new([n], [items]), |it| {
        let g = it.global_id(0);
        data.write(g, phase1(g));
        bar.wait(it, 1);
        data.read((g + items) % n)
    })
}

fn phase1(g: usize) -> u32 {
    (g as u32).wrapping_mul(7) + 1
}

/// The model-checked program: 2 work-groups of 2 work-items.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 2)
}

/// The same with other sizes (`items >= groups`).
pub fn program_sized(v: Variant, groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let n = groups * items;
        let got = two_phases(groups, items, v);
        for (g, x) in got.into_iter().enumerate() {
            assert_eq!(x, phase1((g + items) % n), "work-item {g} read stale data after the barrier");
        }
    }
}

fn native() {
    let (groups, items) = (8, 16);
    let n = groups * items;
    let t = std::time::Instant::now();
    let got = two_phases(groups, items, Variant::Correct);
    let wrong = got.iter().enumerate().filter(|&(g, &x)| x != phase1((g + items) % n)).count();
    println!(
        "Xiao-Feng global barrier between two phases, {groups} work-groups x {items} work-items: {} in {:?}",
        if wrong == 0 {
            "correct (every work-item read its neighbour group's phase-1 value)".to_string()
        } else {
            format!("WRONG ({wrong} stale reads)")
        },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "global_barrier",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
