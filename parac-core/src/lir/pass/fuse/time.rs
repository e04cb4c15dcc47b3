//! Time tiling on the CPU path (`Options::time_steps`, overlapped tiles): a time step that
//! is one region `S` computing grid `h` from grid `g`, then `parac_swap(g, h)`, runs in bands
//! of `K` steps. A band is one region whose parallel tasks each own `rows` rows of the result:
//! a task computes its rows' dependence cone, `K - 1` steps of `S` over its rows widened by
//! `(K - j) R` rows each side (`R` the radius of `S`'s reads of `g`; clipped to the grid) into
//! two private buffers used in turn, then the last step's own rows into `h`; one swap follows.
//! Each grid row is read from memory once per band instead of once per step, the rest stays in
//! the task's cache; the halo rows are computed more than once (overlapped tiling).
//!
//! ```text
//! let n = max(count, 0)
//! repeat n / K times {
//!   region S {
//!     parallel_chunks for sx in [0, M) step rows {
//!       let x1 = min(sx + rows, M)
//!       allocate A[rows + 2 (K - 1) R][N], B[..]
//!       for x in [max(sx - (K-1) R, 0), min(x1 + (K-1) R, M)) { S's row x, reading g, into A }
//!       ..                        // step j: rows widened by (K - j) R, reading the last buffer
//!       chunk_rows for x in [sx, x1) { S's row x, reading the last buffer, into h }
//!     }
//!   }
//!   swap g h
//! }
//! repeat n % K times { the step as it was }
//! ```
//!
//! A read of `g` becomes a read of the buffer at its row (a border rule's index map included)
//! less the buffer's first row. Legality, where each band gives what `K` steps give:
//! - `S` is a row nest of `let`s and one store `h[x][y]` (a producer, as fusion's), writes `h`
//!   whole (`analysis::region_writes_whole`) and nothing else, reads `g` and not `h`;
//! - `S` cannot fail once its host proof passed (as fusion's producer), holds no fold;
//! - every read of `g` has the row `x + a`, `|a| <= R <= MAX_RADIUS`, seen through `let`s and
//!   a border rule's index map; the rules over `g` are shorthands that map a row outside to
//!   one at most `R` inside (constant, replicate, reflect, reflect101: not wrap), so that each
//!   row a step reads was computed by the step before;
//! - `g` and `h` swap with each other alone; `h` is a local no later step reads and no output:
//!   after a band it holds the band's first grid, where step by step it would hold the last
//!   but one (nothing reads it before `S` writes it again).

use super::{Producer, producer, reads::row_offsets, uses};
use crate::ir::{BinOp, BorderMode, Builtin, Function, MatrixKind, Scalar};
use crate::lir::VarId;
use crate::lir::visit::{Mutator, rebuild_expr};
use crate::lir::{Buf, ExprId, ExprKind, Func, LoopKind, Memory, Stmt, StmtId, Temp, TempId};
use std::collections::HashMap;

/// The widest radius (rows read each side) a time step may have to be tiled.
const MAX_RADIUS: i128 = 8;

/// Runs each tileable `parac_repeat` of the function's body in bands of `steps` time steps
/// (`modelled`: at most, the model's choice) in tasks of `rows` rows, unless the program's
/// `parac_schedule` says otherwise; whether it tiled any.
pub fn run(func: &mut Func, f: &Function, (steps, rows, modelled): (i64, i64, bool)) -> bool {
    if steps < 1 || rows < 1 {
        return false;
    }
    let Stmt::Block(mut top) = func.stmts[func.body].clone() else {
        return false;
    };
    let mut tiled = false;
    let mut i = 0;
    while i < top.len() {
        let schedule = match func.stmts[top[i]] {
            Stmt::Repeat { schedule, .. } => schedule,
            _ => Default::default(),
        };
        if let Some(band) = candidate(func, f, &top, i) {
            // The program's `parac_schedule(band = .., rows = ..)` first, else the model.
            let r = schedule.rows.unwrap_or(rows);
            let k = match schedule.band {
                Some(k) => k,
                None if modelled => model(steps, r, &band),
                None => steps,
            };
            if k >= 2
                && let Some(new) = tile(func, f, top[i], &band, k, r)
            {
                top.splice(i..=i, new);
                tiled = true;
                i += 2;
                continue;
            }
        }
        i += 1;
    }
    func.stmts[func.body] = Stmt::Block(top);
    tiled
}

/// Time steps per band for tasks of `rows` rows: as many as keep the recomputed rows (`(K - 1)
/// radius` more per task and step, on average) within a quarter of the task's, at most `most`;
/// none (1) for a step whose work per byte says it is bound by its arithmetic, not by memory
/// (more than [`MAX_INTENSITY`]), where recomputing the halos costs more than the memory saved.
fn model(most: i64, rows: i64, band: &Band) -> i64 {
    if band.intensity > MAX_INTENSITY {
        return 1;
    }
    let k = 1 + i128::from(rows) / (4 * band.radius.max(1));
    k.clamp(2, i128::from(most.max(2))) as i64
}

/// The most work per byte (expression nodes of a point per byte of the grids it reads and
/// writes) of a step the model tiles. On the developers' 2-core machine (benches/time_steps.rs,
/// 4096², T = 64): heat-2D (f32, 26 nodes per byte) ran 2.1x faster in bands of 8 steps than
/// step by step; the game of life (u8, 156) 0.93x as fast.
const MAX_INTENSITY: usize = 64;

/// A repeat that can be tiled: its step's region and producer, the grid read and the radius.
struct Band {
    region: StmtId,
    p: Producer,
    g: usize,
    radius: i128,
    /// The swap, after the region.
    swap: StmtId,
    /// Expression nodes of a point per byte a point reads and writes of the grids.
    intensity: usize,
}

fn candidate(func: &mut Func, f: &Function, top: &[StmtId], i: usize) -> Option<Band> {
    let Stmt::Repeat { body, .. } = func.stmts[top[i]] else {
        return None;
    };
    let Stmt::Block(b) = &func.stmts[body] else {
        return None;
    };
    let [region, swap] = b.as_slice() else {
        return None;
    };
    let (region, swap) = (*region, *swap);
    let (
        Stmt::Region {
            id: rid,
            body: rbody,
            ..
        },
        Stmt::Swap(a, c),
    ) = (&func.stmts[region], &func.stmts[swap])
    else {
        return None;
    };
    let (rid, rbody, a, c) = (*rid, *rbody, *a, *c);
    let p = producer(func, f, rbody)?;
    let h = p.t;
    let g = match h {
        _ if h == a => c,
        _ if h == c => a,
        _ => return None,
    };
    // `g` and `h` swap with each other alone; `h` is a local read by no later step.
    if !f
        .swap_groups()
        .iter()
        .any(|grp| grp.as_slice() == [g.min(h), g.max(h)])
    {
        return None;
    }
    if f.matrices[h].kind != MatrixKind::Local || f.matrices[g].elem != f.matrices[h].elem {
        return None;
    }
    if top[i + 1..].iter().any(|s| uses(func, *s).touches(h)) {
        return None;
    }
    // `S` writes `h` whole, alone, reads `g` and not `h`, cannot fail, holds no fold.
    let r = &f.regions[rid];
    if !crate::analysis::region_writes_whole(f, rid, h)
        || (0..r.accesses.len()).any(|k| crate::codegen::safety::guarded(f, r, k))
    {
        return None;
    }
    let u = uses(func, rbody);
    if u.fold || u.divides || u.loads.contains(&h) || u.stores.iter().any(|m| *m != h) {
        return None;
    }
    if !u.loads.contains(&g) || !u.reduces.is_empty() {
        return None;
    }
    // The border rules over `g`: shorthands that keep a row outside near the edge.
    for id in &r.rules {
        let rule = &f.rules[*id];
        if !rule.entries.iter().any(|e| e.matrix == g) {
            continue;
        }
        let Some(sh) = &rule.shorthand else {
            return None;
        };
        let rows_bordered = sh.widths.first().is_some_and(|w| w.is_some());
        if matches!(sh.mode, BorderMode::Wrap) && rows_bordered {
            return None;
        }
    }
    // Every read of `g` at a row `x + a`.
    let Stmt::For { body: xb, .. } = func.stmts[rbody] else {
        return None;
    };
    let mut offsets = Vec::new();
    row_offsets(func, xb, g, p.x, &mut HashMap::new(), &mut offsets);
    let offsets: Vec<(i128, i128)> = offsets.into_iter().collect::<Option<_>>()?;
    if offsets.iter().any(|o| o.0 != 1) {
        return None;
    }
    let radius = offsets.iter().map(|o| o.1.abs()).max()?;
    // The step's work per byte it moves (expression nodes of a point, border chains
    // included, per byte read and written).
    let mut nodes = 0;
    for e in p.lets.iter().map(|(_, e)| *e).chain([p.value]) {
        crate::lir::visit::preorder(func, e, |_| {
            nodes += 1;
            true
        });
    }
    let intensity = nodes / (2 * f.matrices[g].elem.bytes()).max(1);
    (radius <= MAX_RADIUS).then_some(Band {
        region,
        p,
        g,
        radius,
        swap,
        intensity,
    })
}

/// The repeat at `at` as a repeat of bands and one of the steps left: the two statements.
fn tile(
    func: &mut Func,
    f: &Function,
    at: StmtId,
    band: &Band,
    k: i64,
    rows: i64,
) -> Option<[StmtId; 2]> {
    let Stmt::Repeat { count, body, .. } = func.stmts[at] else {
        return None;
    };
    let Stmt::Region {
        id,
        ref name,
        body: rbody,
    } = func.stmts[band.region]
    else {
        return None;
    };
    let name = name.clone();
    let Stmt::For { hi: xhi, .. } = func.stmts[rbody] else {
        return None;
    };
    let Stmt::For {
        lo: ylo, hi: yhi, ..
    } = func.stmts[band.p.y_loop]
    else {
        return None;
    };
    let (p, g, h) = (&band.p, band.g, band.p.t);
    let i64t = Scalar::I64;
    let xt = func.vars[p.x].ty;
    let int = |func: &mut Func, v: i128| func.int(v, i64t);
    let zero = int(func, 0);

    // The task: rows `sx .. x1` of the result.
    let sx = func.var("tx", xt);
    let sxe = func.expr(ExprKind::Var(sx), xt);
    let sx64 = func.cast(sxe, i64t);
    let m = func.cast(xhi, i64t);
    let task = int(func, i128::from(rows));
    let past = func.binary(BinOp::Add, sx64, task, i64t);
    let x1 = func.expr(ExprKind::Call(Builtin::Min, vec![past, m]), i64t);
    let x1v = func.var("tx1", i64t);
    let x1e = func.expr(ExprKind::Var(x1v), i64t);
    let mut chunk = vec![func.stmt(Stmt::Let(x1v, x1))];
    // Two buffers of the widest step's rows.
    let elem = f.matrices[g].elem;
    let widest = int(func, i128::from(rows) + 2 * i128::from(k - 1) * band.radius);
    let cols = func.expr(ExprKind::Dim(g, 1), i64t);
    let temps: Vec<TempId> = (0..2)
        .map(|j| {
            func.temps.push(Temp {
                name: format!("{}_step{j}", f.matrices[g].name),
                elem,
                memory: Memory::Private,
            })
        })
        .collect();
    for t in &temps {
        chunk.push(func.stmt(Stmt::Allocate {
            buf: Buf::Temp(*t),
            elem,
            memory: Memory::Private,
            extents: vec![widest, cols],
        }));
    }
    // Steps 1 .. K-1 into the buffers, each over its rows widened by (K - j) R.
    let mut from: Option<(TempId, ExprId)> = None;
    for j in 1..k {
        let wide = int(func, i128::from(k - j) * band.radius);
        let lo = func.binary(BinOp::Sub, sx64, wide, i64t);
        let lo = func.expr(ExprKind::Call(Builtin::Max, vec![lo, zero]), i64t);
        let hi = func.binary(BinOp::Add, x1e, wide, i64t);
        let hi = func.expr(ExprKind::Call(Builtin::Min, vec![hi, m]), i64t);
        let (lov, hiv) = (func.var("tlo", i64t), func.var("thi", i64t));
        chunk.push(func.stmt(Stmt::Let(lov, lo)));
        chunk.push(func.stmt(Stmt::Let(hiv, hi)));
        let (lo, hi) = (
            func.expr(ExprKind::Var(lov), i64t),
            func.expr(ExprKind::Var(hiv), i64t),
        );
        let temp = temps[(j as usize - 1) % 2];
        let (x, y, point) = step_point(func, p, g, from, |func, x, y| {
            let x64 = func.cast(x, i64t);
            let row = func.binary(BinOp::Sub, x64, lo, i64t);
            let y64 = func.cast(y, i64t);
            (Buf::Temp(temp), vec![row, y64], false)
        });
        let inner = func.for_loop(y, (ylo, yhi, 1), LoopKind::Serial, point);
        let (lo_x, hi_x) = (func.cast(lo, xt), func.cast(hi, xt));
        chunk.push(func.for_loop(x, (lo_x, hi_x, 1), LoopKind::Serial, inner));
        from = Some((temp, lo));
    }
    // The last step: the task's own rows into `h`.
    let checked = match func.stmts[last_store(func, p)?] {
        Stmt::Store { checked, .. } => checked,
        _ => return None,
    };
    let (x, y, point) = step_point(func, p, g, from, |func, x, y| {
        let (x64, y64) = (func.cast(x, i64t), func.cast(y, i64t));
        (Buf::Matrix(h), vec![x64, y64], checked)
    });
    let inner = func.for_loop(y, (ylo, yhi, 1), LoopKind::Serial, point);
    let x1x = func.cast(x1e, xt);
    chunk.push(func.for_loop(x, (sxe, x1x, 1), LoopKind::ChunkRows, inner));
    let chunk = func.stmt(Stmt::Block(chunk));
    let x0 = func.int(0, xt);
    let tasks = func.for_loop(sx, (x0, xhi, rows), LoopKind::ParallelChunks, chunk);
    let region = func.stmt(Stmt::Region {
        id,
        name,
        body: tasks,
    });
    let step = func.stmt(Stmt::Block(vec![region, band.swap]));
    // `n / K` bands, then `n % K` steps.
    let n = func.cast(count, i64t);
    let n = func.expr(ExprKind::Call(Builtin::Max, vec![n, zero]), i64t);
    let ke = int(func, i128::from(k));
    let bands = func.binary(BinOp::Div, n, ke, i64t);
    let rest = func.binary(BinOp::Rem, n, ke, i64t);
    Some([
        func.stmt(Stmt::Repeat {
            count: bands,
            body: step,
            schedule: Default::default(),
        }),
        func.stmt(Stmt::Repeat {
            count: rest,
            body,
            schedule: Default::default(),
        }),
    ])
}

/// The producer's store statement.
fn last_store(func: &Func, p: &Producer) -> Option<StmtId> {
    let Stmt::For { body, .. } = func.stmts[p.y_loop] else {
        return None;
    };
    match &func.stmts[body] {
        Stmt::Block(b) => b.last().copied(),
        _ => Some(body),
    }
}

/// One step's point: the producer's `let`s and value with fresh variables, its reads of `g`
/// from buffer `from` (its first row given) where there is one, and its store `at` the new row
/// and column variables; the two variables and the point's block.
fn step_point(
    func: &mut Func,
    p: &Producer,
    g: usize,
    from: Option<(TempId, ExprId)>,
    at: impl FnOnce(&mut Func, ExprId, ExprId) -> (Buf, Vec<ExprId>, bool),
) -> (VarId, VarId, StmtId) {
    let mut copy = Copy {
        g,
        from,
        vars: HashMap::new(),
        memo: HashMap::new(),
    };
    let x = copy.fresh(func, p.x);
    let y = copy.fresh(func, p.y);
    let mut point = Vec::new();
    for (v, e) in &p.lets {
        let e = copy.mutate_expr(func, *e);
        let w = copy.fresh(func, *v);
        point.push(func.stmt(Stmt::Let(w, e)));
    }
    let value = copy.mutate_expr(func, p.value);
    let (xe, ye) = (
        func.expr(ExprKind::Var(x), func.vars[x].ty),
        func.expr(ExprKind::Var(y), func.vars[y].ty),
    );
    let (buf, index, checked) = at(func, xe, ye);
    point.push(func.stmt(Stmt::Store {
        buf,
        index,
        value,
        checked,
    }));
    (x, y, func.stmt(Stmt::Block(point)))
}

/// A copy of a step's expressions: variables renamed, reads of `g` from the last buffer.
struct Copy {
    g: usize,
    from: Option<(TempId, ExprId)>,
    vars: HashMap<VarId, ExprId>,
    memo: HashMap<ExprId, ExprId>,
}

impl Copy {
    /// A new variable standing for `v` in this copy.
    fn fresh(&mut self, func: &mut Func, v: VarId) -> VarId {
        let (name, ty) = (func.vars[v].name.clone(), func.vars[v].ty);
        let w = func.var(&name, ty);
        let we = func.expr(ExprKind::Var(w), ty);
        self.vars.insert(v, we);
        self.memo.clear();
        w
    }
}

impl Mutator for Copy {
    fn mutate_expr(&mut self, func: &mut Func, e: ExprId) -> ExprId {
        if let Some(r) = self.memo.get(&e) {
            return *r;
        }
        let r = match func.exprs[e].kind.clone() {
            ExprKind::Var(v) if self.vars.contains_key(&v) => self.vars[&v],
            ExprKind::Let(v, a, b) => {
                let a = self.mutate_expr(func, a);
                let w = self.fresh(func, v);
                let b = self.mutate_expr(func, b);
                func.expr(ExprKind::Let(w, a, b), func.exprs[e].ty)
            }
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                ..
            } if m == self.g && index.len() == 2 && self.from.is_some() => {
                let (temp, first) = self.from.expect("a buffer");
                let (r, c) = (
                    self.mutate_expr(func, index[0]),
                    self.mutate_expr(func, index[1]),
                );
                let r64 = func.cast(r, Scalar::I64);
                let row = func.binary(BinOp::Sub, r64, first, Scalar::I64);
                let c64 = func.cast(c, Scalar::I64);
                func.expr(
                    ExprKind::Load {
                        buf: Buf::Temp(temp),
                        index: vec![row, c64],
                        checked: false,
                    },
                    func.exprs[e].ty,
                )
            }
            _ => rebuild_expr(self, func, e),
        };
        self.memo.insert(e, r);
        r
    }
}
