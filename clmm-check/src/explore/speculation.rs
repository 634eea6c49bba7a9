//! Load buffering (DESIGN.md §5): a read in a write's porf-prefix, which no
//! revisit can make read from it, reads the write's value in a rerun that
//! must produce the write again (a promise). Promises kept, broken and
//! repaired; speculations waiting for the promises they depend on
//! ([`Deferred`]); the start graph of a speculation and its twin ([`Pin`]).

use super::{Engine, Item, Status};
use crate::runtime::Request;
use crate::graph::{broken_position, promised_position, BROKEN, Graph, Kind, Pin, Region, UnitKind, THIN_AIR};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::{Access, Command, LocId, Op};

impl Engine<'_, '_> {
    /// The speculations on the new write `w` (porf-prefix `porf`):
    /// pushed, or deferred until the promises they depend on are kept.
    pub(super) fn push_speculations(&mut self, w: EventId, porf: &crate::graph::PrefixSet) {
        if self.no_plain_speculation(w) {
            return;
        }
        // For a plain location's write (only its reads can be hopeless),
        // the irregular reads, gathered by the scan `speculations` makes
        // anyway: a scan of their own was a quarter of a tiled matrix
        // product's instructions.
        let mut irregular = (self.plain_location(w) && self.may_be_hopeless()).then(Vec::new);
        let (specs, nesting) = self.speculations(w, porf, irregular.as_mut());
        let value = self.graph().ev(w).value;
        match nesting {
            Nesting::At(levels) => {
                if let Some(irregular) = &mut irregular {
                    irregular.sort_unstable();
                }
                for r in specs {
                    let level = levels.of(self.graph(), r);
                    self.push_speculation(r, w, value, level, porf, irregular.as_deref());
                }
            }
            // `speculations` says `No` when there are no reads to speculate.
            Nesting::Waiting(levels, waits) => self.deferred.push(Deferred { w, levels, reads: specs, waits }),
            Nesting::No => {}
        }
    }

    /// Load buffering (DESIGN.md §5): the loads of `w`'s location in its
    /// porf-prefix, which no revisit can make read from `w`. Each may read
    /// `w`'s value in a rerun that produces `w` again (same unit, position,
    /// location and value); only porf-cyclic complete executions are kept
    /// (`complete`). Values are never invented: only writes that some
    /// explored execution produced are speculated on. Which reads may
    /// speculate: [`speculates_on`].
    ///
    /// A write whose porf-prefix holds speculative reads is speculated on
    /// too, once their promises are kept ([`promise_level`]): one unit
    /// reading two writes porf-after it (`a=Rx; b=Ry; Wz1 || c=Rz; Wx1;
    /// Wy2`, a <- Wx1, b <- Wy2) needs `b`'s speculation in the run where
    /// `a` reads its promise, and nesting goes as deep as the promises
    /// depend on each other (`lb_speculation_nested_n_deep` in
    /// `tests/semantics.rs`). A speculative read in that prefix may itself
    /// be `r` (re-promised to `w`: `a` and `b` both read `Wx2` there, then
    /// `b` moves on to a later write). Returns the reads and whether and
    /// at which levels they speculate.
    ///
    /// With `irregular`, it also lists the reads added before `w` that are
    /// irregular ([`irregular`]), in the graph's order.
    fn speculations(&self, w: EventId, porf: &crate::graph::PrefixSet, mut irregular: Option<&mut Vec<(u32, EventId)>>) -> (Vec<EventId>, Nesting) {
        let g = &self.frames.last().expect("frame").graph;
        if self.plan.is_some() {
            return (Vec::new(), Nesting::No);
        }
        let wev = g.ev(w);
        let (loc, sw) = (wev.loc, wev.stamp);
        // No speculation through a location no load-buffering cycle can
        // pass through, and nothing for the scan below to note there
        // (`note_rmw_cycles` and the failing compare-exchanges skip such
        // a location too; `irregular` is read only with speculations):
        // asked first, it spares the scan of the whole graph at each
        // write, 5% of the instructions of `fetch_add` by 6 units, whose
        // RMW reads made the scan note each as unexplored.
        if loc.is_some_and(|l| self.coherence_isolated(g, l)) {
            return (Vec::new(), Nesting::No);
        }
        // A read of a po-later write of its own unit is inconsistent
        // (`irreflexive rf; (ghb | lhb)`, sb ⊆ hb) except on herd's
        // unqualified locations.
        let unqualified = loc.is_some_and(|l| self.locs()[l.0 as usize].region == Region::Unqualified);
        // The RMW reads that would speculate with `Config::speculate_rmw`
        // (noted once per run, [`Engine::note_rmw_cycles`]).
        let note = !self.cfg.speculate_rmw && !self.run.counts.rmw_cycles_unexplored.load(std::sync::atomic::Ordering::Relaxed);
        let (mut reads, mut unexplored) = (Vec::new(), Vec::new());
        // A compare-exchange that fails on `w`'s value and would speculate
        // with `Config::speculate_compare_exchange` (noted once per run).
        let mut failing_cas = false;
        for (r, ev) in g.events() {
            if let Some(out) = irregular.as_mut().filter(|_| ev.kind.is_read() && ev.stamp < sw && self::irregular(g, ev)) {
                out.push((ev.stamp, r));
            }
            if !(ev.kind.is_read() && ev.loc == loc && ev.stamp < sw && ev.rf != Some(w) && (r.unit != w.unit || unqualified) && porf.contains(r)) {
                continue;
            }
            if speculates_on(&ev.op, wev.value, self.cfg) {
                reads.push(r);
            } else if note && reads_as_rmw(&ev.op, wev.value) {
                unexplored.push(r);
            } else {
                failing_cas |= matches!(ev.op, Op::Mem { access: Access::Cas { expected, .. }, .. } if expected != wev.value);
            }
        }
        if !unexplored.is_empty() {
            self.note_rmw_cycles(g, w, &unexplored);
        }
        if failing_cas && !self.run.counts.cas_cycles_unexplored.load(std::sync::atomic::Ordering::Relaxed) {
            self.run.counts.cas_cycles_unexplored.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let as_rmw = |r: &EventId| reads_as_rmw(&g.ev(*r).op, wev.value);
        if reads.iter().any(as_rmw) {
            // Not also those that happen before an event of `w`'s unit
            // before `w` (the hb doom of [`Engine::dooms`], known before
            // the rerun): that lost 2 of 36 executions of the wide RA
            // sweep's seed 4556 (the rerun's path to `w` need not be the
            // one that makes `r hb w` here).
            let reach = rmw_cycle_reach(g, w);
            reads.retain(|&r| !as_rmw(&r) || reaches(&reach, r));
        }
        if reads.is_empty() {
            // The levels (a scan of the graph) only for writes with reads
            // to speculate: most writes have none.
            return (reads, Nesting::No);
        }
        match promise_level(g, porf) {
            Nesting::No => (Vec::new(), Nesting::No),
            nesting => (reads, nesting),
        }
    }

    /// Without [`Config::speculate_rmw`](crate::config::Config::speculate_rmw): whether an RMW read of `reads`
    /// (in new write `w`'s porf-prefix, [`Engine::speculations`]) could read `w` in a rerun, through a cycle that only
    /// RMW reads close (the reads that option lets speculate,
    /// [`rmw_cycle_reach`]; the caller has ruled out a location
    /// [`Engine::coherence_isolated`]): such executions may
    /// exist and are not explored (Deviation 7 of [`crate::model`]), which
    /// [`Stats::rmw_cycles_unexplored`](super::Stats::rmw_cycles_unexplored)
    /// tells. The cycle is the graph's, so the rerun may not close it:
    /// with the option on, the work-stealing kernel of `examples/` finds
    /// no execution more; a histogram of three work-items incrementing
    /// two bins in opposite orders finds 36 instead of 22
    /// (`histogram_rmw_cycles` in `tests/semantics.rs`).
    fn note_rmw_cycles(&self, g: &Graph, w: EventId, reads: &[EventId]) {
        let reach = rmw_cycle_reach(g, w);
        if reads.iter().any(|&r| reaches(&reach, r)) {
            self.run.counts.rmw_cycles_unexplored.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether no execution of the running kernel can read a write of
    /// location `l` porf-after the read (load buffering), because `l` is
    /// its only atomic location (or, below, `l` is plain and the kernel
    /// has at most one atomic location): every other location is
    /// non-atomic, in the same region and the same kind of memory (not
    /// SVM), and the only units are the host, waiting in a launch, and
    /// the kernel's work-items. Then a write's speculations on `l` are not
    /// made ([`Engine::speculations`]).
    ///
    /// Why. Let `w rf r` with `r` on `l` and a porf path `r = y0 ... w`.
    /// Its rf edges on other locations are non-atomic, so each reads a
    /// visible write, which happens before it (O-NaRfG/L, `opencl_base.cat`
    /// lines 97-98); its po edges are `sb`, in `ghb` (`lhb`) between
    /// accesses of the region. So the path is segments in `hb`, joined by
    /// rf edges on `l`: `r hb x1 rf y1 hb x2 ... rf yk hb w`, each `xi` a
    /// write of `l`. Coherence (`coh(hb)`, O-CohG/L, lines 79-81) orders
    /// `w mo x1` (`w rf r hb x1`), `xi mo xi+1` (`xi rf yi hb xi+1`) and
    /// `xk mo w`: a cycle in `mo`. With no rf edge on `l` (`k = 0`),
    /// `r hb w` and `w rf r` break O-Rf (line 89). So no consistent
    /// execution has such a cycle, and a speculation on `l` could only
    /// end blocked.
    ///
    /// A load-buffering cycle needs a second atomic location, read
    /// without synchronisation (`lb_differential.rs`'s programs all have
    /// one). Host threads and commands (their own ordering edges,
    /// [`crate::model::host`]), fine-grained SVM (`ghb` with enqueue
    /// edges) and the reference's compatibility rules (values out of thin
    /// air, unqualified locations) are left out.
    ///
    /// The argument also rules out a cycle through a non-atomic `l` when
    /// the kernel has at most one atomic location `a` and every other
    /// location is non-atomic, in `a`'s region and kind of memory
    /// (session 43). A plain read `r`
    /// reads a visible write, so `w rf r` is in `hb` too (O-NaRfG/L), and
    /// the path from `r` to `w` is again segments in `hb` joined by rf
    /// edges on `a`: with none, `r hb w hb r` breaks O-HbG; with
    /// `r hb x1 rf y1 ... rf yk hb w hb r`, coherence orders `xi mo xi+1`
    /// as above and `xk mo x1` (`yk hb x1` through `w` and `r`), a cycle
    /// (for `k = 1`, `x1 rf y1 hb x1` breaks O-Rf). The spin locks of
    /// `benches/` (a lock and a plain counter) speculated on the
    /// counter's plain loads until then: 4 units, 1,536 executions and
    /// 88,780 blocked runs in 2.4 s (now 1,564, all spin waits, in 57 ms).
    ///
    /// The locations are those allocated so far in the whole run: one a
    /// work-item allocates after the rule was used starts the run again
    /// without it ([`super::Isolation`]). In the Treiber stack (a CAS
    /// loop on one atomic head over non-atomic `next` links) every
    /// speculation on the head ended blocked: the 3-unit stack did not
    /// finish in 120 s (one complete execution after 2.4 million blocked
    /// runs), and with the rule explores its 68,892 executions with no
    /// blocked run in 1.7 s.
    pub(super) fn coherence_isolated(&self, g: &Graph, l: LocId) -> bool {
        let cfg = self.cfg;
        if !self.run.isolation.on || cfg.sem.compat || cfg.thin_air.is_some() || cfg.local_across_groups {
            return false;
        }
        // Only the host, waiting in a launch, and work-items (kept per
        // run: a scan of every unit at each write was 8% of the
        // instructions of a matrix product by 1,024 work-items).
        let host = g.units.first().is_none_or(|h| h.kind == UnitKind::Host && h.events.last().is_some_and(|e| e.kind == Kind::Launch));
        let kinds = self.unit_kinds(g);
        if !host || kinds.command || kinds.host_thread {
            return false;
        }
        // The shared table, under its lock: a location another worker
        // allocated is either seen here or sees the rule used.
        let mut t = self.checker.table.lock().unwrap_or_else(|e| e.into_inner());
        // Known for the table as it is: a scan of every location at each
        // write of a tiled matrix product was 18% of its instructions.
        let isolated = match t.isolation_holds {
            Some((n, holds)) if n == t.locs.len() => {
                if self.cfg.crosscheck {
                    assert_eq!(holds, isolation_holds(&t.locs, l), "clmm internal error: the isolation rule's verdict kept for the location table is not the table's (CLMM_CROSSCHECK)");
                }
                holds
            }
            _ => {
                let holds = isolation_holds(&t.locs, l);
                t.isolation_holds = Some((t.locs.len(), holds));
                holds
            }
        };
        t.isolation_used |= isolated;
        isolated
    }

    /// The deferred speculations ([`Deferred`]) whose awaited promises are
    /// now all kept, pushed; those with one broken, dropped.
    pub(super) fn push_deferred(&mut self) {
        let mut deferred = std::mem::take(&mut self.deferred);
        let mut porf = std::mem::take(&mut self.bufs.porf);
        deferred.retain_mut(|d| {
            let g = &self.frames.last().expect("frame").graph;
            if d.waits.iter().any(|&r| promise(g, r) == Promise::Lost) {
                return false;
            }
            d.waits.retain(|&r| promise(g, r) == Promise::Pending);
            if d.waits.is_empty() {
                let value = g.ev(d.w).value;
                g.porf_prefix_into(&[d.w], &mut self.bufs.stack, &mut porf);
                let irregular = self.plain_location(d.w).then(|| self.irregular_reads()).flatten();
                for &r in &d.reads {
                    let level = d.levels.of(self.graph(), r);
                    self.push_speculation(r, d.w, value, level, &porf, irregular.as_deref());
                }
                return false;
            }
            true
        });
        self.bufs.porf = porf;
        self.deferred = deferred;
    }

    /// The deferred speculations of the run's graph, made again: those of
    /// its writes whose porf-prefix holds pending promises. A run that
    /// starts from an alternative has lost the ones the run that pushed
    /// the alternative made (that run may have broken the promise they
    /// wait for: a read after the write read something else, and its
    /// alternative keeps the promise; `dependent_values_deferred_in_an_alternative`
    /// in `tests/lb_differential.rs`). A speculation pushed again meets its
    /// start graph in [`Run::spec_seen`](super::Run::spec_seen).
    pub(super) fn rederive_deferred(&mut self) {
        self.deferred.clear();
        if self.promises.is_empty() || self.plan.is_some() {
            return;
        }
        let mut porf = std::mem::take(&mut self.bufs.porf);
        let writes: Vec<EventId> = {
            let g = &self.frames.last().expect("frame").graph;
            // Only writes with a read of their location that may speculate
            // added before them (`speculations` looks at no other) get a
            // walk: the stamp of each location's first such read, in one
            // pass.
            let mut first_load: Vec<u32> = Vec::new();
            for e in g.event_ids() {
                let ev = g.ev(e);
                if let (Some(l), true) = (ev.loc, may_speculate(&ev.op, self.cfg)) {
                    let l = l.0 as usize;
                    if first_load.len() <= l {
                        first_load.resize(l + 1, u32::MAX);
                    }
                    first_load[l] = first_load[l].min(ev.stamp);
                }
            }
            let loaded_before = |w: EventId| g.ev(w).loc.and_then(|l| first_load.get(l.0 as usize)).is_some_and(|&s| s < g.ev(w).stamp);
            g.event_ids().filter(|&w| g.ev(w).kind.is_write() && loaded_before(w)).collect()
        };
        for w in writes {
            self.frames.last().expect("frame").graph.porf_prefix_into(&[w], &mut self.bufs.stack, &mut porf);
            if let (reads, Nesting::Waiting(levels, waits)) = self.speculations(w, &porf, None) {
                self.deferred.push(Deferred { w, levels, reads, waits });
            }
        }
        self.bufs.porf = porf;
    }

    /// Push the speculation `r <- w` (`value`, at `level`), and its twin
    /// when `w`'s porf-prefix `porf` holds another promise, which the
    /// start graph may cut away ([`Pin`]; [`Engine::twin_pins`] tells).
    /// The twin comes after the plain one in the exploration order.
    fn push_speculation(&mut self, r: EventId, w: EventId, value: u64, level: u8, porf: &crate::graph::PrefixSet, irregular: Option<&[(u32, EventId)]>) {
        let g = &self.frames.last().expect("frame").graph;
        let other = |e: EventId| e != r && g.ev(e).speculative && g.ev(e).rf.is_some_and(|w| w.index & THIN_AIR == 0) && porf.contains(e);
        let at = g.next_stamp - 1;
        // Each in both orders of the owing units ([`owing_first_matters`]),
        // the second explored last.
        // (A twin's reads are speculative: irregular, when there is a list.)
        let has_twin = match irregular {
            Some(irregular) => irregular.iter().any(|&(_, e)| other(e)),
            None => g.event_ids().any(other),
        };
        // Without a twin, a speculation of a plain read that is hopeless
        // now is hopeless when explored (the graph is then back as it is
        // now, [`Engine::back_to`]).
        let hopeless = self.never_visible_from_any_start(r, irregular);
        if hopeless && self.cfg.crosscheck {
            let g = self.start_graph(r, false);
            if let Some(mut g) = g {
                // As `speculate` makes it: no pins (no twin).
                g.pins.clear();
                assert!(self.never_visible(&g, r), "clmm internal error: never_visible_from_any_start says speculation {r:?} <- {w:?} is hopeless, and never_visible of its start graph does not (CLMM_CROSSCHECK)");
                self.bufs.graphs.push(g);
            }
        }
        for twin in [true, false] {
            if (!twin && !hopeless) || (twin && has_twin) {
                self.push(Item::Speculate { r, w, value, level, twin, owing_first: true, at });
                self.push(Item::Speculate { r, w, value, level, twin, owing_first: false, at });
            }
        }
    }

    /// Herd compatibility ([`Config::thin_air`](crate::config::Config::thin_air)): a plain load `r` may also
    /// read each of the given values from a write that another work-item
    /// has not produced yet, out of thin air (the `.cat` model has no
    /// dependencies: `if (r0) y = 1;` on both sides of load buffering is
    /// consistent). One such speculation at a time, as for [`Item::Speculate`].
    pub(super) fn push_thin_air(&mut self, r: EventId) {
        let Some(values) = self.cfg.thin_air.clone() else { return };
        let g = &self.frames.last().expect("frame").graph;
        let thin = |e: EventId| g.ev(e).speculative && g.ev(e).rf.is_some_and(|w| w.index & THIN_AIR != 0 || !g.contains(w));
        if self.plan.is_some() || !matches!(g.ev(r).op, Op::Mem { access: Access::Load, .. }) || g.event_ids().filter(|&e| thin(e)).count() >= 2 {
            return;
        }
        let units: Vec<UnitId> = (0..g.units.len() as u32).map(UnitId).filter(|&u| u != r.unit && matches!(g.units[u.index()].kind, UnitKind::WorkItem { .. })).collect();
        let at = g.next_stamp - 1;
        for unit in units {
            for &value in values.iter() {
                self.push(Item::ThinAir { r, unit, value, at });
            }
        }
    }

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
    /// [`Item::ReadFw`]) depends on a [`Doom`] through `w`: the doom is
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
    /// [`Item::ReadFw`]) in a speculative run can only keep the run's
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
    /// from the other runs that reach it ([`met_before`]). The second
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

    /// In a twin's run ([`Pin`]): whether an alternative that keeps the
    /// events added up to `stamp` (and `porf`, for a backward revisit)
    /// keeps an event at a pinned position that did not take its pin: its
    /// runs all end blocked, being the plain start graph's, so it is not
    /// pushed.
    pub(super) fn untaken_pin(&self, stamp: u32, porf: Option<&crate::graph::PrefixSet>) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.pins.iter().any(|p| g.contains(p.r) && !p.taken(g) && (g.ev(p.r).stamp <= stamp || porf.is_some_and(|x| x.contains(p.r))))
    }

    /// Whether every pin of a twin's run ([`Pin`]) made its read read the
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

    /// Start a speculation: read `r` reads `value` from `w`, a write not
    /// in the graph yet (a thin-air promise, or a position the rerun must
    /// fill with a fitting write); false when the graph cannot be built or
    /// was speculated from already.
    pub(super) fn speculate(&mut self, r: EventId, w: EventId, value: u64, level: u8, twin: bool, owing_first: bool) -> bool {
        if self.cfg.crosscheck && !twin {
            // The graph is back as it was when the speculation was pushed
            // ([`Engine::back_to`]): that decided it had a chance.
            assert!(!self.never_visible_from_any_start(r, self.irregular_reads().as_deref()), "clmm internal error: speculation {r:?} <- {w:?}, pushed when never_visible_from_any_start said no, says yes when it is explored (CLMM_CROSSCHECK)");
        }
        let Some(mut g) = self.speculation_prefix(r) else {
            if self.cfg.debug_explore {
                eprintln!("  (no start graph)");
            }
            return false;
        };
        // A nested start graph is no twin: the pins it keeps are
        // speculative reads now, and those it cuts away are its own twin's.
        g.pins.clear();
        if twin {
            self.twin_pins(r, w, &mut g);
            if g.pins.is_empty() {
                if self.cfg.debug_explore {
                    eprintln!("  (no twin: the cut keeps the promises w depends on)");
                }
                self.bufs.graphs.push(g);
                return false;
            }
        }
        if g.contains(w) && !g.ev(w).writes(g.ev(r).loc, value) {
            self.bufs.graphs.push(g);
            return false;
        }
        self.promise_in(&mut g, r, w, value, level);
        let ev = g.ev_mut(r);
        if matches!(ev.op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) {
            let succeeds = reads_as_rmw(&ev.op, value);
            // Its write part is cut away with what follows `r`. A
            // compare-exchange that fails on the promised value is a load
            // ([`speculates_on`]); one that succeeds, or an RMW, gets its
            // write part again when its unit replays `r`, placed in
            // coherence as a plain write is until the promise is kept
            // ([`Engine::add_rmw_write`]).
            ev.spurious = false;
            let was = ev.kind == Kind::RmwRead;
            if succeeds {
                super::revisit::succeed_rmw(ev);
            } else {
                super::revisit::fail_compare_exchange(ev);
            }
            let now = g.ev(r).kind == Kind::RmwRead;
            if was != now {
                shift_positions(&mut g, r, if now { 1 } else { -1 });
            }
        }
        g.owing_first = owing_first;
        if owing_first && !owing_first_matters(&g) {
            self.bufs.graphs.push(g);
            return false;
        }
        if (0..g.units.len()).any(|u| returns_to_a_promise(&g, UnitId(u as u32))) || !promises_agree(&g) {
            if self.cfg.debug_explore {
                eprintln!("  (incoherent: returns to a promised write, or two values promised for one write)");
            }
            self.bufs.graphs.push(g);
            return false;
        }
        if self.never_visible(&g, r) {
            if self.cfg.debug_explore {
                eprintln!("  (a non-atomic read, and no other pending promise to make the write visible to it)");
            }
            self.bufs.graphs.push(g);
            return false;
        }
        if met_before(&self.run.spec_seen, &mut g) {
            if self.cfg.debug_explore {
                eprintln!("  (start graph seen)");
            }
            self.bufs.graphs.push(g);
            return false;
        }
        let deepest = g.event_ids().filter(|&e| g.ev(e).speculative).map(|e| g.ev(e).level).max();
        if deepest.is_some_and(|d| d > self.cfg.nesting_limit) {
            self.too_deep = deepest;
        }
        self.push_frame(g);
        true
    }

    /// Whether speculative read `r` of start graph `g` is a read of a
    /// non-atomic location whose promised write can never be visible to
    /// it: no other read of `g` reads a pending promise, and `g` pins
    /// none ([`Pin`]: its runs would make them again). Then every run from
    /// `g` ends blocked, and the speculation is not made.
    ///
    /// A non-atomic read reads only a visible write, `w ghb r` (or `lhb`;
    /// O-NaRfG/L, `opencl_base.cat` lines 97-98). The promised write `w`
    /// is not in `g`, and every event a run appends to `g` comes after the
    /// events of `g` in its unit; so a `hb` path from `w` to `r`, which
    /// ends in `g`, has a first event `x` in `g`, entered from outside
    /// `g`. Not by `sb` (a unit's events in `g` are a prefix of it); not
    /// by `bar_sw` (a unit of `g` past a barrier has every participant's
    /// barrier event in `g`, before `w` in `w`'s unit); so by `ra_sw`
    /// (`opencl_base.cat` lines 48-50): `x`, or a read `sb`-before the fence
    /// `x`, reads from the release sequence of a write not in `g`. A
    /// release sequence in `g` has its head in `g` (its writes are the
    /// head's later writes and the RMWs reading from it, which never
    /// speculate), so that read reads a write not in `g`: a pending
    /// promise, and it is not `r`, which is not an acquire. Host commands
    /// order by their own edges ([`crate::model::host`]), and the litmus
    /// front end's compatibility mode reads values out of thin air and
    /// has unqualified locations: neither is decided here.
    ///
    /// That covers the runs that extend `g`. Its runs also revisit reads
    /// of `g` backward, and a revisited acquire read of `g` reads a write
    /// not in `g`; the revisit keeps `r` only when `r` was added before
    /// that read or the revisiting write depends on `r`, and the `hb` path
    /// from the read to `r` makes the read a dependency of the write too.
    /// That step, through kept promises (whose `rf` edges revisit prefixes
    /// leave out) and barriers, is shown by the differential sweeps, not
    /// proved: `tests/scoped_differential.rs` (plain locations, fences,
    /// barriers, compare-exchanges) found the same counts with and without
    /// the rule on seeds 0..60000 and `wide` 0..10000, in both modes of
    /// failing-CAS speculation, and `plain_load_buffering_visible_through_another_promise`
    /// there is a cycle this rule must leave to the atomic loads.
    ///
    /// The speculations on a non-atomic counter inside a critical section
    /// made a third of the 3-unit CAS spin lock's runs (each read the
    /// next holder's write of the counter), all of them blocked; the
    /// kernels of `examples/` lost most of their blocked runs with the
    /// rule (the hash table 277 to 20, the 3-unit weak-CAS spin lock of
    /// `tests/unique.rs` 156,853 to 71,783).
    fn never_visible(&self, g: &Graph, r: EventId) -> bool {
        let Some(loc) = g.ev(r).loc else { return false };
        let info = self.locs()[loc.0 as usize];
        if info.atomic || info.region == Region::Unqualified || self.cfg.thin_air.is_some() {
            return false;
        }
        // A twin's pins are promises its runs make again later: one may be
        // the pending promise that orders the write before `r`.
        if !g.pins.is_empty() || g.units.iter().any(|u| matches!(u.kind, UnitKind::Command { .. })) {
            return false;
        }
        !g.event_ids().any(|e| {
            let ev = g.ev(e);
            e != r && ev.speculative && ev.rf.is_some_and(|w| !w.is_init() && !g.contains(w))
        })
    }

    /// Whether `e` accesses a non-atomic location that is not herd's
    /// unqualified (whose reads may be hopeless speculations,
    /// [`Engine::never_visible_from_any_start`]).
    fn plain_location(&self, e: EventId) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        g.ev(e).loc.is_some_and(|l| {
            let info = self.locs()[l.0 as usize];
            !info.atomic && info.region != Region::Unqualified
        })
    }

    /// Whether no speculation on the new write `w` of a plain location can
    /// be pushed, nor deferred: the graph has no [`irregular`] read (and a
    /// speculation may be decided hopeless, [`Engine::may_be_hopeless`]).
    /// Then every read of `w`'s location is a plain read that
    /// [`Engine::never_visible_from_any_start`] finds hopeless, none has a
    /// twin (no read is speculative), and `w`'s porf-prefix holds no
    /// pending promise to wait for; and the reads of a plain location
    /// note no unexplored RMW or compare-exchange cycle
    /// ([`Engine::speculations`]). (Skipping `speculations` also skips its
    /// [`Engine::coherence_isolated`], which would mark the isolation rule
    /// used: a run that relies on neither is not started again when a
    /// work-item allocates a location later.)
    pub(super) fn no_plain_speculation(&self, w: EventId) -> bool {
        let sw = self.frames.last().expect("frame").graph.ev(w).stamp;
        self.plain_location(w) && self.may_be_hopeless() && self.irregular_floor() > sw
    }

    /// At most the lowest stamp of an [`irregular`] read of the run's graph
    /// (`u32::MAX`: none): a scan of the graph the first time it is asked
    /// since the graph last changed other than by the run's new events
    /// ([`Engine::irregular_floor`] is forgotten when a run starts, when an
    /// alternative is applied and when a frame is pushed). A run's new read
    /// reads a write added before it (regular), or a promise
    /// ([`Engine::note_irregular`]); a read made regular again leaves the
    /// floor lower than it needs to be, which only decides less.
    /// `CLMM_CROSSCHECK` compares it with a scan at each use.
    fn irregular_floor(&self) -> u32 {
        let g = &self.frames.last().expect("frame").graph;
        let scan = || irregular_reads_of(g).map(|(s, _)| s).min().unwrap_or(u32::MAX);
        match self.irregular_floor.get() {
            Some(f) => {
                if self.cfg.crosscheck {
                    let fresh = scan();
                    assert!(f <= fresh, "clmm internal error: the irregular floor kept along the run ({f}) is above the graph's ({fresh}) (CLMM_CROSSCHECK)");
                }
                f
            }
            None => {
                let f = scan();
                self.irregular_floor.set(Some(f));
                f
            }
        }
    }

    /// New read `r` of the run reads a promise: it lowers the floor of
    /// irregular reads, if one is kept ([`Engine::irregular_floor`]).
    pub(super) fn note_irregular(&self, r: EventId) {
        if let Some(f) = self.irregular_floor.get() {
            let s = self.frames.last().expect("frame").graph.ev(r).stamp;
            self.irregular_floor.set(Some(f.min(s)));
        }
    }

    /// Whether a speculation may be decided hopeless before its start
    /// graph is made ([`Engine::never_visible_from_any_start`]): not when
    /// the graph has commands (host edges order what
    /// [`Engine::never_visible`] does not decide), nor when the
    /// compatibility mode reads values out of thin air.
    fn may_be_hopeless(&self) -> bool {
        let g = &self.frames.last().expect("frame").graph;
        self.cfg.thin_air.is_none() && !self.unit_kinds(g).command
    }

    /// Forget what is kept about the frame's graph while only a run
    /// appends to it ([`Engine::irregular_floor`], [`Engine::unit_kinds`]):
    /// it changed otherwise (a run starts, an alternative is applied, a
    /// frame is pushed).
    pub(super) fn forget_graph_summaries(&self) {
        self.irregular_floor.set(None);
        self.unit_kinds.set(UnitKinds::default());
    }

    /// The kinds of the units of `g` (the frame's graph) beyond unit 0,
    /// scanned from where the last question left off: a run only appends
    /// units. `CLMM_CROSSCHECK` compares with a full scan.
    fn unit_kinds(&self, g: &Graph) -> UnitKinds {
        let mut k = self.unit_kinds.get();
        if k.scanned as usize > g.units.len() {
            k = UnitKinds::default();
        }
        for unit in g.units.iter().skip((k.scanned as usize).max(1)) {
            match unit.kind {
                UnitKind::Host => k.host_thread = true,
                UnitKind::Command { .. } => k.command = true,
                UnitKind::WorkItem { .. } => {}
            }
        }
        k.scanned = g.units.len() as u32;
        self.unit_kinds.set(k);
        if self.cfg.crosscheck {
            let fresh = |f: fn(&UnitKind) -> bool| g.units.iter().skip(1).any(|u| f(&u.kind));
            assert_eq!((k.command, k.host_thread), (fresh(|k| matches!(k, UnitKind::Command { .. })), fresh(|k| *k == UnitKind::Host)), "clmm internal error: the unit kinds kept along the run are not the graph's (CLMM_CROSSCHECK)");
        }
        k
    }

    /// The [`irregular`] reads of the run's graph, with their stamps, in
    /// stamp order; `None` unless [`Engine::may_be_hopeless`].
    fn irregular_reads(&self) -> Option<Vec<(u32, EventId)>> {
        if !self.may_be_hopeless() {
            return None;
        }
        let mut out: Vec<(u32, EventId)> = irregular_reads_of(&self.frames.last().expect("frame").graph).collect();
        out.sort_unstable();
        Some(out)
    }

    /// Whether plain speculation `r` (no twin) is hopeless
    /// ([`Engine::never_visible`] of its start graph), decided on the run's
    /// graph (its [`Engine::irregular_reads`]) when it would be pushed, so
    /// that it is not: exploring it made a start graph (a clone of the
    /// graph, and a walk of what depends on `r`) only to drop it, 86% of
    /// the instructions of a tiled matrix product by 64 work-items, whose
    /// plain reads offered 768 such speculations (session 51).
    ///
    /// [`Engine::start_graph`] keeps the porf-prefix of the events added
    /// up to `r` (each unit's events with a stamp up to `r`'s: stamps grow
    /// along each unit's events), less what depends on `r`, and makes
    /// promises only of reads in it that read a write outside those
    /// prefixes. When no read but `r` added up to `r` is irregular, each
    /// reads the initial value or a write added before it: the porf-prefix
    /// is the prefixes themselves, no read becomes a promise and none is
    /// one. The start graph (if any) then has no pending promise but
    /// `r`'s, and no pin (no twin); with no command unit, on a non-atomic
    /// location that is not herd's unqualified, that is
    /// [`Engine::never_visible`]'s verdict, and [`Engine::speculate`]
    /// would return false whichever check turned the start graph down.
    /// `CLMM_CROSSCHECK` checks it against the start graph.
    fn never_visible_from_any_start(&self, r: EventId, irregular: Option<&[(u32, EventId)]>) -> bool {
        let Some(irregular) = irregular.filter(|_| self.plain_location(r)) else { return false };
        let sr = self.frames.last().expect("frame").graph.ev(r).stamp;
        !irregular.iter().take_while(|&&(s, _)| s <= sr).any(|&(_, x)| x != r)
    }

    /// The graph a speculation of read `r` starts from: what was added up
    /// to `r`, closed under porf (a read revisited earlier keeps its later
    /// write). A read added before `r` that a revisit made read a write
    /// porf-after `r` keeps that write as a promise of its own (the rerun
    /// must produce it again, as for `r`): in `a=Rx; Wy2 || b=Ry; Wx1 ||
    /// c=Ry; Wy1` the cycle `a <- Wx1, c <- Wy2, b <- Wy1` is only reached
    /// by speculating `b` from the graph where `a` already reads `Wx1`
    /// (`lb_three_units_shared_location` in `tests/litmus_table.rs`).
    /// `None` when such a write depends on a speculation (values would no
    /// longer come from speculation-free prefixes) or `r` on itself, and
    /// when such a read is a plain load whose own speculation on that
    /// write started from a graph met already that is this one without
    /// `r` ([`Engine::own_start_met`]).
    fn speculation_prefix(&mut self, r: EventId) -> Option<Graph> {
        let g = self.start_graph(r, false)?;
        let g0 = &self.frames.last().expect("frame").graph;
        let load = |e: EventId| matches!(g0.ev(e).op, Op::Mem { access: Access::Load, .. });
        let made: Vec<EventId> = g.event_ids().filter(|&e| e != r && g.ev(e).speculative && !g0.ev(e).speculative && load(e)).collect();
        for c in made {
            if self.own_start_met(c, &g) {
                if self.cfg.debug_explore {
                    eprintln!("  (the start graph of {c:?}'s own speculation was met, and this one is it plus the speculated read)");
                }
                self.bufs.graphs.push(g);
                return None;
            }
        }
        Some(g)
    }

    /// Whether the start graph of plain load `c`'s own speculation on the
    /// write it reads (the events added up to `c` without that write's
    /// porf-prefix, `c` reading it as a promise) was met
    /// ([`Run::spec_seen`](super::Run::spec_seen)), and start graph `g`,
    /// which makes `c` read that promise too, is that graph plus the read
    /// it speculates (each unit's events of the one a prefix of `g`'s,
    /// each coherence order a subsequence, one event more). Then `g`'s
    /// runs meet only executions that one's reach. In load buffering
    /// (`r = Rx; Wy1 || s = Ry; Wx1`), the graph where a revisit made `r`
    /// read `Wx1` speculated `s` on `Wy1`, making `r` a promise again,
    /// and its run met the cycle `r`'s own speculation found: LB explores
    /// 4 executions and no blocked run (5 before, 6 before
    /// [`Engine::keeps_promise_acyclically`]; both session 32).
    ///
    /// Shown by the sweeps, not proved, and each weaker form lost
    /// executions. Skipping such speculations outright lost 4 of the 12
    /// executions of the SVM ring on device scope (session 24, `092f029`,
    /// reverted; `svm_ring_device_scope_explored_in_full` in
    /// `tests/host.rs`): the load's unit reaches the promised write only
    /// through the value the load reads, and its own speculation is never
    /// made. Any met start graph that `g` extends, not just by the one
    /// read, lost 4 of 216 at seed 8044 of the scoped sweep (Spec SC).
    /// Compare-exchanges (with [`Config::speculate_compare_exchange`](crate::config::Config::speculate_compare_exchange))
    /// lost one (`alternative_through_a_kept_promise_of_a_doomed_run` in
    /// `tests/scoped_differential.rs`; their speculations miss executions,
    /// Deviation 7). This form found the same counts as without it on
    /// the sweeps listed at [`Engine::keeps_promise_acyclically`].
    fn own_start_met(&mut self, c: EventId, g: &Graph) -> bool {
        let Some(mut own) = self.start_graph(c, true) else { return false };
        own.pins.clear();
        let ev = self.graph().ev(c);
        let (w, value) = (ev.rf.expect("a read"), ev.value);
        self.promise_in(&mut own, c, w, value, 0);
        let met = g.event_ids().count() == own.event_ids().count() + 1 && extends(g, &own) && self.run.spec_seen.contains(normalized_start_key(&mut own));
        self.bufs.graphs.push(own);
        met
    }

    /// In start graph `g`, read `r` reads `value` from `w` as a promise at
    /// `level`, ranked by `w`'s stamp in the graph speculated from
    /// ([`Event::rank`](crate::graph::Event::rank); unknown when `w` is
    /// not in it).
    fn promise_in(&self, g: &mut Graph, r: EventId, w: EventId, value: u64, level: u8) {
        let g0 = &self.frames.last().expect("frame").graph;
        let rank = if g0.contains(w) { g0.ev(w).stamp } else { u32::MAX };
        g.read_promise(r, w, value, level, rank);
    }

    /// [`Engine::speculation_prefix`]'s graph; with `own`, without the
    /// porf-prefix of the write `r` reads (`r`'s own speculation on it,
    /// [`Engine::own_start_met`]).
    fn start_graph(&mut self, r: EventId, own: bool) -> Option<Graph> {
        let g0 = &self.frames.last().expect("frame").graph;
        let sr = g0.ev(r).stamp;
        let roots: Vec<EventId> = g0
            .units
            .iter()
            .enumerate()
            .filter_map(|(u, unit)| {
                let n = unit.events.iter().take_while(|e| e.stamp <= sr).count();
                (n > 0).then(|| EventId { unit: UnitId(u as u32), index: n as u32 - 1 })
            })
            .collect();
        // The reads added before `r` that read a write added after it: a
        // load or a failing compare-exchange, or an RMW read that reads a
        // promise (`Engine::push_read_promised`; a revisit never made an
        // RMW read read a write porf-after `r`, Deviation 7).
        let cut: Vec<EventId> = g0
            .event_ids()
            .filter(|&e| {
                let ev = g0.ev(e);
                let read = ev.kind == Kind::Read || (ev.kind == Kind::RmwRead && ev.speculative);
                ev.stamp < sr && read && ev.rf.is_some_and(|w| !w.is_init() && g0.contains(w) && g0.ev(w).stamp > sr)
            })
            .collect();
        // The first event of each unit that depends on `r` (po, rf and
        // synchronisation successors, `Graph::sync_succs`, from `r`'s
        // po-successor on), not through the reads in `cut`.
        let mut first_dep: Vec<u32> = g0.units.iter().map(|u| u.events.len() as u32).collect();
        let mut todo = vec![EventId { unit: r.unit, index: r.index + 1 }];
        // The reads of each write, gathered once when the walk meets its
        // first write (asking `Graph::readers_of`, a scan of the graph, for
        // each write made a kernel of n events O(n^2) a speculation).
        // (Sorted pairs `(write, read)`: hashing cost more than the scans.)
        let mut readers: Option<Vec<(EventId, EventId)>> = None;
        // The barrier instances whose exits are on `todo` already: the
        // entries of one instance have the same successors (the other
        // members' exits; a member's own exit follows its entry in po).
        let mut instances: Vec<crate::graph::InstanceKey> = Vec::new();
        while let Some(e) = todo.pop() {
            let u = e.unit.index();
            if e.index >= first_dep[u] || !g0.contains(e) {
                continue;
            }
            let old = first_dep[u];
            first_dep[u] = e.index;
            for i in e.index..old {
                let x = EventId { unit: e.unit, index: i };
                if g0.ev(x).kind.is_write() {
                    // `r` itself reads anew (a speculative `r` may read
                    // a write that depends on it: re-promised).
                    let readers = readers.get_or_insert_with(|| {
                        let mut m: Vec<(EventId, EventId)> = g0.event_ids().filter_map(|y| g0.ev(y).rf.filter(|_| g0.ev(y).kind.is_read()).map(|w| (w, y))).collect();
                        m.sort_unstable();
                        m
                    });
                    let from = readers.partition_point(|&(w, _)| w < x);
                    todo.extend(readers[from..].iter().take_while(|&&(w, _)| w == x).map(|&(_, y)| y).filter(|y| !cut.contains(y) && *y != r));
                }
                if let (Kind::BarrierEntry, Some(inst)) = (g0.ev(x).kind, g0.ev(x).barrier) {
                    let key = g0.barrier_instance(x.unit, inst);
                    if instances.contains(&key) {
                        // Its exits are there, but the unit's other
                        // successors (the joins after its last event) too.
                        g0.sync_succs_beyond_barrier(x, &mut todo);
                        continue;
                    }
                    instances.push(key);
                }
                g0.sync_succs(x, &mut todo);
            }
        }
        let depends = |e: EventId| !e.is_init() && e.index >= first_dep[e.unit.index()];
        if depends(r) {
            return None;
        }
        let mut keep = crate::graph::PrefixSet::default();
        g0.porf_prefix_skipping_into(&roots, own.then_some(r), &mut Vec::new(), &mut keep);
        let mut promised = Vec::new();
        for &e in &cut {
            let w = g0.ev(e).rf.expect("a read");
            if depends(w) && keep.contains(e) {
                // A speculative read keeps its promise's level.
                let level = if g0.ev(e).speculative {
                    g0.ev(e).level
                } else {
                    match promise_level(g0, &g0.porf_prefix(w)) {
                        Nesting::At(levels) => levels.of(g0, e),
                        _ => return None,
                    }
                };
                promised.push((e, level));
            }
        }
        let mut g = self.bufs.graphs.pop().unwrap_or_default();
        g.clone_from(g0);
        g.restrict(|id, _| keep.contains(id) && !depends(id));
        for (e, level) in promised {
            if g.contains(e) {
                // It keeps its write, now a promise the rerun must keep.
                let ev = g.ev(e);
                let (w, value) = (ev.rf.expect("a read"), ev.value);
                // A speculative read keeps its rank too.
                let (rank, kept) = if ev.speculative { (ev.rank, false) } else { (g0.ev(w).stamp, true) };
                g.read_promise(e, w, value, level, rank);
                g.ev_mut(e).kept = kept;
            }
        }
        Some(g)
    }

    /// The pins of the twin of speculation `r <- w` whose start graph is
    /// `g` ([`Pin`]): the speculative plain loads of the current graph
    /// that `w` depends on (in its porf-prefix) and that the cut drops,
    /// with the writes and values they were promised. A broken promise
    /// pins its position again (its write, cut away, is pending there).
    fn twin_pins(&self, r: EventId, w: EventId, g: &mut Graph) {
        let g0 = &self.frames.last().expect("frame").graph;
        if !g0.contains(w) {
            return;
        }
        let porf = g0.porf_prefix(w);
        for e in g0.event_ids() {
            let ev = g0.ev(e);
            let Some(pw) = ev.rf else { continue };
            if e == r || !ev.speculative || pw.index & THIN_AIR != 0 || g.contains(e) || !porf.contains(e) || !speculates_on(&ev.op, ev.value, self.cfg) {
                continue;
            }
            let pw = promised_position(pw);
            if pw == w && e.unit == r.unit {
                // Its unit's reads of the location from `r` to it all read
                // `w` (CoRR), and the plain start graph's runs offer each
                // the promise its previous one read ([`Item::ReadPromised`]).
                continue;
            }
            g.pins.push(Pin { r: e, loc: ev.loc.expect("a read"), w: pw, value: ev.value, level: ev.level, rank: ev.rank });
        }
    }
}

/// In start graph `g`, where compare-exchange `r` now succeeds where it
/// failed in the graph speculated from (`delta` 1: a write part more) or
/// fails where it succeeded (-1), move the positions after `r` in its unit
/// that promises and pins name: the events after `r` are cut away, and
/// the rerun adds them again one place later (earlier). A promise of
/// the unit's next RMW write kept at its old index would be broken by
/// that RMW's read part (`compare_exchange_that_now_succeeds_shifts_promises`
/// in `tests/scoped_differential.rs`).
fn shift_positions(g: &mut Graph, r: EventId, delta: i64) {
    let shift = |p: EventId| -> EventId {
        if p.is_init() || p.unit != r.unit || p.index & THIN_AIR != 0 || promised_position(p).index <= r.index {
            return p;
        }
        let index = (promised_position(p).index as i64 + delta) as u32;
        EventId { unit: p.unit, index: index | (p.index & BROKEN) }
    };
    for u in 0..g.units.len() {
        for ev in &mut g.units[u].events {
            if ev.speculative {
                ev.rf = ev.rf.map(shift);
            }
        }
    }
    for p in &mut g.pins {
        p.r = shift(p.r);
        p.w = shift(p.w);
    }
}

/// Whether start graph `g` extends start graph `h` ([`Engine::own_start_met`]):
/// each unit's events of `h` are the first of that unit in `g`, the same
/// operations reading the same writes and values, and each coherence
/// order of `h` is a subsequence of `g`'s.
fn extends(g: &Graph, h: &Graph) -> bool {
    let same = |a: &crate::graph::Event, b: &crate::graph::Event| a.kind == b.kind && a.loc == b.loc && a.rf == b.rf && a.value == b.value && crate::graph::same_op(&a.op, &b.op);
    let units = h.units.iter().enumerate().all(|(u, hu)| g.units.get(u).is_some_and(|gu| gu.events.len() >= hu.events.len() && hu.events.iter().zip(&gu.events).all(|(a, b)| same(a, b))));
    units && h.co.iter().enumerate().all(|(l, hc)| hc.is_empty() || g.co.get(l).is_some_and(|gc| {
        let mut it = gc.iter();
        hc.iter().all(|w| it.any(|x| x == w))
    }))
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

/// Whether a read of operation `op` may speculate on a write of `value`
/// (load buffering): a load; with
/// [`Config::speculate_compare_exchange`](crate::config::Config::speculate_compare_exchange)
/// a compare-exchange that fails on `value`, which is then a load with
/// the failure order (whether it succeeded or failed in the graph
/// speculated from); with [`Config::speculate_rmw`](crate::config::Config::speculate_rmw)
/// the read part of an RMW, or of a compare-exchange that succeeds on
/// `value`: its write part then takes a coherence place of its own, and
/// the promised write goes right before it once produced (O-Rmw,
/// [`Engine::place_new_write`]). A weak compare-exchange that succeeds
/// on the promised value is not also made to fail spuriously on it.
pub(super) fn speculates_on(op: &Op, value: u64, cfg: &crate::config::Config) -> bool {
    match op {
        Op::Mem { access: Access::Load, .. } => true,
        Op::Mem { access: Access::Cas { expected, .. }, .. } if *expected != value => cfg.speculate_compare_exchange,
        Op::Mem { access: Access::Cas { .. } | Access::Rmw(..), .. } => cfg.speculate_rmw,
        _ => false,
    }
}

/// Whether a read of `op` reading `value` reads as a load: one that
/// [`speculates_on`] `value` without being an RMW read (a load, or a
/// compare-exchange that fails on `value` when failing ones speculate).
/// Such a read may read its unit's previous read's promise
/// (`Engine::push_read_promised`), which is its way out of a CoRR doom
/// ([`corr_doom`]).
pub(super) fn reads_as_a_load(op: &Op, value: u64, cfg: &crate::config::Config) -> bool {
    speculates_on(op, value, cfg) && !reads_as_rmw(op, value)
}

/// Whether a read of `op` may read `value` from its unit's previous
/// read's promise (`Engine::push_read_promised`): one that
/// [`reads_as_a_load`], or an RMW read that succeeds on `value`
/// ([`reads_as_rmw`]), whose write part then waits for the promised
/// write to go right before it.
pub(super) fn rereads_promise(op: &Op, value: u64, cfg: &crate::config::Config) -> bool {
    reads_as_a_load(op, value, cfg) || reads_as_rmw(op, value)
}

/// The reads of the RMWs that may speculate on write `w`
/// ([`Engine::speculations`]): per unit, the last event from which a path
/// of po, barrier, launch and join edges and rf edges into RMW and
/// compare-exchange reads (a compare-exchange that fails here may succeed
/// in the rerun, and one that fails there speculates only with
/// [`Config::speculate_compare_exchange`](crate::config::Config::speculate_compare_exchange))
/// leads to `w` with one of its rf edges on another location than
/// `w`'s (`-1`: none).
///
/// Why only those. A cycle with a load on it is the load's to close: it
/// speculates, and the RMW reads the promised write's successor as an
/// ordinary read in the rerun (Deviation 7 of [`crate::model`] until
/// session 36: `tests/ra_rmw_differential.rs` counted those graphs all
/// found). A cycle whose rf edges all lie on `w`'s location `x` is not
/// consistent: its po edges are `sb`, in `hb` between accesses of `x`'s
/// region, so with `r` reading `w`, `r hb x1 rf y1 hb x2 ... rf yk hb w`
/// orders `w mo x1 mo ... mo xk mo w` (`coh(hb)`, O-CohG/L,
/// `opencl_base.cat` lines 79-81), as in
/// [`Engine::coherence_isolated`]. The path is the graph speculated
/// from's, which the rerun may change: the sweeps show the rule loses
/// nothing (`tests/ra_rmw_differential.rs` and
/// `tests/scoped_differential.rs` against all consistent graphs). The
/// wide RA sweep's seed 471 had 1,941,798 blocked runs for 5,400
/// executions with every RMW read speculating.
fn rmw_cycle_reach(g: &Graph, w: EventId) -> Vec<i64> {
    let x = g.ev(w).loc;
    // Per state (0: no rf edge on another location yet, 1: one), the
    // last event of each unit reached.
    let mut upto = [vec![-1i64; g.units.len()], vec![-1i64; g.units.len()]];
    let mut stack = vec![(w, 0usize)];
    let mut sync = Vec::new();
    while let Some((e, st)) = stack.pop() {
        if e.is_init() || !g.contains(e) {
            continue;
        }
        let u = e.unit.index();
        if upto[st][u] >= e.index as i64 {
            continue;
        }
        let from = (upto[st][u] + 1) as u32;
        upto[st][u] = e.index as i64;
        for i in from..=e.index {
            let id = EventId { unit: e.unit, index: i };
            let ev = g.ev(id);
            let rmw = ev.kind.is_read() && !matches!(ev.op, Op::Mem { access: Access::Load, .. });
            if let Some(src) = ev.rf.filter(|&s| rmw && g.contains(s)) {
                stack.push((src, if ev.loc != x { 1 } else { st }));
            }
            sync.clear();
            g.sync_preds(id, &mut sync);
            stack.extend(sync.iter().map(|&p| (p, st)));
        }
        if let Some(p) = g.units[u].parent {
            stack.push((p, st));
        }
    }
    let [_, other] = upto;
    other
}

/// Whether [`rmw_cycle_reach`]'s `reach` holds event `r`.
fn reaches(reach: &[i64], r: EventId) -> bool {
    reach.get(r.unit.index()).is_some_and(|&k| r.index as i64 <= k)
}

/// Whether operation `op`, reading `value`, is an RMW read that succeeds
/// (an RMW, or a compare-exchange expecting `value`): its write part
/// follows it ([`Config::speculate_rmw`](crate::config::Config::speculate_rmw)).
fn reads_as_rmw(op: &Op, value: u64) -> bool {
    matches!(op, Op::Mem { access: Access::Rmw(..) | Access::Cas { .. }, .. }) && super::revisit::rmw_succeeds(op, value)
}

/// Whether a read of operation `op` may speculate on some write
/// ([`speculates_on`]).
fn may_speculate(op: &Op, cfg: &crate::config::Config) -> bool {
    match op {
        Op::Mem { access: Access::Load, .. } => true,
        Op::Mem { access: Access::Cas { .. }, .. } => cfg.speculate_compare_exchange || cfg.speculate_rmw,
        Op::Mem { access: Access::Rmw(..), .. } => cfg.speculate_rmw,
        _ => false,
    }
}

/// The key of a speculation's start graph in [`Run::spec_seen`](super::Run::spec_seen): the
/// graph's fingerprint, which reads are speculative (a speculative read
/// whose promise is kept reads what a plain read could), the pins, and
/// the ranks of the promises and pins, renumbered by [`normalize_ranks`].
/// The ranks order the owing units of the reruns ([`Engine::schedule`](super::Engine)), so
/// two start graphs that differ only in them explore different runs, and
/// without them in the key whichever was met first decided which: on
/// several workers, a matter of timing (session 29; `tests/parallel.rs`,
/// `kernels_are_the_same_when_every_run_gives_an_alternative_away`; the
/// work-stealing kernel's blocked runs went from 4866 to 5263). Not the
/// promises' levels: they only measure nesting ([`Config::nesting_limit`](crate::config::Config::nesting_limit)). Session 12 told
/// start graphs apart by their levels, when nesting was bounded (a start
/// graph met first at a deeper level could nest less); with no bound that
/// costs reruns and finds nothing more.
fn start_key(g: &Graph) -> u128 {
    crate::graph::with_scratch(|buf| {
        g.encode_execution(buf, None);
        // Counts first: the encoding is unambiguous.
        let speculative = || g.event_ids().filter(|&e| g.ev(e).speculative);
        buf.extend_from_slice(&(speculative().count() as u64).to_le_bytes());
        for e in speculative() {
            buf.extend_from_slice(&e.unit.0.to_le_bytes());
            buf.extend_from_slice(&e.index.to_le_bytes());
            buf.extend_from_slice(&g.ev(e).rank.to_le_bytes());
        }
        buf.push(u8::from(g.owing_first));
        buf.extend_from_slice(&(g.pins.len() as u64).to_le_bytes());
        for p in &g.pins {
            for n in [p.r.unit.0, p.r.index, p.w.unit.0, p.w.index] {
                buf.extend_from_slice(&n.to_le_bytes());
            }
            buf.extend_from_slice(&p.value.to_le_bytes());
            buf.extend_from_slice(&p.rank.to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_128(buf)
    })
}

/// Whether the second order of the units in a rerun from start graph `g`
/// ([`Graph::owing_first`]) can differ from the first: `g` has a unit
/// that owes a pending promise and reads one. The first order runs the
/// units that owe none before it; the second runs it first
/// ([`Engine::schedule`](super::Engine)). Otherwise both orders schedule
/// alike, and the second is not made.
///
/// Why both orders. A unit that owes no promise goes before the owing
/// units so that their reads see its writes; but it may itself need a
/// write that an owing unit makes after reading its own promise, and the
/// revisit that would bring that write in deletes events that are not
/// maximally added. In `a=Rx; Add y; Add x || b=Rx; Add y; Add x || Add
/// y; Add x`, with `a` promised the third unit's `Add x` (1) and `b` the
/// first unit's (2), the second unit's `Add y` must read the first's:
/// with the second unit first, 4 of 132 executions were missed
/// (`owing_units_that_read_a_promise_go_first_too` in
/// `tests/ra_rmw_differential.rs`, 1 of 1,500,000 programs), and seed
/// 32620 of the scoped sweep missed 8 of 66. A run of the second order
/// that meets a cyclic execution the first met counts nothing
/// ([`Engine::speculation_counts`]). The second order costs blocked runs
/// where it is made (session 37): the hash table of `examples/` 732
/// became 787, the work-stealing kernel 1,918 1,954, the SVM ring of
/// `tests/host.rs` 1,120 1,770 (with three items 131,691 233,614), the
/// 3-unit weak-CAS spin lock of `tests/unique.rs` 65,591 116,263.
/// Putting the owing readers only before the units that read a promise
/// and owe none cost less (the ring and the locks unchanged) but left
/// seed 32620 as it was.
fn owing_first_matters(g: &Graph) -> bool {
    let pending = |e: EventId| g.ev(e).speculative && g.ev(e).rf.is_some_and(|x| !x.is_init() && x.index & THIN_AIR == 0 && !g.contains(x));
    let readers: Vec<EventId> = g.event_ids().filter(|&e| pending(e)).collect();
    readers.iter().any(|&e| {
        let owner = g.ev(e).rf.expect("a promise").unit;
        owner != e.unit && readers.iter().any(|f| f.unit == owner)
    })
}

/// Renumber the ranks ([`Event::rank`](crate::graph::Event::rank)) of the speculative reads and pins of
/// start graph `g` 1, 2, ... in their order, ties kept and unknown ones
/// (`u32::MAX`) left. Their values, stamps of the graphs the promises were
/// made from, differ between graphs that reach the same start graph, and
/// only their order steers the reruns ([`Engine::schedule`](super::Engine)). Renumbered, they
/// are a function of the start graph, and [`start_key`] can tell start
/// graphs apart by them. A promise made later in the reruns gets a stamp
/// of its own graph as its rank, so it now ranks after these more often
/// than before: the order only chooses which owing unit runs first, and
/// the differential sweeps (`tests/*_differential.rs`) found no execution
/// lost or added by it.
fn normalize_ranks(g: &mut Graph) {
    let mut ranks: Vec<u32> = g.event_ids().filter(|&e| g.ev(e).speculative).map(|e| g.ev(e).rank).chain(g.pins.iter().map(|p| p.rank)).filter(|&k| k != u32::MAX).collect();
    if ranks.is_empty() {
        return;
    }
    ranks.sort_unstable();
    ranks.dedup();
    let dense = |k: u32| if k == u32::MAX { k } else { ranks.binary_search(&k).map_or(k, |i| i as u32 + 1) };
    for u in 0..g.units.len() {
        for ev in &mut g.units[u].events {
            if ev.speculative {
                ev.rank = dense(ev.rank);
            }
        }
    }
    for p in &mut g.pins {
        p.rank = dense(p.rank);
    }
}

/// Whether start graph `g` (a speculation's, or a backward revisit's that
/// makes a promise pending again) was met before in the run: its ranks
/// renumbered ([`normalize_ranks`]), its [`start_key`] recorded in `seen`
/// ([`Run::spec_seen`](super::Run::spec_seen)).
pub(super) fn met_before(seen: &super::Seen, g: &mut Graph) -> bool {
    !seen.insert(normalized_start_key(g))
}

/// The [`start_key`] of start graph `g` with its ranks renumbered
/// ([`normalize_ranks`]).
fn normalized_start_key(g: &mut Graph) -> u128 {
    normalize_ranks(g);
    start_key(g)
}

/// Whether a read of unit `u` reads a pending promise after an earlier
/// read of the same location read that promise and a read between them
/// read another write. Coherence orders what a unit's reads of one
/// location read (`irreflexive coh(ghb)` and `coh(lhb)`, O-CohG and
/// O-CohL, `opencl_base.cat` lines 79-81, with po in hb): reading `w`, then
/// `w'`, then `w` again needs `w` both before and after `w'`. So once the
/// promised write is produced the graph is inconsistent; until then
/// nothing tells, the promise having no coherence position. A spin loop reading the promise and another write
/// in turn never blocks, and each of its reads would be speculated on
/// again from a longer start graph: the three-unit ticket lock
/// (`tests/kernels.rs`) nested 17 levels deep that way, and growing,
/// before this check.
fn returns_to_a_promise(g: &Graph, u: UnitId) -> bool {
    // Per location: the write read last, and the promises read and left.
    let mut seen: Vec<(LocId, EventId, Vec<EventId>)> = Vec::new();
    for ev in &g.units[u.index()].events {
        let (Some(loc), Some(w), true) = (ev.loc, ev.rf, ev.kind.is_read()) else { continue };
        let pending = ev.speculative && !w.is_init() && !g.contains(w);
        match seen.iter_mut().find(|(l, ..)| *l == loc) {
            None => seen.push((loc, w, Vec::new())),
            Some((_, last, left)) => {
                if pending && left.contains(&w) {
                    return true;
                }
                if *last != w {
                    if !last.is_init() && !g.contains(*last) {
                        left.push(*last);
                    }
                    *last = w;
                }
            }
        }
    }
    false
}

/// Whether the pending promises of `g`, and the pins of a twin ([`Pin`]),
/// promise each write one value. A start graph may keep a promise that its
/// write broke in the run it was taken from (the write, after the cut, is
/// pending again), and that run may have produced the write with another
/// value, which a new speculation then promises too: `b` promised 5 by
/// `Wx(e+1)`, which wrote 4, and `f` then promised 4 by the same write.
/// Such a start graph is broken from the outset: its runs can only end
/// blocked (found with random programs of value-dependent stores in
/// session 13). A pin is also never taken when its position or its write
/// is in the start graph already.
fn promises_agree(g: &Graph) -> bool {
    if g.pins.iter().any(|p| g.contains(p.r) || g.contains(p.w)) {
        return false;
    }
    let pending = g.event_ids().filter_map(|e| {
        let ev = g.ev(e);
        // A broken promise is pending again once its write is cut away.
        let w = promised_position(ev.rf.filter(|w| ev.speculative && !w.is_init() && w.index & THIN_AIR == 0)?);
        (!g.contains(w)).then_some((w, ev.value))
    });
    let mut seen: Vec<(EventId, u64)> = Vec::new();
    for (w, value) in pending.chain(g.pins.iter().map(|p| (p.w, p.value))) {
        match seen.iter().find(|(x, _)| *x == w) {
            Some(&(_, v)) if v != value => return false,
            Some(_) => {}
            None => seen.push((w, value)),
        }
    }
    true
}

/// Whether, and at which levels, a write with porf-prefix `prefix` is
/// speculated on ([`promise_level`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Nesting {
    /// Now.
    At(Levels),
    /// Once these pending promises in the prefix are kept ([`Deferred`]).
    Waiting(Levels, Vec<EventId>),
    /// Never: a promise in the prefix is broken or out of thin air.
    No,
}

/// Whether the locations `locs` allow the isolation rule
/// ([`Engine::coherence_isolated`]) for location `l`: `locs` has one
/// atomic location, not in SVM nor unqualified, and every other is
/// non-atomic in its region and kind of memory; or none is atomic and
/// every location is in `l`'s region and kind of memory, neither SVM nor
/// unqualified. It does not depend on `l`: with no atomic location, every
/// location is in one region and kind of memory (then every `l` is) or
/// not (then none is).
fn isolation_holds(locs: &[crate::graph::LocInfo], l: LocId) -> bool {
    // The location the argument is about: the kernel's only atomic
    // location (`l` itself when atomic), or `l` when none is atomic.
    let mut atomics = locs.iter().enumerate().filter(|(_, m)| m.atomic).map(|(i, _)| i);
    let anchor = match (atomics.next(), atomics.next()) {
        (Some(a), None) => a,
        (None, _) => l.0 as usize,
        (Some(_), Some(_)) => return false,
    };
    let here = locs[anchor];
    if here.svm() || here.region == Region::Unqualified {
        return false;
    }
    locs.iter().enumerate().all(|(i, m)| i == anchor || (!m.atomic && m.region == here.region && m.memory == here.memory))
}

/// Whether read `ev` of `g` may be, or become, a pending promise in a
/// start graph ([`Engine::never_visible_from_any_start`]): it is
/// speculative, or reads a write added after it (revisited) or none in the
/// graph.
fn irregular(g: &Graph, ev: &crate::graph::Event) -> bool {
    ev.speculative || ev.rf.is_none_or(|w| w.index & THIN_AIR != 0 || !g.contains(w) || (!w.is_init() && g.ev(w).stamp > ev.stamp))
}

/// The [`irregular`] reads of `g`, with their stamps, in the graph's order.
fn irregular_reads_of(g: &Graph) -> impl Iterator<Item = (u32, EventId)> + '_ {
    g.event_ids().filter(|&e| g.ev(e).kind.is_read() && irregular(g, g.ev(e))).map(|e| (g.ev(e).stamp, e))
}

/// The levels of the speculative reads in a write's porf-prefix
/// ([`Levels`]). A nested promise is made only once the promises it depends on are kept (their
/// writes produced with the promised values): a pending one may still be
/// broken, and nesting on it at once cost twice as much as nesting on
/// kept ones (session 11). So a write with pending promises in its prefix
/// waits for them ([`Nesting::Waiting`]).
fn promise_level(g: &Graph, prefix: &crate::graph::PrefixSet) -> Nesting {
    let mut levels = Levels(Vec::new());
    let mut waits = Vec::new();
    for e in g.event_ids() {
        let ev = g.ev(e);
        if ev.speculative && prefix.contains(e) {
            match promise(g, e) {
                Promise::Kept => {}
                Promise::Lost => return Nesting::No,
                Promise::Pending => waits.push(e),
            }
            levels.0.push((ev.stamp, ev.level));
        }
    }
    if waits.is_empty() {
        Nesting::At(levels)
    } else {
        Nesting::Waiting(levels, waits)
    }
}

/// The speculative reads in a write's porf-prefix: their stamps and
/// levels. A promise on the write nests one level below those that stay
/// in the promise's start graph ([`Levels::of`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Levels(Vec<(u32, u8)>);

impl Levels {
    /// The level of read `r`'s promise on the write: 0, or one more than
    /// the highest level of the speculative reads in the write's
    /// porf-prefix added before `r`. The others are not in `r`'s start
    /// graph ([`Engine::speculation_prefix`] cuts at `r`), so the promise
    /// does not nest in theirs: `r` itself when it is re-promised, and
    /// reads after it in program order, which the rerun reads afresh.
    /// Counting them made levels grow with every speculation of a chain,
    /// 7 deep on four-access programs of `tests/lb_differential.rs` that
    /// nest 2 deep.
    fn of(&self, g: &Graph, r: EventId) -> u8 {
        let sr = g.ev(r).stamp;
        self.0.iter().filter(|&&(s, _)| s < sr).map(|&(_, l)| l.saturating_add(1)).max().unwrap_or(0)
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

/// A speculation on write `w` ([`Engine::speculations`]) whose write's
/// porf-prefix holds pending promises: pushed when they are all kept
/// ([`Engine::push_deferred`]), dropped when one breaks. In `Wx1; a=Rx;
/// b=Ry; Wz1 || c=Rz; Wy2; Wx2` with a <- Wx2 and b <- Wy2, `a`'s promise
/// is made first, and `Wy2`, on which `b` is speculated, is produced before
/// `Wx2` keeps it. Run state, made again from the graph when a run starts
/// ([`Engine::rederive_deferred`]).
pub(super) struct Deferred {
    w: EventId,
    levels: Levels,
    reads: Vec<EventId>,
    waits: Vec<EventId>,
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

/// What [`Engine::unit_kinds`] keeps: how many units of the frame's graph
/// it has looked at, and whether one of them (beyond unit 0) is a
/// command or a host thread.
#[derive(Clone, Copy, Default)]
pub(super) struct UnitKinds {
    scanned: u32,
    command: bool,
    host_thread: bool,
}
