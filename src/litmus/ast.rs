//! Abstract syntax of an OpenCL litmus test in herd's syntax.
//!
//! The AST is what the file says, resolved only as far as the syntax allows:
//! builtin calls are typed ([`Builtin`]), but memory orders and scopes that
//! the source leaves out stay `None` (the caller applies OpenCL's defaults,
//! `memory_order_seq_cst` and `memory_scope_device`), and names in
//! expressions stay [`Expr::Var`] (a register or a pointer parameter,
//! decided by the program's parameters and declarations). Nothing here
//! checks that orders are legal for an operation, that registers are
//! declared, or that the condition names existing threads: those are the
//! caller's semantic checks.

use std::fmt;

/// A position in the source file: 1-based line and column (in characters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub col: usize,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

/// A whole litmus test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Test {
    /// The name after `OpenCL` on the first line (any non-space characters).
    pub name: String,
    /// The initial state `{ ... }`, in source order (may be empty).
    pub init: Vec<InitEntry>,
    /// The programs `P0`, `P1`, ... in source order.
    pub programs: Vec<Program>,
    /// The trees after `scopeTree`, one per top-level node (usually one
    /// `device` each); `None` when the file has no `scopeTree`.
    pub scope_tree: Option<Vec<ScopeNode>>,
    /// The `locations [...]` line, empty when absent.
    pub locations: Vec<CondLoc>,
    /// The final condition.
    pub condition: Condition,
}

/// The type of a location or of what a pointer parameter points to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueType {
    /// `int`: a non-atomic location.
    Int,
    /// `atomic_int`.
    AtomicInt,
    /// `atomic_flag`.
    AtomicFlag,
}

/// One entry of the initial state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitEntry {
    /// What the entry initialises.
    pub kind: InitKind,
    /// Where the entry starts.
    pub pos: Pos,
}

/// The forms of an initial-state entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InitKind {
    /// `[x]=0;`, `x = 0;`, or the C declaration `int x = 0;` /
    /// `atomic_int x;` (then `ty` is the declared type; `value` is `None`
    /// when the declaration has no initialiser).
    Location {
        /// The location's name.
        name: String,
        /// The declared type, for the C declaration form.
        ty: Option<ValueType>,
        /// The initial value; `None` only for a declaration without `= v`.
        value: Option<InitValue>,
    },
    /// `atomic_int y[2] = {0, 0};`: an array of `len` cells; `values` are
    /// the initialisers as written (C fills missing ones with 0; empty when
    /// there is no `= {...}`).
    Array {
        /// The array's name.
        name: String,
        /// The element type.
        ty: ValueType,
        /// The declared length.
        len: usize,
        /// The initialisers as written.
        values: Vec<i64>,
    },
    /// `0:r0 = 1;`: the initial value of a register of a thread.
    Register {
        /// The thread (program) number.
        thread: usize,
        /// The register's name.
        reg: String,
        /// The initial value.
        value: InitValue,
    },
}

/// A value in the initial state or the final condition: an integer or the
/// name of a location (a pointer to it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InitValue {
    /// An integer literal (possibly negative).
    Int(i64),
    /// A location's name.
    Loc(String),
}

/// One program `P<n> (params) { body }`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The `n` of `P<n>`.
    pub id: usize,
    /// The pointer parameters, in order.
    pub params: Vec<Param>,
    /// The statements of the body.
    pub body: Vec<Stmt>,
    /// Where `P<n>` starts.
    pub pos: Pos,
}

/// The address space qualifier of a pointer parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AddressSpace {
    /// `global` (or `__global`).
    Global,
    /// `local` (or `__local`).
    Local,
    /// `global_fga`: fine-grained SVM with atomics support.
    GlobalFga,
}

/// A parameter `[space] type* name`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The address space; `None` when unqualified (`int* x`).
    pub space: Option<AddressSpace>,
    /// The pointee type.
    pub ty: ValueType,
    /// The parameter's name, which is also the location's name.
    pub name: String,
    /// Where the parameter starts.
    pub pos: Pos,
}

/// A statement with its position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stmt {
    /// What the statement is.
    pub kind: StmtKind,
    /// Where it starts.
    pub pos: Pos,
}

/// The statements of a program body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StmtKind {
    /// `int r0 = e;`, `int r0;`, `int a, b = 1;`: local `int` registers.
    Decl(Vec<Declarator>),
    /// `r = e;`: assignment to a register.
    Assign {
        /// The register assigned.
        reg: String,
        /// The value.
        value: Expr,
    },
    /// `*p = e;`: a non-atomic store through the pointer expression `addr`.
    Store {
        /// The pointer expression (a parameter, or e.g. `y+r0`).
        addr: Expr,
        /// The value stored.
        value: Expr,
    },
    /// `f(...);`: a builtin call whose result is dropped.
    Call(Call),
    /// `if (cond) then [else otherwise]`.
    If {
        /// The condition (non-zero is true).
        cond: Expr,
        /// The statement run when true.
        then_branch: Box<Stmt>,
        /// The statement run when false, if any.
        else_branch: Option<Box<Stmt>>,
    },
    /// `while (cond) body`.
    While {
        /// The loop condition.
        cond: Expr,
        /// The body.
        body: Box<Stmt>,
    },
    /// `{ ... }`.
    Block(Vec<Stmt>),
    /// `L: stmt`: a labelled statement (herd matches barriers by label).
    Labelled {
        /// The label.
        label: String,
        /// The statement labelled.
        stmt: Box<Stmt>,
    },
    /// `;`.
    Empty,
}

/// One declared register of a [`StmtKind::Decl`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declarator {
    /// The register's name.
    pub name: String,
    /// Its initialiser, if any.
    pub init: Option<Expr>,
}

/// An expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// An integer literal; `-1` is folded into `Int(-1)`.
    Int(i64),
    /// A name: a register, or a pointer parameter (whose value is the
    /// location).
    Var(String),
    /// `*e`: a non-atomic load through the pointer expression `e`.
    Deref(Box<Expr>),
    /// A unary operator.
    Unary(UnaryOp, Box<Expr>),
    /// A binary operator (`y+r0` on a pointer is pointer arithmetic).
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A builtin call (atomic operation, fence, barrier).
    Call(Box<Call>),
}

/// A unary operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `!e`.
    Not,
    /// `-e`.
    Neg,
}

/// A binary operator, with C's meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&&`
    And,
    /// `||`
    Or,
}

/// A call of a supported builtin, with its position (the function name's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The operation, resolved from the function's name and arguments.
    pub builtin: Builtin,
    /// Where the call starts.
    pub pos: Pos,
}

/// The supported builtins, resolved. `order`/`scope` are `None` when the
/// source leaves them out (non-`_explicit` forms, or an `_explicit` form
/// without scope): the caller applies `seq_cst` / `device`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Builtin {
    /// `atomic_init(obj, value)`: a non-atomic initialisation.
    Init {
        /// The atomic object (a pointer expression).
        obj: Expr,
        /// The value.
        value: Expr,
    },
    /// `atomic_load[_explicit](obj [, order [, scope]])`.
    Load {
        /// The atomic object.
        obj: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_store[_explicit](obj, value [, order [, scope]])`.
    Store {
        /// The atomic object.
        obj: Expr,
        /// The value stored.
        value: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_exchange[_explicit](obj, value [, order [, scope]])`.
    Exchange {
        /// The atomic object.
        obj: Expr,
        /// The value written.
        value: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_compare_exchange_{strong,weak}[_explicit](obj, expected,
    /// desired [, success, failure [, scope]])`; returns 1 on success.
    CompareExchange {
        /// `true` for the `_weak` form (may fail spuriously).
        weak: bool,
        /// The atomic object.
        obj: Expr,
        /// A pointer to the expected value (written with the value found
        /// on failure).
        expected: Expr,
        /// The value written on success.
        desired: Expr,
        /// The order on success, if given.
        success: Option<MemoryOrder>,
        /// The order on failure, if given.
        failure: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_fetch_<op>[_explicit](obj, value [, order [, scope]])`;
    /// returns the old value.
    FetchOp {
        /// Which read-modify-write.
        op: FetchOp,
        /// The atomic object.
        obj: Expr,
        /// The operand.
        value: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_flag_test_and_set[_explicit](obj [, order [, scope]])`.
    FlagTestAndSet {
        /// The flag.
        obj: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_flag_clear[_explicit](obj [, order [, scope]])`.
    FlagClear {
        /// The flag.
        obj: Expr,
        /// The memory order, if given.
        order: Option<MemoryOrder>,
        /// The memory scope, if given.
        scope: Option<MemoryScope>,
    },
    /// `atomic_work_item_fence(flags, order, scope)` (all three required).
    Fence {
        /// The regions fenced.
        flags: FenceFlags,
        /// The memory order.
        order: MemoryOrder,
        /// The memory scope.
        scope: MemoryScope,
    },
    /// `barrier(flags)` or `work_group_barrier(flags [, scope])`.
    Barrier {
        /// Which spelling was used.
        form: BarrierForm,
        /// The regions the barrier fences.
        flags: FenceFlags,
        /// The scope, if given (only `work_group_barrier` takes one).
        scope: Option<MemoryScope>,
    },
}

/// The read-modify-write of an `atomic_fetch_<op>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FetchOp {
    /// `add`
    Add,
    /// `sub`
    Sub,
    /// `or`
    Or,
    /// `xor`
    Xor,
    /// `and`
    And,
    /// `min`
    Min,
    /// `max`
    Max,
}

/// A `memory_order_*` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryOrder {
    /// `memory_order_relaxed`
    Relaxed,
    /// `memory_order_acquire`
    Acquire,
    /// `memory_order_release`
    Release,
    /// `memory_order_acq_rel`
    AcqRel,
    /// `memory_order_seq_cst`
    SeqCst,
}

/// A `memory_scope_*` argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MemoryScope {
    /// `memory_scope_work_item`
    WorkItem,
    /// `memory_scope_sub_group`
    SubGroup,
    /// `memory_scope_work_group`
    WorkGroup,
    /// `memory_scope_device`
    Device,
    /// `memory_scope_all_svm_devices`
    AllSvmDevices,
}

/// The `CLK_*_MEM_FENCE` flags of a fence or barrier (`|`-combined; the
/// literal `0` is no flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct FenceFlags {
    /// `CLK_GLOBAL_MEM_FENCE`
    pub global: bool,
    /// `CLK_LOCAL_MEM_FENCE`
    pub local: bool,
    /// `CLK_IMAGE_MEM_FENCE`
    pub image: bool,
}

/// Which barrier builtin was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierForm {
    /// `barrier(flags)` (OpenCL 1.x name).
    Barrier,
    /// `work_group_barrier(flags [, scope])`.
    WorkGroupBarrier,
}

/// A node of the scope tree: `(level children...)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeNode {
    /// The node's level.
    pub level: ScopeLevel,
    /// Sub-nodes (each of a strictly lower level) and threads, in order.
    pub children: Vec<ScopeItem>,
}

/// A child in the scope tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeItem {
    /// A nested node.
    Node(ScopeNode),
    /// A thread `P<n>`, by number.
    Thread(usize),
}

/// The levels of the scope tree, from the largest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScopeLevel {
    /// `device`
    Device,
    /// `kernel`
    Kernel,
    /// `work_group`
    WorkGroup,
    /// `sub_group`
    SubGroup,
}

/// The final condition: a quantifier and a proposition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Condition {
    /// `exists`, `~exists` or `forall`.
    pub quantifier: Quantifier,
    /// The proposition over final states.
    pub prop: Prop,
}

/// The quantifier of the final condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Quantifier {
    /// `exists`: some final state satisfies the proposition.
    Exists,
    /// `~exists`: no final state does.
    NotExists,
    /// `forall`: every final state does.
    Forall,
}

/// A proposition of the final condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prop {
    /// `true`.
    True,
    /// `false`.
    False,
    /// `loc=value` or `N:reg=value`.
    Atom(Atom),
    /// `~p` or `not p`.
    Not(Box<Prop>),
    /// `p /\ q /\ ...` (two or more operands, flattened).
    And(Vec<Prop>),
    /// `p \/ q \/ ...` (two or more operands, flattened).
    Or(Vec<Prop>),
}

/// An equality `loc=value` of the final condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    /// The register or location tested.
    pub loc: CondLoc,
    /// The value it must have (an integer or a location name).
    pub value: InitValue,
}

/// A register of a thread or a memory location, as named in the final
/// condition and `locations`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum CondLoc {
    /// `N:reg`: register (or parameter) `reg` of thread `N`.
    Reg {
        /// The thread (program) number.
        thread: usize,
        /// The register's name.
        reg: String,
    },
    /// `x` or `[x]`: the final value of location `x`.
    Loc(String),
}
