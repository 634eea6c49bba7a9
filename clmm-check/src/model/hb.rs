//! Global and local happens-before (`opencl_base.cat`, "Happens-before"):
//!
//! ```text
//! let ghb = (((G^2) & (sb | (I * !I))) | gsw)+
//! let lhb = (((L^2) & (sb | (I * !I))) | lsw)+
//! ```
//!
//! plus clmm's host edges (Deviations, 5): the event that created a unit
//! (a launch, an enqueue, a spawn) is ghb-before every global event of the
//! unit; a kernel's work-items' global events are ghb-before the join of
//! their launch; and the waits of [`super::host`] (command starts, event
//! waits, `finish`, thread joins) are gsw edges.

use super::matrix::Matrix;
use super::sw::{self, Reg};
use super::{Ctx, Phase};
use crate::graph::Kind;

/// The happens-before relations of one graph, transitively closed.
pub struct Relations {
    /// `ghb`
    pub ghb: Matrix,
    /// `lhb`
    pub lhb: Matrix,
    /// `gsw` pairs (for reports)
    pub gsw: Vec<(usize, usize)>,
    /// `lsw` pairs (for reports)
    pub lsw: Vec<(usize, usize)>,
    /// `bar_sw(G) | bar_sw(L)` pairs (for `bd`)
    pub bsw: Vec<(usize, usize)>,
}

impl Relations {
    /// Compute `ghb` and `lhb` (with `rs` or `rs_min`, see [`Phase`]).
    pub fn compute(ctx: &Ctx<'_>, phase: Phase) -> Relations {
        let ra_g = sw::ra_sw(ctx, Reg::G, phase);
        let ra_l = sw::ra_sw(ctx, Reg::L, phase);
        let bar_g = sw::bar_sw(ctx, Reg::G);
        let bar_l = sw::bar_sw(ctx, Reg::L);
        let mut gsw: Vec<(usize, usize)> = ra_g.iter().chain(&bar_g).copied().collect();
        gsw.extend(super::host::wait_edges(ctx));
        gsw.extend(ra_l.iter().filter(|&&(a, b)| sw::scf(ctx, a, b)).copied());
        let mut lsw: Vec<(usize, usize)> = ra_l.iter().chain(&bar_l).copied().collect();
        lsw.extend(ra_g.iter().filter(|&&(a, b)| sw::scf(ctx, a, b)).copied());
        let ghb = closure(ctx, |a| a.g, &gsw, true);
        let lhb = closure(ctx, |a| a.l, &lsw, false);
        let mut bsw = bar_g;
        bsw.extend(bar_l);
        Relations { ghb, lhb, gsw, lsw, bsw }
    }

    /// `ghb | lhb`
    pub fn hb(&self, a: usize, b: usize) -> bool {
        self.ghb.get(a, b) || self.lhb.get(a, b)
    }
}

/// `ghb` without the synchronisation between host threads and work-items
/// through atomics: what orders the accesses of a host thread and a
/// work-item to a non-SVM or coarse-grained buffer, which are consistent
/// only at synchronisation points (Deviations, 5; spec excerpt
/// `004_8d269728d13116e5.txt`: "although coarse-grained buffer SVM
/// allocations may support atomic operations, visibility on these
/// allocations is not guaranteed except at map and unmap operations").
/// `None` when no such synchronisation exists (then it is `ghb`).
pub fn command_ghb(ctx: &Ctx<'_>, rels: &Relations) -> Option<Matrix> {
    let g = ctx.graph;
    let host = |e: usize| ctx.attr[e].unit.map(|u| g.units[u.index()].is_host());
    let item = |e: usize| ctx.attr[e].unit.is_some_and(|u| g.units[u.index()].device().is_some());
    let crosses = |&(a, b): &(usize, usize)| (host(a) == Some(true) && item(b)) || (item(a) && host(b) == Some(true));
    if !rels.gsw.iter().any(crosses) {
        return None;
    }
    let sw: Vec<(usize, usize)> = rels.gsw.iter().filter(|p| !crosses(p)).copied().collect();
    Some(closure(ctx, |a| a.g, &sw, true))
}

fn closure(ctx: &Ctx<'_>, region: impl Fn(&super::Attr) -> bool, sw: &[(usize, usize)], host: bool) -> Matrix {
    let n = ctx.n();
    let mut m = Matrix::new(n);
    let inits = ctx.locs.len();
    // (R^2) & (sb | (I * !I)): program order is transitive, so the immediate
    // successor within the region suffices after closure.
    for i in 0..inits {
        if region(&ctx.attr[i]) {
            for j in inits..n {
                if region(&ctx.attr[j]) {
                    m.set(i, j);
                }
            }
        }
    }
    for (u, unit) in ctx.graph.units.iter().enumerate() {
        let base = ctx.index(crate::ids::EventId { unit: crate::ids::UnitId(u as u32), index: 0 });
        let mut prev: Option<usize> = None;
        for i in 0..unit.events.len() {
            let e = base + i;
            if region(&ctx.attr[e]) {
                if let Some(p) = prev {
                    m.set(p, e);
                }
                prev = Some(e);
            }
        }
        if host {
            if let Some(p) = unit.parent {
                let launch = ctx.index(p);
                for i in 0..unit.events.len() {
                    if region(&ctx.attr[base + i]) {
                        m.set(launch, base + i);
                    }
                }
                // The join after a launch waits for this unit.
                let host = &ctx.graph.units[p.unit.index()];
                let launched = host.events[p.index as usize].kind == Kind::Launch;
                if let Some(j) = host.events.iter().skip(p.index as usize + 1).position(|e| e.kind == Kind::Join).filter(|_| launched) {
                    let join = ctx.index(crate::ids::EventId { unit: p.unit, index: p.index + 1 + j as u32 });
                    for i in 0..unit.events.len() {
                        if region(&ctx.attr[base + i]) {
                            m.set(base + i, join);
                        }
                    }
                }
            }
        }
    }
    for &(a, b) in sw {
        m.set(a, b);
    }
    m.close();
    m
}
