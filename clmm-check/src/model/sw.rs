//! Synchronises-with (`opencl_base.cat`, "Release-acquire synchronisation",
//! "Barrier synchronisation", "Global and local synchronises-with";
//! specification §3.3.7 and the fence and barrier rules of §3.3.x in spec
//! excerpt `004_8d269728d13116e5.txt`):
//!
//! ```text
//! let ra_sw(r) = ([r & rel]; Fsb?; [W \ s_wi]; rs?; [r]; rf;
//!                 [R \ s_wi]; sbF?; [acq & r]) & incl & ~wi
//! let bar_sw(r) = (entry_fence * exit_fence) & same_B & ~wi & wg & r^2
//! let scf = mo_sc^2 | (G & L & F)^2
//! let gsw = ra_sw(G) | bar_sw(G) | (scf & ra_sw(L))
//! let lsw = ra_sw(L) | bar_sw(L) | (scf & ra_sw(G))
//! ```

use super::inclusive_scope::incl_at;
use super::release_sequence;
use super::{Ctx, Phase};
use crate::graph::Kind;
use clmm_atomic::{FenceFlags, Scope};

/// The region of a synchronisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reg {
    /// Global (`G`).
    G,
    /// Local (`L`).
    L,
}

fn in_region(ctx: &Ctx<'_>, e: usize, r: Reg) -> bool {
    match r {
        Reg::G => ctx.attr[e].g,
        Reg::L => ctx.attr[e].l,
    }
}

/// `ra_sw(r)`: pairs (release end, acquire end).
pub fn ra_sw(ctx: &Ctx<'_>, r: Reg, phase: Phase) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut members = Vec::new();
    // For each head W (atomic write, not work-item scope), each member W' of
    // rs? in region r, each read R of W' (atomic, not work-item scope).
    for w in 0..ctx.n() {
        let a = &ctx.attr[w];
        if !a.is_write() || a.init || a.order.is_none() || a.scope == Scope::WorkItem || !in_region(ctx, w, r) {
            continue;
        }
        // Release ends: W itself, or release fences of r sequenced before W.
        let mut ends_a: Vec<usize> = Vec::new();
        if a.is_rel() {
            ends_a.push(w);
        }
        let unit = a.unit.expect("non-initial write has a unit").index();
        let first = ctx.index(crate::ids::EventId { unit: crate::ids::UnitId(unit as u32), index: 0 });
        for f in first..w {
            let fa = &ctx.attr[f];
            if fa.is_fence() && fa.is_rel() && in_region(ctx, f, r) {
                ends_a.push(f);
            }
        }
        if ends_a.is_empty() {
            continue;
        }
        release_sequence::members(ctx, w, phase, &mut members);
        members.push(w);
        for &wp in &members {
            for rd in ctx.readers(wp) {
                let ra = &ctx.attr[rd];
                if !ra.is_read() || ra.order.is_none() || ra.scope == Scope::WorkItem {
                    continue;
                }
                // Acquire ends: R itself, or acquire fences of r sequenced after R.
                let ru = ra.unit.expect("read has a unit");
                let unit_len = ctx.graph.units[ru.index()].events.len();
                let rbase = rd - ra.po as usize;
                let mut push_b = |b: usize| {
                    for &x in &ends_a {
                        let local = r == Reg::L;
                        if ctx.attr[x].unit != ctx.attr[b].unit && incl_at(ctx, x, b, local, ctx.attr[wp].loc) {
                            out.push((x, b));
                        }
                    }
                };
                if ra.is_acq() {
                    push_b(rd);
                }
                for f in rd + 1..rbase + unit_len {
                    let fa = &ctx.attr[f];
                    if fa.is_fence() && fa.is_acq() && in_region(ctx, f, r) {
                        push_b(f);
                    }
                }
            }
        }
    }
    out
}

/// `bar_sw(r)`: entry fence of one work-item to the exit fence of another
/// work-item of its group at the same barrier instance, both carrying `r`.
///
/// The entries are grouped by occurrence first (`instance_key`): pairing
/// every entry with every exit made a kernel with barriers in a loop cost
/// O(n^2) in its barrier events at each check. The pairs come sorted, as
/// that double loop gave them.
pub fn bar_sw(ctx: &Ctx<'_>, r: Reg) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut entries: std::collections::HashMap<_, Vec<usize>> = std::collections::HashMap::new();
    for en in (0..ctx.n()).filter(|&e| ctx.attr[e].kind == Kind::BarrierEntry && in_region(ctx, e, r)) {
        if let Some(k) = instance_key(ctx, en) {
            entries.entry(k).or_default().push(en);
        }
    }
    for ex in (0..ctx.n()).filter(|&e| ctx.attr[e].kind == Kind::BarrierExit && in_region(ctx, e, r)) {
        let Some(ens) = instance_key(ctx, ex).and_then(|k| entries.get(&k)) else { continue };
        out.extend(ens.iter().filter(|&&en| same_barrier(ctx, en, ex)).map(|&en| (en, ex)));
    }
    out.sort_unstable();
    out
}

/// A barrier event's occurrence, kind and group (or sub-group): two
/// events are [`same_barrier`] only if their keys are equal (integers:
/// hashing the barrier's call site cost more than the pairing it saves;
/// [`same_barrier`] compares the identities of those with equal keys).
fn instance_key(ctx: &Ctx<'_>, e: usize) -> Option<(u32, clmm_atomic::backend::BarrierKind, u32)> {
    let inst = ctx.graph.ev(ctx.ids[e]).barrier?;
    let unit = &ctx.graph.units[ctx.attr[e].unit?.index()];
    let group = match inst.kind {
        clmm_atomic::backend::BarrierKind::WorkGroup => unit.group()?.0,
        clmm_atomic::backend::BarrierKind::SubGroup => unit.sub_group()?.0,
    };
    Some((inst.seq, inst.kind, group))
}

/// `same_B & ~wi & wg`: the same barrier instance of two different
/// work-items of one group (one sub-group for sub-group barriers).
pub fn same_barrier(ctx: &Ctx<'_>, a: usize, b: usize) -> bool {
    let (x, y) = (&ctx.attr[a], &ctx.attr[b]);
    if x.unit == y.unit {
        return false;
    }
    let (ea, eb) = (ctx.graph.ev(ctx.ids[a]), ctx.graph.ev(ctx.ids[b]));
    let (Some(ia), Some(ib)) = (ea.barrier, eb.barrier) else { return false };
    if ia != ib {
        return false;
    }
    let (ua, ub) = (&ctx.graph.units[x.unit.unwrap().index()], &ctx.graph.units[y.unit.unwrap().index()]);
    match ia.kind {
        clmm_atomic::backend::BarrierKind::WorkGroup => ua.group().is_some() && ua.group() == ub.group(),
        clmm_atomic::backend::BarrierKind::SubGroup => ua.sub_group().is_some() && ua.sub_group() == ub.sub_group(),
    }
}

/// `scf = mo_sc^2 | (G & L & F)^2`: pairs allowed to synchronise on the other
/// region.
pub fn scf(ctx: &Ctx<'_>, a: usize, b: usize) -> bool {
    scf_pair(&ctx.attr[a], &ctx.attr[b])
}

/// [`scf`] on the attributes of the two ends.
pub fn scf_pair(x: &super::Attr, y: &super::Attr) -> bool {
    let both = |z: &super::Attr| z.is_fence() && z.flags.contains(FenceFlags::GLOBAL | FenceFlags::LOCAL);
    (x.is_sc() && y.is_sc()) || (both(x) && both(y))
}
