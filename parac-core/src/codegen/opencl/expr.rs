//! The expression and statement printer of a kernel body: scalars, blocks materialized into
//! local arrays, statements; C's operators and built-ins.

use super::*;

impl K<'_> {
    /// An expression with no block or reduction in it (bounds, sizes, subscripts).
    pub(super) fn expr_pure(&self, e: &Expr) -> String {
        let mut pre = Vec::new();
        let s = self.scalar(e, &mut pre);
        debug_assert!(pre.is_empty());
        s
    }

    pub(super) fn scalar(&self, e: &Expr, pre: &mut Vec<String>) -> String {
        let mut p = std::mem::take(pre);
        let s = self.scalar_with(e, &mut |k, x| k.scalar(x, &mut Vec::new()), &mut p);
        *pre = p;
        s
    }

    /// A scalar expression, sub-expressions by `sub`; blocks go through `pre` statements.
    fn scalar_with(
        &self,
        e: &Expr,
        sub: &mut dyn FnMut(&Self, &Expr) -> String,
        pre: &mut Vec<String>,
    ) -> String {
        let t = e.ty.elem();
        match &e.kind {
            ExprKind::Int(v) => c_int(*v, t),
            ExprKind::Float(v) => c_float(*v),
            ExprKind::Size(i) => format!("z{i}"),
            ExprKind::Host(h) => format!("(({})s{h})", cty(self.f.scalars[*h].ty)),
            ExprKind::Var(s) => self.vars[*s].clone(),
            ExprKind::Local(l) => format!("l{l}{}", self.sfx),
            ExprKind::Load(a) => self.load(*a, t, None, pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Load(a) = inner.kind {
                    return self.load(a, *to, None, pre);
                }
                let x = self.sub_or_block(inner, sub, pre);
                if *to == Scalar::Bool {
                    format!("(({x}) != 0)")
                } else {
                    format!("(({})({x}))", cty(*to))
                }
            }
            ExprKind::Unary(op, a) => {
                let x = self.sub_or_block(a, sub, pre);
                match op {
                    UnOp::Neg => format!("(-({x}))"),
                    UnOp::Plus => x,
                    UnOp::Not if t == Scalar::Bool => format!("(!({x}))"),
                    UnOp::Not => format!("(~({x}))"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (
                    self.sub_or_block(a, sub, pre),
                    self.sub_or_block(b, sub, pre),
                );
                if let Some(p) = self.peep_binary(e, *op, a, b, &x, &y) {
                    return p;
                }
                if matches!(op, BinOp::Div | BinOp::Rem) && !t.is_float() && !e.ty.is_block() {
                    // A divisor the host checked before the region ran is not 0; with a
                    // dividend above the type's minimum, -1 cannot trap either.
                    let checked = super::super::safety::host_divisor(self.r, b, self.branch.get())
                        && t.range().is_some_and(|rt| {
                            rt.0 == 0 || self.range(a).is_some_and(|ra| ra.0 > rt.0)
                        });
                    let nonzero =
                        checked || matches!(b.kind, ExprKind::Int(v) if v != 0 && v != -1);
                    let ct = match t {
                        Scalar::U32 => Some("uint"),
                        Scalar::I64 => Some("long"),
                        Scalar::U64 => Some("ulong"),
                        Scalar::I32 => Some("int"),
                        _ => None,
                    };
                    if let (false, Some(ct)) = (nonzero, ct) {
                        let which = if *op == BinOp::Div { "div" } else { "rem" };
                        let code = super::super::safety::division_code(self.r_id());
                        return format!("pc_{which}_{ct}(({ct})({x}), ({ct})({y}), err, {code})");
                    }
                }
                let o = c_op(*op);
                format!("(({x}) {o} ({y}))")
            }
            ExprKind::Call(b, args) => {
                let xs: Vec<String> = args
                    .iter()
                    .map(|a| self.sub_or_block(a, sub, pre))
                    .collect();
                if let Some(p) = self.peep_call(e, *b, args, &xs) {
                    return p;
                }
                call_c(*b, &xs, t)
            }
            ExprKind::Reduce(..) | ExprKind::Conv(..) if self.v.unroll() => {
                self.unrolled(e, pre).unwrap_or_default()
            }
            ExprKind::Reduce(op, a) => {
                let arr = self.block(a, pre);
                let (r, c) = shape(a.ty);
                let v = self.fresh();
                let ty = cty(t);
                let (init, step) = match op {
                    ReduceOp::Sum | ReduceOp::Mean => {
                        ("0".to_string(), format!("{v} += ({ty}){arr}[bi][bj];"))
                    }
                    ReduceOp::Min => (
                        format!("({ty}){arr}[0][0]"),
                        format!(
                            "{v} = {}({v}, ({ty}){arr}[bi][bj]);",
                            if t.is_float() { "fmin" } else { "min" }
                        ),
                    ),
                    ReduceOp::Max => (
                        format!("({ty}){arr}[0][0]"),
                        format!(
                            "{v} = {}({v}, ({ty}){arr}[bi][bj]);",
                            if t.is_float() { "fmax" } else { "max" }
                        ),
                    ),
                };
                pre.push(format!("{ty} {v} = {init}; for (int bi = 0; bi < {r}; bi++) for (int bj = 0; bj < {c}; bj++) {{ {step} }}"));
                if *op == ReduceOp::Mean {
                    format!("({v} / ({ty}){})", r * c)
                } else {
                    v
                }
            }
            ExprKind::Conv(fl, w) => {
                let (af, aw) = (self.block(fl, pre), self.block(w, pre));
                let (r, c) = shape(fl.ty);
                let v = self.fresh();
                let ty = cty(t);
                pre.push(format!("{ty} {v} = 0; for (int bi = 0; bi < {r}; bi++) for (int bj = 0; bj < {c}; bj++) {{ {v} += {af}[bi][bj] * {aw}[bi][bj]; }}"));
                v
            }
            ExprKind::Block(_) | ExprKind::MatMul(..) | ExprKind::Transpose(_) => {
                self.block(e, pre)
            }
        }
    }

    fn sub_or_block(
        &self,
        e: &Expr,
        sub: &mut dyn FnMut(&Self, &Expr) -> String,
        pre: &mut Vec<String>,
    ) -> String {
        match &e.kind {
            ExprKind::Reduce(..)
            | ExprKind::Conv(..)
            | ExprKind::Block(_)
            | ExprKind::MatMul(..)
            | ExprKind::Transpose(_) => self.scalar_with(e, sub, pre),
            _ if e.ty.is_block() => self.block(e, pre),
            ExprKind::Load(_)
            | ExprKind::Cast(..)
            | ExprKind::Binary(..)
            | ExprKind::Unary(..)
            | ExprKind::Call(..) => {
                // Recurse with the same `pre` so blocks deeper down are materialized first.
                self.scalar_with(e, sub, pre)
            }
            _ => sub(self, e),
        }
    }

    /// Materializes a block-valued expression into a local array; returns its name.
    pub(super) fn block(&self, e: &Expr, pre: &mut Vec<String>) -> String {
        let Type::Block { elem, rows, cols } = e.ty else {
            return self.scalar(e, pre);
        };
        if let ExprKind::Local(l) = e.kind {
            return format!("l{l}{}", self.sfx);
        }
        let t = cty(elem);
        let v = self.fresh();
        let elem_code = match &e.kind {
            ExprKind::Block(a) => self.load(*a, elem, Some(("bi", "bj")), pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    self.load(a, *to, Some(("bi", "bj")), pre)
                } else {
                    let b = self.block(inner, pre);
                    format!("(({t}){b}[bi][bj])")
                }
            }
            ExprKind::Unary(op, a) => {
                let b = self.block(a, pre);
                match op {
                    UnOp::Neg => format!("(-{b}[bi][bj])"),
                    UnOp::Plus => format!("{b}[bi][bj]"),
                    UnOp::Not => format!("(~{b}[bi][bj])"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr, pre: &mut Vec<String>| {
                    if x.ty.is_block() {
                        format!("{}[bi][bj]", self.block(x, pre))
                    } else {
                        format!("({})", self.scalar(x, pre))
                    }
                };
                let (x, y) = (side(a, pre), side(b, pre));
                let o = c_op(*op);
                format!("({x} {o} {y})")
            }
            ExprKind::MatMul(a, b) => {
                let (x, y) = (self.block(a, pre), self.block(b, pre));
                let (_, inner) = shape(a.ty);
                let s = self.fresh();
                pre.push(format!("{t} {v}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {{ {t} {s} = 0; for (int bk = 0; bk < {inner}; bk++) {s} += {x}[bi][bk] * {y}[bk][bj]; {v}[bi][bj] = {s}; }}"));
                return v;
            }
            ExprKind::Transpose(a) => {
                let b = self.block(a, pre);
                format!("{b}[bj][bi]")
            }
            _ => "0".to_string(),
        };
        pre.push(format!("{t} {v}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {v}[bi][bj] = {elem_code};"));
        v
    }

    pub(super) fn stmts(&self, out: &mut String, stmts: &[KStmt], depth: usize) {
        let pad = "    ".repeat(depth);
        for s in stmts {
            let mut pre = Vec::new();
            let line = match s {
                KStmt::Let(l, e) => {
                    let local = &self.r.locals[*l];
                    match local.ty {
                        Type::Block { elem, rows, cols } => {
                            let b = self.block(e, &mut pre);
                            format!(
                                "{} l{l}{sfx}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) l{l}{sfx}[bi][bj] = {b}[bi][bj];",
                                cty(elem),
                                sfx = self.sfx
                            )
                        }
                        Type::Scalar(t) => {
                            let v = self.scalar(e, &mut pre);
                            self.note_local_range(*l, e);
                            format!(
                                "const {} l{l}{} = {v};",
                                if t == Scalar::Bool { "int" } else { cty(t) },
                                self.sfx
                            )
                        }
                    }
                }
                KStmt::Store(a, e) => {
                    let acc = &self.r.accesses[*a];
                    let m = acc.matrix;
                    let et = cty(self.f.matrices[m].elem);
                    let guarded = super::super::safety::guarded(self.f, self.r, *a);
                    let code = super::super::safety::access_code(self.r_id(), *a);
                    if e.ty.is_block() {
                        let b = self.block(e, &mut pre);
                        let (rows, cols) = shape(e.ty);
                        let mut ipre = Vec::new();
                        let idx: Vec<String> = acc
                            .subs
                            .iter()
                            .enumerate()
                            .map(|(k, s)| match s {
                                Sub::Point(x) => format!("({})", self.scalar(x, &mut ipre)),
                                Sub::Window { start, stride, .. } => {
                                    let off = if k + 1 == acc.subs.len() { "bj" } else { "bi" };
                                    format!(
                                        "({} + {off} * {stride})",
                                        self.scalar(start, &mut ipre)
                                    )
                                }
                                Sub::Star => "0".into(),
                            })
                            .collect();
                        pre.extend(ipre);
                        let store = format!("m{m}[{}] = ({et}){b}[bi][bj];", self.linear(m, &idx));
                        let store = if guarded {
                            let (cond, oob) = self.guard(m, &idx, code);
                            format!("if ({cond}) {store} else {oob};")
                        } else {
                            store
                        };
                        format!(
                            "for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {{ {store} }}"
                        )
                    } else {
                        let v = self.scalar(e, &mut pre);
                        let idx: Vec<String> = acc
                            .subs
                            .iter()
                            .map(|s| match s {
                                Sub::Point(x) => format!("({})", self.scalar(x, &mut pre)),
                                Sub::Window { start, .. } => {
                                    format!("({})", self.scalar(start, &mut pre))
                                }
                                Sub::Star => "0".into(),
                            })
                            .collect();
                        if guarded {
                            let (cond, oob) = self.guard(m, &idx, code);
                            format!(
                                "if ({cond}) m{m}[{}] = ({et})({v}); else {oob};",
                                self.linear(m, &idx)
                            )
                        } else {
                            match self.defer_store(*a, &v) {
                                Some(held) => held,
                                None => format!("m{m}[{}] = ({et})({v});", self.linear(m, &idx)),
                            }
                        }
                    }
                }
                KStmt::If(c, t, e) => {
                    let cond = self.scalar(c, &mut pre);
                    self.mark_hoistable(t, e);
                    self.branch.set(self.branch.get() + 1);
                    let mut tb = String::new();
                    self.stmts(&mut tb, t, depth + 1);
                    let mut eb = String::new();
                    self.stmts(&mut eb, e, depth + 1);
                    self.branch.set(self.branch.get() - 1);
                    format!("if ({cond}) {{\n{tb}{pad}}} else {{\n{eb}{pad}}}")
                }
            };
            for p in pre {
                let _ = writeln!(out, "{pad}{p}");
            }
            let _ = writeln!(out, "{pad}{line}");
        }
    }
}

/// The C binary operator of `op` (`.*` on blocks is elementwise `*`).
pub(super) fn c_op(op: BinOp) -> &'static str {
    if op == BinOp::ElemMul {
        "*"
    } else {
        op.symbol()
    }
}

/// A built-in function in OpenCL C, with the semantics of the CPU path (`clamp` is
/// `min(max(..))`; an integer `abs` keeps its signed type and wraps: OpenCL's `abs` gives the
/// magnitude unsigned, reinterpreted as signed, with no undefined `-INT_MIN`; of an unsigned
/// value it is the value). `t` is the call's type.
pub(super) fn call_c(b: Builtin, xs: &[String], t: Scalar) -> String {
    let float = t.is_float();
    match b {
        Builtin::Min => format!(
            "{}({}, {})",
            if float { "fmin" } else { "min" },
            xs[0],
            xs[1]
        ),
        Builtin::Max => format!(
            "{}({}, {})",
            if float { "fmax" } else { "max" },
            xs[0],
            xs[1]
        ),
        Builtin::Clamp if float => format!("fmin(fmax({}, {}), {})", xs[0], xs[1], xs[2]),
        Builtin::Clamp => format!("min(max({}, {}), {})", xs[0], xs[1], xs[2]),
        Builtin::Abs if float => format!("fabs({})", xs[0]),
        Builtin::Abs => match t {
            Scalar::I64 => format!("as_long(abs((long)({})))", xs[0]),
            Scalar::U32 | Scalar::U64 => format!("({})", xs[0]),
            _ => format!("as_int(abs((int)({})))", xs[0]),
        },
        Builtin::Mul24 => format!("mul24({}, {})", xs[0], xs[1]),
        Builtin::NonZero => format!("({})", xs[0]),
        b => format!("{}({})", b.name(), xs[0]),
    }
}

pub(super) fn shape(t: Type) -> (u32, u32) {
    match t {
        Type::Block { rows, cols, .. } => (rows, cols),
        Type::Scalar(_) => (1, 1),
    }
}
