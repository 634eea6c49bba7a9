#[path = "locks.rs"]
#[allow(dead_code)]
mod locks;
use clmm::Builder;
fn main() {
    let p = locks::program(locks::Variant::Ttas);
    for _ in 0..3 {
    let a = Builder::new().check_unique(true).check(&p).unwrap();
    print!("{} {}; ", a.complete, a.blocked);
    }
    println!();
}
