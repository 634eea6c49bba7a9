//! The consistency axioms of `opencl_base.cat`:
//!
//! ```text
//! irreflexive ghb as O-HbG
//! irreflexive lhb as O-HbL
//! let coh(hb) = (rf^-1)?; mo; rf?; hb
//! irreflexive coh(ghb) as O-CohG
//! irreflexive coh(lhb) as O-CohL
//! irreflexive rf; (ghb | lhb) as O-Rf
//! let vis(hb) = (W * R) & hb & loc & ~((hb & loc); [W]; hb)
//! empty (rf;[G & nonatomicloc])\vis(ghb) as O-NaRfG
//! empty (rf;[L & nonatomicloc])\vis(lhb) as O-NaRfL
//! irreflexive rf | (mo;mo;rf^-1) | (mo;rf) as O-Rmw
//! ```

use super::hb::Relations;
use super::matrix::Matrix;
use super::{Ctx, Phase, Violation};
use crate::graph::{Graph, Kind, LocInfo};
use crate::ids::EventId;
use clmm_atomic::backend::LocId;

/// The first axiom the graph violates.
///
/// On prefixes, `rels` is computed with `rs_min` and `cur` with the current
/// `rs` (happens-before of any consistent extension, restricted to this
/// prefix, lies between the two).
pub fn check(ctx: &Ctx<'_>, rels: &Relations, cur: Option<&Relations>, phase: Phase) -> Option<Violation> {
    if rels.ghb.has_reflexive().is_some() || rels.ghb_fine.as_ref().is_some_and(|m| m.has_reflexive().is_some()) {
        return Some(Violation::HbG);
    }
    if rels.lhb.has_reflexive().is_some() {
        return Some(Violation::HbL);
    }
    if !coherent(ctx, |l| rels.ghb_at(ctx, l)) {
        return Some(Violation::CohG);
    }
    if !coherent(ctx, |_| &rels.lhb) {
        return Some(Violation::CohL);
    }
    for r in 0..ctx.n() {
        if let (Some(w), Some(l)) = (ctx.attr[r].rf, ctx.attr[r].loc) {
            if rels.hb_at(ctx, l, r, w) {
                return Some(Violation::Rf);
            }
        }
    }
    if let Some(v) = non_atomic_reads(ctx, rels, cur.unwrap_or(rels), phase) {
        return Some(v);
    }
    if !rmw_atomic(ctx) {
        return Some(Violation::Rmw);
    }
    None
}

/// `irreflexive coh(hb)`: no `x (rf^-1)?;mo;rf? y` with `y hb x` (`hb`
/// of each location: see [`Relations::ghb_at`]).
fn coherent<'m>(ctx: &Ctx<'_>, hb_of: impl Fn(usize) -> &'m Matrix) -> bool {
    for (l, co) in ctx.co.iter().enumerate() {
        if ctx.nonatomic(l) || co.len() < 2 {
            continue;
        }
        let hb = hb_of(l);
        // The events "at" each write: the write and its readers.
        let mut at: Vec<Vec<usize>> = co.iter().map(|&w| vec![w]).collect();
        for r in 0..ctx.n() {
            if let Some(w) = ctx.attr[r].rf {
                if ctx.attr[r].loc == Some(l) {
                    at[ctx.co_pos[w]].push(r);
                }
            }
        }
        for i in 0..co.len() {
            for j in i + 1..co.len() {
                for &x in &at[i] {
                    for &y in &at[j] {
                        if x != y && hb.get(y, x) {
                            return false;
                        }
                    }
                }
            }
        }
    }
    true
}

/// `O-NaRfG`, `O-NaRfL`: a read of a non-atomic location reads a visible
/// write. On prefixes, `w hb r` is required of the current happens-before
/// (`cur`, an upper bound) and "no write between" of `rs_min` happens-before
/// (a lower bound): both are necessary in every extension. Except after
/// a read of a write not produced yet (a speculation's pending promise,
/// with no rf edge until then): when its write comes, the read may end an
/// `ra_sw` edge at itself (an acquire) or at an acquire fence after it in
/// its unit (`sbF?`), and so order `w` before an `r` that such an end
/// happens before or precedes in program order. `w hb r` is then left to
/// that graph.
fn non_atomic_reads(ctx: &Ctx<'_>, rels: &Relations, cur: &Relations, phase: Phase) -> Option<Violation> {
    let pending = (0..ctx.n()).filter(|&p| !ctx.attr[p].init && ctx.attr[p].is_read() && ctx.attr[p].rf.is_none());
    let ends: Vec<usize> = pending
        .flat_map(|p| {
            let unit = ctx.attr[p].unit;
            let fences = (p + 1..ctx.n()).take_while(move |&q| ctx.attr[q].unit == unit).filter(|&q| ctx.attr[q].is_fence());
            std::iter::once(p).chain(fences).filter(|&q| ctx.attr[q].is_acq())
        })
        .collect();
    for r in 0..ctx.n() {
        let a = &ctx.attr[r];
        let (Some(w), Some(l)) = (a.rf, a.loc) else { continue };
        if !ctx.nonatomic(l) {
            continue;
        }
        for (in_region, hb, upper, v) in [
            (a.g, rels.ghb_at(ctx, l), cur.ghb_at(ctx, l), Violation::NaRfG),
            (a.l, &rels.lhb, &cur.lhb, Violation::NaRfL),
        ] {
            if !in_region {
                continue;
            }
            let ok = match phase {
                Phase::Complete => visible(ctx, hb, w, r),
                Phase::Prefix => {
                    let grows = || ends.iter().any(|&q| upper.get(q, r) || (ctx.attr[q].unit == a.unit && ctx.attr[q].po < a.po));
                    (upper.get(w, r) || grows()) && !hidden(ctx, hb, w, r)
                }
            };
            if !ok {
                return Some(v);
            }
        }
    }
    None
}

/// `vis(hb)`: `w hb r`, same location, and no write `x` of the location with
/// `w hb x hb r`.
pub fn visible(ctx: &Ctx<'_>, hb: &Matrix, w: usize, r: usize) -> bool {
    hb.get(w, r) && !hidden(ctx, hb, w, r)
}

/// Some write `x` of the location with `w hb x hb r`.
fn hidden(ctx: &Ctx<'_>, hb: &Matrix, w: usize, r: usize) -> bool {
    let l = ctx.attr[r].loc;
    (0..ctx.n()).any(|x| x != w && ctx.attr[x].is_write() && ctx.attr[x].loc == l && hb.get(w, x) && hb.get(x, r))
}

/// `O-Rmw` on one location `l`, read off the graph itself, without
/// relations or views: each RMW write part in `l`'s `mo` has the write
/// right before it (the initial write before the first) as what its read
/// part reads, when that write is produced (a speculative read of a
/// promised write is checked when the write comes, as in
/// `rmw_atomic` and `vclock::Clocks::axioms`). O(|mo| of `l`).
///
/// `Engine::next_item` asks it first of an alternative that changed what
/// a read of `l` reads: two RMWs reading one write is why most forward
/// alternatives of RMW reads are pruned (all 311 of `fetch_add` by 5
/// units', and 97 of its 216 backward revisits), and the views of the
/// prefix before the violation cost about 11,000 instructions to find it.
pub fn rmw_atomic_at(g: &Graph, locs: &[LocInfo], l: LocId) -> bool {
    let (Some(info), Some(co)) = (locs.get(l.0 as usize), g.co.get(l.0 as usize)) else { return true };
    if !info.atomic {
        return true;
    }
    let mut pred = EventId::init(l);
    for &w in co {
        if g.ev(w).kind == Kind::RmwWrite {
            let read = EventId { unit: w.unit, index: w.index - 1 };
            if g.ev(read).rf.is_some_and(|src| super::produced(g, read, src) && src != pred) {
                return false;
            }
        }
        pred = w;
    }
    true
}

/// `O-Rmw`: an RMW reads its immediate `mo` predecessor (atomic locations;
/// `mo` is empty on non-atomic ones).
fn rmw_atomic(ctx: &Ctx<'_>) -> bool {
    for w in 0..ctx.n() {
        let a = &ctx.attr[w];
        if a.kind != Kind::RmwWrite {
            continue;
        }
        let l = a.loc.expect("rmw has a location");
        if ctx.nonatomic(l) {
            continue;
        }
        let Some(src) = ctx.attr[w - 1].rf else { continue };
        if ctx.co_pos[src] + 1 != ctx.co_pos[w] {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::rmw_atomic_at;
    use crate::graph::{Event, Graph, Kind, LocInfo, Region, Unit, UnitKind};
    use crate::ids::{EventId, UnitId};
    use clmm_atomic::backend::{Access, AllocRegion, LocId, Mode, Op};
    use clmm_atomic::{FenceFlags, Order, Scope};

    /// Two work-items' `fetch_add`s on one atomic location: an RMW read
    /// part and its write part each, the second reading `rf2`.
    fn two_fetch_adds(rf2: EventId, atomic: bool) -> (Graph, Vec<LocInfo>) {
        let site = std::panic::Location::caller();
        let l = LocId(0);
        let op = Op::Mem { loc: l, access: Access::Rmw(clmm_atomic::RmwOp::Add, clmm_atomic::NumTy::I32, 1), mode: Mode::Atomic(Order::Relaxed, Scope::Device) };
        let ev = |kind, rf, stamp| Event { kind, loc: Some(l), atomic: Some((Order::Relaxed, Scope::Device)), flags: FenceFlags::empty(), rf, value: 0, stamp, spurious: false, speculative: false, kept: false, level: 0, rank: u32::MAX, barrier: None, op, site, waits: None };
        let mut g = Graph::default();
        let w1 = EventId { unit: UnitId(0), index: 1 };
        let w2 = EventId { unit: UnitId(1), index: 1 };
        for (u, rf) in [(0u32, EventId::init(l)), (1, rf2)] {
            let kind = UnitKind::WorkItem { global_id: [u as usize, 0, 0], group_id: [0; 3], local_id: [u as usize, 0, 0], group: crate::ids::GroupId(0), sub_group: crate::ids::SubGroupId(0), sub_group_index: 0, device: 0, work_dim: 1 };
            g.units.push(Unit { kind, parent: None, events: vec![ev(Kind::RmwRead, Some(rf), 2 * u + 1), ev(Kind::RmwWrite, None, 2 * u + 2)] });
        }
        g.co = vec![vec![w1, w2]];
        let locs = vec![LocInfo { region: Region::Global, memory: AllocRegion::Global, atomic, alloc: 0, init: 0, site, elem: None, label: None }];
        (g, locs)
    }

    /// `O-Rmw` read off the graph: the second RMW reads the first's write
    /// (its `mo` predecessor), or the initial write as the first does,
    /// which `rmw_atomic` (the explicit model) rejects too.
    #[test]
    fn rmw_atomic_at_finds_two_rmws_reading_one_write() {
        let l = LocId(0);
        let (g, locs) = two_fetch_adds(EventId { unit: UnitId(0), index: 1 }, true);
        assert!(rmw_atomic_at(&g, &locs, l));
        let (g, locs) = two_fetch_adds(EventId::init(l), true);
        assert!(!rmw_atomic_at(&g, &locs, l));
        // A speculative read of a write not produced yet is checked when
        // the write comes; a non-atomic location has no `mo`.
        let (g, locs) = two_fetch_adds(EventId { unit: UnitId(7), index: 0 }, true);
        assert!(rmw_atomic_at(&g, &locs, l));
        let (g, locs) = two_fetch_adds(EventId::init(l), false);
        assert!(rmw_atomic_at(&g, &locs, l));
        // The explicit model agrees on both graphs of the atomic location.
        for (rf2, holds) in [(EventId { unit: UnitId(0), index: 1 }, true), (EventId::init(l), false)] {
            let (g, locs) = two_fetch_adds(rf2, true);
            let sem = crate::model::Semantics::default();
            let v = crate::model::check(&g, &locs, sem, crate::model::Phase::Prefix).violation;
            assert_eq!(v.is_none(), holds, "{v:?}");
        }
    }
}
