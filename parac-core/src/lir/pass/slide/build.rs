//! Building the rewrite's statements: temporaries, their loads and stores, loops.

use crate::ir::{BinOp, Builtin, ReduceOp, Scalar};
use crate::lir::visit::expr_children;
use crate::lir::{
    Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId, VarId,
};

/// Whether `s` is stores to temporaries of values that read no matrix (no loop, no `let`).
pub(super) fn temps_only(func: &Func, s: StmtId) -> bool {
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

/// The largest value of `e`, an output count (`cap.0`, at most `cap.1`) or a chunk's rows
/// (`min(x0 + k, end) - x0`: at most `k`), plus and minus constants; `None` for any other form.
fn largest(func: &Func, e: ExprId, cap: (ExprId, i128)) -> Option<i128> {
    if e == cap.0 {
        return Some(cap.1);
    }
    match func.exprs[e].kind {
        ExprKind::Int(k) => Some(k),
        ExprKind::Cast(a) => largest(func, a, cap),
        ExprKind::Binary(BinOp::Add, a, b) => Some(largest(func, a, cap)? + largest(func, b, cap)?),
        ExprKind::Binary(BinOp::Sub, a, b) => match (&func.exprs[a].kind, &func.exprs[b].kind) {
            (_, ExprKind::Int(k)) => Some(largest(func, a, cap)? - k),
            (ExprKind::Call(Builtin::Min, xs), _) => match func.exprs[xs[0]].kind {
                ExprKind::Binary(BinOp::Add, x0, k) if x0 == b => match func.exprs[k].kind {
                    ExprKind::Int(k) => Some(k),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// Builds the statements of the rewrite.
pub(super) struct Build<'a> {
    pub(super) func: &'a mut Func,
    pub(super) body: Vec<StmtId>,
    /// A row's output count and its largest value, where the temporaries must have constant
    /// extents (OpenCL's private arrays, [`super::items`]): each extent is then its largest
    /// value, from the count's (`unbounded` where one is not a count plus constants).
    pub(super) cap: Option<(ExprId, i128)>,
    pub(super) unbounded: bool,
}

impl Build<'_> {
    /// The rewrite's statements, run where the row has an output (`0 < count`); `None` where a
    /// temporary's extent has no constant bound that [`Build::cap`] asks for.
    pub(super) fn finish(&mut self, count: ExprId) -> Option<StmtId> {
        if self.unbounded {
            return None;
        }
        let zero = self.i64(0);
        let some = self.func.binary(BinOp::Lt, zero, count, Scalar::Bool);
        let block = self.func.stmt(Stmt::Block(std::mem::take(&mut self.body)));
        Some(self.func.stmt(Stmt::If(some, block, None)))
    }

    pub(super) fn i64(&mut self, v: i128) -> ExprId {
        self.func.int(v, Scalar::I64)
    }

    pub(super) fn var(&mut self, v: VarId) -> ExprId {
        let ty = self.func.vars[v].ty;
        self.func.expr(ExprKind::Var(v), ty)
    }

    pub(super) fn add(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        self.func.binary(BinOp::Add, a, b, t)
    }

    pub(super) fn sub(&mut self, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        self.func.binary(BinOp::Sub, a, b, t)
    }

    /// A private row of `n` elements of type `ty`.
    pub(super) fn temp(&mut self, name: &str, ty: Scalar, n: ExprId) -> TempId {
        self.temp_of(name, ty, vec![n])
    }

    /// A private buffer of `extents` elements of type `ty`.
    pub(super) fn temp_of(&mut self, name: &str, ty: Scalar, extents: Vec<ExprId>) -> TempId {
        let extents = match self.cap {
            Some(cap) => extents
                .into_iter()
                .map(|e| match largest(self.func, e, cap) {
                    Some(n) => self.func.int(n, Scalar::I64),
                    None => {
                        self.unbounded = true;
                        e
                    }
                })
                .collect(),
            None => extents,
        };
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
    pub(super) fn load_at(&mut self, t: TempId, index: &[ExprId]) -> ExprId {
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

    pub(super) fn store_at(&mut self, t: TempId, index: &[ExprId], value: ExprId) -> StmtId {
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

    pub(super) fn load(&mut self, t: TempId, i: ExprId) -> ExprId {
        self.load_at(t, &[i])
    }

    pub(super) fn store(&mut self, t: TempId, i: ExprId, value: ExprId) -> StmtId {
        self.store_at(t, &[i], value)
    }

    /// Element `at + off` of a row (`off` a constant).
    pub(super) fn load_past(&mut self, t: TempId, at: ExprId, off: i128) -> ExprId {
        let off = self.i64(off);
        let i = self.add(at, off);
        self.load(t, i)
    }

    pub(super) fn load2(&mut self, t: TempId, r: ExprId, i: ExprId) -> ExprId {
        self.load_at(t, &[r, i])
    }

    pub(super) fn store2(&mut self, t: TempId, r: ExprId, i: ExprId, value: ExprId) -> StmtId {
        self.store_at(t, &[r, i], value)
    }

    /// `for v in lo..hi { body(v) }` (an `i32` variable, `i64` bounds).
    pub(super) fn for_loop(
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
    pub(super) fn weigh(&mut self, e: ExprId, w: i128) -> ExprId {
        if w == 1 {
            return e;
        }
        let t = self.func.exprs[e].ty;
        let k = self.func.int(w, t);
        self.func.binary(BinOp::Mul, k, e, t)
    }

    /// `vals` combined as a balanced tree (integers: the order does not change the value).
    pub(super) fn combine_all(&mut self, op: ReduceOp, vals: Vec<ExprId>) -> ExprId {
        let t = self.func.exprs[vals[0]].ty;
        self.func.balanced(op, vals, t)
    }

    pub(super) fn combine(&mut self, op: ReduceOp, a: ExprId, b: ExprId) -> ExprId {
        let t = self.func.exprs[a].ty;
        self.func.combine(op, a, b, t)
    }
}
