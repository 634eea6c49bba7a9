//! Optimality: no complete execution graph is explored twice. With
//! `Builder::check_unique` every complete graph is fingerprinted and
//! repeats are counted in `Stats::duplicates`; the counts are the model's
//! (derived in the comments). The litmus conformance suite runs the same
//! check on all 186 reference tests.

use clmm::{launch, AtomicI32, GlobalBuffer, NdRange, Order, Scope};

const D: Scope = Scope::Device;
const RLX: Order = Order::Relaxed;

mod common;
use common::pass;

/// The programs of the benchmarks against loom.
#[allow(dead_code)]
#[path = "../benches/programs/clmm.rs"]
mod bench;

#[test]
fn fetch_add_by_n_units_is_n_factorial_once_each() {
    // n RMWs on one location: one execution per coherence order, n!.
    for (n, want) in [(2usize, 2u64), (3, 6), (4, 24), (5, 120)] {
        let s = pass(move || {
            let c = AtomicI32::new(0);
            launch(NdRange::new([n], [1]), |_| {
                c.fetch_add(1, RLX, D);
            });
            assert_eq!(c.load(RLX, D), n as i32);
        });
        assert_eq!(s.complete, want, "fetch_add by {n}");
    }
}

#[test]
fn iriw_relaxed_sixteen_once_each() {
    // Each reader reads 0 or 1 from each location: 2^4 = 16.
    let s = pass(|| {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        launch(NdRange::new([4], [1]), |it| match it.global_id(0) {
            0 => x.store(1, RLX, D),
            1 => y.store(1, RLX, D),
            2 => {
                x.load(RLX, D);
                y.load(RLX, D);
            }
            _ => {
                y.load(RLX, D);
                x.load(RLX, D);
            }
        });
    });
    assert_eq!(s.complete, 16);
}

/// A CAS spin lock around a non-atomic counter (the benchmarks' one,
/// `bench::spin_lock`, when not `weak`); with `weak`, the lock is taken by
/// `compare_exchange_weak`, which may also fail spuriously when it reads
/// the expected value (both are explored).
fn spin_lock_cas(n: usize, weak: bool) -> impl Fn() + Sync {
    move || {
        let lock = AtomicI32::new(0);
        let counter = GlobalBuffer::<u32>::new(1);
        launch(NdRange::new([n], [1]), |_| {
            let take = || if weak { lock.compare_exchange_weak(0, 1, Order::Acquire, RLX, D) } else { lock.compare_exchange(0, 1, Order::Acquire, RLX, D) };
            while take().is_err() {
                clmm::hint::spin_loop();
            }
            counter.write(0, counter.read(0) + 1);
            lock.store(0, Order::Release, D);
        });
        assert_eq!(counter.read(0), n as u32);
    }
}

#[test]
fn spin_lock_each_execution_once() {
    // Two units, A and B, strong CAS lock. A execution is an order of the
    // critical sections plus the failed attempts: with A first, B either
    // takes the lock reading A's release, or first fails once reading A's
    // acquisition (a second failure reading the same write is a repeated
    // spin iteration, blocked) and then reads the release: 2; the same with
    // B first: 4 in all.
    assert_eq!(pass(bench::spin_lock(2)).complete, 4);
    // Three units, owners in order A, B, C (3! orders): a strong CAS fails
    // only by reading a lock value 1, i.e. an acquisition. B may fail once
    // on A's acquisition or not (2); C's failed reads are an increasing
    // subsequence of {A's acquisition, B's acquisition} (4), then it reads
    // B's release. 6 x 2 x 4 = 48.
    assert_eq!(pass(bench::spin_lock(3)).complete, 48);
}

#[test]
fn treiber_stack_each_execution_once() {
    // The Treiber stack of the benchmarks against loom: each of 2 units
    // pushes its node (relaxed load of the head, non-atomic link, release
    // CAS), then pops one (acquire load, non-atomic read of the link,
    // acquire CAS); every node is popped once. The tool's counts (46
    // complete executions since session 9, the blocked ones a regression
    // guard: CAS retries and load-buffering speculations). At 0668c61 this
    // program crashed the explorer: a speculation deferred by an
    // alternative that was then pruned was pushed in the next one, on
    // events it no longer had. 1244 blocked until session 28, when a
    // plain load after an acquire load of a pending promise stopped being
    // pruned for a write that the promise's `sw` may yet make visible
    // (`plain_load_after_a_pending_acquire` in `tests/scoped_differential.rs`),
    // 1510 until session 29, when speculations start from the graph as it
    // was when they were pushed and start graphs are told apart by the
    // order of their promises' ranks, 1514 until session 31 (a doomed
    // speculative run pushes no alternative that depends on its doom, `Doom`
    // in `clmm-check/src/explore/speculation.rs`), 779 until session 32
    // and 776 until later in session 32 (both in
    // `load_buffering_explores_no_blocked_run`), 747 until session 34
    // (a pending promise whose read happens before an event of the unit
    // that owes it is an hb doom, `Doom` in
    // `clmm-check/src/explore/speculation.rs`), then 721 until the head's
    // chain of successful CASes doomed a speculating load of it once its
    // unit's next CAS succeeded (`rmw_chain_after` there), 444 until a
    // read was no longer offered a write that depends on a doom
    // (`Engine::reads_doom` there), 352 until session 35, when load
    // buffering through the head was ruled out: it is the kernel's only
    // atomic location (`Engine::coherence_isolated` there), so no blocked
    // run is left.
    let s = pass(bench::treiber(2));
    assert_eq!((s.complete, s.blocked), (46, 0));
}

#[test]
fn weak_cas_spin_lock_terminates_each_execution_once() {
    // Before the fix, a spurious failure of a CAS revisited backward cut
    // the graph at the CAS and left it reading a deleted write: the
    // exploration never ended (2 units: 2,000 explorations in 34 s, graphs
    // of 900 events). A spurious failure followed by the same read again is
    // a repeated spin iteration (blocked); it completes only when another
    // unit's write comes between. The counts are the tool's, pinned, each
    // graph once (`check_unique`).
    let s = pass(spin_lock_cas(2, true));
    // Blocked: 231 until session 32 (`load_buffering_explores_no_blocked_run`),
    // 215 until session 34 (the speculations of the counter's plain load
    // on the next holder's store, which nothing could make visible to it:
    // `Engine::never_visible` in `clmm-check/src/explore/speculation.rs`),
    // 61 until session 37 (a second order of the units in speculative
    // runs, `owing_first_matters` there), 93 until session 42 (a weak
    // compare-exchange that succeeds on the promise its unit's previous
    // read reads may read it too, and fail spuriously on it,
    // `Engine::push_read_promised` in `clmm-check/src/explore/revisit.rs`),
    // 141 until session 43 (no load buffering through a plain location
    // when the kernel has one atomic location, `Engine::coherence_isolated`
    // in `clmm-check/src/explore/speculation.rs`: the counter's plain loads
    // no longer speculate).
    assert_eq!((s.complete, s.blocked), (32, 29));
    let s = pass(spin_lock_cas(3, true));
    // Blocked: 255 and 279653 until session 31 (see
    // `treiber_stack_each_execution_once`), 161493 until session 32,
    // 156853 until session 34, 71783 until hb dooms (see
    // `treiber_stack_each_execution_once`), later in session 34, then
    // 70183 (`Engine::reads_doom`), 65591 until session 37 (a second
    // order of the owing units, `owing_first_matters` there), 116263 until
    // session 40 (a plain load deleted by a revisit with a promise pending
    // that the revisiting write's own unit owes is maximal, `Engine::maximal`
    // in `clmm-check/src/explore/revisit.rs`), 128567 until session 41 (a
    // failing compare-exchange may read its unit's previous read's
    // promise, and a CoRR doom, `corr_doom` in
    // `clmm-check/src/explore/speculation.rs`), 120647 until session 42
    // (see the two units above), 309903 until session 43 (the same).
    assert_eq!((s.complete, s.blocked), (3072, 3271));
}

#[test]
fn load_buffering_cycles_once_each() {
    // LB with three units in a ring: each load reads 0 or the store: 2^3 =
    // 8, all allowed by the model without fences (one of them the cycle).
    let s = pass(|| {
        let v: Vec<AtomicI32> = (0..3).map(|_| AtomicI32::new(0)).collect();
        launch(NdRange::new([3], [1]), |it| {
            let i = it.global_id(0);
            let r = v[i].load(RLX, D);
            v[(i + 1) % 3].store(1, RLX, D);
            r
        });
    });
    assert_eq!(s.complete, 8, "{s}");
}

#[test]
fn load_buffering_explores_no_blocked_run() {
    // LB of the benchmarks (`r = Rx; Wy1 || s = Ry; Wx1`, relaxed): 4
    // complete executions, the cycle once, and since session 32 no
    // blocked run. Two runs ended blocked before. In the run that
    // speculates `r` on `Wx1`, `s` was offered the initial `y` too, which
    // keeps the promise without a cycle (a graph explored without
    // speculation; `Engine::keeps_promise_acyclically`). And where a
    // revisit made `r` read `Wx1`, `s` speculated on `Wy1`, making `r` a
    // promise again: that start graph is the one of `r`'s own
    // speculation, met before, plus `s`, and its run met the same cycle
    // (`Engine::own_start_met`; both in
    // `clmm-check/src/explore/speculation.rs`).
    let s = pass(bench::lb);
    assert_eq!((s.complete, s.blocked), (4, 0), "{s}");
}

#[test]
fn a_unit_alone_is_offered_only_coherent_writes() {
    // One work-item storing, loading and incrementing one atomic 100
    // times, with a barrier-free message through global memory each
    // time: one execution, and no alternative at all. Each access is
    // offered only the writes coherence allows it (`co_floor`: here the
    // last one); offering every earlier write and pruning it later made
    // this cost O(n^4) (12 s at n = 100).
    let s = pass(|| {
        let x = AtomicI32::new(0);
        let data = GlobalBuffer::<i32>::new(1);
        launch(NdRange::new([1], [1]), |_| {
            for i in 0..100 {
                x.store(i, RLX, D);
                assert_eq!(x.load(RLX, D), i);
                assert_eq!(x.fetch_add(1, RLX, D), i);
                data.write(0, i);
                assert_eq!(data.read(0), i);
            }
        });
        assert_eq!(x.load(RLX, D), 100);
    });
    assert_eq!((s.complete, s.blocked, s.pruned), (1, 0, 0), "{s}");
}

#[test]
fn message_passing_prunes_no_stale_read() {
    // MP with release/acquire: after reading flag = 1 the reader is
    // offered data = 1 only (data = 0 is coherence-before a write that
    // happens before it), so no alternative is pruned.
    let s = pass(|| {
        let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                data.store(1, RLX, D);
                flag.store(1, Order::Release, D);
            } else if flag.load(Order::Acquire, D) == 1 {
                assert_eq!(data.load(RLX, D), 1);
            }
        });
    });
    assert_eq!((s.complete, s.blocked, s.pruned), (2, 0, 0), "{s}");
}

/// Load buffering that message passing forbids: `r = Rx; Wy1 (release)
/// || a = Ry (acquire); b = Rz; Wx1 || Wz1; Wz2`. In the runs where `r`
/// speculates on `Wx1`, `a` reads the release `Wy1` that follows `r`, so
/// `r` happens before `a`, and before the promised `Wx1` that `r` reads:
/// `rf; hb` is reflexive (O-Rf). `a` is an hb doom (`Doom` in
/// `clmm-check/src/explore/speculation.rs`): the run stops there, and the
/// alternatives for `b`, which keep `a`, are not pushed. The complete
/// count is the brute force's (`mp_shaped_load_buffering` in
/// `tests/scoped_differential.rs`); blocked runs: 10 without hb dooms
/// (until session 34).
#[test]
fn hb_doom_stops_a_hopeless_speculation() {
    let s = pass(|| {
        let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
        launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
            0 => {
                x.load(RLX, D);
                y.store(1, Order::Release, D);
            }
            1 => {
                y.load(Order::Acquire, D);
                z.load(RLX, D);
                x.store(1, RLX, D);
            }
            _ => {
                z.store(1, RLX, D);
                z.store(2, RLX, D);
            }
        });
    });
    // Blocked: 8 until session 37 (a second order of the units in
    // speculative runs, `owing_first_matters` in
    // `clmm-check/src/explore/speculation.rs`).
    assert_eq!((s.complete, s.blocked), (9, 14));
}

#[test]
fn treiber_stack_three_units_without_speculation() {
    // The head is the kernel's only atomic location (the links are
    // non-atomic), so no execution reads a write porf-after the read
    // (`Engine::coherence_isolated` in `clmm-check/src/explore/speculation.rs`):
    // the run is TruSt's without speculation. Until session 35 it did
    // not finish (one complete execution after 2.4 million blocked runs
    // in 120 s): each speculation on the head ended blocked.
    let s = pass(bench::treiber(3));
    assert_eq!((s.complete, s.blocked, s.isolation_restarted), (68_892, 0, false));
}

#[test]
fn location_allocated_after_load_buffering_was_ruled_out() {
    // `a = x; x = 1 || b = x; if b == 1 { x = 2 } else { y = new atomic; y = 1 }`:
    // when the second work-item's `x = 2` comes, `a` is in its
    // porf-prefix, and with `x` the only atomic location its speculation
    // is not made. A later execution allocates `y`, a second atomic
    // location, so the run starts again without the rule
    // (`Stats::isolation_restarted`) and then speculates (blocked runs).
    // Two executions: `b` reads 0 or 1, `a` only 0 (reading `x = 2` is
    // a cycle in coherence).
    let s = pass(|| {
        let x = AtomicI32::new(0);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                let _ = x.load(RLX, D);
                x.store(1, RLX, D);
            } else if x.load(RLX, D) == 1 {
                x.store(2, RLX, D);
            } else {
                let y = AtomicI32::new(0);
                y.store(1, RLX, D);
            }
        });
    });
    assert_eq!((s.complete, s.blocked, s.isolation_restarted), (2, 1, true));
}

#[test]
fn a_revisiting_write_is_offered_no_placement_below_its_past() {
    // The reader goes first; the writer's second store revisits it. In
    // the revisited graph the store could be placed after the initial
    // write or after the first store, but the first is `sb`-before it:
    // placed before it, the graph is incoherent (O-CohG). The revisit
    // offers only the placements from what the store's past observes
    // (`Engine::placement_floor`, session 53), so nothing is pruned: 3
    // executions, the read reading 0, 1 or 2. Offered every placement, 1
    // alternative was pruned here, and 4,034 of the work-stealing
    // example's 10,843 backward revisits.
    let s = pass(|| {
        let x = AtomicI32::new(0);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                let v = x.load(RLX, D);
                assert!((0..=2).contains(&v));
            } else {
                x.store(1, RLX, D);
                x.store(2, RLX, D);
            }
        });
        assert_eq!(x.load(RLX, D), 2);
    });
    assert_eq!((s.complete, s.blocked, s.pruned), (3, 0, 0), "{s}");
}
