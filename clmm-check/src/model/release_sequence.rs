//! Release sequences, C11's: `let rs' = wi | (unv; [R & W])` and
//! `let rs = mo & rs' & ~((mo & ~rs') ; mo)` (`opencl_base.cat`, "Release
//! sequence"; specification §3.3.7, spec excerpt `000_71b3c00840afe3ec.txt`).

use super::{Ctx, Phase};

/// `rs'(head, w)`: `w` is by the head's unit or is a read-modify-write.
fn rs_prime(ctx: &Ctx<'_>, head: usize, w: usize) -> bool {
    let (h, x) = (&ctx.attr[head], &ctx.attr[w]);
    (h.unit.is_some() && h.unit == x.unit) || x.rmw
}

/// The members `w` of the release sequence headed by write `head` (not
/// including the head itself: callers use `rs?`).
///
/// With [`Phase::Complete`] this is `rs` exactly: the mo-later writes `w`
/// with `rs'(head, w)` and no write between them failing `rs'`. With
/// [`Phase::Prefix`] it is `rs_min`: only the chains of RMWs each reading
/// from the previous one, which no coherence placement in a consistent
/// extension can cut (an RMW reads its immediate co-predecessor, `O-Rmw`).
pub fn members(ctx: &Ctx<'_>, head: usize, phase: Phase, out: &mut Vec<usize>) {
    out.clear();
    let Some(l) = ctx.attr[head].loc else { return };
    if ctx.nonatomic(l) {
        return;
    }
    let co = &ctx.co[l];
    let start = ctx.co_pos[head];
    match phase {
        Phase::Complete => {
            for &w in &co[start + 1..] {
                if !rs_prime(ctx, head, w) {
                    break;
                }
                out.push(w);
            }
        }
        Phase::Prefix => {
            // RMW write parts whose read part reads from the head or from a
            // member, in coherence order.
            let mut cur = head;
            for &w in &co[start + 1..] {
                if !ctx.attr[w].rmw {
                    break;
                }
                let read = w - 1; // the read part precedes the write part
                if ctx.attr[read].rf != Some(cur) {
                    break;
                }
                out.push(w);
                cur = w;
            }
        }
    }
}
