//! Expressions: name resolution, C typing, shapes of blocks, operators and built-ins.

use super::{BorderCx, Cx, Lowerer, Name};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

/// Converts a value to `t` (a cast node if the type differs; elementwise for blocks).
pub fn convert(e: Expr, t: Scalar) -> Expr {
    if e.ty.elem() == t {
        return e;
    }
    let ty = match e.ty {
        Type::Scalar(_) => Type::Scalar(t),
        Type::Block { rows, cols, .. } => Type::Block {
            elem: t,
            rows,
            cols,
        },
    };
    let span = e.span;
    Expr {
        kind: ExprKind::Cast(Box::new(e), t),
        ty,
        span,
    }
}

/// The truth value of a scalar (C: non-zero is true).
pub fn truth(e: Expr) -> Expr {
    if e.ty == Type::Scalar(Scalar::Bool) {
        return e;
    }
    let span = e.span;
    let t = e.ty.elem();
    let zero = if t.is_float() {
        Expr {
            kind: ExprKind::Float(0.0),
            ty: Type::Scalar(Scalar::F32),
            span,
        }
    } else {
        convert(Expr::int(0, span), t)
    };
    Expr {
        kind: ExprKind::Binary(BinOp::Ne, Box::new(e), Box::new(zero)),
        ty: Type::Scalar(Scalar::Bool),
        span,
    }
}

/// A short rendering of a syntax expression for messages.
pub fn show(e: &ast::Expr) -> String {
    match &e.kind {
        ast::ExprKind::Name(n) => n.to_string(),
        ast::ExprKind::Index(n, subs) => {
            let mut s = n.to_string();
            for sub in subs {
                s.push_str(match sub.kind {
                    ast::SubKind::Point(_) => "[..]",
                    ast::SubKind::Window { .. } => "[..:..]",
                    ast::SubKind::Star => "[*]",
                });
            }
            s
        }
        ast::ExprKind::Call(n, _) => format!("{n}(..)"),
        _ => "this expression".to_string(),
    }
}

fn scalar_ty(s: Scalar) -> Type {
    Type::Scalar(s)
}

const REDUCTIONS: [(&str, ReduceOp); 4] = [
    ("parac_matrix_sum", ReduceOp::Sum),
    ("parac_matrix_min", ReduceOp::Min),
    ("parac_matrix_max", ReduceOp::Max),
    ("parac_matrix_mean", ReduceOp::Mean),
];

fn reduce_type(op: ReduceOp, elem: Scalar, global: bool) -> Scalar {
    match op {
        ReduceOp::Min | ReduceOp::Max => elem.promote(),
        ReduceOp::Sum | ReduceOp::Mean if elem.is_float() => Scalar::F32,
        ReduceOp::Sum | ReduceOp::Mean if global => Scalar::I64,
        ReduceOp::Sum | ReduceOp::Mean => elem.promote(),
    }
}

impl Lowerer<'_> {
    /// Lowers an expression in a context; `None` after reporting an error.
    pub(super) fn expr(&mut self, e: &ast::Expr, cx: &mut Cx) -> Option<Expr> {
        let span = e.span;
        match &e.kind {
            ast::ExprKind::Int(v, suffix) => {
                let ty = if suffix.is_empty() {
                    if *v <= i32::MAX as u128 {
                        Scalar::I32
                    } else if *v <= i64::MAX as u128 {
                        Scalar::I64
                    } else {
                        self.err(span, "integer literal too large for i64");
                        return None;
                    }
                } else {
                    match Scalar::from_name(suffix) {
                        Some(t) if t.is_int() => t,
                        _ => {
                            self.err(span, format!("unsupported literal suffix `{suffix}`\nhelp: integer suffixes are u8, i8, u16, i16, u32, i32, i64, u64"));
                            return None;
                        }
                    }
                };
                let (_, hi) = ty.range().expect("integer type");
                if *v as i128 > hi || *v > i128::MAX as u128 {
                    self.err(span, format!("{v} does not fit in {ty}"));
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Int(*v as i128),
                    ty: scalar_ty(ty),
                    span,
                })
            }
            ast::ExprKind::Float(v, suffix) => {
                if matches!(cx, Cx::Dim) {
                    self.err(
                        span,
                        "a dimension must be an integer expression of sizes and constants",
                    );
                    return None;
                }
                if !(suffix.is_empty() || suffix == "f32") {
                    self.err(
                        span,
                        format!("unsupported float suffix `{suffix}`; ParaC floats are f32"),
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Float(*v),
                    ty: scalar_ty(Scalar::F32),
                    span,
                })
            }
            ast::ExprKind::Bool(b) => Some(Expr {
                kind: ExprKind::Int(*b as i128),
                ty: scalar_ty(Scalar::Bool),
                span,
            }),
            ast::ExprKind::Name(n) => self.name(n, span, cx),
            ast::ExprKind::Index(n, subs) => {
                match cx {
                    Cx::Dim => {
                        self.err(
                            span,
                            "a dimension must be an expression of size symbols and constants",
                        );
                        return None;
                    }
                    Cx::Host { .. } => {
                        self.err(span, format!("matrix elements such as `{}` can only be read inside a `parac_iterator` (or a border rule)\nhelp: to use a whole-matrix value on the host, reduce it: `let s = parac_matrix_sum({n});`", show(e)));
                        return None;
                    }
                    _ => {}
                }
                let m = self.matrix_name(n)?;
                self.index(n, m, subs, span, false, cx)
            }
            ast::ExprKind::Call(n, args) => self.call(n, args, span, cx),
            ast::ExprKind::Unary(op, a) => {
                let a = self.expr(a, cx)?;
                self.unary(*op, a, span)
            }
            ast::ExprKind::Binary(op, a, b) => {
                let a = self.expr(a, cx);
                let b = self.expr(b, cx);
                let (a, b) = (a?, b?);
                if matches!(cx, Cx::Dim)
                    && !matches!(
                        op,
                        BinOp::Add
                            | BinOp::Sub
                            | BinOp::Mul
                            | BinOp::Div
                            | BinOp::Rem
                            | BinOp::Shl
                            | BinOp::Shr
                    )
                {
                    self.err(
                        span,
                        format!("operator `{}` is not allowed in a dimension", op.symbol()),
                    );
                    return None;
                }
                let mut r = self.binary(*op, a, b, span)?;
                r.span = span;
                Some(r)
            }
            ast::ExprKind::Cast(a, t) => {
                let a = self.expr(a, cx)?;
                let t = super::type_of(self.diags, t, false)?;
                let mut r = convert(a, t);
                r.span = span;
                Some(r)
            }
            ast::ExprKind::Tuple(_) => {
                self.err(
                    span,
                    "a tuple is only allowed as the value of `let (a, b) = (x, y);`",
                );
                None
            }
        }
    }

    fn name(&mut self, n: &proc_macro2::Ident, span: Sp, cx: &mut Cx) -> Option<Expr> {
        let s = n.to_string();
        if let Cx::Kernel(k) = cx {
            if let Some(id) = k.scopes.iter().rev().find_map(|sc| sc.get(&s)) {
                return Some(Expr {
                    kind: ExprKind::Local(*id),
                    ty: k.region.locals[*id].ty,
                    span,
                });
            }
            if let Some(slot) = k.vars.get(&s) {
                return Some(Expr {
                    kind: ExprKind::Var(*slot),
                    ty: scalar_ty(Scalar::I32),
                    span,
                });
            }
        }
        match self.names.get(&s).copied() {
            Some(Name::Size(id)) => Some(Expr {
                kind: ExprKind::Size(id),
                ty: scalar_ty(Scalar::I32),
                span,
            }),
            Some(Name::Host(id)) => {
                if matches!(cx, Cx::Dim) {
                    self.err(
                        span,
                        format!(
                            "a dimension may use size symbols and constants, but `{s}` is a scalar"
                        ),
                    );
                    return None;
                }
                Some(Expr {
                    kind: ExprKind::Host(id),
                    ty: scalar_ty(self.f.scalars[id].ty),
                    span,
                })
            }
            Some(Name::Matrix(m)) => {
                let is_const = matches!(self.f.matrices[m].kind, MatrixKind::Const(_));
                if let (Cx::Kernel(k), true) = (&mut *cx, is_const) {
                    // A whole constant matrix is a block value (a filter, `mp`, ...).
                    let mat = &self.f.matrices[m];
                    let lens: Vec<u32> = mat
                        .dims
                        .iter()
                        .map(|d| match d.kind {
                            ExprKind::Int(v) => v as u32,
                            _ => 1,
                        })
                        .collect();
                    let subs = lens
                        .iter()
                        .map(|l| Sub::Window {
                            start: Expr::int(0, span),
                            len: *l,
                            stride: 1,
                        })
                        .collect();
                    let id = k.region.accesses.len();
                    k.region.accesses.push(Access {
                        matrix: m,
                        write: false,
                        subs,
                        span,
                    });
                    let (rows, cols) = if lens.len() == 1 {
                        (1, lens[0])
                    } else {
                        (lens[lens.len() - 2], lens[lens.len() - 1])
                    };
                    return Some(Expr {
                        kind: ExprKind::Block(id),
                        ty: Type::Block {
                            elem: mat.elem,
                            rows,
                            cols,
                        },
                        span,
                    });
                }
                let help = match cx {
                    Cx::Host { .. } => format!(
                        "reduce it to a scalar with `parac_matrix_sum({s})` (or min, max, mean)"
                    ),
                    _ => format!(
                        "read one element, e.g. `{s}[itx][ity]`, or reduce a window to a scalar, e.g. `parac_matrix_sum({s}[itx-1:3:1][ity-1:3:1])`"
                    ),
                };
                self.err(
                    span,
                    format!("`{s}` is a whole matrix, but a scalar is expected here\nhelp: {help}"),
                );
                None
            }
            Some(Name::Rule(_)) => {
                self.err(span, format!("`{s}` is a border rule; apply it with `parac_iterator it(..) parac_border_rule({s}) {{ .. }}`"));
                None
            }
            None => {
                if let Some(owner) = self
                    .f
                    .regions
                    .iter()
                    .find(|r| r.dims.iter().flatten().any(|d| d.var == s))
                {
                    let here = match cx {
                        Cx::Kernel(k) => {
                            let mut vars: Vec<_> = k
                                .vars
                                .iter()
                                .map(|(n, slot)| (*slot, format!("`{n}`")))
                                .collect();
                            vars.sort();
                            format!(
                                "; here the index variables are {}",
                                vars.into_iter().map(|v| v.1).collect::<Vec<_>>().join(", ")
                            )
                        }
                        _ => String::new(),
                    };
                    self.err(span, format!("index variable `{s}` belongs to iterator `{}` and exists only inside it{here}", owner.name));
                    return None;
                }
                let extra: Vec<String> = match cx {
                    Cx::Kernel(k) => k
                        .vars
                        .keys()
                        .cloned()
                        .chain(k.scopes.iter().flat_map(|sc| sc.keys().cloned()))
                        .collect(),
                    _ => vec![],
                };
                self.unknown_among(n, &extra);
                None
            }
        }
    }

    /// Lowers `m[..][..]` into an access of the current table.
    pub(super) fn index(
        &mut self,
        n: &proc_macro2::Ident,
        m: MatrixId,
        subs: &[ast::Subscript],
        span: Sp,
        write: bool,
        cx: &mut Cx,
    ) -> Option<Expr> {
        let ndims = self.f.matrices[m].dims.len();
        let elem = self.f.matrices[m].elem;
        if subs.len() != ndims {
            if self.bad_rank.contains(&n.to_string()) {
                // Its declaration was already rejected; no second error.
                return None;
            }
            self.err(
                span,
                format!(
                    "`{n}` has {ndims} dimension{}, but {} subscript{} given\nhelp: write one subscript per dimension, e.g. `{n}{}`",
                    if ndims == 1 { "" } else { "s" },
                    subs.len(),
                    if subs.len() == 1 { " is" } else { "s are" },
                    ["[itx]", "[itx][ity]", "[c][itx][ity]"][ndims.clamp(1, 3) - 1]
                ),
            );
            return None;
        }
        if let Cx::Border(b) = cx {
            if b.matrix != m {
                let other = self.f.matrices[b.matrix].name.clone();
                self.err(
                    span,
                    format!(
                        "a border value of `{other}` may read only `{other}` itself, not `{n}`\nhelp: border values are computed from `{other}`'s own pixels, constants and scalars; to combine matrices, compute the combination in an iterator first"
                    ),
                );
                return None;
            }
        }
        let mut out = Vec::new();
        let mut lens = Vec::new();
        let mut ok = true;
        for (d, sub) in subs.iter().enumerate() {
            match &sub.kind {
                ast::SubKind::Star => match cx {
                    Cx::Border(b) if b.sels[d] == Sel::Star => {
                        out.push(Sub::Star);
                        lens.push(1);
                    }
                    Cx::Border(_) => {
                        self.err(sub.span, format!("a border value depends on another border value: `*` here stands for the out-of-image index of this position in dimension {d}\nhelp: read an index inside the image, e.g. `{n}[0]` for the first row/column"));
                        ok = false;
                    }
                    _ => {
                        self.err(sub.span, "`*` (every index) is only meaningful in a border rule\nhelp: use an index variable, e.g. `[itx]`");
                        ok = false;
                    }
                },
                ast::SubKind::Point(e) => {
                    let mut hcx = Cx::Host { global: false };
                    let c: &mut Cx = if matches!(cx, Cx::Border(_)) {
                        &mut hcx
                    } else {
                        cx
                    };
                    match self.expr(e, c).and_then(|e| self.int(e, "an index")) {
                        Some(e) => {
                            out.push(Sub::Point(e));
                            lens.push(1);
                        }
                        None => ok = false,
                    }
                }
                ast::SubKind::Window { start, len, stride } => {
                    if matches!(cx, Cx::Border(_)) {
                        self.err(
                            sub.span,
                            "a border value reads single elements, not windows",
                        );
                        ok = false;
                        continue;
                    }
                    let st = self
                        .expr(start, cx)
                        .and_then(|e| self.int(e, "a window start"));
                    let l = match super::const_int(len) {
                        Some(l) if l > 0 && l <= 64 => Some(l as u32),
                        Some(l) => {
                            self.err(
                                len.span,
                                format!("a window length must be between 1 and 64, not {l}"),
                            );
                            None
                        }
                        None => {
                            self.err(len.span, "a window length must be a constant (the shape of a block is known at compile time)\nhelp: write an integer literal, e.g. `[ity-2:5:1]`");
                            None
                        }
                    };
                    let s = match stride.as_ref().map(super::const_int) {
                        None => Some(1),
                        Some(Some(s)) if s > 0 => Some(s),
                        Some(_) => {
                            self.err(
                                stride.as_ref().map_or(sub.span, |s| s.span),
                                "a window stride must be a positive constant",
                            );
                            None
                        }
                    };
                    match (st, l, s) {
                        (Some(start), Some(len), Some(stride)) => {
                            out.push(Sub::Window { start, len, stride });
                            lens.push(len);
                        }
                        _ => ok = false,
                    }
                }
            }
        }
        if !ok {
            return None;
        }
        if ndims == 3 && lens[0] != 1 {
            self.err(subs[0].span, "a window cannot span the channel dimension; index one channel, e.g. `img[c][..][..]`");
            return None;
        }
        let is_block = out.iter().any(|s| matches!(s, Sub::Window { .. }));
        let access = Access {
            matrix: m,
            write,
            subs: out,
            span,
        };
        let id = match cx {
            Cx::Kernel(k) => {
                k.region.accesses.push(access);
                k.region.accesses.len() - 1
            }
            Cx::Border(b) => {
                b.accesses.push(access);
                b.accesses.len() - 1
            }
            _ => unreachable!("index lowered only in kernels and border rules"),
        };
        if is_block {
            let (rows, cols) = if lens.len() == 1 {
                (1, lens[0])
            } else {
                (lens[lens.len() - 2], lens[lens.len() - 1])
            };
            Some(Expr {
                kind: ExprKind::Block(id),
                ty: Type::Block { elem, rows, cols },
                span,
            })
        } else {
            Some(Expr {
                kind: ExprKind::Load(id),
                ty: scalar_ty(elem),
                span,
            })
        }
    }

    fn unary(&mut self, op: UnOp, a: Expr, span: Sp) -> Option<Expr> {
        let t = a.ty.elem();
        let rt = match op {
            UnOp::Not if t == Scalar::Bool => Scalar::Bool,
            UnOp::Not if t.is_float() => {
                self.err(
                    span,
                    "`!` needs a bool (logical not) or an integer (bitwise not), not f32",
                );
                return None;
            }
            _ => t.promote(),
        };
        let a = convert(a, rt);
        let ty = match a.ty {
            Type::Block { rows, cols, .. } => Type::Block {
                elem: rt,
                rows,
                cols,
            },
            _ => scalar_ty(rt),
        };
        Some(Expr {
            kind: ExprKind::Unary(op, Box::new(a)),
            ty,
            span,
        })
    }

    /// Types a binary operator (scalars, blocks, matrix product).
    pub(super) fn binary(&mut self, op: BinOp, a: Expr, b: Expr, span: Sp) -> Option<Expr> {
        match (a.ty, b.ty) {
            (Type::Scalar(x), Type::Scalar(y)) => self.scalar_binary(op, a, b, x, y, span),
            (ta, tb) => {
                let elem = Scalar::arith(ta.elem(), tb.elem());
                let shape = |t: Type| match t {
                    Type::Block { rows, cols, .. } => Some((rows, cols)),
                    _ => None,
                };
                let (sa, sb) = (shape(ta), shape(tb));
                let result = match (op, sa, sb) {
                    (BinOp::Add | BinOp::Sub | BinOp::ElemMul, Some(p), Some(q)) if p != q => {
                        self.err(span, format!("shape mismatch: `{}` needs blocks of one shape, but they are {}x{} and {}x{}", op.symbol(), p.0, p.1, q.0, q.1));
                        return None;
                    }
                    (BinOp::Add | BinOp::Sub | BinOp::ElemMul, Some(p), _)
                    | (BinOp::Add | BinOp::Sub, None, Some(p)) => p,
                    (BinOp::Mul, Some(p), None)
                    | (BinOp::Mul, None, Some(p))
                    | (BinOp::Div, Some(p), None) => p,
                    (BinOp::Mul, Some(p), Some(q)) => {
                        if p.1 != q.0 {
                            self.err(span, format!("matrix product of a {}x{} and a {}x{} block: the inner sizes differ ({} and {})\nhelp: for an elementwise product write `.*`", p.0, p.1, q.0, q.1, p.1, q.0));
                            return None;
                        }
                        let (a, b) = (convert(a, elem), convert(b, elem));
                        return Some(Expr {
                            kind: ExprKind::MatMul(Box::new(a), Box::new(b)),
                            ty: Type::Block {
                                elem,
                                rows: p.0,
                                cols: q.1,
                            },
                            span,
                        });
                    }
                    _ => {
                        self.err(span, format!("operator `{}` is not defined between {} and {}\nhelp: blocks support `+ - .*` with a block of the same shape, `*` (matrix product or scaling) and `/` by a scalar", op.symbol(), ta, tb));
                        return None;
                    }
                };
                let (a, b) = (convert(a, elem), convert(b, elem));
                let op = if op == BinOp::ElemMul && (sa.is_none() || sb.is_none()) {
                    BinOp::Mul
                } else {
                    op
                };
                Some(Expr {
                    kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
                    ty: Type::Block {
                        elem,
                        rows: result.0,
                        cols: result.1,
                    },
                    span,
                })
            }
        }
    }

    fn scalar_binary(
        &mut self,
        op: BinOp,
        a: Expr,
        b: Expr,
        x: Scalar,
        y: Scalar,
        span: Sp,
    ) -> Option<Expr> {
        use BinOp::*;
        let op = if op == ElemMul { Mul } else { op };
        let (a, b, t) = match op {
            And | Or => (truth(a), truth(b), Scalar::Bool),
            Eq | Ne | Lt | Le | Gt | Ge => {
                let t = Scalar::arith(x, y);
                return Some(Expr {
                    kind: ExprKind::Binary(op, Box::new(convert(a, t)), Box::new(convert(b, t))),
                    ty: scalar_ty(Scalar::Bool),
                    span,
                });
            }
            Shl | Shr | BitAnd | BitOr | BitXor | Rem if x.is_float() || y.is_float() => {
                self.err(span, format!("`{}` needs integer operands, but one is f32\nhelp: convert with `as i32` first", op.symbol()));
                return None;
            }
            BitAnd | BitOr | BitXor if x == Scalar::Bool && y == Scalar::Bool => {
                (a, b, Scalar::Bool)
            }
            Shl | Shr => {
                let t = x.promote();
                (convert(a, t), convert(b, t), t)
            }
            _ => {
                let t = Scalar::arith(x, y);
                (convert(a, t), convert(b, t), t)
            }
        };
        Some(Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty: scalar_ty(t),
            span,
        })
    }

    fn call(
        &mut self,
        n: &proc_macro2::Ident,
        args: &[ast::Expr],
        span: Sp,
        cx: &mut Cx,
    ) -> Option<Expr> {
        let s = n.to_string();
        if matches!(cx, Cx::Dim) {
            self.err(
                span,
                "a dimension must be an expression of size symbols and constants",
            );
            return None;
        }
        let arity = |this: &mut Self, want: usize| {
            if args.len() != want {
                this.err(
                    span,
                    format!(
                        "`{s}` takes {want} argument{}, but {} {} given",
                        if want == 1 { "" } else { "s" },
                        args.len(),
                        if args.len() == 1 { "was" } else { "were" }
                    ),
                );
                false
            } else {
                true
            }
        };
        if let Some((_, op)) = REDUCTIONS.iter().find(|(name, _)| *name == s) {
            if !arity(self, 1) {
                return None;
            }
            // A whole (non-constant) matrix: a global operator.
            if let ast::ExprKind::Name(mname) = &args[0].kind {
                if !self.names.contains_key(&mname.to_string()) && !matches!(cx, Cx::Kernel(_)) {
                    self.unknown(mname);
                    return None;
                }
                if let Some(Name::Matrix(m)) = self.names.get(&mname.to_string()).copied() {
                    if !matches!(self.f.matrices[m].kind, MatrixKind::Const(_)) {
                        return match cx {
                            Cx::Host { global: true } => Some(self.global_region(*op, m, span)),
                            Cx::Kernel(k) => {
                                let it = k.region.name.clone();
                                self.err(span, format!("`{s}({mname})` reduces the whole matrix, which is a global operation; inside iterator `{it}` every work-item would recompute it\nhelp: compute it before the iterator: `let total = {s}({mname});`, then use `total`"));
                                None
                            }
                            _ => {
                                self.err(span, format!("a global operator is only allowed in a host `let`: `let total = {s}({mname});`"));
                                None
                            }
                        };
                    }
                }
            }
            if let Cx::Host { .. } = cx {
                self.err(args[0].span, format!("on the host, `{s}` takes a whole matrix: `{s}(m)`; windows are reduced inside a `parac_iterator`"));
                return None;
            }
            let a = self.expr(&args[0], cx)?;
            let Type::Block { elem, .. } = a.ty else {
                self.err(args[0].span, format!("`{s}` takes a window (`m[x:3:1][y:3:1]`) or a whole matrix, but this is a scalar of type {}", a.ty));
                return None;
            };
            let t = reduce_type(*op, elem, false);
            // The window is read at the reduction's type, as C promotes each element before
            // adding it: border values outside the element type's range stay whole.
            let a = convert(a, t);
            return Some(Expr {
                kind: ExprKind::Reduce(*op, Box::new(a)),
                ty: scalar_ty(t),
                span,
            });
        }
        match s.as_str() {
            "parac_convolution" => {
                if !arity(self, 2) {
                    return None;
                }
                let f = self.expr(&args[0], cx);
                let w = self.expr(&args[1], cx);
                let (f, w) = (f?, w?);
                match (f.ty, w.ty) {
                    (
                        Type::Block {
                            rows: r1,
                            cols: c1,
                            elem: e1,
                        },
                        Type::Block {
                            rows: r2,
                            cols: c2,
                            elem: e2,
                        },
                    ) => {
                        if (r1, c1) != (r2, c2) {
                            self.err(args[1].span, format!("the filter is {r1}x{c1} but the window is {r2}x{c2}; `parac_convolution` needs equal shapes\nhelp: a window `[a:len:1]` has `len` elements in that dimension, and a single index counts as 1"));
                            return None;
                        }
                        let t = Scalar::arith(e1, e2);
                        Some(Expr {
                            kind: ExprKind::Conv(Box::new(convert(f, t)), Box::new(convert(w, t))),
                            ty: scalar_ty(t),
                            span,
                        })
                    }
                    _ => {
                        let bad = if f.ty.is_block() { &args[1] } else { &args[0] };
                        self.err(bad.span, "`parac_convolution(filter, window)` takes two blocks: a constant matrix and a window such as `src[itx][ity-2:5:1]`");
                        None
                    }
                }
            }
            "transe" => {
                if !arity(self, 1) {
                    return None;
                }
                let a = self.expr(&args[0], cx)?;
                let Type::Block { elem, rows, cols } = a.ty else {
                    self.err(
                        args[0].span,
                        "`transe` transposes a block (a window or a constant matrix), not a scalar",
                    );
                    return None;
                };
                Some(Expr {
                    kind: ExprKind::Transpose(Box::new(a)),
                    ty: Type::Block {
                        elem,
                        rows: cols,
                        cols: rows,
                    },
                    span,
                })
            }
            _ => {
                let Some((b, want)) = Builtin::from_name(&s) else {
                    self.err(n.span(), format!("unknown function `{s}`\nhelp: the built-ins are parac_matrix_sum/min/max/mean, parac_convolution, transe, min, max, clamp, abs, sqrt, exp, floor, ceil, round"));
                    return None;
                };
                if !arity(self, want) {
                    return None;
                }
                let mut xs = Vec::new();
                for a in args {
                    let e = self.expr(a, cx);
                    xs.push(e);
                }
                let mut vals = Vec::new();
                for x in xs {
                    let x = x?;
                    if x.ty.is_block() {
                        self.err(
                            x.span,
                            format!("`{s}` works on scalars, but this is a {} block", x.ty),
                        );
                        return None;
                    }
                    vals.push(x);
                }
                let t = if b.is_float_fn() {
                    Scalar::F32
                } else {
                    vals.iter()
                        .map(|v| v.ty.elem())
                        .fold(Scalar::Bool, Scalar::arith)
                };
                let vals = vals.into_iter().map(|v| convert(v, t)).collect();
                Some(Expr {
                    kind: ExprKind::Call(b, vals),
                    ty: scalar_ty(t),
                    span,
                })
            }
        }
    }

    fn global_region(&mut self, op: ReduceOp, m: MatrixId, span: Sp) -> Expr {
        let mat = &self.f.matrices[m];
        let base = format!("{}_{}", op.name(), mat.name);
        let count = self
            .f
            .regions
            .iter()
            .filter(|r| r.name == base || r.name.starts_with(&format!("{base}_")))
            .count();
        let name = if count == 0 {
            base
        } else {
            format!("{base}_{count}")
        };
        let rid = self.f.regions.len();
        let sid = self.f.scalars.len();
        let ty = reduce_type(op, mat.elem, true);
        let nd = mat.dims.len();
        let dims = mat
            .dims
            .iter()
            .enumerate()
            .map(|(d, hi)| {
                Some(IterDim {
                    var: format!("{name}_{}", ["x", "y", "z"][d]),
                    lo: Expr::int(0, span),
                    hi: hi.clone(),
                    step: 1,
                    span,
                })
            })
            .collect();
        let subs = (0..nd)
            .map(|d| {
                Sub::Point(Expr {
                    kind: ExprKind::Var(d),
                    ty: scalar_ty(Scalar::I32),
                    span,
                })
            })
            .collect();
        self.f.regions.push(Region {
            name: name.clone(),
            span,
            kind: RegionKind::Reduction {
                op,
                matrix: m,
                result: sid,
            },
            dims,
            body: vec![],
            accesses: vec![Access {
                matrix: m,
                write: false,
                subs,
                span,
            }],
            locals: vec![],
            rules: vec![],
            reach: vec![],
            features: Features::default(),
        });
        self.f.scalars.push(HostScalar {
            name: format!("__{name}"),
            ty,
            kind: HostScalarKind::Reduction(rid),
        });
        self.pending_runs.push(rid);
        Expr {
            kind: ExprKind::Host(sid),
            ty: scalar_ty(ty),
            span,
        }
    }

    /// Lowers a border value for `b`.
    pub(super) fn border_value(&mut self, e: &ast::Expr, b: &mut BorderCx) -> Option<Expr> {
        self.expr(e, &mut Cx::Border(b))
    }
}
