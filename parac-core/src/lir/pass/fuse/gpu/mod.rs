//! Fusion across stages on OpenCL (a plan's `Directive::Fuse`, `fuse<C>x<R>`): a producer
//! region `P` writing a local matrix `t` that the next host step, region `C`, reads first, is
//! computed by `C`'s work-groups for the points of `t` their tile of `C` reads, into `__local`
//! memory, then the tile's points of `C` read it there (Halide's `compute_at` of a producer in
//! its consumer's GPU tile). `t` goes through no global memory (where later steps read it
//! too, each tile stores its own points of it for them: `Fusion::stores`); it is a plan of `P`, whose
//! kernels take `C`'s matrices too (`Function::fused_consumer`), and the executor skips `C`'s
//! run after it. The pass rewrites the function as the executor runs it: `P`'s region is the
//! kernel, `C`'s region is empty (its host proof alone), so that the LIR's evaluator runs the
//! whole exactly as the device does.
//!
//! ```text
//! region P {
//!   allocate local T[R + hi - lo][C + hj - lj]
//!   for g1 in groups(1) of C's rows: for g0 in groups(0) of C's columns:   // C's space
//!     let r0 = g1 R, r1 = min(r0 + R, C's rows), c0, c1 alike
//!     let rlo = max(r0 + lo, 0), rhi = min(r1 + hi, dim(t, 0)), clo, chi alike
//!     work-items: for x in [rlo, rhi), y in [clo, chi): T[x - rlo][y - clo] = P's point
//!     barrier
//!     work-items: for x in [r0, r1), y in [c0, c1): C's point, t[a][b] read as T[a - rlo][b - clo]
//! }
//! region C { }
//! ```
//!
//! A fused plan is launched over `C`'s iteration space (`Candidate::fuses`). The other fused
//! plan, [`inline`], computes `P`'s point at each of `C`'s reads of `t` instead (no local
//! memory, no barrier: what a CPU device runs well), within a code budget.
//!
//! Legality, where each fused read gives exactly what the unfused read gives:
//! - `P` and `C` are row nests of two loops from 0 (`C`'s columns not depending on its row),
//!   `P`'s body `let`s and one store `t[x][y]`, `t` a local `P` writes whole and alone, read
//!   by `C` first, and later only by steps that do not write it, where `C`'s space is `t`'s
//!   extents (`fuse::consumer`, with the CPU's other conditions: no fold, no division
//!   that may fail, no guarded access in `P`, `parac_schedule(fuse = 0)` respected);
//! - `C` writes nothing `P` or `C` reads (its groups run in any order, and the search runs a
//!   plan more than once), and every access in `C` is unchecked (proven by the host before the
//!   launch: an error inside the fused kernel would carry `P`'s code);
//! - every read of `t` in `C` is at `x + a`, `y + b` (`|a|, |b| <=` `MAX_HALO`), seen
//!   through `let`s and border maps. Proven inside `t` by the host, such a read is in the box
//!   `[r0 + lo, r1 + hi)` (`lo`, `hi` the least and greatest `a`) clipped to `t`. Through a
//!   border rule (a shorthand, not wrap), it maps a point outside `t` to one as far inside as
//!   the offset, which is in the box widened by the widest offset on both sides, provided the
//!   read's own point `(x, y)` is inside `t`: then `C`'s loops must be `t`'s extents exactly.

mod chain;

use super::tiles::B;
use super::time::{Copy, Origin, step_point};
use super::{consumer, reads::row_offsets, uses};
use crate::ir::{BinOp, BorderMode, Builtin, Function, RegionId, Scalar};
use crate::lir::visit::{Mutator, preorder, stmt_parts};
use crate::lir::{Buf, ExprId, ExprKind, Func, Memory, Stmt, StmtId, Temp, TempId, VarId};
use std::collections::HashMap;

/// The widest offset of a fused read of `t` (rows or columns).
const MAX_HALO: i128 = 16;

/// The most bytes of a work-item's private tiles (`fuseitem<C>x<R>`): what a CPU device keeps
/// in its second-level cache and a work-item's stack holds. (The first level's 32 KiB was the
/// bound until unsharp's chain ran 12-17 % faster in 512x8 tiles, 45 KiB, than in 256x8, 23
/// KiB: on PoCL longer rows weigh more than a tile within the first level.)
const MAX_PRIVATE_TILE: i128 = 64 << 10;

/// Makes region `rid`'s fused kernel with its consumer, tiles of `tile` (columns, rows) of the
/// consumer per work-group, where legal; whether it did.
pub fn run(func: &mut Func, f: &Function, rid: RegionId, tile: [u32; 2]) -> bool {
    let Some(fusion) = legal(func, f, rid) else {
        return false;
    };
    if !tile
        .iter()
        .zip(crate::codegen::schedule::TIME_GROUP)
        .all(|(t, g)| *t >= g && t % g == 0)
    {
        return false;
    }
    let kernel = build(func, f, (&fusion, None), (tile.map(i128::from), false));
    replace(func, &fusion, kernel)
}

/// Makes region `rid`'s fused kernel with its consumer as [`run`]'s, each work-item its own
/// group: a tile of `tile` (columns, rows) points of the consumer from the producer's points it
/// reads, in private memory, with no barrier (`fuse_item_tile`, a plan's
/// `Directive::FuseItems`: what a CPU device runs well, each work-item the CPU path's strip
/// fusion on its tile, whose rows its compiler vectorizes); whether it did.
pub fn run_items(func: &mut Func, f: &Function, rid: RegionId, tile: [u32; 2]) -> bool {
    if let Some(chain) = chain::legal(func, f, rid) {
        return chain::run_items(func, f, chain, tile);
    }
    let Some(fusion) = pair(func, f, rid) else {
        return false;
    };
    let item = fusion.item_tile(f);
    if !item.fits(tile) {
        return false;
    }
    let kernel = build(func, f, (&fusion, None), (tile.map(i128::from), true));
    replace(func, &fusion, kernel)
}

/// Makes region `rid` its consumer's loops with each read of the intermediate replaced by the
/// producer's point there (`fuse_inline`, a plan's `Directive::FuseInline`: Halide's `inline`
/// of a producer, the intermediate never stored), where legal and `inlines` allows; whether
/// it did. The kernel runs the consumer's space; the
/// other GPU passes (lanes, shared loads, vector memory, partitioning) then apply to it.
pub fn inline(func: &mut Func, f: &Function, rid: RegionId) -> bool {
    let Some(fusion) = legal(func, f, rid).filter(|fu| inlines(func, f, fu)) else {
        return false;
    };
    let mut inline = super::inline::Inline::new(&fusion.p, false);
    let body = inline.mutate_stmt(func, fusion.croot);
    let kernel = func.stmt(Stmt::Region {
        id: fusion.pid,
        name: fusion.pname.clone(),
        body,
    });
    replace(func, &fusion, kernel)
}

/// The function with the producer's region replaced by `kernel` and the consumer's emptied (its
/// host proof alone: the executor skips its run after a fused launch); whether it did.
fn replace(func: &mut Func, fusion: &Fusion, kernel: StmtId) -> bool {
    let consumer = (fusion.at.1, fusion.cid, fusion.cname.clone());
    replace_with(func, (fusion.at.0, kernel), &[consumer])
}

/// The function with its top-level statement `at` replaced by `kernel` and the regions at the
/// places of `empty` emptied (their host proofs alone); whether it did.
fn replace_with(
    func: &mut Func,
    (at, kernel): (usize, StmtId),
    empty: &[(usize, RegionId, String)],
) -> bool {
    let Stmt::Block(mut top) = func.stmts[func.body].clone() else {
        return false;
    };
    top[at] = kernel;
    for (k, id, name) in empty {
        let body = func.stmt(Stmt::Block(Vec::new()));
        top[*k] = func.stmt(Stmt::Region {
            id: *id,
            name: name.clone(),
            body,
        });
    }
    func.stmts[func.body] = Stmt::Block(top);
    true
}

/// The fused plans region `rid` has, on the function as a fused plan's lowering starts from it
/// (`lir::front`): of tiles (and of a work-item's rows), where its consumer can be fused into
/// it; inlined, where its points can also be inlined in the consumer's (`inlines`).
pub fn plans(f: &Function, rid: RegionId) -> Fused {
    let consumers = f.fused_consumers(rid).len();
    if consumers == 0 {
        return Fused::default();
    }
    let opts = crate::lir::Options {
        region: Some(rid),
        unroll_taps: crate::lir::UNROLL_TAPS,
        fuse_inline: true,
        ..crate::lir::Options::gpu()
    };
    let mut func = crate::lir::front(f, &opts, &mut |_, _| {});
    // A chain: work-items' tiles alone (both intermediates in private memory).
    if let Some((fusion, chain)) = chain::legal(&mut func, f, rid) {
        return Fused {
            items: true,
            item: chain.item_tile(f, &fusion),
            consumers: 2,
            ..Fused::default()
        };
    }
    match pair(&mut func, f, rid) {
        Some(fusion) => Fused {
            tiles: true,
            items: true,
            inline: inlines(&func, f, &fusion),
            item: fusion.item_tile(f),
            consumers: 1,
        },
        None => Fused::default(),
    }
}

/// Which fused plans a region has ([`plans`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fused {
    /// Tiles of work-groups (`fuse<C>x<R>`).
    pub tiles: bool,
    /// Tiles of work-items (`fuseitem<C>x<R>`), those [`ItemTile::fits`] allows.
    pub items: bool,
    /// The producer inlined (`inline`).
    pub inline: bool,
    /// What a work-item's private tile of the intermediate holds (`fuseitem<C>x<R>`).
    pub item: ItemTile,
    /// How many of `Function::fused_consumers` the fused plans run: 2 for a chain, else 1
    /// (0: no fused plan).
    pub consumers: usize,
}

/// A work-item's private tiles of the intermediates (one, or a chain's two): per tile, the
/// box's columns and rows past the consumer tile's, and the bytes of an element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ItemTile {
    parts: [([i128; 2], i128); 2],
}

impl ItemTile {
    /// Whether a work-item's tile of `tile` (columns, rows) of the consumer is a fused plan:
    /// not empty, its boxes of the intermediates within `MAX_PRIVATE_TILE` bytes together.
    pub fn fits(&self, tile: [u32; 2]) -> bool {
        let [c, r] = tile.map(i128::from);
        let bytes: i128 = self
            .parts
            .iter()
            .map(|([sc, sr], b)| (c + sc) * (r + sr) * b)
            .sum();
        c > 0 && r > 0 && bytes <= MAX_PRIVATE_TILE
    }
}

/// Whether a legal fusion's producer may be inlined in its consumer's points: not under a
/// constant border (the producer's point would be inlined at indices outside `t`, its own
/// reads proven for `t`'s points alone: a pass that shares and hoists loads, as `share_loads`
/// does with unchecked ones, would read outside `src`), not where `t` is stored for later
/// steps, nor where the program says `parac_schedule(inline = 0)`, and within
/// [`super::MAX_INLINED`] expression nodes.
fn inlines(func: &Func, f: &Function, fusion: &Fusion) -> bool {
    let mut sites = 0;
    accesses(func, fusion.cbody, &mut |buf, _| {
        sites += usize::from(buf == Buf::Matrix(fusion.p.t));
        false
    });
    !fusion.guarded
        && !fusion.stores
        && f.regions[fusion.pid].inline != Some(false)
        && fusion.p.size(func).saturating_mul(sites) <= super::MAX_INLINED
}

/// A producer and its consumer that can be fused.
struct Fusion {
    p: super::Producer,
    pid: RegionId,
    pname: String,
    cid: RegionId,
    cname: String,
    /// The places of the two regions among the function's top-level statements.
    at: (usize, usize),
    /// The consumer's loop nest (its region's body).
    croot: StmtId,
    /// The consumer's row and column variables, their extents, and the body of its column loop.
    cx: VarId,
    cy: VarId,
    rows: ExprId,
    cols: ExprId,
    cbody: StmtId,
    /// A constant border over `t`: a read outside it is a `select` of the constant, its load
    /// at an index outside `t` (never taken, but a load other passes may hoist).
    guarded: bool,
    /// The box of `t` a tile reads, as offsets from its first row (column) and past its last.
    box_rows: (i128, i128),
    box_cols: (i128, i128),
    /// Later steps read `t`: the kernel stores it, each tile its own points from the box.
    stores: bool,
}

impl Fusion {
    /// Its work-items' private tiles ([`ItemTile`]).
    fn item_tile(&self, f: &Function) -> ItemTile {
        ItemTile {
            parts: [(self.span(), self.bytes(f)), ([0, 0], 0)],
        }
    }

    /// Its tile's columns and rows past the consumer tile's.
    fn span(&self) -> [i128; 2] {
        [self.box_cols, self.box_rows].map(|(lo, hi)| hi - lo - 1)
    }

    /// The bytes of an element of its intermediate.
    fn bytes(&self, f: &Function) -> i128 {
        f.matrices[self.p.t].elem.bytes() as i128
    }
}

/// The fusion of region `rid` with its first consumer, where its fused plans are of that pair:
/// legal, and `rid` not a chain's producer (whose plans run both consumers: [`chain`]).
fn legal(func: &mut Func, f: &Function, rid: RegionId) -> Option<Fusion> {
    match chain::legal(func, f, rid) {
        Some(_) => None,
        None => pair(func, f, rid),
    }
}

/// The fusion of region `rid` with its first consumer (`Function::fused_consumers`), where
/// legal (the module's documentation).
fn pair(func: &mut Func, f: &Function, rid: RegionId) -> Option<Fusion> {
    let cid = *f.fused_consumers(rid).first()?;
    let Stmt::Block(top) = func.stmts[func.body].clone() else {
        return None;
    };
    let region_at = |id: RegionId| {
        top.iter()
            .position(|s| matches!(func.stmts[*s], Stmt::Region { id: r, .. } if r == id))
    };
    let (i, j) = (region_at(rid)?, region_at(cid)?);
    // Nothing but allocations between them.
    if j <= i
        || top[i + 1..j]
            .iter()
            .any(|s| !matches!(func.stmts[*s], Stmt::Allocate { .. }))
    {
        return None;
    }
    let used: Vec<super::Uses> = top.iter().map(|s| uses(func, f, *s)).collect();
    let (k, p) = consumer(func, f, &top, &used, i)?;
    if k != j {
        return None;
    }
    let t = p.t;
    let whole = crate::analysis::written_whole(f);
    // As the CPU's fusion asks (`fuse::separable`), and on a device: `C` cannot fail (an
    // error in the fused kernel would carry `P`'s code) and reads nothing it writes (its groups
    // run in any order, and the search runs a plan more than once).
    let cu = &used[j];
    // Later steps reading `t` (none writing it): the kernel stores `t` for them, each tile its
    // own points, where `C`'s space is `t`'s extents (so that every point is stored once).
    let later = super::later_readers(&used, j, t)?;
    let stores = !later.is_empty();
    if stores && !super::space_of(f, cid, t) {
        return None;
    }
    if !super::separable(f, &whole, &used, (i, j), (rid, t), &later)
        || p.mid.is_some()
        || !matches!(func.exprs[p.columns.0].kind, ExprKind::Int(0))
        || cu.divides
        || !cu.reduces.is_empty()
        || cu.stores.iter().any(|m| cu.loads.contains(m))
    {
        return None;
    }
    let (
        Stmt::Region { name: pname, .. },
        Stmt::Region {
            name: cname, body, ..
        },
    ) = (func.stmts[top[i]].clone(), func.stmts[top[j]].clone())
    else {
        return None;
    };
    // `C`: two loops from 0, its columns' bounds not depending on its row, every access unchecked.
    let serial = |s: StmtId| {
        let (var, (lo, hi), body) = super::serial(func, s)?;
        matches!(func.exprs[lo].kind, ExprKind::Int(0)).then_some((var, hi, body))
    };
    let (cx, rows, xb) = serial(body)?;
    let (cy, cols, cbody) = serial(super::single(func, xb)?)?;
    if crate::lir::visit::mentions(func, cols, |v| v == cx) || checked(func, cbody, t) {
        return None;
    }
    let (spans, guarded) = spans(func, f, (cid, cbody), (cx, cy), t)?;
    Some(Fusion {
        p,
        pid: rid,
        pname,
        cid,
        cname,
        at: (i, j),
        croot: body,
        cx,
        cy,
        rows,
        cols,
        cbody,
        box_rows: (spans[0].0, spans[0].1 + 1),
        box_cols: (spans[1].0, spans[1].1 + 1),
        guarded,
        stores,
    })
}

/// The offsets of region `rid`'s reads of matrix `t` in `body` (the body of its loops over
/// `vars`, rows then columns), least and greatest per dimension, where each is at `x + a`,
/// `y + b` (`|a|, |b| <=` [`MAX_HALO`], seen through `let`s and border maps), and whether a
/// constant border over `t` guards them. Through a border rule over `t` (a shorthand, not
/// wrap) a point outside `t` maps to one as far inside as the offset, which is in the box
/// widened by the widest offset on both sides, provided the read's own point is inside `t`:
/// then the region's space must be `t`'s extents exactly, and the spans are so widened.
/// Without a rule, every read must be unchecked (proven inside `t` by the host).
fn spans(
    func: &mut Func,
    f: &Function,
    (rid, body): (RegionId, StmtId),
    vars: (VarId, VarId),
    t: usize,
) -> Option<([(i128, i128); 2], bool)> {
    let mut spans = [(0, 0); 2];
    for (d, v) in [(0, vars.0), (1, vars.1)] {
        let mut offsets = Vec::new();
        row_offsets(
            func,
            body,
            (t, d),
            (v, None),
            &mut HashMap::new(),
            &mut offsets,
        );
        let offsets: Vec<(i128, i128)> = offsets.into_iter().collect::<Option<_>>()?;
        if offsets.is_empty() || offsets.iter().any(|o| o.0 != 1 || o.1.abs() > MAX_HALO) {
            return None;
        }
        let lo = offsets.iter().map(|o| o.1).min()?;
        let hi = offsets.iter().map(|o| o.1).max()?;
        spans[d] = (lo, hi);
    }
    let cr = &f.regions[rid];
    let (mut mapped, mut guarded) = (false, false);
    for id in &cr.rules {
        let rule = &f.rules[*id];
        if !rule.entries.iter().any(|e| e.matrix == t) {
            continue;
        }
        let sh = rule.shorthand.as_ref()?;
        // Each dimension read at an offset is bordered that far: no read fails.
        let borders = |d: usize, (lo, hi): (i128, i128)| {
            let w = lo.abs().max(hi.abs());
            w == 0
                || sh
                    .widths
                    .get(d)
                    .copied()
                    .flatten()
                    .is_some_and(|b| i128::from(b) >= w)
        };
        if matches!(sh.mode, BorderMode::Wrap) || !(0..2).all(|d| borders(d, spans[d])) {
            return None;
        }
        mapped = true;
        guarded |= matches!(sh.mode, BorderMode::Constant(_));
    }
    if !mapped && reads_checked(func, body, t) {
        return None;
    }
    if mapped {
        if !super::space_of(f, rid, t) {
            return None;
        }
        for s in &mut spans {
            let w = s.0.abs().max(s.1.abs());
            *s = (-w, w);
        }
    }
    Some((spans, guarded))
}

/// Whether a statement tree holds a checked access of a matrix other than `t`.
fn checked(func: &Func, s: StmtId, t: usize) -> bool {
    accesses(func, s, &mut |buf, checked| {
        checked && buf != Buf::Matrix(t)
    })
}

/// Whether a statement tree holds a checked read of `t`.
fn reads_checked(func: &Func, s: StmtId, t: usize) -> bool {
    accesses(func, s, &mut |buf, checked| {
        checked && buf == Buf::Matrix(t)
    })
}

/// Whether `hit` holds for one of a statement tree's loads or stores (its buffer, whether
/// checked).
pub(super) fn accesses(func: &Func, s: StmtId, hit: &mut impl FnMut(Buf, bool) -> bool) -> bool {
    if let Stmt::Store { buf, checked, .. } = func.stmts[s]
        && hit(buf, checked)
    {
        return true;
    }
    let (es, ss) = stmt_parts(&func.stmts[s]);
    let mut any = false;
    for e in es {
        preorder(func, e, |x| {
            if let ExprKind::Load { buf, checked, .. } = func.exprs[x].kind {
                any |= hit(buf, checked);
            }
            !any
        });
    }
    any || ss.into_iter().any(|c| accesses(func, c, hit))
}

/// A step's point stored into tile `temp`, whose first row and column are `origin` (what
/// [`step_point`] stores).
fn into_tile(
    temp: TempId,
    (row0, col0): (ExprId, ExprId),
) -> impl FnOnce(&mut Func, ExprId, Option<ExprId>, ExprId) -> (Buf, Vec<ExprId>, bool) {
    move |func, x, _, y| {
        let x64 = func.cast(x, Scalar::I64);
        let row = func.binary(BinOp::Sub, x64, row0, Scalar::I64);
        let y64 = func.cast(y, Scalar::I64);
        let col = func.binary(BinOp::Sub, y64, col0, Scalar::I64);
        (Buf::Temp(temp), vec![row, col], false)
    }
}

/// The fused kernel: `P`'s region statement (a chain's `Q`'s), tiles of `[tc, tr]` points of
/// `C` per work-group (in local memory), or per work-item where `items` (in private memory).
fn build(
    func: &mut Func,
    f: &Function,
    (fu, chain): (&Fusion, Option<&chain::Chain>),
    ([tc, tr], items): ([i128; 2], bool),
) -> StmtId {
    let (t, i64t, i32t) = (fu.p.t, Scalar::I64, Scalar::I32);
    let elem = f.matrices[t].elem;
    let mut b = B { func };
    let [span_c, span_r] = fu.span();
    let memory = if items {
        Memory::Private
    } else {
        Memory::Local
    };
    let temp = b.func.temps.push(Temp {
        name: format!("{}_tile", f.matrices[t].name),
        elem,
        memory,
    });
    let (h, w) = (b.int(tr + span_r), b.int(tc + span_c));
    let allocate = b.func.stmt(Stmt::Allocate {
        buf: Buf::Temp(temp),
        elem,
        memory,
        extents: vec![h, w],
    });
    // A group's tile is allocated once for the kernel, a work-item's in its body.
    let (mut head, mut tile) = match items {
        false => (vec![allocate], Vec::new()),
        true => (Vec::new(), vec![allocate]),
    };
    // `t`'s extents (the launch's space) and `C`'s.
    let mt = b.func.expr(ExprKind::Dim(t, 0), i64t);
    let nt = b.func.expr(ExprKind::Dim(t, 1), i64t);
    let (mc, nc) = (b.long(fu.rows), b.long(fu.cols));
    let names = if items {
        ["item1", "item0"]
    } else {
        ["group1", "group0"]
    };
    let blocks = names.map(|n| b.func.var(n, i32t));
    // The group's tile of `C` (the launch is `C`'s space).
    let (tre, tce) = (b.int(tr), b.int(tc));
    let g1 = b.var(blocks[0]);
    let g1 = b.long(g1);
    let g0 = b.var(blocks[1]);
    let g0 = b.long(g0);
    let r0 = b.op(BinOp::Mul, g1, tre);
    let r0 = b.bind("r0", r0, &mut tile);
    let c0 = b.op(BinOp::Mul, g0, tce);
    let c0 = b.bind("c0", c0, &mut tile);
    let r1 = b.bound("r1", (r0, BinOp::Add, tre), (Builtin::Min, mc), &mut tile);
    let c1 = b.bound("c1", (c0, BinOp::Add, tce), (Builtin::Min, nc), &mut tile);
    // The box of `t` the tile reads, clipped to `t`.
    let zero = b.int(0);
    let (lo, hi) = (b.int(fu.box_rows.0), b.int(fu.box_rows.1 - 1));
    let rlo = b.bound("rlo", (r0, BinOp::Add, lo), (Builtin::Max, zero), &mut tile);
    let rhi = b.bound("rhi", (r1, BinOp::Add, hi), (Builtin::Min, mt), &mut tile);
    let (lo, hi) = (b.int(fu.box_cols.0), b.int(fu.box_cols.1 - 1));
    let clo = b.bound("clo", (c0, BinOp::Add, lo), (Builtin::Max, zero), &mut tile);
    let chi = b.bound("chi", (c1, BinOp::Add, hi), (Builtin::Min, nt), &mut tile);
    // A chain's `Q`: its points of the box of `u` the tile's loops read, into a tile of its
    // own (private), before `P`'s points read it there.
    let mut from: HashMap<usize, Origin> = HashMap::new();
    if let Some(ch) = chain {
        from.insert(
            ch.q.t,
            ch.tile(&mut b, f, (tc, tr), (r0, r1, c0, c1), &mut tile),
        );
    }
    // `P`'s points of the box into the tile.
    let pt = step_point(b.func, &fu.p, (&from, &[]), into_tile(temp, (rlo, clo)));
    let points = |b: &mut B, point, rows, cols| match items {
        false => b.cover(point, rows, cols),
        true => b.each(point, rows, cols),
    };
    tile.push(points(
        &mut b,
        (pt.x, pt.y, pt.body),
        [rlo, rhi],
        [clo, chi],
    ));
    if !items {
        tile.push(b.func.stmt(Stmt::Barrier { global: false }));
    }
    // For later readers: the tile's own points of `t` (`C`'s space is `t`'s) from the box.
    if fu.stores {
        let (x, y) = (b.func.var("sx", i32t), b.func.var("sy", i32t));
        let (xe, ye) = (b.var(x), b.var(y));
        let (x64, y64) = (b.long(xe), b.long(ye));
        let store = super::store_from(b.func, (t, temp), (x64, y64), (rlo, Some(clo)), false);
        tile.push(points(&mut b, (x, y, store), [r0, r1], [c0, c1]));
    }
    // `C`'s points of the tile, reading `t` from it (and a chain's `u` from its tile).
    from.insert(t, (Buf::Temp(temp), Some(rlo), Some(clo)));
    let body = Copy::new(&from, &[]).mutate_stmt(b.func, fu.cbody);
    tile.push(points(&mut b, (fu.cx, fu.cy, body), [r0, r1], [c0, c1]));
    let body = b.func.stmt(Stmt::Block(tile));
    let loops = [(1, blocks[0], mc, tr), (0, blocks[1], nc, tc)];
    let body = match items {
        false => b.tiles(body, loops),
        true => b.item_tiles(body, loops),
    };
    head.push(body);
    let body = b.func.stmt(Stmt::Block(head));
    let (id, name) = match chain {
        Some(ch) => (ch.qid, ch.qname.clone()),
        None => (fu.pid, fu.pname.clone()),
    };
    b.func.stmt(Stmt::Region { id, name, body })
}
