//! The SC axiom.
//!
//! `opencl.cat`:
//! ```text
//! let scp = Fsb?; (rb | mo | (ghb | lhb)); sbF?
//! let S_cond1 = ~(unv; [mo_sc \ (s_all & fga)]; unv)
//! let S_cond2 = ~(unv; [mo_sc \ (s_dev & !fga)]; unv)
//! acyclic (mo_sc^2) & scp & (S_cond1|S_cond2) as O-Ssimp
//! ```
//! `opencl_scopedsc.cat`:
//! ```text
//! acyclic (mo_sc^2) & scp & incl as O-Sscoped
//! ```
//! with `rb = (rf^-1; mo) \ id` (`opencl_base.cat`). An RMW is one event in
//! the model and two here; the `rb` edge from an RMW's read part to its own
//! write part is the `\ id` and is left out.
//!
//! This is the explicit model's check (every relation as a bit matrix),
//! the oracle of the views' (`super::vclock`'s submodule `sc`), which
//! decides the axiom on the graphs the views decide.

use super::hb::Relations;
use super::inclusive_scope::{incl, is_local_access};
use super::matrix::Matrix;
use super::{Ctx, Phase, ScModel};
use clmm_atomic::Scope;

/// Whether the SC axiom in force holds. On prefixes, the `opencl.cat`
/// condition is not checked (a later SC event can switch it off).
pub fn holds(ctx: &Ctx<'_>, rels: &Relations, phase: Phase) -> bool {
    let sc: Vec<usize> = (0..ctx.n()).filter(|&e| ctx.attr[e].is_sc()).collect();
    if sc.len() < 2 {
        return true;
    }
    match ctx.sem.sc {
        ScModel::Spec => {
            if phase == Phase::Prefix || !condition(ctx, &sc) {
                return true;
            }
        }
        ScModel::Scoped => {}
    }
    let n = ctx.n();
    // m = rb | mo | ghb | lhb (`ghb` of the location for two accesses to
    // one location: see `Relations::ghb_at`)
    let mut m = Matrix::new(n);
    for a in 0..n {
        for b in 0..n {
            let hb = match (ctx.attr[a].loc, ctx.attr[b].loc) {
                (Some(x), Some(y)) if x == y => rels.hb_at(ctx, x, a, b),
                _ => rels.hb(a, b),
            };
            if hb || ctx.mo(a, b) || rb(ctx, a, b) {
                m.set(a, b);
            }
        }
    }
    // scp between SC events: Fsb?; m; sbF?
    let mut step = Matrix::new(n);
    for &a in &sc {
        let from: Vec<usize> = if ctx.attr[a].is_fence() { (0..n).filter(|&x| x == a || ctx.sb(a, x)).collect() } else { vec![a] };
        for &b in &sc {
            if ctx.sem.sc == ScModel::Scoped {
                let local = is_local_access(ctx, a) && is_local_access(ctx, b);
                if !incl(ctx, a, b, local) {
                    continue;
                }
            }
            let to: Vec<usize> = if ctx.attr[b].is_fence() { (0..n).filter(|&y| y == b || ctx.sb(y, b)).collect() } else { vec![b] };
            if from.iter().any(|&x| to.iter().any(|&y| m.get(x, y))) {
                step.set(a, b);
            }
        }
    }
    step.is_acyclic()
}

/// `rb = (rf^-1; mo) \ id`, without the read part → own write part edge.
/// The write part is the next event of the read part's unit, when it is
/// there: a prefix may end at a read part, and the next dense index is
/// then another unit's first event (until session 48 its `rb` edge was
/// left out, and the scoped axiom missed a cycle the views found:
/// `rb_from_a_read_part_at_the_end_of_its_unit` in
/// `tests/scoped_differential.rs`).
fn rb(ctx: &Ctx<'_>, r: usize, w: usize) -> bool {
    let Some(src) = ctx.attr[r].rf else { return false };
    if ctx.attr[r].rmw && w == r + 1 && ctx.attr[w].unit == ctx.attr[r].unit && ctx.attr[w].kind == crate::graph::Kind::RmwWrite {
        return false;
    }
    ctx.mo(src, w)
}

/// `S_cond1 | S_cond2`: every SC event is all-svm-devices scope on fga
/// memory, or every SC event is device scope on non-fga memory (a fence has
/// no location, so it is never fga).
fn condition(ctx: &Ctx<'_>, sc: &[usize]) -> bool {
    let fga = |e: usize| ctx.attr[e].loc.is_some_and(|l| ctx.locs[l].fga());
    let c1 = sc.iter().all(|&e| ctx.attr[e].scope == Scope::AllSvmDevices && fga(e));
    let c2 = sc.iter().all(|&e| ctx.attr[e].scope == Scope::Device && !fga(e));
    c1 || c2
}
