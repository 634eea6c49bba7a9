//! Rust litmus tables: each shape written with clmm's API, asserting the
//! exact set of outcomes and the exact number of complete executions.

use clmm::{launch, AtomicI32, Builder, NdRange, Order, Scope, ScModel, Topology};
use std::collections::BTreeSet;

fn set<T: Ord + Clone>(v: &[T]) -> BTreeSet<T> {
    v.iter().cloned().collect()
}

/// Explore under both SC models; return outcomes and complete executions.
fn run<T: Ord + Send + Clone + std::fmt::Debug, F: Fn() -> T + Sync>(sc: ScModel, f: F) -> (BTreeSet<T>, u64, BTreeSet<String>) {
    let ex = Builder::new().sc_model(sc).explore(f);
    let kinds = ex.failures.iter().map(|f| f.kind.to_string()).collect();
    (ex.outcomes.keys().cloned().collect(), ex.stats.complete, kinds)
}

fn both<T: Ord + Send + Clone + std::fmt::Debug, F: Fn() -> T + Sync + Copy>(f: F) -> [(BTreeSet<T>, u64, BTreeSet<String>); 2] {
    [run(ScModel::Spec, f), run(ScModel::Scoped, f)]
}

const D: Scope = Scope::Device;
const RLX: Order = Order::Relaxed;

fn two_groups() -> NdRange {
    NdRange::new([2], [1])
}

#[test]
fn sb_relaxed_all_four() {
    for (out, n, fails) in both(|| {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                x.store(1, RLX, D);
                y.load(RLX, D)
            } else {
                y.store(1, RLX, D);
                x.load(RLX, D)
            }
        });
        (r[0], r[1])
    }) {
        assert_eq!(out, set(&[(0, 0), (0, 1), (1, 0), (1, 1)]));
        assert_eq!(n, 4);
        assert!(fails.is_empty());
    }
}

#[test]
fn sb_seq_cst_device_forbids_0_0() {
    for (out, n, _) in both(|| {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(two_groups(), |it| {
            let sc = Order::SeqCst;
            if it.global_id(0) == 0 {
                x.store(1, sc, D);
                y.load(sc, D)
            } else {
                y.store(1, sc, D);
                x.load(sc, D)
            }
        });
        (r[0], r[1])
    }) {
        assert_eq!(out, set(&[(0, 1), (1, 0), (1, 1)]));
        assert_eq!(n, 3);
    }
}

#[test]
fn mp_release_acquire_device() {
    for (out, n, fails) in both(|| {
        let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                data.store(1, RLX, D);
                flag.store(1, Order::Release, D);
                (0, 0)
            } else {
                let f = flag.load(Order::Acquire, D);
                (f, data.load(RLX, D))
            }
        });
        r[1]
    }) {
        assert_eq!(out, set(&[(0, 0), (0, 1), (1, 1)]));
        assert_eq!(n, 3);
        assert!(fails.is_empty());
    }
}

#[test]
fn mp_relaxed_sees_stale_data() {
    for (out, n, _) in both(|| {
        let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                data.store(1, RLX, D);
                flag.store(1, RLX, D);
                (0, 0)
            } else {
                let f = flag.load(RLX, D);
                (f, data.load(RLX, D))
            }
        });
        r[1]
    }) {
        assert_eq!(out, set(&[(0, 0), (0, 1), (1, 0), (1, 1)]));
        assert_eq!(n, 4);
    }
}

#[test]
fn mp_work_group_scope_across_groups_races() {
    for (_, _, fails) in both(|| {
        let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
        let buf = clmm::GlobalBuffer::<i32>::new(1);
        launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                buf.write(0, 1);
                flag.store(1, Order::Release, Scope::WorkGroup);
            } else if flag.load(Order::Acquire, Scope::WorkGroup) == 1 {
                let _ = buf.read(0);
            }
            let _ = &data;
        });
    }) {
        assert_eq!(fails, set(&["data race".to_string()]));
    }
}

#[test]
fn mp_work_group_scope_inside_one_group_is_fine() {
    for (out, n, fails) in both(|| {
        let flag = AtomicI32::new(0);
        let buf = clmm::GlobalBuffer::<i32>::new(1);
        let r = launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                buf.write(0, 1);
                flag.store(1, Order::Release, Scope::WorkGroup);
                -1
            } else if flag.load(Order::Acquire, Scope::WorkGroup) == 1 {
                buf.read(0)
            } else {
                -2
            }
        });
        r[1]
    }) {
        assert!(fails.is_empty(), "{fails:?}");
        assert_eq!(out, set(&[-2, 1]));
        assert_eq!(n, 2);
    }
}

#[test]
fn two_plus_two_w() {
    for (out, n, _) in both(|| {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                x.store(1, RLX, D);
                y.store(2, RLX, D);
            } else {
                y.store(1, RLX, D);
                x.store(2, RLX, D);
            }
        });
        // Final values: read after the kernel (the launch orders them).
        (x.load(RLX, D), y.load(RLX, D))
    }) {
        assert_eq!(out, set(&[(1, 1), (1, 2), (2, 1), (2, 2)]));
        assert_eq!(n, 4);
    }
}

#[test]
fn iriw_acquire_allows_disagreement() {
    for (out, n, _) in both(|| {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([4], [1]), |it| match it.global_id(0) {
            0 => {
                x.store(1, RLX, D);
                (0, 0)
            }
            1 => {
                y.store(1, RLX, D);
                (0, 0)
            }
            2 => (x.load(Order::Acquire, D), y.load(Order::Acquire, D)),
            _ => (y.load(Order::Acquire, D), x.load(Order::Acquire, D)),
        });
        (r[2], r[3])
    }) {
        assert!(out.contains(&((1, 0), (1, 0))));
        assert_eq!(out.len(), 16);
        assert_eq!(n, 16);
    }
}

#[test]
fn coherence_rr() {
    for (out, n, _) in both(|| {
        let x = AtomicI32::new(0);
        let r = launch(two_groups(), |it| {
            if it.global_id(0) == 0 {
                x.store(1, RLX, D);
                x.store(2, RLX, D);
                (0, 0)
            } else {
                (x.load(RLX, D), x.load(RLX, D))
            }
        });
        r[1]
    }) {
        assert_eq!(out, set(&[(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)]));
        assert_eq!(n, 6);
    }
}

#[test]
fn fetch_add_n_units_explores_n_factorial() {
    for n_units in 2..=4usize {
        let ex = Builder::new().explore(|| {
            let c = AtomicI32::new(0);
            let r = launch(NdRange::new([n_units], [1]), |_| c.fetch_add(1, RLX, D));
            let mut v = r.clone();
            v.sort();
            v
        });
        let want: u64 = (1..=n_units as u64).product();
        assert_eq!(ex.stats.complete, want, "N = {n_units}");
        assert_eq!(ex.outcomes.len(), 1);
    }
}

#[test]
fn explicit_topology_two_devices() {
    // All-svm-devices scope synchronises across devices; device scope does not.
    for (scope, racy) in [(Scope::AllSvmDevices, false), (Scope::Device, true)] {
        let ex = Builder::new().explore(|| {
            let buf = clmm::GlobalBuffer::<i32>::new(1);
            let f = AtomicI32::new(0);
            launch(Topology::new().device([1]).device([1]), |it| {
                if it.device() == 0 {
                    buf.write(0, 1);
                    f.store(1, Order::Release, scope);
                } else if f.load(Order::Acquire, scope) == 1 {
                    let _ = buf.read(0);
                }
            });
        });
        assert_eq!(!ex.failures.is_empty(), racy, "{scope}");
    }
}
