//! The benchmark programs written for clmm (`benches/vs_loom.rs`, module
//! `c`): global atomics at device scope, one work-item per work-group.
//! `tests/unique.rs` checks the Treiber stack's counts from here too.

use clmm::{launch, launch_with_local, AtomicI32, AtomicUsize, Builder, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};
const D: Scope = Scope::Device;
const RLX: Order = Order::Relaxed;

fn items(n: usize) -> NdRange {
    NdRange::new([n], [1])
}

/// Explore `f`; the number of executions (complete + blocked).
pub fn run<F: Fn() + Sync>(f: F) -> u64 {
    let s = Builder::new().check(f).expect("the benchmark programs are correct");
    s.complete + s.blocked
}

pub fn sb() {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(2), |it| {
        if it.global_id(0) == 0 {
            x.store(1, RLX, D);
            y.load(RLX, D)
        } else {
            y.store(1, RLX, D);
            x.load(RLX, D)
        }
    });
}

/// Store buffering with seq_cst atomics (OpenCL C's default order): the
/// SC axiom rules out both loads reading 0.
pub fn sb_sc() {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(2), |it| {
        let (a, b) = if it.global_id(0) == 0 { (&x, &y) } else { (&y, &x) };
        a.store(1, Order::SeqCst, D);
        b.load(Order::SeqCst, D)
    });
}

/// `n` work-items with default-order (seq_cst) atomics: each raises its
/// flag, reads the next one's and adds to a counter.
pub fn sc_ring(n: usize) -> impl Fn() + Sync {
    move || {
        let flags: Vec<AtomicI32> = (0..n).map(|_| AtomicI32::new(0)).collect();
        let count = AtomicI32::new(0);
        launch(items(n), |it| {
            let i = it.global_id(0);
            flags[i].store(1, Order::SeqCst, D);
            let _ = flags[(i + 1) % n].load(Order::SeqCst, D);
            count.fetch_add(1, Order::SeqCst, D);
        });
    }
}

pub fn mp() {
    let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(2), |it| {
        if it.global_id(0) == 0 {
            data.store(1, RLX, D);
            flag.store(1, Order::Release, D);
        } else if flag.load(Order::Acquire, D) == 1 {
            assert_eq!(data.load(RLX, D), 1);
        }
    });
}

pub fn lb() {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(2), |it| {
        if it.global_id(0) == 0 {
            let r = x.load(RLX, D);
            y.store(1, RLX, D);
            r
        } else {
            let r = y.load(RLX, D);
            x.store(1, RLX, D);
            r
        }
    });
}

pub fn iriw() {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(4), |it| match it.global_id(0) {
        0 => {
            x.store(1, RLX, D);
        }
        1 => {
            y.store(1, RLX, D);
        }
        2 => {
            x.load(Order::Acquire, D);
            y.load(Order::Acquire, D);
        }
        _ => {
            y.load(Order::Acquire, D);
            x.load(Order::Acquire, D);
        }
    });
}

pub fn two_plus_two_w() {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    launch(items(2), |it| {
        if it.global_id(0) == 0 {
            x.store(1, RLX, D);
            y.store(2, RLX, D);
        } else {
            y.store(1, RLX, D);
            x.store(2, RLX, D);
        }
    });
}

pub fn fetch_add(n: usize) -> impl Fn() + Sync {
    move || {
        let c = AtomicI32::new(0);
        launch(items(n), |_| {
            c.fetch_add(1, RLX, D);
        });
        assert_eq!(c.load(RLX, D), n as i32);
    }
}

/// A CAS spin lock protecting a non-atomic counter.
pub fn spin_lock(n: usize) -> impl Fn() + Sync {
    move || {
        let lock = AtomicI32::new(0);
        let counter = GlobalBuffer::<u32>::new(1);
        launch(items(n), |_| {
            while lock.compare_exchange(0, 1, Order::Acquire, RLX, D).is_err() {
                clmm::hint::spin_loop();
            }
            counter.write(0, counter.read(0) + 1);
            lock.store(0, Order::Release, D);
        });
        assert_eq!(counter.read(0), n as u32);
    }
}

/// A Treiber stack over preallocated nodes (index 0 = null): each unit
/// pushes its node, then pops one.
pub fn treiber(n: usize) -> impl Fn() + Sync {
    move || {
        let head = AtomicUsize::new(0);
        let next = GlobalBuffer::<usize>::new(n + 1);
        let popped = launch(items(n), |it| {
            let node = it.global_id(0) + 1;
            loop {
                let h = head.load(RLX, D);
                next.write(node, h);
                if head.compare_exchange(h, node, Order::Release, RLX, D).is_ok() {
                    break;
                }
            }
            loop {
                let h = head.load(Order::Acquire, D);
                if h == 0 {
                    break 0;
                }
                let nx = next.read(h);
                if head.compare_exchange(h, nx, Order::Acquire, RLX, D).is_ok() {
                    break h;
                }
            }
        });
        let mut p = popped.clone();
        p.sort();
        p.dedup();
        assert_eq!(p.len(), n, "every pop returns a distinct node: {popped:?}");
    }
}

/// One work-item storing and loading `n` times, in order `order`, with a
/// seq_cst fence between the two when `fence`: one long execution (the
/// cost of an event).
pub fn long_loop(n: usize, order: Order, fence: bool) -> impl Fn() + Sync {
    move || {
        let x = AtomicI32::new(0);
        launch(items(1), |_| {
            for i in 0..n {
                x.store(i as i32, order, D);
                if fence {
                    clmm::atomic_work_item_fence(FenceFlags::GLOBAL, Order::SeqCst, D);
                }
                let _ = x.load(order, D);
            }
        });
    }
}

/// One work-item reading and writing one element of a global buffer
/// (non-atomic) `n` times: one execution of `2n` events.
pub fn plain_loop(n: usize) -> impl Fn() + Sync {
    move || {
        let cell = GlobalBuffer::<u32>::new(1);
        launch(items(1), |_| {
            for _ in 0..n {
                let v = cell.read(0);
                cell.write(0, v + 1);
            }
        });
        assert_eq!(cell.read(0), n as u32);
    }
}

/// Tiled matrix product of two `n` x `n` matrices in `tile` x `tile`
/// work-groups (`examples/matmul.rs` without its boundary checks: `n` is
/// a multiple of `tile`): plain global and local memory between barriers,
/// one execution.
pub fn matmul(n: usize, tile: usize) -> impl Fn() + Sync {
    move || {
        let a: Vec<u32> = (0..n * n).map(|i| i as u32 + 1).collect();
        let (ga, gb, gc) = (GlobalBuffer::from_slice(&a), GlobalBuffer::from_slice(&a), GlobalBuffer::<u32>::new(n * n));
        launch_with_local(
            NdRange::new([n, n], [tile, tile]),
            |_| (LocalBuffer::<u32>::new(tile * tile), LocalBuffer::<u32>::new(tile * tile)),
            |it, (at, bt)| {
                let (tx, ty, row, col) = (it.local_id(0), it.local_id(1), it.global_id(1), it.global_id(0));
                let mut sum = 0u32;
                for t in 0..n / tile {
                    at.write(ty * tile + tx, ga.read(row * n + t * tile + tx));
                    bt.write(ty * tile + tx, gb.read((t * tile + ty) * n + col));
                    it.barrier(FenceFlags::LOCAL);
                    for k in 0..tile {
                        sum = sum.wrapping_add(at.read(ty * tile + k).wrapping_mul(bt.read(k * tile + tx)));
                    }
                    it.barrier(FenceFlags::LOCAL);
                }
                gc.write(row * n + col, sum);
            },
        );
        let c = gc.to_vec();
        let want = |i: usize, j: usize| (0..n).fold(0u32, |s, k| s.wrapping_add(a[i * n + k].wrapping_mul(a[k * n + j])));
        assert!((0..n * n).all(|x| c[x] == want(x / n, x % n)), "the product");
    }
}

/// Two work-items of a work-group exchanging values through local memory
/// `n` times, a barrier after each write and each read: one execution of
/// about `12n` events.
pub fn barrier_loop(n: usize) -> impl Fn() + Sync {
    move || {
        launch_with_local(
            NdRange::new([2], [2]),
            |_| LocalBuffer::<u32>::new(2),
            |it, slot| {
                let me = it.local_id(0);
                for i in 0..n as u32 {
                    slot.write(me, i);
                    it.barrier(FenceFlags::LOCAL);
                    assert_eq!(slot.read(1 - me), i);
                    it.barrier(FenceFlags::LOCAL);
                }
            },
        );
    }
}

/// The work-group tree reduction of `examples/reduction.rs` (correct
/// variant) by `groups` work-groups of `items` work-items: one execution
/// (no atomics, no race) of about `items * (4 + 3 log2 items)` events a
/// group, most of them barrier fences: the cost of wide work-groups.
pub fn reduction(groups: usize, items: usize) -> impl Fn() + Sync {
    move || {
        let input: Vec<u32> = (1..=(groups * items) as u32).collect();
        let data = GlobalBuffer::from_slice(&input);
        let partial = GlobalBuffer::<u32>::new(groups);
        launch_with_local(
            NdRange::new([groups * items], [items]),
            |_| LocalBuffer::<u32>::new(items),
            |it, scratch| {
                let lid = it.local_id(0);
                scratch.write(lid, data.read(it.global_id(0)));
                it.barrier(FenceFlags::LOCAL);
                let mut s = items / 2;
                while s > 0 {
                    if lid < s {
                        scratch.write(lid, scratch.read(lid).wrapping_add(scratch.read(lid + s)));
                    }
                    it.barrier(FenceFlags::LOCAL);
                    s /= 2;
                }
                if lid == 0 {
                    partial.write(it.group_id(0), scratch.read(0));
                }
            },
        );
        let p = partial.to_vec();
        for g in 0..groups {
            assert_eq!(p[g], input[g * items..(g + 1) * items].iter().sum::<u32>());
        }
    }
}
