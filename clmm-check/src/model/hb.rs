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
    /// `ghb` on fine-grained SVM locations, when it differs from `ghb`:
    /// with the device-side form of rule 1 ([`super::host`]), a
    /// work-item's enqueue of a command is ghb-before the command only for
    /// fine-grained SVM memory.
    pub ghb_fine: Option<Matrix>,
    /// `lhb`
    pub lhb: Matrix,
    /// `gsw` pairs (for reports)
    pub gsw: Vec<(usize, usize)>,
    /// `lsw` pairs (for reports)
    pub lsw: Vec<(usize, usize)>,
    /// `bar_sw(G) | bar_sw(L)` pairs (for `bd`)
    pub bsw: Vec<(usize, usize)>,
}

/// The synchronises-with edges of one graph, before closure.
#[derive(PartialEq, Eq)]
pub struct SwEdges {
    gsw: Vec<(usize, usize)>,
    lsw: Vec<(usize, usize)>,
    bsw: Vec<(usize, usize)>,
}

impl Relations {
    /// Compute `ghb` and `lhb` (with `rs` or `rs_min`, see [`Phase`]).
    pub fn compute(ctx: &Ctx<'_>, phase: Phase) -> Relations {
        Relations::close(ctx, Relations::edges(ctx, phase))
    }

    /// `gsw`, `lsw` and the barrier edges (with `rs` or `rs_min`).
    pub fn edges(ctx: &Ctx<'_>, phase: Phase) -> SwEdges {
        let ra_g = sw::ra_sw(ctx, Reg::G, phase);
        let ra_l = sw::ra_sw(ctx, Reg::L, phase);
        let bar_g = sw::bar_sw(ctx, Reg::G);
        let bar_l = sw::bar_sw(ctx, Reg::L);
        let mut gsw: Vec<(usize, usize)> = ra_g.iter().chain(&bar_g).copied().collect();
        gsw.extend(super::host::wait_edges(ctx));
        gsw.extend(ra_l.iter().filter(|&&(a, b)| sw::scf(ctx, a, b)).copied());
        let mut lsw: Vec<(usize, usize)> = ra_l.iter().chain(&bar_l).copied().collect();
        lsw.extend(ra_g.iter().filter(|&&(a, b)| sw::scf(ctx, a, b)).copied());
        let mut bsw = bar_g;
        bsw.extend(bar_l);
        SwEdges { gsw, lsw, bsw }
    }

    /// `ghb` and `lhb` from the edges.
    pub fn close(ctx: &Ctx<'_>, e: SwEdges) -> Relations {
        let ghb = closure(ctx, |a| a.g, &e.gsw, Creators::Host);
        let g = ctx.graph;
        let device_enqueue = (0..g.units.len()).any(|u| g.device_enqueued(crate::ids::UnitId(u as u32)));
        let ghb_fine = device_enqueue.then(|| closure(ctx, |a| a.g, &e.gsw, Creators::Fine));
        let lhb = closure(ctx, |a| a.l, &e.lsw, Creators::None);
        Relations { ghb, ghb_fine, lhb, gsw: e.gsw, lsw: e.lsw, bsw: e.bsw }
    }

    /// `ghb | lhb`, for two events that touch no location or a location
    /// other than fine-grained SVM.
    pub fn hb(&self, a: usize, b: usize) -> bool {
        self.ghb.get(a, b) || self.lhb.get(a, b)
    }

    /// The `ghb` that orders accesses to location `l`: with the device-side
    /// enqueue edges when `l` is fine-grained SVM.
    pub fn ghb_at(&self, ctx: &Ctx<'_>, l: usize) -> &Matrix {
        match &self.ghb_fine {
            Some(m) if ctx.locs[l].fine() => m,
            _ => &self.ghb,
        }
    }

    /// `ghb | lhb` between two accesses to location `l`.
    pub fn hb_at(&self, ctx: &Ctx<'_>, l: usize, a: usize, b: usize) -> bool {
        self.ghb_at(ctx, l).get(a, b) || self.lhb.get(a, b)
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
    let crosses = |&(a, b): &(usize, usize)| ctx.attr[a].unit.zip(ctx.attr[b].unit).is_some_and(|(u, v)| g.host_and_device(u, v));
    if !rels.gsw.iter().any(crosses) {
        return None;
    }
    let sw: Vec<(usize, usize)> = rels.gsw.iter().filter(|p| !crosses(p)).copied().collect();
    Some(closure(ctx, |a| a.g, &sw, Creators::Host))
}

/// The join that waits for the units launch `p` created: the first
/// [`Kind::Join`] after it in its host's program order (`None` when `p` is
/// not a launch, or the host has not joined yet).
pub fn join_of_launch(graph: &crate::graph::Graph, p: crate::ids::EventId) -> Option<crate::ids::EventId> {
    let host = &graph.units[p.unit.index()];
    if host.events[p.index as usize].kind != Kind::Launch {
        return None;
    }
    let j = host.events.iter().skip(p.index as usize + 1).position(|e| e.kind == Kind::Join)?;
    Some(crate::ids::EventId { unit: p.unit, index: p.index + 1 + j as u32 })
}

/// Which creator edges (a unit's creating event before its first event of
/// the region, its last before the join of a launch) a closure has.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Creators {
    /// None (`lhb`: creations order no local memory).
    None,
    /// Those of launches, spawns and host enqueues (`ghb`).
    Host,
    /// Those and the device-side enqueues, which order only fine-grained
    /// SVM memory (rule 1: "for device-side queues, global memory updates
    /// sequenced-before X happen-before C reads or writes to those memory
    /// locations only in the case of fine-grained SVM").
    Fine,
}

fn closure(ctx: &Ctx<'_>, region: impl Fn(&super::Attr) -> bool, sw: &[(usize, usize)], creators: Creators) -> Matrix {
    let host = creators != Creators::None;
    let n = ctx.n();
    let inits = ctx.locs.len();
    // The edges whose transitive closure is the relation: program order
    // within the region as a chain of immediate successors (sb is
    // transitive), the host's launch and join edges to the first and from
    // the last event of each kernel unit in the region, and `sw`. The
    // initial writes (`I * !I`) are added at the end: they precede every
    // other event of the region and have no predecessor.
    let mut edges: Vec<(u32, u32)> = Vec::with_capacity(n + sw.len());
    for (u, unit) in ctx.graph.units.iter().enumerate() {
        let base = ctx.index(crate::ids::EventId { unit: crate::ids::UnitId(u as u32), index: 0 });
        let mut first: Option<usize> = None;
        let mut prev: Option<usize> = None;
        for i in 0..unit.events.len() {
            let e = base + i;
            if region(&ctx.attr[e]) {
                if let Some(p) = prev {
                    edges.push((p as u32, e as u32));
                }
                first.get_or_insert(e);
                prev = Some(e);
            }
        }
        if host {
            if let (Some(p), Some(first), Some(last)) = (unit.parent, first, prev) {
                if creators == Creators::Fine || !ctx.graph.device_enqueued(crate::ids::UnitId(u as u32)) {
                    edges.push((ctx.index(p) as u32, first as u32));
                }
                // The join after a launch waits for this unit.
                if let Some(join) = join_of_launch(ctx.graph, p) {
                    edges.push((last as u32, ctx.index(join) as u32));
                }
            }
        }
    }
    edges.extend(sw.iter().map(|&(a, b)| (a as u32, b as u32)));
    // (A cycle is an inconsistent graph, closed all the same.)
    let mut m = Matrix::closure(n, &mut edges);
    if n == 0 {
        return m;
    }
    let words = m.row(0).len();
    let mut after_init = vec![0u64; words];
    for j in inits..n {
        if region(&ctx.attr[j]) {
            for (x, v) in after_init.iter_mut().zip(m.row(j)) {
                *x |= v;
            }
            after_init[j / 64] |= 1 << (j % 64);
        }
    }
    for i in 0..inits {
        if region(&ctx.attr[i]) {
            m.set_row(i, &after_init);
        }
    }
    m
}
