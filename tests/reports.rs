//! Golden reports: the report of each failure kind, as a user sees it (the
//! panic message of `clmm::model`, `Display` of `Failure`), compared with a
//! reviewed snapshot in `tests/snapshots/`. Replay fingerprints are
//! normalised (they change with any detail of the graph encoding).
//! Update after an intended change with `INSTA_UPDATE=always cargo test
//! --release --test reports` and review the diff.

use clmm::{atomic_work_item_fence, launch, launch_with_local, AtomicI32, Builder, FailureKind, FenceFlags, GlobalBuffer, LocalBuffer, NdRange, Order, Scope};

fn report<F: Fn() + Sync>(b: Builder, f: F, kind: FailureKind) -> String {
    let failure = b.check(f).expect_err("the program has a bug");
    assert_eq!(failure.kind, kind, "{failure}");
    normalise(&failure.to_string())
}

fn normalise(s: &str) -> String {
    let mut out = String::new();
    for line in s.lines() {
        let line = match line.find("clmm2:") {
            Some(i) if line.len() >= i + 6 + 16 => format!("{}clmm2:<fingerprint>{}", &line[..i], &line[i + 6 + 16..]),
            _ => line.to_string(),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out
}

#[test]
fn golden_data_race_non_atomic() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let buf = GlobalBuffer::<u32>::new(1);
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    buf.write(0, 1);
                } else {
                    let _ = buf.read(0);
                }
            });
        },
        FailureKind::DataRace
    ));
}

#[test]
fn golden_data_race_non_inclusive_scopes() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let data = GlobalBuffer::<u32>::new(1);
            let flag = AtomicI32::new(0);
            launch(NdRange::new([2], [1]), |it| {
                if it.group_id(0) == 0 {
                    data.write(0, 42);
                    flag.store(1, Order::Release, Scope::WorkGroup);
                } else if flag.load(Order::Acquire, Scope::WorkGroup) == 1 {
                    let _ = data.read(0);
                }
            });
        },
        FailureKind::DataRace
    ));
}

#[test]
fn golden_data_race_relaxed_flag() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let data = GlobalBuffer::<u32>::new(1);
            let flag = AtomicI32::new(0);
            launch(NdRange::new([2], [1]), |it| {
                if it.group_id(0) == 0 {
                    data.write(0, 42);
                    flag.store(1, Order::Relaxed, Scope::Device);
                } else if flag.load(Order::Acquire, Scope::Device) == 1 {
                    let _ = data.read(0);
                }
            });
        },
        FailureKind::DataRace
    ));
}

#[test]
fn golden_data_race_barrier_flags() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            launch_with_local(
                NdRange::new([2], [2]),
                |_| LocalBuffer::<u32>::new(2),
                |it, tmp| {
                    let l = it.local_id(0);
                    tmp.write(l, l as u32);
                    it.barrier(FenceFlags::GLOBAL);
                    let _ = tmp.read(1 - l);
                },
            );
        },
        FailureKind::DataRace
    ));
}

#[test]
fn golden_barrier_divergence() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            launch(NdRange::new([2], [2]), |it| {
                if it.local_id(0) == 0 {
                    it.barrier(FenceFlags::LOCAL);
                }
            });
        },
        FailureKind::BarrierDivergence
    ));
}

#[test]
fn golden_deadlock_spin_forever() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let flag = AtomicI32::new(0);
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    flag.store(2, Order::Release, Scope::Device);
                } else {
                    while flag.load(Order::Acquire, Scope::Device) != 1 {
                        clmm::hint::spin_loop();
                    }
                }
            });
        },
        FailureKind::Deadlock
    ));
}

#[test]
fn golden_panic() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let x = AtomicI32::new(0);
            launch(NdRange::new([2], [1]), |_| {
                let old = x.fetch_add(1, Order::Relaxed, Scope::Device);
                assert!(old < 1, "the counter was already {old}");
            });
        },
        FailureKind::Panic
    ));
}

#[test]
fn golden_livelock() {
    insta::assert_snapshot!(report(
        Builder::new().max_steps(5),
        || {
            let flag = AtomicI32::new(0);
            launch(NdRange::new([1], [1]), |_| while flag.load(Order::Acquire, Scope::Device) == 0 {});
        },
        FailureKind::Livelock
    ));
}

#[test]
fn golden_local_memory_misuse() {
    use std::sync::{Arc, Mutex};
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
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
        },
        FailureKind::LocalMemoryMisuse
    ));
}

#[test]
fn golden_replay_error() {
    insta::assert_snapshot!(report(Builder::new().replay("clmm0:1234:0"), || {}, FailureKind::Replay));
}

#[test]
fn dot_picture_is_written_for_a_race() {
    let dir = std::env::temp_dir().join(format!("clmm-dot-test-{}", std::process::id()));
    let f = Builder::new()
        .dot_dir(&dir)
        .check(|| {
            let buf = GlobalBuffer::<u32>::new(1);
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    buf.write(0, 1);
                } else {
                    let _ = buf.read(0);
                }
            });
        })
        .unwrap_err();
    let path = f.dot_file.clone().expect("the report says where the picture is");
    let dot = std::fs::read_to_string(&path).unwrap();
    assert!(dot.starts_with("digraph clmm {"), "{dot}");
    assert!(dot.contains("cluster_group0") && dot.contains("cluster_group1"), "{dot}");
    assert!(dot.contains("label=\"race\""), "{dot}");
    assert!(f.to_string().contains(&format!("picture: {path}")));
    // Rendered by Graphviz when it is installed (.ci/run installs it when
    // the package mirror is reachable): the racing edge is in the picture.
    match std::process::Command::new("dot").arg("-Tsvg").arg(&path).output() {
        Ok(out) => {
            assert!(out.status.success(), "dot -Tsvg failed: {}", String::from_utf8_lossy(&out.stderr));
            let svg = String::from_utf8_lossy(&out.stdout);
            assert!(svg.contains("<svg") && svg.contains(">race<"), "the race edge is drawn");
        }
        Err(_) => eprintln!("Graphviz (dot) not installed: the DOT text was checked, not its rendering"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn golden_livelock_long() {
    // 300 steps: the trace shows the first 8 and the last 24, and the
    // replay string writes the loop once.
    insta::assert_snapshot!(report(
        Builder::new().max_steps(300),
        || {
            let x = AtomicI32::new(0);
            launch(NdRange::new([1], [1]), |_| {
                let mut i = 0;
                loop {
                    x.store(i, Order::Relaxed, Scope::Device);
                    i = x.load(Order::Relaxed, Scope::Device) + 1;
                }
            });
        },
        FailureKind::Livelock
    ));
}

/// A closure that reads state outside clmm (here a counter of its runs):
/// the rerun asks for another operation than the one replayed.
#[test]
fn golden_non_determinism() {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            let x = AtomicI32::new(0);
            let second = RUNS.fetch_add(1, SeqCst) > 0;
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    x.store(1, Order::Relaxed, Scope::Device);
                } else if second {
                    x.store(2, Order::Release, Scope::Device);
                } else {
                    let _ = x.load(Order::Relaxed, Scope::Device);
                }
            });
        },
        FailureKind::NonDeterminism
    ));
}

/// Message passing through local memory with release and acquire fences
/// that have only CLK_GLOBAL_MEM_FENCE: the why names the fence and the
/// flag it needs (it said "no fence makes them one" until session 56).
#[test]
fn golden_data_race_fence_flags() {
    insta::assert_snapshot!(report(
        Builder::new(),
        || {
            launch_with_local(
                NdRange::new([2], [2]),
                |_| (LocalBuffer::<u32>::new(1), AtomicI32::new(0)),
                |it, (data, flag)| {
                    if it.local_id(0) == 0 {
                        data.write(0, 1);
                        atomic_work_item_fence(FenceFlags::GLOBAL, Order::Release, Scope::WorkGroup);
                        flag.store(1, Order::Relaxed, Scope::WorkGroup);
                    } else if flag.load(Order::Relaxed, Scope::WorkGroup) == 1 {
                        atomic_work_item_fence(FenceFlags::GLOBAL, Order::Acquire, Scope::WorkGroup);
                        let _ = data.read(0);
                    }
                },
            );
        },
        FailureKind::DataRace
    ));
}

/// A picture that cannot be written says why, and no Graphviz command
/// names the error text as a file (the report read "dot -Tsvg (could not
/// write ...)" until session 56).
#[test]
fn dot_picture_that_cannot_be_written_says_why() {
    let f = Builder::new()
        .dot_dir("/proc/clmm-no-such-dir")
        .check(|| {
            let buf = GlobalBuffer::<u32>::new(1);
            launch(NdRange::new([2], [1]), |it| {
                if it.global_id(0) == 0 {
                    buf.write(0, 1);
                } else {
                    let _ = buf.read(0);
                }
            });
        })
        .unwrap_err();
    let text = f.to_string();
    let line = text.lines().find(|l| l.starts_with("picture: ")).expect("a picture line");
    assert!(line.starts_with("picture: (could not write /proc/clmm-no-such-dir/") && !line.contains("Graphviz"), "{line}");
}
