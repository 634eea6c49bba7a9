//! The data races and barrier divergence of a complete graph
//! ([`Clocks::complete`]), from the views: `dr` of `opencl_base.cat` (two
//! conflicting accesses, not both atomic with inclusive scopes, unordered
//! by `ghb | lhb`) and the barrier instances some member left out.

use super::*;

/// [`Clocks::races`]'s buffers, kept across executions.
#[derive(Default)]
pub(super) struct RaceBufs {
    /// The accesses' events, initial writes first.
    acc: Vec<EventId>,
    /// The accesses, as [`race_pairs`] takes them.
    accs: Vec<Access>,
    /// Per location, whether its accesses all have inclusive scopes.
    scopes: Vec<Inclusive>,
    /// The allocations a host unit accessed.
    host_allocs: Vec<u32>,
}

impl RaceBufs {
    pub(super) fn clear(&mut self) {
        self.acc.clear();
        self.accs.clear();
        self.scopes.clear();
        self.host_allocs.clear();
    }
}

/// Whether the accesses to a location seen so far all have inclusive
/// scopes: each of another unit is inclusive with the first, `With` its
/// scope and unit, and the first unit's have its scope. That makes every
/// pair of two units inclusive (two accesses of one unit never race):
/// [`inclusive`] requires one scope, and for each scope it is "both
/// units in one instance" (one sub-group, one work-group, one device and
/// kernel family or SVM, no host unit or fine-grained SVM with atomics),
/// an equivalence on the units where it holds at all, since the location
/// is the same.
#[derive(Clone, Copy)]
enum Inclusive {
    Unseen,
    With(Scope, UnitId),
    Mixed,
}

impl Clocks {
    /// `dr` (`opencl.cat`, "Races"; [`crate::model::race::race_pairs`]), in the
    /// order of [`crate::model::race::races`] (initial writes first, then unit by
    /// unit). No host thread synchronises with a work-item here
    /// ([`Clocks::complete`]), so `ghb | lhb` orders every candidate
    /// pair, buffer conflicts included.
    pub(super) fn races(&mut self, g: &Graph, locs: &[LocInfo], sem: Semantics) -> Vec<(EventId, EventId)> {
        // Buffers kept across executions: this runs once per complete one.
        let mut bufs = std::mem::take(&mut self.race_bufs);
        bufs.clear();
        let RaceBufs { acc, accs, scopes, host_allocs } = &mut bufs;
        // A location whose accesses all have inclusive scopes has no
        // racing pair of its own: its accesses are left out, unless a
        // host unit accessed its buffer (a whole-buffer conflict races
        // whatever the scopes, `race::buffer_conflict_at`) or it is one
        // of herd's unqualified locations (its initial write races). They
        // were `race_pairs`' candidates, each asked `inclusive`: 7% of the
        // instructions of `fetch_add` by 6 units.
        scopes.resize(locs.len(), Inclusive::Unseen);
        // `inclusive` for two accesses to location `l`.
        let incl_at = |l: usize, a: (Scope, UnitId), b: (Scope, UnitId)| inclusive(g, locs, sem, a, b, matches!(locs[l].region, Region::Local(_)), Some(l));
        for l in 0..locs.len() {
            acc.push(EventId::init(clmm_atomic::backend::LocId(l as u32)));
            accs.push(Access { unit: None, loc: l, write: true });
        }
        for (u, unit) in self.nodes[..g.units.len()].iter().enumerate() {
            let host = g.units[u].is_host();
            let u = UnitId(u as u32);
            for n in unit {
                let (true, Some(l)) = (n.attr.is_read() || n.attr.is_write(), n.attr.loc) else { continue };
                acc.push(EventId { unit: u, index: n.attr.po });
                accs.push(Access { unit: Some(u), loc: l, write: n.attr.is_write() });
                if host {
                    host_allocs.push(locs[l].alloc);
                }
                let s = n.attr.scope;
                scopes[l] = match scopes[l] {
                    // A plain access (or one at `WorkItem` scope) is
                    // inclusive with nothing.
                    _ if s == Scope::WorkItem => Inclusive::Mixed,
                    Inclusive::Unseen => Inclusive::With(s, u),
                    // Two accesses of one unit never race (`~wi`): the
                    // first unit's own are not asked.
                    Inclusive::With(s0, v) if (s0, v) == (s, u) => Inclusive::With(s0, v),
                    Inclusive::With(s0, v) if incl_at(l, (s0, v), (s, u)) => Inclusive::With(s0, v),
                    _ => Inclusive::Mixed,
                };
            }
        }
        host_allocs.sort_unstable();
        host_allocs.dedup();
        let skip = |l: usize| matches!(scopes[l], Inclusive::With(..)) && locs[l].region != Region::Unqualified && host_allocs.binary_search(&locs[l].alloc).is_err();
        if (0..locs.len()).any(skip) {
            if self.verify {
                // Every pair of two units is inclusive: `inclusive` is an
                // equivalence on the accesses of one scope ([`Inclusive`]).
                for (i, x) in accs.iter().enumerate().filter(|(_, x)| x.unit.is_some() && skip(x.loc)) {
                    for (j, _) in accs.iter().enumerate().skip(i + 1).filter(|(_, y)| y.unit.is_some() && y.unit != x.unit && y.loc == x.loc) {
                        let (a, b) = (acc[i], acc[j]);
                        let scope = |e: EventId| self.nodes[e.unit.index()][e.index as usize].attr.scope;
                        assert!(incl_at(x.loc, (scope(a), a.unit), (scope(b), b.unit)), "clmm internal error: two accesses to location {} left out of the race check have scopes that are not inclusive (CLMM_CROSSCHECK)", x.loc);
                    }
                }
            }
            let mut k = locs.len();
            for i in locs.len()..accs.len() {
                if !skip(accs[i].loc) {
                    (acc[k], accs[k]) = (acc[i], accs[i]);
                    k += 1;
                }
            }
            acc.truncate(k);
            accs.truncate(k);
        }
        let (acc, accs) = (&*acc, &*accs);
        let attr = |e: EventId| (!e.is_init()).then(|| &self.nodes[e.unit.index()][e.index as usize].attr);
        let hb = |i: usize, j: usize, _: PairHb| self.hb(locs, acc[i], acc[j]);
        let incl = |i: usize, j: usize| {
            let (x, y) = (acc[i], acc[j]);
            let (Some(a), Some(b)) = (attr(x), attr(y)) else { return false };
            incl_at(accs[i].loc, (a.scope, x.unit), (b.scope, y.unit))
        };
        let out = race_pairs(g, locs, accs, false, true, hb, incl).into_iter().map(|(i, j)| (acc[i], acc[j])).collect();
        self.race_bufs = bufs;
        out
    }

    /// `bd` (`opencl.cat`, "Barrier divergence"; [`crate::model::barrier`]): the
    /// entry fences (not of collectives) of work-items whose group has
    /// other work-items, synchronising (`bar_sw`) with none of them.
    pub(super) fn divergence(&self, g: &Graph) -> Vec<EventId> {
        let mut out = Vec::new();
        for (u, unit) in g.units.iter().enumerate() {
            let me = UnitId(u as u32);
            for (i, ev) in unit.events.iter().enumerate() {
                let (Kind::BarrierEntry, Some(inst)) = (ev.kind, ev.barrier) else { continue };
                let e = EventId { unit: me, index: i as u32 };
                if !crate::model::barrier::subject_to_bd(g, e) {
                    continue;
                }
                let ea = &self.nodes[u][i].attr;
                // Each member's exit from near the entry (a member exits
                // after every entry): searching from its last event made a
                // kernel with barriers in a loop O(n^2) a complete graph.
                let exit = |v: UnitId| {
                    let x = g.barrier_event_near(v, inst, Kind::BarrierExit, ev.stamp);
                    if self.verify {
                        assert_eq!(x, g.barrier_event(v, inst, Kind::BarrierExit), "clmm internal error: Graph::barrier_event_near missed an exit (CLMM_CROSSCHECK)");
                    }
                    x
                };
                let synced = g.barrier_members(me, inst.kind).iter().filter(|&&v| v != me).any(|&v| {
                    exit(v).is_some_and(|x| {
                        let xa = &self.nodes[v.index()][x.index as usize].attr;
                        (ea.g && xa.g) || (ea.l && xa.l)
                    })
                });
                if !synced {
                    out.push(e);
                }
            }
        }
        out
    }
}
