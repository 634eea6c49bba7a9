//! Happens-before by vector clocks, incrementally (DESIGN.md §3: "each unit
//! keeps one clock per region"): the explorer's consistency check of
//! prefixes ([`super::Phase::Prefix`]).
//!
//! For each event `e` and each region `r` (`G`, `L`) a view of `ghb` /
//! `lhb` (`opencl_base.cat`, "Happens-before"):
//!
//! ```text
//! let ghb = (((G^2) & (sb | (I * !I))) | gsw)+
//! let lhb = (((L^2) & (sb | (I * !I))) | lsw)+
//! ```
//!
//! A view is a vector clock over units (`clock[u] = k`: the events of `u`
//! in region `r` before position `k` happen before `e`; sequenced-before
//! counts only between two events of the region, so these form a prefix of
//! `u`'s region events), a flag for the initial writes (`I * !I`), and the
//! events outside the region that reach `e` by a synchronisation edge
//! lifted across regions (`scf`: an SC access or a fence with both flags
//! ends a `gsw` edge of the local region; rare, so a short list). A view is
//! computed once, when its event is added, from the views of its
//! predecessors: the previous region event of its unit, its unit's creator
//! (a launch), the units a join waits for, the entries of a barrier
//! instance for its exit, and the release ends of `ra_sw` (`rs_min`, see
//! [`super::Phase`]) for an acquire end. An event that nothing new
//! synchronises with shares its predecessor's clock (`View`), and the
//! exits of a barrier instance share the join of its entries, computed
//! once per instance, and its clock (`BarrierJoin`): a work-group of n
//! work-items costs O(1) an event and a barrier exit, not O(n) and
//! O(n^2). A clock holds two segments of units (`Slice`), the first
//! units (the host's) and a window (a work-group's), so that its length
//! is that of the work-group, not of the NDRange up to its work-item. The axioms are then checked on the
//! new event only: an instance of `coh(hb)`, `rf; hb` or `vis(hb)` is
//! checked when its hb-latest event is added, against that event's view
//! (instead of the explicit model's closure of the whole graph,
//! [`super::check`]): `coh(hb)` in O(units), from each unit's last access
//! to the location in the view (`Clocks::observed`); `rf; hb` only for
//! a write that a read already reads (`Clocks::readers`); `vis(hb)` in
//! O(writes of the location), for non-atomic reads.
//!
//! The views stay valid as events are appended; the explorer's other
//! changes (a read reading another write, a write moved in coherence
//! order, a backward revisit) change an event's signature (stamp, kind,
//! rf, coherence predecessor), and every view computed after it is
//! recomputed. Where the views cannot decide, [`Clocks::check`] answers
//! [`Outcome::Unsure`] and the explorer applies the explicit model: the
//! commands of device-side queues (whose creator edges order only
//! fine-grained SVM, [`super::host`]), a non-atomic read whose visibility may
//! depend on a release sequence that `rs_min` leaves out through a
//! release end without views yet (`Clocks::visible_by_rs`), and graphs
//! whose region edges admit no single order (a load-buffering cycle
//! across the two regions). `CLMM_CROSSCHECK=1` runs
//! both on every prefix and panics if they disagree.
//!
//! The SC axiom (`O-Ssimp`, `O-Sscoped`) is checked on the whole graph
//! once every event has views, between the SC events only (submodule
//! `sc`): the scoped one on every prefix, the other on complete graphs.
//!
//! Submodules: `clock` (the clocks, views and joins), `hb_axioms` (the
//! axioms on a new event), `sc` (the SC axiom), `races` (races and
//! barrier divergence of a complete graph) and `queries` (what the
//! explorer asks of the views: coherence floors, the writes a non-atomic
//! read may read). This file computes the views and keeps them in step
//! with the graph.

mod clock;
mod hb_axioms;
mod queries;
mod races;
mod sc;

use self::clock::{Join, Slice, View};
use self::races::RaceBufs;
use super::inclusive_scope::inclusive;
use super::race::{race_pairs, Access, PairHb};
use super::sw::scf_pair;
use super::{produced, Attr, ScModel, Semantics, Violation};
use crate::graph::{Graph, Kind, LocInfo, Region};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::LocId;
use clmm_atomic::Scope;

/// The answer of the vector-clock check of a prefix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Every axiom checked on prefixes holds.
    Consistent,
    /// An axiom is violated.
    Inconsistent(Violation),
    /// The views cannot decide (the reason); use the explicit model.
    Unsure(&'static str),
}

/// The two regions, as indices of [`Node::views`].
const G: usize = 0;
const L: usize = 1;

/// What an event's view was computed from; a change invalidates it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct Sig {
    stamp: u32,
    kind: Kind,
    loc: Option<clmm_atomic::backend::LocId>,
    atomic: Option<(clmm_atomic::Order, Scope)>,
    rf: Option<EventId>,
    co_pred: Option<EventId>,
}

#[derive(Clone, Debug)]
struct Node {
    /// The length of [`Clocks::arena`] before this node's views: where
    /// [`Clocks::truncate`] cuts it (a view may share an earlier node's
    /// slice).
    arena_at: u32,
    sig: Sig,
    attr: Attr,
    views: [View; 2],
    /// 1 + the position of the last event of this unit in each region at
    /// or before this one (0: none).
    last_in: [u32; 2],
    /// Position in [`Clocks::order`].
    order: u32,
    /// Counted in [`Clocks::rs_ext`].
    rs_ext: bool,
    /// A release fence of its unit is at or before it.
    fenced: bool,
    /// An SC event: counted in [`Clocks::sc_any`].
    sc_any: bool,
    /// A synchronisation between a host thread and a work-item: counted
    /// in [`Clocks::cross`].
    cross: bool,
    /// A read whose write was not in the graph when its views were
    /// computed (a speculative read).
    rf_absent: bool,
    /// A read whose write had no views when its own were computed
    /// (`rf_absent`, or a write whose views were not computed yet):
    /// counted in [`Clocks::ahead`].
    ahead: bool,
    /// 1 + the position of the last acquire fence of its unit at or
    /// before it (0: none), for [`Clocks::acquire_fence_floor`].
    acq_fence: u32,
}

/// The vector clocks of the explorer's current graph.
#[derive(Default)]
pub struct Clocks {
    /// Per unit, the views of a program-order prefix of its events.
    nodes: Vec<Vec<Node>>,
    /// The events with a view, in the order they were computed (a
    /// topological order of the region edges and po).
    order: Vec<EventId>,
    arena: Vec<u32>,
    /// Per location, the reads with a view, in [`Clocks::order`].
    reads: Vec<Vec<EventId>>,
    /// Per location, the units that access it with a view, in the order
    /// of their first such access, each with the positions of its
    /// accesses to the location, in program order ([`Clocks::observed`]),
    /// each with whether one of them up to it may head a release sequence
    /// ([`extends_release_sequences`]). Only the units that access it:
    /// a table of every unit per location cost a kernel of n work-items
    /// O(n) memory per location and O(n) time per access.
    access: Vec<Vec<(u32, Accesses)>>,
    /// Per location, the units of [`Clocks::access`] (their places in it)
    /// that wrote it, in the order of their first such write: what
    /// [`Clocks::last_writes`] and [`Clocks::unhidden_writes`] look at. A
    /// location that many units read and few write (a matrix read by
    /// every work-item of its row) made each read cost O(readers).
    writers: Vec<Vec<u32>>,
    /// Emptied position lists of [`Clocks::access`], kept for their
    /// buffers.
    spare_access: Vec<Accesses>,
    /// Per write (by unit and position), how many reads with a view read
    /// it (once it is produced, [`Node::rf_absent`]): a write without any
    /// skips the scan of `O-Rf`.
    readers: Vec<Vec<u32>>,
    /// Writes that may extend a release sequence beyond `rs_min` (a
    /// non-RMW write after an atomic write of its unit to its location
    /// that may head one, [`extends_release_sequences`]).
    rs_ext: u32,
    /// SC events: with two, the SC axiom is checked ([`Clocks::sc_holds`]).
    sc_any: u32,
    /// Synchronisations between a host thread and a work-item.
    cross: u32,
    /// [`Join`]'s buffers.
    scratch: [Vec<u32>; 2],
    /// Reads computed before their write ([`Node::ahead`]): their views
    /// are computed again once the write has its own.
    ahead: u32,
    /// Their positions in [`Clocks::order`], ascending: the only views
    /// [`Clocks::ahead_from`] has to look at.
    ahead_at: Vec<u32>,
    /// The graph may have changed other than by appending events since
    /// the last check ([`Clocks::note_changed`]); if not, the O(events)
    /// scan of [`Clocks::changed_from`] is skipped, and only the reads that
    /// are [`Node::ahead`] are looked at ([`Clocks::ahead_from`]).
    changed: bool,
    /// Check that claim: validate anyway, and panic if a view was stale
    /// (`CLMM_CROSSCHECK`).
    pub verify: bool,
    /// [`Clocks::sources`]'s output, kept for its buffers.
    srcs: [Vec<EventId>; 2],
    /// The writes that may hide another ([`Clocks::last_writes`]), kept
    /// for its buffer.
    seen: Vec<EventId>,
    /// [`Clocks::races`]'s buffers.
    race_bufs: RaceBufs,
    /// [`Clocks::sc_holds`]'s buffers.
    sc_scratch: sc::ScScratch,
    /// The entries of the barrier instances whose exits were computed
    /// last, joined ([`BarrierJoin`]).
    bar_joins: Vec<BarrierJoin>,
    /// [`Clocks::sources`]'s barrier entries, kept for its buffer.
    entries: Vec<EventId>,
    /// The units that may have events without views: the ones the
    /// explorer appended to ([`Clocks::note_appended`]), cut by
    /// [`Clocks::truncate`], left without views by the last check, and
    /// every unit after other changes than appends ([`Clocks::sync`]). A
    /// check looks at these only: comparing every unit's lengths cost a
    /// kernel of n work-items O(n) an event.
    dirty: Vec<u32>,
}

/// A unit's accesses to a location with views ([`Clocks::access`]), in
/// program order.
type Accesses = Vec<LocAccess>;

/// One access of a unit to a location ([`Accesses`]).
#[derive(Clone, Copy, Debug)]
struct LocAccess {
    /// Its position in its unit.
    index: u32,
    /// Whether one of the unit's accesses up to it may head a release
    /// sequence ([`extends_release_sequences`]).
    heads: bool,
    /// 1 + the place in [`Accesses`] of the unit's last write of the
    /// location up to it (0: none), so that the last write a view holds
    /// is found in O(log accesses) ([`Clocks::last_writes`]).
    last_write: u32,
}

/// The join of the views of a barrier instance's entries (`bar_sw(r)`,
/// `opencl_base.cat` line 54: each entry fence synchronises with every
/// other member's exit fence), per region. Every exit of the instance
/// joins the same entries, so the join is computed once: joining them at
/// each exit made a work-group of n work-items cost O(n^3) per barrier
/// (n exits, n entries, clocks of n units). Kept while the views of its
/// entries are (they are all before `max_order` in [`Clocks::order`]),
/// and used for an exit whose entries are exactly `entries`.
struct BarrierJoin {
    /// The instance ([`Graph::barrier_instance`]).
    key: crate::graph::InstanceKey,
    entries: Vec<EventId>,
    max_order: u32,
    /// Per region.
    regions: [Join; 2],
    /// Per region, the join's clock in [`Clocks::arena`],
    /// once an exit has needed it: the exits that nothing else
    /// synchronises with share it, each with its own position
    /// ([`View::own`]), instead of a copy each. Copies made a kernel of
    /// n work-items hold O(n) clock entries per exit (16 work-groups of
    /// 256 work-items: 816 MB for one execution).
    slices: [Option<Slice>; 2],
}

/// The most barrier joins [`Clocks`] keeps (the instances of the last few
/// barriers of the running work-groups).
const BARRIER_JOINS: usize = 16;

enum Step {
    Done,
    NotReady,
    Stop(Outcome),
}

fn region_of(attr: &Attr, r: usize) -> bool {
    if r == G {
        attr.g
    } else {
        attr.l
    }
}

fn loc_region(locs: &[LocInfo], l: usize) -> [bool; 2] {
    match locs[l].region {
        Region::Global => [true, false],
        Region::Local(_) => [false, true],
        Region::Unqualified => [false, false],
    }
}

/// The region (`G` or `L`) location `l` is in; `None` for herd's
/// unqualified locations, in neither.
fn region_index(locs: &[LocInfo], l: usize) -> Option<usize> {
    match loc_region(locs, l) {
        [true, _] => Some(G),
        [_, true] => Some(L),
        _ => None,
    }
}

/// Whether write `e` continues the release sequences of earlier atomic
/// writes of its unit to its location (`rs' = wi | ...`,
/// `opencl_base.cat` line 35), which `rs_min` (RMW chains) leaves out:
/// counted in [`Clocks::rs_ext`]. Only sequences that can start an
/// `ra_sw` edge count: headed by a release write, or by an atomic write
/// after a release fence of its unit (`[r & rel]; Fsb?; [W \ s_wi]; rs?`,
/// line 49; the scope is not looked at, which only counts more). A loop
/// of relaxed stores extends none, and its executions stay with the
/// views. [`Clocks::add`] keeps the same answer per unit and location
/// ([`Clocks::access`]) instead of this scan.
fn extends_release_sequences(g: &Graph, locs: &[LocInfo], e: EventId) -> bool {
    let ev = g.ev(e);
    if ev.kind != Kind::Write || !ev.loc.is_some_and(|l| locs[l.0 as usize].atomic) {
        return false;
    }
    let mut fenced = false;
    g.units[e.unit.index()].events[..e.index as usize].iter().enumerate().any(|(i, x)| {
        let a = Attr::of(x, e.unit, i as u32, locs);
        let head = may_head_release_sequence(x, &a, fenced);
        fenced |= a.is_fence() && a.is_rel();
        head && x.loc == ev.loc
    })
}

/// Whether event `x` (attributes `a`) is an atomic write that may head a
/// release sequence ([`extends_release_sequences`]); `fenced`: a release
/// fence of its unit comes before it.
fn may_head_release_sequence(x: &crate::graph::Event, a: &Attr, fenced: bool) -> bool {
    x.kind.is_write() && x.atomic.is_some() && (fenced || a.is_rel())
}

/// For an acquire seq_cst fence of one region of unit `u` (attributes
/// `a`) whose reads start at `floor_at` ([`Clocks::acquire_fence_floor`]):
/// the fence before that, whose view of the other region holds the `scf`
/// lifts of the reads before it, which this fence lifts too.
fn lifts_of_floor(u: UnitId, a: &Attr, floor_at: u32) -> Option<EventId> {
    if !(a.is_fence() && a.is_acq() && a.is_sc() && a.g != a.l) {
        return None;
    }
    Some(EventId { unit: u, index: floor_at.checked_sub(1)? })
}

/// The coherence predecessor of write `w` (`None`: the initial write).
fn co_pred(g: &Graph, w: EventId, loc: usize) -> Option<EventId> {
    Some(g.co_pred(w, LocId(loc as u32))).filter(|p| !p.is_init())
}

fn sig_of(g: &Graph, e: EventId) -> Sig {
    let ev = g.ev(e);
    let co_pred = match (ev.kind.is_write(), ev.loc) {
        (true, Some(l)) => co_pred(g, e, l.0 as usize),
        _ => None,
    };
    Sig { stamp: ev.stamp, kind: ev.kind, loc: ev.loc, atomic: ev.atomic, rf: ev.rf, co_pred }
}

impl Clocks {
    /// No views, keeping the buffers (a worker's next run); the next check
    /// validates everything.
    pub fn reset(&mut self) {
        let Clocks { nodes, order, arena, reads, access, writers, readers, rs_ext, sc_any, cross, scratch, ahead, ahead_at, changed, verify, srcs, seen, race_bufs, bar_joins, entries, dirty, spare_access, sc_scratch: _ } = self;
        bar_joins.clear();
        dirty.clear();
        entries.clear();
        nodes.iter_mut().for_each(Vec::clear);
        reads.iter_mut().for_each(Vec::clear);
        for (_, mut a) in access.iter_mut().flat_map(|per| per.drain(..)) {
            a.clear();
            spare_access.push(a);
        }
        writers.iter_mut().for_each(Vec::clear);
        readers.iter_mut().for_each(Vec::clear);
        ahead_at.clear();
        order.clear();
        arena.clear();
        scratch.iter_mut().for_each(Vec::clear);
        srcs.iter_mut().for_each(Vec::clear);
        seen.clear();
        race_bufs.clear();
        (*rs_ext, *sc_any, *cross, *ahead) = (0, 0, 0, 0);
        (*changed, *verify) = (true, false);
    }

    /// Whether the views may be stale ([`Clocks::note_changed`] since the
    /// last check): [`Clocks::first_after`] and
    /// [`Clocks::happens_before`] answer `None` until the next check.
    pub fn is_stale(&self) -> bool {
        self.changed
    }

    /// Whether event `e` has views: a change to it other than its
    /// appending needs [`Clocks::note_changed`].
    pub fn has_view(&self, e: EventId) -> bool {
        self.node(e).is_some()
    }

    /// The explorer changed the graph other than by appending events
    /// (restored an alternative, bound a promise, replays): the next check
    /// validates every view. Appending events, to units or to the end of a
    /// coherence order, needs no call.
    pub fn note_changed(&mut self) {
        self.changed = true;
    }

    /// Drop the views made stale by changes to the graph, when there may
    /// be any. Without [`Clocks::note_changed`] the graph was only
    /// appended to, and only the reads computed ahead of their write
    /// ([`Node::ahead`]) can be stale; `CLMM_CROSSCHECK` checks that claim
    /// against the full scan.
    fn sync(&mut self, g: &Graph) {
        let cut = if self.changed {
            // Any unit may have events without views (a restored graph).
            self.dirty.clear();
            self.dirty.extend(0..g.units.len() as u32);
            self.stale_from(g)
        } else if self.verify {
            let (quick, full) = (self.ahead_from(g, self.order.len()), self.stale_from(g));
            assert_eq!(quick, self.ahead_from_every_view(g, self.order.len()), "clmm internal error: Clocks::ahead_at missed a stale view, computed before its read's write (CLMM_CROSSCHECK)");
            if full < quick {
                let e = self.order[full];
                panic!("clmm internal error: the explorer changed the graph without Clocks::note_changed: the views of {}.{} are stale (CLMM_CROSSCHECK)", e.unit.0, e.index);
            }
            quick
        } else if self.ahead > 0 {
            self.ahead_from(g, self.order.len())
        } else {
            return;
        };
        self.changed = false;
        self.truncate(cut);
    }

    /// Bring the views up to date with `g` and check the axioms of a
    /// prefix on the events whose views were (re)computed.
    pub fn check(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics) -> Outcome {
        // Only the units in `dirty` may lack views: those the explorer
        // appended to ([`Clocks::note_appended`]), those
        // [`Clocks::truncate`] cut, and after other changes than appends
        // every unit ([`Clocks::sync`]).
        self.sync(g);
        if self.reads.len() < locs.len() {
            self.reads.resize(locs.len(), Vec::new());
        }
        if self.nodes.len() < g.units.len() {
            self.nodes.resize(g.units.len(), Vec::new());
        }
        let mut units = std::mem::take(&mut self.dirty);
        if units.len() > 1 {
            units.sort_unstable();
            units.dedup();
        }
        let lacks = |c: &Clocks, u: usize| u < g.units.len() && c.nodes[u].len() < g.units[u].events.len();
        if self.verify {
            if let Some(u) = (0..g.units.len()).find(|&u| lacks(self, u) && units.binary_search(&(u as u32)).is_err()) {
                panic!("clmm internal error: unit {u} has events without views that Clocks::note_appended was not told of (CLMM_CROSSCHECK)");
            }
        }
        let mut out = self.add_missing(g, locs, sem, &units);
        // `O-Sscoped` holds on every extension of a prefix it fails on
        // (more events and edges keep a cycle): checked on the whole graph
        // once every event has views. `O-Ssimp` waits for complete graphs.
        if out == Outcome::Consistent && sem.sc == ScModel::Scoped && self.sc_any >= 2 && !self.sc_holds(g, locs, sem, super::Phase::Prefix) {
            out = Outcome::Inconsistent(Violation::Sc);
        }
        if out == Outcome::Consistent {
            // Every unit has its views.
            units.clear();
        } else {
            units.retain(|&u| lacks(self, u as usize));
        }
        self.dirty = units;
        out
    }

    /// Compute the missing views of `units` (ascending), in passes until
    /// every one has views or a pass adds none: a unit's events in
    /// program order, until one whose sources have no views yet.
    fn add_missing(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics, units: &[u32]) -> Outcome {
        loop {
            let mut progress = false;
            let mut left = false;
            for &u in units.iter().take_while(|&&u| (u as usize) < g.units.len()) {
                let u = u as usize;
                while self.nodes[u].len() < g.units[u].events.len() {
                    let e = EventId { unit: UnitId(u as u32), index: self.nodes[u].len() as u32 };
                    match self.add(g, locs, sem, e) {
                        Step::Done => progress = true,
                        Step::NotReady => {
                            left = true;
                            break;
                        }
                        Step::Stop(o) => return o,
                    }
                }
            }
            if !left {
                return Outcome::Consistent;
            }
            if !progress {
                return Outcome::Unsure("no order of the region edges");
            }
        }
    }

    /// The explorer appended events to unit `u` (a new event, or an RMW's
    /// write part): the next check computes their views.
    pub fn note_appended(&mut self, u: UnitId) {
        if self.dirty.last() != Some(&u.0) {
            self.dirty.push(u.0);
        }
    }

    /// The exact verdict of a complete graph ([`super::Phase::Complete`]:
    /// the axioms, races and barrier divergence), when the views decide
    /// it: happens-before with `rs` is the views' (no write extends a
    /// release sequence by its unit, or the views order every `ra_sw`
    /// edge that adds, `Clocks::rs_extra_edges`), and no
    /// synchronisation between a host thread and a work-item (which
    /// orders no coarse-grained buffer, [`super::hb::command_ghb`]).
    /// `None`: use [`super::check`].
    pub fn complete(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics) -> Option<super::Verdict> {
        match self.check(g, locs, sem) {
            Outcome::Consistent => {}
            // Prefix violations are violations of the graph itself.
            Outcome::Inconsistent(v) => return Some(super::Verdict { violation: Some(v), ..super::Verdict::default() }),
            Outcome::Unsure(_) => return None,
        }
        if self.cross > 0 {
            return None;
        }
        // With C11's `rs` happens-before is `hb_min` when the views already
        // order every edge `rs` adds (a flag or lock that one unit stores
        // with release again and again: each store heads its own
        // sequence).
        if self.rs_ext > 0 && ![G, L].into_iter().all(|r| self.rs_extra_edges(g, locs, sem, r).is_some_and(|x| x.is_empty())) {
            return None;
        }
        // The scoped SC axiom was checked with the rest ([`Clocks::check`]);
        // with C11's `rs` it is the same relation.
        if sem.sc == ScModel::Spec && self.sc_any >= 2 && !self.sc_holds(g, locs, sem, super::Phase::Complete) {
            return Some(super::Verdict { violation: Some(Violation::Sc), ..super::Verdict::default() });
        }
        Some(super::Verdict { violation: None, races: self.races(g, locs, sem), divergence: self.divergence(g) })
    }

    /// `hb(x, y)`: `ghb | lhb` (`y` has views).
    fn hb(&self, locs: &[LocInfo], x: EventId, y: EventId) -> bool {
        if y.is_init() || x == y {
            return false;
        }
        self.before(locs, x, self.node(y).expect("a complete graph has views"))
    }

    /// Whether `x` happens before the event of node `n` by its views
    /// (`ghb | lhb`).
    fn before(&self, locs: &[LocInfo], x: EventId, n: &Node) -> bool {
        self.member(locs, x, &n.views[G], G) || self.member(locs, x, &n.views[L], L)
    }

    /// The events with views and their signatures (for debugging).
    pub fn describe(&self) -> String {
        self.order
            .iter()
            .map(|e| {
                let n = &self.nodes[e.unit.index()][e.index as usize];
                let clock = |v: &View| (0..(v.clock.base + v.clock.len).max(v.clock.lo).max(v.owner + 1) as usize).map(|u| self.entry(v, u)).collect::<Vec<_>>();
                format!("{}.{} {:?} absent={} G={:?} L={:?}\n", e.unit.0, e.index, n.sig, n.rf_absent, clock(&n.views[G]), clock(&n.views[L]))
            })
            .collect()
    }

    /// The position in [`Clocks::order`] of the first event whose views are
    /// stale: one that changed (all after it are computed again). A
    /// speculative read whose write now exists counts as changed: the
    /// coherence instances it takes part in are checked again. (When the
    /// graph only grew since the last check, [`Clocks::note_changed`],
    /// only those reads can be stale: [`Clocks::ahead_from`] the end.)
    fn stale_from(&self, g: &Graph) -> usize {
        self.ahead_from(g, self.changed_from(g))
    }

    /// The position in [`Clocks::order`] of the first event whose signature
    /// or coherence predecessor changed ([`Clocks::stale_from`]).
    fn changed_from(&self, g: &Graph) -> usize {
        let mut cut = self.order.len();
        for (i, &e) in self.order.iter().enumerate() {
            let n = &self.nodes[e.unit.index()][e.index as usize];
            let same = g.contains(e) && {
                let ev = g.ev(e);
                ev.stamp == n.sig.stamp
                    && ev.kind == n.sig.kind
                    && ev.rf == n.sig.rf
                    && ev.loc == n.sig.loc
                    && ev.atomic == n.sig.atomic
            };
            if !same {
                cut = i;
                break;
            }
        }
        // Coherence predecessors, one pass per location. A write that
        // moved changes the coherence instances of its readers too, which
        // may have been checked before it (a read revisited backward
        // reads a write added after it).
        for (l, co) in g.co.iter().enumerate() {
            let mut pred = None;
            for &w in co {
                if let Some(n) = self.node(w) {
                    if (n.order as usize) < cut && n.sig.co_pred != pred {
                        cut = n.order as usize;
                        for &r in self.reads.get(l).map_or(&[][..], |r| &r[..]) {
                            let rn = self.node(r).expect("a read with a view");
                            if rn.sig.rf == Some(w) {
                                cut = cut.min(rn.order as usize);
                            }
                        }
                    }
                }
                pred = Some(w);
            }
        }
        cut
    }

    /// `cut`, or the position of an earlier read computed before its write
    /// that is stale ([`Clocks::stale_from`]). A read computed before its
    /// write depends on that write's place in coherence: it goes with the
    /// write, and a speculative read whose write now exists is computed
    /// again.
    fn ahead_from(&self, g: &Graph, mut cut: usize) -> usize {
        // Only a read computed before its write can be stale here: any
        // other read's write had its view first, earlier in the order, and
        // goes with it (session 33: scanning the whole order at every
        // check of a speculative run cost O(n) per event).
        loop {
            let mut c = cut;
            if let Some(&i) = self.ahead_at.iter().take_while(|&&i| (i as usize) < cut).find(|&&i| self.stale_read(g, self.order[i as usize], cut)) {
                c = i as usize;
            }
            if c == cut {
                return cut;
            }
            cut = c;
        }
    }

    /// Whether the view of `e` (one of the first `cut` in the order) goes
    /// with its read's write: a speculative read whose write now exists,
    /// or a read whose write has no view before `cut`.
    fn stale_read(&self, g: &Graph, e: EventId, cut: usize) -> bool {
        let n = &self.nodes[e.unit.index()][e.index as usize];
        let Some(w) = n.sig.rf.filter(|w| !w.is_init()) else { return false };
        if n.rf_absent {
            g.contains(w)
        } else {
            self.node(w).is_none_or(|wn| wn.order as usize >= cut)
        }
    }

    /// [`Clocks::ahead_from`] over every view, as it was before session
    /// 33: `CLMM_CROSSCHECK` checks that only the reads computed before
    /// their write need looking at.
    fn ahead_from_every_view(&self, g: &Graph, mut cut: usize) -> usize {
        loop {
            let mut c = cut;
            if let Some(i) = self.order[..cut].iter().position(|&e| self.stale_read(g, e, cut)) {
                c = i;
            }
            if c == cut {
                return cut;
            }
            cut = c;
        }
    }

    fn truncate(&mut self, cut: usize) {
        if cut >= self.order.len() {
            return;
        }
        let first = self.order[cut];
        let arena_len = self.nodes[first.unit.index()][first.index as usize].arena_at as usize;
        self.bar_joins.retain(|j| (j.max_order as usize) < cut);
        // A kept join whose clock the cut removes from the arena makes it
        // again when an exit needs it.
        for j in &mut self.bar_joins {
            for slice in &mut j.slices {
                if slice.is_some_and(|c| c.end() as usize > arena_len) {
                    *slice = None;
                }
            }
        }
        while self.order.len() > cut {
            let e = self.order.pop().expect("order");
            let n = self.nodes[e.unit.index()].pop().expect("a node per ordered event");
            if self.dirty.last() != Some(&e.unit.0) {
                self.dirty.push(e.unit.0);
            }
            debug_assert_eq!(n.attr.po, e.index);
            self.rs_ext -= u32::from(n.rs_ext);
            self.sc_any -= u32::from(n.sc_any);
            self.cross -= u32::from(n.cross);
            self.ahead -= u32::from(n.ahead);
            if n.ahead {
                debug_assert_eq!(self.ahead_at.last(), Some(&n.order));
                self.ahead_at.pop();
            }
            if n.attr.is_read() {
                let reads = &mut self.reads[n.attr.loc.expect("read location")];
                debug_assert_eq!(reads.last(), Some(&e));
                reads.pop();
                if let Some(w) = n.sig.rf.filter(|w| !w.is_init() && !n.rf_absent) {
                    self.readers[w.unit.index()][w.index as usize] -= 1;
                }
            }
            if let Some(l) = n.attr.loc {
                let per_unit = &mut self.access[l];
                let k = per_unit.iter().rposition(|a| a.0 == e.unit.0).expect("the unit's accesses");
                let acc = &mut per_unit[k].1;
                debug_assert_eq!(acc.last().map(|a| a.index), Some(e.index));
                acc.pop();
                if n.attr.is_write() && acc.last().is_none_or(|a| a.last_write == 0) {
                    // Its first write: every unit that first wrote the
                    // location after it is cut already.
                    let w = self.writers[l].pop();
                    debug_assert_eq!(w, Some(k as u32));
                }
                if acc.is_empty() {
                    // Its first access to the location: every unit that
                    // came to the location after it is cut already.
                    debug_assert_eq!(k, per_unit.len() - 1);
                    let (_, a) = per_unit.swap_remove(k);
                    self.spare_access.push(a);
                }
            }
        }
        self.arena.truncate(arena_len);
    }

    /// The units that wrote location `l` (with views), with their
    /// accesses to it ([`Clocks::writers`]).
    fn writing_units(&self, l: usize) -> impl Iterator<Item = &(u32, Accesses)> {
        let per_unit = self.access.get(l).map_or(&[][..], |a| &a[..]);
        self.writers.get(l).map_or(&[][..], |w| &w[..]).iter().map(move |&k| &per_unit[k as usize])
    }

    /// The positions of unit `u`'s accesses to location `l` with views
    /// ([`Clocks::access`]); `None` if it has none.
    fn accesses(&self, l: usize, u: usize) -> Option<&[LocAccess]> {
        self.access.get(l)?.iter().rev().find(|a| a.0 == u as u32).map(|a| &a.1[..])
    }

    fn node(&self, e: EventId) -> Option<&Node> {
        self.nodes.get(e.unit.index()).and_then(|u| u.get(e.index as usize))
    }

    /// The entry of unit `u` in the clock of view `v`.
    fn entry(&self, v: &View, u: usize) -> u32 {
        let k = v.clock.entry(&self.arena, u);
        if u == v.owner as usize {
            k.max(v.own)
        } else {
            k
        }
    }

    /// Whether `x` happens before the event whose region-`r` view is `v`
    /// (`x` distinct from that event).
    fn member(&self, locs: &[LocInfo], x: EventId, v: &View, r: usize) -> bool {
        if x.is_init() {
            return v.init && loc_region(locs, x.index as usize)[r];
        }
        let Some(n) = self.node(x) else { return false };
        if region_of(&n.attr, r) {
            x.index < self.entry(v, x.unit.index())
        } else {
            v.lifted.contains(&x)
        }
    }

    /// Compute the views of `e` (its program-order predecessor has views)
    /// and check the axioms on it.
    fn add(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics, e: EventId) -> Step {
        let ev = g.ev(e);
        if g.device_enqueued(e.unit) {
            // Its creator edge is only in the `ghb` of fine-grained SVM
            // locations (`super::hb::Relations::ghb_at`): one view cannot
            // hold both.
            return Step::Stop(Outcome::Unsure("a command enqueued on a device-side queue"));
        }
        let (u, i) = (e.unit.index(), e.index);
        let attr = Attr::of(ev, e.unit, i, locs);
        // A speculative read (load buffering) of a write not produced yet
        // has no rf edge until the write comes, as in the explicit model
        // (`super::Ctx`): no `sw` into it ([`Clocks::sources`]), no
        // coherence or visibility instance ([`Clocks::axioms_of`]). When
        // the write comes, the read and every view computed after it are
        // computed again ([`Clocks::ahead_from`]).
        if ev.rf.is_some_and(|w| g.contains(w) && !produced(g, e, w)) {
            // The id a speculation promised is another event: the explorer
            // drops the execution once it checks its promises.
            return Step::Stop(Outcome::Unsure("a speculation not kept"));
        }
        let pending = ev.rf.is_some_and(|w| !produced(g, e, w));
        // Incoming edges per region: (source, lifted from the other region).
        let mut srcs = std::mem::take(&mut self.srcs);
        srcs.iter_mut().for_each(Vec::clear);
        let mut entries = std::mem::take(&mut self.entries);
        entries.clear();
        let mut cross = false;
        let mut bar = None;
        // An acquire fence's reads start after the last like fence
        // ([`Clocks::acquire_fence_floor`]).
        let floor_at = if attr.is_fence() && attr.is_acq() { self.acquire_fence_floor(u, i, &attr) } else { 0 };
        if !self.sources(g, locs, sem, e, &attr, floor_at, &mut srcs, &mut entries, &mut bar, &mut cross) {
            self.srcs = srcs;
            self.entries = entries;
            return Step::NotReady;
        }
        // A barrier exit: the join of the instance's entries.
        let bar = bar.or_else(|| (!entries.is_empty()).then(|| self.barrier_join(g, e, &entries)));
        self.entries = entries;
        let prev_last = if i == 0 { [0, 0] } else { self.nodes[u][i as usize - 1].last_in };
        let arena_at = self.arena.len() as u32;
        let mut views: [View; 2] = [View::default(), View::default()];
        // The other region's view of the fence the reads start after.
        let floor = lifts_of_floor(e.unit, &attr, floor_at).filter(|&f| {
            let v = &self.nodes[u][f.index as usize].views[if attr.g { L } else { G }];
            v.holds_any()
        });
        for r in [G, L] {
            let mine = region_of(&attr, r);
            let floor = floor.filter(|_| !mine);
            let prev = (mine && prev_last[r] > 0).then(|| &self.nodes[u][prev_last[r] as usize - 1].views[r]);
            let bar_r = bar.filter(|_| mine);
            if srcs[r].is_empty() && bar_r.is_none() && floor.is_none() {
                // Nothing new synchronises with `e` in `r`: its
                // predecessor's clock, and its own position.
                views[r] = match prev {
                    Some(p) => View { owner: u as u32, own: i + 1, init: true, lifted: p.lifted.clone(), ..*p },
                    None if mine => View { owner: u as u32, own: i + 1, init: true, ..View::default() },
                    None => View { owner: u as u32, ..View::default() },
                };
                continue;
            }
            if let (true, Some(b)) = (srcs[r].is_empty(), bar_r) {
                // A barrier exit that nothing else synchronises with: the
                // join of the instance's entries (its own among them, the
                // predecessor of `e` in `r`: entry and exit have the same
                // fence flags), shared, and its own position.
                let clock = match self.bar_joins[b].slices[r] {
                    Some(slice) => slice,
                    None => {
                        let slice = self.bar_joins[b].regions[r].store(&mut self.arena);
                        self.bar_joins[b].slices[r] = Some(slice);
                        slice
                    }
                };
                let join = &self.bar_joins[b].regions[r];
                debug_assert!(prev.is_some() && join.init);
                views[r] = View { clock, owner: u as u32, own: i + 1, init: true, lifted: join.lifted.clone() };
                continue;
            }
            let mut j = Join::with(std::mem::take(&mut self.scratch));
            if mine {
                if let Some(p) = prev {
                    j.view(self, p);
                }
                j.init = true;
                j.event(e);
            }
            for &s in &srcs[r] {
                let n = self.node(s).expect("a ready source has views");
                j.view(self, &n.views[r]);
                if region_of(&n.attr, r) {
                    j.event(s);
                } else {
                    j.lift(s);
                }
            }
            if let Some(b) = bar_r {
                j.join(&self.bar_joins[b].regions[r]);
            }
            if let Some(f) = floor {
                j.view(self, &self.nodes[u][f.index as usize].views[r]);
            }
            let clock = j.store(&mut self.arena);
            let lifted = std::mem::take(&mut j.lifted);
            views[r] = View { clock, owner: u as u32, own: 0, init: j.init, lifted };
            self.scratch = j.into_bufs();
        }
        self.srcs = srcs;
        let last_in = [G, L].map(|r| if region_of(&attr, r) { i + 1 } else { prev_last[r] });
        let prev_fenced = i > 0 && self.nodes[u][i as usize - 1].fenced;
        let fenced = prev_fenced || (attr.is_fence() && attr.is_rel());
        // `extends_release_sequences`, from this unit's accesses to the
        // location before `e`.
        let heads = attr.loc.map(|l| {
            let before = self.accesses(l, u).and_then(|a| a.last()).is_some_and(|a| a.heads);
            (before, before || may_head_release_sequence(ev, &attr, prev_fenced))
        });
        let rs_ext = ev.kind == Kind::Write && attr.loc.is_some_and(|l| locs[l].atomic) && heads.is_some_and(|h| h.0);
        if self.verify {
            assert_eq!(rs_ext, extends_release_sequences(g, locs, e), "clmm internal error: Clocks::access disagrees with extends_release_sequences on {}.{} (CLMM_CROSSCHECK)", e.unit.0, e.index);
        }
        let sc_any = attr.is_sc();
        let ahead = pending || ev.rf.is_some_and(|w| !w.is_init() && self.node(w).is_none());
        let acq_fence = if attr.is_fence() && attr.is_acq() {
            i + 1
        } else if i > 0 {
            self.nodes[u][i as usize - 1].acq_fence
        } else {
            0
        };
        let node = Node { arena_at, sig: sig_of(g, e), attr, views, last_in, order: self.order.len() as u32, rs_ext, fenced, sc_any, cross, rf_absent: pending, ahead, acq_fence };
        self.ahead += u32::from(ahead);
        if ahead {
            self.ahead_at.push(self.order.len() as u32);
        }
        self.rs_ext += u32::from(rs_ext);
        self.sc_any += u32::from(sc_any);
        self.cross += u32::from(cross);
        let (is_read, is_write) = (node.attr.is_read(), node.attr.is_write());
        let loc = node.attr.loc;
        // Room for as many views as the previous unit has (as for its
        // events, `Engine::new_event`).
        if u > 0 && self.nodes[u].capacity() == 0 {
            let neighbour = self.nodes[u - 1].len();
            crate::graph::reserve_like_neighbour(&mut self.nodes[u], neighbour);
        }
        self.nodes[u].push(node);
        self.order.push(e);
        if is_read {
            self.reads[loc.expect("read location")].push(e);
            // Only reads of a produced write (a speculative read's id may
            // be a promise's encoding, not an event): the others are
            // computed again once their write comes (`Node::rf_absent`).
            if let Some(w) = ev.rf.filter(|w| !w.is_init() && !pending) {
                if self.readers.len() <= w.unit.index() {
                    self.readers.resize_with(w.unit.index() + 1, Vec::new);
                }
                let r = &mut self.readers[w.unit.index()];
                if r.len() <= w.index as usize {
                    r.resize(w.index as usize + 1, 0);
                }
                r[w.index as usize] += 1;
            }
        }
        if let Some(l) = loc {
            if self.access.len() <= l {
                self.access.resize_with(l + 1, Vec::new);
            }
            let per_unit = &mut self.access[l];
            let k = per_unit.iter().rposition(|a| a.0 == u as u32).unwrap_or_else(|| {
                per_unit.push((u as u32, self.spare_access.pop().unwrap_or_default()));
                per_unit.len() - 1
            });
            let acc = &mut per_unit[k].1;
            let before = acc.last().map_or(0, |a| a.last_write);
            let last_write = if is_write { acc.len() as u32 + 1 } else { before };
            acc.push(LocAccess { index: e.index, heads: heads.is_some_and(|h| h.1), last_write });
            if is_write && before == 0 {
                if self.writers.len() <= l {
                    self.writers.resize_with(l + 1, Vec::new);
                }
                self.writers[l].push(k as u32);
            }
        }
        let mut hiders = std::mem::take(&mut self.seen);
        let axioms = self.axioms(g, locs, sem, e, &mut hiders);
        self.seen = hiders;
        match axioms {
            Ok(()) => Step::Done,
            Err(o) => {
                // Keep only views whose axioms hold: the next check
                // starts again from this event.
                self.truncate(self.order.len() - 1);
                Step::Stop(o)
            }
        }
    }

    /// The happens-before predecessors of `e` besides the previous region
    /// event of its unit, per region; false if one has no view yet.
    ///
    /// The entries of the barrier instance an exit leaves go to `entries`
    /// (every member's, whatever its region), whose join
    /// [`Clocks::barrier_join`] computes once for all the exits.
    #[allow(clippy::too_many_arguments)]
    fn sources(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, e: EventId, attr: &Attr, floor_at: u32, out: &mut [Vec<EventId>; 2], entries: &mut Vec<EventId>, bar: &mut Option<usize>, cross: &mut bool) -> bool {
        let ev = g.ev(e);
        let (u, i) = (e.unit.index(), e.index);
        let has = |x: EventId| self.node(x).is_some();
        let unit = &g.units[u];
        // The creator of a unit (a launch) is ghb-before its first global
        // event (`model::hb`, Deviations 5).
        if attr.g {
            if let Some(p) = unit.parent {
                let first_g = i == 0 || self.nodes[u][i as usize - 1].last_in[G] == 0;
                if first_g {
                    if !has(p) {
                        return false;
                    }
                    out[G].push(p);
                }
            }
        }
        // A join after a launch waits for the launched units: their last
        // global events are ghb-before it.
        if ev.kind == Kind::Join {
            for (v, vu) in g.units.iter().enumerate() {
                let Some(p) = vu.parent else { continue };
                if p.unit != e.unit || p.index >= i || super::hb::join_of_launch(g, p) != Some(e) || vu.events.is_empty() {
                    continue;
                }
                if self.nodes[v].len() < vu.events.len() {
                    return false;
                }
                let last = self.nodes[v].last().expect("events").last_in[G];
                if last > 0 {
                    out[G].push(EventId { unit: UnitId(v as u32), index: last - 1 });
                }
            }
        }
        // Host commands and threads (`super::host::wait_edges`, rules 2,
        // 4, 8, 11 and 12, and a host thread's join): the completion
        // events `e` waits for are ghb-before it, each as the last global
        // event of its unit at or before it.
        for &t in g.waits(ev).iter().filter(|&&t| g.contains(t)) {
            let last_g = (0..=t.index).rev().map(|index| EventId { unit: t.unit, index }).find(|&x| Attr::of(g.ev(x), x.unit, x.index, locs).g);
            if let Some(f) = last_g {
                if !has(f) {
                    return false;
                }
                out[G].push(f);
            }
        }
        // `bar_sw(r)`: every other member's entry of this barrier
        // instance. Its own too (the exit's program-order predecessor, so
        // it adds nothing): then every exit of the instance has the same
        // entries, and shares their join. A join kept for the instance
        // with an entry of every member is theirs (a changed entry would
        // have cut it, [`Clocks::truncate`]): looking for each member's
        // entry at each exit cost O(n^2) an instance of n members.
        if let (Kind::BarrierExit, Some(inst)) = (ev.kind, ev.barrier) {
            let members = g.barrier_members(e.unit, inst.kind);
            let key = g.barrier_instance(e.unit, inst);
            *bar = self.bar_joins.iter().rposition(|j| j.key == key && j.entries.len() == members.len());
            for &v in members.iter().filter(|_| bar.is_none() || self.verify) {
                let Some(en) = g.barrier_event(v, inst, Kind::BarrierEntry) else { continue };
                if !has(en) {
                    return false;
                }
                entries.push(en);
            }
            if let (Some(b), true) = (*bar, self.verify) {
                assert_eq!(self.bar_joins[b].entries, *entries, "clmm internal error: the barrier join kept for an instance is not of its entries (CLMM_CROSSCHECK)");
            }
        }
        // `ra_sw(r)` into an acquire end, and its `scf` lift.
        if attr.is_acq() {
            for r in [G, L] {
                if !region_of(attr, r) {
                    continue;
                }
                let reads = if attr.is_read() { i..i + 1 } else { floor_at..i };
                for ri in reads {
                    let rd = &unit.events[ri as usize];
                    let Some(l) = rd.loc.filter(|_| rd.kind.is_read()) else { continue };
                    let l = l.0 as usize;
                    if rd.atomic.is_none_or(|(_, s)| s == Scope::WorkItem) || !loc_region(locs, l)[r] {
                        continue;
                    }
                    let wp = rd.rf.expect("a read reads");
                    if !produced(g, EventId { unit: e.unit, index: ri }, wp) {
                        // A speculative read: computed again, with all
                        // after it, when its write comes.
                        continue;
                    }
                    // The heads whose release sequence (`rs_min`: chains
                    // of RMWs) holds `wp`, and `wp` itself (`rs?`).
                    let mut h = wp;
                    loop {
                        if h.is_init() {
                            break;
                        }
                        if !self.release_ends(g, locs, sem, h, e, attr, l, r, out, cross) {
                            return false;
                        }
                        let hev = g.ev(h);
                        if hev.kind != Kind::RmwWrite {
                            break;
                        }
                        let src = g.ev(EventId { unit: h.unit, index: h.index - 1 }).rf.expect("an RMW reads");
                        if !g.contains(src) || co_pred(g, h, l) != Some(src).filter(|s| !s.is_init()) {
                            break;
                        }
                        h = src;
                    }
                }
            }
        }
        true
    }

    /// The first position of unit `u` whose reads the acquire fence at
    /// position `i` (attributes `a`) must look at for `ra_sw`
    /// (`[R \ s_wi]; sbF?; [acq & r]`): after the last acquire fence
    /// before it with the same order, scope and regions, among the last
    /// few. That fence synchronised with what the reads before it
    /// synchronise with (the inclusion of scopes and the `scf` lifts
    /// depend only on those attributes and the unit), and its views are
    /// in this fence's by `sb` in each of its regions. A seq_cst fence of
    /// one region also lifts (`scf`) into the other region's view, which
    /// does not inherit along `sb`: [`Clocks::add`] joins that fence's
    /// view of the other region into this one's ([`lifts_of_floor`]).
    /// Scanning every earlier read at each acquire fence (a barrier's exit
    /// is one) cost O(n^2) in a unit with barriers or fences in a loop.
    fn acquire_fence_floor(&self, u: usize, i: u32, a: &Attr) -> u32 {
        let nodes = &self.nodes[u];
        let before = |j: u32| if j > 0 { nodes[j as usize - 1].acq_fence } else { 0 };
        let mut k = before(i);
        for _ in 0..8 {
            let Some(j) = k.checked_sub(1) else { break };
            let b = &nodes[j as usize].attr;
            if (b.order, b.scope, b.g, b.l) == (a.order, a.scope, a.g, a.l) {
                return j + 1;
            }
            k = before(j);
        }
        0
    }

    /// The index in [`Clocks::bar_joins`] of the join of barrier entries
    /// `entries` (all with views): the one kept, or a new one. An entry
    /// joins region `r` when it is in it (`bar_sw(r)`: both fences in
    /// `r`; the exit's side is [`Clocks::add`]'s), with its own position.
    fn barrier_join(&mut self, g: &Graph, exit: EventId, entries: &[EventId]) -> usize {
        if let Some(i) = self.bar_joins.iter().position(|j| j.entries == entries) {
            return i;
        }
        let key = g.barrier_instance(exit.unit, g.ev(exit).barrier.expect("an exit's instance"));
        let mut j = BarrierJoin { key, entries: entries.to_vec(), max_order: 0, regions: Default::default(), slices: [None; 2] };
        // The entries of a work-group past a barrier together share its
        // join's clock (each with its own position) until one
        // synchronises with something else: a clock shared with the
        // previous entry is joined once. Joining each made a barrier of n
        // work-items cost O(n^2) (a tree reduction's barriers were 8% of
        // its instructions).
        let mut last: [Option<Slice>; 2] = [None; 2];
        for &en in entries {
            let n = self.node(en).expect("an entry with views");
            j.max_order = j.max_order.max(n.order);
            for r in [G, L] {
                if region_of(&n.attr, r) {
                    let v = &n.views[r];
                    if last[r] != Some(v.clock) {
                        j.regions[r].clock(self, v.clock);
                        last[r] = Some(v.clock);
                    }
                    j.regions[r].own_and_lifted(v);
                    j.regions[r].event(en);
                }
            }
        }
        if self.bar_joins.len() >= BARRIER_JOINS {
            self.bar_joins.remove(0);
        }
        self.bar_joins.push(j);
        self.bar_joins.len() - 1
    }

    /// The release ends of head `w` (region `r`) that synchronise with
    /// acquire end `b`: `[r & rel]; Fsb?; [W \ s_wi]`, inclusive with `b`,
    /// in another unit. False if one has no view yet.
    #[allow(clippy::too_many_arguments)]
    fn release_ends(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, w: EventId, b: EventId, battr: &Attr, l: usize, r: usize, out: &mut [Vec<EventId>; 2], cross: &mut bool) -> bool {
        let wev = g.ev(w);
        if w.unit == b.unit || wev.atomic.is_none_or(|(_, s)| s == Scope::WorkItem) {
            return true;
        }
        let wunit = &g.units[w.unit.index()];
        for j in (0..=w.index).rev() {
            let x = &wunit.events[j as usize];
            if j != w.index && !x.kind.is_fence() {
                continue;
            }
            let a = EventId { unit: w.unit, index: j };
            let xa = Attr::of(x, w.unit, j, locs);
            let end = if j == w.index { xa.is_rel() } else { xa.is_fence() && xa.is_rel() && region_of(&xa, r) };
            if !end || !inclusive(g, locs, sem, (xa.scope, w.unit), (battr.scope, b.unit), r == L, Some(l)) {
                continue;
            }
            if self.node(a).is_none() {
                return false;
            }
            *cross |= g.host_and_device(w.unit, b.unit);
            if !out[r].contains(&a) {
                out[r].push(a);
            }
            if scf_pair(&xa, battr) && !out[1 - r].contains(&a) {
                out[1 - r].push(a);
            }
        }
        true
    }
}

/// How many of a unit's accesses `acc` (in program order) come before
/// position `k` of the unit: usually all of them, or all but the last
/// (a unit's own view is past its accesses), else by bisection.
fn accesses_before(acc: &[LocAccess], k: u32) -> usize {
    let n = acc.len();
    if acc.last().is_none_or(|a| a.index < k) {
        n
    } else if n < 2 || acc[n - 2].index < k {
        n - 1
    } else {
        acc.partition_point(|a| a.index < k)
    }
}
