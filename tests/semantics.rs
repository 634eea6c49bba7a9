//! clmm's own semantics where they depart from the formal model
//! (`shared/model/*.cat`): one test per entry of the "Deviations" list in
//! `clmm-check/src/model/mod.rs`, named as that list names it. Each test
//! shows clmm's behaviour exactly (outcomes, executions per outcome, failure
//! kinds) and, where the litmus compatibility mode (`Builder::compat(true)`)
//! reproduces the reference, the reference's behaviour beside it.

use clmm::{launch, launch_with_local, AtomicI32, Builder, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, ScModel, Scope};
use std::collections::BTreeSet;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

const NONE: &[&str] = &[];
const RACE: &[&str] = &["data race"];

mod common;
use common::{outcome_table, want_table, Want};

/// Explore `f` with `b` under both SC models and compare the outcomes
/// (value -> executions, failure kinds) and the number of complete
/// executions. When every execution returned a value, the failure kinds
/// seen must be exactly those listed in `want`. Returns the failure kinds
/// seen (for executions that return no value, such as a launch stopped by
/// barrier divergence or local memory misuse, the caller checks them).
#[track_caller]
fn check<T, F>(b: Builder, f: F, want: &[Want<T>], executions: u64) -> Vec<String>
where
    T: Ord + Send + Clone + Debug,
    F: Fn() -> T + Sync,
{
    let mut kinds_seen = Vec::new();
    for sc in [ScModel::Spec, ScModel::Scoped] {
        let ex = b.clone().sc_model(sc).explore(&f);
        assert_eq!(outcome_table(&ex), want_table(want), "outcomes under {sc:?}");
        assert_eq!(ex.stats.complete, executions, "complete executions under {sc:?}");
        kinds_seen = ex.failures.iter().map(|f| f.kind.to_string()).collect();
        let with_value: u64 = want.iter().map(|w| w.1).sum();
        if with_value == executions {
            let listed: BTreeSet<String> = want.iter().flat_map(|w| w.2.iter().map(|s| s.to_string())).collect();
            let seen: BTreeSet<String> = kinds_seen.iter().cloned().collect();
            assert_eq!(seen, listed, "failure kinds under {sc:?}");
        }
    }
    kinds_seen
}

// ---------------------------------------------------------------------
// 1. Sub-group scope
// ---------------------------------------------------------------------

/// Deviation 1. Specification (shared/spec/002_838a18ca613b0374.txt,
/// §3.3.5): "memory_scope_sub_group: memory-ordering constraints only apply
/// within the sub-group." The `.cat` files predate sub-groups:
/// `let incl = wg & s_wg^2 | dev & s_dev^2 | s_all^2` (opencl_base.cat) has
/// no sub-group term, so two sub-group-scope atomics are never inclusive.
///
/// MP with non-atomic data and a sub-group-scope release/acquire flag
/// between two work-items of ONE sub-group. clmm: they synchronise, no
/// race; (r0, r1) = (0,-1) or (1,1), 2 executions. The reference's rule
/// (compatibility mode): no sw, the flag accesses race, the data read sees
/// only init: (0,-1) and (1,0), both racy, 2 executions.
#[test]
fn deviation_sub_group_scope() {
    let mp = || {
        let x = GlobalBuffer::<i32>::new(1);
        let y = AtomicI32::new(0);
        let r = launch(NdRange::new([2], [2]).with_sub_group_size(2), |it| {
            assert_eq!(it.sub_group_id(), 0);
            if it.local_id(0) == 0 {
                x.write(0, 1);
                y.store(1, Order::Release, Scope::SubGroup);
                (0, 0)
            } else {
                let r0 = y.load(Order::Acquire, Scope::SubGroup);
                let r1 = if r0 == 1 { x.read(0) } else { -1 };
                (r0, r1)
            }
        });
        r[1]
    };
    check(Builder::new(), mp, &[((0, -1), 1, NONE), ((1, 1), 1, NONE)], 2);
    check(Builder::new().compat(true), mp, &[((0, -1), 1, RACE), ((1, 0), 1, RACE)], 2);
}

// ---------------------------------------------------------------------
// 2. Scopes on local memory
// ---------------------------------------------------------------------

/// Deviation 2. Specification (shared/spec/002_838a18ca613b0374.txt,
/// §3.3.5): "All memory scopes are valid when used on global memory or
/// local memory. For local memory, all visibility is constrained to within
/// a given work-group and scopes wider than memory_scope_work_group carry
/// no additional meaning." The `.cat` requires the SAME scope (`incl = wg &
/// s_wg^2 | dev & s_dev^2 | ...`), so a device-scope release and a
/// work-group-scope acquire do not synchronise, even on local memory.
///
/// `clmm/MP_local_mixed_scope` (local data x, local flag f, one group):
/// `x = 1; store(f, 1, release, device)` || `r1 = 9; r0 = load(f, acquire,
/// work_group); if (r0 == 1) r1 = x`. clmm: device scope on local memory
/// acts as work-group scope, the pair synchronises: (0,9) and (1,1), no
/// race, 2 executions. The reference (expect.json, reproduced by the
/// compatibility mode): (0,9) and (1,0), both O-Dr, 2 executions.
#[test]
fn deviation_local_scope_widening() {
    let mp = || {
        let r = launch_with_local(
            NdRange::new([2], [2]),
            |_| (LocalBuffer::<i32>::new(1), AtomicI32::new(0)),
            |it, (x, f)| {
                if it.local_id(0) == 0 {
                    x.write(0, 1);
                    f.store(1, Order::Release, Scope::Device);
                    (0, 0)
                } else {
                    let mut r1 = 9;
                    let r0 = f.load(Order::Acquire, Scope::WorkGroup);
                    if r0 == 1 {
                        r1 = x.read(0);
                    }
                    (r0, r1)
                }
            },
        );
        r[1]
    };
    check(Builder::new(), mp, &[((0, 9), 1, NONE), ((1, 1), 1, NONE)], 2);
    check(Builder::new().compat(true), mp, &[((0, 9), 1, RACE), ((1, 0), 1, RACE)], 2);
}

// ---------------------------------------------------------------------
// 3. Barrier participation
// ---------------------------------------------------------------------

/// Deviation 3. Specification (shared/spec/004_8d269728d13116e5.txt,
/// "内存排序规则：工作组功能", work-group functions): informally every
/// work-item of the work-group must execute the barrier before any
/// continues, and "程序员必须确保工作组中的所有工作项必须执行相同的工作组功能
/// 调用站点或动态工作组功能实例" (the programmer must ensure that all
/// work-items of the group execute the same work-group function call site /
/// dynamic instance). The `.cat` only has
/// `let bd = [entry_fence] & ((~wi & wg);unv) \ (bsw;unv)`: an entry fence
/// that synchronises with nobody; a work-item that never reaches the
/// barrier has no entry fence and is not divergence.
///
/// `clmm/bar_partial` (one group of three; P0 writes local x and meets P1
/// at the barrier, P1 then reads x, P2 never calls the barrier). clmm: P2
/// finishes while P0 and P1 wait: barrier divergence, the launch does not
/// return (no value), 1 execution. The reference (compatibility mode): P0
/// and P1 synchronise, r0 = 1, no flag, 1 execution.
#[test]
fn deviation_barrier_partial() {
    let prog = || {
        let r = launch_with_local(
            NdRange::new([3], [3]),
            |_| LocalBuffer::<i32>::new(1),
            |it, x| {
                let l = it.local_id(0);
                if l == 0 {
                    x.write(0, 1);
                }
                if l != 2 {
                    it.barrier(FenceFlags::LOCAL);
                }
                if l == 1 {
                    x.read(0)
                } else {
                    7
                }
            },
        );
        r[1]
    };
    let kinds = check(Builder::new(), prog, &[], 1);
    assert_eq!(kinds, vec!["barrier divergence".to_string()]);
    check(Builder::new().compat(true), prog, &[(1, 1, NONE)], 1);
}

// ---------------------------------------------------------------------
// 4. Local memory of another work-group
// ---------------------------------------------------------------------

/// Deviation 4. Specification (shared/spec/004_8d269728d13116e5.txt,
/// memory regions): "本地内存：工作组本地的内存区域。该内存区域可用于分配该
/// 工作组中所有工作项共享的变量。" (local memory: a memory region local to a
/// work-group, shared by the work-items of that work-group). The `.cat`
/// files do not check which group touches a local location (`herd/thinair`,
/// `herd/old/MP_*` share local memory across groups).
///
/// `herd/old/MP_dr`: local data x shared by two work-groups, a global flag
/// at work-group scope: `x = 1; store(y, 1, release, wg)` || `r1 =
/// load(y, acquire, wg); r2 = x`. The reference (expect.json, reproduced
/// by the compatibility mode): 2 executions, (0,0) and (1,0), both O-Dr.
///
/// clmm: 2 executions (r1 = 0 or 1; the work-groups' initialisers run in
/// group order, so the buffer is group 0's and the first foreign access is
/// group 1's read of x, after its read of y), both stopped by "local memory
/// misuse" before the launch returns: no value.
#[test]
fn deviation_local_across_groups() {
    let prog = || {
        let shared: Mutex<Option<Arc<LocalBuffer<i32>>>> = Mutex::new(None);
        let y = AtomicI32::new(0);
        let r = launch_with_local(
            NdRange::new([2], [1]),
            |_| {
                // The first group's buffer, handed to both groups.
                let mut s = shared.lock().unwrap();
                s.get_or_insert_with(|| Arc::new(LocalBuffer::<i32>::new(1))).clone()
            },
            |it, x| {
                if it.group_id(0) == 0 {
                    x.write(0, 1);
                    y.store(1, Order::Release, Scope::WorkGroup);
                    (0, 0)
                } else {
                    let r1 = y.load(Order::Acquire, Scope::WorkGroup);
                    (r1, x.read(0))
                }
            },
        );
        r[1]
    };
    let kinds = check(Builder::new(), prog, &[], 2);
    assert_eq!(kinds, vec!["local memory misuse".to_string()]);
    check(Builder::new().compat(true), prog, &[((0, 0), 1, RACE), ((1, 0), 1, RACE)], 2);
}

// ---------------------------------------------------------------------
// 5. The host
// ---------------------------------------------------------------------

/// Deviation 5. The `.cat` files have no host thread and no kernel launch.
/// Specification (shared/spec/004_8d269728d13116e5.txt, "内存排序规则：主机端
/// 和设备端命令"): "如果API函数调用X使命令C排队，则X 与C全局同步" (an API call
/// that enqueues a command C global-synchronizes-with C), "内核实例的开始
/// 全球进行同步，与工作项目的所有操作" (the start of a kernel instance
/// global-synchronizes-with all operations of its work-items), "内核实例K
/// 的所有工作项的所有操作都是全局同步的，该事件表示K的完成" (all operations of
/// K's work-items global-synchronize-with the event of K's completion), and
/// clFinish synchronises with the completion. clmm's `launch` is
/// enqueue + finish: the host's earlier global events are ghb-before every
/// global event of the kernel, the kernel's before the host's later ones.
///
/// A host write before the launch is the only value the kernel can read
/// (it hides init), without race against the host; a kernel write is the
/// only value the host reads after the launch returns; a second launch
/// sees the first one's writes. 1 execution.
#[test]
fn deviation_host_launch_orders() {
    let prog = || {
        let buf = GlobalBuffer::<i32>::new(2);
        let flag = AtomicI32::new(0);
        buf.write(0, 5); // host, before the launch
        flag.store(3, Order::Relaxed, Scope::Device); // host, relaxed device scope
        let seen = launch(NdRange::new([2], [1]), |it| {
            let a = buf.read(0); // both work-items read the host's write
            let f = flag.load(Order::Relaxed, Scope::Device);
            if it.global_id(0) == 0 {
                buf.write(1, 7); // kernel write, read by the host afterwards
            }
            (a, f)
        });
        let after = buf.read(1); // host, after the launch returned
        let second = launch(NdRange::new([1], [1]), |_| buf.read(1));
        (seen, after, second[0])
    };
    check(Builder::new(), prog, &[((vec![(5, 3), (5, 3)], 7, 7), 1, NONE)], 1);
}

/// Deviation 5, command queues and SVM (the rules of `clmm_check::model::host`).
/// Specification (shared/spec/004_8d269728d13116e5.txt): "如果E是命令C等待的
/// 事件，则E 与C全局同步" (an event E a command C waits on
/// global-synchronizes-with C); "如果满足这些条件，则主机操作将在
/// all_svm_devices范围内应用" (host atomics apply at all_svm_devices scope
/// only on fine-grained SVM with atomics support); "尽管粗粒度缓冲区SVM分配
/// 可以支持原子操作，但是除了映射和取消映射操作外，不能保证这些分配的可见性"
/// (coarse-grained allocations are visible only at synchronisation points).
///
/// Two kernels on an out-of-order queue, the second waiting for the first's
/// event: it reads the first's write, 1 execution, no race (without the
/// event: a race). A host thread and a running kernel through an
/// all-svm-devices release/acquire pair on fga memory: 2 executions, no
/// race; the same pair publishing a coarse-grained buffer: the data races.
#[test]
fn deviation_host_commands_and_svm() {
    use clmm::host::{self, Context, QueueOrder};
    use clmm::{AtomicU32, SvmBuffer};
    let two_kernels = |with_event: bool| {
        move || {
            let x = GlobalBuffer::<i32>::new(1);
            let seen = Mutex::new(-1);
            let ctx = Context::new(1);
            host::scope(|s| {
                let q = s.queue(&ctx, 0, QueueOrder::OutOfOrder);
                let e = q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| x.write(0, 1));
                let wait = if with_event { vec![e] } else { vec![] };
                q.enqueue_kernel(NdRange::new([1], [1]), &wait, |_| *seen.lock().unwrap() = x.read(0));
            });
            seen.into_inner().unwrap()
        }
    };
    check(Builder::new(), two_kernels(true), &[(1, 1, NONE)], 1);
    check(Builder::new(), two_kernels(false), &[(0, 1, RACE)], 1);
    let svm = |fine: bool| {
        move || {
            let data = if fine { SvmBuffer::<u32>::fine(1) } else { SvmBuffer::<u32>::coarse(1) };
            let flag = AtomicU32::new_svm(0);
            let ctx = Context::new(1);
            host::scope(|s| {
                let q = s.queue(&ctx, 0, QueueOrder::InOrder);
                q.enqueue_kernel(NdRange::new([1], [1]), &[], |_| {
                    data.write(0, 42);
                    flag.store(1, Order::Release, Scope::AllSvmDevices);
                });
                let t = s.spawn(|| if flag.load(Order::Acquire, Scope::AllSvmDevices) == 1 { data.read(0) } else { 0 });
                t.join()
            })
        }
    };
    check(Builder::new(), svm(true), &[(0, 1, NONE), (42, 1, NONE)], 2);
    check(Builder::new(), svm(false), &[(0, 1, NONE), (42, 1, RACE)], 2);
}

// ---------------------------------------------------------------------
// 6. No out-of-thin-air through control dependencies
// ---------------------------------------------------------------------

/// Deviation 6. `c11/auto/cyc`: `r0 = x; if (r0 == 1) y = 1;` ||
/// `r1 = y; if (r1 == 1) x = 1;`, relaxed, one group. The `.cat` files have
/// no dependency and no po∪rf axiom: the reference has 2 executions, (0,0)
/// and (1,1), where each write exists only because a read read the other
/// (self-justifying). Specification (shared/spec/003_e7e76c44798e76aa.txt,
/// and C11 §7.17.3p10 which OpenCL C 2.0 follows): "OpenCL实现应该确保不会
/// 计算出“无中生有”的值,在循环依赖于它们自己的计算" (implementations should
/// ensure that no out-of-thin-air values are computed that circularly
/// depend on their own computation). clmm only speculates on writes that an
/// explored execution produced, so the cycle is never explored: only (0,0),
/// 1 execution.
///
/// Plain LB without the `if` (`c11/auto/lb`): the writes exist
/// unconditionally, clmm speculates on them: all 4 outcomes, 4 executions.
#[test]
fn deviation_no_thin_air() {
    let cyc = || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                let r0 = x.load(Order::Relaxed, Scope::Device);
                if r0 == 1 {
                    y.store(1, Order::Relaxed, Scope::Device);
                }
                r0
            } else {
                let r1 = y.load(Order::Relaxed, Scope::Device);
                if r1 == 1 {
                    x.store(1, Order::Relaxed, Scope::Device);
                }
                r1
            }
        });
        (r[0], r[1])
    };
    check(Builder::new(), cyc, &[((0, 0), 1, NONE)], 1);
    // The compatibility mode alone does not change this.
    check(Builder::new().compat(true), cyc, &[((0, 0), 1, NONE)], 1);
    // With the thin-air values the litmus front end passes in
    // compatibility mode (the test's constants), the reference's
    // self-justifying (1,1) is explored too: its 2 executions.
    check(Builder::new().thin_air(&[1]), cyc, &[((0, 0), 1, NONE), ((1, 1), 1, NONE)], 2);

    let lb = || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                let r0 = x.load(Order::Relaxed, Scope::Device);
                y.store(1, Order::Relaxed, Scope::Device);
                r0
            } else {
                let r1 = y.load(Order::Relaxed, Scope::Device);
                x.store(1, Order::Relaxed, Scope::Device);
                r1
            }
        });
        (r[0], r[1])
    };
    check(Builder::new(), lb, &[((0, 0), 1, NONE), ((0, 1), 1, NONE), ((1, 0), 1, NONE), ((1, 1), 1, NONE)], 4);
}

// ---------------------------------------------------------------------
// 7. RMW reads speculate (Deviation 7 with speculate_rmw(false))
// ---------------------------------------------------------------------

/// LB with a relaxed `fetch_add` as the read of `rmw_side` (0 or 1) and a
/// relaxed load on the other side, or RMWs on both sides:
/// `r0 = RMW/load(x); store(y, 1)` || `r1 = RMW/load(y); store(x, 1)`.
/// Returns (r0, r1, final x, final y).
fn lb_with_rmw(rmw_side: Option<usize>) -> (i32, i32, i32, i32) {
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    let rlx = Order::Relaxed;
    let dev = Scope::Device;
    let r = launch(NdRange::new([2], [2]), |it| {
        let me = it.local_id(0);
        let (from, to) = if me == 0 { (&x, &y) } else { (&y, &x) };
        let v = if rmw_side.is_none_or(|s| s == me) { from.fetch_add(1, rlx, dev) } else { from.load(rlx, dev) };
        to.store(1, rlx, dev);
        v
    });
    (r[0], r[1], x.load(rlx, dev), y.load(rlx, dev))
}

/// The model: `irreflexive rf | (mo;mo;rf^-1) | (mo;rf) as O-Rmw`
/// (opencl_base.cat) only asks an RMW to read its immediate
/// co-predecessor, and there is no po∪rf axiom, so load buffering through
/// the read part of an RMW is allowed like any other.
///
/// RMWs on BOTH sides (`r0 = fetch_add(x, 1); store(y, 1)` || `r1 =
/// fetch_add(y, 1); store(x, 1)`): by the model 4 executions, (r0, r1, x,
/// y) in {(0,0,1,1), (0,1,1,2), (1,0,2,1), (1,1,2,2)} (r0 = 0: co(x) =
/// init, RMW, W1; r0 = 1: init, W1, RMW; likewise y), the last one the LB
/// cycle. With `speculate_rmw(true)` (`CLMM_SPECULATE_RMW=1`, session
/// 36) clmm finds all 4: an RMW read speculates on the other side's
/// store, and its write part takes a coherence place of its own, the
/// store going right before it once produced. By default (Deviation 7)
/// clmm finds 3, without (1,1,2,2): closing the cycle needs one of the
/// two RMW reads to read a po∪rf-later write.
///
/// A fetch_add on ONE side only, in work-item 1, the plain load in
/// work-item 0: the model's 4 executions, all found, in both modes: the
/// plain load speculates on work-item 1's store of y. (The same with the
/// fetch_add in work-item 0: `lb_with_rmw_in_first_item` below.)
#[test]
fn rmw_reads_speculate() {
    let all = [((0, 0, 1, 1), 1, NONE), ((0, 1, 1, 2), 1, NONE), ((1, 0, 2, 1), 1, NONE), ((1, 1, 2, 2), 1, NONE)];
    check(Builder::new().speculate_rmw(true), || lb_with_rmw(None), &all, 4);
    check(Builder::new().speculate_rmw(false), || lb_with_rmw(None), &all[..3], 3);
    for on in [true, false] {
        check(
            Builder::new().speculate_rmw(on),
            || lb_with_rmw(Some(1)),
            &[((0, 0, 1, 1), 1, NONE), ((0, 1, 1, 2), 1, NONE), ((1, 0, 1, 1), 1, NONE), ((1, 1, 1, 2), 1, NONE)],
            4,
        );
    }
}

/// The mirror image: the fetch_add in work-item 0, the plain load in
/// work-item 1 (`r0 = fetch_add(x, 1); store(y, 1)` || `r1 = load(y);
/// store(x, 1)`). The model: 4 executions, (r0, r1, x, y) in {(0,0,1,1),
/// (0,1,1,1), (1,0,2,1), (1,1,2,1)}; the last one is the LB cycle (the RMW
/// reads W1 of x, which is po-after the load that reads P0's store of y).
/// All 4 are found: the load speculates on work-item 0's store of y, and
/// in the speculative run work-item 0, which owes that store, runs after
/// work-item 1, so its RMW reads W1 of x as an ordinary read. Until
/// session 9 the owing unit ran first and the RMW, added before W1,
/// could not read it (3 executions, a case of Deviation 7). Before that it
/// panicked inside the explorer ("pred in co": a speculation kept an RMW
/// whose source write it cut away), see /work/notes/semantics-findings.md.
#[test]
fn lb_with_rmw_in_first_item() {
    check(
        Builder::new(),
        || lb_with_rmw(Some(0)),
        &[((0, 0, 1, 1), 1, NONE), ((0, 1, 1, 1), 1, NONE), ((1, 0, 2, 1), 1, NONE), ((1, 1, 2, 1), 1, NONE)],
        4,
    );
}

/// A histogram: each of three work-items adds 1 to two bins, work-item
/// `i` to bin `i % 2` first, then to the other (relaxed, device scope),
/// and returns what both `fetch_add`s read. The model allows every pair
/// of coherence orders of the bins (3! x 3! = 36 executions, each with
/// its own outcome): with hb = po and one access per bin per work-item
/// no axiom rules one out. In 14 of them the RMW reads close a po | rf
/// cycle (work-item 0's first add reads work-item 1's second, which
/// comes after work-item 1's first add reading work-item 0's second):
/// only RMW reads can close it, and by default (Deviation 7) clmm
/// explores the other 22 and says so in `Stats::rmw_cycles_unexplored`
/// (and a note on stderr); with `Builder::speculate_rmw(true)` it
/// explores all 36. An LB cycle with a plain load on it is explored in
/// both modes and needs no such note (`lb_with_rmw(Some(1))`).
#[test]
fn histogram_rmw_cycles() {
    const N: usize = 3;
    let histogram = || {
        let bins = [AtomicI32::new(0), AtomicI32::new(0)];
        let r = launch(NdRange::new([N], [1]), |it| {
            let i = it.global_id(0);
            let a = bins[i % 2].fetch_add(1, Order::Relaxed, Scope::Device);
            let b = bins[(i + 1) % 2].fetch_add(1, Order::Relaxed, Scope::Device);
            (a, b)
        });
        assert_eq!((bins[0].load(Order::Relaxed, Scope::Device), bins[1].load(Order::Relaxed, Scope::Device)), (3, 3));
        r
    };
    // Every pair of coherence orders (the work-items in the order their
    // adds come in each bin): the outcome, and whether po | rf is acyclic.
    let perms: Vec<Vec<usize>> = vec![vec![0, 1, 2], vec![0, 2, 1], vec![1, 0, 2], vec![1, 2, 0], vec![2, 0, 1], vec![2, 1, 0]];
    let (mut all, mut acyclic) = (BTreeSet::new(), BTreeSet::new());
    for co0 in &perms {
        for co1 in &perms {
            let mut out = vec![(0, 0); N];
            // Event (i, k): work-item i's k-th add; `src[e]`: the add it reads.
            let mut src = [[None; 2]; N];
            for (bin, co) in [co0, co1].into_iter().enumerate() {
                for (pos, &i) in co.iter().enumerate() {
                    let k = usize::from(i % 2 != bin);
                    if k == 0 {
                        out[i].0 = pos as i32;
                    } else {
                        out[i].1 = pos as i32;
                    }
                    src[i][k] = (pos > 0).then(|| {
                        let j = co[pos - 1];
                        (j, usize::from(j % 2 != bin))
                    });
                }
            }
            // Reachability over po ((i, 0) -> (i, 1)) and rf (source -> reader).
            let mut reach = [[[[false; 2]; N]; 2]; N];
            for i in 0..N {
                reach[i][0][i][1] = true;
                for k in 0..2 {
                    if let Some((j, l)) = src[i][k] {
                        reach[j][l][i][k] = true;
                    }
                }
            }
            let nodes: Vec<(usize, usize)> = (0..N).flat_map(|i| [(i, 0), (i, 1)]).collect();
            for &(mi, mk) in &nodes {
                for &(ai, ak) in &nodes {
                    for &(bi, bk) in &nodes {
                        if reach[ai][ak][mi][mk] && reach[mi][mk][bi][bk] {
                            reach[ai][ak][bi][bk] = true;
                        }
                    }
                }
            }
            all.insert(out.clone());
            if nodes.iter().all(|&(i, k)| !reach[i][k][i][k]) {
                acyclic.insert(out);
            }
        }
    }
    assert_eq!((all.len(), acyclic.len()), (36, 22));
    for (on, want) in [(false, &acyclic), (true, &all)] {
        let ex = Builder::new().speculate_rmw(on).explore(histogram);
        assert!(ex.failures.is_empty(), "{:?}", ex.failures);
        let got: BTreeSet<Vec<(i32, i32)>> = ex.outcomes.keys().cloned().collect();
        assert_eq!(&got, want, "speculate_rmw({on})");
        assert_eq!(ex.stats.complete, want.len() as u64, "speculate_rmw({on})");
        assert_eq!(ex.stats.rmw_cycles_unexplored, !on, "speculate_rmw({on})");
    }
    for (side, note) in [(None, true), (Some(1), false), (Some(0), false)] {
        let ex = Builder::new().explore(|| lb_with_rmw(side));
        assert_eq!(ex.stats.rmw_cycles_unexplored, note, "lb_with_rmw({side:?})");
    }
}

// ---------------------------------------------------------------------
// 9. Load-buffering cycles nested more than two deep
// ---------------------------------------------------------------------

/// `a=Rx; b=Rx; Wy2 || c=Ry; Wx2 || d=Rx; Wx1`, relaxed, device scope,
/// three groups; outcome (a, b, c, d, final x). Relaxed atomics at one
/// scope are SC per location: a brute-force count of the graphs acyclic
/// in po-loc | rf | co | fr gives 36, each outcome once. In outcome
/// (2, 1, 2, 2, 1) c reads `Wy2`, a reads `Wx2` (porf-after a through
/// `Wy2` and c) and b reads `Wx1` (porf-after b through c and d).
/// Whichever read is speculated first, the other's write then has that
/// speculative read in its porf-prefix: b's promise nests one level in
/// a's (here b first reads a's promise, then is re-promised to `Wx1`).
/// Until session 11 such writes were never speculated on and clmm
/// explored 35.
#[test]
fn lb_second_speculation_on_a_write_after_the_first() {
    let all = [
        (0, 0, 0, 0, 1), (0, 0, 0, 0, 2), (0, 0, 0, 2, 1), (0, 0, 2, 0, 1), (0, 0, 2, 0, 2), (0, 0, 2, 2, 1),
        (0, 1, 0, 0, 1), (0, 1, 0, 0, 2), (0, 1, 0, 2, 1), (0, 1, 2, 0, 1), (0, 1, 2, 0, 2), (0, 1, 2, 2, 1),
        (0, 2, 0, 0, 1), (0, 2, 0, 0, 2), (0, 2, 0, 2, 1), (0, 2, 2, 0, 1), (0, 2, 2, 0, 2), (0, 2, 2, 2, 1),
        (1, 1, 0, 0, 1), (1, 1, 0, 0, 2), (1, 1, 0, 2, 1), (1, 1, 2, 0, 1), (1, 1, 2, 0, 2), (1, 1, 2, 2, 1),
        (1, 2, 0, 0, 2), (1, 2, 2, 0, 2), (2, 1, 0, 0, 1), (2, 1, 0, 2, 1), (2, 1, 2, 0, 1), (2, 2, 0, 0, 1),
        (2, 2, 0, 0, 2), (2, 2, 0, 2, 1), (2, 2, 2, 0, 1), (2, 2, 2, 0, 2), (2, 2, 2, 2, 1), (2, 1, 2, 2, 1),
    ];
    let want: Vec<_> = all.iter().map(|&o| (o, 1, NONE)).collect();
    let f = || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
            0 => {
                let a = x.load(Order::Relaxed, Scope::Device);
                let b = x.load(Order::Relaxed, Scope::Device);
                y.store(2, Order::Relaxed, Scope::Device);
                (a, b)
            }
            1 => {
                let c = y.load(Order::Relaxed, Scope::Device);
                x.store(2, Order::Relaxed, Scope::Device);
                (c, 0)
            }
            _ => {
                let d = x.load(Order::Relaxed, Scope::Device);
                x.store(1, Order::Relaxed, Scope::Device);
                (d, 0)
            }
        });
        (r[0].0, r[0].1, r[1].0, r[2].0, x.load(Order::Relaxed, Scope::Device))
    };
    assert_eq!(all.len(), 36);
    check(Builder::new(), f, &want, 36);
}


/// Every outcome of four reads of 0 or 1 but `missing`, each once.
fn binary_outcomes(missing: &[(i32, i32, i32, i32)]) -> Vec<Want<(i32, i32, i32, i32)>> {
    let bit = |n: u32, k: u32| ((n >> k) & 1) as i32;
    (0..16u32).map(|n| (bit(n, 0), bit(n, 1), bit(n, 2), bit(n, 3))).filter(|o| !missing.contains(o)).map(|o| (o, 1, NONE)).collect()
}

/// Load buffering nested as deep as the program asks (Deviation 9 until
/// session 13, while nesting was bounded): `a1=Rx1; ..; an=Rxn; Wq1 ||
/// d=Rq; Wx1 1; ..; Wxn 1`, relaxed, device scope, two groups; outcome
/// (a1, .., an, d). By the model (brute force, as in
/// `tests/lb_differential.rs`) all 2^(n+1) combinations are executions,
/// one graph each; when every read reads 1, the `n` reads of work-item 0
/// read `n` different writes porf-after them, and their promises nest `n`
/// deep (`a2`'s in `a1`'s, ..). With nesting bounded at one level, clmm
/// explored 15 of the 16 for n = 3.
#[test]
fn lb_speculation_nested_n_deep() {
    for n in 3..=5usize {
        let want: Vec<Want<Vec<i32>>> = (0..1u32 << (n + 1)).map(|m| ((0..=n).map(|k| ((m >> k) & 1) as i32).collect(), 1, NONE)).collect();
        check(Builder::new(), nested_reads(n), &want, 1 << (n + 1));
    }
}

/// A promise on a write that exists only once a later read of the same
/// unit reads a promise (Deviation 9 in sessions 13 and 14): `Wx1; a=Rx; b=Ry;
/// Wz(b+1) || c=Rz; d=Rz; Wy2; Wx(d+1)`, relaxed, device scope, two
/// groups; outcome (a, b, c, d). By the model (counted by hand, and by the
/// value-aware brute force of `tests/lb_differential.rs`, seed 9846): b
/// reads 0 or `Wy2`, so `Wz` writes 1 or 3; (c, d) is (0, 0), (0, v) or
/// (v, v) for that value v (CoRR); `Wx(d+1)` writes d+1, and a reads `Wx1`
/// under both coherence orders of x or the other write when it is
/// coherence-later: 3 executions for each of the 6 choices of b, c and d.
/// In (4, 2, _, 3) a reads `Wx4`, which exists only when b reads `Wy2`
/// and d reads `Wz3`: the speculation of a cuts b's promise away, and
/// its twin makes it again (`Pin` in `clmm_check::graph`). Before
/// session 15, clmm explored 16 of the 18.
#[test]
fn lb_promise_needing_a_later_promise_of_its_unit() {
    let want: Vec<Want<(i32, i32, i32, i32)>> = vec![
        ((1, 0, 0, 0), 3, NONE),
        ((1, 0, 0, 1), 2, NONE),
        ((2, 0, 0, 1), 1, NONE),
        ((1, 0, 1, 1), 2, NONE),
        ((2, 0, 1, 1), 1, NONE),
        ((1, 2, 0, 0), 3, NONE),
        ((1, 2, 0, 3), 2, NONE),
        ((4, 2, 0, 3), 1, NONE),
        ((1, 2, 3, 3), 2, NONE),
        ((4, 2, 3, 3), 1, NONE),
    ];
    let f = || {
        let (x, y, z) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
                let a = x.load(Order::Relaxed, Scope::Device);
                let b = y.load(Order::Relaxed, Scope::Device);
                z.store(b + 1, Order::Relaxed, Scope::Device);
                (a, b)
            } else {
                let c = z.load(Order::Relaxed, Scope::Device);
                let d = z.load(Order::Relaxed, Scope::Device);
                y.store(2, Order::Relaxed, Scope::Device);
                x.store(d + 1, Order::Relaxed, Scope::Device);
                (c, d)
            }
        });
        (r[0].0, r[0].1, r[1].0, r[1].1)
    };
    check(Builder::new().check_unique(true), f, &want, 18);
}

/// `a1=Rx1; ..; an=Rxn; Wq1 || d=Rq; Wx1 1; ..; Wxn 1`, relaxed, device
/// scope, two groups; returns (a1, .., an, d).
fn nested_reads(n: usize) -> impl Fn() -> Vec<i32> + Sync {
    move || {
        let xs: Vec<AtomicI32> = (0..n).map(|_| AtomicI32::new(0)).collect();
        let q = AtomicI32::new(0);
        let r = launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                let a: Vec<i32> = xs.iter().map(|x| x.load(Order::Relaxed, Scope::Device)).collect();
                q.store(1, Order::Relaxed, Scope::Device);
                a
            } else {
                let d = q.load(Order::Relaxed, Scope::Device);
                for x in &xs {
                    x.store(1, Order::Relaxed, Scope::Device);
                }
                vec![d]
            }
        });
        let mut out = r[0].clone();
        out.extend(&r[1]);
        out
    }
}

/// Two speculations nested across units: `a=Rx; e=Rq; Wy1 || b=Ry; Wx1;
/// Ww1 || d=Rw; Wq1`, relaxed, device scope, three groups; outcome (a, e,
/// b, d). All 16 combinations are executions (brute force, as above). In
/// (1, 1, 1, 1) a reads `Wx1` and d reads `Ww1`, both porf-after them
/// (through e, `Wy1` and b), so d's promise is made first and a's nests in
/// it. Found since session 11 (15 before).
#[test]
fn lb_nested_speculation_across_units() {
    let want = binary_outcomes(&[]);
    let f = || {
        let (x, y, w, q) = (AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([3], [1]), |it| match it.global_id(0) {
            0 => {
                let a = x.load(Order::Relaxed, Scope::Device);
                let e = q.load(Order::Relaxed, Scope::Device);
                y.store(1, Order::Relaxed, Scope::Device);
                (a, e)
            }
            1 => {
                let b = y.load(Order::Relaxed, Scope::Device);
                x.store(1, Order::Relaxed, Scope::Device);
                w.store(1, Order::Relaxed, Scope::Device);
                (b, 0)
            }
            _ => {
                let d = w.load(Order::Relaxed, Scope::Device);
                q.store(1, Order::Relaxed, Scope::Device);
                (d, 0)
            }
        });
        (r[0].0, r[0].1, r[1].0, r[2].0)
    };
    check(Builder::new(), f, &want, 16);
}

/// Two reads of one write, both load buffering (relaxed, device scope,
/// two groups): `a=Rx; b=Rx; Wy2 || c=Ry; Wx2`, outcome (a, b, c). By the
/// model (a, b) is (0,0), (0,2) or (2,2) (CoRR forbids (2,0)) whatever c
/// reads (init or `Wy2`): 6 executions. (2, 2, 2) needs both a and b to
/// read `Wx2` before it exists: a by speculation, and b, once a reads the
/// promised write, by reading that same promise (`Engine::push_read_promised`).
/// Before session 10 clmm explored 5, without it.
#[test]
fn lb_two_reads_of_one_speculated_write() {
    let f = common::two_reads_of_one_write;
    let want: Vec<_> = [(0, 0, 0), (0, 2, 0), (2, 2, 0), (0, 0, 2), (0, 2, 2), (2, 2, 2)].iter().map(|&o| (o, 1, NONE)).collect();
    check(Builder::new(), f, &want, 6);
}

/// Speculations chained deeper than `Builder::nesting_limit` stop the run
/// with a failure that says so, naming the reads (a safety bound against
/// speculations that would feed each other without end; the default, 32,
/// is far above the deepest chain of clmm's tests, 5). `nested_reads(3)`,
/// `a=Rx; b=Ry; c=Rz; Wq1 || d=Rq; Wx1; Wy1; Wz1`, chains its promises two
/// levels below the first (`c`'s in `b`'s in `a`'s): with the limit at 1
/// the run stops at the first execution that needs level 2, and at 2 it
/// is complete.
#[test]
fn promises_nested_deeper_than_the_limit_are_reported() {
    let reads = nested_reads(3);
    let f = || {
        reads();
    };
    let failure = Builder::new().nesting_limit(1).check(f).expect_err("nesting beyond the limit must be reported");
    assert_eq!(failure.kind, clmm::FailureKind::ExplorationLimit);
    assert!(failure.message.contains("speculations chained 2 deep, past the limit of 1"), "{}", failure.message);
    // The three reads of work-item 0, each reading a later write of the
    // other; no replay string (a replay makes no speculation).
    assert_eq!(failure.accesses.len(), 3, "the speculative reads, {failure}");
    assert!(failure.replay.is_empty() && !failure.to_string().contains("CLMM_REPLAY"), "{failure}");
    // At the limit itself the run is complete: 16 executions.
    assert_eq!(Builder::new().nesting_limit(2).check(f).expect("within the limit").complete, 16);
}
