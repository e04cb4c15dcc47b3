//! The OpenCL back end, baseline plan: one kernel per parallel region, one work-item per
//! iteration point.
//!
//! - Border rules are region-specialised: each work-item decides once whether all its
//!   bordered reads are inside their matrices (the interior) and runs a body without any check;
//!   otherwise it runs the body whose bordered reads pick the rule's value for the side or
//!   corner they fall in.
//! - A global operator is a kernel writing one partial result per row, combined on the host
//!   (exact for integers: 64-bit partials, carried as two 32-bit halves).
//! - Sizes and host scalars are kernel arguments, so one program build serves every image size.
//! - The host side is data (`host.rs`), run by the runtime's executor of the OpenCL path.

mod names;
mod partition;
mod range;
mod reduce;
pub(crate) mod variant;

pub use partition::{Bound, bounds};
pub use variant::local_bytes;

use super::namer::Namer;
use super::schedule::Variant;
use crate::check::relative::Affine;
use crate::ir::*;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt::Write as _;

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
    let clean: String = f.regions[r]
        .name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!("r{r}_{clean}")
}

/// The OpenCL C type of a scalar as stored in memory.
fn cty(s: Scalar) -> &'static str {
    s.cl_name()
}

/// The kernel-argument type of a host scalar (small types travel as `int`).
pub(crate) fn arg_ty(s: Scalar) -> Scalar {
    match s {
        Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::F32 => s,
        _ => Scalar::I32,
    }
}

fn c_float(v: f64) -> String {
    let s = format!("{:?}", v as f32);
    if s.contains('e') || s.contains('.') {
        format!("{s}f")
    } else {
        format!("{s}.0f")
    }
}

fn c_int(v: i128, s: Scalar) -> String {
    match s {
        Scalar::F32 => c_float(v as f64),
        Scalar::I64 => format!("({v}L)"),
        Scalar::U64 => format!("({}UL)", v as u64),
        Scalar::U32 => format!("({}u)", v as u32),
        Scalar::Bool => format!("{}", (v != 0) as i32),
        Scalar::I32 if v == i32::MIN as i128 => "(-2147483647 - 1)".to_string(),
        _ => format!("(({}){v})", cty(s)),
    }
}

/// Which matrices a region uses, and how.
pub(crate) fn used(f: &Function, r: &Region) -> Vec<(MatrixId, bool)> {
    let mut v: Vec<(MatrixId, bool)> = Vec::new();
    let mut add = |m: MatrixId, w: bool| match v.iter_mut().find(|x| x.0 == m) {
        Some(x) => x.1 |= w,
        None => v.push((m, w)),
    };
    for a in &r.accesses {
        add(a.matrix, a.write);
    }
    for id in &r.rules {
        for e in &f.rules[*id].entries {
            add(e.matrix, false);
        }
    }
    v.retain(|(m, _)| !matches!(f.matrices[*m].kind, MatrixKind::Const(_)));
    v.sort();
    v
}

/// Host scalars a region's kernel reads (bounds, body, border values).
pub(crate) fn hosts_used(f: &Function, r: &Region) -> Vec<ScalarId> {
    let mut v = Vec::new();
    let mut see = |e: &Expr| {
        e.walk(&mut |x| {
            if let ExprKind::Host(h) = x.kind {
                if !v.contains(&h) {
                    v.push(h);
                }
            }
        })
    };
    for d in r.dims.iter().flatten() {
        see(&d.lo);
        see(&d.hi);
    }
    KStmt::walk(&r.body, &mut |s, _| match s {
        KStmt::Let(_, e) | KStmt::Store(_, e) | KStmt::If(e, ..) => see(e),
    });
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
    v.sort();
    v
}

/// The OpenCL C program of a function: constant matrices, then one kernel per region.
pub fn program(f: &Function) -> String {
    let mut out = prelude(f, "baseline plan, one work-item per iteration point");
    for (rid, r) in f.regions.iter().enumerate() {
        out.push('\n');
        match r.kind {
            RegionKind::Iterator => iterator_kernel(&mut out, f, rid),
            RegionKind::Reduction { op, matrix, .. } => {
                reduction_kernel(&mut out, f, rid, op, matrix)
            }
        }
    }
    out
}

/// The program of candidate `v` (not the baseline) of region `rid`: its kernel alone, with the
/// helpers it calls and the function's constants, built by the runtime when the candidate is
/// first needed, so that a candidate that fails to build costs only itself. `aff` is
/// [`variant::affs`] of the region (computed once for all its candidates).
pub fn candidate_program(
    f: &Function,
    rid: RegionId,
    v: &Variant,
    aff: &[Vec<Option<Affine>>],
) -> String {
    let r = &f.regions[rid];
    let mut out = prelude(f, &format!("plan `{}` of region `{}`", v.label(), r.name));
    append_candidate(&mut out, f, rid, v, aff);
    out
}

/// Appends candidate `v`'s kernel of region `rid` to a program of `f` (its helpers where the
/// program does not define them yet).
pub fn append_candidate(
    out: &mut String,
    f: &Function,
    rid: RegionId,
    v: &Variant,
    aff: &[Vec<Option<Affine>>],
) {
    let name = variant_name(f, rid, v);
    out.push('\n');
    match f.regions[rid].kind {
        RegionKind::Iterator => variant::variant_kernel(out, f, rid, v, &name, aff),
        RegionKind::Reduction { op, matrix, .. } => {
            reduce::tree_kernel(out, f, rid, op, matrix, v, &name)
        }
    }
}

/// The head of every program of `f`: what it holds, the guard helpers and the constants.
fn prelude(f: &Function, what: &str) -> String {
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
pub fn variant_name(f: &Function, r: RegionId, v: &Variant) -> String {
    if v.is_baseline() {
        kernel_name(f, r)
    } else {
        format!("{}__{}", kernel_name(f, r), v.label().replace('+', "_"))
    }
}

fn params(f: &Function, r: &Region) -> Vec<String> {
    let mut p = Vec::new();
    for (m, w) in used(f, r) {
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
    let mut s: Vec<usize> = r
        .dims
        .iter()
        .enumerate()
        .filter(|(_, d)| d.is_some())
        .map(|(i, _)| i)
        .collect();
    s.reverse();
    s
}

struct K<'a> {
    f: &'a Function,
    r: &'a Region,
    /// Whether bordered reads are checked (false in the interior body).
    checked: bool,
    /// The kernel's namer (`names::kernel_namer`), shared by every body of the kernel.
    names: &'a RefCell<Namer>,
    /// The plan being generated.
    v: Variant,
    /// The C expression of each slot's index variable.
    vars: Vec<String>,
    /// Per slot, the variable keyed loads are rendered from: its value is the base plus
    /// `loff` (the work-item's first point in the fast path of lanes, the variable itself
    /// elsewhere).
    bases: Vec<String>,
    /// Local-memory tiles (`lds`).
    tiles: &'a [variant::Tile],
    /// Suffix of local names: each lane has its own locals.
    sfx: String,
    /// Per slot, this lane's offset from the work-item's first point (`v<slot>`), in index
    /// values; the cache keys of loads fold it in.
    loff: Vec<i64>,
    /// Loads shared by the lanes of a work-item (`cse`), with their declarations.
    cache: Option<&'a RefCell<variant::Cache>>,
    /// Stores gathered for vector stores (`vmem`).
    stores: Option<&'a RefCell<Vec<variant::Pending>>>,
    /// The affine form of each subscript of each access (the point, or a window's start).
    aff: &'a [Vec<Option<Affine>>],
    /// Depth inside `if` branches (loads there are not hoisted unless common to both).
    branch: Cell<usize>,
    /// Accesses read in both branches of an `if`: hoistable.
    hoistable: RefCell<Vec<AccessId>>,
    /// Proven value ranges of scalar locals (`peep`).
    ranges: RefCell<HashMap<LocalId, (i128, i128)>>,
}

impl<'a> K<'a> {
    /// The baseline generator: one iteration point, variables `v<slot>`.
    fn plain(f: &'a Function, r: &'a Region, checked: bool, names: &'a RefCell<Namer>) -> K<'a> {
        K {
            f,
            r,
            checked,
            names,
            v: Variant::baseline(),
            vars: (0..r.dims.len()).map(|s| format!("v{s}")).collect(),
            bases: (0..r.dims.len()).map(|s| format!("v{s}")).collect(),
            tiles: &[],
            sfx: String::new(),
            loff: vec![0; r.dims.len()],
            cache: None,
            stores: None,
            aff: &[],
            branch: Cell::new(0),
            hoistable: RefCell::new(Vec::new()),
            ranges: RefCell::new(HashMap::new()),
        }
    }
}

fn iterator_kernel(out: &mut String, f: &Function, rid: RegionId) {
    let r = &f.regions[rid];
    let name = kernel_name(f, rid);
    // The first work-item's index per dimension comes as arguments (`o<d>`), and the runtime
    // launches this kernel with no global offset: PoCL compiles a kernel at its first launch for
    // each work-group size and again for a zero global offset, so a split plan's border strips
    // (one at the origin, the others not) would cost two compilations where they now cost one.
    let mut ps = params(f, r);
    ps.extend((0..cl_slots(r).len()).map(|cl| format!("int o{cl}")));
    let _ = writeln!(out, "__kernel void {name}({}) {{", ps.join(", "));
    let names = names::kernel_namer(f, rid, 1);
    let k = K::plain(f, r, true, &names);
    for (cl, slot) in cl_slots(r).iter().enumerate() {
        let d = r.dims[*slot].as_ref().expect("slot");
        let _ = writeln!(
            out,
            "    const int v{slot} = ({}) + ((int)get_global_id({cl}) + o{cl}) * {};\n    if (v{slot} >= ({})) return;",
            k.expr_pure(&d.lo),
            d.step,
            k.expr_pure(&d.hi)
        );
    }
    let bordered: Vec<AccessId> = (0..r.accesses.len()).filter(|a| k.bordered(*a)).collect();
    if bordered.is_empty() {
        let mut body = String::new();
        k.stmts(&mut body, &r.body, 1);
        out.push_str(&body);
    } else {
        // The interior: every bordered read inside its matrix, decided once per work-item.
        let mut conds = Vec::new();
        for a in &bordered {
            match k.inside(*a) {
                Some(c) => conds.push(c),
                None => {
                    conds = vec!["0".to_string()];
                    break;
                }
            }
        }
        let interior = K::plain(f, r, false, &names);
        let mut fast = String::new();
        interior.stmts(&mut fast, &r.body, 2);
        let mut slow = String::new();
        k.stmts(&mut slow, &r.body, 2);
        let _ = writeln!(
            out,
            "    if ({}) {{\n{fast}    }} else {{\n{slow}    }}",
            conds.join(" && ")
        );
    }
    out.push_str("}\n");
    border_helpers(out, f, rid, &name);
}

/// Defines, before the kernel `kname` (the last one in `out`), the bordered-load functions of
/// region `rid` that it calls and that `out` does not define yet: one per (matrix, type).
fn border_helpers(out: &mut String, f: &Function, rid: RegionId, kname: &str) {
    let r = &f.regions[rid];
    let bname = kernel_name(f, rid);
    let names = names::kernel_namer(f, rid, 1);
    let k = K::plain(f, r, true, &names);
    let start = out
        .rfind(&format!("__kernel void {kname}("))
        .expect("kernel just written");
    // A kernel's attributes precede its signature.
    let start = out[..start]
        .rfind("__kernel ")
        .filter(|p| !out[*p..start].contains(';') && !out[*p..start].contains('}'))
        .unwrap_or(start);
    let mut helpers = String::new();
    for (m, _) in used(f, r) {
        if !has_rule(f, r, m) {
            continue;
        }
        for want in names::load_types(f.matrices[m].elem) {
            let call = format!("ld_{bname}_m{m}_{}(", cty(want));
            // Only the variants the kernel calls, each defined once.
            let def = format!("static {} {call}", cty(want));
            if out[start..].contains(&call) && !out.contains(&def) && !helpers.contains(&def) {
                k.load_fn(&mut helpers, m, want, &bname);
            }
        }
    }
    // Helpers must precede the kernel: insert them before its signature.
    if !helpers.is_empty() {
        out.insert_str(start, &helpers);
    }
}

/// Whether some border rule of region `r` extends matrix `m`.
fn has_rule(f: &Function, r: &Region, m: MatrixId) -> bool {
    r.rules
        .iter()
        .any(|id| f.rules[*id].entries.iter().any(|e| e.matrix == m))
}

/// Whether access `a` of `r` is a bordered read: a read of a matrix some rule of the region
/// extends.
fn bordered(f: &Function, r: &Region, a: AccessId) -> bool {
    let acc = &r.accesses[a];
    !acc.write && has_rule(f, r, acc.matrix)
}

/// The C binary operator of `op` (`.*` on blocks is elementwise `*`).
fn c_op(op: BinOp) -> &'static str {
    if op == BinOp::ElemMul {
        "*"
    } else {
        op.symbol()
    }
}

/// A reduced matrix as rows (every dimension but the last, multiplied) and columns, in C.
fn rows_cols(f: &Function, rid: RegionId, m: MatrixId) -> (String, String) {
    let names = names::kernel_namer(f, rid, 1);
    let k = K::plain(f, &f.regions[rid], false, &names);
    let dims: Vec<String> = f.matrices[m].dims.iter().map(|d| k.expr_pure(d)).collect();
    let nd = dims.len();
    let rows = if nd == 1 {
        "1".to_string()
    } else {
        dims[..nd - 1].join(") * (")
    };
    (rows, dims[nd - 1].clone())
}

fn reduction_kernel(out: &mut String, f: &Function, rid: RegionId, op: ReduceOp, m: MatrixId) {
    let name = kernel_name(f, rid);
    let mat = &f.matrices[m];
    let (rows, cols) = rows_cols(f, rid, m);
    let t = cty(mat.elem);
    let (acc_t, init, step, store) = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, true) => ("float", "0.0f", "s += v;", "out[row] = s;"),
        (ReduceOp::Sum | ReduceOp::Mean, false) => (
            "long",
            "0L",
            "s += (long)v;",
            "out[2 * row] = (uint)s; out[2 * row + 1] = (uint)(s >> 32);",
        ),
        (ReduceOp::Min, _) => ("ACC", "first", "s = min(s, (ACC)v);", "out[row] = s;"),
        (ReduceOp::Max, _) => ("ACC", "first", "s = max(s, (ACC)v);", "out[row] = s;"),
    };
    let promoted = cty(mat.elem.promote());
    let acc_t = if acc_t == "ACC" { promoted } else { acc_t };
    let step = step.replace("ACC", promoted);
    let out_t = match (op, mat.elem.is_float()) {
        (ReduceOp::Sum | ReduceOp::Mean, false) => "uint",
        _ => acc_t,
    };
    let init = if init == "first" {
        format!("({acc_t})m{m}[row * p{m}]")
    } else {
        init.to_string()
    };
    let _ = writeln!(
        out,
        "__kernel void {name}(__global const {t}* m{m}, int p{m}, {}__global {out_t}* out) {{\n    const int row = (int)get_global_id(0);\n    if (row >= ({rows})) return;\n    {acc_t} s = {init};\n    for (int j = 0; j < ({cols}); j++) {{\n        const {t} v = m{m}[row * p{m} + j];\n        {step}\n    }}\n    {store}\n}}",
        (0..f.sizes.len())
            .map(|i| format!("int z{i}, "))
            .collect::<String>()
    );
}

impl K<'_> {
    /// A fresh local of the kernel (`t<n>`, see `names.rs`).
    fn fresh(&self) -> String {
        self.names.borrow_mut().call("t")
    }

    /// A read of a matrix some rule of the region extends.
    fn bordered(&self, a: AccessId) -> bool {
        bordered(self.f, self.r, a)
    }

    fn dim(&self, m: MatrixId, k: usize) -> String {
        format!("({})", self.expr_pure(&self.f.matrices[m].dims[k]))
    }

    /// The C condition "access `a` is inside its matrix", if its subscripts can be computed
    /// before the body (they use no kernel local).
    fn inside(&self, a: AccessId) -> Option<String> {
        let acc = &self.r.accesses[a];
        let mut conds = Vec::new();
        for (k, s) in acc.subs.iter().enumerate() {
            let (e, ext) = match s {
                Sub::Point(e) => (e, 0),
                Sub::Window { start, len, stride } => (start, (*len as i64 - 1) * stride),
                Sub::Star => return None,
            };
            let mut pure = true;
            e.walk(&mut |x| {
                pure &= !matches!(
                    x.kind,
                    ExprKind::Local(_) | ExprKind::Load(_) | ExprKind::Block(_)
                )
            });
            if !pure {
                return None;
            }
            let i = self.expr_pure(e);
            conds.push(format!(
                "({i}) >= 0 && ({i}) + {ext} < {}",
                self.dim(acc.matrix, k)
            ));
        }
        Some(conds.join(" && "))
    }

    fn linear(&self, m: MatrixId, idx: &[String]) -> String {
        let n = idx.len();
        let mut e = String::new();
        for (k, i) in idx.iter().enumerate() {
            if k == 0 {
                e = format!("({i})");
            } else if k + 1 == n {
                e = format!("({e}) * p{m} + ({i})");
            } else {
                e = format!("({e}) * {} + ({i})", self.dim(m, k));
            }
        }
        e
    }

    /// `T ld_<kernel>_m<m>_<T>(args.., long i0, long i1)`: a bordered read.
    fn load_fn(&self, out: &mut String, m: MatrixId, want: Scalar, kernel: &str) {
        let fname = format!("ld_{kernel}_m{m}_{}", cty(want));
        if out.contains(&format!("static {} {fname}(", cty(want))) {
            return;
        }
        let nd = self.f.matrices[m].dims.len();
        let mut params: Vec<String> = vec![
            format!("__global const {}* m{m}", cty(self.f.matrices[m].elem)),
            format!("int p{m}"),
        ];
        params.extend((0..self.f.sizes.len()).map(|i| format!("int z{i}")));
        params.extend(
            hosts_used(self.f, self.r)
                .iter()
                .map(|h| format!("{} s{h}", cty(arg_ty(self.f.scalars[*h].ty)))),
        );
        params.extend((0..nd).map(|k| format!("int i{k}")));
        params.push("__global int* err".into());
        let code = super::safety::border_code(self.r_id(), m);
        let raw: Vec<String> = (0..nd).map(|k| format!("i{k}")).collect();
        let (_, oob) = self.guard(m, &raw, code);
        let w = cty(want);
        let _ = writeln!(out, "static {w} {fname}({}) {{", params.join(", "));
        if let Some(map) = self.index_map(m) {
            // Each index mapped on its own (selects, no branch), then one load.
            let mut js = Vec::new();
            for (k, sides) in map.iter().enumerate() {
                let mut sel = format!("(i{k} >= 0 && i{k} < {}) ? i{k}", self.dim(m, k));
                for (s, e) in sides {
                    let c = match s {
                        Sel::Before(j) => format!("i{k} == -{j}"),
                        Sel::After(j) => format!("i{k} == {} - 1 + {j}", self.dim(m, k)),
                        Sel::Star => continue,
                    };
                    let _ = write!(sel, " : ({c}) ? ({e})");
                }
                // An index no rule covers maps outside: the guard below reports it.
                let _ = writeln!(out, "    const int j{k} = {sel} : -1;");
                js.push(format!("j{k}"));
            }
            let (inside, _) = self.guard(m, &js, code);
            let _ = writeln!(
                out,
                "    return ({w})(({inside}) ? m{m}[{}] : {oob});\n}}",
                self.linear(m, &js)
            );
            return;
        }
        let inside: Vec<String> = (0..nd)
            .map(|k| format!("i{k} >= 0 && i{k} < {}", self.dim(m, k)))
            .collect();
        let idx: Vec<String> = (0..nd).map(|k| format!("i{k}")).collect();
        let _ = writeln!(
            out,
            "    if ({}) return ({w})m{m}[{}];",
            inside.join(" && "),
            self.linear(m, &idx)
        );
        for id in &self.r.rules {
            for e in self.f.rules[*id].entries.iter().filter(|e| e.matrix == m) {
                let conds: Vec<String> = e
                    .sels
                    .iter()
                    .enumerate()
                    .map(|(k, s)| match s {
                        Sel::Star => format!("i{k} >= 0 && i{k} < {}", self.dim(m, k)),
                        Sel::Before(j) => format!("i{k} == -{j}"),
                        Sel::After(j) => format!("i{k} == {} - 1 + {j}", self.dim(m, k)),
                    })
                    .collect();
                let v = self.entry_expr(e, &e.value, code);
                let _ = writeln!(out, "    if ({}) return ({w})({v});", conds.join(" && "));
            }
        }
        // Outside the image and every rule: the call's error.
        let _ = writeln!(out, "    return ({w}){oob};\n}}");
    }

    /// The border rules of matrix `m` as an index map, if every entry's value is a read of
    /// `m` itself (or a cast of it that keeps every value) whose subscript in each dimension is
    /// the read's own index (`*`) where the entry selects any index, and otherwise one
    /// expression per side and offset, the same in every entry (clamp, reflect, reflect-101,
    /// wrap): per dimension, the offsets outside and their C subscripts.
    fn index_map(&self, m: MatrixId) -> Option<Vec<Vec<(Sel, String)>>> {
        let elem = self.f.matrices[m].elem;
        let nd = self.f.matrices[m].dims.len();
        let mut map: Vec<Vec<(Sel, String)>> = vec![Vec::new(); nd];
        let mut any = false;
        for id in &self.r.rules {
            for e in self.f.rules[*id].entries.iter().filter(|e| e.matrix == m) {
                let mut v = &e.value;
                while let ExprKind::Cast(inner, to) = &v.kind {
                    let from = inner.ty.elem();
                    let keeps = from == *to
                        || matches!((from.range(), to.range()), (Some(a), Some(b)) if b.0 <= a.0 && a.1 <= b.1);
                    if !keeps {
                        return None;
                    }
                    v = inner;
                }
                let ExprKind::Load(a) = &v.kind else {
                    return None;
                };
                let acc = &e.accesses[*a];
                if acc.matrix != m || acc.subs.len() != nd || v.ty.elem() != elem {
                    return None;
                }
                for (k, (sel, sub)) in e.sels.iter().zip(&acc.subs).enumerate() {
                    match (sel, sub) {
                        (Sel::Star, Sub::Star) => {}
                        (Sel::Before(_) | Sel::After(_), Sub::Point(p)) => {
                            let c = format!("({})", self.expr_pure(p));
                            match map[k].iter().find(|(s, _)| s == sel) {
                                Some((_, prev)) if *prev != c => return None,
                                Some(_) => {}
                                None => map[k].push((*sel, c)),
                            }
                        }
                        _ => return None,
                    }
                }
                any = true;
            }
        }
        any.then_some(map)
    }

    /// A border value: `*` is the read's own index. Border values are scalar expressions of
    /// constants, sizes, host scalars and in-image reads of the matrix.
    fn entry_expr(&self, entry: &BorderEntry, e: &Expr, code: i32) -> String {
        let t = e.ty.elem();
        let go = |x: &Expr| self.entry_expr(entry, x, code);
        match &e.kind {
            ExprKind::Load(a) => {
                let acc = &entry.accesses[*a];
                let idx: Vec<String> = acc
                    .subs
                    .iter()
                    .enumerate()
                    .map(|(k, s)| match s {
                        Sub::Point(p) => format!("({})", self.expr_pure(p)),
                        _ => format!("i{k}"),
                    })
                    .collect();
                // Rule values read the image: guarded (a small image may not hold them).
                let (inside, oob) = self.guard(acc.matrix, &idx, code);
                format!(
                    "(({inside}) ? m{}[{}] : {oob})",
                    acc.matrix,
                    self.linear(acc.matrix, &idx)
                )
            }
            ExprKind::Cast(inner, to) if *to == Scalar::Bool => format!("(({}) != 0)", go(inner)),
            ExprKind::Cast(inner, to) => format!("(({})({}))", cty(*to), go(inner)),
            ExprKind::Unary(UnOp::Neg, a) => format!("(-({}))", go(a)),
            ExprKind::Unary(UnOp::Plus, a) => go(a),
            ExprKind::Unary(UnOp::Not, a) if t == Scalar::Bool => format!("(!({}))", go(a)),
            ExprKind::Unary(UnOp::Not, a) => format!("(~({}))", go(a)),
            ExprKind::Binary(op, a, b) => {
                let o = c_op(*op);
                format!("(({}) {o} ({}))", go(a), go(b))
            }
            ExprKind::Call(b, args) => {
                let xs: Vec<String> = args.iter().map(go).collect();
                call_c(*b, &xs, t)
            }
            _ => self.expr_pure(e),
        }
    }

    /// An expression with no block or reduction in it (bounds, sizes, subscripts).
    fn expr_pure(&self, e: &Expr) -> String {
        let mut pre = Vec::new();
        let s = self.scalar(e, &mut pre);
        debug_assert!(pre.is_empty());
        s
    }

    fn scalar(&self, e: &Expr, pre: &mut Vec<String>) -> String {
        let mut p = std::mem::take(pre);
        let s = self.scalar_with(e, &mut |k, x| k.scalar(x, &mut Vec::new()), &mut p);
        *pre = p;
        s
    }

    /// A load of access `a` read as `want`.
    fn load(
        &self,
        a: AccessId,
        want: Scalar,
        block_ix: Option<(&str, &str)>,
        pre: &mut Vec<String>,
    ) -> String {
        let w = cty(want);
        let guarded = super::safety::guarded(self.f, self.r, a);
        if !guarded {
            if let Some(lit) = self.const_literal(a, want, block_ix) {
                return lit;
            }
            if let Some(t) = self.tile_load(a, block_ix) {
                return format!("(({w}){t})");
            }
            if let Some(name) = self.cached_load(a, block_ix) {
                return format!("(({w}){name})");
            }
        }
        let acc = &self.r.accesses[a];
        let m = acc.matrix;
        let n = acc.subs.len();
        let idx: Vec<String> = acc
            .subs
            .iter()
            .enumerate()
            .map(|(k, s)| match s {
                Sub::Point(e) => format!("({})", self.scalar(e, pre)),
                Sub::Window { start, stride, .. } => {
                    let off = match block_ix {
                        Some((bi, bj)) => {
                            if k + 1 == n {
                                bj.to_string()
                            } else {
                                bi.to_string()
                            }
                        }
                        None => "0".to_string(),
                    };
                    format!("({} + {off} * {stride})", self.scalar(start, pre))
                }
                Sub::Star => "0".to_string(),
            })
            .collect();
        if let MatrixKind::Const(_) = self.f.matrices[m].kind {
            // Constant matrices are dense `__constant` arrays.
            let mut e = String::new();
            for (k, i) in idx.iter().enumerate() {
                e = if k == 0 {
                    i.clone()
                } else {
                    format!("({e}) * {} + {i}", self.dim(m, k))
                };
            }
            if guarded {
                let (cond, oob) = self.guard(m, &idx, super::safety::access_code(self.r_id(), a));
                return format!("(({w})(({cond}) ? cst{m}[{e}] : {oob}))");
            }
            return format!("(({w})cst{m}[{e}])");
        }
        // A read of a tiled matrix that its tile does not serve (a window copied into a
        // block `let`) is outside the fast path's interior test: it takes the border path.
        let tiled = self.tiles.iter().any(|t| t.m == m);
        if (self.checked || tiled) && self.bordered(a) {
            let kernel = kernel_name(self.f, self.r_id());
            let mut args = vec![format!("m{m}"), format!("p{m}")];
            args.extend((0..self.f.sizes.len()).map(|i| format!("z{i}")));
            args.extend(hosts_used(self.f, self.r).iter().map(|h| format!("s{h}")));
            args.extend(idx);
            args.push("err".into());
            let want_fn = if names::load_types(self.f.matrices[m].elem).contains(&want) {
                want
            } else {
                Scalar::I32
            };
            return format!(
                "(({w})ld_{kernel}_m{m}_{}({}))",
                cty(want_fn),
                args.join(", ")
            );
        }
        if guarded {
            let (cond, oob) = self.guard(m, &idx, super::safety::access_code(self.r_id(), a));
            return format!("(({w})(({cond}) ? m{m}[{}] : {oob}))", self.linear(m, &idx));
        }
        format!("(({w})m{m}[{}])", self.linear(m, &idx))
    }

    /// A guarded access of matrix `m` at `idx`: the C condition "inside its shape", and the
    /// call raising the error flag with `code` (it gives 0).
    fn guard(&self, m: MatrixId, idx: &[String], code: i32) -> (String, String) {
        let cond: Vec<String> = idx
            .iter()
            .enumerate()
            .map(|(k, i)| format!("({i}) >= 0 && ({i}) < {}", self.dim(m, k)))
            .collect();
        let mut ix: Vec<String> = idx.iter().take(3).map(|i| format!("(long)({i})")).collect();
        ix.resize(3, "0".into());
        (
            if cond.is_empty() {
                "1".into()
            } else {
                cond.join(" && ")
            },
            format!("pc_oob(err, {code}, {})", ix.join(", ")),
        )
    }

    fn r_id(&self) -> RegionId {
        self.f
            .regions
            .iter()
            .position(|x| std::ptr::eq(x, self.r))
            .expect("region of its function")
    }

    /// A scalar expression, sub-expressions by `sub`; blocks go through `pre` statements.
    fn scalar_with(
        &self,
        e: &Expr,
        sub: &mut dyn FnMut(&Self, &Expr) -> String,
        pre: &mut Vec<String>,
    ) -> String {
        let t = e.ty.elem();
        match &e.kind {
            ExprKind::Int(v) => c_int(*v, t),
            ExprKind::Float(v) => c_float(*v),
            ExprKind::Size(i) => format!("z{i}"),
            ExprKind::Host(h) => format!("(({})s{h})", cty(self.f.scalars[*h].ty)),
            ExprKind::Var(s) => self.vars[*s].clone(),
            ExprKind::Local(l) => format!("l{l}{}", self.sfx),
            ExprKind::Load(a) => self.load(*a, t, None, pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Load(a) = inner.kind {
                    return self.load(a, *to, None, pre);
                }
                let x = self.sub_or_block(inner, sub, pre);
                if *to == Scalar::Bool {
                    format!("(({x}) != 0)")
                } else {
                    format!("(({})({x}))", cty(*to))
                }
            }
            ExprKind::Unary(op, a) => {
                let x = self.sub_or_block(a, sub, pre);
                match op {
                    UnOp::Neg => format!("(-({x}))"),
                    UnOp::Plus => x,
                    UnOp::Not if t == Scalar::Bool => format!("(!({x}))"),
                    UnOp::Not => format!("(~({x}))"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let (x, y) = (
                    self.sub_or_block(a, sub, pre),
                    self.sub_or_block(b, sub, pre),
                );
                if let Some(p) = self.peep_binary(e, *op, a, b, &x, &y) {
                    return p;
                }
                if matches!(op, BinOp::Div | BinOp::Rem) && !t.is_float() && !e.ty.is_block() {
                    // A divisor the host checked before the region ran is not 0; with a
                    // dividend above the type's minimum, -1 cannot trap either.
                    let checked = super::safety::host_divisor(self.r, b, self.branch.get())
                        && t.range().is_some_and(|rt| {
                            rt.0 == 0 || self.range(a).is_some_and(|ra| ra.0 > rt.0)
                        });
                    let nonzero =
                        checked || matches!(b.kind, ExprKind::Int(v) if v != 0 && v != -1);
                    let ct = match t {
                        Scalar::U32 => Some("uint"),
                        Scalar::I64 => Some("long"),
                        Scalar::U64 => Some("ulong"),
                        Scalar::I32 => Some("int"),
                        _ => None,
                    };
                    if let (false, Some(ct)) = (nonzero, ct) {
                        let which = if *op == BinOp::Div { "div" } else { "rem" };
                        let code = super::safety::division_code(self.r_id());
                        return format!("pc_{which}_{ct}(({ct})({x}), ({ct})({y}), err, {code})");
                    }
                }
                let o = c_op(*op);
                format!("(({x}) {o} ({y}))")
            }
            ExprKind::Call(b, args) => {
                let xs: Vec<String> = args
                    .iter()
                    .map(|a| self.sub_or_block(a, sub, pre))
                    .collect();
                if let Some(p) = self.peep_call(e, *b, args, &xs) {
                    return p;
                }
                call_c(*b, &xs, t)
            }
            ExprKind::Reduce(..) | ExprKind::Conv(..) if self.v.unroll => {
                self.unrolled(e, pre).unwrap_or_default()
            }
            ExprKind::Reduce(op, a) => {
                let arr = self.block(a, pre);
                let (r, c) = shape(a.ty);
                let v = self.fresh();
                let ty = cty(t);
                let (init, step) = match op {
                    ReduceOp::Sum | ReduceOp::Mean => {
                        ("0".to_string(), format!("{v} += ({ty}){arr}[bi][bj];"))
                    }
                    ReduceOp::Min => (
                        format!("({ty}){arr}[0][0]"),
                        format!(
                            "{v} = {}({v}, ({ty}){arr}[bi][bj]);",
                            if t.is_float() { "fmin" } else { "min" }
                        ),
                    ),
                    ReduceOp::Max => (
                        format!("({ty}){arr}[0][0]"),
                        format!(
                            "{v} = {}({v}, ({ty}){arr}[bi][bj]);",
                            if t.is_float() { "fmax" } else { "max" }
                        ),
                    ),
                };
                pre.push(format!("{ty} {v} = {init}; for (int bi = 0; bi < {r}; bi++) for (int bj = 0; bj < {c}; bj++) {{ {step} }}"));
                if *op == ReduceOp::Mean {
                    format!("({v} / ({ty}){})", r * c)
                } else {
                    v
                }
            }
            ExprKind::Conv(fl, w) => {
                let (af, aw) = (self.block(fl, pre), self.block(w, pre));
                let (r, c) = shape(fl.ty);
                let v = self.fresh();
                let ty = cty(t);
                pre.push(format!("{ty} {v} = 0; for (int bi = 0; bi < {r}; bi++) for (int bj = 0; bj < {c}; bj++) {{ {v} += {af}[bi][bj] * {aw}[bi][bj]; }}"));
                v
            }
            ExprKind::Block(_) | ExprKind::MatMul(..) | ExprKind::Transpose(_) => {
                self.block(e, pre)
            }
        }
    }

    fn sub_or_block(
        &self,
        e: &Expr,
        sub: &mut dyn FnMut(&Self, &Expr) -> String,
        pre: &mut Vec<String>,
    ) -> String {
        match &e.kind {
            ExprKind::Reduce(..)
            | ExprKind::Conv(..)
            | ExprKind::Block(_)
            | ExprKind::MatMul(..)
            | ExprKind::Transpose(_) => self.scalar_with(e, sub, pre),
            _ if e.ty.is_block() => self.block(e, pre),
            ExprKind::Load(_)
            | ExprKind::Cast(..)
            | ExprKind::Binary(..)
            | ExprKind::Unary(..)
            | ExprKind::Call(..) => {
                // Recurse with the same `pre` so blocks deeper down are materialized first.
                self.scalar_with(e, sub, pre)
            }
            _ => sub(self, e),
        }
    }

    /// Materializes a block-valued expression into a local array; returns its name.
    fn block(&self, e: &Expr, pre: &mut Vec<String>) -> String {
        let Type::Block { elem, rows, cols } = e.ty else {
            return self.scalar(e, pre);
        };
        if let ExprKind::Local(l) = e.kind {
            return format!("l{l}{}", self.sfx);
        }
        let t = cty(elem);
        let v = self.fresh();
        let elem_code = match &e.kind {
            ExprKind::Block(a) => self.load(*a, elem, Some(("bi", "bj")), pre),
            ExprKind::Cast(inner, to) => {
                if let ExprKind::Block(a) = inner.kind {
                    self.load(a, *to, Some(("bi", "bj")), pre)
                } else {
                    let b = self.block(inner, pre);
                    format!("(({t}){b}[bi][bj])")
                }
            }
            ExprKind::Unary(op, a) => {
                let b = self.block(a, pre);
                match op {
                    UnOp::Neg => format!("(-{b}[bi][bj])"),
                    UnOp::Plus => format!("{b}[bi][bj]"),
                    UnOp::Not => format!("(~{b}[bi][bj])"),
                }
            }
            ExprKind::Binary(op, a, b) => {
                let side = |x: &Expr, pre: &mut Vec<String>| {
                    if x.ty.is_block() {
                        format!("{}[bi][bj]", self.block(x, pre))
                    } else {
                        format!("({})", self.scalar(x, pre))
                    }
                };
                let (x, y) = (side(a, pre), side(b, pre));
                let o = c_op(*op);
                format!("({x} {o} {y})")
            }
            ExprKind::MatMul(a, b) => {
                let (x, y) = (self.block(a, pre), self.block(b, pre));
                let (_, inner) = shape(a.ty);
                let s = self.fresh();
                pre.push(format!("{t} {v}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {{ {t} {s} = 0; for (int bk = 0; bk < {inner}; bk++) {s} += {x}[bi][bk] * {y}[bk][bj]; {v}[bi][bj] = {s}; }}"));
                return v;
            }
            ExprKind::Transpose(a) => {
                let b = self.block(a, pre);
                format!("{b}[bj][bi]")
            }
            _ => "0".to_string(),
        };
        pre.push(format!("{t} {v}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {v}[bi][bj] = {elem_code};"));
        v
    }

    fn stmts(&self, out: &mut String, stmts: &[KStmt], depth: usize) {
        let pad = "    ".repeat(depth);
        for s in stmts {
            let mut pre = Vec::new();
            let line = match s {
                KStmt::Let(l, e) => {
                    let local = &self.r.locals[*l];
                    match local.ty {
                        Type::Block { elem, rows, cols } => {
                            let b = self.block(e, &mut pre);
                            format!(
                                "{} l{l}{sfx}[{rows}][{cols}]; for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) l{l}{sfx}[bi][bj] = {b}[bi][bj];",
                                cty(elem),
                                sfx = self.sfx
                            )
                        }
                        Type::Scalar(t) => {
                            let v = self.scalar(e, &mut pre);
                            self.note_local_range(*l, e);
                            format!(
                                "const {} l{l}{} = {v};",
                                if t == Scalar::Bool { "int" } else { cty(t) },
                                self.sfx
                            )
                        }
                    }
                }
                KStmt::Store(a, e) => {
                    let acc = &self.r.accesses[*a];
                    let m = acc.matrix;
                    let et = cty(self.f.matrices[m].elem);
                    let guarded = super::safety::guarded(self.f, self.r, *a);
                    let code = super::safety::access_code(self.r_id(), *a);
                    if e.ty.is_block() {
                        let b = self.block(e, &mut pre);
                        let (rows, cols) = shape(e.ty);
                        let mut ipre = Vec::new();
                        let idx: Vec<String> = acc
                            .subs
                            .iter()
                            .enumerate()
                            .map(|(k, s)| match s {
                                Sub::Point(x) => format!("({})", self.scalar(x, &mut ipre)),
                                Sub::Window { start, stride, .. } => {
                                    let off = if k + 1 == acc.subs.len() { "bj" } else { "bi" };
                                    format!(
                                        "({} + {off} * {stride})",
                                        self.scalar(start, &mut ipre)
                                    )
                                }
                                Sub::Star => "0".into(),
                            })
                            .collect();
                        pre.extend(ipre);
                        let store = format!("m{m}[{}] = ({et}){b}[bi][bj];", self.linear(m, &idx));
                        let store = if guarded {
                            let (cond, oob) = self.guard(m, &idx, code);
                            format!("if ({cond}) {store} else {oob};")
                        } else {
                            store
                        };
                        format!(
                            "for (int bi = 0; bi < {rows}; bi++) for (int bj = 0; bj < {cols}; bj++) {{ {store} }}"
                        )
                    } else {
                        let v = self.scalar(e, &mut pre);
                        let idx: Vec<String> = acc
                            .subs
                            .iter()
                            .map(|s| match s {
                                Sub::Point(x) => format!("({})", self.scalar(x, &mut pre)),
                                Sub::Window { start, .. } => {
                                    format!("({})", self.scalar(start, &mut pre))
                                }
                                Sub::Star => "0".into(),
                            })
                            .collect();
                        if guarded {
                            let (cond, oob) = self.guard(m, &idx, code);
                            format!(
                                "if ({cond}) m{m}[{}] = ({et})({v}); else {oob};",
                                self.linear(m, &idx)
                            )
                        } else {
                            match self.defer_store(*a, &v) {
                                Some(held) => held,
                                None => format!("m{m}[{}] = ({et})({v});", self.linear(m, &idx)),
                            }
                        }
                    }
                }
                KStmt::If(c, t, e) => {
                    let cond = self.scalar(c, &mut pre);
                    self.mark_hoistable(t, e);
                    self.branch.set(self.branch.get() + 1);
                    let mut tb = String::new();
                    self.stmts(&mut tb, t, depth + 1);
                    let mut eb = String::new();
                    self.stmts(&mut eb, e, depth + 1);
                    self.branch.set(self.branch.get() - 1);
                    format!("if ({cond}) {{\n{tb}{pad}}} else {{\n{eb}{pad}}}")
                }
            };
            for p in pre {
                let _ = writeln!(out, "{pad}{p}");
            }
            let _ = writeln!(out, "{pad}{line}");
        }
    }
}

/// A built-in function in OpenCL C, with the semantics of the CPU path (`clamp` is
/// `min(max(..))`; an integer `abs` keeps its signed type and wraps: OpenCL's `abs` gives the
/// magnitude unsigned, reinterpreted as signed, with no undefined `-INT_MIN`; of an unsigned
/// value it is the value). `t` is the call's type.
fn call_c(b: Builtin, xs: &[String], t: Scalar) -> String {
    let float = t.is_float();
    match b {
        Builtin::Min => format!(
            "{}({}, {})",
            if float { "fmin" } else { "min" },
            xs[0],
            xs[1]
        ),
        Builtin::Max => format!(
            "{}({}, {})",
            if float { "fmax" } else { "max" },
            xs[0],
            xs[1]
        ),
        Builtin::Clamp if float => format!("fmin(fmax({}, {}), {})", xs[0], xs[1], xs[2]),
        Builtin::Clamp => format!("min(max({}, {}), {})", xs[0], xs[1], xs[2]),
        Builtin::Abs if float => format!("fabs({})", xs[0]),
        Builtin::Abs => match t {
            Scalar::I64 => format!("as_long(abs((long)({})))", xs[0]),
            Scalar::U32 | Scalar::U64 => format!("({})", xs[0]),
            _ => format!("as_int(abs((int)({})))", xs[0]),
        },
        b => format!("{}({})", b.name(), xs[0]),
    }
}

fn shape(t: Type) -> (u32, u32) {
    match t {
        Type::Block { rows, cols, .. } => (rows, cols),
        Type::Scalar(_) => (1, 1),
    }
}
