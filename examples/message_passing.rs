//! Message passing between two work-groups (DESIGN.md §1), checked.
//!
//! `cargo run --example message_passing` checks the correct version (release
//! and acquire at device scope) and then the buggy one (work-group scope
//! across work-groups), printing the report clmm gives for it.

use clmm::{launch, Builder, GlobalBuffer, NdRange, Order, Scope};

fn message_passing(scope: Scope) -> impl Fn() + Sync {
    move || {
        let data = GlobalBuffer::<u32>::new(1);
        let flag = clmm::AtomicU32::new(0);
        launch(NdRange::new([2], [1]), |item| {
            if item.group_id(0) == 0 {
                data.write(0, 42);
                flag.store(1, Order::Release, scope);
            } else if flag.load(Order::Acquire, scope) == 1 {
                assert_eq!(data.read(0), 42);
            }
        });
    }
}

fn main() {
    match Builder::new().check(message_passing(Scope::Device)) {
        Ok(stats) => println!(
            "message passing at memory_scope_device: OK, {} executions ({} blocked) in {:?}",
            stats.complete, stats.blocked, stats.time
        ),
        Err(f) => println!("unexpected failure:\n{f}"),
    }
    println!();
    match Builder::new().check(message_passing(Scope::WorkGroup)) {
        Ok(_) => println!("message passing at memory_scope_work_group: no failure found (unexpected)"),
        Err(f) => println!("message passing at memory_scope_work_group across work-groups:\n{f}"),
    }
}
