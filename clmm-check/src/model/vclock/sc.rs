//! The SC axiom on the views ([`super::super::sc`] is the explicit
//! model's):
//!
//! ```text
//! let scp = Fsb?; (rb | mo | (ghb | lhb)); sbF?      (opencl.cat line 9)
//! acyclic (mo_sc^2) & scp & (S_cond1|S_cond2) as O-Ssimp
//! acyclic (mo_sc^2) & scp & incl as O-Sscoped        (opencl_scopedsc.cat)
//! ```
//!
//! with `rb = (rf^-1; mo) \ id` and `mo = co & ((!nonatomicloc)^2)`
//! (`opencl_base.cat` lines 4 and 6). The relation is built between the
//! `k` SC events only, each pair in O(1) view lookups, instead of the
//! explicit model's closure of the whole graph; then it is checked for a
//! cycle.
//!
//! An SC event's side of a pair (`Fsb?` before it, `sbF?` after it) is an
//! [`End`]: for an access the event alone, for a fence the events of its
//! unit after it (as the source of an edge) or before it (as its target).
//! What an end needs of those events is summarised once per end:
//!
//! * `ghb | lhb`: a region-`r` event of the source's unit at or after the
//!   fence is in the target's region-`r` view when the last region-`r`
//!   event before the view's bound is (`Node::last_in`); events of the
//!   other region come in only through the view's lifted list. The views
//!   of one unit's region-`r` events grow along `sb`, so the target
//!   fence's union over the events before it is the view of its last
//!   region-`r` event, and the views of the few events outside `r` that an
//!   `scf` lift gave an `r` view.
//! * `mo | rb`: per location, the coherence position a write at or after
//!   the source fence has, or that a read there reads from (`rb` goes from
//!   the read to the writes after its write), the least of them; and the
//!   co-latest write at or before the target fence. An RMW read after a
//!   source fence adds nothing to its write part's `mo` (the write part
//!   comes right after the read's write in `co`, `O-Rmw`), which is how
//!   the `\ id` of `rb` (an RMW's read part and its own write part) stays
//!   out without a pairwise test. For an RMW read that is the SC event
//!   itself the write part is named and left out: no write other than it
//!   is co-between its read's write and it.

use super::{region_of, Clocks, G, L};
use crate::graph::{Graph, LocInfo, Region};
use crate::ids::{EventId, UnitId};
use crate::model::inclusive_scope::inclusive;
use crate::model::matrix::{edges_acyclic, Matrix};
use crate::model::{Phase, ScModel, Semantics};
use clmm_atomic::Scope;
use std::ops::Range;

/// One SC event's side of the pairs of `scp` ([the module doc](self)); its
/// lists are ranges of [`ScScratch`]'s.
struct End {
    e: EventId,
    fence: bool,
    /// The regions of the event itself.
    regions: [bool; 2],
    /// The views an edge into the end may reach: the event each belongs
    /// to and its region.
    views: Range<u32>,
}

impl ScScratch {
    /// The ends of unit `slot` of [`ScScratch::units`] listed in `chains`:
    /// its non-fence ends of region `G` (`which` 0) or `L` (1), or its
    /// fences (2).
    fn chain(&self, slot: usize, which: usize) -> &[u32] {
        let c = slot * 3 + which;
        &self.chains[self.chain_start[c] as usize..self.chain_start[c + 1] as usize]
    }
}

/// The buffers of [`Clocks::sc_holds`], kept across checks.
#[derive(Default)]
pub(super) struct ScScratch {
    ends: Vec<End>,
    /// The units with SC events, in order.
    units: Vec<u32>,
    /// Per end (the last field), `(location, coherence position, own
    /// write part)` that an edge out of it starts from: a write's own
    /// position, a read's write's. For an RMW read that is the end itself,
    /// its write part, which `rb` leaves out.
    from: Vec<(u32, u32, Option<EventId>, u32)>,
    /// Per end (the last field), `(location, coherence position, write)`:
    /// the co-latest write per location that an edge into it may reach.
    to: Vec<(u32, u32, EventId, u32)>,
    /// [`Clocks::unit_ends`]'s SC fences (position, end), the co-latest
    /// (or least) write per location, and the events outside a region
    /// with a view of it.
    fences: Vec<(u32, u32)>,
    latest: Vec<(u32, u32, EventId)>,
    outside: Vec<(EventId, usize)>,
    /// Where the ends of each unit of [`ScScratch::units`] start in
    /// [`ScScratch::ends`] (they are in unit order), and the end.
    slot_start: Vec<u32>,
    views: Vec<(EventId, usize)>,
    /// Per end and unit of [`ScScratch::units`], per region: how many of
    /// the unit's first events the end's views hold (its own unit's
    /// events before the viewing event only).
    bounds: Vec<[u32; 2]>,
    /// Coherence positions by unit and position.
    co: Vec<Vec<u32>>,
    /// Per entry of `to`, the least [`Clocks::order`] of the ends of it and
    /// the entries after it on its location.
    suffix: Vec<u32>,
    /// [`Clocks::sc_edges_acyclic`]'s relation.
    edges: Vec<(u32, u32)>,
    /// Per unit of [`ScScratch::units`]: its non-fence ends in `G`, in
    /// `L`, and its fences, as ranges of `chains` from `chain_start`.
    chains: Vec<u32>,
    chain_start: Vec<u32>,
}

impl Clocks {
    /// Whether the SC axiom in force holds on the graph, whose events all
    /// have views (`Clocks::check` answered `Consistent`), and whose
    /// happens-before is the views' (on a complete graph: the conditions
    /// of [`Clocks::complete`]). On prefixes (`phase`), `opencl.cat`'s
    /// condition is not looked at: a later SC event can switch it off
    /// (as in [`crate::model::sc::holds`]).
    pub(super) fn sc_holds(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics, phase: Phase) -> bool {
        let mut s = std::mem::take(&mut self.sc_scratch);
        let holds = self.sc_holds_with(g, locs, sem, phase, &mut s);
        self.sc_scratch = s;
        holds
    }

    fn sc_holds_with(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, phase: Phase, s: &mut ScScratch) -> bool {
        s.ends.clear();
        s.from.clear();
        s.to.clear();
        s.views.clear();
        s.units.clear();
        s.slot_start.clear();
        co_positions(g, locs, &mut s.co);
        for u in 0..self.nodes.len().min(g.units.len()) {
            if self.nodes[u].iter().any(|n| n.sc_any) {
                self.unit_ends(g, locs, u, s);
            }
        }
        let k = s.ends.len();
        if k < 2 {
            return true;
        }
        if sem.sc == ScModel::Spec && (phase == Phase::Prefix || !self.spec_condition(locs, &s.ends)) {
            return true;
        }
        s.slot_start.push(k as u32);
        // `mo | rb`, location by location: each location's write ends by
        // coherence position.
        s.from.sort_unstable_by_key(|f| (f.0, f.1));
        s.to.sort_unstable_by_key(|t| (t.0, t.1));
        // Every `hb` edge of `scp` goes forward in `Clocks::order` (a
        // view comes after its sources, and a unit's views in program
        // order): with every `mo | rb` edge forward too, that order is a
        // linear extension. The first `to` entry of each `from` entry's
        // edges ([`first_to`]), and the least order from each `to` entry
        // on along its location.
        let order = |i: u32| self.nodes[s.ends[i as usize].e.unit.index()][s.ends[i as usize].e.index as usize].order;
        s.suffix.clear();
        s.suffix.resize(s.to.len(), u32::MAX);
        for q in (0..s.to.len()).rev() {
            let next = s.to.get(q + 1).filter(|t| t.0 == s.to[q].0).map_or(u32::MAX, |_| s.suffix[q + 1]);
            s.suffix[q] = next.min(order(s.to[q].3));
        }
        let backward = s.from.iter().any(|f| first_to(&s.to, f).is_some_and(|q| s.suffix[q] <= order(f.3)));
        if !backward {
            return true;
        }
        if !self.sc_edges_acyclic(s) {
            // Without `& incl` the relation has a cycle.
            return sem.sc == ScModel::Scoped && self.sc_scoped_acyclic(g, locs, sem, s);
        }
        true
    }

    /// Whether `scp` between the ends of `s` (sorted `from` and `to`) has
    /// no cycle, by a relation with the same paths and fewer edges:
    ///
    /// * `mo | rb`: one node per `to` entry, on a chain along its
    ///   location's coherence order, leading to its end; a `from` entry
    ///   leads to the first node its edges reach ([`first_to`]), and so
    ///   to all after it;
    /// * `hb` by the clocks: the non-fence ends of a unit in one region
    ///   form a chain (`sb` within a region is in its `hb`), so a target
    ///   needs an edge only from the last one its view holds, per unit
    ///   and region; fences one by one; lifted events one by one.
    ///
    /// O(ends x units + edges); the pairwise relation
    /// ([`Clocks::sc_scoped_acyclic`]) is O(ends^2): a loop of 1,000
    /// seq_cst stores and loads in one work-item took 30 ms there.
    fn sc_edges_acyclic(&self, s: &mut ScScratch) -> bool {
        let k = s.ends.len() as u32;
        let mut edges = std::mem::take(&mut s.edges);
        edges.clear();
        for (q, t) in s.to.iter().enumerate() {
            let x = k + q as u32;
            edges.push((x, t.3));
            if s.to.get(q + 1).is_some_and(|n| n.0 == t.0) {
                edges.push((x, x + 1));
            }
        }
        for f in &s.from {
            if let Some(q) = first_to(&s.to, f) {
                edges.push((f.3, k + q as u32));
            }
        }
        self.bounds(s);
        // Per unit and region, its non-fence ends; per unit, its fences.
        s.chains.clear();
        s.chain_start.clear();
        for slot in 0..s.units.len() {
            let range = s.slot_start[slot] as usize..s.slot_start[slot + 1] as usize;
            for r in [G, L] {
                s.chain_start.push(s.chains.len() as u32);
                let before = s.chains.len();
                s.chains.extend(range.clone().filter(|&i| !s.ends[i].fence && s.ends[i].regions[r]).map(|i| i as u32));
                for w in s.chains[before..].windows(2) {
                    edges.push((w[0], w[1]));
                }
            }
            s.chain_start.push(s.chains.len() as u32);
            s.chains.extend(range.filter(|&i| s.ends[i].fence).map(|i| i as u32));
        }
        s.chain_start.push(s.chains.len() as u32);
        let nu = s.units.len();
        for (j, b) in s.ends.iter().enumerate() {
            let j = j as u32;
            for (slot, &bounds) in s.bounds[j as usize * nu..(j as usize + 1) * nu].iter().enumerate() {
                for r in [G, L] {
                    let chain = s.chain(slot, r);
                    let n = chain.partition_point(|&i| s.ends[i as usize].e.index < bounds[r]);
                    if n > 0 {
                        edges.push((chain[n - 1], j));
                    }
                }
                let most = bounds[0].max(bounds[1]);
                for &i in s.chain(slot, 2) {
                    let a = &s.ends[i as usize];
                    if a.e.index >= most {
                        break;
                    }
                    if self.clocked(a, bounds) {
                        edges.push((i, j));
                    }
                }
            }
            self.lifted_sources(s, b, |i| edges.push((i, j)));
        }
        let acyclic = edges_acyclic(k as usize + s.to.len(), &mut edges);
        s.edges = edges;
        acyclic
    }

    /// `acyclic (mo_sc^2) & scp & incl` (`opencl_scopedsc.cat`) pair by
    /// pair: `& incl` breaks the chains of [`Clocks::sc_edges_acyclic`]
    /// (two SC events of one work-item at work-item scope are not
    /// inclusive), so this one is asked only when that relation has a
    /// cycle (and after it: its bounds and chains are used here).
    fn sc_scoped_acyclic(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, s: &ScScratch) -> bool {
        let k = s.ends.len();
        let mut m = Matrix::new(k);
        for f in &s.from {
            if let Some(q) = first_to(&s.to, f) {
                for t in s.to[q..].iter().take_while(|t| t.0 == f.0) {
                    m.set(f.3 as usize, t.3 as usize);
                }
            }
        }
        let nu = s.units.len();
        for (j, b) in s.ends.iter().enumerate() {
            for (slot, &bounds) in s.bounds[j * nu..(j + 1) * nu].iter().enumerate() {
                let most = bounds[0].max(bounds[1]);
                for i in s.slot_start[slot] as usize..s.slot_start[slot + 1] as usize {
                    let a = &s.ends[i];
                    if a.e.index >= most {
                        break;
                    }
                    if self.clocked(a, bounds) {
                        m.set(i, j);
                    }
                }
            }
            self.lifted_sources(s, b, |i| m.set(i as usize, j));
        }
        for i in 0..k {
            let related: Vec<usize> = m.successors(i).collect();
            for j in related {
                if !self.sc_inclusive(g, locs, sem, s.ends[i].e, s.ends[j].e) {
                    m.unset(i, j);
                }
            }
        }
        m.is_acyclic()
    }

    /// The ends that reach end `b` through an event of the other region
    /// lifted into one of its views (`scf`): the end that is that event,
    /// and the fences before it in its unit.
    fn lifted_sources(&self, s: &ScScratch, b: &End, mut edge: impl FnMut(u32)) {
        for &(y, r) in &s.views[b.views.start as usize..b.views.end as usize] {
            let v = &self.nodes[y.unit.index()][y.index as usize].views[r];
            for x in v.lifted.iter().filter(|x| x.unit != y.unit || x.index < y.index) {
                let Ok(slot) = s.units.binary_search(&x.unit.0) else { continue };
                let (lo, hi) = (s.slot_start[slot] as usize, s.slot_start[slot + 1] as usize);
                if let Ok(at) = s.ends[lo..hi].binary_search_by_key(&x.index, |a| a.e.index) {
                    edge((lo + at) as u32);
                }
                for &i in s.chain(slot, 2) {
                    if s.ends[i as usize].e.index >= x.index {
                        break;
                    }
                    edge(i);
                }
            }
        }
    }

    /// `S_cond1 | S_cond2` ([`crate::model::sc`]): every SC event is
    /// all-svm-devices scope on fga memory, or every one is device scope
    /// on non-fga memory (a fence has no location: never fga).
    fn spec_condition(&self, locs: &[LocInfo], ends: &[End]) -> bool {
        let attrs = || ends.iter().map(|x| &self.node(x.e).expect("an SC event with views").attr);
        let fga = |l: Option<usize>| l.is_some_and(|l| locs[l].fga());
        attrs().all(|a| a.scope == Scope::AllSvmDevices && fga(a.loc)) || attrs().all(|a| a.scope == Scope::Device && !fga(a.loc))
    }

    /// `incl` between two SC events (`opencl_scopedsc.cat`), as
    /// [`crate::model::inclusive_scope::incl`]: local when both access
    /// local memory, on the location of the first that has one.
    fn sc_inclusive(&self, g: &Graph, locs: &[LocInfo], sem: Semantics, a: EventId, b: EventId) -> bool {
        let (x, y) = (&self.node(a).expect("view").attr, &self.node(b).expect("view").attr);
        let local_access = |l: Option<usize>| l.is_some_and(|l| matches!(locs[l].region, Region::Local(_)));
        let local = local_access(x.loc) && local_access(y.loc);
        inclusive(g, locs, sem, (x.scope, a.unit), (y.scope, b.unit), local, x.loc.or(y.loc))
    }

    /// Push the summaries of unit `u`'s SC events ([`End`]), in program
    /// order. A fence's sides come from one pass over the unit each way
    /// (per location the co-latest write up to it and the least position
    /// from it on, and the views outside their region up to it), not a
    /// scan per fence: a loop with a seq_cst fence in each iteration cost
    /// O(n^2) that way.
    fn unit_ends(&self, g: &Graph, locs: &[LocInfo], u: usize, s: &mut ScScratch) {
        let unit = &self.nodes[u];
        let id = |i: usize| EventId { unit: UnitId(u as u32), index: i as u32 };
        let atomic_loc = |i: usize| unit[i].attr.loc.filter(|&l| locs[l].atomic).map(|l| l as u32);
        let co = &s.co[u];
        // The coherence position of the write an event reads, when it is
        // produced (a pending speculative read has no rf edge yet).
        let read_from = |i: usize| {
            let w = g.units[u].events[i].rf?;
            if w.is_init() {
                return Some(0);
            }
            (!unit[i].rf_absent && g.contains(w)).then(|| s.co[w.unit.index()][w.index as usize])
        };
        let first = s.ends.len() as u32;
        s.fences.clear();
        // `sbF?`, forward: per location the co-latest write so far, and
        // the events outside a region with a view of it (an `scf` lift
        // into them, which the unit's later events of that region do not
        // inherit).
        let (mut latest, mut outside) = (std::mem::take(&mut s.latest), std::mem::take(&mut s.outside));
        latest.clear();
        outside.clear();
        for (i, n) in unit.iter().enumerate() {
            let a = &n.attr;
            if let (true, Some(l)) = (a.is_write(), atomic_loc(i)) {
                match latest.iter_mut().find(|t| t.0 == l) {
                    Some(t) if t.1 < co[i] => (t.1, t.2) = (co[i], id(i)),
                    Some(_) => {}
                    None => latest.push((l, co[i], id(i))),
                }
            }
            for r in [G, L] {
                let v = &n.views[r];
                if !region_of(a, r) && v.holds_any() {
                    outside.push((id(i), r));
                }
            }
            if !n.sc_any {
                continue;
            }
            let me = s.ends.len() as u32;
            let views = s.views.len() as u32;
            if a.is_fence() {
                s.to.extend(latest.iter().map(|&(l, c, w)| (l, c, w, me)));
                s.views.extend_from_slice(&outside);
                s.views.extend([G, L].into_iter().filter(|&r| n.last_in[r] > 0).map(|r| (id(n.last_in[r] as usize - 1), r)));
                s.fences.push((i as u32, me));
            } else {
                if let Some(l) = atomic_loc(i) {
                    if a.is_write() {
                        s.from.push((l, co[i], None, me));
                        s.to.push((l, co[i], id(i), me));
                    } else if let Some(c) = read_from(i) {
                        let own = a.rmw.then(|| id(i + 1));
                        s.from.push((l, c, own, me));
                    }
                }
                s.views.extend([(id(i), G), (id(i), L)]);
            }
            let regions = [region_of(a, G), region_of(a, L)];
            s.ends.push(End { e: id(i), fence: a.is_fence(), regions, views: views..s.views.len() as u32 });
        }
        // `Fsb?`, backward: per location the least position a write from
        // the fence on has, or a read there reads (an RMW read's write
        // part, next, starts the same edges).
        if !s.fences.is_empty() {
            let mut least = latest;
            least.clear();
            let mut k = s.fences.len();
            for i in (0..unit.len()).rev() {
                if let Some(l) = atomic_loc(i) {
                    let a = &unit[i].attr;
                    let c = if a.is_write() {
                        Some(co[i])
                    } else if a.rmw && i + 1 < unit.len() {
                        None
                    } else {
                        read_from(i)
                    };
                    if let Some(c) = c {
                        match least.iter_mut().find(|f| f.0 == l) {
                            Some(f) => f.1 = f.1.min(c),
                            None => least.push((l, c, id(i))),
                        }
                    }
                }
                while k > 0 && s.fences[k - 1].0 as usize == i {
                    let me = s.fences[k - 1].1;
                    s.from.extend(least.iter().map(|&(l, c, _)| (l, c, None, me)));
                    k -= 1;
                }
                if k == 0 {
                    break;
                }
            }
            latest = least;
        }
        (s.latest, s.outside) = (latest, outside);
        if s.ends.len() as u32 > first {
            s.units.push(u as u32);
            s.slot_start.push(first);
        }
    }

    /// Fill [`ScScratch::bounds`]: per end, unit and region, the events
    /// of the unit that the end's views hold, by their clocks (the lifted
    /// events are looked at apart). A fence's views are those of the events
    /// before it ([`End::views`]); in its own unit only the events before
    /// the viewing event count.
    fn bounds(&self, s: &mut ScScratch) {
        s.bounds.clear();
        for b in &s.ends {
            let at = s.bounds.len();
            s.bounds.resize(at + s.units.len(), [0, 0]);
            for &(y, r) in &s.views[b.views.start as usize..b.views.end as usize] {
                let v = &self.nodes[y.unit.index()][y.index as usize].views[r];
                for (slot, &u) in s.units.iter().enumerate() {
                    let mut bound = self.entry(v, u as usize);
                    if u == y.unit.0 {
                        bound = bound.min(y.index);
                    }
                    let x = &mut s.bounds[at + slot][r];
                    *x = (*x).max(bound);
                }
            }
        }
    }

    /// `Fsb?; (ghb | lhb); sbF?` by the clocks: an event of `a`'s side
    /// (`a.e` itself, or any from it on for a fence) among the first
    /// `bounds[r]` events of its unit, in region `r`.
    fn clocked(&self, a: &End, bounds: [u32; 2]) -> bool {
        let lo = a.e.index;
        (0..2).any(|r| {
            let bound = bounds[r] as usize;
            if a.fence {
                // The last region-`r` event before the bound is at or
                // after the fence.
                bound > 0 && self.nodes[a.e.unit.index()].get(bound - 1).is_some_and(|n| n.last_in[r] > lo)
            } else {
                a.regions[r] && (lo as usize) < bound
            }
        })
    }
}

/// The first entry of `to` (sorted by location and coherence position)
/// that `from` entry `f` has an `mo | rb` edge to: the first of its
/// location after its position, past its own write part (an RMW read's,
/// which `rb`'s `\ id` leaves out: it comes right after the read's write,
/// `O-Rmw`, so only it sits between them). All after it on the location
/// are its edges too.
fn first_to(to: &[(u32, u32, EventId, u32)], f: &(u32, u32, Option<EventId>, u32)) -> Option<usize> {
    let mut q = to.partition_point(|t| (t.0, t.1) <= (f.0, f.1));
    while to.get(q).is_some_and(|t| t.0 == f.0 && Some(t.2) == f.2) {
        q += 1;
    }
    to.get(q).filter(|t| t.0 == f.0).map(|_| q)
}

/// The coherence position ([`Graph::co_pos`]) of every write of an atomic
/// location, by unit and position (0 elsewhere), into `co`.
fn co_positions(g: &Graph, locs: &[LocInfo], co: &mut Vec<Vec<u32>>) {
    co.resize_with(co.len().max(g.units.len()), Vec::new);
    for (c, u) in co.iter_mut().zip(&g.units) {
        c.clear();
        c.resize(u.events.len(), 0);
    }
    for (l, ws) in g.co.iter().enumerate() {
        if !locs.get(l).is_some_and(|i| i.atomic) {
            continue;
        }
        for (p, w) in ws.iter().enumerate() {
            if let Some(slot) = co.get_mut(w.unit.index()).and_then(|u| u.get_mut(w.index as usize)) {
                *slot = p as u32 + 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::first_to;
    use crate::ids::{EventId, UnitId};

    fn ev(unit: u32, index: u32) -> EventId {
        EventId { unit: UnitId(unit), index }
    }

    /// `to` entries of two locations, sorted by location and coherence
    /// position: the first edge of a read or write starts after its
    /// position, on its location only, past an RMW read's own write part.
    #[test]
    fn first_to_skips_the_own_write_part_and_stays_on_the_location() {
        let to = [(0, 1, ev(1, 0), 0), (0, 2, ev(2, 1), 1), (0, 3, ev(1, 3), 2), (1, 1, ev(2, 4), 3)];
        // A write at position 1 of location 0: the next write on.
        assert_eq!(first_to(&to, &(0, 1, None, 0)), Some(1));
        // A read of the initial write (position 0).
        assert_eq!(first_to(&to, &(0, 0, None, 5)), Some(0));
        // An RMW read of position 1 whose write part is at position 2.
        assert_eq!(first_to(&to, &(0, 1, Some(ev(2, 1)), 1)), Some(2));
        // Nothing after the last write of location 0 (not location 1's).
        assert_eq!(first_to(&to, &(0, 3, None, 2)), None);
        assert_eq!(first_to(&to, &(1, 1, None, 3)), None);
        // An RMW read whose write part is the last: none.
        assert_eq!(first_to(&to, &(1, 0, Some(ev(2, 4)), 3)), None);
    }
}
