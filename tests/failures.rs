//! Each failure kind, with the report's kind, units and source locations;
//! and a kernel-sized test: a work-group tree reduction in local memory.

use clmm::{launch, launch_with_local, AtomicI32, Builder, FailureKind, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

mod common;
use common::fail;

#[test]
fn data_race_names_both_accesses_and_sites() {
    let f = fail(|| {
        let buf = GlobalBuffer::<u32>::new(1);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                buf.write(0, 1);
            } else {
                let _ = buf.read(0);
            }
        });
    });
    assert_eq!(f.kind, FailureKind::DataRace);
    assert_eq!(f.accesses.len(), 2);
    assert!(f.accesses.iter().all(|a| a.site.file.ends_with("tests/failures.rs")), "{f}");
    assert!(f.accesses.iter().any(|a| a.unit.contains("global (0)")) && f.accesses.iter().any(|a| a.unit.contains("global (1)")), "{f}");
    assert!(f.to_string().contains("CLMM_REPLAY='clmm2:"), "{f}");
}

#[test]
fn scoped_race_between_work_group_and_device_scope() {
    let f = fail(|| {
        let x = AtomicI32::new(0);
        launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::WorkGroup);
            } else {
                let _ = x.load(Order::Relaxed, Scope::Device);
            }
        });
    });
    assert_eq!(f.kind, FailureKind::DataRace);
    assert!(f.reason.as_deref().unwrap_or("").contains("scopes differ"), "{f}");
}

#[test]
fn panic_is_reported_with_its_message_and_location() {
    let f = fail(|| {
        let x = AtomicI32::new(0);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
            } else {
                assert_eq!(x.load(Order::Relaxed, Scope::Device), 0, "saw the store");
            }
        });
    });
    assert_eq!(f.kind, FailureKind::Panic);
    assert!(f.message.contains("saw the store"), "{f}");
    assert!(f.panic_site.as_ref().is_some_and(|s| s.file.ends_with("failures.rs")), "{f}");
}

#[test]
fn barrier_divergence_inside_if() {
    let f = fail(|| {
        launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                it.barrier(FenceFlags::LOCAL);
            }
        });
    });
    assert_eq!(f.kind, FailureKind::BarrierDivergence);
    assert!(f.message.contains("finished"), "{f}");
}

#[test]
#[allow(clippy::if_same_then_else)] // two call sites of the same barrier: the point of the test
fn barrier_divergence_two_call_sites() {
    let f = fail(|| {
        launch(NdRange::new([2], [2]), |it| {
            if it.local_id(0) == 0 {
                it.barrier(FenceFlags::LOCAL);
            } else {
                it.barrier(FenceFlags::LOCAL);
            }
        });
    });
    assert_eq!(f.kind, FailureKind::BarrierDivergence);
}

#[test]
#[allow(clippy::if_same_then_else)] // two call sites, one barrier id: the point of the test
fn barrier_with_id_joins_two_call_sites() {
    Builder::new()
        .check(|| {
            launch(NdRange::new([2], [2]), |it| {
                if it.local_id(0) == 0 {
                    it.barrier_with_id("b", FenceFlags::LOCAL);
                } else {
                    it.barrier_with_id("b", FenceFlags::LOCAL);
                }
            });
        })
        .expect("one barrier written in two branches");
}

#[test]
fn livelock_without_spin_hint_is_reported() {
    let f = *Builder::new()
        .max_steps(200)
        .check(|| {
            let flag = AtomicI32::new(0);
            launch(NdRange::new([1], [1]), |_| while flag.load(Order::Acquire, Scope::Device) == 0 {});
        })
        .expect_err("never ends");
    assert_eq!(f.kind, FailureKind::Livelock);
    assert!(f.message.contains("spin_loop"), "{f}");
}

#[test]
fn spin_loop_with_hint_terminates() {
    let stats = Builder::new()
        .check(|| {
            let flag = AtomicI32::new(0);
            let data = GlobalBuffer::<i32>::new(1);
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    data.write(0, 7);
                    flag.store(1, Order::Release, Scope::Device);
                } else {
                    while flag.load(Order::Acquire, Scope::Device) == 0 {
                        clmm::hint::spin_loop();
                    }
                    assert_eq!(data.read(0), 7);
                }
            });
        })
        .expect("correct spin wait");
    assert!(stats.complete >= 1);
}

#[test]
fn local_memory_of_another_group_is_misuse() {
    use std::sync::{Arc, Mutex};
    let f = fail(|| {
        let all: Mutex<Vec<Arc<LocalBuffer<i32>>>> = Mutex::new(Vec::new());
        launch_with_local(
            NdRange::new([2], [1]),
            |_| {
                let b = Arc::new(LocalBuffer::<i32>::new(1));
                all.lock().unwrap().push(b.clone());
                b
            },
            |it, _mine| {
                if it.group_id(0) == 1 {
                    let other = all.lock().unwrap()[0].clone();
                    other.write(0, 1);
                }
            },
        );
    });
    assert_eq!(f.kind, FailureKind::LocalMemoryMisuse);
    assert!(f.message.contains("local memory of work-group 0") && f.message.contains("group (1)"), "{f}");
}

/// A compare-exchange whose failure order is stronger than its success
/// order (`compare_exchange(.., Relaxed, SeqCst, ..)`) is refused, like a
/// release failure order (C11 7.17.7.4, OpenCL C 2.0 §6.13.11.7.5: "The
/// failure argument shall be no stronger than the success argument"): a
/// panic naming both orders, at the user's call, in a model run and
/// natively; a user-acceptance finding (it was accepted). Every allowed
/// pair passes: the failure order compared with the success order's load
/// part (release counts as relaxed, acq_rel as acquire).
#[test]
fn compare_exchange_failure_order_stronger_than_success_is_refused() {
    use Order::*;
    let refused = [(Relaxed, Acquire), (Relaxed, SeqCst), (Release, Acquire), (Release, SeqCst), (Acquire, SeqCst), (AcqRel, SeqCst)];
    for (success, failure) in refused {
        let line = line!() + 4;
        let f = fail(|| {
            launch(NdRange::new([1], [1]), |_| {
                let x = AtomicI32::new(0);
                let _ = x.compare_exchange(0, 1, success, failure, Scope::Device);
            });
        });
        assert_eq!(f.kind, FailureKind::Panic, "{f}");
        let why = format!("the failure order of a compare-exchange ({}) cannot be stronger than its success order ({})", failure.cl_name(), success.cl_name());
        assert!(f.message.contains(&why), "{f}");
        assert!(f.panic_site.as_ref().is_some_and(|s| s.file.ends_with("tests/failures.rs") && s.line == line), "{f}");
        let native = std::panic::catch_unwind(|| AtomicI32::new(0).compare_exchange_weak(0, 1, success, failure, Scope::Device)).expect_err("refused natively");
        assert!(native.downcast_ref::<String>().is_some_and(|m| m.contains(&why)), "{success:?} {failure:?}");
    }
    let f = fail(|| {
        let _ = AtomicI32::new(0).compare_exchange(0, 1, AcqRel, Release, Scope::Device);
    });
    assert!(f.message.contains("the failure order of a compare-exchange cannot be memory_order_release"), "{f}");
    for success in [Relaxed, Acquire, Release, AcqRel, SeqCst] {
        for failure in [Relaxed, Acquire, SeqCst] {
            if !refused.contains(&(success, failure)) {
                Builder::new()
                    .check(|| {
                        let x = AtomicI32::new(0);
                        assert_eq!(x.compare_exchange(0, 1, success, failure, Scope::Device), Ok(0));
                        assert_eq!(x.compare_exchange(0, 2, success, failure, Scope::Device), Err(1));
                    })
                    .unwrap_or_else(|f| panic!("{success:?} {failure:?} refused: {}", f.message));
            }
        }
    }
}

/// `NdRange::with_offset` with another number of dimensions than the
/// range, or with global ids beyond `usize::MAX`, panics at the user's
/// call, not in clmm-atomic/src/ndrange.rs (user-acceptance findings), and
/// the report says "clmm:" once.
#[test]
fn ndrange_usage_errors_panic_at_the_users_call() {
    let line = line!() + 2;
    let f = fail(|| {
        launch(NdRange::new([4], [2]).with_offset([1, 1]), |_| {});
    });
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("the offset has 2 dimensions, the NDRange 1"), "{f}");
    assert!(f.panic_site.as_ref().is_some_and(|s| s.file.ends_with("tests/failures.rs") && s.line == line), "{f}");
    assert_eq!(f.to_string().matches("clmm: ").count(), 1, "{f}");
    // An offset whose global ids overflow usize (they wrapped silently to
    // 0): refused at the user's call, in a model run and natively; the
    // largest offset that fits is accepted.
    let line = line!() + 2;
    let f = fail(|| {
        launch(NdRange::new([2], [1]).with_offset([usize::MAX]), |it| it.global_id(0));
    });
    assert!(f.message.contains("offset 18446744073709551615 in dimension 0 overflows"), "{f}");
    assert!(f.panic_site.as_ref().is_some_and(|s| s.file.ends_with("tests/failures.rs") && s.line == line), "{f}");
    let native = std::panic::catch_unwind(|| NdRange::new([4, 3], [1, 1]).with_offset([0, usize::MAX - 1])).expect_err("refused natively");
    assert!(native.downcast_ref::<String>().is_some_and(|m| m.contains("in dimension 1 overflows")));
    let ids = launch(NdRange::new([2, 3], [1, 1]).with_offset([usize::MAX - 1, usize::MAX - 2]), |it| (it.global_id(0), it.global_id(1), it.global_linear_id()));
    assert_eq!(ids.last(), Some(&(usize::MAX, usize::MAX, 5)));
}

#[test]
fn non_determinism_is_reported() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let f = fail(|| {
        let x = AtomicI32::new(0);
        let odd = RUNS.fetch_add(1, SeqCst) % 2 == 1;
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
            } else {
                let _ = x.load(Order::Relaxed, Scope::Device);
                if odd {
                    x.store(2, Order::Relaxed, Scope::Device);
                } else {
                    let _ = x.load(Order::Relaxed, Scope::Device);
                }
            }
        });
    });
    assert_eq!(f.kind, FailureKind::NonDeterminism);
}

/// A work-group tree reduction in local memory (4 work-items, 2 groups).
fn reduction(barrier: bool, flags: FenceFlags) -> impl Fn() + Sync {
    move || {
        let input = GlobalBuffer::from_slice(&[1u32, 2, 3, 4]);
        let out = GlobalBuffer::<u32>::new(2);
        launch_with_local(NdRange::new([4], [2]), |_| LocalBuffer::<u32>::new(2), |it, scratch| {
            let l = it.local_id(0);
            scratch.write(l, input.read(it.global_id(0)));
            if barrier {
                it.barrier(flags);
            }
            let mut stride = it.local_size(0) / 2;
            while stride > 0 {
                if l < stride {
                    let v = scratch.read(l) + scratch.read(l + stride);
                    scratch.write(l, v);
                }
                if barrier {
                    it.barrier(flags);
                }
                stride /= 2;
            }
            if l == 0 {
                out.write(it.group_id(0), scratch.read(0));
            }
        });
        assert_eq!(out.to_vec(), vec![3, 7]);
    }
}

#[test]
fn reduction_correct_passes() {
    let stats = Builder::new().check(reduction(true, FenceFlags::LOCAL)).expect("correct reduction");
    assert_eq!(stats.complete, 1);
}

#[test]
fn reduction_without_barrier_races() {
    let f = fail(reduction(false, FenceFlags::LOCAL));
    assert_eq!(f.kind, FailureKind::DataRace);
    assert!(f.message.contains("local memory"), "{f}");
}

#[test]
fn reduction_with_global_flags_races_on_local_memory() {
    let f = fail(reduction(true, FenceFlags::GLOBAL));
    assert_eq!(f.kind, FailureKind::DataRace);
    assert!(f.message.contains("local memory"), "{f}");
}

/// Each started unit has a coroutine stack of its own, two memory mappings
/// (Linux's `vm.max_map_count` limits them: `runtime::max_live_units`).
/// Work-items that run one after another share a few stacks, so a launch
/// of more work-items than the limit passes; work-items that all wait at
/// one barrier run at once, and past the limit that is an
/// `ExplorationLimit` failure that names it. Until session 56 every
/// work-item of a launch took a stack when the launch began, and 32,768
/// work-items panicked outside `check` (the stack's `mmap` failed). Where
/// the limit is unknown (no such file), nothing to check.
#[test]
fn launch_past_the_memory_mappings() {
    let max = clmm_check::runtime::max_live_units();
    if max == usize::MAX {
        return;
    }
    let s = Builder::new()
        .check(move || {
            let g = GlobalBuffer::<u32>::new(max + 1);
            launch(NdRange::new([max + 1], [64]), |it| g.write(it.global_id(0), 1));
            assert_eq!(g.read(max), 1);
        })
        .unwrap_or_else(|f| panic!("{}", f.message));
    assert_eq!(s.complete, 1);
    let f = *Builder::new()
        .check(move || {
            launch(NdRange::new([max + 1], [max + 1]), |it| it.barrier(FenceFlags::LOCAL));
        })
        .expect_err("too many work-items wait at once");
    assert_eq!(f.kind, FailureKind::ExplorationLimit, "{}", f.message);
    assert!(f.message.contains(&format!("{max} units have started and not finished")) && f.message.contains("vm.max_map_count"), "{}", f.message);
}

/// A unit that overflows its coroutine stack ends the process (nothing
/// can stop it cleanly there), but first says which unit, the stack's
/// size and how to raise it: the process died with a bare "Segmentation
/// fault" before. The overflow runs in a child process: this test binary
/// again, with `CLMM_TEST_OVERFLOW_CHILD` set.
#[test]
fn stack_overflow_names_the_unit_and_the_setting() {
    if std::env::var_os("CLMM_TEST_OVERFLOW_CHILD").is_some() {
        #[inline(never)]
        fn deep(n: u64) -> u64 {
            let a = std::hint::black_box([n; 512]);
            if n == 0 { a[7] } else { deep(n - 1).wrapping_add(a[n as usize % 512]) }
        }
        let _ = Builder::new().stack_size(64 * 1024).check(|| {
            launch(NdRange::new([1], [1]), |_| {
                std::hint::black_box(deep(1_000_000));
            });
        });
        unreachable!("the unit's stack overflows");
    }
    let out = std::process::Command::new(std::env::current_exe().expect("this test binary"))
        .args(["--exact", "stack_overflow_names_the_unit_and_the_setting", "--nocapture", "--test-threads=1"])
        .env("CLMM_TEST_OVERFLOW_CHILD", "1")
        .output()
        .expect("the child runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child ends with the overflow: {err}");
    assert!(err.contains("clmm: unit 1 overflowed its coroutine stack of 65536 bytes") && err.contains("CLMM_STACK_SIZE"), "{err}");
}

/// `launch` from inside a kernel: OpenCL C has no launch that waits from
/// a work-item (device-side enqueue does not wait), so it is refused with a
/// panic at the call that says what to use instead. It ran as a nested
/// blocking launch, and its work-items had the same names as the outer
/// kernel's in reports.
#[test]
fn launch_from_a_work_item_is_refused() {
    let f = *Builder::new()
        .check(|| {
            launch(NdRange::new([2], [1]), |_| {
                launch(NdRange::new([2], [1]), |_| {}); // NESTED_LAUNCH
            });
        })
        .expect_err("a nested launch");
    assert_eq!(f.kind, FailureKind::Panic, "{f}");
    assert!(f.message.contains("launch called from inside a kernel") && f.message.contains("DeviceQueue"), "{}", f.message);
    let line = include_str!("failures.rs").lines().position(|l| l.contains(concat!("NESTED", "_LAUNCH"))).expect("the marked line") + 1;
    let site = f.panic_site.as_ref().expect("the call's site");
    assert!(site.file.ends_with("tests/failures.rs") && site.line as usize == line, "{f}");
}
