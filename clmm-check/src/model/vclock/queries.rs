//! What the explorer asks of the views besides consistency: the
//! coherence floor of a new access ([`Clocks::co_floor`]), the writes a
//! non-atomic read may read ([`Clocks::unhidden_writes`]), and whether
//! other units' accesses to a location happen before a write
//! ([`Clocks::others_before`]). Each answers `None` (or the cautious
//! answer) when the views do not cover the graph.

use super::*;

impl Clocks {
    /// Whether the views are fresh (the graph was only appended to since
    /// they were computed: no [`Clocks::note_changed`]) and cover every
    /// event of every unit but `unit`. Only the units in `Clocks::dirty`
    /// may lack views, so O(dirty units).
    fn covers_all_but(&self, g: &Graph, unit: UnitId) -> bool {
        !self.changed && self.dirty.iter().all(|&d| d == unit.0 || g.units.get(d as usize).is_none_or(|gu| self.nodes.get(d as usize).map_or(0, Vec::len) == gu.events.len()))
    }

    /// Whether a unit other than `unit` reads location `l` in `g`, from
    /// `Clocks::access`, when the views cover the other units' events
    /// (`Clocks::covers_all_but`); `None` when not (look at the
    /// graph). O(accesses of `l` by other units) at most, and O(units
    /// accessing `l`) without a read. (Whether they accessed it only, and
    /// a scan of the graph for a read when they had: a tiled matrix
    /// product's loads of the next tiles scanned the graph at each,
    /// session 51.)
    pub fn other_unit_reads(&self, g: &Graph, l: usize, unit: UnitId) -> Option<bool> {
        if !self.covers_all_but(g, unit) {
            return None;
        }
        if self.verify {
            let covered = g.units.iter().enumerate().all(|(u, gu)| u == unit.index() || self.nodes.get(u).map_or(0, Vec::len) == gu.events.len());
            assert!(covered, "clmm internal error: a unit other than {} has events without views that Clocks::dirty does not name (CLMM_CROSSCHECK)", unit.0);
        }
        let reads = |u: u32, acc: &Accesses| acc.iter().any(|a| g.units[u as usize].events[a.index as usize].kind.is_read());
        Some(self.access.get(l).is_some_and(|a| a.iter().any(|(u, acc)| *u != unit.0 && reads(*u, acc))))
    }

    /// Whether every access of a unit other than `w`'s to the location of
    /// `w`, a write just added to `g` (no views yet), happens before it
    /// (`ghb` or `lhb`, by the view of its program-order predecessor in
    /// the region: a write synchronises with nothing); `None` while the
    /// views may not cover every other unit's events
    /// (`Clocks::covers_all_but`), when that predecessor has none, and
    /// for an unqualified location. A unit's accesses in a view are a
    /// prefix of them, so its last one decides: O(units accessing the
    /// location).
    pub fn others_before(&self, g: &Graph, locs: &[LocInfo], w: EventId) -> Option<bool> {
        if !self.covers_all_but(g, w.unit) || w.index == 0 {
            return None;
        }
        let l = g.ev(w).loc?.0 as usize;
        let reg = region_index(locs, l)?;
        let nodes = self.nodes.get(w.unit.index()).filter(|n| n.len() >= w.index as usize)?;
        let last = nodes[w.index as usize - 1].last_in[reg] as usize;
        let mut others = self.access.get(l).map_or(&[][..], |a| &a[..]).iter().filter(|(u, _)| *u != w.unit.0);
        if last == 0 {
            return Some(others.next().is_none());
        }
        let v = &nodes[last - 1].views[reg];
        Some(others.all(|(u, acc)| acc.last().is_none_or(|a| self.member(locs, EventId { unit: UnitId(*u), index: a.index }, v, reg))))
    }

    /// The first event of unit `u` in the region of location `l` that `r`
    /// happens before in that region (`ghb` for a global location, `lhb`
    /// for a local one), among the events of `u` with views; `None` when
    /// there is none, when `r` has no view, for an unqualified location,
    /// and while the views are stale ([`Clocks::note_changed`]). A view is
    /// a lower bound of its event's happens-before in every extension of
    /// the graph (`rs_min`, no `sw` from a write not produced yet), and
    /// the views of one unit's region events grow along `sb`, so the first
    /// is found by bisection: O(log events) view lookups.
    pub fn first_after(&self, locs: &[LocInfo], r: EventId, l: LocId, u: UnitId) -> Option<EventId> {
        if self.changed || self.node(r).is_none() {
            return None;
        }
        let reg = region_index(locs, l.0 as usize)?;
        let nodes = self.nodes.get(u.index())?;
        // Whether `r` happens before the last region event of `u` at or
        // before node `n`.
        let after = |n: &Node| {
            let q = n.last_in[reg] as usize;
            q > 0 && self.member(locs, r, &nodes[q - 1].views[reg], reg)
        };
        let first = nodes.partition_point(|n| !after(n));
        // The view changed at `first`: a region event.
        nodes.get(first).map(|n| EventId { unit: u, index: n.last_in[reg] - 1 })
    }

    /// Whether `x` happens before `y` (`ghb | lhb`) by `y`'s views: a
    /// lower bound, as for [`Clocks::first_after`]; `None` when `y` or `x`
    /// has no view, or while the views are stale.
    pub fn happens_before(&self, locs: &[LocInfo], x: EventId, y: EventId) -> Option<bool> {
        if self.changed || self.node(x).is_none() {
            return None;
        }
        Some(x != y && self.before(locs, x, self.node(y)?))
    }

    /// The coherence floor of the access `e` just added to `g` (a read
    /// without its write, or a write not yet in coherence order): no
    /// write at a position below it ([`Graph::co_pos`]) may be the write
    /// `e` reads or the coherence predecessor of `e`. It is
    /// `Clocks::observed` by the program-order predecessor of `e` in
    /// each region of `e`, which happens before `e` whatever `e` reads
    /// (its own synchronisation adds nothing that hides a write, the
    /// prefix being coherent). 0 when the views do not reach `e`, or for
    /// a non-atomic location (whose reads `vis` decides:
    /// [`Clocks::drop_hidden`]). The explorer offers `e` only the writes from this
    /// position on: the others are inconsistent, and were offered,
    /// restored and checked one by one, which made a unit with n accesses
    /// to one location cost O(n^4).
    pub fn co_floor(&mut self, g: &Graph, locs: &[LocInfo], r: EventId) -> usize {
        // A non-atomic location has no coherence order to keep.
        if g.ev(r).loc.is_none_or(|l| !locs[l.0 as usize].atomic) {
            return 0;
        }
        let Some((l, attr)) = self.new_access(g, locs, r) else { return 0 };
        self.observed_before(g, locs, l, r, &attr)
    }

    /// The coherence position of the co-latest write of location `l` that
    /// the program-order predecessor of `e` observes, in each region of
    /// `e` ([`Clocks::observed`] of [`Clocks::pred_view`]).
    fn observed_before(&self, g: &Graph, locs: &[LocInfo], l: usize, e: EventId, attr: &Attr) -> usize {
        [G, L].into_iter().filter_map(|reg| self.pred_view(e, attr, reg).map(|v| self.observed(g, locs, l, v, reg, e))).max().unwrap_or(0)
    }

    /// The coherence floor that reads `readers` of write `w` (speculative
    /// reads whose promise `w`, just added and not yet in coherence,
    /// keeps) give it, after [`Clocks::co_floor`] of `w`: `w` goes after
    /// every write the program-order predecessor of each observes
    /// (`Clocks::observed`): with `w mo x` and `x` happening before the
    /// read (or read by a read that does), `rf^-1; mo; rf?; hb` is
    /// reflexive (O-CohG/L). 0 for a reader whose predecessor has no
    /// views. In the work-stealing kernel's speculative runs nearly every
    /// other placement of a promised write was offered and then found
    /// inconsistent.
    pub fn readers_floor(&self, g: &Graph, locs: &[LocInfo], readers: impl IntoIterator<Item = EventId>, w: EventId) -> usize {
        let Some(l) = g.ev(w).loc.map(|l| l.0 as usize).filter(|&l| locs[l].atomic) else { return 0 };
        readers
            .into_iter()
            .filter(|r| r.index > 0 && self.nodes.get(r.unit.index()).is_some_and(|n| n.len() >= r.index as usize))
            .map(|r| self.observed_before(g, locs, l, r, &Attr::of(g.ev(r), r.unit, r.index, locs)))
            .max()
            .unwrap_or(0)
    }

    /// For an access `e` just added to `g` (no views yet): bring the views
    /// up to date, and give its location and attributes if its
    /// program-order predecessor has views (`None`: the views do not reach
    /// `e`, or `e` is its unit's first event).
    fn new_access(&mut self, g: &Graph, locs: &[LocInfo], e: EventId) -> Option<(usize, Attr)> {
        self.sync(g);
        // A view at `e` is its predecessor's, whose place a restored graph
        // gave to `e`: a write part added anew after its read part read
        // again (`Item::ReadPromised`) takes the old one's id and stamp,
        // and `Clocks::changed_from` cannot tell them apart before it has
        // a place in coherence (wide seed 7492 of
        // `tests/scoped_differential.rs`).
        if let Some(n) = self.node(e) {
            self.truncate(n.order as usize);
        }
        let ev = g.ev(e);
        let l = ev.loc?.0 as usize;
        let (u, i) = (e.unit.index(), e.index as usize);
        if i == 0 || self.nodes.get(u).is_none_or(|n| n.len() < i) {
            return None;
        }
        Some((l, Attr::of(ev, e.unit, e.index, locs)))
    }

    /// The region-`reg` view of the program-order predecessor of `e` in
    /// that region, when `e` is in it: everything in it happens before
    /// `e`, whatever `e` reads ([`Clocks::new_access`] first).
    fn pred_view(&self, e: EventId, attr: &Attr, reg: usize) -> Option<&View> {
        let last = self.nodes[e.unit.index()][e.index as usize - 1].last_in[reg] as usize;
        (region_of(attr, reg) && last > 0).then(|| &self.nodes[e.unit.index()][last - 1].views[reg])
    }

    /// For a non-atomic read `r` just added to `g` without its write: drop
    /// from `cands` the writes `vis` (O-NaRfG/L) forbids whatever `r`
    /// reads: those that happen before another write of the location that
    /// happens before `r`'s program-order predecessor (a non-atomic read
    /// synchronises with nothing, so that predecessor's views are `r`'s).
    /// Views that miss an edge only hide fewer writes. The writes that do
    /// not happen before `r` are left to the check: a view may miss the
    /// edge that orders one.
    pub fn drop_hidden(&mut self, g: &Graph, locs: &[LocInfo], r: EventId, cands: &mut Vec<EventId>) {
        let Some((l, attr)) = self.new_access(g, locs, r).filter(|&(l, _)| !locs[l].atomic) else { return };
        let mut seen = std::mem::take(&mut self.seen);
        for reg in [G, L] {
            let Some(v) = self.pred_view(r, &attr, reg) else { continue };
            self.last_writes(g, locs, l, v, reg, &mut seen);
            cands.retain(|&w| !seen.iter().any(|&y| self.hides(locs, y, w, reg)));
        }
        self.seen = seen;
    }

    /// For a non-atomic read `r` just added to `g` without its write, when
    /// the views cover every other event of `g`: the writes of its
    /// location that `vis` (O-NaRfG/L) does not hide from it, in
    /// coherence order, the initial write first (what
    /// [`Clocks::drop_hidden`] leaves of them all). From each unit only
    /// its writes from its last one in the view of `r`'s predecessor on:
    /// its earlier ones happen before that one, which hides them. False,
    /// with `out` untouched, when the views do not cover the graph or
    /// nothing happens before `r` in the location's region. O(units
    /// accessing the location, plus the writes returned and those of
    /// units with none in the view); every write of the location made a
    /// loop of non-atomic reads and writes cost O(n) a read.
    pub fn unhidden_writes(&mut self, g: &Graph, locs: &[LocInfo], r: EventId, out: &mut Vec<EventId>) -> bool {
        let Some((l, attr)) = self.new_access(g, locs, r).filter(|&(l, _)| !locs[l].atomic) else { return false };
        let Some(reg) = region_index(locs, l).filter(|_| self.covers_all_but(g, r.unit) && self.nodes[r.unit.index()].len() == r.index as usize) else { return false };
        let mut hiders = std::mem::take(&mut self.seen);
        let Some(v) = self.pred_view(r, &attr, reg) else {
            self.seen = hiders;
            return false;
        };
        self.last_writes(g, locs, l, v, reg, &mut hiders);
        let hidden = |w: EventId| hiders.iter().any(|&y| self.hides(locs, y, w, reg));
        let start = out.len();
        let loc = LocId(l as u32);
        for (u, acc) in self.writing_units(l) {
            let end = accesses_before(acc, self.entry(v, *u as usize));
            // Its writes from its last one in the view on, walked back
            // from its last write along `LocAccess::last_write`.
            let from = acc[..end].last().map_or(0, |a| a.last_write);
            let mut at = acc.last().map_or(0, |a| a.last_write);
            while at > 0 && at >= from {
                let w = EventId { unit: UnitId(*u), index: acc[at as usize - 1].index };
                if !hidden(w) {
                    out.push(w);
                }
                at = if at >= 2 { acc[at as usize - 2].last_write } else { 0 };
            }
        }
        out[start..].sort_by_cached_key(|&w| g.co_pos(w, loc));
        let init = EventId::init(loc);
        if !hidden(init) {
            out.insert(start, init);
        }
        self.seen = hiders;
        if self.verify {
            let mut every: Vec<EventId> = g.writes_to(loc).collect();
            self.drop_hidden(g, locs, r, &mut every);
            assert_eq!(&out[start..], &every[..], "clmm internal error: Clocks::unhidden_writes disagrees with drop_hidden on the writes read {}.{} may read (CLMM_CROSSCHECK)", r.unit.0, r.index);
        }
        true
    }
}
