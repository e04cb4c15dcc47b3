//! Narrowing on a guess of a task's inputs' values, checked when the task runs. A `u16` image
//! may hold any 16-bit value, so the sum of three of its pixels needs 18 bits and a 3x3 box
//! blur's vectors hold 32-bit lanes; but an image of 12-bit values (a camera's raw data, the
//! blur of `shared/APPS.md`) sums in 16 bits, exactly, in lanes twice as many. Halide's blur
//! computes in `UInt(16)` and trusts its input; here the guess is checked.
//!
//! For each parallel task (a `Parallel` or `ParallelChunks` loop) whose statements may run twice
//! (no update, scan or write of a matrix it reads; no index, bound or branch that depends on
//! data), and for each guess that the integer matrices the function only reads (of 16 or 32
//! bits) hold values of at most `b` bits, from 15 down to 8: the task's interiors are narrowed
//! with loads of those matrices within the guess, and of the private buffers the task fills
//! within what their stores then hold. The widest guess that narrows the most operations, if it
//! narrows more than the types alone prove, makes the task
//!
//! ```text
//! speculate guess {
//!   guess &= within src[x, ..] in [0, 16383]      // once per row the task reads, before it
//!   ...the task, narrowed on the guess...
//! } else {
//!   ...the task as written...                     // where some row was outside the guess
//! }
//! ```
//!
//! Every value the guessed task computes from a row that holds the guess is the written one's;
//! where a row does not, the task runs again as written, and writes every element the guessed
//! run wrote (the same stores at the same indices, none of which depends on a value), so the
//! result is the written task's either way. A row is checked whole, once per iteration of the
//! loop that chooses it, so the check reads each row once, just before the task reads it again.

use super::interiors;
use crate::ir::Scalar;
use crate::lir::canon::Canon;
use crate::lir::range::{Stored, stored_in};
use crate::lir::visit::{Mutator, expr_children, rebuild_stmt, stmt_parts};
use crate::lir::{
    Buf, ExprId, ExprKind, Func, LoopKind, MatrixId, Memory, Stmt, StmtId, VarId, Within,
};
use std::collections::{HashMap, HashSet};

/// A guess: each guessed matrix's least and greatest value.
type Guesses = HashMap<MatrixId, (i64, i64)>;

/// The guesses tried: a value's significant bits (a sign's included), widest first.
const BITS: std::ops::RangeInclusive<u32> = 8..=15;

/// Speculates every task of `func` where a guess narrows more of it; `stored`: the ranges of
/// what the function's buffers hold.
pub(super) fn run(func: &mut Func, stored: &Stored) {
    let inputs = inputs(func);
    if inputs.is_empty() {
        return;
    }
    let mut tasks = Vec::new();
    find_tasks(func, func.body, &mut tasks);
    for t in tasks {
        speculate(func, t, &inputs, stored);
    }
}

/// The integer matrices of 16 or 32 bits that `func` reads and never writes, with their types.
fn inputs(func: &Func) -> HashMap<MatrixId, Scalar> {
    let mut loaded = HashMap::new();
    let mut written = HashSet::new();
    let mut stmts = vec![func.body];
    let mut exprs = Vec::new();
    while let Some(s) = stmts.pop() {
        let stmt = &func.stmts[s];
        match stmt {
            Stmt::Store { buf, .. } | Stmt::Update { buf, .. } => {
                written.extend(matrix_of(func, *buf));
            }
            Stmt::Allocate { buf, memory, .. } => {
                written.extend(matrix_of(func, *buf));
                if let Memory::Rows(m) = memory {
                    written.insert(*m);
                }
            }
            Stmt::Swap(a, b) => written.extend([*a, *b]),
            _ => {}
        }
        let (es, ss) = stmt_parts(stmt);
        exprs.extend(es);
        stmts.extend(ss);
    }
    let mut seen = HashSet::new();
    while let Some(e) = exprs.pop() {
        if !seen.insert(e) {
            continue;
        }
        let x = &func.exprs[e];
        if let ExprKind::Load {
            buf: Buf::Matrix(m),
            ..
        } = x.kind
        {
            loaded.insert(m, x.ty);
        }
        exprs.extend(expr_children(&x.kind));
    }
    loaded
        .into_iter()
        .filter(|(m, t)| !written.contains(m) && t.is_int() && matches!(t.bytes(), 2 | 4))
        .collect()
}

/// The matrix whose elements `buf` holds, if any ([`Func::whose`]).
fn matrix_of(func: &Func, buf: Buf) -> Option<MatrixId> {
    match func.whose(buf) {
        Buf::Matrix(m) => Some(m),
        Buf::Temp(_) => None,
    }
}

/// The outermost parallel loops below `s`.
fn find_tasks(func: &Func, s: StmtId, out: &mut Vec<StmtId>) {
    if let Stmt::For {
        kind: LoopKind::Parallel | LoopKind::ParallelChunks(_),
        ..
    } = func.stmts[s]
    {
        out.push(s);
        return;
    }
    for c in stmt_parts(&func.stmts[s]).1 {
        find_tasks(func, c, out);
    }
}

/// The values of a guess of `b` bits for a matrix of type `t`, where it is narrower than `t`.
fn guess(t: Scalar, b: u32) -> Option<(i64, i64)> {
    let (lo, hi) = match matches!(t, Scalar::I16 | Scalar::I32) {
        true => (-(1i64 << (b - 1)), (1i64 << (b - 1)) - 1),
        false => (0, (1i64 << b) - 1),
    };
    let (tlo, thi) = t.range()?;
    (i128::from(lo) > tlo || i128::from(hi) < thi).then_some((lo, hi))
}

/// Task `t` speculated on the guess that narrows it most, where one narrows more than its types.
fn speculate(func: &mut Func, t: StmtId, inputs: &HashMap<MatrixId, Scalar>, stored: &Stored) {
    let Stmt::For { body, .. } = func.stmts[t] else {
        return;
    };
    let Some(read) = rerunnable(func, body, inputs) else {
        return;
    };
    if read.is_empty() {
        return;
    }
    let (_, base) = interiors(func, body, stored);
    // The most operations narrowed, the body narrowed so and its guess.
    let mut best: Option<(usize, StmtId, Guesses)> = None;
    for b in BITS.rev() {
        let guesses: Guesses = read
            .iter()
            .filter_map(|m| Some((*m, guess(inputs[m], b)?)))
            .collect();
        if guesses.is_empty() {
            continue;
        }
        let mut known = stored.clone();
        for (m, (lo, hi)) in &guesses {
            known.insert(Buf::Matrix(*m), (i128::from(*lo), i128::from(*hi)));
        }
        // The task's own buffers hold what their stores compute on the guess (twice: a buffer
        // computed from another).
        for _ in 0..2 {
            for (buf, r) in stored_in(func, body, &known) {
                if matches!(buf, Buf::Temp(_)) {
                    known.insert(buf, r);
                }
            }
        }
        let (narrowed, ops) = interiors(func, body, &known);
        if ops > best.as_ref().map_or(base, |b| b.0) {
            best = Some((ops, narrowed, guesses));
        }
    }
    let Some((_, narrowed, guesses)) = best else {
        return;
    };
    let flag = func.var("guess", Scalar::Bool);
    let Some(guessed) = guard(func, t, narrowed, &guesses, flag) else {
        return;
    };
    let spec = func.stmt(Stmt::Speculate {
        flag,
        body: guessed,
        fallback: body,
    });
    if let Stmt::For { body, .. } = &mut func.stmts[t] {
        *body = spec;
    }
}

/// Whether task body `s` may run twice with one result, and if so the matrices of `inputs` it
/// reads: no statement but loops, branches, `let`s, stores and private buffers; no store to a
/// matrix it reads; no loop bound, branch or index that depends on a value read.
fn rerunnable(
    func: &Func,
    s: StmtId,
    inputs: &HashMap<MatrixId, Scalar>,
) -> Option<HashSet<MatrixId>> {
    let mut w = Walk {
        func,
        data: HashSet::new(),
        loaded: HashSet::new(),
        written: HashSet::new(),
    };
    w.stmt(s)?;
    if !w.loaded.is_disjoint(&w.written) {
        return None;
    }
    Some(
        w.loaded
            .into_iter()
            .filter(|m| inputs.contains_key(m))
            .collect(),
    )
}

struct Walk<'a> {
    func: &'a Func,
    /// Variables bound to values computed from what was read.
    data: HashSet<VarId>,
    /// The matrices read (a task's rows of one: that matrix).
    loaded: HashSet<MatrixId>,
    /// The matrices written.
    written: HashSet<MatrixId>,
}

impl Walk<'_> {
    fn stmt(&mut self, s: StmtId) -> Option<()> {
        let func = self.func;
        match &func.stmts[s] {
            Stmt::Block(b) => b.iter().try_for_each(|c| self.stmt(*c)),
            Stmt::For { lo, hi, body, .. } => {
                self.plain(*lo)?;
                self.plain(*hi)?;
                self.stmt(*body)
            }
            Stmt::Let(v, e) => {
                if self.value(*e)? {
                    self.data.insert(*v);
                }
                Some(())
            }
            Stmt::If(c, t, e) => {
                self.plain(*c)?;
                self.stmt(*t)?;
                e.map_or(Some(()), |e| self.stmt(e))
            }
            Stmt::Store {
                buf, index, value, ..
            } => {
                index.iter().try_for_each(|i| self.plain(*i))?;
                self.value(*value)?;
                self.written.extend(matrix_of(func, *buf));
                Some(())
            }
            Stmt::Allocate {
                buf: Buf::Temp(_),
                memory: Memory::Private | Memory::Rows(_),
                extents,
                ..
            } => extents.iter().try_for_each(|e| self.plain(*e)),
            Stmt::Stage(st) => {
                st.index.iter().try_for_each(|i| self.plain(*i))?;
                self.plain(st.rows)?;
                self.plain(st.cols)?;
                self.loaded.insert(st.buf);
                if let crate::lir::StageInto::Matrix { buf, index } = &st.into {
                    index.iter().try_for_each(|i| self.plain(*i))?;
                    self.written.insert(*buf);
                }
                Some(())
            }
            _ => None,
        }
    }

    /// `e`, an index, bound or condition: it reads nothing and no value read.
    fn plain(&mut self, e: ExprId) -> Option<()> {
        match self.value(e)? {
            true => None,
            false => Some(()),
        }
    }

    /// Whether `e` depends on a value read; `None` where one of its loads has such an index.
    fn value(&mut self, e: ExprId) -> Option<bool> {
        let func = self.func;
        let mut depends = false;
        let mut stack = vec![e];
        let mut seen = HashSet::new();
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            let kind = &func.exprs[x].kind;
            match kind {
                ExprKind::Load { buf, index, .. } => {
                    depends = true;
                    self.loaded.extend(matrix_of(func, *buf));
                    // An index is plain (a `let` inside it stays inside it).
                    for i in index {
                        self.plain(*i)?;
                    }
                    continue;
                }
                ExprKind::Var(v) if self.data.contains(v) => depends = true,
                // A value read, bound inside an expression: its uses depend on it.
                ExprKind::Let(v, value, _) if self.value(*value)? => {
                    self.data.insert(*v);
                }
                _ => {}
            }
            // Children in order, so that a `let`'s value is walked before its body.
            stack.extend(expr_children(kind).into_iter().rev());
        }
        Some(depends)
    }
}

/// One row a guessed task checks: the loop it is checked in (`None`: the task's body), the
/// matrix and the row's indices.
type Check = (Option<StmtId>, MatrixId, Vec<ExprId>);

/// `narrowed` (task `t`'s body narrowed on `guesses`) with a [`Stmt::Within`] of `flag` for
/// every row of a guessed matrix it reads, at the head of the loop whose variable picks the row
/// (or of the body); `None` where some row cannot be checked so (its index depends on a loop
/// inside, or on a variable bound after that loop's head).
fn guard(
    func: &mut Func,
    t: StmtId,
    narrowed: StmtId,
    guesses: &Guesses,
    flag: VarId,
) -> Option<StmtId> {
    let Stmt::For { var, .. } = func.stmts[t] else {
        return None;
    };
    let mut p = Places {
        func,
        guesses,
        frames: vec![(None, var, 1)],
        scope: vec![var],
        checks: Vec::new(),
        keys: HashSet::new(),
        canon: Canon::new(),
    };
    p.stmt(narrowed)?;
    let checks = p.checks;
    let mut at: HashMap<Option<StmtId>, Vec<StmtId>> = HashMap::new();
    for (place, m, rows) in checks {
        let (lo, hi) = guesses[&m];
        let w = func.stmt(Stmt::Within(Within {
            flag,
            buf: m,
            rows,
            lo,
            hi,
        }));
        at.entry(place).or_default().push(w);
    }
    let mut heads = Heads { at: &at };
    let body = heads.mutate_stmt(func, narrowed);
    let first = at.get(&None).cloned().unwrap_or_default();
    Some(func.stmt(Stmt::Block(first.into_iter().chain([body]).collect())))
}

struct Places<'a> {
    func: &'a Func,
    guesses: &'a Guesses,
    /// The loops around: each one's statement (`None`: the task), variable and the length of
    /// `scope` at its body's head.
    frames: Vec<(Option<StmtId>, VarId, usize)>,
    /// The variables bound here, in order.
    scope: Vec<VarId>,
    checks: Vec<Check>,
    /// The checks made (one per loop, matrix and row: the row's indices by structure).
    keys: HashSet<(Option<StmtId>, MatrixId, Vec<ExprId>)>,
    canon: Canon,
}

impl Places<'_> {
    fn stmt(&mut self, s: StmtId) -> Option<()> {
        let func = self.func;
        match &func.stmts[s] {
            Stmt::Block(b) => {
                let mark = self.scope.len();
                for c in b {
                    self.stmt(*c)?;
                    if let Stmt::Let(v, _) = func.stmts[*c] {
                        self.scope.push(v);
                    }
                }
                self.scope.truncate(mark);
                Some(())
            }
            Stmt::For {
                var, lo, hi, body, ..
            } => {
                self.exprs(&[*lo, *hi])?;
                self.frames.push((Some(s), *var, self.scope.len() + 1));
                self.scope.push(*var);
                let r = self.stmt(*body);
                self.scope.pop();
                self.frames.pop();
                r
            }
            other => {
                let (es, ss) = stmt_parts(other);
                self.exprs(&es)?;
                ss.into_iter().try_for_each(|c| self.stmt(c))
            }
        }
    }

    /// Places a check for every guessed load in `es`.
    fn exprs(&mut self, es: &[ExprId]) -> Option<()> {
        let func = self.func;
        let mut loads = Vec::new();
        for e in es {
            crate::lir::visit::preorder(func, *e, |x| {
                if let ExprKind::Load {
                    buf: Buf::Matrix(m),
                    index,
                    ..
                } = &func.exprs[x].kind
                    && self.guesses.contains_key(m)
                {
                    loads.push((*m, index.clone()));
                }
                true
            });
        }
        for (m, index) in loads {
            let rows = index[..index.len() - 1].to_vec();
            let free = free_vars(func, &rows);
            // The innermost loop whose variable the row names (else the task's body).
            let k = (0..self.frames.len())
                .rev()
                .find(|k| free.contains(&self.frames[*k].1))
                .unwrap_or(0);
            let (place, _, len) = self.frames[k];
            // Checked once per row it picks, not per point of the innermost loop.
            if k > 0 && k == self.frames.len() - 1 {
                return None;
            }
            if !free.iter().all(|v| self.scope[..len].contains(v)) {
                return None;
            }
            let key = rows.iter().map(|r| self.canon.of(func, *r)).collect();
            if self.keys.insert((place, m, key)) {
                self.checks.push((place, m, rows));
            }
        }
        Some(())
    }
}

/// The variables `es` read that no `let` inside them binds.
fn free_vars(func: &Func, es: &[ExprId]) -> HashSet<VarId> {
    let mut used = HashSet::new();
    let mut bound = HashSet::new();
    for e in es {
        crate::lir::visit::preorder(func, *e, |x| {
            match func.exprs[x].kind {
                ExprKind::Var(v) => {
                    used.insert(v);
                }
                ExprKind::Let(v, ..) => {
                    bound.insert(v);
                }
                _ => {}
            }
            true
        });
    }
    used.retain(|v| !bound.contains(v));
    used
}

/// Rebuilds a body with checks at the heads of loops (`at`, by loop).
struct Heads<'a> {
    at: &'a HashMap<Option<StmtId>, Vec<StmtId>>,
}

impl Mutator for Heads<'_> {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        let r = rebuild_stmt(self, func, s);
        let Some(checks) = self.at.get(&Some(s)) else {
            return r;
        };
        let Stmt::For { body, .. } = func.stmts[r] else {
            return r;
        };
        let body = func.stmt(Stmt::Block(checks.iter().copied().chain([body]).collect()));
        func.loop_with_body(r, body)
    }

    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }
}
