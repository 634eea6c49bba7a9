//! Parser of OpenCL litmus tests in herd's syntax into [`super::ast::Test`].
//!
//! # Why pest
//!
//! The grammar is written with [pest](https://pest.rs) (`pest` +
//! `pest_derive`, grammar in `litmus/litmus.pest`) rather than by hand or
//! with a combinator crate (winnow, nom) because:
//!
//! - pest's errors carry the line and column of the failure and the list of
//!   grammar rules it expected there, which is exactly what
//!   `FILE:LINE:COL: expected ..., found ...` needs; naming the punctuation
//!   rules (`semi`, `rbrace`, ...) makes that list read like C ("expected
//!   binary operator or `;`"). With winnow we would have to thread context
//!   labels through every combinator by hand to get the same.
//! - The grammar is a separate, declarative PEG file that reads as the
//!   specification of the accepted syntax, and the parser is generated at
//!   compile time (no build script, no run-time grammar loading).
//! - It is a mature, widely used and maintained crate (pest 2.x, stable
//!   API since 2018) with no unsafe-heavy or native dependencies.
//!
//! Parsing is two steps: pest checks the syntax and builds a parse tree,
//! then the builder below turns it into the AST, resolving builtin calls
//! (typed [`Builtin`] with optional order/scope) and rejecting unknown
//! functions and C constructs as "unsupported construct `foo`", with the
//! same error type and position format.

use std::fmt;

use pest::error::{InputLocation, LineColLocation};
use pest::iterators::Pair;
use pest::Parser as _;

use super::ast::*;

/// The pest-generated parser, in a private module so that its `Rule` enum
/// stays out of the public API.
mod grammar {
    #[derive(pest_derive::Parser)]
    #[grammar = "litmus/litmus.pest"]
    pub(super) struct LitmusParser;
}
use grammar::{LitmusParser, Rule};

/// What kind of problem a [`ParseError`] reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseErrorKind {
    /// The text does not match the grammar.
    Syntax,
    /// It matches the grammar but a piece is not valid where it stands (a
    /// wrong memory order name, a wrong number of arguments, a scope tree
    /// nested the wrong way, a repeated program number, ...).
    Invalid,
    /// A construct the litmus language does not support: an unknown
    /// function (`foo(...)`) or a C statement such as `for`. The string is
    /// the construct's name.
    Unsupported(String),
}

/// A parse error, displayed as `FILE:LINE:COL: expected ..., found ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The file name given by the caller.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub col: usize,
    /// The kind of problem.
    pub kind: ParseErrorKind,
    /// What was expected there (e.g. "binary operator or `;`").
    pub expected: String,
    /// What was found there (e.g. "`}`", "end of file").
    pub found: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}: expected {}, found {}",
            self.file, self.line, self.col, self.expected, self.found
        )
    }
}

impl std::error::Error for ParseError {}

/// Parses the litmus test `src`; `file_name` is used only in errors.
pub fn parse_litmus(src: &str, file_name: &str) -> Result<Test, ParseError> {
    let b = Builder { file: file_name, cond_locs: Default::default() };
    let mut pairs = LitmusParser::parse(Rule::file, src).map_err(|e| b.pest_error(src, e))?;
    let file = pairs.next().expect("pest returns the `file` pair");
    b.file(file)
}

type R<T> = Result<T, ParseError>;

/// Turns the parse tree into the AST; knows the file name for errors.
struct Builder<'f> {
    file: &'f str,
    /// The registers and locations the condition and `locations` name,
    /// where: checked against the test once it is built
    /// ([`Builder::check_names`]).
    cond_locs: std::cell::RefCell<Vec<(CondLoc, Pos)>>,
}

/// The children of `pair` that carry meaning (punctuation and keywords
/// dropped).
fn kids(pair: Pair<'_, Rule>) -> impl Iterator<Item = Pair<'_, Rule>> {
    pair.into_inner().filter(|p| {
        !matches!(
            p.as_rule(),
            Rule::lbrace
                | Rule::rbrace
                | Rule::lparen
                | Rule::rparen
                | Rule::lbracket
                | Rule::rbracket
                | Rule::semi
                | Rule::comma
                | Rule::colon
                | Rule::star
                | Rule::assign
                | Rule::kw_if
                | Rule::kw_else
                | Rule::kw_while
                | Rule::kw_int
                | Rule::kw_scope_tree
                | Rule::kw_locations
                | Rule::kw_opencl
                | Rule::name_sep
                | Rule::EOI
        )
    })
}

fn pos_of(pair: &Pair<'_, Rule>) -> Pos {
    let (line, col) = pair.as_span().start_pos().line_col();
    Pos { line, col }
}

/// Shows a piece of source in an error: `` `text` `` (whitespace runs
/// collapsed, long texts cut).
fn quote(text: &str) -> String {
    let t: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if t.chars().count() > 40 {
        let cut: String = t.chars().take(37).collect();
        format!("`{cut}...`")
    } else {
        format!("`{t}`")
    }
}

/// Describes the token at byte `offset` of `src` for "found ...".
fn found_at(src: &str, offset: usize) -> String {
    let rest = match src.get(offset..) {
        Some(r) if !r.is_empty() => r,
        _ => return "end of file".to_string(),
    };
    let c = rest.chars().next().unwrap();
    if c == '\n' || c == '\r' {
        return "end of line".to_string();
    }
    if c.is_ascii_alphanumeric() || c == '_' {
        let w: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        return format!("`{w}`");
    }
    for op in ["==", "!=", "<=", ">=", "&&", "||", "/\\", "\\/", "//", "/*"] {
        if rest.starts_with(op) {
            return format!("`{op}`");
        }
    }
    format!("`{c}`")
}

/// The reader's name of a grammar rule, for "expected ...".
fn describe(rule: Rule) -> &'static str {
    use Rule::*;
    match rule {
        file => "litmus test",
        header | kw_opencl => "`OpenCL`",
        test_name | name_sep => "test name after `OpenCL`",
        init_state => "initial state `{ ... }`",
        init_array | init_decl | init_reg | init_loc => "initial-state entry",
        program => "program `P<n> (...) { ... }`",
        proc_id => "program name `P<n>`",
        param => "parameter",
        address_space => "address space (`global`, `local`, `global_fga`)",
        value_type => "type (`int`, `atomic_int`, `atomic_flag`)",
        block => "block `{ ... }`",
        stmt | if_stmt | while_stmt | decl_stmt | labelled | store_stmt | assign_stmt
        | call_stmt | empty_stmt | unsupported_stmt => "statement",
        declarator => "declarator",
        c_keyword => "C keyword",
        expr | unary | paren_expr => "expression",
        unary_op => "unary operator",
        binary_op => "binary operator",
        call => "call",
        scope_tree | kw_scope_tree => "`scopeTree`",
        scope_node => "scope tree node `(level ...)`",
        scope_level => "scope level (`device`, `kernel`, `work_group`, `sub_group`)",
        locations | kw_locations => "`locations [...]`",
        condition | quantifier | q_forall | q_exists | q_not_exists => {
            "final condition (`exists`, `~exists`, `forall`)"
        }
        prop | conj | neg | atom => "proposition",
        cond_loc => "location or `N:register`",
        cond_value => "value",
        op_or => "`\\/`",
        op_and => "`/\\`",
        op_not => "`~`",
        keyword => "keyword",
        ident => "identifier",
        int_lit | signed_int => "integer",
        thread_id => "thread number",
        kw_if => "`if`",
        kw_else => "`else`",
        kw_while => "`while`",
        kw_int => "`int`",
        kw_true => "`true`",
        kw_false => "`false`",
        lbrace => "`{`",
        rbrace => "`}`",
        lparen => "`(`",
        rparen => "`)`",
        lbracket => "`[`",
        rbracket => "`]`",
        semi => "`;`",
        comma => "`,`",
        colon => "`:`",
        star => "`*`",
        assign => "`=`",
        EOI => "end of file",
        init_entry | init_value => "initial-state entry",
        primary => "expression",
        ident_char => "identifier character",
        skipped | balanced_paren | balanced_brace => "balanced text",
        WHITESPACE | COMMENT => "whitespace",
    }
}

/// "a", "a or b", "a, b or c".
fn one_of(items: &[&str]) -> String {
    match items {
        [] => "valid syntax".to_string(),
        [a] => a.to_string(),
        [init @ .., last] => format!("{} or {}", init.join(", "), last),
    }
}

impl Builder<'_> {
    fn error(
        &self,
        pos: Pos,
        kind: ParseErrorKind,
        expected: impl Into<String>,
        found: impl Into<String>,
    ) -> ParseError {
        ParseError {
            file: self.file.to_string(),
            line: pos.line,
            col: pos.col,
            kind,
            expected: expected.into(),
            found: found.into(),
        }
    }

    fn invalid(&self, pair: &Pair<'_, Rule>, expected: impl Into<String>) -> ParseError {
        self.error(
            pos_of(pair),
            ParseErrorKind::Invalid,
            expected,
            quote(pair.as_str()),
        )
    }

    fn pest_error(&self, src: &str, e: pest::error::Error<Rule>) -> ParseError {
        let (line, col) = match e.line_col {
            LineColLocation::Pos(p) => p,
            LineColLocation::Span(a, _) => a,
        };
        let offset = match e.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((a, _)) => a,
        };
        let expected = match &e.variant {
            pest::error::ErrorVariant::ParsingError {
                positives,
                negatives,
            } => {
                let mut names: Vec<&str> = Vec::new();
                for r in positives {
                    let d = describe(*r);
                    if !names.contains(&d) {
                        names.push(d);
                    }
                }
                if names.is_empty() && !negatives.is_empty() {
                    let mut neg: Vec<&str> = Vec::new();
                    for r in negatives {
                        let d = describe(*r);
                        if !neg.contains(&d) {
                            neg.push(d);
                        }
                    }
                    format!("something other than {}", one_of(&neg))
                } else {
                    one_of(&names)
                }
            }
            pest::error::ErrorVariant::CustomError { message } => message.clone(),
        };
        self.error(
            Pos { line, col },
            ParseErrorKind::Syntax,
            expected,
            found_at(src, offset),
        )
    }

    // ------------------------------------------------------------ file

    fn file(&self, pair: Pair<'_, Rule>) -> R<Test> {
        let mut name = String::new();
        let mut init = Vec::new();
        let mut programs: Vec<Program> = Vec::new();
        let mut scope_tree = None;
        let mut locations = Vec::new();
        let mut condition = None;
        for p in kids(pair) {
            match p.as_rule() {
                Rule::header => {
                    name = kids(p).next().expect("test_name").as_str().to_string();
                }
                Rule::init_state => {
                    for e in kids(p) {
                        init.push(self.init_entry(e)?);
                    }
                }
                Rule::program => {
                    let pos = pos_of(&p);
                    let prog = self.program(p)?;
                    if programs.iter().any(|q| q.id == prog.id) {
                        return Err(self.error(
                            pos,
                            ParseErrorKind::Invalid,
                            "a program number not used before",
                            format!("`P{}` again", prog.id),
                        ));
                    }
                    programs.push(prog);
                }
                Rule::scope_tree => {
                    let mut nodes = Vec::new();
                    for n in kids(p) {
                        nodes.push(self.scope_node(n, None)?);
                    }
                    scope_tree = Some(nodes);
                }
                Rule::locations => {
                    for l in kids(p) {
                        locations.push(self.cond_loc(l)?);
                    }
                }
                Rule::condition => condition = Some(self.condition(p)?),
                r => unreachable!("unexpected rule {r:?} in file"),
            }
        }
        self.check_names(&init, &programs)?;
        Ok(Test {
            name,
            init,
            programs,
            scope_tree,
            locations,
            condition: condition.expect("grammar requires a condition"),
        })
    }

    // --------------------------------------------------- initial state

    fn int(&self, pair: &Pair<'_, Rule>) -> R<i64> {
        let s = pair.as_str();
        let (neg, digits) = match s.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, s),
        };
        let v = if let Some(h) = digits
            .strip_prefix("0x")
            .or_else(|| digits.strip_prefix("0X"))
        {
            i128::from_str_radix(h, 16).ok()
        } else {
            digits.parse::<i128>().ok()
        };
        let v = v.map(|v| if neg { -v } else { v });
        match v.and_then(|v| i64::try_from(v).ok()) {
            Some(v) => Ok(v),
            None => Err(self.invalid(pair, "an integer that fits in 64 bits")),
        }
    }

    fn usize_of(&self, pair: &Pair<'_, Rule>, digits: &str) -> R<usize> {
        digits
            .parse::<usize>()
            .map_err(|_| self.invalid(pair, "a number that fits in usize"))
    }

    fn value_type(pair: &Pair<'_, Rule>) -> ValueType {
        match pair.as_str() {
            "int" => ValueType::Int,
            "atomic_int" => ValueType::AtomicInt,
            "atomic_flag" => ValueType::AtomicFlag,
            t => unreachable!("value_type {t}"),
        }
    }

    fn init_value(&self, pair: Pair<'_, Rule>) -> R<InitValue> {
        match pair.as_rule() {
            Rule::signed_int | Rule::int_lit => Ok(InitValue::Int(self.int(&pair)?)),
            Rule::ident => Ok(InitValue::Loc(pair.as_str().to_string())),
            r => unreachable!("init value {r:?}"),
        }
    }

    fn init_entry(&self, pair: Pair<'_, Rule>) -> R<InitEntry> {
        let pos = pos_of(&pair);
        let rule = pair.as_rule();
        let mut it = kids(pair);
        let kind = match rule {
            Rule::init_array => {
                let ty = Self::value_type(&it.next().unwrap());
                let name = it.next().unwrap().as_str().to_string();
                let len_pair = it.next().unwrap();
                let len = self.usize_of(&len_pair, len_pair.as_str())?;
                let mut values = Vec::new();
                for v in it {
                    values.push(self.int(&v)?);
                }
                if values.len() > len {
                    return Err(self.error(
                        pos,
                        ParseErrorKind::Invalid,
                        format!("at most {len} initialisers for `{name}[{len}]`"),
                        format!("{}", values.len()),
                    ));
                }
                InitKind::Array {
                    name,
                    ty,
                    len,
                    values,
                }
            }
            Rule::init_decl => {
                let ty = Self::value_type(&it.next().unwrap());
                let name = it.next().unwrap().as_str().to_string();
                let value = it.next().map(|v| self.init_value(v)).transpose()?;
                InitKind::Location {
                    name,
                    ty: Some(ty),
                    value,
                }
            }
            Rule::init_reg => {
                let t = it.next().unwrap();
                let thread = self.usize_of(&t, t.as_str())?;
                let reg = it.next().unwrap().as_str().to_string();
                let value = self.init_value(it.next().unwrap())?;
                InitKind::Register { thread, reg, value }
            }
            Rule::init_loc => {
                let name = it.next().unwrap().as_str().to_string();
                let value = Some(self.init_value(it.next().unwrap())?);
                InitKind::Location {
                    name,
                    ty: None,
                    value,
                }
            }
            r => unreachable!("init entry {r:?}"),
        };
        Ok(InitEntry { kind, pos })
    }

    // -------------------------------------------------------- programs

    fn program(&self, pair: Pair<'_, Rule>) -> R<Program> {
        let pos = pos_of(&pair);
        let mut params = Vec::new();
        let mut body = Vec::new();
        let mut id = 0;
        for p in kids(pair) {
            match p.as_rule() {
                Rule::proc_id => id = self.usize_of(&p, &p.as_str()[1..])?,
                Rule::param => params.push(self.param(p)),
                Rule::block => body = self.block(p)?,
                r => unreachable!("program child {r:?}"),
            }
        }
        Ok(Program {
            id,
            params,
            body,
            pos,
        })
    }

    fn param(&self, pair: Pair<'_, Rule>) -> Param {
        let pos = pos_of(&pair);
        let mut space = None;
        let mut ty = ValueType::Int;
        let mut name = String::new();
        for p in kids(pair) {
            match p.as_rule() {
                Rule::address_space => {
                    space = Some(match p.as_str() {
                        "global" | "__global" => AddressSpace::Global,
                        "local" | "__local" => AddressSpace::Local,
                        "global_fga" => AddressSpace::GlobalFga,
                        s => unreachable!("address space {s}"),
                    })
                }
                Rule::value_type => ty = Self::value_type(&p),
                Rule::ident => name = p.as_str().to_string(),
                r => unreachable!("param child {r:?}"),
            }
        }
        Param {
            space,
            ty,
            name,
            pos,
        }
    }

    fn block(&self, pair: Pair<'_, Rule>) -> R<Vec<Stmt>> {
        kids(pair).map(|s| self.stmt(s)).collect()
    }

    fn stmt(&self, pair: Pair<'_, Rule>) -> R<Stmt> {
        // `stmt` wraps exactly one alternative.
        let inner = if pair.as_rule() == Rule::stmt {
            pair.into_inner().next().expect("stmt alternative")
        } else {
            pair
        };
        let pos = pos_of(&inner);
        let rule = inner.as_rule();
        let text = inner.as_str();
        let mut it = kids(inner);
        let kind = match rule {
            Rule::block => StmtKind::Block(it.map(|s| self.stmt(s)).collect::<R<_>>()?),
            Rule::if_stmt => {
                let cond = self.expr(it.next().unwrap())?;
                let then_branch = Box::new(self.stmt(it.next().unwrap())?);
                let else_branch = it.next().map(|s| self.stmt(s)).transpose()?.map(Box::new);
                StmtKind::If {
                    cond,
                    then_branch,
                    else_branch,
                }
            }
            Rule::while_stmt => {
                let cond = self.expr(it.next().unwrap())?;
                let body = Box::new(self.stmt(it.next().unwrap())?);
                StmtKind::While { cond, body }
            }
            Rule::decl_stmt => {
                let mut decls = Vec::new();
                for d in it {
                    let mut di = kids(d);
                    let name = di.next().unwrap().as_str().to_string();
                    let init = di.next().map(|e| self.expr(e)).transpose()?;
                    decls.push(Declarator { name, init });
                }
                StmtKind::Decl(decls)
            }
            Rule::labelled => {
                let label = it.next().unwrap().as_str().to_string();
                let stmt = Box::new(self.stmt(it.next().unwrap())?);
                StmtKind::Labelled { label, stmt }
            }
            Rule::store_stmt => {
                let addr = self.primary(it.next().unwrap())?;
                let value = self.expr(it.next().unwrap())?;
                StmtKind::Store { addr, value }
            }
            Rule::assign_stmt => {
                let reg = it.next().unwrap().as_str().to_string();
                let value = self.expr(it.next().unwrap())?;
                StmtKind::Assign { reg, value }
            }
            Rule::call_stmt => StmtKind::Call(self.call(it.next().unwrap())?),
            Rule::empty_stmt => StmtKind::Empty,
            Rule::unsupported_stmt => {
                let kw = it
                    .next()
                    .map(|k| k.as_str().to_string())
                    .unwrap_or_else(|| text.to_string());
                return Err(self.error(
                    pos,
                    ParseErrorKind::Unsupported(kw.clone()),
                    "a litmus statement",
                    format!("unsupported construct `{kw}`"),
                ));
            }
            r => unreachable!("statement {r:?}"),
        };
        Ok(Stmt { kind, pos })
    }

    // ----------------------------------------------------- expressions

    fn expr(&self, pair: Pair<'_, Rule>) -> R<Expr> {
        // Precedence climbing over the flat `unary (binary_op unary)*`.
        let mut operands: Vec<Expr> = Vec::new();
        let mut ops: Vec<BinaryOp> = Vec::new();
        fn reduce(operands: &mut Vec<Expr>, ops: &mut Vec<BinaryOp>) {
            let op = ops.pop().unwrap();
            let b = operands.pop().unwrap();
            let a = operands.pop().unwrap();
            operands.push(Expr::Binary(op, Box::new(a), Box::new(b)));
        }
        for p in kids(pair) {
            match p.as_rule() {
                Rule::unary => operands.push(self.unary(p)?),
                Rule::binary_op => {
                    let op = binary_op(p.as_str());
                    while ops
                        .last()
                        .is_some_and(|top| precedence(*top) >= precedence(op))
                    {
                        reduce(&mut operands, &mut ops);
                    }
                    ops.push(op);
                }
                r => unreachable!("expr child {r:?}"),
            }
        }
        while !ops.is_empty() {
            reduce(&mut operands, &mut ops);
        }
        Ok(operands.pop().expect("an operand"))
    }

    fn unary(&self, pair: Pair<'_, Rule>) -> R<Expr> {
        let mut prefix: Vec<&str> = Vec::new();
        let mut operand = None;
        for p in kids(pair) {
            if p.as_rule() == Rule::unary_op {
                prefix.push(p.as_str());
            } else {
                operand = Some(self.primary(p)?);
            }
        }
        let mut e = operand.expect("primary");
        for op in prefix.into_iter().rev() {
            e = match (op, e) {
                ("*", e) => Expr::Deref(Box::new(e)),
                ("-", Expr::Int(n)) if n != i64::MIN => Expr::Int(-n),
                ("-", e) => Expr::Unary(UnaryOp::Neg, Box::new(e)),
                ("!", e) => Expr::Unary(UnaryOp::Not, Box::new(e)),
                (o, _) => unreachable!("unary op {o}"),
            };
        }
        Ok(e)
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> R<Expr> {
        match pair.as_rule() {
            Rule::int_lit => Ok(Expr::Int(self.int(&pair)?)),
            Rule::ident => Ok(Expr::Var(pair.as_str().to_string())),
            Rule::paren_expr => self.expr(kids(pair).next().unwrap()),
            Rule::call => Ok(Expr::Call(Box::new(self.call(pair)?))),
            r => unreachable!("primary {r:?}"),
        }
    }

    fn order(&self, arg: &(Pair<'_, Rule>, Expr)) -> R<MemoryOrder> {
        let o = match &arg.1 {
            Expr::Var(s) => match s.as_str() {
                "memory_order_relaxed" => Some(MemoryOrder::Relaxed),
                "memory_order_acquire" => Some(MemoryOrder::Acquire),
                "memory_order_release" => Some(MemoryOrder::Release),
                "memory_order_acq_rel" => Some(MemoryOrder::AcqRel),
                "memory_order_seq_cst" => Some(MemoryOrder::SeqCst),
                _ => None,
            },
            _ => None,
        };
        o.ok_or_else(|| {
            self.invalid(
                &arg.0,
                "a memory order (`memory_order_relaxed`, `_acquire`, `_release`, `_acq_rel`, `_seq_cst`)",
            )
        })
    }

    fn scope(&self, arg: &(Pair<'_, Rule>, Expr)) -> R<MemoryScope> {
        let s = match &arg.1 {
            Expr::Var(s) => match s.as_str() {
                "memory_scope_work_item" => Some(MemoryScope::WorkItem),
                "memory_scope_sub_group" => Some(MemoryScope::SubGroup),
                "memory_scope_work_group" => Some(MemoryScope::WorkGroup),
                "memory_scope_device" => Some(MemoryScope::Device),
                "memory_scope_all_svm_devices" => Some(MemoryScope::AllSvmDevices),
                _ => None,
            },
            _ => None,
        };
        s.ok_or_else(|| {
            self.invalid(
                &arg.0,
                "a memory scope (`memory_scope_work_item`, `_sub_group`, `_work_group`, `_device`, `_all_svm_devices`)",
            )
        })
    }

    fn flags(&self, arg: &(Pair<'_, Rule>, Expr)) -> R<FenceFlags> {
        fn go(e: &Expr, f: &mut FenceFlags) -> bool {
            match e {
                Expr::Var(s) if s == "CLK_GLOBAL_MEM_FENCE" => f.global = true,
                Expr::Var(s) if s == "CLK_LOCAL_MEM_FENCE" => f.local = true,
                Expr::Var(s) if s == "CLK_IMAGE_MEM_FENCE" => f.image = true,
                Expr::Int(0) => {}
                Expr::Binary(BinaryOp::BitOr, a, b) => return go(a, f) && go(b, f),
                _ => return false,
            }
            true
        }
        let mut f = FenceFlags::default();
        if go(&arg.1, &mut f) {
            Ok(f)
        } else {
            Err(self.invalid(
                &arg.0,
                "fence flags (`CLK_GLOBAL_MEM_FENCE`, `CLK_LOCAL_MEM_FENCE`, `CLK_IMAGE_MEM_FENCE` joined by `|`)",
            ))
        }
    }

    fn call(&self, pair: Pair<'_, Rule>) -> R<Call> {
        let pos = pos_of(&pair);
        let mut it = kids(pair);
        let name_pair = it.next().unwrap();
        let name = name_pair.as_str();
        let mut args: Vec<(Pair<'_, Rule>, Expr)> = Vec::new();
        for a in it {
            let e = self.expr(a.clone())?;
            args.push((a, e));
        }
        let arity = |allowed: &[usize]| -> R<()> {
            if allowed.contains(&args.len()) {
                Ok(())
            } else {
                let counts: Vec<String> = allowed.iter().map(|n| n.to_string()).collect();
                let counts: Vec<&str> = counts.iter().map(|s| s.as_str()).collect();
                let plural = if allowed == [1] { "" } else { "s" };
                Err(self.error(
                    pos,
                    ParseErrorKind::Invalid,
                    format!("{} argument{plural} to `{name}`", one_of(&counts)),
                    format!("{}", args.len()),
                ))
            }
        };

        // Builtins that are not memory operations.
        match name {
            "atomic_init" => {
                arity(&[2])?;
                let mut a = args.into_iter().map(|a| a.1);
                let (obj, value) = (a.next().unwrap(), a.next().unwrap());
                return Ok(Call {
                    builtin: Builtin::Init { obj, value },
                    pos,
                });
            }
            "atomic_work_item_fence" => {
                arity(&[3])?;
                let builtin = Builtin::Fence {
                    flags: self.flags(&args[0])?,
                    order: self.order(&args[1])?,
                    scope: self.scope(&args[2])?,
                };
                return Ok(Call { builtin, pos });
            }
            "barrier" => {
                arity(&[1])?;
                let builtin = Builtin::Barrier {
                    form: BarrierForm::Barrier,
                    flags: self.flags(&args[0])?,
                    scope: None,
                };
                return Ok(Call { builtin, pos });
            }
            "work_group_barrier" => {
                arity(&[1, 2])?;
                let scope = args.get(1).map(|a| self.scope(a)).transpose()?;
                let builtin = Builtin::Barrier {
                    form: BarrierForm::WorkGroupBarrier,
                    flags: self.flags(&args[0])?,
                    scope,
                };
                return Ok(Call { builtin, pos });
            }
            _ => {}
        }

        // Memory operations: `atomic_X(fixed...)` and
        // `atomic_X_explicit(fixed..., order(s) [, scope])`.
        #[derive(Clone, Copy)]
        enum Shape {
            Load,
            Store,
            Exchange,
            Cas { weak: bool },
            Fetch(FetchOp),
            TestAndSet,
            Clear,
        }
        let (base, explicit) = match name.strip_suffix("_explicit") {
            Some(b) => (b, true),
            None => (name, false),
        };
        let shape = match base {
            "atomic_load" => Shape::Load,
            "atomic_store" => Shape::Store,
            "atomic_exchange" => Shape::Exchange,
            "atomic_compare_exchange_strong" => Shape::Cas { weak: false },
            "atomic_compare_exchange_weak" => Shape::Cas { weak: true },
            "atomic_fetch_add" => Shape::Fetch(FetchOp::Add),
            "atomic_fetch_sub" => Shape::Fetch(FetchOp::Sub),
            "atomic_fetch_or" => Shape::Fetch(FetchOp::Or),
            "atomic_fetch_xor" => Shape::Fetch(FetchOp::Xor),
            "atomic_fetch_and" => Shape::Fetch(FetchOp::And),
            "atomic_fetch_min" => Shape::Fetch(FetchOp::Min),
            "atomic_fetch_max" => Shape::Fetch(FetchOp::Max),
            "atomic_flag_test_and_set" => Shape::TestAndSet,
            "atomic_flag_clear" => Shape::Clear,
            _ => {
                return Err(self.error(
                    pos,
                    ParseErrorKind::Unsupported(name.to_string()),
                    "a supported builtin (atomic_*, atomic_work_item_fence, barrier, work_group_barrier)",
                    format!("unsupported construct `{name}`"),
                ))
            }
        };
        let fixed = match shape {
            Shape::Load | Shape::TestAndSet | Shape::Clear => 1,
            Shape::Store | Shape::Exchange | Shape::Fetch(_) => 2,
            Shape::Cas { .. } => 3,
        };
        let norders = if matches!(shape, Shape::Cas { .. }) {
            2
        } else {
            1
        };
        if explicit {
            arity(&[fixed + norders, fixed + norders + 1])?;
        } else {
            arity(&[fixed])?;
        }
        let mut orders: Vec<Option<MemoryOrder>> = vec![None, None];
        let mut scope = None;
        if explicit {
            for i in 0..norders {
                orders[i] = Some(self.order(&args[fixed + i])?);
            }
            if args.len() == fixed + norders + 1 {
                scope = Some(self.scope(&args[fixed + norders])?);
            }
        }
        let mut vals = args.into_iter().take(fixed).map(|a| a.1);
        let obj = vals.next().unwrap();
        let order = orders[0];
        let builtin = match shape {
            Shape::Load => Builtin::Load { obj, order, scope },
            Shape::Store => Builtin::Store {
                obj,
                value: vals.next().unwrap(),
                order,
                scope,
            },
            Shape::Exchange => Builtin::Exchange {
                obj,
                value: vals.next().unwrap(),
                order,
                scope,
            },
            Shape::Fetch(op) => Builtin::FetchOp {
                op,
                obj,
                value: vals.next().unwrap(),
                order,
                scope,
            },
            Shape::TestAndSet => Builtin::FlagTestAndSet { obj, order, scope },
            Shape::Clear => Builtin::FlagClear { obj, order, scope },
            Shape::Cas { weak } => Builtin::CompareExchange {
                weak,
                obj,
                expected: vals.next().unwrap(),
                desired: vals.next().unwrap(),
                success: orders[0],
                failure: orders[1],
                scope,
            },
        };
        Ok(Call { builtin, pos })
    }

    // ------------------------------------------------------ scope tree

    fn scope_node(&self, pair: Pair<'_, Rule>, parent: Option<ScopeLevel>) -> R<ScopeNode> {
        let mut it = kids(pair);
        let lp = it.next().unwrap();
        let level = match lp.as_str() {
            "device" => ScopeLevel::Device,
            "kernel" => ScopeLevel::Kernel,
            "work_group" => ScopeLevel::WorkGroup,
            "sub_group" => ScopeLevel::SubGroup,
            s => unreachable!("scope level {s}"),
        };
        if let Some(parent) = parent {
            if level <= parent {
                let pname = match parent {
                    ScopeLevel::Device => "device",
                    ScopeLevel::Kernel => "kernel",
                    ScopeLevel::WorkGroup => "work_group",
                    ScopeLevel::SubGroup => "sub_group",
                };
                return Err(self.invalid(&lp, format!("a scope level below `{pname}` or a thread")));
            }
        }
        let mut children = Vec::new();
        for c in it {
            match c.as_rule() {
                Rule::scope_node => {
                    children.push(ScopeItem::Node(self.scope_node(c, Some(level))?))
                }
                Rule::proc_id => {
                    children.push(ScopeItem::Thread(self.usize_of(&c, &c.as_str()[1..])?))
                }
                r => unreachable!("scope child {r:?}"),
            }
        }
        Ok(ScopeNode { level, children })
    }

    // ------------------------------------------------------- condition

    fn cond_loc(&self, pair: Pair<'_, Rule>) -> R<CondLoc> {
        let pos = pos_of(&pair);
        let parts: Vec<_> = kids(pair).collect();
        let loc = match parts.as_slice() {
            [t, r] => CondLoc::Reg {
                thread: self.usize_of(t, t.as_str())?,
                reg: r.as_str().to_string(),
            },
            [l] => CondLoc::Loc(l.as_str().to_string()),
            _ => unreachable!("cond_loc"),
        };
        self.cond_locs.borrow_mut().push((loc.clone(), pos));
        Ok(loc)
    }

    /// Every register and location the condition and `locations` name
    /// exists: a program `P<n>` of the test, a register it declares (or a
    /// parameter), a location of the initial state or a parameter. A name
    /// that does not was read as 0 or `?` (a user-acceptance run).
    fn check_names(&self, init: &[InitEntry], programs: &[Program]) -> R<()> {
        fn declared(stmts: &[Stmt], out: &mut Vec<String>) {
            for s in stmts {
                match &s.kind {
                    StmtKind::Decl(ds) => out.extend(ds.iter().map(|d| d.name.clone())),
                    StmtKind::If { then_branch, else_branch, .. } => {
                        declared(std::slice::from_ref(then_branch), out);
                        if let Some(e) = else_branch {
                            declared(std::slice::from_ref(e), out);
                        }
                    }
                    StmtKind::While { body, .. } => declared(std::slice::from_ref(body), out),
                    StmtKind::Block(b) => declared(b, out),
                    StmtKind::Labelled { stmt, .. } => declared(std::slice::from_ref(stmt), out),
                    _ => {}
                }
            }
        }
        // Every name a program uses is one of its parameters or a register
        // it declares, in every branch: the interpreter met an unknown name
        // only when it ran the statement (one in a branch never taken
        // went unreported).
        fn names_in(e: &Expr, out: &mut Vec<String>) {
            match e {
                Expr::Int(_) => {}
                Expr::Var(n) => out.push(n.clone()),
                Expr::Deref(x) | Expr::Unary(_, x) => names_in(x, out),
                Expr::Binary(_, a, b) => {
                    names_in(a, out);
                    names_in(b, out);
                }
                Expr::Call(c) => match &c.builtin {
                    Builtin::Load { obj, .. } | Builtin::FlagTestAndSet { obj, .. } | Builtin::FlagClear { obj, .. } => names_in(obj, out),
                    Builtin::Init { obj, value } | Builtin::Store { obj, value, .. } | Builtin::Exchange { obj, value, .. } | Builtin::FetchOp { obj, value, .. } => {
                        names_in(obj, out);
                        names_in(value, out);
                    }
                    Builtin::CompareExchange { obj, expected, desired, .. } => {
                        names_in(obj, out);
                        names_in(expected, out);
                        names_in(desired, out);
                    }
                    Builtin::Fence { .. } | Builtin::Barrier { .. } => {}
                },
            }
        }
        fn uses(s: &Stmt, out: &mut Vec<(String, Pos)>) {
            let mut here = Vec::new();
            match &s.kind {
                StmtKind::Decl(ds) => ds.iter().filter_map(|d| d.init.as_ref()).for_each(|e| names_in(e, &mut here)),
                StmtKind::Assign { reg, value } => {
                    here.push(reg.clone());
                    names_in(value, &mut here);
                }
                StmtKind::Store { addr, value } => {
                    names_in(addr, &mut here);
                    names_in(value, &mut here);
                }
                StmtKind::Call(c) => names_in(&Expr::Call(Box::new(c.clone())), &mut here),
                StmtKind::If { cond, then_branch, else_branch } => {
                    names_in(cond, &mut here);
                    uses(then_branch, out);
                    if let Some(e) = else_branch {
                        uses(e, out);
                    }
                }
                StmtKind::While { cond, body } => {
                    names_in(cond, &mut here);
                    uses(body, out);
                }
                StmtKind::Block(b) => b.iter().for_each(|x| uses(x, out)),
                StmtKind::Labelled { stmt, .. } => uses(stmt, out),
                StmtKind::Empty => {}
            }
            out.extend(here.into_iter().map(|n| (n, s.pos)));
        }
        for p in programs {
            let mut known: Vec<String> = p.params.iter().map(|q| q.name.clone()).collect();
            declared(&p.body, &mut known);
            let mut used = Vec::new();
            p.body.iter().for_each(|s| uses(s, &mut used));
            used.sort_by_key(|(_, pos)| (pos.line, pos.col));
            if let Some((n, pos)) = used.into_iter().find(|(n, _)| !known.contains(n)) {
                return Err(self.error(pos, ParseErrorKind::Invalid, format!("a parameter or a register that P{} declares", p.id), format!("`{n}`")));
            }
        }
        let is_loc = |n: &str| {
            init.iter().any(|e| matches!(&e.kind, InitKind::Location { name, .. } | InitKind::Array { name, .. } if name == n))
                || programs.iter().any(|p| p.params.iter().any(|q| q.name == n))
        };
        for (loc, pos) in self.cond_locs.borrow().iter() {
            match loc {
                CondLoc::Reg { thread, reg } => {
                    let Some(p) = programs.iter().find(|p| p.id == *thread) else {
                        let ids: Vec<String> = programs.iter().map(|p| format!("P{}", p.id)).collect();
                        return Err(self.error(*pos, ParseErrorKind::Invalid, format!("a program of the test ({})", ids.join(", ")), format!("`{thread}:{reg}`")));
                    };
                    let mut regs: Vec<String> = p.params.iter().map(|q| q.name.clone()).collect();
                    declared(&p.body, &mut regs);
                    if !regs.contains(reg) {
                        return Err(self.error(*pos, ParseErrorKind::Invalid, format!("a register that P{thread} declares"), format!("`{thread}:{reg}`")));
                    }
                }
                CondLoc::Loc(n) => {
                    if !is_loc(n) {
                        return Err(self.error(*pos, ParseErrorKind::Invalid, "a location of the test (in the initial state or a parameter)", format!("`{n}`")));
                    }
                }
            }
        }
        Ok(())
    }

    fn condition(&self, pair: Pair<'_, Rule>) -> R<Condition> {
        let mut it = kids(pair);
        let q = it.next().unwrap().into_inner().next().unwrap();
        let quantifier = match q.as_rule() {
            Rule::q_exists => Quantifier::Exists,
            Rule::q_not_exists => Quantifier::NotExists,
            Rule::q_forall => Quantifier::Forall,
            r => unreachable!("quantifier {r:?}"),
        };
        let prop = self.prop(it.next().unwrap())?;
        Ok(Condition { quantifier, prop })
    }

    fn prop(&self, pair: Pair<'_, Rule>) -> R<Prop> {
        match pair.as_rule() {
            Rule::prop | Rule::conj => {
                let is_or = pair.as_rule() == Rule::prop;
                let mut items = Vec::new();
                for p in kids(pair) {
                    if !matches!(p.as_rule(), Rule::op_or | Rule::op_and) {
                        items.push(self.prop(p)?);
                    }
                }
                Ok(if items.len() == 1 {
                    items.pop().unwrap()
                } else if is_or {
                    Prop::Or(items)
                } else {
                    Prop::And(items)
                })
            }
            Rule::neg => {
                let parts: Vec<_> = kids(pair).collect();
                let mut parts = parts.into_iter();
                let first = parts.next().unwrap();
                match first.as_rule() {
                    Rule::op_not => Ok(Prop::Not(Box::new(self.prop(parts.next().unwrap())?))),
                    Rule::prop => self.prop(first),
                    Rule::kw_true => Ok(Prop::True),
                    Rule::kw_false => Ok(Prop::False),
                    Rule::atom => {
                        let mut a = kids(first);
                        let loc = self.cond_loc(a.next().unwrap())?;
                        let v = a.next().unwrap().into_inner().next().unwrap();
                        let value = self.init_value(v)?;
                        Ok(Prop::Atom(Atom { loc, value }))
                    }
                    r => unreachable!("neg {r:?}"),
                }
            }
            r => unreachable!("prop {r:?}"),
        }
    }
}

fn binary_op(s: &str) -> BinaryOp {
    match s {
        "==" => BinaryOp::Eq,
        "!=" => BinaryOp::Ne,
        "<" => BinaryOp::Lt,
        "<=" => BinaryOp::Le,
        ">" => BinaryOp::Gt,
        ">=" => BinaryOp::Ge,
        "+" => BinaryOp::Add,
        "-" => BinaryOp::Sub,
        "*" => BinaryOp::Mul,
        "&" => BinaryOp::BitAnd,
        "|" => BinaryOp::BitOr,
        "^" => BinaryOp::BitXor,
        "&&" => BinaryOp::And,
        "||" => BinaryOp::Or,
        o => unreachable!("binary op {o}"),
    }
}

/// C's precedences (higher binds tighter).
fn precedence(op: BinaryOp) -> u8 {
    match op {
        BinaryOp::Mul => 10,
        BinaryOp::Add | BinaryOp::Sub => 9,
        BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge => 7,
        BinaryOp::Eq | BinaryOp::Ne => 6,
        BinaryOp::BitAnd => 5,
        BinaryOp::BitXor => 4,
        BinaryOp::BitOr => 3,
        BinaryOp::And => 2,
        BinaryOp::Or => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};

    /// The corpus: `$CLMM_LITMUS_DIR`, else `shared/litmus` beside the
    /// crate (where CI puts `shared/` next to the repository).
    fn corpus_dir() -> PathBuf {
        match std::env::var_os("CLMM_LITMUS_DIR") {
            Some(d) => PathBuf::from(d),
            None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/litmus"),
        }
    }

    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let entries =
            std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {}: {e}", dir.display()));
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "litmus") {
                out.push(p);
            }
        }
    }

    fn corpus_file(rel: &str) -> Test {
        let path = corpus_dir().join(rel);
        let src =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        parse_litmus(&src, rel).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn every_corpus_file_parses() {
        let mut files = Vec::new();
        walk(&corpus_dir(), &mut files);
        files.sort();
        assert!(
            files.len() >= 188,
            "found only {} .litmus files under {}",
            files.len(),
            corpus_dir().display()
        );
        let mut failures = Vec::new();
        for f in &files {
            let src = std::fs::read_to_string(f).unwrap();
            if let Err(e) = parse_litmus(&src, &f.display().to_string()) {
                failures.push(e.to_string());
            }
        }
        assert!(
            failures.is_empty(),
            "{} of {} files do not parse:\n{}",
            failures.len(),
            files.len(),
            failures.join("\n")
        );
    }

    // ------------------------------------------------ AST spot checks

    fn var(s: &str) -> Expr {
        Expr::Var(s.to_string())
    }

    fn int(n: i64) -> Expr {
        Expr::Int(n)
    }

    fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    fn reg(thread: usize, r: &str) -> CondLoc {
        CondLoc::Reg {
            thread,
            reg: r.to_string(),
        }
    }

    fn atom(loc: CondLoc, v: i64) -> Prop {
        Prop::Atom(Atom {
            loc,
            value: InitValue::Int(v),
        })
    }

    /// The builtin of a call expression.
    fn builtin_of(e: &Expr) -> &Builtin {
        match e {
            Expr::Call(c) => &c.builtin,
            other => panic!("not a call: {other:?}"),
        }
    }

    /// The single declarator `int name = init;` of a statement.
    fn decl(s: &Stmt) -> (&str, &Expr) {
        match &s.kind {
            StmtKind::Decl(ds) if ds.len() == 1 => {
                (&ds[0].name, ds[0].init.as_ref().expect("initialiser"))
            }
            other => panic!("not a single declaration: {other:?}"),
        }
    }

    fn call_stmt(s: &Stmt) -> &Builtin {
        match &s.kind {
            StmtKind::Call(c) => &c.builtin,
            other => panic!("not a call statement: {other:?}"),
        }
    }

    fn wg(threads: &[usize]) -> ScopeItem {
        ScopeItem::Node(ScopeNode {
            level: ScopeLevel::WorkGroup,
            children: threads.iter().map(|t| ScopeItem::Thread(*t)).collect(),
        })
    }

    fn device(children: Vec<ScopeItem>) -> ScopeNode {
        ScopeNode {
            level: ScopeLevel::Device,
            children,
        }
    }

    const GLOBAL: FenceFlags = FenceFlags {
        global: true,
        local: false,
        image: false,
    };

    #[test]
    fn spot_check_herd_mp() {
        let t = corpus_file("herd/MP.litmus");
        assert_eq!(t.name, "MP_rlx_1FG-sc-all_rlx_xaG_yaG_P0_P1");
        let init: Vec<_> = t.init.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            init,
            vec![
                InitKind::Location {
                    name: "x".into(),
                    ty: None,
                    value: Some(InitValue::Int(0))
                },
                InitKind::Location {
                    name: "y".into(),
                    ty: None,
                    value: Some(InitValue::Int(0))
                },
            ]
        );
        assert_eq!(t.init[0].pos, Pos { line: 6, col: 3 });
        assert_eq!(t.programs.len(), 2);
        let p0 = &t.programs[0];
        assert_eq!(p0.id, 0);
        assert_eq!(p0.pos, Pos { line: 10, col: 1 });
        let params: Vec<_> = p0
            .params
            .iter()
            .map(|p| (p.space, p.ty, p.name.as_str()))
            .collect();
        assert_eq!(
            params,
            vec![
                (Some(AddressSpace::Global), ValueType::Int, "x"),
                (Some(AddressSpace::Global), ValueType::AtomicInt, "y"),
            ]
        );
        assert_eq!(p0.body.len(), 3);
        assert_eq!(
            p0.body[0].kind,
            StmtKind::Store {
                addr: var("x"),
                value: int(1)
            }
        );
        assert_eq!(p0.body[0].pos, Pos { line: 11, col: 3 });
        assert_eq!(
            *call_stmt(&p0.body[1]),
            Builtin::Fence {
                flags: GLOBAL,
                order: MemoryOrder::SeqCst,
                scope: MemoryScope::AllSvmDevices
            }
        );
        assert_eq!(
            *call_stmt(&p0.body[2]),
            Builtin::Store {
                obj: var("y"),
                value: int(1),
                order: Some(MemoryOrder::Relaxed),
                scope: None
            }
        );
        let p1 = &t.programs[1];
        let (r0, e0) = decl(&p1.body[0]);
        assert_eq!(r0, "r0");
        assert_eq!(
            *builtin_of(e0),
            Builtin::Load {
                obj: var("y"),
                order: Some(MemoryOrder::Relaxed),
                scope: None
            }
        );
        assert_eq!(decl(&p1.body[1]), ("r1", &Expr::Deref(Box::new(var("x")))));
        assert_eq!(t.scope_tree, Some(vec![device(vec![wg(&[0, 1])])]));
        assert!(t.locations.is_empty());
        assert_eq!(
            t.condition,
            Condition {
                quantifier: Quantifier::Exists,
                prop: Prop::And(vec![atom(reg(1, "r0"), 1), atom(reg(1, "r1"), 0)])
            }
        );
    }

    #[test]
    fn spot_check_barrier_example() {
        let t = corpus_file("herd/barrier_example.litmus");
        let p0 = &t.programs[0];
        assert_eq!(p0.body.len(), 3);
        assert_eq!(
            *call_stmt(&p0.body[0]),
            Builtin::Store {
                obj: var("x"),
                value: int(1),
                order: Some(MemoryOrder::Release),
                scope: None
            }
        );
        match &p0.body[1].kind {
            StmtKind::Labelled { label, stmt } => {
                assert_eq!(label, "B1");
                assert_eq!(
                    *call_stmt(stmt),
                    Builtin::Barrier {
                        form: BarrierForm::Barrier,
                        flags: GLOBAL,
                        scope: None
                    }
                );
                assert_eq!(stmt.pos, Pos { line: 12, col: 7 });
            }
            other => panic!("expected a labelled barrier, got {other:?}"),
        }
        let (x1, e) = decl(&p0.body[2]);
        assert_eq!(x1, "x1");
        assert_eq!(
            *builtin_of(e),
            Builtin::Load {
                obj: var("y"),
                order: Some(MemoryOrder::Acquire),
                scope: None
            }
        );
        // `0:x` names P0's parameter `x` (a register holding a location).
        assert_eq!(
            t.condition.prop,
            Prop::And(vec![atom(reg(0, "x"), 0), atom(reg(1, "y"), 0)])
        );
    }

    #[test]
    fn spot_check_cas_c11_auto_c_p() {
        let t = corpus_file("c11/auto/c_p.litmus");
        assert_eq!(t.init.len(), 6);
        assert_eq!(
            t.init[5].kind,
            InitKind::Location {
                name: "one".into(),
                ty: None,
                value: Some(InitValue::Int(1))
            }
        );
        let p0 = &t.programs[0];
        assert_eq!(p0.params.len(), 6);
        let StmtKind::If {
            cond,
            then_branch,
            else_branch,
        } = &p0.body[1].kind
        else {
            panic!("expected if, got {:?}", p0.body[1].kind)
        };
        assert_eq!(*cond, var("r0"));
        assert!(else_branch.is_none());
        let StmtKind::Block(inner) = &then_branch.kind else {
            panic!("expected block")
        };
        assert_eq!(inner.len(), 3);
        let (t_name, cas) = decl(&inner[0]);
        assert_eq!(t_name, "t");
        assert_eq!(
            *builtin_of(cas),
            Builtin::CompareExchange {
                weak: false,
                obj: var("p"),
                expected: var("one"),
                desired: int(2),
                success: Some(MemoryOrder::Acquire),
                failure: Some(MemoryOrder::Relaxed),
                scope: None,
            }
        );
        assert_eq!(
            inner[1].kind,
            StmtKind::Store {
                addr: var("q"),
                value: int(1)
            }
        );
        let StmtKind::If { cond, .. } = &inner[2].kind else {
            panic!("expected nested if")
        };
        assert_eq!(*cond, var("t"));
        assert_eq!(
            t.condition.prop,
            Prop::And(vec![
                atom(CondLoc::Loc("p".into()), 1),
                atom(CondLoc::Loc("q".into()), 1)
            ])
        );
    }

    #[test]
    fn spot_check_imm_e3_5_array_and_pointer_arithmetic() {
        let t = corpus_file("extra/imm-E3.5.litmus");
        assert_eq!(
            t.init.iter().map(|e| e.kind.clone()).collect::<Vec<_>>(),
            vec![InitKind::Array {
                name: "y".into(),
                ty: ValueType::AtomicInt,
                len: 2,
                values: vec![0, 0]
            }]
        );
        let (r1, e) = decl(&t.programs[0].body[1]);
        assert_eq!(r1, "r1");
        assert_eq!(
            *builtin_of(e),
            Builtin::Load {
                obj: bin(BinaryOp::Add, var("y"), var("r0")),
                order: Some(MemoryOrder::Relaxed),
                scope: None
            }
        );
        assert_eq!(
            *call_stmt(&t.programs[1].body[1]),
            Builtin::Store {
                obj: var("x"),
                value: int(1),
                order: Some(MemoryOrder::Release),
                scope: None
            }
        );
    }

    #[test]
    fn spot_check_overhauling_example10_if_and_two_devices() {
        let t = corpus_file("overhauling/example10.litmus");
        assert_eq!(t.programs.len(), 4);
        assert_eq!(
            *call_stmt(&t.programs[0].body[1]),
            Builtin::Store {
                obj: var("z1"),
                value: int(1),
                order: Some(MemoryOrder::Release),
                scope: Some(MemoryScope::AllSvmDevices)
            }
        );
        let p1 = &t.programs[1];
        assert_eq!(decl(&p1.body[0]), ("r", &int(-1)));
        let StmtKind::If {
            cond,
            then_branch,
            else_branch,
        } = &p1.body[1].kind
        else {
            panic!("expected if")
        };
        assert!(else_branch.is_none());
        let Expr::Binary(BinaryOp::Eq, lhs, rhs) = cond else {
            panic!("expected ==, got {cond:?}")
        };
        assert_eq!(**rhs, int(1));
        assert_eq!(
            *builtin_of(lhs),
            Builtin::Load {
                obj: var("z2"),
                order: Some(MemoryOrder::Acquire),
                scope: Some(MemoryScope::AllSvmDevices)
            }
        );
        let StmtKind::Assign { reg: target, value } = &then_branch.kind else {
            panic!("expected assignment")
        };
        assert_eq!(target, "r");
        assert_eq!(
            *builtin_of(value),
            Builtin::Load {
                obj: var("x"),
                order: Some(MemoryOrder::SeqCst),
                scope: Some(MemoryScope::Device)
            }
        );
        assert_eq!(
            t.scope_tree,
            Some(vec![device(vec![wg(&[0, 1])]), device(vec![wg(&[2, 3])])])
        );
        assert_eq!(
            t.condition.prop,
            Prop::And(vec![atom(reg(1, "r"), 0), atom(reg(3, "r"), 0)])
        );
    }

    #[test]
    fn spot_check_ct_wsq2_else_unqualified_and_while() {
        let t = corpus_file("herd/CT_wsq2.litmus");
        let p0 = &t.programs[0];
        assert_eq!(p0.params[2].space, None);
        assert_eq!(p0.params[2].name, "oldHead_p");
        let StmtKind::If {
            else_branch: Some(e),
            ..
        } = &p0.body[2].kind
        else {
            panic!("expected if/else")
        };
        assert!(matches!(&e.kind, StmtKind::Block(b) if b.len() == 1));
        let p1 = &t.programs[1];
        assert_eq!(
            p1.body[0].kind,
            StmtKind::Decl(vec![Declarator {
                name: "localTail".into(),
                init: None
            }])
        );
        let StmtKind::If { cond, .. } = &p1.body[2].kind else {
            panic!("expected if")
        };
        assert_eq!(
            *cond,
            bin(
                BinaryOp::Ne,
                var("localTail"),
                Expr::Deref(Box::new(var("oldHead_p")))
            )
        );

        let t = corpus_file("extra/TSan.litmus");
        let p1 = &t.programs[1];
        assert!(matches!(&p1.body[0].kind, StmtKind::Store { addr, .. } if *addr == var("y")));
        let StmtKind::While { cond, body } = &p1.body[1].kind else {
            panic!("expected while")
        };
        assert_eq!(body.kind, StmtKind::Block(vec![]));
        let Expr::Binary(BinaryOp::Eq, cas, zero) = cond else {
            panic!("expected ==")
        };
        assert_eq!(**zero, int(0));
        assert!(
            matches!(builtin_of(cas), Builtin::CompareExchange { expected, desired, .. }
            if *expected == var("y") && *desired == Expr::Deref(Box::new(var("y"))))
        );
    }

    /// The forms no corpus file uses: every builtin, the other init and
    /// condition forms, nested scope levels, comments, precedence.
    #[test]
    fn synthetic_forms() {
        let src = r#"OpenCL synth[wg]||x+y.z
{ x = 0; [y]=1; int z = 2; atomic_int w; 0:r9 = x; atomic_flag f = 0 }
/* a block
   comment */
P0 (global atomic_int *x, local atomic_int* y, global_fga int* z, atomic_flag* f) {
  int a, b = 2;
  a = atomic_exchange(x, 1);
  b = atomic_exchange_explicit(x, 2, memory_order_acq_rel, memory_scope_work_group);
  int c = atomic_compare_exchange_weak_explicit(y, z, 3, memory_order_seq_cst, memory_order_acquire, memory_scope_sub_group);
  int d = atomic_compare_exchange_strong(x, z, 4);
  atomic_fetch_add(x, 1); atomic_fetch_sub_explicit(x, 1, memory_order_relaxed);
  atomic_fetch_or(x, 1); atomic_fetch_xor(x, 1); atomic_fetch_and(x, 1);
  atomic_fetch_min(x, 1); atomic_fetch_max_explicit(x, 1, memory_order_release, memory_scope_work_item);
  int e = atomic_flag_test_and_set(f);
  atomic_flag_clear_explicit(f, memory_order_release);
  atomic_init(x, 0);
  L: work_group_barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE, memory_scope_work_group);
  barrier(CLK_IMAGE_MEM_FENCE);
  int g = 1 + 2 * 3 == 7 && !(a < b) || -a >= 0 - 1 ^ 3 & 1 | 8;
  while (0) ;
  if (a) { } else if (b) ; else { ; }
}
P1 (int* x) { }
scopeTree
(device (kernel (work_group (sub_group P0) (sub_group P1))))
locations [x; 0:a; [y];]
~exists (not (0:a=1 \/ x=y) /\ ~true \/ false)
"#;
        let t = parse_litmus(src, "synth.litmus").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(t.name, "synth[wg]||x+y.z");
        let init: Vec<_> = t.init.iter().map(|e| e.kind.clone()).collect();
        assert_eq!(
            init,
            vec![
                InitKind::Location {
                    name: "x".into(),
                    ty: None,
                    value: Some(InitValue::Int(0))
                },
                InitKind::Location {
                    name: "y".into(),
                    ty: None,
                    value: Some(InitValue::Int(1))
                },
                InitKind::Location {
                    name: "z".into(),
                    ty: Some(ValueType::Int),
                    value: Some(InitValue::Int(2))
                },
                InitKind::Location {
                    name: "w".into(),
                    ty: Some(ValueType::AtomicInt),
                    value: None
                },
                InitKind::Register {
                    thread: 0,
                    reg: "r9".into(),
                    value: InitValue::Loc("x".into())
                },
                InitKind::Location {
                    name: "f".into(),
                    ty: Some(ValueType::AtomicFlag),
                    value: Some(InitValue::Int(0))
                },
            ]
        );
        let p0 = &t.programs[0];
        let spaces: Vec<_> = p0.params.iter().map(|p| (p.space, p.ty)).collect();
        assert_eq!(
            spaces,
            vec![
                (Some(AddressSpace::Global), ValueType::AtomicInt),
                (Some(AddressSpace::Local), ValueType::AtomicInt),
                (Some(AddressSpace::GlobalFga), ValueType::Int),
                (None, ValueType::AtomicFlag),
            ]
        );
        assert_eq!(
            p0.body[0].kind,
            StmtKind::Decl(vec![
                Declarator {
                    name: "a".into(),
                    init: None
                },
                Declarator {
                    name: "b".into(),
                    init: Some(int(2))
                },
            ])
        );
        let assigned = |i: usize| match &p0.body[i].kind {
            StmtKind::Assign { value, .. } => builtin_of(value).clone(),
            other => panic!("not an assignment: {other:?}"),
        };
        assert_eq!(
            assigned(1),
            Builtin::Exchange {
                obj: var("x"),
                value: int(1),
                order: None,
                scope: None
            }
        );
        assert_eq!(
            assigned(2),
            Builtin::Exchange {
                obj: var("x"),
                value: int(2),
                order: Some(MemoryOrder::AcqRel),
                scope: Some(MemoryScope::WorkGroup)
            }
        );
        assert_eq!(
            *builtin_of(decl(&p0.body[3]).1),
            Builtin::CompareExchange {
                weak: true,
                obj: var("y"),
                expected: var("z"),
                desired: int(3),
                success: Some(MemoryOrder::SeqCst),
                failure: Some(MemoryOrder::Acquire),
                scope: Some(MemoryScope::SubGroup),
            }
        );
        assert!(matches!(
            builtin_of(decl(&p0.body[4]).1),
            Builtin::CompareExchange {
                weak: false,
                success: None,
                failure: None,
                scope: None,
                ..
            }
        ));
        let ops: Vec<_> = p0.body[5..12]
            .iter()
            .map(|s| match call_stmt(s) {
                Builtin::FetchOp {
                    op, order, scope, ..
                } => (*op, *order, *scope),
                other => panic!("not a fetch op: {other:?}"),
            })
            .collect();
        assert_eq!(
            ops,
            vec![
                (FetchOp::Add, None, None),
                (FetchOp::Sub, Some(MemoryOrder::Relaxed), None),
                (FetchOp::Or, None, None),
                (FetchOp::Xor, None, None),
                (FetchOp::And, None, None),
                (FetchOp::Min, None, None),
                (
                    FetchOp::Max,
                    Some(MemoryOrder::Release),
                    Some(MemoryScope::WorkItem)
                ),
            ]
        );
        assert_eq!(
            *builtin_of(decl(&p0.body[12]).1),
            Builtin::FlagTestAndSet {
                obj: var("f"),
                order: None,
                scope: None
            }
        );
        assert_eq!(
            *call_stmt(&p0.body[13]),
            Builtin::FlagClear {
                obj: var("f"),
                order: Some(MemoryOrder::Release),
                scope: None
            }
        );
        assert_eq!(
            *call_stmt(&p0.body[14]),
            Builtin::Init {
                obj: var("x"),
                value: int(0)
            }
        );
        let StmtKind::Labelled { stmt, .. } = &p0.body[15].kind else {
            panic!("expected label")
        };
        assert_eq!(
            *call_stmt(stmt),
            Builtin::Barrier {
                form: BarrierForm::WorkGroupBarrier,
                flags: FenceFlags {
                    global: true,
                    local: true,
                    image: false
                },
                scope: Some(MemoryScope::WorkGroup),
            }
        );
        assert_eq!(
            *call_stmt(&p0.body[16]),
            Builtin::Barrier {
                form: BarrierForm::Barrier,
                flags: FenceFlags {
                    global: false,
                    local: false,
                    image: true
                },
                scope: None
            }
        );
        // ((1 + (2*3)) == 7 && !(a < b)) || (((-a >= (0 - 1)) ^ (3 & 1)) | 8)
        let expected = bin(
            BinaryOp::Or,
            bin(
                BinaryOp::And,
                bin(
                    BinaryOp::Eq,
                    bin(BinaryOp::Add, int(1), bin(BinaryOp::Mul, int(2), int(3))),
                    int(7),
                ),
                Expr::Unary(
                    UnaryOp::Not,
                    Box::new(bin(BinaryOp::Lt, var("a"), var("b"))),
                ),
            ),
            bin(
                BinaryOp::BitOr,
                bin(
                    BinaryOp::BitXor,
                    bin(
                        BinaryOp::Ge,
                        Expr::Unary(UnaryOp::Neg, Box::new(var("a"))),
                        bin(BinaryOp::Sub, int(0), int(1)),
                    ),
                    bin(BinaryOp::BitAnd, int(3), int(1)),
                ),
                int(8),
            ),
        );
        assert_eq!(*decl(&p0.body[17]).1, expected);
        assert!(
            matches!(&p0.body[18].kind, StmtKind::While { body, .. } if body.kind == StmtKind::Empty)
        );
        let StmtKind::If {
            else_branch: Some(e),
            ..
        } = &p0.body[19].kind
        else {
            panic!("expected if/else")
        };
        assert!(matches!(
            &e.kind,
            StmtKind::If {
                else_branch: Some(_),
                ..
            }
        ));
        assert_eq!(t.programs[1].params[0].space, None);
        assert_eq!(
            t.scope_tree,
            Some(vec![device(vec![ScopeItem::Node(ScopeNode {
                level: ScopeLevel::Kernel,
                children: vec![ScopeItem::Node(ScopeNode {
                    level: ScopeLevel::WorkGroup,
                    children: vec![
                        ScopeItem::Node(ScopeNode {
                            level: ScopeLevel::SubGroup,
                            children: vec![ScopeItem::Thread(0)]
                        }),
                        ScopeItem::Node(ScopeNode {
                            level: ScopeLevel::SubGroup,
                            children: vec![ScopeItem::Thread(1)]
                        }),
                    ],
                })],
            })])])
        );
        assert_eq!(
            t.locations,
            vec![
                CondLoc::Loc("x".into()),
                reg(0, "a"),
                CondLoc::Loc("y".into())
            ]
        );
        assert_eq!(t.condition.quantifier, Quantifier::NotExists);
        let x_is_y = Prop::Atom(Atom {
            loc: CondLoc::Loc("x".into()),
            value: InitValue::Loc("y".into()),
        });
        assert_eq!(
            t.condition.prop,
            Prop::Or(vec![
                Prop::And(vec![
                    Prop::Not(Box::new(Prop::Or(vec![atom(reg(0, "a"), 1), x_is_y]))),
                    Prop::Not(Box::new(Prop::True)),
                ]),
                Prop::False,
            ])
        );

        let t = parse_litmus("OpenCL F {} P0 () {} forall (true)", "f").unwrap();
        assert_eq!(t.condition.quantifier, Quantifier::Forall);
        assert_eq!(t.scope_tree, None);
        let t = parse_litmus("OpenCL F\n{}\nP0 () { int r0 = 0; }\n~ exists (0:r0 = -3)", "f").unwrap();
        assert_eq!(
            t.condition,
            Condition {
                quantifier: Quantifier::NotExists,
                prop: atom(reg(0, "r0"), -3)
            }
        );
    }

    // ------------------------------------------------- malformed inputs

    const BASE: &str = "OpenCL T\n{ [x]=0; }\nP0 (global atomic_int* x) {\n  BODY\n}\nscopeTree\n(device (work_group P0))\nexists (0:r0=1)\n";

    fn err(src: &str) -> ParseError {
        match parse_litmus(src, "bad.litmus") {
            Ok(t) => panic!("parsed although malformed: {t:?}"),
            Err(e) => e,
        }
    }

    fn body_err(body: &str) -> ParseError {
        err(&BASE.replace("BODY", body))
    }

    #[test]
    fn missing_semicolon_is_reported_at_the_next_token() {
        let e = body_err("int r0 = 1\n  int r1 = 2;");
        assert_eq!(
            (e.line, e.col, e.kind.clone()),
            (5, 3, ParseErrorKind::Syntax)
        );
        assert_eq!(
            e.to_string(),
            "bad.litmus:5:3: expected binary operator, `;` or `,`, found `int`"
        );
    }

    #[test]
    fn unknown_function_is_an_unsupported_construct() {
        let e = body_err("int r0 = foo(x);");
        assert_eq!((e.line, e.col), (4, 12));
        assert_eq!(e.kind, ParseErrorKind::Unsupported("foo".into()));
        let msg = e.to_string();
        assert!(msg.starts_with("bad.litmus:4:12: expected "), "{msg}");
        assert!(msg.ends_with("found unsupported construct `foo`"), "{msg}");
        // A C statement the language lacks, and an unknown `_explicit`.
        let e = body_err("for (;;) { }");
        assert_eq!(
            (e.line, e.col, e.kind),
            (4, 3, ParseErrorKind::Unsupported("for".into()))
        );
        let e = body_err("atomic_thread_fence_explicit(memory_order_seq_cst);");
        assert_eq!((e.line, e.col), (4, 3));
        assert_eq!(
            e.kind,
            ParseErrorKind::Unsupported("atomic_thread_fence_explicit".into())
        );
    }

    #[test]
    fn bad_builtin_arguments() {
        let e = body_err("atomic_store_explicit(x, 1, memory_order_bogus);");
        assert_eq!(
            (e.line, e.col, e.kind.clone()),
            (4, 31, ParseErrorKind::Invalid)
        );
        assert!(e.to_string().ends_with("found `memory_order_bogus`"), "{e}");
        let e = body_err("int r0 = atomic_load_explicit(x);");
        assert_eq!((e.line, e.col), (4, 12));
        assert_eq!(
            e.to_string(),
            "bad.litmus:4:12: expected 2 or 3 arguments to `atomic_load_explicit`, found 1"
        );
        let e = body_err("  barrier(CLK_GLOBAL_MEM_FENCE | 2);");
        assert_eq!((e.line, e.col), (4, 13));
        assert!(e.expected.starts_with("fence flags"), "{e}");
        let e = body_err("atomic_work_item_fence(CLK_LOCAL_MEM_FENCE, memory_order_acquire, memory_scope_galaxy);");
        assert_eq!((e.line, e.col), (4, 69));
        assert!(e.expected.starts_with("a memory scope"), "{e}");
    }

    #[test]
    fn syntax_errors_in_each_section() {
        // Header without a name.
        let e = err("OpenCL\n{}\nP0 () {}\nexists (true)");
        assert_eq!(
            e.to_string(),
            "bad.litmus:1:7: expected test name after `OpenCL`, found end of line"
        );
        // Empty file.
        assert_eq!(
            err("").to_string(),
            "bad.litmus:1:1: expected `OpenCL`, found end of file"
        );
        // Initial state missing a `;`.
        let e = err("OpenCL T\n{ [x]=0 [y]=0; }\nP0 () {}\nexists (true)");
        assert_eq!(
            e.to_string(),
            "bad.litmus:2:9: expected `}` or `;`, found `[`"
        );
        // Parameter without `*`.
        let e = err("OpenCL T\n{}\nP0 (global int x) {}\nexists (x=0)");
        assert_eq!(e.to_string(), "bad.litmus:3:16: expected `*`, found `x`");
        // Unbalanced scope tree.
        let e = err(
            "OpenCL T\n{}\nP0 (global int* x) {}\nscopeTree (device (work_group P0)\nexists (x=0)",
        );
        assert_eq!((e.line, e.col), (5, 1));
        assert!(e.to_string().contains("found `exists`"), "{e}");
        // Scope levels nested the wrong way.
        let e = err(
            "OpenCL T\n{}\nP0 (global int* x) {}\nscopeTree (work_group (device P0))\nexists (x=0)",
        );
        assert_eq!(
            (e.line, e.col, e.kind.clone()),
            (4, 24, ParseErrorKind::Invalid)
        );
        // Dangling connective and missing `)` in the condition.
        let e = err("OpenCL T\n{}\nP0 (global int* x) {}\nexists (x=0 /\\ )");
        assert_eq!(
            e.to_string(),
            "bad.litmus:4:16: expected proposition, found `)`"
        );
        let e = err("OpenCL T\n{}\nP0 (global int* x) {}\nexists (x=0");
        assert_eq!(
            e.to_string(),
            "bad.litmus:4:12: expected `\\/`, `/\\` or `)`, found end of file"
        );
        // No final condition.
        let e = err("OpenCL T\n{}\nP0 (global int* x) {}\n");
        assert_eq!((e.line, e.col), (4, 1));
        assert!(e.expected.contains("final condition"), "{e}");
        assert_eq!(e.found, "end of file");
        // Garbage statement and duplicated program.
        let e = body_err("@");
        assert_eq!(
            e.to_string(),
            "bad.litmus:4:3: expected statement or `}`, found `@`"
        );
        let e = err("OpenCL T\n{}\nP0 () {}\nP0 () {}\nexists (true)");
        assert_eq!(
            (e.line, e.col, e.kind.clone()),
            (4, 1, ParseErrorKind::Invalid)
        );
        // Incomplete expression.
        let e = body_err("int r0 = (1 + ;");
        assert_eq!(
            e.to_string(),
            "bad.litmus:4:17: expected expression, found `;`"
        );
    }

    /// The condition and the programs name only what the test has: a
    /// register, program or location that does not exist was read as 0 or
    /// `?`, and an unknown name in a branch never taken went unreported
    /// (a user-acceptance run, session 56).
    #[test]
    fn names_that_do_not_exist_are_errors() {
        let cases = [
            (BASE.replace("BODY", "int r0 = 1;").replace("exists (0:r0=1)", "exists (0:r5=1)"), 8, "a register that P0 declares", "`0:r5`"),
            (BASE.replace("BODY", "int r0 = 1;").replace("exists (0:r0=1)", "exists (3:r0=1)"), 8, "a program of the test (P0)", "`3:r0`"),
            (BASE.replace("BODY", "int r0 = 1;").replace("exists (0:r0=1)", "exists (z=1)"), 8, "a location of the test (in the initial state or a parameter)", "`z`"),
            (BASE.replace("BODY", "int r0 = 1;\n  if (0) { atomic_store(x, r9); }"), 5, "a parameter or a register that P0 declares", "`r9`"),
            (BASE.replace("BODY", "r0 = 1;"), 4, "a parameter or a register that P0 declares", "`r0`"),
        ];
        for (src, line, expected, found) in cases {
            let e = err(&src);
            assert_eq!((e.line, e.expected.as_str(), e.found.as_str()), (line, expected, found), "{e}");
        }
    }

    #[test]
    fn parse_error_is_a_std_error() {
        let boxed: Box<dyn std::error::Error> = Box::new(body_err("@"));
        assert!(boxed.to_string().starts_with("bad.litmus:4:3: "));
    }
}
