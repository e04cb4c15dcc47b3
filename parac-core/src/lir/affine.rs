//! Affine forms of integer expressions of the LIR: `e ≡ Σ coef·leaf + constant (mod 2^bits)`,
//! the leaves being variables, sizes, host scalars and dimensions taken as the integers they
//! hold. Arithmetic wraps at the expression's type, so a form holds modulo the narrowest width
//! it went through (`bits`): a widening cast of a sum keeps the congruence, not the value.
//!
//! What the passes conclude from forms: two indices whose forms differ by a constant `c`
//! modulo `2^bits` are `c` apart as values where both are proven inside a dimension below
//! `2^(bits - 1) - |c|` (the dimensions of matrices are `int`-sized): the only values
//! congruent to `c` within that range are `c` itself.

use super::{ExprId, ExprKind, Func, VarId};
use crate::interp::value::bits;
use crate::ir::BinOp;

/// What a form is made of besides its constant.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub enum Leaf {
    /// A variable (by index).
    Var(usize),
    /// A size symbol.
    Size(usize),
    /// A host scalar.
    Host(usize),
    /// Dimension `k` of a matrix.
    Dim(usize, usize),
    /// A variable shifted right by a constant (`y >> 1`: an upsampling read's index, see
    /// `pass::peephole`).
    Shr(usize, u32),
}

/// `Σ coef·leaf + constant`, modulo `2^bits`.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Affine {
    /// Leaves with non-zero coefficients, sorted by leaf.
    pub terms: Vec<(Leaf, i128)>,
    /// The constant.
    pub constant: i128,
    /// The width the congruence holds at.
    pub bits: u32,
}

impl Affine {
    fn leaf(l: Leaf, bits: u32) -> Affine {
        Affine {
            terms: vec![(l, 1)],
            constant: 0,
            bits,
        }
    }

    fn constant(c: i128, bits: u32) -> Affine {
        Affine {
            terms: vec![],
            constant: c,
            bits,
        }
        .reduce()
    }

    /// Coefficients and constant brought into `(-2^(bits-1), 2^(bits-1)]`, zero terms dropped.
    fn reduce(mut self) -> Affine {
        let m = 1i128 << self.bits.min(100);
        let r = |v: i128| {
            let v = v.rem_euclid(m);
            if v > m / 2 { v - m } else { v }
        };
        self.constant = r(self.constant);
        self.terms = self
            .terms
            .into_iter()
            .map(|(l, c)| (l, r(c)))
            .filter(|(_, c)| *c != 0)
            .collect();
        self
    }

    fn combine(&self, o: &Affine, sign: i128) -> Affine {
        let mut terms = self.terms.clone();
        for (l, c) in &o.terms {
            match terms.iter_mut().find(|(k, _)| k == l) {
                Some(t) => t.1 += sign * c,
                None => terms.push((*l, sign * c)),
            }
        }
        terms.sort();
        Affine {
            terms,
            constant: self.constant + sign * o.constant,
            bits: self.bits.min(o.bits),
        }
        .reduce()
    }

    fn scale(&self, k: i128) -> Affine {
        Affine {
            terms: self.terms.iter().map(|(l, c)| (*l, c * k)).collect(),
            constant: self.constant * k,
            bits: self.bits,
        }
        .reduce()
    }

    /// `self - o` where it is a constant at the narrower width of the two.
    pub fn offset_from(&self, o: &Affine) -> Option<i128> {
        let d = self.combine(o, -1);
        d.terms.is_empty().then_some(d.constant)
    }

    /// `self` with leaf `l` replaced by the form `by` (a `let`'s variable by its value): the
    /// congruence holds at the narrower width of the two.
    pub fn substitute(&self, l: Leaf, by: &Affine) -> Affine {
        let Some(&(_, c)) = self.terms.iter().find(|(k, _)| *k == l) else {
            return self.clone();
        };
        let rest = Affine {
            terms: self
                .terms
                .iter()
                .filter(|(k, _)| *k != l)
                .cloned()
                .collect(),
            ..self.clone()
        };
        rest.combine(&by.scale(c), 1)
    }

    /// The coefficient of variable `v`.
    pub fn coef(&self, v: VarId) -> i128 {
        self.terms
            .iter()
            .find(|(l, _)| *l == Leaf::Var(v.index()))
            .map_or(0, |t| t.1)
    }
}

/// The affine form of integer expression `e`, if it has one (`+`, `-`, negation, `*` by a
/// constant, casts between integer types of 32 bits or more, over leaves and constants).
pub fn affine(func: &Func, e: ExprId) -> Option<Affine> {
    let x = &func.exprs[e];
    if !x.ty.is_int() || x.lanes != 1 {
        return None;
    }
    let w = bits(x.ty);
    if w < 32 {
        return None;
    }
    let int = |a: ExprId| match func.exprs[a].kind {
        ExprKind::Int(k) => Some(k),
        _ => None,
    };
    Some(match &x.kind {
        ExprKind::Int(k) => Affine::constant(*k, w),
        ExprKind::Var(v) => Affine::leaf(Leaf::Var(v.index()), w),
        ExprKind::Size(s) => Affine::leaf(Leaf::Size(*s), w),
        ExprKind::Host(h) => Affine::leaf(Leaf::Host(*h), w),
        ExprKind::Dim(m, k) => Affine::leaf(Leaf::Dim(*m, *k), w),
        ExprKind::Binary(BinOp::Shr, a, b) => match (&func.exprs[*a].kind, int(*b)) {
            (ExprKind::Var(v), Some(k)) if (0..64).contains(&k) => {
                Affine::leaf(Leaf::Shr(v.index(), k as u32), w)
            }
            _ => return None,
        },
        ExprKind::Cast(a) => {
            let mut f = affine(func, *a)?;
            f.bits = f.bits.min(w);
            f.reduce()
        }
        ExprKind::Unary(crate::ir::UnOp::Neg, a) => affine(func, *a)?.scale(-1),
        ExprKind::Unary(crate::ir::UnOp::Plus, a) => affine(func, *a)?,
        ExprKind::Binary(BinOp::Add, a, b) => affine(func, *a)?.combine(&affine(func, *b)?, 1),
        ExprKind::Binary(BinOp::Sub, a, b) => affine(func, *a)?.combine(&affine(func, *b)?, -1),
        ExprKind::Binary(BinOp::Mul, a, b) => match (int(*a), int(*b)) {
            (_, Some(k)) => affine(func, *a)?.scale(k),
            (Some(k), _) => affine(func, *b)?.scale(k),
            _ => return None,
        },
        _ => return None,
    })
}
