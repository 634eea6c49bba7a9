//! The command line shared by the kernel examples: no argument runs the
//! correct kernel natively; `--check [VARIANT|correct|all]` model-checks
//! variants; an unknown variant lists them.

/// What an example tells the command line about its variants.
pub struct Variants<V: 'static> {
    /// The example's name (for the usage line).
    pub example: &'static str,
    /// Every variant.
    pub all: &'static [V],
    /// Its command-line name.
    pub name: fn(V) -> &'static str,
    /// One line about it.
    pub describe: fn(V) -> &'static str,
    /// Whether it is a correct version.
    pub is_correct: fn(V) -> bool,
}

/// Model-check `program` and print its statistics or its failure report.
pub fn check_program(header: &str, program: impl Fn() + Sync) {
    println!("== {header}");
    let t = std::time::Instant::now();
    match clmm::Builder::new().check(program) {
        Ok(s) => println!("OK: {} complete executions, {} blocked, in {:?}", s.complete, s.blocked, s.time),
        Err(f) => println!("FAILED: {} (found in {:?})\n{f}", f.kind, t.elapsed()),
    }
}

/// Parse the arguments and run `native` or `check` on the chosen variants.
pub fn main<V: Copy>(vs: Variants<V>, native: fn(), check: fn(V)) {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => native(),
        Some("--check") => {
            let which = args.get(1).map(String::as_str).unwrap_or("correct");
            let chosen: Vec<V> = match which {
                "all" => vs.all.to_vec(),
                "correct" => vs.all.iter().copied().filter(|&v| (vs.is_correct)(v)).collect(),
                name => vs.all.iter().copied().filter(|&v| (vs.name)(v) == name).collect(),
            };
            if chosen.is_empty() {
                eprintln!("unknown variant `{which}`; the variants are:");
                for &v in vs.all {
                    eprintln!("  {:<26} {}", (vs.name)(v), (vs.describe)(v));
                }
                if !vs.all.iter().any(|&v| (vs.name)(v) == "correct") {
                    eprintln!("  {:<26} every correct variant (the default)", "correct");
                }
                eprintln!("  {:<26} every variant", "all");
                std::process::exit(2);
            }
            for v in chosen {
                check(v);
            }
        }
        Some(_) => {
            eprintln!("usage: {} [--check [VARIANT|correct|all]]", vs.example);
            std::process::exit(2);
        }
    }
}
