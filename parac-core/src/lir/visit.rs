//! Walking the LIR: a [`Visitor`] reads every node below a statement; a [`Mutator`] rebuilds
//! them, appending a changed node to the arena and leaving unchanged ones shared.

use super::{ExprId, ExprKind, Func, Stmt, StmtId, VarId};

/// Runs `f`, first moving to a new stack segment (on the heap) if less than 128 KiB of this
/// one is left: every recursion over the LIR's expressions goes through it, so a deep
/// expression (a long chain of taps or lanes) compiles on a caller's 2 MiB thread.
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(128 * 1024, 4 * 1024 * 1024, f)
}

/// The children of an expression, in order.
pub fn expr_children(kind: &ExprKind) -> Vec<ExprId> {
    match kind {
        ExprKind::Int(_)
        | ExprKind::Float(_)
        | ExprKind::Var(_)
        | ExprKind::Size(_)
        | ExprKind::Host(_)
        | ExprKind::Dim(..) => vec![],
        ExprKind::Load { index, .. } | ExprKind::Outside { index, .. } => index.clone(),
        ExprKind::Ramp { base, .. } => vec![*base],
        ExprKind::Broadcast(a)
        | ExprKind::Extract(a, _)
        | ExprKind::Unary(_, a)
        | ExprKind::Cast(a) => vec![*a],
        ExprKind::Vector(xs) => xs.clone(),
        ExprKind::Binary(_, a, b) => vec![*a, *b],
        ExprKind::Call(_, args) => args.clone(),
        ExprKind::Select(c, a, b) => vec![*c, *a, *b],
        ExprKind::Let(_, v, b) => vec![*v, *b],
        ExprKind::Fold {
            counts, init, elem, ..
        } => counts.iter().copied().chain([*init, *elem]).collect(),
    }
}

/// `kind` with its children replaced, in the order of [`expr_children`].
pub fn with_children(kind: &ExprKind, new: &[ExprId]) -> ExprKind {
    let mut it = new.iter().copied();
    let mut next = || it.next().expect("one child per child");
    match kind {
        ExprKind::Load {
            buf,
            index,
            checked,
        } => ExprKind::Load {
            buf: *buf,
            index: index.iter().map(|_| next()).collect(),
            checked: *checked,
        },
        ExprKind::Outside { matrix, index } => ExprKind::Outside {
            matrix: *matrix,
            index: index.iter().map(|_| next()).collect(),
        },
        ExprKind::Ramp { stride, .. } => ExprKind::Ramp {
            base: next(),
            stride: *stride,
        },
        ExprKind::Broadcast(_) => ExprKind::Broadcast(next()),
        ExprKind::Extract(_, k) => ExprKind::Extract(next(), *k),
        ExprKind::Vector(xs) => ExprKind::Vector(xs.iter().map(|_| next()).collect()),
        ExprKind::Unary(op, _) => ExprKind::Unary(*op, next()),
        ExprKind::Cast(_) => ExprKind::Cast(next()),
        ExprKind::Binary(op, _, _) => ExprKind::Binary(*op, next(), next()),
        ExprKind::Call(b, args) => ExprKind::Call(*b, args.iter().map(|_| next()).collect()),
        ExprKind::Select(..) => ExprKind::Select(next(), next(), next()),
        ExprKind::Let(v, _, _) => ExprKind::Let(*v, next(), next()),
        ExprKind::Fold {
            op, vars, counts, ..
        } => ExprKind::Fold {
            op: *op,
            vars: vars.clone(),
            counts: counts.iter().map(|_| next()).collect(),
            init: next(),
            elem: next(),
        },
        leaf => leaf.clone(),
    }
}

/// The expressions a statement holds directly and its child statements.
pub fn stmt_parts(s: &Stmt) -> (Vec<ExprId>, Vec<StmtId>) {
    match s {
        Stmt::Block(b) => (vec![], b.clone()),
        Stmt::For { lo, hi, body, .. } => (vec![*lo, *hi], vec![*body]),
        Stmt::Let(_, e) | Stmt::HostLet(_, e) => (vec![*e], vec![]),
        Stmt::If(c, t, e) => (vec![*c], std::iter::once(*t).chain(*e).collect()),
        Stmt::Store { index, value, .. } | Stmt::Update { index, value, .. } => {
            (index.iter().copied().chain([*value]).collect(), vec![])
        }
        Stmt::Allocate { extents, .. } => (extents.clone(), vec![]),
        Stmt::Region { body, .. } => (vec![], vec![*body]),
        Stmt::Return(e) => (e.iter().copied().collect(), vec![]),
        Stmt::Repeat { count, body, .. } => (vec![*count], vec![*body]),
        Stmt::Barrier { .. } | Stmt::Reduce { .. } | Stmt::Swap(..) => (vec![], vec![]),
        Stmt::ScanRow { lo, hi, .. } => (vec![*lo, *hi], vec![]),
        Stmt::Stage(st) => (
            st.index
                .iter()
                .copied()
                .chain([st.rows, st.cols])
                .chain(st.into_index().iter().copied())
                .collect(),
            vec![],
        ),
        Stmt::Speculate { body, fallback, .. } => (vec![], vec![*body, *fallback]),
        Stmt::Within(w) => (w.rows.clone(), vec![]),
        Stmt::ScanTotals {
            lo,
            hi,
            body,
            carried,
            ..
        } => (
            [*lo, *hi]
                .into_iter()
                .chain(carried.iter().map(|c| c.2))
                .collect(),
            vec![*body],
        ),
    }
}

/// Reads the LIR below a statement. The default methods visit every child; override one and
/// call [`walk_expr`] / [`walk_stmt`] to go on below it.
pub trait Visitor {
    /// Called on each expression.
    fn visit_expr(&mut self, f: &Func, e: ExprId) {
        walk_expr(self, f, e)
    }
    /// Called on each statement.
    fn visit_stmt(&mut self, f: &Func, s: StmtId) {
        walk_stmt(self, f, s)
    }
}

/// Visits the nodes of the expression DAG below `e` (`e` included), each once, depth first, a
/// node before its children and the children in order, without recursion: a walk of a DAG as
/// a tree is exponential in shared nodes. `visit` answers `false` to stop the walk, and then
/// this answers `false`.
pub fn preorder(f: &Func, e: ExprId, mut visit: impl FnMut(ExprId) -> bool) -> bool {
    let mut stack = vec![e];
    let mut seen = std::collections::HashSet::new();
    while let Some(x) = stack.pop() {
        if !seen.insert(x) {
            continue;
        }
        if !visit(x) {
            return false;
        }
        stack.extend(expr_children(&f.exprs[x].kind).into_iter().rev());
    }
    true
}

/// Whether a variable below `e` satisfies `pred` (each node of the DAG visited once).
pub fn mentions(f: &Func, e: ExprId, pred: impl Fn(VarId) -> bool) -> bool {
    !preorder(
        f,
        e,
        |x| !matches!(f.exprs[x].kind, ExprKind::Var(v) if pred(v)),
    )
}

/// The distinct expression nodes below statement `s` (each node of the DAG once): the size
/// of a body, against which the plans that copy it per point are budgeted.
pub fn nodes(f: &Func, s: StmtId) -> usize {
    let mut seen = std::collections::HashSet::new();
    let mut stmts = vec![s];
    let mut stack = Vec::new();
    while let Some(s) = stmts.pop() {
        let (es, ss) = stmt_parts(&f.stmts[s]);
        stack.extend(es);
        stmts.extend(ss);
        while let Some(x) = stack.pop() {
            if seen.insert(x) {
                stack.extend(expr_children(&f.exprs[x].kind));
            }
        }
    }
    seen.len()
}

/// Visits the children of `e`.
pub fn walk_expr<V: Visitor + ?Sized>(v: &mut V, f: &Func, e: ExprId) {
    deep(|| {
        for c in expr_children(&f.exprs[e].kind) {
            v.visit_expr(f, c);
        }
    })
}

/// Visits the expressions and child statements of `s`.
pub fn walk_stmt<V: Visitor + ?Sized>(v: &mut V, f: &Func, s: StmtId) {
    let (es, ss) = stmt_parts(&f.stmts[s]);
    for e in es {
        v.visit_expr(f, e);
    }
    for s in ss {
        v.visit_stmt(f, s);
    }
}

/// Rebuilds the LIR below a statement. The default methods rebuild every child and return
/// the node itself when nothing below it changed.
pub trait Mutator {
    /// Called on each expression; returns its replacement.
    fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
        rebuild_expr(self, f, e)
    }
    /// Called on each statement; returns its replacement.
    fn mutate_stmt(&mut self, f: &mut Func, s: StmtId) -> StmtId {
        rebuild_stmt(self, f, s)
    }
}

/// `e` with its children mutated (a new node only if one changed).
pub fn rebuild_expr<M: Mutator + ?Sized>(m: &mut M, f: &mut Func, e: ExprId) -> ExprId {
    let kind = f.exprs[e].kind.clone();
    let old = expr_children(&kind);
    let new: Vec<ExprId> = deep(|| old.iter().map(|c| m.mutate_expr(f, *c)).collect());
    if new == old {
        return e;
    }
    let node = super::Expr {
        kind: with_children(&kind, &new),
        ..f.exprs[e].clone()
    };
    f.exprs.push(node)
}

/// `s` with its expressions and child statements mutated (a new node only if one changed).
pub fn rebuild_stmt<M: Mutator + ?Sized>(m: &mut M, f: &mut Func, s: StmtId) -> StmtId {
    let stmt = f.stmts[s].clone();
    let (es, ss) = stmt_parts(&stmt);
    let new_es: Vec<ExprId> = es.iter().map(|e| m.mutate_expr(f, *e)).collect();
    let new_ss: Vec<StmtId> = ss.iter().map(|c| m.mutate_stmt(f, *c)).collect();
    if new_es == es && new_ss == ss {
        return s;
    }
    let mut e = new_es.into_iter();
    let mut c = new_ss.into_iter();
    let mut ne = || e.next().expect("one expression per expression");
    let mut nc = || c.next().expect("one statement per statement");
    let rebuilt = match stmt {
        Stmt::Block(b) => Stmt::Block(b.iter().map(|_| nc()).collect()),
        Stmt::For {
            var, step, kind, ..
        } => Stmt::For {
            var,
            lo: ne(),
            hi: ne(),
            step,
            kind,
            body: nc(),
        },
        Stmt::Let(v, _) => Stmt::Let(v, ne()),
        Stmt::HostLet(v, _) => Stmt::HostLet(v, ne()),
        Stmt::If(_, _, els) => Stmt::If(ne(), nc(), els.map(|_| nc())),
        Stmt::Store {
            buf,
            index,
            checked,
            ..
        } => Stmt::Store {
            buf,
            index: index.iter().map(|_| ne()).collect(),
            value: ne(),
            checked,
        },
        Stmt::Update {
            buf,
            index,
            op,
            checked,
            ..
        } => Stmt::Update {
            buf,
            index: index.iter().map(|_| ne()).collect(),
            op,
            value: ne(),
            checked,
        },
        Stmt::Allocate {
            buf,
            elem,
            memory,
            extents,
        } => Stmt::Allocate {
            buf,
            elem,
            memory,
            extents: extents.iter().map(|_| ne()).collect(),
        },
        Stmt::Region { id, name, .. } => Stmt::Region {
            id,
            name,
            body: nc(),
        },
        Stmt::Return(v) => Stmt::Return(v.map(|_| ne())),
        Stmt::Repeat { schedule, .. } => Stmt::Repeat {
            count: ne(),
            body: nc(),
            schedule,
        },
        Stmt::Barrier { .. } | Stmt::Reduce { .. } | Stmt::Swap(..) => stmt,
        Stmt::ScanRow { row, op, acc, .. } => Stmt::ScanRow {
            row,
            lo: ne(),
            hi: ne(),
            op,
            acc,
        },
        Stmt::Stage(st) => {
            let (index, rows, cols) = (st.index.iter().map(|_| ne()).collect(), ne(), ne());
            let into = match st.into {
                crate::lir::StageInto::Matrix { buf, index } => crate::lir::StageInto::Matrix {
                    buf,
                    index: index.iter().map(|_| ne()).collect(),
                },
                temp => temp,
            };
            Stmt::Stage(crate::lir::Stage {
                into,
                index,
                rows,
                cols,
                ..st
            })
        }
        Stmt::Speculate { flag, .. } => Stmt::Speculate {
            flag,
            body: nc(),
            fallback: nc(),
        },
        Stmt::Within(w) => Stmt::Within(crate::lir::Within {
            rows: w.rows.iter().map(|_| ne()).collect(),
            ..w
        }),
        Stmt::ScanTotals {
            var,
            per,
            carried,
            totals,
            ..
        } => Stmt::ScanTotals {
            var,
            lo: ne(),
            hi: ne(),
            per,
            carried: carried.iter().map(|(t, op, _)| (*t, *op, ne())).collect(),
            body: nc(),
            totals,
        },
    };
    f.stmts.push(rebuilt)
}

/// Runs a mutator over a function's body.
pub fn mutate_body<M: Mutator + ?Sized>(m: &mut M, f: &mut Func) {
    let body = f.body;
    f.body = m.mutate_stmt(f, body);
}

/// A pass that copies a loop body statement by statement (`partition`'s interior, `lanes`'
/// copies): [`BodyCopy::copy`] maps every expression with [`BodyCopy::expr`] and keeps the
/// statements' shape, with hooks for what each pass changes.
pub trait BodyCopy {
    /// The function copied in.
    fn func(&mut self) -> &mut Func;
    /// The copy of an expression.
    fn expr(&mut self, e: super::ExprId) -> super::ExprId;
    /// The variable a copied `let` binds (`v` itself, or a new one).
    fn bind(&mut self, v: super::VarId) -> super::VarId {
        v
    }
    /// The branch a copied `if` on condition `c` (already copied) always takes, if known.
    fn decided(&mut self, c: super::ExprId) -> Option<bool> {
        let _ = c;
        None
    }
    /// Whether a copied store at `index` (already copied) stays checked.
    fn checked(&mut self, buf: super::Buf, index: &[super::ExprId], checked: bool) -> bool {
        let _ = (buf, index);
        checked
    }
    /// A store's or an update's indices, value and check, copied.
    fn write(
        &mut self,
        buf: super::Buf,
        index: &[super::ExprId],
        value: super::ExprId,
        checked: bool,
    ) -> (Vec<super::ExprId>, super::ExprId, bool) {
        let value = self.expr(value);
        let index: Vec<super::ExprId> = index.iter().map(|i| self.expr(*i)).collect();
        let checked = self.checked(buf, &index, checked);
        (index, value, checked)
    }

    /// The copy of statement `s`.
    fn copy(&mut self, s: StmtId) -> StmtId {
        let stmt = self.func().stmts[s].clone();
        let new = match stmt {
            Stmt::Block(b) => Stmt::Block(b.iter().map(|c| self.copy(*c)).collect()),
            Stmt::Let(v, e) => {
                let e = self.expr(e);
                Stmt::Let(self.bind(v), e)
            }
            Stmt::If(c, t, e) => {
                let c = self.expr(c);
                match self.decided(c) {
                    Some(true) => return self.copy(t),
                    Some(false) => match e {
                        Some(e) => return self.copy(e),
                        None => Stmt::Block(vec![]),
                    },
                    None => {
                        let t = self.copy(t);
                        Stmt::If(c, t, e.map(|e| self.copy(e)))
                    }
                }
            }
            Stmt::Store {
                buf,
                index,
                value,
                checked,
            } => {
                let (index, value, checked) = self.write(buf, &index, value, checked);
                Stmt::Store {
                    buf,
                    index,
                    value,
                    checked,
                }
            }
            Stmt::Update {
                buf,
                index,
                op,
                value,
                checked,
            } => {
                let (index, value, checked) = self.write(buf, &index, value, checked);
                Stmt::Update {
                    buf,
                    index,
                    op,
                    value,
                    checked,
                }
            }
            Stmt::Return(e) => Stmt::Return(e.map(|e| self.expr(e))),
            other => other,
        };
        self.func().stmt(new)
    }
}

/// `e` with variables replaced by expressions (`map`); `deep`: the replacements' own variables
/// too (`let` values that read earlier `let`s, for affine forms).
pub fn substitute(
    func: &mut Func,
    e: ExprId,
    map: &std::collections::HashMap<VarId, ExprId>,
    deep: bool,
) -> ExprId {
    struct Sub<'a>(
        &'a std::collections::HashMap<VarId, ExprId>,
        std::collections::HashMap<ExprId, ExprId>,
        bool,
    );
    impl Mutator for Sub<'_> {
        fn mutate_expr(&mut self, f: &mut Func, e: ExprId) -> ExprId {
            if let Some(r) = self.1.get(&e) {
                return *r;
            }
            let r = match f.exprs[e].kind {
                ExprKind::Var(v) if self.0.contains_key(&v) => match self.2 {
                    true => self.mutate_expr(f, self.0[&v]),
                    false => self.0[&v],
                },
                _ => rebuild_expr(self, f, e),
            };
            self.1.insert(e, r);
            r
        }
    }
    Sub(map, std::collections::HashMap::new(), deep).mutate_expr(func, e)
}
