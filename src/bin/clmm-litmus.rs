//! `clmm-litmus`: run OpenCL litmus tests (herd syntax) through clmm.
//!
//! ```text
//! clmm-litmus [--herd] [--model spec|scoped] [--json] FILE.litmus...
//! clmm-litmus --check DIR
//! ```

use clmm::litmus::{self, check, Mode};
use clmm::ScModel;
use std::process::ExitCode;

const USAGE: &str = "usage: clmm-litmus [--herd] [--model spec|scoped] [--json] [--dot DIR] FILE.litmus...\n       clmm-litmus --check DIR\n\n  --herd          the reference's rules (shared/litmus/README.md) instead of clmm's semantics\n  --model M       the SC axiom: spec (opencl.cat, default) or scoped (opencl_scopedsc.cat)\n  --json          print the result as JSON\n  --dot DIR       write one Graphviz picture per final state: DIR/NAME-<n>.dot\n  --check DIR     compare every *.litmus under DIR with its *.expect.json";

/// Write one DOT file per final state; print where.
fn write_dots(dir: &str, name: &str, r: &litmus::run::LitmusResult) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (i, (state, dot)) in r.dots.iter().enumerate() {
        let path = std::path::Path::new(dir).join(format!("{name}-{}.dot", i + 1));
        std::fs::write(&path, dot)?;
        println!("Picture {} {}", path.display(), litmus::check::fmt_state(state));
    }
    Ok(())
}

fn main() -> ExitCode {
    let mut herd = false;
    let mut json = false;
    let mut dot_dir: Option<String> = None;
    let mut model = ScModel::Spec;
    let mut files = Vec::new();
    let mut check_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--herd" => herd = true,
            "--json" => json = true,
            "--dot" => match args.next() {
                Some(d) => dot_dir = Some(d),
                None => {
                    eprintln!("clmm-litmus: --dot needs a directory\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--model" => match args.next().as_deref() {
                Some("spec") => model = ScModel::Spec,
                Some("scoped") => model = ScModel::Scoped,
                Some(other) => {
                    eprintln!("clmm-litmus: --model takes `spec` or `scoped`, not `{other}`\n{USAGE}");
                    return ExitCode::from(2);
                }
                None => {
                    eprintln!("clmm-litmus: --model needs `spec` or `scoped`\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--check" => match args.next() {
                Some(d) => check_dir = Some(d),
                None => {
                    eprintln!("clmm-litmus: --check needs a directory\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "-h" | "--help" => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            s if s.starts_with('-') => {
                eprintln!("clmm-litmus: unknown option {s}\n{USAGE}");
                return ExitCode::from(2);
            }
            _ => files.push(a),
        }
    }
    if let Some(dir) = check_dir {
        let tests = check::collect(std::path::Path::new(&dir));
        if tests.is_empty() {
            eprintln!("clmm-litmus: no *.litmus with *.expect.json under {dir}");
            return ExitCode::from(2);
        }
        let (mut passed, mut deviations, mut failed) = (0, 0, 0);
        for (l, e) in tests {
            match check::check_file(&l, &e) {
                Ok(check::Verdict::Agrees) => passed += 1,
                Ok(check::Verdict::Deviation(name)) => {
                    deviations += 1;
                    println!("{}: known deviation: {name}", l.display());
                }
                Ok(check::Verdict::Differs(m)) => {
                    failed += 1;
                    for x in m {
                        println!("{}: {x}", l.display());
                    }
                }
                Err(err) => {
                    failed += 1;
                    println!("{}: error: {err}", l.display());
                }
            }
        }
        println!("{passed} agree, {deviations} known deviations, {failed} differ");
        return if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    if files.is_empty() {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    }
    let mut status = ExitCode::SUCCESS;
    for f in files {
        let src = match std::fs::read_to_string(&f) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("clmm-litmus: {f}: {e}");
                status = ExitCode::FAILURE;
                continue;
            }
        };
        let test = match litmus::parse_litmus(&src, &f) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("{e}");
                status = ExitCode::FAILURE;
                continue;
            }
        };
        let mode = if herd { Mode::Herd } else { Mode::Clmm };
        match litmus::run::run_with_options(&test, model, mode, &litmus::run::RunOptions { dot: dot_dir.is_some(), ..Default::default() }) {
            Ok(r) => {
                if let Some(dir) = &dot_dir {
                    if let Err(e) = write_dots(dir, &test.name, &r) {
                        eprintln!("clmm-litmus: --dot {dir}: {e}");
                        status = ExitCode::FAILURE;
                    }
                }
                if json {
                    println!("{}", litmus::run::to_json(&test, model, &r));
                } else {
                    print!("{}", litmus::run::to_herd_text(&test, &r));
                }
                if mode == Mode::Clmm {
                    match litmus::run::deviations(&test, model, &r) {
                        Ok(ds) => ds.iter().for_each(|d| println!("{d}")),
                        Err(e) => eprintln!("clmm-litmus: {f}: {e}"),
                    }
                }
            }
            Err(e) => {
                // A program's error says where (`line:col: P<n>: ...`): after
                // the file's name, as a parse error.
                let sep = if litmus::run::says_where(&e) { ":" } else { ": " };
                eprintln!("{f}{sep}{e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
