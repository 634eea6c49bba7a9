//! Load buffering (DESIGN.md §5): a read in a write's porf-prefix, which no
//! revisit can make read from it, reads the write's value in a rerun that
//! must produce the write again (a promise). This module decides which
//! reads speculate on a new write and when ([`Engine::speculations`], the
//! isolation rule [`Engine::coherence_isolated`], speculations waiting for
//! the promises they depend on, [`Deferred`]). The promises of a run, kept,
//! broken and repaired, are in [`super::promises`]; the start graph of a
//! speculation and its twin ([`Pin`](crate::graph::Pin)(crate::graph::Pin)) in [`super::start_graph`].

use super::promises::{promise, Promise};
use super::{Engine, Item};
use crate::graph::{Graph, Kind, Region, UnitKind, THIN_AIR};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::{Access, LocId, Op};

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
    /// start graph may cut away ([`Pin`](crate::graph::Pin); [`Engine::twin_pins`] tells).
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

    /// Whether speculative read `r` of start graph `g` is a read of a
    /// non-atomic location whose promised write can never be visible to
    /// it: no other read of `g` reads a pending promise, and `g` pins
    /// none ([`Pin`](crate::graph::Pin): its runs would make them again). Then every run from
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
    pub(super) fn never_visible(&self, g: &Graph, r: EventId) -> bool {
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
    pub(super) fn irregular_reads(&self) -> Option<Vec<(u32, EventId)>> {
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
    pub(super) fn never_visible_from_any_start(&self, r: EventId, irregular: Option<&[(u32, EventId)]>) -> bool {
        let Some(irregular) = irregular.filter(|_| self.plain_location(r)) else { return false };
        let sr = self.frames.last().expect("frame").graph.ev(r).stamp;
        !irregular.iter().take_while(|&&(s, _)| s <= sr).any(|&(_, x)| x != r)
    }
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
/// (`promises::corr_doom`).
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
pub(super) fn reads_as_rmw(op: &Op, value: u64) -> bool {
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
    locs.iter().enumerate().all(|(i, m)| i == anchor || (!m.atomic && m.region == here.region && m.model_memory() == here.model_memory()))
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
pub(super) fn promise_level(g: &Graph, prefix: &crate::graph::PrefixSet) -> Nesting {
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
    pub(super) fn of(&self, g: &Graph, r: EventId) -> u8 {
        let sr = g.ev(r).stamp;
        self.0.iter().filter(|&&(s, _)| s < sr).map(|&(_, l)| l.saturating_add(1)).max().unwrap_or(0)
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

/// What [`Engine::unit_kinds`] keeps: how many units of the frame's graph
/// it has looked at, and whether one of them (beyond unit 0) is a
/// command or a host thread.
#[derive(Clone, Copy, Default)]
pub(super) struct UnitKinds {
    scanned: u32,
    command: bool,
    host_thread: bool,
}
