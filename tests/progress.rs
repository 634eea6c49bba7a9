//! The progress line (`CLMM_PROGRESS`), the statistics (`CLMM_STATS`) and
//! the stall warning (`CLMM_STALL_SECS`) as a user sees them on stderr.
//! Each case reruns this test binary as a subprocess (the ignored
//! `child_run` below, a check with 6! = 720 executions, or `stall_child`)
//! with the variables set, and reads its stderr, which is a pipe there, as
//! in CI or `cargo test 2>log`.

use clmm::{launch, AtomicU32, Builder, NdRange, Order, Scope};
use std::process::Command;

/// Units doing one `fetch_add` each: every order of the RMWs is one
/// execution.
const UNITS: usize = 6;
const EXECUTIONS: u64 = 720;

/// The check the subprocess runs; `Builder::new()` reads `CLMM_*`.
#[test]
#[ignore = "run as a subprocess by the tests of this file"]
fn child_run() {
    let stats = Builder::new()
        .check(|| {
            let x = AtomicU32::new(0);
            launch(NdRange::new([UNITS], [1]), |_| {
                x.fetch_add(1, Order::Relaxed, Scope::Device);
            });
        })
        .expect("no failure");
    assert_eq!(stats.complete, EXECUTIONS);
}

/// A work-item that, after one operation, spins 2.5 s on the clock: no
/// clmm operation for that long, as in a loop over plain Rust values or a
/// wait on a `std` lock. (The program has one execution, so the clock
/// does not make it non-deterministic.)
#[test]
#[ignore = "run as a subprocess by the tests of this file"]
fn stall_child() {
    let stats = Builder::new()
        .check(|| {
            let x = AtomicU32::new(0);
            launch(NdRange::new([2], [2]), |it| {
                if it.global_id(0) == 0 {
                    return;
                }
                x.store(1, Order::Relaxed, Scope::Device); // STALL_SITE
                let t = std::time::Instant::now();
                while t.elapsed() < std::time::Duration::from_millis(2500) {
                    std::hint::spin_loop();
                }
            });
        })
        .expect("no failure");
    assert_eq!(stats.complete, 1);
}

/// stderr of `child_run` under the given `CLMM_*` variables (the others
/// removed, so that the caller's environment does not leak in).
fn child_stderr(vars: &[(&str, &str)]) -> String {
    child_stderr_of("child_run", vars, true)
}

/// stderr of the ignored test `name`, as [`child_stderr`]; without
/// `nocapture`, libtest captures the test's output as it does by default.
fn child_stderr_of(name: &str, vars: &[(&str, &str)], nocapture: bool) -> String {
    let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
    cmd.args([name, "--exact", "--ignored", "--test-threads=1"]);
    if nocapture {
        cmd.arg("--nocapture");
    }
    for (k, _) in std::env::vars() {
        if k.starts_with("CLMM_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run the test binary");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{name} failed:\n{}\n{stderr}", String::from_utf8_lossy(&out.stdout));
    stderr
}

/// One progress line, parsed: `clmm: progress: C executions (B blocked, F
/// failed), R/s, P alternatives pending, T elapsed`.
#[derive(Debug)]
struct ProgressLine {
    complete: u64,
    blocked: u64,
    failed: u64,
    rate: u64,
    elapsed: String,
}

fn parse_progress(line: &str) -> Option<ProgressLine> {
    let rest = line.strip_prefix("clmm: progress: ")?;
    let num = |s: &str| s.trim().parse::<u64>().ok();
    let (complete, rest) = rest.split_once(" executions (")?;
    let (blocked, rest) = rest.split_once(" blocked, ")?;
    let (failed, rest) = rest.split_once(" failed), ")?;
    let (rate, rest) = rest.split_once("/s, ")?;
    let (_pending, rest) = rest.split_once(" alternatives pending, ")?;
    let elapsed = rest.strip_suffix(" elapsed")?;
    Some(ProgressLine { complete: num(complete)?, blocked: num(blocked)?, failed: num(failed)?, rate: num(rate)?, elapsed: elapsed.to_string() })
}

fn progress_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("progress")).collect()
}

#[test]
fn progress_line_with_clmm_progress_1() {
    let stderr = child_stderr(&[("CLMM_PROGRESS", "1")]);
    let lines = progress_lines(&stderr);
    assert!(!lines.is_empty(), "CLMM_PROGRESS=1 prints a progress line on stderr (a pipe here), got:\n{stderr}");
    for line in &lines {
        let p = parse_progress(line).unwrap_or_else(|| panic!("the progress line has executions, blocked, failed, rate, pending and elapsed time: {line:?}"));
        assert!(p.complete + p.blocked > 0 && p.complete + p.blocked <= EXECUTIONS, "{line}");
        assert_eq!((p.blocked, p.failed), (0, 0), "{line}");
        assert!(p.rate > 0, "{line}");
        assert!(p.elapsed.ends_with('s') && p.elapsed.chars().next().is_some_and(|c| c.is_ascii_digit()), "elapsed time as a duration: {line}");
    }
    // Not a line per execution (at most one a second after the first).
    assert!(lines.len() < 100, "{} progress lines", lines.len());
    // The statistics are printed only when asked for.
    assert!(!stderr.contains("complete executions"), "{stderr}");
}

#[test]
fn no_progress_line_with_clmm_progress_0_nor_by_default_on_a_pipe() {
    for vars in [&[("CLMM_PROGRESS", "0")][..], &[]] {
        let stderr = child_stderr(vars);
        assert!(progress_lines(&stderr).is_empty(), "{vars:?}: no progress line expected:\n{stderr}");
        assert!(!stderr.contains("executions"), "{vars:?}: {stderr}");
    }
}

#[test]
fn statistics_at_the_end_with_clmm_stats_1() {
    let stderr = child_stderr(&[("CLMM_STATS", "1")]);
    let stats: Vec<&str> = stderr.lines().filter(|l| l.starts_with("clmm: ") && l.contains("complete executions")).collect();
    assert_eq!(stats.len(), 1, "one statistics line for the one run:\n{stderr}");
    let line = stats[0];
    let prefix = format!("clmm: {EXECUTIONS} complete executions, 0 blocked, 0 failed, in ");
    assert!(line.starts_with(&prefix), "{line}");
    assert!(line.contains(" µs per execution)"), "{line}");
    assert!(!line.contains("stopped early"), "{line}");
    assert!(progress_lines(&stderr).is_empty(), "no progress line without CLMM_PROGRESS:\n{stderr}");
    // Both together: the progress lines come before the statistics.
    let both = child_stderr(&[("CLMM_STATS", "1"), ("CLMM_PROGRESS", "1")]);
    let last_progress = both.rfind("clmm: progress: ").expect("a progress line");
    let stats_at = both.find("complete executions").expect("the statistics");
    assert!(last_progress < stats_at, "{both}");
}

#[test]
fn stall_warning_names_the_work_item_and_its_last_operation() {
    // With libtest's capture on, as in a plain `cargo test`: a hanging
    // test's captured output is never shown, so the warning must go past it.
    let stderr = child_stderr_of("stall_child", &[("CLMM_STALL_SECS", "1")], false);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.starts_with("clmm: unit ")).collect();
    assert_eq!(warnings.len(), 1, "one warning for the one stay in the user's code:\n{stderr}");
    let line = include_str!("progress.rs").lines().position(|l| l.contains("// STALL_SITE") && !l.contains("position")).expect("the marked line") + 1;
    assert_eq!(warnings[0], format!("clmm: unit 2, work-item global (1) group (0) local (1) sub-group 0, has been running your code for 1s since its operation at tests/progress.rs:{line}:19,"), "{stderr}");
    let text = stderr.split_once(warnings[0]).expect("the warning").1.replace("\n  ", " ");
    assert!(text.trim_start().starts_with("without reaching another clmm operation."), "{text}");
    assert!(text.contains("or a wait on a std Mutex, channel, Barrier or thread") && text.contains("CLMM_STALL_SECS"), "{text}");
    // Off: nothing, and the check still ends.
    let quiet = child_stderr_of("stall_child", &[("CLMM_STALL_SECS", "0")], true);
    assert!(!quiet.contains("clmm: unit "), "{quiet}");
}
