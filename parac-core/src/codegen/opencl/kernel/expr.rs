//! Expressions of the LIR in OpenCL C, with the LIR's semantics (`crate::lir`, as the
//! interpreter and the CPU path compute them):
//! - integer `+ - *` and negation wrap at the expression's type: computed in `uint`/`ulong`,
//!   converted back; shifts mask their amount by the operand's width;
//! - `/` and `%` by anything but a constant other than 0 and -1 go through `pc_div_T`/`pc_rem_T`
//!   (a zero divisor raises the flag with the region's division code and gives 0);
//! - a float converted to an integer saturates (`convert_T_sat`: NaN gives 0, as Rust's `as`);
//! - `select`, `&&` and `||` evaluate the arm taken only (C's `?:`, `&&`, `||`);
//! - the `else` arm of a `select` (a bordered read's chain of the rules' entries, or of their
//!   indices, taken outside the matrix only), where it is large, is a helper function printed
//!   once per shape, its free variables its parameters (as the CPU path's closures,
//!   `cpu/expr/outline.rs`);
//! - `let x = a in b`: where `a` can be evaluated anywhere (no memory read, no failing
//!   division), or the `let` is not under a condition, `x` is declared before the statement
//!   (once per C block); otherwise `b` is printed with `a` in place of `x`.

use super::{Printer, cty, unsigned};
use crate::codegen::opencl::{c_float, c_int};
use crate::codegen::safety;
use crate::interp::value::bits;
use crate::ir::{BinOp, Builtin, Scalar, UnOp};
use crate::lir::ExprKind as K;
use crate::lir::visit::expr_children;
use crate::lir::{ExprId, VarId};
use std::collections::HashSet;

/// Expressions nested deeper than this are declared before their statement (see `expr`).
const MAX_NESTING: usize = 40;

/// An arm printed longer than this many characters is outlined.
const OUTLINE_CHARS: usize = 600;

impl Printer<'_> {
    /// An expression that needs no statement before it (extents, sizes).
    pub(super) fn pure(&mut self, e: ExprId) -> String {
        let mut pre = Vec::new();
        let s = self.expr(e, &mut pre, false);
        debug_assert!(pre.is_empty(), "a host expression with a `let`");
        s
    }

    /// Expression `e`; declarations it needs first go to `pre`. `cond`: `e` is evaluated only
    /// on some paths of its statement (an arm of `?:`, the right of `&&`/`||`).
    pub(super) fn expr(&mut self, e: ExprId, pre: &mut Vec<String>, cond: bool) -> String {
        // C compilers bound the nesting of brackets (clang: 256): an expression nested deeper
        // than `MAX_NESTING` (a sum over a large window) is declared before its statement,
        // where that cannot change what runs: not under a condition (under one, a large arm is
        // outlined, and its function declares what it needs).
        if self.nesting >= MAX_NESTING && !cond {
            let saved = std::mem::replace(&mut self.nesting, 0);
            let value = self.expr(e, pre, cond);
            self.nesting = saved;
            let name = self.local();
            pre.push(format!(
                "const {} {name} = {value};",
                cty(self.func.exprs[e].ty)
            ));
            return name;
        }
        self.nesting += 1;
        let s = self.expr_nested(e, pre, cond);
        self.nesting -= 1;
        s
    }

    fn expr_nested(&mut self, e: ExprId, pre: &mut Vec<String>, cond: bool) -> String {
        let x = &self.func.exprs[e];
        let t = x.ty;
        let ct = cty(t);
        match x.kind.clone() {
            K::Int(v) => c_int(v, t),
            K::Float(v) => c_float(v),
            K::Var(v) => self.expr_var(v),
            K::Size(i) => format!("z{i}"),
            K::Host(h) => format!("(({ct})s{h})"),
            K::Dim(m, k) => self.dims[m][k].clone(),
            K::Load {
                buf,
                index,
                checked,
            } => {
                let idx = self.indices(&index, pre, cond, checked);
                self.load(buf, &idx, checked, x.lanes)
            }
            // Known outside (never made for a kernel: the CPU path's fusion): the checked read,
            // which fails.
            K::Outside { matrix, index } => {
                let idx = self.indices(&index, pre, cond, true);
                self.load(crate::lir::Buf::Matrix(matrix), &idx, true, 1)
            }
            // A ramp is an index of a vector access (`vloadN`/`vstoreN` at its base).
            K::Ramp { base, .. } => self.expr(base, pre, cond),
            K::Broadcast(a) => {
                let n = x.lanes;
                format!("(({ct}{n})({}))", self.expr(a, pre, cond))
            }
            K::Extract(a, k) => {
                let lane = "0123456789abcdef".as_bytes()[k as usize] as char;
                format!("({}).s{lane}", self.expr(a, pre, cond))
            }
            K::Vector(xs) => {
                let n = xs.len();
                let xs: Vec<String> = xs.iter().map(|a| self.expr(*a, pre, cond)).collect();
                format!("(({ct}{n})({}))", xs.join(", "))
            }
            K::Unary(op, a) => {
                let a = self.expr(a, pre, cond);
                match op {
                    UnOp::Plus => a,
                    UnOp::Neg if t.is_float() => format!("(-({a}))"),
                    UnOp::Neg => format!("(({ct})(({u})0 - ({u})({a})))", u = unsigned(t)),
                    UnOp::Not if t == Scalar::Bool => format!("(!({a}))"),
                    UnOp::Not => format!("(({ct})(~({a})))"),
                }
            }
            K::Binary(op, a, b) => self.binary(e, op, a, b, pre, cond),
            K::Cast(a) => {
                let from = self.func.exprs[a].ty;
                let a = self.expr(a, pre, cond);
                if t == Scalar::Bool {
                    format!("(({a}) != 0)")
                } else if from.is_float() && !t.is_float() {
                    format!("convert_{ct}_sat({a})")
                } else {
                    format!("(({ct})({a}))")
                }
            }
            K::Call(f, args) => {
                let xs: Vec<String> = args.iter().map(|a| self.expr(*a, pre, cond)).collect();
                format!("(({ct}){})", call_c(f, &xs, t))
            }
            K::Select(c, a, b) => {
                let c = self.expr(c, pre, cond);
                let a = self.expr(a, pre, true);
                let b = match self.outline(b) {
                    Some(call) => call,
                    None => self.expr(b, pre, true),
                };
                format!("(({ct})(({c}) ? ({a}) : ({b})))")
            }
            K::Fold {
                op,
                vars,
                counts,
                init,
                elem,
            } => self.fold(op, &vars, &counts, init, elem, t, pre, cond),
            K::Let(v, a, body) => {
                let declared = self.declared.iter().any(|d| d.contains(&v));
                if declared {
                    return self.expr(body, pre, cond);
                }
                let value = self.expr(a, pre, cond);
                if !cond || crate::lir::total(self.func, a, &|v| !self.subst.contains_key(&v)) {
                    let name = self.var(v);
                    let vt = cty(self.func.vars[v].ty);
                    pre.push(format!("const {vt} {name} = {value};"));
                    self.declared.last_mut().expect("an open block").insert(v);
                    self.expr(body, pre, cond)
                } else {
                    let old = self.subst.insert(v, format!("({value})"));
                    let s = self.expr(body, pre, cond);
                    match old {
                        Some(o) => self.subst.insert(v, o),
                        None => self.subst.remove(&v),
                    };
                    s
                }
            }
        }
    }

    fn binary(
        &mut self,
        e: ExprId,
        op: BinOp,
        a: ExprId,
        b: ExprId,
        pre: &mut Vec<String>,
        cond: bool,
    ) -> String {
        use BinOp::*;
        let t = self.func.exprs[e].ty;
        let ot = self.func.exprs[a].ty;
        let (ct, co) = (cty(t), cty(ot));
        let divisor = match self.func.exprs[b].kind {
            K::Int(k) => Some(k),
            _ => None,
        };
        if matches!(op, And | Or) {
            // A chain of `&&` (or `||`) printed flat: `a && b && c`, each operand after the first
            // evaluated only as C short-circuits.
            let mut operands = vec![b];
            let mut left = a;
            while let K::Binary(o, l, r) = self.func.exprs[left].kind {
                if o != op {
                    break;
                }
                operands.push(r);
                left = l;
            }
            operands.push(left);
            operands.reverse();
            let parts: Vec<String> = operands
                .iter()
                .enumerate()
                .map(|(k, x)| format!("({})", self.expr(*x, pre, cond || k > 0)))
                .collect();
            return format!("({})", parts.join(&format!(" {} ", c_op(op))));
        }
        let x = self.expr(a, pre, cond);
        let y = self.expr(b, pre, cond);
        let float = t.is_float() || ot.is_float();
        match op {
            Rem if float => format!("fmod({x}, {y})"),
            Eq | Ne | Lt | Le | Gt | Ge | And | Or => format!("(({x}) {} ({y}))", c_op(op)),
            _ if float => format!("(({x}) {} ({y}))", c_op(op)),
            // Proven not to leave its type: the type's own (signed) arithmetic, which a device
            // compiler can reason about (a wrapping sum hides that `y + 1` follows `y`).
            Add | Sub | Mul if self.func.exprs[e].exact => {
                format!("(({ct})(({x}) {} ({y})))", c_op(op))
            }
            Add | Sub | Mul | ElemMul => wrapping(op, &x, &y, t, ot),
            Div | Rem if divisor.is_some_and(|k| k != 0 && k != -1) => {
                format!("(({ct})(({x}) {} ({y})))", c_op(op))
            }
            // A divisor the host checked is not zero: no test for it, and -1 (C leaves
            // `INT_MIN / -1` undefined) as the LIR computes it, wrapping.
            Div | Rem if matches!(self.func.exprs[b].kind, K::Call(Builtin::NonZero, _)) => {
                if ot.range().is_some_and(|r| r.0 == 0) {
                    format!("(({ct})(({x}) {} ({y})))", c_op(op))
                } else if op == Div {
                    let u = unsigned(ot);
                    format!("(({ct})(({y}) == -1 ? ({co})(({u})0 - ({u})({x})) : ({x}) / ({y})))")
                } else {
                    format!("(({ct})(({y}) == -1 ? ({co})0 : ({x}) % ({y})))")
                }
            }
            Div | Rem => {
                let wide = match ot {
                    Scalar::U32 | Scalar::I64 | Scalar::U64 => co,
                    _ => "int",
                };
                let which = if op == Div { "div" } else { "rem" };
                let code = safety::division_code(self.rid);
                format!("(({ct})pc_{which}_{wide}(({wide})({x}), ({wide})({y}), err, {code}))")
            }
            Shl | Shr => {
                let mask = bits(ot) - 1;
                let n = format!("((uint)({y}) & {mask}u)");
                if op == Shl {
                    format!("(({ct})(({u})({x}) << {n}))", u = unsigned(ot))
                } else {
                    format!("(({ct})((({co})({x})) >> {n}))")
                }
            }
            BitAnd | BitOr | BitXor => format!("(({ct})(({x}) {} ({y})))", c_op(op)),
        }
    }
}

impl Printer<'_> {
    /// Arm `b` of a `select` as a call of a helper function, where it is large (see the module's
    /// documentation); `None` where it stays in place.
    fn outline(&mut self, b: ExprId) -> Option<String> {
        // A temporary (a scan's running value, a tile) is the kernel's own, not a helper's.
        let temp = !crate::lir::visit::preorder(self.func, b, |x| {
            !matches!(
                self.func.exprs[x].kind,
                crate::lir::ExprKind::Load {
                    buf: crate::lir::Buf::Temp(_),
                    ..
                }
            )
        });
        if self.outlining || temp {
            return None;
        }
        let mut free = Vec::new();
        free_vars(self.func, b, &mut HashSet::new(), &mut free);
        // The arm alone, its free variables named by position.
        let args: Vec<String> = free.iter().map(|v| self.expr_var(*v)).collect();
        let saved_subst = std::mem::take(&mut self.subst);
        let saved_declared = std::mem::replace(&mut self.declared, vec![HashSet::new()]);
        for (k, v) in free.iter().enumerate() {
            self.subst.insert(*v, format!("q{k}"));
        }
        self.outlining = true;
        let mut body = Vec::new();
        let value = self.expr(b, &mut body, false);
        self.outlining = false;
        self.subst = saved_subst;
        self.declared = saved_declared;
        let size = value.len() + body.iter().map(String::len).sum::<usize>();
        if size < OUTLINE_CHARS {
            return None;
        }
        let t = cty(self.func.exprs[b].ty);
        let mut ps = self.kernel_params();
        ps.extend(
            free.iter()
                .enumerate()
                .map(|(k, v)| format!("{} q{k}", cty(self.func.vars[*v].ty))),
        );
        let mut text = format!("({}) {{\n", ps.join(", "));
        for d in &body {
            text.push_str(&format!("    {d}\n"));
        }
        text.push_str(&format!("    return {value};\n}}\n"));
        // Named by its text (FNV-1a), so that programs holding several kernels of a region
        // (the first program, the combined one) define each helper once and never two helpers
        // under one name.
        let hash = format!("{t}{text}")
            .bytes()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, c| {
                (h ^ c as u64).wrapping_mul(0x100_0000_01b3)
            });
        let name = format!("pc_arm_r{}_{hash:016x}", self.rid);
        self.helpers
            .entry(format!("~{name}"))
            .or_insert_with(|| format!("static {t} {name}{text}"));
        let mut call: Vec<String> = self.kernel_args();
        call.extend(args);
        Some(format!("{name}({})", call.join(", ")))
    }

    /// A fold: its accumulator declared and its loops run before the statement (the lowering
    /// puts no fold where only some paths evaluate it), the accumulator as the value.
    #[allow(clippy::too_many_arguments)]
    fn fold(
        &mut self,
        op: crate::ir::ReduceOp,
        vars: &[VarId],
        counts: &[ExprId],
        init: ExprId,
        elem: ExprId,
        t: Scalar,
        pre: &mut Vec<String>,
        cond: bool,
    ) -> String {
        debug_assert!(!cond, "a fold under a condition");
        let ct = cty(t);
        let init = self.expr(init, pre, cond);
        let counts: Vec<String> = counts.iter().map(|c| self.expr(*c, pre, cond)).collect();
        let acc = self.local();
        // The tap in a C block of its own: its `let`s are declared inside the loop.
        self.declared.push(HashSet::new());
        let saved = std::mem::replace(&mut self.nesting, 0);
        let mut body = Vec::new();
        let v = self.expr(elem, &mut body, false);
        self.nesting = saved;
        self.declared.pop();
        let step = match op {
            crate::ir::ReduceOp::Min => {
                format!("(({ct}){})", call_c(Builtin::Min, &[acc.clone(), v], t))
            }
            crate::ir::ReduceOp::Max => {
                format!("(({ct}){})", call_c(Builtin::Max, &[acc.clone(), v], t))
            }
            _ if t.is_float() => format!("(({acc}) + ({v}))"),
            _ => wrapping(BinOp::Add, &acc, &v, t, t),
        };
        let mut text = String::new();
        for (var, c) in vars.iter().zip(&counts) {
            let name = self.var(*var);
            text.push_str(&format!("for (int {name} = 0; {name} < ({c}); {name}++) "));
        }
        text.push_str(&format!("{{ {} {acc} = {step}; }}", body.join(" ")));
        pre.push(format!("{ct} {acc} = {init};"));
        pre.push(text);
        acc
    }

    /// A variable as an expression prints it (its name, or the value printed in its place).
    fn expr_var(&self, v: VarId) -> String {
        match self.subst.get(&v) {
            Some(s) => s.clone(),
            None => self.var(v),
        }
    }
}

/// The variables `e` reads that it does not bind, in order of first appearance.
fn free_vars(func: &crate::lir::Func, e: ExprId, bound: &mut HashSet<VarId>, out: &mut Vec<VarId>) {
    match &func.exprs[e].kind {
        K::Var(v) => {
            if !bound.contains(v) && !out.contains(v) {
                out.push(*v);
            }
        }
        K::Let(v, a, body) => {
            free_vars(func, *a, bound, out);
            let fresh = bound.insert(*v);
            free_vars(func, *body, bound, out);
            if fresh {
                bound.remove(v);
            }
        }
        K::Fold {
            vars,
            counts,
            init,
            elem,
            ..
        } => {
            for c in counts.iter().chain([init]) {
                free_vars(func, *c, bound, out);
            }
            let fresh: Vec<VarId> = vars.iter().copied().filter(|v| bound.insert(*v)).collect();
            free_vars(func, *elem, bound, out);
            for v in fresh {
                bound.remove(&v);
            }
        }
        kind => {
            for c in expr_children(kind) {
                free_vars(func, c, bound, out);
            }
        }
    }
}

/// `x op y` for an integer `+ - *` that wraps at type `t` (operands of type `ot`): computed in
/// the unsigned type, converted back.
fn wrapping(op: BinOp, x: &str, y: &str, t: Scalar, ot: Scalar) -> String {
    let (ct, u) = (cty(t), unsigned(ot));
    format!("(({ct})(({u})({x}) {} ({u})({y})))", c_op(op))
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
        Builtin::CacheBytes => format!("{}L", crate::ir::CACHE_BYTES),
        Builtin::Fuses => "1".to_string(),
        b => format!("{}({})", b.name(), xs[0]),
    }
}
