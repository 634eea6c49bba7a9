//! Data races (`opencl.cat`, `opencl_scopedsc.cat`, "Races"; specification
//! §3.3.7 "data race", including races between non-inclusive scopes):
//!
//! ```text
//! let cnf = ((W * W) | (W * R) | (R * W)) & loc
//! let dr = cnf & ~(ghb | lhb) & ~(ghb | lhb)^-1 & ~wi & ~incl
//! ```
//!
//! With host threads (Deviations, 5), a coarse-grained SVM buffer or a
//! non-SVM buffer is consistent only at synchronisation points (spec
//! excerpt `004_8d269728d13116e5.txt`: "accesses to non-SVM cl_mem buffers
//! and coarse-grained SVM allocations are ordered at synchronization points
//! between host commands"; a map "may overwrite the entire target region"):
//! a host access and a work-item access to the same such buffer, one a
//! write, unordered by ghb, race even on different elements
//! ([`buffer_conflict`]).

use super::hb::Relations;
use super::inclusive_scope::{incl, is_local_access};
use super::Ctx;
use crate::graph::{Graph, LocInfo};
use crate::ids::UnitId;

/// Every racing pair `(a, b)` with `a < b` in dense order.
pub fn races(ctx: &Ctx<'_>, rels: &Relations) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let n = ctx.n();
    let chb = super::hb::command_ghb(ctx, rels);
    for a in 0..n {
        let x = &ctx.attr[a];
        if !(x.is_read() || x.is_write()) {
            continue;
        }
        for b in a + 1..n {
            let y = &ctx.attr[b];
            let whole_buffer = y.loc != x.loc && buffer_conflict(ctx, a, b);
            if (y.loc != x.loc && !whole_buffer) || !(x.is_write() || y.is_write()) || !(y.is_read() || y.is_write()) {
                continue;
            }
            if x.unit.is_some() && x.unit == y.unit {
                continue;
            }
            // (Accesses to two locations got here only as a whole-buffer
            // conflict.)
            let coarse = chb.as_ref().filter(|_| whole_buffer || buffer_conflict(ctx, a, b));
            let ordered = match coarse {
                Some(m) => m.get(a, b) || m.get(b, a),
                None => {
                    let l = x.loc.expect("an access has a location");
                    rels.hb_at(ctx, l, a, b) || rels.hb_at(ctx, l, b, a)
                }
            };
            if ordered {
                continue;
            }
            if !whole_buffer && coarse.is_none() && incl(ctx, a, b, is_local_access(ctx, a)) {
                continue;
            }
            out.push((a, b));
        }
    }
    out
}

/// Accesses `a` and `b` to one coarse-grained SVM or non-SVM global buffer
/// (the same element or two), or to the same element of a fine-grained SVM
/// buffer without atomics support, one by a host thread and one by a
/// work-item.
pub fn buffer_conflict(ctx: &Ctx<'_>, a: usize, b: usize) -> bool {
    let (x, y) = (&ctx.attr[a], &ctx.attr[b]);
    let (Some(la), Some(lb), Some(ua), Some(ub)) = (x.loc, y.loc, x.unit, y.unit) else { return false };
    buffer_conflict_at(ctx.graph, ctx.locs, (la, ua), (lb, ub))
}

/// [`buffer_conflict`] on the (location, unit) of two accesses: the one
/// definition the explicit model and the vector clocks share.
pub fn buffer_conflict_at(graph: &Graph, locs: &[LocInfo], (la, ua): (usize, UnitId), (lb, ub): (usize, UnitId)) -> bool {
    let (ia, ib) = (&locs[la], &locs[lb]);
    if ia.alloc != ib.alloc || ia.fga || ia.region != crate::graph::Region::Global || (ia.fine && la != lb) {
        return false;
    }
    let (ka, kb) = (&graph.units[ua.index()], &graph.units[ub.index()]);
    (ka.is_host() && kb.device().is_some()) || (kb.is_host() && ka.device().is_some())
}

/// Why a racing pair is unordered, in plain words, for reports (the report
/// path only: called once per failure).
///
/// Two atomics race only through non-inclusive scopes; otherwise the
/// explanation looks for the synchronisation the user most likely meant:
/// an rf edge from a write after one access to a read before the other
/// (`ra_sw`), or a barrier between them (`bar_sw`), and says which part of
/// it is missing.
pub fn explain(ctx: &Ctx<'_>, a: usize, b: usize) -> String {
    use clmm_atomic::{FenceFlags, Scope};
    let g = ctx.graph;
    let (x, y) = (&ctx.attr[a], &ctx.attr[b]);
    let who = |i: usize| match ctx.attr[i].unit {
        Some(u) => crate::report::short_unit_name(g, u),
        None => "the initial state".to_string(),
    };
    let ev_name = |i: usize| {
        let id = ctx.ids[i];
        format!("{}.{}", id.unit.0, id.index)
    };
    let scope_gap = |i: usize, j: usize| -> String {
        let (s, t) = (ctx.attr[i].scope, ctx.attr[j].scope);
        if s != t {
            return format!("their scopes differ ({s} and {t})");
        }
        match s {
            Scope::WorkItem => "memory_scope_work_item covers a single work-item".to_string(),
            Scope::SubGroup => "memory_scope_sub_group covers only one sub-group".to_string(),
            Scope::WorkGroup => "memory_scope_work_group covers only one work-group".to_string(),
            Scope::Device => {
                let host = [i, j].iter().any(|&k| ctx.attr[k].unit.is_some_and(|u| g.units[u.index()].is_host()));
                if host {
                    "memory_scope_device covers only one device, and a host thread is in none (use memory_scope_all_svm_devices on fine-grained SVM with atomics)".to_string()
                } else {
                    "memory_scope_device covers only one device (and, on a non-SVM buffer, only one kernel)".to_string()
                }
            }
            Scope::AllSvmDevices => {
                let host = [i, j].iter().any(|&k| ctx.attr[k].unit.is_some_and(|u| g.units[u.index()].is_host()));
                if host {
                    "memory_scope_all_svm_devices includes a host thread only on fine-grained SVM with atomics support (this location is not)".to_string()
                } else {
                    "no happens-before orders them".to_string()
                }
            }
        }
    };
    let local = is_local_access(ctx, a);
    if buffer_conflict(ctx, a, b) && (x.loc != y.loc || x.order.is_none() || y.order.is_none()) {
        if x.loc.is_some_and(|l| ctx.locs[l].fine) {
            return format!(
                "{} and {} access the same element of a fine-grained SVM buffer without atomics support with no synchronisation point between them (enqueue, event wait, finish; SVM atomics do not count, the buffer lacks CL_MEM_SVM_ATOMICS): the host and kernels may read it concurrently and update different elements concurrently, but not the same element",
                who(a),
                who(b)
            );
        }
        let kind = if x.loc.is_some_and(|l| ctx.locs[l].svm) { "coarse-grained SVM buffer" } else { "non-SVM buffer" };
        return format!(
            "{} and {} access the same {kind} with no synchronisation point between them (enqueue, event wait, finish; SVM atomics do not count): such a buffer is consistent only at synchronisation points, so a host access while a kernel that uses it may run conflicts with the whole buffer (use a fine-grained SVM buffer with atomics to share it while the kernel runs)",
            who(a),
            who(b)
        );
    }
    if x.order.is_some() && y.order.is_some() {
        return format!("both are atomic, at {} by {} and at {} by {}, but not inclusive: {}", x.scope, who(a), y.scope, who(b), scope_gap(a, b));
    }
    let region_flag = if local { FenceFlags::LOCAL } else { FenceFlags::GLOBAL };
    let region_name = if local { "local" } else { "global" };
    let n = ctx.n();
    for (p, q) in [(a, b), (b, a)] {
        let (up, uq) = (ctx.attr[p].unit, ctx.attr[q].unit);
        if up.is_none() || uq.is_none() {
            continue;
        }
        // A barrier between them (same group, p before its entry, q after
        // the matching exit).
        let same_group = |a: Option<crate::ids::UnitId>, b: Option<crate::ids::UnitId>| match (a, b) {
            (Some(a), Some(b)) => g.units[a.index()].group().is_some() && g.units[a.index()].group() == g.units[b.index()].group(),
            _ => false,
        };
        for e in 0..n {
            let ea = &ctx.attr[e];
            if ea.unit != up || ea.kind != crate::graph::Kind::BarrierEntry || !ctx.sb(p, e) || !same_group(up, uq) {
                continue;
            }
            let inst = g.ev(ctx.ids[e]).barrier;
            for f in 0..n {
                let fa = &ctx.attr[f];
                if fa.unit != uq || fa.kind != crate::graph::Kind::BarrierExit || !ctx.sb(f, q) || g.ev(ctx.ids[f]).barrier != inst {
                    continue;
                }
                if !ea.flags.contains(region_flag) {
                    return format!(
                        "the barrier between them has flags {} and does not order {region_name} memory (it needs CLK_{}_MEM_FENCE)",
                        ea.flags,
                        region_name.to_uppercase()
                    );
                }
                if !super::inclusive_scope::incl(ctx, e, f, local) {
                    return format!("the barrier between them is not inclusive: {}", scope_gap(e, f));
                }
            }
        }
        // A message: a write after p read by a read before q.
        for r in 0..n {
            let ra = &ctx.attr[r];
            if ra.unit != uq || !ra.is_read() || !(ctx.sb(r, q)) {
                continue;
            }
            let Some(w) = ra.rf else { continue };
            let wa = &ctx.attr[w];
            if wa.unit != up || !ctx.sb(p, w) {
                continue;
            }
            let rel_fence = (0..n).find(|&f| ctx.attr[f].is_fence() && ctx.attr[f].is_rel() && ctx.sb(p, f) && ctx.sb(f, w) && ctx.attr[f].flags.contains(region_flag));
            let acq_fence = (0..n).find(|&f| ctx.attr[f].is_fence() && ctx.attr[f].is_acq() && ctx.sb(r, f) && ctx.sb(f, q) && ctx.attr[f].flags.contains(region_flag));
            let rel = if wa.is_rel() { Some(w) } else { rel_fence };
            let acq = if ra.is_acq() { Some(r) } else { acq_fence };
            let what_w = format!("{} ({} at {})", ev_name(w), wa.order.map(|o| o.to_string()).unwrap_or_else(|| "non-atomic".into()), wa.scope);
            let what_r = format!("{} ({} at {})", ev_name(r), ra.order.map(|o| o.to_string()).unwrap_or_else(|| "non-atomic".into()), ra.scope);
            return match (rel, acq) {
                (None, None) => format!("{what_r} reads {what_w}, but neither is a release/acquire (and no fence makes them one): nothing is published"),
                (None, Some(_)) => format!("{what_r} reads {what_w}, which is not a release (and no release fence with {} comes before it)", region_flag),
                (Some(_), None) => format!("{what_r} reads {what_w}, but is not an acquire (and no acquire fence with {} follows it)", region_flag),
                (Some(rl), Some(aq)) => {
                    if !super::inclusive_scope::incl(ctx, rl, aq, local) {
                        format!(
                            "the release {} at {} by {} and the acquire {} at {} by {} are not inclusive: {}",
                            ev_name(rl),
                            ctx.attr[rl].scope,
                            who(rl),
                            ev_name(aq),
                            ctx.attr[aq].scope,
                            who(aq),
                            scope_gap(rl, aq)
                        )
                    } else {
                        format!("{what_r} reads {what_w}, but the release sequence or the fences do not cover {region_name} memory")
                    }
                }
            };
        }
    }
    if x.unit.is_some() && y.unit.is_some() {
        "no release/acquire pair, fence or barrier orders them".to_string()
    } else {
        "the initial write is ordered before nothing here".to_string()
    }
}
