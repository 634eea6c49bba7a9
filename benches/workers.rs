//! Parallel exploration (issue 8): the same checks with 1 and 2 workers
//! side by side in one run, on `fetch_add` by 8 units (40,320 executions)
//! and on the largest kernel of `examples/` (the Cederman-Tsigas
//! work-stealing deque, two tasks pushed in the kernel while another group
//! steals).
//!
//! Run: `cargo bench --bench workers`. The speed-up is the ratio of the
//! medians (1 worker / 2 workers); it needs two free cores.

#[path = "../examples/work_stealing.rs"]
mod work_stealing;

use clmm::{launch, AtomicI32, Builder, NdRange, Order, Scope};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::time::Duration;

fn fetch_add(n: usize) -> impl Fn() + Sync {
    move || {
        let c = AtomicI32::new(0);
        launch(NdRange::new([n], [1]), |_| {
            c.fetch_add(1, Order::Relaxed, Scope::Device);
        });
    }
}

/// The largest configuration of `tests/kernels.rs`: work-group 0 pushes two
/// tasks from the kernel while work-group 1 steals.
fn work_stealing() -> impl Fn() + Sync {
    let c = work_stealing::Config { groups: 2, items: 1, host_seeds: 0, kernel_seeds: 2, grain: 1, capacity: 2 };
    move || {
        let (total, _) = work_stealing::sum(&[1, 2], c, work_stealing::Variant::Correct);
        assert_eq!(total, 3);
    }
}

fn check<F: Fn() + Sync>(f: &F, workers: usize) -> u64 {
    let s = Builder::new().workers(workers).check(f).expect("correct programs");
    s.complete + s.blocked
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("workers");
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(20));
    let fa = fetch_add(8);
    let ws = work_stealing();
    for workers in [1usize, 2] {
        println!("fetch_add-8, {workers} worker(s): {} executions", check(&fa, workers));
        g.bench_with_input(BenchmarkId::new("fetch_add-8", workers), &workers, |b, &w| b.iter(|| check(&fa, w)));
    }
    for workers in [1usize, 2] {
        println!("work_stealing, {workers} worker(s): {} executions", check(&ws, workers));
        g.bench_with_input(BenchmarkId::new("work_stealing", workers), &workers, |b, &w| b.iter(|| check(&ws, w)));
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
