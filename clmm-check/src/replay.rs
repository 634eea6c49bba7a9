//! Replay strings (DESIGN.md §6): a versioned text form of one execution,
//! enough to rebuild it by rerunning the closure (`CLMM_REPLAY`,
//! `Builder::replay`).
//!
//! The string is `clmm2:<fingerprint>:<steps>`. Each step adds the next
//! event of one unit, in an order that respects program order, reads-from,
//! barrier arrival and launch/join (a topological order of the graph, by
//! insertion stamp among the ready events):
//!
//! * `3` — unit 3 adds its next event (a fence, a barrier step, ...);
//! * `3r1_0` — unit 3 reads from event 0 of unit 1 (`ri5`: the initial
//!   value of location 5; `r-2`: the event of unit 3 two places before
//!   the read); `v7` adds the value when the write comes later (a
//!   load-buffering cycle); `s` marks a weak CAS that failed spuriously;
//! * `3c2_1` — unit 3 writes, right after write 2.1 in coherence order
//!   (`ci5`: first, after the initial value of location 5; `c-2`: right
//!   after the write of unit 3 two places before this one);
//! * `3r1_4v7c2_1` — an RMW of unit 3 reads 7 from event 4 of unit 1,
//!   added later, and its write part goes right after write 2.1 (that
//!   later write then goes between them; `c-k` counts from the write
//!   part).
//!
//! A step repeated `n` times in a row is written once, as `3r-1*n`, and a
//! run of steps repeated as `[3c-2,3r-1]*n`: with references to a unit's
//! own events counted back from the step, the loop of a livelock stopped
//! at the step bound is a few bytes, where it took 9 bytes an event (an
//! environment variable holds at most 128 KiB on Linux). Format 1 (no
//! repetitions, no references counted back) is still read.
//!
//! The fingerprint is the graph's ([`Graph::fingerprint`], 64 bits), so a
//! replay that rebuilds another execution (a string from another test, or
//! a closure that changed) is detected and reported.

use crate::graph::{Graph, Kind};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::LocId;
use std::fmt::{self, Write as _};

/// The version of the replay format this build writes.
pub const VERSION: u32 = 2;

/// The versions of the replay format this build reads (format 1 is format
/// 2 without repetitions and references counted back).
const READS: [u32; 2] = [1, 2];

/// Expanded, a replay string may not have more steps than this (a
/// repetition count is a number anyone can type).
const MAX_STEPS: usize = 1 << 26;

/// An event a step names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ref {
    /// This event (or an initial write).
    Event(EventId),
    /// The event of the step's own unit this many places before the event
    /// the reference is about (the read, or the write placed).
    Back(u32),
}

impl Ref {
    /// The event, for a reference made by event `e`: `None` for a
    /// reference back beyond the unit's first event.
    pub fn of(self, e: EventId) -> Option<EventId> {
        match self {
            Ref::Event(x) => Some(x),
            Ref::Back(k) => e.index.checked_sub(k).map(|index| EventId { unit: e.unit, index }),
        }
    }
}

/// One step of a replay.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Step {
    /// The unit that adds its next event.
    pub unit: u32,
    /// For reads: the write read from.
    pub rf: Option<Ref>,
    /// For reads of a write added later: the value read.
    pub value: Option<u64>,
    /// For plain writes, and RMWs reading a write added later: the
    /// coherence predecessor.
    pub co_pred: Option<Ref>,
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
                write!(f, "replay string of format \"{v}\", but this clmm reads formats \"clmm1\" and \"clmm2\": rerun the test without CLMM_REPLAY to get a new string")
            }
            ReplayError::Malformed { step, token } => write!(f, "malformed replay string at step {step} (\"{token}\"); copy it whole from a failure report"),
        }
    }
}

impl std::error::Error for ReplayError {}

/// Event `w` as event `by` names it: counted back when both are of one
/// unit.
fn id_text(s: &mut String, w: EventId, by: EventId) {
    if w.is_init() {
        let _ = write!(s, "i{}", w.index);
    } else if w.unit == by.unit && w.index < by.index {
        let _ = write!(s, "-{}", by.index - w.index);
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
    let mut tokens = Vec::with_capacity(order.len());
    for (i, &(e, early)) in order.iter().enumerate() {
        let mut s = String::new();
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
            id_text(s, pred, x);
        };
        if let Some(w) = ev.rf {
            s.push('r');
            id_text(&mut s, w, e);
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
        tokens.push(s);
    }
    format!("clmm{VERSION}:{:016x}:{}", g.fingerprint() as u64, repeats(&tokens))
}

/// The longest run of steps [`repeats`] looks for as a unit of repetition.
const MAX_PERIOD: usize = 16;

/// `tokens` joined by commas, a step repeated in a row written `t*n`, and
/// a run of steps repeated `[t,u]*n` (greedily, from the left: at each
/// step the period of at most [`MAX_PERIOD`] steps that covers the most).
fn repeats(tokens: &[String]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < tokens.len() {
        let (mut period, mut reps) = (1, 1);
        for p in 1..=MAX_PERIOD.min((tokens.len() - i) / 2) {
            let mut r = 1;
            while i + (r + 1) * p <= tokens.len() && tokens[i + r * p..i + (r + 1) * p] == tokens[i..i + p] {
                r += 1;
            }
            if r >= 2 && r * p > period * reps {
                (period, reps) = (p, r);
            }
        }
        if !out.is_empty() {
            out.push(',');
        }
        match (period, reps) {
            (_, 1) => out.push_str(&tokens[i]),
            (1, n) => {
                let _ = write!(out, "{}*{n}", tokens[i]);
            }
            (p, n) => {
                let _ = write!(out, "[{}]*{n}", tokens[i..i + p].join(","));
            }
        }
        i += period * reps;
    }
    out
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

fn parse_id(t: &str) -> Option<Ref> {
    if let Some(l) = t.strip_prefix('i') {
        return Some(Ref::Event(EventId::init(LocId(l.parse().ok()?))));
    }
    if let Some(k) = t.strip_prefix('-') {
        return Some(Ref::Back(k.parse().ok().filter(|&k| k > 0)?));
    }
    let (u, i) = t.split_once('_')?;
    Some(Ref::Event(EventId { unit: UnitId(u.parse().ok()?), index: i.parse().ok()? }))
}

/// The steps of a replay string's body, repetitions expanded.
fn expand(body: &str) -> Result<Vec<&str>, ReplayError> {
    let mut out = Vec::new();
    let mut rest = body;
    while !rest.is_empty() {
        let bad = |token: &str| ReplayError::Malformed { step: out.len(), token: token.to_string() };
        // One item: `t`, `t*n` or `[t,...]*n`, up to the next top-level comma.
        let (group, tail) = if let Some(r) = rest.strip_prefix('[') {
            let end = r.find(']').ok_or_else(|| bad(rest))?;
            (Some(&r[..end]), &r[end + 1..])
        } else {
            (None, rest)
        };
        let end = tail.find(',').unwrap_or(tail.len());
        let (head, after) = (&tail[..end], tail.get(end + 1..).unwrap_or(""));
        let (tok, count) = match head.rsplit_once('*') {
            Some((t, n)) => (t, n.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(|| bad(head))?),
            None => (head, 1),
        };
        let steps: Vec<&str> = match group {
            Some(g) if tok.is_empty() && g.split(',').all(|t| !t.is_empty() && !t.contains(['[', '*'])) => g.split(',').collect(),
            Some(g) => return Err(bad(g)),
            None => vec![tok],
        };
        if out.len() + steps.len().saturating_mul(count) > MAX_STEPS {
            return Err(bad(head));
        }
        for _ in 0..count {
            out.extend_from_slice(&steps);
        }
        rest = after;
    }
    Ok(out)
}

/// Decode a replay string.
pub fn decode(s: &str) -> Result<Plan, ReplayError> {
    let s = s.trim().trim_matches('\'').trim_matches('"');
    let Some((ver, rest)) = s.split_once(':') else { return Err(ReplayError::NotReplay) };
    if !ver.starts_with("clmm") {
        return Err(ReplayError::NotReplay);
    }
    if !READS.iter().any(|v| ver == format!("clmm{v}")) {
        return Err(ReplayError::Version(ver.to_string()));
    }
    let Some((fp, body)) = rest.split_once(':') else { return Err(ReplayError::Malformed { step: 0, token: rest.to_string() }) };
    let fingerprint = u64::from_str_radix(fp, 16).map_err(|_| ReplayError::Malformed { step: 0, token: fp.to_string() })?;
    let mut steps = Vec::new();
    for (i, tok) in expand(body)?.into_iter().enumerate().filter(|(_, t)| !t.is_empty()) {
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

    fn ev(unit: u32, index: u32) -> Option<Ref> {
        Some(Ref::Event(EventId { unit: UnitId(unit), index }))
    }

    #[test]
    fn decode_rejects_other_strings_clearly() {
        assert_eq!(decode("hello"), Err(ReplayError::NotReplay));
        assert!(matches!(decode("clmm0:00:1"), Err(ReplayError::Version(v)) if v == "clmm0"));
        assert!(matches!(decode("clmm3:00:1"), Err(ReplayError::Version(v)) if v == "clmm3"));
        assert!(matches!(decode("clmm1:0000000000000001:0,1x"), Err(ReplayError::Malformed { step: 1, .. })));
        let p = decode("clmm1:00000000000000ff:0,1ri3,2r1_0v7s,1c1_2").unwrap();
        assert_eq!(p.fingerprint, 255);
        assert_eq!(p.steps.len(), 4);
        assert_eq!(p.steps[1].rf, Some(Ref::Event(EventId::init(LocId(3)))));
        assert_eq!(p.steps[2].rf, ev(1, 0));
        assert_eq!(p.steps[2].value, Some(7));
        assert!(p.steps[2].spurious);
        assert_eq!(p.steps[3].co_pred, ev(1, 2));
        // An RMW reading a later write, and its write part's place.
        let p = decode("clmm1:00000000000000ff:2r1_1v1ci0").unwrap();
        assert_eq!((p.steps[0].rf, p.steps[0].value, p.steps[0].co_pred), (ev(1, 1), Some(1), Some(Ref::Event(EventId::init(LocId(0))))));
        assert!(matches!(decode("clmm1:00000000000000ff:2r1_1v1cx"), Err(ReplayError::Malformed { step: 0, .. })));
    }

    #[test]
    fn repetitions_and_references_back() {
        let p = decode("clmm2:00000000000000ff:0,1ci0,[1r-1,1c-2]*3,2r1_4*2,1s").unwrap();
        let units: Vec<u32> = p.steps.iter().map(|s| s.unit).collect();
        assert_eq!(units, [0, 1, 1, 1, 1, 1, 1, 1, 2, 2, 1]);
        assert_eq!(p.steps[2].rf, Some(Ref::Back(1)));
        assert_eq!(p.steps[3].co_pred, Some(Ref::Back(2)));
        assert_eq!(p.steps[8].rf, ev(1, 4));
        assert!(p.steps[10].spurious);
        // Counted back from the event the step is about.
        let e = EventId { unit: UnitId(1), index: 5 };
        assert_eq!(Ref::Back(2).of(e), Some(EventId { unit: UnitId(1), index: 3 }));
        assert_eq!(Ref::Back(6).of(e), None);
        for bad in ["[1r-1,1c-2", "[1r-1,[1]*2]*2", "1r-1*0", "1r-1*x", "1r-0", "1*99999999999"] {
            assert!(matches!(decode(&format!("clmm2:00000000000000ff:{bad}")), Err(ReplayError::Malformed { .. })), "{bad}");
        }
    }

    #[test]
    fn repeats_finds_the_loop() {
        let t = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(repeats(&t(&["0", "1ci0", "1r-1", "1c-2", "1r-1", "1c-2", "1r-1", "1c-2", "1r-1"])), "0,1ci0,[1r-1,1c-2]*3,1r-1");
        assert_eq!(repeats(&t(&["1ri0", "1ri0", "1ri0", "2"])), "1ri0*3,2");
        assert_eq!(repeats(&t(&["a", "b", "c"])), "a,b,c");
        // Expanding gives the tokens back.
        let toks = t(&["0", "1", "1r-1", "2", "1r-1", "2", "1r-1", "2", "3", "3", "4"]);
        assert_eq!(expand(&repeats(&toks)).unwrap(), toks.iter().map(String::as_str).collect::<Vec<_>>());
    }
}
