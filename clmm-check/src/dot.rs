//! A picture of one execution as Graphviz DOT, herd-style (DESIGN.md §6,
//! `CLMM_DOT`): events grouped per work-item and work-group, with program
//! order (`po`, black), reads-from (`rf`, red), coherence order of atomic
//! locations (`co`, blue), synchronises-with (`gsw`/`lsw`, green, from the
//! model) and the racing pair highlighted. Built on the report path only.

use crate::graph::{Graph, LocInfo, UnitKind};
use crate::ids::{EventId, UnitId};
use crate::model::{self, Phase, Semantics};
use crate::report;
use std::fmt::Write as _;

fn node(e: EventId) -> String {
    if e.is_init() {
        format!("init{}", e.index)
    } else {
        format!("e{}_{}", e.unit.0, e.index)
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

/// The DOT text of `g`; `marked` events (a race) are drawn in red, bold.
pub fn render(g: &Graph, locs: &[LocInfo], sem: Semantics, marked: &[EventId], title: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "digraph clmm {{");
    let _ = writeln!(s, "  label=\"{}\"; labelloc=t; fontname=\"Helvetica\";", esc(title));
    let _ = writeln!(s, "  node [shape=box, fontname=\"Helvetica\", fontsize=10]; edge [fontname=\"Helvetica\", fontsize=9];");
    // Initial writes of the locations that are read from them.
    let mut inits: Vec<EventId> = g.event_ids().filter_map(|e| g.ev(e).rf.filter(|w| w.is_init())).collect();
    inits.sort();
    inits.dedup();
    if !inits.is_empty() {
        let _ = writeln!(s, "  subgraph cluster_init {{ label=\"initial state\"; style=dashed;");
        for w in &inits {
            let l = &locs[w.index as usize];
            let _ = writeln!(s, "    {} [label=\"{} = {}\"];", node(*w), esc(&l.name()), l.init as i64);
        }
        let _ = writeln!(s, "  }}");
    }
    // Units, grouped by work-group.
    let mut groups: Vec<(Option<u32>, Vec<usize>)> = Vec::new();
    for (u, unit) in g.units.iter().enumerate() {
        let key = unit.group().map(|x| x.0);
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(u),
            None => groups.push((key, vec![u])),
        }
    }
    for (key, units) in &groups {
        if let Some(gr) = key {
            let _ = writeln!(s, "  subgraph cluster_group{gr} {{ label=\"work-group {gr}\"; style=rounded;");
        }
        for &u in units {
            let unit = &g.units[u];
            let name = report::unit_name(g, UnitId(u as u32));
            let _ = writeln!(s, "  subgraph cluster_unit{u} {{ label=\"{}\"; style=solid;", esc(&name));
            for i in 0..unit.events.len() {
                let id = EventId { unit: UnitId(u as u32), index: i as u32 };
                let ev = g.ev(id);
                let mut label = format!("{u}.{i}: {}", report::op_text(g, id).trim());
                if let Some(l) = ev.loc {
                    let _ = write!(label, "\\n{}", locs[l.0 as usize].name());
                }
                let style = if marked.contains(&id) { ", color=red, penwidth=3, fontcolor=red" } else { "" };
                let _ = writeln!(s, "    {} [label=\"{}\"{style}];", node(id), esc(&label).replace("\\\\n", "\\n"));
            }
            for i in 1..unit.events.len() {
                let a = EventId { unit: UnitId(u as u32), index: i as u32 - 1 };
                let b = EventId { unit: UnitId(u as u32), index: i as u32 };
                let _ = writeln!(s, "    {} -> {} [label=\"po\"];", node(a), node(b));
            }
            let _ = writeln!(s, "  }}");
            if let (UnitKind::WorkItem { .. }, Some(p)) = (&unit.kind, unit.parent) {
                if let Some(first) = unit.events.first().map(|_| EventId { unit: UnitId(u as u32), index: 0 }) {
                    let _ = writeln!(s, "  {} -> {} [style=dotted, label=\"launch\"];", node(p), node(first));
                }
            }
        }
        if key.is_some() {
            let _ = writeln!(s, "  }}");
        }
    }
    // rf
    for e in g.event_ids() {
        if let Some(w) = g.ev(e).rf.filter(|w| g.contains(*w)) {
            let _ = writeln!(s, "  {} -> {} [color=red, fontcolor=red, label=\"rf\", constraint=false];", node(w), node(e));
        }
    }
    // co (atomic locations; consecutive writes)
    for (l, ws) in g.co.iter().enumerate() {
        if !locs.get(l).is_some_and(|x| x.atomic) || ws.is_empty() {
            continue;
        }
        let all: Vec<EventId> = g.writes_to(clmm_atomic::backend::LocId(l as u32)).collect();
        for p in all.windows(2) {
            if p[0].is_init() && !inits.contains(&p[0]) {
                continue;
            }
            let _ = writeln!(s, "  {} -> {} [color=blue, fontcolor=blue, label=\"co\", constraint=false];", node(p[0]), node(p[1]));
        }
    }
    // sw, from the model
    let ctx = model::Ctx::new(g, locs, sem);
    let rels = model::relations(&ctx, Phase::Complete);
    for (pairs, name) in [(&rels.gsw, "gsw"), (&rels.lsw, "lsw")] {
        for &(a, b) in pairs {
            let (x, y) = (ctx.ids[a], ctx.ids[b]);
            if x.is_init() || y.is_init() {
                continue;
            }
            let _ = writeln!(s, "  {} -> {} [color=darkgreen, fontcolor=darkgreen, label=\"{name}\", constraint=false];", node(x), node(y));
        }
    }
    if let [a, b] = marked {
        let _ = writeln!(s, "  {} -> {} [dir=both, color=red, style=dashed, penwidth=2, label=\"race\", fontcolor=red, constraint=false];", node(*a), node(*b));
    }
    let _ = writeln!(s, "}}");
    s
}
