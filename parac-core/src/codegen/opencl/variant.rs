//! Kernels of the optimized plans ([`Variant`]) of an iterator region: lanes (several
//! iteration points per work-item), loads shared by the lanes and hoisted (`cse`), vector loads
//! and stores (`vmem`), unrolled windows (`unroll`); the peephole rewrites live in `range.rs`.
//!
//! Shape of a variant kernel, `v<slot>` being the work-item's first point:
//! ```c
//! if (every lane in range && every bordered read of every lane inside its matrix) {
//!     hoisted loads (vloadN where adjacent), then each lane's body, then the vstoreN's
//! } else {
//!     each lane in range: the baseline's checked body
//! }
//! ```
//! The fast path reads no border, so its loads are plain; the slow path is the baseline's.
//! A `split` plan's kernel is the fast path alone, launched over the interior box only (the
//! baseline kernel runs the strips around it): `i<d> >= e<d>` is its one check.

use super::*;
use crate::check::relative::affine;

/// Loads shared by the lanes of one work-item.
#[derive(Default)]
pub(super) struct Cache {
    entries: Vec<Entry>,
}

/// One element read: the matrix and, per subscript, the coefficients of the work-item's base
/// variables and the constant offset.
struct Entry {
    m: MatrixId,
    subs: Key,
    name: String,
}

type Key = Vec<(Vec<i64>, i64)>;

/// A store held back to be written with the other lanes' as a vector store.
pub(super) struct Pending {
    m: MatrixId,
    subs: Key,
    name: String,
}

/// The affine form of every subscript of every access of `r` (a window by its start).
pub(crate) fn affs(f: &Function, r: &Region) -> Vec<Vec<Option<Affine>>> {
    r.accesses
        .iter()
        .map(|a| {
            a.subs
                .iter()
                .map(|s| {
                    let e = match s {
                        Sub::Point(e) | Sub::Window { start: e, .. } => e,
                        Sub::Star => return None,
                    };
                    let mut plain = true;
                    e.walk(&mut |x| {
                        plain &= matches!(
                            x.kind,
                            ExprKind::Int(_)
                                | ExprKind::Var(_)
                                | ExprKind::Size(_)
                                | ExprKind::Binary(..)
                                | ExprKind::Unary(..)
                                | ExprKind::Cast(..)
                        )
                    });
                    if plain { affine(f, r, e) } else { None }
                })
                .collect()
        })
        .collect()
}

/// `n` consecutive elements are read or written with one `vloadN`/`vstoreN`: the widest width
/// that fits what is left of the run.
fn chunks(len: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = len;
    while left > 0 {
        let w = [16, 8, 4, 2, 1]
            .into_iter()
            .find(|w| *w <= left)
            .unwrap_or(1);
        out.push(w);
        left -= w;
    }
    out
}

fn component(i: usize) -> String {
    format!("s{}", "0123456789abcdef".as_bytes()[i] as char)
}

/// Groups keys that differ only in the last subscript's offset into runs of consecutive
/// offsets: `(first index of each run in `keys`, run)`.
fn runs(keys: &[(MatrixId, &Key)]) -> Vec<Vec<usize>> {
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by(|&a, &b| {
        let (ma, ka) = keys[a];
        let (mb, kb) = keys[b];
        let (na, nb) = (ka.len(), kb.len());
        (ma, &ka[..na - 1], &ka[na - 1].0, ka[na - 1].1).cmp(&(
            mb,
            &kb[..nb - 1],
            &kb[nb - 1].0,
            kb[nb - 1].1,
        ))
    });
    let mut out: Vec<Vec<usize>> = Vec::new();
    for i in order {
        let (m, k) = keys[i];
        let n = k.len();
        if let Some(run) = out.last_mut() {
            let (pm, pk) = keys[*run.last().expect("non-empty run")];
            if pm == m
                && pk.len() == n
                && pk[..n - 1] == k[..n - 1]
                && pk[n - 1].0 == k[n - 1].0
                && pk[n - 1].1 + 1 == k[n - 1].1
            {
                run.push(i);
                continue;
            }
        }
        out.push(vec![i]);
    }
    out
}

impl K<'_> {
    /// Whether the region writes matrix `m`.
    fn writes(&self, m: MatrixId) -> bool {
        self.r.accesses.iter().any(|a| a.write && a.matrix == m)
    }

    /// The key of access `a` (for a window, of its element at the constant block offsets), the
    /// lane's offsets folded in; `None` if a subscript is not affine.
    fn key(&self, a: AccessId, block_ix: Option<(&str, &str)>) -> Option<Key> {
        let acc = &self.r.accesses[a];
        let subs_aff = self.aff.get(a)?;
        let n = acc.subs.len();
        let mut key = Vec::with_capacity(n);
        for (k, s) in acc.subs.iter().enumerate() {
            let af = subs_aff.get(k)?.as_ref()?;
            let extra = match s {
                Sub::Point(_) => 0,
                Sub::Window { stride, .. } => {
                    let (bi, bj) = block_ix?;
                    let off: i64 = if k + 1 == n { bj } else { bi }.parse().ok()?;
                    off * stride
                }
                Sub::Star => return None,
            };
            let lane: i64 = af.coefs.iter().zip(&self.loff).map(|(c, o)| c * o).sum();
            key.push((af.coefs.clone(), af.offset + extra + lane));
        }
        Some(key)
    }

    /// The C index of one keyed subscript, in the work-item's base variables.
    fn render_sub(&self, (coefs, off): &(Vec<i64>, i64)) -> String {
        let mut s = String::new();
        for (slot, c) in coefs.iter().enumerate() {
            if *c != 0 {
                let _ = write!(s, "{c} * {} + ", self.bases[slot]);
            }
        }
        format!("({s}{off})")
    }

    fn render_linear(&self, m: MatrixId, key: &Key) -> String {
        let idx: Vec<String> = key.iter().map(|k| self.render_sub(k)).collect();
        self.linear(m, &idx)
    }

    /// A read served by the work-item's shared loads (`cse`), if it qualifies: a matrix the
    /// region does not write, affine subscripts, not under an `if` unless both branches read it.
    pub(super) fn cached_load(
        &self,
        a: AccessId,
        block_ix: Option<(&str, &str)>,
    ) -> Option<String> {
        let cache = self.cache?;
        let acc = &self.r.accesses[a];
        if acc.write
            || self.writes(acc.matrix)
            || matches!(self.f.matrices[acc.matrix].kind, MatrixKind::Const(_))
        {
            return None;
        }
        if self.branch.get() > 0 && !self.hoistable.borrow().contains(&a) {
            return None;
        }
        let key = self.key(a, block_ix)?;
        let mut c = cache.borrow_mut();
        if let Some(e) = c
            .entries
            .iter()
            .find(|e| e.m == acc.matrix && e.subs == key)
        {
            return Some(e.name.clone());
        }
        let name = self.names.borrow_mut().call("c");
        c.entries.push(Entry {
            m: acc.matrix,
            subs: key,
            name: name.clone(),
        });
        Some(name)
    }

    /// The declarations of the shared loads: adjacent elements of a row through `vloadN` when
    /// `vmem` is on.
    fn cache_decls(&self, cache: &Cache, pad: &str) -> String {
        let mut out = String::new();
        let keys: Vec<(MatrixId, &Key)> = cache.entries.iter().map(|e| (e.m, &e.subs)).collect();
        let groups = if self.v.vmem {
            runs(&keys)
        } else {
            (0..keys.len()).map(|i| vec![i]).collect()
        };
        for run in groups {
            let mut at = 0;
            for w in chunks(run.len()) {
                let first = &cache.entries[run[at]];
                let m = first.m;
                let t = cty(self.f.matrices[m].elem);
                if w == 1 {
                    let _ = writeln!(
                        out,
                        "{pad}const {t} {} = m{m}[{}];",
                        first.name,
                        self.render_linear(m, &first.subs)
                    );
                } else {
                    let cv = self.names.borrow_mut().call("cv");
                    let _ = writeln!(
                        out,
                        "{pad}const {t}{w} {cv} = vload{w}(0, m{m} + {});",
                        self.render_linear(m, &first.subs)
                    );
                    for i in 0..w {
                        let e = &cache.entries[run[at + i]];
                        let _ = writeln!(out, "{pad}const {t} {} = {cv}.{};", e.name, component(i));
                    }
                }
                at += w;
            }
        }
        out
    }

    /// A store held back for a vector store (`vmem`): returns the statement that computes the
    /// value, or `None` to store in place.
    pub(super) fn defer_store(&self, a: AccessId, value: &str) -> Option<String> {
        let stores = self.stores?;
        if self.branch.get() > 0 {
            return None;
        }
        let key = self.key(a, None)?;
        let m = self.r.accesses[a].matrix;
        let name = self.fresh();
        let t = cty(self.f.matrices[m].elem);
        let mut st = stores.borrow_mut();
        st.retain(|p| !(p.m == m && p.subs == key));
        st.push(Pending {
            m,
            subs: key,
            name: name.clone(),
        });
        Some(format!("const {t} {name} = ({t})({value});"))
    }

    /// The held-back stores: `vstoreN` for adjacent elements of a row.
    fn flush_stores(&self, stores: &[Pending], pad: &str) -> String {
        let mut out = String::new();
        let keys: Vec<(MatrixId, &Key)> = stores.iter().map(|p| (p.m, &p.subs)).collect();
        for run in runs(&keys) {
            let mut at = 0;
            for w in chunks(run.len()) {
                let first = &stores[run[at]];
                let m = first.m;
                let t = cty(self.f.matrices[m].elem);
                let target = self.render_linear(m, &first.subs);
                if w == 1 {
                    let _ = writeln!(out, "{pad}m{m}[{target}] = {};", first.name);
                } else {
                    let vals: Vec<&str> =
                        (0..w).map(|i| stores[run[at + i]].name.as_str()).collect();
                    let _ = writeln!(
                        out,
                        "{pad}vstore{w}(({t}{w})({}), 0, m{m} + {target});",
                        vals.join(", ")
                    );
                }
                at += w;
            }
        }
        out
    }

    /// A constant matrix's element at constant indices, as a literal (`unroll`).
    pub(super) fn const_literal(
        &self,
        a: AccessId,
        want: Scalar,
        block_ix: Option<(&str, &str)>,
    ) -> Option<String> {
        if !self.v.unroll {
            return None;
        }
        let acc = &self.r.accesses[a];
        let mat = &self.f.matrices[acc.matrix];
        let MatrixKind::Const(vals) = &mat.kind else {
            return None;
        };
        let n = acc.subs.len();
        let mut lin: i64 = 0;
        for (k, s) in acc.subs.iter().enumerate() {
            let i = match s {
                Sub::Point(Expr {
                    kind: ExprKind::Int(v),
                    ..
                }) => *v as i64,
                Sub::Window {
                    start:
                        Expr {
                            kind: ExprKind::Int(v),
                            ..
                        },
                    stride,
                    ..
                } => {
                    let (bi, bj) = block_ix?;
                    let off: i64 = if k + 1 == n { bj } else { bi }.parse().ok()?;
                    *v as i64 + off * stride
                }
                _ => return None,
            };
            let dim = match &mat.dims[k].kind {
                ExprKind::Int(d) => *d as i64,
                _ => return None,
            };
            if i < 0 || i >= dim {
                return None;
            }
            lin = lin * dim + i;
        }
        let v = *vals.get(lin as usize)?;
        let lit = if mat.elem.is_float() {
            c_float(v)
        } else {
            c_int(v as i128, mat.elem)
        };
        Some(format!("(({}){lit})", cty(want)))
    }

    /// Element `(i, j)` of a block-valued expression, unrolled (`unroll`): the same value and
    /// type as the baseline's array element.
    pub(super) fn belem(&self, e: &Expr, i: u32, j: u32, pre: &mut Vec<String>) -> String {
        let Type::Block { elem, .. } = e.ty else {
            return self.scalar(e, pre);
        };
        let t = cty(elem);
        let (si, sj) = (i.to_string(), j.to_string());
        let code = match &e.kind {
            ExprKind::Local(l) => return format!("l{l}{}[{i}][{j}]", self.sfx),
            ExprKind::Block(a) => return self.load(*a, elem, Some((&si, &sj)), pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    return self.load(a, *to, Some((&si, &sj)), pre);
                }
                self.belem(inner, i, j, pre)
            }
            ExprKind::Unary(op, a) => {
                let x = self.belem(a, i, j, pre);
                match op {
                    UnOp::Neg => format!("(-{x})"),
                    UnOp::Plus => x,
                    UnOp::Not => format!("(~{x})"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr, pre: &mut Vec<String>| {
                    if x.ty.is_block() {
                        self.belem(x, i, j, pre)
                    } else {
                        format!("({})", self.scalar(x, pre))
                    }
                };
                let (x, y) = (side(a, pre), side(b, pre));
                let o = c_op(*op);
                format!("({x} {o} {y})")
            }
            ExprKind::MatMul(a, b) => {
                let (_, inner) = shape(a.ty);
                let s = self.fresh();
                let mut st = format!("{t} {s} = 0;");
                for k in 0..inner {
                    let (x, y) = (self.belem(a, i, k, pre), self.belem(b, k, j, pre));
                    let _ = write!(st, " {s} += {x} * {y};");
                }
                pre.push(st);
                s
            }
            ExprKind::Transpose(a) => return self.belem(a, j, i, pre),
            _ => {
                let b = self.block(e, pre);
                return format!("{b}[{i}][{j}]");
            }
        };
        format!("(({t})({code}))")
    }

    /// A block reduction or convolution, unrolled: the baseline's loop, statement for
    /// statement, so integer and float results are identical.
    pub(super) fn unrolled(&self, e: &Expr, pre: &mut Vec<String>) -> Option<String> {
        if !self.v.unroll {
            return None;
        }
        let t = e.ty.elem();
        let ty = cty(t);
        let v = self.fresh();
        match &e.kind {
            ExprKind::Reduce(op, a) => {
                let (r, c) = shape(a.ty);
                let mut els = Vec::new();
                for i in 0..r {
                    for j in 0..c {
                        els.push(self.belem(a, i, j, pre));
                    }
                }
                let mut st = match op {
                    ReduceOp::Sum | ReduceOp::Mean => format!("{ty} {v} = 0;"),
                    _ => format!("{ty} {v} = ({ty}){};", els[0]),
                };
                let f = if t.is_float() { "f" } else { "" };
                for x in &els {
                    let _ = match op {
                        ReduceOp::Sum | ReduceOp::Mean => write!(st, " {v} += ({ty}){x};"),
                        ReduceOp::Min => write!(st, " {v} = {f}min({v}, ({ty}){x});"),
                        ReduceOp::Max => write!(st, " {v} = {f}max({v}, ({ty}){x});"),
                    };
                }
                pre.push(st);
                Some(if *op == ReduceOp::Mean {
                    format!("({v} / ({ty}){})", r * c)
                } else {
                    v
                })
            }
            ExprKind::Conv(fl, w) => {
                let (r, c) = shape(fl.ty);
                let mut st = format!("{ty} {v} = 0;");
                for i in 0..r {
                    for j in 0..c {
                        let (x, y) = (self.belem(fl, i, j, pre), self.belem(w, i, j, pre));
                        let _ = write!(st, " {v} += {x} * {y};");
                    }
                }
                pre.push(st);
                Some(v)
            }
            _ => None,
        }
    }

    /// Before generating an `if`: the accesses both branches read at the same element
    /// (unconditionally within the branch) may be hoisted above it.
    pub(super) fn mark_hoistable(&self, then: &[KStmt], els: &[KStmt]) {
        if self.cache.is_none() {
            return;
        }
        let reads = |body: &[KStmt]| {
            let mut v: Vec<(AccessId, Key)> = Vec::new();
            for s in body {
                let e = match s {
                    KStmt::Let(_, e) | KStmt::Store(_, e) | KStmt::If(e, ..) => e,
                };
                e.walk(&mut |x| {
                    if let ExprKind::Load(a) = x.kind {
                        if let Some(k) = self.key(a, None) {
                            v.push((a, k));
                        }
                    }
                });
            }
            v
        };
        let (a, b) = (reads(then), reads(els));
        let mut h = self.hoistable.borrow_mut();
        for (x, kx) in &a {
            for (y, ky) in &b {
                if self.r.accesses[*x].matrix == self.r.accesses[*y].matrix && kx == ky {
                    h.push(*x);
                    h.push(*y);
                }
            }
        }
    }
}

/// Whether some store of the body is under an `if` (then stores are not held back: their
/// order with the branch's stores must stay).
fn store_in_branch(body: &[KStmt], depth: usize) -> bool {
    body.iter().any(|s| match s {
        KStmt::Store(..) => depth > 0,
        KStmt::Let(..) => false,
        KStmt::If(_, t, e) => store_in_branch(t, depth + 1) || store_in_branch(e, depth + 1),
    })
}

/// The kernel of plan `v` for iterator region `rid`, named `kname`. It follows the baseline
/// kernel in the program, whose bordered-load helpers its slow path calls.
pub(super) fn variant_kernel(
    out: &mut String,
    f: &Function,
    rid: RegionId,
    v: &Variant,
    kname: &str,
    aff: &[Vec<Option<Affine>>],
) {
    let r = &f.regions[rid];
    let slots = cl_slots(r);
    let lanes = lanes_of(r, v);
    let tiles = tiles(f, rid, v, aff);
    let bname = kernel_name(f, rid);
    // Every lane combination, row lanes outer.
    let mut combos: Vec<Vec<i64>> = vec![vec![0; r.dims.len()]];
    for &slot in slots.iter().rev() {
        let mut next = Vec::new();
        for c in &combos {
            for l in 0..lanes[slot] {
                let mut c = c.clone();
                c[slot] = l * r.dims[slot].as_ref().map_or(1, |d| d.step);
                next.push(c);
            }
        }
        combos = next;
    }
    // One namer for every body of the kernel.
    let names = names::kernel_namer(f, rid, combos.len());
    let base = {
        let mut b = K::plain(f, r, true, &names);
        b.tiles = &tiles;
        b
    };
    match v.local_size() {
        Some(l) if v.lds.is_some() => {
            let _ = writeln!(
                out,
                "__kernel __attribute__((reqd_work_group_size({}, {}, 1)))",
                l[0], l[1]
            );
        }
        _ => {}
    }
    let mut ps = params(f, r);
    if v.split {
        // The interior box's end, in work-items, per OpenCL dimension (its start is the
        // launch's global offset).
        ps.extend((0..slots.len()).map(|cl| format!("int e{cl}")));
    }
    let _ = writeln!(out, "__kernel void {kname}({}) {{", ps.join(", "));
    let mut fast_conds = Vec::new();
    let mut in_range = Vec::new();
    let mut group = vec![String::new(); r.dims.len()];
    for (cl, slot) in slots.iter().enumerate() {
        let d = r.dims[*slot].as_ref().expect("slot");
        let hi = base.expr_pure(&d.hi);
        let lo = base.expr_pure(&d.lo);
        let per = d.step * lanes[*slot];
        if v.lds.is_some() {
            // Every work-item reaches the barrier: no early return.
            let _ = writeln!(
                out,
                "    const int v{slot} = ({lo}) + (int)get_global_id({cl}) * {per};\n    const int g{slot} = ({lo}) + (int)(get_group_id({cl}) * get_local_size({cl})) * {per};"
            );
            in_range.push(format!("v{slot} < ({hi})"));
            group[*slot] = format!("g{slot}");
        } else if v.split {
            let _ = writeln!(
                out,
                "    const int i{cl} = (int)get_global_id({cl});\n    if (i{cl} >= e{cl}) return;\n    const int v{slot} = ({lo}) + i{cl} * {per};"
            );
        } else {
            let _ = writeln!(
                out,
                "    const int v{slot} = ({lo}) + (int)get_global_id({cl}) * {per};\n    if (v{slot} >= ({hi})) return;"
            );
        }
        if lanes[*slot] > 1 {
            fast_conds.push(format!(
                "v{slot} + {} < ({hi})",
                (lanes[*slot] - 1) * d.step
            ));
        }
    }
    let vars_of = |off: &[i64]| -> Vec<String> {
        (0..r.dims.len())
            .map(|s| {
                if off[s] == 0 {
                    format!("v{s}")
                } else {
                    format!("(v{s} + {})", off[s])
                }
            })
            .collect()
    };
    // The bordered reads of every lane inside their matrices.
    let bordered: Vec<AccessId> = (0..r.accesses.len())
        .filter(|a| base.bordered(*a) && !tiles.iter().any(|t| t.m == r.accesses[*a].matrix))
        .collect();
    for off in &combos {
        let mut k = K::plain(f, r, false, &names);
        k.vars = vars_of(off);
        for a in &bordered {
            match k.inside(*a) {
                Some(c) => fast_conds.push(c),
                None => fast_conds.push("0".to_string()),
            }
        }
    }
    let cache = RefCell::new(Cache::default());
    let stores = RefCell::new(Vec::new());
    let hold_stores = v.vmem && !store_in_branch(&r.body, 0);
    let mut body = String::new();
    for (n, off) in combos.iter().enumerate() {
        let mut k = K::plain(f, r, false, &names);
        k.v = v.clone();
        k.vars = vars_of(off);
        k.sfx = if combos.len() > 1 {
            format!("_{n}")
        } else {
            String::new()
        };
        k.loff = off.clone();
        k.aff = aff;
        k.tiles = &tiles;
        if v.cse || v.vmem {
            k.cache = Some(&cache);
        }
        if hold_stores {
            k.stores = Some(&stores);
        }
        k.stmts(&mut body, &r.body, 2);
    }
    let mut fast = String::new();
    {
        let mut k = K::plain(f, r, false, &names);
        k.v = v.clone();
        fast.push_str(&k.cache_decls(&cache.borrow(), "        "));
        fast.push_str(&body);
        fast.push_str(&k.flush_stores(&stores.borrow(), "        "));
    }
    // The slow path: each lane in range, the baseline's checked body (not built for a split
    // plan, whose kernel has none).
    let slow_path = || {
        let mut slow = String::new();
        let mut vars: Vec<String> = (0..r.dims.len()).map(|s| format!("v{s}")).collect();
        let mut depth = 2;
        let mut closes = 0;
        for &slot in slots.iter().rev() {
            if lanes[slot] == 1 {
                continue;
            }
            let pad = "    ".repeat(depth);
            let d = r.dims[slot].as_ref().expect("slot");
            let _ = writeln!(
                slow,
                "{pad}for (int q{slot} = 0; q{slot} < {}; q{slot}++) {{\n{pad}    const int w{slot} = v{slot} + q{slot} * {};\n{pad}    if (w{slot} >= ({})) break;",
                lanes[slot],
                d.step,
                base.expr_pure(&d.hi)
            );
            vars[slot] = format!("w{slot}");
            depth += 1;
            closes += 1;
        }
        let mut k = K::plain(f, r, true, &names);
        k.bases = vars.clone();
        k.vars = vars;
        k.aff = aff;
        k.tiles = &tiles;
        k.stmts(&mut slow, &r.body, depth);
        for c in (0..closes).rev() {
            let _ = writeln!(slow, "{}}}", "    ".repeat(2 + c));
        }
        slow
    };
    if !tiles.is_empty() {
        base.tile_fill(out, &bname, &group);
    }
    let whole = if fast_conds.is_empty() || v.split {
        // No lanes and no borders, or the interior box of a split plan: the fast path always
        // applies.
        format!("    {{\n{fast}    }}\n")
    } else {
        format!(
            "    if ({}) {{\n{fast}    }} else {{\n{}    }}\n",
            fast_conds.join(" && "),
            slow_path()
        )
    };
    if in_range.is_empty() {
        out.push_str(&whole);
    } else {
        let _ = writeln!(out, "    if ({}) {{", in_range.join(" && "));
        out.push_str(&whole);
        out.push_str("    }\n");
    }
    out.push_str("}\n");
    super::border_helpers(out, f, rid, kname);
}

/// A local-memory tile of one matrix (`lds`): the rows and columns the work-group's iterations
/// read, loaded once per group. Reads of it use keyed (affine) subscripts.
pub(super) struct Tile {
    pub(super) m: MatrixId,
    /// Slots of the row and the column subscript.
    slots: [usize; 2],
    /// Their coefficients (> 0).
    coef: [i64; 2],
    /// The smallest offset read, per dimension.
    omin: [i64; 2],
    /// Tile rows and columns.
    size: [i64; 2],
    /// The element type held: the matrix's, or its promoted type when border values (which
    /// may leave the element's range) are stored too.
    ty: Scalar,
    /// Whether border rules of the region extend the matrix.
    bordered: bool,
}

impl Tile {
    /// Bytes of local memory.
    pub(super) fn bytes(&self) -> usize {
        (self.size[0] * self.size[1]) as usize * self.ty.bytes()
    }
}

/// Iteration points per work-item along each slot (lanes).
fn lanes_of(r: &Region, v: &Variant) -> Vec<i64> {
    let slots = cl_slots(r);
    let mut lanes = vec![1i64; r.dims.len()];
    if let Some(&c) = slots.first() {
        lanes[c] = v.cols as i64;
    }
    if let Some(&rw) = slots.get(1) {
        lanes[rw] = v.rows as i64;
    }
    lanes
}

/// The tiles of plan `v` (none without `lds`): every 2-D matrix the region reads and does not
/// write whose reads are all affine, each subscript in one slot with a positive coefficient,
/// and that neighbouring iterations share.
pub(super) fn tiles(
    f: &Function,
    rid: RegionId,
    v: &Variant,
    aff: &[Vec<Option<Affine>>],
) -> Vec<Tile> {
    let r = &f.regions[rid];
    let Some((lx, ly)) = v.lds else {
        return Vec::new();
    };
    let slots = cl_slots(r);
    if slots.len() != 2 {
        return Vec::new();
    }
    let lanes = lanes_of(r, v);
    // Iteration points of a work-group along each slot.
    let mut group = vec![1i64; r.dims.len()];
    group[slots[0]] = lx as i64 * lanes[slots[0]];
    group[slots[1]] = ly as i64 * lanes[slots[1]];
    let mut out = Vec::new();
    let mut mats: Vec<MatrixId> = r
        .accesses
        .iter()
        .filter(|a| !a.write)
        .map(|a| a.matrix)
        .collect();
    mats.sort();
    mats.dedup();
    'mats: for m in mats {
        let mat = &f.matrices[m];
        if mat.dims.len() != 2
            || matches!(mat.kind, MatrixKind::Const(_))
            || r.accesses.iter().any(|a| a.write && a.matrix == m)
        {
            continue;
        }
        let mut slot = [usize::MAX; 2];
        let mut coef = [0i64; 2];
        let mut lo = [i64::MAX; 2];
        let mut hi = [i64::MIN; 2];
        for (i, a) in r.accesses.iter().enumerate() {
            if a.matrix != m {
                continue;
            }
            for d in 0..2 {
                let Some(Some(af)) = aff.get(i).and_then(|x| x.get(d)) else {
                    continue 'mats;
                };
                let nz: Vec<usize> = (0..af.coefs.len()).filter(|s| af.coefs[*s] != 0).collect();
                let [s] = nz.as_slice() else {
                    continue 'mats;
                };
                let c = af.coefs[*s];
                if c <= 0 || (slot[d] != usize::MAX && (slot[d] != *s || coef[d] != c)) {
                    continue 'mats;
                }
                slot[d] = *s;
                coef[d] = c;
                let ext = match &a.subs[d] {
                    Sub::Window { len, stride, .. } => (*len as i64 - 1) * stride,
                    _ => 0,
                };
                lo[d] = lo[d].min(af.offset.min(af.offset + ext));
                hi[d] = hi[d].max(af.offset.max(af.offset + ext));
            }
        }
        if slot[0] == slot[1]
            || slot.contains(&usize::MAX)
            || (hi[0] == lo[0] && hi[1] == lo[1] && coef == [1, 1])
        {
            continue;
        }
        let size: Vec<i64> = (0..2)
            .map(|d| {
                let st = r.dims[slot[d]].as_ref().map_or(1, |x| x.step);
                coef[d] * (group[slot[d]] - 1) * st + (hi[d] - lo[d]) + 1
            })
            .collect();
        let bordered = has_rule(f, r, m);
        let ty = if bordered {
            mat.elem.promote()
        } else {
            mat.elem
        };
        if bordered
            && r.rules.iter().any(|id| {
                f.rules[*id]
                    .entries
                    .iter()
                    .any(|e| e.matrix == m && e.value.ty.elem().bytes() > ty.bytes())
            })
        {
            continue;
        }
        out.push(Tile {
            m,
            slots: [slot[0], slot[1]],
            coef,
            omin: [lo[0], lo[1]],
            size: [size[0], size[1]],
            ty,
            bordered,
        });
    }
    out
}

/// Local memory of plan `v` of region `rid`, in bytes (0: no tile).
pub fn local_bytes(f: &Function, rid: RegionId, v: &Variant) -> usize {
    if v.lds.is_none() {
        return 0;
    }
    let r = &f.regions[rid];
    let aff = affs(f, r);
    tiles(f, rid, v, &aff).iter().map(Tile::bytes).sum()
}

impl K<'_> {
    /// A read served by a local-memory tile.
    pub(super) fn tile_load(&self, a: AccessId, block_ix: Option<(&str, &str)>) -> Option<String> {
        let acc = &self.r.accesses[a];
        let t = self.tiles.iter().find(|t| t.m == acc.matrix)?;
        if acc.write {
            return None;
        }
        let key = self.key(a, block_ix)?;
        let m = t.m;
        Some(format!(
            "tile{m}[({} - tr{m}) * {} + ({} - tc{m})]",
            self.render_sub(&key[0]),
            t.size[1],
            self.render_sub(&key[1])
        ))
    }

    /// Declares and fills the tiles: every work-item of the group loads a share, consecutive
    /// work-items consecutive columns (coalesced); then a barrier.
    fn tile_fill(&self, out: &mut String, kernel: &str, group: &[String]) {
        for t in self.tiles {
            let m = t.m;
            let (th, tw) = (t.size[0], t.size[1]);
            let ty = cty(t.ty);
            let rows = self.dim(m, 0);
            let cols = self.dim(m, 1);
            let outside = if t.bordered {
                let mut args = vec![format!("m{m}"), format!("p{m}")];
                args.extend((0..self.f.sizes.len()).map(|i| format!("z{i}")));
                args.extend(hosts_used(self.f, self.r).iter().map(|h| format!("s{h}")));
                args.push("gr".into());
                args.push("gc".into());
                // A tile also holds positions no iteration reads (past the rule's widths at the
                // image's far side): their raises go to the flag's scratch half, which the host
                // ignores.
                args.push("err + 4".into());
                format!("ld_{kernel}_m{m}_{ty}({})", args.join(", "))
            } else {
                format!("({ty})0")
            };
            let _ = writeln!(
                out,
                "    __local {ty} tile{m}[{}];\n    const int tr{m} = {} * {} + {};\n    const int tc{m} = {} * {} + {};\n    for (int i = (int)(get_local_id(1) * get_local_size(0) + get_local_id(0)); i < {}; i += (int)(get_local_size(0) * get_local_size(1))) {{\n        const int gr = tr{m} + i / {tw}, gc = tc{m} + i % {tw};\n        tile{m}[i] = (gr >= 0 && gr < {rows} && gc >= 0 && gc < {cols}) ? ({ty})m{m}[gr * p{m} + gc] : {outside};\n    }}",
                th * tw,
                t.coef[0],
                group[t.slots[0]],
                t.omin[0],
                t.coef[1],
                group[t.slots[1]],
                t.omin[1],
                th * tw,
            );
        }
        out.push_str("    barrier(CLK_LOCAL_MEM_FENCE);\n");
    }
}
