//! The alternatives of TruSt (Kokologiannakis et al., POPL 2022, §5):
//! the writes a new read may read from (forward), the coherence
//! placements of a new write, the reads a new write may revisit
//! (backward, under the maximality conditions), and how an alternative is
//! applied to the graph (`apply`).

use super::execution::replay_mismatch;
use super::promises::{promise, Promise};
use super::{Engine, Item, Work, Position};
use crate::graph::{Graph, Kind, LocInfo, Region, THIN_AIR};
use crate::ids::{EventId, UnitId};
use crate::model::{self, Phase};
use crate::replay;
use clmm_atomic::backend::{Access, LocId, Mode, Op};
use std::sync::atomic::Ordering::Relaxed;

impl Engine<'_, '_> {
    /// The value read by `r` after choosing its write: the maximal one, the
    /// others pushed as alternatives.
    pub(super) fn choose_rf(&mut self, r: EventId) -> u64 {
        if let Some(step) = self.forced.clone() {
            return self.forced_rf(r, &step);
        }
        let g = &self.frames.last().expect("frame").graph;
        let loc = g.ev(r).loc.expect("read has a location");
        let locs = self.checker.s.borrow();
        let atomic = locs.locs[loc.0 as usize].atomic;
        // Writes coherence-before one that happens before `r` (or that a
        // read happening before `r` reads), and for a non-atomic read the
        // writes `vis` hides, are not offered: no extension of this
        // prefix makes them consistent. (A write another RMW reads is
        // still offered to an RMW: that alternative is inconsistent, but
        // the backward revisits of its write part are how the other RMW
        // comes to read it.) An RMW reading one pushes only revisits whose
        // porf-prefix keeps the violation, and speculations, which do not:
        // those are offered where a speculation may come of them
        // ([`Engine::speculates_below_floor`]).
        let mut floor = self.clocks.co_floor(g, &locs.locs, r);
        if floor > 0 && self.speculates_below_floor(g, r, loc) {
            floor = 0;
        }
        let mut cands = std::mem::take(&mut self.bufs.ids);
        cands.clear();
        if atomic || !self.clocks.unhidden_writes(g, &locs.locs, r, &mut cands) {
            cands.extend(g.writes_to(loc).skip(floor));
            if !atomic {
                self.clocks.drop_hidden(g, &locs.locs, r, &mut cands);
            }
        }
        drop(locs);
        let chosen = if atomic { *cands.last().expect("initial write") } else { self.max_visible(r, &cands) };
        if let Some(owed) = self.owed_by_rmw(r) {
            let g = &self.frames.last().expect("frame").graph;
            let locs = self.checker.s.borrow();
            cands.retain(|&w| w == chosen || owed.kept_by(w, g.write_value(w, &locs.locs)));
        }
        for &w in &cands {
            if w != chosen {
                self.push(Item::ReadFw { r, w });
            }
        }
        self.bufs.ids = cands;
        self.push_thin_air(r);
        self.push_read_promised(r);
        self.set_rf(r, chosen)
    }

    /// When new read `r` is the read part of an RMW whose write part a
    /// pending promise names (the promised write's unit is producing it),
    /// what keeps the promise: the value the write part must write and,
    /// when the promise's reader is itself an RMW whose write part is
    /// placed, the write `r` must read ([`Owed`]). An alternative
    /// source that breaks the promise is not offered ([`Engine::choose_rf`]):
    /// its run's write part at the promised position writes another value
    /// (or sits elsewhere than right before the reader's write part, which
    /// O-Rmw, `opencl_base.cat` line 85, needs of an RMW reading it), and
    /// the promise stays broken in every run below. Repairing it needs a
    /// revisit that deletes or revisits `r`, and `r`, reading a write that
    /// is not its coherence-maximal choice, is never maximally added
    /// (TruSt's condition on Deleted ∪ {r}, [`Engine::maximal`]); the
    /// maximal choice stays, broken or not, for the revisits of its runs.
    /// (The same argument as [`super::promises::Doom`]'s, made before
    /// the alternative is pushed.) With RMW reads speculating
    /// ([`Config::speculate_rmw`](crate::config::Config::speculate_rmw)),
    /// the histogram of `histogram_rmw_cycles` (`tests/semantics.rs`)
    /// went from 794 blocked runs to 517, and with four work-items from
    /// 195,079 to 96,198 (5.9 to 2.2 s), every count the same.
    fn owed_by_rmw(&self, r: EventId) -> Option<Owed> {
        if self.promises.is_empty() {
            return None;
        }
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.ev(r);
        let Op::Mem { access: Access::Rmw(op, ty, arg), .. } = ev.op else { return None };
        let loc = ev.loc?;
        let at = EventId { unit: r.unit, index: r.index + 1 };
        // A promise of another location at that position is broken
        // whatever `r` reads (seed 19311 of the wide scoped sweep, with
        // `speculate_rmw`: a compare-exchange that failed in the rerun
        // moved the unit's events, and the promise named a write of `y`
        // where `r`'s write part writes `x`).
        let p = self.promises.iter().copied().find(|&p| g.ev(p).rf == Some(at) && g.ev(p).loc == Some(loc))?;
        let pe = g.ev(p);
        // The reader's write part, when it is an RMW's and placed: the
        // promised write goes right before it (O-Rmw).
        let pw = EventId { unit: p.unit, index: p.index + 1 };
        let source = (pe.kind == Kind::RmwRead && g.contains(pw)).then(|| g.co_pred(pw, loc));
        Some(Owed { op, ty, arg, value: pe.value, source })
    }

    /// Load buffering where several reads of one unit read one write
    /// porf-after them (`a=Rx; b=Rx; Wy || c=Ry; Wx` with a and b reading
    /// `Wx`): a speculation makes a read `Wx` before it exists, and the
    /// write then has that read in its porf-prefix, so no revisit can make
    /// a later read of the unit read it too (a nested speculation can, in
    /// a rerun of its own, [`Engine::speculations`]). So a new plain load
    /// whose unit's previous read of the location reads a promised write
    /// that is not produced yet may read that promise as well: same write, same value, a
    /// speculative read kept or broken with the other (`keep_promises`).
    /// A compare-exchange that fails on the promised value reads it too,
    /// as a load (session 41, with failing compare-exchanges speculating:
    /// [`reads_as_a_load`](super::speculation::reads_as_a_load)): wide seed
    /// 88786 of `tests/scoped_differential.rs` (17 of 18 under the spec's
    /// SC axiom) needs a retrying compare-exchange to read the promise its
    /// first one read, which only a speculation of an RMW read found
    /// otherwise (`retrying_compare_exchange_reads_the_promise`). It is
    /// also the way out of a CoRR doom (`corr_doom` in
    /// `explore::speculation`: such a read reads a write coherence puts
    /// before the promise), whose dependent alternatives are dropped.
    /// An RMW read that succeeds on the promised value reads it too
    /// (session 42, [`rereads_promise`](super::speculation::rereads_promise)):
    /// its write part is placed as a plain write's until the promise is
    /// kept, and the promised write then goes right before it
    /// ([`Engine::place_new_write`], O-Rmw). `old = load(x);
    /// compare_exchange(x, old, new)` reading one write porf-after both is
    /// the common case; the rest of wide seed 88786 of
    /// `tests/scoped_differential.rs` was such a load and succeeding
    /// compare-exchange (`load_and_compare_exchange_read_one_promise`, 35
    /// of 36 before). Without it, only `Config::speculate_rmw` reached
    /// those executions.
    /// Only the unit's previous read: a later one that read another write
    /// in between could not read the promise consistently (coherence
    /// order of reads, which the promise cannot be checked against until
    /// it is kept), and a spin loop alternating between the promise and
    /// another write would never block. Termination: the read takes the
    /// promise's value and level, and each read adds at most one
    /// alternative. Found with `tests/lb_differential.rs` (5 of its 6 gaps,
    /// seed 1766 among them).
    fn push_read_promised(&mut self, r: EventId) {
        if self.promises.is_empty() || self.plan.is_some() {
            return;
        }
        let g = &self.frames.last().expect("frame").graph;
        let ev = g.ev(r);
        let loc = ev.loc;
        let prev = (0..r.index).rev().map(|index| EventId { unit: r.unit, index }).find(|&e| g.ev(e).kind.is_read() && g.ev(e).loc == loc);
        let Some(p) = prev else { return };
        let pev = g.ev(p);
        let Some(w) = pev.rf else { return };
        if !pev.speculative || promise(g, p) != Promise::Pending || w.unit == r.unit {
            return;
        }
        let (value, level, rank) = (pev.value, pev.level, pev.rank);
        if !super::speculation::rereads_promise(&ev.op, value, self.cfg) {
            return;
        }
        self.push(Item::ReadPromised { r, w, value, level, rank });
    }

    /// In a twin's run ([`Pin`](crate::graph::Pin)): when new load (or compare-exchange) `r` is pinned and
    /// its promised write not produced yet, `r` reads the promise, and no
    /// other write (those are the plain start graph's runs); its value.
    pub(super) fn pinned(&mut self, r: EventId) -> Option<u64> {
        let g = &self.frames.last().expect("frame").graph;
        let pin = *g.pins.iter().find(|p| p.r == r)?;
        // A compare-exchange before `r` in its unit that succeeded where it
        // failed (or failed where it succeeded) shifts the positions: the
        // event at the pin's may then be another operation.
        if g.ev(r).loc != Some(pin.loc) || !super::speculation::speculates_on(&g.ev(r).op, pin.value, self.cfg) || g.contains(pin.w) || self.plan.is_some() {
            return None;
        }
        self.graph().read_promise(r, pin.w, pin.value, pin.level, pin.rank);
        self.promises.push(r);
        self.note_irregular(r);
        Some(pin.value)
    }

    /// Replaying: read what the step says.
    fn forced_rf(&mut self, r: EventId, step: &replay::Step) -> u64 {
        let loc = self.graph().ev(r).loc;
        let Some(at) = step.rf else {
            self.replay_error = Some(replay_mismatch(format!("step {} of the replay string is not a read, but unit {} reads here", self.step - 1, r.unit.0)));
            return 0;
        };
        let Some(w) = at.of(r) else {
            self.replay_error = Some(replay_mismatch(format!("step {} of the replay string reads from before the first event of unit {}", self.step - 1, r.unit.0)));
            return 0;
        };
        self.graph().ev_mut(r).spurious = step.spurious;
        let g = &self.frames.last().expect("frame").graph;
        let fits = if w.is_init() { loc == Some(LocId(w.index)) } else { g.contains(w) && g.ev(w).kind.is_write() && g.ev(w).loc == loc };
        if fits {
            return self.set_rf(r, w);
        }
        match step.value {
            Some(v) if !g.contains(w) => {
                self.graph().read_promise(r, w, v, 0, u32::MAX);
                self.promises.push(r);
                self.note_irregular(r);
                v
            }
            _ => {
                self.replay_error = Some(replay_mismatch(format!("step {} of the replay string reads from an event that is not a write to this location", self.step - 1)));
                0
            }
        }
    }

    /// For a non-atomic read: the newest write it may read consistently.
    fn max_visible(&mut self, r: EventId, cands: &[EventId]) -> EventId {
        for &w in cands.iter().rev() {
            self.set_rf(r, w);
            if self.prefix_consistent() {
                return w;
            }
        }
        cands[0]
    }

    fn set_rf(&mut self, r: EventId, w: EventId) -> u64 {
        let v = {
            let locs = self.checker.s.borrow();
            self.frames.last().expect("frame").graph.write_value(w, &locs.locs)
        };
        let ev = self.graph().ev_mut(r);
        ev.rf = Some(w);
        ev.value = v;
        ev.speculative = false;
        ev.kept = false;
        v
    }

    /// After the read part `r` of an RMW or CAS has its value: decide
    /// success, add the write part. Returns success.
    pub(super) fn resolve_rmw(&mut self, r: EventId) -> bool {
        let ev = *self.graph().ev(r);
        let Op::Mem { access, .. } = ev.op else { unreachable!("rmw op") };
        if self.clocks.has_view(r) {
            // Its kind and order change below: a read part already checked
            // as such (`max_visible`, a CAS on a non-atomic location in
            // herd's mode) is checked again.
            self.clocks.note_changed();
        }
        let success = match access {
            Access::Rmw(..) => true,
            Access::Cas { expected, weak, .. } => {
                let eq = ev.value == expected;
                if eq && weak && !ev.spurious {
                    self.push(Item::Spurious { r });
                }
                eq && !ev.spurious
            }
            _ => unreachable!("rmw access"),
        };
        if success {
            succeed_rmw(self.graph().ev_mut(r));
            self.add_rmw_write(r.unit.index(), r);
        } else {
            fail_compare_exchange(self.graph().ev_mut(r));
        }
        success
    }

    /// Add the write part after read part `r` (co right after its source)
    /// and push the backward revisits of the new write.
    pub(super) fn add_rmw_write(&mut self, u: usize, r: EventId) {
        let ev = *self.graph().ev(r);
        let Op::Mem { loc, access, .. } = ev.op else { unreachable!() };
        let value = match access {
            Access::Rmw(op, ty, arg) => op.apply(ty, ev.value, arg),
            Access::Cas { desired, .. } => desired,
            _ => unreachable!(),
        };
        self.clocks.note_appended(r.unit);
        let g = self.graph();
        let stamp = g.next_stamp;
        g.next_stamp += 1;
        let mut wev = ev;
        wev.kind = Kind::RmwWrite;
        wev.rf = None;
        wev.value = value;
        wev.stamp = stamp;
        wev.barrier = None;
        // A promise is the read part's, never the write part's: a write
        // part marked speculative counted as a pending promise in the
        // porf-prefix of every later write, whose speculations then waited
        // for it for ever ([`super::speculation::Deferred`]).
        (wev.speculative, wev.kept, wev.level, wev.rank) = (false, false, 0, u32::MAX);
        let unit = &mut g.units[u];
        unit.events.truncate(r.index as usize + 1);
        unit.events.push(wev);
        let w = EventId { unit: r.unit, index: r.index + 1 };
        let src = ev.rf.expect("read part reads");
        if !src.is_init() && !g.contains(src) {
            // A speculative read part ([`speculates_on`](super::speculation::speculates_on)):
            // its source, a promise, is not produced yet. The write part
            // takes a coherence place as a plain write does, with the
            // same alternatives; the promised write goes right before it
            // once produced ([`Engine::place_new_write`]), so each final
            // coherence order is reached from one place of this write.
            self.place_new_write(w);
            return;
        }
        g.co_insert_after(loc, src, w);
        if g.co_max(loc) != w {
            // Placed before writes already in coherence (a speculation's
            // start graph may keep a read part that reads a write other
            // than the last, and cut its write part away): their
            // coherence predecessors changed, which the clocks see only
            // when told (`rmw_write_part_placed_inside_coherence` in
            // `tests/ra_rmw_differential.rs`).
            self.clocks.note_changed();
        }
        self.push_revisits(w);
    }

    /// Whether a pending promise's reader is an RMW read: a new write may
    /// then be the promised source its write part waits for
    /// ([`Engine::place_new_write`]).
    fn rmw_reads_a_promise(&self) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        self.promises.iter().any(|&p| g.ev(p).kind == Kind::RmwRead)
    }

    /// Place a new plain write co-maximally, push its other placements and
    /// its backward revisits.
    pub(super) fn place_new_write(&mut self, w: EventId) {
        let loc = self.graph().ev(w).loc.expect("write location");
        let atomic = self.locs()[loc.0 as usize].atomic;
        if let Some(step) = self.forced.clone() {
            let g = self.graph();
            let pred = match step.co_pred.and_then(|p| p.of(w)) {
                Some(p) if (p.is_init() && p.index == loc.0) || (!p.is_init() && g.contains(p) && g.ev(p).kind.is_write() && g.ev(p).loc == Some(loc)) => p,
                _ => {
                    let msg = replay_mismatch(format!("step {} of the replay string does not fit the write unit {} makes here", self.step - 1, w.unit.0));
                    self.replay_error = Some(msg);
                    self.graph().co_max(loc)
                }
            };
            self.graph().co_insert_after(loc, pred, w);
            return;
        }
        self.push_revisits(w);
        // Only when an RMW read reads a pending promise (a scan of the
        // location's coherence order).
        if self.rmw_reads_a_promise() {
            if let Some(next) = promised_rmw_write(&self.frames.last().expect("frame").graph, w) {
                // O-Rmw: the promised source of an RMW whose write part is
                // placed already goes right before it; its other
                // placements were that write part's.
                self.graph().co_insert_before(loc, next, w);
                self.clocks.note_changed();
                return;
            }
        }
        let g = &self.frames.last().expect("frame").graph;
        let max = g.co_max(loc);
        if atomic {
            // Not after a write before one that happens before `w` (or
            // that a read happening before `w` reads); nor before one
            // that a read of `w` (a speculative read whose promise `w`
            // keeps) observes.
            let locs = &self.checker.s.borrow().locs;
            let floor = self.clocks.co_floor(g, locs, w);
            let kept = self.promises.iter().copied().filter(|&r| g.ev(r).rf == Some(w));
            let floor = floor.max(self.clocks.readers_floor(g, locs, kept, w));
            let mut places = std::mem::take(&mut self.bufs.ids);
            placements(g, loc, floor, &mut places);
            for &p in &places {
                if p != max {
                    self.push(Item::WriteCo { w, pred: p });
                }
            }
            self.bufs.ids = places;
        }
        self.graph().co_insert_after(loc, max, w);
    }

    /// Backward revisits of the new write `w` (not yet in co), and its
    /// speculations.
    fn push_revisits(&mut self, w: EventId) {
        // Before anything reads the graph: a read must not seem to read a
        // write that broke its promise.
        self.settle_promises_at(w);
        if !self.deferred.is_empty() {
            self.push_deferred();
        }
        if !self.may_revisit_or_speculate(w) {
            return;
        }
        let mut porf = std::mem::take(&mut self.bufs.porf);
        self.frames.last().expect("frame").graph.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
        // A read in `w`'s porf-prefix only through kept promises may be
        // revisited too, keeping `w`'s revisit prefix
        // (`Graph::revisit_prefix_into`).
        let mut kept = std::mem::take(&mut self.bufs.kept);
        let open = porf.through_promise().then(|| {
            self.frames.last().expect("frame").graph.revisit_prefix_into(&[w], &mut self.bufs.stack, &mut kept);
            &kept
        });
        let mut reads = std::mem::take(&mut self.bufs.reads);
        let mut later = std::mem::take(&mut self.bufs.later);
        self.revisits(w, &porf, open, &mut reads, &mut later);
        self.bufs.later = later;
        if !self.graph().pins.is_empty() {
            let g = &self.frames.last().expect("frame").graph;
            reads.retain(|&r| !self.untaken_pin(g.ev(r).stamp, Some(revisit_keeps(&porf, open, r).0)));
        }
        let deps = open.unwrap_or(&porf);
        reads.retain(|&r| !self.depends_on_doom(r, Some(deps)));
        self.bufs.kept = kept;
        self.push_speculations(w, &porf);
        self.bufs.porf = porf;
        if !reads.is_empty() {
            let floor = self.placement_floor(w);
            for &r in &reads {
                self.push(Item::Backward { r, w, pred: None, floor });
            }
        }
        self.bufs.reads = reads;
    }

    /// The co-latest write of its location that the program-order
    /// predecessor of the new write `w` (not yet in coherence order)
    /// observes ([`Clocks::co_floor`](crate::model::vclock::Clocks::co_floor)),
    /// for `w`'s backward revisits: each keeps `w`'s porf-prefix, where
    /// its happens-before past is (`hb` runs along `po`, `rf` and the
    /// other edges of the walk), so `w` goes after that write in each
    /// ([`Item::Backward`]); placements before it are inconsistent
    /// (O-CohG/L). The initial write when `w` is placed otherwise than
    /// as a plain write or its location is not atomic. Until session 53
    /// a revisit offered every placement: in the work-stealing
    /// example's `HostTwo` 7,482 of its 10,843 backward revisits were
    /// popped and pruned for coherence.
    fn placement_floor(&mut self, w: EventId) -> EventId {
        let g = &self.frames.last().expect("frame").graph;
        let loc = g.ev(w).loc.expect("write location");
        let locs = &self.checker.s.borrow().locs;
        if !(placed_as_plain(g, w) && locs[loc.0 as usize].atomic) {
            return EventId::init(loc);
        }
        let floor = self.clocks.co_floor(g, locs, w);
        g.writes_to(loc).nth(floor).unwrap_or(EventId::init(loc))
    }

    /// Whether the RMW or compare-exchange read `r` is offered the writes
    /// below its coherence floor
    /// ([`Clocks::co_floor`](crate::model::vclock::Clocks::co_floor)) too,
    /// where the speculations of its write part may be needed: its location is not
    /// [`Engine::coherence_isolated`] and another unit reads it. Such an
    /// alternative is inconsistent and pruned, but its write part takes
    /// a value no consistent graph of this prefix gives it, and a read
    /// added before it that speculates on that value starts from a graph
    /// without the inconsistent read: the rerun may produce the value
    /// through other reads. Seed 8044 of `tests/scoped_differential.rs`
    /// (`rmw_below_its_floor_promises_a_needed_value` there): a
    /// compare-exchange of the first work-item succeeds in every start
    /// graph of the speculation on the third's second `fetch_add`, whose
    /// value 2 only an inconsistent read gives with it (the
    /// compare-exchange fails in the execution found). Without it 98 of
    /// 100 executions; the kernels' blocked runs: hash table 787 → 839,
    /// TTAS 151 → 165.
    fn speculates_below_floor(&self, g: &Graph, r: EventId, loc: LocId) -> bool {
        if !matches!(g.ev(r).op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) {
            return false;
        }
        self.read_before(g, Some(loc), r.unit, g.ev(r).stamp, false) && !self.coherence_isolated(g, loc)
    }

    /// Whether the graph has a read that `w` may revisit or that may
    /// speculate on it: one of `w`'s location added before it by another
    /// unit (a read of its own unit added before it is po-before it, in
    /// its porf-prefix), or by any unit on herd's unqualified locations
    /// ([`Engine::speculations`]). Most writes have none, and skip the
    /// walk of their porf-prefix: without this, a unit writing in a loop
    /// cost O(n^2).
    ///
    /// Nor do the writes whose location no load-buffering cycle can pass
    /// through ([`Engine::coherence_isolated`]: no speculation) when every
    /// access other units made to it happens before the write
    /// ([`Clocks::others_before`](crate::model::vclock::Clocks::others_before)):
    /// `hb` runs along the edges of the porf-prefix walk (`po`, `rf`,
    /// barriers, launches, joins and waits), so those reads are in the
    /// write's porf-prefix, and no revisit can make them read it. Work-items
    /// reading each other's local memory between barriers in a loop
    /// walked the whole graph at each write (2 work-items, 2,000
    /// iterations: 8.9 s).
    fn may_revisit_or_speculate(&self, w: EventId) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        let wev = g.ev(w);
        let unqualified = wev.loc.is_some_and(|l| self.locs()[l.0 as usize].region == Region::Unqualified);
        if !self.read_before(g, wev.loc, w.unit, wev.stamp, unqualified) {
            return false;
        }
        let Some(loc) = wev.loc.filter(|_| !unqualified) else { return true };
        // Nor, on a plain location, when no speculation on `w` can be
        // pushed ([`Engine::no_plain_speculation`]): a tiled matrix
        // product's loads of the next tiles walked the graph at each.
        let before = self.clocks.others_before(g, &self.locs(), w) == Some(true) && (self.coherence_isolated(g, loc) || self.no_plain_speculation(w));
        if before && self.clocks.verify {
            let mut porf = crate::graph::PrefixSet::default();
            g.porf_prefix_into(&[w], &mut Vec::new(), &mut porf);
            let outside = g.event_ids().find(|&r| r.unit != w.unit && g.ev(r).kind.is_read() && g.ev(r).loc == Some(loc) && g.ev(r).stamp < wev.stamp && !porf.contains(r));
            assert!(outside.is_none(), "clmm internal error: Clocks::others_before says every access to the location happens before {}.{}, and {outside:?} is outside its porf-prefix (CLMM_CROSSCHECK)", w.unit.0, w.index);
        }
        !before
    }

    /// Whether `g` has a read of `loc` added before stamp `s` by a unit
    /// other than `unit` (or by `unit` too, with `own_unit_too`).
    fn read_before(&self, g: &Graph, loc: Option<LocId>, unit: UnitId, s: u32, own_unit_too: bool) -> bool {
        let scan = || {
            g.units.iter().enumerate().any(|(u, gu)| {
                (u != unit.index() || own_unit_too) && gu.events.iter().any(|e| e.kind.is_read() && e.loc == loc && e.stamp < s)
            })
        };
        // The views' accesses per unit answer when they cover the graph
        // (the scan made several units looping on their own locations
        // O(n^2), and a tiled matrix product's loads of the next tiles);
        // A read they have was added before `s` when `s` is the last
        // event's (a write just added).
        let qualified = loc.filter(|l| !own_unit_too && self.locs()[l.0 as usize].region != Region::Unqualified);
        let last = s + 1 >= g.next_stamp;
        match qualified.and_then(|l| self.clocks.other_unit_reads(g, l.0 as usize, unit)).filter(|&read| !read || last) {
            Some(read) => {
                if self.clocks.verify {
                    assert_eq!(read, scan(), "clmm internal error: Clocks::other_unit_reads disagrees with the graph (CLMM_CROSSCHECK)");
                }
                read
            }
            None => scan(),
        }
    }

    /// The reads `w` may backward-revisit: same location, added before `w`,
    /// not in its porf-prefix, and every event the revisit deletes (and the
    /// read itself) maximally added (TruSt, POPL'22, §5):
    /// for `e` in Deleted ∪ {r}, with Previous(e) = {e' ≤ e} ∪ porf(w) \ {w}:
    /// a write `e` has no reader in Previous(e); a read `e` reads from a write
    /// in Previous(e) which is its maximal choice there.
    ///
    /// With `open` (`w`'s revisit prefix, when its porf-prefix goes through
    /// a kept promise), a read in the porf-prefix but not in `open` is a
    /// candidate too: the revisit keeps `open` and deletes the promised
    /// writes that put the read there, whose promises are pending again
    /// (a unit that owes a promise ran before the unit whose write its
    /// read needs, and that write depends on the promise:
    /// `dependent_values_owing_units_out_of_order` in
    /// `tests/lb_differential.rs`). The other reads keep the porf-prefix.
    fn revisits(&self, w: EventId, porf: &crate::graph::PrefixSet, open: Option<&crate::graph::PrefixSet>, out: &mut Vec<EventId>, later: &mut Vec<(u32, EventId)>) {
        let g = &self.frames.last().expect("frame").graph;
        let wev = g.ev(w);
        let loc = wev.loc.expect("write location");
        let sw = wev.stamp;
        let outside = open.unwrap_or(porf);
        out.clear();
        g.for_each_event(|e, ev| {
            if ev.kind.is_read() && ev.loc == Some(loc) && ev.stamp < sw && !outside.contains(e) && !(e.unit == w.unit && e.index + 1 == w.index) {
                out.push(e);
            }
        });
        out.sort_by_key(|&e| std::cmp::Reverse(g.ev(e).stamp));
        let Some(&lowest) = out.last() else { return };
        let shared = self.checker.s.borrow();
        let locs = &shared.locs;
        // A read's revisit deletes the events added after it that it does
        // not keep, and what it keeps ([`revisit_keeps`]) is one of two
        // sets, not the read: each event's maximality is the same for
        // every read with the same kept set. The reads go by descending
        // stamp, each deleting what the one before it deletes and the
        // events in between, so a walk down the events added after the
        // lowest read, one per kept set, checks each event once, and the
        // first one not maximal rules out that read and every read below
        // it. (Checking the deleted events read by read made the check
        // O(reads x events): a fifth of the time of `fetch_add` by 6
        // units.)
        later.clear();
        let sl = g.ev(lowest).stamp;
        g.for_each_event(|e, ev| {
            if ev.stamp > sl {
                later.push((ev.stamp, e));
            }
        });
        later.sort_unstable_by_key(|&(s, _)| std::cmp::Reverse(s));
        // Per kept set (`reopens`): how far the walk went, and whether it
        // met a deleted event that is not maximal.
        let mut walk = [(0usize, false); 2];
        out.retain(|&r| {
            let sr = g.ev(r).stamp;
            let (keeps, reopens) = revisit_keeps(porf, open, r);
            let (at, spoilt) = &mut walk[usize::from(reopens)];
            while let Some(&(_, e)) = later.get(*at).filter(|&&(s, _)| s > sr) {
                *spoilt = *spoilt || (!keeps.contains(e) && !self.maximal(g, locs, keeps, reopens, w, e));
                *at += 1;
            }
            !*spoilt && self.maximal(g, locs, keeps, reopens, w, r)
        });
    }

    /// TruSt's maximality of `e` (the read revisited or a deleted event)
    /// for a revisit by `w` that keeps `porf`. With `reopens` (the revisit
    /// deletes kept promises' writes), a write read only by speculative
    /// reads may be deleted.
    fn maximal(&self, g: &Graph, locs: &[LocInfo], porf: &crate::graph::PrefixSet, reopens: bool, w: EventId, e: EventId) -> bool {
        let ev = g.ev(e);
        let se = ev.stamp;
        let prev = |x: EventId| x != w && (x.is_init() || g.ev(x).stamp <= se || porf.contains(x));
        // Whether Previous(e) holds a speculative read, which may rule
        // the co-maximal choice out ([`Engine::later_choice_consistent`]).
        let promise_in_prev = || g.events().any(|(x, ev)| ev.speculative && prev(x));
        if ev.kind.is_write() {
            // (1) it revisited no read of Previous(e). A speculative reader
            // was not revisited: `e` kept its promise, and deleting `e`
            // leaves the promise pending (`Graph::revisit_prefix_into`).
            if g.readers_of(e).any(|x| prev(x) && !(reopens && g.ev(x).speculative)) {
                return false;
            }
            // (3) it is co-maximal in Previous(e) (atomic locations: the
            // others have a single coherence placement, insertion order),
            // or, with a speculative read in Previous(e), at the latest
            // placement there that is consistent ([`Engine::later_choice_consistent`]).
            let loc = ev.loc.expect("loc");
            let later = locs[loc.0 as usize].atomic && g.writes_to(loc).skip_while(|&x| x != e).skip(1).any(prev);
            if later && (!promise_in_prev() || self.later_choice_consistent(g, locs, &prev, reopens, w, e)) {
                return false;
            }
        }
        if ev.kind.is_read() {
            // A read whose write a speculation's start graph kept as a
            // promise ([`Event::kept`](crate::graph::Event::kept)) is
            // revisited, or deleted, as the read it was before: maximal
            // when that write, produced again and in Previous(e), is its
            // maximal choice there, as for any read (the start graphs
            // where it reads another write of the location make no such
            // revisit). Seed 6095 of the wide scoped sweep
            // (`kept_promise_read_is_revisited` in
            // `tests/scoped_differential.rs`): the read made to read a
            // compare-exchange's write in the graph speculated from could
            // not read the release store after it in any speculative run,
            // and 2 of 52 executions were missed. Wide seed 43303
            // (`kept_promise_read_is_deleted`, session 40): a failing
            // compare-exchange kept reading the co-latest write, which
            // the revisit of a load before it deletes, made that revisit
            // impossible, and 2 of 24 were missed (80 of 84 in full).
            // The speculated read's own promise stays never maximal: a
            // run can make its write independent of it, and revisiting it
            // then explored a graph the runs without the speculation
            // explore too. (Its write, added after it, is in Previous(e)
            // only through `porf`: the check below.)
            if ev.spurious || (ev.speculative && !ev.kept) {
                // A weak CAS's spurious failure and a speculative read (load
                // buffering) are alternatives, never the maximal choice.
                return false;
            }
            let rf = ev.rf.expect("read has rf");
            if !g.contains(rf) || !prev(rf) {
                return false;
            }
            let loc = ev.loc.expect("loc");
            if locs[loc.0 as usize].atomic {
                // co-maximal among the writes in Previous(e), or, for a
                // plain load with a speculative read in Previous(e), the
                // latest one there it reads consistently
                // ([`Engine::later_choice_consistent`]).
                let later = g.writes_to(loc).skip_while(|&x| x != rf).skip(1).any(|x| prev(x) && !(x.unit == e.unit && x.index == e.index + 1));
                if later {
                    let load = matches!(ev.op, Op::Mem { access: Access::Load, .. });
                    if !load || !promise_in_prev() || self.later_choice_consistent(g, locs, &prev, reopens, w, e) {
                        return false;
                    }
                }
            } else {
                // The newest write of Previous(e) that e may read consistently.
                let mut h = self.bufs.scratch_graph.borrow_mut();
                h.clone_from(g);
                h.restrict(|id, _| prev(id) || id == e);
                // Every read of h must read inside h (with `reopens`, h may
                // leave a kept promise pending), unless `e` had no choice:
                // a read whose only candidate in Previous(e) is the write
                // it reads is maximal whatever h leaves open. Until
                // session 27 a plain load deleted by a revisit in a
                // speculative run (a promise pending in h) was never
                // maximal, and load buffering through a barrier lost an
                // execution (`load_buffering_through_a_barrier` in
                // `tests/scoped_differential.rs`). Allowing any pending
                // promise in h, as for atomic reads, also found it, but
                // its revisits in speculative runs ended blocked by the
                // thousand (4,866 blocked runs became 18,385 on the
                // work-stealing kernel, 1,244 became 5,225 on the Treiber
                // stack); this costs 259 to 371 on the TTAS lock. Nor does
                // a pending promise outside e's porf-prefix leave the check
                // open (session 38): happens-before is in porf, so keeping
                // it adds no edge into e's past, and which writes `vis`
                // lets e read is decided. Without it the wide scoped
                // sweep's seed 29978 missed 2 of 52 (a plain load with two
                // candidates, deleted by a revisit in a speculative run,
                // `plain_load_with_a_promise_outside_its_past_is_maximal`);
                // it costs the hash table 839 to 910 blocked runs, the
                // work-stealing kernel 1,954 to 2,166. Nor does a promise
                // that `w`'s own unit owes (session 40): its write is `w`
                // itself, which the revisit keeps, or one after `w`, which
                // the revisit deletes. Either way e is added anew after
                // the revisit, with that promise kept by `w` or pending as
                // in h, and the graphs that differ from this one only in
                // e's write have the same h, so the same one of them is
                // judged maximal from each. Without it wide seeds 75560
                // and 78512 missed 33 of 969 and 7 of 205 (shrunk 1 of 33
                // and 1 of 50: `promise_owed_by_the_revisiting_unit` and
                // `promise_kept_by_the_revisiting_write` in
                // `tests/scoped_differential.rs`, where the promised write
                // is `w` itself); it costs the work-stealing kernel 2,166
                // to 4,940 blocked runs (0.42 to 1.0 s), the spin lock 8
                // to 9. (Keeping `w` in h when a speculative read of h
                // reads it, so that e is judged with that promise kept,
                // also found 78512's execution and halved the hash table's
                // blocked runs, but lost one of wide seed 21820's 72.)
                let only = h.writes_to(loc).eq([rf]);
                if !h.contains(e) {
                    return false;
                }
                let decided = || {
                    let past = h.porf_prefix(e);
                    let mut owing = h.event_ids().filter(|&x| past.contains(x) && h.ev(x).speculative).filter_map(|x| h.ev(x).rf.filter(|s| !h.contains(*s)));
                    owing.all(|s| s.unit == w.unit || self.out_of_reach(g, &h, loc, s.unit))
                };
                if !reads_inside(&h, reopens || only || decided()) {
                    return false;
                }
                let cands: Vec<EventId> = h.writes_to(loc).collect();
                for &c in cands.iter().rev() {
                    let v = h.write_value(c, locs);
                    let x = h.ev_mut(e);
                    x.rf = Some(c);
                    x.value = v;
                    if self.consistent_prefix_of(&h, locs) {
                        return c == rf;
                    }
                }
                return false;
            }
        }
        true
    }

    /// Whether no write of non-atomic location `loc` in `h` (a revisit's
    /// Previous(e) ∪ {e}, from the current graph `g`) can come to happen
    /// before the write that unit `owing` owes to a promise pending in
    /// `h`. Keeping that promise then adds no such write to the past of a
    /// plain load of `loc`, and leaves which writes `vis` lets the load
    /// read (`O-NaRfG`/`O-NaRfL`, `opencl_base.cat` lines 97-98)
    /// decided, as a promise outside the load's porf-prefix does
    /// ([`Engine::maximal`]). Each write must be of another unit than
    /// `owing` (a work-item: a host thread is ordered after a whole kernel
    /// by its end), one that has ended in this run with all its events in
    /// `h`, and that from the write on does nothing a happens-before edge
    /// leaves a unit by: only plain and relaxed accesses, and events at a
    /// scope no other unit is inclusive with ([`model::inclusive_scope::alone`]:
    /// a work-group scope release in a group of one); no other release
    /// write, fence, barrier or command. Wide scoped seed 38638
    /// (`plain_store_of_an_ended_unit_stays_out_of_a_promise`): a plain
    /// load with a promise in its past, a plain store of an ended
    /// work-item its other candidate, was never maximal, and the
    /// speculative run could not revisit the compare-exchange before it:
    /// 9 of 10 executions shrunk, 53 of 55 in full, where a work-group
    /// scope release compare-exchange of a group of one follows the store.
    /// Taking every such load as decided finds them too, but doubled the
    /// blocked runs of the work-stealing kernel then (2,166 to 4,940).
    /// Since session 40 a promise owed by the revisiting write's own unit
    /// is decided ([`Engine::maximal`]), which costs the deque as much;
    /// taking every one as decided still costs the hash table 910 to
    /// 1,010 blocked runs and the SVM ring's `no-wait` variant 2,684 to
    /// 2,844 (measured in a scratch tree, session 40).
    fn out_of_reach(&self, g: &Graph, h: &Graph, loc: LocId, owing: UnitId) -> bool {
        if h.units.get(owing.index()).is_none_or(|u| u.device().is_none()) {
            return false;
        }
        h.writes_to(loc).filter(|c| !c.is_init()).all(|c| {
            let unit = c.unit.index();
            // Nothing a happens-before edge leaves `c`'s unit by.
            let quiet = |ev: &crate::graph::Event| {
                (ev.loc.is_some() && ev.atomic.is_none_or(|(o, _)| o == clmm_atomic::Order::Relaxed))
                    || ev.atomic.is_some_and(|(_, s)| model::inclusive_scope::alone(h, c.unit, s))
            };
            c.unit != owing
                && self.rt.get(unit).is_some_and(|rt| rt.status == super::Status::Done)
                && h.units[unit].events.len() == g.units[unit].events.len()
                && h.units[unit].events[c.index as usize..].iter().all(quiet)
        })
    }

    /// Whether the deleted write `e` could have been placed later in
    /// coherence among the writes of Previous(e) (`prev`), or the deleted
    /// plain load `e` could have read a coherence-later write of
    /// Previous(e), with the graph still consistent: then the revisit
    /// belongs to that choice, and `e`'s is not maximal. Without promises
    /// the co-maximal choice is always consistent (a constraint against
    /// it would need `e`, or a reader of `e`, to happen before a write of
    /// Previous(e), so to be in the revisiting write's porf-prefix or
    /// revisited). A promise breaks that: a speculative read of `e` that
    /// happens before a write of Previous(e) forces `e` before it
    /// (`coh(hb) = (rf^-1)?; mo; rf?; hb`, O-CohG and O-CohL,
    /// `opencl_base.cat` lines 79-81). In `a=Rx; b=Ry; Wy1 || Add x; Wy2
    /// || Add y; Wx1` with `b` promised `Wy2`, `Wy2` goes before `Wy1` in
    /// every run, and the revisit of `Add x` by `Wx1`, which deletes `Wy2`,
    /// is made from that placement (seed 142286 of
    /// `tests/ra_rmw_differential.rs`).
    ///
    /// The graph checked is Previous(e) ∪ {e} (TruSt's: of the graphs that
    /// differ in `e`'s choice only the latest consistent one makes the
    /// revisit, so none makes it twice), or, for a revisit that makes a
    /// promise pending again (`reopens`), the whole graph but `w`: there a
    /// deleted event added after `e` may be what rules the later choice
    /// out (`a=Rx` deleted with `Wx2` after it, which a promised read
    /// forces before the write `a` would read: seed 950477), and `apply`
    /// explores such a revisited graph once whichever graphs make it.
    fn later_choice_consistent(&self, g: &Graph, locs: &[LocInfo], prev: &dyn Fn(EventId) -> bool, reopens: bool, w: EventId, e: EventId) -> bool {
        let mut h = self.bufs.scratch_graph.borrow_mut();
        h.clone_from(g);
        if reopens {
            h.restrict(|id, _| id != w);
        } else {
            h.restrict(|id, _| prev(id) || id == e);
        }
        // As for non-atomic reads: a plain read of h reading outside it
        // leaves the check undecided, and `e` is taken as not maximal
        // (the rule without promises).
        if !reads_inside(&h, true) {
            return true;
        }
        let loc = g.ev(e).loc.expect("loc");
        let consistent = |h: &Graph| self.consistent_prefix_of(h, locs);
        if g.ev(e).kind.is_read() {
            let rf = g.ev(e).rf.expect("a read");
            return g.writes_to(loc).skip_while(|&x| x != rf).skip(1).filter(|&x| prev(x)).any(|x| {
                let v = h.write_value(x, locs);
                let ev = h.ev_mut(e);
                ev.rf = Some(x);
                ev.value = v;
                consistent(&h)
            });
        }
        let mut places = Vec::new();
        placements(&h, loc, 0, &mut places);
        h.co_remove(loc, e);
        for p in places.into_iter().skip_while(|&p| p != e).skip(1).filter(|&p| prev(p)) {
            h.co_insert_after(loc, p, e);
            if consistent(&h) {
                return true;
            }
            h.co_remove(loc, e);
        }
        false
    }

    /// Pop the next alternative and restore its graph; false when done.
    pub(super) fn next_item(&mut self) -> bool {
        // The finished run's promises say nothing about the alternatives
        // (`run_execution` takes the next run's from its graph).
        self.promises.clear();
        loop {
            // Nor do its deferred speculations, or those of an alternative
            // pruned below: `run_execution` makes the next run's again from
            // its graph (`rederive_deferred`), those of writes an
            // alternative adds while it is applied included.
            self.deferred.clear();
            // An alternative changes the graph in place.
            self.forget_graph_summaries();
            let Some(frame) = self.frames.last_mut() else { return false };
            let Some(Work { item, key }) = frame.work.pop() else {
                if self.frames.len() == 1 {
                    return false;
                }
                let f = self.frames.pop().expect("a frame");
                self.recycle_frame(f);
                continue;
            };
            if self.run.has_best.load(Relaxed) {
                // A failure earlier in the sequential order is reported
                // whatever this alternative leads to.
                let best = self.run.best.lock().unwrap_or_else(|e| e.into_inner());
                if best.as_ref().is_some_and(|b| b.position.0 < key) {
                    continue;
                }
            }
            self.cur = Position(key);
            self.pushes = 0;
            if self.cfg.debug_explore {
                eprintln!("pop {item:?}");
            }
            tracing::trace!(target: "clmm", "alternative {item:?}");
            self.clocks.note_changed();
            // An alternative that changes the frame's graph in place and
            // is pruned leaves it as it was: an alternative below it may
            // keep events added after its own ([`looks_past_its_cut`]),
            // and must find them as a consistent graph has them (seed 7378
            // of the wide RA sweep, `pruned_alternative_leaves_the_graph_as_it_was`
            // in `tests/ra_rmw_differential.rs`). Unless it pushed
            // alternatives of its own (an RMW's new write part pushes its
            // revisits even when its read part is inconsistent, and they
            // start from its graph: without them executions are lost).
            let frame = self.frames.last().expect("frame");
            let pushed = frame.work.len();
            let keep_before = item.in_place().is_some() && looks_past_its_cut(frame);
            if keep_before {
                self.bufs.before.clone_from(&frame.graph);
            }
            let read = match item {
                Item::ReadFw { r, .. } | Item::Backward { r, .. } => Some(r),
                _ => None,
            };
            if self.apply(item) {
                if self.cfg.crosscheck {
                    let g = self.graph();
                    assert!(g.speculated || !g.events().any(|(_, ev)| ev.speculative), "clmm internal error: a speculative read that Graph::speculated does not know of (CLMM_CROSSCHECK)");
                }
                // A revisit may have deleted the event that broke a promise.
                self.graph().settle_promises();
                // Two RMWs reading one write first, straight on the graph
                // ([`model::axioms::rmw_atomic_at`]): then the views need
                // not be computed to find it.
                if self.rmw_atomic_after(read) && self.prefix_consistent() {
                    if self.cfg.debug_explore {
                        self.debug_graph();
                    }
                    return true;
                }
            }
            if self.cfg.debug_explore {
                let locs = self.checker.s.borrow();
                let v = model::check(&self.frames.last().expect("frame").graph, &locs.locs, self.cfg.sem, Phase::Prefix).violation;
                eprintln!("  (pruned) {v:?}");
            }
            if keep_before && self.frames.last().expect("frame").work.len() == pushed {
                let frame = self.frames.last_mut().expect("frame");
                std::mem::swap(&mut frame.graph, &mut self.bufs.before);
            }
            self.run.counts.pruned.fetch_add(1, Relaxed);
        }
    }

    /// Whether `O-Rmw` holds on the location of read `r` of the graph an
    /// alternative just made ([`model::axioms::rmw_atomic_at`]); true
    /// without `r`. When it does not, the graph is inconsistent, and
    /// `CLMM_CROSSCHECK` asserts that [`Engine::prefix_consistent`] says
    /// so too.
    fn rmw_atomic_after(&mut self, r: Option<EventId>) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        let Some(l) = r.filter(|&r| g.contains(r)).and_then(|r| g.ev(r).loc) else { return true };
        if model::axioms::rmw_atomic_at(g, &self.checker.s.borrow().locs, l) {
            return true;
        }
        if self.cfg.crosscheck {
            assert!(!self.prefix_consistent(), "clmm internal error: O-Rmw fails on location {} of a graph the vector clocks find consistent (CLMM_CROSSCHECK)", l.0);
        }
        false
    }

    /// After an alternative made read `r` read anew (another write, a
    /// promise): an RMW or compare-exchange decides again whether it
    /// succeeds, with no spurious failure, and adds its write part if so.
    fn read_again(&mut self, r: EventId) {
        self.graph().ev_mut(r).spurious = false;
        if matches!(self.graph().ev(r).op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) {
            self.graph().ev_mut(r).kind = Kind::RmwRead;
            self.resolve_restored_rmw(r);
        }
    }

    /// [`Engine::resolve_rmw`] for the read part `r` of an alternative's
    /// restored graph. Before the write part is added (and pushes its
    /// speculations), the graph's promises are brought up to date (the
    /// cut may have deleted the event that broke one) and taken as the
    /// run's, so that the new write settles those it keeps
    /// (`Engine::settle_promises_at`). Until session 18 a promise broken
    /// by the write part this alternative replaces stayed broken while
    /// the new write's speculations were made, which then nested on no
    /// promise: in `a=Ry; Add y; Wx2 || b=Ry; Wy1 || Add x; Add y`
    /// (seed 802434 of `tests/ra_rmw_differential.rs`) `b` was never
    /// promised Add y's write beside `a`.
    fn resolve_restored_rmw(&mut self, r: EventId) {
        let g = &mut self.frames.last_mut().expect("frame").graph;
        g.settle_promises();
        self.promises.clear();
        g.pending_reads_into(&mut self.promises);
        self.resolve_rmw(r);
    }

    fn cut(&mut self, stamp: u32) {
        self.graph().restrict(|_, e| e.stamp <= stamp);
    }

    /// The frame's graph as it was when an alternative that starts a frame
    /// of its own (a backward revisit, a speculation) was pushed, its last
    /// event then at `stamp`: cut there, and a promise broken by an event
    /// the cut deletes pending again. Such an alternative keeps events
    /// added after its read (a revisiting write's prefix, a kept promise's
    /// write with its prefix, `speculation_prefix`), and the alternatives
    /// explored since (pushed later: they change only what was added after
    /// `stamp`) leave those as their last run made them, a pruned
    /// alternative's included. Without the cut, which of them ran last
    /// chose the start graph, and in a run on several workers, where a
    /// donated alternative meets the frame's graph earlier than the
    /// sequential order does, the blocked counts depended on timing
    /// (session 29: the hash table on 4 workers, 269 or 272 blocked runs
    /// against 277).
    fn back_to(&mut self, stamp: u32) {
        self.cut(stamp);
        self.graph().settle_promises();
    }

    fn apply(&mut self, item: Item) -> bool {
        match item {
            Item::ReadFw { r, w } => {
                let s = self.graph().ev(r).stamp;
                self.cut(s);
                self.set_rf(r, w);
                self.read_again(r);
                true
            }
            Item::Spurious { r } => {
                // The CAS keeps its write but fails: keep what was added up
                // to it and the porf-prefix of that write, which a backward
                // revisit of `r` added after it (cutting at `r` alone
                // would leave `r` reading a deleted write).
                let s = self.graph().ev(r).stamp;
                let src = self.graph().ev(r).rf.expect("a CAS reads");
                let g = &self.frames.last().expect("frame").graph;
                // A promise it reads (`Item::ReadPromised`) has no prefix.
                let keep = g.contains(src).then(|| g.porf_prefix(src));
                self.graph().restrict(|id, e| e.stamp <= s || keep.as_ref().is_some_and(|k| k.contains(id)));
                self.graph().ev_mut(r).spurious = true;
                self.resolve_restored_rmw(r);
                true
            }
            Item::WriteCo { w, pred } => {
                let s = self.graph().ev(w).stamp;
                self.cut(s);
                let loc = self.graph().ev(w).loc.expect("loc");
                if !self.graph().contains(pred) {
                    return false;
                }
                self.graph().co_remove(loc, w);
                self.graph().co_insert_after(loc, pred, w);
                true
            }
            Item::Speculate { r, w, value, level, twin, owing_first, at } => {
                self.back_to(at);
                self.speculate(r, w, value, level, twin, owing_first)
            }
            Item::ThinAir { r, unit, value, at } => {
                self.back_to(at);
                self.speculate(r, EventId { unit, index: THIN_AIR }, value, 0, false, false)
            }
            Item::ReadPromised { r, w, value, level, rank } => {
                let s = self.graph().ev(r).stamp;
                self.cut(s);
                self.graph().read_promise(r, w, value, level, rank);
                // A compare-exchange that fails on the promised value has
                // no write part; an RMW's (or a succeeding compare-exchange's)
                // is placed as a plain write's until the promise is kept
                // ([`Engine::add_rmw_write`]).
                self.read_again(r);
                true
            }
            Item::Backward { r, w, pred, floor } => {
                let sw = self.graph().ev(w).stamp;
                self.back_to(sw);
                let mut g = self.bufs.graphs.pop().unwrap_or_default();
                g.clone_from(&self.frames.last().expect("frame").graph);
                let sr = g.ev(r).stamp;
                let mut porf = std::mem::take(&mut self.bufs.porf);
                g.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
                let reopens = porf.contains(r);
                if reopens {
                    // In the porf-prefix only through kept promises
                    // (`Engine::revisits`).
                    g.revisit_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
                }
                g.restrict(|id, e| e.stamp <= sr || porf.contains(id));
                self.bufs.porf = porf;
                let loc = g.ev(w).loc.expect("loc");
                let plain = placed_as_plain(&g, w) && self.locs()[loc.0 as usize].atomic;
                if let Some(next) = plain.then(|| promised_rmw_write(&g, w)).flatten() {
                    // O-Rmw, as in `place_new_write`.
                    g.co_remove(loc, w);
                    g.co_insert_before(loc, next, w);
                } else if plain {
                    g.co_remove(loc, w);
                    let mut places = std::mem::take(&mut self.bufs.ids);
                    // From `w`'s floor on, which the revisit keeps, and
                    // with it `w`'s past, unless it reopens promises
                    // (deleting promised writes of that past).
                    let from = if reopens || !g.contains(floor) { 0 } else { g.co_pos(floor, loc) };
                    placements(&g, loc, from, &mut places);
                    let max = g.co_max(loc);
                    let p = match pred {
                        Some(p) => p,
                        None => {
                            let mut k = 0;
                            for &p in &places {
                                if p != max {
                                    k += 1;
                                    self.push_sibling(Item::Backward { r, w, pred: Some(p), floor }, k);
                                }
                            }
                            max
                        }
                    };
                    self.bufs.ids = places;
                    if !g.contains(p) {
                        self.bufs.graphs.push(g);
                        return false;
                    }
                    g.co_insert_after(loc, p, w);
                }
                self.push_frame(g);
                self.set_rf(r, w);
                let rmw = matches!(self.graph().ev(r).op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. });
                if rmw {
                    // Drop the old write part (deleted with the events after r).
                    let u = r.unit.index();
                    self.graph().units[u].events.truncate(r.index as usize + 1);
                    self.graph().ev_mut(r).spurious = false;
                }
                let run = self.run;
                if reopens && super::start_graph::met_before(&run.spec_seen, self.graph()) {
                    // Made from another graph already (`Engine::revisits`);
                    // the frame has no alternatives yet.
                    if self.cfg.debug_explore {
                        eprintln!("  (revisited graph seen)");
                    }
                    return false;
                }
                if rmw {
                    self.resolve_restored_rmw(r);
                }
                true
            }
        }
    }
}

/// Whether an alternative left in `frame` may keep events added after its
/// own: a speculation keeps a kept promise's write and a revisited read's
/// write with their prefixes ([`Engine::speculation_prefix`]), a weak
/// CAS's spurious failure its write's prefix, and a backward revisit the
/// writes of kept promises ([`Graph::revisit_prefix_into`]). Only then
/// must a pruned alternative put the graph back ([`Engine::next_item`]).
fn looks_past_its_cut(frame: &super::Frame) -> bool {
    frame.work.iter().any(|w| matches!(w.item, Item::Speculate { .. } | Item::ThinAir { .. } | Item::Spurious { .. }))
        || frame.graph.event_ids().any(|e| frame.graph.ev(e).speculative)
}

/// Whether every read of `h` reads a write of `h`: a thin-air read's
/// promised write is not produced anywhere yet, and with `pending_ok` a
/// speculative read may wait for its promised write too.
fn reads_inside(h: &Graph, pending_ok: bool) -> bool {
    h.event_ids().all(|x| (pending_ok && h.ev(x).speculative) || h.ev(x).rf.is_none_or(|s| h.contains(s) || s.index & THIN_AIR != 0))
}

/// What a revisit of `r` by a write keeps besides the events added up to
/// `r`: the write's porf-prefix `porf`, or its revisit prefix `open` when
/// `r` is in the porf-prefix only through kept promises; and whether it is
/// the latter ([`Engine::revisits`]).
fn revisit_keeps<'p>(porf: &'p crate::graph::PrefixSet, open: Option<&'p crate::graph::PrefixSet>, r: EventId) -> (&'p crate::graph::PrefixSet, bool) {
    match open {
        Some(open) if porf.contains(r) => (open, true),
        _ => (porf, false),
    }
}

/// The write part of the speculative RMW that reads write `w` as a kept
/// promise, if it is in `g`: `w` must be its immediate coherence
/// predecessor (O-Rmw), and has no placement of its own.
fn promised_rmw_write(g: &Graph, w: EventId) -> Option<EventId> {
    let loc = g.ev(w).loc;
    g.co.get(loc?.0 as usize)?.iter().copied().find(|&x| {
        g.ev(x).kind == Kind::RmwWrite && {
            let read = g.ev(EventId { unit: x.unit, index: x.index - 1 });
            read.speculative && read.rf == Some(w)
        }
    })
}

/// Whether write `w` takes its coherence place as a plain write does: a
/// plain write, or the write part of an RMW whose read part reads a
/// promise not produced yet ([`Engine::add_rmw_write`]).
fn placed_as_plain(g: &Graph, w: EventId) -> bool {
    match g.ev(w).kind {
        Kind::Write => true,
        Kind::RmwWrite => g.ev(EventId { unit: w.unit, index: w.index - 1 }).rf.is_some_and(|s| !s.is_init() && !g.contains(s)),
        _ => false,
    }
}

/// The coherence predecessors a new plain write to `loc` may be placed
/// after: any write from coherence position `floor` on
/// ([`vclock::Clocks::co_floor`](crate::model::vclock::Clocks::co_floor)) not immediately followed by an RMW that
/// reads it.
fn placements(g: &Graph, loc: LocId, floor: usize, out: &mut Vec<EventId>) {
    out.clear();
    let co = g.co.get(loc.0 as usize).map_or(&[][..], |c| &c[..]);
    // `writes_to` is the initial write, then `co`: write `i` is followed
    // by `co[i]`.
    for (i, p) in g.writes_to(loc).enumerate().skip(floor) {
        if let Some(&next) = co.get(i) {
            if g.ev(next).kind == Kind::RmwWrite {
                let read = EventId { unit: next.unit, index: next.index - 1 };
                if g.ev(read).rf == Some(p) {
                    continue;
                }
            }
        }
        out.push(p);
    }
}

/// The read part `e` of an RMW, or of a compare-exchange that succeeds:
/// an RMW read with the operation's order.
pub(super) fn succeed_rmw(e: &mut crate::graph::Event) {
    e.kind = Kind::RmwRead;
    if let Op::Mem { mode: Mode::Atomic(o, sc), .. } = e.op {
        e.atomic = Some((o, sc));
    }
}

/// Whether an RMW or compare-exchange operation reading `value` succeeds
/// (a weak compare-exchange, unless it fails spuriously).
pub(super) fn rmw_succeeds(op: &Op, value: u64) -> bool {
    match op {
        Op::Mem { access: Access::Cas { expected, .. }, .. } => *expected == value,
        _ => true,
    }
}

/// A compare-exchange's read `e` that fails: a load with the failure order.
pub(super) fn fail_compare_exchange(e: &mut crate::graph::Event) {
    e.kind = Kind::Read;
    if let Op::Mem { access: Access::Cas { failure, .. }, mode: Mode::Atomic(_, s), .. } = e.op {
        e.atomic = Some((failure, s));
    }
}

/// What keeps a promise whose write part an RMW read is about to produce
/// ([`Engine::owed_by_rmw`]).
struct Owed {
    op: clmm_atomic::RmwOp,
    ty: clmm_atomic::NumTy,
    arg: u64,
    /// The value promised.
    value: u64,
    /// The write the RMW must read, if the promise's reader fixes it.
    source: Option<EventId>,
}

impl Owed {
    /// Whether the RMW reading write `w`, of value `v`, keeps the promise.
    fn kept_by(&self, w: EventId, v: u64) -> bool {
        self.op.apply(self.ty, v, self.arg) == self.value && self.source.is_none_or(|s| s == w)
    }
}
