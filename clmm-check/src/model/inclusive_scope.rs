//! Inclusive scopes: `let incl = wg & s_wg^2 | dev & s_dev^2 | s_all^2`
//! (`opencl_base.cat`, "Inclusive scopes"; specification §3.3.5 and the
//! data-race paragraph of §3.3.7, spec excerpt `000_71b3c00840afe3ec.txt`).

use super::{Ctx, Region, Semantics};
use crate::graph::{Graph, LocInfo};
use crate::ids::UnitId;
use clmm_atomic::Scope;

/// Whether events `a` and `b` have inclusive scopes: the same scope, and
/// both units inside one instance of it.
///
/// In clmm's own semantics (not in compatibility mode), `SubGroup` is
/// inclusive within one sub-group (deviation 1), and on local memory scopes
/// wider than `WorkGroup` act as `WorkGroup` (deviation 2, `local` true).
/// The location the pair synchronises or races on is that of `a` or `b`
/// (see [`incl_at`]).
pub fn incl(ctx: &Ctx<'_>, a: usize, b: usize, local: bool) -> bool {
    incl_at(ctx, a, b, local, None)
}

/// [`incl`] for a pair that synchronises or races on location `loc` (by
/// default the location of `a` or `b`; a fence has none). With host threads
/// and several kernels (Deviations, 5; specification §3.3.5, the scope
/// list: "memory_scope_device ... when A and B apply to an SVM allocation,
/// or A and B are executed by work-items in the same kernel ... when A and
/// B apply to a cl_mem buffer"; "memory_scope_all_svm_devices ... if A and
/// B are executed by host threads or by work-items executing on one or
/// more devices that can share SVM memory with each other and the host
/// process"; and the SVM paragraph: "if these conditions are met
/// [fine-grained SVM with atomics support] the host operations apply at
/// all_svm_devices scope"):
///
/// * a host thread is in no device: only `AllSvmDevices` can be inclusive
///   with it, and only on fine-grained SVM with atomics support (`fga`);
/// * `Device` scope between work-items of two different kernels on one
///   device is inclusive only on SVM memory, not on a `cl_mem` buffer,
///   unless one kernel enqueued the other, directly or through its
///   children (device-side enqueue: "atomic operations from different
///   kernel instances, including a parent kernel and any number of child
///   kernels enqueued by that kernel, to access shared or disjoint
///   locations in a single cl_mem object" are guaranteed, spec excerpt
///   `004_8d269728d13116e5.txt`; clmm takes a whole family, siblings
///   included).
pub fn incl_at(ctx: &Ctx<'_>, a: usize, b: usize, local: bool, loc: Option<usize>) -> bool {
    let (x, y) = (&ctx.attr[a], &ctx.attr[b]);
    let (Some(ua), Some(ub)) = (x.unit, y.unit) else { return false };
    inclusive(ctx.graph, ctx.locs, ctx.sem, (x.scope, ua), (y.scope, ub), local, loc.or(x.loc).or(y.loc))
}

/// [`incl_at`] on two (scope, unit) ends of a graph: the one definition
/// that the explicit model and the vector clocks ([`super::vclock`]) share.
pub fn inclusive(graph: &Graph, locs: &[LocInfo], sem: Semantics, (sa, ua): (Scope, UnitId), (sb, ub): (Scope, UnitId), local: bool, loc: Option<usize>) -> bool {
    let clamp = |s: Scope| if local && !sem.compat && s > Scope::WorkGroup { Scope::WorkGroup } else { s };
    let (sa, sb) = (clamp(sa), clamp(sb));
    if sa != sb {
        return false;
    }
    let (ui, uj) = (ua, ub);
    let (ua, ub) = (&graph.units[ua.index()], &graph.units[ub.index()]);
    match sa {
        Scope::WorkItem => false,
        Scope::SubGroup => !sem.compat && ua.sub_group().is_some() && ua.sub_group() == ub.sub_group(),
        Scope::WorkGroup => ua.group().is_some() && ua.group() == ub.group(),
        Scope::Device => {
            ua.device().is_some()
                && ua.device() == ub.device()
                && (ua.parent == ub.parent || loc.is_some_and(|l| locs[l].svm()) || graph.kernel_root(ui) == graph.kernel_root(uj))
        }
        Scope::AllSvmDevices => !(ua.is_host() || ub.is_host()) || loc.is_some_and(|l| locs[l].fga()),
    }
}

/// Whether no other unit can ever be inclusive with unit `u` at scope `s`
/// (so no `sw` edge joins an event of `u` at that scope to another
/// unit's): `WorkItem` scope, or a sub-group or work-group that holds `u`
/// alone (the instance [`inclusive`] requires both ends in; on local
/// memory wider scopes act as `WorkGroup`, whose instance is the same
/// group). Wider scopes are taken as never alone.
pub fn alone(graph: &Graph, u: UnitId, s: Scope) -> bool {
    let unit = &graph.units[u.index()];
    match s {
        Scope::WorkItem => true,
        Scope::SubGroup => unit.sub_group().is_some_and(|sg| graph.sub_groups.get(sg.0 as usize).is_some_and(|m| m.len() == 1)),
        Scope::WorkGroup => unit.group().is_some_and(|g| graph.groups.get(g.0 as usize).is_some_and(|m| m.units.len() == 1)),
        Scope::Device | Scope::AllSvmDevices => false,
    }
}

/// Whether the location of access `a` is in local memory.
pub fn is_local_access(ctx: &Ctx<'_>, a: usize) -> bool {
    ctx.attr[a].loc.is_some_and(|l| matches!(ctx.locs[l].region, Region::Local(_)))
}
