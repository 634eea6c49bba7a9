//! Data races (`opencl.cat`, `opencl_scopedsc.cat`, "Races"; specification
//! §3.3.7 "data race", including races between non-inclusive scopes):
//!
//! ```text
//! let cnf = ((W * W) | (W * R) | (R * W)) & loc
//! let dr = cnf & ~(ghb | lhb) & ~(ghb | lhb)^-1 & ~wi & ~incl
//! ```

use super::hb::Relations;
use super::inclusive_scope::{incl, is_local_access};
use super::Ctx;

/// Every racing pair `(a, b)` with `a < b` in dense order.
pub fn races(ctx: &Ctx<'_>, rels: &Relations) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let n = ctx.n();
    for a in 0..n {
        let x = &ctx.attr[a];
        if !(x.is_read() || x.is_write()) {
            continue;
        }
        for b in a + 1..n {
            let y = &ctx.attr[b];
            if y.loc != x.loc || !(x.is_write() || y.is_write()) || !(y.is_read() || y.is_write()) {
                continue;
            }
            if x.unit.is_some() && x.unit == y.unit {
                continue;
            }
            if rels.hb(a, b) || rels.hb(b, a) {
                continue;
            }
            if incl(ctx, a, b, is_local_access(ctx, a)) {
                continue;
            }
            out.push((a, b));
        }
    }
    out
}
