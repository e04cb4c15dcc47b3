//! OpenCL C printed from the loop IR (`crate::lir`, lowered with [`lir::Options::gpu`]): the
//! printer decides nothing. A region's work-item loops (`GpuThread(d)`) are its index space,
//! a checked load or store calls a guard helper (inside its matrix, or the error flag with the
//! region's code for that matrix), an unchecked one is a plain access, and every operator keeps
//! the LIR's semantics (wrapping integer arithmetic computed unsigned, shifts masked by the
//! operand's width, saturating float-to-integer conversions, guarded divisions).
//!
//! Today this prints the baseline plan's program (one work-item per iteration point, the
//! per-work-item interior test of `lir::pass::partition::points`); the other plans' kernels
//! still come from the HAST printer beside it (`variant.rs`).

mod expr;

use super::program::{params, prelude};
use super::{cl_slots, kernel_name, reduction_kernel};
use crate::codegen::safety;
use crate::codegen::schedule::{Directive, Schedule};
use crate::ir::{Function, MatrixId, MatrixKind, RegionId, RegionKind, Scalar};
use crate::lir::{self, Buf, ExprId, Func, LoopKind, Stmt, StmtId, VarId};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

/// The OpenCL C program of a function's baseline plan: constant matrices, guard helpers, then
/// one kernel per region.
pub fn program(f: &Function) -> String {
    let lowered = lir::lower(f, &lir::Options::gpu());
    let func = &lowered.func;
    let mut helpers = BTreeMap::new();
    let mut kernels = String::new();
    for (rid, r) in f.regions.iter().enumerate() {
        kernels.push('\n');
        match r.kind {
            RegionKind::Iterator => {
                let mut p = Printer::new(f, func, rid);
                p.kernel(&mut kernels, &kernel_name(f, rid), region_body(func, rid));
                helpers.append(&mut p.helpers);
            }
            RegionKind::Reduction { op, matrix, .. } => {
                reduction_kernel(&mut kernels, f, rid, op, matrix)
            }
        }
    }
    let mut out = prelude(f, "baseline plan, one work-item per iteration point");
    for h in helpers.values() {
        out.push_str(h);
    }
    out.push_str(&kernels);
    out
}

/// Whether the LIR printer prints plan `v`'s kernel: every plan but the baseline (printed by
/// [`program`]) and those with local-memory tiles (`lds`), which the HAST printer still prints
/// (the LIR has no work-group tiles yet).
pub(crate) fn prints(v: &Schedule) -> bool {
    !v.is_baseline()
        && v.directives().iter().all(|d| {
            !matches!(
                d,
                Directive::LocalTile { .. } | Directive::TreeReduce { .. }
            )
        })
}

/// Appends plan `v`'s kernel of iterator region `rid` (named `name`), its helpers first where
/// `out` does not define them yet.
pub(crate) fn append_candidate(
    out: &mut String,
    f: &Function,
    rid: RegionId,
    v: &Schedule,
    name: &str,
) {
    let opts = lir::Options {
        lanes: [v.cols(), v.rows()],
        share_loads: v.cse(),
        vector_memory: v.vmem(),
        peephole: v.peep(),
        mul24: v.m24(),
        split: v.split(),
        ..lir::Options::gpu()
    };
    let lowered = lir::lower(f, &opts);
    let mut p = Printer::new(f, &lowered.func, rid);
    p.origin = false;
    p.ends = v.split();
    let mut kernel = String::new();
    p.kernel(&mut kernel, name, region_body(&lowered.func, rid));
    for (key, h) in &p.helpers {
        let fname = key.trim_start_matches('~');
        if !out.contains(&format!(" {fname}(")) {
            out.push_str(h);
        }
    }
    out.push_str(&kernel);
}

/// A matrix's extent (a host expression of the sizes) in C, as a `long`.
pub(super) fn extent(f: &Function, d: &crate::ir::Expr) -> String {
    let (hf, e) = lir::host_expr(f, d);
    let mut p = Printer::bare(f, &hf, 0);
    format!("((long)({}))", p.pure(e))
}

/// The body of region `rid` in the lowered function (`None`: the function never runs it).
fn region_body(func: &Func, rid: RegionId) -> Option<StmtId> {
    let Stmt::Block(steps) = &func.stmts[func.body] else {
        return None;
    };
    steps.iter().find_map(|s| match func.stmts[*s] {
        Stmt::Region { id, body, .. } if id == rid => Some(body),
        _ => None,
    })
}

/// The printer of one region's kernel.
pub(super) struct Printer<'a> {
    f: &'a Function,
    func: &'a Func,
    rid: RegionId,
    /// Per matrix, per dimension: its extent in C (`long`), from the sizes.
    dims: Vec<Vec<String>>,
    /// The guard helpers the kernel calls, by name.
    helpers: BTreeMap<String, String>,
    /// Variables of `let` expressions that are printed as their value (see `expr.rs`).
    subst: HashMap<VarId, String>,
    /// Per open C block: the `let` expressions already declared in it.
    declared: Vec<HashSet<VarId>>,
    /// Fresh locals.
    fresh: usize,
    /// Printing an outlined arm (arms inside it stay in place).
    outlining: bool,
    /// The depth of the expression being printed.
    nesting: usize,
    /// The kernel takes its first work-item's index as arguments (`o<d>`; the baseline's) and
    /// is launched with no global offset.
    origin: bool,
    /// The kernel takes the end of the box it runs as arguments (`e<d>`; a split plan's).
    ends: bool,
}

impl<'a> Printer<'a> {
    pub(super) fn new(f: &'a Function, func: &'a Func, rid: RegionId) -> Printer<'a> {
        let dims = f
            .matrices
            .iter()
            .map(|m| m.dims.iter().map(|d| extent(f, d)).collect())
            .collect();
        Printer {
            dims,
            ..Printer::bare(f, func, rid)
        }
    }

    fn bare(f: &'a Function, func: &'a Func, rid: RegionId) -> Printer<'a> {
        Printer {
            f,
            func,
            rid,
            dims: Vec::new(),
            helpers: BTreeMap::new(),
            subst: HashMap::new(),
            declared: vec![HashSet::new()],
            fresh: 0,
            outlining: false,
            nesting: 0,
            origin: true,
            ends: false,
        }
    }

    /// The parameters every function of the kernel takes (matrices, sizes, host scalars, the
    /// error flag).
    fn kernel_params(&self) -> Vec<String> {
        params(self.f, &self.f.regions[self.rid])
    }

    /// Their names, to pass them on.
    fn kernel_args(&self) -> Vec<String> {
        self.kernel_params()
            .iter()
            .map(|p| p.rsplit(['*', ' ']).next().unwrap_or(p).to_string())
            .collect()
    }

    fn kernel(&mut self, out: &mut String, name: &str, body: Option<StmtId>) {
        let r = &self.f.regions[self.rid];
        let mut ps = self.kernel_params();
        // The first work-item's index per dimension comes as arguments (`o<d>`), and the
        // runtime launches the kernel with no global offset: PoCL compiles a kernel at its first
        // launch for each work-group size and again for a zero global offset, so a split plan's
        // border strips (one at the origin, the others not) cost one compilation, not two.
        if self.origin {
            ps.extend((0..cl_slots(r).len()).map(|d| format!("int o{d}")));
        }
        // A split plan's kernel runs the interior box: its end per dimension, in work-items
        // (its start is the launch's global offset).
        if self.ends {
            ps.extend((0..cl_slots(r).len()).map(|d| format!("int e{d}")));
        }
        let _ = writeln!(out, "__kernel void {name}({}) {{", ps.join(", "));
        if let Some(b) = body {
            self.stmt(out, b, 1);
        }
        out.push_str("}\n");
    }

    /// A variable's C name: its LIR name made an identifier, and its handle (unique).
    fn var(&self, v: VarId) -> String {
        let name: String = self.func.vars[v]
            .name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        format!("{name}_{}", v.index())
    }

    fn local(&mut self) -> String {
        self.fresh += 1;
        format!("t_{}", self.fresh)
    }

    fn stmt(&mut self, out: &mut String, s: StmtId, depth: usize) {
        let pad = "    ".repeat(depth);
        let mut pre = Vec::new();
        let line = match &self.func.stmts[s] {
            Stmt::Block(ss) => {
                for c in ss.clone() {
                    if matches!(self.func.stmts[c], Stmt::Block(_)) {
                        // A block in a block (a work-item's point): its own C scope.
                        let _ = writeln!(out, "{pad}{{");
                        self.block(out, c, depth);
                        let _ = writeln!(out, "{pad}}}");
                    } else {
                        self.stmt(out, c, depth);
                    }
                }
                return;
            }
            Stmt::Let(v, e) => {
                let (v, e) = (*v, *e);
                let x = self.expr(e, &mut pre, false);
                let var = &self.func.vars[v];
                format!("const {} {} = {x};", vty(var.ty, var.lanes), self.var(v))
            }
            Stmt::If(c, t, e) => {
                let (c, t, e) = (*c, *t, *e);
                let cond = self.expr(c, &mut pre, false);
                let mut text = format!("if ({cond}) {{\n");
                self.block(&mut text, t, depth);
                if let Some(e) = e {
                    let _ = writeln!(text, "{pad}}} else {{");
                    self.block(&mut text, e, depth);
                }
                text.push_str(&pad);
                text.push('}');
                text
            }
            Stmt::For {
                var,
                lo,
                hi,
                step,
                kind,
                body,
            } => {
                let (var, lo, hi, step, kind, body) = (*var, *lo, *hi, *step, *kind, *body);
                let t = cty(self.func.vars[var].ty);
                let (v, a, z) = (
                    self.var(var),
                    self.expr(lo, &mut pre, false),
                    self.expr(hi, &mut pre, false),
                );
                let head = match kind {
                    LoopKind::GpuThread(d) | LoopKind::GpuBlock(d) => {
                        let id = if matches!(kind, LoopKind::GpuThread(_)) {
                            "get_global_id"
                        } else {
                            "get_group_id"
                        };
                        if self.ends {
                            let _ = writeln!(out, "{pad}if ((int){id}({d}) >= e{d}) return;");
                        }
                        let o = if self.origin {
                            format!(" + o{d}")
                        } else {
                            String::new()
                        };
                        format!(
                            "const {t} {v} = ({a}) + (({t}){id}({d}){o}) * {step};\n{pad}if ({v} < ({z})) {{\n"
                        )
                    }
                    _ => {
                        let end = self.local();
                        format!(
                            "const {t} {end} = {z};\n{pad}for ({t} {v} = {a}; {v} < {end}; {v} += {step}) {{\n"
                        )
                    }
                };
                let mut text = head;
                self.block(&mut text, body, depth);
                text.push_str(&pad);
                text.push('}');
                text
            }
            Stmt::Store {
                buf,
                index,
                value,
                checked,
            } => {
                let (buf, index, value, checked) = (*buf, index.clone(), *value, *checked);
                let elem = vty(self.elem(buf), self.func.exprs[value].lanes);
                let x = self.expr(value, &mut pre, false);
                let held = self.local();
                pre.push(format!("const {elem} {held} = ({elem})({x});"));
                let idx = self.indices(&index, &mut pre, false, checked);
                self.store(buf, &idx, &held, checked, self.func.exprs[value].lanes)
            }
            Stmt::Barrier => "barrier(CLK_LOCAL_MEM_FENCE);".to_string(),
            Stmt::Region { body, .. } => {
                let b = *body;
                self.stmt(out, b, depth);
                return;
            }
            // Host statements have no place in a kernel.
            Stmt::Allocate { .. } | Stmt::Reduce { .. } | Stmt::HostLet(..) | Stmt::Return(_) => {
                return;
            }
        };
        for p in pre {
            let _ = writeln!(out, "{pad}{p}");
        }
        let _ = writeln!(out, "{pad}{line}");
    }

    /// Statement `s` inside a new C block (its `let`s declared there).
    fn block(&mut self, out: &mut String, s: StmtId, depth: usize) {
        self.declared.push(HashSet::new());
        self.stmt(out, s, depth + 1);
        self.declared.pop();
    }

    fn elem(&self, buf: Buf) -> Scalar {
        match buf {
            Buf::Matrix(m) => self.f.matrices[m].elem,
            Buf::Temp(t) => self.func.temps[t].elem,
        }
    }

    /// The C name of a buffer and its pitch (elements between rows).
    fn buffer(&self, buf: Buf) -> (String, String) {
        match buf {
            Buf::Matrix(m) => match self.f.matrices[m].kind {
                MatrixKind::Const(_) => {
                    let last = self.dims[m].last().cloned().unwrap_or_else(|| "1".into());
                    (format!("cst{m}"), format!("((int){last})"))
                }
                _ => (format!("m{m}"), format!("p{m}")),
            },
            Buf::Temp(t) => (self.var_temp(t), "0".into()),
        }
    }

    fn var_temp(&self, t: lir::TempId) -> String {
        format!("tmp{}", t.index())
    }

    /// The error-flag code of a checked access of matrix `m` (see `codegen::safety`).
    fn code(&self, m: MatrixId, write: bool) -> i32 {
        if write {
            safety::write_code(self.rid, m)
        } else {
            safety::border_code(self.rid, m)
        }
    }

    fn store(
        &mut self,
        buf: Buf,
        idx: &[String],
        value: &str,
        checked: bool,
        lanes: u32,
    ) -> String {
        self.access(buf, idx, Some(value), checked, lanes)
    }

    /// A load of `buf` at `idx`.
    fn load(&mut self, buf: Buf, idx: &[String], checked: bool, lanes: u32) -> String {
        self.access(buf, idx, None, checked, lanes)
    }

    /// A load, or a store of `value`: a plain one, or a checked one through its guard helper;
    /// of `lanes` adjacent elements (the last index a ramp, printed as its base), `vloadN` or
    /// `vstoreN`.
    fn access(
        &mut self,
        buf: Buf,
        idx: &[String],
        value: Option<&str>,
        checked: bool,
        lanes: u32,
    ) -> String {
        let (name, pitch) = self.buffer(buf);
        if lanes > 1 {
            let at = self.linear(buf, idx, &pitch);
            return match value {
                Some(v) => format!("vstore{lanes}({v}, 0, {name} + {at});"),
                None => format!("vload{lanes}(0, {name} + {at})"),
            };
        }
        match buf {
            Buf::Matrix(m) if checked => {
                let write = value.is_some();
                let h = self.helper(m, write);
                let v = value.map_or(String::new(), |v| format!("{v}, "));
                format!(
                    "{h}({name}, {pitch}, {}, {}, {v}err, {}){}",
                    self.dims[m].join(", "),
                    idx.join(", "),
                    self.code(m, write),
                    if write { ";" } else { "" }
                )
            }
            _ => {
                let at = format!("{name}[{}]", self.linear(buf, idx, &pitch));
                match value {
                    Some(v) => format!("{at} = {v};"),
                    None => at,
                }
            }
        }
    }

    /// The indices of an access in C. An unchecked access's (proven inside its matrix) are
    /// `int`s, and so is its linear index ([`Printer::linear`]).
    pub(super) fn indices(
        &mut self,
        index: &[ExprId],
        pre: &mut Vec<String>,
        cond: bool,
        checked: bool,
    ) -> Vec<String> {
        index
            .iter()
            .map(|i| {
                let x = self.expr(*i, pre, cond);
                if checked || self.func.exprs[*i].ty == Scalar::I32 {
                    x
                } else {
                    format!("((int)({x}))")
                }
            })
            .collect()
    }

    /// The linear index of an unchecked access at `idx` in `buf` (rows `pitch` apart, planes of
    /// whole rows), in `int`: the access is proven inside its matrix, and a device matrix holds
    /// fewer than 2^31 elements, padding included (`parac-runtime`'s buffer layout), so no
    /// partial sum overflows. A 64-bit index would hide from the device compiler that
    /// neighbouring work-items access neighbouring elements (PoCL then gathers).
    fn linear(&self, buf: Buf, idx: &[String], pitch: &str) -> String {
        linear(idx, pitch, |k| match buf {
            Buf::Matrix(m) => format!("((int){})", self.dims[m][k]),
            Buf::Temp(_) => "0".into(),
        })
    }

    /// The guard helper of a load (or a store) of matrix `m`, defined once per program.
    fn helper(&mut self, m: MatrixId, write: bool) -> String {
        let mat = &self.f.matrices[m];
        let (n, t) = (mat.dims.len(), cty(mat.elem));
        let constant = matches!(mat.kind, MatrixKind::Const(_));
        let name = format!(
            "pc_{}{n}_{t}",
            match (write, constant) {
                (true, _) => "st",
                (false, true) => "ldc",
                (false, false) => "ld",
            }
        );
        let ks: Vec<usize> = (0..n).collect();
        let ptr = match (write, constant) {
            (true, _) => format!("__global {t}* m"),
            (false, true) => format!("__constant {t}* m"),
            (false, false) => format!("__global const {t}* m"),
        };
        let mut ps = vec![ptr, "int p".to_string()];
        ps.extend(ks.iter().map(|k| format!("long d{k}")));
        ps.extend(ks.iter().map(|k| format!("long i{k}")));
        if write {
            ps.push(format!("{t} v"));
        }
        ps.push("__global int* err".into());
        ps.push("int code".into());
        let inside: Vec<String> = ks
            .iter()
            .map(|k| format!("i{k} >= 0 && i{k} < d{k}"))
            .collect();
        let inside = if inside.is_empty() {
            "1".to_string()
        } else {
            inside.join(" && ")
        };
        let idx: Vec<String> = ks.iter().map(|k| format!("i{k}")).collect();
        let lin = linear(&idx, "p", |k| format!("d{k}"));
        let mut at: Vec<String> = idx.iter().take(3).cloned().collect();
        at.resize(3, "0".into());
        let at = at.join(", ");
        let text = if write {
            format!(
                "static void {name}({}) {{\n    if ({inside}) m[{lin}] = v; else pc_oob(err, code, {at});\n}}\n",
                ps.join(", ")
            )
        } else {
            format!(
                "static {t} {name}({}) {{\n    if ({inside}) return m[{lin}];\n    return ({t})pc_oob(err, code, {at});\n}}\n",
                ps.join(", ")
            )
        };
        self.helpers.entry(name.clone()).or_insert(text);
        name
    }
}

/// The C type of a LIR value (`bool` as `int`, as C's comparisons give it).
fn cty(s: Scalar) -> &'static str {
    s.cl_name()
}

/// The C type of `lanes` lanes of `s` (`uchar8`; a scalar's when `lanes` is 1).
fn vty(s: Scalar, lanes: u32) -> String {
    if lanes > 1 {
        format!("{}{lanes}", cty(s))
    } else {
        cty(s).to_string()
    }
}

/// The unsigned type wrapping arithmetic of type `s` is computed in.
fn unsigned(s: Scalar) -> &'static str {
    if matches!(s, Scalar::I64 | Scalar::U64) {
        "ulong"
    } else {
        "uint"
    }
}

/// The linear index of `idx` (C expressions, outermost first): the last index counts elements,
/// rows are `pitch` apart, and a plane is `dim(k)` rows of the dimension `k` before the last.
pub(super) fn linear(idx: &[String], pitch: &str, dim: impl Fn(usize) -> String) -> String {
    let n = idx.len();
    let mut e = String::new();
    for (k, i) in idx.iter().enumerate() {
        e = if k == 0 {
            format!("({i})")
        } else if k + 1 == n {
            format!("({e}) * {pitch} + ({i})")
        } else {
            format!("({e}) * {} + ({i})", dim(k))
        };
    }
    if e.is_empty() { "0".into() } else { e }
}
