//! Inclusive scopes: `let incl = wg & s_wg^2 | dev & s_dev^2 | s_all^2`
//! (`opencl_base.cat`, "Inclusive scopes"; specification §3.3.5 and the
//! data-race paragraph of §3.3.7, spec excerpt `000_71b3c00840afe3ec.txt`).

use super::{Ctx, Region};
use clmm_atomic::Scope;

/// Whether events `a` and `b` have inclusive scopes: the same scope, and
/// both units inside one instance of it.
///
/// In clmm's own semantics (not in compatibility mode), `SubGroup` is
/// inclusive within one sub-group (deviation 1), and on local memory scopes
/// wider than `WorkGroup` act as `WorkGroup` (deviation 2, `local` true).
pub fn incl(ctx: &Ctx<'_>, a: usize, b: usize, local: bool) -> bool {
    let (x, y) = (&ctx.attr[a], &ctx.attr[b]);
    let clamp = |s: Scope| if local && !ctx.sem.compat && s > Scope::WorkGroup { Scope::WorkGroup } else { s };
    let (sa, sb) = (clamp(x.scope), clamp(y.scope));
    if sa != sb {
        return false;
    }
    let (Some(ua), Some(ub)) = (x.unit, y.unit) else { return false };
    let (ua, ub) = (&ctx.graph.units[ua.index()], &ctx.graph.units[ub.index()]);
    match sa {
        Scope::WorkItem => false,
        Scope::SubGroup => !ctx.sem.compat && ua.sub_group().is_some() && ua.sub_group() == ub.sub_group(),
        Scope::WorkGroup => ua.group().is_some() && ua.group() == ub.group(),
        Scope::Device => ua.device().is_some() && ua.device() == ub.device(),
        Scope::AllSvmDevices => true,
    }
}

/// Whether the location of access `a` is in local memory.
pub fn is_local_access(ctx: &Ctx<'_>, a: usize) -> bool {
    ctx.attr[a].loc.is_some_and(|l| matches!(ctx.locs[l].region, Region::Local(_)))
}
