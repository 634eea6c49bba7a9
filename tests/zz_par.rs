#![allow(clippy::duplicate_mod, dead_code)]
#[path = "../examples/hash_table.rs"]
mod hash_table;
#[path = "../examples/locks.rs"]
mod locks;
#[path = "../examples/spin_lock.rs"]
mod spin_lock;
#[path = "../examples/work_stealing.rs"]
mod work_stealing;
use clmm::Builder;
fn show(name: &str, f: impl Fn() + Sync) {
    let ex = Builder::new().workers(1).explore(&f);
    eprintln!("ZZRESULT {name}: complete {} blocked {} time {:?}", ex.stats.complete, ex.stats.blocked, ex.stats.time);
}
#[test]
fn zz() {
    show("hash table", hash_table::program(hash_table::Variant::Correct));
    show("ticket lock", locks::program(locks::Variant::Ticket));
    show("spin lock", spin_lock::program(spin_lock::Variant::Correct));
    show("work stealing", work_stealing::program(work_stealing::Variant::Correct));
}
