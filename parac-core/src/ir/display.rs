//! A readable dump of the IR, for the CLI and the golden tests.

use super::*;
use std::fmt::Write as _;

/// Renders a whole module.
pub fn dump(module: &Module) -> String {
    let mut out = String::new();
    for f in &module.functions {
        dump_function(&mut out, f);
    }
    out
}

/// Renders one function.
pub fn dump_one(f: &Function) -> String {
    let mut out = String::new();
    dump_function(&mut out, f);
    out
}

/// A matrix's declared dimensions as written, e.g. `[M][(N+1)/2]`: what shape and rank errors
/// show (`Error::Shape::declared`), and how the checks compare two matrices' shapes.
pub fn declared(f: &Function, m: MatrixId) -> String {
    let ctx = Ctx {
        f,
        region: None,
        accesses: &[],
    };
    f.matrices[m]
        .dims
        .iter()
        .map(|d| format!("[{}]", ctx.expr(d)))
        .collect()
}

/// Formatting context: the function, and the access table and region of the expression.
pub struct Ctx<'a> {
    /// The function.
    pub f: &'a Function,
    /// The region whose variables and locals are in scope.
    pub region: Option<&'a Region>,
    /// The access table `Load`/`Block` refer to.
    pub accesses: &'a [Access],
}

impl Ctx<'_> {
    /// Renders an expression.
    pub fn expr(&self, e: &Expr) -> String {
        let sub = |x: &Expr| {
            let s = self.expr(x);
            if matches!(
                x.kind,
                ExprKind::Binary(..) | ExprKind::Cast(..) | ExprKind::Unary(..)
            ) {
                format!("({s})")
            } else {
                s
            }
        };
        match &e.kind {
            ExprKind::Int(v) => v.to_string(),
            ExprKind::Float(v) => {
                let s = format!("{v:?}");
                s
            }
            ExprKind::Size(i) => self.f.sizes[*i].name.clone(),
            ExprKind::Host(i) => self.f.scalars[*i].name.clone(),
            ExprKind::Var(slot) => self
                .region
                .and_then(|r| r.dims.get(*slot).and_then(|d| d.as_ref()))
                .map_or_else(|| format!("var{slot}"), |d| d.var.clone()),
            ExprKind::Local(i) => self
                .region
                .map_or_else(|| format!("local{i}"), |r| r.locals[*i].name.clone()),
            ExprKind::Load(a) | ExprKind::Block(a) => self.access(&self.accesses[*a]),
            ExprKind::Unary(op, a) => {
                let o = match op {
                    UnOp::Neg => "-",
                    UnOp::Plus => "+",
                    UnOp::Not => "!",
                };
                format!("{o}{}", sub(a))
            }
            ExprKind::Binary(op, a, b) => format!("{} {} {}", sub(a), op.symbol(), sub(b)),
            ExprKind::MatMul(a, b) => format!("matmul({}, {})", self.expr(a), self.expr(b)),
            ExprKind::Transpose(a) => format!("transe({})", self.expr(a)),
            ExprKind::Cast(a, t) => format!("{} as {t}", sub(a)),
            ExprKind::Call(b, args) => {
                let a: Vec<_> = args.iter().map(|x| self.expr(x)).collect();
                format!("{}({})", b.name(), a.join(", "))
            }
            ExprKind::Reduce(op, a) => format!("{}({})", op.name(), self.expr(a)),
            ExprKind::Conv(a, b) => format!("conv({}, {})", self.expr(a), self.expr(b)),
            ExprKind::Prefix {
                op, value, slots, ..
            } => {
                let vars: Vec<String> = slots
                    .iter()
                    .map(|s| {
                        self.region
                            .and_then(|r| r.dims.get(*s)?.as_ref().map(|d| d.var.clone()))
                            .unwrap_or_else(|| format!("slot{s}"))
                    })
                    .collect();
                format!(
                    "prefix_{}({}, {})",
                    op.name(),
                    self.expr(value),
                    vars.join(", ")
                )
            }
        }
    }

    /// Renders an access `m[i][a:5:1]`.
    pub fn access(&self, a: &Access) -> String {
        let mut s = self.f.matrices[a.matrix].name.clone();
        for sub in &a.subs {
            match sub {
                Sub::Point(e) => {
                    let _ = write!(s, "[{}]", self.expr(e));
                }
                Sub::Window { start, len, stride } => {
                    let len = self.f.len_text(*len);
                    let _ = write!(s, "[{}:{len}:{stride}]", self.expr(start));
                }
                Sub::Star => s.push_str("[*]"),
            }
        }
        s
    }
}

fn host<'a>(f: &'a Function) -> Ctx<'a> {
    Ctx {
        f,
        region: None,
        accesses: &[],
    }
}

/// A host expression of `f` (sizes, scalars, constants) as text: `(2 * r) + 1`.
pub fn host_text(f: &Function, e: &Expr) -> String {
    host(f).expr(e)
}

fn dims(f: &Function, d: &[Expr]) -> String {
    d.iter().map(|e| format!("[{}]", host(f).expr(e))).collect()
}

fn sel(s: &Sel) -> String {
    match s {
        Sel::Star => "*".into(),
        Sel::Before(k) => format!("-{k}"),
        Sel::After(k) => format!("+{k}"),
    }
}

fn dump_function(out: &mut String, f: &Function) {
    let _ = writeln!(
        out,
        "fn {}{}",
        f.name,
        f.ret.map_or(String::new(), |t| format!(" -> {t}"))
    );
    for s in &f.sizes {
        let (m, d) = s.bound_by;
        let _ = writeln!(out, "  size {} = {}.dim{}", s.name, f.matrices[m].name, d);
    }
    for m in &f.matrices {
        let kind = match &m.kind {
            MatrixKind::Input => "input".to_string(),
            MatrixKind::Output => "output".to_string(),
            MatrixKind::Local => "local".to_string(),
            MatrixKind::Const(v) => {
                let vals: Vec<_> = v.iter().map(|x| format!("{x}")).collect();
                format!("const = [{}]", vals.join(", "))
            }
        };
        let _ = writeln!(
            out,
            "  matrix {}: {}{} {kind}",
            m.name,
            m.elem,
            dims(f, &m.dims)
        );
    }
    for s in &f.scalars {
        let kind = match s.kind {
            HostScalarKind::Param => "param".to_string(),
            HostScalarKind::Let => "let".to_string(),
            HostScalarKind::Reduction(r) => format!("result of {}", f.regions[r].name),
        };
        let _ = writeln!(out, "  scalar {}: {} {kind}", s.name, s.ty);
    }
    for r in &f.rules {
        let how = r
            .shorthand
            .as_ref()
            .map_or(String::new(), |s| format!(" (from {})", s.text));
        let _ = writeln!(out, "  rule {}{how}", r.name);
        for e in &r.entries {
            let c = Ctx {
                f,
                region: None,
                accesses: &e.accesses,
            };
            let s: String = e.sels.iter().map(|s| format!("[{}]", sel(s))).collect();
            let _ = writeln!(
                out,
                "    {}{s} = {}: {}",
                f.matrices[e.matrix].name,
                c.expr(&e.value),
                e.value.ty
            );
        }
    }
    let _ = writeln!(out, "  steps:");
    dump_steps(out, f, &f.steps, 4);
    for r in &f.regions {
        dump_region(out, f, r);
    }
    out.push('\n');
}

fn dump_steps(out: &mut String, f: &Function, steps: &[HostStep], indent: usize) {
    let pad = " ".repeat(indent);
    for s in steps {
        let _ = match s {
            HostStep::Run(r) => writeln!(out, "{pad}run {}", f.regions[*r].name),
            HostStep::Let(v, e) => writeln!(
                out,
                "{pad}let {}: {} = {}",
                f.scalars[*v].name,
                f.scalars[*v].ty,
                host(f).expr(e)
            ),
            HostStep::Return(e) => writeln!(out, "{pad}return {}", host(f).expr(e)),
            HostStep::Repeat {
                count,
                body,
                schedule,
            } => {
                let mut sched = String::new();
                if let Some(b) = schedule.band {
                    sched += &format!(" band {b}");
                }
                if let Some(r) = schedule.rows {
                    sched += &format!(" rows {r}");
                }
                if let Some(s) = schedule.split {
                    sched += &format!(" split {}", s as u8);
                }
                let _ = writeln!(out, "{pad}repeat {} times{sched}:", host(f).expr(count));
                dump_steps(out, f, body, indent + 2);
                Ok(())
            }
            HostStep::Swap(a, b) => writeln!(
                out,
                "{pad}swap {} {}",
                f.matrices[*a].name, f.matrices[*b].name
            ),
        };
    }
}

fn dump_region(out: &mut String, f: &Function, r: &Region) {
    let kind = match r.kind {
        RegionKind::Iterator => "iterator".to_string(),
        RegionKind::Reduction { op, matrix, result } => format!(
            "global {} of {} into {}",
            op.name(),
            f.matrices[matrix].name,
            f.scalars[result].name
        ),
    };
    let _ = writeln!(out, "  region {}: {kind}, {} dims", r.name, r.par_dims());
    let h = host(f);
    for (slot, d) in r.dims.iter().enumerate() {
        match d {
            None => {
                let _ = writeln!(out, "    slot {slot}: empty");
            }
            Some(d) => {
                let _ = writeln!(
                    out,
                    "    slot {slot}: {} in {}..{} step {}",
                    d.var,
                    h.expr(&d.lo),
                    h.expr(&d.hi),
                    d.step
                );
            }
        }
    }
    let gws: Vec<String> = r
        .dims
        .iter()
        .flatten()
        .map(|d| {
            let (lo, hi) = (h.expr(&d.lo), h.expr(&d.hi));
            let span = if lo == "0" {
                hi
            } else {
                format!("({hi}) - ({lo})")
            };
            if d.step == 1 {
                span
            } else {
                format!("ceil(({span}) / {})", d.step)
            }
        })
        .collect();
    let _ = writeln!(out, "    global size: [{}]", gws.join(", "));
    if !r.fuse {
        let _ = writeln!(out, "    schedule: fuse = 0");
    }
    if let Some(i) = r.inline {
        let _ = writeln!(out, "    schedule: inline = {}", u8::from(i));
    }
    if let Some(v) = r.fold {
        let _ = writeln!(out, "    schedule: fold = {}", u8::from(v));
    }
    if !r.rules.is_empty() {
        let names: Vec<_> = r.rules.iter().map(|i| f.rules[*i].name.as_str()).collect();
        let _ = writeln!(out, "    rules: {}", names.join(", "));
    }
    for l in &r.locals {
        let _ = writeln!(out, "    local {}: {}", l.name, l.ty);
    }
    let c = Ctx {
        f,
        region: Some(r),
        accesses: &r.accesses,
    };
    for (i, a) in r.accesses.iter().enumerate() {
        let reach = match r.reach.get(i) {
            Some(Some(v)) if v.iter().any(|(b, a)| *b > 0 || *a > 0) => {
                let parts: Vec<String> = v.iter().map(|(b, a)| format!("-{b}/+{a}")).collect();
                format!("  outside: [{}]", parts.join("]["))
            }
            Some(None) => "  outside: unknown (data-dependent index)".to_string(),
            _ => String::new(),
        };
        let rel = relative_text(f, r, a);
        let _ = writeln!(
            out,
            "    access #{i} {} {}{rel}{reach}",
            if a.write { "write" } else { "read " },
            c.access(a)
        );
    }
    border_facts(out, f, r);
    features(out, f, r);
    if !r.body.is_empty() {
        let _ = writeln!(out, "    body:");
        body(out, &c, &r.body, 3);
    }
}

/// `  at [itx][ity-2..ity+2]`: the subscripts relative to the index variables, when every
/// subscript has such a form and at least one uses a variable.
fn relative_text(f: &Function, r: &Region, a: &Access) -> String {
    use crate::check::relative::{affine, render};
    if r.kind != RegionKind::Iterator {
        return String::new();
    }
    let mut s = String::new();
    let mut uses_var = false;
    for sub in &a.subs {
        let (e, last) = match sub {
            Sub::Point(e) => (e, None),
            Sub::Window {
                start,
                len: Len::Const(len),
                stride,
            } => (start, Some((*len as i64 - 1) * stride)),
            Sub::Window { .. } => return String::new(),
            Sub::Star => return String::new(),
        };
        let Some(aff) = affine(f, r, e) else {
            return String::new();
        };
        uses_var |= aff.coefs.iter().any(|c| *c != 0);
        match last {
            None => s.push_str(&format!("[{}]", render(r, &aff, 0))),
            Some(l) => s.push_str(&format!("[{}..{}]", render(r, &aff, 0), render(r, &aff, l))),
        }
    }
    if uses_var {
        format!("  at {s}")
    } else {
        String::new()
    }
}

/// Per matrix read outside its bounds: the width needed on each side (from the accesses'
/// reach) and the width the region's border rules give.
fn border_facts(out: &mut String, f: &Function, r: &Region) {
    let mut mats: Vec<MatrixId> = Vec::new();
    for (a, reach) in r.accesses.iter().zip(&r.reach) {
        if let Some(reach) = reach
            && !a.write
            && reach.iter().any(|(b, x)| *b > 0 || *x > 0)
            && !mats.contains(&a.matrix)
        {
            mats.push(a.matrix);
        }
    }
    for m in mats {
        let nd = f.matrices[m].dims.len();
        let mut need = vec![(0u32, 0u32); nd];
        for (a, reach) in r.accesses.iter().zip(&r.reach) {
            if let (Some(reach), false, true) = (reach, a.write, a.matrix == m) {
                for (d, (b, x)) in reach.iter().enumerate() {
                    need[d].0 = need[d].0.max(*b);
                    need[d].1 = need[d].1.max(*x);
                }
            }
        }
        let given = |d: usize, before: bool| -> u32 {
            let mut k = 0;
            loop {
                let mut sels = vec![Sel::Star; nd];
                sels[d] = if before {
                    Sel::Before(k + 1)
                } else {
                    Sel::After(k + 1)
                };
                let defined = r.rules.iter().any(|id| {
                    f.rules[*id]
                        .entries
                        .iter()
                        .any(|e| e.matrix == m && e.sels == sels)
                });
                if !defined {
                    return k;
                }
                k += 1;
            }
        };
        let parts: Vec<String> = (0..nd)
            .map(|d| {
                format!(
                    "dim{d} needs -{}/+{} has -{}/+{}",
                    need[d].0,
                    need[d].1,
                    given(d, true),
                    given(d, false)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "    border {}: {}",
            f.matrices[m].name,
            parts.join(", ")
        );
    }
}

/// The feature analysis' findings: the class, the parallel dimensions and their directions,
/// then per matrix read or written: point or chunk, gather, elements per iteration, the
/// subscripts relative to the index variables (`?` where not affine) and the reuse lengths.
fn features(out: &mut String, f: &Function, r: &Region) {
    use crate::check::relative::{Affine, render};
    let ft = &r.features;
    let var = |s: Option<usize>| Some(r.dims.get(s?)?.as_ref()?.var.as_str());
    let mut dirs = Vec::new();
    if let Some(v) = var(ft.h_slot) {
        dirs.push(format!("horizontal {v}"));
    }
    if let Some(v) = var(ft.v_slot) {
        dirs.push(format!("vertical {v}"));
    }
    let dirs = if dirs.is_empty() {
        String::new()
    } else {
        format!(" ({})", dirs.join(", "))
    };
    let _ = writeln!(
        out,
        "    features: {}, par_dim {}{dirs}",
        ft.class.name(),
        ft.par_dim
    );
    for u in &ft.matrices {
        let mut parts = vec![if u.chunk { "chunk" } else { "point" }.to_string()];
        if u.constant {
            parts.push("constant".into());
        }
        if !u.affine {
            parts.push("gather".into());
        }
        let at: String = u
            .axes
            .iter()
            .map(|a| match a {
                None => "[?]".to_string(),
                Some(a) => {
                    let mut coefs = vec![0; r.dims.len()];
                    if let Some(slot) = a.var {
                        coefs[slot] = a.coef;
                    }
                    let aff = Affine {
                        coefs,
                        offset: a.min,
                    };
                    if a.max == a.min {
                        format!("[{}]", render(r, &aff, 0))
                    } else {
                        format!(
                            "[{}..{}]",
                            render(r, &aff, 0),
                            render(r, &aff, a.max.saturating_sub(a.min))
                        )
                    }
                }
            })
            .collect();
        parts.push(format!(
            "{} element{} at {at}",
            u.elems,
            if u.elems == 1 { "" } else { "s" }
        ));
        if u.h_reuse() {
            parts.push(format!("h-reuse {}", u.h_reuse_len));
        }
        if u.v_reuse() {
            parts.push(format!("v-reuse {}", u.v_reuse_len));
        }
        let _ = writeln!(
            out,
            "      {} {}: {}",
            if u.def { "write" } else { "read " },
            f.matrices[u.matrix].name,
            parts.join(", ")
        );
    }
}

fn body(out: &mut String, c: &Ctx, stmts: &[KStmt], indent: usize) {
    let pad = "  ".repeat(indent);
    for s in stmts {
        match s {
            KStmt::Let(l, e) => {
                let local = &c.region.expect("kernel body in a region").locals[*l];
                let _ = writeln!(out, "{pad}let {}: {} = {}", local.name, local.ty, c.expr(e));
            }
            KStmt::Store(a, e) => {
                let _ = writeln!(out, "{pad}{} = {}", c.access(&c.accesses[*a]), c.expr(e));
            }
            KStmt::If(cond, t, e) => {
                let _ = writeln!(out, "{pad}if {} {{", c.expr(cond));
                body(out, c, t, indent + 1);
                if !e.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    body(out, c, e, indent + 1);
                }
                let _ = writeln!(out, "{pad}}}");
            }
        }
    }
}
