//! Which matrices a pipeline overwrites whole before anything reads them: the device need not
//! clear those when it allocates them (a zero fill of every intermediate and output is a pass
//! over memory as costly as a stage).
//!
//! A matrix (an output or a local) is *written whole* when the first region of the host steps
//! that touches it is an iterator that does not read it and stores, outside any `if`, at
//! `m[v_a][v_b]..` with one distinct index variable per dimension (coefficient 1, offset 0),
//! each running with step 1 from 0 to that dimension's size on every sample size. Some
//! dimensions may instead have constant subscripts, when the stores with the same variables
//! together take every combination of those dimensions' indices (`out[0][x][y]`, `out[1][x][y]`
//! and `out[2][x][y]` write a `[3][M][N]` matrix whole). A matrix `parac_swap` names, or first
//! touched inside a `parac_repeat` (which may run no time step), is not.

use crate::check::eval::{Val, eval};
use crate::check::relative::affine;
use crate::check::sample::{Sample, samples};
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
    // A matrix swapped, or first touched in a time step (which may not run), is cleared.
    if f.swapped()[m] {
        return false;
    }
    let mut first = None;
    f.each_step(|s, depth| match s {
        HostStep::Run(rid)
            if first.is_none() && f.regions[*rid].accesses.iter().any(|a| a.matrix == m) =>
        {
            first = Some((*rid, depth));
        }
        _ => {}
    });
    let Some((rid, 0)) = first else {
        return false;
    };
    region_writes_whole(f, rid, m)
}

/// Whether iterator `rid` stores every element of matrix `m` (as above) and does not read it.
pub fn region_writes_whole(f: &Function, rid: RegionId, m: MatrixId) -> bool {
    let r = &f.regions[rid];
    if !matches!(r.kind, RegionKind::Iterator)
        || r.accesses.iter().any(|a| a.matrix == m && !a.write)
    {
        return false;
    }
    let patterns: Vec<Vec<Slot>> = r
        .body
        .iter()
        .filter_map(|s| match s {
            KStmt::Store(a, _) if r.accesses[*a].matrix == m => pattern(f, r, *a),
            _ => None,
        })
        .collect();
    let samples = samples(f);
    !samples.is_empty()
        && patterns.iter().any(|p| {
            // The stores with the same index variables in the same dimensions, which together
            // must store every combination of the constant dimensions' indices.
            let group: Vec<&Vec<Slot>> = patterns.iter().filter(|q| same_vars(p, q)).collect();
            samples.iter().all(|smp| covers(f, r, m, &group, smp))
        })
}

/// One subscript of a store: an index variable (coefficient 1, offset 0) or a constant.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Slot {
    Var(usize),
    Const(i64),
}

/// The subscripts of write `a` of `r`, when each is one index variable (the variable itself,
/// through casts at most) or a constant (an expression of sizes, host scalars and literals:
/// no variable, local or load), and no variable appears twice. The affine form alone would not
/// do: it is found by sampling, and `x / 64` or `x % 64` look constant or like `x` on small
/// samples.
fn pattern(f: &Function, r: &Region, a: AccessId) -> Option<Vec<Slot>> {
    let mut slots = Vec::new();
    for s in &r.accesses[a].subs {
        let Sub::Point(e) = s else {
            return None;
        };
        let slot = match plain_var(e) {
            Some(v) if !slots.contains(&Slot::Var(v)) => Slot::Var(v),
            Some(_) => return None,
            None if constant(e) => {
                let form = affine(f, r, e)?;
                if form.coefs.iter().any(|c| *c != 0) {
                    return None;
                }
                Slot::Const(form.offset)
            }
            None => return None,
        };
        slots.push(slot);
    }
    Some(slots)
}

/// The index variable `e` is, looking through casts.
fn plain_var(e: &Expr) -> Option<usize> {
    match &e.kind {
        ExprKind::Var(v) => Some(*v),
        ExprKind::Cast(inner, to) if to.is_int() => plain_var(inner),
        _ => None,
    }
}

/// Whether `e` depends on no index variable, kernel local or matrix element.
fn constant(e: &Expr) -> bool {
    let mut ok = true;
    e.walk(&mut |x| {
        if matches!(
            x.kind,
            ExprKind::Var(_) | ExprKind::Local(_) | ExprKind::Load(_) | ExprKind::Block(_)
        ) {
            ok = false;
        }
    });
    ok
}

fn same_vars(p: &[Slot], q: &[Slot]) -> bool {
    p.len() == q.len()
        && p.iter().zip(q).all(|(a, b)| match (a, b) {
            (Slot::Var(x), Slot::Var(y)) => x == y,
            (Slot::Const(_), Slot::Const(_)) => true,
            _ => false,
        })
}

/// Whether the stores of `group` (same variables in the same dimensions) write every element
/// of matrix `m` on the sizes of `smp`: each variable runs with step 1 over its whole dimension,
/// and the constant subscripts take every combination of their dimensions' indices.
fn covers(f: &Function, r: &Region, m: MatrixId, group: &[&Vec<Slot>], smp: &Sample) -> bool {
    let int = |e: &Expr| eval(e, &smp.env).and_then(Val::int);
    let mat = &f.matrices[m];
    let Some(first) = group.first() else {
        return false;
    };
    // Every iteration dimension must be one of the store's: one it does not use could be empty
    // at run time (`0:N-16` with N = 16), and then nothing is written at all.
    let used = |s: usize| first.contains(&Slot::Var(s));
    if (0..r.dims.len()).any(|s| r.dims[s].is_some() && !used(s)) {
        return false;
    }
    let mut cells: u128 = 1;
    for (k, slot) in first.iter().enumerate() {
        let Some(size) = int(&mat.dims[k]) else {
            return false;
        };
        match slot {
            Slot::Var(s) => {
                let Some(Some(d)) = r.dims.get(*s) else {
                    return false;
                };
                if d.step != 1 || int(&d.lo) != Some(0) || int(&d.hi) != Some(size) {
                    return false;
                }
            }
            Slot::Const(_) => cells = cells.saturating_mul(size.max(0) as u128),
        }
    }
    // The distinct combinations of constant indices stored, each inside its dimension.
    let mut tuples: Vec<Vec<i64>> = Vec::new();
    for p in group {
        let t: Option<Vec<i64>> = p
            .iter()
            .zip(&mat.dims)
            .filter_map(|(slot, dim)| match slot {
                Slot::Const(c) => Some(int(dim).filter(|n| (0..*n).contains(c)).map(|_| *c)),
                Slot::Var(_) => None,
            })
            .collect();
        if let Some(t) = t.filter(|t| !tuples.contains(t)) {
            tuples.push(t);
        }
    }
    tuples.len() as u128 == cells
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

    #[test]
    fn constant_channels_cover_when_all_are_stored() {
        let v = whole_of(
            "fn f(a: &f32[3][M][N], o: &mut f32[3][M][N], p: &mut f32[3][M][N], q: &mut f32[2][M][N]) {
                parac_iterator it(0:M:1; 0:N:1) {
                    o[0][itx][ity] = a[0][itx][ity];
                    o[2][itx][ity] = a[2][itx][ity];
                    o[1][itx][ity] = a[1][itx][ity];
                }
                parac_iterator it2(0:M:1; 0:N:1) {
                    p[0][it2x][it2y] = a[0][it2x][it2y];
                    p[1][it2x][it2y] = a[1][it2x][it2y];
                    p[1][it2x][it2y] = a[2][it2x][it2y];
                }
                parac_iterator it3(0:M:1; 0:N-1:1) {
                    q[0][it3x][it3y] = a[0][it3x][it3y];
                    q[1][it3x][it3y] = a[1][it3x][it3y];
                }
            }",
        );
        assert!(get(&v, "o"));
        assert!(!get(&v, "p"), "channel 2 is never stored");
        assert!(!get(&v, "q"), "the last column is never stored");
    }

    #[test]
    fn a_subscript_that_only_looks_constant_on_small_samples_does_not_cover() {
        let v = whole_of(
            "fn f(a: &f32[M][N], o: &mut f32[2][M][N]) {
                parac_iterator it(0:M:1; 0:N:1) {
                    o[itx / 64][itx][ity] = a[itx][ity];
                    o[1][itx][ity] = a[itx][ity];
                }
            }",
        );
        assert!(!get(&v, "o"), "o[0] is only written for x < 64");
    }
}
