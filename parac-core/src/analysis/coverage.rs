//! Which matrices a pipeline overwrites whole before anything reads them: the device need not
//! clear those when it allocates them (a zero fill of every intermediate and output is a pass
//! over memory as costly as a stage).
//!
//! A matrix (an output or a local) is *written whole* when the first region of the host steps
//! that touches it is an iterator that does not read it and stores, outside any `if`, at
//! `m[v_a][v_b]..` with one distinct index variable per dimension (coefficient 1, offset 0),
//! each running with step 1 from 0 to that dimension's size on every sample size.

use crate::check::eval::{Val, eval};
use crate::check::relative::affine;
use crate::check::sample::samples;
use crate::ir::*;

/// Per matrix of `f`, whether it is written whole before it is read (always false for inputs
/// and constants).
pub fn written_whole(f: &Function) -> Vec<bool> {
    (0..f.matrices.len()).map(|m| whole(f, m)).collect()
}

fn whole(f: &Function, m: MatrixId) -> bool {
    if !matches!(f.matrices[m].kind, MatrixKind::Output | MatrixKind::Local) {
        return false;
    }
    let first = f.steps.iter().find_map(|s| match s {
        HostStep::Run(rid) if f.regions[*rid].accesses.iter().any(|a| a.matrix == m) => Some(*rid),
        _ => None,
    });
    let Some(rid) = first else {
        return false;
    };
    let r = &f.regions[rid];
    if !matches!(r.kind, RegionKind::Iterator)
        || r.accesses.iter().any(|a| a.matrix == m && !a.write)
    {
        return false;
    }
    r.body.iter().any(|s| match s {
        KStmt::Store(a, _) if r.accesses[*a].matrix == m => covers(f, r, *a),
        _ => false,
    })
}

/// Whether write `a` of `r` stores every element of its matrix.
fn covers(f: &Function, r: &Region, a: AccessId) -> bool {
    let acc = &r.accesses[a];
    let mat = &f.matrices[acc.matrix];
    let mut slots = Vec::new();
    for s in &acc.subs {
        let Sub::Point(e) = s else {
            return false;
        };
        let Some(form) = affine(f, r, e) else {
            return false;
        };
        let vars: Vec<usize> = (0..form.coefs.len())
            .filter(|s| form.coefs[*s] != 0)
            .collect();
        match vars.as_slice() {
            [s] if form.coefs[*s] == 1 && form.offset == 0 && !slots.contains(s) => slots.push(*s),
            _ => return false,
        }
    }
    let samples = samples(f);
    !samples.is_empty()
        && slots.iter().enumerate().all(|(k, s)| {
            let Some(Some(d)) = r.dims.get(*s) else {
                return false;
            };
            d.step == 1
                && samples.iter().all(|smp| {
                    let int = |e: &Expr| eval(e, &smp.env).and_then(Val::int);
                    int(&d.lo) == Some(0) && int(&d.hi).is_some() && int(&d.hi) == int(&mat.dims[k])
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole_of(src: &str) -> Vec<(String, bool)> {
        let out = crate::compile_str(src);
        assert!(out.diagnostics.is_empty(), "{:?}", out.diagnostics);
        let f = &out.module.functions[0];
        f.matrices
            .iter()
            .map(|m| m.name.clone())
            .zip(written_whole(f))
            .collect()
    }

    fn get(v: &[(String, bool)], name: &str) -> bool {
        v.iter().find(|(n, _)| n == name).unwrap().1
    }

    #[test]
    fn a_full_map_is_whole() {
        let v = whole_of(
            "fn f(a: &u8[M][N], o: &mut u8[M][N]) {
                let t: u8[M][N];
                parac_iterator it(0:M:1; 0:N:1) { t[itx][ity] = a[itx][ity] + 1; }
                parac_iterator it2(0:M:1; 0:N:1) { o[it2x][it2y] = t[it2x][it2y]; }
            }",
        );
        assert!(get(&v, "t") && get(&v, "o"));
        assert!(!get(&v, "a"));
    }

    #[test]
    fn partial_conditional_shifted_or_read_first_is_not() {
        let v = whole_of(
            "fn f(a: &u8[M][N], o: &mut u8[M][N], p: &mut u8[M][N], q: &mut u8[M][N], s: &mut u8[M][N]) {
                parac_iterator it(0:M:1; 1:N:1) { o[itx][ity] = a[itx][ity]; }
                parac_iterator it2(0:M:1; 0:N:1) { if (a[it2x][it2y] > 3) { p[it2x][it2y] = 1; } }
                parac_iterator it3(0:M-1:1; 0:N:1) { q[it3x + 1][it3y] = 1; }
                parac_iterator it4(0:M:1; 0:N:1) { s[it4x][it4y] = s[it4x][it4y] + 1; }
            }",
        );
        for m in ["o", "p", "q", "s"] {
            assert!(!get(&v, m), "{m}");
        }
    }

    #[test]
    fn a_transposed_store_covers_too() {
        let v = whole_of(
            "fn f(a: &u8[M][N], o: &mut u8[N][M]) {
                parac_iterator it(0:M:1; 0:N:1) { o[ity][itx] = a[itx][ity]; }
            }",
        );
        assert!(get(&v, "o"));
    }
}
