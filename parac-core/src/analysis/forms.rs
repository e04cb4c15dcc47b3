//! The subscripts of a region's accesses as affine forms of the index variables, evaluated
//! through the kernel's `let`s: `down[y0][x0]` with `let y0 = it2x / 2` is judged on
//! `it2x / 2`. As in [`check::relative`](crate::check::relative), a form is found by evaluating
//! the subscript (exactly, with C semantics) at the origin and at unit points, checked on a few
//! other points and on every sample size (both scales, so that `N/4 - 1`, constant on sizes
//! 16 to 19, is seen to depend on `N`); a form whose coefficients or offset change with the
//! sizes, or that depends on data or unknown host values, is `None`.
//!
//! Forms are in the index variables, so a subscript that is affine only on the iteration
//! lattice, such as `down[itx / 4]` in a slot `0:M:4`, has none (it is a gather for the
//! feature analysis).
//!
//! All the subscripts of a region are evaluated together, with the `let`s computed once per
//! point, so the cost is linear in the size of the body.

use crate::check::eval::{Env, Val, eval};
use crate::check::relative::Affine;
use crate::check::sample::samples;
use crate::ir::*;

/// Points (by slot) where linearity is checked, besides the origin and the unit points.
const PROBES: [[i64; 3]; 3] = [[3, 5, 7], [11, 2, 9], [6, 13, 1]];

/// The expression giving a subscript's first position: a point's index, a window's start.
fn position(sub: &Sub) -> Option<&Expr> {
    match sub {
        Sub::Point(e) => Some(e),
        Sub::Window { start, .. } => Some(start),
        Sub::Star => None,
    }
}

/// Per access, per subscript: its affine form, if it has one independent of the sizes.
pub fn subscript_forms(f: &Function, r: &Region) -> Vec<Vec<Option<Affine>>> {
    let n = r.dims.len();
    // The `let`s in program order (kernel locals are defined once each).
    let mut lets: Vec<(LocalId, &Expr)> = Vec::new();
    KStmt::walk(&r.body, &mut |s, _| {
        if let KStmt::Let(l, e) = s
            && !e.ty.is_block()
        {
            lets.push((*l, e));
        }
    });
    let exprs: Vec<Vec<Option<&Expr>>> = r
        .accesses
        .iter()
        .map(|a| a.subs.iter().map(position).collect())
        .collect();
    let mut points: Vec<Vec<i64>> = vec![vec![0; n]];
    for slot in 0..n {
        let mut v = vec![0; n];
        v[slot] = 1;
        points.push(v);
    }
    for p in PROBES {
        points.push(p[..n.min(3)].to_vec());
    }
    let mut found: Vec<Vec<Option<Affine>>> = Vec::new();
    for (k, s) in samples(f).into_iter().enumerate() {
        let mut env: Env = s.env;
        // values[point][access][sub]
        let values: Vec<Vec<Vec<Option<i64>>>> = points
            .iter()
            .map(|p| {
                env.vars = p.iter().map(|v| Some(*v)).collect();
                env.locals = vec![None; r.locals.len()];
                for (l, e) in &lets {
                    env.locals[*l] = eval(e, &env);
                }
                exprs
                    .iter()
                    .map(|subs| {
                        subs.iter()
                            .map(|e| eval((*e)?, &env).and_then(Val::int))
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let forms: Vec<Vec<Option<Affine>>> = exprs
            .iter()
            .enumerate()
            .map(|(a, subs)| (0..subs.len()).map(|d| form(&values, a, d, n)).collect())
            .collect();
        if k == 0 {
            found = forms;
        } else {
            for (prev, now) in found.iter_mut().zip(forms) {
                for (p, x) in prev.iter_mut().zip(now) {
                    if *p != x {
                        *p = None;
                    }
                }
            }
        }
    }
    found
}

/// The affine form of subscript `d` of access `a` from its values at the origin, the unit
/// points and the probes, if the probes agree with it.
fn form(values: &[Vec<Vec<Option<i64>>>], a: usize, d: usize, n: usize) -> Option<Affine> {
    let at = |p: usize| values[p][a][d];
    let base = at(0)?;
    let coefs: Vec<i64> = (0..n)
        .map(|slot| Some(at(1 + slot)?.wrapping_sub(base)))
        .collect::<Option<_>>()?;
    for (i, probe) in PROBES.iter().enumerate() {
        let want = coefs
            .iter()
            .zip(probe)
            .fold(base, |acc, (c, x)| acc.wrapping_add(c.wrapping_mul(*x)));
        if at(1 + n + i)? != want {
            return None;
        }
    }
    Some(Affine {
        coefs,
        offset: base,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forms_of(src: &str) -> Vec<Vec<Option<Affine>>> {
        let out = crate::compile_str(src);
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let f = &out.module.functions[0];
        subscript_forms(f, &f.regions[0])
    }

    fn aff(coefs: &[i64], offset: i64) -> Option<Affine> {
        Some(Affine {
            coefs: coefs.to_vec(),
            offset,
        })
    }

    #[test]
    fn subscripts_are_evaluated_through_lets() {
        let f = forms_of(
            "fn f(a: &u8[M][N], o: &mut u8[M][N]) {
                parac_iterator it(0:M/2:1; 2:N/2:1) {
                    let r = itx + 1;
                    let c = 2 * ity - 3;
                    let h = itx / 2;
                    o[itx][ity] = a[r][c] + a[h][ity] + parac_matrix_sum(a[itx][ity-1:3:1]) + a[itx][N/4 - 1];
                }
            }",
        );
        // o, a[r][c], a[h][ity], the window, a[itx][N/4 - 1].
        assert_eq!(f[0], vec![aff(&[1, 0], 0), aff(&[0, 1], 0)]);
        assert_eq!(f[1], vec![aff(&[1, 0], 1), aff(&[0, 2], -3)]);
        assert_eq!(f[2], vec![None, aff(&[0, 1], 0)]);
        assert_eq!(f[3], vec![aff(&[1, 0], 0), aff(&[0, 1], -1)]);
        assert_eq!(f[4], vec![aff(&[1, 0], 0), None]);
    }

    #[test]
    fn size_dependent_and_data_dependent_subscripts_have_no_form() {
        let f = forms_of(
            "fn f(a: &u8[M][N], o: &mut u8[M][N]) {
                parac_iterator it(0:M:1; 0:N:1) {
                    let v = a[itx][ity];
                    o[itx][ity] = a[itx][N - 1 - ity] + a[v][ity];
                }
            }",
        );
        // a[itx][ity] (the let), o, a[itx][N - 1 - ity], a[v][ity].
        assert_eq!(f[0], vec![aff(&[1, 0], 0), aff(&[0, 1], 0)]);
        assert_eq!(
            f[2],
            vec![aff(&[1, 0], 0), None],
            "N - 1 - ity: offset depends on N"
        );
        assert_eq!(f[3], vec![None, aff(&[0, 1], 0)], "a[v]: data");
    }
}
