//! Kernels of the optimized plans ([`Schedule`]) of an iterator region: lanes (several
//! iteration points per work-item), loads shared by the lanes and hoisted (`cse`), vector loads
//! and stores (`vmem`), unrolled windows (`unroll`). The shared loads and held-back stores live
//! in `cache.rs`, unrolling in `unroll.rs`, local-memory tiles (`lds`) in `tile.rs`, the
//! peephole rewrites in `range.rs`.
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
    v: &Schedule,
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
        Some(l) if v.lds().is_some() => {
            let _ = writeln!(
                out,
                "__kernel __attribute__((reqd_work_group_size({}, {}, 1)))",
                l[0], l[1]
            );
        }
        _ => {}
    }
    let mut ps = params(f, r);
    if v.split() {
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
        if v.lds().is_some() {
            // Every work-item reaches the barrier: no early return.
            let _ = writeln!(
                out,
                "    const int v{slot} = ({lo}) + (int)get_global_id({cl}) * {per};\n    const int g{slot} = ({lo}) + (int)(get_group_id({cl}) * get_local_size({cl})) * {per};"
            );
            in_range.push(format!("v{slot} < ({hi})"));
            group[*slot] = format!("g{slot}");
        } else if v.split() {
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
    let hold_stores = v.vmem() && !store_in_branch(&r.body, 0);
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
        if v.cse() || v.vmem() {
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
    let whole = if fast_conds.is_empty() || v.split() {
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

/// Iteration points per work-item along each slot (lanes).
pub(super) fn lanes_of(r: &Region, v: &Schedule) -> Vec<i64> {
    let slots = cl_slots(r);
    let mut lanes = vec![1i64; r.dims.len()];
    if let Some(&c) = slots.first() {
        lanes[c] = v.cols() as i64;
    }
    if let Some(&rw) = slots.get(1) {
        lanes[rw] = v.rows() as i64;
    }
    lanes
}
