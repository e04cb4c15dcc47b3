//! Which folds slide, and the expression surgery the pass needs (inlined `let`s).

use super::super::facts::{affine, at};
use super::super::parallel::is_var;
use crate::ir::{BinOp, Function, ReduceOp, Scalar};
use crate::lir::visit::{expr_children, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};

/// A fold that slides along the loop's variable.
pub(super) struct Window {
    pub(super) fold: ExprId,
    pub(super) op: ReduceOp,
    /// Row and column tap variables.
    pub(super) i: VarId,
    pub(super) j: VarId,
    /// The window's rows and columns.
    pub(super) rows: i128,
    pub(super) cols: i128,
    /// The column's stride along `y` (`S(y) = stride * y + c`; a window at every other column,
    /// as a 2:1 downsample's, has 2), at most `cols`: the columns of one output row are then
    /// `stride * (count - 1) + cols`, each read by some output.
    pub(super) stride: i128,
    pub(super) elem: ExprId,
    /// The one load in `elem`.
    pub(super) load: ExprId,
    pub(super) ty: Scalar,
    /// The type the column reductions are kept in: the tap's own before a widening
    /// conversion, where every column's reduction fits it (a minimum of `u8`s is a `u8`; a
    /// sum of 31 of them a `u16`), so that a row's vector holds more lanes; `elem` then
    /// without that conversion.
    pub(super) col_ty: Scalar,
    /// A convolution's filter as an outer product `v[i] * h[j]` (`elem` then the window's tap
    /// alone): the columns are `sum of v[i] * tap`, an output `sum of h[j] * col`.
    pub(super) weights: Option<(Vec<i128>, Vec<i128>)>,
}

impl Window {
    /// The type `op` over `count` columns fits: the fold's, or narrower where the columns are.
    pub(super) fn level_ty(&self, func: &Func, count: i128) -> Scalar {
        match narrow_ty(func, self.elem, self.op, self.rows * count, self.ty) {
            Some(t) if self.col_ty != self.ty => t,
            _ => self.ty,
        }
    }
}

/// Marks in `out` (indexed by expression) every expression below `s` evaluated each time `s`
/// runs: not one only under an `if`'s branches, a loop's body, a `select`'s arms or the right
/// operand of `&&` / `||`.
fn always_below(func: &Func, s: StmtId, out: &mut Vec<bool>) {
    let (es, ss) = match &func.stmts[s] {
        Stmt::If(c, ..) => (vec![*c], vec![]),
        Stmt::For { lo, hi, .. } => (vec![*lo, *hi], vec![]),
        Stmt::Repeat { count, .. } => (vec![*count], vec![]),
        st => stmt_parts(st),
    };
    let mut stack = es;
    while let Some(e) = stack.pop() {
        if std::mem::replace(&mut out[e.index()], true) {
            continue;
        }
        match &func.exprs[e].kind {
            ExprKind::Select(c, ..) | ExprKind::Binary(BinOp::And | BinOp::Or, c, _) => {
                stack.push(*c)
            }
            k => stack.extend(expr_children(k)),
        }
    }
    for c in ss {
        always_below(func, c, out);
    }
}

/// Every expression below `s`, each once.
pub(super) fn exprs_below(func: &Func, s: StmtId, out: &mut Vec<ExprId>, seen: &mut Vec<bool>) {
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
pub(super) fn bound_below(func: &Func, s: StmtId, exprs: &[ExprId], out: &mut Vec<VarId>) {
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
pub(super) fn only_in(func: &Func, e: ExprId, keep: ExprId, vars: &[VarId]) -> bool {
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
pub(super) fn free(func: &Func, e: ExprId, out: &mut Vec<VarId>) {
    match &func.exprs[e].kind {
        ExprKind::Var(v) => out.push(*v),
        k => {
            for c in expr_children(k) {
                free(func, c, out);
            }
        }
    }
}

/// The fold `e` as a window sliding along `y`, where it qualifies (see the module).
pub(super) fn window(
    func: &mut Func,
    f: &Function,
    e: ExprId,
    y: VarId,
    bound: &[VarId],
) -> Option<Window> {
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
    let (sum, stride) = column_sum(func, *last, y, j)?;
    if !only_in(func, *last, sum, &[y, j]) || stride > cols {
        return None;
    }
    // Built from the inlined tap: written out, one `let` per tap would bind one variable
    // many times, where a shared index is one node.
    // A filter's columns narrow where its column weights are all non-negative: a column is
    // then at most their sum times the largest tap (a 5-tap binomial's of `u8`s, 16 x 255, a
    // `u16`).
    let count = match &weights {
        Some((v, _)) if v.iter().all(|w| *w >= 0) => Some(v.iter().sum()),
        Some(_) => None,
        None => Some(rows),
    };
    let (elem, col_ty) = count
        .and_then(|c| narrow(func, tap, *op, c, x.ty))
        .unwrap_or((tap, x.ty));
    Some(Window {
        fold: e,
        op: *op,
        i,
        j,
        rows,
        cols,
        stride,
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
pub(super) fn weighted(
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
    if let ExprKind::Cast(a) = func.exprs[e].kind
        && func.exprs[a].ty == t
    {
        e = a;
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

/// The narrowest type that holds the reduction `op` of `count` taps `elem`, where `elem` is a
/// widening conversion and there is one narrower than `ty` (see [`Window::col_ty`]).
pub(super) fn narrow_ty(
    func: &Func,
    elem: ExprId,
    op: ReduceOp,
    count: i128,
    ty: Scalar,
) -> Option<Scalar> {
    let ExprKind::Cast(inner) = func.exprs[elem].kind else {
        return None;
    };
    let from = func.exprs[inner].ty;
    let ((lo, hi), (tlo, thi)) = (from.range()?, ty.range()?);
    if from == Scalar::Bool || lo < tlo || hi > thi {
        return None;
    }
    let (lo, hi) = match op {
        ReduceOp::Sum => (lo.min(0) * count, hi.max(0) * count),
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
    (t.bytes() < ty.bytes()).then_some(t)
}

/// The tap converted to [`narrow_ty`]'s type instead, and that type.
fn narrow(
    func: &mut Func,
    elem: ExprId,
    op: ReduceOp,
    rows: i128,
    ty: Scalar,
) -> Option<(ExprId, Scalar)> {
    let t = narrow_ty(func, elem, op, rows, ty)?;
    let ExprKind::Cast(inner) = func.exprs[elem].kind else {
        return None;
    };
    Some((func.cast(inner, t), t))
}

/// `e` with every `let` inside it inlined (its variable's uses replaced by its value).
pub(super) fn inline_lets(func: &mut Func, e: ExprId) -> ExprId {
    let kind = func.exprs[e].kind.clone();
    if let ExprKind::Let(v, value, body) = kind {
        let (value, body) = (inline_lets(func, value), inline_lets(func, body));
        return at(func, body, v, value);
    }
    let kids = expr_children(&kind);
    let new: Vec<ExprId> = kids.iter().map(|c| inline_lets(func, *c)).collect();
    if new == kids {
        return e;
    }
    let t = func.exprs[e].ty;
    func.expr(crate::lir::visit::with_children(&kind, &new), t)
}

/// The node `S(y) + j` in `e` and the stride of `S` along `y`: `S` is `y` times a positive
/// constant plus a constant, `j` the tap's column variable.
pub(super) fn column_sum(func: &Func, e: ExprId, y: VarId, j: VarId) -> Option<(ExprId, i128)> {
    if let ExprKind::Binary(BinOp::Add, a, b) = func.exprs[e].kind {
        for (s, t) in [(a, b), (b, a)] {
            if is_var(func, t, j) {
                let (stride, _) = affine(func, s, y)?;
                let mut vs = Vec::new();
                free(func, s, &mut vs);
                if stride >= 1 && !vs.contains(&j) {
                    return Some((e, stride));
                }
            }
        }
    }
    expr_children(&func.exprs[e].kind)
        .into_iter()
        .find_map(|c| column_sum(func, c, y, j))
}

/// The folds of loop `y`'s body that slide along it, or `None` where none does.
pub(super) fn windows_of(
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
    // A fold evaluated for some columns alone (under an `if`, say) stays as it is: the columns
    // computed ahead would read taps the direct form never reads, which may be outside their
    // matrix (an error it never raised, or a read its guard alone proved inside).
    let mut always = vec![false; func.exprs.len()];
    always_below(func, body, &mut always);
    let windows: Vec<Window> = exprs
        .iter()
        .filter(|e| always[e.index()] || [lo, hi].contains(*e))
        .filter_map(|e| window(func, f, *e, y, &bound))
        .collect();
    (!windows.is_empty()).then_some(windows)
}

/// Where the taps' rows are: the loop over the columns' variable `y` at its first value, and
/// the region's row variable `x` at a given row (`None`: `x` itself).
#[derive(Clone, Copy)]
pub(super) struct At {
    pub(super) y: VarId,
    pub(super) first: ExprId,
    pub(super) x: Option<(VarId, ExprId)>,
}
