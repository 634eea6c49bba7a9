//! The start graph of a speculation (DESIGN.md §5): the graph cut at the
//! speculating read, with the read reading the promised value from a
//! position its rerun must fill ([`Engine::speculate`]), its twin with
//! pins ([`Pin`]), and the keys that tell a start graph met before
//! ([`met_before`]).

use super::speculation::{promise_level, reads_as_rmw, speculates_on, Nesting};
use super::Engine;
use crate::graph::{promised_position, Graph, Kind, Pin, BROKEN, THIN_AIR};
use crate::ids::{EventId, UnitId};
use clmm_atomic::backend::{Access, LocId, Op};

impl Engine<'_, '_> {
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
    pub(super) fn start_graph(&mut self, r: EventId, own: bool) -> Option<Graph> {
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
