//! Work-group and sub-group collectives (`WorkItem::work_group_*`,
//! `sub_group_*`, `clmm::cl::work_group_reduce_add` and the others): their
//! values inside a model run (exact outcomes and execution counts) and
//! natively, divergence, replay and non-determinism, their memory
//! semantics (no fence), and a kernel-sized reduction.

#[path = "../examples/reduction.rs"]
#[allow(unused_imports)]
mod reduction;

mod common;

use clmm::{launch, launch_with_local, Builder, FailureKind, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope, WorkItem};
use std::collections::BTreeMap;

/// The inputs, by global id: group 0 has 3 1 4 1, group 1 has 5 9 2 6.
const X: [i32; 8] = [3, 1, 4, 1, 5, 9, 2, 6];
const MAX: i64 = i32::MAX as i64;
const MIN: i64 = i32::MIN as i64;

/// Every collective of one kind on `X`, in this order: broadcast from local
/// id `from`, reduce add/min/max, inclusive scan add/min/max, exclusive scan
/// add/min/max, all(x > 1), any(x > 4); booleans as 0/1.
fn all_collectives(it: &WorkItem, sub_group: bool, from: usize) -> [i64; 12] {
    let x = X[it.global_id(0)];
    let r = if sub_group {
        [
            it.sub_group_broadcast(x, from),
            it.sub_group_reduce_add(x),
            it.sub_group_reduce_min(x),
            it.sub_group_reduce_max(x),
            it.sub_group_scan_inclusive_add(x),
            it.sub_group_scan_inclusive_min(x),
            it.sub_group_scan_inclusive_max(x),
            it.sub_group_scan_exclusive_add(x),
            it.sub_group_scan_exclusive_min(x),
            it.sub_group_scan_exclusive_max(x),
            it.sub_group_all(x > 1) as i32,
            it.sub_group_any(x > 4) as i32,
        ]
    } else {
        [
            it.work_group_broadcast(x, from),
            it.work_group_reduce_add(x),
            it.work_group_reduce_min(x),
            it.work_group_reduce_max(x),
            it.work_group_scan_inclusive_add(x),
            it.work_group_scan_inclusive_min(x),
            it.work_group_scan_inclusive_max(x),
            it.work_group_scan_exclusive_add(x),
            it.work_group_scan_exclusive_min(x),
            it.work_group_scan_exclusive_max(x),
            it.work_group_all(x > 1) as i32,
            it.work_group_any(x > 4) as i32,
        ]
    };
    r.map(i64::from)
}

/// Work-groups of 4 (3 1 4 1 | 5 9 2 6), broadcast from local id 2.
const WORK_GROUP: [[i64; 12]; 8] = [
    // bcast sum min max  incl: +  min max  excl: +  min  max  all any
    [4, 9, 1, 4, 3, 3, 3, 0, MAX, MIN, 0, 0],
    [4, 9, 1, 4, 4, 1, 3, 3, 3, 3, 0, 0],
    [4, 9, 1, 4, 8, 1, 4, 4, 1, 3, 0, 0],
    [4, 9, 1, 4, 9, 1, 4, 8, 1, 4, 0, 0],
    [2, 22, 2, 9, 5, 5, 5, 0, MAX, MIN, 1, 1],
    [2, 22, 2, 9, 14, 5, 9, 5, 5, 5, 1, 1],
    [2, 22, 2, 9, 16, 2, 9, 14, 5, 9, 1, 1],
    [2, 22, 2, 9, 22, 2, 9, 16, 2, 9, 1, 1],
];

/// Sub-groups of 2 (3 1 | 4 1 | 5 9 | 2 6), broadcast from sub-group local
/// id 1.
const SUB_GROUP: [[i64; 12]; 8] = [
    // bcast sum min max  incl: +  min max  excl: +  min  max  all any
    [1, 4, 1, 3, 3, 3, 3, 0, MAX, MIN, 0, 0],
    [1, 4, 1, 3, 4, 1, 3, 3, 3, 3, 0, 0],
    [1, 5, 1, 4, 4, 4, 4, 0, MAX, MIN, 0, 0],
    [1, 5, 1, 4, 5, 1, 4, 4, 4, 4, 0, 0],
    [9, 14, 5, 9, 5, 5, 5, 0, MAX, MIN, 1, 1],
    [9, 14, 5, 9, 14, 5, 9, 5, 5, 5, 1, 1],
    [6, 8, 2, 6, 2, 2, 2, 0, MAX, MIN, 1, 1],
    [6, 8, 2, 6, 8, 2, 6, 2, 2, 2, 1, 1],
];

fn range(sub_group: bool) -> NdRange {
    let r = NdRange::new([8], [4]);
    if sub_group {
        r.with_sub_group_size(2)
    } else {
        r
    }
}

fn program(sub_group: bool) -> impl Fn() -> Vec<[i64; 12]> + Sync {
    move || launch(range(sub_group), |it| all_collectives(it, sub_group, if sub_group { 1 } else { 2 }))
}

/// Explore `f` and return outcome -> (executions, failure kinds), asserting
/// that the run was complete and that every execution returned a value.
fn outcomes<T: Ord + Send + Clone + std::fmt::Debug>(f: impl Fn() -> T + Sync) -> BTreeMap<T, (u64, Vec<String>)> {
    let ex = Builder::new().explore(f);
    assert!(!ex.stats.stopped_early);
    let got = common::outcome_table(&ex);
    assert_eq!(got.values().map(|v| v.0).sum::<u64>(), ex.stats.complete, "every execution returns a value");
    got
}

/// Every work-group collective on 2 groups x 4 items inside a model run:
/// one outcome, one execution (the values travel with the collectives, not
/// through memory: no read, no write, nothing to choose), no failure.
#[test]
fn work_group_collectives_in_model() {
    let got = outcomes(program(false));
    assert_eq!(got, BTreeMap::from([(WORK_GROUP.to_vec(), (1, vec![]))]));
}

/// The same kernel natively (real threads, outside a model run).
#[test]
fn work_group_collectives_native() {
    for _ in 0..3 {
        assert_eq!(program(false)(), WORK_GROUP.to_vec());
    }
}

/// Every sub-group collective with sub-groups of 2 inside a model run.
#[test]
fn sub_group_collectives_in_model() {
    let got = outcomes(program(true));
    assert_eq!(got, BTreeMap::from([(SUB_GROUP.to_vec(), (1, vec![]))]));
}

/// The same natively.
#[test]
fn sub_group_collectives_native() {
    for _ in 0..3 {
        assert_eq!(program(true)(), SUB_GROUP.to_vec());
    }
}

/// Sub-group sizes in a non-uniform NDRange (a user-acceptance finding):
/// `[3, 2]` by `[2, 2]` with sub-groups of 3 has a whole group 0 (4
/// work-items, sub-groups of 3 and 1) and a trailing group 1 of 2 work-items
/// (one sub-group of 2). `get_max_sub_group_size` (3) and
/// `get_enqueued_num_sub_groups` (2) are the dispatch's, the same in both
/// groups (group 1 said 2 and had no `enqueued_num_sub_groups`);
/// `get_sub_group_size` and `get_num_sub_groups` are the group's own. In a
/// model run and natively, with a sub-group reduction to show the sub-groups
/// really are those sizes.
#[test]
fn sub_group_sizes_of_a_non_uniform_group() {
    let kernel = || {
        launch(NdRange::new([3, 2], [2, 2]).with_sub_group_size(3), |it| {
            (it.group_id(0), it.max_sub_group_size(), it.enqueued_num_sub_groups(), it.sub_group_size(), it.num_sub_groups(), it.sub_group_reduce_add(1u32))
        })
    };
    let want = vec![(0, 3, 2, 3, 2, 3), (0, 3, 2, 3, 2, 3), (0, 3, 2, 3, 2, 3), (0, 3, 2, 1, 2, 1), (1, 3, 2, 2, 1, 2), (1, 3, 2, 2, 1, 2)];
    assert_eq!(outcomes(kernel), BTreeMap::from([(want.clone(), (1, vec![]))]));
    assert_eq!(kernel(), want);
}

/// The other value types (`u32`, `i64`, `u64`, `f32`): arithmetic in the
/// type's width (u32 wraps), the identities of the exclusive scans, and the
/// OpenCL C spellings of `clmm::cl`; one group of 3. The outcome per item:
/// (u32 sum, u32 excl min, i64 excl max, u64 incl add, f32 sum bits, f32
/// excl min bits, f32 excl max bits, cl all, cl any).
type Typed = (u32, u32, i64, u64, u32, u32, u32, i32, i32);
fn typed() -> Vec<Typed> {
    use clmm::cl;
    launch(NdRange::new([3], [3]), |it| {
        let l = it.local_id(0);
        let u = [u32::MAX, 2, 5][l];
        let i = [-7i64, 1 << 40, -3][l];
        let w = [u64::MAX - 1, 1, 1][l];
        let f = [1.5f32, -0.25, 8.0][l];
        (
            cl::work_group_reduce_add(it, u),
            cl::work_group_scan_exclusive_min(it, u),
            cl::work_group_scan_exclusive_max(it, i),
            cl::work_group_scan_inclusive_add(it, w),
            cl::work_group_reduce_add(it, f).to_bits(),
            cl::work_group_scan_exclusive_min(it, f).to_bits(),
            cl::work_group_scan_exclusive_max(it, f).to_bits(),
            cl::work_group_all(it, (l < 3) as i32),
            cl::work_group_any(it, (l == 5) as i32),
        )
    })
}

fn typed_want() -> Vec<Typed> {
    let b = f32::to_bits;
    vec![
        (6, u32::MAX, i64::MIN, u64::MAX - 1, b(9.25), b(f32::INFINITY), b(f32::NEG_INFINITY), 1, 0),
        (6, u32::MAX, -7, u64::MAX, b(9.25), b(1.5), b(1.5), 1, 0),
        (6, 2, 1 << 40, 0, b(9.25), b(-0.25), b(1.5), 1, 0),
    ]
}

#[test]
fn value_types_and_identities() {
    assert_eq!(outcomes(typed), BTreeMap::from([(typed_want(), (1, vec![]))]));
    assert_eq!(typed(), typed_want());
}

/// Only work-item 0 of each group calls `work_group_reduce_add`; the others
/// finish: barrier divergence, naming the collective and its call site.
#[test]
fn divergent_collective_is_barrier_divergence() {
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([8], [4]), |it| {
                if it.local_id(0) == 0 {
                    let _ = it.work_group_reduce_add(1u32); // DIVERGENT_CALL
                }
            });
        })
        .expect_err("divergence");
    assert_eq!(f.kind, FailureKind::BarrierDivergence, "{f}");
    let marker = concat!("DIVERGENT", "_CALL");
    let line = include_str!("collectives.rs").lines().position(|l| l.contains(marker)).expect("the marked line") + 1;
    let site = f.panic_site.as_ref().expect("the report names the call site");
    assert!(site.file.ends_with("tests/collectives.rs") && site.line as usize == line, "{f}");
    let text = format!("work_group_reduce_add tests/collectives.rs:{line}:");
    assert!(f.message.contains(&text) && f.message.contains("finished"), "{f}");
}

/// The same with a sub-group collective: in each sub-group of 2 only the
/// first item calls `sub_group_any`.
#[test]
fn divergent_sub_group_collective_is_barrier_divergence() {
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([4], [4]).with_sub_group_size(2), |it| {
                if it.sub_group_local_id() == 0 {
                    let _ = it.sub_group_any(true);
                }
            });
        })
        .expect_err("divergence");
    assert_eq!(f.kind, FailureKind::BarrierDivergence, "{f}");
    assert!(f.message.contains("sub_group_any tests/collectives.rs:"), "{f}");
}

/// A `sub_group_barrier` in a sub-group of one work-item (the last of a
/// work-group whose size the sub-group size does not divide, or sub-groups
/// of size 1) synchronises with nobody, and that is not divergence: every
/// member of its sub-group reaches it. The model's `bd` asks the work-group
/// for a work-group barrier only (`model::barrier::subject_to_bd`); it
/// reported these. A sub-group of two where one member skips the barrier
/// still diverges.
#[test]
fn sub_group_barrier_in_a_sub_group_of_one() {
    for (global, sub) in [(3, 2), (2, 1), (5, 4)] {
        let s = Builder::new()
            .check(|| {
                launch(NdRange::new([global], [global]).with_sub_group_size(sub), |it| it.sub_group_barrier(FenceFlags::GLOBAL | FenceFlags::LOCAL));
            })
            .unwrap_or_else(|f| panic!("{global} work-items, sub-groups of {sub}: {f}"));
        assert_eq!(s.complete, 1);
    }
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([3], [3]).with_sub_group_size(2), |it| {
                if it.global_id(0) != 1 {
                    it.sub_group_barrier(FenceFlags::GLOBAL);
                }
            });
        })
        .expect_err("work-item 1 skips its sub-group's barrier");
    assert_eq!(f.kind, FailureKind::BarrierDivergence, "{f}");
}

/// One call site, but the work-items broadcast from different local ids: not
/// the same work-group function instance, reported as barrier divergence.
/// The message names both calls as written (a user-acceptance finding: it
/// printed the Debug form `Broadcast { source: 0 } on I32`); likewise a
/// sub-group collective on two value types.
#[test]
fn broadcast_from_different_ids_is_barrier_divergence() {
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([2], [2]), |it| {
                let _ = it.work_group_broadcast(7i32, it.local_id(0));
            });
        })
        .expect_err("divergence");
    assert_eq!(f.kind, FailureKind::BarrierDivergence, "{f}");
    let want = "not the same collective: work_group_broadcast from local id 0 (int) and work_group_broadcast from local id 1 (int)";
    assert!(f.message.contains("work_group_broadcast at tests/collectives.rs:") && f.message.contains(want), "{f}");
    // One call site (this function's), two value types.
    fn broadcast<T: clmm::NumValue>(it: &WorkItem, x: T) {
        let _ = it.sub_group_broadcast(x, 1);
    }
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([4], [4]).with_sub_group_size(2), |it| {
                if it.sub_group_local_id() == 0 {
                    broadcast(it, 1.5f32);
                } else {
                    broadcast(it, 1u64);
                }
            });
        })
        .expect_err("divergence");
    assert!(f.message.contains("not the same collective: sub_group_broadcast from sub-group local id 1 (float) and sub_group_broadcast from sub-group local id 1 (ulong)"), "{f}");
}

/// A collective carries no memory fence: work-item 0 writes local memory,
/// both call `work_group_reduce_add`, work-item 1 reads: the write is not
/// visible (only init is) and the two accesses race; 1 execution. With a
/// `barrier(CLK_LOCAL_MEM_FENCE)` instead the read sees 1 without a race.
#[test]
fn collective_orders_no_memory() {
    for with_barrier in [false, true] {
        let got = outcomes(move || {
            let r = launch_with_local(
                NdRange::new([2], [2]),
                |_| LocalBuffer::<i32>::new(1),
                |it, x| {
                    if it.local_id(0) == 0 {
                        x.write(0, 1);
                    }
                    let sum = if with_barrier {
                        it.barrier(FenceFlags::LOCAL);
                        2
                    } else {
                        it.work_group_reduce_add(1)
                    };
                    (sum, if it.local_id(0) == 1 { x.read(0) } else { -1 })
                },
            );
            r[1]
        });
        let want = if with_barrier { ((2, 1), (1, vec![])) } else { ((2, 0), (1, common::race())) };
        assert_eq!(got, BTreeMap::from([want]), "with_barrier = {with_barrier}");
    }
}

/// The values of a collective decide control flow, and the explorer's
/// executions around it stay exact: SB on two relaxed atomics with a
/// work-group reduction of the loaded values: 4 executions (as without the
/// collective: `sb_relaxed` in tests/litmus_table.rs), each outcome with
/// the pair's sum and exclusive scan.
#[test]
fn collective_of_loaded_values() {
    let got = outcomes(|| {
        let (x, y) = (clmm::AtomicI32::new(0), clmm::AtomicI32::new(0));
        launch(NdRange::new([2], [2]), |it| {
            let r = if it.local_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
                y.load(Order::Relaxed, Scope::Device)
            } else {
                y.store(1, Order::Relaxed, Scope::Device);
                x.load(Order::Relaxed, Scope::Device)
            };
            (r, it.work_group_reduce_add(r), it.work_group_scan_exclusive_add(r))
        })
    });
    let mut want = BTreeMap::new();
    for a in 0..2 {
        for b in 0..2 {
            want.insert(vec![(a, a + b, 0), (b, a + b, a)], (1, vec![]));
        }
    }
    assert_eq!(got, want);
}

/// A race that only happens when a reduction's result is 2: the replay
/// string reruns that execution (the collective's value is recomputed on
/// replay) and reports the same race.
#[test]
fn replay_through_a_collective() {
    let prog = || {
        let (x, data) = (clmm::AtomicI32::new(0), GlobalBuffer::<i32>::new(1));
        launch(NdRange::new([2], [2]), |it| {
            let r = if it.local_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
                1
            } else {
                x.load(Order::Relaxed, Scope::Device)
            };
            if it.work_group_reduce_add(r) == 2 {
                if it.local_id(0) == 0 {
                    data.write(0, 1);
                } else {
                    let _ = data.read(0);
                }
            }
        });
    };
    let first = Builder::new().check(prog).expect_err("a race when both see 1");
    assert_eq!(first.kind, FailureKind::DataRace, "{first}");
    let again = Builder::new().replay(first.replay.clone()).check(prog).expect_err("the same race");
    assert_eq!(again.kind, FailureKind::DataRace, "{again}");
    assert_eq!(again.accesses, first.accesses);
    assert_eq!(again.trace, first.trace);
    assert!(first.trace.contains("work_group_reduce_add entry") && first.trace.contains("work_group_reduce_add exit"), "{}", first.trace);
}

/// A closure that calls another collective (another call site and
/// operation) when rerun: non-determinism. The collectives come first, so
/// every later execution replays them.
#[test]
fn collective_changed_on_rerun_is_non_determinism() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let f = *Builder::new()
        .check(|| {
            let x = clmm::AtomicI32::new(0);
            let odd = RUNS.fetch_add(1, SeqCst) % 2 == 1;
            launch(NdRange::new([2], [2]), |it| {
                let _ = if odd { it.work_group_reduce_add(1) } else { it.work_group_reduce_max(1) };
                if it.local_id(0) == 0 {
                    x.store(1, Order::Relaxed, Scope::Device);
                } else {
                    let _ = x.load(Order::Relaxed, Scope::Device);
                }
            });
        })
        .expect_err("non-determinism");
    assert_eq!(f.kind, FailureKind::NonDeterminism, "{f}");
}

/// The same call site (inside a helper without `#[track_caller]`), but a
/// reduction of another value type when rerun: non-determinism too (the
/// replayed collective is compared whole, not only its call site).
#[test]
fn collective_of_another_type_on_rerun_is_non_determinism() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    fn reduce<T: clmm::NumValue>(it: &WorkItem, x: T) -> T {
        it.work_group_reduce_add(x)
    }
    let f = *Builder::new()
        .check(|| {
            let x = clmm::AtomicI32::new(0);
            let odd = RUNS.fetch_add(1, SeqCst) % 2 == 1;
            launch(NdRange::new([2], [2]), |it| {
                if odd {
                    reduce(it, 1u32);
                } else {
                    reduce(it, 1i32);
                }
                if it.local_id(0) == 0 {
                    x.store(1, Order::Relaxed, Scope::Device);
                } else {
                    let _ = x.load(Order::Relaxed, Scope::Device);
                }
            });
        })
        .expect_err("non-determinism");
    assert_eq!(f.kind, FailureKind::NonDeterminism, "{f}");
    assert!(f.message.contains("was `work_group_reduce_add(int)` at ") && f.message.contains("is now `work_group_reduce_add(uint)` at "), "{f}");
}

/// A work-group reduction written with `work_group_reduce_add` gives the
/// same partial sums as the local-memory tree reduction of
/// `examples/reduction.rs` (2 groups of 4 over 1..=8): [10, 26], in a model
/// run (both kernels in one execution: exactly 1) and natively.
fn reduce_with_collective(input: &[u32], groups: usize, items: usize) -> Vec<u32> {
    let data = GlobalBuffer::from_slice(input);
    let partial = GlobalBuffer::<u32>::new(groups);
    launch(NdRange::new([groups * items], [items]), |it| {
        let mut sum = 0u32;
        let mut i = it.global_id(0);
        while i < data.len() {
            sum = sum.wrapping_add(data.read(i));
            i += it.global_size(0);
        }
        let total = clmm::cl::work_group_reduce_add(it, sum);
        if it.local_id(0) == 0 {
            partial.write(it.group_id(0), total);
        }
    });
    partial.to_vec()
}

fn both_reductions() -> (Vec<u32>, Vec<u32>) {
    let input: Vec<u32> = (1..=8).collect();
    (reduce_with_collective(&input, 2, 4), reduction::reduce(&input, 2, 4, reduction::Variant::Correct))
}

#[test]
fn reduction_with_work_group_reduce_add_matches_the_tree() {
    let want = (vec![10, 26], vec![10, 26]);
    assert_eq!(outcomes(both_reductions), BTreeMap::from([(want.clone(), (1, vec![]))]));
    assert_eq!(both_reductions(), want);
    // Natively on a larger input: the same sums as the tree and as a
    // sequential sum.
    let input: Vec<u32> = (0..8 * 32 * 4 + 5).map(|i: u32| i.wrapping_mul(2654435761) % 1000).collect();
    let a = reduce_with_collective(&input, 8, 32);
    assert_eq!(a, reduction::reduce(&input, 8, 32, reduction::Variant::Correct));
    assert_eq!(a.iter().sum::<u32>(), input.iter().sum::<u32>());
}
