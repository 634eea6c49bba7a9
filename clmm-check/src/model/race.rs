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
use crate::graph::{Graph, LocInfo, Region};
use crate::ids::UnitId;

/// Every racing pair `(a, b)` with `a < b` in dense order: [`race_pairs`]
/// on the accesses, ordered by the relations of `rels` and, when host
/// threads and work-items synchronise through atomics, by
/// [`super::hb::command_ghb`] for buffer conflicts.
pub fn races(ctx: &Ctx<'_>, rels: &Relations) -> Vec<(usize, usize)> {
    let chb = super::hb::command_ghb(ctx, rels);
    let dense: Vec<usize> = (0..ctx.n()).filter(|&a| ctx.attr[a].is_read() || ctx.attr[a].is_write()).collect();
    let accs: Vec<Access> = dense
        .iter()
        .map(|&a| {
            let x = &ctx.attr[a];
            Access { unit: x.unit, loc: x.loc.expect("an access has a location"), write: x.is_write() }
        })
        .collect();
    let hb = |i: usize, j: usize, by: PairHb| {
        let (a, b) = (dense[i], dense[j]);
        match by {
            PairHb::At(l) => rels.hb_at(ctx, l, a, b),
            PairHb::Points => chb.as_ref().expect("asked only with command_ghb").get(a, b),
        }
    };
    let inclusive = |i: usize, j: usize| incl(ctx, dense[i], dense[j], is_local_access(ctx, dense[i]));
    race_pairs(ctx.graph, ctx.locs, &accs, chb.is_some(), false, hb, inclusive).into_iter().map(|(i, j)| (dense[i], dense[j])).collect()
}

/// An access as [`race_pairs`] sees it.
#[derive(Clone, Copy, Debug)]
pub struct Access {
    /// Its unit (`None`: an initial write, which is in none).
    pub unit: Option<UnitId>,
    /// Its location.
    pub loc: usize,
    /// A write (`W`: initial writes included).
    pub write: bool,
}

/// The happens-before that orders a candidate pair of [`race_pairs`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PairHb {
    /// `ghb | lhb` at the location (that of the pair's first access), as
    /// [`Relations::hb_at`]: two accesses it leaves unordered race unless
    /// they are inclusive.
    At(usize),
    /// [`super::hb::command_ghb`]: a host thread's and a work-item's
    /// accesses to one coarse-grained or non-SVM buffer
    /// ([`buffer_conflict_at`]) when host threads and work-items also
    /// synchronise through atomics, which order no such buffer; two
    /// accesses it leaves unordered race whatever their scopes.
    Points,
}

/// The indices of `accs` sorted by location, then unit (an initial
/// write, in none, first), each unit's in the order of `accs`: counted
/// into buckets by location (a comparison sort was 5% of a tree
/// reduction's instructions), each bucket then sorted by unit only if its
/// accesses are not already (the views list them unit by unit).
fn by_location_and_unit(accs: &[Access]) -> Vec<usize> {
    let unit = |a: &Access| a.unit.map_or(0, |u| u64::from(u.0) + 1);
    if accs.is_sorted_by_key(|a| (a.loc, unit(a))) {
        // One location, or each unit's accesses to one.
        return (0..accs.len()).collect();
    }
    let locs = accs.iter().map(|a| a.loc + 1).max().unwrap_or(0);
    let mut start = vec![0usize; locs + 1];
    for a in accs {
        start[a.loc + 1] += 1;
    }
    for l in 0..locs {
        start[l + 1] += start[l];
    }
    let mut next = start.clone();
    let mut order = vec![0usize; accs.len()];
    for (i, a) in accs.iter().enumerate() {
        order[next[a.loc]] = i;
        next[a.loc] += 1;
    }
    for l in 0..locs {
        let bucket = &mut order[start[l]..start[l + 1]];
        if !bucket.is_sorted_by_key(|&i| unit(&accs[i])) {
            bucket.sort_by_key(|&i| unit(&accs[i]));
        }
    }
    order
}

/// `dr` (`opencl.cat`, "Races", quoted in the module documentation) over
/// `accs`, listed initial writes first: the pairs `(i, j)` of indices into
/// `accs`, `i < j`, in the order of `accs` (by `i`, then `j`), that
///
/// * conflict (`cnf`): at least one writes, and both access one location
///   or, a whole-buffer conflict, two of one buffer shared by a host
///   thread and a work-item ([`buffer_conflict_at`]);
/// * are in different units (`~wi`; an initial write is in none);
/// * are unordered: neither `hb(i, j, by)` nor `hb(j, i, by)`, where `by`
///   is [`PairHb::Points`] for a buffer conflict when `points` (host
///   threads and work-items synchronise through atomics), otherwise
///   [`PairHb::At`] the location of `i`;
/// * are not inclusive (`~incl`): `inclusive(i, j)`, asked only of two
///   accesses by units to one location, ordered by [`PairHb::At`] (a
///   whole-buffer conflict races whatever the scopes).
///
/// The one definition that the explicit model ([`races`]) and the vector
/// clocks ([`super::vclock`]) share: `CLMM_CROSSCHECK` compares their
/// lists.
///
/// `hb_has_po`: `hb(i, j, PairHb::At(_))` contains each unit's program
/// order between its accesses whatever the location (the views' `ghb |
/// lhb`; the accesses of a unit are listed in program order): without
/// `points`, a host access's partners in a whole-buffer conflict are then
/// found by bisection over each host unit's accesses to the buffer.
#[allow(clippy::too_many_arguments)]
pub fn race_pairs(
    graph: &Graph,
    locs: &[LocInfo],
    accs: &[Access],
    points: bool,
    hb_has_po: bool,
    hb: impl FnMut(usize, usize, PairHb) -> bool,
    mut inclusive: impl FnMut(usize, usize) -> bool,
) -> Vec<(usize, usize)> {
    // Asked by `pair` and by the bisection below.
    let hb = std::cell::RefCell::new(hb);
    let hb = |i: usize, j: usize, by: PairHb| (hb.borrow_mut())(i, j, by);
    let conflict = |x: &Access, y: &Access| match (x.unit, y.unit) {
        (Some(ua), Some(ub)) => buffer_conflict_at(graph, locs, (x.loc, ua), (y.loc, ub)),
        _ => false,
    };
    let mut out = Vec::new();
    let mut pair = |i: usize, j: usize| {
        let (x, y) = (&accs[i], &accs[j]);
        // An initial write happens before every other event of its
        // location's region (`I * !I` in `ghb` and `lhb`, `opencl_base.cat` lines 68-69),
        // so it races only on an unqualified location: a loop of n
        // accesses asked hb of n such pairs at every complete execution.
        if (x.unit.is_none() || y.unit.is_none()) && locs[x.loc].region != Region::Unqualified {
            return;
        }
        // (Accesses to two locations are candidates only as a
        // whole-buffer conflict.)
        let whole_buffer = x.loc != y.loc;
        if whole_buffer && !conflict(x, y) {
            return;
        }
        let by = if points && (whole_buffer || conflict(x, y)) { PairHb::Points } else { PairHb::At(x.loc) };
        // Inclusive scopes first: cheaper than hb, and they exempt
        // most pairs of atomics.
        if !whole_buffer && by != PairHb::Points && x.unit.is_some() && y.unit.is_some() && inclusive(i, j) {
            return;
        }
        if !(hb(i, j, by) || hb(j, i, by)) {
            out.push((i, j));
        }
    };
    // The candidates are enumerated without looking at every pair: a
    // kernel's loop of n accesses made each execution's check O(n^2).
    // Two accesses to one location: the accesses sorted by location, then
    // unit (an initial write, in none, first); each write with the
    // accesses of the location's other units (two writes once, from the
    // first). A handful of accesses are simply all paired.
    if accs.len() <= SMALL {
        for i in 0..accs.len() {
            for j in i + 1..accs.len() {
                let (x, y) = (&accs[i], &accs[j]);
                if x.loc == y.loc && (x.write || y.write) && (x.unit.is_none() || x.unit != y.unit) {
                    pair(i, j);
                }
            }
        }
    } else {
        let order = by_location_and_unit(accs);
        let mut units: Vec<(usize, usize)> = Vec::new();
        for at in order.chunk_by(|&a, &b| accs[a].loc == accs[b].loc) {
            // The initial write (first) pairs with nothing but on an
            // unqualified location (`pair`).
            let init = accs[at[0]].unit.is_none() && locs[accs[at[0]].loc].region != Region::Unqualified;
            let at = &at[usize::from(init)..];
            // Reads pair only with writes: a location only read (an input
            // buffer) has no pair.
            if !at.iter().any(|&i| accs[i].write) {
                continue;
            }
            // `at[us..ue]`: one unit's accesses to the location.
            // Each unit's accesses to the location: `at[s..e]`, found once.
            units.clear();
            for mine in at.chunk_by(|a, b| accs[*a].unit == accs[*b].unit) {
                let s = units.last().map_or(0, |u| u.1);
                units.push((s, s + mine.len()));
            }
            for (k, &(us, ue)) in units.iter().enumerate() {
                for &i in at[us..ue].iter().filter(|&&i| accs[i].write) {
                    for theirs in units.iter().enumerate().filter(|&(o, _)| o != k).map(|(_, &(s, e))| &at[s..e]) {
                        // One other unit's accesses, in program order:
                        // those that happen before `i` are a prefix of
                        // them and those `i` happens before a suffix
                        // (`sb` is in the `hb` of the location's region),
                        // so only the middle can race. Pairing `i` with
                        // every one made a loop of n accesses to a
                        // location by two work-items (each reading what
                        // the other wrote, between barriers) O(n^2) a
                        // complete execution. A whole-buffer conflict
                        // (`points`) orders pairs by another relation, and
                        // herd's unqualified locations are in no region:
                        // all of them are paired.
                        let middle = if points || locs[accs[i].loc].region == Region::Unqualified {
                            0..theirs.len()
                        } else {
                            let by = PairHb::At(accs[i].loc);
                            unordered_middle(theirs, |&j| hb(j, i, by), |&j| hb(i, j, by))
                        };
                        for &j in &theirs[middle] {
                            if !accs[j].write || i < j {
                                pair(i.min(j), i.max(j));
                            }
                        }
                    }
                }
            }
        }
    }
    // A whole-buffer conflict: a host thread's access and a work-item's
    // ([`buffer_conflict_at`]), to two locations of one allocation: a
    // host access is paired with the work-items' accesses to its buffer
    // only. Pairing it with every access cost a tiled matrix product whose
    // host reads the product back 46% of its instructions (576 host reads
    // of 24 x 24 against 50,000 accesses).
    let host = |a: &Access| a.unit.is_some_and(|u| graph.units[u.index()].is_host());
    // The host accesses by allocation, unit and program order.
    let mut hosts: Vec<(u32, UnitId, usize)> = accs.iter().enumerate().filter(|(_, x)| host(x)).map(|(i, x)| (locs[x.loc].alloc, x.unit.expect("a host access"), i)).collect();
    if !hosts.is_empty() {
        hosts.sort_unstable();
        // Per allocation, the one location the host accesses of it are
        // to, if they are all to one: a work-item's access to it has no
        // partner (a unit's loop over one element, read back by the host,
        // asked hb twice per access).
        // (An allocation of one location is left out: no partner at all.)
        let mut allocs: Vec<(u32, Option<usize>)> = Vec::new();
        for of in hosts.chunk_by(|x, y| x.0 == y.0) {
            let l = accs[of[0].2].loc;
            let one = of.iter().all(|&(_, _, i)| accs[i].loc == l).then_some(l);
            if one.is_none() || locs[l].elem.is_some() {
                allocs.push((of[0].0, one));
            }
        }
        let partnered = |y: &Access| allocs.binary_search_by_key(&locs[y.loc].alloc, |&(b, _)| b).is_ok_and(|k| allocs[k].1 != Some(y.loc));
        let mut device: Vec<(u32, usize)> = Vec::new();
        if !allocs.is_empty() {
            device.extend(accs.iter().enumerate().filter(|(_, y)| y.unit.is_some() && partnered(y) && !host(y)).map(|(j, y)| (locs[y.loc].alloc, j)));
        }
        device.sort_unstable();
        let of_alloc = |list: &[(u32, usize)], a: u32| {
            let from = list.partition_point(|&(b, _)| b < a);
            from..from + list[from..].partition_point(|&(b, _)| b == a)
        };
        if hb_has_po && !points {
            // Each host unit's accesses to a buffer, in program order: those
            // that happen before a work-item's access are a prefix of them
            // and those it happens before a suffix, as for one location
            // above (the whole buffer is in the global region), so only the
            // middle can race. A host reading back a product of n elements
            // written by n work-items asked hb of n^2 pairs.
            for mine in hosts.chunk_by(|x, y| (x.0, x.1) == (y.0, y.1)) {
                let writes = mine.iter().any(|&(_, _, i)| accs[i].write);
                for &(_, j) in &device[of_alloc(&device, mine[0].0)] {
                    if !(writes || accs[j].write) {
                        continue;
                    }
                    let middle = unordered_middle(mine, |&(_, _, i)| hb(i, j, PairHb::At(accs[i].loc)), |&(_, _, i)| hb(j, i, PairHb::At(accs[i].loc)));
                    for &(_, _, i) in &mine[middle] {
                        if accs[j].loc != accs[i].loc && (accs[i].write || accs[j].write) {
                            pair(i.min(j), i.max(j));
                        }
                    }
                }
            }
        } else {
            for &(a, _, i) in &hosts {
                for &(_, j) in &device[of_alloc(&device, a)] {
                    if accs[j].loc != accs[i].loc && (accs[i].write || accs[j].write) {
                        pair(i.min(j), i.max(j));
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out
}

/// The range of one unit's accesses `xs` (in program order) that neither
/// happen before an access (`before`, true on a prefix of them) nor after
/// it (`after`, true on a suffix): those that may race with it.
fn unordered_middle<T>(xs: &[T], mut before: impl FnMut(&T) -> bool, mut after: impl FnMut(&T) -> bool) -> std::ops::Range<usize> {
    let lo = xs.partition_point(&mut before);
    lo..lo + xs[lo..].partition_point(|x| !after(x))
}

/// Up to this many accesses, [`race_pairs`] looks at every pair.
const SMALL: usize = 24;

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
    if ia.alloc != ib.alloc || ia.fga() || ia.region != crate::graph::Region::Global || (ia.fine() && la != lb) {
        return false;
    }
    graph.host_and_device(ua, ub)
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
        if x.loc.is_some_and(|l| ctx.locs[l].fine()) {
            return format!(
                "{} and {} access the same element of a fine-grained SVM buffer without atomics support with no synchronisation point between them (enqueue, event wait, finish; SVM atomics do not count, the buffer lacks CL_MEM_SVM_ATOMICS): the host and kernels may read it concurrently and update different elements concurrently, but not the same element",
                who(a),
                who(b)
            );
        }
        let kind = if x.loc.is_some_and(|l| ctx.locs[l].svm()) { "coarse-grained SVM buffer" } else { "non-SVM buffer" };
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
            // A fence where one is missing, but without the region's flag:
            // said so, since "no fence" read wrong when the fences were
            // there with the other flag (a user-acceptance run, session 56).
            let other_flags = |lo: usize, hi: usize, release: bool| {
                (0..n).find(|&f| {
                    let fa = &ctx.attr[f];
                    fa.is_fence() && (if release { fa.is_rel() } else { fa.is_acq() }) && ctx.sb(lo, f) && ctx.sb(f, hi) && !fa.flags.contains(region_flag)
                })
            };
            let wrong = rel.is_none().then(|| other_flags(p, w, true)).flatten().or_else(|| acq.is_none().then(|| other_flags(r, q, false)).flatten());
            let flags_note = wrong.map_or(String::new(), |f| {
                format!("; the fence {} has flags {} and does not order {region_name} memory (it needs CLK_{}_MEM_FENCE)", ev_name(f), ctx.attr[f].flags, region_name.to_uppercase())
            });
            let what_w = format!("{} ({} at {})", ev_name(w), wa.order.map(|o| o.to_string()).unwrap_or_else(|| "non-atomic".into()), wa.scope);
            let what_r = format!("{} ({} at {})", ev_name(r), ra.order.map(|o| o.to_string()).unwrap_or_else(|| "non-atomic".into()), ra.scope);
            return match (rel, acq) {
                (None, None) if wrong.is_some() => format!("{what_r} reads {what_w}, but neither is a release/acquire{flags_note}"),
                (None, None) => format!("{what_r} reads {what_w}, but neither is a release/acquire (and no fence makes them one): nothing is published"),
                (None, Some(_)) => format!("{what_r} reads {what_w}, which is not a release (and no release fence with {} comes before it){flags_note}", region_flag),
                (Some(_), None) => format!("{what_r} reads {what_w}, but is not an acquire (and no acquire fence with {} follows it){flags_note}", region_flag),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{Region, Unit, UnitKind};
    use crate::ids::{GroupId, SubGroupId};
    use clmm_atomic::backend::AllocRegion;

    /// `race_pairs`'s definition, every pair looked at.
    fn all_pairs(graph: &Graph, locs: &[LocInfo], accs: &[Access], points: bool, hb: impl Fn(usize, usize, PairHb) -> bool, inclusive: impl Fn(usize, usize) -> bool) -> Vec<(usize, usize)> {
        let conflict = |x: &Access, y: &Access| match (x.unit, y.unit) {
            (Some(ua), Some(ub)) => buffer_conflict_at(graph, locs, (x.loc, ua), (y.loc, ub)),
            _ => false,
        };
        let mut out = Vec::new();
        for (i, x) in accs.iter().enumerate() {
            for (j, y) in accs.iter().enumerate().skip(i + 1) {
                if !(x.write || y.write) || (x.unit.is_some() && x.unit == y.unit) {
                    continue;
                }
                let whole_buffer = x.loc != y.loc;
                if whole_buffer && !conflict(x, y) {
                    continue;
                }
                let by = if points && (whole_buffer || conflict(x, y)) { PairHb::Points } else { PairHb::At(x.loc) };
                if !whole_buffer && by != PairHb::Points && x.unit.is_some() && y.unit.is_some() && inclusive(i, j) {
                    continue;
                }
                if hb(i, j, by) || hb(j, i, by) {
                    continue;
                }
                out.push((i, j));
            }
        }
        out
    }

    /// The enumeration by location and unit finds the pairs that looking
    /// at every pair finds, in the same order, small and large, with
    /// whole-buffer conflicts between the host and work-items.
    #[test]
    fn race_pairs_is_every_pair() {
        let mut g = Graph::default();
        g.units.push(Unit { kind: UnitKind::Host, parent: None, events: Vec::new() });
        for w in 0..3u32 {
            let kind = UnitKind::WorkItem { global_id: [w as usize, 0, 0], group_id: [0; 3], local_id: [w as usize, 0, 0], group: GroupId(0), sub_group: SubGroupId(0), sub_group_index: 0, device: 0, work_dim: 1 };
            g.units.push(Unit { kind, parent: None, events: Vec::new() });
        }
        let site = std::panic::Location::caller();
        // A coarse-grained buffer of two elements, and two atomics.
        let loc = |alloc: u32, memory: AllocRegion| LocInfo { region: Region::Global, memory, atomic: alloc != 0, alloc, init: 0, site, elem: None, label: None };
        // And an unqualified location (the reference's `int*`), whose
        // initial write happens before nothing.
        let unqualified = LocInfo { region: Region::Unqualified, ..loc(4, AllocRegion::Global) };
        let elem = |l: LocInfo, i: u32| LocInfo { elem: Some(i), ..l };
        let locs = vec![elem(loc(0, AllocRegion::SvmCoarse), 0), elem(loc(0, AllocRegion::SvmCoarse), 1), loc(2, AllocRegion::Global), loc(3, AllocRegion::Global), unqualified];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for round in 0..400 {
            let len = if round % 2 == 0 { 1 + next(20) } else { 25 + next(60) } as usize;
            let mut accs: Vec<Access> = (0..locs.len()).filter(|_| next(2) == 0).map(|l| Access { unit: None, loc: l, write: true }).collect();
            for _ in 0..len {
                accs.push(Access { unit: Some(UnitId(next(4) as u32)), loc: next(5) as usize, write: next(3) == 0 });
            }
            let salt = next(1 << 30);
            let h = |i: usize, j: usize, k: u64| (i as u64 * 31 + j as u64 * 17 + salt + k).wrapping_mul(0x2545_f491_4f6c_dd1d) >> 61;
            // Each access at a random time, later along its unit (`po`):
            // `hb` is a time at least `gap` later, or `po` (a relation
            // that contains `po` and is transitive with it, as every
            // graph's, which `race_pairs` bisects on).
            let mut clock = [0u64; 4];
            let time: Vec<u64> = accs
                .iter()
                .map(|a| {
                    let c = &mut clock[a.unit.map_or(0, |u| u.index())];
                    *c += next(6);
                    *c
                })
                .collect();
            let gap = 1 + next(12);
            // An initial write of a location in a region happens before
            // everything (`I * !I`), as in every graph; whole-buffer
            // conflicts are ordered at random (`PairHb::Points`).
            let init_before = |i: usize| accs[i].unit.is_none() && locs[accs[i].loc].region != Region::Unqualified;
            let hb = |i: usize, j: usize, by: PairHb| {
                init_before(i)
                    || match by {
                        PairHb::Points => h(i, j, 1) < 3,
                        PairHb::At(_) if accs[i].unit.is_some() && accs[i].unit == accs[j].unit => i < j,
                        PairHb::At(_) => accs[i].unit.is_some() && accs[j].unit.is_some() && time[i] + gap <= time[j],
                    }
            };
            let inclusive = |i: usize, j: usize| h(i, j, 7) == 0;
            for (points, hb_has_po) in [(false, false), (false, true), (true, false), (true, true)] {
                assert_eq!(race_pairs(&g, &locs, &accs, points, hb_has_po, hb, inclusive), all_pairs(&g, &locs, &accs, points, hb, inclusive), "round {round}, points {points}, hb_has_po {hb_has_po}: {accs:?}");
            }
        }
    }
}
