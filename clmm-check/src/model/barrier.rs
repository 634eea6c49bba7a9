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
use crate::graph::Kind;

/// The diverging entry fences.
pub fn divergence(ctx: &Ctx<'_>, rels: &Relations) -> Vec<usize> {
    let mut out = Vec::new();
    for e in 0..ctx.n() {
        if ctx.attr[e].kind != Kind::BarrierEntry {
            continue;
        }
        let unit = ctx.attr[e].unit.expect("barrier has a unit");
        let op = &ctx.graph.units[unit.index()].events[ctx.attr[e].po as usize].op;
        if matches!(op, clmm_atomic::backend::Op::Barrier { collective: Some(_), .. }) {
            continue;
        }
        let Some(group) = ctx.graph.units[unit.index()].group() else { continue };
        let others = ctx.graph.groups[group.0 as usize]
            .units
            .iter()
            .any(|&v| v != unit && !ctx.graph.units[v.index()].events.is_empty());
        if others && !rels.bsw.iter().any(|&(a, _)| a == e) {
            out.push(e);
        }
    }
    out
}
