//! Programs and kernel signatures: the prelude (guard helpers, constant matrices), the
//! baseline program and each candidate's, kernel names, and what a kernel takes as arguments.

use super::*;

/// The program's guard helpers (see `codegen::safety`): `pc_oob` raises the call's error flag
/// (the first raise keeps its code and indices) and gives 0; `pc_div_T`/`pc_rem_T` divide
/// without trapping (by 0: the flag; the smallest integer by -1 wraps, as the CPU path does).
const GUARDS: &str = "static int pc_oob(__global int* err, int code, long i0, long i1, long i2) {
    if (atomic_cmpxchg((volatile __global int*)err, 0, code) == 0) { err[1] = (int)i0; err[2] = (int)i1; err[3] = (int)i2; }
    return 0;
}
#define PC_DIVS(T, UT) \\
static T pc_div_##T(T a, T b, __global int* err, int code) { if (b == 0) return (T)pc_oob(err, code, 0, 0, 0); if (b == (T)-1) return (T)((UT)0 - (UT)a); return a / b; } \\
static T pc_rem_##T(T a, T b, __global int* err, int code) { if (b == 0) return (T)pc_oob(err, code, 0, 0, 0); if (b == (T)-1) return (T)0; return a % b; }
#define PC_DIVU(T) \\
static T pc_div_##T(T a, T b, __global int* err, int code) { if (b == 0) return (T)pc_oob(err, code, 0, 0, 0); return a / b; } \\
static T pc_rem_##T(T a, T b, __global int* err, int code) { if (b == 0) return (T)pc_oob(err, code, 0, 0, 0); return a % b; }
PC_DIVS(int, uint)
PC_DIVU(uint)
PC_DIVS(long, ulong)
PC_DIVU(ulong)

";

/// The kernel name of a region (region names may repeat, e.g. the paper's `it`).
pub fn kernel_name(f: &Function, r: RegionId) -> String {
    crate::codegen::plans_name(r, &f.regions[r].name)
}

/// Which matrices a region uses, and how.
pub(crate) fn used(f: &Function, r: &Region) -> Vec<(MatrixId, bool)> {
    let mut v: Vec<(MatrixId, bool)> = Vec::new();
    let mut add = |m: MatrixId, w: bool| match v.iter_mut().find(|x| x.0 == m) {
        Some(x) => x.1 |= w,
        None => v.push((m, w)),
    };
    for r in kernel_regions(f, r) {
        for a in &r.accesses {
            add(a.matrix, a.write);
        }
        for id in &r.rules {
            for e in &f.rules[*id].entries {
                add(e.matrix, false);
            }
        }
    }
    v.retain(|(m, _)| !matches!(f.matrices[*m].kind, MatrixKind::Const(_)));
    v.sort();
    v
}

/// The regions whose matrices and host scalars region `r`'s kernels take: `r`; where `r` is
/// the first of a time step of several regions, the step's others (its time bands run them
/// all: `lir::pass::fuse::time::gpu`); where a fused plan may run its consumer with it
/// (`Function::fused_consumers`, `lir::pass::fuse::gpu`), those consumers.
fn kernel_regions<'f>(f: &'f Function, r: &'f Region) -> Vec<&'f Region> {
    let mut out = vec![r];
    let rid = f.regions.iter().position(|x| std::ptr::eq(x, r));
    if let Some((runs, _)) = rid.and_then(|rid| f.time_step(rid)) {
        out.extend(runs[1..].iter().map(|x| &f.regions[*x]));
    }
    if let Some(rid) = rid {
        out.extend(f.fused_consumers(rid).into_iter().map(|c| &f.regions[c]));
    }
    out
}

/// Host scalars a region's kernels read (bounds, body, border values; see [`kernel_regions`]).
pub(crate) fn hosts_used(f: &Function, r: &Region) -> Vec<ScalarId> {
    let mut v = Vec::new();
    let mut see = |e: &Expr| {
        e.walk(&mut |x| {
            if let ExprKind::Host(h) = x.kind
                && !v.contains(&h)
            {
                v.push(h);
            }
        })
    };
    for r in kernel_regions(f, r) {
        for d in r.dims.iter().flatten() {
            see(&d.lo);
            see(&d.hi);
        }
        KStmt::walk(&r.body, &mut |s, _| see(s.head()));
        for a in &r.accesses {
            for s in &a.subs {
                match s {
                    Sub::Point(e) | Sub::Window { start: e, .. } => see(e),
                    Sub::Star => {}
                }
            }
        }
        for id in &r.rules {
            for e in &f.rules[*id].entries {
                see(&e.value);
                for a in &e.accesses {
                    for s in &a.subs {
                        if let Sub::Point(p) = s {
                            see(p);
                        }
                    }
                }
            }
        }
    }
    v.sort();
    v
}

/// The program of candidate `v` (not the baseline) of region `rid`: its kernel alone, with the
/// helpers it calls and the function's constants, built by the runtime when the candidate is
/// first needed, so that a candidate that fails to build costs only itself.
pub fn candidate_program(f: &Function, rid: RegionId, v: &Schedule) -> String {
    let r = &f.regions[rid];
    let mut out = prelude(f, &format!("plan `{}` of region `{}`", v.label(), r.name));
    append_candidate(&mut out, f, rid, v);
    out
}

/// Appends candidate `v`'s kernel of region `rid` to a program of `f` (its helpers where the
/// program does not define them yet).
pub fn append_candidate(out: &mut String, f: &Function, rid: RegionId, v: &Schedule) {
    let name = variant_name(f, rid, v);
    out.push('\n');
    match f.regions[rid].kind {
        RegionKind::Iterator => super::kernel::append_candidate(out, f, rid, v, &name),
        RegionKind::Reduction { op, matrix, .. } => {
            reduce::tree_kernel(out, f, op, matrix, v, &name)
        }
    }
}

/// The head of every program of `f`: what it holds, the guard helpers and the constants.
pub(super) fn prelude(f: &Function, what: &str) -> String {
    let mut out = String::from("// Generated by parac from the pipeline `");
    let _ = writeln!(out, "{}`: {what}.", f.name);
    out.push_str("#pragma OPENCL EXTENSION cl_khr_fp64 : disable\n\n");
    out.push_str(GUARDS);
    for (m, mat) in f.matrices.iter().enumerate() {
        if let MatrixKind::Const(vals) = &mat.kind {
            let vals: Vec<String> = vals
                .iter()
                .map(|v| {
                    if mat.elem.is_float() {
                        c_float(*v)
                    } else {
                        format!("{}", *v as i64)
                    }
                })
                .collect();
            let _ = writeln!(
                out,
                "__constant {} cst{m}[{}] = {{{}}};",
                cty(mat.elem),
                vals.len().max(1),
                vals.join(", ")
            );
        }
    }
    out
}

/// The kernel name of plan `v` of a region: `<region kernel>__<label>` (`+` as `_`).
pub fn variant_name(f: &Function, r: RegionId, v: &Schedule) -> String {
    if v.is_baseline() {
        kernel_name(f, r)
    } else {
        format!("{}__{}", kernel_name(f, r), v.label().replace('+', "_"))
    }
}

pub(super) fn params(f: &Function, r: &Region, stored: &[MatrixId]) -> Vec<String> {
    let mut p = Vec::new();
    for (m, w) in used(f, r) {
        // Written by the region, or by the kernel's code (a split band's phases write the
        // grids of both steps in place).
        let w = w || stored.contains(&m);
        let t = cty(f.matrices[m].elem);
        p.push(format!(
            "__global {}{t}* m{m}",
            if w { "" } else { "const " }
        ));
        p.push(format!("int p{m}"));
    }
    for i in 0..f.sizes.len() {
        p.push(format!("int z{i}"));
    }
    for h in hosts_used(f, r) {
        p.push(format!("{} s{h}", cty(arg_ty(f.scalars[h].ty))));
    }
    // The call's error flag (guarded accesses and divisions, see `codegen::safety`).
    p.push("__global int* err".to_string());
    p
}

/// Slots with iteration, innermost (last) first: OpenCL dimension 0 runs along rows.
pub(crate) fn cl_slots(r: &Region) -> Vec<usize> {
    r.launch_slots()
}
