//! Whether the checker itself is built with optimisations
//! ([`OPTIMIZED`](crate::OPTIMIZED)): cargo tells a build script the
//! opt-level of the package being built, profile overrides included.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(clmm_unoptimized)");
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=OPT_LEVEL");
    if std::env::var("OPT_LEVEL").as_deref() == Ok("0") {
        println!("cargo::rustc-cfg=clmm_unoptimized");
    }
}
