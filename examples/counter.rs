//! N work-items increment one global atomic counter (`atomic_fetch_add`,
//! relaxed, device scope): the smallest program whose number of executions
//! grows fast. Every coherence order of the N increments is one execution,
//! N! in all, and clmm explores each exactly once.
//!
//! `cargo run --release --example counter -- N` model-checks it with N
//! work-items (default 8: 40,320 executions) and prints the statistics; the
//! process runs only that check, so `/usr/bin/time -v` on it measures the
//! peak memory of a large exploration (benches/README.md).

use clmm::{launch, AtomicU32, Builder, NdRange, Order, Scope};

fn counter(n: usize) -> impl Fn() + Sync {
    move || {
        let c = AtomicU32::new(0);
        launch(NdRange::new([n], [1]), |_| {
            c.fetch_add(1, Order::Relaxed, Scope::Device);
        });
        assert_eq!(c.load(Order::Relaxed, Scope::Device), n as u32);
    }
}

fn main() {
    let n = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 8,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: counter [N]   (N work-items, N >= 1)");
            std::process::exit(2);
        }
    };
    match Builder::new().check(counter(n)) {
        Ok(s) => println!("counter with {n} work-items: OK, {s}"),
        Err(f) => {
            println!("counter with {n} work-items:\n{f}");
            std::process::exit(1);
        }
    }
}
