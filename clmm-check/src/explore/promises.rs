//! The promises of a speculative run (DESIGN.md §5): kept when the
//! promised write comes with the promised value, broken when another event
//! takes its position, repaired by a revisit that deletes that event. The
//! run's dooms ([`Doom`]) say which alternatives cannot lead to a counted
//! execution, and [`Engine::repairable`] when a broken run may stop;
//! [`Engine::speculation_counts`] whether a complete speculative execution
//! counts (porf-cyclic, and not counted before).

use super::speculation::reads_as_a_load;
use super::{Engine, Status};
use crate::graph::{broken_position, Graph, Kind, Region, UnitKind, BROKEN, THIN_AIR};
use crate::ids::{EventId, UnitId};
use crate::runtime::Request;
use clmm_atomic::backend::{Command, LocId};

impl Engine<'_, '_> {
    /// After a step: bind the thin-air promises a write of their unit now
    /// keeps, and tell whether the run may go on: false when a promise is
    /// broken ([`Graph::settle_promise`]) and nothing the run can still
    /// add could repair it ([`Engine::repairable`]). A broken run goes on
    /// while it can: its complete graph never counts, but the alternatives
    /// it pushes may delete the event that broke the promise, and the
    /// rerun then keeps it (a unit that wrote the wrong value because it
    /// ran before the unit whose write it reads, `lb_three_units_copying_values`
    /// in `tests/litmus_table.rs`).
    pub(super) fn keep_promises(&mut self) -> bool {
        if self.promises.is_empty() {
            return true;
        }
        let g = &self.frames.last().expect("frame").graph;
        let mut bound = Vec::new();
        let before = self.promises.len();
        self.promises.retain(|&r| {
            let ev = g.ev(r);
            let w = ev.rf.expect("speculative read");
            if w.index & THIN_AIR != 0 {
                let unit = &g.units[w.unit.index()].events;
                let found = unit.iter().enumerate().find(|(_, e)| e.stamp > ev.stamp && e.writes(ev.loc, ev.value));
                return match found {
                    Some((i, _)) => {
                        bound.push((r, EventId { unit: w.unit, index: i as u32 }));
                        false
                    }
                    None => true,
                };
            }
            // Kept (a broken one stays pending: it is not in the graph).
            !g.contains(w)
        });
        // Kept, or bound to a write of its unit (thin air): the rf edge
        // may grow porf-prefixes ([`Reach`]).
        if self.promises.len() < before {
            self.kept_promise = true;
            self.bufs.reach.clear();
        }
        for (r, w) in bound {
            self.graph().ev_mut(r).rf = Some(w);
            self.clocks.note_changed();
        }
        self.repairable()
    }

    /// Settle the pending promises of position `id`, which an event just
    /// took ([`Graph::settle_promise`]); O(promises), not O(events).
    pub(super) fn settle_promises_at(&mut self, id: EventId) {
        for i in 0..self.promises.len() {
            let r = self.promises[i];
            if self.graph().ev(r).rf == Some(id) {
                self.graph().settle_promise(r);
            }
        }
    }

    /// The run's dooms ([`Doom`]): the positions of its broken promises,
    /// and for each pending promise whose read happens before an event of
    /// the unit that owes it, the first such event (else, whose read
    /// happens before a write of an RMW chain of its location, the first
    /// such write: [`rmw_chain_after`]), and the first load after it in
    /// its unit that reads a write coherence puts before the promised one
    /// ([`corr_doom`]).
    fn dooms(&self) -> impl Iterator<Item = Doom> + '_ {
        let g = &self.frames.last().expect("frame").graph;
        let (clocks, kept, locs, cfg) = (&self.clocks, self.kept_promise, self.locs(), self.cfg);
        self.promises.iter().flat_map(move |&r| {
            let Some(w) = g.ev(r).rf else { return [None, None] };
            if let Some(at) = broken_position(w) {
                return [g.contains(at).then_some(Doom { event: at, hb: false }), None];
            }
            let Some(loc) = g.ev(r).loc.filter(|_| !(kept || w.is_init() || w.index & THIN_AIR != 0)) else { return [None, None] };
            let hb = clocks.first_after(&locs, r, loc, w.unit).or_else(|| rmw_chain_after(g, clocks, &locs, r, loc));
            let corr = corr_doom(g, &locs, cfg, r, w, loc);
            [hb, corr].map(|e| e.map(|event| Doom { event, hb: true }))
        }).flatten()
    }

    /// Whether an alternative that changes event `changed` (a read's
    /// write, a write's coherence placement, a read to speculate), or
    /// with `revisit` a backward revisit by a write with that revisit
    /// prefix, depends on a [`Doom`] of the run: has it in its revisit
    /// prefix ([`Graph::revisit_prefix_into`]: the porf-prefix without
    /// the rf edges of speculative reads, which read their promised value
    /// whatever the write's prefix). Then it is not pushed.
    pub(super) fn depends_on_doom(&mut self, changed: EventId, revisit: Option<&crate::graph::PrefixSet>) -> bool {
        let dooms = self.collect_dooms();
        let hit = !dooms.is_empty() && {
            let g = &self.frames.last().expect("frame").graph;
            let dep = match revisit {
                Some(k) => k,
                None => {
                    g.revisit_prefix_into(&[changed], &mut self.bufs.push_stack, &mut self.bufs.push_deps);
                    &self.bufs.push_deps
                }
            };
            // An alternative that changes the event at a broken promise's
            // position leaves it broken; one that changes the read that ends
            // an hb doom's path (what it reads) may cut the path.
            dooms.iter().any(|d| if d.hb { d.event != changed && dep.contains(d.event) } else { d.event == changed || dep.contains(d.event) })
        };
        self.bufs.dooms = dooms;
        hit
    }

    /// The run's dooms ([`Engine::dooms`]), computed once, in the buffer
    /// `bufs.dooms` taken for the caller (which gives it back).
    fn collect_dooms(&mut self) -> Vec<Doom> {
        let mut dooms = std::mem::take(&mut self.bufs.dooms);
        dooms.clear();
        let key = self.doom_key();
        match self.bufs.doom_cache.as_ref().and_then(Option::as_ref).filter(|(k, _)| *k == key) {
            Some((_, kept)) => {
                dooms.extend_from_slice(kept);
                if self.cfg.crosscheck {
                    assert!(self.dooms().eq(kept.iter().copied()), "clmm internal error: the run's dooms changed within a replay pass (Engine::replaying_dooms, CLMM_CROSSCHECK)");
                }
            }
            None => {
                dooms.extend(self.dooms());
                if let Some(cache) = &mut self.bufs.doom_cache {
                    *cache = Some((key, dooms.clone()));
                }
            }
        }
        dooms
    }

    /// What the run's dooms depend on that a replay pass may change: the
    /// graph's events (added ones change its next stamp), the pending
    /// promises, and whether the views are stale (their hb dooms need
    /// fresh views, `Clocks::first_after`).
    fn doom_key(&self) -> DoomKey {
        let g = &self.frames.last().expect("frame").graph;
        (self.frames.len(), g.next_stamp, self.promises.len(), self.kept_promise, self.clocks.is_stale())
    }

    /// While units replay the events of the graph ([`Engine::drive`]'s
    /// replay pass), which adds none, the run's dooms are computed once
    /// (with `on`), not at each replayed step: `Engine::repairable` asked
    /// for them after each one, 14% of checking the work-stealing kernel
    /// (670,000 times in `work_stealing_correct`, 3 in 4 on the graph of
    /// the time before).
    pub(super) fn replaying_dooms(&mut self, on: bool) {
        if !on {
            self.bufs.doom_cache = None;
        } else if self.bufs.doom_cache.is_none() {
            self.bufs.doom_cache = Some(None);
        }
    }

    /// Whether the alternative that makes a read read write `w` (an
    /// [`Item::ReadFw`](super::Item::ReadFw)) depends on a [`Doom`] through `w`: the doom is
    /// `w` or in its revisit prefix. The read then has it in its own
    /// prefix, with a choice that is not maximal, and the alternative's
    /// runs keep it ([`Doom`]'s argument, for the event the alternative
    /// changes). A load of a lock-free stack's head offered the write of
    /// an RMW chain that dooms a pending promise was such an alternative.
    pub(super) fn reads_doom(&mut self, w: EventId) -> bool {
        if w.is_init() {
            return false;
        }
        let dooms = self.collect_dooms();
        let hit = !dooms.is_empty() && {
            let g = &self.frames.last().expect("frame").graph;
            g.revisit_prefix_into(&[w], &mut self.bufs.push_stack, &mut self.bufs.push_deps);
            dooms.iter().any(|d| self.bufs.push_deps.contains(d.event))
        };
        self.bufs.dooms = dooms;
        hit
    }

    /// Whether the alternative that makes read `e` read `w` (an
    /// [`Item::ReadFw`](super::Item::ReadFw)) in a speculative run can only keep the run's
    /// promise without a cycle: the run has one speculative read `r`, its
    /// promise is pending at position `(u, k)`, `e` is `(u, k-1)`, and `r`
    /// is outside the porf-prefix of `e` reading `w`. That is the whole
    /// porf-prefix the promised write will have besides itself (its unit's
    /// events before it end at `e`), so the alternative's runs keep the
    /// promise acyclically or break it, and end blocked either way
    /// ([`Engine::speculation_counts`]: the acyclic graph is TruSt's,
    /// explored without speculation). The alternative is not pushed. In
    /// load buffering (`r = Rx; Wy || s = Ry; Wx`, `r` promised `Wx`), the
    /// run where `s` reads the initial `y` ended blocked: LB explores 5
    /// executions instead of 6.
    ///
    /// Why its runs never count: `e` reads a write that is not its first
    /// choice, so TruSt's maximality keeps the revisits of the runs below
    /// from deleting `e` ([`Engine::maximal`]), and with it the prefix;
    /// a speculation they push starts from a graph of its own, met again
    /// from the other runs that reach it ([`met_before`](super::start_graph::met_before)). The second
    /// step, with maximality's exceptions for reads in speculative runs,
    /// is shown by the differential sweeps, not proved: scoped 0..60000
    /// and `wide` 0..10000, LB 0..20000 in all four draws, RA 0..300000
    /// and `wide` 0..12000 found the same counts as without the rule, and
    /// every count pinned in the tests is unchanged but blocked runs.
    pub(super) fn keeps_promise_acyclically(&mut self, e: EventId, w: EventId) -> bool {
        let [r] = self.promises[..] else { return false };
        let g = &self.frames.last().expect("frame").graph;
        let Some(p) = g.ev(r).rf else { return false };
        if p.index & (THIN_AIR | BROKEN) != 0 || g.contains(p) || p != (EventId { unit: e.unit, index: e.index + 1 }) {
            return false;
        }
        if g.event_ids().filter(|&x| g.ev(x).speculative).nth(1).is_some() {
            return false;
        }
        let roots = [w, EventId { unit: e.unit, index: e.index.saturating_sub(1) }];
        let roots = if e.index == 0 { &roots[..1] } else { &roots[..] };
        g.porf_prefix_into(roots, &mut self.bufs.push_stack, &mut self.bufs.push_deps);
        !self.bufs.push_deps.contains(r)
    }

    /// Whether unit `v` can add no event before unit `u` ends, or none at
    /// all in this run, because its pending request waits: a join of the
    /// kernel that created `u`, or a host wait for `u`, for the kernel
    /// command or work-group `u` is a work-item of, or for a unit blocked
    /// in a spin loop. The join's porf-prefix has the last event of every
    /// unit `v` created ([`Graph::sync_preds`]) and a wait's the
    /// completions it waits for (`Event::waits`), so every event `v` adds
    /// later depends on the last event of `u`; and a unit blocked in a
    /// spin loop never ends in the run. Such a unit cannot repair a
    /// promise `u` broke ([`Engine::repairable`]). In the work-stealing
    /// kernel with two tasks pushed in the kernel, the host waiting for
    /// its kernel was the only unit that kept a broken run going in
    /// 135,629 checks, and without it the blocked runs went from 117,357 to
    /// 54,078; in the SVM ring of `tests/host.rs` the host waiting for its
    /// producer thread kept them going too.
    fn waits_for(&self, v: usize, u: UnitId) -> bool {
        match self.checker.s.borrow().pending[v] {
            // It waits for the units of its last launch (`Engine::enabled`).
            Some(Request::Join(_)) => self.created_gates(UnitId(v as u32), u, Some(self.last_launch(v))),
            Some(Request::Host(_)) => self.host_waits_for(v, u),
            _ => false,
        }
    }

    /// Whether a unit that unit `c` created is `u`, or is blocked in a spin
    /// loop (only those of launch `of`, if given): the join of `c`'s
    /// kernel, and so the end of a kernel command, wait for them
    /// ([`Graph::sync_preds`]; [`Engine::waits_for`]).
    pub(super) fn created_gates(&self, c: UnitId, u: UnitId, of: Option<EventId>) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.units.iter().enumerate().any(|(w, x)| x.parent.is_some_and(|p| p.unit == c && (w == u.index() || (of.is_none_or(|l| p == l) && self.spin_blocked(w)))))
    }

    /// Whether unit `w` is blocked in a spin loop: it adds no event and
    /// never ends for the rest of the run.
    pub(super) fn spin_blocked(&self, w: usize) -> bool {
        self.rt.get(w).is_some_and(|r| r.status == Status::SpinBlocked)
    }

    /// Whether unit `v` can add no write and create no unit for the rest of
    /// the run: a marker or barrier command, or a kernel command that has
    /// launched its kernel (its body is the launch, `launch_plan`: what is
    /// left of it is the join, and its work-items are units of their own).
    /// Repairing a broken promise takes a write ([`Engine::repairable`]):
    /// in the SVM ring of `tests/host.rs`, the kernel command waiting for
    /// its work-item kept most of the broken runs going (three items, one
    /// slot: 51,595 blocked runs, then 2,628).
    fn adds_no_write(&self, v: usize) -> bool {
        let unit = &self.frames.last().expect("frame").graph.units[v];
        match unit.kind {
            UnitKind::Command { command: Command::Marker | Command::Barrier, .. } => true,
            UnitKind::Command { command: Command::Kernel, .. } => unit.events.iter().any(|e| e.kind == Kind::Launch),
            _ => false,
        }
    }

    /// Whether every broken promise of the run could still be repaired: a
    /// revisit that deletes the event at the promised position `(u, i)`
    /// (a [`Doom`]) needs a write that a unit other than `u` adds later
    /// without `(u, i)` in its porf-prefix (a write of `u` itself, or one
    /// that depends on `(u, i)`, keeps it). So some other unit must be
    /// able to go on without depending on the event at the position.
    ///
    /// A unit blocked in a spin loop (`Status::SpinBlocked`) adds no event
    /// for the rest of the run. A later write can revisit its loop's reads
    /// away, but a write from a unit that depends on `(u, i)` keeps the
    /// position in the rerun (and the unit's new events depend on it), and
    /// one from a unit that does not makes that unit a repairer itself.
    /// Until session 54 such a unit counted, and a run went on while only
    /// its doomed unit could add events.
    fn repairable(&mut self) -> bool {
        let dooms = self.collect_dooms();
        if dooms.is_empty() {
            self.bufs.dooms = dooms;
            return true;
        }
        let g = &self.frames.last().expect("frame").graph;
        let mut stack = std::mem::take(&mut self.bufs.stack);
        let mut porf = std::mem::take(&mut self.bufs.porf);
        let mut reach = std::mem::take(&mut self.bufs.reach);
        let ok = dooms.iter().all(|&Doom { event: at, .. }| {
            (0..self.rt.len()).any(|v| {
                if v == at.unit.index() || self.rt[v].status != Status::Running {
                    return false;
                }
                if self.waits_for(v, at.unit) || self.adds_no_write(v) {
                    return false;
                }
                let n = g.units[v].events.len() as u32;
                if n == 0 {
                    return true;
                }
                let known = reach.iter_mut().find(|x| x.at == at && x.unit == v as u32);
                let cached = known.as_ref().filter(|x| x.events == n).map(|x| x.reached);
                if cached.is_some() && !self.cfg.crosscheck {
                    return cached != Some(true);
                }
                g.porf_prefix_into(&[EventId { unit: UnitId(v as u32), index: n - 1 }], &mut stack, &mut porf);
                let reached = porf.contains(at);
                assert!(cached.is_none_or(|c| c == reached), "clmm internal error: a porf-prefix changed without its unit adding an event or a promise being kept (Engine::repairable, CLMM_CROSSCHECK)");
                let now = Reach { at, unit: v as u32, events: n, reached };
                match known {
                    Some(x) => *x = now,
                    None => reach.push(now),
                }
                !reached
            })
        });
        self.bufs.stack = stack;
        self.bufs.porf = porf;
        self.bufs.reach = reach;
        self.bufs.dooms = dooms;
        ok
    }

    /// In a twin's run ([`Pin`](crate::graph::Pin)): whether an alternative that keeps the
    /// events added up to `stamp` (and `porf`, for a backward revisit)
    /// keeps an event at a pinned position that did not take its pin: its
    /// runs all end blocked, being the plain start graph's, so it is not
    /// pushed.
    pub(super) fn untaken_pin(&self, stamp: u32, porf: Option<&crate::graph::PrefixSet>) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.pins.iter().any(|p| g.contains(p.r) && !p.taken(g) && (g.ev(p.r).stamp <= stamp || porf.is_some_and(|x| x.contains(p.r))))
    }

    /// Whether every pin of a twin's run ([`Pin`](crate::graph::Pin)) made its read read the
    /// promise, and the promise is not broken.
    pub(super) fn pins_taken(&self) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.pins.iter().all(|p| p.taken(g) && g.ev(p.r).rf == Some(p.w))
    }

    /// Whether the execution that ends here counts (complete or failed):
    /// one without speculation does; a speculative one only if it is
    /// porf-cyclic and was not counted before (the acyclic ones are
    /// TruSt's, explored exactly once there; speculations from different
    /// graphs may meet the same cycle). Sets `cyclic_fp`.
    pub(super) fn speculation_counts(&mut self) -> bool {
        if self.cyclic_fp.is_some() {
            return true;
        }
        let g = &self.frames.last().expect("frame").graph;
        if !g.speculated || !g.events().any(|(_, ev)| ev.speculative) {
            return true;
        }
        // Only a speculative read can read a write porf-after it: a
        // revisit needs the read outside the write's porf-prefix, which
        // never grows.
        let (mut stack, mut porf) = (std::mem::take(&mut self.bufs.stack), std::mem::take(&mut self.bufs.porf));
        let cyclic = g.event_ids().any(|r| {
            let ev = g.ev(r);
            ev.speculative
                && ev.rf.is_some_and(|w| {
                    !w.is_init() && g.contains(w) && {
                        g.porf_prefix_into(&[w], &mut stack, &mut porf);
                        porf.contains(r)
                    }
                })
        });
        (self.bufs.stack, self.bufs.porf) = (stack, porf);
        if !cyclic {
            return false;
        }
        let fp = g.execution_fingerprint(&self.locs());
        if !self.run.cyclic_seen.insert(fp) {
            return false;
        }
        self.cyclic_fp = Some(fp);
        true
    }
}

/// Where the promise of speculative read `r` stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Promise {
    /// Its write is produced.
    Kept,
    /// Not produced yet.
    Pending,
    /// Broken, or out of thin air (flagged ids, [`BROKEN`], [`THIN_AIR`]):
    /// never a write of this graph.
    Lost,
}

pub(super) fn promise(g: &Graph, r: EventId) -> Promise {
    match g.ev(r).rf {
        Some(w) if w.is_init() || g.contains(w) => Promise::Kept,
        Some(w) if w.index & (BROKEN | THIN_AIR) != 0 => Promise::Lost,
        _ => Promise::Pending,
    }
}

/// What a run's dooms are computed from ([`Engine::doom_key`]).
pub(super) type DoomKey = (usize, u32, usize, bool, bool);

/// Whether the porf-prefix of unit `unit`'s last event holds doom `at`
/// ([`Engine::repairable`]), as of the unit's `events` events. Within a
/// run that prefix changes only when the unit adds an event or a pending
/// promise is kept (its read's rf edge comes into the graph; the run's
/// answers are then dropped, [`Engine::keep_promises`]), so the walk is
/// not made again until one of them changes: with a broken promise, the
/// work-stealing kernel made it at every step, for every other unit.
#[derive(Clone, Copy, Debug)]
pub(super) struct Reach {
    at: EventId,
    unit: u32,
    events: u32,
    reached: bool,
}

/// The doom of a speculative run's graph: the event at a broken promise's
/// position. The promise stays broken, and the run's complete graph never
/// counts, until a revisit deletes that event (the promise is then
/// pending again, [`Graph::settle_promise`]).
///
/// A doomed run goes on only for what may repair it: [`Engine::repairable`]
/// stops it once no other unit can add a write that revisits the event
/// away, and the alternatives it pushes that depend on the event (have it
/// in their revisit prefix, [`Engine::depends_on_doom`]) are dropped. Such
/// an alternative changes the event, or an event `c` that depends on it,
/// to a choice that is not maximal (another write read, a later coherence
/// placement, a revisit). A backward revisit in its runs that deleted `c`
/// would need every deleted event maximally added (TruSt,
/// [`Engine::revisits`]), so its runs keep `c` and, with `c`, the event
/// at the position: they end blocked. What they would add besides are
/// writes for speculations to be made on; the differential tests
/// (`tests/*_differential.rs`, counts against brute force) and sweeps of
/// 60,000 scoped and 10,000 wide scoped programs in both modes of
/// [`Config::speculate_compare_exchange`](crate::config::Config::speculate_compare_exchange),
/// 18,000 longer LB programs with value-dependent stores, and 998,500
/// release/acquire programs and 12,000 wide ones found no count changed
/// by dropping them (session 31). The Treiber stack's blocked runs went
/// from 1,514 to 779.
///
/// A *CoRR doom* (session 41, [`corr_doom`]) is a read `x` of the
/// promise's location after its read `r` in its unit that reads a write
/// coherence puts before the promised one. It was tried before (session
/// 31) on every read and lost executions, which showed what it needs.
/// Dropping the alternatives that merely keep `x` lost executions of
/// seeds 2101, 2550, 5989 and 8039 of the longer programs of
/// `tests/lb_differential.rs` (runs that keep it, but not through their
/// changed event, revisit it away); dropping those that depend on it
/// through the rf edges of speculative reads lost one of seed 32620 of
/// `tests/scoped_differential.rs` (a speculative read reads its promised
/// value whatever the promised write depends on:
/// `alternative_through_a_kept_promise_of_a_doomed_run`; dependencies are
/// taken over the revisit prefix for that reason); and dropping those
/// that depend on it otherwise lost one of the wide seed 6330 with
/// failing CASes speculating (`doomed_reads_are_not_dooms`): there `x` is
/// a compare-exchange, whose way out of the doom, reading the promise
/// itself, came only from a speculation on the promised write made in a
/// run of a dropped alternative. Since session 41 a compare-exchange that
/// fails on the promised value may read it when added, as a load may
/// (`Engine::push_read_promised`; wide seed 88786 needed it, 17 of 18,
/// `retrying_compare_exchange_reads_the_promise`), so every read with
/// that way out ([`reads_as_a_load`]) is a CoRR doom. Blocked runs: the
/// work-stealing kernel 4,940 to 2,188, the SVM ring of `tests/host.rs`
/// 1,770 to 752 (with three items 245,734 to 98,001; with two slots 417
/// to 231 and 54,635 to 15,439), the ticket lock 32 to 27, the TTAS lock
/// 165 to 161, the 3-unit weak-CAS spin lock of `tests/unique.rs`
/// 128,567 to 120,647; the compare-exchanges reading a promise cost the
/// hash table 910 to 1,254 and the spin lock 9 to 12. Every complete
/// count is the same, and so are the sweeps' (the README's Status).
///
/// A doomed run still makes its speculations: dropping them (session 35,
/// the run cannot complete while it keeps the doom's event) lost one of
/// the wide seed 15983 with failing CASes speculating
/// (`speculations_of_a_doomed_run_are_needed`).
///
/// An *hb doom* (session 34) is the first event `e` of the unit that owes
/// a pending promise that the promise's read `r` happens before (by the
/// vector clocks, [`vclock::Clocks::first_after`](crate::model::vclock::Clocks::first_after),
/// in the region of the location). The promised write comes after `e` in
/// that unit, in the same region, so `r hb w` once it comes, and `w rf r`
/// makes `rf; hb` reflexive (O-Rf, `opencl_base.cat` line 89): no run that
/// keeps `e` with `r hb e` counts. The views are lower bounds of `hb` in
/// every extension (`rs_min`, no `sw` from a write not produced yet), and
/// the `hb` path from `r` to `e` runs along `sb`, `rf` and barrier, join
/// and launch edges, all in `e`'s porf-prefix; with no kept promise in the
/// graph (`Engine::kept_promise`) that prefix is `e`'s revisit prefix, so
/// an alternative that keeps `e` keeps the path. One that changes `e`
/// itself (what `e` reads) may cut it, and is kept. Failing such an
/// event, the hb doom is the first write of an unbroken chain of RMWs
/// opening the location's coherence order that `r` happens before
/// ([`rmw_chain_after`]: the promised write would have to go inside the
/// chain). In the work-stealing kernel's speculative runs that ended with
/// their promise pending, the read happened before an event of the owing
/// unit in 3,970 of 4,022 (scratch instrumentation, session 34): the run
/// then went on to its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Doom {
    /// The event.
    event: EventId,
    /// An hb or a CoRR doom, which an alternative changing the event
    /// itself (what it reads) may lift (else the event at a broken
    /// promise's position).
    hb: bool,
}

/// The *CoRR doom* (two reads of a location against coherence) of
/// pending promise `r <- w` (`w` the promised position, not produced
/// yet) on location `loc`: the first read `x` of `loc` after `r` in
/// `r`'s unit that reads a write coherence must put before `w` once `w`
/// comes: the initial write, a write of `w`'s unit before `w` (`sb`), or
/// one of `r`'s unit before `r` (`w' sb r` and `w rf r` order
/// `w' mo w`). Then `w rf r sb x` with `x` reading from before `w` makes
/// `rf; hb; fr` reflexive (`coh(hb)`, O-CohG/L, `opencl_base.cat` lines
/// 79-81; `sb` is in `hb` between accesses of one location): no run that
/// keeps `x` reading it, with `r`'s promise, counts. Only a read that
/// reads as a load ([`reads_as_a_load`]: a load, or a compare-exchange
/// failing on the promised value), which has a way out when it is added:
/// reading `w` itself, as `Engine::push_read_promised` offers after its
/// unit's read of a promise (or a speculation on a later write). Session
/// 31 made every such read a doom, and a compare-exchange without that
/// way out lost an execution ([`Doom`]). Not on herd's unqualified locations,
/// where `sb` is not in `hb`.
fn corr_doom(g: &Graph, locs: &[crate::graph::LocInfo], cfg: &crate::config::Config, r: EventId, w: EventId, loc: LocId) -> Option<EventId> {
    if locs[loc.0 as usize].region == Region::Unqualified {
        return None;
    }
    let before = |s: EventId| s.is_init() || (g.contains(s) && ((s.unit == w.unit && s.index < w.index) || (s.unit == r.unit && s.index < r.index)));
    let value = g.ev(r).value;
    (r.index + 1..g.units[r.unit.index()].events.len() as u32).map(|index| EventId { unit: r.unit, index }).find(|&x| {
        let ev = g.ev(x);
        ev.loc == Some(loc) && reads_as_a_load(&ev.op, value, cfg) && ev.rf.is_some_and(before)
    })
}

/// The coherence doom of pending promise `r` on location `loc` (an hb
/// doom, [`Doom`]): the coherence-first write `c` that `r` happens before
/// among the writes that open `loc`'s coherence order with an unbroken
/// chain of read-modify-writes (each write, from the first after the
/// initial one up to `c`, the write part of an RMW reading the write
/// before it). The promised write `w` that `r` reads must go before `c`
/// in coherence (`c mo w; w rf r; r hb c` is `coh(hb)`, O-CohG/L,
/// `opencl_base.cat` lines 79-81), and no write can go inside such a
/// chain: the RMW after it would no longer read its immediate
/// predecessor (O-Rmw, line 101). An extension adds writes only around
/// existing ones, and an alternative that keeps `c` keeps the chain (its
/// rf edges are in `c`'s porf-prefix) and the `hb` path. A location
/// written only by successful compare-exchanges (the head of a lock-free
/// stack) is such a chain: there every load of the location that
/// speculated was doomed once its own unit's next CAS succeeded, and the
/// run went on until the owing unit produced its write.
fn rmw_chain_after(g: &Graph, clocks: &crate::model::vclock::Clocks, locs: &[crate::graph::LocInfo], r: EventId, loc: LocId) -> Option<EventId> {
    let mut prev = EventId::init(loc);
    for &c in g.co.get(loc.0 as usize)? {
        let read = EventId { unit: c.unit, index: c.index.checked_sub(1)? };
        let ev = g.ev(read);
        if g.ev(c).kind != Kind::RmwWrite || ev.rf != Some(prev) || ev.speculative {
            return None;
        }
        if clocks.happens_before(locs, r, c)? {
            return Some(c);
        }
        prev = c;
    }
    None
}
