//! clmm against loom 0.7 on the same programs, side by side in one run
//! (issue 4). clmm's versions use global atomics at device scope, one
//! work-item per work-group, so the OpenCL model coincides with C11; loom's
//! use `loom::thread::spawn` and `loom::sync::atomic`. Each benchmark
//! measures one whole model check; the number of executions each tool
//! explores is printed once per program (`executions: clmm N, loom M`).
//!
//! Run: `cargo bench --bench vs_loom`; `VS_LOOM_ONLY=SB,MP,LB` runs only
//! the named programs (criterion's own filter still runs every program
//! once to count its executions). Runs over 3 s (either tool) are timed
//! once, not sampled.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use clmm::Order;
use std::time::Duration;

// ---------------------------------------------------------------- clmm

#[path = "programs/clmm.rs"]
mod c;

// ---------------------------------------------------------------- loom

mod l {
    use loom::cell::UnsafeCell;
    use loom::sync::atomic::{AtomicI32, AtomicUsize};
    use loom::sync::Arc;
    use loom::thread;
    use std::sync::atomic::Ordering::{self, Acquire, Relaxed, Release, SeqCst};

    /// Explore `f` with loom; the number of executions, and whether loom
    /// finished within `limit`.
    pub fn run_for(f: impl Fn() + Sync + Send + 'static, limit: Option<std::time::Duration>) -> (u64, bool) {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        N.store(0, std::sync::atomic::Ordering::SeqCst);
        let mut b = loom::model::Builder::new();
        b.max_threads = 5;
        b.max_duration = limit;
        // A long execution needs more than loom's default 1,000 branches
        // (`long_loop`); the other programs stay under it or fail at it
        // either way (the 3-unit spin lock).
        b.max_branches = b.max_branches.max(LONG_BRANCHES.load(std::sync::atomic::Ordering::SeqCst));
        let start = std::time::Instant::now();
        b.check(move || {
            N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            f()
        });
        let finished = limit.is_none_or(|l| start.elapsed() < l);
        (N.load(std::sync::atomic::Ordering::SeqCst), finished)
    }

    /// Explore `f` with loom; the number of executions.
    pub fn run(f: impl Fn() + Sync + Send + 'static) -> u64 {
        run_for(f, None).0
    }

    /// The branch limit [`run_for`] raises loom's to (`long_loop`).
    pub static LONG_BRANCHES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    pub fn long_loop(n: usize, order: Ordering, fence: bool) -> impl Fn() + Sync + Send + 'static {
        move || {
            let x = Arc::new(AtomicI32::new(0));
            let x2 = x.clone();
            let t = thread::spawn(move || {
                for i in 0..n {
                    x2.store(i as i32, order);
                    if fence {
                        loom::sync::atomic::fence(SeqCst);
                    }
                    let _ = x2.load(order);
                }
            });
            t.join().unwrap();
        }
    }

    pub fn sb() {
        let x = Arc::new(AtomicI32::new(0));
        let y = Arc::new(AtomicI32::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x2.store(1, Relaxed);
            y2.load(Relaxed)
        });
        y.store(1, Relaxed);
        let _ = x.load(Relaxed);
        t.join().unwrap();
    }

    /// loom runs `SeqCst` as `AcqRel` (its documentation): it also
    /// explores the execution where both loads read 0.
    pub fn sb_sc() {
        let x = Arc::new(AtomicI32::new(0));
        let y = Arc::new(AtomicI32::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x2.store(1, SeqCst);
            y2.load(SeqCst)
        });
        y.store(1, SeqCst);
        let _ = x.load(SeqCst);
        t.join().unwrap();
    }

    pub fn sc_ring(n: usize) -> impl Fn() + Sync + Send + 'static {
        move || {
            let flags: Arc<Vec<AtomicI32>> = Arc::new((0..n).map(|_| AtomicI32::new(0)).collect());
            let count = Arc::new(AtomicI32::new(0));
            let ts: Vec<_> = (0..n)
                .map(|i| {
                    let (flags, count) = (flags.clone(), count.clone());
                    thread::spawn(move || {
                        flags[i].store(1, SeqCst);
                        let _ = flags[(i + 1) % n].load(SeqCst);
                        count.fetch_add(1, SeqCst);
                    })
                })
                .collect();
            for t in ts {
                t.join().unwrap();
            }
        }
    }

    pub fn mp() {
        let data = Arc::new(AtomicI32::new(0));
        let flag = Arc::new(AtomicI32::new(0));
        let (d2, f2) = (data.clone(), flag.clone());
        let t = thread::spawn(move || {
            d2.store(1, Relaxed);
            f2.store(1, Release);
        });
        if flag.load(Acquire) == 1 {
            assert_eq!(data.load(Relaxed), 1);
        }
        t.join().unwrap();
    }

    pub fn lb() {
        let x = Arc::new(AtomicI32::new(0));
        let y = Arc::new(AtomicI32::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            let r = x2.load(Relaxed);
            y2.store(1, Relaxed);
            r
        });
        let _ = y.load(Relaxed);
        x.store(1, Relaxed);
        t.join().unwrap();
    }

    pub fn iriw() {
        let x = Arc::new(AtomicI32::new(0));
        let y = Arc::new(AtomicI32::new(0));
        let mut ts = Vec::new();
        {
            let x = x.clone();
            ts.push(thread::spawn(move || x.store(1, Relaxed)));
        }
        {
            let y = y.clone();
            ts.push(thread::spawn(move || y.store(1, Relaxed)));
        }
        {
            let (x, y) = (x.clone(), y.clone());
            ts.push(thread::spawn(move || {
                x.load(Acquire);
                y.load(Acquire);
            }));
        }
        y.load(Acquire);
        x.load(Acquire);
        for t in ts {
            t.join().unwrap();
        }
    }

    pub fn two_plus_two_w() {
        let x = Arc::new(AtomicI32::new(0));
        let y = Arc::new(AtomicI32::new(0));
        let (x2, y2) = (x.clone(), y.clone());
        let t = thread::spawn(move || {
            x2.store(1, Relaxed);
            y2.store(2, Relaxed);
        });
        y.store(1, Relaxed);
        x.store(2, Relaxed);
        t.join().unwrap();
    }

    pub fn fetch_add(n: usize) -> impl Fn() + Sync + Send + 'static {
        move || {
            let c = Arc::new(AtomicI32::new(0));
            let ts: Vec<_> = (0..n)
                .map(|_| {
                    let c = c.clone();
                    thread::spawn(move || {
                        c.fetch_add(1, Relaxed);
                    })
                })
                .collect();
            for t in ts {
                t.join().unwrap();
            }
            assert_eq!(c.load(Relaxed), n as i32);
        }
    }

    struct Counter(UnsafeCell<u32>);
    unsafe impl Sync for Counter {}

    /// One spawned thread reading and writing a plain cell `n` times.
    pub fn plain_loop(n: usize) -> impl Fn() + Sync + Send + 'static {
        move || {
            let cell = Arc::new(Counter(UnsafeCell::new(0)));
            let c2 = cell.clone();
            let t = thread::spawn(move || {
                for _ in 0..n {
                    let v = c2.0.with(|p| unsafe { *p });
                    c2.0.with_mut(|p| unsafe { *p = v + 1 });
                }
            });
            t.join().unwrap();
        }
    }

    pub fn spin_lock(n: usize) -> impl Fn() + Sync + Send + 'static {
        move || {
            let lock = Arc::new(AtomicI32::new(0));
            let counter = Arc::new(Counter(UnsafeCell::new(0)));
            let ts: Vec<_> = (0..n)
                .map(|_| {
                    let (lock, counter) = (lock.clone(), counter.clone());
                    thread::spawn(move || {
                        while lock.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
                            thread::yield_now();
                        }
                        counter.0.with_mut(|p| unsafe { *p += 1 });
                        lock.store(0, Release);
                    })
                })
                .collect();
            for t in ts {
                t.join().unwrap();
            }
            assert_eq!(counter.0.with(|p| unsafe { *p }), n as u32);
        }
    }

    struct Next(Vec<UnsafeCell<usize>>);
    unsafe impl Sync for Next {}

    pub fn treiber(n: usize) -> impl Fn() + Sync + Send + 'static {
        move || {
            let head = Arc::new(AtomicUsize::new(0));
            let next = Arc::new(Next((0..=n).map(|_| UnsafeCell::new(0)).collect()));
            let ts: Vec<_> = (0..n)
                .map(|i| {
                    let (head, next) = (head.clone(), next.clone());
                    thread::spawn(move || {
                        let node = i + 1;
                        loop {
                            let h = head.load(Relaxed);
                            next.0[node].with_mut(|p| unsafe { *p = h });
                            if head.compare_exchange(h, node, Release, Relaxed).is_ok() {
                                break;
                            }
                        }
                        loop {
                            let h = head.load(Acquire);
                            if h == 0 {
                                break 0;
                            }
                            let nx = next.0[h].with(|p| unsafe { *p });
                            if head.compare_exchange(h, nx, Acquire, Relaxed).is_ok() {
                                break h;
                            }
                        }
                    })
                })
                .collect();
            let mut p: Vec<usize> = ts.into_iter().map(|t| t.join().unwrap()).collect();
            p.sort();
            p.dedup();
            assert_eq!(p.len(), n);
        }
    }
}

// ---------------------------------------------------------------- benches

/// Loom runs longer than this are measured once (not sampled), and cut at
/// `LOOM_LIMIT`.
const SAMPLE_LIMIT: Duration = Duration::from_secs(3);
const LOOM_LIMIT: Duration = Duration::from_secs(120);

/// Run both once, print the executions, and benchmark both with criterion
/// (loom only when one run takes less than `SAMPLE_LIMIT`).
fn pair<L: Fn() + Sync + Send + 'static>(cr: &mut Criterion, name: &str, cf: &(dyn Fn() + Sync), lf: Option<impl Fn() -> L>) {
    if let Ok(only) = std::env::var("VS_LOOM_ONLY") {
        if !only.split(',').any(|n| n == name) {
            return;
        }
    }
    let mut g = cr.benchmark_group(name);
    g.sample_size(10).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2));
    let t = std::time::Instant::now();
    let ce = c::run(cf);
    let ct = t.elapsed();
    let sample_clmm = ct < SAMPLE_LIMIT;
    let mut sample_loom = false;
    match &lf {
        Some(lf) => {
            let t = std::time::Instant::now();
            let (le, done) = l::run_for(lf(), Some(LOOM_LIMIT));
            let lt = t.elapsed();
            sample_loom = done && lt < SAMPLE_LIMIT;
            let how = if !done { format!("did not finish in {LOOM_LIMIT:?}") } else { format!("one run {lt:.3?}") };
            println!("executions {name}: clmm {ce} (one run {ct:.3?}), loom {le} ({how})");
        }
        None => println!("executions {name}: clmm {ce} (one run {ct:.3?}), loom cannot run it (more than 4 spawned threads, or barriers)"),
    }
    if sample_clmm {
        g.bench_function(BenchmarkId::new("clmm", name), |b| b.iter(|| c::run(cf)));
    }
    if let (Some(lf), true) = (&lf, sample_loom) {
        g.bench_function(BenchmarkId::new("loom", name), |b| b.iter(|| l::run(lf())));
    }
    g.finish();
}

fn litmus(cr: &mut Criterion) {
    pair(cr, "SB", &c::sb, Some(|| l::sb));
    pair(cr, "MP", &c::mp, Some(|| l::mp));
    pair(cr, "LB", &c::lb, Some(|| l::lb));
    pair(cr, "IRIW-acq", &c::iriw, Some(|| l::iriw));
    pair(cr, "2+2W", &c::two_plus_two_w, Some(|| l::two_plus_two_w));
}

/// OpenCL C's default order: seq_cst atomics (the SC axiom on the views
/// since session 47).
fn seq_cst(cr: &mut Criterion) {
    pair(cr, "SB-sc", &c::sb_sc, Some(|| l::sb_sc));
    for n in [3usize, 4] {
        pair(cr, &format!("sc_ring-{n}"), &c::sc_ring(n), Some(move || l::sc_ring(n)));
    }
    l::LONG_BRANCHES.store(1 << 20, std::sync::atomic::Ordering::SeqCst);
    pair(cr, "long_loop_sc-1000", &c::long_loop(1000, Order::SeqCst, false), Some(|| l::long_loop(1000, std::sync::atomic::Ordering::SeqCst, false)));
    pair(cr, "long_loop_fence-1000", &c::long_loop(1000, Order::Relaxed, true), Some(|| l::long_loop(1000, std::sync::atomic::Ordering::Relaxed, true)));
    l::LONG_BRANCHES.store(0, std::sync::atomic::Ordering::SeqCst);
}

fn counters(cr: &mut Criterion) {
    for n in 2..=8usize {
        let lf = (n <= 4).then_some(move || l::fetch_add(n));
        pair(cr, &format!("fetch_add-{n}"), &c::fetch_add(n), lf);
    }
}

fn locks(cr: &mut Criterion) {
    for n in 2..=4usize {
        pair(cr, &format!("spin_lock-{n}"), &c::spin_lock(n), Some(move || l::spin_lock(n)));
    }
    for n in 2..=3usize {
        pair(cr, &format!("treiber-{n}"), &c::treiber(n), Some(move || l::treiber(n)));
    }
}

/// One long execution: a unit storing and loading `n` times.
fn long(cr: &mut Criterion) {
    l::LONG_BRANCHES.store(1 << 20, std::sync::atomic::Ordering::SeqCst);
    for n in [250usize, 1000, 4000] {
        pair(cr, &format!("long_loop-{n}"), &c::long_loop(n, Order::Relaxed, false), Some(move || l::long_loop(n, std::sync::atomic::Ordering::Relaxed, false)));
    }
    // Non-atomic global memory: until session 48 each read looked at
    // every write of the location (1,000 iterations took 660 ms).
    pair(cr, "plain_loop-1000", &c::plain_loop(1000), Some(|| l::plain_loop(1000)));
    l::LONG_BRANCHES.store(0, std::sync::atomic::Ordering::SeqCst);
}

/// Wide work-groups with barriers (loom cannot run them: more than 4
/// spawned threads), and a wide NDRange (16 x 256 = 4,096 work-items).
fn wide(cr: &mut Criterion) {
    for (groups, items) in [(1usize, 64usize), (1, 256), (4, 256), (16, 256)] {
        pair(cr, &format!("reduction-{groups}x{items}"), &c::reduction(groups, items), None::<fn() -> fn()>);
    }
    // Barriers in a loop (loom has no barrier): 8.9 s for 2,000
    // iterations until session 48.
    pair(cr, "barrier_loop-1000", &c::barrier_loop(1000), None::<fn() -> fn()>);
    // A 2D NDRange of plain memory between barriers: 64, 256 and 1,024
    // work-items (18.9 s for 16 x 16 until session 51).
    pair(cr, "matmul-8x8-4", &c::matmul(8, 4), None::<fn() -> fn()>);
    pair(cr, "matmul-16x16-4", &c::matmul(16, 4), None::<fn() -> fn()>);
    pair(cr, "matmul-32x32-8", &c::matmul(32, 8), None::<fn() -> fn()>);
}

criterion_group!(benches, litmus, seq_cst, counters, locks, long, wide);
criterion_main!(benches);
