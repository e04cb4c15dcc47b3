//! OpenCL C printed from the loop IR (`crate::lir`, lowered with [`lir::Options::gpu`]): the
//! printer decides nothing. A region's work-item loops (`GpuThread(d)`) are its index space,
//! a checked load or store calls a guard helper (inside its matrix, or the error flag with the
//! region's code for that matrix), an unchecked one is a plain access, and every operator keeps
//! the LIR's semantics (wrapping integer arithmetic computed unsigned, shifts masked by the
//! operand's width, saturating float-to-integer conversions, guarded divisions).
//!
//! It prints the baseline plan's program (one work-item per iteration point, the per-work-item
//! interior test of `lir::pass::partition::points`) and every other plan's kernel of an
//! iterator region (`append_candidate`, the passes its schedule's directives switch on); a
//! loop over work-groups (`GpuBlock`, local-memory tiles) makes the work-item loops inside it
//! the work-item's place in its group, with the group's size required of the launch.

mod access;
pub use access::INDEX_SLACK;
mod expr;

use super::program::{params, prelude};
use super::{cl_slots, kernel_name, reduction_kernel};
use crate::codegen::schedule::Schedule;
use crate::ir::{Function, RegionId, RegionKind, Scalar};
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

/// The lowering of plan `v`'s kernel of region `rid` (that region alone).
fn options(rid: RegionId, v: &Schedule) -> lir::Options {
    lir::Options {
        lanes: [v.cols(), v.rows()],
        share_loads: v.cse(),
        vector_memory: v.vmem(),
        peephole: v.peep(),
        mul24: v.m24(),
        split: v.split(),
        local_tile: v.lds().map(|(c, r)| [c, r]),
        time_band: v.time_band(),
        time_split_band: v.time_split(),
        fuse_tile: v.fuse_tile(),
        fuse_inline: v.fuse_inline(),
        fuse_item_tile: v.fuse_item_tile(),
        slide: v.slide(),
        // `unroll`: windows up to `lir::UNROLL_TAPS` written out tap by tap, constant filters
        // folded into the code; without it, past `lir::SLIDE_TAPS` (3x3), loops. A time band's
        // windows are written out as its gates (`time::gpu::bands`, `split_tile`) lowered them:
        // a loop would leave the kernel one step's, where the executor counts `K`; a fused
        // plan's as its gate (`fuse::gpu::plans`) lowered them.
        unroll_taps: if v.unroll() || v.steps() > 1 || v.fuses() {
            lir::UNROLL_TAPS
        } else {
            lir::SLIDE_TAPS
        },
        region: Some(rid),
        ..lir::Options::gpu()
    }
}

/// Whether plan `v`'s kernel of region `rid` slides its windows (`v` has `slide` and the
/// region has a window's reduction that slides along its rows: `lir::pass::slide::items`).
pub fn slides(f: &Function, rid: RegionId, v: &Schedule) -> bool {
    if !v.slide() {
        return false;
    }
    // The slide pass alone (where a region does not slide, the lowering would write out its
    // points instead: `cols` x `rows` copies of the body, for nothing).
    let opts = options(rid, v);
    let mut func = lir::front(f, &opts, &mut |_, _| {});
    lir::pass::slide::items(&mut func, f, opts.lanes, opts.slide_unroll)
        && func
            .temps
            .iter()
            .any(|(_, t)| t.memory == lir::Memory::Private)
}

/// The size of region `rid`'s body as plan `v` lowers it before its points are written out
/// (distinct expression nodes): a plan of `cols` x `rows` points per work-item copies it that
/// many times, which [`super::super::plan::candidates`] budgets.
pub fn body_nodes(f: &Function, rid: RegionId, v: &Schedule) -> usize {
    let opts = lir::Options {
        lanes: [1, 1],
        partition: false,
        select_loads: false,
        ..options(rid, v)
    };
    let func = lir::lower(f, &opts).func;
    region_body(&func, rid).map_or(0, |b| lir::visit::nodes(&func, b))
}

/// Bytes of local memory plan `v`'s kernel of region `rid` declares (its tiles; 0: none).
pub fn local_bytes(f: &Function, rid: RegionId, v: &Schedule) -> usize {
    if v.lds().is_none() && v.time_band().is_none() && v.fuse_tile().is_none() {
        return 0;
    }
    let lowered = lir::lower(f, &options(rid, v));
    region_body(&lowered.func, rid).map_or(0, |b| {
        lir::pass::local_tile::local_elements(&lowered.func, b)
            .iter()
            .map(|(t, n)| t.bytes() * *n as usize)
            .sum()
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
    let lowered = lir::lower(f, &options(rid, v));
    let bodies = region_bodies(&lowered.func, rid);
    // A split band's phases: its kernel, then the others (`later_phases`).
    let names = std::iter::once(name.to_string()).chain(later_phases(name, v));
    for (k, name) in names.enumerate() {
        let mut p = Printer::new(f, &lowered.func, rid);
        p.origin = false;
        p.ends = v.split();
        let mut kernel = String::new();
        p.kernel(&mut kernel, &name, bodies.get(k).copied());
        for (key, h) in &p.helpers {
            let fname = key.trim_start_matches('~');
            if !out.contains(&format!(" {fname}(")) {
                out.push_str(h);
            }
        }
        out.push_str(&kernel);
    }
}

/// The kernels plan `v` launches after its kernel `name`, in order, with the same shape: a split
/// band's (`Directive::TimeSplit`) later phases, `<name>_phase2` to `_phase4`; none for others.
pub fn later_phases(name: &str, v: &Schedule) -> Vec<String> {
    match v.time_split() {
        Some(_) => (2..=4).map(|k| format!("{name}_phase{k}")).collect(),
        None => Vec::new(),
    }
}

/// A matrix's extent (a host expression of the sizes) in C, as a `long`.
pub(super) fn extent(f: &Function, d: &crate::ir::Expr) -> String {
    let (hf, e) = lir::host_expr(f, d);
    let mut p = Printer::bare(f, &hf, 0);
    format!("((long)({}))", p.pure(e))
}

/// The body of region `rid` in the lowered function (`None`: the function never runs it).
fn region_body(func: &Func, rid: RegionId) -> Option<StmtId> {
    region_bodies(func, rid).first().copied()
}

/// The bodies of region `rid`'s statements in the lowered function, in order (a split band's
/// two phases first).
fn region_bodies(func: &Func, rid: RegionId) -> Vec<StmtId> {
    func.regions()
        .into_iter()
        .filter_map(|s| match func.stmts[s] {
            Stmt::Region { id, body, .. } if id == rid => Some(body),
            _ => None,
        })
        .collect()
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
    /// Printing inside a work-group loop (`GpuBlock`): work-item loops are the work-item's
    /// place in its group.
    in_group: bool,
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
            in_group: false,
        }
    }

    /// The parameters every function of the kernel takes (matrices, sizes, host scalars, the
    /// error flag).
    fn kernel_params(&self) -> Vec<String> {
        // The matrices the region's code stores to.
        let mut stored = Vec::new();
        let mut stack = region_bodies(self.func, self.rid);
        while let Some(s) = stack.pop() {
            let st = &self.func.stmts[s];
            if let Stmt::Store {
                buf: lir::Buf::Matrix(m),
                ..
            }
            | Stmt::Update {
                buf: lir::Buf::Matrix(m),
                ..
            } = st
            {
                stored.push(*m);
            }
            stack.extend(lir::visit::stmt_parts(st).1);
        }
        params(self.f, &self.f.regions[self.rid], &stored)
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
        // Work-groups of a fixed size (local-memory tiles): the size their loops have.
        if let Some([c, r]) = body.and_then(|b| self.group_size(b)) {
            let _ = writeln!(out, "__attribute__((reqd_work_group_size({c}, {r}, 1)))");
        }
        let _ = writeln!(out, "__kernel void {name}({}) {{", ps.join(", "));
        if let Some(b) = body {
            self.stmt(out, b, 1);
        }
        out.push_str("}\n");
    }

    /// The extents of the work-item loops inside a work-group loop below `s` (dimension 0
    /// first), where some are.
    fn group_size(&self, s: StmtId) -> Option<[i128; 2]> {
        let mut size = None;
        let mut stack = vec![(s, false)];
        while let Some((s, in_group)) = stack.pop() {
            let st = &self.func.stmts[s];
            let here = match st {
                Stmt::For { kind, hi, .. } => match (kind, &self.func.exprs[*hi].kind) {
                    (LoopKind::GpuThread(d), lir::ExprKind::Int(n)) if in_group => {
                        let sz = size.get_or_insert([1, 1]);
                        sz[usize::from(*d).min(1)] = *n;
                        in_group
                    }
                    (LoopKind::GpuBlock(_), _) => true,
                    _ => in_group,
                },
                _ => in_group,
            };
            stack.extend(lir::visit::stmt_parts(st).1.into_iter().map(|c| (c, here)));
        }
        size
    }

    /// A variable's C name: its LIR name made an identifier, and its handle (unique). The
    /// naming scheme of the kernels, in which no two names meet: a variable's name ends in `_`
    /// and digits; every other name the printer spells does not (parameters `m<k>`, `p<k>`,
    /// `z<k>`, `s<k>`, `o<d>`, `e<d>`, `err`; constants `cst<k>`; temporaries `tmp<k>`; fresh
    /// locals `t<n>`; an outlined arm's parameters `q<k>`; helpers `pc_*`; OpenCL C's words).
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
        format!("t{}", self.fresh)
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
                let group = self.in_group;
                let head = match kind {
                    LoopKind::GpuThread(d) | LoopKind::GpuBlock(d) => {
                        let id = match kind {
                            LoopKind::GpuThread(_) if group => "get_local_id",
                            LoopKind::GpuThread(_) => "get_global_id",
                            _ => {
                                self.in_group = true;
                                "get_group_id"
                            }
                        };
                        if self.ends {
                            let _ = writeln!(out, "{pad}if ((int){id}({d}) >= e{d}) return;");
                        }
                        let o = if self.origin {
                            format!(" + o{d}")
                        } else {
                            String::new()
                        };
                        // A work-group loop is not tested: the test would put the group's
                        // barrier under a condition, which PoCL 3.1 miscompiles (a kernel so
                        // compiled corrupted the host's memory), and the launch has exactly
                        // the loop's groups (a group past its end would only fill a tile and
                        // skip every work-item by their own tests).
                        let test = if matches!(kind, LoopKind::GpuBlock(_)) {
                            String::new()
                        } else {
                            format!("if ({v} < ({z})) ")
                        };
                        format!(
                            "const {t} {v} = ({a}) + (({t}){id}({d}){o}) * {step};\n{pad}{test}{{\n"
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
                self.in_group = group;
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
                let (held, idx) = self.write(buf, &index, value, checked, &mut pre);
                self.store(buf, &idx, &held, checked, self.func.exprs[value].lanes)
            }
            Stmt::Update {
                buf,
                index,
                op,
                value,
                checked,
            } => {
                let (buf, index, op, value, checked) = (*buf, index.clone(), *op, *value, *checked);
                let (held, idx) = self.write(buf, &index, value, checked, &mut pre);
                self.update(buf, &idx, op, &held, checked)
            }
            Stmt::Barrier { global: false } => "barrier(CLK_LOCAL_MEM_FENCE);".to_string(),
            Stmt::Barrier { global: true } => {
                "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);".to_string()
            }
            Stmt::Region { body, .. } => {
                let b = *body;
                self.stmt(out, b, depth);
                return;
            }
            // A work-group's tile, at the kernel's scope (where OpenCL C allows `__local`), or a
            // work-item's private row (`lir::pass::slide::items`); their extents are constants.
            Stmt::Allocate {
                buf,
                elem,
                memory: memory @ (lir::Memory::Local | lir::Memory::Private),
                extents,
            } => {
                let n: Vec<String> = extents
                    .clone()
                    .iter()
                    .map(|e| self.expr(*e, &mut pre, false))
                    .collect();
                let space = if *memory == lir::Memory::Local {
                    "__local "
                } else {
                    ""
                };
                format!(
                    "{space}{} {}[{}];",
                    cty(*elem),
                    self.buffer(*buf).0,
                    n.join(" * ")
                )
            }
            // A guess of the CPU path's (`lir::pass::narrow`, which OpenCL's lowering does not
            // run): its fallback is the task as written.
            Stmt::Speculate { fallback, .. } => {
                let fallback = *fallback;
                self.stmt(out, fallback, depth);
                return;
            }
            // Host statements have no place in a kernel.
            Stmt::Within(_)
            | Stmt::Allocate { .. }
            | Stmt::Reduce { .. }
            | Stmt::HostLet(..)
            | Stmt::Return(_)
            | Stmt::Repeat { .. }
            | Stmt::ScanTotals { .. }
            | Stmt::ScanRow { .. }
            | Stmt::Stage(_)
            | Stmt::Swap(..) => {
                return;
            }
        };
        for p in pre {
            let _ = writeln!(out, "{pad}{p}");
        }
        let _ = writeln!(out, "{pad}{line}");
    }

    /// A store's or an update's value, held in a local of the buffer's element type, and its
    /// indices (their computations pushed to `pre`).
    fn write(
        &mut self,
        buf: Buf,
        index: &[ExprId],
        value: ExprId,
        checked: bool,
        pre: &mut Vec<String>,
    ) -> (String, Vec<String>) {
        let elem = vty(self.elem(buf), self.func.exprs[value].lanes);
        let x = self.expr(value, pre, false);
        let held = self.local();
        pre.push(format!("const {elem} {held} = ({elem})({x});"));
        let idx = self.indices(index, pre, false, checked);
        (held, idx)
    }

    /// Statement `s` inside a new C block (its `let`s declared there).
    fn block(&mut self, out: &mut String, s: StmtId, depth: usize) {
        self.declared.push(HashSet::new());
        self.stmt(out, s, depth + 1);
        self.declared.pop();
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

#[cfg(test)]
mod tests {
    use super::options;
    use crate::codegen::plan::candidates;
    use crate::lir;

    /// Every time-band candidate's kernel is lowered banded (a kernel of one step would run
    /// where the executor counts `K`): the candidates' gate and the kernel's lowering agree,
    /// windows of more taps than `lir::SLIDE_TAPS` included.
    #[test]
    fn every_band_candidate_is_lowered_banded() {
        for (name, window) in [("box3", 1), ("box5", 2), ("box7", 3)] {
            let src = format!(
                "fn {name}(src: &f32[M][N], out: &mut f32[M][N], t: i32) {{
                    let next: f32[M][N];
                    parac_border_rule e = replicate(out[{window}][{window}]);
                    parac_iterator i(0:M:1; 0:N:1) {{ out[ix][iy] = src[ix][iy]; }}
                    parac_repeat(t) {{
                        parac_iterator s(x in 0:M:1; y in 0:N:1) parac_border_rule(e) {{
                            next[x][y] = parac_matrix_sum(out[x-{window}:{w}:1][y-{window}:{w}:1]);
                        }}
                        parac_swap(out, next);
                    }}
                }}",
                w = 2 * window + 1
            );
            let c = crate::compile_str(&src);
            assert!(c.diagnostics.is_empty(), "{:?}", c.diagnostics);
            let f = &c.module.functions[0];
            let bands: Vec<_> = candidates(f, 1)
                .into_iter()
                .filter(|v| v.steps() > 1)
                .collect();
            assert!(!bands.is_empty(), "{name}: no bands");
            for v in bands {
                let o = lir::Options {
                    dump: true,
                    ..options(1, &v)
                };
                let l = lir::lower(f, &o);
                assert!(
                    l.dumps.iter().any(|(stage, _)| *stage == "time_band"),
                    "{name}: {} lowered without its band",
                    v.label()
                );
            }
        }
    }
}
