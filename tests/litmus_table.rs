//! Rust litmus table: each litmus shape written with clmm's API, asserting
//! under both SC models (`ScModel::Spec` = `opencl.cat`, `ScModel::Scoped` =
//! `opencl_scopedsc.cat`):
//!
//! * the EXACT map of outcomes (the values the model closure returns) to the
//!   number of complete executions returning each and the failure kinds
//!   those executions have (`"data race"`, ...),
//! * the EXACT number of complete executions (`stats.complete`), which must
//!   equal the sum of the per-outcome counts (no execution without a value),
//! * and that the run was not cut short. (`stats.blocked`, explorations
//!   the explorer abandoned as inconsistent once complete, is an artefact
//!   of the exploration order and not asserted.)
//!
//! Where a shape is the program of a test of `/work/shared/litmus`, the
//! comment names it and the expected values agree with its `expect.json`
//! (states, execution count, `O-Dr` flags). Differences in the reference's
//! counting are explained where they matter: the reference counts every
//! coherence order of the writes to a NON-ATOMIC location (k! per
//! execution) and lets a non-atomic location end with any of its writes'
//! values; clmm has no coherence order on non-atomic locations (an
//! execution is a choice of rf for every read, and of co for atomic
//! locations only), and a final value here is what a host read after the
//! launch sees (a visible write: `O-NaRfG`).
//!
//! Other shapes are derived from the `.cat` files by hand (the derivation is
//! in the comment): the execution count is the number of rf/co choices the
//! model accepts.
//!
//! Notation in comments: `Wx1` a write of 1 to x, `Rx` a read of x, `init`
//! the initial write; "group" is a work-group. All atomics are in global
//! memory at device scope unless the comment says otherwise.

use clmm::{
    atomic_work_item_fence, launch, launch_with_local, AtomicFlag, AtomicI32, Builder, FenceFlags, GlobalBuffer, LocalBuffer,
    NdRange, Order, ScModel, Scope, SvmBuffer, Topology, WorkItem,
};
use std::fmt::Debug;

// ---------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------

const NONE: &[&str] = &[];
const RACE: &[&str] = &["data race"];

const RLX: Order = Order::Relaxed;
const ACQ: Order = Order::Acquire;
const REL: Order = Order::Release;
const SC: Order = Order::SeqCst;
const WI: Scope = Scope::WorkItem;
const SG: Scope = Scope::SubGroup;
const WG: Scope = Scope::WorkGroup;
const DEV: Scope = Scope::Device;
const ALL: Scope = Scope::AllSvmDevices;
const GLOBAL: FenceFlags = FenceFlags::GLOBAL;
const LOCAL: FenceFlags = FenceFlags::LOCAL;

mod common;
use common::{outcome_table, want_table, Want};

/// Explore `f` under `sc` and compare everything with `want` and
/// `executions`.
#[track_caller]
fn check<T, F>(sc: ScModel, f: &F, want: &[Want<T>], executions: u64)
where
    T: Ord + Send + Clone + Debug,
    F: Fn() -> T + Sync,
{
    let sum: u64 = want.iter().map(|w| w.1).sum();
    assert_eq!(sum, executions, "the expectation itself is inconsistent ({sc:?})");
    let ex = Builder::new().sc_model(sc).explore(f);
    // TABLE_DEBUG=1 prints the statistics of every run (with
    // CLMM_CHECK_UNIQUE=1 they count duplicate executions).
    if std::env::var_os("TABLE_DEBUG").is_some() {
        eprintln!("{sc:?}: {:?}", ex.stats);
    }
    assert_eq!(outcome_table(&ex), want_table(want), "outcomes -> (executions, failure kinds) under {sc:?}");
    assert_eq!(ex.stats.complete, executions, "complete executions under {sc:?}");
    assert!(!ex.stats.stopped_early);
}

/// The same expectation under both SC models.
#[track_caller]
fn both<T, F>(f: F, want: &[Want<T>], executions: u64)
where
    T: Ord + Send + Clone + Debug,
    F: Fn() -> T + Sync,
{
    check(ScModel::Spec, &f, want, executions);
    check(ScModel::Scoped, &f, want, executions);
}

/// Different expectations under the two SC models.
#[track_caller]
fn per_model<T, F>(f: F, spec: &[Want<T>], spec_n: u64, scoped: &[Want<T>], scoped_n: u64)
where
    T: Ord + Send + Clone + Debug,
    F: Fn() -> T + Sync,
{
    check(ScModel::Spec, &f, spec, spec_n);
    check(ScModel::Scoped, &f, scoped, scoped_n);
}

/// Two work-groups of one work-item each (the litmus `(device (work_group
/// P0) (work_group P1))`).
fn two_groups() -> NdRange {
    NdRange::new([2], [1])
}

/// One work-group of two work-items (`(device (work_group P0 P1))`).
fn one_group() -> NdRange {
    NdRange::new([2], [2])
}

/// Every combination of `a` and `b`, each once, without failures.
fn all_pairs(a: &[i32], b: &[i32]) -> Vec<Want<(i32, i32)>> {
    a.iter().flat_map(|&x| b.iter().map(move |&y| ((x, y), 1, NONE))).collect()
}

/// SB on two global atomics: `Wx1; r0=Ry || Wy1; r1=Rx`, both units with
/// `order` at `scope`, on `range` (two work-items).
fn sb(range: fn() -> NdRange, order: Order, scope: Scope) -> impl Fn() -> (i32, i32) + Sync {
    move || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(range(), |it| {
            if it.global_id(0) == 0 {
                x.store(1, order, scope);
                y.load(order, scope)
            } else {
                y.store(1, order, scope);
                x.load(order, scope)
            }
        });
        (r[0], r[1])
    }
}

/// LB on two global atomics at device scope: `r0=Rx; Wy1 || r1=Ry; Wx1`,
/// unit i loading with `load[i]` and storing with `store[i]`.
fn lb(range: fn() -> NdRange, load: [Order; 2], store: [Order; 2]) -> impl Fn() -> (i32, i32) + Sync {
    move || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(range(), |it| {
            if it.global_id(0) == 0 {
                let r0 = x.load(load[0], DEV);
                y.store(1, store[0], DEV);
                r0
            } else {
                let r1 = y.load(load[1], DEV);
                x.store(1, store[1], DEV);
                r1
            }
        });
        (r[0], r[1])
    }
}

/// MP with non-atomic data and an atomic flag: `x=1; y.store(1, rel) ||
/// r0=y.load(acq); r1 = r0 == 1 ? x : -1`, flag accesses at `scope`;
/// the outcome is (r0, r1).
fn mp(range: NdRange, rel: Order, acq: Order, scope: Scope) -> impl Fn() -> (i32, i32) + Sync {
    move || {
        let x = GlobalBuffer::<i32>::new(1);
        let y = AtomicI32::new(0);
        let r = launch(range.clone(), |it| {
            if it.global_id(0) == 0 {
                x.write(0, 1);
                y.store(1, rel, scope);
                (0, 0)
            } else {
                let r0 = y.load(acq, scope);
                let r1 = if r0 == 1 { x.read(0) } else { -1 };
                (r0, r1)
            }
        });
        r[1]
    }
}

// ---------------------------------------------------------------------
// SB (store buffering)
// ---------------------------------------------------------------------

/// SB, relaxed: `Wx1; r0=Ry || Wy1; r1=Rx`. Derivation: each read has two
/// writes to choose (init or the other unit's), no axiom relates them
/// without SC or synchronisation (a relaxed rf is no sw): 2 x 2 = 4
/// executions, one per outcome. (The herd/SB test has the same shape on
/// unqualified non-atomic pointers, a different program.)
#[test]
fn sb_relaxed() {
    both(
        sb(two_groups, RLX, DEV),
        &all_pairs(&[0, 1], &[0, 1]),
        4,
    );
}

/// SB, seq_cst at device scope = `overhauling/example9a` (and 9b, the same
/// program): 3 executions, (0,0) forbidden. With (0,0) both reads are rb
/// before the other unit's write, and with sb this is a cycle of `scp`
/// among SC events, all device scope: O-Ssimp (S_cond2) and O-Sscoped
/// (same device, so inclusive) both forbid it.
#[test]
fn sb_seq_cst_device() {
    both(
        sb(two_groups, SC, DEV),
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// SB with relaxed accesses and a seq_cst fence (GLOBAL, device scope)
/// between them in each unit. Derivation: `scp = Fsb?; (rb|mo|ghb|lhb);
/// sbF?`; with (0,0), `F0 sb Ry rb Wy1 sb F1` and `F1 sb Rx rb Wx1 sb F0`, a
/// cycle between the two SC fences. The only SC events are the fences,
/// device scope on ordinary memory, so S_cond2 holds (Spec) and they are
/// inclusive (Scoped): forbidden. The other 3 rf choices stay: 3.
#[test]
fn sb_seq_cst_fences() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    atomic_work_item_fence(GLOBAL, SC, DEV);
                    y.load(RLX, DEV)
                } else {
                    y.store(1, RLX, DEV);
                    atomic_work_item_fence(GLOBAL, SC, DEV);
                    x.load(RLX, DEV)
                }
            });
            (r[0], r[1])
        },
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// SB, seq_cst at WORK-GROUP scope with the two units in DIFFERENT groups.
/// Derivation: Spec: an SC event with scope work_group makes S_cond1 and
/// S_cond2 empty, so O-Ssimp is vacuous: all 4 outcomes. Scoped: the two
/// units' events are not inclusive (different groups), the scp cycle is not
/// in `incl`: all 4. And in every execution `Wx1` (group 0) and `Rx`
/// (group 1) are work-group scope in different groups, not inclusive and
/// unordered by hb: a data race (so are Wy1/Ry).
#[test]
fn sb_seq_cst_work_group_across_groups() {
    let want: Vec<Want<(i32, i32)>> = all_pairs(&[0, 1], &[0, 1]).into_iter().map(|(v, n, _)| (v, n, RACE)).collect();
    both(
        sb(two_groups, SC, WG),
        &want,
        4,
    );
}

/// SB, seq_cst at work-group scope INSIDE one work-group, global memory.
/// The SC models differ. Spec (`opencl.cat`): SC events of scope
/// work_group switch the SC axiom off (S_cond2 needs every SC event at
/// device scope): (0,0) allowed, 4 executions. Scoped
/// (`opencl_scopedsc.cat`): the events are inclusive (same scope, same
/// group), the scp cycle of (0,0) is in `incl`: forbidden, 3 executions.
/// No race: same scope in the same group is inclusive.
#[test]
fn sb_seq_cst_work_group_in_one_group() {
    per_model(
        sb(one_group, SC, WG),
        &all_pairs(&[0, 1], &[0, 1]),
        4,
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// The same on LOCAL memory = `clmm/SB_sc_local_wg`: spec 4 executions and
/// 4 states, scoped 3 and 3, no flags.
#[test]
fn sb_seq_cst_local_work_group() {
    per_model(
        || {
            let r = launch_with_local(
                one_group(),
                |_| (AtomicI32::new(0), AtomicI32::new(0)),
                |it, (x, y)| {
                    if it.local_id(0) == 0 {
                        x.store(1, SC, WG);
                        y.load(SC, WG)
                    } else {
                        y.store(1, SC, WG);
                        x.load(SC, WG)
                    }
                },
            );
            (r[0], r[1])
        },
        &all_pairs(&[0, 1], &[0, 1]),
        4,
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

// ---------------------------------------------------------------------
// MP (message passing)
// ---------------------------------------------------------------------

/// MP with non-atomic data and a release/acquire flag at device scope
/// across groups = `overhauling/MP_ra_dev`: 2 executions, states
/// (r0,r1) = (0,-1), (1,1), no race.
#[test]
fn mp_release_acquire_device() {
    both(
        mp(two_groups(), REL, ACQ, DEV),
        &[((0, -1), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// The same with seq_cst = `overhauling/MP_sc_dev`: (0,-1), (1,1); 2.
#[test]
fn mp_seq_cst_device() {
    both(
        mp(two_groups(), SC, SC, DEV),
        &[((0, -1), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// MP release/acquire at WORK-GROUP scope ACROSS groups =
/// `overhauling/MP_ra_wg`: 2 executions, states (0,-1) and (1,0), both
/// flagged O-Dr (the flag accesses themselves are not inclusive; when the
/// data is read, only init is visible, so r1 = 0, never 1).
#[test]
fn mp_release_acquire_work_group_across_groups() {
    both(
        mp(two_groups(), REL, ACQ, WG),
        &[((0, -1), 1, RACE), ((1, 0), 1, RACE)],
        2,
    );
}

/// MP release/acquire at work-group scope INSIDE one group, data 42 =
/// `overhauling/example4`: r = -1 or 42; 2 executions; no race.
#[test]
fn mp_release_acquire_work_group_one_group() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let y = AtomicI32::new(0);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.write(0, 42);
                    y.store(1, REL, WG);
                    0
                } else if y.load(ACQ, WG) == 1 {
                    x.read(0)
                } else {
                    -1
                }
            });
            r[1]
        },
        &[(-1, 1, NONE), (42, 1, NONE)],
        2,
    );
}

/// MP, everything relaxed and atomic. Derivation: without sw, both reads
/// choose freely between init and the write: 4 executions, 4 outcomes,
/// including the stale (1,0). No race (all atomic, same scope, same device).
#[test]
fn mp_relaxed_atomic_data() {
    both(
        || {
            let (data, flag) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    data.store(1, RLX, DEV);
                    flag.store(1, RLX, DEV);
                    (0, 0)
                } else {
                    let f = flag.load(RLX, DEV);
                    (f, data.load(RLX, DEV))
                }
            });
            r[1]
        },
        &all_pairs(&[0, 1], &[0, 1]),
        4,
    );
}

/// MP with NON-ATOMIC data and a relaxed flag, one group =
/// `c11/manual/mp_relaxed`: (0,-1) without race, (1,0) with a race on the
/// data (no sw, so the data write is not visible: only init can be read);
/// 2 executions.
#[test]
fn mp_relaxed_plain_data_races() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let y = AtomicI32::new(0);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.write(0, 1);
                    y.store(1, RLX, DEV);
                    (0, 0)
                } else {
                    let r0 = y.load(RLX, DEV);
                    let r1 = if r0 == 1 { x.read(0) } else { -1 };
                    (r0, r1)
                }
            });
            r[1]
        },
        &[((0, -1), 1, NONE), ((1, 0), 1, RACE)],
        2,
    );
}

/// MP with relaxed flag accesses and `atomic_work_item_fence(GLOBAL,
/// release/acquire, all_svm_devices)` = `c11/manual/mp_fences`: the fences
/// synchronise (`ra_sw` through `Fsb`/`sbF`, the fence scopes are
/// inclusive): (0,-1), (1,1), 2 executions, no race.
#[test]
fn mp_fences_release_acquire() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let y = AtomicI32::new(0);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.write(0, 1);
                    atomic_work_item_fence(GLOBAL, REL, ALL);
                    y.store(1, RLX, DEV);
                    (0, 0)
                } else {
                    let r0 = y.load(RLX, DEV);
                    atomic_work_item_fence(GLOBAL, ACQ, ALL);
                    let r1 = if r0 == 1 { x.read(0) } else { -1 };
                    (r0, r1)
                }
            });
            r[1]
        },
        &[((0, -1), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// MP where the flag is a LOCAL atomic and the data is global =
/// `overhauling/example5`: the release/acquire pair synchronises in the
/// local region only (not SC, not fences with both flags: no `scf`), so the
/// global data is unordered: r = -1 (no race) or 0 (race); 2 executions.
#[test]
fn mp_local_flag_global_data_races() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let r = launch_with_local(
                one_group(),
                |_| AtomicI32::new(0),
                |it, y| {
                    if it.local_id(0) == 0 {
                        x.write(0, 42);
                        y.store(1, REL, WG);
                        0
                    } else if y.load(ACQ, WG) == 1 {
                        x.read(0)
                    } else {
                        -1
                    }
                },
            );
            r[1]
        },
        &[(-1, 1, NONE), (0, 1, RACE)],
        2,
    );
}

/// The same with relaxed flag accesses and fences carrying BOTH flags =
/// `overhauling/example6`: `(G & L & F)^2` is in `scf`, the local sw is also
/// a global one: r = -1 or 42, no race; 2 executions.
#[test]
fn mp_local_flag_fences_with_both_flags() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let r = launch_with_local(
                one_group(),
                |_| AtomicI32::new(0),
                |it, y| {
                    if it.local_id(0) == 0 {
                        x.write(0, 42);
                        atomic_work_item_fence(GLOBAL | LOCAL, REL, WG);
                        y.store(1, RLX, WG);
                        0
                    } else if y.load(RLX, WG) == 1 {
                        atomic_work_item_fence(GLOBAL | LOCAL, ACQ, WG);
                        x.read(0)
                    } else {
                        -1
                    }
                },
            );
            r[1]
        },
        &[(-1, 1, NONE), (42, 1, NONE)],
        2,
    );
}

// ---------------------------------------------------------------------
// LB (load buffering)
// ---------------------------------------------------------------------

/// LB, relaxed, one group = `c11/auto/lb` (also `c11/auto/b+rlx+rlx`): 4
/// executions including r0 = r1 = 1. The model has no po∪rf axiom; clmm
/// reaches (1,1) by speculation (each read reads the other unit's
/// po-later write).
#[test]
fn lb_relaxed() {
    both(
        lb(one_group, [RLX, RLX], [RLX, RLX]),
        &all_pairs(&[0, 1], &[0, 1]),
        4,
    );
}

/// LB with an acquire load and a release store in ONE unit only =
/// `c11/auto/b+acq+rel`: the other side is relaxed, so no sw closes the
/// cycle: 4 executions, (1,1) allowed.
#[test]
fn lb_one_side_acquire_release() {
    both(
        lb(one_group, [ACQ, RLX], [REL, RLX]),
        &all_pairs(&[0, 1], &[0, 1]),
        4,
    );
}

/// LB with acquire loads and release stores on both sides (global memory,
/// device scope). Derivation: (1,1) needs `Wx1 rf Rx` and `Wy1 rf Ry`, both
/// sw (release store to acquire load, inclusive), and with `Rx sb Wy1`,
/// `Ry sb Wx1` (all global events) this is a ghb cycle: O-HbG forbids it.
/// The 3 other rf choices remain: 3 executions.
#[test]
fn lb_acquire_release() {
    both(
        lb(two_groups, [ACQ, ACQ], [REL, REL]),
        &[((0, 0), 1, NONE), ((0, 1), 1, NONE), ((1, 0), 1, NONE)],
        3,
    );
}

/// Three-unit LB with seq_cst (device scope), groups (P0 P1) (P2) =
/// `herd/3LB`: 7 executions, every state except (1,1,1) (the cycle is a ghb
/// cycle: each rf is sw, each sb global).
#[test]
fn lb_three_units_seq_cst() {
    let mut want = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                if (a, b, c) != (1, 1, 1) {
                    want.push(((a, b, c), 1, NONE));
                }
            }
        }
    }
    both(
        || {
            let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(Topology::new().device([2, 1]), |it| match it.global_id(0) {
                0 => {
                    let r0 = x.load(SC, DEV);
                    y.store(1, SC, DEV);
                    r0
                }
                1 => {
                    let r1 = y.load(SC, DEV);
                    z.store(1, SC, DEV);
                    r1
                }
                _ => {
                    let r2 = z.load(SC, DEV);
                    x.store(1, SC, DEV);
                    r2
                }
            });
            (r[0], r[1], r[2])
        },
        &want,
        7,
    );
}

/// Three-unit LB whose writes copy what their unit read (relaxed, device
/// scope, three groups): `a=Rx; Wy1 || b=Rz; Wx=b || c=Ry; Wz=c`. Every
/// value has a source that does not depend on the cycle (P0's `Wy1` is
/// unconditional), so this is load buffering, not a value out of thin air:
/// (1,1,1) is `Rx rf Wx1` with `Wx1` porf-after `Rx` through P2 and P1.
/// Executions: c reads init or `Wy1` (2) x b reads init or `Wz` (2) x a
/// reads init or `Wx` (2) = 8: (0,0,0) four times (every write writes 0
/// when c = 0), (0,0,1) twice, (0,1,1) and (1,1,1) once. The speculation
/// that finds (1,1,1) breaks on its first rerun (P1 runs before P2 and
/// writes x = 0) and needs the later revisit of `Rz` by P2's write.
#[test]
fn lb_three_units_copying_values() {
    both(
        || {
            let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
                0 => {
                    let a = x.load(RLX, DEV);
                    y.store(1, RLX, DEV);
                    a
                }
                1 => {
                    let b = z.load(RLX, DEV);
                    x.store(b, RLX, DEV);
                    b
                }
                _ => {
                    let c = y.load(RLX, DEV);
                    z.store(c, RLX, DEV);
                    c
                }
            });
            (r[0], r[1], r[2])
        },
        &[((0, 0, 0), 4, NONE), ((0, 0, 1), 2, NONE), ((0, 1, 1), 1, NONE), ((1, 1, 1), 1, NONE)],
        8,
    );
}

/// Three-unit LB through one location written twice (relaxed, device
/// scope, three groups): `a=Rx; Wy2 || b=Ry; Wx1 || c=Ry; Wy1`, outcome
/// (a, b, c, final y). Relaxed atomics at one scope are SC per location
/// (acyclic po-loc | rf | co | fr); a brute-force count of those graphs
/// gives 18, each outcome once: a reads init or `Wx1` (2) x b reads init,
/// `Wy2` or `Wy1` (3) x (c, co of y) = (init, `Wy2` last), (init, `Wy1`
/// last) or (`Wy2`, `Wy1` last) (3; c reading `Wy2` with `Wy1` before it
/// is CoRW). The cycle (1, 1, 2, 1), `a <- Wx1, c <- Wy2, b <- Wy1`, needs
/// a speculation of b that starts from a graph where `a` already reads
/// `Wx1` through a revisit (`speculation_prefix` keeps `a` with `Wx1` as
/// a promise of its own, to be produced again). Found by a differential test against
/// the brute-force count (session 8).
#[test]
fn lb_three_units_shared_location() {
    let mut want = Vec::new();
    for a in [0, 1] {
        for b in [0, 1, 2] {
            for (c, y) in [(0, 1), (0, 2), (2, 1)] {
                want.push(((a, b, c, y), 1, NONE));
            }
        }
    }
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
                0 => {
                    let a = x.load(RLX, DEV);
                    y.store(2, RLX, DEV);
                    a
                }
                1 => {
                    let b = y.load(RLX, DEV);
                    x.store(1, RLX, DEV);
                    b
                }
                _ => {
                    let c = y.load(RLX, DEV);
                    y.store(1, RLX, DEV);
                    c
                }
            });
            (r[0], r[1], r[2], y.load(RLX, DEV))
        },
        &want,
        18,
    );
}

/// Two independent LB pairs (relaxed, device scope, four groups): P0/P1 on
/// x and y, P2/P3 on z and w. Each pair has its 4 outcomes whatever the
/// other does: 16 executions, each outcome once, (1,1,1,1) included (two
/// load-buffering cycles in one execution).
#[test]
fn lb_two_independent_cycles() {
    let mut want = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                for d in 0..2 {
                    want.push(((a, b, c, d), 1, NONE));
                }
            }
        }
    }
    both(
        || {
            let v = [AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0)];
            let r = launch(NdRange::new([4], [1]), |it| {
                // P0 reads v0 and writes v1, P1 reads v1 and writes v0;
                // P2 and P3 the same on v2 and v3.
                let i = it.global_id(0);
                let r = v[i].load(RLX, DEV);
                v[i ^ 1].store(1, RLX, DEV);
                r
            });
            (r[0], r[1], r[2], r[3])
        },
        &want,
        16,
    );
}

/// The specification's load-buffering example
/// (shared/spec/003_e7e76c44798e76aa.txt, DESIGN.md §3 "Load buffering"): x global, y LOCAL, both units in one group,
/// `t = load_acq(y); store_rel(x, t)` || `t = load_acq(x); store_rel(y, 42)`.
/// Derivation: the y-sw is local only and the x-sw global only (neither is
/// SC nor a fence with both flags), and sequenced-before links a unit's
/// local read to its global write in neither ghb nor lhb, so the cycle
/// `Wx rf Rx sb Wy rf Ry sb Wx` is in no hb: x == y == 42 is allowed.
/// Executions: Ry reads init or Wy42 (2), Rx reads init or P0's Wx (2): 4.
/// Outcomes (t0, t1, final x; final y is always 42): t0 = 0 with t1 = 0
/// twice (Rx reads init, or P0's write of 0), t0 = 42 with t1 = 0, and the
/// cycle t0 = t1 = 42 (a real write of 42 exists: P1's `store_rel(y, 42)`).
#[test]
fn lb_spec_example_global_and_local() {
    both(
        || {
            let x = AtomicI32::new(0);
            let r = launch_with_local(
                one_group(),
                |_| AtomicI32::new(0),
                |it, y| {
                    if it.local_id(0) == 0 {
                        let t = y.load(ACQ, DEV);
                        x.store(t, REL, DEV);
                        t
                    } else {
                        let t = x.load(ACQ, DEV);
                        y.store(42, REL, DEV);
                        t
                    }
                },
            );
            (r[0], r[1], x.load(RLX, DEV))
        },
        &[((0, 0, 0), 2, NONE), ((42, 0, 42), 1, NONE), ((42, 42, 42), 1, NONE)],
        4,
    );
}

/// The same with BOTH x and y global (DESIGN.md §3): now `Ry sb Wx` and
/// `Rx sb Wy` are in ghb, the cycle is a ghb cycle (O-HbG): t1 = 42 is
/// impossible together with t0 = 42. 3 of the 4 rf choices remain.
#[test]
fn lb_spec_example_both_global() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    let t = y.load(ACQ, DEV);
                    x.store(t, REL, DEV);
                    t
                } else {
                    let t = x.load(ACQ, DEV);
                    y.store(42, REL, DEV);
                    t
                }
            });
            (r[0], r[1], x.load(RLX, DEV))
        },
        &[((0, 0, 0), 2, NONE), ((42, 0, 42), 1, NONE)],
        3,
    );
}

/// The spec example with `store_rel(y, t)` (x global, y local, one group):
/// no write of 42 exists, so 42 can never be read (values are never
/// invented). Derivation: the same 4 rf choices as above; every write
/// stores a value read earlier, all 0; the cycle (Ry reads P1's Wy, Rx
/// reads P0's Wx) is consistent with the value 0 that those writes store
/// in the executions that produce them. So 4 executions, all (0,0,0).
/// Compare `herd/thinair` (the same program with y shared across two
/// groups, which clmm rejects: 4 executions, states x=y=0 and a symbolic
/// x=y=S for the cycle, which clmm instantiates with the value 0).
#[test]
fn lb_spec_example_no_value_from_thin_air() {
    both(
        || {
            let x = AtomicI32::new(0);
            let r = launch_with_local(
                one_group(),
                |_| AtomicI32::new(0),
                |it, y| {
                    if it.local_id(0) == 0 {
                        let t = y.load(ACQ, DEV);
                        x.store(t, REL, DEV);
                        t
                    } else {
                        let t = x.load(ACQ, DEV);
                        y.store(t, REL, DEV);
                        t
                    }
                },
            );
            (r[0], r[1], x.load(RLX, DEV))
        },
        &[((0, 0, 0), 4, NONE)],
        4,
    );
}

// ---------------------------------------------------------------------
// IRIW, WRC, ISA2, R, S, 2+2W
// ---------------------------------------------------------------------

type Iriw = ((i32, i32), (i32, i32));

fn iriw(order: Order, scope: Scope) -> Iriw {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    let wo = if order == ACQ { REL } else { order };
    let r = launch(NdRange::new([4], [4]), |it| match it.local_id(0) {
        0 => {
            x.store(1, wo, scope);
            (0, 0)
        }
        1 => {
            y.store(1, wo, scope);
            (0, 0)
        }
        2 => {
            let a = x.load(order, scope);
            (a, y.load(order, scope))
        }
        _ => {
            let a = y.load(order, scope);
            (a, x.load(order, scope))
        }
    });
    (r[2], r[3])
}

/// Every IRIW outcome, each once; without ((1,0),(1,0)) when `sc`.
fn iriw_want(sc: bool) -> Vec<Want<Iriw>> {
    let mut v = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                for d in 0..2 {
                    if !(sc && (a, b, c, d) == (1, 0, 1, 0)) {
                        v.push((((a, b), (c, d)), 1, NONE));
                    }
                }
            }
        }
    }
    v
}

/// IRIW, relaxed, one group of 4. Derivation: 4 reads, 2 writes each, no
/// axiom relates them: 16 executions, 16 outcomes (the readers may disagree
/// on the order of the two independent writes).
#[test]
fn iriw_relaxed() {
    both(|| iriw(RLX, DEV), &iriw_want(false), 16);
}

/// IRIW with release stores and acquire loads = `c11/manual/cppmem_iriw_relacq`:
/// 16 executions, the disagreeing outcome ((1,0),(1,0)) included.
#[test]
fn iriw_acquire() {
    both(|| iriw(ACQ, DEV), &iriw_want(false), 16);
}

/// IRIW, seq_cst at device scope = `c11/manual/iriw_sc`,
/// `overhauling/IRIW_sc_dev` and `herd/IRIW`: 15 executions, the
/// disagreement is an scp cycle (rb and sb among SC events).
#[test]
fn iriw_seq_cst_device() {
    both(|| iriw(SC, DEV), &iriw_want(true), 15);
}

/// IRIW, seq_cst at WORK-GROUP scope, one group of 4 =
/// `overhauling/IRIW_sc_wg`. The SC models differ: Spec 16 (work-group
/// scope SC events switch O-Ssimp off), Scoped 15 (all inclusive, the cycle
/// counts). No race (same scope, same group).
#[test]
fn iriw_seq_cst_work_group() {
    per_model(|| iriw(SC, WG), &iriw_want(false), 16, &iriw_want(true), 15);
}

/// WRC (write-to-read causality), three groups: `Wx1 || r0=Rx; Wy1(rel) ||
/// r1=Ry(acq); r2=Rx`, the first read relaxed. Derivation: (1,1,0) is
/// forbidden: `P1.Rx sb Wy1 sw P2.Ry sb P2.Rx` is ghb, and P2.Rx reading
/// init with `init mo Wx1 rf P1.Rx ghb P2.Rx` violates O-CohG. The other 7
/// of the 2^3 rf choices are consistent: 7 executions.
#[test]
fn wrc() {
    let mut want = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                if (a, b, c) != (1, 1, 0) {
                    want.push(((a, b, c), 1, NONE));
                }
            }
        }
    }
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
                0 => {
                    x.store(1, RLX, DEV);
                    (0, 0)
                }
                1 => {
                    let r0 = x.load(RLX, DEV);
                    y.store(1, REL, DEV);
                    (r0, 0)
                }
                _ => {
                    let r1 = y.load(ACQ, DEV);
                    (r1, x.load(RLX, DEV))
                }
            });
            (r[1].0, r[2].0, r[2].1)
        },
        &want,
        7,
    );
}

/// WRC with herd's mixed scopes and fences, groups (P0) (P1 P2) =
/// `herd/WRC`: 7 executions, every state except (1,1,0), all flagged O-Dr
/// (P0's device-scope `Wx1` and the work-group-scope reads of x by P1 and
/// P2 have different scopes, so they are never inclusive, and nothing
/// orders P0 before them: P0's only event is that write, read by those
/// work-group-scope acquires, and `ra_sw` needs inclusive ends).
#[test]
fn wrc_herd_mixed_scopes() {
    let mut want = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                if (a, b, c) != (1, 1, 0) {
                    want.push(((a, b, c), 1, RACE));
                }
            }
        }
    }
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(Topology::new().device([1, 2]), |it| match it.global_id(0) {
                0 => {
                    x.store(1, SC, DEV);
                    (0, 0)
                }
                1 => {
                    let r0 = x.load(ACQ, WG);
                    atomic_work_item_fence(LOCAL, SC, WG);
                    y.store(1, REL, DEV);
                    (r0, 0)
                }
                _ => {
                    let r1 = y.load(ACQ, DEV);
                    atomic_work_item_fence(GLOBAL, REL, DEV);
                    (r1, x.load(ACQ, WG))
                }
            });
            (r[1].0, r[2].0, r[2].1)
        },
        &want,
        7,
    );
}

/// One work-item of the ISA2 shape of `overhauling/ISA2` and
/// `overhauling/ISA2_broken` (y global or local, as the caller allocates
/// it): `*x = 1; store(y, 1, rel, wg)` || `r0 = load(y, acq, wg);
/// if (r0 == 1) store(z, 1, rel, dev)` || `r1 = load(z, acq, dev);
/// r2 = r1 == 1 ? *x : -1`. Returns (r0, 0), or (r1, r2) for the third.
fn isa2_item(it: &WorkItem, x: &GlobalBuffer<i32>, y: &AtomicI32, z: &AtomicI32) -> (i32, i32) {
    match it.global_id(0) {
        0 => {
            x.write(0, 1);
            y.store(1, REL, WG);
            (0, 0)
        }
        1 => {
            let r0 = y.load(ACQ, WG);
            if r0 == 1 {
                z.store(1, REL, DEV);
            }
            (r0, 0)
        }
        _ => {
            let r1 = z.load(ACQ, DEV);
            let r2 = if r1 == 1 { x.read(0) } else { -1 };
            (r1, r2)
        }
    }
}

/// ISA2 with non-atomic data, a work-group-scope release/acquire in group 0
/// and a device-scope one to group 1, groups (P0 P1) (P2) =
/// `overhauling/ISA2`: 3 executions, (0,0,-1), (1,0,-1), (1,1,1), no race
/// (hb is transitive across the two scopes).
#[test]
fn isa2() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let (y, z) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(Topology::new().device([2, 1]), |it| isa2_item(it, &x, &y, &z));
            (r[1].0, r[2].0, r[2].1)
        },
        &[((0, 0, -1), 1, NONE), ((1, 0, -1), 1, NONE), ((1, 1, 1), 1, NONE)],
        3,
    );
}

/// ISA2 with every location non-atomic global, three groups =
/// `herd/qualified/ISA2_global`: nothing synchronises, so every read can
/// only read init (the only visible write, O-NaRfG): 1 execution, racy.
#[test]
fn isa2_plain_global() {
    both(
        || {
            let m = GlobalBuffer::<i32>::new(3); // x, y, z
            let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
                0 => {
                    m.write(0, 1);
                    m.write(1, 1);
                    (0, 0)
                }
                1 => {
                    let r0 = m.read(1);
                    m.write(2, 1);
                    (r0, 0)
                }
                _ => {
                    let r1 = m.read(2);
                    (r1, m.read(0))
                }
            });
            (r[1].0, r[2].0, r[2].1)
        },
        &[((0, 0, 0), 1, RACE)],
        1,
    );
}

/// R, seq_cst (device scope), two groups = `herd/R`: 3 executions, states
/// r0 = 0 and 1. Here the outcome also has the final y (read by the host
/// after the launch). Derivation: co(y) has 2 orders, r0 2 choices; the
/// forbidden one is r0 = 0 with P1's y=2 last: `Wx1 sb Wy1 mo Wy2 sb Rx rb
/// Wx1` is an scp cycle. Outcomes (r0, y): (0,1), (1,1), (1,2).
#[test]
fn r_seq_cst() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, SC, DEV);
                    y.store(1, SC, DEV);
                    0
                } else {
                    y.store(2, SC, DEV);
                    x.load(SC, DEV)
                }
            });
            (r[1], y.load(RLX, DEV))
        },
        &[((0, 1), 1, NONE), ((1, 1), 1, NONE), ((1, 2), 1, NONE)],
        3,
    );
}

/// S with herd's scopes and fences = `herd/S`: 3 executions, states r0 = 0
/// and 1, the O-Dr flag only on r0 = 0. With the final x in the outcome:
/// r0 = 1 means `Wy1(rel, dev) sw Ry(acq, dev)`, so P0's `Wx2 sb Wy1` and
/// `Ry sb Wx1` order the two work-group-scope writes of x (different
/// groups, not inclusive) by ghb: no race, and co must follow ghb: final
/// x = 1. With r0 = 0 they race, and co(x) has 2 orders: final 1 or 2.
#[test]
fn s_herd() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(2, REL, WG);
                    atomic_work_item_fence(LOCAL, SC, WG);
                    y.store(1, REL, DEV);
                    0
                } else {
                    let r0 = y.load(ACQ, DEV);
                    atomic_work_item_fence(GLOBAL, REL, DEV);
                    x.store(1, REL, WG);
                    r0
                }
            });
            (r[1], x.load(RLX, DEV))
        },
        &[((0, 1), 1, RACE), ((0, 2), 1, RACE), ((1, 1), 1, NONE)],
        3,
    );
}

/// 2+2W, seq_cst, two groups = `herd/2+2W`: 3 executions, final (x,y) in
/// {(1,1), (1,2), (2,1)}; (2,2) is the scp cycle `Wx2 sb Wy1 mo Wy2 sb Wx1
/// mo Wx2`.
#[test]
fn two_plus_two_w_seq_cst() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(2, SC, DEV);
                    y.store(1, SC, DEV);
                } else {
                    y.store(2, SC, DEV);
                    x.store(1, SC, DEV);
                }
            });
            (x.load(RLX, DEV), y.load(RLX, DEV))
        },
        &[((1, 1), 1, NONE), ((1, 2), 1, NONE), ((2, 1), 1, NONE)],
        3,
    );
}

/// 2+2W, relaxed. Derivation: 2 orders of co(x) times 2 of co(y), nothing
/// forbids any without SC (coherence only relates co with hb, and hb is
/// just sb here): 4 executions, every final state.
#[test]
fn two_plus_two_w_relaxed() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(2, RLX, DEV);
                    y.store(1, RLX, DEV);
                } else {
                    y.store(2, RLX, DEV);
                    x.store(1, RLX, DEV);
                }
            });
            (x.load(RLX, DEV), y.load(RLX, DEV))
        },
        &all_pairs(&[1, 2], &[1, 2]),
        4,
    );
}

// ---------------------------------------------------------------------
// Coherence
// ---------------------------------------------------------------------

/// CoRR: `Wx1; Wx2 || r0=Rx; r1=Rx`, relaxed. Derivation: co(x) is
/// init, 1, 2 (the other order is a `coh(ghb)` cycle with sb); the two
/// reads may not go backwards in co (`Rx rf^-1 w; mo; rf Rx' sb^-1`...
/// i.e. O-CohG with the sb between the reads): the pairs (a,b) with
/// a <= b in co order: 6 executions.
#[test]
fn corr() {
    both(
        || {
            let x = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    x.store(2, RLX, DEV);
                    (0, 0)
                } else {
                    let a = x.load(RLX, DEV);
                    (a, x.load(RLX, DEV))
                }
            });
            r[1]
        },
        &[((0, 0), 1, NONE), ((0, 1), 1, NONE), ((0, 2), 1, NONE), ((1, 1), 1, NONE), ((1, 2), 1, NONE), ((2, 2), 1, NONE)],
        6,
    );
}

/// CoWR: `Wx1; r0=Rx || Wx2`, relaxed; outcome (r0, final x). Derivation:
/// r0 cannot be 0 (init mo Wx1 sb Rx: O-CohG). co 1<2: r0 = 1 or 2 (final
/// 2); co 2<1: r0 = 2 would read a write co-before P0's own earlier write
/// (O-CohG), so r0 = 1 (final 1). 3 executions.
#[test]
fn cowr() {
    both(
        || {
            let x = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    x.load(RLX, DEV)
                } else {
                    x.store(2, RLX, DEV);
                    0
                }
            });
            (r[0], x.load(RLX, DEV))
        },
        &[((1, 1), 1, NONE), ((1, 2), 1, NONE), ((2, 2), 1, NONE)],
        3,
    );
}

/// CoRW: `r0=Rx; Wx1 || Wx2`, relaxed; outcome (r0, final x). Derivation:
/// r0 = 1 reads a sb-later write (O-Rf). r0 = 0 with either co order
/// (final 1 or 2); r0 = 2 requires Wx2 co-before Wx1 (else `Rx sb Wx1 mo
/// Wx2 rf Rx` is an O-CohG cycle): final 1. 3 executions.
#[test]
fn corw() {
    both(
        || {
            let x = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    let r0 = x.load(RLX, DEV);
                    x.store(1, RLX, DEV);
                    r0
                } else {
                    x.store(2, RLX, DEV);
                    0
                }
            });
            (r[0], x.load(RLX, DEV))
        },
        &[((0, 1), 1, NONE), ((0, 2), 1, NONE), ((2, 1), 1, NONE)],
        3,
    );
}

/// CoWW: `Wx1; Wx2 || Wx3`, relaxed; outcome the final x. Derivation: Wx1
/// is co-before Wx2 (sb, O-CohG); Wx3 goes before, between or after them:
/// 3 executions, final 2 twice and 3 once.
#[test]
fn coww() {
    both(
        || {
            let x = AtomicI32::new(0);
            launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    x.store(2, RLX, DEV);
                } else {
                    x.store(3, RLX, DEV);
                }
            });
            x.load(RLX, DEV)
        },
        &[(2, 2, NONE), (3, 1, NONE)],
        3,
    );
}

/// CoWW on a NON-ATOMIC global location: `x = 1; x = 2 || x = 3`, the
/// host reads x after the launch. clmm has no coherence order on
/// non-atomic locations; an execution is the rf choice of each read. The
/// host read must read a visible write (O-NaRfG: hb-before it and not
/// hb-overwritten): x = 2 (x = 1 is hidden by it, sb) or x = 3. So 2
/// executions, final 2 or 3, both racy (the writes of the two units
/// conflict unordered). The reference counts this program differently
/// (its README, rule 1): every order of the 3 non-atomic writes, 3! = 6
/// executions, with any of 1, 2, 3 as final value (`clmm-litmus --herd`
/// on the litmus form gives exactly that: 6 executions, 3 states; without
/// `--herd` the front end reports 1 execution and x = 3, taking the last
/// write in exploration order as the final value instead of a host read).
///
/// (Both outcomes are returned since the replay of a recorded join waits
/// for its kernel again; before, the host's closure ran past its launch
/// before the work-items and the execution reading 2 had no value: see
/// /work/notes/semantics-findings.md.)
#[test]
fn coww_non_atomic_racy() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.write(0, 1);
                    x.write(0, 2);
                } else {
                    x.write(0, 3);
                }
            });
            x.read(0)
        },
        &[(2, 1, RACE), (3, 1, RACE)],
        2,
    );
}

// ---------------------------------------------------------------------
// Read-modify-writes
// ---------------------------------------------------------------------

/// fetch_add(1) by N units (N = 2, 3; one group each): every RMW reads its
/// immediate co-predecessor (O-Rmw), so an execution is an order of the N
/// RMWs: N! executions, each returning a distinct permutation of 0..N, the
/// final value always N.
#[test]
fn fetch_add_atomicity() {
    // N = 2
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(NdRange::new([2], [1]), |_| c.fetch_add(1, RLX, DEV));
            (r, c.load(RLX, DEV))
        },
        &[((vec![0, 1], 2), 1, NONE), ((vec![1, 0], 2), 1, NONE)],
        2,
    );
    // N = 3
    let perms = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]];
    let want: Vec<Want<(Vec<i32>, i32)>> = perms.iter().map(|p| ((p.to_vec(), 3), 1, NONE)).collect();
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(NdRange::new([3], [1]), |_| c.fetch_add(1, RLX, DEV));
            (r, c.load(RLX, DEV))
        },
        &want,
        6,
    );
}

/// fetch_add(1) racing with a store(5). Derivation: co is init, then the
/// RMW and the store in either order; the RMW reads its immediate
/// predecessor: [init, rmw, W5] returns 0, final 5; [init, W5, rmw] returns
/// 5, final 6. 2 executions.
#[test]
fn fetch_add_against_store() {
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    c.fetch_add(1, RLX, DEV)
                } else {
                    c.store(5, RLX, DEV);
                    -1
                }
            });
            (r[0], c.load(RLX, DEV))
        },
        &[((0, 5), 1, NONE), ((5, 6), 1, NONE)],
        2,
    );
}

/// Strong compare-exchange 0 -> id+1 by two units. Derivation: the first
/// in co reads init and succeeds; the second cannot read init as an RMW
/// (O-Rmw) and a strong CAS that reads 0 must succeed, so it reads the
/// first one's write and fails with that value. 2 executions.
#[test]
fn cas_strong() {
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                let me = it.global_id(0) as i32 + 1;
                c.compare_exchange(0, me, ACQ, RLX, DEV)
            });
            (r[0], r[1], c.load(RLX, DEV))
        },
        &[((Ok(0), Err(1), 1), 1, NONE), ((Err(2), Ok(0), 2), 1, NONE)],
        2,
    );
}

/// Weak compare-exchange 0 -> id+1 by two units; a weak CAS that reads the
/// expected value may fail spuriously (then it is a plain read). Derivation:
/// both fail spuriously reading init (final 0); one succeeds and the other
/// fails, reading either the success's write (a real failure) or init (a
/// spurious failure; a failed CAS is a read, not an RMW, so reading init is
/// coherent): 2 per winner. 5 executions, one per outcome (no reference
/// test has a weak CAS).
///
/// clmm explores 6: the graph of (Err(2), Ok(0), 2) twice (a duplicate,
/// `CLMM_CHECK_UNIQUE=1` counts it), reached once by revisiting work-item
/// 0's successful CAS and once by revisiting its spurious failure. See
/// /work/notes/semantics-findings.md.
#[test]
fn cas_weak_spurious() {
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(two_groups(), |it| {
                let me = it.global_id(0) as i32 + 1;
                c.compare_exchange_weak(0, me, ACQ, RLX, DEV)
            });
            (r[0], r[1], c.load(RLX, DEV))
        },
        &[
            ((Err(0), Err(0), 0), 1, NONE),
            ((Ok(0), Err(0), 1), 1, NONE),
            ((Ok(0), Err(1), 1), 1, NONE),
            ((Err(0), Ok(0), 2), 1, NONE),
            ((Err(2), Ok(0), 2), 1, NONE),
        ],
        5,
    );
}

/// exchange(id+1) by two units. Derivation: the two RMWs in either co
/// order, each reading its immediate predecessor: 2 executions.
#[test]
fn exchange() {
    both(
        || {
            let c = AtomicI32::new(0);
            let r = launch(two_groups(), |it| c.exchange(it.global_id(0) as i32 + 1, RLX, DEV));
            (r[0], r[1], c.load(RLX, DEV))
        },
        &[((0, 1, 2), 1, NONE), ((2, 0, 1), 1, NONE)],
        2,
    );
}

/// AtomicFlag as a try-lock: `if !test_and_set(acq) { data = id+1;
/// clear(rel) }` in two units. Derivation: the first test_and_set in co
/// reads init (false) and enters. The second RMW reads its immediate
/// co-predecessor: the first's set (true: it stays out; the clear is then
/// co-last) or the first's clear (false: it enters too, and `clear(rel) rf
/// test_and_set(acq)` orders the two data writes, no race, final data =
/// the second's value). 2 executions per first unit: 4. (The reference
/// would count 6: in the two executions where both enter, the two
/// non-atomic writes of `data` get both of their coherence orders, rule 1
/// of its README, although hb orders them.)
#[test]
fn atomic_flag_test_and_set() {
    both(
        || {
            let flag = AtomicFlag::new();
            let data = GlobalBuffer::<i32>::new(1);
            let r = launch(two_groups(), |it| {
                if !flag.test_and_set(ACQ, DEV) {
                    data.write(0, it.global_id(0) as i32 + 1);
                    flag.clear(REL, DEV);
                    true
                } else {
                    false
                }
            });
            (r[0], r[1], data.read(0))
        },
        &[((true, false, 1), 1, NONE), ((true, true, 2), 1, NONE), ((false, true, 2), 1, NONE), ((true, true, 1), 1, NONE)],
        4,
    );
}

// ---------------------------------------------------------------------
// Barriers and local memory
// ---------------------------------------------------------------------

/// MP through local memory with `barrier(CLK_LOCAL_MEM_FENCE)` inside one
/// group. Derivation: the barrier's entry fence of item 0 synchronises with
/// item 1's exit fence in the local region (`bar_sw(L)`), so the write is
/// lhb-before the read and hides init: the only visible write is 1 (O-NaRfL).
/// 1 execution, no race.
#[test]
fn local_mp_with_local_barrier() {
    both(
        || {
            let r = launch_with_local(
                one_group(),
                |_| LocalBuffer::<i32>::new(1),
                |it, buf| {
                    if it.local_id(0) == 0 {
                        buf.write(0, 1);
                    }
                    it.barrier(LOCAL);
                    if it.local_id(0) == 1 {
                        buf.read(0)
                    } else {
                        -1
                    }
                },
            );
            r[1]
        },
        &[(1, 1, NONE)],
        1,
    );
}

/// The same with `barrier(CLK_GLOBAL_MEM_FENCE)`: the barrier synchronises
/// only in the global region; the local write is not lhb-before the read,
/// init is the only visible write: r = 0, and the two accesses race.
/// 1 execution.
#[test]
fn local_mp_with_global_barrier_races() {
    both(
        || {
            let r = launch_with_local(
                one_group(),
                |_| LocalBuffer::<i32>::new(1),
                |it, buf| {
                    if it.local_id(0) == 0 {
                        buf.write(0, 1);
                    }
                    it.barrier(GLOBAL);
                    if it.local_id(0) == 1 {
                        buf.read(0)
                    } else {
                        -1
                    }
                },
            );
            r[1]
        },
        &[(0, 1, RACE)],
        1,
    );
}

/// Two barrier phases with different flags = `clmm/bar_two_phases`: the
/// LOCAL barrier orders local x (r1 = 1) but not global y (r0 = 0, race).
/// 1 execution, flagged O-Dr.
#[test]
fn barrier_two_phases() {
    both(
        || {
            let y = GlobalBuffer::<i32>::new(1);
            let r = launch_with_local(
                one_group(),
                |_| LocalBuffer::<i32>::new(1),
                |it, x| {
                    if it.local_id(0) == 0 {
                        x.write(0, 1);
                    } else {
                        y.write(0, 2);
                    }
                    it.barrier(LOCAL);
                    let r = if it.local_id(0) == 0 { y.read(0) } else { x.read(0) };
                    it.barrier(GLOBAL);
                    r
                },
            );
            (r[0], r[1])
        },
        &[((0, 1), 1, RACE)],
        1,
    );
}

// ---------------------------------------------------------------------
// Scopes
// ---------------------------------------------------------------------

/// MP with sub-group scope: one group of two items, in ONE sub-group
/// (size 2) or in TWO (size 1). clmm makes sub-group scope inclusive for
/// two items of the same sub-group (specification §3.3.5; a deviation from
/// the `.cat`, which never makes it inclusive: see tests/semantics.rs).
/// Same sub-group: as MP_ra_dev, (0,-1) and (1,1), no race, 2 executions.
/// Different sub-groups: not inclusive: the flag accesses race in both
/// executions, and the data read sees only init: (0,-1) and (1,0).
#[test]
fn mp_sub_group_scope() {
    for (sub_group_size, want) in [
        (2, [((0, -1), 1, NONE), ((1, 1), 1, NONE)]),
        (1, [((0, -1), 1, RACE), ((1, 0), 1, RACE)]),
    ] {
        both(mp(one_group().with_sub_group_size(sub_group_size), REL, ACQ, SG), &want, 2);
    }
}

/// Work-item scope never synchronises between units (`[W \ s_wi]` in
/// `ra_sw`, `~wi` in `incl`): MP with release/acquire at work-item scope in
/// one group races like the relaxed version, and the data read sees only
/// init. 2 executions.
#[test]
fn mp_work_item_scope() {
    both(mp(one_group(), REL, ACQ, WI), &[((0, -1), 1, RACE), ((1, 0), 1, RACE)], 2);
}

/// MP across TWO DEVICES (one item each): with `memory_scope_all_svm_devices`
/// the release/acquire pair is inclusive (`s_all^2`): (0,-1), (1,1), no
/// race, 2 executions (the same on fine-grained SVM: `mp_fga_all` below,
/// `clmm/MP_fga_all`). With device scope the two ends are on
/// different devices, not inclusive: the flag races in both executions and
/// the data read sees only init: (0,-1), (1,0).
#[test]
fn mp_two_devices_all_svm_vs_device() {
    for (scope, want) in [
        (ALL, [((0, -1), 1, NONE), ((1, 1), 1, NONE)]),
        (DEV, [((0, -1), 1, RACE), ((1, 0), 1, RACE)]),
    ] {
        both(
            || {
                let x = GlobalBuffer::<i32>::new(1);
                let y = AtomicI32::new(0);
                let r = launch(Topology::new().device([1]).device([1]), |it| {
                    if it.device() == 0 {
                        x.write(0, 1);
                        y.store(1, REL, scope);
                        (0, 0)
                    } else {
                        let r0 = y.load(ACQ, scope);
                        let r1 = if r0 == 1 { x.read(0) } else { -1 };
                        (r0, r1)
                    }
                });
                r[1]
            },
            &want,
            2,
        );
    }
}

/// `clmm/MP_fga_all`: MP across TWO DEVICES (`(device (work_group P0))
/// (device (work_group P1))`) on fine-grained SVM with atomics (`global_fga`:
/// `SvmBuffer::fine` for the data x, `AtomicI32::new_svm` for the flag f),
/// release/acquire at `memory_scope_all_svm_devices`. `r1` starts at 9 as
/// in the litmus test. The pair is inclusive across devices (`s_all^2`), so
/// it synchronises: (0,9) and (1,1), never (1,0); no race, no divergence
/// (`flags: {}`); 2 executions under both models, as in
/// `MP_fga_all.expect.json` (x is written once, so the reference's k!
/// coherence orders of a non-atomic location add nothing).
#[test]
fn mp_fga_all() {
    both(
        || {
            let x = SvmBuffer::<i32>::fine(1);
            let f = AtomicI32::new_svm(0);
            let r = launch(Topology::new().device([1]).device([1]), |it| {
                if it.device() == 0 {
                    x.write(0, 1);
                    f.store(1, REL, ALL);
                    (0, 0)
                } else {
                    let mut r1 = 9;
                    let r0 = f.load(ACQ, ALL);
                    if r0 == 1 {
                        r1 = x.read(0);
                    }
                    (r0, r1)
                }
            });
            r[1]
        },
        &[((0, 9), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// `overhauling/example10`, two devices of one group of two items: seq_cst
/// device-scope accesses to x (device 0) and y (device 1), published across
/// the devices by all-svm-devices release/acquire on z1, z2. The SC models
/// differ: Spec: every SC event is device scope on ordinary memory
/// (S_cond2), the SC axiom covers pairs on different devices too, and
/// (0,0) is an scp cycle: 8 executions. Scoped: SC order only between
/// inclusive events, the two devices' SC events are not, (0,0) is allowed:
/// 9 executions. Each P1/P3 result is -1 (flag not seen), 0 or 1.
#[test]
fn example10_two_devices_scoped_sc() {
    let all: Vec<Want<(i32, i32)>> = all_pairs(&[-1, 0, 1], &[-1, 0, 1]);
    let spec: Vec<Want<(i32, i32)>> = all.iter().cloned().filter(|w| w.0 != (0, 0)).collect();
    per_model(
        || {
            let (x, y, z1, z2) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(Topology::new().device([2]).device([2]), |it| match (it.device(), it.local_id(0)) {
                (0, 0) => {
                    x.store(1, SC, DEV);
                    z1.store(1, REL, ALL);
                    -2
                }
                (0, _) => {
                    if z2.load(ACQ, ALL) == 1 {
                        x.load(SC, DEV)
                    } else {
                        -1
                    }
                }
                (_, 0) => {
                    y.store(1, SC, DEV);
                    z2.store(1, REL, ALL);
                    -2
                }
                _ => {
                    if z1.load(ACQ, ALL) == 1 {
                        y.load(SC, DEV)
                    } else {
                        -1
                    }
                }
            });
            (r[1], r[3])
        },
        &spec,
        8,
        &all,
        9,
    );
}

// ---------------------------------------------------------------------
// More SC fences and scoped SC
// ---------------------------------------------------------------------

/// SB with seq_cst fences whose flags are LOCAL only, on global atomics.
/// Derivation: `scp = Fsb?; (rb|mo|ghb|lhb); sbF?` uses plain sb (`Fsb =
/// [F]; sb`), so an SC fence stands for all of its unit's accesses whatever
/// its flags: the (0,0) cycle `F0 sb Ry rb Wy1 sb F1 sb Rx rb Wx1 sb F0` is
/// the same as with GLOBAL fences; device scope keeps S_cond2 (Spec) and
/// inclusion (Scoped): 3 executions.
#[test]
fn sb_seq_cst_fences_local_flags() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    atomic_work_item_fence(LOCAL, SC, DEV);
                    y.load(RLX, DEV)
                } else {
                    y.store(1, RLX, DEV);
                    atomic_work_item_fence(LOCAL, SC, DEV);
                    x.load(RLX, DEV)
                }
            });
            (r[0], r[1])
        },
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// SB with seq_cst fences at WORK-GROUP scope, one group, relaxed
/// device-scope accesses. The SC models differ: Spec: an SC fence of scope
/// work_group fails S_cond2 (and S_cond1), O-Ssimp is off: 4 executions.
/// Scoped: the fences are inclusive (same scope, same group), the (0,0)
/// cycle between them counts: 3 executions.
#[test]
fn sb_seq_cst_fences_work_group() {
    per_model(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    atomic_work_item_fence(GLOBAL, SC, WG);
                    y.load(RLX, DEV)
                } else {
                    y.store(1, RLX, DEV);
                    atomic_work_item_fence(GLOBAL, SC, WG);
                    x.load(RLX, DEV)
                }
            });
            (r[0], r[1])
        },
        &all_pairs(&[0, 1], &[0, 1]),
        4,
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// SB with a seq_cst fence on one side and seq_cst accesses on the other:
/// `Wx1(rlx); F(sc); r0 = Ry(rlx)` || `Wy1(sc); r1 = Rx(sc)`, device scope.
/// Derivation: with (0,0), `F0 sb Ry rb Wy1` gives F0 scp Wy1 (`Fsb?;rb`),
/// `Wy1 sb Rx` (both global: ghb) gives Wy1 scp Rx, and `Rx rb Wx1 sb F0`
/// gives Rx scp F0 (`rb;sbF`): a cycle among SC events, all device scope:
/// forbidden under both models. 3 executions.
#[test]
fn sb_seq_cst_fence_against_seq_cst_accesses() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, RLX, DEV);
                    atomic_work_item_fence(GLOBAL, SC, DEV);
                    y.load(RLX, DEV)
                } else {
                    y.store(1, SC, DEV);
                    x.load(SC, DEV)
                }
            });
            (r[0], r[1])
        },
        &[((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)],
        3,
    );
}

/// SB seq_cst at device scope, where P1 then performs a seq_cst
/// WORK-GROUP-scope load of a third location z, either when r1 == 0 or when
/// r1 == 1. `opencl.cat`'s condition is evaluated per execution (DESIGN.md
/// §3 "SC"; it is not prefix-closed). Derivation, Spec: with the branch on
/// r1 == 0, the (0,0) execution contains a work-group-scope SC event, so
/// S_cond2 fails and O-Ssimp does not apply: (0,0) is allowed, 4
/// executions. With the branch on r1 == 1, the (0,0) execution has only
/// device-scope SC events: forbidden, 3 executions. Scoped: the z load has
/// no inclusive partner (nothing else is work-group scope) and the x/y
/// cycle is inclusive: 3 executions either way. z reads init (1 choice).
#[test]
fn sb_seq_cst_condition_switched_off_in_a_branch() {
    for branch_on in [0, 1] {
        let prog = || {
            let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, SC, DEV);
                    y.load(SC, DEV)
                } else {
                    y.store(1, SC, DEV);
                    let r1 = x.load(SC, DEV);
                    if r1 == branch_on {
                        z.load(SC, WG);
                    }
                    r1
                }
            });
            (r[0], r[1])
        };
        let three = [((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)];
        if branch_on == 0 {
            per_model(prog, &all_pairs(&[0, 1], &[0, 1]), 4, &three, 3);
        } else {
            both(prog, &three, 3);
        }
    }
}

/// SB with herd's mixed scopes and fences, groups (P0) (P1) = `herd/SB1`:
/// 4 executions, all 4 states, all O-Dr (x is written at work-group scope
/// by P0 and read at work-group scope by P1 in another group: never
/// inclusive, never ordered). The SC fence is work-group scope: Spec has no
/// SC axiom; in Scoped it has no inclusive partner.
#[test]
fn sb_herd_mixed_scopes() {
    let want: Vec<Want<(i32, i32)>> = all_pairs(&[0, 1], &[0, 1]).into_iter().map(|(v, n, _)| (v, n, RACE)).collect();
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, REL, WG);
                    atomic_work_item_fence(LOCAL, SC, WG);
                    y.load(ACQ, DEV)
                } else {
                    y.store(1, REL, DEV);
                    atomic_work_item_fence(GLOBAL, REL, DEV);
                    x.load(ACQ, WG)
                }
            });
            (r[0], r[1])
        },
        &want,
        4,
    );
}

/// RWC with herd's mixed scopes and fences, groups (P0) (P1 P2) =
/// `herd/RWC`: 8 executions, all 8 states, all O-Dr (P0's device-scope
/// write of x against the work-group-scope reads of x).
#[test]
fn rwc_herd_mixed_scopes() {
    let mut want = Vec::new();
    for a in 0..2 {
        for b in 0..2 {
            for c in 0..2 {
                want.push(((a, b, c), 1, RACE));
            }
        }
    }
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(Topology::new().device([1, 2]), |it| match it.global_id(0) {
                0 => {
                    x.store(1, SC, DEV);
                    (0, 0)
                }
                1 => {
                    let r0 = x.load(ACQ, WG);
                    atomic_work_item_fence(LOCAL, SC, WG);
                    (r0, y.load(ACQ, DEV))
                }
                _ => {
                    y.store(1, REL, DEV);
                    atomic_work_item_fence(GLOBAL, REL, DEV);
                    (x.load(ACQ, WG), 0)
                }
            });
            (r[1].0, r[1].1, r[2].0)
        },
        &want,
        8,
    );
}

// ---------------------------------------------------------------------
// Release sequences (C11's `rs`)
// ---------------------------------------------------------------------

/// Release sequence of one unit = `c11/auto/rseq_weak2`: `y = 1;
/// store(x, 1, release); store(x, 3, relaxed)` || `r0 = load(x, acquire);
/// if (r0 == 3) r1 = y`. The relaxed store is in the release sequence of
/// the release (same unit, `rs' = wi | ...`), so reading 3 synchronises:
/// r1 = 1. co(x) is fixed by sb; r0 reads one of 3 writes: 3 executions,
/// no race. Outcome (r0, r1).
#[test]
fn release_sequence_same_unit() {
    both(
        || {
            let y = GlobalBuffer::<i32>::new(1);
            let x = AtomicI32::new(0);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    y.write(0, 1);
                    x.store(1, REL, DEV);
                    x.store(3, RLX, DEV);
                    (0, 0)
                } else {
                    let r0 = x.load(ACQ, DEV);
                    (r0, if r0 == 3 { y.read(0) } else { -1 })
                }
            });
            r[1]
        },
        &[((0, -1), 1, NONE), ((1, -1), 1, NONE), ((3, 1), 1, NONE)],
        3,
    );
}

/// A release sequence cut by another unit's write = `c11/auto/rseq_weak`
/// (12 executions, one O-Dr state). P0: `store(x, 2, relaxed)`; P1: `y = 1;
/// store(x, 1, release); store(x, 3, relaxed)`; P2: `r0 = load(x, acquire);
/// if (r0 == 3) r1 = y`. Derivation: co(x) puts W2 before W1, between W1
/// and W3, or after W3 (3 orders; W1 < W3 by sb); r0 reads one of 4 writes:
/// 12 executions. When W2 is between W1 and W3, the release sequence of W1
/// is cut (`rs = mo & rs' & ~((mo & ~rs'); mo)`: W2 is another unit's
/// non-RMW write), reading 3 does not synchronise, and r1 = 0 (init is the
/// only visible write) with a race. Outcome (r0, r1, final x): final x is 2
/// when W2 is co-last, else 3.
#[test]
fn release_sequence_cut_by_other_unit() {
    both(
        || {
            let y = GlobalBuffer::<i32>::new(1);
            let x = AtomicI32::new(0);
            let r = launch(NdRange::new([3], [3]), |it| match it.local_id(0) {
                0 => {
                    x.store(2, RLX, DEV);
                    (0, 0)
                }
                1 => {
                    y.write(0, 1);
                    x.store(1, REL, DEV);
                    x.store(3, RLX, DEV);
                    (0, 0)
                }
                _ => {
                    let r0 = x.load(ACQ, DEV);
                    (r0, if r0 == 3 { y.read(0) } else { -1 })
                }
            });
            (r[2].0, r[2].1, x.load(RLX, DEV))
        },
        &[
            ((0, -1, 2), 1, NONE),
            ((0, -1, 3), 2, NONE),
            ((1, -1, 2), 1, NONE),
            ((1, -1, 3), 2, NONE),
            ((2, -1, 2), 1, NONE),
            ((2, -1, 3), 2, NONE),
            ((3, 1, 2), 1, NONE),  // co W1 W3 W2
            ((3, 1, 3), 1, NONE),  // co W2 W1 W3
            ((3, 0, 3), 1, RACE), // co W1 W2 W3: the sequence is cut
        ],
        12,
    );
}

/// A release sequence continued by another unit's RMW: P0: `y = 1;
/// store(x, 1, release)`; P1: `fetch_add(x, 10, relaxed)`; P2: `r0 =
/// load(x, acquire); if (r0 != 0) r1 = y`. Derivation: co(x) is [RMW, W1]
/// (the RMW read init and wrote 10) or [W1, RMW] (it read 1 and wrote 11):
/// 2 orders, r0 reads one of 3 writes: 6 executions. Reading W1
/// synchronises; reading 11 too (an RMW is in every release sequence it
/// continues, `rs' = ... | (unv; [R & W])`); reading 10 does not (that RMW is
/// co-before the head): r1 = 0 with a race. Outcome (r0, r1, final x).
#[test]
fn release_sequence_continued_by_rmw() {
    both(
        || {
            let y = GlobalBuffer::<i32>::new(1);
            let x = AtomicI32::new(0);
            let r = launch(NdRange::new([3], [3]), |it| match it.local_id(0) {
                0 => {
                    y.write(0, 1);
                    x.store(1, REL, DEV);
                    (0, 0)
                }
                1 => {
                    x.fetch_add(10, RLX, DEV);
                    (0, 0)
                }
                _ => {
                    let r0 = x.load(ACQ, DEV);
                    (r0, if r0 != 0 { y.read(0) } else { -1 })
                }
            });
            (r[2].0, r[2].1, x.load(RLX, DEV))
        },
        &[
            ((0, -1, 1), 1, NONE),
            ((0, -1, 11), 1, NONE),
            ((1, 1, 1), 1, NONE),
            ((1, 1, 11), 1, NONE),
            ((10, 0, 1), 1, RACE),
            ((11, 1, 11), 1, NONE),
        ],
        6,
    );
}

// ---------------------------------------------------------------------
// More barriers
// ---------------------------------------------------------------------

/// One barrier call whose flags differ between the two work-items =
/// `clmm/bar_flags_mismatch`: item 0 `x = 1; barrier(LOCAL)`, item 1
/// `barrier(GLOBAL); r0 = x` (x local). The entry fences share no region,
/// so neither synchronises with the other: barrier divergence (`bd`), the
/// local write is unordered with the read: a race, and r0 = 0 (init is the
/// only visible write). 1 execution, both flags (as the reference).
#[test]
fn barrier_flags_mismatch() {
    both(
        || {
            let r = launch_with_local(
                one_group(),
                |_| LocalBuffer::<i32>::new(1),
                |it, x| {
                    let first = it.local_id(0) == 0;
                    if first {
                        x.write(0, 1);
                    }
                    it.barrier(if first { LOCAL } else { GLOBAL });
                    if first {
                        -1
                    } else {
                        x.read(0)
                    }
                },
            );
            r[1]
        },
        &[(0, 1, &["barrier divergence", "data race"])],
        1,
    );
}

/// MP through global memory with `sub_group_barrier(GLOBAL)` between two
/// items of one sub-group: the entry fence synchronises with the other
/// item's exit fence in the sub-group (spec 004, sub-group barrier rules):
/// the write hides init, r = 1, 1 execution, no race.
#[test]
fn sub_group_barrier_orders_global() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let r = launch(one_group().with_sub_group_size(2), |it| {
                if it.local_id(0) == 0 {
                    x.write(0, 1);
                }
                it.sub_group_barrier(GLOBAL);
                if it.local_id(0) == 1 {
                    x.read(0)
                } else {
                    -1
                }
            });
            r[1]
        },
        &[(1, 1, NONE)],
        1,
    );
}

// ---------------------------------------------------------------------
// Named litmus files
// ---------------------------------------------------------------------
//
// One test per file of `/work/shared/litmus` that the shapes above do not
// already write (those name their file in their comment: `herd/IRIW`,
// `herd/2+2W`, `herd/WRC`, `herd/R`, `herd/S`, `herd/RWC`,
// `herd/qualified/ISA2_global`, `overhauling/MP_ra_wg`, `MP_ra_dev`,
// `MP_sc_dev`, `ISA2`, `IRIW_sc_wg`, `IRIW_sc_dev`, `clmm/SB_sc_local_wg`,
// `clmm/bar_flags_mismatch`, `clmm/bar_two_phases`). Each is named after
// its file; the work-items are laid out as the test's `scopeTree`, the
// outcome is the tuple of what its final condition names (in the
// condition's order), and the expectation is the `expect.json` beside it,
// read through `shared/litmus/README.md`.

/// Like [`check`] for a program whose every execution fails before the
/// model closure returns (the launch does not return): no outcome, exactly
/// `executions` complete executions, and exactly the failure kinds `kinds`.
#[track_caller]
fn check_no_value<T, F>(sc: ScModel, f: &F, kinds: &[&str], executions: u64)
where
    T: Ord + Send + Clone + Debug,
    F: Fn() -> T + Sync,
{
    let ex = Builder::new().sc_model(sc).explore(f);
    assert!(ex.outcomes.is_empty(), "no execution returns a value under {sc:?}: {:?}", ex.outcomes.keys().collect::<Vec<_>>());
    let got: std::collections::BTreeSet<String> = ex.failures.iter().map(|f| f.kind.to_string()).collect();
    let want: std::collections::BTreeSet<String> = kinds.iter().map(|s| s.to_string()).collect();
    assert_eq!(got, want, "failure kinds under {sc:?}");
    assert_eq!(ex.stats.complete, executions, "complete executions under {sc:?}");
    assert!(!ex.stats.stopped_early);
}

/// `herd/MP`, one group of two: `*x = 1; atomic_work_item_fence(GLOBAL,
/// seq_cst, all_svm_devices); store(y, 1, relaxed)` || `r0 = load(y,
/// relaxed); r1 = *x` (unconditional). The acquire side has no fence and a
/// relaxed load, so nothing synchronises: the read of x races with the
/// write in every execution and sees only init (O-NaRfG). expect.json: 2
/// executions, states (0,0) and (1,0), both O-Dr. clmm: the same, 2
/// complete executions (= the expect.json `executions`).
#[test]
fn herd_mp() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let y = AtomicI32::new(0);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.write(0, 1);
                    atomic_work_item_fence(GLOBAL, SC, ALL);
                    y.store(1, RLX, DEV);
                    (0, 0)
                } else {
                    let r0 = y.load(RLX, DEV);
                    (r0, x.read(0))
                }
            });
            r[1]
        },
        &[((0, 0), 1, RACE), ((1, 0), 1, RACE)],
        2,
    );
}

/// `herd/3.2W`, groups (P0) (P1 P2): `x=2 (sc); y=1 (sc)` || `y=2 (rel,
/// wg); F(LOCAL, sc, wg); z=1 (rel)` || `z=2 (rel); F(GLOBAL, rel, dev);
/// x=1 (rel, wg)`; the outcome is the final (x, y, z) read by the host.
/// P0's device-scope writes and the work-group-scope writes of y (P1) and x
/// (P2) are in different groups with different scopes: never inclusive, and
/// no release is read by anybody, so nothing orders them: every execution
/// races. Each location has two writes, co chooses freely (the only SC
/// events, P0's and P1's wg-scope fence, form no cycle): 2^3 = 8.
/// expect.json: 8 executions, all 8 states, all O-Dr. clmm: 8 complete
/// executions (= the expect.json `executions`).
#[test]
fn herd_3_2w() {
    let mut want = Vec::new();
    for x in 1..3 {
        for y in 1..3 {
            for z in 1..3 {
                want.push(((x, y, z), 1, RACE));
            }
        }
    }
    both(
        || {
            let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
            launch(Topology::new().device([1, 2]), |it| match it.global_id(0) {
                0 => {
                    x.store(2, SC, DEV);
                    y.store(1, SC, DEV);
                }
                1 => {
                    y.store(2, REL, WG);
                    atomic_work_item_fence(LOCAL, SC, WG);
                    z.store(1, REL, DEV);
                }
                _ => {
                    z.store(2, REL, DEV);
                    atomic_work_item_fence(GLOBAL, REL, DEV);
                    x.store(1, REL, WG);
                }
            });
            (x.load(RLX, DEV), y.load(RLX, DEV), z.load(RLX, DEV))
        },
        &want,
        8,
    );
}

/// `herd/CT_wsq1` (work-stealing queue push against steal), one group of
/// two: P0 `tmp = load(tail, acq); *d = 1; store(tail, 1, rel)`, P1 `load(head,
/// acq); localTail = load(tail, acq); if (localTail == 1) *val = *d`;
/// outcome (localTail, final val). Reading tail = 1 synchronises, so the
/// read of d sees 1 (the only visible write); head and P0's tail read have
/// only init. expect.json: 2 executions, (0,0) and (1,1), no flag. clmm: 2
/// complete executions (= the expect.json `executions`).
#[test]
fn herd_ct_wsq1() {
    both(
        || {
            let (tail, head) = (AtomicI32::new(0), AtomicI32::new(0));
            let d = GlobalBuffer::<i32>::new(1);
            let val = GlobalBuffer::<i32>::new(1);
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    let _tmp_tail = tail.load(ACQ, DEV);
                    d.write(0, 1);
                    tail.store(1, REL, DEV);
                    0
                } else {
                    let _old_head = head.load(ACQ, DEV);
                    let local_tail = tail.load(ACQ, DEV);
                    if local_tail == 1 {
                        val.write(0, d.read(0));
                    }
                    local_tail
                }
            });
            (r[1], val.read(0))
        },
        &[((0, 0), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// `herd/barrier_example`, one group of two: `store(x, 1, rel); B1:
/// barrier(GLOBAL); x1 = load(y, acq)` || `store(y, 1, rel); B1:
/// barrier(GLOBAL); y1 = load(x, acq)`. The test declares x and y `global
/// int*` and uses atomic builtins on them; the reference treats them as
/// non-atomic (README rule 2), the Rust API has atomics for atomic
/// builtins: here x and y are `AtomicI32`. Either way the barrier orders
/// each store before the other work-item's load (`bar_sw` in the global
/// region), which then cannot read init (O-CohG; for the reference's
/// non-atomic reading, init is not visible): x1 = y1 = 1. The expect.json
/// condition names only the pointer registers (`0:x = x`), so its one state
/// says nothing about the values; clmm-litmus with the condition on x1, y1
/// gives the single state x1 = y1 = 1 in both modes. expect.json: 1
/// execution, no flag. clmm: 1 complete execution (= the expect.json
/// `executions`).
#[test]
fn herd_barrier_example() {
    both(
        || {
            let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
            let r = launch(one_group(), |it| {
                if it.local_id(0) == 0 {
                    x.store(1, REL, DEV);
                    it.barrier_with_id("B1", GLOBAL);
                    y.load(ACQ, DEV)
                } else {
                    y.store(1, REL, DEV);
                    it.barrier_with_id("B1", GLOBAL);
                    x.load(ACQ, DEV)
                }
            });
            (r[0], r[1])
        },
        &[((1, 1), 1, NONE)],
        1,
    );
}

/// `herd/global_barrier`: a global barrier between three groups of two,
/// (P0 P1) and (P4 P5) the "slaves", (P2 P3) the "master". P0: `B1;
/// store(f0, 1, rel); F(LOCAL, rlx, wg); r2 = load(f0, acq); B3`; P1:
/// `*tyler = 1; B1; F; B3`; P2: `F; r0 = load(f0, acq); B2; store(f0, 0,
/// rel)`; P3: the same on f1 with r1; P4: as P0 on f1 (labels B11, B31)
/// with r4; P5: `B11; F; B31; r5 = *tyler`. Barriers are
/// `barrier(CLK_GLOBAL_MEM_FENCE)` matched by label. Outcome (r0, r1, r2,
/// r4) in the condition's order (r5 is not in it).
///
/// f0 has the writes init, P0's 1 and P2's 0; f1 likewise. tyler is
/// written by P1 (group 0) and read by P5 (group 2); the only chain
/// between them is `P1 B1 P0 f0=1 -> r0 = 1 (P2) B2 P3 f1=0 -> r4 = 0
/// (P4) B31 P5`, so the read races unless r0 = 1 and r4 = 0 (then P4's
/// read of f1 = 0 is P3's release: P4 wrote 1 before it, init is hidden).
///
/// Executions: f0 and f1 are independent (tyler's read has only one
/// visible write either way). For f0: r0 (before P2's write) reads init or
/// P0's 1; r2 (after P0's write) reads 1 or P2's 0; co orders the two
/// writes. With r0 = 1 the release/acquire makes P0's write hb-before P2's
/// (co fixed): r2 = 1 or 0, one each. With r0 = 0 both co orders remain,
/// and r2 = 0 needs P2's write co-last: r2 = 1 twice, r2 = 0 once. So 5
/// for (r0, r2), 5 likewise for (r1, r4): 25, each state's count the
/// product of its two halves.
///
/// expect.json: 25 executions, all 16 states, O-Dr on the 12 states
/// without r0 = 1 /\ r4 = 0. clmm: the same states and flags, 25 complete
/// executions (= the expect.json `executions`).
#[test]
fn herd_global_barrier() {
    // Executions of one flag's half: (read before the other's write, read
    // after the own write).
    let half = |before: i32, after: i32| if (before, after) == (0, 1) { 2 } else { 1 };
    let mut want = Vec::new();
    for r0 in 0..2 {
        for r1 in 0..2 {
            for r2 in 0..2 {
                for r4 in 0..2 {
                    let kinds = if r0 == 1 && r4 == 0 { NONE } else { RACE };
                    want.push(((r0, r1, r2, r4), half(r0, r2) * half(r1, r4), kinds));
                }
            }
        }
    }
    both(
        || {
            let (f0, f1) = (AtomicI32::new(0), AtomicI32::new(0));
            let tyler = GlobalBuffer::<i32>::new(1);
            let r = launch(NdRange::new([6], [2]), |it| match it.global_id(0) {
                0 => {
                    it.barrier_with_id("B1", GLOBAL);
                    f0.store(1, REL, DEV);
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    let r2 = f0.load(ACQ, DEV);
                    it.barrier_with_id("B3", GLOBAL);
                    r2
                }
                1 => {
                    tyler.write(0, 1);
                    it.barrier_with_id("B1", GLOBAL);
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    it.barrier_with_id("B3", GLOBAL);
                    -1
                }
                2 => {
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    let r0 = f0.load(ACQ, DEV);
                    it.barrier_with_id("B2", GLOBAL);
                    f0.store(0, REL, DEV);
                    r0
                }
                3 => {
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    let r1 = f1.load(ACQ, DEV);
                    it.barrier_with_id("B2", GLOBAL);
                    f1.store(0, REL, DEV);
                    r1
                }
                4 => {
                    it.barrier_with_id("B11", GLOBAL);
                    f1.store(1, REL, DEV);
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    let r4 = f1.load(ACQ, DEV);
                    it.barrier_with_id("B31", GLOBAL);
                    r4
                }
                _ => {
                    it.barrier_with_id("B11", GLOBAL);
                    atomic_work_item_fence(LOCAL, RLX, WG);
                    it.barrier_with_id("B31", GLOBAL);
                    tyler.read(0)
                }
            });
            (r[2], r[3], r[0], r[4])
        },
        &want,
        25,
    );
}

/// `herd/qualified/SB_global`, groups (P0) (P1): SB on non-atomic global
/// x, y: `*x = 1; r0 = *y` || `*y = 1; r1 = *x`. Nothing synchronises:
/// each read has only init visible (O-NaRfG) and races with the other
/// work-item's write. expect.json: 1 execution, (0,0), O-Dr. clmm: 1
/// complete execution (= the expect.json `executions`).
#[test]
fn qualified_sb_global() {
    both(
        || {
            let (x, y) = (GlobalBuffer::<i32>::new(1), GlobalBuffer::<i32>::new(1));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    x.write(0, 1);
                    y.read(0)
                } else {
                    y.write(0, 1);
                    x.read(0)
                }
            });
            (r[0], r[1])
        },
        &[((0, 0), 1, RACE)],
        1,
    );
}

/// `herd/qualified/LB_global`, groups (P0) (P1): LB on non-atomic global
/// x, y: `r0 = *x; *y = 1` || `r1 = *y; *x = 1`. The writes are never
/// visible to the reads (a non-atomic read reads a visible write, and the
/// other unit's write is not hb-before it): (0,0) only, racy.
/// expect.json: 1 execution, (0,0), O-Dr. clmm: 1 complete execution (=
/// the expect.json `executions`).
#[test]
fn qualified_lb_global() {
    both(
        || {
            let (x, y) = (GlobalBuffer::<i32>::new(1), GlobalBuffer::<i32>::new(1));
            let r = launch(two_groups(), |it| {
                if it.global_id(0) == 0 {
                    let r0 = x.read(0);
                    y.write(0, 1);
                    r0
                } else {
                    let r1 = y.read(0);
                    x.write(0, 1);
                    r1
                }
            });
            (r[0], r[1])
        },
        &[((0, 0), 1, RACE)],
        1,
    );
}

/// `overhauling/ISA2_broken`: `overhauling/ISA2` (see `isa2`) with the
/// work-group-scope flag y in LOCAL memory, groups (P0 P1) (P2): `*x = 1;
/// store(y, 1, rel, wg)` || `r0 = load(y, acq, wg); if (r0 == 1) store(z,
/// 1, rel, dev)` || `r1 = load(z, acq, dev); r2 = r1 == 1 ? *x : -1`. The
/// y release/acquire synchronises in the local region only (lhb), so P0's
/// global write of x is not ghb-before P1's z release, and the chain to P2
/// is broken: when P2 reads x it races and sees only init (r2 = 0).
/// expect.json: 3 executions, (0,0,-1), (1,0,-1), (1,1,0), O-Dr on
/// (1,1,0). clmm: the same, 3 complete executions (= the expect.json
/// `executions`).
#[test]
fn overhauling_isa2_broken() {
    both(
        || {
            let x = GlobalBuffer::<i32>::new(1);
            let z = AtomicI32::new(0);
            let r = launch_with_local(Topology::new().device([2, 1]), |_| AtomicI32::new(0), |it, y| isa2_item(it, &x, y, &z));
            (r[1].0, r[2].0, r[2].1)
        },
        &[((0, 0, -1), 1, NONE), ((1, 0, -1), 1, NONE), ((1, 1, 0), 1, RACE)],
        3,
    );
}

/// `clmm/MP_local_mixed_scope`, one group of two, x and f in LOCAL memory:
/// `*x = 1; store(f, 1, rel, dev)` || `r1 = 9; r0 = load(f, acq, wg); if
/// (r0 == 1) r1 = *x`. DEVIATION 2 of `clmm-check/src/model/mod.rs`
/// ("Scopes on local memory"): clmm follows the specification, a
/// device-scope atomic on local memory acts as work-group scope, so the two
/// ends are inclusive, the pair synchronises, r1 = 1 and nothing races:
/// (0,9) and (1,1), 2 complete executions. The reference (`.cat`: inclusive
/// only with the same scope) gives (0,9) and (1,0), both O-Dr, 2
/// executions: the same number as clmm, with different states and flags
/// (`deviation_local_scope_widening` in tests/semantics.rs shows both).
#[test]
fn clmm_mp_local_mixed_scope() {
    both(
        || {
            let r = launch_with_local(
                one_group(),
                |_| (LocalBuffer::<i32>::new(1), AtomicI32::new(0)),
                |it, (x, f)| {
                    if it.local_id(0) == 0 {
                        x.write(0, 1);
                        f.store(1, REL, DEV);
                        (0, 0)
                    } else {
                        let mut r1 = 9;
                        let r0 = f.load(ACQ, WG);
                        if r0 == 1 {
                            r1 = x.read(0);
                        }
                        (r0, r1)
                    }
                },
            );
            r[1]
        },
        &[((0, 9), 1, NONE), ((1, 1), 1, NONE)],
        2,
    );
}

/// `clmm/bar_partial`, one group of three, x LOCAL: `*x = 1; B:
/// barrier(LOCAL)` || `r0 = 7; B: barrier(LOCAL); r0 = *x` || `r1 = 5`
/// (P2 never reaches B). DEVIATION 3 of `clmm-check/src/model/mod.rs`
/// ("Barrier participation"): every work-item of the group must reach the
/// barrier; P2 finishes while P0 and P1 wait at B: barrier divergence, and
/// the launch does not return (no outcome): 1 complete execution. The
/// reference accepts partial participation (its `bd` only flags an entry
/// fence that synchronises with nobody): P0 and P1 synchronise, r0 = 1, no
/// flag, 1 execution (the same count as clmm). `deviation_barrier_partial`
/// in tests/semantics.rs shows both modes.
#[test]
fn clmm_bar_partial() {
    let prog = || {
        let r = launch_with_local(
            NdRange::new([3], [3]),
            |_| LocalBuffer::<i32>::new(1),
            |it, x| match it.local_id(0) {
                0 => {
                    x.write(0, 1);
                    it.barrier_with_id("B", LOCAL);
                    0
                }
                1 => {
                    // `r0 = 7` before the barrier is overwritten after it.
                    it.barrier_with_id("B", LOCAL);
                    x.read(0)
                }
                _ => 5, // `r1 = 5`
            },
        );
        r[1]
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        check_no_value(sc, &prog, &["barrier divergence"], 1);
    }
}
