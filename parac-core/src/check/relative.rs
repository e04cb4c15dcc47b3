//! Subscripts as offsets relative to the index variables (`ity - 2`, `2*it1x + 1`), found by
//! evaluating them on sample sizes: an affine form whose coefficients and offset do not depend
//! on the sizes is printed relative; anything else (a size, a `let`, data) stays as written.

use super::eval::{Env, Val, eval};
use super::sample::samples;
use crate::ir::*;

/// `coef * var` terms by slot, plus a constant offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Affine {
    /// Coefficient per iteration slot (0 when the variable does not appear).
    pub coefs: Vec<i64>,
    /// Constant offset.
    pub offset: i64,
}

fn at(e: &Expr, env: &mut Env, vars: &[i64]) -> Option<i64> {
    env.vars = vars.iter().map(|v| Some(*v)).collect();
    eval(e, env).and_then(Val::int)
}

/// The affine form of an index expression of region `r`, if it has one independent of sizes.
pub fn affine(f: &Function, r: &Region, e: &Expr) -> Option<Affine> {
    let mut found: Option<Affine> = None;
    for s in samples(f) {
        let mut env = s.env;
        env.locals = vec![None; r.locals.len()];
        let n = r.dims.len();
        let zero = vec![0; n];
        let base = at(e, &mut env, &zero)?;
        let mut coefs = vec![0; n];
        for (slot, c) in coefs.iter_mut().enumerate() {
            let mut v = zero.clone();
            v[slot] = 1;
            *c = at(e, &mut env, &v)?.wrapping_sub(base);
        }
        // Check linearity on a few other points.
        for probe in [[3, 5, 7], [11, 2, 9], [6, 13, 1]] {
            let v: Vec<i64> = (0..n).map(|i| probe[i]).collect();
            let want = coefs
                .iter()
                .zip(&v)
                .fold(base, |acc, (c, x)| acc.wrapping_add(c.wrapping_mul(*x)));
            if at(e, &mut env, &v)? != want {
                return None;
            }
        }
        let a = Affine {
            coefs,
            offset: base,
        };
        match &found {
            Some(prev) if *prev != a => return None,
            _ => found = Some(a),
        }
    }
    found
}

/// Renders `coef*var + offset` with the region's variable names.
pub fn render(r: &Region, a: &Affine, extra: i64) -> String {
    let mut s = String::new();
    for (slot, c) in a.coefs.iter().enumerate() {
        if *c == 0 {
            continue;
        }
        let var = r.dims[slot].as_ref().map_or("?", |d| d.var.as_str());
        if !s.is_empty() {
            s.push_str(if *c < 0 { "-" } else { "+" });
        } else if *c < 0 {
            s.push('-');
        }
        if c.abs() != 1 {
            s.push_str(&format!("{}*", c.abs()));
        }
        s.push_str(var);
    }
    let off = a.offset.saturating_add(extra);
    match (s.is_empty(), off) {
        (true, o) => o.to_string(),
        (false, 0) => s,
        (false, o) if o > 0 => format!("{s}+{o}"),
        (false, o) => format!("{s}{o}"),
    }
}
