//! `clmm-litmus`: run OpenCL litmus tests (herd syntax) through clmm.
//!
//! ```text
//! clmm-litmus [--herd] [--model spec|scoped] [--json] FILE.litmus...
//! clmm-litmus --check DIR
//! ```

use clmm::litmus::{self, check, run, Mode};
use clmm::ScModel;
use std::process::ExitCode;

const USAGE: &str = "usage: clmm-litmus [--herd] [--model spec|scoped] [--json] FILE.litmus...\n       clmm-litmus --check DIR";

fn main() -> ExitCode {
    let mut herd = false;
    let mut json = false;
    let mut model = ScModel::Spec;
    let mut files = Vec::new();
    let mut check_dir = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--herd" => herd = true,
            "--json" => json = true,
            "--model" => match args.next().as_deref() {
                Some("spec") => model = ScModel::Spec,
                Some("scoped") => model = ScModel::Scoped,
                other => {
                    eprintln!("clmm-litmus: --model takes `spec` or `scoped`, not {other:?}\n{USAGE}");
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
        match run(&test, model, mode) {
            Ok(r) => {
                if json {
                    println!("{}", litmus::run::to_json(&test, model, &r));
                } else {
                    print!("{}", litmus::run::to_herd_text(&test, &r));
                }
            }
            Err(e) => {
                eprintln!("clmm-litmus: {f}: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
