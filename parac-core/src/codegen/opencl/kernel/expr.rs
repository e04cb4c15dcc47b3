//! Expressions of the LIR in OpenCL C, with the LIR's semantics (`crate::lir`, as the
//! interpreter and the CPU path compute them):
//! - integer `+ - *` and negation wrap at the expression's type: computed in `uint`/`ulong`,
//!   converted back; shifts mask their amount by the operand's width;
//! - `/` and `%` by anything but a constant other than 0 and -1 go through `pc_div_T`/`pc_rem_T`
//!   (a zero divisor raises the flag with the region's division code and gives 0);
//! - a float converted to an integer saturates (`convert_T_sat`: NaN gives 0, as Rust's `as`);
//! - `select`, `&&` and `||` evaluate the arm taken only (C's `?:`, `&&`, `||`);
//! - `let x = a in b`: where `a` can be evaluated anywhere (no memory read, no failing
//!   division), or the `let` is not under a condition, `x` is declared before the statement
//!   (once per C block); otherwise `b` is printed with `a` in place of `x`.

use super::{Printer, cty, total, unsigned};
use crate::codegen::opencl::{c_float, c_int, call_c, c_op};
use crate::codegen::safety;
use crate::ir::{BinOp, Scalar, UnOp};
use crate::lir::ExprKind as K;
use crate::interp::value::bits;
use crate::lir::ExprId;

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
        let x = &self.func.exprs[e];
        let t = x.ty;
        let ct = cty(t);
        match x.kind.clone() {
            K::Int(v) => c_int(v, t),
            K::Float(v) => c_float(v),
            K::Var(v) => match self.subst.get(&v) {
                Some(s) => s.clone(),
                None => self.var(v),
            },
            K::Size(i) => format!("z{i}"),
            K::Host(h) => format!("(({ct})s{h})"),
            K::Dim(m, k) => self.dims[m][k].clone(),
            K::Load {
                buf,
                index,
                checked,
            } => {
                let idx: Vec<String> = index.iter().map(|i| self.expr(*i, pre, cond)).collect();
                self.load(buf, &idx, checked)
            }
            // No pass of the GPU lowering makes lanes yet.
            K::Ramp { base, .. } | K::Broadcast(base) => self.expr(base, pre, cond),
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
                let b = self.expr(b, pre, true);
                format!("(({ct})(({c}) ? ({a}) : ({b})))")
            }
            K::Let(v, a, body) => {
                let declared = self.declared.iter().any(|d| d.contains(&v));
                if declared {
                    return self.expr(body, pre, cond);
                }
                let value = self.expr(a, pre, cond);
                if !cond || total(self.func, a, &self.subst) {
                    let name = self.var(v);
                    let vt = cty(self.func.vars[v].ty);
                    pre.push(format!("const {vt} {name} = {value};"));
                    self.declared
                        .last_mut()
                        .expect("an open block")
                        .insert(v);
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
        let x = self.expr(a, pre, cond);
        let short = matches!(op, And | Or);
        let y = self.expr(b, pre, cond || short);
        let float = t.is_float() || ot.is_float();
        match op {
            Rem if float => format!("fmod({x}, {y})"),
            Eq | Ne | Lt | Le | Gt | Ge | And | Or => format!("(({x}) {} ({y}))", c_op(op)),
            _ if float => format!("(({x}) {} ({y}))", c_op(op)),
            Add | Sub | Mul | ElemMul => {
                let u = unsigned(ot);
                format!("(({ct})(({u})({x}) {} ({u})({y})))", c_op(op))
            }
            Div | Rem if divisor.is_some_and(|k| k != 0 && k != -1) => {
                format!("(({ct})(({x}) {} ({y})))", c_op(op))
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
