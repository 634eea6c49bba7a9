//! Device-side enqueue (issue 7, rules 1, 2, 13 and 14 of the spec's list
//! "memory ordering rules: host-side and device-side commands", spec
//! excerpt `004_8d269728d13116e5.txt`, and §3.2.3 "execution model:
//! device-side enqueue"): a kernel's work-items enqueue child kernels and
//! markers on a `DeviceQueue`. Each test states its exact outcomes and
//! numbers of executions, with `check_unique` (no graph explored twice);
//! the racy variants name the two racing lines.

use clmm::host::{self, ClkEvent, Context, EnqueueFlags, QueueOrder};
use clmm::{launch, AtomicU32, Builder, FailureKind, GlobalBuffer, LocalBuffer, NdRange, Order, Scope, SvmBuffer};
use std::sync::Mutex;

mod common;
use common::{race, race_lines, run};

const ONE: fn() -> NdRange = || NdRange::new([1], [1]);

/// What memory the parent and the child share in [`parent_writes_then_child_reads`].
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mem {
    /// A `cl_mem` buffer.
    Global,
    /// Coarse-grained SVM.
    Coarse,
    /// Fine-grained SVM with atomics support.
    Fine,
    /// Fine-grained SVM without atomics support.
    FineWithoutAtomics,
}

/// A buffer of one of the kinds of [`Mem`].
enum Buf {
    Global(GlobalBuffer<u32>),
    Svm(SvmBuffer<u32>),
}

impl Buf {
    fn new(mem: Mem) -> Buf {
        match mem {
            Mem::Global => Buf::Global(GlobalBuffer::new(1)),
            Mem::Coarse => Buf::Svm(SvmBuffer::coarse(1)),
            Mem::Fine => Buf::Svm(SvmBuffer::fine(1)),
            Mem::FineWithoutAtomics => Buf::Svm(SvmBuffer::fine_without_atomics(1)),
        }
    }
    #[track_caller]
    fn read(&self) -> u32 {
        match self {
            Buf::Global(b) => b.read(0),
            Buf::Svm(b) => b.read(0),
        }
    }
    #[track_caller]
    fn write(&self, v: u32) {
        match self {
            Buf::Global(b) => b.write(0, v),
            Buf::Svm(b) => b.write(0, v),
        }
    }
}

/// The parent's one work-item writes `x = 1` and then enqueues a child that
/// reads `x`; returns what the child read and the lines of the write and
/// the read.
fn parent_writes_then_child_reads(mem: Mem, flags: EnqueueFlags, lines: &Mutex<(u32, u32)>) -> impl Fn() -> u32 + Sync + '_ {
    move || {
        let x = Buf::new(mem);
        let seen = Mutex::new(u32::MAX);
        let ctx = Context::new(1);
        host::scope(|s| {
            let q = s.queue(&ctx, 0, QueueOrder::InOrder);
            let dq = s.device_queue(&ctx, 0);
            let (x, seen) = (&x, &seen);
            q.enqueue_kernel(ONE(), &[], move |item| {
                let w = line!() + 1;
                x.write(1);
                let r = line!() + 1;
                dq.enqueue_kernel(item, flags, ONE(), &[], move |_| *seen.lock().unwrap() = x.read());
                *lines.lock().unwrap() = (w, r);
            });
        });
        seen.into_inner().unwrap()
    }
}

// ---------------------------------------------------------------------
// Rule 1, device-side form: only fine-grained SVM
// ---------------------------------------------------------------------

/// With `CLK_ENQUEUE_FLAGS_NO_WAIT` the enqueue orders the parent's earlier
/// updates before the child only on fine-grained SVM (rule 1: "for
/// device-side queues ... only in the case of fine-grained SVM"): on a
/// `cl_mem` buffer and on coarse-grained SVM the child's read races with the
/// parent's write and cannot see it (one execution, the initial 0); on
/// fine-grained SVM, with or without atomics support, it sees 1, race-free.
#[test]
fn no_wait_orders_only_fine_grained_svm() {
    for mem in [Mem::Global, Mem::Coarse, Mem::Fine, Mem::FineWithoutAtomics] {
        let lines = Mutex::new((0, 0));
        let (outs, fails) = run(parent_writes_then_child_reads(mem, EnqueueFlags::NoWait, &lines));
        match mem {
            Mem::Global | Mem::Coarse => {
                assert_eq!(outs, vec![(0, 1, race())], "{mem:?}");
                let (w, r) = *lines.lock().unwrap();
                assert_eq!(race_lines(&fails[0]), vec![w, r], "{mem:?}");
                let f = &fails[0];
                assert!(f.accesses.iter().any(|a| a.unit.contains("of command")), "the child's work-item is named by its command: {f}");
            }
            Mem::Fine | Mem::FineWithoutAtomics => {
                assert_eq!(outs, vec![(1, 1, vec![])], "{mem:?}");
                assert!(fails.is_empty(), "{mem:?}");
            }
        }
    }
}

/// Rules 13 and 14: with `CLK_ENQUEUE_FLAGS_WAIT_KERNEL` or
/// `CLK_ENQUEUE_FLAGS_WAIT_WORK_GROUP` the end of the parent (or of its
/// work-group) happens before the child, whatever the memory: the child
/// sees 1, one execution, race-free.
#[test]
fn wait_kernel_and_wait_work_group_order_every_memory() {
    for flags in [EnqueueFlags::WaitKernel, EnqueueFlags::WaitWorkGroup] {
        for mem in [Mem::Global, Mem::Coarse, Mem::Fine, Mem::FineWithoutAtomics] {
            let lines = Mutex::new((0, 0));
            let (outs, fails) = run(parent_writes_then_child_reads(mem, flags, &lines));
            assert_eq!(outs, vec![(1, 1, vec![])], "{flags:?} {mem:?}");
            assert!(fails.is_empty());
        }
    }
}

/// A parent write *after* the enqueue is not ordered before a `NO_WAIT`
/// child even on fine-grained SVM (rule 1 covers the updates sequenced
/// before the enqueue): the child reads the initial value, a race; with
/// `WAIT_KERNEL` it reads the later write, race-free.
#[test]
fn parent_write_after_the_enqueue() {
    for (flags, expect) in [(EnqueueFlags::NoWait, vec![(0, 1, race())]), (EnqueueFlags::WaitKernel, vec![(1, 1, vec![])])] {
        let (outs, _) = run(move || {
            let x = SvmBuffer::<u32>::fine(1);
            let seen = Mutex::new(u32::MAX);
            let ctx = Context::new(1);
            host::scope(|s| {
                let q = s.queue(&ctx, 0, QueueOrder::InOrder);
                let dq = s.device_queue(&ctx, 0);
                let (x, seen) = (&x, &seen);
                q.enqueue_kernel(ONE(), &[], move |item| {
                    dq.enqueue_kernel(item, flags, ONE(), &[], move |_| *seen.lock().unwrap() = x.read(0));
                    x.write(0, 1);
                });
            });
            seen.into_inner().unwrap()
        });
        assert_eq!(outs, expect, "{flags:?}");
    }
}

// ---------------------------------------------------------------------
// Rule 14: the end of the enqueuing work-group, not of the others
// ---------------------------------------------------------------------

/// Two work-groups of two work-items each write `x[global id] = 1`; the
/// first work-item enqueues a `WAIT_WORK_GROUP` child reading `x[j]`. The
/// end of its own work-group (`j` = 1) is ordered before the child, the
/// other group's write (`j` = 2) is not: a race, and the child reads 0.
#[test]
fn wait_work_group_orders_only_the_enqueuing_group() {
    for (j, expect) in [(1usize, vec![(1, 1, vec![])]), (2, vec![(0, 1, race())])] {
        let (outs, _) = run(move || {
            let x = GlobalBuffer::<u32>::new(4);
            let seen = Mutex::new(u32::MAX);
            let ctx = Context::new(1);
            host::scope(|s| {
                let q = s.queue(&ctx, 0, QueueOrder::InOrder);
                let dq = s.device_queue(&ctx, 0);
                let (x, seen) = (&x, &seen);
                q.enqueue_kernel(NdRange::new([4], [2]), &[], move |item| {
                    x.write(item.global_id(0), 1);
                    if item.global_id(0) == 0 {
                        dq.enqueue_kernel(item, EnqueueFlags::WaitWorkGroup, ONE(), &[], move |_| *seen.lock().unwrap() = x.read(j));
                    }
                });
            });
            seen.into_inner().unwrap()
        });
        assert_eq!(outs, expect, "x[{j}]");
    }
}

// ---------------------------------------------------------------------
// Completion: a parent completes after its children
// ---------------------------------------------------------------------

/// The host waits for the parent's event; the child (`NO_WAIT`) and the
/// grandchild it enqueues write `x[1]` and `x[2]`: a kernel completes only
/// after its children (§3.2.3), so the host sees both, race-free, in the
/// one execution. The same through `clmm::launch` inside a host scope.
#[test]
fn a_kernel_completes_after_its_children() {
    for via_launch in [false, true] {
        let (outs, fails) = run(move || {
            let x = GlobalBuffer::<u32>::new(3);
            let ctx = Context::new(1);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 0);
                let x = &x;
                let kernel = move |item: &clmm::WorkItem| {
                    x.write(0, 1);
                    dq.enqueue_kernel(item, EnqueueFlags::NoWait, ONE(), &[], move |child| {
                        x.write(1, 1);
                        dq.enqueue_kernel(child, EnqueueFlags::NoWait, ONE(), &[], move |_| x.write(2, 1));
                    });
                };
                if via_launch {
                    launch(ONE(), kernel);
                } else {
                    s.queue(&ctx, 0, QueueOrder::InOrder).enqueue_kernel(ONE(), &[], kernel).wait();
                }
                (x.read(0), x.read(1), x.read(2))
            })
        });
        assert_eq!(outs, vec![((1, 1, 1), 1, vec![])], "via launch: {via_launch}");
        assert!(fails.is_empty());
    }
}

// ---------------------------------------------------------------------
// Rule 2: device-side events and markers
// ---------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq)]
enum Between {
    Nothing,
    Event,
    Marker,
}

/// The parent enqueues two children: the first writes `x`, the second reads
/// it, waiting for nothing, for the first's event, or for a marker on it.
#[test]
fn device_side_events_order_children() {
    for (between, expect) in [(Between::Nothing, vec![(0, 1, race())]), (Between::Event, vec![(1, 1, vec![])]), (Between::Marker, vec![(1, 1, vec![])])] {
        let (outs, _) = run(move || {
            let x = GlobalBuffer::<u32>::new(1);
            let seen = Mutex::new(u32::MAX);
            let ctx = Context::new(1);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 0);
                let (x, seen) = (&x, &seen);
                launch(ONE(), move |item| {
                    let first = dq.enqueue_kernel(item, EnqueueFlags::NoWait, ONE(), &[], move |_| x.write(0, 1));
                    let wait: Vec<ClkEvent> = match between {
                        Between::Nothing => vec![],
                        Between::Event => vec![first],
                        Between::Marker => vec![dq.enqueue_marker(item, &[first])],
                    };
                    dq.enqueue_kernel(item, EnqueueFlags::NoWait, ONE(), &wait, move |_| *seen.lock().unwrap() = x.read(0));
                });
            });
            seen.into_inner().unwrap()
        });
        assert_eq!(outs, expect, "{between:?}");
    }
}

// ---------------------------------------------------------------------
// Scopes: a parent and its children share device scope on a cl_mem buffer
// ---------------------------------------------------------------------

/// Message passing from a parent to its child through a device-scope flag
/// and a `cl_mem` buffer: "atomic operations from different kernel
/// instances, including a parent kernel and any number of child kernels
/// enqueued by that kernel, to access shared or disjoint locations in a
/// single cl_mem object" are guaranteed, so the flag's scope is inclusive
/// and the program is race-free. A `NO_WAIT` child runs concurrently with
/// the parent: it sees the flag 0 (data not read) or 1 with the data 1,
/// one execution each; a `WAIT_KERNEL` child only the latter.
#[test]
fn device_scope_is_inclusive_between_parent_and_child() {
    for (flags, expect) in [
        (EnqueueFlags::NoWait, vec![((0, u32::MAX), 1, vec![]), ((1, 1), 1, vec![])]),
        (EnqueueFlags::WaitKernel, vec![((1, 1), 1, vec![])]),
    ] {
        let (outs, fails) = run(move || {
            let data = GlobalBuffer::<u32>::new(1);
            let flag = AtomicU32::new(0);
            let seen = Mutex::new((u32::MAX, u32::MAX));
            let ctx = Context::new(1);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 0);
                let (data, flag, seen) = (&data, &flag, &seen);
                launch(ONE(), move |item| {
                    dq.enqueue_kernel(item, flags, ONE(), &[], move |_| {
                        let f = flag.load(Order::Acquire, Scope::Device);
                        let d = if f == 1 { data.read(0) } else { u32::MAX };
                        *seen.lock().unwrap() = (f, d);
                    });
                    data.write(0, 1);
                    flag.store(1, Order::Release, Scope::Device);
                });
            });
            seen.into_inner().unwrap()
        });
        assert_eq!(outs, expect, "{flags:?}");
        assert!(fails.is_empty());
    }
}

/// The same through two kernels the host enqueued (not parent and child):
/// device scope on a `cl_mem` buffer is not inclusive between them, so the
/// flag races.
#[test]
fn device_scope_is_not_inclusive_between_unrelated_kernels() {
    let (outs, _) = run(|| {
        let data = GlobalBuffer::<u32>::new(1);
        let flag = AtomicU32::new(0);
        let seen = Mutex::new(u32::MAX);
        let ctx = Context::new(1);
        host::scope(|s| {
            let q = s.queue(&ctx, 0, QueueOrder::OutOfOrder);
            q.enqueue_kernel(ONE(), &[], |_| *seen.lock().unwrap() = flag.load(Order::Acquire, Scope::Device));
            q.enqueue_kernel(ONE(), &[], |_| {
                data.write(0, 1);
                flag.store(1, Order::Release, Scope::Device);
            });
        });
        seen.into_inner().unwrap()
    });
    assert!(outs.iter().all(|(_, _, f)| f == &race()), "{outs:?}");
}

// ---------------------------------------------------------------------
// Children with local memory and barriers
// ---------------------------------------------------------------------

/// A child kernel of one work-group of two work-items sums the parent's
/// two values through local memory and a barrier: 3, one execution.
#[test]
fn a_child_with_local_memory_and_a_barrier() {
    let (outs, fails) = run(|| {
        let x = GlobalBuffer::<u32>::new(2);
        let sum = Mutex::new(0);
        let ctx = Context::new(1);
        host::scope(|s| {
            let dq = s.device_queue(&ctx, 0);
            let (x, sum) = (&x, &sum);
            launch(NdRange::new([2], [2]), move |item| {
                x.write(item.global_id(0), item.global_id(0) as u32 + 1);
                if item.global_id(0) == 0 {
                    dq.enqueue_kernel_with_local(
                        item,
                        EnqueueFlags::WaitKernel,
                        NdRange::new([2], [2]),
                        &[],
                        |_| LocalBuffer::<u32>::new(2),
                        move |c, tmp| {
                            let i = c.local_id(0);
                            tmp.write(i, x.read(i));
                            c.barrier(clmm::FenceFlags::LOCAL);
                            if i == 0 {
                                *sum.lock().unwrap() = tmp.read(0) + tmp.read(1);
                            }
                        },
                    );
                }
            });
        });
        sum.into_inner().unwrap()
    });
    assert_eq!(outs, vec![(3, 1, vec![])]);
    assert!(fails.is_empty());
}

// ---------------------------------------------------------------------
// Usage errors and deadlocks
// ---------------------------------------------------------------------

/// A parent that waits (spins) for a flag its `WAIT_KERNEL` child sets can
/// never end, so the child never starts: a deadlock that names the wait.
#[test]
fn a_parent_spinning_on_its_wait_kernel_child_deadlocks() {
    let f = *Builder::new()
        .check(|| {
            let flag = AtomicU32::new_svm(0);
            let ctx = Context::new(1);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 0);
                let flag = &flag;
                launch(ONE(), move |item| {
                    dq.enqueue_kernel(item, EnqueueFlags::WaitKernel, ONE(), &[], move |_| flag.store(1, Order::Release, Scope::AllSvmDevices));
                    while flag.load(Order::Acquire, Scope::AllSvmDevices) == 0 {
                        clmm::hint::spin_loop();
                    }
                });
            });
        })
        .expect_err("a deadlock");
    assert_eq!(f.kind, FailureKind::Deadlock, "{f}");
    assert!(f.to_string().contains("cannot start: it waits for the end of the kernel launched by the host (model closure) (CLK_ENQUEUE_FLAGS_WAIT_KERNEL)"), "{f}");
}

/// A work-item enqueueing on the device queue of another device, and a
/// device-side marker without a wait list, are usage errors that say so.
#[test]
fn usage_errors() {
    let f = *Builder::new()
        .check(|| {
            let ctx = Context::new(2);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 1);
                launch(ONE(), move |item| {
                    dq.enqueue_kernel(item, EnqueueFlags::NoWait, ONE(), &[], |_| {});
                });
            });
        })
        .expect_err("another device");
    assert!(f.to_string().contains("a work-item of device 0 enqueues on a device queue of device 1"), "{f}");
    let f = *Builder::new()
        .check(|| {
            let ctx = Context::new(1);
            host::scope(|s| {
                let dq = s.device_queue(&ctx, 0);
                launch(ONE(), move |item| {
                    dq.enqueue_marker(item, &[]);
                });
            });
        })
        .expect_err("an empty wait list");
    assert!(f.to_string().contains("CLK_INVALID_EVENT_WAIT_LIST"), "{f}");
}

// ---------------------------------------------------------------------
// Native runs
// ---------------------------------------------------------------------

/// Two work-groups of two work-items write `x[global id] = 1`; work-item 0
/// enqueues a `WAIT_KERNEL` child that sums `x[0]`, `x[1]` and `x[3]` into
/// `x[0]`, work-item 2 a `WAIT_WORK_GROUP` child that adds `x[3]` to
/// `x[2]`. Both children read `x[3]`, which only the second group wrote:
/// ordered before both (the kernel's end, the second group's end).
fn two_children_of_two_groups() -> (u32, u32) {
    let x = GlobalBuffer::<u32>::new(4);
    let ctx = Context::new(1);
    host::scope(|s| {
        let q = s.queue(&ctx, 0, QueueOrder::InOrder);
        let dq = s.device_queue(&ctx, 0);
        let x = &x;
        q.enqueue_kernel(NdRange::new([4], [2]), &[], move |item| {
            x.write(item.global_id(0), 1);
            match item.global_id(0) {
                0 => {
                    dq.enqueue_kernel(item, EnqueueFlags::WaitKernel, ONE(), &[], move |_| x.write(0, x.read(0) + x.read(1) + x.read(3)));
                }
                2 => {
                    dq.enqueue_kernel(item, EnqueueFlags::WaitWorkGroup, ONE(), &[], move |_| x.write(2, x.read(2) + x.read(3)));
                }
                _ => {}
            }
        })
        .wait();
        (x.read(0), x.read(2))
    })
}

/// Outside `clmm::model` the same code runs natively (children start after
/// their parent's end or their work-group's end, and the parent's event
/// completes after them); inside, it is race-free with one execution.
#[test]
fn native_and_model_runs_agree() {
    for _ in 0..20 {
        assert_eq!(two_children_of_two_groups(), (3, 2));
    }
    let (outs, fails) = run(two_children_of_two_groups);
    assert_eq!(outs, vec![((3, 2), 1, vec![])]);
    assert!(fails.is_empty());
}
