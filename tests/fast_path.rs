//! Which graphs the vector clocks decide (`clmm_check::model::vclock`),
//! and which they leave to the explicit model (`Stats::explicit`): a
//! check that falls back to the bit matrices on every prefix is many
//! times slower (the deque and the SVM ring of `examples/` spent 40% and
//! most of their time there until session 46), and nothing else would
//! tell. Each test pins the exact count, with the executions.

use clmm::host::{self, Context, QueueOrder};
use clmm::{launch, launch_with_local, AtomicI32, Builder, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};
use std::sync::Mutex;

/// Host threads and commands: a spawned thread writes, the model closure
/// joins it, enqueues a kernel that reads and writes, waits for it and
/// reads. Every prefix and the complete graph stay with the views.
#[test]
fn host_threads_and_commands_stay_with_the_views() {
    let s = Builder::new()
        .check(|| {
            let x = GlobalBuffer::<u32>::new(1);
            let seen = Mutex::new(0);
            let ctx = Context::new(1);
            let v = host::scope(|s| {
                s.spawn(|| x.write(0, 7)).join();
                let q = s.queue(&ctx, 0, QueueOrder::InOrder);
                q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| {
                    *seen.lock().unwrap() = x.read(0);
                    x.write(0, 8);
                })
                .wait();
                x.read(0)
            });
            assert_eq!((*seen.lock().unwrap(), v), (7, 8));
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (1, 0, 0), "{s}");
}

/// Message passing through a release sequence: the writer stores the
/// flag with release, then again relaxed; a reader that acquires the
/// relaxed store synchronises with the release one (C11's `rs`), which
/// the views (`rs_min`, RMW chains) do not hold. With `second` a
/// release, the second store heads a sequence of its own.
fn flag_twice(second: Order) -> impl Fn() + Sync {
    move || {
        let data = GlobalBuffer::<u32>::new(1);
        let flag = AtomicI32::new(0);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                data.write(0, 42);
                flag.store(1, Order::Release, Scope::Device);
                flag.store(2, second, Scope::Device);
            } else if flag.load(Order::Acquire, Scope::Device) == 2 {
                assert_eq!(data.read(0), 42);
            }
        });
    }
}

/// Every prefix stays with the views (they decide the read of `data`
/// through the sequence, `Clocks::visible_by_rs`). Two graphs go to the
/// explicit model: the complete one where the reader acquires the
/// relaxed store and reads 42 (its `rs` orders more than the views),
/// and the one where it reads the initial 0 instead and panics, which
/// the explicit model finds inconsistent (a panic's graph is always
/// its): 3 executions, 1 blocked. With two release stores the views
/// hold all the synchronisation, and only the panicking graph is left.
#[test]
fn release_sequence_beyond_rmw_chains_leaves_one_complete_graph() {
    let s = Builder::new().check(flag_twice(Order::Relaxed)).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (3, 1, 2), "{s}");
    let s = Builder::new().check(flag_twice(Order::Release)).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (3, 0, 0), "{s}");
}

/// Store buffering with seq_cst atomics: two SC events in each graph,
/// whose SC axiom the views check between the SC events only
/// (`Clocks::sc_holds`, session 47; before, every such complete graph
/// and, under the scoped SC axiom, every such prefix, 4 and 13 graphs,
/// went to the explicit model). The execution where both loads read 0
/// is inconsistent: found when complete under `opencl.cat` (whose SC
/// condition a later SC event could switch off), pruned as a prefix
/// under the scoped axiom.
#[test]
fn seq_cst_store_buffering_stays_with_the_views() {
    let sb = || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        launch(NdRange::new([2], [1]), |it| {
            let (a, b) = if it.global_id(0) == 0 { (&x, &y) } else { (&y, &x) };
            a.store(1, Order::SeqCst, Scope::Device);
            b.load(Order::SeqCst, Scope::Device)
        });
    };
    let s = Builder::new().check(sb).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (3, 1, 0), "{s}");
    let s = Builder::new().sc_model(clmm::ScModel::Scoped).check(sb).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.pruned, s.explicit), (3, 0, 1, 0), "{s}");
}

/// Store buffering with relaxed accesses and a seq_cst fence between
/// them in each work-item (`Fsb?` and `sbF?` of `scp`): the views check
/// the fences' SC axiom, and the execution where both loads read 0 is
/// inconsistent, as with seq_cst accesses.
#[test]
fn seq_cst_fences_stay_with_the_views() {
    let sb = || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([2], [1]), |it| {
            let (a, b) = if it.global_id(0) == 0 { (&x, &y) } else { (&y, &x) };
            a.store(1, Order::Relaxed, Scope::Device);
            clmm::atomic_work_item_fence(clmm::FenceFlags::GLOBAL, Order::SeqCst, Scope::Device);
            b.load(Order::Relaxed, Scope::Device)
        });
        (r[0], r[1])
    };
    let o = Builder::new().outcomes(sb);
    assert_eq!(o, [(0, 1), (1, 0), (1, 1)].into_iter().collect(), "{o:?}");
    let s = Builder::new().check(|| { let _ = sb(); }).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (3, 1, 0), "{s}");
    let s = Builder::new().sc_model(clmm::ScModel::Scoped).check(|| { let _ = sb(); }).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.pruned, s.explicit), (3, 0, 1, 0), "{s}");
}

/// A work-item accumulating into one element of a global buffer (plain
/// reads and writes in a loop), and a second one that reads the sum
/// after a global barrier. Each read is offered only the writes `vis`
/// does not hide (`Clocks::unhidden_writes`): until session 48 every
/// read looked at every write of the location, each against every
/// other, and 1,000 iterations took 660 ms (4,000: 42 s); the bench
/// `plain_loop-1000` in `benches/vs_loom.rs` measures it now.
#[test]
fn plain_accumulation_in_a_loop() {
    const N: u32 = 3000;
    let s = Builder::new()
        .max_steps(4 * N)
        .check(|| {
            let sum = GlobalBuffer::<u32>::new(1);
            let seen = Mutex::new(0);
            launch(NdRange::new([2], [2]), |it| {
                if it.local_id(0) == 0 {
                    for _ in 0..N {
                        let v = sum.read(0);
                        sum.write(0, v + 1);
                    }
                }
                it.barrier(FenceFlags::GLOBAL);
                if it.local_id(0) == 1 {
                    *seen.lock().unwrap() = sum.read(0);
                }
            });
            assert_eq!(*seen.lock().unwrap(), N);
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (1, 0, 0), "{s}");
}

/// The loop of [`plain_accumulation_in_a_loop`] (two iterations), and
/// a plain write of another work-group racing with it. A plain read
/// reads a visible write (O-NaRfG: one that happens before it), so the
/// other work-group's is never offered: one execution, with the race.
#[test]
fn plain_accumulation_racing_with_a_write() {
    let ex = Builder::new().explore(|| {
        let x = GlobalBuffer::<u32>::new(1);
        launch(NdRange::new([2], [1]), |it| {
            if it.group_id(0) == 0 {
                for _ in 0..2 {
                    let v = x.read(0);
                    x.write(0, v + 1);
                }
            } else {
                x.write(0, 99);
            }
        });
    });
    let kinds: Vec<String> = ex.failures.iter().map(|f| f.kind.to_string()).collect();
    assert_eq!(kinds, ["data race"]);
    assert_eq!((ex.stats.complete, ex.stats.failed, ex.stats.explicit), (1, 1, 0), "{}", ex.stats);
}

/// Two work-items of one work-group exchanging values through local
/// memory in a loop: each writes its slot, waits at a barrier, reads the
/// other's, waits again. Until session 48 this was quadratic three times
/// over: each write walked its whole porf-prefix for reads to revisit
/// (every earlier read of the slot happens before it, through the
/// barriers: `Clocks::others_before`), each barrier entry counted the
/// unit's earlier entries, and the complete graph paired each write with
/// every read of the other work-item (`race_pairs` bisects) and looked
/// for each exit from the unit's last event. 2,000 iterations took
/// 8.9 s; the bench `barrier_loop-1000` in `benches/vs_loom.rs`
/// measures it now.
#[test]
fn barriers_in_a_loop() {
    const N: u32 = 2000;
    let s = Builder::new()
        .max_steps(8 * N)
        .check(|| {
            launch_with_local(
                NdRange::new([2], [2]),
                |_| LocalBuffer::<u32>::new(2),
                |it, slot| {
                    let me = it.local_id(0);
                    for i in 0..N {
                        slot.write(me, i * 2 + me as u32);
                        it.barrier(FenceFlags::LOCAL);
                        assert_eq!(slot.read(1 - me), i * 2 + 1 - me as u32);
                        it.barrier(FenceFlags::LOCAL);
                    }
                },
            );
        })
        .unwrap_or_else(|f| panic!("{f}"));
    assert_eq!((s.complete, s.blocked, s.explicit), (1, 0, 0), "{s}");
}
