//! Replay strings (DESIGN.md §6): a versioned text form of one execution,
//! enough to rebuild it by rerunning the closure (`CLMM_REPLAY`,
//! `Builder::replay`).
//!
//! The string is `clmm1:<fingerprint>:<steps>`. Each step adds the next
//! event of one unit, in an order that respects program order, reads-from,
//! barrier arrival and launch/join (a topological order of the graph, by
//! insertion stamp among the ready events):
//!
//! * `3` — unit 3 adds its next event (a fence, a barrier step, ...);
//! * `3r1_0` — unit 3 reads from event 0 of unit 1 (`ri5`: the initial
//!   value of location 5); `v7` adds the value when the write comes later
//!   (a load-buffering cycle); `s` marks a weak CAS that failed spuriously;
//! * `3c2_1` — unit 3 writes, right after write 2.1 in coherence order
//!   (`ci5`: first, after the initial value of location 5);
//! * `3r1_4v7c2_1` — an RMW of unit 3 reads 7 from event 4 of unit 1,
//!   added later, and its write part goes right after write 2.1 (that
//!   later write then goes between them).
//!
//! The fingerprint is the graph's ([`Graph::fingerprint`], 64 bits), so a
//! replay that rebuilds another execution (a string from another test, or
//! a closure that changed) is detected and reported.

use crate::graph::{Graph, Kind};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::LocId;
use std::fmt::{self, Write as _};

/// The version of the replay format this build reads and writes.
pub const VERSION: u32 = 1;

/// One step of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The unit that adds its next event.
    pub unit: u32,
    /// For reads: the write read from.
    pub rf: Option<EventId>,
    /// For reads of a write added later: the value read.
    pub value: Option<u64>,
    /// For plain writes, and RMWs reading a write added later: the
    /// coherence predecessor.
    pub co_pred: Option<EventId>,
    /// A weak CAS that failed spuriously.
    pub spurious: bool,
}

/// A decoded replay string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The steps, in order.
    pub steps: Vec<Step>,
    /// The low 64 bits of the execution graph's fingerprint.
    pub fingerprint: u64,
}

/// Why a replay string cannot be used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReplayError {
    /// Not a clmm replay string at all.
    NotReplay,
    /// Made by another version of the format.
    Version(String),
    /// Malformed at the given step.
    Malformed {
        /// The step (0-based).
        step: usize,
        /// The offending token.
        token: String,
    },
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReplayError::NotReplay => write!(f, "not a clmm replay string (it should start with \"clmm{VERSION}:\"; copy it whole from a failure report)"),
            ReplayError::Version(v) => {
                write!(f, "replay string of format \"{v}\", but this clmm reads format \"clmm{VERSION}\": rerun the test without CLMM_REPLAY to get a new string")
            }
            ReplayError::Malformed { step, token } => write!(f, "malformed replay string at step {step} (\"{token}\"); copy it whole from a failure report"),
        }
    }
}

impl std::error::Error for ReplayError {}

fn id_text(s: &mut String, w: EventId) {
    if w.is_init() {
        let _ = write!(s, "i{}", w.index);
    } else {
        let _ = write!(s, "{}_{}", w.unit.0, w.index);
    }
}

/// The node of an event in the replay order: an RMW's write part belongs to
/// its read part's step.
pub fn node(g: &Graph, e: EventId) -> EventId {
    if !e.is_init() && g.ev(e).kind == Kind::RmwWrite {
        EventId { unit: e.unit, index: e.index - 1 }
    } else {
        e
    }
}

/// The events that must be added before `e` (besides its program-order
/// predecessor): its rf source, the entries of a barrier it leaves, the
/// events of the kernels a join waits for, the launch that created its unit.
fn deps(g: &Graph, e: EventId, out: &mut Vec<EventId>) {
    out.clear();
    let ev = g.ev(e);
    if e.index > 0 {
        out.push(node(g, EventId { unit: e.unit, index: e.index - 1 }));
    } else if let Some(p) = g.units[e.unit.index()].parent {
        out.push(p);
    }
    if let Some(w) = ev.rf.filter(|w| !w.is_init() && g.contains(*w)) {
        out.push(node(g, w));
    }
    let mut sync = Vec::new();
    g.sync_preds(e, &mut sync);
    out.extend(sync.into_iter().map(|x| node(g, x)));
}

/// The replay string of an execution graph.
pub fn encode(g: &Graph) -> String {
    let (order, pos) = replay_order(g);
    let mut s = format!("clmm{VERSION}:{:016x}:", g.fingerprint() as u64);
    for (i, &(e, early)) in order.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        let ev = g.ev(e);
        let _ = write!(s, "{}", e.unit.0);
        // The co-latest write before write `x` in coherence order among
        // those added earlier in this order.
        let co_text = |s: &mut String, x: EventId| {
            let loc = g.ev(x).loc.expect("write location");
            let co = &g.co[loc.0 as usize];
            let at = co.iter().rposition(|&y| y == x).expect("a write is in coherence order");
            let pred = co[..at].iter().rev().copied().find(|&y| pos.at(node(g, y)).is_some_and(|p| p < i)).unwrap_or(EventId::init(loc));
            s.push('c');
            id_text(s, pred);
        };
        if let Some(w) = ev.rf {
            s.push('r');
            id_text(&mut s, w);
            if early {
                let _ = write!(s, "v{}", ev.value);
                let part = EventId { unit: e.unit, index: e.index + 1 };
                if ev.kind == Kind::RmwRead && g.contains(part) {
                    // An RMW reading a later write: its write part's
                    // place, which that write takes right before it.
                    co_text(&mut s, part);
                }
            }
            if ev.spurious {
                s.push('s');
            }
        } else if ev.kind == Kind::Write {
            co_text(&mut s, e);
        }
    }
    s
}

/// The steps of `g` in replay order, each with whether its read comes
/// before its rf source (a load-buffering cycle: the value is recorded),
/// and where each step is in it.
fn replay_order(g: &Graph) -> (Vec<(EventId, bool)>, Done) {
    let mut nodes: Vec<EventId> = g.event_ids().filter(|&e| g.ev(e).kind != Kind::RmwWrite).collect();
    nodes.sort_by_key(|&e| g.ev(e).stamp);
    let mut done = Done::new(g);
    let mut out = Vec::with_capacity(nodes.len());
    let mut d = Vec::new();
    // The first ready node in stamp order is taken at each step. The nodes
    // before `next` that are not done yet are `waiting` (in stamp order):
    // they are looked at again, and `next` moves on only when none is
    // ready. Scanning from the first node at every step made a failure's
    // report O(n^2) in the events (a livelock stopped at the step bound).
    let mut waiting: Vec<usize> = Vec::new();
    let mut next = 0;
    while out.len() < nodes.len() {
        let ready = |e: EventId, d: &mut Vec<EventId>| {
            deps(g, e, d);
            d.iter().all(|&x| done.has(x))
        };
        let mut pick = waiting.iter().position(|&i| ready(nodes[i], &mut d)).map(|k| waiting.remove(k));
        while pick.is_none() && next < nodes.len() {
            let i = next;
            next += 1;
            if ready(nodes[i], &mut d) {
                pick = Some(i);
            } else {
                waiting.push(i);
            }
        }
        let (e, early) = match pick {
            Some(i) => (nodes[i], false),
            None => {
                // A cycle through reads-from: the first pending read whose
                // other dependencies are met reads ahead.
                let k = waiting
                    .iter()
                    .position(|&i| {
                        let e = nodes[i];
                        g.ev(e).kind.is_read() && {
                            deps(g, e, &mut d);
                            let src = g.ev(e).rf.map(|w| node(g, w));
                            d.iter().all(|&x| done.has(x) || Some(x) == src)
                        }
                    })
                    .expect("replay order: a cycle not through reads-from");
                (nodes[waiting.remove(k)], true)
            }
        };
        done.set(e, out.len());
        out.push((e, early));
    }
    (out, done)
}

/// The events already in a replay order, and where: per unit, by index.
struct Done(Vec<Vec<Option<usize>>>);

impl Done {
    fn new(g: &Graph) -> Done {
        Done(g.units.iter().map(|u| vec![None; u.events.len()]).collect())
    }
    fn set(&mut self, e: EventId, at: usize) {
        self.0[e.unit.index()][e.index as usize] = Some(at);
    }
    /// Where `e` is in the order (`None`: not yet, or an initial write).
    fn at(&self, e: EventId) -> Option<usize> {
        if e.is_init() {
            None
        } else {
            self.0.get(e.unit.index()).and_then(|u| u.get(e.index as usize)).copied().flatten()
        }
    }
    fn has(&self, e: EventId) -> bool {
        self.at(e).is_some()
    }
}

fn parse_id(t: &str) -> Option<EventId> {
    if let Some(l) = t.strip_prefix('i') {
        return Some(EventId::init(LocId(l.parse().ok()?)));
    }
    let (u, i) = t.split_once('_')?;
    Some(EventId { unit: UnitId(u.parse().ok()?), index: i.parse().ok()? })
}

/// Decode a replay string.
pub fn decode(s: &str) -> Result<Plan, ReplayError> {
    let s = s.trim().trim_matches('\'').trim_matches('"');
    let Some((ver, rest)) = s.split_once(':') else { return Err(ReplayError::NotReplay) };
    if !ver.starts_with("clmm") {
        return Err(ReplayError::NotReplay);
    }
    if ver != format!("clmm{VERSION}") {
        return Err(ReplayError::Version(ver.to_string()));
    }
    let Some((fp, body)) = rest.split_once(':') else { return Err(ReplayError::Malformed { step: 0, token: rest.to_string() }) };
    let fingerprint = u64::from_str_radix(fp, 16).map_err(|_| ReplayError::Malformed { step: 0, token: fp.to_string() })?;
    let mut steps = Vec::new();
    for (i, tok) in body.split(',').enumerate().filter(|(_, t)| !t.is_empty()) {
        let bad = || ReplayError::Malformed { step: i, token: tok.to_string() };
        let digits = tok.find(|c: char| !c.is_ascii_digit()).unwrap_or(tok.len());
        let unit = tok[..digits].parse().map_err(|_| bad())?;
        let mut step = Step { unit, rf: None, value: None, co_pred: None, spurious: false };
        let mut rest = &tok[digits..];
        if let Some(r) = rest.strip_prefix('s') {
            step.spurious = true;
            rest = r;
        }
        if let Some(r) = rest.strip_suffix('s') {
            step.spurious = true;
            rest = r;
        }
        if let Some(r) = rest.strip_prefix('r') {
            // An RMW reading a later write ends with its write part's place.
            let r = match r.split_once('c') {
                Some((r, c)) => {
                    step.co_pred = Some(parse_id(c).ok_or_else(bad)?);
                    r
                }
                None => r,
            };
            let (id, val) = match r.split_once('v') {
                Some((id, v)) => (id, Some(v.parse().map_err(|_| bad())?)),
                None => (r, None),
            };
            step.rf = Some(parse_id(id).ok_or_else(bad)?);
            step.value = val;
        } else if let Some(c) = rest.strip_prefix('c') {
            step.co_pred = Some(parse_id(c).ok_or_else(bad)?);
        } else if !rest.is_empty() {
            return Err(bad());
        }
        steps.push(step);
    }
    Ok(Plan { steps, fingerprint })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_rejects_other_strings_clearly() {
        assert_eq!(decode("hello"), Err(ReplayError::NotReplay));
        assert!(matches!(decode("clmm0:00:1"), Err(ReplayError::Version(v)) if v == "clmm0"));
        assert!(matches!(decode("clmm1:0000000000000001:0,1x"), Err(ReplayError::Malformed { step: 1, .. })));
        let p = decode("clmm1:00000000000000ff:0,1ri3,2r1_0v7s,1c1_2").unwrap();
        assert_eq!(p.fingerprint, 255);
        assert_eq!(p.steps.len(), 4);
        assert_eq!(p.steps[1].rf, Some(EventId::init(LocId(3))));
        assert_eq!(p.steps[2].rf, Some(EventId { unit: UnitId(1), index: 0 }));
        assert_eq!(p.steps[2].value, Some(7));
        assert!(p.steps[2].spurious);
        assert_eq!(p.steps[3].co_pred, Some(EventId { unit: UnitId(1), index: 2 }));
        // An RMW reading a later write, and its write part's place.
        let p = decode("clmm1:00000000000000ff:2r1_1v1ci0").unwrap();
        assert_eq!((p.steps[0].rf, p.steps[0].value, p.steps[0].co_pred), (Some(EventId { unit: UnitId(1), index: 1 }), Some(1), Some(EventId::init(LocId(0)))));
        assert!(matches!(decode("clmm1:00000000000000ff:2r1_1v1cx"), Err(ReplayError::Malformed { step: 0, .. })));
    }
}
