//! Sliding windows (`lir::Options::slide`, the CPU lowering): a window's reduction whose taps
//! are one matrix's elements at `[rows of i][column S(y) + j]` (a fold, `ExprKind::Fold`) is
//! computed per row of the region, in the manner of Halide's sliding window and of OpenCV's
//! separable box and morphology filters:
//!
//! 1. the window's column reductions, once per column of the row rather than once per output:
//!    `col[k] = op over i of tap(i, k)` for every column `k` the row's outputs reach (its `n`
//!    outputs plus the window's width less one), each tap read through its border map once;
//! 2. each output from `col` in time independent of the window: a sum as the difference of two
//!    prefix sums (`pre[y + W] - pre[y]`: exact, integers wrap), a minimum or maximum by van
//!    Herk and Gil-Werman (`op(h[y], g[y + W - 1])`, the suffix and prefix reductions of
//!    `col` in blocks of the window's width).
//!
//! Exact for integers only (a float sum would be reassociated); the rewritten fold reads the
//! same elements as the direct one (the columns `S(first) + k` for `k` in `0..n + W - 1` are
//! exactly the columns `S(y) + j` of every output `y` and tap `j`), so an access outside its
//! matrix fails as it would. The temporaries are private to the row (`Memory::Private`) and
//! their accesses are inside by construction (`checked: false`).
//!
//! The pass applies where the tap's column is `g(S(y) + j)`, `S` the loop variable `y` plus a
//! constant and `g` anything of that sum alone (a border map), its other indices free of `y`
//! and `j`, and the tap's value is a function of that one load; other folds are left as they
//! are.

use super::facts::affine;
use super::partition::has_loop;
use crate::ir::{BinOp, Builtin, Function, ReduceOp, Scalar};
use crate::lir::visit::{
    Mutator, expr_children, mutate_body, rebuild_expr, rebuild_stmt, stmt_parts,
};
use crate::lir::{
    Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId, VarId,
};
use std::collections::HashMap;

/// Windows whose columns take up to this many bytes at the output's type (and up to `unroll`
/// columns) combine them at each output directly; wider ones by doubling.
const DIRECT_BYTES: i128 = 128;

/// Slides every fold that qualifies in `func`'s innermost serial loops. A window of up to
/// `unroll` rows has its column reductions written out (one pass over the row, every row of
/// the window read in it), a taller one loops over its rows; one of up to `unroll` columns
/// combines its columns at each output directly (a vector's lanes each an output), a wider
/// one through prefix sums or van Herk's blocks (time independent of the width).
pub fn run(func: &mut Func, f: &Function, unroll: usize) {
    mutate_body(&mut Slide(f, unroll as i128), func);
}

struct Slide<'a>(&'a Function, i128);

impl Mutator for Slide<'_> {
    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }

    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Some(chunked) = slide_rows(func, self.0, s, self.1) {
            return chunked;
        }
        if let Stmt::For {
            step: 1,
            kind: LoopKind::Serial,
            body,
            ..
        } = func.stmts[s]
        {
            if !has_loop(func, body) {
                return slide_loop(func, self.0, s, self.1).unwrap_or(s);
            }
        }
        rebuild_stmt(self, func, s)
    }
}

/// A fold that slides along the loop's variable.
struct Window {
    fold: ExprId,
    op: ReduceOp,
    /// Row and column tap variables.
    i: VarId,
    j: VarId,
    /// The window's rows and columns.
    rows: i128,
    cols: i128,
    elem: ExprId,
    /// The one load in `elem`.
    load: ExprId,
    ty: Scalar,
    /// The type the column reductions are kept in: the tap's own before a widening
    /// conversion, where every column's reduction fits it (a minimum of `u8`s is a `u8`; a
    /// sum of 31 of them a `u16`), so that a row's vector holds more lanes; `elem` then
    /// without that conversion.
    col_ty: Scalar,
    /// A convolution's filter as an outer product `v[i] * h[j]` (`elem` then the window's tap
    /// alone): the columns are `sum of v[i] * tap`, an output `sum of h[j] * col`.
    weights: Option<(Vec<i128>, Vec<i128>)>,
}

impl Window {
    /// The type `op` over `count` columns fits: the fold's, or narrower where the columns are.
    fn level_ty(&self, func: &mut Func, count: i128) -> Scalar {
        match narrow(func, self.elem, self.op, self.rows * count, self.ty) {
            Some((_, t)) if self.col_ty != self.ty => t,
            _ => self.ty,
        }
    }
}

/// Every expression below `s`, each once.
fn exprs_below(func: &Func, s: StmtId, out: &mut Vec<ExprId>, seen: &mut Vec<bool>) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    let mut stack = es;
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut seen[e.index()], true) {
            continue;
        }
        out.push(e);
        stack.extend(expr_children(&func.exprs[e].kind));
    }
    for c in ss {
        exprs_below(func, c, out, seen);
    }
}

/// Variables bound below `s` (statement and expression `let`s, folds' variables).
fn bound_below(func: &Func, s: StmtId, exprs: &[ExprId], out: &mut Vec<VarId>) {
    if let Stmt::Let(v, _) = func.stmts[s] {
        out.push(v);
    }
    for c in stmt_parts(&func.stmts[s]).1 {
        bound_below(func, c, &[], out);
    }
    for e in exprs {
        match &func.exprs[*e].kind {
            ExprKind::Let(v, ..) => out.push(*v),
            ExprKind::Fold { vars, .. } => out.extend(vars.iter().copied()),
            _ => {}
        }
    }
}

/// Whether every use of a variable of `vars` in `e` is inside node `keep`.
fn only_in(func: &Func, e: ExprId, keep: ExprId, vars: &[VarId]) -> bool {
    if e == keep {
        return true;
    }
    match &func.exprs[e].kind {
        ExprKind::Var(v) => !vars.contains(v),
        k => expr_children(k)
            .iter()
            .all(|c| only_in(func, *c, keep, vars)),
    }
}

/// The variables `e` reads.
fn free(func: &Func, e: ExprId, out: &mut Vec<VarId>) {
    match &func.exprs[e].kind {
        ExprKind::Var(v) => out.push(*v),
        k => {
            for c in expr_children(k) {
                free(func, c, out);
            }
        }
    }
}

/// `e` is `v` or a conversion of it.
fn is_var(func: &Func, e: ExprId, v: VarId) -> bool {
    match func.exprs[e].kind {
        ExprKind::Var(w) => w == v,
        ExprKind::Cast(a) => is_var(func, a, v),
        _ => false,
    }
}

/// The fold `e` as a window sliding along `y`, where it qualifies (see the module).
fn window(func: &mut Func, f: &Function, e: ExprId, y: VarId, bound: &[VarId]) -> Option<Window> {
    let x = func.exprs[e].clone();
    let ExprKind::Fold {
        op,
        vars,
        counts,
        init,
        elem,
    } = &x.kind
    else {
        return None;
    };
    let int = |func: &Func, c: ExprId| match func.exprs[c].kind {
        ExprKind::Int(k) => Some(k),
        _ => None,
    };
    let ([i, j], [rows, cols]) = (vars.as_slice(), counts.as_slice()) else {
        return None;
    };
    let (i, j, rows, cols) = (*i, *j, int(func, *rows)?, int(func, *cols)?);
    if !x.ty.is_int() || x.lanes != 1 || rows < 1 || cols < 2 {
        return None;
    }
    match op {
        ReduceOp::Sum if int(func, *init) == Some(0) => {}
        ReduceOp::Min | ReduceOp::Max => {}
        _ => return None,
    }
    // One load; the tap's variables only in its indices; nothing bound in the loop's body
    // (decided on the tap with its `let`s inlined: a border map binds its indices).
    let mut tap = inline_lets(func, *elem);
    // A convolution's tap: a constant filter's element at `[i, j]`, an outer product
    // `v[i] * h[j]`, times the window's.
    let mut weights = None;
    if let Some((w, data)) = weighted(func, f, tap, i, j, x.ty) {
        if *op != ReduceOp::Sum {
            return None;
        }
        weights = Some(w);
        tap = data;
    }
    let mut loads = Vec::new();
    let mut stack = vec![tap];
    while let Some(n) = stack.pop() {
        if let ExprKind::Load { .. } = func.exprs[n].kind {
            if !loads.contains(&n) {
                loads.push(n);
            }
            continue;
        }
        stack.extend(expr_children(&func.exprs[n].kind));
    }
    let [load] = loads.as_slice() else {
        return None;
    };
    let ExprKind::Load {
        buf: Buf::Matrix(_),
        index,
        ..
    } = &func.exprs[*load].kind
    else {
        return None;
    };
    if !only_in(func, tap, *load, &[i, j, y]) {
        return None;
    }
    let mut used = Vec::new();
    free(func, tap, &mut used);
    if used.iter().any(|v| bound.contains(v) && *v != i && *v != j) {
        return None;
    }
    let (last, rest) = index.split_last()?;
    let mut rest_vars = Vec::new();
    for r in rest {
        free(func, *r, &mut rest_vars);
    }
    if rest_vars.iter().any(|v| *v == j || *v == y) {
        return None;
    }
    let mut last_vars = Vec::new();
    free(func, *last, &mut last_vars);
    if last_vars.contains(&i) {
        return None;
    }
    // The column `S(y) + j`, and every use of `y` and `j` in the column inside it.
    let sum = column_sum(func, *last, y, j)?;
    if !only_in(func, *last, sum, &[y, j]) {
        return None;
    }
    // Built from the inlined tap: written out, one `let` per tap would bind one variable
    // many times, where a shared index is one node.
    let (elem, col_ty) = match weights {
        Some(_) => (tap, x.ty),
        None => narrow(func, tap, *op, rows, x.ty).unwrap_or((tap, x.ty)),
    };
    Some(Window {
        fold: e,
        op: *op,
        i,
        j,
        rows,
        cols,
        elem,
        load: *load,
        ty: x.ty,
        col_ty,
        weights,
    })
}

/// `tap` as `F[i][j] * data` in type `t` (`F` a constant integer matrix read at the fold's
/// variables, an outer product of two integer vectors that `t` holds): the vectors and `data`.
#[allow(clippy::type_complexity)]
fn weighted(
    func: &Func,
    f: &Function,
    tap: ExprId,
    i: VarId,
    j: VarId,
    t: Scalar,
) -> Option<((Vec<i128>, Vec<i128>), ExprId)> {
    let strip = |mut e: ExprId| {
        while let ExprKind::Cast(a) = func.exprs[e].kind {
            e = a;
        }
        e
    };
    let mut e = tap;
    if let ExprKind::Cast(a) = func.exprs[e].kind {
        if func.exprs[a].ty == t {
            e = a;
        }
    }
    let ExprKind::Binary(BinOp::Mul, a, b) = func.exprs[e].kind else {
        return None;
    };
    if func.exprs[e].ty != t {
        return None;
    }
    for (wgt, data) in [(a, b), (b, a)] {
        let ExprKind::Load {
            buf: Buf::Matrix(m),
            index,
            ..
        } = &func.exprs[strip(wgt)].kind
        else {
            continue;
        };
        let [r, c] = index.as_slice() else {
            continue;
        };
        if !is_var(func, *r, i) || !is_var(func, *c, j) {
            continue;
        }
        let (v, h) = crate::lir::lower::filter_rank1(f, *m)?;
        // The weights as `t` holds them: every value of the filter's type fits `t`.
        let ((flo, fhi), (tlo, thi)) = (func.exprs[strip(wgt)].ty.range()?, t.range()?);
        let fits = |x: &i128| (tlo..=thi).contains(x);
        if flo < tlo || fhi > thi || !v.iter().chain(&h).all(fits) {
            return None;
        }
        return Some(((v, h), data));
    }
    None
}

/// The tap without its last widening conversion and the narrowest type that holds the
/// reduction of `rows` of them (see [`Window::col_ty`]), where there is one narrower than `ty`.
fn narrow(
    func: &mut Func,
    elem: ExprId,
    op: ReduceOp,
    rows: i128,
    ty: Scalar,
) -> Option<(ExprId, Scalar)> {
    match func.exprs[elem].kind {
        ExprKind::Cast(inner) => {
            let from = func.exprs[inner].ty;
            let ((lo, hi), (tlo, thi)) = (from.range()?, ty.range()?);
            if from == Scalar::Bool || lo < tlo || hi > thi {
                return None;
            }
            let (lo, hi) = match op {
                ReduceOp::Sum => (lo.min(0) * rows, hi.max(0) * rows),
                _ => (lo, hi),
            };
            let t = [
                from,
                Scalar::U8,
                Scalar::I8,
                Scalar::U16,
                Scalar::I16,
                Scalar::I32,
            ]
            .into_iter()
            .filter(|t| t.range().is_some_and(|(a, b)| a <= lo && hi <= b))
            .min_by_key(|t| t.bytes())?;
            (t.bytes() < ty.bytes()).then(|| (func.cast(inner, t), t))
        }
        _ => None,
    }
}

/// `e` with variable `v` replaced by `with`, nodes that do not change kept (so that what
/// is shared stays shared).
fn subst(func: &mut Func, e: ExprId, v: VarId, with: ExprId) -> ExprId {
    fn go(
        func: &mut Func,
        e: ExprId,
        v: VarId,
        with: ExprId,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> ExprId {
        if let Some(r) = memo.get(&e) {
            return *r;
        }
        let kind = func.exprs[e].kind.clone();
        let r = match kind {
            ExprKind::Var(w) if w == v => with,
            _ => {
                let kids = expr_children(&kind);
                let new: Vec<ExprId> = kids.iter().map(|c| go(func, *c, v, with, memo)).collect();
                if new == kids {
                    e
                } else {
                    let node = crate::lir::Expr {
                        kind: crate::lir::visit::with_children(&kind, &new),
                        ..func.exprs[e].clone()
                    };
                    func.exprs.push(node)
                }
            }
        };
        memo.insert(e, r);
        r
    }
    go(func, e, v, with, &mut HashMap::new())
}

/// `e` with every `let` inside it inlined (its variable's uses replaced by its value).
fn inline_lets(func: &mut Func, e: ExprId) -> ExprId {
    let kind = func.exprs[e].kind.clone();
    if let ExprKind::Let(v, value, body) = kind {
        let (value, body) = (inline_lets(func, value), inline_lets(func, body));
        return subst(func, body, v, value);
    }
    let kids = expr_children(&kind);
    let new: Vec<ExprId> = kids.iter().map(|c| inline_lets(func, *c)).collect();
    if new == kids {
        return e;
    }
    let t = func.exprs[e].ty;
    func.expr(crate::lir::visit::with_children(&kind, &new), t)
}

/// The node `S(y) + j` in `e`: `S` is `y` plus a constant, `j` the tap's column variable.
fn column_sum(func: &Func, e: ExprId, y: VarId, j: VarId) -> Option<ExprId> {
    if let ExprKind::Binary(BinOp::Add, a, b) = func.exprs[e].kind {
        for (s, t) in [(a, b), (b, a)] {
            if is_var(func, t, j) && affine(func, s, y) == Some((1, affine(func, s, y)?.1)) {
                let mut vs = Vec::new();
                free(func, s, &mut vs);
                if !vs.contains(&j) {
                    return Some(e);
                }
            }
        }
    }
    expr_children(&func.exprs[e].kind)
        .into_iter()
        .find_map(|c| column_sum(func, c, y, j))
}

/// Whether `s` is stores to temporaries of values that read no matrix (no loop, no `let`).
fn temps_only(func: &Func, s: StmtId) -> bool {
    fn pure(func: &Func, e: ExprId) -> bool {
        match &func.exprs[e].kind {
            ExprKind::Load {
                buf: Buf::Matrix(_),
                ..
            } => false,
            k => expr_children(k).iter().all(|c| pure(func, *c)),
        }
    }
    match &func.stmts[s] {
        Stmt::Store {
            buf: Buf::Temp(_),
            index,
            value,
            ..
        } => index.iter().all(|i| pure(func, *i)) && pure(func, *value),
        Stmt::Block(b) => b.iter().all(|c| temps_only(func, *c)),
        _ => false,
    }
}

/// Builds the statements of the rewrite.
struct Build<'a> {
    func: &'a mut Func,
    body: Vec<StmtId>,
}

impl Build<'_> {
    fn i64(&mut self, v: i128) -> ExprId {
        self.func.int(v, Scalar::I64)
    }

    fn var(&mut self, v: VarId) -> ExprId {
        let ty = self.func.vars[v].ty;
        self.func.expr(ExprKind::Var(v), ty)
    }

    fn add(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        self.func.binary(BinOp::Add, a, b, t)
    }

    fn sub(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        self.func.binary(BinOp::Sub, a, b, t)
    }

    /// A private row of `n` elements of type `ty`.
    fn temp(&mut self, name: &str, ty: Scalar, n: ExprId) -> TempId {
        self.temp_of(name, ty, vec![n])
    }

    /// A private buffer of `extents` elements of type `ty`.
    fn temp_of(&mut self, name: &str, ty: Scalar, extents: Vec<ExprId>) -> TempId {
        let t = self.func.temps.push(Temp {
            name: name.to_string(),
            elem: ty,
            memory: Memory::Private,
        });
        self.body.push(self.func.stmt(Stmt::Allocate {
            buf: Buf::Temp(t),
            elem: ty,
            memory: Memory::Private,
            extents,
        }));
        t
    }

    /// A temporary's element at `index` (inside by construction).
    fn load_at(&mut self, t: TempId, index: &[ExprId]) -> ExprId {
        let ty = self.func.temps[t].elem;
        let index = index
            .iter()
            .map(|i| self.func.cast(*i, Scalar::I64))
            .collect();
        self.func.expr(
            ExprKind::Load {
                buf: Buf::Temp(t),
                index,
                checked: false,
            },
            ty,
        )
    }

    fn store_at(&mut self, t: TempId, index: &[ExprId], value: ExprId) -> StmtId {
        let index = index
            .iter()
            .map(|i| self.func.cast(*i, Scalar::I64))
            .collect();
        self.func.stmt(Stmt::Store {
            buf: Buf::Temp(t),
            index,
            value,
            checked: false,
        })
    }

    fn load(&mut self, t: TempId, i: ExprId) -> ExprId {
        self.load_at(t, &[i])
    }

    fn store(&mut self, t: TempId, i: ExprId, value: ExprId) -> StmtId {
        self.store_at(t, &[i], value)
    }

    fn load2(&mut self, t: TempId, r: ExprId, i: ExprId) -> ExprId {
        self.load_at(t, &[r, i])
    }

    fn store2(&mut self, t: TempId, r: ExprId, i: ExprId, value: ExprId) -> StmtId {
        self.store_at(t, &[r, i], value)
    }

    /// `for v in lo..hi { body(v) }` (an `i32` variable, `i64` bounds).
    fn for_loop(
        &mut self,
        name: &str,
        (lo, hi): (ExprId, ExprId),
        body: impl FnOnce(&mut Self, ExprId) -> Vec<StmtId>,
    ) -> StmtId {
        let v = self.func.var(name, Scalar::I32);
        let ve = self.var(v);
        let saved = std::mem::take(&mut self.body);
        let mut inner = body(self, ve);
        let mut stmts = std::mem::replace(&mut self.body, saved);
        stmts.append(&mut inner);
        // A loop over temporary rows alone (inside by construction) is an interior to
        // vectorize as it is: `partition` would make none of a loop with nothing to assume.
        let kind = match stmts.iter().all(|s| temps_only(self.func, *s)) {
            true => LoopKind::Vectorized(0),
            false => LoopKind::Serial,
        };
        let b = self.func.stmt(Stmt::Block(stmts));
        self.func.for_loop(v, (lo, hi, 1), kind, b)
    }

    /// `e * w` (`e` itself for a weight of one).
    fn weigh(&mut self, e: ExprId, w: i128) -> ExprId {
        if w == 1 {
            return e;
        }
        let t = self.func.exprs[e].ty;
        let k = self.func.int(w, t);
        self.func.binary(BinOp::Mul, k, e, t)
    }

    /// `vals` combined as a balanced tree (integers: the order does not change the value).
    fn combine_all(&mut self, op: ReduceOp, mut vals: Vec<ExprId>) -> ExprId {
        while vals.len() > 1 {
            vals = vals
                .chunks(2)
                .map(|p| match *p {
                    [x, y] => self.combine(op, x, y),
                    [x] => x,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        vals[0]
    }

    fn combine(&mut self, op: ReduceOp, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        match op {
            ReduceOp::Min => self.func.expr(ExprKind::Call(Builtin::Min, vec![a, b]), t),
            ReduceOp::Max => self.func.expr(ExprKind::Call(Builtin::Max, vec![a, b]), t),
            _ => self.func.binary(BinOp::Add, a, b, t),
        }
    }
}

/// The folds of loop `y`'s body that slide along it, or `None` where none does.
fn windows_of(
    func: &mut Func,
    f: &Function,
    y: VarId,
    lo: ExprId,
    hi: ExprId,
    body: StmtId,
) -> Option<Vec<Window>> {
    let mut exprs = Vec::new();
    let mut seen = vec![false; func.exprs.len()];
    exprs_below(func, body, &mut exprs, &mut seen);
    let mut bound = Vec::new();
    bound_below(func, body, &exprs, &mut bound);
    exprs.extend([lo, hi]);
    let windows: Vec<Window> = exprs
        .iter()
        .filter_map(|e| window(func, f, *e, y, &bound))
        .collect();
    (!windows.is_empty()).then_some(windows)
}

/// Where the taps' rows are: the loop over the columns' variable `y` at its first value, and
/// the region's row variable `x` at a given row (`None`: `x` itself).
#[derive(Clone, Copy)]
struct At {
    y: VarId,
    first: ExprId,
    x: Option<(VarId, ExprId)>,
}

impl Window {
    /// Row `i` of the window's taps at `at`, its row indices bound before the loop over the
    /// columns (a border map computed once per row of the window, not once per column); the
    /// tap of column `k` is that row with `j` at `k` ([`Window::tap`]).
    fn row(&self, b: &mut Build, i: ExprId, at: At) -> ExprId {
        let mut ld = subst(b.func, self.load, self.i, i);
        ld = subst(b.func, ld, at.y, at.first);
        if let Some((x, row)) = at.x {
            ld = subst(b.func, ld, x, row);
        }
        let ExprKind::Load {
            buf,
            index,
            checked,
        } = b.func.exprs[ld].kind.clone()
        else {
            unreachable!("a load");
        };
        let last = index.len() - 1;
        let index = index
            .iter()
            .enumerate()
            .map(|(d, e)| {
                if d == last || matches!(b.func.exprs[*e].kind, ExprKind::Int(_)) {
                    return *e;
                }
                let v = b.func.var("sr", Scalar::I64);
                let s = b.func.stmt(Stmt::Let(v, *e));
                b.body.push(s);
                b.var(v)
            })
            .collect();
        let ty = b.func.exprs[ld].ty;
        let load = b.func.expr(
            ExprKind::Load {
                buf,
                index,
                checked,
            },
            ty,
        );
        let mut e = Replace(HashMap::from([(self.load, load)])).mutate_expr(b.func, self.elem);
        e = subst(b.func, e, self.i, i);
        subst(b.func, e, at.y, at.first)
    }

    /// Column `k` of a row of taps.
    fn tap(&self, b: &mut Build, row: ExprId, k: ExprId) -> ExprId {
        subst(b.func, row, self.j, k)
    }

    /// `col[k] = op over i of tap(i, k)` for `k` in `0..n`: the window's rows written out in
    /// one pass (a balanced tree: integers), or, past `unroll` rows, the first row and then
    /// each other in a pass of its own.
    fn columns(&self, b: &mut Build, col: TempId, n: ExprId, unroll: i128, at: At) {
        let zero64 = b.i64(0);
        if self.rows <= unroll || self.weights.is_some() {
            // A filter's rows weigh their taps (rows of weight zero left out).
            let weight = |i: i128| self.weights.as_ref().map_or(1, |(v, _)| v[i as usize]);
            let rows: Vec<(ExprId, i128)> = (0..self.rows)
                .filter(|i| weight(*i) != 0)
                .map(|i| {
                    let ie = b.func.int(i, Scalar::I32);
                    (self.row(b, ie, at), weight(i))
                })
                .collect();
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let mut vals: Vec<ExprId> = rows
                    .iter()
                    .map(|(r, w)| {
                        let tap = self.tap(b, *r, k);
                        b.weigh(tap, *w)
                    })
                    .collect();
                if vals.is_empty() {
                    vals.push(b.func.int(0, self.col_ty));
                }
                let v = b.combine_all(self.op, vals);
                vec![b.store(col, k, v)]
            });
            b.body.push(l);
            return;
        }
        let zero = b.func.int(0, Scalar::I32);
        let r0 = self.row(b, zero, at);
        let first = b.for_loop("sk", (zero64, n), |b, k| {
            let v = self.tap(b, r0, k);
            vec![b.store(col, k, v)]
        });
        b.body.push(first);
        let (one, rows) = (b.i64(1), b.i64(self.rows));
        let rest = b.for_loop("si", (one, rows), |b, i| {
            let ri = self.row(b, i, at);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let (old, v) = (b.load(col, k), self.tap(b, ri, k));
                let v = b.combine(self.op, old, v);
                vec![b.store(col, k, v)]
            });
            vec![l]
        });
        b.body.push(rest);
    }

    /// The window's value at the output `at_y` of the row from its columns `col` (of `n`),
    /// at the fold's type.
    fn across(&self, b: &mut Build, col: TempId, n: ExprId, at_y: ExprId, unroll: i128) -> ExprId {
        let t = self.level_ty(b.func, self.cols);
        // The model: the direct form reads `cols` elements of `t` per output, doubling
        // `log2(cols)` passes and as many terms; measured on the 2-core VM (AVX2), direct wins
        // up to about 128 bytes (a 63-wide minimum of `u8`s, a 31-wide sum in `i32`).
        let direct = self.cols * t.bytes() as i128 <= DIRECT_BYTES;
        let value = if let Some((_, h)) = &self.weights {
            // A filter's columns: `sum of h[j] * col[y + j]`.
            let mut vals: Vec<ExprId> = (0..self.cols)
                .filter(|j| h[*j as usize] != 0)
                .map(|j| {
                    let je = b.i64(j);
                    let at = b.add(at_y, je);
                    let c = b.load(col, at);
                    b.weigh(c, h[j as usize])
                })
                .collect();
            if vals.is_empty() {
                vals.push(b.func.int(0, t));
            }
            b.combine_all(self.op, vals)
        } else if self.cols <= unroll && direct {
            // Each output combines its columns directly (a vector's lanes each an output).
            let vals: Vec<ExprId> = (0..self.cols)
                .map(|j| {
                    let j = b.i64(j);
                    let at = b.add(at_y, j);
                    let c = b.load(col, at);
                    b.func.cast(c, t)
                })
                .collect();
            b.combine_all(self.op, vals)
        } else {
            doubling(b, col, n, at_y, self)
        };
        b.func.cast(value, self.ty)
    }

    /// Van Herk / Gil-Werman down a chunk's source rows (`t` in `0..T`, `T` the chunk's rows
    /// plus the window's less one; row `t` is tap row `t` of the chunk's first row `x0`), in
    /// blocks of the window's height: `g[t]` the reduction from its block's first row to `t`,
    /// `h[t]` from `t` to its block's last, each a row of `n` columns. A window starting at
    /// source row `a` spans the end of one block and the start of the next (or is one block),
    /// so its columns are `op(h[a], g[a + rows - 1])`.
    fn down_blocks(
        &self,
        b: &mut Build,
        n: ExprId,
        x0: ExprId,
        x1: ExprId,
        at: At,
    ) -> (TempId, TempId) {
        let span = b.sub(x1, x0);
        let more = b.i64(self.rows - 1);
        let count = b.add(span, more);
        let g = b.temp_of("vg", self.col_ty, vec![count, n]);
        let h = b.temp_of("vh", self.col_ty, vec![count, n]);
        let cur = b.temp("cur", self.col_ty, n);
        // The reduction's identity: `min` starts from the type's largest value.
        let (lo, hi) = self.col_ty.range().expect("an integer type");
        let identity = if self.op == ReduceOp::Min { hi } else { lo };
        let height = b.i64(self.rows);
        let (zero64, one) = (b.i64(0), b.i64(1));
        let last = b.i64(self.rows - 1);
        let up = b.add(count, last);
        let blocks = b.func.binary(BinOp::Div, up, height, Scalar::I64);
        let op = self.op;
        let reset = |b: &mut Build| {
            b.for_loop("sk", (zero64, n), |b, k| {
                let v = b.func.int(identity, self.col_ty);
                vec![b.store(cur, k, v)]
            })
        };
        let l = b.for_loop("sb", (zero64, blocks), |b, blk| {
            let blk64 = b.func.cast(blk, Scalar::I64);
            let start = b.func.binary(BinOp::Mul, blk64, height, Scalar::I64);
            let past = b.add(start, height);
            let end = b
                .func
                .expr(ExprKind::Call(Builtin::Min, vec![past, count]), Scalar::I64);
            let r0 = reset(b);
            let down = b.for_loop("st", (start, end), |b, t| {
                let row = self.row(b, t, at);
                let l = b.for_loop("sk", (zero64, n), |b, k| {
                    let (c, v) = (b.load(cur, k), self.tap(b, row, k));
                    let v = b.combine(op, c, v);
                    let s1 = b.store(cur, k, v);
                    let c = b.load(cur, k);
                    vec![s1, b.store2(g, t, k, c)]
                });
                vec![l]
            });
            let r1 = reset(b);
            let len = b.sub(end, start);
            let upward = b.for_loop("sq", (zero64, len), |b, q| {
                let q64 = b.func.cast(q, Scalar::I64);
                let t = b.sub(end, one);
                let t = b.sub(t, q64);
                let t32 = b.func.cast(t, Scalar::I32);
                let row = self.row(b, t32, at);
                let l = b.for_loop("sk", (zero64, n), |b, k| {
                    let (c, v) = (b.load(cur, k), self.tap(b, row, k));
                    let v = b.combine(op, c, v);
                    let s1 = b.store(cur, k, v);
                    let c = b.load(cur, k);
                    vec![s1, b.store2(h, t, k, c)]
                });
                vec![l]
            });
            vec![r0, down, r1, upward]
        });
        b.body.push(l);
        (g, h)
    }

    /// Whether the window's rows slide along the region's row variable `x` as its columns do
    /// along `y`: its row index `g(S(x) + i)`, `x` nowhere else in the tap.
    fn slides_down(&self, func: &Func, x: VarId) -> bool {
        if self.weights.is_some() {
            return false;
        }
        let ExprKind::Load { index, .. } = &func.exprs[self.load].kind else {
            return false;
        };
        let Some((last, rest)) = index.split_last() else {
            return false;
        };
        let mut vs = Vec::new();
        free(func, *last, &mut vs);
        if vs.contains(&x) || !only_in(func, self.elem, self.load, &[x]) {
            return false;
        }
        let mut rows = 0;
        for r in rest {
            let mut vs = Vec::new();
            free(func, *r, &mut vs);
            if !vs.contains(&x) && !vs.contains(&self.i) {
                continue;
            }
            rows += 1;
            match column_sum(func, *r, x, self.i) {
                Some(sum) if only_in(func, *r, sum, &[x, self.i]) => {}
                _ => return false,
            }
        }
        rows == 1
    }
}

/// The row's outputs' place (`y - first`, `i64`) and count, for loop `y` from `lo` to `hi`.
fn outputs(b: &mut Build, y: VarId, lo: ExprId, hi: ExprId) -> (ExprId, ExprId) {
    let (lo64, hi64) = (b.func.cast(lo, Scalar::I64), b.func.cast(hi, Scalar::I64));
    let yv = b.var(y);
    let y64 = b.func.cast(yv, Scalar::I64);
    (b.sub(y64, lo64), b.sub(hi64, lo64))
}

/// Loop `s` with its qualifying folds slid, or `None` where none qualifies.
fn slide_loop(func: &mut Func, f: &Function, s: StmtId, unroll: i128) -> Option<StmtId> {
    let Stmt::For {
        var: y,
        lo,
        hi,
        body,
        ..
    } = func.stmts[s]
    else {
        return None;
    };
    let windows = windows_of(func, f, y, lo, hi, body)?;
    let mut b = Build {
        func,
        body: Vec::new(),
    };
    let first = b.func.cast(lo, Scalar::I32);
    let at = At { y, first, x: None };
    let (at_y, count) = outputs(&mut b, y, lo, hi);
    let mut replace = HashMap::new();
    for w in &windows {
        let ext = b.i64(w.cols - 1);
        let n = b.add(count, ext);
        let col = b.temp("col", w.col_ty, n);
        w.columns(&mut b, col, n, unroll, at);
        let value = w.across(&mut b, col, n, at_y, unroll);
        replace.insert(w.fold, value);
    }
    let new_body = Replace(replace).mutate_stmt(b.func, body);
    let l = b.func.for_loop(y, (lo, hi, 1), LoopKind::Serial, new_body);
    b.body.push(l);
    let zero = b.i64(0);
    let some = b.func.binary(BinOp::Lt, zero, count, Scalar::Bool);
    let block = b.func.stmt(Stmt::Block(std::mem::take(&mut b.body)));
    Some(b.func.stmt(Stmt::If(some, block, None)))
}

/// Rows per task where the windows' column sums slide down the rows ([`slide_rows`]).
const CHUNK_ROWS: i64 = 32;

/// A row-parallel region loop `s` (`for x in 0..hi`, its body one loop over the columns) whose
/// windows are all sums sliding down its rows as well: its rows in chunks of
/// [`CHUNK_ROWS`] per task, each chunk's column sums computed for its first row and then
/// carried from one row to the next (`col += the row entering - the row leaving`, exact in
/// the column's integer type, which wraps). `None` where the loop does not qualify.
fn slide_rows(func: &mut Func, f: &Function, s: StmtId, unroll: i128) -> Option<StmtId> {
    let Stmt::For {
        var: x,
        lo: xlo,
        hi: xhi,
        step: 1,
        kind: LoopKind::Parallel,
        body,
    } = func.stmts[s]
    else {
        return None;
    };
    if !matches!(func.exprs[xlo].kind, ExprKind::Int(0)) {
        return None;
    }
    let ys = match &func.stmts[body] {
        Stmt::For { .. } => body,
        Stmt::Block(b) if b.len() == 1 => b[0],
        _ => return None,
    };
    let Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        kind: LoopKind::Serial,
        body: ybody,
    } = func.stmts[ys]
    else {
        return None;
    };
    if has_loop(func, ybody) {
        return None;
    }
    let windows = windows_of(func, f, y, lo, hi, ybody)?;
    if !windows.iter().all(|w| w.slides_down(func, x)) {
        return None;
    }
    let mut b = Build {
        func,
        body: Vec::new(),
    };
    // The chunk: rows `x0..x1`.
    let xo = b.func.var("sx", Scalar::I32);
    let x0 = b.var(xo);
    let (x0_64, xhi64) = (b.func.cast(x0, Scalar::I64), b.func.cast(xhi, Scalar::I64));
    let k = b.i64(CHUNK_ROWS as i128);
    let past = b.add(x0_64, k);
    let x1 = b
        .func
        .expr(ExprKind::Call(Builtin::Min, vec![past, xhi64]), Scalar::I64);
    let first = b.func.cast(lo, Scalar::I32);
    let (at_y, count) = outputs(&mut b, y, lo, hi);
    // Sums: the columns of the chunk's first row. Minima and maxima: van Herk's blocks down
    // the chunk's source rows.
    let mut cols = Vec::new();
    let at0 = At {
        y,
        first,
        x: Some((x, x0)),
    };
    for w in &windows {
        let ext = b.i64(w.cols - 1);
        let n = b.add(count, ext);
        let col = b.temp("col", w.col_ty, n);
        let blocks = match w.op {
            ReduceOp::Sum => {
                w.columns(&mut b, col, n, unroll, at0);
                None
            }
            _ => Some(w.down_blocks(&mut b, n, x0_64, x1, at0)),
        };
        cols.push((col, n, blocks));
    }
    // Each row: past the first, the row leaving and the row entering; then its outputs.
    let xv = b.var(x);
    let outer = std::mem::take(&mut b.body);
    let mut replace = HashMap::new();
    for (w, (col, n, blocks)) in windows.iter().zip(&cols) {
        let (col, n) = (*col, *n);
        if let Some((g, h)) = *blocks {
            // The row's columns: `op(h[a], g[a + rows - 1])`, `a` the row's place in the chunk.
            let x64 = b.func.cast(xv, Scalar::I64);
            let a = b.sub(x64, x0_64);
            let far = b.i64(w.rows - 1);
            let far = b.add(a, far);
            let zero64 = b.i64(0);
            let l = b.for_loop("sk", (zero64, n), |b, k| {
                let (p, q) = (b.load2(h, a, k), b.load2(g, far, k));
                let v = b.combine(w.op, p, q);
                vec![b.store(col, k, v)]
            });
            b.body.push(l);
            let value = w.across(&mut b, col, n, at_y, unroll);
            replace.insert(w.fold, value);
            continue;
        }
        let saved = std::mem::take(&mut b.body);
        let one = b.func.int(1, Scalar::I32);
        let prev = b.sub(xv, one);
        let zero = b.func.int(0, Scalar::I32);
        let last = b.func.int(w.rows - 1, Scalar::I32);
        let leaving = w.row(
            &mut b,
            zero,
            At {
                y,
                first,
                x: Some((x, prev)),
            },
        );
        let entering = w.row(
            &mut b,
            last,
            At {
                y,
                first,
                x: Some((x, xv)),
            },
        );
        let zero64 = b.i64(0);
        let l = b.for_loop("sk", (zero64, n), |b, k| {
            let old = b.load(col, k);
            let (out, inn) = (w.tap(b, leaving, k), w.tap(b, entering, k));
            let v = b.sub(old, out);
            let v = b.add(v, inn);
            vec![b.store(col, k, v)]
        });
        b.body.push(l);
        let update = b
            .func
            .stmt(Stmt::Block(std::mem::replace(&mut b.body, saved)));
        let later = b.func.binary(BinOp::Gt, xv, x0, Scalar::Bool);
        let s = b.func.stmt(Stmt::If(later, update, None));
        b.body.push(s);
        let value = w.across(&mut b, col, n, at_y, unroll);
        replace.insert(w.fold, value);
    }
    let new_body = Replace(replace).mutate_stmt(b.func, ybody);
    let yl = b.func.for_loop(y, (lo, hi, 1), LoopKind::Serial, new_body);
    b.body.push(yl);
    let row_body = b
        .func
        .stmt(Stmt::Block(std::mem::replace(&mut b.body, outer)));
    let x0_as_x = b.func.cast(x0, b.func.vars[x].ty);
    let rows = b
        .func
        .for_loop(x, (x0_as_x, x1, 1), LoopKind::ChunkRows, row_body);
    b.body.push(rows);
    let zero = b.i64(0);
    let some = b.func.binary(BinOp::Lt, zero, count, Scalar::Bool);
    let block = b.func.stmt(Stmt::Block(std::mem::take(&mut b.body)));
    let chunk = b.func.stmt(Stmt::If(some, block, None));
    Some(
        b.func
            .for_loop(xo, (xlo, xhi, CHUNK_ROWS), LoopKind::ParallelChunks, chunk),
    )
}

/// The window's columns combined by doubling: level `p` holds `op` over `p` consecutive
/// columns (`L[p][k] = op(L[p/2][k], L[p/2][k + p/2])`, one vectorized pass each), and an
/// output combines one level per bit of the width (`31 = 16 + 8 + 4 + 2 + 1`): exact for
/// integers, `log2` of the width passes and terms.
fn doubling(b: &mut Build, col: TempId, n: ExprId, at_y: ExprId, w: &Window) -> ExprId {
    let mut levels = vec![(1i128, col)];
    let mut p = 2;
    while p <= w.cols {
        let (q, prev) = *levels.last().expect("level 1");
        let t = w.level_ty(b.func, p);
        let one = b.i64(1 - p);
        let len = b.add(n, one);
        let cur = b.temp("lv", t, len);
        let zero = b.i64(0);
        let l = b.for_loop("sk", (zero, len), |b, k| {
            let qe = b.i64(q);
            let k64 = b.func.cast(k, Scalar::I64);
            let far = b.add(k64, qe);
            let (x, y) = (b.load(prev, k), b.load(prev, far));
            let (x, y) = (b.func.cast(x, t), b.func.cast(y, t));
            let v = b.combine(w.op, x, y);
            vec![b.store(cur, k, v)]
        });
        b.body.push(l);
        levels.push((p, cur));
        p *= 2;
    }
    let t = w.level_ty(b.func, w.cols);
    let mut terms = Vec::new();
    let mut off = 0;
    for (p, level) in levels.iter().rev() {
        if w.cols - off >= *p {
            let o = b.i64(off);
            let at = b.add(at_y, o);
            let v = b.load(*level, at);
            terms.push(b.func.cast(v, t));
            off += p;
        }
    }
    b.combine_all(w.op, terms)
}

/// Replaces expressions by others, rebuilding what holds them.
struct Replace(HashMap<ExprId, ExprId>);

impl Mutator for Replace {
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.0.get(&e) {
            return *r;
        }
        let r = rebuild_expr(self, f, e);
        self.0.insert(e, r);
        r
    }
}
