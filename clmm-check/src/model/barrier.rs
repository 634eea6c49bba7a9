//! Barrier divergence (`opencl.cat`, "Barrier divergence"):
//!
//! ```text
//! let bsw = bar_sw(G) | bar_sw(L)
//! let bd = [entry_fence] & ((~wi & wg);unv) \ (bsw;unv)
//! ```
//!
//! An entry fence of a work-item whose group has other work-items (with
//! events) that synchronises with none of them. clmm's runtime also reports
//! work-items that finish or wait elsewhere (Deviations, 3).
//!
//! The entry fences of work-group and sub-group collectives (`Op::Barrier`
//! with a `collective`) are not checked here: they carry no memory fence
//! (flags empty, see `clmm_atomic`'s collectives), so they synchronise with
//! nobody by construction; their participation is checked by the runtime
//! (every member must reach the same instance, with the same collective).

use super::hb::Relations;
use super::Ctx;
use crate::graph::{Graph, Kind};
use crate::ids::EventId;
use clmm_atomic::backend::BarrierKind;

/// The diverging entry fences.
pub fn divergence(ctx: &Ctx<'_>, rels: &Relations) -> Vec<usize> {
    let mut out = Vec::new();
    for e in 0..ctx.n() {
        if ctx.attr[e].kind != Kind::BarrierEntry {
            continue;
        }
        if subject_to_bd(ctx.graph, ctx.ids[e]) && !rels.bsw.iter().any(|&(a, _)| a == e) {
            out.push(e);
        }
    }
    out
}

/// Whether barrier entry `e` must synchronise with another work-item
/// (`[entry_fence] & ((~wi & wg);unv)`): the units the barrier is among
/// have another with events, and it is not a collective's (which carries
/// no fence). Those units are the work-group for a work-group barrier,
/// and the sub-group for a `sub_group_barrier` (`cl_khr_subgroups`; the
/// model has no sub-group barrier, and `wg` in its place made the barrier
/// of a sub-group of one work-item, the last of a work-group whose size
/// the sub-group size does not divide, diverge:
/// `sub_group_barrier_in_a_sub_group_of_one` in `tests/collectives.rs`).
/// Shared by this module and the vector clocks ([`super::vclock`]).
pub fn subject_to_bd(graph: &Graph, e: EventId) -> bool {
    let ev = &graph.units[e.unit.index()].events[e.index as usize];
    if matches!(ev.op, clmm_atomic::backend::Op::Barrier { collective: Some(_), .. }) {
        return false;
    }
    let kind = ev.barrier.map_or(BarrierKind::WorkGroup, |b| b.kind);
    graph.barrier_members(e.unit, kind).iter().any(|&v| v != e.unit && !graph.units[v.index()].events.is_empty())
}
