//! Local-memory tiles (a schedule's `LocalTile { cols, rows }`: `lds<C>x<R>`), the last pass of
//! the OpenCL lowering. A region's two work-item loops become work-groups of `cols` x `rows`
//! work-items: `GpuBlock` loops around `GpuThread` loops over the group (a back end prints a
//! thread loop inside a block loop as the work-item's place in its group). Each group fills,
//! every work-item a share, one `__local` tile per matrix its work-items read at neighbouring
//! points, waits at a barrier, then runs its work-items, whose reads of that matrix proven
//! inside (`checked: false`) come from the tile:
//!
//! ```text
//! allocate local tile[H * W]
//! for b1 in blocks(1): for b0 in blocks(0):
//!     let g<d> = lo<d> + b<d> * (group<d> * step<d>)   // the group's first point
//!     let tr = coef_r * g + omin_r, tc = coef_c * g' + omin_c
//!     for t1 in threads(1): for t0 in threads(0):
//!         for i in t1 * cols + t0 .. H * W step cols * rows:
//!             tile[i] = inside(tr + i / W, tc + i % W) ? m[tr + i / W][tc + i % W] : 0
//!     barrier
//!     for t1 in threads(1): for t0 in threads(0):
//!         let v1 = g1 + t1 * step1; if v1 < hi1: let v0 = g0 + t0 * step0; if v0 < hi0: body
//! ```
//!
//! The group's barrier is under no condition: a back end prints a work-group loop as the
//! group's index alone (the launch has exactly its groups). PoCL 3.1 miscompiled the barrier
//! under a test of the group's index, and the kernel corrupted the host process's memory.
//!
//! Which reads: an unchecked read of a 2-D matrix the region does not write, whose row and
//! column are, through `let`s, `coef * v + c` (affine forms of at least 32 bits,
//! [`crate::lir::affine`]) of the two work-item variables, one each, `coef > 0`; per matrix,
//! the reads with the first such read's variables and coefficients. Its tile index is
//! `(row - tr) * W + (col - tc)` in wrapping `int`. Why it is inside the tile whatever wraps:
//! `row ≡ coef * v + c` and `tr ≡ coef * g + omin` modulo 2^32, `v ≡ g + t * step`, so
//! `row - tr ≡ coef * t * step + (c - omin)`, a value in `[0, H)` by the tile's size; an `int`
//! congruent to it is it. The read is inside its matrix, so `row` is an `int` and the fill put
//! `m[row][col]` at that place. Places outside the matrix hold 0: only reads proven inside use
//! the tile. A vector read (a ramp column) reads its lanes from the tile.

mod bins;
mod build;

use crate::ir::{Function, MatrixId, MatrixKind, Scalar};
use crate::lir::affine::{Affine, Leaf, affine};
use crate::lir::pass::gpu::nest;
use crate::lir::visit::{expr_children, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Loop, LoopKind, Memory, Stmt, StmtId, Temp, VarId};
use build::Build;
use std::collections::{HashMap, HashSet};

/// The most elements one tile holds (a device's local memory is tens of KiB).
const MOST: i128 = 1 << 14;

/// Gives every 2-D region of `func` work-groups of `cols` x `rows` work-items and local tiles.
pub fn run(func: &mut Func, f: &Function, cols: u32, rows: u32) {
    for s in func.regions() {
        if let Stmt::Region { id, name, body } = func.stmts[s].clone()
            && let Some(body) = region(func, f, body, [rows.max(1), cols.max(1)])
        {
            func.stmts[s] = Stmt::Region { id, name, body };
        }
    }
}

/// The elements of local memory region `body` declares, by element type.
pub fn local_elements(func: &Func, body: StmtId) -> Vec<(Scalar, i128)> {
    let mut out = Vec::new();
    let mut stack = vec![body];
    while let Some(s) = stack.pop() {
        if let Stmt::Allocate {
            elem,
            memory: Memory::Local,
            extents,
            ..
        } = &func.stmts[s]
        {
            let n = extents
                .iter()
                .fold(1i128, |n, e| match func.exprs[*e].kind {
                    ExprKind::Int(k) => n * k,
                    _ => n,
                });
            out.push((*elem, n));
        }
        stack.extend(stmt_parts(&func.stmts[s]).1);
    }
    out
}

/// Where a read's index falls: per dimension, the work-item loop (0: the outer one) and its
/// coefficient; the smallest and largest offsets.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Place {
    at: [(usize, i128); 2],
    /// The offsets of the read (of a vector read's first lane).
    base: [i128; 2],
    lo: [i128; 2],
    hi: [i128; 2],
}

/// What the scan finds in a work-item's body.
struct Scan<'a> {
    f: &'a Function,
    /// The work-item variables, outer first.
    items: [VarId; 2],
    /// The values of `let` variables as forms (`None`: not affine, or bound twice).
    env: HashMap<usize, Option<Affine>>,
    /// Reads a tile can serve.
    reads: Vec<(ExprId, MatrixId, Place)>,
    /// Matrices the body writes.
    stored: HashSet<MatrixId>,
}

impl Scan<'_> {
    fn bind(&mut self, func: &Func, v: VarId, e: ExprId) {
        let form = self.form(func, e);
        let again = self.env.contains_key(&v.index());
        self.env.insert(v.index(), if again { None } else { form });
    }

    /// The form of `e` with the `let` variables it reads replaced by their values.
    fn form(&self, func: &Func, e: ExprId) -> Option<Affine> {
        let mut a = affine(func, e)?;
        for (l, _) in a.terms.clone() {
            if let Leaf::Var(w) = l
                && let Some(Some(by)) = self.env.get(&w)
            {
                a = a.substitute(l, by);
            }
        }
        Some(a)
    }

    /// `(loop, coef, offset)` of an index that is `coef * v + offset` of one work-item variable.
    fn unit(&self, func: &Func, e: ExprId) -> Option<(usize, i128, i128)> {
        let a = self.form(func, e)?;
        let [(Leaf::Var(v), c)] = a.terms.as_slice() else {
            return None;
        };
        let k = self.items.iter().position(|x| x.index() == *v)?;
        // A coefficient past 2^15 makes no tile of at most `MOST` elements along a group of
        // more than one work-item; bounding it keeps every constant an `int`.
        (a.bits >= 32 && *c > 0 && *c < 1 << 15).then_some((k, *c, a.constant))
    }

    fn place(&self, func: &Func, index: &[ExprId]) -> Option<Place> {
        let [r, c] = index else {
            return None;
        };
        if func.exprs[*r].lanes != 1 {
            return None;
        }
        let (kr, cr, or) = self.unit(func, *r)?;
        let (base, span) = match func.exprs[*c].kind {
            ExprKind::Ramp { base, stride } => {
                (base, (func.exprs[*c].lanes as i128 - 1) * stride as i128)
            }
            _ => (*c, 0),
        };
        let (kc, cc, oc) = self.unit(func, base)?;
        (kr != kc).then_some(Place {
            at: [(kr, cr), (kc, cc)],
            base: [or, oc],
            lo: [or, oc + span.min(0)],
            hi: [or, oc + span.max(0)],
        })
    }

    fn expr(&mut self, func: &Func, e: ExprId) {
        match &func.exprs[e].kind {
            ExprKind::Let(v, a, b) => {
                let (v, a, b) = (*v, *a, *b);
                self.expr(func, a);
                self.bind(func, v, a);
                self.expr(func, b);
                return;
            }
            ExprKind::Load {
                buf: Buf::Matrix(m),
                index,
                checked: false,
            } => {
                let mat = &self.f.matrices[*m];
                if mat.dims.len() == 2
                    && !matches!(mat.kind, MatrixKind::Const(_))
                    && let Some(p) = self.place(func, index)
                {
                    self.reads.push((e, *m, p));
                }
            }
            _ => {}
        }
        for c in expr_children(&func.exprs[e].kind) {
            self.expr(func, c);
        }
    }

    fn stmt(&mut self, func: &Func, s: StmtId) {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        for e in es {
            self.expr(func, e);
        }
        match &func.stmts[s] {
            Stmt::Let(v, e) => self.bind(func, *v, *e),
            Stmt::Store {
                buf: Buf::Matrix(m),
                ..
            } => {
                self.stored.insert(*m);
            }
            _ => {}
        }
        for c in ss {
            self.stmt(func, c);
        }
    }
}

/// One tile: its buffer, matrix, place (the reads' span) and size.
struct Tile {
    temp: Buf,
    m: MatrixId,
    place: Place,
    size: [i128; 2],
    /// Its origin's variables (`tr`, `tc`).
    origin: [VarId; 2],
}

/// The tiled region's new body, or `None` where no matrix is worth a tile.
fn region(func: &mut Func, f: &Function, body: StmtId, group: [u32; 2]) -> Option<StmtId> {
    // Exactly two loops, both work-items.
    let loops: Vec<Loop> = nest(func, body)
        .into_iter()
        .map(|s| match func.stmts[s] {
            Stmt::For {
                kind: LoopKind::GpuThread(_),
                ..
            } => Loop::of(func, s),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let [outer, inner] = loops.as_slice() else {
        return None;
    };
    let (outer, inner) = (*outer, *inner);
    let mut scan = Scan {
        f,
        items: [outer.var, inner.var],
        env: HashMap::new(),
        reads: Vec::new(),
        stored: HashSet::new(),
    };
    scan.stmt(func, inner.body);
    let steps = [outer.step as i128, inner.step as i128];
    // Per matrix, the reads placed as the first one is, and their span.
    let mut tiles: Vec<Tile> = Vec::new();
    let mut served: HashMap<ExprId, (usize, [i128; 2])> = HashMap::new();
    let mut mats: Vec<MatrixId> = scan.reads.iter().map(|r| r.1).collect();
    mats.sort();
    mats.dedup();
    for m in mats {
        if scan.stored.contains(&m) {
            continue;
        }
        let mine: Vec<&(ExprId, MatrixId, Place)> =
            scan.reads.iter().filter(|r| r.1 == m).collect();
        let at = mine[0].2.at;
        let mine: Vec<_> = mine.into_iter().filter(|r| r.2.at == at).collect();
        let mut place = mine[0].2;
        for r in &mine {
            for d in 0..2 {
                place.lo[d] = place.lo[d].min(r.2.lo[d]);
                place.hi[d] = place.hi[d].max(r.2.hi[d]);
            }
        }
        // One element per point: no work-item reads another's, a tile would only add a copy.
        if place.lo == place.hi && at[0].1 == 1 && at[1].1 == 1 {
            continue;
        }
        let size: Vec<i128> = (0..2)
            .map(|d| {
                let (k, coef) = at[d];
                coef * (group[k] as i128 - 1) * steps[k] + (place.hi[d] - place.lo[d]) + 1
            })
            .collect();
        if size[0] * size[1] > MOST {
            continue;
        }
        let name = format!("tile_{}", func.matrices[m]);
        let temp = Buf::Temp(func.temps.push(Temp {
            name,
            elem: f.matrices[m].elem,
            memory: Memory::Local,
        }));
        let origin = [func.var("tr", Scalar::I32), func.var("tc", Scalar::I32)];
        for r in mine {
            served.insert(r.0, (tiles.len(), r.2.base));
        }
        tiles.push(Tile {
            temp,
            m,
            place,
            size: [size[0], size[1]],
            origin,
        });
    }
    let bins = bins::find(func, f, inner.body);
    if tiles.is_empty() && bins.is_empty() {
        return None;
    }
    let b = Build { func };
    Some(b.groups(f, [outer, inner], group, (&tiles, &bins), &served))
}
