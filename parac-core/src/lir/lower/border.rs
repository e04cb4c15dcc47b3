//! Reads through a shorthand border rule (`ir::BorderMode`), lowered per dimension: each
//! bordered index is `select(0 <= i < S, i, map(i))`, where `map` is the mode's closed form for
//! any distance and any size (`ir::BorderMode::index`, which the interpreter runs), so a tap
//! costs one index map per dimension, not one test per entry of the rule, and a window larger
//! than the image reads what OpenCV reads. The tests are the ones `pass::partition` decides in
//! an interior, where the read becomes the plain load.

use super::{Lower, Mode};
use crate::ir::{BinOp, BorderMode, Builtin, MatrixId, Scalar, Shorthand};
use crate::lir::{Buf, ExprId, ExprKind, VarId};

impl<'a> Lower<'a> {
    /// Matrix `m` read at `index` as type `want`, through shorthand `sh`.
    pub(super) fn shorthand_load(
        &mut self,
        sh: &'a Shorthand,
        m: MatrixId,
        index: Vec<ExprId>,
        want: Scalar,
    ) -> ExprId {
        let i64t = Scalar::I64;
        let vars: Vec<VarId> = (0..index.len())
            .map(|k| self.out.var(&format!("i{k}"), i64t))
            .collect();
        let uses: Vec<ExprId> = vars
            .iter()
            .map(|v| self.out.expr(ExprKind::Var(*v), i64t))
            .collect();
        let bordered = |k: usize| sh.widths[k].is_some();
        let mut e = match &sh.mode {
            BorderMode::Constant(value) => {
                let read = self.read(m, uses.clone(), want);
                let inb = (0..uses.len())
                    .filter(|k| bordered(*k))
                    .map(|k| self.inside(m, k, uses[k]))
                    .collect();
                let inb = self.all(inb);
                let bare = (0..uses.len())
                    .filter(|k| !bordered(*k))
                    .map(|k| self.inside(m, k, uses[k]))
                    .collect();
                let bare = self.all(bare);
                let v = self.scalar(value, Mode::Body);
                let v = self.out.cast(v, want);
                // Outside a dimension without a border: the checked read's error.
                let out = self.out.expr(ExprKind::Select(bare, v, read), want);
                self.out.expr(ExprKind::Select(inb, read, out), want)
            }
            mode => {
                let at = (0..uses.len())
                    .map(|k| match bordered(k) {
                        true => self.mapped(mode, m, k, uses[k]),
                        false => uses[k],
                    })
                    .collect();
                self.read(m, at, want)
            }
        };
        for (v, i) in vars.iter().zip(index).rev() {
            e = self.out.expr(ExprKind::Let(*v, i, e), want);
        }
        e
    }

    /// The checked read of `m` at `index`, as `want`.
    fn read(&mut self, m: MatrixId, index: Vec<ExprId>, want: Scalar) -> ExprId {
        let elem = self.f.matrices[m].elem;
        let l = self.out.expr(
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked: true,
            },
            elem,
        );
        self.out.cast(l, want)
    }

    /// `select(0 <= i < S, i, map(i))` for dimension `k` of `m` under `mode` (not constant).
    fn mapped(&mut self, mode: &BorderMode, m: MatrixId, k: usize, i: ExprId) -> ExprId {
        let t = Scalar::I64;
        let b = Scalar::Bool;
        let s = self.out.expr(ExprKind::Dim(m, k), t);
        let int = |l: &mut Self, v: i128| l.out.int(v, t);
        let (zero, one, two) = (int(self, 0), int(self, 1), int(self, 2));
        let s1 = self.out.binary(BinOp::Sub, s, one, t);
        // `((x % p) + p) % p`, `p` known positive where it is evaluated.
        let emod = |l: &mut Self, x: ExprId, p: ExprId| {
            let p = l.out.expr(ExprKind::Call(Builtin::NonZero, vec![p]), t);
            let r = l.out.binary(BinOp::Rem, x, p, t);
            let r = l.out.binary(BinOp::Add, r, p, t);
            l.out.binary(BinOp::Rem, r, p, t)
        };
        // Where `S` is too small for the mode, `i` itself: the checked read's error.
        let guarded = |l: &mut Self, min: i128, v: ExprId| {
            let lim = l.out.int(min, t);
            let ok = l.out.binary(BinOp::Ge, s, lim, b);
            l.out.expr(ExprKind::Select(ok, v, i), t)
        };
        let out = match mode {
            BorderMode::Replicate => {
                let neg = self.out.binary(BinOp::Lt, i, zero, b);
                self.out.expr(ExprKind::Select(neg, zero, s1), t)
            }
            BorderMode::Wrap => {
                let v = emod(self, i, s);
                guarded(self, 1, v)
            }
            BorderMode::Reflect | BorderMode::Reflect101 => {
                // Period `p`; the index `q` in it, folded back past `S`.
                let r101 = matches!(mode, BorderMode::Reflect101);
                let p = match r101 {
                    true => self.out.binary(BinOp::Sub, s, one, t),
                    false => s,
                };
                let p = self.out.binary(BinOp::Mul, p, two, t);
                let q = emod(self, i, p);
                let lt = self.out.binary(BinOp::Lt, q, s, b);
                let last = match r101 {
                    true => p,
                    false => self.out.binary(BinOp::Sub, p, one, t),
                };
                let back = self.out.binary(BinOp::Sub, last, q, t);
                let mut v = self.out.expr(ExprKind::Select(lt, q, back), t);
                if r101 {
                    // A 1-wide dimension reads its one element.
                    let is1 = self.out.binary(BinOp::Eq, s, one, b);
                    v = self.out.expr(ExprKind::Select(is1, zero, v), t);
                }
                guarded(self, 1, v)
            }
            BorderMode::Constant(_) => unreachable!("constant reads are not mapped"),
        };
        let inb = self.inside(m, k, i);
        self.out.expr(ExprKind::Select(inb, i, out), t)
    }
}
