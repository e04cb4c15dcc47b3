//! The consumer's reads of the fused intermediate: their rows' affine forms, and each read
//! rewritten to the task's buffer or through the exact fallback (see the module above).

use super::Producer;
use crate::ir::{BinOp, Builtin, Function, Scalar};
use crate::lir::affine::{Leaf, affine};
use crate::lir::canon::Canon;
use crate::lir::visit::{Mutator, preorder, rebuild_expr, rebuild_stmt, stmt_parts, substitute};
use crate::lir::{Buf, ExprId, ExprKind, Func, Stmt, StmtId, VarId};
use std::collections::HashMap;

/// The offset `a` of row index `r` where it is `x + a` (the affine form of its value through
/// the `let`s), or a border rule's index map of such a row `i`, `select(i >= 0 && i < dim(t, 0),
/// i, ..)` (which is `i` where `i` is inside `t`); with the expression that is the row there.
/// (`dim`: of index `dim` instead, a column's for 1.)
pub(super) fn row_form(
    func: &mut Func,
    r: ExprId,
    x: VarId,
    (t, dim): (usize, usize),
    env: &HashMap<VarId, ExprId>,
) -> Option<(ExprId, i128, i128)> {
    let form = |func: &mut Func, e: ExprId| {
        let e = substitute(func, e, env, true);
        affine(func, e)
    };
    if let ExprKind::Select(c, i, _) = func.exprs[r].kind
        && let ExprKind::Binary(BinOp::And, ge, lt) = func.exprs[c].kind
        && let ExprKind::Binary(BinOp::Ge, a, zero) = func.exprs[ge].kind
        && let ExprKind::Binary(BinOp::Lt, b, d) = func.exprs[lt].kind
        && matches!(func.exprs[zero].kind, ExprKind::Int(0))
        && matches!(func.exprs[d].kind, ExprKind::Dim(m, k) if m == t && k == dim)
    {
        let fi = form(func, i)?;
        if form(func, a).as_ref() == Some(&fi) && form(func, b).as_ref() == Some(&fi) {
            return stride(&fi, x).map(|k| (i, k, fi.constant));
        }
        return None;
    }
    let a = form(func, r)?;
    stride(&a, x).map(|k| (r, k, a.constant))
}

/// The index `r` of dimension `dim` of matrix `t` without the clamps that keep it in the
/// matrix, `max(e, 0)`, `min(e, n - 1)` and `clamp(e, 0, n - 1)` (`n` the dimension, as its
/// size symbol or `dim`): `e` maps an index outside to the nearest edge (a
/// replicated border), so its distance from the reading point is at most `e`'s. Seen through
/// casts and the `let`s in `env`; `r` where it has no such clamp.
pub(super) fn unclamp(
    func: &Func,
    f: &Function,
    r: ExprId,
    (t, dim): (usize, usize),
    env: &HashMap<VarId, ExprId>,
) -> ExprId {
    let zero = |e: ExprId| affine(func, e).is_some_and(|a| a.terms.is_empty() && a.constant == 0);
    let last = |e: ExprId| {
        let Some(a) = affine(func, e) else {
            return false;
        };
        let size = match f.matrices[t].dims.get(dim).map(|d| &d.kind) {
            Some(crate::ir::ExprKind::Size(s)) => Some(*s),
            _ => None,
        };
        a.constant == -1
            && match a.terms.as_slice() {
                [(Leaf::Dim(m, k), 1)] => *m == t && *k == dim,
                [(Leaf::Size(s), 1)] => Some(*s) == size,
                _ => false,
            }
    };
    let (mut e, mut inner) = (r, r);
    loop {
        let (next, clamp) = match &func.exprs[e].kind {
            ExprKind::Cast(a) if func.exprs[*a].ty.is_int() => (*a, false),
            ExprKind::Var(v) if env.contains_key(v) => (env[v], false),
            ExprKind::Call(Builtin::Max, a) if a.len() == 2 && zero(a[1]) => (a[0], true),
            ExprKind::Call(Builtin::Min, a) if a.len() == 2 && last(a[1]) => (a[0], true),
            ExprKind::Call(Builtin::Clamp, a) if a.len() == 3 && zero(a[1]) && last(a[2]) => {
                (a[0], true)
            }
            _ => return inner,
        };
        e = next;
        if clamp {
            inner = e;
        }
    }
}

/// `k e` (`e` where `k` is 1; `ke`: `k` as an expression).
pub(super) fn times(func: &mut Func, k: i128, ke: ExprId, e: ExprId) -> ExprId {
    match k {
        1 => e,
        _ => func.binary(BinOp::Mul, ke, e, Scalar::I64),
    }
}

/// `e + a` (`e` where `a` is 0; `ae`: `a` as an expression).
pub(super) fn plus(func: &mut Func, e: ExprId, a: i128, ae: ExprId) -> ExprId {
    match a {
        0 => e,
        _ => func.binary(BinOp::Add, e, ae, Scalar::I64),
    }
}

/// `k` where `a` is `k x + c`, `k >= 1`.
pub(super) fn stride(a: &crate::lir::affine::Affine, x: VarId) -> Option<i128> {
    match a.terms.as_slice() {
        [(Leaf::Var(v), k)] if *v == x.index() && *k >= 1 => Some(*k),
        _ => None,
    }
}

/// Each read of `t` below `s`: its stride and offset where its row (index `dim`; 1: its
/// column) is `k x + a`; `env` gathers the `let`s (each variable is bound once, so their order
/// does not matter). With `clamps` (the function), a row clamped to the matrix's
/// ([`unclamp`]: a replicated edge, as a plane index of a 3-D grid is written) is seen through.
pub(super) fn row_offsets(
    func: &mut Func,
    s: StmtId,
    (t, dim): (usize, usize),
    (x, clamps): (VarId, Option<&Function>),
    env: &mut HashMap<VarId, ExprId>,
    out: &mut Vec<Option<(i128, i128)>>,
) {
    let mut rows = Vec::new();
    collect(func, s, (t, dim), env, &mut rows);
    for r in rows {
        let r = clamps.map_or(r, |f| unclamp(func, f, r, (t, dim), env));
        let form = row_form(func, r, x, (t, dim), env);
        out.push(form.map(|(_, k, a)| (k, a)));
    }
}

/// How many times the exact fallback inlines the producer's point for the reads of `t` below
/// `s` (rows of loop `x`, fused with stride `k`), without edge rows and with them (where reads at
/// task-invariant rows are served by edge rows): none for a read of a row `k x + a` (or, with
/// edge rows, of an edge row), once for a border rule's map of such a row (its slow rows), twice
/// for any other read.
pub(super) fn inlined_sites(
    func: &mut Func,
    s: StmtId,
    (t, x, k): (usize, VarId, i128),
) -> [usize; 2] {
    let mut env = HashMap::new();
    let mut rows = Vec::new();
    collect(func, s, (t, 0), &mut env, &mut rows);
    let mut sites = [0; 2];
    for r in rows {
        let n = match row_form(func, r, x, (t, 0), &env) {
            Some((at, kk, _)) if kk == k => [usize::from(at != r); 2],
            _ if invariant(func, r) => [2, 0],
            _ => [2, 2],
        };
        sites = [sites[0] + n[0], sites[1] + n[1]];
    }
    sites
}

/// The `let`s below `s` (into `env`) and the index `dim` of each read of `t`.
fn collect(
    func: &Func,
    s: StmtId,
    (t, dim): (usize, usize),
    env: &mut HashMap<VarId, ExprId>,
    rows: &mut Vec<ExprId>,
) {
    let (es, ss) = stmt_parts(&func.stmts[s]);
    if let Stmt::Let(v, e) = func.stmts[s] {
        env.insert(v, e);
    }
    for e in es {
        preorder(func, e, |x| {
            match &func.exprs[x].kind {
                ExprKind::Let(v, a, _) => {
                    env.insert(*v, *a);
                }
                ExprKind::Load {
                    buf: Buf::Matrix(m),
                    index,
                    ..
                } if *m == t && index.len() >= 2 && dim < index.len() => rows.push(index[dim]),
                _ => {}
            }
            true
        });
    }
    for c in ss {
        collect(func, c, (t, dim), env, rows);
    }
}

/// The producer's value at `(r, c)`, every variable of it new (its `let`s, and those of its
/// expressions: two copies' `let`s are told apart by the passes that compare and share reads).
pub(super) fn point_at(func: &mut Func, p: &Producer, r: ExprId, c: ExprId) -> ExprId {
    let none = HashMap::new();
    let mut copy = super::time::Copy::new(&none, &[]);
    let (xt, yt) = (func.vars[p.x].ty, func.vars[p.y].ty);
    let (re, ce) = (func.cast(r, xt), func.cast(c, yt));
    copy.bind(p.x, re);
    copy.bind(p.y, ce);
    let mut bound = Vec::new();
    for (v, e) in &p.lets {
        let e = copy.mutate_expr(func, *e);
        bound.push((copy.fresh(func, *v), e));
    }
    let mut value = copy.mutate_expr(func, p.value);
    for (w, e) in bound.into_iter().rev() {
        let ty = func.exprs[value].ty;
        value = func.expr(ExprKind::Let(w, e, value), ty);
    }
    value
}

/// Whether a row index is the same for every task: no variable, no read, nothing that can
/// fail (a border rule's entry at a constant row, `h[3][*]`, `h[M - 2][*]`).
pub(super) fn invariant(func: &Func, r: ExprId) -> bool {
    crate::lir::total(func, r, &|_| false)
}

/// The rows of `t` read below `s` at task-invariant rows ([`invariant`]), each once (by
/// structure): the edge rows computed once before the tasks ([`super::edges`]).
pub(super) fn edge_rows(func: &Func, s: StmtId, t: usize, canon: &mut Canon) -> Vec<ExprId> {
    let mut rows = Vec::new();
    collect(func, s, (t, 0), &mut HashMap::new(), &mut rows);
    let mut out: Vec<ExprId> = Vec::new();
    for r in rows {
        let key = canon.of(func, r);
        if invariant(func, r) && !out.iter().any(|k| canon.of(func, *k) == key) {
            out.push(r);
        }
    }
    out
}

/// Rows of `t` computed once for all tasks (into `temp`, row `i` holding row `rows[i]`, each
/// where it is inside `t`).
pub(super) struct Edges {
    pub(super) temp: crate::lir::TempId,
    pub(super) rows: Vec<ExprId>,
}

/// Rewrites a consumer row's reads of `t` (see the module's documentation).
pub(super) struct Rewire<'a> {
    pub(super) t: usize,
    pub(super) temp: crate::lir::TempId,
    pub(super) cx: VarId,
    pub(super) r0: ExprId,
    /// The rows the buffer holds when a row of the fallback reads it (`[r0, r1)` in a
    /// task's buffer of all its rows; a folded buffer's window, [`super::fold`]).
    pub(super) done: (ExprId, ExprId),
    pub(super) rows_t: ExprId,
    pub(super) cols_t: ExprId,
    pub(super) p: &'a Producer,
    /// The stride of the rows read (`k x + a`).
    pub(super) k: i128,
    /// Which reads the row being rewritten takes from the buffer without a test per point.
    pub(super) mode: Rows,
    /// In [`Rows::Mapped`], each row read (its structural key, its value, the variable bound
    /// to it before the row), and whether one is a border rule's map of a row.
    pub(super) bound: Vec<(ExprId, ExprId, VarId)>,
    pub(super) maps: bool,
    pub(super) env: HashMap<VarId, ExprId>,
    pub(super) memo: HashMap<ExprId, ExprId>,
    /// The rows computed once for all tasks, and their structural keys.
    pub(super) edges: Option<&'a Edges>,
    pub(super) canon: Canon,
    /// Where the buffers hold only the columns `k y + b` the consumer reads ([`Columns`]).
    pub(super) cols: Option<Columns>,
    /// Whether the tasks store `t`'s rows (for later readers): the original read, taken
    /// outside `t` only, is then [`ExprKind::Outside`] (the tasks hold no view of `t`).
    pub(super) stored: bool,
}

/// Which reads of `t` a row of a loop reading it takes from the buffer without a test per
/// point ([`Rewire::row`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Rows {
    /// Its reads of rows `k x + a`, all of which were computed.
    Direct,
    /// Its reads of rows `k x + a` and of a border rule's maps of them, at the row read (the
    /// map's value, bound once before the row), all of which were computed: a row at the
    /// image's edge whose halo rows, mapped back inside, are in the buffer (a clamped 7-tap
    /// pass's first and last three rows).
    Mapped,
    /// None: every read through the exact fallback.
    Exact,
}

/// The columns of `t` a consumer reads, where every one of its reads is of column `k y + b`
/// (`y` its column loop's variable, from 0, `k >= 2`, `0 <= b < k`: it downsamples its columns
/// too): the buffers then hold those columns alone, column `j` of a buffer being column
/// `k j + b` of `t`, `j` in `0 .. count` (the consumer's columns).
#[derive(Clone, Copy)]
pub(super) struct Columns {
    pub(super) k: i128,
    pub(super) b: i128,
    pub(super) y: VarId,
    pub(super) count: ExprId,
}

/// The consumer's columns of `t` ([`Columns`]) below `row` (the body of its row loop: its
/// column loop alone), where every read of `t` there is of a column `k y + b` itself (a border
/// rule's index map of it maps the columns outside, which are not `k j + b`).
pub(super) fn columns(func: &mut Func, row: StmtId, t: usize) -> Option<Columns> {
    let y_loop = match &func.stmts[row] {
        Stmt::Block(b) if b.len() == 1 => b[0],
        _ => row,
    };
    let Stmt::For {
        var: y,
        lo,
        hi,
        step: 1,
        ..
    } = func.stmts[y_loop]
    else {
        return None;
    };
    // The buffers' width is the loop's count, the same for every row of a task.
    if !matches!(func.exprs[lo].kind, ExprKind::Int(0)) || !invariant(func, hi) {
        return None;
    }
    let mut env = HashMap::new();
    let mut reads = Vec::new();
    collect(func, y_loop, (t, 1), &mut env, &mut reads);
    let mut form = None;
    for c in reads {
        let (at, k, b) = row_form(func, c, y, (t, 1), &env)?;
        if at != c || k < 2 || !(0..k).contains(&b) || *form.get_or_insert((k, b)) != (k, b) {
            return None;
        }
    }
    let (k, b) = form?;
    Some(Columns { k, b, y, count: hi })
}

/// `lo <= i < hi`.
pub(super) fn within(func: &mut Func, i: ExprId, lo: ExprId, hi: ExprId) -> ExprId {
    let a = func.binary(BinOp::Ge, i, lo, Scalar::Bool);
    let b = func.binary(BinOp::Lt, i, hi, Scalar::Bool);
    func.binary(BinOp::And, a, b, Scalar::Bool)
}

impl Rewire<'_> {
    fn and(func: &mut Func, a: ExprId, b: ExprId) -> ExprId {
        func.binary(BinOp::And, a, b, Scalar::Bool)
    }

    /// The loop's row `body` rewired: where `fast` (its reads of rows `k x + a` are all in the
    /// buffer) those reads from the buffer; else where every row it reads directly or through a
    /// border rule's map was computed, those reads from it ([`Rows::Mapped`]); else every read
    /// through the exact fallback. Without `fast` (no read of a row `k x + a`), the fallback.
    pub(super) fn row(&mut self, func: &mut Func, body: StmtId, fast: Option<ExprId>) -> StmtId {
        let slow = self.pass(func, body, Rows::Exact);
        let Some(fast) = fast else {
            return slow;
        };
        let direct = self.pass(func, body, Rows::Direct);
        self.maps = false;
        let mapped = self.pass(func, body, Rows::Mapped);
        let bound = std::mem::take(&mut self.bound);
        let mut lets = Vec::new();
        let mut all = None;
        for (_, row, v) in bound {
            lets.push(func.stmt(Stmt::Let(v, row)));
            let ve = func.expr(ExprKind::Var(v), func.vars[v].ty);
            let inside = within(func, ve, self.done.0, self.done.1);
            all = Some(all.map_or(inside, |a| Self::and(func, a, inside)));
        }
        let other = match all {
            Some(all) if std::mem::take(&mut self.maps) => {
                lets.push(func.stmt(Stmt::If(all, mapped, Some(slow))));
                func.stmt(Stmt::Block(lets))
            }
            _ => slow,
        };
        func.stmt(Stmt::If(fast, direct, Some(other)))
    }

    /// `body` rewritten afresh in `mode`.
    fn pass(&mut self, func: &mut Func, body: StmtId, mode: Rows) -> StmtId {
        self.mode = mode;
        self.memo.clear();
        self.env.clear();
        self.mutate_stmt(func, body)
    }

    /// Row `r` bound once before the row ([`Rows::Mapped`]), where it is the same for every
    /// column (through the `let`s, a value of the row loop's variable alone that cannot fail,
    /// a border rule's map included: `lir::total_where`).
    fn bind_row(&mut self, func: &mut Func, r: ExprId) -> Option<ExprId> {
        let row = substitute(func, r, &self.env, true);
        let cx = self.cx;
        if !crate::lir::total_where(func, row, &|v| v == cx, true) {
            return None;
        }
        let key = self.canon.of(func, row);
        let v = match self.bound.iter().find(|b| b.0 == key) {
            Some(b) => b.2,
            None => {
                let v = func.var("fm", func.exprs[row].ty);
                self.bound.push((key, row, v));
                v
            }
        };
        Some(func.expr(ExprKind::Var(v), func.vars[v].ty))
    }

    /// A read of `t` at `[r, c]` (`checked`: not proven inside), rewired.
    fn read(&mut self, func: &mut Func, e: ExprId, r: ExprId, c: ExprId, checked: bool) -> ExprId {
        let i64t = Scalar::I64;
        let elem = func.exprs[e].ty;
        let zero = func.int(0, i64t);
        let form = row_form(func, r, self.cx, (self.t, 0), &self.env).filter(|f| f.1 == self.k);
        let direct = match (self.mode, form) {
            (Rows::Direct, Some((at, ..))) => Some(at),
            (Rows::Mapped, Some((at, ..))) => {
                self.maps |= at != r;
                self.bind_row(func, r)
            }
            _ => None,
        };
        if let Some(at) = direct {
            let from_temp = self.buffered(func, at, c, elem);
            if !checked {
                return from_temp;
            }
            let original = self.original(func, r, c, elem);
            let inside = within(func, c, zero, self.cols_t);
            return func.expr(ExprKind::Select(inside, from_temp, original), elem);
        }
        // A read at a row computed once for all tasks: that row, where inside `t`.
        if let Some(edges) = self.edges
            && invariant(func, r)
        {
            let key = self.canon.of(func, r);
            if let Some(i) = edges
                .rows
                .iter()
                .position(|x| self.canon.of(func, *x) == key)
            {
                let cv = func.var("fc", i64t);
                let ce = func.expr(ExprKind::Var(cv), i64t);
                let ie = func.int(i as i128, i64t);
                let col = self.column(func, ce);
                let from_edges = func.expr(
                    ExprKind::Load {
                        buf: Buf::Temp(edges.temp),
                        index: vec![ie, col],
                        checked: false,
                    },
                    elem,
                );
                let row_in = within(func, r, zero, self.rows_t);
                let col_in = within(func, ce, zero, self.cols_t);
                let in_t = Self::and(func, row_in, col_in);
                let original = self.original(func, r, ce, elem);
                let v = func.expr(ExprKind::Select(in_t, from_edges, original), elem);
                return func.expr(ExprKind::Let(cv, c, v), elem);
            }
        }
        // Any other read: bind its indices once.
        let (rv, cv) = (func.var("fr", i64t), func.var("fc", i64t));
        let (re, ce) = (
            func.expr(ExprKind::Var(rv), i64t),
            func.expr(ExprKind::Var(cv), i64t),
        );
        let from_temp = self.buffered(func, re, ce, elem);
        let col_in = within(func, ce, zero, self.cols_t);
        let row_done = within(func, re, self.done.0, self.done.1);
        let done = Self::and(func, row_done, col_in);
        let original = self.original(func, re, ce, elem);
        // A row `k x + a` (in a slow row) is computed wherever it is inside `t` (the task's
        // rows hold every such row of its loops inside `t`): else it is outside `t`.
        let outside = if form.is_some_and(|(at, ..)| at == r) {
            original
        } else {
            let row_in = within(func, re, zero, self.rows_t);
            let in_t = Self::and(func, row_in, col_in);
            let computed = point_at(func, self.p, re, ce);
            func.expr(ExprKind::Select(in_t, computed, original), elem)
        };
        let v = func.expr(ExprKind::Select(done, from_temp, outside), elem);
        let v = func.expr(ExprKind::Let(cv, c, v), elem);
        func.expr(ExprKind::Let(rv, r, v), elem)
    }

    /// Element `[r, c]` of `t` from the task's buffer, whose first row is `r0` (taken where the
    /// row was computed and the column is inside).
    fn buffered(&self, func: &mut Func, r: ExprId, c: ExprId, elem: Scalar) -> ExprId {
        let row = func.binary(BinOp::Sub, r, self.r0, Scalar::I64);
        let c = self.column(func, c);
        func.expr(
            ExprKind::Load {
                buf: Buf::Temp(self.temp),
                index: vec![row, c],
                checked: false,
            },
            elem,
        )
    }

    /// The buffers' column of column `c` of `t` (inside `t`): `c` itself, or where they hold
    /// the columns `k j + b` alone, `j`: the consumer's column variable where `c` is written
    /// `k y + b`, else `(c - b) / k` (every column read is such a one).
    fn column(&self, func: &mut Func, c: ExprId) -> ExprId {
        let Some(cols) = self.cols else {
            return c;
        };
        let i64t = Scalar::I64;
        if row_form(func, c, cols.y, (self.t, 1), &self.env)
            .is_some_and(|(at, k, b)| at == c && (k, b) == (cols.k, cols.b))
        {
            let y = func.expr(ExprKind::Var(cols.y), func.vars[cols.y].ty);
            return func.cast(y, i64t);
        }
        let b = func.int(cols.b, i64t);
        let k = func.int(cols.k, i64t);
        let d = func.binary(BinOp::Sub, c, b, i64t);
        func.binary(BinOp::Div, d, k, i64t)
    }

    /// The original checked read of `t` (taken outside `t` only: it fails, reading nothing).
    fn original(&self, func: &mut Func, r: ExprId, c: ExprId, elem: Scalar) -> ExprId {
        let (matrix, index) = (self.t, vec![r, c]);
        let kind = match self.stored {
            true => ExprKind::Outside { matrix, index },
            false => ExprKind::Load {
                buf: Buf::Matrix(matrix),
                index,
                checked: true,
            },
        };
        func.expr(kind, elem)
    }
}

impl Mutator for Rewire<'_> {
    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Stmt::Let(v, e) = func.stmts[s] {
            self.env.insert(v, e);
        }
        rebuild_stmt(self, func, s)
    }

    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.memo.get(&e) {
            return *r;
        }
        let r = match func.exprs[e].kind.clone() {
            ExprKind::Let(v, a, _) => {
                self.env.insert(v, a);
                rebuild_expr(self, func, e)
            }
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked,
            } if m == self.t && index.len() == 2 => {
                let (r, c) = (
                    self.mutate_expr(func, index[0]),
                    self.mutate_expr(func, index[1]),
                );
                self.read(func, e, r, c, checked)
            }
            _ => rebuild_expr(self, func, e),
        };
        self.memo.insert(e, r);
        r
    }
}
