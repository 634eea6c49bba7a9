//! Differential test of fences, seq_cst, scopes and plain memory in
//! clmm's own semantics: random straight-line programs of global atomics
//! (loads, stores of constants, `fetch_add`s and strong
//! compare-exchanges of every order),
//! non-atomic loads and stores of `GlobalBuffer` elements, and
//! `atomic_work_item_fence(GLOBAL, ..)`s, each atomic and fence with
//! work-group or device scope, run by 2-4 work-items in work-groups of
//! 1-4, whose complete and failed (racy) executions clmm counts, under
//! both SC axioms, against a brute force over every rf and coherence
//! choice checked with the axioms of `opencl_base.cat`, `opencl.cat` and
//! `opencl_scopedsc.cat` written out here on their own (no clmm code):
//!
//! * `ra_sw = ([rel]; Fsb?; [W \ s_wi]; rs?; rf; [R \ s_wi]; sbF?; [acq]) & incl & ~wi`,
//!   `incl = wg & s_wg^2 | dev & s_dev^2`, `rs` C11's (`rs' = wi | (unv; [R & W])`),
//!   `ghb = ((sb | (I * !I)) | ra_sw)+` (every event is global, so `lhb`
//!   is empty and `scf` plays no part);
//! * `mo = co & ((!nonatomicloc)^2)`: a plain location has no coherence
//!   order, and its reads obey `O-NaRfG` (`rf` into a plain read is in
//!   `vis(ghb)`);
//! * `O-HbG`, `O-CohG`, `O-Rf`, `O-Rmw` (an RMW is one event, read and
//!   write, as in herd, reading its immediate coherence predecessor);
//! * `O-Ssimp`: `acyclic (mo_sc^2) & scp & S_cond2` with
//!   `scp = Fsb?; (rb | mo | ghb); sbF?`, where `S_cond2` holds when every
//!   SC event (fences included) has device scope (no fine-grained SVM
//!   here, so `S_cond1` never does), or with `ScModel::Scoped`
//!   `O-Sscoped`: `acyclic (mo_sc^2) & scp & incl`;
//! * `dr = cnf & ~(ghb | ghb^-1) & ~wi & ~incl`: plain accesses (scope
//!   `s_wi`, never inclusive), atomics of different scopes, and
//!   work-group scope across work-groups race when unordered.
//!
//! A compare-exchange is an RMW where it reads its expected value and a
//! load with its failure order where it does not; the brute force tries
//! both outcomes of each and keeps the graphs whose values agree. As in
//! `ra_rmw_differential.rs`, it counts only the graphs without a cycle
//! through RMW or compare-exchange reads alone (clmm's Deviation 7).
//! Every program's complete graphs are fingerprinted: a graph explored
//! twice fails the test.

mod differential;

use clmm::{atomic_work_item_fence, launch, AtomicI32, Builder, FenceFlags, GlobalBuffer, NdRange, Order, ScModel, Scope};
use differential::{close, free_reads, next_choice, permutations, Rng};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Load(usize, Order, Scope),
    Store(usize, i32, Order, Scope),
    Add(usize, Order, Scope),
    Fence(Order, Scope),
    /// A strong compare-exchange: location, expected, new value, success
    /// and failure orders, scope.
    Cas(usize, i32, i32, Order, Order, Scope),
    /// `barrier(CLK_GLOBAL_MEM_FENCE)`: every work-item of a program
    /// with a barrier has one, at the same call site.
    Barrier,
    /// A non-atomic load of a plain location.
    PlainLoad(usize),
    /// A non-atomic store of a plain location.
    PlainStore(usize, i32),
}

impl Op {
    fn loc(self) -> Option<usize> {
        match self {
            Op::Load(l, ..) | Op::Store(l, ..) | Op::Add(l, ..) | Op::Cas(l, ..) | Op::PlainLoad(l) | Op::PlainStore(l, _) => Some(l),
            Op::Fence(..) | Op::Barrier => None,
        }
    }

    /// The order and scope of an atomic or a fence.
    fn atomic(self) -> Option<(Order, Scope)> {
        match self {
            Op::Load(_, o, s) | Op::Store(_, _, o, s) | Op::Add(_, o, s) | Op::Cas(_, _, _, o, _, s) | Op::Fence(o, s) => Some((o, s)),
            Op::PlainLoad(_) | Op::PlainStore(..) | Op::Barrier => None,
        }
    }
}

/// A program: its locations (`plain[l]`: location `l` is an element of
/// a `GlobalBuffer`, else an `AtomicI32`), the work-group size, and each
/// work-item's operations.
#[derive(Clone, Debug)]
struct Prog {
    locs: usize,
    plain: Vec<bool>,
    group: usize,
    units: Vec<Vec<Op>>,
}

/// The shape of the programs drawn: (most work-items, most operations
/// per work-item, most locations, most accesses per location).
type Shape = (usize, usize, usize, usize);

/// The suite's shape: 2-3 work-items of 1-3 operations on 1-2 locations,
/// at most 5 accesses per location.
const SHAPE: Shape = (3, 3, 2, 5);

/// The hand sweeps' shape with `SCOPED_SHAPE=wide`: 2-4 work-items of
/// 1-4 operations on 1-3 locations, at most 6 accesses per location.
const WIDE: Shape = (4, 4, 3, 6);

fn sweep_shape() -> Shape {
    match std::env::var("SCOPED_SHAPE").as_deref() {
        Ok("wide") => WIDE,
        Ok(s) if !s.is_empty() => panic!("SCOPED_SHAPE={s:?}: expected `wide` or nothing"),
        _ => SHAPE,
    }
}

/// A program of `shape`: a fifth of the operations load, a fifth store,
/// a fifth `fetch_add`, a fifth compare-exchange (expecting 0, 1 or 2,
/// which stores read and `fetch_add`s make) and a fifth fence; a third
/// of the locations plain (their `fetch_add`s and compare-exchanges
/// become loads); in a third of the programs every work-item has a
/// barrier, anywhere among its operations; orders among those
/// valid for the operation; scopes work-group or device; the work-group
/// size a divisor of the number of work-items. Half the programs are
/// mostly seq_cst (three operations in four) and half of all have device
/// scope only: the SC axiom needs several SC events, and `O-Ssimp` every
/// one of them at device scope. Drawn again when a location has too many
/// accesses.
fn program(seed: u64, shape: Shape) -> Prog {
    use Order::*;
    let (max_units, max_ops, max_locs, max_accesses) = shape;
    let mut rng = Rng(seed);
    loop {
        let n = rng.range(2, max_units);
        let divisors: Vec<usize> = (1..=n).filter(|d| n % d == 0).collect();
        let group = divisors[rng.range(0, divisors.len() - 1)];
        let locs = rng.range(1, max_locs);
        let plain: Vec<bool> = (0..locs).map(|_| rng.range(0, 2) == 0).collect();
        let (mostly_sc, device_only) = (rng.range(0, 1) == 1, rng.range(0, 1) == 1);
        let mut units: Vec<Vec<Op>> = (0..n)
            .map(|_| {
                (0..rng.range(1, max_ops))
                    .map(|_| {
                        let l = rng.range(0, locs - 1);
                        let s = if device_only { Scope::Device } else { rng.pick(&[Scope::WorkGroup, Scope::Device]) };
                        let sc = mostly_sc && rng.range(0, 3) > 0;
                        let (kind, v) = (rng.range(0, 4), rng.range(1, 2) as i32);
                        let mut order = |valid: &[Order]| if sc { SeqCst } else { rng.pick(valid) };
                        match kind {
                            0 | 2 | 3 if plain[l] => Op::PlainLoad(l),
                            1 if plain[l] => Op::PlainStore(l, v),
                            0 => Op::Load(l, order(&[Relaxed, Acquire, SeqCst]), s),
                            1 => Op::Store(l, v, order(&[Relaxed, Release, SeqCst]), s),
                            2 => Op::Add(l, order(&[Relaxed, Acquire, Release, AcqRel, SeqCst]), s),
                            3 => {
                                let success = order(&[Relaxed, Acquire, Release, AcqRel, SeqCst]);
                                // No stronger than the success order, never a release.
                                let failure = match success {
                                    SeqCst => SeqCst,
                                    Acquire | AcqRel => Acquire,
                                    _ => Relaxed,
                                };
                                Op::Cas(l, rng.range(0, 2) as i32, v, success, failure, s)
                            }
                            _ => Op::Fence(order(&[Acquire, Release, AcqRel, SeqCst]), s),
                        }
                    })
                    .collect()
            })
            .collect();
        if rng.range(0, 2) == 0 {
            for ops in &mut units {
                let at = rng.range(0, ops.len());
                ops.insert(at, Op::Barrier);
            }
        }
        let accesses = |l: usize| units.iter().flatten().filter(|op| op.loc() == Some(l)).count();
        if (0..locs).all(|l| accesses(l) <= max_accesses) {
            return Prog { locs, plain, group, units };
        }
    }
}

/// clmm's counts: (complete executions, failed or not; those that race).
fn clmm_count(p: &Prog, sc: ScModel) -> (u64, u64) {
    clmm_count_in(p, sc, false)
}

/// [`clmm_count`], with failing compare-exchanges speculating when `cas`
/// (`Builder::speculate_compare_exchange`).
fn clmm_count_in(p: &Prog, sc: ScModel, cas: bool) -> (u64, u64) {
    clmm_run_in(p, sc, cas).0
}

/// [`clmm_count_in`], and what the run said may be unexplored ([`Said`]).
fn clmm_run_in(p: &Prog, sc: ScModel, cas: bool) -> ((u64, u64), Said) {
    clmm_run_by(p, Builder::new().sc_model(sc).speculate_compare_exchange(cas))
}

/// [`clmm_count_in`] with the settings of `b`.
fn clmm_count_by(p: &Prog, b: Builder) -> (u64, u64) {
    clmm_run_by(p, b).0
}

/// What a run said may be unexplored: executions of Deviation 7
/// (`Stats::rmw_cycles_unexplored`), and cycles through failing
/// compare-exchanges when they do not speculate
/// (`Stats::cas_cycles_unexplored`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Said {
    rmw: bool,
    cas: bool,
}

/// [`clmm_count_by`], and what the run said may be unexplored.
fn clmm_run_by(p: &Prog, b: Builder) -> ((u64, u64), Said) {
    let f = || {
        let cells: Vec<AtomicI32> = (0..p.locs).map(|_| AtomicI32::new(0)).collect();
        let plain = GlobalBuffer::<i32>::new(p.locs);
        launch(NdRange::new([p.units.len()], [p.group]), |it| {
            for &op in &p.units[it.global_id(0)] {
                match op {
                    Op::Load(l, o, s) => {
                        cells[l].load(o, s);
                    }
                    Op::Store(l, v, o, s) => cells[l].store(v, o, s),
                    Op::Add(l, o, s) => {
                        cells[l].fetch_add(1, o, s);
                    }
                    Op::Fence(o, s) => atomic_work_item_fence(FenceFlags::GLOBAL, o, s),
                    Op::Cas(l, expected, new, success, failure, s) => {
                        let _ = cells[l].compare_exchange(expected, new, success, failure, s);
                    }
                    Op::PlainLoad(l) => {
                        plain.read(l);
                    }
                    Op::PlainStore(l, v) => plain.write(l, v),
                    Op::Barrier => it.barrier(FenceFlags::GLOBAL),
                }
            }
        });
    };
    let ex = b.check_unique(true).explore(f);
    let s = &ex.stats;
    assert_eq!(s.duplicates, 0, "{p:?}: a graph explored twice");
    assert!(!s.stopped_early, "{p:?}: stopped early: {:?}", ex.failures);
    let other = ex.failures.iter().find(|f| f.kind != clmm::FailureKind::DataRace);
    assert!(other.is_none(), "{p:?}: a failure other than a race: {other:?}");
    ((s.complete, s.failed), Said { rmw: s.rmw_cycles_unexplored, cas: s.cas_cycles_unexplored })
}

/// An event of the brute force: the initial writes (one per location,
/// `unit` None) come first, then the operations in program order.
#[derive(Clone, Copy)]
struct Ev {
    unit: Option<usize>,
    group: usize,
    loc: Option<usize>,
    read: bool,
    write: bool,
    fence: bool,
    /// An atomic access or an atomic location's initial write.
    atomic: bool,
    acq: bool,
    rel: bool,
    sc: bool,
    scope: Scope,
    /// The value a write writes: a constant, or its source's plus one.
    value: Value,
    /// A compare-exchange: (expected, whether it succeeds in this graph).
    cas: Option<(i32, bool)>,
    /// A barrier's entry fence (`true`) or exit fence.
    barrier: Option<bool>,
}

#[derive(Clone, Copy)]
enum Value {
    Const(i32),
    Inc,
}

/// The events of `p` where its `i`-th compare-exchange (in program
/// order) succeeds when `succeeds[i]`: a successful one is an RMW with
/// its success order, a failed one a load with its failure order.
fn events(p: &Prog, succeeds: &[bool]) -> Vec<Ev> {
    let init = |l: usize| Ev {
        unit: None,
        group: 0,
        loc: Some(l),
        read: false,
        write: true,
        fence: false,
        atomic: !p.plain[l],
        acq: false,
        rel: false,
        sc: false,
        scope: Scope::WorkItem,
        value: Value::Const(0),
        cas: None,
        barrier: None,
    };
    let mut evs: Vec<Ev> = (0..p.locs).map(init).collect();
    let mut cas = succeeds.iter();
    for (u, ops) in p.units.iter().enumerate() {
        for &op in ops {
            if op == Op::Barrier {
                // Entry and exit fences, with the barrier's work-group
                // scope: clmm makes the entry a release fence and the exit
                // an acquire fence (as the reference's litmus tests need).
                for entry in [true, false] {
                    let fence = Ev { unit: Some(u), group: u / p.group, loc: None, read: false, write: false, fence: true, atomic: false, acq: !entry, rel: entry, sc: false, scope: Scope::WorkGroup, value: Value::Inc, cas: None, barrier: Some(entry) };
                    evs.push(fence);
                }
                continue;
            }
            // Plain accesses have no order and work-item scope (`s_wi`).
            let (mut o, scope) = op.atomic().unwrap_or((Order::Relaxed, Scope::WorkItem));
            let (mut value, mut cas_of) = (Value::Inc, None);
            let (read, write, fence) = match op {
                Op::Load(..) | Op::PlainLoad(_) => (true, false, false),
                Op::Store(_, v, ..) | Op::PlainStore(_, v) => {
                    value = Value::Const(v);
                    (false, true, false)
                }
                Op::Add(..) => (true, true, false),
                Op::Cas(_, expected, new, _, failure, _) => {
                    let ok = *cas.next().expect("an outcome per compare-exchange");
                    cas_of = Some((expected, ok));
                    value = Value::Const(new);
                    if !ok {
                        o = failure;
                    }
                    (true, ok, false)
                }
                Op::Fence(..) => (false, false, true),
                Op::Barrier => unreachable!("two fences"),
            };
            evs.push(Ev {
                unit: Some(u),
                group: u / p.group,
                loc: op.loc(),
                read,
                write,
                fence,
                atomic: op.atomic().is_some() && !fence,
                acq: matches!(o, Order::Acquire | Order::AcqRel | Order::SeqCst),
                rel: matches!(o, Order::Release | Order::AcqRel | Order::SeqCst),
                sc: o == Order::SeqCst,
                scope,
                value,
                cas: cas_of,
                barrier: None,
            });
        }
    }
    evs
}

/// `incl`: the same scope, and both in one instance of it.
fn incl(a: &Ev, b: &Ev) -> bool {
    a.scope == b.scope
        && match a.scope {
            Scope::WorkGroup => a.group == b.group,
            Scope::Device => true,
            _ => false,
        }
}

/// The brute-force counts under `sc`: (consistent graphs without a cycle
/// through RMW and compare-exchange reads alone, [`acyclic_rmw`]; those
/// of them with a data race).
fn brute_count(p: &Prog, sc: ScModel) -> (u64, u64) {
    brute_count_in(p, sc, false)
}

/// [`brute_count`], where with `cas` the reads of failing
/// compare-exchanges may be on a cycle ([`acyclic_rmw`]).
fn brute_count_in(p: &Prog, sc: ScModel, cas: bool) -> (u64, u64) {
    brute_count_rmw(p, sc, cas, rmw_speculates())
}

/// [`brute_count_in`], where with `rmw` the reads of RMWs and of
/// succeeding compare-exchanges may be on a cycle too (what
/// `Builder::speculate_rmw` explores), whatever `CLMM_SPECULATE_RMW` says.
fn brute_count_rmw(p: &Prog, sc: ScModel, cas: bool, rmw: bool) -> (u64, u64) {
    let k = p.units.iter().flatten().filter(|op| matches!(op, Op::Cas(..))).count();
    let mut succeeds = vec![false; k];
    let (mut all, mut racy) = (0, 0);
    loop {
        let (a, r) = brute_count_with(p, sc, cas, rmw, &succeeds);
        (all, racy) = (all + a, racy + r);
        // The next outcome of the compare-exchanges, as a binary counter.
        let Some(i) = succeeds.iter().position(|&s| !s) else { return (all, racy) };
        succeeds[..i].iter_mut().for_each(|s| *s = false);
        succeeds[i] = true;
    }
}

/// [`brute_count`] for one outcome of each compare-exchange.
fn brute_count_with(p: &Prog, sc: ScModel, cas: bool, rmw: bool, succeeds: &[bool]) -> (u64, u64) {
    let evs = events(p, succeeds);
    let (n, locs) = (evs.len(), p.locs);
    assert!(n <= 64);
    let orders: Vec<Vec<Vec<usize>>> = (0..locs)
        .map(|l| {
            let ws: Vec<usize> = (locs..n).filter(|&e| evs[e].write && evs[e].loc == Some(l)).collect();
            // A plain location has no coherence order (`mo = co &
            // ((!nonatomicloc)^2)`): one order, its writes in any.
            let orders = if p.plain[l] { vec![ws] } else { permutations(&ws) };
            orders.into_iter().map(|q| std::iter::once(l).chain(q).collect()).collect()
        })
        .collect();
    let loads: Vec<usize> = (locs..n).filter(|&e| evs[e].read && !evs[e].write).collect();
    let (mut all, mut racy) = (0, 0);
    let mut choice = vec![0usize; locs];
    loop {
        let mo: Vec<&Vec<usize>> = (0..locs).map(|l| &orders[l][choice[l]]).collect();
        let mut pos = vec![usize::MAX; n];
        for order in &mo {
            for (i, &w) in order.iter().enumerate() {
                pos[w] = i;
            }
        }
        let mut rf = vec![usize::MAX; n];
        for e in locs..n {
            if evs[e].read && evs[e].write {
                rf[e] = mo[evs[e].loc.expect("access")][pos[e] - 1];
            }
        }
        let sources: Vec<&Vec<usize>> = loads.iter().map(|&r| mo[evs[r].loc.expect("access")]).collect();
        let mut pick = vec![0usize; loads.len()];
        loop {
            for (i, &r) in loads.iter().enumerate() {
                rf[r] = sources[i][pick[i]];
            }
            let g = Candidate { evs: &evs, locs, mo: &mo, pos: &pos, rf: &rf };
            if g.values_agree() && acyclic_rmw(&g, cas, rmw) {
                if let Some(race) = g.verdict(sc) {
                    all += 1;
                    racy += u64::from(race);
                }
            }
            if !next_choice(&mut pick, |i| sources[i].len()) {
                break;
            }
        }
        if !next_choice(&mut choice, |l| orders[l].len()) {
            return (all, racy);
        }
    }
}

/// One candidate execution graph: coherence (`mo`, and each write's
/// position there) and rf (`rf[r]`, the write read).
struct Candidate<'a> {
    evs: &'a [Ev],
    locs: usize,
    mo: &'a [&'a Vec<usize>],
    pos: &'a [usize],
    rf: &'a [usize],
}

impl Candidate<'_> {
    /// Whether each compare-exchange read the value its outcome needs:
    /// the expected one when it succeeds, another when it fails. Values
    /// follow coherence (an RMW reads its immediate predecessor).
    fn values_agree(&self) -> bool {
        let mut val = vec![0i32; self.evs.len()];
        for order in self.mo {
            for &w in order.iter() {
                val[w] = match self.evs[w].value {
                    Value::Const(c) => c,
                    Value::Inc => val[self.rf[w]] + 1,
                };
            }
        }
        (self.locs..self.evs.len()).all(|e| self.evs[e].cas.is_none_or(|(expected, ok)| (val[self.rf[e]] == expected) == ok))
    }

    fn po(&self, a: usize, b: usize) -> bool {
        a < b && a >= self.locs && self.evs[a].unit == self.evs[b].unit
    }

    /// `mo(a, b)`: atomic locations only.
    fn mo(&self, a: usize, b: usize) -> bool {
        let (x, y) = (&self.evs[a], &self.evs[b]);
        x.write && y.write && x.atomic && x.loc == y.loc && self.pos[a] < self.pos[b]
    }

    /// `rb(a, b) = (rf^-1; mo) \ id`.
    fn rb(&self, a: usize, b: usize) -> bool {
        a != b && a >= self.locs && self.evs[a].read && self.mo(self.rf[a], b)
    }

    /// `rs?(h, w)`: `h` is `w`, or `h` is mo-before `w` and every write
    /// after `h` up to `w` is `h`'s work-item's or an RMW.
    fn in_rs(&self, h: usize, w: usize) -> bool {
        let evs = self.evs;
        if evs[h].loc != evs[w].loc || self.pos[h] > self.pos[w] {
            return false;
        }
        let l = evs[h].loc.expect("write");
        self.mo[l][self.pos[h] + 1..=self.pos[w]].iter().all(|&x| evs[x].unit == evs[h].unit || (evs[x].read && evs[x].write))
    }

    /// `ra_sw(a, b)` (all events are global).
    fn ra_sw(&self, a: usize, b: usize) -> bool {
        let evs = self.evs;
        let (x, y) = (&evs[a], &evs[b]);
        if a < self.locs || b < self.locs || !x.rel || !y.acq || x.unit == y.unit || !incl(x, y) {
            return false;
        }
        // [rel]; Fsb?; [W \ s_wi]
        let heads = (self.locs..evs.len()).filter(|&w| evs[w].write && evs[w].atomic && (w == a || (x.fence && self.po(a, w))));
        // [R \ s_wi]; sbF?; [acq]
        let tails: Vec<usize> = (self.locs..evs.len()).filter(|&r| evs[r].read && evs[r].atomic && (r == b || (y.fence && self.po(r, b)))).collect();
        heads.into_iter().any(|w| tails.iter().any(|&r| self.in_rs(w, self.rf[r])))
    }

    /// The verdict under `sc`: `None` when inconsistent, else whether
    /// the graph has a data race.
    fn verdict(&self, sc: ScModel) -> Option<bool> {
        let (evs, locs) = (self.evs, self.locs);
        let n = evs.len();
        // bar_sw = (entry_fence * exit_fence) & same_B & ~wi & wg: one
        // barrier instance per program.
        let bar_sw = |a: usize, b: usize| evs[a].barrier == Some(true) && evs[b].barrier == Some(false) && evs[a].unit != evs[b].unit && evs[a].group == evs[b].group;
        let mut hb: Vec<u64> = (0..n).map(|a| (locs..n).filter(|&b| a < locs || self.po(a, b) || self.ra_sw(a, b) || bar_sw(a, b)).fold(0, |m, b| m | 1 << b)).collect();
        close(&mut hb);
        let hbr = |a: usize, b: usize| hb[a] >> b & 1 == 1;
        if (0..n).any(|a| hbr(a, a)) {
            return None; // O-HbG
        }
        if (locs..n).any(|r| evs[r].read && hbr(r, self.rf[r])) {
            return None; // O-Rf
        }
        // O-NaRfG: a plain read reads a visible write: one that happens
        // before it with no write of the location happening in between.
        let visible = |r: usize| {
            let w = self.rf[r];
            hbr(w, r) && !(locs..n).any(|x| x != w && evs[x].write && evs[x].loc == evs[r].loc && hbr(w, x) && hbr(x, r))
        };
        if (locs..n).any(|r| evs[r].read && !evs[r].atomic && !visible(r)) {
            return None;
        }
        // O-CohG: (rf^-1)?; mo; rf?; hb irreflexive. The writes an event
        // stands for on either side of `mo`: itself (a write) and its
        // source (a read; an RMW is both).
        let ends: Vec<Vec<usize>> = (0..n)
            .map(|x| {
                let source = (x >= locs && evs[x].read).then(|| self.rf[x]);
                evs[x].write.then_some(x).into_iter().chain(source).collect()
            })
            .collect();
        for a in 0..n {
            for b in (0..n).filter(|&b| hbr(b, a)) {
                if ends[a].iter().any(|&w1| ends[b].iter().any(|&w2| self.mo(w1, w2))) {
                    return None;
                }
            }
        }
        // O-Ssimp / O-Sscoped.
        let scs: Vec<usize> = (locs..n).filter(|&e| evs[e].sc).collect();
        let applies = match sc {
            ScModel::Spec => scs.iter().all(|&e| evs[e].scope == Scope::Device),
            ScModel::Scoped => true,
        };
        if applies && scs.len() >= 2 {
            let m = |x: usize, y: usize| self.rb(x, y) || self.mo(x, y) || hbr(x, y);
            // Fsb?: a fence reaches on from the events po-after it; sbF?:
            // a fence is reached from the events po-before it.
            let from = |a: usize| (0..n).filter(move |&x| x == a || (evs[a].fence && self.po(a, x)));
            let to = |b: usize| (0..n).filter(move |&y| y == b || (evs[b].fence && self.po(y, b)));
            let mut step = vec![0u64; n];
            for &a in &scs {
                for &b in &scs {
                    if sc == ScModel::Scoped && !incl(&evs[a], &evs[b]) {
                        continue;
                    }
                    if from(a).any(|x| to(b).any(|y| m(x, y))) {
                        step[a] |= 1 << b;
                    }
                }
            }
            close(&mut step);
            if scs.iter().any(|&a| step[a] >> a & 1 == 1) {
                return None;
            }
        }
        // dr = cnf & ~(ghb | ghb^-1) & ~wi & ~incl
        let race = (locs..n).any(|a| {
            (a + 1..n).any(|b| {
                let (x, y) = (&evs[a], &evs[b]);
                x.loc.is_some() && x.loc == y.loc && (x.write || y.write) && !hbr(a, b) && !hbr(b, a) && x.unit != y.unit && !incl(x, y)
            })
        });
        Some(race)
    }
}

/// Whether `po | rf-into-RMWs | bar` is acyclic (the graphs clmm
/// explores): the read parts of RMWs and of compare-exchanges never
/// speculate, except with `cas` those of compare-exchanges that fail
/// (`Builder::speculate_compare_exchange`); loads do. An RMW read may
/// read its unit's previous read's promise ([`free_reads`]). `bar`, from a
/// barrier's entry fence to the exit fences of the other work-items of
/// its group, is part of the prefix a speculation keeps (a work-item
/// leaves the barrier only once every other has entered it; seed 1149 of
/// `SCOPED_SHAPE=wide` is a cycle through an RMW read and a barrier).
fn acyclic_rmw(g: &Candidate<'_>, cas: bool, rmw: bool) -> bool {
    let (evs, locs, n) = (g.evs, g.locs, g.evs.len());
    let bar = |a: usize, b: usize| evs[a].barrier == Some(true) && evs[b].barrier == Some(false) && evs[a].unit != evs[b].unit && evs[a].group == evs[b].group;
    // Loads never, failing compare-exchanges unless they speculate, and
    // RMW reads unless they do or read their unit's previous read's
    // promise (`free_reads`).
    let own = |b: usize| !(evs[b].write && !rmw || !evs[b].write && !cas && evs[b].cas.is_some());
    let free = free_reads(locs, n, |e| evs[e].read, own, |e| evs[e].write, |p, b| g.po(p, b) && evs[p].loc == evs[b].loc, g.rf);
    let mut reach: Vec<u64> = (0..n)
        .map(|a| (0..n).filter(|&b| g.po(a, b) || bar(a, b) || (b >= locs && evs[b].read && !free[b] && g.rf[b] == a)).fold(0, |m, b| m | 1 << b))
        .collect();
    close(&mut reach);
    (0..n).all(|a| reach[a] >> a & 1 == 0)
}

/// Whether RMW and succeeding compare-exchange reads speculate
/// (`clmm::Builder::speculate_rmw`, off unless `CLMM_SPECULATE_RMW=1`):
/// then only failing compare-exchanges (without `cas`) are kept off
/// cycles ([`acyclic_rmw`]).
fn rmw_speculates() -> bool {
    std::env::var("CLMM_SPECULATE_RMW").is_ok_and(|v| !matches!(v.trim(), "" | "0" | "false"))
}

/// The seeds in `range` where clmm's counts differ under either SC axiom,
/// without and with failing compare-exchanges speculating: (seed, SC
/// axiom, whether they speculate, clmm's (all, racy), the brute force's).
type Mismatch = (u64, ScModel, bool, (u64, u64), (u64, u64));

/// The differences of `range` ([`Mismatch`]), and apart from them those
/// that the run said may be unexplored ([`noted_gap`], [`noted_cas_gap`]).
fn mismatches(range: std::ops::Range<u64>, shape: Shape) -> (Vec<Mismatch>, Vec<Mismatch>) {
    let (mut out, mut noted) = (Vec::new(), Vec::new());
    for seed in range {
        let p = program(seed, shape);
        let with_cas = p.units.iter().flatten().any(|op| matches!(op, Op::Cas(..)));
        for sc in [ScModel::Spec, ScModel::Scoped] {
            for cas in [false, true].into_iter().take(1 + usize::from(with_cas)) {
                let (c, b) = (clmm_run_in(&p, sc, cas), brute_count_in(&p, sc, cas));
                if c.0 != b {
                    let m = (seed, sc, cas, c.0, b);
                    if noted_gap(&p, sc, cas, c, b) || noted_cas_gap(cas, c, b) {
                        noted.push(m);
                    } else if !beyond_failing_cas_cycles(&p, sc, cas, c.0, b) {
                        out.push(m);
                    }
                }
            }
        }
    }
    (out, noted)
}

/// Whether, with failing compare-exchanges not speculating (`cas`
/// false), clmm found more executions than the brute force's relation
/// for that mode promises, but no more than there are with cycles
/// through failing compare-exchanges counted: that mode explores some of
/// those cycles, and the relation does not single them out (seeds 58017 of
/// `SCOPED_SHAPE=wide` and 317069 of the narrow shape, session 43). What
/// it misses stays a mismatch.
fn beyond_failing_cas_cycles(p: &Prog, sc: ScModel, cas: bool, clmm: (u64, u64), brute: (u64, u64)) -> bool {
    !cas && clmm.0 > brute.0 && clmm.1 >= brute.1 && {
        let all = brute_count_in(p, sc, true);
        clmm.0 <= all.0 && clmm.1 <= all.1
    }
}

/// Whether clmm's run of `p` (`clmm`: its counts and whether it said
/// that executions of Deviation 7 may be unexplored) misses executions
/// of the brute force's count `brute` the way Deviation 7 says: RMW reads
/// do not speculate by default, and some executions can be reached only
/// through such a speculation, also where the cycle itself passes
/// through a load (a load's speculation on a write that only an RMW
/// read's speculation puts after it: seed 21149 of `SCOPED_SHAPE=wide`,
/// [`load_speculation_that_needs_an_rmw_speculation`]). So: clmm found fewer, said
/// so, and with `Builder::speculate_rmw` finds exactly the executions
/// the brute force counts with cycles through RMW reads.
fn noted_gap(p: &Prog, sc: ScModel, cas: bool, clmm: ((u64, u64), Said), brute: (u64, u64)) -> bool {
    let ((c, said), b) = (clmm, brute);
    said.rmw && !rmw_speculates() && c.0 < b.0 && c.1 <= b.1 && {
        let with = Builder::new().sc_model(sc).speculate_compare_exchange(cas).speculate_rmw(true);
        clmm_count_by(p, with) == brute_count_rmw(p, sc, cas, true)
    }
}

/// Whether, with failing compare-exchanges not speculating (`cas`
/// false), clmm found fewer executions than the brute force's count for
/// that mode and said that cycles through failing compare-exchanges may
/// be unexplored (`Stats::cas_cycles_unexplored`, session 43): the
/// default mode, where they speculate, is held to the brute force on the
/// same program by [`mismatches`].
fn noted_cas_gap(cas: bool, clmm: ((u64, u64), Said), brute: (u64, u64)) -> bool {
    let ((c, said), b) = (clmm, brute);
    !cas && said.cas && c.0 < b.0 && c.1 <= b.1
}

/// Asserts that the brute force counts `brute` and clmm `clmm` (all,
/// racy) on `p` under both SC axioms, with failing compare-exchanges
/// speculating (`cas`) or not.
fn assert_counts(p: &Prog, cas: bool, brute: (u64, u64), clmm: (u64, u64)) {
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count_in(p, sc, cas), clmm_count_in(p, sc, cas)), (brute, clmm), "{sc:?}, cas {cas}");
    }
}

/// Asserts that the brute force and clmm both count `off` (all, racy)
/// on `p` with failing compare-exchanges not speculating, and `on` with
/// them speculating, under both SC axioms.
fn assert_exact_by_cas_mode(p: &Prog, off: (u64, u64), on: (u64, u64)) {
    assert_counts(p, false, off, off);
    assert_counts(p, true, on, on);
}

/// [`assert_exact_by_cas_mode`] with the same counts in both modes.
fn assert_exact_in_every_mode(p: &Prog, expected: (u64, u64)) {
    assert_exact_by_cas_mode(p, expected, expected);
}

/// Known shapes, counted by hand.
#[test]
fn brute_force_counts_known_shapes() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let prog = |group: usize, units: Vec<Vec<Op>>| Prog { locs: 2, plain: vec![false; 2], group, units };
    // Message passing through fences: a release fence before a relaxed
    // flag store and an acquire fence after a relaxed flag load forbid
    // (flag 1, data 0): 3 of 4.
    let mp_fences = prog(1, vec![vec![Op::Store(0, 1, Relaxed, D), Op::Fence(Release, D), Op::Store(1, 1, Relaxed, D)], vec![Op::Load(1, Relaxed, D), Op::Fence(Acquire, D), Op::Load(0, Relaxed, D)]]);
    // Work-group scope fences in two work-groups are not inclusive: no
    // synchronisation, so 4 of 4, and the relaxed accesses are of the
    // same (device) scope, so no race.
    let mp_wg_fences = prog(1, vec![vec![Op::Store(0, 1, Relaxed, D), Op::Fence(Release, WG), Op::Store(1, 1, Relaxed, D)], vec![Op::Load(1, Relaxed, D), Op::Fence(Acquire, WG), Op::Load(0, Relaxed, D)]]);
    // ... and in one work-group they are: 3 of 4.
    let mp_wg_fences_one_group = Prog { group: 2, ..mp_wg_fences.clone() };
    // Store buffering with seq_cst accesses: (0, 0) is forbidden by
    // O-Ssimp when all four are device scope (3 of 4); with one of them
    // work-group scope, `S_cond2` fails and the axiom is void under the
    // `opencl.cat` model (4, and the work-group and device accesses of
    // one location race), while `O-Sscoped` still orders the inclusive
    // pairs.
    let sb = |s: Scope| prog(1, vec![vec![Op::Store(0, 1, SeqCst, D), Op::Load(1, SeqCst, D)], vec![Op::Store(1, 1, SeqCst, D), Op::Load(0, SeqCst, s)]]);
    // Message passing of plain data: with a release/acquire flag the
    // data read sees the store (O-NaRfG hides the initial write), and
    // without the flag it races and reads the initial write, the only
    // one visible (2 executions, 1 racy); with a relaxed flag both race.
    let mp_plain = |o: (Order, Order)| Prog {
        locs: 2,
        plain: vec![true, false],
        group: 1,
        units: vec![vec![Op::PlainStore(0, 1), Op::Store(1, 1, o.0, D)], vec![Op::Load(1, o.1, D), Op::PlainLoad(0)]],
    };
    // Two compare-exchanges of 0 to 1: one succeeds, the other fails
    // reading its write (both reading the initial write is O-Rmw).
    let cas = prog(1, vec![vec![Op::Cas(0, 0, 1, Relaxed, Relaxed, D)], vec![Op::Cas(0, 0, 1, Relaxed, Relaxed, D)]]);
    for (p, spec, scoped) in [
        (cas, (2, 0), (2, 0)),
        (mp_plain((Release, Acquire)), (2, 1), (2, 1)),
        (mp_plain((Relaxed, Acquire)), (2, 2), (2, 2)),
        (mp_fences, (3, 0), (3, 0)),
        (mp_wg_fences, (4, 0), (4, 0)),
        (mp_wg_fences_one_group, (3, 0), (3, 0)),
        (sb(D), (3, 0), (3, 0)),
        (sb(WG), (4, 4), (4, 4)),
    ] {
        assert_eq!((brute_count(&p, ScModel::Spec), brute_count(&p, ScModel::Scoped)), (spec, scoped), "brute force: {p:?}");
        assert_eq!((clmm_count(&p, ScModel::Spec), clmm_count(&p, ScModel::Scoped)), (spec, scoped), "clmm: {p:?}");
    }
}

/// Seed 2976, found when barriers joined the generator: a read before a
/// barrier speculated on a write after it (two of them: `Wx2` and the
/// `Add x` reading it). The nested speculation's start graph kept `Wx2`
/// with its unit's barrier exit, but not the reader's barrier entry,
/// which depends on the read: the forward walk that drops what depends
/// on the read followed po and rf only. The run let the other work-items
/// leave the barrier before the reader reached it, and the vector clocks,
/// which compute an exit's view when it is added, missed the entry's
/// `bar_sw` edge: 2 inconsistent executions (a read of a write that
/// happens after it) counted. The walk now follows barrier, join, wait
/// and launch edges too (`Graph::sync_succs`).
#[test]
fn barrier_exit_depends_on_every_entry() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, true],
        group: 3,
        units: vec![
            vec![Op::Fence(SeqCst, D), Op::Barrier, Op::Add(0, Relaxed, D), Op::Fence(AcqRel, D)],
            vec![Op::Barrier, Op::Store(0, 2, Relaxed, D)],
            vec![Op::Load(0, Relaxed, D), Op::Cas(0, 2, 1, Relaxed, Relaxed, D), Op::Barrier],
        ],
    };
    assert_eq!((brute_count(&p, ScModel::Spec), clmm_count(&p, ScModel::Spec)), ((2, 0), (2, 0)));
    let small = Prog { locs: 1, plain: vec![false], group: 3, units: vec![vec![Op::Barrier, Op::Add(0, Relaxed, D)], vec![Op::Barrier, Op::Store(0, 2, Relaxed, D)], vec![Op::Load(0, Relaxed, D), Op::Barrier]] };
    assert_eq!((brute_count(&small, ScModel::Spec), clmm_count(&small, ScModel::Spec)), ((2, 0), (2, 0)));
}

/// A cycle through a failing compare-exchange (seed 46226, shrunk): the
/// second unit's `Add y` reads `Wy2`, which the first writes after its
/// compare-exchange of x fails; the third unit's `Add y` reads the
/// second's, and its `Wx1` after it is what that compare-exchange read.
fn failing_cas_cycle() -> Prog {
    use Order::*;
    use Scope::Device as D;
    Prog {
        locs: 2,
        plain: vec![false, false],
        group: 3,
        units: vec![
            vec![Op::Cas(0, 0, 1, Relaxed, Relaxed, D), Op::Store(1, 2, Relaxed, D)],
            vec![Op::Load(1, Acquire, D), Op::Add(1, Acquire, D)],
            vec![Op::Add(1, Acquire, D), Op::Store(0, 1, Relaxed, D), Op::Cas(1, 1, 2, Acquire, Acquire, D)],
        ],
    }
}

/// Another (seed 44376): `CAS x` fails reading the third unit's `Add x`,
/// which follows that unit's load of y, and the load reads the `CAS y`
/// after `CAS x`.
fn failing_cas_cycle_through_a_load() -> Prog {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Add(1, SeqCst, WG), Op::Fence(SeqCst, D), Op::Fence(SeqCst, D)],
            vec![Op::Cas(0, 0, 2, SeqCst, SeqCst, WG), Op::Fence(SeqCst, WG), Op::Cas(1, 0, 1, SeqCst, SeqCst, D)],
            vec![Op::Load(1, SeqCst, WG), Op::Add(0, SeqCst, D)],
        ],
    }
}

/// The class that failing compare-exchanges not speculating leave
/// (`speculate_compare_exchange(false)`, `CLMM_SPECULATE_CAS=0`, the
/// default until session 35; Deviation 7): a compare-exchange that
/// fails reads a write porf-after it. Its read does not speculate, so
/// clmm reaches such a cycle only where a load on it speculates from a
/// graph in which a revisit already made the compare-exchange read that
/// write (the speculation keeps it as a promise): some of those graphs
/// are found, some not. 19 of the 296,000 programs of seeds
/// 4,000..300,000 differ, every one with a compare-exchange; by graph,
/// each extra is a consistent execution whose cycle runs through RMW or
/// compare-exchange reads alone (which the brute force of this mode
/// leaves out), each missing one needs the failed compare-exchange to
/// read a write that depends on it. Two of them, with their counts
/// asserted so that a change shows here; [`failed_compare_exchange_speculates`]
/// explores both exactly.
///
/// With `CLMM_SPECULATE_RMW=1` (session 36) RMW and succeeding
/// compare-exchange reads speculate, and the brute force counts the
/// cycles through them: the first program's 3 extra executions are among
/// the 56 both count; the second's missing one stays missing.
#[test]
fn failed_compare_exchange_cycles_known_gap() {
    // Consistent executions with the cycle through RMW and
    // compare-exchange reads alone, which the brute force leaves out and
    // clmm explores (3 of them).
    let extra = failing_cas_cycle();
    // The brute force counted 47 until session 42, when an RMW that reads
    // what its unit's previous load reads left the relation (`free_reads`).
    assert_eq!((brute_count(&extra, ScModel::Spec), clmm_count(&extra, ScModel::Spec)), ((48, 0), (50, 0)));
    // The one execution with that cycle is missed.
    let missing = failing_cas_cycle_through_a_load();
    assert_eq!((brute_count(&missing, ScModel::Spec), clmm_count(&missing, ScModel::Spec)), ((10, 10), (9, 9)));
    // Not silently (session 43): the run says that cycles through failing
    // compare-exchanges may be unexplored, and the sweeps count both as
    // what this mode promises.
    let run = clmm_run_in(&missing, ScModel::Spec, false);
    assert_eq!(run, ((9, 9), Said { rmw: false, cas: true }));
    assert!(noted_cas_gap(false, run, (10, 10)));
    assert!(beyond_failing_cas_cycles(&extra, ScModel::Spec, false, (50, 0), (48, 0)));
}

/// The two programs of [`failed_compare_exchange_cycles_known_gap`] with
/// failing compare-exchanges speculating
/// (`Builder::speculate_compare_exchange`, session 30): clmm explores
/// exactly the consistent graphs, their cycles through failing
/// compare-exchanges included: 9 in the first (clmm found 3 of them
/// without speculating, through a revisit), 1 in the second.
#[test]
fn failed_compare_exchange_speculates() {
    for (p, counts) in [(failing_cas_cycle(), (56, 0)), (failing_cas_cycle_through_a_load(), (10, 10))] {
        assert_eq!((brute_count_in(&p, ScModel::Spec, true), clmm_count_in(&p, ScModel::Spec, true)), (counts, counts), "{p:?}");
    }
}

/// Seed 32620 of the sweep, shrunk (session 31): `Cas(y,0,2); Add y; Add
/// x || Ry || Rx; Add y` in one work-group. clmm explored 20 of the 22
/// executions until session 37, with or without failing compare-exchanges
/// speculating, and all 22 since speculations are also explored with the
/// owing units that read a promise scheduled first (`owing_first_matters`
/// in `clmm-check/src/explore/speculation.rs`). A rule tried in
/// session 31 lost one more (19): with a read after a pending promise of
/// its unit that reads a write coherence puts before the promised one
/// counted as a doom (`Doom` in `clmm_check::explore`; the first
/// work-item's `Add y` reading the initial value after its CAS failed on
/// a promised `Add y` of the third), the alternative where the third's
/// `Add y` reads the initial value was dropped as depending on it, though
/// it did so only through its load of `x`, a speculative read of the
/// first's `Add x`: a speculative read reads its promised value whatever
/// the promised write depends on, and that alternative's run revisits
/// the doomed read away, the promise of `Add x` pending again.
#[test]
fn alternative_through_a_kept_promise_of_a_doomed_run() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 3,
        units: vec![
            vec![Op::Cas(1, 0, 2, SeqCst, SeqCst, WG), Op::Add(1, SeqCst, WG), Op::Add(0, Relaxed, D)],
            vec![Op::Load(1, SeqCst, D)],
            vec![Op::Load(0, SeqCst, WG), Op::Add(1, Acquire, D)],
        ],
    };
    for cas in [false, true] {
        assert_eq!((brute_count_in(&p, ScModel::Spec, cas), clmm_count_in(&p, ScModel::Spec, cas)), ((22, 22), (22, 22)), "cas {cas}");
    }
}

/// Seed 8044 of the sweep, shrunk (session 38): `Ry; Cas(x,0,1) || Rx;
/// Add y; Add y || Add x; Cas(y,1,1); Add x`, each work-item in a group
/// of its own (so that no SC axiom applies to the complete graphs). Two
/// executions have the second's load of `x` read 2 from the third's last
/// `Add x` (a load-buffering cycle through its `Cas(y,1,1)`) while the
/// first's compare-exchange fails: that speculation's start graph has the
/// first work-item as it ran before the load, its compare-exchange
/// succeeding, and with it the last `Add x` writes 2 only when it reads
/// the compare-exchange's write, below its coherence floor (the third's
/// first `Add x` read it). clmm did not offer RMW reads the writes below
/// their floor, and found 98 of the 100 under the `opencl.cat` axiom
/// (the scoped axiom's prefix checks took another path to them); it now
/// does where a speculation may come of them
/// (`Engine::speculates_below_floor` in `clmm_check::explore`).
#[test]
fn rmw_below_its_floor_promises_a_needed_value() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Load(1, SeqCst, D), Op::Cas(0, 0, 1, SeqCst, SeqCst, D)],
            vec![Op::Load(0, Relaxed, WG), Op::Add(1, SeqCst, WG), Op::Add(1, SeqCst, WG)],
            vec![Op::Add(0, SeqCst, WG), Op::Cas(1, 1, 1, SeqCst, SeqCst, WG), Op::Add(0, Acquire, WG)],
        ],
    };
    assert_exact_in_every_mode(&p, (100, 100));
}

/// Seed 6095 of `SCOPED_SHAPE=wide`, shrunk (session 38): `a=Ry ||
/// Cas(y,1,2); Cas(x,0,2); Wy1 (release) || e=Rx; Wz2; Add y; Rz || Rx`,
/// one work-group. Two executions have `e` read the second work-item's
/// `Cas(x,0,2)` (a load-buffering cycle through `Add y` and `Cas(y,1,2)`)
/// and `a` read `Wy1`. The speculation on `e` starts from graphs where a
/// revisit made `a` read a write of `y` that depends on `e` (`Add y`, or
/// the compare-exchange's), kept as a promise; a speculative read was
/// never maximal, so no speculative run let `Wy1` revisit `a`, and 38 of
/// the 40 were found. A kept read is now revisited as the read it was
/// (`Engine::maximal` in `clmm_check::explore`), once its write is
/// produced again and the co-latest there.
#[test]
fn kept_promise_read_is_revisited() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![false, false, true],
        group: 4,
        units: vec![
            vec![Op::Load(1, SeqCst, WG)],
            vec![Op::Cas(1, 1, 2, AcqRel, Acquire, WG), Op::Cas(0, 0, 2, SeqCst, SeqCst, WG), Op::Store(1, 1, Release, D)],
            vec![Op::Load(0, Relaxed, D), Op::PlainStore(2, 2), Op::Add(1, SeqCst, D), Op::PlainLoad(2)],
            vec![Op::Load(0, SeqCst, WG)],
        ],
    };
    assert_exact_in_every_mode(&p, (40, 40));
}

/// Seed 28331 of `SCOPED_SHAPE=wide`, shrunk (session 38): `Cas(y,0,1);
/// Add x (acquire); Wz2 || Add y || Cas(x,2,1); Add y || Wz2`, `z`
/// plain. Two executions with both compare-exchanges on load-buffering
/// cycles are reached twice: from the speculation of the first
/// work-item's compare-exchange, and from the third's nested in a revisit
/// of the first's. The two runs add the plain stores in different orders.
/// A plain location has no coherence order, but the fingerprint that
/// counts a porf-cyclic execution once kept their insertion order: 14
/// executions of 12 (and `check_unique` saw no duplicate, comparing the
/// same fingerprint). `Graph::execution_fingerprint` leaves that order
/// out (session 39). Exact in every mode.
#[test]
fn plain_store_order_is_no_part_of_an_execution() {
    let p = Prog {
        locs: 3,
        plain: vec![false, false, true],
        group: 4,
        units: vec![
            vec![Op::Cas(1, 0, 1, Order::Relaxed, Order::Relaxed, Scope::Device), Op::Add(0, Order::Acquire, Scope::Device), Op::PlainStore(2, 2)],
            vec![Op::Add(1, Order::SeqCst, Scope::Device)],
            vec![Op::Cas(0, 2, 1, Order::Relaxed, Order::Relaxed, Scope::Device), Op::Add(1, Order::Relaxed, Scope::Device)],
            vec![Op::PlainStore(2, 2)],
        ],
    };
    // Without failing compare-exchanges on cycles, 9 (the brute force
    // leaves those out too).
    assert_exact_by_cas_mode(&p, (9, 9), (12, 12));
}

/// Seed 38638 of `SCOPED_SHAPE=wide`, shrunk (session 39): `a=Rz sc;
/// Cas(x,0,2) acq wg || Wy2 || Cas(x,2,1) acq_rel wg; Add z sc wg ||
/// Cas(x,1,2); Ry`, each work-item in a group of its own, `y` plain. In
/// the execution where `a` reads `Add z` (a load-buffering cycle through
/// the first two compare-exchanges) and the last compare-exchange reads
/// the third work-item's write, the speculative run adds the last
/// work-item's compare-exchange before the write it must read, so only a
/// revisit reaches it, and that revisit deletes the plain `Ry`. `Ry` has
/// the promise of `a` in its porf-prefix, and a plain load was not
/// maximal there while that promise was pending: 9 of 10 executions. Its
/// other candidate, `Wy2`, is of a work-item that has ended with nothing
/// after it but a release at a scope no other work-item shares, which
/// keeping the promise cannot bring into `Ry`'s past (`Engine::out_of_reach`
/// in `clmm_check::explore`).
#[test]
fn plain_store_of_an_ended_unit_stays_out_of_a_promise() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![false, true, false],
        group: 1,
        units: vec![
            vec![Op::Load(2, SeqCst, D), Op::Cas(0, 0, 2, Acquire, Acquire, WG)],
            vec![Op::PlainStore(1, 2)],
            vec![Op::Cas(0, 2, 1, AcqRel, Acquire, WG), Op::Add(2, SeqCst, WG)],
            vec![Op::Cas(0, 1, 2, Relaxed, Relaxed, D), Op::PlainLoad(1)],
        ],
    };
    assert_exact_in_every_mode(&p, (10, 10));
    // The same seed shrunk once the store alone was mended: a release
    // compare-exchange of `z` at work-group scope follows `Wy2`, which
    // synchronises with no other work-item (a group of one): 53 of 55.
    // With failing compare-exchanges not speculating (not the default)
    // it was 52 of 55, the class of Deviation 7 that option leaves, until
    // session 40 (`promise_owed_by_the_revisiting_unit`).
    let p = Prog {
        locs: 3,
        plain: vec![false, true, false],
        group: 1,
        units: vec![
            vec![Op::Load(2, SeqCst, D), Op::Cas(0, 0, 2, Acquire, Acquire, WG)],
            vec![Op::Store(2, 1, SeqCst, D), Op::PlainStore(1, 2), Op::Cas(2, 1, 1, Release, Relaxed, WG)],
            vec![Op::Cas(0, 2, 1, AcqRel, Acquire, WG), Op::Add(2, SeqCst, WG)],
            vec![Op::Cas(0, 1, 2, Relaxed, Relaxed, D), Op::PlainLoad(1)],
        ],
    };
    assert_exact_in_every_mode(&p, (55, 55));
}

/// Seed 43303 of `SCOPED_SHAPE=wide`, shrunk (session 39; closed in
/// session 40): `a=Ry sc; Cas(x,0,2) acq || Cas(y,2,2) rel; Add x ||
/// Cas(x,1,2) acq_rel; Add y`, relaxed adds, device scope, each
/// work-item in a group of its own. In two executions the second
/// work-item's failing compare-exchange is on a load-buffering cycle (it
/// reads `Add y`, which follows the third work-item's compare-exchange,
/// which reads `Add x`), and `a` reads `Add y` too, without a cycle. They
/// are reached from the graph where the first work-item's compare-exchange
/// reads the third's write (a revisit made it, and it is the co-latest
/// write of `x`): the speculation of `Cas(y)` keeps that read as a promise
/// ([`kept`](clmm_check::graph::Event::kept)), and in the rerun `Add y`
/// revisits `a`, which deletes the compare-exchange. A kept read was
/// maximal only as the read revisited, never as a deleted one, so that
/// revisit was not made: 22 of 24 (80 of 84 in full; without failing
/// compare-exchanges speculating, 18 of 18 both before and now). A kept
/// read whose write is produced again is now judged like any other read
/// (`Engine::maximal` in `clmm_check::explore`).
#[test]
fn kept_promise_read_is_deleted() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Load(1, SeqCst, D), Op::Cas(0, 0, 2, Acquire, Acquire, D)],
            vec![Op::Cas(1, 2, 2, Release, Relaxed, D), Op::Add(0, Relaxed, D)],
            vec![Op::Cas(0, 1, 2, AcqRel, Acquire, D), Op::Add(1, Relaxed, D)],
        ],
    };
    assert_exact_by_cas_mode(&p, (18, 0), (24, 0));
}

/// Seed 78512 of `SCOPED_SHAPE=wide`, shrunk (session 40): `Cas(y,2,1)
/// || Cas(x,0,2) rel wg; c=Rz || a=Ry; Add x; Add x wg || Wz2; Rx; Wy2
/// wg`, seq_cst unless said (`Ry` and `Rx` relaxed), `z` plain, one
/// work-group of four. In the missed execution `a` reads `Wy2` on a
/// load-buffering cycle (`a; Add x` then `Rx; Wy2`), the first
/// work-item's compare-exchange reads `Wy2` too, and `c` reads the
/// initial value. In the rerun of `a`'s speculation `Wy2` revisits that
/// compare-exchange, which deletes `c`. `c`'s choice was judged in its
/// Previous set, which leaves the revisiting write out: `a`'s promise
/// was pending there, no rule took the choice as decided (`Wy2`, after
/// `Wz2`, is a work-group scope release in a group of four), and the
/// revisit was not made. `Engine::maximal` now takes a pending promise
/// that the revisiting write's own unit owes (here the revisiting write
/// itself) as leaving the choice decided: 49 of 50 became 50, in every
/// mode (198 of 205 in full).
#[test]
fn promise_kept_by_the_revisiting_write() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![false, false, true],
        group: 4,
        units: vec![
            vec![Op::Cas(1, 2, 1, SeqCst, SeqCst, D)],
            vec![Op::Cas(0, 0, 2, Release, Relaxed, WG), Op::PlainLoad(2)],
            vec![Op::Load(1, Relaxed, D), Op::Add(0, SeqCst, D), Op::Add(0, Relaxed, WG)],
            vec![Op::PlainStore(2, 2), Op::Load(0, Relaxed, D), Op::Store(1, 2, SeqCst, WG)],
        ],
    };
    assert_exact_in_every_mode(&p, (50, 50));
}

/// Seed 75560 of `SCOPED_SHAPE=wide`, first shrink (session 40), the
/// same class as [`promise_kept_by_the_revisiting_write`]: `Cas(y,1,1) ||
/// Add z rel wg; Add y wg || Wx2; Wy2 wg || Cas(y,1,2); Add z wg; d=Rx`,
/// seq_cst unless said, `x` plain, one work-group of four. The failing
/// `Cas(y,1,2)` reads `Add y` on a load-buffering cycle; in its rerun
/// `Add y` revisits the first work-item's compare-exchange, deleting
/// `d`, whose choice was undecided with that very promise pending: 33
/// of 34 became 34.
#[test]
fn promise_kept_by_the_revisiting_write_through_a_compare_exchange() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![true, false, false],
        group: 4,
        units: vec![
            vec![Op::Cas(1, 1, 1, SeqCst, SeqCst, D)],
            vec![Op::Add(2, Release, WG), Op::Add(1, Relaxed, WG)],
            vec![Op::PlainStore(0, 2), Op::Store(1, 2, SeqCst, WG)],
            vec![Op::Cas(1, 1, 2, SeqCst, SeqCst, D), Op::Add(2, SeqCst, WG), Op::PlainLoad(0)],
        ],
    };
    assert_exact_by_cas_mode(&p, (31, 31), (34, 34));
}

/// Seed 75560 of `SCOPED_SHAPE=wide`, shrunk further (session 40; it
/// was found with a first fix, since dropped, that closed only
/// [`promise_kept_by_the_revisiting_write_through_a_compare_exchange`]):
/// `Cas(y,1,1); Wz2 wg || Add z rel wg; Add y wg || Wx2; Wy2 wg || Add z
/// wg; d=Rx`, seq_cst unless said, `x` plain, one
/// work-group of four. In the missed execution the first work-item's
/// compare-exchange reads `Add y` on a load-buffering cycle (through
/// `Wz2` and `Add z`), the fourth work-item's `Add z` reads the
/// second's, and `d` reads the initial value. In the speculation's rerun
/// the fourth work-item runs before the second; the second's `Add z`
/// revisits the fourth's, which deletes `d`, while the promise of `Add
/// y`, which the second work-item owes after the revisiting write, is
/// pending: `d`'s choice was undecided in its Previous set (`Wx2` may
/// come to happen before it once the promise is kept), and the revisit
/// was not made. The revisit deletes `Add y` too, so `d` is added again
/// with the promise pending as in that set: `Engine::maximal` now takes
/// such a promise as leaving the choice decided. 32 of 33 became 33 (936
/// of 969 in full became 969).
#[test]
fn promise_owed_by_the_revisiting_unit() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![true, false, false],
        group: 4,
        units: vec![
            vec![Op::Cas(1, 1, 1, SeqCst, SeqCst, D), Op::Store(2, 2, SeqCst, WG)],
            vec![Op::Add(2, Release, WG), Op::Add(1, Relaxed, WG)],
            vec![Op::PlainStore(0, 2), Op::Store(1, 2, SeqCst, WG)],
            vec![Op::Add(2, SeqCst, WG), Op::PlainLoad(0)],
        ],
    };
    assert_exact_by_cas_mode(&p, (30, 30), (33, 33));
}

/// Seed 29978 of `SCOPED_SHAPE=wide`, shrunk (session 38): `Add x;
/// Cas(x,2,1) wg; Wy2 wg; Wz1 || Cas(y,2,2) wg || Rz || Ry; Add x`, each
/// work-item in a group of its own, `z` plain. The execution where `Ry`
/// reads the second work-item's compare-exchange (which reads `Wy2`) and
/// the first's compare-exchange reads the fourth's `Add x` is reached
/// only by a revisit of that compare-exchange in the speculation of `Ry`,
/// which deletes the plain `Rz`. `Rz` has two candidates, and a plain
/// load was not maximal while a promise was pending anywhere in its
/// Previous set (`Engine::maximal` in `clmm_check::explore`): 11 of the
/// 12 executions were found. A promise outside its porf-prefix now
/// leaves its choice decided.
#[test]
fn plain_load_with_a_promise_outside_its_past_is_maximal() {
    use Order::SeqCst as S;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![false, false, true],
        group: 1,
        units: vec![
            vec![Op::Add(0, S, D), Op::Cas(0, 2, 1, S, S, WG), Op::Store(1, 2, S, WG), Op::PlainStore(2, 1)],
            vec![Op::Cas(1, 2, 2, S, S, WG)],
            vec![Op::PlainLoad(2)],
            vec![Op::Load(1, S, D), Op::Add(0, S, D)],
        ],
    };
    assert_exact_in_every_mode(&p, (12, 12));
}

/// Seed 6330 of `SCOPED_SHAPE=wide`, shrunk (session 31), with failing
/// compare-exchanges speculating: `Add x; Add y || Cas(y,0,1); Add y ||
/// Cas(y,1,1); Cas(y,2,1); Add x`, each work-item in a group of its own.
/// Its speculative runs have reads that read a write coherence must put
/// before a pending promise of their unit (a compare-exchange that failed
/// on a promised `Add y`, then one reading the initial value); treated as
/// dooms, so that the alternatives depending on them were dropped
/// (`Doom` in `clmm_check::explore`), one execution of the 47 was lost
/// (session 31): the retrying compare-exchange could come to read the
/// promise only through a speculation made in a run of a dropped
/// alternative. Since session 41 such a retry, failing on the promised
/// value, may read the promise when it is added, as a load may, and is a
/// CoRR doom (`corr_doom`) with that way out; the 47 are found. (56 with
/// `CLMM_SPECULATE_RMW=1`: 9 more, whose cycles run through RMW reads.)
/// Since session 42, 50: an RMW read reads its unit's previous read's
/// promise too (`free_reads` in `tests/differential`).
#[test]
fn doomed_reads_are_not_dooms() {
    use Order::SeqCst as S;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![vec![Op::Add(0, S, D), Op::Add(1, S, WG)], vec![Op::Cas(1, 0, 1, S, S, WG), Op::Add(1, S, WG)], vec![Op::Cas(1, 1, 1, S, S, D), Op::Cas(1, 2, 1, S, S, WG), Op::Add(0, S, WG)]],
    };
    assert_eq!((brute_count_in(&p, ScModel::Spec, true), clmm_count_in(&p, ScModel::Spec, true)), ((50, 50), (50, 50)));
}

/// Seed 15983 of `SCOPED_SHAPE=wide`, shrunk (session 35), with failing
/// compare-exchanges speculating: `Cas(y,0,1); Cas(y,0,1); Add x ||
/// Add x; y = 1 || fence`, each work-item in a group of its own. A rule
/// that let a doomed run (one with a `Doom` in `clmm_check::explore`)
/// push no speculation, since it cannot complete while it keeps the
/// doom's event, lost one of the 6 executions: a speculation that only
/// such a run made. It cut the work-stealing kernel's blocked runs from
/// 1,915 to 327 and agreed with every sweep but the wide one past seed
/// 10,000.
#[test]
fn speculations_of_a_doomed_run_are_needed() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 3,
        units: vec![
            vec![Op::Cas(1, 0, 1, AcqRel, Acquire, D), Op::Cas(1, 0, 1, Release, Relaxed, D), Op::Add(0, Relaxed, D)],
            vec![Op::Add(0, Acquire, D), Op::Store(1, 1, Relaxed, D)],
            vec![Op::Fence(SeqCst, D)],
        ],
    };
    assert_counts(&p, true, (6, 0), (6, 0));
}

/// Seed 11599 of the sweep, shrunk (session 36), with RMW reads
/// speculating and failing compare-exchanges not: `Cas(x,0,1); Add y ||
/// Cas(y,1,2); Add x`, each work-item in a group of its own. The second
/// work-item's `Cas(y,1,2)` failed in the graph it speculates from and
/// succeeds on its promise (the first's `Add y`, 1): its write part is
/// one event more, and the start graph's promise of its `Add x` (which
/// the first's `Cas(x,0,1)` reads, failing) named the position the
/// `Add x` had before, where the rerun puts its read part: the run ended
/// blocked, and the cycle (the 4th execution, which the brute force
/// without RMW speculation leaves out) was missed until the positions
/// after a compare-exchange whose outcome changes moved with it
/// (`shift_positions` in `clmm-check/src/explore/speculation.rs`).
#[test]
fn compare_exchange_that_now_succeeds_shifts_promises() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![vec![Op::Cas(0, 0, 1, Acquire, Acquire, D), Op::Add(1, Relaxed, D)], vec![Op::Cas(1, 1, 2, AcqRel, Acquire, D), Op::Add(0, Relaxed, D)]],
    };
    let with = |rmw: bool| clmm_count_by(&p, Builder::new().speculate_compare_exchange(false).speculate_rmw(rmw));
    assert_eq!((brute_count_in(&p, ScModel::Spec, false), with(false), with(true)), ((3, 0), (3, 0), (4, 0)));
}

/// Load buffering through a barrier (seed 6858 of `SCOPED_SHAPE=wide`,
/// shrunk). `a` reads `Add x`, which the fourth work-item does after its
/// `Add z` reads the second's, which the second does after leaving the
/// barrier its group shares with the first, which the first enters after
/// `a`: so `a` speculates. The execution where `b` also reads the fourth
/// work-item's `Add z` needs a revisit of `b` in the speculative run
/// (that work-item owes the promise and goes last), which deletes the
/// third work-item's plain load; until session 27 a plain load deleted
/// with a promise pending was never maximal, and clmm found 5 of 6.
#[test]
fn load_buffering_through_a_barrier() {
    use Order::SeqCst as S;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 3,
        plain: vec![false, true, false],
        group: 2,
        units: vec![
            vec![Op::Load(0, S, WG), Op::Barrier],
            vec![Op::Barrier, Op::Add(2, S, D), Op::Load(2, S, WG)],
            vec![Op::Barrier, Op::PlainLoad(1)],
            vec![Op::Barrier, Op::Add(2, S, WG), Op::Add(0, S, WG)],
        ],
    };
    assert_eq!((brute_count(&p, ScModel::Spec), clmm_count(&p, ScModel::Spec)), ((6, 6), (6, 6)));
}

/// Load buffering whose plain load reads a write that becomes visible to
/// it only through another load of the cycle. The fourth work-item's
/// plain store of `d` comes before its release store of `f`, which the
/// first work-item's acquire load reads; its release store of `h` is read
/// by the second work-item's acquire load, so the plain store happens
/// before the second work-item's plain load of `d`, which reads it. That
/// load comes before a relaxed store of `k`, copied by the third
/// work-item to `m` and read by the fourth before its plain store: a
/// cycle `Rd <- Wd1 <- Rm <- Wm1 <- Rk <- Wk1 <- Rd` whose two relaxed
/// reads keep it out of happens-before (no `rf; hb` cycle, O-Rf). A
/// speculation of the plain load alone can never make its write visible
/// to it (`Engine::never_visible` in `clmm-check/src/explore/speculation.rs`
/// drops it); a speculation of one of the atomic loads reaches the cycle.
/// Of the 16 executions 12 race on `d`; the 4 that do not (both acquire
/// loads synchronise) are the choices of the two relaxed loads, the
/// cycle among them.
#[test]
fn plain_load_buffering_visible_through_another_promise() {
    use Order::{Acquire as Acq, Relaxed as Rlx, Release as Rel};
    use Scope::Device as D;
    let p = Prog {
        locs: 5,
        plain: vec![false, false, false, false, true],
        group: 1,
        units: vec![
            vec![Op::Load(0, Acq, D), Op::Store(1, 1, Rel, D)],
            vec![Op::Load(1, Acq, D), Op::PlainLoad(4), Op::Store(2, 1, Rlx, D)],
            vec![Op::Load(2, Rlx, D), Op::Store(3, 1, Rlx, D)],
            vec![Op::Load(3, Rlx, D), Op::PlainStore(4, 1), Op::Store(0, 1, Rel, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count(&p, sc), clmm_count(&p, sc)), ((16, 12), (16, 12)), "{sc:?}");
    }
}

/// Load buffering that message passing forbids (`r = Rx; Wy1 rel || a =
/// Ry acq; b = Rz; Wx1 || Wz1; Wz2`): `r` reading `Wx1` would happen
/// before it through `Wy1` and `a` (O-Rf). The speculative runs stop at
/// `a`, an hb doom (`hb_doom_stops_a_hopeless_speculation` in
/// `tests/unique.rs` pins their blocked count); the count is the brute
/// force's: `a` and `b` choose freely (2 x 3), and `r` reads 1 only when
/// `a` reads the initial `y` (3 more).
#[test]
fn mp_shaped_load_buffering() {
    use Order::{Acquire as Acq, Relaxed as Rlx, Release as Rel};
    use Scope::Device as D;
    let p = Prog {
        locs: 3,
        plain: vec![false; 3],
        group: 1,
        units: vec![
            vec![Op::Load(0, Rlx, D), Op::Store(1, 1, Rel, D)],
            vec![Op::Load(1, Acq, D), Op::Load(2, Rlx, D), Op::Store(0, 1, Rlx, D)],
            vec![Op::Store(2, 1, Rlx, D), Op::Store(2, 2, Rlx, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count(&p, sc), clmm_count(&p, sc)), ((9, 0), (9, 0)), "{sc:?}");
    }
}

/// A release sequence continued by a later store of its unit (`rs' = wi
/// | ...`, `opencl_base.cat` line 35) orders a plain load after an
/// acquire compare-exchange that fails reading the store (seed 217819,
/// shrunk): the third unit's seq_cst compare-exchange heads it, its
/// release store at work-group scope (not inclusive with the second
/// unit, alone in its group) continues it. The vector clocks took the
/// plain load's read of the third unit's plain store for a violation of
/// O-NaRfG when the store's views came after the load's (it was not yet
/// counted as extending a release sequence), a disagreement with the
/// explicit model that `CLMM_CROSSCHECK` reports. Found in session 27 by
/// an experiment (failing compare-exchanges speculating, not kept), whose
/// exploration order reached that graph by another revisit: 9 of 10
/// executions under the scoped SC axiom. The explorer here reaches it in
/// an order the clocks got right before the fix too: this test guards the
/// counts, not the fix (`extends_release_sequences` in `vclock.rs`).
#[test]
fn release_sequence_continued_by_its_unit() {
    use Order::*;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 2,
        plain: vec![false, true],
        group: 1,
        units: vec![
            vec![Op::Add(0, Release, WG)],
            vec![Op::Cas(0, 1, 2, AcqRel, Acquire, D), Op::PlainLoad(1)],
            vec![Op::PlainStore(1, 2), Op::Cas(0, 1, 1, SeqCst, SeqCst, D), Op::Store(0, 2, Release, WG)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count(&p, sc), clmm_count(&p, sc)), ((10, 10), (10, 10)), "{sc:?}");
    }
}

/// Seed 7492 of `SCOPED_SHAPE=wide`, shrunk with `SCOPED_CROSSCHECK=1`
/// (session 48): `a=Rz; Add x; Add z (release) || Cas(z,1,2) || Add y;
/// Wz1 (release) || Cas(z,1,1) (release); Cas(y,0,2) (release)`, with
/// failing compare-exchanges speculating. An alternative makes the second
/// work-item's `Cas(z,1,2)` read anew (a promise), and its write
/// part is added again: the restored graph had given the deleted write
/// part's id and stamp to the new one, so the vector clocks took the old
/// view for its own until the write had a place in coherence, and
/// `Clocks::co_floor` kept that view (`CLMM_CROSSCHECK` panicked: "the
/// views of 1.4 are stale"; the counts were right). A new access's own
/// view is now dropped (`Clocks::new_access` in `vclock.rs`).
#[test]
fn write_part_added_again_is_not_its_predecessor() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 3,
        plain: vec![false, false, false],
        group: 2,
        units: vec![
            vec![Op::Load(2, SeqCst, D), Op::Add(0, SeqCst, D), Op::Add(2, Release, D)],
            vec![Op::Cas(2, 1, 2, SeqCst, SeqCst, D)],
            vec![Op::Add(1, SeqCst, D), Op::Store(2, 1, Release, D)],
            vec![Op::Cas(2, 1, 1, Release, Relaxed, D), Op::Cas(1, 0, 2, Release, Relaxed, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        let crossed = clmm_count_by(&p, Builder::new().sc_model(sc).speculate_compare_exchange(true).crosscheck(true));
        assert_eq!((brute_count_in(&p, sc, true), crossed), ((52, 0), (52, 0)), "{sc:?}");
    }
}

/// Seed 1134 of `SCOPED_SHAPE=wide`, shrunk with `SCOPED_CROSSCHECK=1`
/// (session 48): `a=Ry; Add y (relaxed) || b=Rx || Add y; Add x || Wx1;
/// Cas(y,0,1)`, all seq_cst but the first `Add y`, with failing
/// compare-exchanges speculating. A revisit's prefix (judged for
/// maximality) ends at the read part of the third work-item's `Add x`,
/// which reads the initial x: `Add x -rb-> Wx1 -sb-> Cas(y,0,1) -rb->`
/// the `Add y` before it is a cycle of the scoped SC axiom, which the
/// views found. The explicit model left out the `rb` edge from a read
/// part to the next dense index, its write part but for a prefix that
/// ends at the read part, where it is the next unit's first event
/// (`Wx1`), and `CLMM_CROSSCHECK` panicked (the counts were right: the
/// views decide these prefixes). Found by a crosscheck sweep of wide
/// seeds 0..1,500; session 47 had swept them without.
#[test]
fn rb_from_a_read_part_at_the_end_of_its_unit() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Load(1, SeqCst, D), Op::Add(1, Relaxed, D)],
            vec![Op::Load(0, SeqCst, D)],
            vec![Op::Add(1, SeqCst, D), Op::Add(0, SeqCst, D)],
            vec![Op::Store(0, 1, SeqCst, D), Op::Cas(1, 0, 1, SeqCst, SeqCst, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        let crossed = clmm_count_by(&p, Builder::new().sc_model(sc).speculate_compare_exchange(true).crosscheck(true));
        assert_eq!((brute_count_in(&p, sc, true), crossed), ((48, 0), (48, 0)), "{sc:?}");
    }
}

#[test]
fn fences_sc_and_scopes_match_brute_force() {
    let (bad, noted) = mismatches(0..4000, SHAPE);
    println!("Said so (Deviation 7, explored with speculate_rmw; or failing compare-exchanges not speculating): {noted:?}");
    assert!(bad.is_empty(), "(seed, SC axiom, CAS speculation, clmm (all, racy), brute force): {bad:?}");
}

/// A wider sweep, run by hand: `cargo test --release --test
/// scoped_differential -- --ignored` (`SCOPED_SEEDS=from..to`, and
/// `SCOPED_SHAPE=wide` for longer programs).
#[test]
#[ignore]
fn fences_sc_and_scopes_sweep() {
    let (bad, noted) = mismatches(differential::seeds_from_env("SCOPED_SEEDS", 4000..40000), sweep_shape());
    println!("Said so (Deviation 7, explored with speculate_rmw; or failing compare-exchanges not speculating): {noted:?}");
    assert!(bad.is_empty(), "(seed, SC axiom, CAS speculation, clmm (all, racy), brute force): {bad:?}");
}

/// Prints the program of each seed of `SCOPED_SEEDS=a,b,...`.
#[test]
#[ignore]
fn show() {
    for seed in differential::seed_list_from_env("SCOPED_SEEDS") {
        let p = program(seed, sweep_shape());
        for sc in [ScModel::Spec, ScModel::Scoped] {
            for cas in [false, true] {
                println!("{seed} {sc:?} cas={cas}: {p:?}: clmm {:?}, brute force {:?}", clmm_count_in(&p, sc, cas), brute_count_in(&p, sc, cas));
            }
        }
    }
}

/// Prints each program of `SCOPED_SEEDS=a,b,...` shrunk to a smallest
/// program that still differs (operations removed one at a time, the
/// barriers of all work-items together), with both counts: `cargo test
/// --release --test scoped_differential shrink -- --ignored --nocapture`
/// (`SCOPED_CAS=1`: with failing compare-exchanges speculating;
/// `SCOPED_CROSSCHECK=1`: to a smallest program on which
/// `Builder::crosscheck` panics, the counts aside).
#[test]
#[ignore]
fn shrink() {
    let on = |v: &str| std::env::var(v).is_ok_and(|v| v.trim() == "1");
    let (cas, cross) = (on("SCOPED_CAS"), on("SCOPED_CROSSCHECK"));
    let panics = |p: &Prog, sc: ScModel| {
        let b = Builder::new().sc_model(sc).speculate_compare_exchange(cas).crosscheck(true);
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| clmm_count_by(p, b))).is_err()
    };
    let bad = |p: &Prog| {
        [ScModel::Spec, ScModel::Scoped].iter().any(|&sc| if cross { panics(p, sc) } else { clmm_count_in(p, sc, cas) != brute_count_in(p, sc, cas) })
    };
    for seed in differential::seed_list_from_env("SCOPED_SEEDS") {
        let mut p = program(seed, sweep_shape());
        if !bad(&p) {
            println!("{seed}: no mismatch");
            continue;
        }
        'smaller: loop {
            let mut tries: Vec<Prog> = Vec::new();
            if p.units.iter().flatten().any(|&op| op == Op::Barrier) {
                let units = p.units.iter().map(|ops| ops.iter().copied().filter(|&op| op != Op::Barrier).collect()).collect();
                tries.push(Prog { units, ..p.clone() });
            }
            for u in 0..p.units.len() {
                for i in (0..p.units[u].len()).filter(|&i| p.units[u][i] != Op::Barrier) {
                    let mut q = p.clone();
                    q.units[u].remove(i);
                    if q.units.iter().all(|ops| !ops.is_empty()) {
                        tries.push(q);
                    }
                }
            }
            for q in tries {
                if bad(&q) {
                    p = q;
                    continue 'smaller;
                }
            }
            break;
        }
        let counts: Vec<_> = [ScModel::Spec, ScModel::Scoped].iter().map(|&sc| (clmm_count_in(&p, sc, cas), brute_count_in(&p, sc, cas))).collect();
        println!("{seed}: {p:?}: (clmm, brute force) under Spec and Scoped: {counts:?}");
    }
}

/// A plain load after an acquire load whose write is a pending promise.
/// The first work-item's acquire load of y speculates on the third's
/// release store, which follows the third's plain store of x and its load
/// of w; w comes from the second work-item, which reads the first's z. So
/// the three relaxed rf edges of the cycle carry no hb, and the plain
/// load of x may read the plain store: the release store, once produced,
/// synchronises with the acquire load and makes it visible. Until session
/// 28 the prefix in which the plain load read the store before the
/// release store was produced was pruned (O-NaRfG of the current hb, as
/// if hb could only shrink), and clmm found 7 of 8.
#[test]
fn plain_load_after_a_pending_acquire() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 4,
        plain: vec![true, false, false, false],
        group: 1,
        units: vec![
            vec![Op::Load(1, Acquire, D), Op::PlainLoad(0), Op::Store(2, 1, Relaxed, D)],
            vec![Op::Load(2, Relaxed, D), Op::Store(3, 1, Relaxed, D)],
            vec![Op::PlainStore(0, 1), Op::Load(3, Relaxed, D), Op::Store(1, 1, Release, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count(&p, sc), clmm_count(&p, sc)), ((8, 4), (8, 4)), "{sc:?}");
    }
}

/// Seed 88786 of `SCOPED_SHAPE=wide`, shrunk (session 41): `Add x ||
/// Cas(x,1,1); y = 1 || Cas(y,0,2); Cas(y,0,2) (seq_cst); Add x`, each
/// work-item in a group of its own. In one execution the third
/// work-item's two compare-exchanges both fail reading the second's
/// `y = 1`, which follows the second's compare-exchange, which reads the
/// third's `Add x`: load buffering through the first failing
/// compare-exchange, which speculates, and the retry must read the same
/// promise. Only loads were offered their unit's previous read's promise
/// (`Engine::push_read_promised` in `clmm_check::explore`), so the retry
/// came to read it only through a speculation of an RMW read
/// (`CLMM_SPECULATE_RMW=1`); under the spec's SC axiom the default mode
/// found 17 of 18. A compare-exchange that fails on the promised value
/// now reads it as a load does.
#[test]
fn retrying_compare_exchange_reads_the_promise() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Add(0, AcqRel, D)],
            vec![Op::Cas(0, 1, 1, AcqRel, Acquire, D), Op::Store(1, 1, Relaxed, D)],
            vec![Op::Cas(1, 0, 2, Release, Relaxed, D), Op::Cas(1, 0, 2, SeqCst, SeqCst, D), Op::Add(0, Relaxed, D)],
        ],
    };
    assert_exact_by_cas_mode(&p, (12, 0), (18, 0));
}

/// Seed 88786 of `SCOPED_SHAPE=wide`, shrunk again once
/// `retrying_compare_exchange_reads_the_promise` was closed (session
/// 41): `x = 2 (seq_cst) || a = x; Cas(x,1,1); y = 1; release fence ||
/// Cas(y,0,2); Cas(y,0,2) (seq_cst); Add x`, each work-item in a group of
/// its own. In one execution the third work-item's compare-exchanges
/// both fail on the second's `y = 1`, its `Add x` reads the initial
/// value, and the second's load and compare-exchange both read that
/// `Add x` (the compare-exchange succeeds), with `x = 2` last in
/// coherence. The load speculates; the compare-exchange, an RMW read, had
/// no way to read the promise but a speculation of its own
/// (`CLMM_SPECULATE_RMW=1`), and the default mode found 35 of 36 until
/// session 42: an RMW read that succeeds on the promised value now reads
/// its unit's previous read's promise (`Engine::push_read_promised` in
/// `clmm_check::explore`).
#[test]
fn load_and_compare_exchange_read_one_promise() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 1,
        units: vec![
            vec![Op::Store(0, 2, SeqCst, D)],
            vec![Op::Load(0, Relaxed, D), Op::Cas(0, 1, 1, AcqRel, Acquire, D), Op::Store(1, 1, Relaxed, D), Op::Fence(Release, D)],
            vec![Op::Cas(1, 0, 2, Release, Relaxed, D), Op::Cas(1, 0, 2, SeqCst, SeqCst, D), Op::Add(0, Relaxed, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        assert_eq!((brute_count_in(&p, sc, true), clmm_count_in(&p, sc, true)), ((36, 0), (36, 0)), "{sc:?}");
    }
    let rmw = clmm_count_by(&p, Builder::new().speculate_compare_exchange(true).speculate_rmw(true));
    assert_eq!(rmw, (36, 0));
}

/// Seed 21149 of `SCOPED_SHAPE=wide`, shrunk (session 42): `Cas(y,0,1);
/// Cas(y,2,2) || Add x; y = 2 || y = 1; Cas(y,2,2); Add x`, one
/// work-group. The brute force counts 35, the default mode explores 34.
/// The one missed has both compare-exchanges of the first work-item
/// reading the second's `y = 2`; the third's compare-exchange reads the
/// succeeding one's write part, and the cycle closes through `x`. The
/// failing compare-exchange speculates like a load, but only from a
/// graph where `y = 2` follows it, and in such a graph the succeeding
/// one already reads a write porf-after it: an RMW read's speculation,
/// which the default mode does not make (Deviation 7). So the run says
/// so (`Stats::rmw_cycles_unexplored`), and with `speculate_rmw` all of
/// them are explored (44 with the cycles through RMW reads alone). Wide
/// seeds 24027 (4,524 of 4,548) and 34836 (30 of 31) are the same
/// (session 43: [`noted_gap`]).
#[test]
fn load_speculation_that_needs_an_rmw_speculation() {
    use Order::SeqCst as S;
    use Scope::{Device as D, WorkGroup as WG};
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 3,
        units: vec![
            vec![Op::Cas(1, 0, 1, S, S, D), Op::Cas(1, 2, 2, S, S, WG)],
            vec![Op::Add(0, S, D), Op::Store(1, 2, S, WG)],
            vec![Op::Store(1, 1, S, WG), Op::Cas(1, 2, 2, S, S, D), Op::Add(0, S, WG)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        let run = clmm_run_in(&p, sc, true);
        assert_eq!((brute_count_in(&p, sc, true), run), ((35, 35), ((34, 34), Said { rmw: true, cas: false })), "{sc:?}");
        let rmw = Builder::new().sc_model(sc).speculate_compare_exchange(true).speculate_rmw(true);
        assert_eq!((brute_count_rmw(&p, sc, true, true), clmm_count_by(&p, rmw)), ((44, 44), (44, 44)), "{sc:?}");
        assert!(noted_gap(&p, sc, true, run, (35, 35)));
    }
}

/// Seed 19311 of `SCOPED_SHAPE=wide`, shrunk (session 43): `Cas(x,0,2)
/// || Cas(y,0,1); Add x; y = 1 || Add y; x = 1 || Cas(y,1,1)`. With
/// `speculate_rmw` the run panicked ("write in co"): the second
/// work-item's compare-exchange fails in a rerun where it succeeded in the
/// graph speculated from, so its events move up one place, and its `Add
/// x` then stood where a promise of `y = 1` named a write. The explorer
/// took that promise for one its write part must keep and looked for the
/// promise reader's write part in the coherence order of `x`
/// (`Engine::owed_by_rmw`: a promise of another location at that
/// position is broken whatever the RMW reads). Found by the sweep's
/// check of a noted gap ([`noted_gap`]), which runs the option.
#[test]
fn promise_of_another_location_where_an_rmw_writes() {
    use Order::*;
    use Scope::Device as D;
    let p = Prog {
        locs: 2,
        plain: vec![false, false],
        group: 4,
        units: vec![
            vec![Op::Cas(0, 0, 2, Relaxed, Relaxed, D)],
            vec![Op::Cas(1, 0, 1, Release, Relaxed, D), Op::Add(0, Relaxed, D), Op::Store(1, 1, Release, D)],
            vec![Op::Add(1, Acquire, D), Op::Store(0, 1, Relaxed, D)],
            vec![Op::Cas(1, 1, 1, AcqRel, Acquire, D)],
        ],
    };
    for sc in [ScModel::Spec, ScModel::Scoped] {
        for cas in [true, false] {
            let rmw = Builder::new().sc_model(sc).speculate_compare_exchange(cas).speculate_rmw(true);
            assert_eq!((brute_count_rmw(&p, sc, cas, true), clmm_count_by(&p, rmw)), ((60, 0), (60, 0)), "{sc:?}, cas {cas}");
        }
    }
}

