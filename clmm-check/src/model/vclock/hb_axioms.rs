//! The axioms checked on each new event against its views ([`Clocks::add`]):
//! an instance of `coh(hb)`, `rf; hb` or `vis(hb)` (`opencl_base.cat`
//! lines 79-81, 89, 97-98: O-CohG/L, O-Rf, O-NaRfG/L) is checked when its
//! hb-latest event is added, and a non-atomic read's visibility through a
//! release sequence that `rs_min` leaves out is searched for
//! ([`Clocks::visible_by_rs`]).

use super::*;

impl Clocks {
    /// The axioms whose hb-latest event is `e`, against its views.
    pub(super) fn axioms(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, e: EventId, hiders: &mut Vec<EventId>) -> Result<(), Outcome> {
        let n = self.node(e).expect("just added");
        let a = &n.attr;
        let Some(l) = a.loc else { return Ok(()) };
        let atomic = locs[l].atomic;
        let ev = g.ev(e);
        let co = g.co.get(l).map_or(&[][..], |c| &c[..]);
        let readers = |w: EventId| self.reads[l].iter().copied().filter(move |&x| x != e && g.ev(x).rf == Some(w));
        // `irreflexive rf | (mo;mo;rf^-1) | (mo;rf)` (O-Rmw): an RMW reads
        // its immediate coherence predecessor.
        // A speculative read part whose promised source is not produced
        // yet is checked when it comes (its read is computed again, and
        // this write after it).
        if ev.kind == Kind::RmwWrite && atomic {
            let read = EventId { unit: e.unit, index: e.index - 1 };
            let src = g.ev(read).rf.expect("an RMW reads");
            if produced(g, read, src) && n.sig.co_pred != Some(src).filter(|s| !s.is_init()) {
                return Err(Outcome::Inconsistent(Violation::Rmw));
            }
        }
        // What a read reads, once produced: a speculative read of a write
        // not produced yet is in no instance of the axioms below.
        let source = ev.rf.filter(|&w| produced(g, e, w));
        for r in [G, L] {
            let v = &n.views[r];
            let (coh, narf) = if r == G { (Violation::CohG, Violation::NaRfG) } else { (Violation::CohL, Violation::NaRfL) };
            // `irreflexive rf; (ghb | lhb)` (O-Rf): no reader of `e`
            // happens before it.
            if a.is_write() && self.has_readers(e) && readers(e).any(|x| self.member(locs, x, v, r)) {
                return Err(Outcome::Inconsistent(Violation::Rf));
            }
            // `irreflexive (rf^-1)?; mo; rf?; hb` (O-CohG/L): nothing at a
            // coherence-later write happens before `e`. (A speculative
            // read of a write not produced yet is at no write: when the
            // write comes, the read and every view after it are computed
            // again, [`Clocks::stale_from`].)
            if atomic {
                let w1 = if a.is_write() { Some(e) } else { source };
                // A co-maximal write is at no position below another's:
                // the common case (a new write goes last first, and a
                // read of it), without the O(units) scan.
                if let Some(w1) = w1.filter(|&w| co.last() != Some(&w)) {
                    if self.observed(g, locs, l, v, r, e) > g.co_pos(w1, LocId(l as u32)) {
                        return Err(Outcome::Inconsistent(coh));
                    }
                }
            }
            // `vis(hb)` (O-NaRfG/L): a non-atomic read reads a write that
            // happens before it with no write of the location between.
            if let Some(w) = source.filter(|_| !atomic && a.is_read() && region_of(a, r)) {
                if !self.member(locs, w, v, r) && !self.after_pending(g, locs, e, v, r) {
                    // `rs` may order it where `rs_min` does not: a write
                    // that extends release sequences by its unit, counted
                    // in `rs_ext` once it has views, or not yet (its views
                    // may come after this read's, and an acquire read of
                    // it already computed missed the `sw` it makes: a
                    // failing compare-exchange of seed 217819 of
                    // `tests/scoped_differential.rs` read the release
                    // store after its unit's seq_cst compare-exchange).
                    let beyond = self.rs_ext > 0 || g.event_ids().any(|x| extends_release_sequences(g, locs, x));
                    match beyond.then(|| self.visible_by_rs(g, locs, sem, w, e, v, r)) {
                        None | Some(Some(false)) => return Err(Outcome::Inconsistent(narf)),
                        Some(None) => return Err(Outcome::Unsure("a release sequence beyond rs_min")),
                        // `w hb r` with `rs`: then "no write between" of
                        // `rs_min` below (the explicit model's bounds).
                        Some(Some(true)) => {}
                    }
                }
                self.last_writes(g, locs, l, v, r, hiders);
                let hidden = hiders.iter().any(|&y| self.hides(locs, y, w, r));
                if hidden {
                    return Err(Outcome::Inconsistent(narf));
                }
            }
        }
        Ok(())
    }

    /// The coherence position ([`Graph::co_pos`]: 0 for the initial
    /// write) of the co-latest write of location `l` that the event with
    /// region-`r` view `v` observes: a write that happens before it, or
    /// the write a read that happens before it reads (`skip`, the event
    /// itself, excluded). `(rf^-1)?; mo; rf?; hb` (O-CohG/L) forbids that
    /// event to read from, or be, a write coherence-before that position.
    ///
    /// O(units of the view) plus a search from the end of `l`'s coherence
    /// order (which finds the writes of a loop at once): per unit, the
    /// last of its accesses to `l` in the view ([`Clocks::access`]).
    /// Scanning every read and write of `l` made a unit with n accesses
    /// to one location cost O(n^2).
    pub(super) fn observed(&self, g: &Graph, locs: &[LocInfo], l: usize, v: &View, r: usize, skip: EventId) -> usize {
        let loc = LocId(l as u32);
        let co = g.co.get(l).map_or(&[][..], |c| &c[..]);
        let pos = |w: EventId| co.iter().rposition(|&y| y == w).map(|p| p + 1);
        // The coherence position an access gives (a write its own, a read
        // that of its write); `None` for a read of a write not produced.
        let at = |x: EventId| {
            let ev = g.ev(x);
            if ev.kind.is_write() {
                pos(x)
            } else {
                match ev.rf {
                    Some(w) if w.is_init() => Some(0),
                    Some(w) => pos(w),
                    None => None,
                }
            }
        };
        // The co-maximal write observed is the greatest position: a loop's
        // previous write, found in O(1) instead of O(units).
        if let Some(&last) = co.last() {
            let own_later = !skip.is_init() && last.unit == skip.unit && last.index >= skip.index;
            if !own_later && self.member(locs, last, v, r) {
                return co.len();
            }
        }
        let mut floor = 0;
        // The accesses to `l` are in region `r` if any is (`Attr::of`);
        // if not, only the lifted events below can be in the view.
        let in_region = if loc_region(locs, l)[r] { self.access.get(l).map_or(&[][..], |a| &a[..]) } else { &[] };
        for (u, acc) in in_region {
            let u = *u as usize;
            let mut k = self.entry(v, u);
            if !skip.is_init() && skip.unit.index() == u {
                k = k.min(skip.index);
            }
            if k == 0 {
                continue;
            }
            // The accesses of `u` in the view form a prefix of its
            // accesses; coherence orders them (sb ⊆ hb in the region of
            // the location, so `coh(hb)` holds between them), so the
            // last one that gives a position gives the greatest.
            // (Usually all of them, or all but the event itself: a unit's
            // own view is past its accesses.)
            let end = accesses_before(acc, k);
            if let Some(p) = acc[..end].iter().rev().find_map(|a| at(EventId { unit: UnitId(u as u32), index: a.index })) {
                floor = floor.max(p);
            }
        }
        for &x in &v.lifted {
            if x != skip && g.ev(x).loc == Some(loc) {
                floor = floor.max(at(x).unwrap_or(0));
            }
        }
        floor
    }

    /// The writes of location `l` that may hide another from the event
    /// whose region-`r` view is `v` (`vis`, O-NaRfG/L): those in `v`, in
    /// `out`, or for each unit only its last one in `v`. A unit's earlier
    /// writes happen before its last (`sb`, in the region of `l`), and
    /// the views of its region events grow along `sb`, so what they hide
    /// the last hides. O(units accessing `l`, each O(log accesses));
    /// every write in `v` made a loop of non-atomic reads and writes of
    /// one location cost O(n^2) a read, with `drop_hidden` checking every
    /// write against every other (1,000 iterations took 660 ms).
    pub(super) fn last_writes(&self, g: &Graph, locs: &[LocInfo], l: usize, v: &View, r: usize, out: &mut Vec<EventId>) {
        out.clear();
        let co = g.co.get(l).map_or(&[][..], |c| &c[..]);
        let in_view = || co.iter().copied().filter(|&y| self.node(y).is_some() && self.member(locs, y, v, r));
        if !loc_region(locs, l)[r] {
            // Herd's unqualified locations, in no region: only lifted.
            out.extend(in_view());
            return;
        }
        for (u, acc) in self.writing_units(l) {
            let end = accesses_before(acc, self.entry(v, *u as usize));
            if let Some(a) = acc[..end].last().filter(|a| a.last_write > 0) {
                out.push(EventId { unit: UnitId(*u), index: acc[a.last_write as usize - 1].index });
            }
        }
        if self.verify {
            let every: Vec<EventId> = in_view().collect();
            for w in g.writes_to(LocId(l as u32)) {
                assert_eq!(every.iter().any(|&y| self.hides(locs, y, w, r)), out.iter().any(|&y| self.hides(locs, y, w, r)), "clmm internal error: Clocks::last_writes hides {}.{} differently from every write in the view (CLMM_CROSSCHECK)", w.unit.0, w.index);
            }
        }
    }

    /// Whether write `w` happens before write `y` (another, with views) in
    /// region `r`: `y` then hides `w` from what `y` happens before (`vis`).
    pub(super) fn hides(&self, locs: &[LocInfo], y: EventId, w: EventId, r: usize) -> bool {
        y != w && self.node(y).is_some_and(|n| self.member(locs, w, &n.views[r], r))
    }

    /// Whether a read of a write not produced yet may, once its write
    /// comes, end an `ra_sw` edge (at itself if an acquire, or at an
    /// acquire fence after it in its unit) that happens before `e` (view
    /// `v` of region `r`) or precedes it in program order: that edge may
    /// order more writes before `e`, whose views are then computed again
    /// ([`Clocks::ahead_from`]). The explicit model's `non_atomic_reads`
    /// leaves `w hb e` to that graph too.
    fn after_pending(&self, g: &Graph, locs: &[LocInfo], e: EventId, v: &View, r: usize) -> bool {
        self.pending_acquire_ends(g).any(|q| (q.unit == e.unit && q.index < e.index) || self.member(locs, q, v, r))
    }

    /// The acquire ends (with views) that the reads of writes not
    /// produced yet may end an `ra_sw` edge at once their writes come:
    /// such a read if an acquire, and the acquire fences after it in its
    /// unit ([`Clocks::after_pending`], [`Clocks::visible_by_rs`]).
    fn pending_acquire_ends<'a>(&'a self, g: &'a Graph) -> impl Iterator<Item = EventId> + 'a {
        self.reads.iter().flatten().filter(move |&&p| g.ev(p).rf.is_some_and(|w| !produced(g, p, w))).flat_map(move |&p| {
            let fences = (p.index + 1..g.units[p.unit.index()].events.len() as u32).map(move |index| EventId { unit: p.unit, index });
            std::iter::once(p).chain(fences.filter(move |&q| g.ev(q).kind.is_fence())).filter(|&q| self.node(q).is_some_and(|n| n.attr.is_acq()))
        })
    }

    /// Whether a read with a view reads write `e` (every read that happens
    /// before `e` has one).
    fn has_readers(&self, e: EventId) -> bool {
        self.readers.get(e.unit.index()).and_then(|r| r.get(e.index as usize)).is_some_and(|&n| n > 0)
    }

    /// For a non-atomic read `e` of `w` that `w` does not happen before by
    /// its region-`r` view `v` (`rs_min`), nor after a pending promise
    /// ([`Clocks::after_pending`]): whether the explicit model's upper
    /// bound on a prefix, happens-before with C11's `rs` and the graph's
    /// coherence order (`crate::model::axioms`, `O-NaRfG/L` on prefixes), orders
    /// `w` (or a pending promise's acquire end) before `e`. `None` when
    /// the views cannot tell: a release end without views yet, or a
    /// synchronisation between a host thread and a work-item.
    ///
    /// That relation is `(hb_min | X)+`, `X` the `ra_sw` edges (and their
    /// `scf` lifts) that `rs` adds to `rs_min` ([`Clocks::rs_extra_edges`]),
    /// and the views hold `hb_min`: a search from `w` through the edges of
    /// `X` whose release end `w`, or an acquire end reached, happens
    /// before. Before, every such read went to the explicit model: 233,713
    /// times (40% of the time) in `work_stealing_correct_two_tasks_pushed_in_the_kernel`,
    /// where a thief's acquire load of `bottom` reads the owner's relaxed
    /// store in `pop`, in the release sequence of its release store in
    /// `push`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn visible_by_rs(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, w: EventId, e: EventId, v: &View, r: usize) -> Option<bool> {
        let edges = self.rs_extra_edges(g, locs, sem, r)?;
        if edges.is_empty() {
            return Some(false);
        }
        // `x hb e` with `rs`: a search through `X` from `x`.
        let reaches = |x: EventId| {
            let mut reached = vec![x];
            let mut used = vec![false; edges.len()];
            let mut k = 0;
            while k < reached.len() {
                let s = reached[k];
                k += 1;
                if s == e || self.member(locs, s, v, r) {
                    return true;
                }
                for (j, &(a, b)) in edges.iter().enumerate() {
                    if !used[j] && (a == s || self.node(a).is_some_and(|n| self.member(locs, s, &n.views[r], r))) {
                        used[j] = true;
                        reached.push(b);
                    }
                }
            }
            false
        };
        if reaches(w) {
            return Some(true);
        }
        // The explicit model's `grows`: an acquire end of a pending
        // promise (the read, or an acquire fence after it in its unit)
        // before `e` in program order or in happens-before with `rs`.
        Some(self.pending_acquire_ends(g).any(|q| (q.unit == e.unit && q.index < e.index) || reaches(q)))
    }

    /// The `ra_sw` edges into region `r` (with `scf` lifts from the other)
    /// that C11's `rs` adds to `rs_min` on this graph and the views do not
    /// already order, as (release end, acquire end) pairs; `None` as in
    /// [`Clocks::visible_by_rs`]. Empty: happens-before in `r` is the
    /// views' with either.
    ///
    /// An atomic read of write `m` adds some only if walking down from `m`
    /// through RMWs that read their coherence predecessor (the links of
    /// `rs_min`) ends at a write that is not one: an RMW that does not
    /// read its predecessor, or a plain write that continues release
    /// sequences of its unit ([`extends_release_sequences`]). For if `m`
    /// is in `rs(h)` and not in `rs_min(h)`, the writes from `h` up to
    /// `m` all satisfy `rs'` and one above `h` is not a link; the first
    /// such from the top is that write, and when plain it is by `h`'s
    /// unit after `h` (before it, `sb` in `hb` makes the graph
    /// incoherent). The heads of such an `m` are then every write below
    /// it in coherence order up to the first that `rs'` rules out.
    pub(super) fn rs_extra_edges(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, r: usize) -> Option<Vec<(EventId, EventId)>> {
        let mut edges = Vec::new();
        let mut out: [Vec<EventId>; 2] = Default::default();
        for rd in g.event_ids() {
            let ev = g.ev(rd);
            let (Some(loc), Some(m)) = (ev.loc, ev.rf) else { continue };
            let l = loc.0 as usize;
            let Some(r0) = region_index(locs, l) else { continue };
            if !ev.kind.is_read() || !locs[l].atomic || ev.atomic.is_none_or(|(_, s)| s == Scope::WorkItem) || m.is_init() || !produced(g, rd, m) {
                continue;
            }
            // The base of `m`'s chain of links.
            let mut x = m;
            let extends = loop {
                match g.ev(x).kind {
                    Kind::RmwWrite => {
                        let pred = g.co_pred(x, loc);
                        if g.ev(EventId { unit: x.unit, index: x.index - 1 }).rf != Some(pred) {
                            break true;
                        }
                        if pred.is_init() {
                            break false;
                        }
                        x = pred;
                    }
                    // (The views keep the answer, `Node::rs_ext`.)
                    _ => break self.node(x).map_or_else(|| extends_release_sequences(g, locs, x), |n| n.rs_ext),
                }
            };
            if !extends {
                continue;
            }
            // The acquire ends: the read, and acquire fences after it in
            // its unit (`sbF?; [acq & r]`).
            // Down from `m`: a head `h` has every write in `(h, m]` of its
            // unit or an RMW (`rs'`).
            let plain_m = (g.ev(m).kind != Kind::RmwWrite).then_some(m.unit);
            if plain_m == Some(rd.unit) {
                // Every head is of the read's unit (below).
                continue;
            }
            let co = &g.co[l];
            let top = g.co_pos(m, loc) - 1;
            for (b, battr) in self.acquire_ends(g, locs, rd, r0) {
                let mut plain = plain_m;
                for &h in co[..top].iter().rev() {
                    if plain == Some(rd.unit) {
                        // Every head left is of the read's unit: no
                        // `ra_sw` edge (`~wi`, `Clocks::release_ends`).
                        break;
                    }
                    if plain.is_none_or(|u| u == h.unit) {
                        out.iter_mut().for_each(Vec::clear);
                        let mut cross = false;
                        if !self.release_ends(g, locs, sem, h, b, &battr, l, r0, &mut out, &mut cross) || cross {
                            return None;
                        }
                        // Those the views already order add nothing.
                        let implied = |a: EventId| self.node(b).is_some_and(|n| self.member(locs, a, &n.views[r], r));
                        edges.extend(out[r].iter().filter(|&&a| !implied(a)).map(|&a| (a, b)));
                    }
                    if g.ev(h).kind != Kind::RmwWrite {
                        match plain {
                            Some(u) if u != h.unit => break,
                            _ => plain = Some(h.unit),
                        }
                    }
                }
            }
        }
        Some(edges)
    }

    /// The acquire ends of atomic read `rd` of region `r0`: the read, if
    /// acquire, and the acquire fences of that region after it in its
    /// unit (`sbF?; [acq & r]`), with their attributes. The fences by the
    /// chain of [`Node::acq_fence`] when the unit's events all have views
    /// (a loop of reads scanned every later event of its unit for each,
    /// O(n^2)).
    fn acquire_ends(&self, g: &Graph, locs: &[LocInfo], rd: EventId, r0: usize) -> Vec<(EventId, Attr)> {
        let unit = &g.units[rd.unit.index()].events;
        let attr = |index: u32| Attr::of(&unit[index as usize], rd.unit, index, locs);
        let mut ends = Vec::new();
        let a = attr(rd.index);
        if a.is_acq() {
            ends.push((rd, a));
        }
        let fence = |index: u32, a: Attr| (a.is_acq() && a.is_fence() && region_of(&a, r0)).then_some((EventId { unit: rd.unit, index }, a));
        let scan = || (rd.index + 1..unit.len() as u32).filter_map(|index| fence(index, attr(index)));
        let nodes = self.nodes.get(rd.unit.index()).map_or(&[][..], |n| &n[..]);
        if nodes.len() == unit.len() {
            let at = ends.len();
            let mut p = nodes.last().map_or(0, |n| n.acq_fence);
            while p > rd.index + 1 {
                ends.extend(fence(p - 1, attr(p - 1)));
                p = nodes[p as usize - 2].acq_fence;
            }
            ends[at..].reverse();
            if self.verify {
                assert!(ends[at..].iter().map(|f| f.0).eq(scan().map(|f| f.0)), "clmm internal error: Node::acq_fence missed an acquire fence of unit {} (CLMM_CROSSCHECK)", rd.unit.0);
            }
        } else {
            ends.extend(scan());
        }
        ends
    }
}
