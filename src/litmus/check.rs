//! `clmm-litmus --check DIR`: compare with the reference's verdicts
//! (`*.expect.json`) under both SC models, in compatibility mode, following
//! the contract of `shared/litmus/README.md` (rule 10 for symbolic values).

use super::run::{run, LitmusResult, Mode, State};
use clmm_check::ScModel;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn states_of(v: &Value) -> Vec<State> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_object())
                .map(|o| o.iter().map(|(k, v)| (k.clone(), v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()))).collect())
                .collect()
        })
        .unwrap_or_default()
}

fn symbolic(v: &str) -> bool {
    v.starts_with('S') && v[1..].chars().all(|c| c.is_ascii_digit()) && v.len() > 1
}

fn matches(produced: &State, expected: &State) -> bool {
    expected.iter().all(|(k, v)| symbolic(v) || produced.get(k) == Some(v)) && produced.len() == expected.len()
}

/// Compare produced states with expected ones (rule 10): every produced
/// state matches some expected one, and every expected state without a
/// symbolic value is produced.
fn compare_states(what: &str, produced: &BTreeSet<State>, expected: &[State], out: &mut Vec<String>) {
    for p in produced {
        if !expected.iter().any(|e| matches(p, e)) {
            out.push(format!("{what}: state {} not in the reference", fmt_state(p)));
        }
    }
    for e in expected {
        if e.values().any(|v| symbolic(v)) {
            continue;
        }
        if !produced.contains(e) {
            out.push(format!("{what}: reference state {} not produced", fmt_state(e)));
        }
    }
}

/// `0:r0=1; x=2;`
pub fn fmt_state(s: &State) -> String {
    s.iter().map(|(k, v)| format!("{k}={v};")).collect::<Vec<_>>().join(" ")
}

/// The mismatches of one test against its expectation, both models.
pub fn check_file(litmus: &Path, expect: &Path) -> Result<Vec<String>, String> {
    let src = std::fs::read_to_string(litmus).map_err(|e| format!("{}: {e}", litmus.display()))?;
    let test = super::parse_litmus(&src, &litmus.display().to_string()).map_err(|e| e.to_string())?;
    let exp: Value = serde_json::from_str(&std::fs::read_to_string(expect).map_err(|e| format!("{}: {e}", expect.display()))?)
        .map_err(|e| format!("{}: {e}", expect.display()))?;
    let mut out = Vec::new();
    for (key, sc) in [("spec", ScModel::Spec), ("scoped", ScModel::Scoped)] {
        let e = &exp[key];
        let r: LitmusResult = run(&test, sc, Mode::Herd)?;
        let produced: BTreeSet<State> = r.states.keys().cloned().collect();
        compare_states(&format!("{key} states"), &produced, &states_of(&e["states"]), &mut out);
        for flag in ["O-Dr", "O-Bd"] {
            let exp_states = states_of(&e["flags"][flag]);
            let got = r.flags.get(flag).cloned().unwrap_or_default();
            if exp_states.is_empty() != got.is_empty() {
                out.push(format!("{key}: flag {flag} {} but the reference {}", if got.is_empty() { "not raised" } else { "raised" }, if exp_states.is_empty() { "does not raise it" } else { "does" }));
            } else {
                compare_states(&format!("{key} {flag} states"), &got, &exp_states, &mut out);
            }
        }
        for (k, _) in r.flags.iter().filter(|(k, _)| *k != "O-Dr" && *k != "O-Bd") {
            out.push(format!("{key}: unexpected failure {k}: {}", r.notes.join("; ")));
        }
        let want = e["executions"].as_u64().unwrap_or(0);
        if r.executions != want {
            out.push(format!("{key}: {} executions, the reference counts {want}", r.executions));
        }
    }
    Ok(out)
}

/// Every `*.litmus` with a `*.expect.json` beside it under `dir`, sorted.
pub fn collect(dir: &Path) -> Vec<(std::path::PathBuf, std::path::PathBuf)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                let exp = p.with_extension("expect.json");
                if exp.exists() {
                    out.push((p, exp));
                }
            }
        }
    }
    out.sort();
    out
}
