//! Loop partitioning, in the manner of Halide's `PartitionLoops`: the innermost loop of a
//! region runs in three segments, a prologue and an epilogue as before and an interior where
//! the border rules' tests are decided and the accesses are proven inside their matrices
//! (`checked: false`), so that a back end can print it as a plain loop over rows of memory (the
//! interior is marked `Vectorized(0)`: its width is the target compiler's choice).
//!
//! Nothing here is decided on faith. The interior body is made under assumptions: a test of a
//! border rule (`i >= 0`, `i < dim(m, k)`: true; `i == c` with `c` below zero or past a
//! dimension: false) and every index of an access (inside its dimension). Each assumption is
//! about an index that is *monotone* in the loop's variable over the interior (built from the
//! variable, loop-invariant values, constants, `+`, `-`, `*` and `/` by constants, `min`,
//! `max`, `clamp`, widening casts), so it holds over the whole interior if it holds at its two ends.
//! The guard, evaluated once before the loop, checks exactly that, and that no value in those
//! indices is large enough to wrap (every leaf within ±2^24, a bound the pass's static
//! magnitudes are computed from); where it fails, the loop runs whole, as before.
//!
//! An index map that does not vary in the loop and cannot fail (a border rule's map of a row
//! index, `reflect101(x - 1)` in a loop over `y`) is not decided: it is kept whole, bound by a
//! `let` before the loop (`part_map`) that the interior reads and the guard checks inside its
//! dimension, so that a row outside the matrix (a stencil's first and last rows) runs the
//! interior too, on the row its map picks.
//!
//! The interior's range comes from the indices that are the variable plus a constant (a
//! window's taps): from `-c` to `dim - c`, within the loop's own range.
//!
//! On a GPU ([`points`]) a work-item runs one point, so there is no range to split: the
//! innermost work-item loop's body becomes `if (every assumption holds at this point) interior
//! else body`, the per-work-item interior test of the OpenCL kernels.

use super::facts::{Fact, LEAF, affine, at, fact_guard, mono, point_tests, unit_offset};
use crate::ir::{BinOp, Builtin, Scalar};
use crate::lir::visit::{
    BodyCopy, Mutator, expr_children, mentions, mutate_body, preorder, rebuild_stmt, stmt_parts,
    with_children,
};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Stmt, StmtId, VarId};
use std::collections::{HashMap, HashSet};

/// Partitions the innermost serial loops of `func` (all of them are in regions); `maps`: index
/// maps that do not vary in a loop kept whole (see the module's documentation).
pub fn run(func: &mut Func, maps: bool) {
    mutate_body(&mut Partition { gpu: false, maps }, func);
}

/// The GPU form: partitions the body of every innermost work-item loop (see the module's
/// documentation).
pub fn points(func: &mut Func) {
    mutate_body(
        &mut Partition {
            gpu: true,
            maps: false,
        },
        func,
    );
}

/// The pass as a [`Mutator`]: expressions are left as they are, statements rebuilt around the
/// partitioned loops (serial ones split into segments; on a GPU, work-item loops' bodies).
struct Partition {
    gpu: bool,
    maps: bool,
}

impl Mutator for Partition {
    fn mutate_expr(&mut self, _: &mut Func, e: ExprId) -> ExprId {
        e
    }

    fn mutate_stmt(&mut self, func: &mut Func, s: StmtId) -> StmtId {
        if let Stmt::For {
            var,
            lo,
            hi,
            step,
            kind,
            body,
        } = func.stmts[s]
        {
            let innermost = !has_loop(func, body);
            match kind {
                LoopKind::Serial if !self.gpu && step == 1 && innermost => {
                    return partition(func, var, lo, hi, body, self.maps).unwrap_or(s);
                }
                LoopKind::GpuThread(0) if self.gpu && innermost => {
                    let Some(body) = point(func, var, body) else {
                        return s;
                    };
                    return func.stmt(Stmt::For {
                        var,
                        lo,
                        hi,
                        step,
                        kind,
                        body,
                    });
                }
                _ => {}
            }
        }
        rebuild_stmt(self, func, s)
    }
}

/// `if (facts at this point) interior else body`, or `None` where the interior assumes nothing.
fn point(func: &mut Func, var: VarId, body: StmtId) -> Option<StmtId> {
    let (interior, test, _) = point_interior(func, var, body)?;
    Some(func.stmt(Stmt::If(test?, interior, Some(body))))
}

/// The interior of `body` at one work-item's point (`var`, the innermost work-item index; the
/// others are leaves) and the test of what it assumes there (`None`: nothing); `None` where an
/// assumption fails at every point (an access at a constant index outside its matrix).
pub(crate) fn point_interior(
    func: &mut Func,
    var: VarId,
    body: StmtId,
) -> Option<(StmtId, Option<ExprId>, Vec<Fact>)> {
    let mut p = Part::new(func, var);
    p.collect_lets(body);
    let interior = p.copy(body);
    let Part { func, facts, .. } = p;
    let b = Scalar::Bool;
    let mut ok: Option<ExprId> = None;
    // Each comparison once (the facts of a border rule's tests and of its loads overlap).
    let mut seen = std::collections::HashSet::new();
    let mut canon = crate::lir::canon::Canon::new();
    for f in facts.clone() {
        for c in point_tests(func, f) {
            if !seen.insert(canon.of(func, c)) {
                continue;
            }
            // A test of constants (an access at a constant index) decides itself.
            match constant(func, c) {
                Some(true) => continue,
                Some(false) => return None,
                None => {}
            }
            ok = Some(match ok {
                Some(o) => func.binary(BinOp::And, o, c, b),
                None => c,
            });
        }
    }
    Some((interior, ok, facts))
}

/// The value of a comparison of two integer constants.
fn constant(func: &Func, c: ExprId) -> Option<bool> {
    let ExprKind::Binary(op, a, b) = func.exprs[c].kind else {
        return None;
    };
    let (ExprKind::Int(x), ExprKind::Int(y)) = (&func.exprs[a].kind, &func.exprs[b].kind) else {
        return None;
    };
    match op {
        BinOp::Ge => Some(x >= y),
        BinOp::Lt => Some(x < y),
        BinOp::Ne => Some(x != y),
        _ => None,
    }
}

pub(super) fn has_loop(func: &Func, s: StmtId) -> bool {
    matches!(func.stmts[s], Stmt::For { .. })
        || stmt_parts(&func.stmts[s])
            .1
            .iter()
            .any(|c| has_loop(func, *c))
}

struct Part<'a> {
    func: &'a mut Func,
    /// The loop's variable.
    var: VarId,
    /// The pure `let`s of the body (expression and statement ones): their values, inlined.
    lets: HashMap<VarId, ExprId>,
    /// Variables bound inside the body (not loop-invariant, unless inlined).
    inner: HashSet<VarId>,
    /// The expressions `collect_lets` has walked (each node of the DAG once).
    walked: HashSet<ExprId>,
    /// The variables of the body's folds with a positive constant trip count, or one that
    /// does not vary in the body (a window's host length, which the host checks is at least
    /// 1): their last value. An index that moves with them is assumed at their ends (it is
    /// monotone in each), so a window's taps, looped, are proven inside as written-out ones
    /// are. (Were a count below 1, the fold would read nothing: any assumption is safe.)
    folds: HashMap<VarId, ExprId>,
    /// The assumptions made so far.
    facts: Vec<Fact>,
    /// Their keys (kind, index, bound), so that each is recorded once in constant time.
    fact_keys: std::collections::HashSet<(u8, ExprId, Option<String>)>,
    /// Leaves of the assumed indices that the guard bounds (loop-invariant values).
    leaves: Vec<ExprId>,
    memo: HashMap<ExprId, ExprId>,
    /// The interior's expressions by structure, so that equal indices are one node.
    interned: HashMap<String, ExprId>,
    /// Whether index maps that do not vary in the loop become `let`s before it (`hoisted`).
    hoist: bool,
    /// Those `let`s: each map's canonical handle (`canon`), its variable and its value.
    hoisted: Vec<(ExprId, VarId, ExprId)>,
    canon: crate::lir::canon::Canon,
    /// `plain`'s copies, and whether each variable met may vary in the loop (`varies`).
    plain_memo: HashMap<ExprId, ExprId>,
    varying: std::cell::RefCell<HashMap<VarId, bool>>,
}

/// The partitioned loop, or `None` where nothing in its body is worth it.
fn partition(
    func: &mut Func,
    var: VarId,
    lo: ExprId,
    hi: ExprId,
    body: StmtId,
    maps: bool,
) -> Option<StmtId> {
    let mut p = Part::new(func, var);
    p.hoist = maps;
    p.collect_lets(body);
    let interior = p.copy(body);
    if p.facts.is_empty() {
        return None;
    }
    let lanes = super::lanes::split(p.func, var, interior, &p.inner);
    let Part {
        func,
        mut facts,
        mut leaves,
        hoisted,
        ..
    } = p;
    let (i32t, i64t, b) = (Scalar::I32, Scalar::I64, Scalar::Bool);
    let lo64 = func.cast(lo, i64t);
    let hi64 = func.cast(hi, i64t);
    // The interior's range: the unit-stride indices' bounds, within the loop's.
    let mut first = lo64;
    let mut end = hi64;
    let mut chunk_ends = Vec::new();
    for f in &facts {
        let (e, low, high) = match *f {
            Fact::Inside(e, d) => (e, true, Some(d)),
            Fact::NonNeg(e) => (e, true, None),
            Fact::Below(e, d) => (e, false, Some(d)),
            Fact::Not(..) => continue,
        };
        let Some(c) = unit_offset(func, e, var) else {
            // A strided index `k v + c` (a downsampling read): the interior begins where the
            // first chunk of `k` elements holding its element starts inside the dimension
            // (at `k v + k floor(c / k) >= 0`), and ends where the last one still fits it, so
            // that a back end can read the row as chunks (`codegen::cpu::slices`).
            if let (true, Some((k @ 2..=8, c))) = (low, affine(func, e, var)) {
                let l = func.int(-c.div_euclid(k), i64t);
                first = call(func, Builtin::Max, first, l, i64t);
            }
            if let (Some(d), Some((k @ 2..=8, c))) = (high, affine(func, e, var))
                && let key = (k, c.div_euclid(k), format!("{:?}", func.exprs[d].kind))
                && !chunk_ends.contains(&key)
            {
                chunk_ends.push(key);
                let d = func.cast(d, i64t);
                let past = func.int(k * c.div_euclid(k), i64t);
                let room = func.binary(BinOp::Sub, d, past, i64t);
                let ke = func.int(k, i64t);
                let u = func.binary(BinOp::Div, room, ke, i64t);
                end = call(func, Builtin::Min, end, u, i64t);
            }
            continue;
        };
        if low {
            let l = func.int(-c, i64t);
            first = call(func, Builtin::Max, first, l, i64t);
        }
        if let Some(d) = high {
            let d = func.cast(d, i64t);
            let cc = func.int(c, i64t);
            let u = func.binary(BinOp::Sub, d, cc, i64t);
            end = call(func, Builtin::Min, end, u, i64t);
        }
    }
    if let Some(l) = &lanes {
        facts.extend(l.facts.iter().copied());
        leaves.extend(l.leaves.iter().copied());
        for x in &l.lower {
            first = call(func, Builtin::Max, first, *x, i64t);
        }
        for x in &l.upper {
            end = call(func, Builtin::Min, end, *x, i64t);
        }
        // From a multiple of k at or above 0 (so that y / k is the lane's i).
        let zero = func.int(0, i64t);
        first = call(func, Builtin::Max, first, zero, i64t);
        let (k, k1) = (func.int(l.k as i128, i64t), func.int(l.k as i128 - 1, i64t));
        let up = func.binary(BinOp::Add, first, k1, i64t);
        let q = func.binary(BinOp::Div, up, k, i64t);
        first = func.binary(BinOp::Mul, q, k, i64t);
    }
    let v_first = func.var("part_lo", i64t);
    let v_end = func.var("part_hi", i64t);
    let v_ok = func.var("part_ok", b);
    let first = call(func, Builtin::Min, first, hi64, i64t);
    let first_v = func.expr(ExprKind::Var(v_first), i64t);
    let mut end = call(func, Builtin::Max, end, first_v, i64t);
    if let Some(l) = &lanes {
        // A whole number of lanes' steps.
        let k = func.int(l.k as i128, i64t);
        let len = func.binary(BinOp::Sub, end, first_v, i64t);
        let q = func.binary(BinOp::Div, len, k, i64t);
        let steps = func.binary(BinOp::Mul, q, k, i64t);
        end = func.binary(BinOp::Add, first_v, steps, i64t);
    }
    let end_v = func.expr(ExprKind::Var(v_end), i64t);
    // The guard: a non-empty interior, small leaves, every fact at both ends.
    let mut ok = func.binary(BinOp::Lt, first_v, end_v, b);
    let lim = func.int(LEAF, i64t);
    let nlim = func.int(-LEAF, i64t);
    let small = |func: &mut Func, ok: ExprId, x: ExprId| {
        let x = func.cast(x, i64t);
        let a = func.binary(BinOp::Ge, x, nlim, b);
        let c = func.binary(BinOp::Le, x, lim, b);
        let ac = func.binary(BinOp::And, a, c, b);
        func.binary(BinOp::And, ok, ac, b)
    };
    ok = small(func, ok, first_v);
    ok = small(func, ok, end_v);
    let mut seen = Vec::new();
    for l in leaves {
        if !seen.contains(&l) {
            seen.push(l);
            ok = small(func, ok, l);
        }
    }
    let one = func.int(1, i64t);
    let last_v = func.binary(BinOp::Sub, end_v, one, i64t);
    let y_first = func.cast(first_v, i32t);
    let y_last = func.cast(last_v, i32t);
    for f in &facts {
        let c = fact_guard(func, *f, var, y_first, y_last);
        ok = func.binary(BinOp::And, ok, c, b);
    }
    // Segments: 0 is [lo, first), 1 the interior [first, end), 2 is [end, hi); where the guard
    // fails, segment 0 is the whole loop and the others are empty.
    let ok_v = func.expr(ExprKind::Var(v_ok), b);
    let first_s = func.expr(ExprKind::Select(ok_v, first_v, hi64), i64t);
    let end_s = func.expr(ExprKind::Select(ok_v, end_v, hi64), i64t);
    let seg = func.var("part_seg", i32t);
    let seg_v = func.expr(ExprKind::Var(seg), i32t);
    let zero32 = func.int(0, i32t);
    let one32 = func.int(1, i32t);
    let is0 = func.binary(BinOp::Eq, seg_v, zero32, b);
    let is1 = func.binary(BinOp::Eq, seg_v, one32, b);
    let a = func.expr(ExprKind::Select(is0, lo64, end_s), i64t);
    let z = func.expr(ExprKind::Select(is0, first_s, hi64), i64t);
    let (a, z) = (func.cast(a, i32t), func.cast(z, i32t));
    let edge = func.for_loop(var, (a, z, 1), LoopKind::Serial, body);
    let inner = match &lanes {
        Some(l) => {
            // i over [first / k, end / k): both are multiples of k where the guard passes.
            let k = func.int(l.k as i128, i64t);
            let fi = func.binary(BinOp::Div, first_s, k, i64t);
            let ei = func.binary(BinOp::Div, end_s, k, i64t);
            let (fi, ei) = (func.cast(fi, i32t), func.cast(ei, i32t));
            func.for_loop(l.var, (fi, ei, 1), LoopKind::Vectorized(0), l.body)
        }
        None => {
            let (fi, ei) = (func.cast(first_s, i32t), func.cast(end_s, i32t));
            func.for_loop(var, (fi, ei, 1), LoopKind::Vectorized(0), interior)
        }
    };
    let pick = func.stmt(Stmt::If(is1, inner, Some(edge)));
    let three = func.int(3, i32t);
    let segs = func.for_loop(seg, (zero32, three, 1), LoopKind::Serial, pick);
    // The maps first: the guard and the interior read them.
    let mut block: Vec<StmtId> = hoisted
        .into_iter()
        .map(|(_, v, value)| func.stmt(Stmt::Let(v, value)))
        .collect();
    block.push(func.stmt(Stmt::Let(v_first, first)));
    block.push(func.stmt(Stmt::Let(v_end, end)));
    block.push(func.stmt(Stmt::Let(v_ok, ok)));
    block.push(segs);
    Some(func.stmt(Stmt::Block(block)))
}

fn call(func: &mut Func, f: Builtin, a: ExprId, b: ExprId, t: Scalar) -> ExprId {
    func.expr(ExprKind::Call(f, vec![a, b]), t)
}

impl<'a> Part<'a> {
    fn new(func: &'a mut Func, var: VarId) -> Part<'a> {
        Part {
            func,
            var,
            lets: HashMap::new(),
            inner: HashSet::new(),
            walked: HashSet::new(),
            folds: HashMap::new(),
            facts: Vec::new(),
            fact_keys: Default::default(),
            leaves: Vec::new(),
            memo: HashMap::new(),
            interned: HashMap::new(),
            hoist: false,
            hoisted: Vec::new(),
            canon: Default::default(),
            plain_memo: HashMap::new(),
            varying: Default::default(),
        }
    }
}

impl Part<'_> {
    /// The body's `let`s whose values read no memory and cannot fail, to inline.
    fn collect_lets(&mut self, s: StmtId) {
        let (es, ss) = stmt_parts(&self.func.stmts[s]);
        if let Stmt::Let(v, e) = self.func.stmts[s] {
            self.inner.insert(v);
            if self.pure(e) {
                self.lets.insert(v, e);
            }
        }
        let mut stack = es;
        while let Some(e) = stack.pop() {
            if !self.walked.insert(e) {
                continue;
            }
            if let ExprKind::Let(v, a, _) = self.func.exprs[e].kind {
                self.inner.insert(v);
                if self.pure(a) {
                    self.lets.insert(v, a);
                }
            }
            if let ExprKind::Fold { vars, counts, .. } = &self.func.exprs[e].kind {
                let (vars, counts) = (vars.clone(), counts.clone());
                for (v, c) in vars.iter().zip(&counts) {
                    self.inner.insert(*v);
                    let ty = self.func.exprs[*c].ty;
                    let last = match self.func.exprs[*c].kind {
                        ExprKind::Int(n) if n > 0 => Some(self.func.int(n - 1, ty)),
                        ExprKind::Int(_) => None,
                        _ if self.invariant_leaves(*c) => {
                            let one = self.func.int(1, ty);
                            Some(self.func.binary(BinOp::Sub, *c, one, ty))
                        }
                        _ => None,
                    };
                    if let Some(last) = last {
                        self.folds.insert(*v, last);
                    }
                }
            }
            stack.extend(expr_children(&self.func.exprs[e].kind));
        }
        for c in ss {
            self.collect_lets(c);
        }
    }

    fn pure(&self, e: ExprId) -> bool {
        crate::lir::total(self.func, e, &|_| true)
    }

    /// `e` at the ends of the folds' variables it moves with (itself where none), or `None`
    /// where it is not monotone in one of them or moves with another bound variable.
    fn ends(&mut self, e: ExprId) -> Option<Vec<ExprId>> {
        let mut vars = Vec::new();
        preorder(self.func, e, |x| {
            if let ExprKind::Var(v) = self.func.exprs[x].kind
                && self.folds.contains_key(&v)
                && !vars.contains(&v)
            {
                vars.push(v);
            }
            true
        });
        let mut out = vec![e];
        for v in vars {
            mono(self.func, e, v, &HashMap::new())?;
            let ends = [self.func.int(0, Scalar::I32), self.folds[&v]];
            let mut next = Vec::new();
            for x in out {
                for end in ends {
                    next.push(at(self.func, x, v, end));
                }
            }
            out = next;
        }
        Some(out)
    }

    /// Whether `e` is an index the guard can check: monotone, no wrapping, invariant leaves
    /// only (no variable bound in the body).
    fn index(&mut self, e: ExprId) -> bool {
        let ok =
            mono(self.func, e, self.var, &HashMap::new()).is_some() && self.invariant_leaves(e);
        if ok {
            self.leaves_of(e);
        }
        ok
    }

    /// Whether every variable below `e` is the loop's or bound outside the body.
    fn invariant_leaves(&self, e: ExprId) -> bool {
        !mentions(self.func, e, |v| v != self.var && self.inner.contains(&v))
    }

    /// Records the leaves below `e` (variables but the loop's, sizes, dimensions), each once,
    /// in the order of a depth-first walk.
    fn leaves_of(&mut self, e: ExprId) {
        let (func, var, leaves) = (&*self.func, self.var, &mut self.leaves);
        preorder(func, e, |x| {
            match func.exprs[x].kind {
                ExprKind::Var(v) if v == var => {}
                ExprKind::Var(_) | ExprKind::Size(_) | ExprKind::Dim(..) => leaves.push(x),
                _ => {}
            }
            true
        });
    }

    fn boolean(&self, e: ExprId) -> Option<bool> {
        match self.func.exprs[e].kind {
            ExprKind::Int(v) if self.func.exprs[e].ty == Scalar::Bool => Some(v != 0),
            _ => None,
        }
    }

    /// The interior's copy of `e`.
    fn expr(&mut self, e: ExprId) -> ExprId {
        if let Some(n) = self.memo.get(&e) {
            return *n;
        }
        let n = self.expr_new(e);
        let x = &self.func.exprs[n];
        let key = format!("{:?}|{:?}|{}", x.kind, x.ty, x.lanes);
        let n = *self.interned.entry(key).or_insert(n);
        self.memo.insert(e, n);
        n
    }

    fn expr_new(&mut self, e: ExprId) -> ExprId {
        let x = self.func.exprs[e].clone();
        let b = Scalar::Bool;
        match x.kind {
            ExprKind::Var(v) => match self.lets.get(&v) {
                Some(a) => self.expr(*a),
                None => e,
            },
            ExprKind::Let(v, a, body) if self.lets.contains_key(&v) => {
                let _ = a;
                self.expr(body)
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                let (l, r) = (self.expr(l), self.expr(r));
                let and = op == BinOp::And;
                match (self.boolean(l), self.boolean(r)) {
                    (Some(v), _) => {
                        if v == and {
                            r
                        } else {
                            l
                        }
                    }
                    (_, Some(v)) if v == and => l,
                    _ => self.func.binary(op, l, r, b),
                }
            }
            ExprKind::Binary(op @ (BinOp::Ge | BinOp::Lt | BinOp::Eq), l, r) => {
                let (l, r) = (self.expr(l), self.expr(r));
                if let Some(v) = self.assume(op, l, r) {
                    return self.func.int(v as i128, b);
                }
                self.func.binary(op, l, r, x.ty)
            }
            // An index map that does not vary in the loop (a border rule's map of a row index):
            // kept whole, a value the guard evaluates once, so that a row outside the matrix
            // maps into it and the row runs the interior too.
            ExprKind::Select(..)
                if self.hoist && x.ty.is_int() && x.lanes == 1 && !self.varies(e) =>
            {
                let whole = self.plain(e);
                if !crate::lir::total_where(self.func, whole, &|_| true, true) {
                    return self.select_copy(x.kind.clone(), x.ty);
                }
                let key = self.canon.of(self.func, whole);
                let v = match self.hoisted.iter().find(|(k, _, _)| *k == key) {
                    Some((_, v, _)) => *v,
                    None => {
                        let v = self.func.var("part_map", x.ty);
                        self.hoisted.push((key, v, whole));
                        v
                    }
                };
                self.func.expr(ExprKind::Var(v), x.ty)
            }
            ExprKind::Select(..) => self.select_copy(x.kind.clone(), x.ty),
            // A value widened, then cast back to its own type (an inlined producer's index,
            // `i32(i64(x - 1))`, once its border map is decided): the value.
            ExprKind::Cast(old) if x.lanes == 1 && x.ty.is_int() => {
                let a = self.expr(old);
                if let Some(b) = self.func.widening(a)
                    && self.func.exprs[b].ty == x.ty
                {
                    return b;
                }
                match a == old {
                    true => e,
                    false => self.func.cast(a, x.ty),
                }
            }
            ExprKind::Load {
                buf,
                index,
                checked,
            } => {
                let index: Vec<ExprId> = index.iter().map(|i| self.expr(*i)).collect();
                let checked = checked && !self.inside(buf, &index);
                self.func.expr(
                    ExprKind::Load {
                        buf,
                        index,
                        checked,
                    },
                    x.ty,
                )
            }
            kind => {
                let kids = expr_children(&kind);
                let new: Vec<ExprId> = kids.iter().map(|c| self.expr(*c)).collect();
                if new == kids {
                    return e;
                }
                self.func.expr(with_children(&kind, &new), x.ty)
            }
        }
    }

    /// The interior's copy of a select: its condition as the interior decides it.
    fn select_copy(&mut self, kind: ExprKind, ty: Scalar) -> ExprId {
        let ExprKind::Select(c, t, f) = kind else {
            unreachable!("a select")
        };
        let c = self.expr(c);
        match self.boolean(c) {
            Some(true) => self.expr(t),
            Some(false) => self.expr(f),
            None => {
                let (t, f) = (self.expr(t), self.expr(f));
                self.func.expr(ExprKind::Select(c, t, f), ty)
            }
        }
    }

    /// Whether `e` may vary in the loop: it mentions the loop's variable, or a variable bound in
    /// the body that is not an inlined `let` of a value that does not vary.
    fn varies(&self, e: ExprId) -> bool {
        mentions(self.func, e, |v| {
            if v == self.var {
                return true;
            }
            if let Some(known) = self.varying.borrow().get(&v) {
                return *known;
            }
            let it = match self.lets.get(&v) {
                Some(a) => self.varies(*a),
                None => self.inner.contains(&v),
            };
            self.varying.borrow_mut().insert(v, it);
            it
        })
    }

    /// `e` with the body's inlined `let`s substituted, and nothing assumed.
    fn plain(&mut self, e: ExprId) -> ExprId {
        if let Some(p) = self.plain_memo.get(&e) {
            return *p;
        }
        let p = self.plain_new(e);
        self.plain_memo.insert(e, p);
        p
    }

    fn plain_new(&mut self, e: ExprId) -> ExprId {
        let x = self.func.exprs[e].clone();
        match x.kind {
            ExprKind::Var(v) => match self.lets.get(&v) {
                Some(a) => self.plain(*a),
                None => e,
            },
            ExprKind::Let(v, _, body) if self.lets.contains_key(&v) => self.plain(body),
            kind => {
                let kids = expr_children(&kind);
                let new: Vec<ExprId> = kids.iter().map(|c| self.plain(*c)).collect();
                if new == kids {
                    return e;
                }
                self.func.expr(with_children(&kind, &new), x.ty)
            }
        }
    }

    /// The value the interior assumes of the test `l op r` of a border rule, recorded as a
    /// fact, or `None`.
    fn assume(&mut self, op: BinOp, l: ExprId, r: ExprId) -> Option<bool> {
        let func = &*self.func;
        let int = |e: ExprId| match func.exprs[e].kind {
            ExprKind::Int(k) => Some(k),
            _ => None,
        };
        // A dimension, or a dimension plus a constant >= 0.
        let past = |e: ExprId| match func.exprs[e].kind {
            ExprKind::Dim(..) => true,
            ExprKind::Binary(BinOp::Add, a, c) => {
                matches!(func.exprs[a].kind, ExprKind::Dim(..)) && int(c).is_some_and(|k| k >= 0)
            }
            _ => false,
        };
        let fact = match op {
            BinOp::Ge if int(r) == Some(0) => (Fact::NonNeg(l), true),
            BinOp::Lt if matches!(func.exprs[r].kind, ExprKind::Dim(..)) => {
                (Fact::Below(l, r), true)
            }
            BinOp::Eq if int(r).is_some_and(|k| k < 0) || past(r) => (Fact::Not(l, r), false),
            _ => return None,
        };
        if let Fact::Not(_, c) = fact.0
            && !self.index(c)
        {
            return None;
        }
        let ends = self.ends(l)?;
        if !ends.iter().all(|x| self.index(*x)) {
            return None;
        }
        for x in ends {
            self.fact(match fact.0 {
                Fact::NonNeg(_) => Fact::NonNeg(x),
                Fact::Below(_, d) => Fact::Below(x, d),
                Fact::Not(_, c) => Fact::Not(x, c),
                Fact::Inside(_, d) => Fact::Inside(x, d),
            });
        }
        Some(fact.1)
    }

    /// Records a fact, once.
    fn fact(&mut self, f: Fact) {
        let key = |f: &Fact, func: &Func| match *f {
            Fact::Inside(e, d) => (0, e, Some(format!("{:?}", func.exprs[d].kind))),
            Fact::NonNeg(e) => (1, e, None),
            Fact::Below(e, d) => (2, e, Some(format!("{:?}", func.exprs[d].kind))),
            Fact::Not(e, c) => (3, e, Some(format!("{:?}", func.exprs[c].kind))),
        };
        if self.fact_keys.insert(key(&f, self.func)) {
            self.facts.push(f);
        }
    }

    /// Whether an access at `index` of `buf` can be proven inside (and then its facts).
    fn inside(&mut self, buf: Buf, index: &[ExprId]) -> bool {
        let Buf::Matrix(m) = buf else {
            return false;
        };
        let Some(ends) = index
            .iter()
            .map(|i| self.ends(*i))
            .collect::<Option<Vec<Vec<ExprId>>>>()
        else {
            return false;
        };
        if !ends.iter().flatten().all(|i| self.index(*i)) {
            return false;
        }
        for (k, is) in ends.iter().enumerate() {
            for i in is {
                let d = self.func.expr(ExprKind::Dim(m, k), Scalar::I64);
                self.fact(Fact::Inside(*i, d));
            }
        }
        true
    }
}

impl BodyCopy for Part<'_> {
    fn func(&mut self) -> &mut Func {
        self.func
    }
    fn expr(&mut self, e: ExprId) -> ExprId {
        Part::expr(self, e)
    }
    fn decided(&mut self, c: ExprId) -> Option<bool> {
        self.boolean(c)
    }
    fn checked(&mut self, buf: Buf, index: &[ExprId], checked: bool) -> bool {
        checked && !self.inside(buf, index)
    }
}
