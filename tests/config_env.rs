//! `CLMM_*` variables that cannot be read make the run fail with a
//! configuration error naming them (one test in its own binary: it sets
//! the process environment).

use clmm::{Builder, FailureKind};

#[test]
fn unreadable_variables_are_reported_by_name() {
    let cases = [
        ("CLMM_SHARD", "5/4", "CLMM_SHARD=\"5/4\": expected k/n with 1 <= k <= n"),
        ("CLMM_WORKERS", "two", "CLMM_WORKERS=\"two\" is not a number"),
        ("CLMM_SC_MODEL", "tso", "CLMM_SC_MODEL=\"tso\": expected spec or scoped"),
    ];
    for (var, value, message) in cases {
        std::env::set_var(var, value);
        let f = Builder::new().check(|| {}).expect_err("an unreadable variable fails the run");
        std::env::remove_var(var);
        assert_eq!(f.kind, FailureKind::Configuration, "{f}");
        assert!(f.message.contains(message), "{var}: {}", f.message);
    }
    // And good values work.
    std::env::set_var("CLMM_SHARD", "2/3");
    std::env::set_var("CLMM_WORKERS", "2");
    let s = Builder::new().check(|| {}).expect("valid settings");
    std::env::remove_var("CLMM_SHARD");
    std::env::remove_var("CLMM_WORKERS");
    // The single execution belongs to one of the three shards.
    assert!(s.complete <= 1, "{s}");
}
