//! Replay: the string of a failure report reruns exactly that execution,
//! with backtraces of the racing accesses that name this file; strings that
//! do not fit get a clear error.

mod common;

use clmm::{launch, AtomicI32, AtomicU32, Builder, FailureKind, GlobalBuffer, NdRange, Order, Scope};

fn mp(scope: Scope) -> impl Fn() + Sync {
    move || {
        let data = GlobalBuffer::<u32>::new(1);
        let flag = clmm::AtomicU32::new(0);
        launch(NdRange::new([2], [1]), |item| {
            if item.group_id(0) == 0 {
                data.write(0, 42);
                flag.store(1, Order::Release, scope);
            } else if flag.load(Order::Acquire, scope) == 1 {
                let _ = data.read(0);
            }
        });
    }
}

fn sb_panics() -> impl Fn() + Sync {
    || {
        let (x, y) = (clmm::AtomicI32::new(0), clmm::AtomicI32::new(0));
        let r = launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                x.store(1, Order::Relaxed, Scope::Device);
                y.load(Order::Relaxed, Scope::Device)
            } else {
                y.store(1, Order::Relaxed, Scope::Device);
                x.load(Order::Relaxed, Scope::Device)
            }
        });
        assert!(r != vec![0, 0], "store buffering seen");
    }
}

#[test]
fn replay_reproduces_the_race_with_backtraces() {
    let first = Builder::new().check(mp(Scope::WorkGroup)).unwrap_err();
    assert_eq!(first.kind, FailureKind::DataRace);
    assert!(first.backtraces.is_empty(), "backtraces are captured during a replay only");
    assert!(first.replay.starts_with("clmm2:"), "{}", first.replay);
    let again = Builder::new().replay(first.replay.clone()).check(mp(Scope::WorkGroup)).unwrap_err();
    assert_eq!(again.kind, FailureKind::DataRace, "{again}");
    assert_eq!(again.accesses, first.accesses);
    assert_eq!(again.trace, first.trace);
    assert_eq!(again.backtraces.len(), 2, "{again}");
    for b in &again.backtraces {
        assert!(b.contains("tests/replay.rs"), "the backtrace names the test's source file:\n{b}");
    }
    let text = again.to_string();
    assert!(text.contains("backtrace of access 1:") && text.contains("backtrace of access 2:"), "{text}");
}

#[test]
fn replay_reproduces_a_panic_with_its_backtrace() {
    let first = Builder::new().check(sb_panics()).unwrap_err();
    assert_eq!(first.kind, FailureKind::Panic);
    let again = Builder::new().replay(first.replay.clone()).check(sb_panics()).unwrap_err();
    assert_eq!(again.kind, FailureKind::Panic, "{again}");
    assert_eq!(again.message, first.message);
    assert_eq!(again.backtraces.len(), 1, "{again}");
    assert!(again.backtraces[0].contains("tests/replay.rs"), "{}", again.backtraces[0]);
}

#[test]
fn replay_string_from_another_test_is_refused() {
    let race = Builder::new().check(mp(Scope::WorkGroup)).unwrap_err();
    let other = Builder::new().replay(race.replay.clone()).check(sb_panics()).unwrap_err();
    assert_eq!(other.kind, FailureKind::Replay, "{other}");
    assert!(other.message.contains("another test"), "{}", other.message);
}

/// A replay string whose step makes an RMW read a store that is not there
/// (a string of another program): a `Replay` failure, not a panic inside
/// the checker (the RMW's write part was added without a source).
#[test]
fn replay_string_of_another_program_on_an_rmw_is_refused() {
    let fetch_add = || {
        let x = AtomicU32::new(0);
        launch(NdRange::new([1], [1]), |_| {
            x.fetch_add(1, Order::Relaxed, Scope::Device);
        });
    };
    let race = Builder::new().check(mp(Scope::WorkGroup)).unwrap_err();
    for s in [race.replay.clone(), "clmm2:0000000000000000:0,1ci0".to_string()] {
        let f = Builder::new().replay(s).check(fetch_add).unwrap_err();
        assert_eq!(f.kind, FailureKind::Replay, "{f}");
    }
}

#[test]
fn malformed_and_old_replay_strings_are_refused() {
    let f = Builder::new().replay("not a replay").check(mp(Scope::Device)).unwrap_err();
    assert_eq!(f.kind, FailureKind::Replay);
    assert!(f.message.contains("not a clmm replay string"), "{}", f.message);
    let f = Builder::new().replay("clmm0:00:0").check(mp(Scope::Device)).unwrap_err();
    assert!(f.message.contains("format \"clmm0\""), "{}", f.message);
    let f = Builder::new().replay("clmm1:0000000000000000:0,1x").check(mp(Scope::Device)).unwrap_err();
    assert!(f.message.contains("malformed replay string at step 1"), "{}", f.message);
}

#[test]
fn replaying_a_passing_execution_says_so() {
    // The race's string replayed against the fixed kernel: the same steps
    // exist (same program shape) but the execution passes.
    let race = Builder::new().check(mp(Scope::WorkGroup)).unwrap_err();
    let f = Builder::new().replay(race.replay.clone()).check(mp(Scope::Device)).unwrap_err();
    assert_eq!(f.kind, FailureKind::Replay, "{f}");
}

/// Load buffering where two reads of one work-item read one write
/// porf-after them: the second reads the write the first was promised.
/// The failure exists only in that execution, and its string replays it.
fn two_reads_of_one_promise() -> impl Fn() + Sync {
    || assert!(common::two_reads_of_one_write() != (2, 2, 2), "both reads saw the write that depends on them")
}

#[test]
fn replay_reproduces_a_failure_that_reads_a_promise_twice() {
    let first = Builder::new().check(two_reads_of_one_promise()).unwrap_err();
    assert_eq!(first.kind, FailureKind::Panic, "{first}");
    assert!(first.message.contains("both reads saw the write that depends on them"), "{first}");
    let again = Builder::new().replay(first.replay.clone()).check(two_reads_of_one_promise()).unwrap_err();
    assert_eq!(again.kind, FailureKind::Panic, "{again}");
    assert_eq!((again.message.as_str(), again.trace.as_str()), (first.message.as_str(), first.trace.as_str()));
}

/// Load buffering through RMW reads alone (`a = fetch_add(x, 1); y = 1 ||
/// b = fetch_add(y, 1); x = 1`, both reading the other's store): the
/// failure exists only in that execution, where an RMW's write part was
/// placed in coherence before the store it reads. Its string records
/// that place (`c` after the read's `v`), and replays it.
fn rmw_cycle() -> impl Fn() + Sync {
    || {
        let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
        let r = launch(NdRange::new([2], [1]), |it| {
            let (from, to) = if it.global_id(0) == 0 { (&x, &y) } else { (&y, &x) };
            let v = from.fetch_add(1, Order::Relaxed, Scope::Device);
            to.store(1, Order::Relaxed, Scope::Device);
            v
        });
        assert!(r != [1, 1], "both RMWs read the store that depends on them");
    }
}

#[test]
fn replay_reproduces_a_failure_of_an_rmw_cycle() {
    let first = Builder::new().speculate_rmw(true).check(rmw_cycle()).unwrap_err();
    assert_eq!(first.kind, FailureKind::Panic, "{first}");
    assert!(first.replay.contains('v') && first.replay.contains('c'), "{}", first.replay);
    let again = Builder::new().speculate_rmw(true).replay(first.replay.clone()).check(rmw_cycle()).unwrap_err();
    assert_eq!(again.kind, FailureKind::Panic, "{again}");
    assert_eq!((again.message.as_str(), again.trace.as_str()), (first.message.as_str(), first.trace.as_str()));
}

/// A race in the middle of a long loop: the report shows the loop's first
/// and last events and those around the racing write, the replay string
/// writes the loop once, and replaying it reproduces the race.
fn race_in_a_long_loop() -> impl Fn() + Sync {
    || {
        let x = AtomicI32::new(0);
        let data = GlobalBuffer::<u32>::new(1);
        launch(NdRange::new([2], [1]), |it| {
            if it.global_id(0) == 0 {
                for i in 0..100 {
                    x.store(i, Order::Relaxed, Scope::Device);
                    let _ = x.load(Order::Relaxed, Scope::Device);
                    if i == 50 {
                        data.write(0, 1);
                    }
                }
            } else {
                let _ = data.read(0);
            }
        });
    }
}

#[test]
fn a_long_execution_has_a_short_trace_and_replay_string() {
    let first = Builder::new().check(race_in_a_long_loop()).unwrap_err();
    assert_eq!(first.kind, FailureKind::DataRace, "{first}");
    // Unit 1: 201 events; shown: 1.0 to 1.7, 1.100 to 1.104 (the write
    // is 1.102), 1.177 to 1.200; the two runs between are one line each.
    let unit1: Vec<&str> = first.trace.lines().filter(|l| l.starts_with("    1.") || l.starts_with("    ...")).collect();
    assert_eq!(unit1.len(), 8 + 1 + 5 + 1 + 24, "{}", first.trace);
    assert!(first.trace.contains("    ... 92 events not shown (1.8 to 1.99; CLMM_FULL_TRACE=1 shows them)"), "{}", first.trace);
    assert!(first.trace.contains("    ... 72 events not shown (1.105 to 1.176; CLMM_FULL_TRACE=1 shows them)"), "{}", first.trace);
    assert!(first.trace.lines().any(|l| l.starts_with("    1.102 non-atomic write") && l.ends_with("<== access 1")), "{}", first.trace);
    // The loop is written once: a repetition, its references counted back.
    assert!(first.replay.len() < 120 && first.replay.contains("]*"), "{}", first.replay);
    let again = Builder::new().replay(first.replay.clone()).check(race_in_a_long_loop()).unwrap_err();
    assert_eq!(again.kind, FailureKind::DataRace, "{again}");
    assert_eq!((&again.accesses, &again.trace), (&first.accesses, &first.trace));
    // Each backtrace is its own access's (one slot for every unit's
    // pending operation gave the read the write's), without clmm's frames.
    assert_eq!(again.backtraces.len(), 2, "{again}");
    for (a, b) in again.accesses.iter().zip(&again.backtraces) {
        let site = a.site.to_string();
        let line = site.rsplit_once(':').map_or(&site[..], |s| s.0);
        assert!(b.contains(line), "the backtrace of {} names {line}:\n{b}", a.op);
        assert!(!b.contains("clmm-check") && !b.contains("clmm-atomic") && !b.contains("suspend"), "{b}");
    }
    // Every event, when asked for.
    let full = Builder::new().full_trace(true).check(race_in_a_long_loop()).unwrap_err();
    assert!(!full.trace.contains("not shown") && full.trace.lines().filter(|l| l.starts_with("    1.")).count() == 201, "{}", full.trace);
}

#[test]
fn replay_strings_of_format_1_still_replay() {
    // Format 2 without repetitions or references counted back is format 1.
    let race = Builder::new().check(mp(Scope::WorkGroup)).unwrap_err();
    assert!(!race.replay.contains(['-', '*']), "{}", race.replay);
    let old = race.replay.replacen("clmm2:", "clmm1:", 1);
    let again = Builder::new().replay(old).check(mp(Scope::WorkGroup)).unwrap_err();
    assert_eq!((&again.kind, &again.trace), (&FailureKind::DataRace, &race.trace), "{again}");
}
