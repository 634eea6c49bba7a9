//! Running a litmus test through the engine.
//!
//! Each program `Pn` becomes the kernel of one work-item placed by the
//! scope tree ([`clmm::Topology`](crate::Topology)); its registers are the
//! work-item's result. Final values of locations come from the engine's
//! final memory. In compatibility mode (`Mode::Herd`) the reference's rules
//! of `shared/litmus/README.md` apply: the coherence order of a non-atomic
//! location is free (the execution counts `k!` for its `k` writes, and the
//! final value may be any of them), barriers are matched by label,
//! partial participation and local memory across groups are accepted, and
//! scope inclusion is the `.cat`'s.

use super::ast::*;
use crate::{Scope, Topology};
use clmm_atomic::backend::{self, Access, AllocRegion, BarrierId, LocId, Mode as AccessMode, Op};
use clmm_atomic::{FenceFlags as Flags, NumTy, Order, RmwOp};
use clmm_check::{Config, Control, FailureKind, ScModel};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Mutex;
use std::thread::ThreadId;

/// Which rules to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// clmm's own semantics (deviations reported as failures).
    Clmm,
    /// The reference's rules (`--herd`).
    Herd,
}

/// A final state: register or location name → value (an integer or a
/// location name).
pub type State = BTreeMap<String, String>;

/// What running a litmus test found.
#[derive(Clone, Debug, Default)]
pub struct LitmusResult {
    /// Each final state with the number of executions reaching it.
    pub states: BTreeMap<State, u64>,
    /// Number of consistent executions (counted as the reference does in
    /// compatibility mode).
    pub executions: u64,
    /// Explorations that ended blocked.
    pub blocked: u64,
    /// With [`RunOptions::dot`]: one Graphviz picture per final state (the
    /// first execution reaching it).
    pub dots: Vec<(State, String)>,
    /// Complete executions explored twice (counted only with
    /// `CLMM_CHECK_UNIQUE=1`; a bug if not 0).
    pub duplicates: u64,
    /// `O-Dr` / `O-Bd` (and in clmm's mode other failure kinds) with the
    /// states of the executions that have them.
    pub flags: BTreeMap<String, BTreeSet<State>>,
    /// Messages of clmm-mode failures other than races and divergence
    /// (local memory across groups, ...), one per kind.
    pub notes: Vec<String>,
    /// Executions satisfying / not satisfying the condition's proposition.
    pub positive: u64,
    /// See `positive`.
    pub negative: u64,
    /// Wall time.
    pub time: std::time::Duration,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    Int(i64),
    Ptr(String, i64),
}

struct Layout {
    /// name → (region, atomic, initial values)
    locs: BTreeMap<String, (AllocRegion, bool, Vec<i64>)>,
    /// work-item (launch order) → program index
    programs: Vec<usize>,
    topology: Topology,
}

fn layout(t: &Test) -> Result<Layout, String> {
    let mut locs: BTreeMap<String, (AllocRegion, bool, Vec<i64>)> = BTreeMap::new();
    for e in &t.init {
        match &e.kind {
            InitKind::Location { name, ty, value } => {
                let v = match value {
                    Some(InitValue::Int(i)) => *i,
                    Some(InitValue::Loc(l)) => return Err(format!("unsupported construct: location `{name}` initialised with a pointer to `{l}`")),
                    None => 0,
                };
                let atomic = !matches!(ty, Some(ValueType::Int));
                locs.insert(name.clone(), (AllocRegion::Global, atomic, vec![v]));
            }
            InitKind::Array { name, ty, len, values } => {
                let mut vs = values.clone();
                vs.resize(*len, 0);
                locs.insert(name.clone(), (AllocRegion::Global, *ty != ValueType::Int, vs));
            }
            InitKind::Register { .. } => return Err("unsupported construct: initial register values".into()),
        }
    }
    let mut declared: HashMap<String, (Option<AddressSpace>, bool)> = HashMap::new();
    for p in &t.programs {
        for prm in &p.params {
            let e = declared.entry(prm.name.clone()).or_insert((prm.space, true));
            if prm.ty == ValueType::Int {
                e.1 = false; // atomicity belongs to the location (rule 2)
            }
            if e.0.is_none() {
                e.0 = prm.space;
            }
        }
    }
    for (name, (space, atomic)) in declared {
        let region = match space {
            Some(AddressSpace::Global) => AllocRegion::Global,
            Some(AddressSpace::GlobalFga) => AllocRegion::GlobalFga,
            Some(AddressSpace::Local) => AllocRegion::Local,
            None => AllocRegion::Unqualified,
        };
        let e = locs.entry(name).or_insert((region, atomic, vec![0]));
        e.0 = region;
        e.1 = e.1 && atomic;
    }
    // Scope tree → topology.
    let mut topology = Topology::new();
    let mut programs = Vec::new();
    match &t.scope_tree {
        None => {
            topology = topology.device([t.programs.len()]);
            programs.extend(0..t.programs.len());
        }
        Some(roots) => {
            let mut devices: Vec<Vec<(Vec<usize>, usize)>> = Vec::new();
            fn threads(n: &ScopeNode, out: &mut Vec<usize>, first_sub: &mut Option<usize>) {
                for c in &n.children {
                    match c {
                        ScopeItem::Thread(t) => out.push(*t),
                        ScopeItem::Node(m) => {
                            if m.level == ScopeLevel::SubGroup && first_sub.is_none() {
                                let mut v = Vec::new();
                                threads(m, &mut v, &mut None);
                                *first_sub = Some(v.len());
                                out.extend(v);
                            } else {
                                threads(m, out, first_sub);
                            }
                        }
                    }
                }
            }
            fn groups(n: &ScopeNode, out: &mut Vec<(Vec<usize>, usize)>) {
                match n.level {
                    ScopeLevel::WorkGroup => {
                        let mut v = Vec::new();
                        let mut sub = None;
                        threads(n, &mut v, &mut sub);
                        let len = v.len();
                        out.push((v, sub.unwrap_or(len)));
                    }
                    ScopeLevel::SubGroup => {
                        let mut v = Vec::new();
                        threads(n, &mut v, &mut None);
                        let len = v.len();
                        out.push((v, len));
                    }
                    _ => {
                        let mut loose = Vec::new();
                        for c in &n.children {
                            match c {
                                ScopeItem::Node(m) => groups(m, out),
                                ScopeItem::Thread(t) => loose.push(*t),
                            }
                        }
                        if !loose.is_empty() {
                            let len = loose.len();
                            out.push((loose, len));
                        }
                    }
                }
            }
            for r in roots {
                let mut gs = Vec::new();
                groups(r, &mut gs);
                if r.level == ScopeLevel::Device || devices.is_empty() {
                    devices.push(gs);
                } else {
                    devices.last_mut().expect("device").extend(gs);
                }
            }
            for d in &devices {
                topology = topology.device_with_sub_groups(d.iter().map(|(v, s)| (v.len(), *s)));
                for (v, _) in d {
                    programs.extend(v.iter().copied());
                }
            }
        }
    }
    let mut seen = BTreeSet::new();
    for &p in &programs {
        if !t.programs.iter().any(|q| q.id == p) {
            return Err(format!("the scope tree names P{p}, which the test does not define"));
        }
        if !seen.insert(p) {
            return Err(format!("the scope tree names P{p} twice"));
        }
    }
    for q in &t.programs {
        if !seen.contains(&q.id) {
            return Err(format!("P{} is not in the scope tree", q.id));
        }
    }
    let programs = programs.iter().map(|&p| t.programs.iter().position(|q| q.id == p).expect("checked")).collect();
    Ok(Layout { locs, programs, topology })
}

fn order(o: Option<MemoryOrder>) -> Order {
    match o.unwrap_or(MemoryOrder::SeqCst) {
        MemoryOrder::Relaxed => Order::Relaxed,
        MemoryOrder::Acquire => Order::Acquire,
        MemoryOrder::Release => Order::Release,
        MemoryOrder::AcqRel => Order::AcqRel,
        MemoryOrder::SeqCst => Order::SeqCst,
    }
}

fn scope(s: Option<MemoryScope>) -> Scope {
    match s.unwrap_or(MemoryScope::Device) {
        MemoryScope::WorkItem => Scope::WorkItem,
        MemoryScope::SubGroup => Scope::SubGroup,
        MemoryScope::WorkGroup => Scope::WorkGroup,
        MemoryScope::Device => Scope::Device,
        MemoryScope::AllSvmDevices => Scope::AllSvmDevices,
    }
}

fn flags(f: FenceFlags) -> Flags {
    let mut x = Flags::empty();
    if f.global {
        x |= Flags::GLOBAL;
    }
    if f.local {
        x |= Flags::LOCAL;
    }
    if f.image {
        x |= Flags::IMAGE;
    }
    x
}

struct Interp<'a> {
    item: &'a crate::WorkItem,
    locs: &'a HashMap<String, LocId>,
    /// Each location's number of elements (1 but for arrays), for the
    /// bounds of pointer arithmetic.
    lens: &'a BTreeMap<String, (AllocRegion, bool, Vec<i64>)>,
    env: BTreeMap<String, Val>,
    /// Memory operations, fences and barriers made so far: a `while`
    /// iteration without any is bounded ([`PURE_ITERATIONS`]).
    ops: u64,
}

/// How many iterations in a row a `while` loop may make without a memory
/// operation while changing its registers (`while (1) { r0 = r0 + 1; }`):
/// clmm regains control only at an operation, so such a loop hung the
/// run (a user-acceptance run, session 56). An iteration that changes no
/// register is a spin-loop iteration instead (`hint::spin_loop`), which
/// the step bound and the spin rule end.
const PURE_ITERATIONS: u64 = 1_000_000;

/// Whether a run error starts with where it happened (`line:col: ...`,
/// as the interpreter makes them); `clmm-litmus` then puts the file's name before it
/// as `file:line:col`.
pub fn says_where(msg: &str) -> bool {
    msg.starts_with(|c: char| c.is_ascii_digit())
}

/// `msg` at `pos`, unless it already says where.
fn at(pos: Pos, msg: String) -> String {
    if says_where(&msg) {
        msg
    } else {
        format!("{}:{}: {msg}", pos.line, pos.col)
    }
}

type R<T> = Result<T, String>;

impl Interp<'_> {
    fn loc(&self, p: &Val) -> R<LocId> {
        match p {
            Val::Ptr(n, off) => {
                let base = *self.locs.get(n).ok_or_else(|| format!("unknown location `{n}`"))?;
                let len = self.lens.get(n).map_or(1, |l| l.2.len());
                if *off < 0 || *off as usize >= len {
                    let e = if len == 1 { "element" } else { "elements" };
                    return Err(format!("`{n}{off:+}` is outside `{n}`, which has {len} {e}"));
                }
                Ok(base.offset(*off as usize))
            }
            Val::Int(i) => Err(format!("the integer {i} used as a pointer")),
        }
    }

    fn mem(&mut self, loc: LocId, access: Access, mode: AccessMode) -> backend::Reply {
        self.ops += 1;
        let b = backend::current().expect("inside a model run");
        b.op(Op::Mem { loc, access, mode }, std::panic::Location::caller())
    }

    fn int(&mut self, e: &Expr) -> R<i64> {
        match self.eval(e)? {
            Val::Int(i) => Ok(i),
            Val::Ptr(n, _) => Err(format!("the pointer `{n}` used as an integer")),
        }
    }

    fn eval(&mut self, e: &Expr) -> R<Val> {
        Ok(match e {
            Expr::Int(i) => Val::Int(*i),
            Expr::Var(n) => self.env.get(n).cloned().ok_or_else(|| format!("unknown name `{n}`"))?,
            Expr::Deref(p) => {
                let p = self.eval(p)?;
                let l = self.loc(&p)?;
                Val::Int(self.mem(l, Access::Load, AccessMode::Plain).value as i64)
            }
            Expr::Unary(UnaryOp::Not, x) => Val::Int((self.int(x)? == 0) as i64),
            Expr::Unary(UnaryOp::Neg, x) => Val::Int(-self.int(x)?),
            Expr::Binary(op, a, b) => {
                if *op == BinaryOp::And {
                    return Ok(Val::Int((self.int(a)? != 0 && self.int(b)? != 0) as i64));
                }
                if *op == BinaryOp::Or {
                    return Ok(Val::Int((self.int(a)? != 0 || self.int(b)? != 0) as i64));
                }
                // The operands are unsequenced (C11 §6.5p2), as in the
                // reference, where neither is program-ordered before the
                // other: a plain read is evaluated before an atomic call of
                // the other operand, so that it is not ordered after what
                // that call acquires (`atomic_load(x, acquire) + *y`
                // cannot see `*y` through the acquire).
                let (x, y) = if has_call(a) && !has_call(b) {
                    let y = self.eval(b)?;
                    (self.eval(a)?, y)
                } else {
                    (self.eval(a)?, self.eval(b)?)
                };
                match (op, x, y) {
                    (BinaryOp::Add, Val::Ptr(n, o), Val::Int(k)) | (BinaryOp::Add, Val::Int(k), Val::Ptr(n, o)) => Val::Ptr(n, o + k),
                    (BinaryOp::Sub, Val::Ptr(n, o), Val::Int(k)) => Val::Ptr(n, o - k),
                    (BinaryOp::Eq, x, y) => Val::Int((x == y) as i64),
                    (BinaryOp::Ne, x, y) => Val::Int((x != y) as i64),
                    (op, Val::Int(x), Val::Int(y)) => Val::Int(match op {
                        BinaryOp::Lt => (x < y) as i64,
                        BinaryOp::Le => (x <= y) as i64,
                        BinaryOp::Gt => (x > y) as i64,
                        BinaryOp::Ge => (x >= y) as i64,
                        BinaryOp::Add => x.wrapping_add(y),
                        BinaryOp::Sub => x.wrapping_sub(y),
                        BinaryOp::Mul => x.wrapping_mul(y),
                        BinaryOp::BitAnd => x & y,
                        BinaryOp::BitOr => x | y,
                        BinaryOp::BitXor => x ^ y,
                        _ => unreachable!("handled above"),
                    }),
                    (op, _, _) => return Err(format!("unsupported construct: {op:?} on pointers")),
                }
            }
            Expr::Call(c) => self.call(c, None)?,
        })
    }

    fn call(&mut self, c: &Call, label: Option<&str>) -> R<Val> {
        let atomic = |o: Option<MemoryOrder>, s: Option<MemoryScope>| AccessMode::Atomic(order(o), scope(s));
        Ok(match &c.builtin {
            Builtin::Init { obj, value } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                let v = self.int(value)?;
                self.mem(l, Access::Store(v as u64), AccessMode::Plain);
                Val::Int(0)
            }
            Builtin::Load { obj, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                Val::Int(self.mem(l, Access::Load, atomic(*o, *s)).value as i64)
            }
            Builtin::Store { obj, value, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                let v = self.int(value)?;
                self.mem(l, Access::Store(v as u64), atomic(*o, *s));
                Val::Int(0)
            }
            Builtin::Exchange { obj, value, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                let v = self.int(value)?;
                Val::Int(self.mem(l, Access::Rmw(RmwOp::Xchg, NumTy::I64, v as u64), atomic(*o, *s)).value as i64)
            }
            Builtin::FetchOp { op, obj, value, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                let v = self.int(value)?;
                let op = match op {
                    FetchOp::Add => RmwOp::Add,
                    FetchOp::Sub => RmwOp::Sub,
                    FetchOp::Or => RmwOp::Or,
                    FetchOp::Xor => RmwOp::Xor,
                    FetchOp::And => RmwOp::And,
                    FetchOp::Min => RmwOp::Min,
                    FetchOp::Max => RmwOp::Max,
                };
                Val::Int(self.mem(l, Access::Rmw(op, NumTy::I64, v as u64), atomic(*o, *s)).value as i64)
            }
            Builtin::CompareExchange { weak, obj, expected, desired, success, failure, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                let el = { let p = self.eval(expected)?; self.loc(&p)? };
                // Rule 8: `expected` is read and (on failure) written by
                // non-atomic accesses that carry all-svm-devices scope.
                let side = AccessMode::Atomic(Order::Relaxed, Scope::AllSvmDevices);
                let exp = self.mem(el, Access::Load, side).value;
                let d = self.int(desired)?;
                let r = self.mem(
                    l,
                    Access::Cas { expected: exp, desired: d as u64, failure: order(failure.or(*success)), weak: *weak },
                    atomic(*success, *s),
                );
                if !r.ok {
                    self.mem(el, Access::Store(r.value), side);
                }
                Val::Int(r.ok as i64)
            }
            Builtin::FlagTestAndSet { obj, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                Val::Int((self.mem(l, Access::Rmw(RmwOp::Xchg, NumTy::I64, 1), atomic(*o, *s)).value != 0) as i64)
            }
            Builtin::FlagClear { obj, order: o, scope: s } => {
                let l = { let p = self.eval(obj)?; self.loc(&p)? };
                self.mem(l, Access::Store(0), atomic(*o, *s));
                Val::Int(0)
            }
            Builtin::Fence { flags: f, order: o, scope: s } => {
                self.ops += 1;
                clmm_atomic::atomic_work_item_fence(flags(*f), order(Some(*o)), scope(Some(*s)));
                Val::Int(0)
            }
            Builtin::Barrier { flags: f, scope: s, .. } => {
                let name = match label {
                    Some(l) => l.to_string(),
                    None => format!("{}:{}", c.pos.line, c.pos.col),
                };
                let id = intern(&name);
                self.ops += 1;
                let b = backend::current().expect("inside a model run");
                b.op(
                    Op::Barrier { id: BarrierId::Named(id), flags: flags(*f), scope: s.map(|x| scope(Some(x))).unwrap_or(Scope::WorkGroup), kind: backend::BarrierKind::WorkGroup, collective: None },
                    std::panic::Location::caller(),
                );
                let _ = self.item;
                Val::Int(0)
            }
        })
    }

    /// Run statement `s`; an error says where (line and column).
    fn exec(&mut self, s: &Stmt, label: Option<&str>) -> R<()> {
        self.exec_at(s, label).map_err(|e| at(s.pos, e))
    }

    fn exec_at(&mut self, s: &Stmt, label: Option<&str>) -> R<()> {
        match &s.kind {
            StmtKind::Decl(ds) => {
                for d in ds {
                    let v = match &d.init {
                        Some(e) => self.eval(e)?,
                        None => Val::Int(0),
                    };
                    self.env.insert(d.name.clone(), v);
                }
            }
            StmtKind::Assign { reg, value } => {
                let v = self.eval(value)?;
                self.env.insert(reg.clone(), v);
            }
            StmtKind::Store { addr, value } => {
                let p = self.eval(addr)?;
                let l = self.loc(&p)?;
                let v = self.int(value)?;
                self.mem(l, Access::Store(v as u64), AccessMode::Plain);
            }
            StmtKind::Call(c) => {
                self.call(c, label)?;
            }
            StmtKind::If { cond, then_branch, else_branch } => {
                if self.int(cond)? != 0 {
                    self.exec(then_branch, None)?;
                } else if let Some(e) = else_branch {
                    self.exec(e, None)?;
                }
            }
            StmtKind::While { cond, body } => {
                // An iteration that leaves the registers as they were is a
                // spin-loop iteration: it ends with `hint::spin_loop()`, so
                // that one reading the same writes as the one before blocks
                // until another unit writes there, as in a Rust port
                // (without it, a spin-wait ran to the step bound and was
                // reported as a livelock). One that changes them may act
                // differently next time, and gets no hint; made without a
                // memory operation, it is bounded.
                let mut pure = 0u64;
                loop {
                    let (regs, ops) = (self.env.clone(), self.ops);
                    if self.int(cond)? == 0 {
                        break;
                    }
                    self.exec(body, None)?;
                    if self.env == regs {
                        clmm_atomic::hint::spin_loop();
                        pure = 0;
                    } else if self.ops == ops {
                        pure += 1;
                        if pure >= PURE_ITERATIONS {
                            return Err(format!("this while loop made {PURE_ITERATIONS} iterations in a row without a memory operation, each changing its registers: a loop that never ends?"));
                        }
                    } else {
                        pure = 0;
                    }
                }
            }
            StmtKind::Block(b) => {
                for s in b {
                    self.exec(s, None)?;
                }
            }
            StmtKind::Labelled { label, stmt } => self.exec(stmt, Some(label))?,
            StmtKind::Empty => {}
        }
        Ok(())
    }
}

/// The names the final condition projects on.
pub fn observed(t: &Test) -> Vec<CondLoc> {
    fn walk(p: &Prop, out: &mut Vec<CondLoc>) {
        match p {
            Prop::Atom(a) => {
                if !out.contains(&a.loc) {
                    out.push(a.loc.clone())
                }
            }
            Prop::Not(x) => walk(x, out),
            Prop::And(v) | Prop::Or(v) => v.iter().for_each(|x| walk(x, out)),
            Prop::True | Prop::False => {}
        }
    }
    let mut out = t.locations.clone();
    walk(&t.condition.prop, &mut out);
    out
}

/// The text of a condition location (`0:r0`, `x`).
pub fn cond_name(c: &CondLoc) -> String {
    match c {
        CondLoc::Reg { thread, reg } => format!("{thread}:{reg}"),
        CondLoc::Loc(l) => l.clone(),
    }
}

/// Whether a state satisfies the proposition.
pub fn holds(p: &Prop, s: &State) -> bool {
    match p {
        Prop::True => true,
        Prop::False => false,
        Prop::Atom(a) => {
            let want = match &a.value {
                InitValue::Int(i) => i.to_string(),
                InitValue::Loc(l) => l.clone(),
            };
            s.get(&cond_name(&a.loc)).is_some_and(|v| *v == want)
        }
        Prop::Not(x) => !holds(x, s),
        Prop::And(v) => v.iter().all(|x| holds(x, s)),
        Prop::Or(v) => v.iter().any(|x| holds(x, s)),
    }
}

fn show(v: &Val) -> String {
    match v {
        Val::Int(i) => i.to_string(),
        Val::Ptr(n, 0) => n.clone(),
        Val::Ptr(n, o) => format!("{n}+{o}"),
    }
}

/// Run `t` under `sc` and `mode`.
pub fn run(t: &Test, sc: ScModel, mode: Mode) -> Result<LitmusResult, String> {
    run_with_options(t, sc, mode, &RunOptions::default())
}

/// Which of clmm's deviations (the Deviations list of `clmm_check::model`)
/// change the result of `t`: each is switched to the reference's rule
/// alone, and named when the states, flags or execution count differ from
/// clmm's own result `own`. Each entry: the deviation's name and what the
/// reference's rule gives instead.
pub fn deviations(t: &Test, sc: ScModel, own: &LitmusResult) -> Result<Vec<String>, String> {
    let lay = layout(t)?;
    let obs = observed(t);
    let base = run_config(t, sc, Mode::Clmm);
    type Knob = fn(&mut clmm_check::Config, &Test);
    let knobs: [(&str, Knob); 4] = [
        ("1-2 (sub-group scope inclusive within a sub-group; scopes on local memory widen to work-group)", |c, _| c.sem.compat = true),
        ("3 (every work-item of a group must reach the same barrier)", |c, _| {
            c.barrier_partial = true;
            c.barrier_by_id = true;
        }),
        ("4 (local memory of another work-group is a usage error)", |c, _| c.local_across_groups = true),
        ("6 (no out-of-thin-air through control dependencies)", |c, t| c.thin_air = Some(constants(t).into())),
    ];
    let mut out = Vec::new();
    for (name, knob) in knobs {
        let mut cfg = base.clone();
        knob(&mut cfg, t);
        let r = run_with(t, &lay, &obs, &cfg, Mode::Clmm, false)?;
        if r.states != own.states || r.flags != own.flags || r.executions != own.executions {
            let states: Vec<String> = r.states.keys().map(super::check::fmt_state).collect();
            let flags: Vec<&str> = r.flags.keys().map(String::as_str).collect();
            out.push(format!(
                "Deviation {name}: the reference's rule gives {} executions, states [{}], flags [{}]",
                r.executions,
                states.join(" | "),
                flags.join(", ")
            ));
        }
    }
    Ok(out)
}

/// What a litmus run may do besides [`run`]'s defaults
/// ([`run_with_options`]).
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Explorer workers (see `clmm::Builder::workers`); 1 by default.
    pub workers: usize,
    /// Explore only shard `index` of `count` (see `clmm::Builder::shard`).
    pub shard: Option<(u32, u32)>,
    /// Fingerprint every complete execution, to count those explored
    /// twice ([`LitmusResult::duplicates`]).
    pub check_unique: bool,
    /// Draw one execution per final state ([`LitmusResult::dots`]).
    pub dot: bool,
    /// Check the vector clocks against the explicit model on every prefix
    /// (see `clmm::Builder::crosscheck`).
    pub crosscheck: bool,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { workers: 1, shard: None, check_unique: false, dot: false, crosscheck: false }
    }
}

/// [`run`] with `opts`.
pub fn run_with_options(t: &Test, sc: ScModel, mode: Mode, opts: &RunOptions) -> Result<LitmusResult, String> {
    let mut cfg = run_config(t, sc, mode);
    cfg.workers = opts.workers;
    cfg.shard = opts.shard.map(|(k, n)| clmm_check::Shard::new(k, n)).transpose()?;
    cfg.check_unique |= opts.check_unique;
    cfg.crosscheck |= opts.crosscheck;
    run_with(t, &layout(t)?, &observed(t), &cfg, mode, opts.dot)
}

/// The configuration of a litmus run: every execution explored (no stop at
/// failures), final memory collected, no replay, no DOT picture of
/// failures (`CLMM_DOT`; the front end draws its own per final state).
fn run_config(t: &Test, sc: ScModel, mode: Mode) -> clmm_check::Config {
    let mut cfg = crate::Builder::new().sc_model(sc).compat(mode == Mode::Herd).config().clone();
    cfg.stop_at_first_failure = false;
    cfg.collect_memory = true;
    cfg.replay = None;
    cfg.dot_dir = None;
    if mode == Mode::Herd {
        // The reference's model has no dependencies: out-of-thin-air
        // values through control dependencies are consistent there.
        cfg.thin_air = Some(constants(t).into());
    }
    cfg
}

/// A `'static` copy of `s`, made once per distinct string in the process:
/// barrier labels and location names outlive a run (the checker keeps
/// them in its graphs and location table).
fn intern(s: &str) -> &'static str {
    static NAMES: Mutex<BTreeSet<&'static str>> = Mutex::new(BTreeSet::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&n) = names.get(s) {
        return n;
    }
    let n: &'static str = Box::leak(s.to_owned().into_boxed_str());
    names.insert(n);
    n
}

/// Run `t`; with `dot`, draw one execution per final state.
fn run_with(t: &Test, lay: &Layout, obs: &[CondLoc], cfg: &Config, mode: Mode, dot: bool) -> Result<LitmusResult, String> {
    // Reports name each location by its variable.
    let names: BTreeMap<&str, &'static str> = lay.locs.keys().map(|n| (n.as_str(), intern(n))).collect();
    let error: Mutex<Option<String>> = Mutex::new(None);
    // Per worker thread (several workers run executions at once).
    let loc_ids: Mutex<HashMap<ThreadId, HashMap<String, LocId>>> = Mutex::new(HashMap::new());
    let regs = crate::builder::WorkerSlot::<Vec<BTreeMap<String, Val>>>::new();
    let me = || std::thread::current().id();
    let body = || {
        regs.begin();
        let b = backend::current().expect("inside a model run");
        let mut ids = HashMap::new();
        for (name, (region, atomic, init)) in &lay.locs {
            if *region != AllocRegion::Local {
                let l = b.alloc(*region, init.len(), *atomic, &mut |i| init[i] as u64, std::panic::Location::caller());
                b.label(l, names[name.as_str()]);
                ids.insert(name.clone(), l);
            }
        }
        loc_ids.lock().unwrap().insert(me(), ids);
        let results = crate::launch_with_local(
            &lay.topology,
            |wg| {
                if wg.flat == 0 {
                    let b = backend::current().expect("inside a model run");
                    for (name, (region, atomic, init)) in &lay.locs {
                        if *region == AllocRegion::Local {
                            let l = b.alloc(*region, init.len(), *atomic, &mut |i| init[i] as u64, std::panic::Location::caller());
                            b.label(l, names[name.as_str()]);
                            loc_ids.lock().unwrap().entry(me()).or_default().insert(name.clone(), l);
                        }
                    }
                }
            },
            |item, _| {
                let idx = lay.topology_index(item);
                let prog = &t.programs[lay.programs[idx]];
                let locs = loc_ids.lock().unwrap().get(&me()).cloned().unwrap_or_default();
                let mut it = Interp { item, locs: &locs, lens: &lay.locs, env: BTreeMap::new(), ops: 0 };
                for p in &prog.params {
                    it.env.insert(p.name.clone(), Val::Ptr(p.name.clone(), 0));
                }
                for s in &prog.body {
                    if let Err(e) = it.exec(s, None) {
                        // `line:col: message` (`exec`): the file's name goes
                        // before it (`clmm-litmus`).
                        let (pos, msg) = e.split_once(": ").unwrap_or(("", &e));
                        *error.lock().unwrap() = Some(format!("{pos}: P{}: {msg}", prog.id));
                        break;
                    }
                }
                it.env
            },
        );
        regs.put(results);
    };
    let names: Vec<String> = lay.locs.keys().cloned().collect();
    let mut res = LitmusResult::default();
    let mut note_kinds = BTreeSet::new();
    let prog_of_item: Vec<usize> = lay.programs.iter().map(|&p| t.programs[p].id).collect();
    let stats = clmm_check::explore(cfg, &body, &mut |d| {
        let end = match d {
            clmm_check::Delivery::Execution(end) => end,
            clmm_check::Delivery::Restart => {
                res = LitmusResult::default();
                note_kinds.clear();
                regs.clear();
                return Control::Continue;
            }
        };
        let regs = regs.take();
        let ids = loc_ids.lock().unwrap().get(&me()).cloned().unwrap_or_default();
        // Per observed name, the possible values.
        let mut choices: Vec<(String, Vec<String>)> = Vec::new();
        for c in obs {
            let name = cond_name(c);
            let vals = match c {
                CondLoc::Reg { thread, reg } => {
                    let item = prog_of_item.iter().position(|p| p == thread);
                    let v = match (&regs, item) {
                        (Some(r), Some(i)) => r.get(i).and_then(|m| m.get(reg)).map(show).unwrap_or_else(|| "0".into()),
                        _ => "?".into(),
                    };
                    vec![v]
                }
                CondLoc::Loc(l) => match ids.get(l) {
                    Some(id) => {
                        let m = &end.memory[id.0 as usize];
                        if mode == Mode::Herd && !m.atomic && m.writes.len() > 1 {
                            let mut v: Vec<String> = m.writes.iter().map(|&x| (x as i64).to_string()).collect();
                            v.sort();
                            v.dedup();
                            v
                        } else {
                            vec![(m.last as i64).to_string()]
                        }
                    }
                    None => vec!["?".into()],
                },
            };
            choices.push((name, vals));
        }
        // Herd counts every order of the k writes of a non-atomic location.
        let mut mult: u64 = 1;
        if mode == Mode::Herd {
            for n in &names {
                if let Some(id) = ids.get(n) {
                    for k in 0..lay.locs[n].2.len() {
                        let m = &end.memory[id.0 as usize + k];
                        if !m.atomic {
                            mult *= (1..=m.writes.len() as u64).product::<u64>();
                        }
                    }
                }
            }
        }
        let mut states = vec![State::new()];
        for (name, vals) in &choices {
            let mut next = Vec::new();
            for s in &states {
                for v in vals {
                    let mut s2 = s.clone();
                    s2.insert(name.clone(), v.clone());
                    next.push(s2);
                }
            }
            states = next;
        }
        res.executions += mult;
        if dot {
            for s in &states {
                if !res.dots.iter().any(|(x, _)| x == s) {
                    let title = format!("{}: {}", t.name, super::check::fmt_state(s));
                    res.dots.push((s.clone(), clmm_check::dot::render(end.graph, end.locs, cfg.sem, &[], &title)));
                }
            }
        }
        for s in &states {
            *res.states.entry(s.clone()).or_default() += mult / states.len().max(1) as u64;
            let sat = holds(&t.condition.prop, s);
            if sat {
                res.positive += mult / states.len() as u64;
            } else {
                res.negative += mult / states.len() as u64;
            }
            for f in end.failures {
                let flag = match f.kind {
                    FailureKind::DataRace => "O-Dr".to_string(),
                    FailureKind::BarrierDivergence => "O-Bd".to_string(),
                    ref k => {
                        if note_kinds.insert(k.to_string()) {
                            res.notes.push(f.message.clone());
                        }
                        k.to_string()
                    }
                };
                res.flags.entry(flag).or_default().insert(s.clone());
            }
        }
        Control::Continue
    });
    if let Some(e) = error.lock().unwrap().take() {
        return Err(e);
    }
    res.blocked = stats.blocked;
    res.duplicates = stats.duplicates;
    res.notes.extend(stats.notes().map(str::to_string));
    res.time = stats.time;
    Ok(res)
}

impl Layout {
    fn topology_index(&self, item: &crate::WorkItem) -> usize {
        // Work-items are in launch order: count the work-items of earlier
        // devices and groups.
        let plan = self.topology.plan().expect("valid topology");
        plan.groups[item.flat_group()].first_item + item.local_linear_id()
    }
}

fn quantifier(t: &Test) -> &'static str {
    match t.condition.quantifier {
        Quantifier::Exists => "exists",
        Quantifier::NotExists => "~exists",
        Quantifier::Forall => "forall",
    }
}

fn prop_text(p: &Prop) -> String {
    match p {
        Prop::True => "true".into(),
        Prop::False => "false".into(),
        Prop::Atom(a) => format!(
            "{}={}",
            cond_name(&a.loc),
            match &a.value {
                InitValue::Int(i) => i.to_string(),
                InitValue::Loc(l) => l.clone(),
            }
        ),
        Prop::Not(x) => format!("~({})", prop_text(x)),
        Prop::And(v) => v.iter().map(prop_text).collect::<Vec<_>>().join(" /\\ "),
        Prop::Or(v) => format!("({})", v.iter().map(prop_text).collect::<Vec<_>>().join(" \\/ ")),
    }
}

/// `Ok`/`No` and `Always`/`Sometimes`/`Never`, as herd computes them.
pub fn verdict(t: &Test, r: &LitmusResult) -> (bool, &'static str) {
    let obs = if r.negative == 0 && r.positive > 0 {
        "Always"
    } else if r.positive == 0 {
        "Never"
    } else {
        "Sometimes"
    };
    let ok = match t.condition.quantifier {
        Quantifier::Exists => r.positive > 0,
        Quantifier::NotExists => r.positive == 0,
        Quantifier::Forall => r.negative == 0,
    };
    (ok, obs)
}

/// herd's text output, plus `Executions` and the flags with their states.
pub fn to_herd_text(t: &Test, r: &LitmusResult) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    // herd's kinds of test: `exists` Allowed, `~exists` Forbidden, `forall`
    // Required.
    let kind = match t.condition.quantifier {
        Quantifier::Forall => "Required",
        Quantifier::NotExists => "Forbidden",
        Quantifier::Exists => "Allowed",
    };
    let _ = writeln!(s, "Test {} {kind}", t.name);
    let _ = writeln!(s, "States {}", r.states.len());
    for st in r.states.keys() {
        let _ = writeln!(s, "{}", super::check::fmt_state(st));
    }
    let (ok, obs) = verdict(t, r);
    let _ = writeln!(s, "{}", if ok { "Ok" } else { "No" });
    let _ = writeln!(s, "Condition {} ({})", quantifier(t), prop_text(&t.condition.prop));
    let _ = writeln!(s, "Observation {} {obs} {} {}", t.name, r.positive, r.negative);
    let _ = writeln!(s, "Executions {}", r.executions);
    if r.blocked > 0 {
        let _ = writeln!(s, "Blocked {}", r.blocked);
    }
    if r.duplicates > 0 {
        let _ = writeln!(s, "Duplicates {}", r.duplicates);
    }
    for (flag, states) in &r.flags {
        let _ = writeln!(s, "Flag {flag}");
        for st in states {
            let _ = writeln!(s, "  {}", super::check::fmt_state(st));
        }
    }
    for n in &r.notes {
        let _ = writeln!(s, "Note {n}");
    }
    s
}

/// The same as JSON, in the shape of the expectation files.
pub fn to_json(t: &Test, sc: ScModel, r: &LitmusResult) -> String {
    use serde_json::{json, Map, Value};
    let st = |s: &State| Value::Object(s.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect::<Map<_, _>>());
    let (ok, obs) = verdict(t, r);
    let flags: Map<String, Value> = r.flags.iter().map(|(k, v)| (k.clone(), Value::Array(v.iter().map(st).collect()))).collect();
    json!({
        "test": t.name,
        "model": if sc == ScModel::Spec { "spec" } else { "scoped" },
        "executions": r.executions,
        "blocked": r.blocked,
        "states": r.states.keys().map(st).collect::<Vec<_>>(),
        "condition": format!("{} ({})", quantifier(t), prop_text(&t.condition.prop)),
        "ok": ok,
        "observation": obs,
        "positive": r.positive,
        "negative": r.negative,
        "flags": flags,
        "notes": r.notes,
    })
    .to_string()
}

/// Whether evaluating `e` calls a builtin (an atomic operation).
fn has_call(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Var(_) => false,
        Expr::Deref(x) | Expr::Unary(_, x) => has_call(x),
        Expr::Binary(_, a, b) => has_call(a) || has_call(b),
        Expr::Call(_) => true,
    }
}

/// The integer constants of a test's programs (and of its initial state):
/// the values a load may read out of thin air in compatibility mode
/// ([`clmm_check::Config::thin_air`]), a cover of what a conditional
/// store of the test can write (the tests' stores write constants or
/// values read).
fn constants(t: &Test) -> Vec<u64> {
    use crate::litmus::ast::{Builtin, Expr, StmtKind};
    fn expr(e: &Expr, out: &mut Vec<i64>) {
        match e {
            Expr::Int(v) => out.push(*v),
            Expr::Var(_) => {}
            Expr::Deref(x) | Expr::Unary(_, x) => expr(x, out),
            Expr::Binary(_, a, b) => {
                expr(a, out);
                expr(b, out);
            }
            Expr::Call(c) => call(&c.builtin, out),
        }
    }
    fn call(b: &Builtin, out: &mut Vec<i64>) {
        let es: Vec<&Expr> = match b {
            Builtin::Init { obj, value } | Builtin::Store { obj, value, .. } | Builtin::Exchange { obj, value, .. } | Builtin::FetchOp { obj, value, .. } => vec![obj, value],
            Builtin::CompareExchange { obj, expected, desired, .. } => vec![obj, expected, desired],
            Builtin::Load { obj, .. } | Builtin::FlagTestAndSet { obj, .. } | Builtin::FlagClear { obj, .. } => vec![obj],
            Builtin::Fence { .. } | Builtin::Barrier { .. } => vec![],
        };
        for e in es {
            expr(e, out);
        }
        // A test-and-set writes 1.
        if matches!(b, Builtin::FlagTestAndSet { .. }) {
            out.push(1);
        }
    }
    fn stmt(s: &crate::litmus::ast::Stmt, out: &mut Vec<i64>) {
        match &s.kind {
            StmtKind::Decl(ds) => ds.iter().filter_map(|d| d.init.as_ref()).for_each(|e| expr(e, out)),
            StmtKind::Assign { value, .. } => expr(value, out),
            StmtKind::Store { addr, value } => {
                expr(addr, out);
                expr(value, out);
            }
            StmtKind::Call(c) => call(&c.builtin, out),
            StmtKind::If { cond, then_branch, else_branch } => {
                expr(cond, out);
                stmt(then_branch, out);
                if let Some(e) = else_branch {
                    stmt(e, out);
                }
            }
            StmtKind::While { cond, body } => {
                expr(cond, out);
                stmt(body, out);
            }
            StmtKind::Block(ss) => ss.iter().for_each(|s| stmt(s, out)),
            StmtKind::Labelled { stmt: s, .. } => stmt(s, out),
            StmtKind::Empty => {}
        }
    }
    let mut out = Vec::new();
    for p in &t.programs {
        p.body.iter().for_each(|s| stmt(s, &mut out));
    }
    let mut vals: Vec<u64> = out.into_iter().map(|v| v as u64).collect();
    vals.sort_unstable();
    vals.dedup();
    vals
}
