//! Single-pass prefix scan with decoupled look-back (Merrill and Garland,
//! "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA
//! technical report NVR-2016-002).
//!
//! Each work-group scans one tile in local memory. Tiles are numbered in
//! the order work-groups start (a ticket from an atomic counter, as the
//! paper prescribes, so that a tile only waits for tiles that are already
//! running). A tile publishes its aggregate with status `A` ("aggregate
//! available") as soon as its local scan is done, then looks back over its
//! predecessors: it adds their aggregates while they show `A`, waits while
//! one shows `X` ("invalid"), and stops at the first `P` ("inclusive
//! prefix available"). Then it publishes its inclusive prefix with `P`.
//!
//! ```c
//! // work-item 0 of the tile
//! if (tile == 0) { incl[0] = agg; atomic_store_explicit(&flag[0], P, memory_order_release, memory_scope_device); }
//! else {
//!     aggr[tile] = agg; atomic_store_explicit(&flag[tile], A, memory_order_release, memory_scope_device);
//!     uint excl = 0;
//!     for (int p = tile - 1;;) {
//!         uint f = atomic_load_explicit(&flag[p], memory_order_acquire, memory_scope_device);
//!         if (f == X) continue;                              // wait
//!         if (f == A) { excl += aggr[p]; p--; continue; }     // keep looking back
//!         excl += incl[p]; break;                            // f == P
//!     }
//!     incl[tile] = excl + agg; atomic_store_explicit(&flag[tile], P, memory_order_release, memory_scope_device);
//! }
//! ```
//!
//! The values (`aggr`, `incl`) are ordinary global memory published
//! message-passing style by the release store of the flag (the paper packs
//! flag and value in one word where the hardware allows; separate words
//! need exactly this release/acquire pairing).
//!
//! Bug: the publication relaxed (the flag stores `memory_order_relaxed`):
//! a successor can see `A` or `P` without the value: a data race on the
//! tile's value (and a wrong prefix). A second variant relaxes the
//! look-back's loads instead.
//!
//! `cargo run --release --example prefix_scan` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, AtomicU32, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

/// Tile status: nothing published yet.
pub const X: u32 = 0;
/// Tile status: the tile's aggregate is available.
pub const A: u32 = 1;
/// Tile status: the tile's inclusive prefix is available.
pub const P: u32 = 2;

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    RelaxedPublish,
    RelaxedLookback,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Correct, Variant::RelaxedPublish, Variant::RelaxedLookback];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::RelaxedPublish => "relaxed-publish",
            Variant::RelaxedLookback => "relaxed-lookback",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "flags stored with release, read with acquire, memory_scope_device",
            Variant::RelaxedPublish => "the flag stores (publication of A and P) relaxed",
            Variant::RelaxedLookback => "the look-back's flag loads relaxed",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
    fn publish(self) -> Order {
        if self == Variant::RelaxedPublish {
            Order::Relaxed
        } else {
            Order::Release
        }
    }
    fn observe(self) -> Order {
        if self == Variant::RelaxedLookback {
            Order::Relaxed
        } else {
            Order::Acquire
        }
    }
}

/// Inclusive prefix sums of `input` (`groups * items` values, `items` a
/// power of two per tile) in one kernel.
pub fn scan(input: &[u32], groups: usize, items: usize, v: Variant) -> Vec<u32> {
    assert_eq!(input.len(), groups * items);
    let data = GlobalBuffer::from_slice(input);
    let out = GlobalBuffer::<u32>::new(input.len());
    let aggr = GlobalBuffer::<u32>::new(groups);
    let incl = GlobalBuffer::<u32>::new(groups);
    let flags: Vec<AtomicU32> = (0..groups).map(|_| AtomicU32::new(X)).collect();
    let next_tile = AtomicU32::new(0);
    launch_with_local(
        NdRange::new([groups * items], [items]),
        |_| (LocalBuffer::<u32>::new(items), LocalBuffer::<u32>::new(2)),
        |it, (s, shared)| {
            let lid = it.local_id(0);
            let n = it.local_size(0);
            // shared[0]: the tile id, shared[1]: the tile's exclusive prefix.
            if lid == 0 {
                shared.write(0, next_tile.fetch_add(1, Order::Relaxed, Scope::Device));
            }
            it.barrier(FenceFlags::LOCAL);
            let tile = shared.read(0) as usize;
            let gi = tile * n + lid;
            // Inclusive scan of the tile in local memory (Hillis and Steele).
            s.write(lid, data.read(gi));
            it.barrier(FenceFlags::LOCAL);
            let mut off = 1;
            while off < n {
                let t = if lid >= off { s.read(lid - off) } else { 0 };
                it.barrier(FenceFlags::LOCAL);
                s.write(lid, s.read(lid).wrapping_add(t));
                it.barrier(FenceFlags::LOCAL);
                off *= 2;
            }
            if lid == 0 {
                let agg = s.read(n - 1);
                let mut excl = 0u32;
                if tile == 0 {
                    incl.write(0, agg);
                    flags[0].store(P, v.publish(), Scope::Device);
                } else {
                    aggr.write(tile, agg);
                    flags[tile].store(A, v.publish(), Scope::Device);
                    let mut p = tile - 1;
                    loop {
                        match flags[p].load(v.observe(), Scope::Device) {
                            X => clmm::hint::spin_loop(),
                            A => {
                                excl = excl.wrapping_add(aggr.read(p));
                                p -= 1;
                            }
                            _ => {
                                excl = excl.wrapping_add(incl.read(p));
                                break;
                            }
                        }
                    }
                    incl.write(tile, excl.wrapping_add(agg));
                    flags[tile].store(P, v.publish(), Scope::Device);
                }
                shared.write(1, excl);
            }
            it.barrier(FenceFlags::LOCAL);
            out.write(gi, s.read(lid).wrapping_add(shared.read(1)));
        },
    );
    out.to_vec()
}

fn sequential(input: &[u32]) -> Vec<u32> {
    input
        .iter()
        .scan(0u32, |acc, x| {
            *acc = acc.wrapping_add(*x);
            Some(*acc)
        })
        .collect()
}

/// The model-checked program: 2 tiles (work-groups) of 2 work-items.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 2)
}

/// The same with other sizes.
pub fn program_sized(v: Variant, groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let input: Vec<u32> = (1..=(groups * items) as u32).collect();
        assert_eq!(scan(&input, groups, items, v), sequential(&input), "prefix sums");
    }
}

fn native() {
    let (groups, items) = (16, 64);
    let input: Vec<u32> = (0..(groups * items) as u32).map(|i| i.wrapping_mul(2654435761) % 100).collect();
    let t = std::time::Instant::now();
    let got = scan(&input, groups, items, Variant::Correct);
    let ok = got == sequential(&input);
    println!(
        "decoupled look-back scan of {} values by {groups} work-groups x {items} work-items: last prefix {}: {} in {:?}",
        input.len(),
        got.last().copied().unwrap_or(0),
        if ok { "correct (equal to the sequential scan)" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "prefix_scan",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
