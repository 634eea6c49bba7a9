//! Replay strings: a versioned text form of an execution's choices.
//!
//! The string names, for every read, the write it read from, and for every
//! location its coherence order. It starts with `clmm1:`; a string from
//! another version is refused with a clear error.

use crate::graph::Graph;
use std::fmt::Write as _;

/// The replay string of an execution graph.
pub fn encode(g: &Graph) -> String {
    let mut s = String::from("clmm1:");
    for (u, unit) in g.units.iter().enumerate() {
        let _ = write!(s, "u{u}=");
        for ev in &unit.events {
            match ev.rf {
                Some(w) if w.is_init() => {
                    let _ = write!(s, "i{},", w.index);
                }
                Some(w) => {
                    let _ = write!(s, "{}.{},", w.unit.0, w.index);
                }
                None => s.push_str("-,"),
            }
        }
        s.push(';');
    }
    s
}
