//! Split tiling on the CPU path (the split-tiling document, `../shared/paper/related-seeds.md`
//! section 1): a band of `K` time steps of a tileable `parac_repeat` (the legality of
//! `super::candidate`) runs in two phases, each a parallel loop over tasks of `H` whole rows
//! of the grids, with no point computed twice.
//!
//! The band's computations in order are positions `p = s n + i` (step `s` from 0, region `i` of
//! the step's `n`), each shrinking by the step's radius `r` (the widest row offset read):
//! `l(p) = (p + 1) r`.
//! - **Phase 1** (tasks at rows `v = 0, H, 2H, ..`): each task computes, position after
//!   position, its rows `[v + l(p), v + H - l(p))` (an upright trapezoid; not shrinking at the
//!   grid's first and last rows), reading only its own rows.
//! - **Phase 2** (tasks at rows `v = H/2, 3H/2, ..`, around the boundary `b = v + H/2` of two
//!   phase-1 tasks): each computes the rows between their trapezoids, `[b - l(p), b + l(p))`,
//!   reading what phase 1 left on either side and its own earlier positions.
//!
//! Each grid keeps its two matrices (the step's old and new grid, used in turn: step `s`
//! writes `h` for even `s`, `g` for odd), written and read in place: a task takes its rows of
//! both as [`Memory::Rows`] (tasks own disjoint rows, so a task may read what it writes). What
//! phase 2 reads of position `p - 1` (at most `l(p) + r` from `b`) is never overwritten by phase
//! 1's next write of that matrix (position `p - 1 + 2n` or, for a grid of this step, `p + n`,
//! shrunk by at least `l(p) + r`): both `l(q) - l(p) >= r` whenever `q > p`. Reads stay in the
//! task's rows when `H >= 2 (n K + 1) r`. After the band both matrices of every grid hold what
//! `K` steps leave in them, so the swaps follow where `K` is odd and the repeat's other steps run
//! as they were.
//!
//! ```text
//! region S1 {                                 // the regions' host proofs before it
//!   parallel_chunks for v in [0, M) step H {
//!     the task's rows of g1 as G1, of h1 as H1, ..
//!     for p: for x in [lo(p), hi(p)): for y: (s even ? H_i : G_i)[x - v][y] = S_i's point
//!   }
//! }
//! region S1 { parallel_chunks for v in [H/2, M - H/2) step H { .. rows [b - l(p), b + l(p)) } }
//! swap g1 h1; ..                              // K odd
//! ```

use super::{Band, banded, bind_rows, points_into, row_loop};
use crate::ir::{BinOp, Function, Scalar};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId};
use std::collections::HashMap;

/// What the split model weighs of a band: its regions per step, its radius (at least 1), and
/// whether its grids are 3-D (tasks of planes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Shape {
    pub(super) n: i64,
    pub(super) r: i64,
    pub(super) planes: bool,
}

impl Shape {
    pub(super) fn of(band: &Band) -> Shape {
        Shape {
            n: band.stages.len() as i64,
            r: band.radius.max(1) as i64,
            planes: band.stages.iter().any(|s| s.p.mid.is_some()),
        }
    }
}

/// The model's split band, at most `most` steps: as many steps as keep the rows a task's
/// phase-2 reads reach (`2 (n K + 1) r`, [`task_rows`]) within [`SPLIT_ROWS`] (a 3-D grid's
/// planes within [`SPLIT_PLANES`]), at least 2; and a task's rows where the program gives none
/// (`rows`; planes: [`SPLIT_PLANES`]). On the developers' 2-core machine
/// (benches/time_steps.rs, 4096², T = 64), against overlapped tiles of 8 steps: heat-2D within
/// noise (split bands of 8 to 32 steps, tasks of 32 to 128 rows: 187 to 216 ms, overlapped 193
/// to 208), FDTD-2D 1.2x and the game of life 1.2x faster (no region of three computed twice;
/// life's 3x3 sums recomputed cost more than the memory saved); heat-3D 256³ in bands of 7
/// steps, tasks of 16 planes 393-473 ms against 441-549 in tasks of 32 (three rounds).
pub(super) fn model(most: i64, rows: i64, s: Shape) -> (i64, i64) {
    let within = if s.planes { SPLIT_PLANES } else { SPLIT_ROWS };
    let k = (within / (2 * s.r) - 1) / s.n;
    let k = k.clamp(2, most.max(2));
    (k, if s.planes { SPLIT_PLANES } else { rows })
}

/// The rows the model's split bands keep a task's reads within.
const SPLIT_ROWS: i64 = 48;

/// The planes of a 3-D grid the model's split bands keep a task's reads within, and its task's
/// planes (heat-3D 256³ f32: 16 planes of both grids, 8 MB).
const SPLIT_PLANES: i64 = 16;

/// The rows of a split band's task for `k` steps: at least `rows`, even, and enough for phase
/// 2's reads to stay in its task (`2 (n k + 1) r`).
pub(super) fn task_rows(s: Shape, k: i64, rows: i64) -> i64 {
    let least = 2 * (s.n * k + 1) * s.r;
    let h = rows.max(least);
    h + h % 2
}

/// The repeat at `at` in split bands of `k` steps, tasks of [`task_rows`] rows; `guard`: under a
/// test that the task's rows of every grid fit the cache (`super::fits_cache`, made when the
/// repeat runs, the grid's width known), the repeat as it was otherwise.
pub(super) fn tile(
    func: &mut Func,
    f: &Function,
    at: StmtId,
    band: &Band,
    (k, rows): (i64, i64),
    guard: bool,
) -> Option<StmtId> {
    let first = &band.stages[0];
    let (_, xhi) = row_loop(func, band)?;
    let h = task_rows(Shape::of(band), k, rows);
    let i64t = Scalar::I64;
    let xt = func.vars[first.p.x].ty;
    let m = func.cast(xhi, i64t);
    let phases = [false, true].map(|second| {
        let v = func.var(if second { "sv" } else { "tv" }, xt);
        let body = task(func, f, band, (k as usize, h), (v, m), second);
        let half = func.int(i128::from(h / 2), xt);
        let (lo, hi) = match second {
            false => (func.int(0, xt), xhi),
            true => {
                let end = func.binary(BinOp::Sub, xhi, half, xt);
                (half, end)
            }
        };
        let tasks = func.for_loop(v, (lo, hi, h), LoopKind::ParallelChunks(None), body);
        func.stmt(Stmt::Region {
            id: first.id,
            name: first.name.clone(),
            body: tasks,
        })
    });
    // A task's rows of both matrices of every grid, per element of a row.
    let per_col: i128 = band
        .stages
        .iter()
        .map(|s| 2 * i128::from(h) * f.matrices[s.g].elem.bytes() as i128)
        .sum();
    let guard = guard.then_some(per_col);
    Some(banded(
        func,
        f,
        (at, band),
        (phases.to_vec(), k % 2 == 1),
        (k, guard),
    ))
}

/// A task of either phase at its first row `v`: its rows of both matrices of every grid, then
/// each position's rows.
fn task(
    func: &mut Func,
    f: &Function,
    band: &Band,
    (k, h): (usize, i64),
    (v, m): (crate::lir::VarId, ExprId),
    second: bool,
) -> StmtId {
    let i64t = Scalar::I64;
    let xt = func.vars[v].ty;
    let ve = func.expr(ExprKind::Var(v), xt);
    let v64 = func.cast(ve, i64t);
    let mut body = Vec::new();
    // Per grid: its rows of `g` and of `h`.
    let mut rows: Vec<[TempId; 2]> = Vec::new();
    for st in &band.stages {
        rows.push([st.g, st.p.t].map(|mat| {
            let (elem, memory) = (f.matrices[mat].elem, Memory::Rows(mat));
            let name = format!("rows_{}", f.matrices[mat].name);
            let t = func.temps.push(Temp { name, elem, memory });
            body.push(func.stmt(Stmt::Allocate {
                buf: Buf::Temp(t),
                elem,
                memory,
                extents: Vec::new(),
            }));
            t
        }));
    }
    let int = |func: &mut Func, c: i128| func.int(c, i64t);
    // Steps in pairs, a loop at run time (`pair`: `s = 2 pair` then `2 pair + 1`), the last
    // one alone where `k` is odd: the code has 2n copies of the regions' points, whatever `k`.
    let pair = func.var("tpair", Scalar::I32);
    let pe = func.expr(ExprKind::Var(pair), Scalar::I32);
    let pe = func.cast(pe, i64t);
    let mut pairs = Vec::new();
    for s in 0..2 {
        let two = int(func, 2);
        let first = func.binary(BinOp::Mul, pe, two, i64t);
        let step = int(func, s);
        let step = func.binary(BinOp::Add, first, step, i64t);
        positions(
            func,
            band,
            (step, s as usize),
            (v64, m, h, second),
            &rows,
            &mut pairs,
        );
    }
    let z = func.int(0, Scalar::I32);
    let count = func.int((k / 2) as i128, Scalar::I32);
    let pairs = func.stmt(Stmt::Block(pairs));
    body.push(func.for_loop(pair, (z, count, 1), LoopKind::Serial, pairs));
    if k % 2 == 1 {
        let last = int(func, (k - 1) as i128);
        positions(func, band, (last, 0), (v64, m, h, second), &rows, &mut body);
    }
    func.stmt(Stmt::Block(body))
}

/// Step `s`'s positions (its parity given: even steps write `h`), each region's rows of a task
/// of either phase at its first row `v`, into `out`.
fn positions(
    func: &mut Func,
    band: &Band,
    (s, parity): (ExprId, usize),
    (v64, m, h, second): (ExprId, ExprId, i64, bool),
    rows: &[[TempId; 2]],
    out: &mut Vec<StmtId>,
) {
    // Step `s` writes `h` (index 1) for even `s`, `g` for odd; reads the old grids from the
    // other one.
    let (new, old) = if parity == 0 { (1, 0) } else { (0, 1) };
    for (i, st) in band.stages.iter().enumerate() {
        let (lo, hi) = rows_at(func, Shape::of(band), (s, i), (v64, m, h, second));
        let (lo, hi) = bind_rows(func, (lo, hi), out);
        // The grids read: each old one from its matrix of the step before, the new ones of
        // the regions before this one from this step's.
        let mut from = HashMap::new();
        for (j, sj) in band.stages.iter().enumerate() {
            from.insert(sj.g, (Buf::Temp(rows[j][old]), Some(v64), None));
            from.insert(sj.p.t, (Buf::Temp(rows[j][new]), Some(v64), None));
        }
        out.push(points_into(
            func,
            &st.p,
            &from,
            (rows[i][new], v64),
            (lo, hi),
        ));
    }
}

/// Position `p = s n + i`'s rows `[lo, hi)` (`i64`s; `s` an `i64`) in a task of either phase
/// at its first row `v64` of `h` rows, the grid's `m`: phase 1's upright trapezoid, phase 2's
/// rows around the boundary `b = v + H/2`.
pub(super) fn rows_at(
    func: &mut Func,
    Shape { n, r, .. }: Shape,
    (s, i): (ExprId, usize),
    (v64, m, h, second): (ExprId, ExprId, i64, bool),
) -> (ExprId, ExprId) {
    let i64t = Scalar::I64;
    let int = |func: &mut Func, c: i128| func.int(c, i64t);
    let zero = int(func, 0);
    let he = int(func, i128::from(h));
    let end = func.binary(BinOp::Add, v64, he, i64t);
    // `l = (s n + i + 1) r`.
    let ne = int(func, i128::from(n));
    let at = func.binary(BinOp::Mul, s, ne, i64t);
    let off = int(func, i as i128 + 1);
    let at = func.binary(BinOp::Add, at, off, i64t);
    let re = int(func, i128::from(r));
    let l = func.binary(BinOp::Mul, at, re, i64t);
    if second {
        // Around `b = v + H/2`: `[b - l, min(b + l, M))`.
        let half = int(func, i128::from(h / 2));
        let b = func.binary(BinOp::Add, v64, half, i64t);
        let lo = func.binary(BinOp::Sub, b, l, i64t);
        let hi = func.binary(BinOp::Add, b, l, i64t);
        let hi = func.expr(ExprKind::Call(crate::ir::Builtin::Min, vec![hi, m]), i64t);
        (lo, hi)
    } else {
        // `[v + l, v + H - l)`, not shrinking at the grid's first and last rows.
        let top = func.binary(BinOp::Gt, v64, zero, Scalar::Bool);
        let shrunk = func.binary(BinOp::Add, v64, l, i64t);
        let lo = func.expr(ExprKind::Select(top, shrunk, zero), i64t);
        let inner = func.binary(BinOp::Lt, end, m, Scalar::Bool);
        let shrunk = func.binary(BinOp::Sub, end, l, i64t);
        let hi = func.expr(ExprKind::Select(inner, shrunk, m), i64t);
        (lo, hi)
    }
}

#[cfg(test)]
mod tests {
    use crate::lir::{Memory, Options, lower};

    /// Each function of `src` lowered with the CPU's default passes: its name and whether its
    /// repeat was split-tiled (a task's rows of a matrix).
    fn split(src: &str) -> Vec<(String, bool)> {
        let c = crate::compile_str(src);
        assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
        c.module
            .functions
            .iter()
            .map(|f| {
                let l = lower(f, &Options::default());
                let rows = l
                    .func
                    .temps
                    .iter()
                    .any(|(_, t)| matches!(t.memory, Memory::Rows(_)));
                (f.name.clone(), rows)
            })
            .collect()
    }

    const HEAT3: &str = "
        fn PLANE(src: &f32[P][M][N], out: &mut f32[P][M][N], steps: i32) {
            let next: f32[P][M][N];
            parac_iterator init(0:P:1; 0:M:1; 0:N:1) {
                out[initx][inity][initz] = src[initx][inity][initz];
            }
            parac_repeat(steps) {
                parac_iterator st(z in 0:P:1; x in 0:M:1; y in 0:N:1) {
                    next[z][x][y] = out[z][x][y] + out[READ][x][y];
                }
                parac_swap(out, next);
            }
        }";

    /// A plane read is a replicated edge only clamped to the grid itself: `max(z - a, 0)`,
    /// `min(z + a, P - 1)`, `clamp(z + a, 0, P - 1)`; any other bound could read a plane far
    /// from the point (outside a task's planes), so the repeat runs step by step.
    #[test]
    fn planes_clamped_to_the_grid_alone_are_tiled() {
        let cases = [
            ("lower", "max(z-1, 0)", true),
            ("upper", "min(z+2, P-1)", true),
            ("both", "clamp(z-1, 0, P-1)", true),
            ("short", "min(z+1, P-2)", false),
            ("floor", "max(z-1, 1)", false),
            ("lifted", "clamp(z+1, 1, P-1)", false),
            ("constant", "min(3, P-1)", false),
        ];
        for (name, read, tiled) in cases {
            let src = HEAT3.replace("PLANE", name).replace("READ", read);
            assert_eq!(split(&src), vec![(name.to_string(), tiled)], "{read}");
        }
    }

    /// The model's bands and a task's rows (docs/benchmarks.md's figures): heat-2D 16 steps in
    /// tasks of 34 rows, FDTD-2D (three regions) 7 steps in 44, a 3-D grid 7 steps in 16 planes,
    /// the widest radius bands of 2 steps.
    #[test]
    fn the_models_bands_and_task_rows() {
        use super::{Shape, model, task_rows};
        let band = |n, r, planes| {
            let s = Shape { n, r, planes };
            let (k, rows) = model(16, 32, s);
            (k, task_rows(s, k, rows))
        };
        assert_eq!(band(1, 1, false), (16, 34));
        assert_eq!(band(3, 1, false), (7, 44));
        assert_eq!(band(1, 1, true), (7, 16));
        assert_eq!(band(1, 8, false), (2, 48));
        // A program's rows, fewer than the split needs: the least it allows.
        assert_eq!(
            task_rows(
                Shape {
                    n: 2,
                    r: 1,
                    planes: false
                },
                3,
                1
            ),
            14
        );
    }
}
