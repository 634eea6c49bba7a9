//! The spin lock of "CUDA by Example" (Sanders and Kandrot, appendix A.1)
//! guarding a dot product's accumulation into one global, non-atomic sum:
//!
//! ```c
//! struct Lock { int *mutex;
//!     __device__ void lock()   { while (atomicCAS(mutex, 0, 1) != 0); }
//!     __device__ void unlock() { atomicExch(mutex, 0); }
//! };
//! __global__ void dot(Lock lock, float *a, float *b, float *c) {
//!     __shared__ float cache[threadsPerBlock];
//!     int tid = threadIdx.x + blockIdx.x * blockDim.x;
//!     float temp = 0;
//!     while (tid < N) { temp += a[tid] * b[tid]; tid += blockDim.x * gridDim.x; }
//!     cache[threadIdx.x] = temp;
//!     __syncthreads();
//!     for (int i = blockDim.x / 2; i != 0; i /= 2) {
//!         if (threadIdx.x < i) cache[threadIdx.x] += cache[threadIdx.x + i];
//!         __syncthreads();
//!     }
//!     if (threadIdx.x == 0) { lock.lock(); *c += cache[0]; lock.unlock(); }
//! }
//! ```
//!
//! Ported to OpenCL 2.0 atomics: the CAS takes the lock with
//! `memory_order_acquire`, the exchange frees it with
//! `memory_order_release`, both at `memory_scope_device` (the work-groups
//! contend). Integers instead of floats, so that the result can be compared
//! exactly with a sequential dot product.
//!
//! Bugs: the book's lock as printed has no memory ordering at all (the
//! erratum: without `__threadfence()` the next holder may not see `*c`),
//! here the CAS and the exchange relaxed: a data race on the sum; and the
//! lock at `memory_scope_work_group` while different work-groups contend:
//! the lock does not synchronise them (a data race, on the mutex itself and
//! on the sum).
//!
//! `cargo run --release --example spin_lock` runs the correct kernel
//! natively; `-- --check [variant|all]` model-checks a variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch_with_local, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

#[path = "common/cuda_lock.rs"]
mod cuda_lock;
pub use cuda_lock::Lock;

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    Relaxed,
    WorkGroupScope,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Correct, Variant::Relaxed, Variant::WorkGroupScope];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::Relaxed => "relaxed",
            Variant::WorkGroupScope => "work-group-scope",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "CAS acquire, exchange release, memory_scope_device",
            Variant::Relaxed => "the book's erratum: CAS and exchange relaxed (no fence)",
            Variant::WorkGroupScope => "the lock at memory_scope_work_group, contended by several work-groups",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
    fn lock(self) -> Lock {
        match self {
            Variant::Correct => Lock::new(Order::Acquire, Order::Release, Scope::Device),
            Variant::Relaxed => Lock::new(Order::Relaxed, Order::Relaxed, Scope::Device),
            Variant::WorkGroupScope => Lock::new(Order::Acquire, Order::Release, Scope::WorkGroup),
        }
    }
}

/// The dot product of `a` and `b` by `groups` work-groups of `items`
/// work-items (a power of two), accumulated under the lock.
pub fn dot(a: &[u32], b: &[u32], groups: usize, items: usize, v: Variant) -> u32 {
    assert!(items.is_power_of_two() && a.len() == b.len());
    let n = a.len();
    let (a, b) = (GlobalBuffer::from_slice(a), GlobalBuffer::from_slice(b));
    let c = GlobalBuffer::<u32>::new(1);
    let lock = v.lock();
    launch_with_local(
        NdRange::new([groups * items], [items]),
        |_| LocalBuffer::<u32>::new(items),
        |it, cache| {
            let lid = it.local_id(0);
            let mut tid = it.global_id(0);
            let mut temp = 0u32;
            while tid < n {
                temp = temp.wrapping_add(a.read(tid).wrapping_mul(b.read(tid)));
                tid += it.global_size(0);
            }
            cache.write(lid, temp);
            it.barrier(FenceFlags::LOCAL);
            let mut i = it.local_size(0) / 2;
            while i != 0 {
                if lid < i {
                    cache.write(lid, cache.read(lid).wrapping_add(cache.read(lid + i)));
                }
                it.barrier(FenceFlags::LOCAL);
                i /= 2;
            }
            if lid == 0 {
                lock.lock();
                c.write(0, c.read(0).wrapping_add(cache.read(0)));
                lock.unlock();
            }
        },
    );
    c.read(0)
}

fn sequential(a: &[u32], b: &[u32]) -> u32 {
    a.iter().zip(b).fold(0u32, |s, (x, y)| s.wrapping_add(x.wrapping_mul(*y)))
}

/// The model-checked program: 2 work-groups of 2 work-items, vectors of 4.
pub fn program(v: Variant) -> impl Fn() + Sync {
    program_sized(v, 2, 2)
}

/// The same with other sizes (vectors of `groups * items`).
pub fn program_sized(v: Variant, groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let n = groups * items;
        let a: Vec<u32> = (1..=n as u32).collect();
        let b: Vec<u32> = (0..n as u32).map(|i| i + 2).collect();
        assert_eq!(dot(&a, &b, groups, items, v), sequential(&a, &b), "dot product");
    }
}

fn native() {
    let (groups, items, n) = (8, 32, 33 * 64);
    let a: Vec<u32> = (0..n as u32).map(|i| i % 7).collect();
    let b: Vec<u32> = (0..n as u32).map(|i| (i * 3) % 11).collect();
    let t = std::time::Instant::now();
    let got = dot(&a, &b, groups, items, Variant::Correct);
    let expect = sequential(&a, &b);
    println!(
        "dot product of {n} elements by {groups} work-groups x {items} work-items under the spin lock: {got} (sequential: {expect}): {} in {:?}",
        if got == expect { "correct" } else { "WRONG" },
        t.elapsed()
    );
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "spin_lock",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
