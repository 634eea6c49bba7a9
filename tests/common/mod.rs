//! Helpers shared by the test binaries (`mod common;` in each): the
//! outcome tables that the tests compare, and the race assertions.

#![allow(dead_code)] // each test binary uses its own subset

use clmm::{Builder, Explored, FailureKind};
use std::collections::BTreeMap;

/// One expected outcome: the value, its number of executions and the
/// failure kinds of those executions.
pub type Want<T> = (T, u64, &'static [&'static str]);

/// What an exploration found: value -> (executions, failure kinds).
pub fn outcome_table<T: Ord + Clone>(ex: &Explored<T>) -> BTreeMap<T, (u64, Vec<String>)> {
    ex.outcomes.iter().map(|(k, o)| (k.clone(), (o.executions, o.failures.iter().cloned().collect()))).collect()
}

/// The same table from expectations (failure kinds sorted, as found).
pub fn want_table<T: Ord + Clone>(want: &[Want<T>]) -> BTreeMap<T, (u64, Vec<String>)> {
    want.iter()
        .map(|(k, n, kinds)| {
            let mut kinds: Vec<String> = kinds.iter().map(|s| s.to_string()).collect();
            kinds.sort();
            (k.clone(), (*n, kinds))
        })
        .collect()
}

/// Outcomes with their execution counts and failure kinds.
pub type Outcomes<T> = Vec<(T, u64, Vec<String>)>;

/// Explore `f` with `check_unique`: its outcomes as (value, executions,
/// failure kinds), and the first failure of each kind; asserts that no
/// execution graph was explored twice.
pub fn run<T: Ord + Send + Clone, F: Fn() -> T + Sync>(f: F) -> (Outcomes<T>, Vec<clmm::Failure>) {
    let ex = Builder::new().check_unique(true).explore(f);
    assert_eq!(ex.stats.duplicates, 0, "an execution graph was explored twice");
    (outcome_table(&ex).into_iter().map(|(v, (n, f))| (v, n, f)).collect(), ex.failures)
}

/// The failure kinds of a racy outcome.
pub fn race() -> Vec<String> {
    vec![FailureKind::DataRace.to_string()]
}

/// The lines of the two accesses of a race, sorted.
pub fn race_lines(f: &clmm::Failure) -> Vec<u32> {
    assert_eq!(f.kind, FailureKind::DataRace, "{f}");
    let mut l: Vec<u32> = f.accesses.iter().map(|a| a.site.line).collect();
    l.sort();
    l
}

/// Check `f`, which must pass, with `check_unique`: its statistics (no
/// execution graph explored twice).
#[track_caller]
pub fn pass<F: Fn() + Sync>(f: F) -> clmm::Stats {
    let s = Builder::new().check_unique(true).check(f).unwrap_or_else(|e| panic!("expected the check to pass, it failed:\n{e}"));
    assert_eq!(s.duplicates, 0, "no execution graph explored twice: {s}");
    s
}

/// Check `f`, which must fail (with `check_unique`): the failure reported.
#[track_caller]
pub fn fail<F: Fn() + Sync>(f: F) -> clmm::Failure {
    match Builder::new().check_unique(true).check(f) {
        Ok(s) => panic!("expected a failure; {} complete executions passed", s.complete),
        Err(f) => *f,
    }
}

/// Load buffering with two reads of one write (relaxed, device scope, two
/// groups): `a=Rx; b=Rx; Wy2 || c=Ry; Wx2`. Returns (a, b, c).
pub fn two_reads_of_one_write() -> (i32, i32, i32) {
    use clmm::{launch, AtomicI32, NdRange, Order, Scope};
    let (x, y) = (AtomicI32::new(0), AtomicI32::new(0));
    let r = launch(NdRange::new([2], [1]), |it| {
        if it.global_id(0) == 0 {
            let a = x.load(Order::Relaxed, Scope::Device);
            let b = x.load(Order::Relaxed, Scope::Device);
            y.store(2, Order::Relaxed, Scope::Device);
            (a, b)
        } else {
            let c = y.load(Order::Relaxed, Scope::Device);
            x.store(2, Order::Relaxed, Scope::Device);
            (c, 0)
        }
    });
    (r[0].0, r[0].1, r[1].0)
}
