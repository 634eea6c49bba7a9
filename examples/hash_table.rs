//! The GPU hash table of "CUDA by Example" (Sanders and Kandrot, appendix
//! A.2): chained buckets, one spin lock per bucket, entries preallocated in a
//! pool (entry `tid` belongs to work-item `tid`), inserts from every
//! work-group:
//!
//! ```c
//! __global__ void add_to_table(unsigned *keys, void **values, Table table, Lock *lock) {
//!     int tid = threadIdx.x + blockIdx.x * blockDim.x;
//!     while (tid < ELEMENTS) {
//!         unsigned key = keys[tid];
//!         size_t h = key % table.count;
//!         /* (a loop serialising the 32 threads of a warp, for SIMT) */
//!         Entry *location = &table.pool[tid];
//!         location->key = key;
//!         location->value = values[tid];
//!         lock[h].lock();
//!         location->next = table.entries[h];
//!         table.entries[h] = location;
//!         lock[h].unlock();
//!         tid += blockDim.x * gridDim.x;
//!     }
//! }
//! ```
//!
//! The lock is the book's (`atomicCAS` / `atomicExch`), ported with
//! `memory_order_acquire` / `memory_order_release` at `memory_scope_device`.
//! The warp-serialising loop only avoids a SIMT deadlock and does not change
//! the memory-model behaviour, so the port leaves it out. Entries are
//! indices into the pool (`NIL` ends a chain).
//!
//! Bugs: the unlock relaxed (the next holder of the bucket's lock may read
//! a stale head: a data race on the bucket head), and the locks at
//! `memory_scope_work_group` while work-groups contend (a data race).
//!
//! `cargo run --release --example hash_table` builds a table natively and
//! checks it against the keys; `-- --check [variant|all]` model-checks a
//! variant.

#![allow(dead_code)]

#[path = "common/mod.rs"]
mod common;

use clmm::{launch, GlobalBuffer, NdRange, Order, Scope};

/// End of a chain.
pub const NIL: u32 = u32::MAX;

#[path = "common/cuda_lock.rs"]
mod cuda_lock;
pub use cuda_lock::Lock;

/// The variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Correct,
    RelaxedUnlock,
    WorkGroupScope,
}

impl Variant {
    pub const ALL: [Variant; 3] = [Variant::Correct, Variant::RelaxedUnlock, Variant::WorkGroupScope];
    pub fn name(self) -> &'static str {
        match self {
            Variant::Correct => "correct",
            Variant::RelaxedUnlock => "relaxed-unlock",
            Variant::WorkGroupScope => "work-group-scope",
        }
    }
    pub fn describe(self) -> &'static str {
        match self {
            Variant::Correct => "per-bucket locks: CAS acquire, exchange release, memory_scope_device",
            Variant::RelaxedUnlock => "the unlocking exchange relaxed",
            Variant::WorkGroupScope => "the bucket locks at memory_scope_work_group, inserts from several work-groups",
        }
    }
    pub fn is_correct(self) -> bool {
        self == Variant::Correct
    }
    fn lock(self) -> Lock {
        match self {
            Variant::Correct => Lock::new(Order::Acquire, Order::Release, Scope::Device),
            Variant::RelaxedUnlock => Lock::new(Order::Acquire, Order::Relaxed, Scope::Device),
            Variant::WorkGroupScope => Lock::new(Order::Acquire, Order::Release, Scope::WorkGroup),
        }
    }
}

/// The table after the kernel, read back by the host: for each bucket, its
/// chain as (key, value) pairs from the head.
pub type Chains = Vec<Vec<(u32, u32)>>;

/// Insert `keys[i] -> values[i]` into a table of `buckets` chains with
/// `groups` work-groups of `items` work-items; returns the chains.
pub fn build(keys: &[u32], values: &[u32], buckets: usize, groups: usize, items: usize, v: Variant) -> Chains {
    let n = keys.len();
    let (keys, values) = (GlobalBuffer::from_slice(keys), GlobalBuffer::from_slice(values));
    let heads = GlobalBuffer::from_fn(buckets, |_| NIL);
    let (pool_key, pool_value, pool_next) = (GlobalBuffer::<u32>::new(n), GlobalBuffer::<u32>::new(n), GlobalBuffer::<u32>::new(n));
    let locks: Vec<Lock> = (0..buckets).map(|_| v.lock()).collect();
    launch(NdRange::new([groups * items], [items]), |it| {
        let mut tid = it.global_id(0);
        while tid < n {
            let key = keys.read(tid);
            let h = key as usize % buckets;
            let location = tid;
            pool_key.write(location, key);
            pool_value.write(location, values.read(tid));
            locks[h].lock();
            pool_next.write(location, heads.read(h));
            heads.write(h, location as u32);
            locks[h].unlock();
            tid += it.global_size(0);
        }
    });
    (0..buckets)
        .map(|h| {
            let mut chain = Vec::new();
            let mut e = heads.read(h);
            while e != NIL && chain.len() <= n {
                chain.push((pool_key.read(e as usize), pool_value.read(e as usize)));
                e = pool_next.read(e as usize);
            }
            chain
        })
        .collect()
}

/// Every key exactly once, in its bucket, with its value.
pub fn verify(keys: &[u32], values: &[u32], chains: &Chains) -> Result<(), String> {
    let mut found: Vec<(u32, u32)> = Vec::new();
    for (h, chain) in chains.iter().enumerate() {
        for &(k, val) in chain {
            if k as usize % chains.len() != h {
                return Err(format!("key {k} in bucket {h}"));
            }
            found.push((k, val));
        }
    }
    let mut expect: Vec<(u32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
    found.sort_unstable();
    expect.sort_unstable();
    if found != expect {
        return Err(format!("the table holds {} entries, {} were inserted (or some differ)", found.len(), expect.len()));
    }
    Ok(())
}

/// The model-checked program: 2 work-groups of 2 work-items insert one key
/// each into 2 buckets; each bucket gets one key from each work-group.
pub fn program(v: Variant) -> impl Fn() + Sync {
    move || {
        let keys = [2u32, 5, 4, 7];
        let values = [20u32, 50, 40, 70];
        let chains = build(&keys, &values, 2, 2, 2, v);
        if let Err(e) = verify(&keys, &values, &chains) {
            panic!("{e}");
        }
    }
}

fn native() {
    let (groups, items, n, buckets) = (8, 32, 2048, 61);
    let keys: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761) >> 8).collect();
    let values: Vec<u32> = (0..n as u32).collect();
    let t = std::time::Instant::now();
    let chains = build(&keys, &values, buckets, groups, items, Variant::Correct);
    let longest = chains.iter().map(Vec::len).max().unwrap_or(0);
    match verify(&keys, &values, &chains) {
        Ok(()) => println!(
            "hash table: {n} inserts by {groups} work-groups x {items} work-items into {buckets} buckets (longest chain {longest}): correct (every key once, in its bucket) in {:?}",
            t.elapsed()
        ),
        Err(e) => println!("hash table: WRONG: {e}"),
    }
}

fn check(v: Variant) {
    common::check_program(&format!("{} ({})", v.name(), v.describe()), program(v));
}

fn main() {
    let variants = common::Variants {
        example: "hash_table",
        all: &Variant::ALL,
        name: Variant::name,
        describe: Variant::describe,
        is_correct: Variant::is_correct,
    };
    common::main(variants, native, check);
}
