//! Which steps fuse: a producer region and the step that reads its matrix first
//! ([`consumer`], [`producer`]), what each step reads and writes ([`uses`]), whether the
//! producer may be computed in a reader ([`separable`]), and which readers take it: each in its
//! own tasks ([`readers`]), or the first, storing it for the others ([`stored_readers`]).

use super::*;

/// Whether a step is regions and allocations alone (no binding a later step may use).
pub(super) fn plain(func: &Func, s: StmtId) -> bool {
    step_parts(func, s)
        .iter()
        .all(|s| matches!(func.stmts[*s], Stmt::Allocate { .. } | Stmt::Region { .. }))
}

/// A step's statements: a block's, or the step itself.
pub(super) fn step_parts(func: &Func, s: StmtId) -> Vec<StmtId> {
    match &func.stmts[s] {
        Stmt::Block(b) => b.clone(),
        _ => vec![s],
    }
}

/// The step that reads what region step `i` produces, with the producer, where the steps
/// between write nothing the producer reads (its point computed later gives the same value)
/// and do not return.
pub(super) fn consumer(
    func: &Func,
    f: &Function,
    steps: &[StmtId],
    used: &[Uses],
    i: usize,
) -> Option<(usize, Producer)> {
    let Stmt::Region { body, .. } = func.stmts[steps[i]] else {
        return None;
    };
    // A stage of rows and columns (a nest of planes only as a time step's: `time::split`).
    let p = producer(func, f, body).filter(|p| p.mid.is_none())?;
    for j in i + 1..steps.len() {
        let u = &used[j];
        if u.touches(p.t) {
            return matches!(func.stmts[steps[j]], Stmt::Region { .. }).then_some((j, p));
        }
        if matches!(func.stmts[steps[j]], Stmt::Return(_))
            || u.stores.iter().any(|m| used[i].loads.contains(m))
        {
            return None;
        }
    }
    None
}

/// A producer's row nest: its row variable, its column variable and the column loop's bounds,
/// the `let`s and value of its point, the matrix it stores into and whether that store is
/// checked. In a nest of three (a 3-D matrix), `x` runs over its planes and `mid` is the loop
/// between (the rows: its variable and bounds).
pub(super) struct Producer {
    pub(super) x: VarId,
    pub(super) mid: Option<(VarId, (ExprId, ExprId))>,
    pub(super) y: VarId,
    pub(super) columns: (ExprId, ExprId),
    pub(super) lets: Vec<(VarId, ExprId)>,
    pub(super) value: ExprId,
    pub(super) t: usize,
    pub(super) checked: bool,
}

/// A loop of step 1 in order: its variable, bounds and body.
pub(super) fn serial(func: &Func, s: StmtId) -> Option<(VarId, (ExprId, ExprId), StmtId)> {
    match func.stmts[s] {
        Stmt::For {
            var,
            lo,
            hi,
            step: 1,
            kind: LoopKind::Serial,
            body,
        } => Some((var, (lo, hi), body)),
        _ => None,
    }
}

impl Producer {
    /// Expression nodes of its point (`let`s and value): what inlining it costs.
    pub(super) fn size(&self, func: &Func) -> usize {
        self.lets
            .iter()
            .map(|(_, e)| *e)
            .chain([self.value])
            .map(|e| {
                let mut n = 0;
                preorder(func, e, |_| {
                    n += 1;
                    true
                });
                n
            })
            .sum()
    }
}

pub(super) fn producer(func: &Func, f: &Function, body: StmtId) -> Option<Producer> {
    let serial = |s: StmtId| serial(func, s);
    let (x, (lo, _), xb) = serial(body)?;
    let (mut y, mut columns, mut yb) = serial(single(func, xb)?)?;
    // A nest of three: the middle loop's body is the column loop alone.
    let mut mid = None;
    if let Some(inner) = single(func, yb).and_then(serial) {
        mid = Some((y, columns));
        (y, columns, yb) = inner;
    }
    if !matches!(func.exprs[lo].kind, ExprKind::Int(0)) {
        return None;
    }
    let stmts = match &func.stmts[yb] {
        Stmt::Block(b) => b.clone(),
        _ => vec![yb],
    };
    let (last, lets) = stmts.split_last()?;
    let lets = lets
        .iter()
        .map(|s| match func.stmts[*s] {
            Stmt::Let(v, e) => Some((v, e)),
            _ => None,
        })
        .collect::<Option<Vec<_>>>()?;
    let Stmt::Store {
        buf: Buf::Matrix(t),
        ref index,
        value,
        checked,
    } = func.stmts[*last]
    else {
        return None;
    };
    let at = |k: usize, v: VarId| crate::lir::pass::parallel::is_var(func, index[k], v);
    let vars: Vec<VarId> = [x].into_iter().chain(mid.map(|m| m.0)).chain([y]).collect();
    if index.len() != vars.len()
        || !vars.iter().enumerate().all(|(k, v)| at(k, *v))
        || f.matrices[t].kind != MatrixKind::Local
    {
        return None;
    }
    Some(Producer {
        x,
        mid,
        y,
        columns,
        lets,
        value,
        t,
        checked,
    })
}

/// Whether a read of the producer's point has an index that divides its column variable (its
/// `let`s seen through).
pub(super) fn upsamples(func: &mut Func, p: &Producer) -> bool {
    let env: HashMap<VarId, ExprId> = p.lets.iter().copied().collect();
    let roots: Vec<ExprId> = p.lets.iter().map(|(_, e)| *e).chain([p.value]).collect();
    let mut indices = Vec::new();
    for e in roots {
        crate::lir::visit::preorder(func, e, |x| {
            if let ExprKind::Load { index, .. } = &func.exprs[x].kind {
                indices.extend(index.iter().copied());
            }
            true
        });
    }
    indices.into_iter().any(|i| {
        let i = substitute(func, i, &env, true);
        !crate::lir::visit::preorder(func, i, |x| match func.exprs[x].kind {
            ExprKind::Binary(BinOp::Div | BinOp::Rem | BinOp::Shr, a, _) => {
                !crate::lir::visit::mentions(func, a, |v| v == p.y)
            }
            _ => true,
        })
    })
}

/// The one statement `s` is (a block of one).
pub(super) fn single(func: &Func, s: StmtId) -> Option<StmtId> {
    match &func.stmts[s] {
        Stmt::Block(b) if b.len() == 1 => Some(b[0]),
        Stmt::Block(_) => None,
        _ => Some(s),
    }
}

/// What a statement tree loads and stores (matrices), and whether it holds a fold or an
/// integer division that may fail.
#[derive(Default)]
pub(super) struct Uses {
    pub(super) loads: Vec<usize>,
    pub(super) stores: Vec<usize>,
    pub(super) reduces: Vec<usize>,
    pub(super) fold: bool,
    pub(super) divides: bool,
    /// It holds a region that updates shared elements ([`Stmt::Update`], whose matrices are
    /// in `stores`) or scans (`ir::Region::prefixes`): such a step runs alone, neither fused
    /// nor fusing.
    pub(super) alone: bool,
}

impl Uses {
    /// Whether matrix `m` is read, written or reduced.
    pub(super) fn touches(&self, m: usize) -> bool {
        self.loads.contains(&m) || self.stores.contains(&m) || self.reduces.contains(&m)
    }
}

pub(super) fn uses(func: &Func, f: &Function, s: StmtId) -> Uses {
    fn walk(func: &Func, f: &Function, s: StmtId, u: &mut Uses) {
        let (es, ss) = stmt_parts(&func.stmts[s]);
        match func.stmts[s] {
            Stmt::Store {
                buf: Buf::Matrix(m),
                ..
            } => u.stores.push(m),
            Stmt::Update {
                buf: Buf::Matrix(m),
                ..
            } => u.stores.push(m),
            Stmt::Region { id, .. } => {
                let r = &f.regions[id];
                u.alone |= !r.updates.is_empty() || r.prefixes > 0;
            }
            Stmt::Reduce { matrix, .. } => u.reduces.push(matrix),
            _ => {}
        }
        for e in es {
            preorder(func, e, |x| {
                let node = &func.exprs[x];
                match node.kind {
                    ExprKind::Load {
                        buf: Buf::Matrix(m),
                        ..
                    } => u.loads.push(m),
                    ExprKind::Fold { .. } => u.fold = true,
                    // A divisor `nonzero(..)` is not zero where it is evaluated (a border
                    // map's period, or one the host's proof checked before the region runs).
                    ExprKind::Binary(BinOp::Div | BinOp::Rem, _, d) if node.ty.is_int() => {
                        u.divides |= !crate::lir::safe_divisor(func, d)
                            && !matches!(func.exprs[d].kind, ExprKind::Call(Builtin::NonZero, _));
                    }
                    _ => {}
                }
                true
            });
        }
        for c in ss {
            walk(func, f, c, u);
        }
    }
    let mut u = Uses::default();
    walk(func, f, s, &mut u);
    u
}

/// Whether producer step `i` (region `pid`, writing `t`) may be computed in consumer step `j`
/// at any of its points, any number of times, on both back ends: the program lets it
/// (`parac_schedule(fuse = 0)` keeps a stage apart), `t` is written whole, by `P` alone, and read
/// by `C` alone; `P` cannot fail once its host proof passed (no access it guards, no division
/// that may fail), reads neither `t` nor what `C` writes, and writes `t` alone; neither holds
/// a fold.
pub(super) fn separable(
    f: &Function,
    whole: &[bool],
    used: &[Uses],
    (i, j): (usize, usize),
    (pid, t): (RegionId, usize),
    readers: &[usize],
) -> bool {
    let r = &f.regions[pid];
    let (pu, cu) = (&used[i], &used[j]);
    r.fuse
        && whole[t]
        && !(0..r.accesses.len()).any(|a| safety::guarded(f, r, a))
        && !(pu.fold
            || cu.fold
            || pu.alone
            || cu.alone
            || pu.divides
            || pu.loads.contains(&t)
            || cu.stores.contains(&t))
        && !pu.loads.iter().any(|m| cu.stores.contains(m))
        && pu.stores.iter().all(|m| *m == t)
        && !(0..used.len()).any(|k| k != i && k != j && !readers.contains(&k) && used[k].touches(t))
}

/// The steps reading `t` (written by producer step `i`, first read by step `j`): `j`, and the
/// later regions that read it, where each may have `P` computed in its own tasks: none writes
/// `t`, and no step from `P` to the last of them writes what `P` reads or returns (each reader
/// then sees `P`'s values, as `consumer` asks of `j`), and those steps are regions and
/// allocations alone (so that the model chooses between the clones and the steps apart:
/// [`guarded`]). `None` where a later step reads `t` otherwise.
pub(super) fn readers(
    func: &Func,
    steps: &[StmtId],
    used: &[Uses],
    (i, j): (usize, usize),
    t: usize,
) -> Option<Vec<usize>> {
    let later = later_readers(used, j, t)?;
    if later
        .iter()
        .any(|k| !matches!(func.stmts[steps[*k]], Stmt::Region { .. }))
    {
        return None;
    }
    let out: Vec<usize> = [j].into_iter().chain(later).collect();
    let last = *out.last()?;
    let clean = (i + 1..last).all(|k| {
        plain(func, steps[k]) && !used[k].stores.iter().any(|m| used[i].loads.contains(m))
    });
    (out.len() == 1 || clean).then_some(out)
}

/// The steps reading `t` (written by producer step `i`) where its first reader, step `j`,
/// stores it for the later ones: `j` and those ([`later_readers`]), where there are some, and
/// the steps from `P` to `C` are regions and allocations alone (so that the model chooses:
/// [`guarded`]).
pub(super) fn stored_readers(
    func: &Func,
    steps: &[StmtId],
    used: &[Uses],
    (i, j): (usize, usize),
    t: usize,
) -> Option<Vec<usize>> {
    let later = later_readers(used, j, t).filter(|l| !l.is_empty())?;
    (i..=j)
        .all(|k| plain(func, steps[k]))
        .then(|| [j].into_iter().chain(later).collect())
}

/// The steps after step `j` that read `t`, where none writes it (each then reads the values
/// `t`'s producer stored, or a fused reader's tasks stored for it); `None` where one writes it.
pub(super) fn later_readers(used: &[Uses], j: usize, t: usize) -> Option<Vec<usize>> {
    let later: Vec<usize> = (j + 1..used.len())
        .filter(|k| used[*k].touches(t))
        .collect();
    (!later
        .iter()
        .any(|k| used[*k].stores.contains(&t) || used[*k].alone))
    .then_some(later)
}

/// Whether region `rid`'s loop `d` runs from 0 in steps of 1 to matrix `t`'s dimension `d`
/// (the same host expression).
pub(super) fn spans_dim(f: &Function, rid: RegionId, t: usize, d: usize) -> bool {
    let text = |e| crate::ir::display::host_text(f, e);
    match f.regions[rid].dims.iter().flatten().nth(d) {
        Some(x) if x.step == 1 => {
            text(&x.lo) == "0"
                && f.matrices[t]
                    .dims
                    .get(d)
                    .is_some_and(|m| text(&x.hi) == text(m))
        }
        _ => false,
    }
}

/// Whether region `rid`'s iteration space is matrix `t`'s extents exactly (two dimensions,
/// each [`spans_dim`]).
pub(super) fn space_of(f: &Function, rid: RegionId, t: usize) -> bool {
    f.regions[rid].dims.iter().flatten().count() == 2 && (0..2).all(|d| spans_dim(f, rid, t, d))
}
