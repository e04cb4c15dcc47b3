//! Front end, second half: the syntax tree to the IR. Resolves names, binds size symbols, types
//! every expression with C's promotion rules, checks shapes, and splits the function into host
//! steps and parallel regions. Every error is reported and lowering goes on.

mod border;
mod builtins;
mod consts;
mod expr;
mod index;
mod typing;

use crate::diag::{Diagnostic, Diagnostics, Sp};
use crate::ir::{self, *};
use crate::syntax::ast;
use std::collections::HashMap;

pub use border::target_text;
pub use consts::const_int;

/// A name at function level.
#[derive(Clone, Copy, Debug)]
enum Name {
    Size(SizeId),
    Matrix(MatrixId),
    Host(ScalarId),
    Rule(RuleId),
}

/// A lowered function and how complete it is.
#[derive(Debug)]
pub struct Lowered {
    /// The IR (without the statements whose lowering failed).
    pub function: Function,
    /// Lowering reported an error.
    pub failed: bool,
    /// An iterator was dropped entirely (its header failed), so its writes are unknown.
    pub regions_dropped: bool,
}

/// Lowers a whole program, function by function.
pub fn lower_program(p: &ast::Program, diags: &mut Diagnostics) -> Vec<Lowered> {
    let mut module = Vec::new();
    let mut seen: HashMap<String, Sp> = HashMap::new();
    for f in &p.functions {
        let name = f.name.to_string();
        if seen.insert(name.clone(), Sp::one(f.name.span())).is_some() {
            diags.error(
                f.name.span(),
                format!("pipeline function `{name}` is defined twice"),
            );
            continue;
        }
        let before = diags.len();
        let mut l = Lowerer::new(diags, f);
        l.run(f);
        let (function, regions_dropped) = (l.f, l.regions_dropped);
        module.push(Lowered {
            function,
            failed: diags.len() != before,
            regions_dropped,
        });
    }
    module
}

/// Kernel scope: the region under construction, its index variables and local scopes.
struct Kernel {
    region: Region,
    vars: HashMap<String, usize>,
    scopes: Vec<HashMap<String, LocalId>>,
}

/// Border scope: the target being defined and the accesses of its value.
struct BorderCx {
    matrix: MatrixId,
    sels: Vec<Sel>,
    accesses: Vec<Access>,
}

/// What an expression may refer to.
enum Cx<'a> {
    /// Host code; `global` allows whole-matrix operators (a host `let`).
    Host { global: bool },
    /// A matrix dimension: sizes and constants only.
    Dim,
    /// An iterator body.
    Kernel(&'a mut Kernel),
    /// A border value.
    Border(&'a mut BorderCx),
}

struct Lowerer<'d> {
    diags: &'d mut Diagnostics,
    f: Function,
    names: HashMap<String, Name>,
    pending_runs: Vec<RegionId>,
    regions_dropped: bool,
    /// Matrices declared with more than 3 dimensions (kept with 3, reported once).
    bad_rank: Vec<String>,
}

fn type_of(diags: &mut Diagnostics, t: &ast::TypeName, element: bool) -> Option<Scalar> {
    match Scalar::from_name(&t.name) {
        Some(s) if !element || s.is_element() => Some(s),
        Some(s) => {
            diags.error(
                t.span,
                format!("`{s}` cannot be a matrix element type\nhelp: matrices hold u8, i8, u16, i16, u32, i32 or f32"),
            );
            None
        }
        None => {
            let c_like = match t.name.as_str() {
                "uint8" | "uint8_t" | "uchar" | "byte" => Some("u8"),
                "int8" | "int8_t" | "char" => Some("i8"),
                "uint16" | "uint16_t" | "ushort" => Some("u16"),
                "int16" | "int16_t" | "short" => Some("i16"),
                "uint" | "uint32" | "uint32_t" => Some("u32"),
                "int" | "int32" | "int32_t" => Some("i32"),
                "long" | "int64" | "int64_t" | "isize" if !element => Some("i64"),
                "ulong" | "uint64" | "uint64_t" | "usize" if !element => Some("u64"),
                "float" | "f64" | "double" => Some("f32"),
                _ => None,
            };
            let list = if element {
                "u8, i8, u16, i16, u32, i32 and f32"
            } else {
                "u8, i8, u16, i16, u32, i32, i64, u64, f32 and bool"
            };
            let hint = match c_like {
                Some("f32") if t.name != "float" => {
                    "ParaC computes in f32 (OpenCL devices need not support doubles): use `f32`"
                        .to_string()
                }
                Some(r) => format!("write `{r}`; the types are {list}"),
                None => format!(
                    "the {} types are {list}",
                    if element { "matrix element" } else { "scalar" }
                ),
            };
            diags.error(t.span, format!("unknown type `{}`\nhelp: {hint}", t.name));
            None
        }
    }
}

impl<'d> Lowerer<'d> {
    fn new(diags: &'d mut Diagnostics, f: &ast::Function) -> Self {
        Lowerer {
            diags,
            f: Function {
                name: f.name.to_string(),
                span: f.span,
                sizes: vec![],
                matrices: vec![],
                scalars: vec![],
                rules: vec![],
                regions: vec![],
                steps: vec![],
                ret: None,
                params: vec![],
            },
            names: HashMap::new(),
            pending_runs: vec![],
            regions_dropped: false,
            bad_rank: vec![],
        }
    }

    fn err(&mut self, span: impl Into<Sp>, msg: impl Into<String>) {
        self.diags.push(Diagnostic::new(span, msg));
    }

    /// Declares a function-level name; reports a redefinition.
    fn declare(&mut self, name: &proc_macro2::Ident, what: Name) -> bool {
        let s = name.to_string();
        if let Some(prev) = self.names.get(&s) {
            // Host lets may shadow host lets, like Rust's `let`.
            if !(matches!(prev, Name::Host(_)) && matches!(what, Name::Host(_))) {
                let kind = match prev {
                    Name::Size(_) => "a size symbol",
                    Name::Matrix(_) => "a matrix",
                    Name::Host(_) => "a scalar",
                    Name::Rule(_) => "a border rule",
                };
                self.err(
                    name.span(),
                    format!("`{s}` is already defined as {kind}\nhelp: pick another name"),
                );
                return false;
            }
        }
        self.names.insert(s, what);
        true
    }

    fn run(&mut self, f: &ast::Function) {
        self.params(f);
        if let Some(t) = &f.ret {
            self.f.ret = type_of(self.diags, t, false);
        }
        let n = f.body.len();
        let mut returned = false;
        for (i, s) in f.body.iter().enumerate() {
            self.fn_stmt(s, i + 1 == n, &mut returned);
        }
        if self.f.ret.is_some() && !returned {
            self.err(
                f.ret.as_ref().map_or(f.span, |t| t.span),
                format!(
                    "`{}` declares a return type but never returns a value\nhelp: end the function with `return expr;`",
                    self.f.name
                ),
            );
        }
    }

    fn params(&mut self, f: &ast::Function) {
        // Bind size symbols first (a bare identifier as a whole dimension), then lower dims.
        let mut pending = Vec::new();
        for p in &f.params {
            match &p.kind {
                ast::ParamKind::Matrix {
                    mutable,
                    elem,
                    dims,
                } => {
                    let id = self.f.matrices.len();
                    for (d, e) in dims.iter().enumerate() {
                        if let ast::ExprKind::Name(n) = &e.kind {
                            let s = n.to_string();
                            if !self.names.contains_key(&s) {
                                self.names.insert(s.clone(), Name::Size(self.f.sizes.len()));
                                self.f.sizes.push(SizeSym {
                                    name: s,
                                    bound_by: (id, d),
                                });
                            }
                        }
                    }
                    let elem_ty = type_of(self.diags, elem, true).unwrap_or(Scalar::U8);
                    self.f.matrices.push(Matrix {
                        name: p.name.to_string(),
                        elem: elem_ty,
                        dims: vec![],
                        kind: if *mutable {
                            MatrixKind::Output
                        } else {
                            MatrixKind::Input
                        },
                        span: Sp::one(p.name.span()),
                    });
                    self.f.params.push(ParamRef::Matrix(id));
                    pending.push((id, &p.name, dims));
                }
                ast::ParamKind::Scalar(t) => {
                    let ty = type_of(self.diags, t, false).unwrap_or(Scalar::I32);
                    let id = self.f.scalars.len();
                    self.f.scalars.push(HostScalar {
                        name: p.name.to_string(),
                        ty,
                        kind: HostScalarKind::Param,
                    });
                    self.f.params.push(ParamRef::Scalar(id));
                    self.declare(&p.name, Name::Host(id));
                }
            }
        }
        for (id, name, dims) in pending {
            if !self.declare(name, Name::Matrix(id)) {
                continue;
            }
            let d = self.dims(dims, name);
            self.f.matrices[id].dims = d;
        }
    }

    fn dims(&mut self, dims: &[ast::Expr], name: &proc_macro2::Ident) -> Vec<Expr> {
        if dims.len() > 3 {
            self.bad_rank.push(name.to_string());
            self.err(
                dims[3].span,
                format!(
                    "`{name}` has {} dimensions; ParaC matrices have at most 3 ([channel][row][column])",
                    dims.len()
                ),
            );
        }
        // At most 3 dimensions are kept; a dimension with an error becomes 1, so the matrix
        // keeps its declared rank and its uses raise no cascade.
        dims.iter()
            .take(3)
            .map(|e| {
                self.expr(e, &mut Cx::Dim)
                    .unwrap_or_else(|| Expr::int(1, e.span))
            })
            .collect()
    }

    fn fn_stmt(&mut self, s: &ast::FnStmt, last: bool, returned: &mut bool) {
        match s {
            ast::FnStmt::Const {
                name,
                elem,
                dims,
                init,
                span,
            } => {
                // After an error the constant is still declared (zeros), so its uses raise no
                // "cannot find" cascade; the function is rejected anyway.
                let elem = type_of(self.diags, elem, true);
                let d = self.dims(dims, name);
                let shape: Option<Vec<i64>> = dims.iter().map(consts::const_int).collect();
                // Constant matrices are small (filters, weights): at most 4096 values.
                let shape = shape.filter(|s| {
                    s.iter().all(|d| *d > 0)
                        && s.iter()
                            .try_fold(1i64, |a, d| a.checked_mul(*d))
                            .is_some_and(|t| t <= 4096)
                });
                let values = match (elem, shape) {
                    (Some(elem), Some(shape)) => {
                        let total = shape.iter().product::<i64>() as usize;
                        self.const_values(name, elem, &shape, init)
                            .unwrap_or_else(|| vec![0.0; total])
                    }
                    (_, None) => {
                        self.err(*span, format!("constant matrix `{name}` needs constant, positive dimensions such as `[1][5]`, with at most 4096 values"));
                        vec![]
                    }
                    (None, Some(shape)) => vec![0.0; shape.iter().product::<i64>() as usize],
                };
                let id = self.f.matrices.len();
                self.f.matrices.push(Matrix {
                    name: name.to_string(),
                    elem: elem.unwrap_or(Scalar::I32),
                    dims: d,
                    kind: MatrixKind::Const(values),
                    span: *span,
                });
                self.declare(name, Name::Matrix(id));
            }
            ast::FnStmt::Local {
                name,
                elem,
                dims,
                span,
            } => {
                let elem = type_of(self.diags, elem, true).unwrap_or(Scalar::I32);
                let d = self.dims(dims, name);
                let id = self.f.matrices.len();
                self.f.matrices.push(Matrix {
                    name: name.to_string(),
                    elem,
                    dims: d,
                    kind: MatrixKind::Local,
                    span: *span,
                });
                self.declare(name, Name::Matrix(id));
            }
            ast::FnStmt::Let(l) => self.host_let(l),
            ast::FnStmt::BorderBlock { name, stmts, span } => {
                let rule = self.border_block(name, stmts, *span);
                self.add_rule(name, *span, rule);
            }
            ast::FnStmt::BorderShorthand(sh) => {
                let rule = self.shorthand(sh);
                self.add_rule(&sh.name, sh.span, rule);
            }
            ast::FnStmt::Iterator(it) => self.iterator(it),
            ast::FnStmt::Return(e, span) => {
                *returned = true;
                let Some(ret) = self.f.ret else {
                    self.err(
                        *span,
                        format!(
                            "`{}` has no return type\nhelp: declare it, e.g. `fn {}(...) -> i64`",
                            self.f.name, self.f.name
                        ),
                    );
                    return;
                };
                if !last {
                    self.err(*span, "`return` must be the last statement of the function");
                }
                if let Some(v) = self.expr(e, &mut Cx::Host { global: true }) {
                    if let Some(v) = self.scalar(v, "the returned value") {
                        let v = typing::convert(v, ret);
                        self.flush_runs();
                        self.f.steps.push(HostStep::Return(v));
                    }
                }
            }
            ast::FnStmt::Misplaced(st) => {
                let span = match st {
                    ast::Stmt::Let(l) => l.span,
                    ast::Stmt::Assign { span, .. }
                    | ast::Stmt::If { span, .. }
                    | ast::Stmt::Border(span) => *span,
                    ast::Stmt::Iterator(it) => it.span,
                };
                self.err(
                    span,
                    "this statement must be inside a `parac_iterator`: at function level only declarations, host `let`s, border rules, iterators and `return` are allowed\nhelp: wrap it, e.g. `parac_iterator it(0:M:1; 0:N:1) { ... }`",
                );
            }
        }
    }

    fn const_values(
        &mut self,
        name: &proc_macro2::Ident,
        elem: Scalar,
        shape: &[i64],
        init: &ast::ArrayLit,
    ) -> Option<Vec<f64>> {
        // Flatten to the declared shape; a 1-D list fills a [1][n] or [n][1] matrix too (the
        // paper's `{1,4,6,4,1}` style).
        let total: i64 = shape.iter().product();
        let mut flat = Vec::new();
        let mut nested_ok = true;
        fn walk(
            a: &ast::ArrayLit,
            depth: usize,
            shape: &[i64],
            out: &mut Vec<(f64, bool, Sp)>,
            ok: &mut bool,
            bad: &mut Option<Sp>,
        ) {
            match a {
                ast::ArrayLit::Elem(e) => match consts::const_num(e) {
                    Some((v, f)) => out.push((v, f, e.span)),
                    None => *bad = Some(e.span),
                },
                ast::ArrayLit::List(items, _) => {
                    if depth < shape.len() && items.len() as i64 != shape[depth] {
                        *ok = false;
                    }
                    if depth >= shape.len() {
                        *ok = false;
                    }
                    for it in items {
                        walk(it, depth + 1, shape, out, ok, bad);
                    }
                }
            }
        }
        let mut bad = None;
        walk(init, 0, shape, &mut flat, &mut nested_ok, &mut bad);
        if let Some(sp) = bad {
            self.err(sp, "constant matrix elements must be constant expressions (literals, arithmetic, `sqrt`, `exp`)");
            return None;
        }
        let is_flat_list = matches!(init, ast::ArrayLit::List(items, _) if items.iter().all(|i| matches!(i, ast::ArrayLit::Elem(_))));
        if !(nested_ok || is_flat_list && flat.len() as i64 == total) || flat.len() as i64 != total
        {
            let sp = match init {
                ast::ArrayLit::List(_, sp) => *sp,
                ast::ArrayLit::Elem(e) => e.span,
            };
            let dims: String = shape.iter().map(|d| format!("[{d}]")).collect();
            self.err(sp, format!("the initializer of `{name}` has {} values, but `{name}` is {elem}{dims} ({total} values)\nhelp: write one nested list per dimension, e.g. `[[1, 2], [3, 4]]` for [2][2]", flat.len()));
            return None;
        }
        let mut out = Vec::with_capacity(flat.len());
        for (v, is_float, sp) in flat {
            if let Some((lo, hi)) = elem.range() {
                if is_float || v.fract() != 0.0 {
                    self.err(sp, format!("`{name}` holds {elem}, but this value is a float\nhelp: declare `{name}` as f32, or write an integer"));
                    return None;
                }
                if v < lo as f64 || v > hi as f64 {
                    self.err(
                        sp,
                        format!(
                            "{v} does not fit in {elem} (the element type of `{name}`)\nhelp: {}",
                            if v < 0.0 {
                                "declare the constant with a signed type, e.g. `i8` or `i16`"
                            } else {
                                "declare the constant with a wider type, e.g. `u16` or `i32`"
                            }
                        ),
                    );
                    return None;
                }
            }
            out.push(v);
        }
        Some(out)
    }

    /// Declares a rule; a rule whose lowering failed is still declared (marked incomplete) so
    /// the iterators that use it raise no cascade.
    fn add_rule(&mut self, name: &proc_macro2::Ident, span: Sp, rule: Option<BorderRule>) {
        let rule = rule.unwrap_or_else(|| BorderRule {
            name: name.to_string(),
            span,
            entries: vec![],
            shorthand: None,
            incomplete: true,
        });
        let id = self.f.rules.len();
        self.f.rules.push(rule);
        self.declare(name, Name::Rule(id));
    }

    fn flush_runs(&mut self) {
        for r in std::mem::take(&mut self.pending_runs) {
            self.f.steps.push(HostStep::Run(r));
        }
    }

    fn scalar(&mut self, e: Expr, what: &str) -> Option<Expr> {
        if e.ty.is_block() {
            self.err(e.span, format!("{what} must be a scalar, but this is a matrix block of type {}\nhelp: reduce it, e.g. with `parac_matrix_sum(..)`", e.ty));
            None
        } else {
            Some(e)
        }
    }

    /// The value of each name a `let` binds: one, or the items of a tuple of the same arity.
    fn let_values<'l>(&mut self, l: &'l ast::LetStmt) -> Option<Vec<&'l ast::Expr>> {
        match (&l.value.kind, l.tuple) {
            (ast::ExprKind::Tuple(items), true) if items.len() == l.names.len() => {
                Some(items.iter().collect())
            }
            (_, false) => Some(vec![&l.value]),
            _ => {
                let n = l.names.len();
                self.err(l.value.span, format!("the pattern binds {n} names; the value must be a tuple of {n} values, e.g. `({})`", vec!["..."; n].join(", ")));
                None
            }
        }
    }

    fn host_let(&mut self, l: &ast::LetStmt) {
        let ty = l.ty.as_ref().and_then(|t| type_of(self.diags, t, false));
        let Some(values) = self.let_values(l) else {
            return;
        };
        for (name, v) in l.names.iter().zip(values) {
            let e = self.expr(v, &mut Cx::Host { global: true });
            let Some(mut e) = e.and_then(|e| self.scalar(e, &format!("host value `{name}`")))
            else {
                // Keep the name bound so that later uses raise no cascade.
                let id = self.f.scalars.len();
                self.f.scalars.push(HostScalar {
                    name: name.to_string(),
                    ty: ty.unwrap_or(Scalar::I32),
                    kind: HostScalarKind::Let,
                });
                self.declare(name, Name::Host(id));
                continue;
            };
            if let Some(t) = ty {
                e = typing::convert(e, t);
            }
            let id = self.f.scalars.len();
            self.f.scalars.push(HostScalar {
                name: name.to_string(),
                ty: e.ty.elem(),
                kind: HostScalarKind::Let,
            });
            self.flush_runs();
            self.f.steps.push(HostStep::Let(id, e));
            self.declare(name, Name::Host(id));
        }
    }

    fn iterator(&mut self, it: &ast::IterStmt) {
        let name = it.name.to_string();
        if it.dims.len() > 3 {
            self.err(
                it.dims_span,
                format!(
                    "iterator `{name}` has {} dimensions; at most 3 are supported",
                    it.dims.len()
                ),
            );
            return;
        }
        if it.dims.iter().all(|d| d.is_none()) {
            self.err(it.dims_span, format!("iterator `{name}` has no dimension\nhelp: give at least one `lower:upper:step`, e.g. `(0:M:1; 0:N:1)`"));
            return;
        }
        let mut k = Kernel {
            region: Region {
                name: name.clone(),
                span: it.span,
                kind: RegionKind::Iterator,
                dims: vec![],
                body: vec![],
                accesses: vec![],
                locals: vec![],
                rules: vec![],
                reach: vec![],
                features: Features::default(),
            },
            vars: HashMap::new(),
            scopes: vec![HashMap::new()],
        };
        let mut ok = true;
        for (slot, d) in it.dims.iter().enumerate() {
            let Some(d) = d else {
                k.region.dims.push(None);
                continue;
            };
            let var = d.var.as_ref().map_or_else(
                || format!("{name}{}", ["x", "y", "z"][slot]),
                |v| v.to_string(),
            );
            let lo = self
                .expr(&d.lo, &mut Cx::Host { global: false })
                .and_then(|e| self.int(e, "an iteration bound"));
            let hi = self
                .expr(&d.hi, &mut Cx::Host { global: false })
                .and_then(|e| self.int(e, "an iteration bound"));
            let step = match &d.step {
                None => Some(1),
                Some(s) => match const_int(s) {
                    Some(v) if v > 0 => Some(v),
                    Some(v) => {
                        self.err(
                            s.span,
                            format!("the step of an iterator must be positive, not {v}"),
                        );
                        None
                    }
                    None => {
                        self.err(s.span, "the step of an iterator must be a constant (the compiler divides the global size by it)\nhelp: write an integer literal such as `1` or `4`");
                        None
                    }
                },
            };
            if k.vars.insert(var.clone(), slot).is_some() {
                self.err(
                    d.span,
                    format!("index variable `{var}` is declared twice in `{name}`"),
                );
            }
            match (lo, hi, step) {
                (Some(lo), Some(hi), Some(step)) => k.region.dims.push(Some(IterDim {
                    var,
                    lo,
                    hi,
                    step,
                    span: d.span,
                })),
                _ => ok = false,
            }
        }
        for r in &it.rules {
            match self.names.get(&r.to_string()) {
                Some(Name::Rule(id)) => k.region.rules.push(*id),
                _ => {
                    self.err(r.span(), format!("no border rule named `{r}` is defined before this iterator\nhelp: define it first with `parac_border_rule {r} {{ ... }}`"));
                }
            }
        }
        let body = self.block(&it.body, &mut k);
        k.region.body = body;
        if ok {
            let id = self.f.regions.len();
            self.f.regions.push(k.region);
            self.flush_runs();
            self.f.steps.push(HostStep::Run(id));
        } else {
            self.regions_dropped = true;
        }
    }

    fn block(&mut self, stmts: &[ast::Stmt], k: &mut Kernel) -> Vec<KStmt> {
        let mut out = Vec::new();
        for s in stmts {
            self.stmt(s, k, &mut out);
        }
        out
    }

    fn new_local(k: &mut Kernel, name: &str, ty: Type) -> LocalId {
        let id = k.region.locals.len();
        k.region.locals.push(ir::Local {
            name: name.to_string(),
            ty,
        });
        k.scopes
            .last_mut()
            .expect("a scope")
            .insert(name.to_string(), id);
        id
    }

    fn stmt(&mut self, s: &ast::Stmt, k: &mut Kernel, out: &mut Vec<KStmt>) {
        match s {
            ast::Stmt::Let(l) => {
                let ty = l.ty.as_ref().and_then(|t| type_of(self.diags, t, false));
                let Some(values) = self.let_values(l) else {
                    return;
                };
                let mut lowered = Vec::new();
                for v in values {
                    lowered.push(self.expr(v, &mut Cx::Kernel(k)));
                }
                for (name, v) in l.names.iter().zip(lowered) {
                    // After an error the name is still bound (with its declared type, or i32),
                    // so its later uses raise no "cannot find" cascade.
                    let fallback = Type::Scalar(ty.unwrap_or(Scalar::I32));
                    let Some(mut v) = v else {
                        Self::new_local(k, &name.to_string(), fallback);
                        continue;
                    };
                    if let Some(t) = ty {
                        if v.ty.is_block() {
                            self.err(l.value.span, format!("a matrix block ({}) cannot be stored into the scalar `{name}: {t}`\nhelp: reduce it (e.g. `parac_matrix_sum(..)`), or drop the type to keep a block", v.ty));
                            Self::new_local(k, &name.to_string(), fallback);
                            continue;
                        }
                        v = typing::convert(v, t);
                    }
                    let id = Self::new_local(k, &name.to_string(), v.ty);
                    out.push(KStmt::Let(id, v));
                }
            }
            ast::Stmt::Assign {
                targets,
                op,
                value,
                span,
            } => self.assign(targets, *op, value, *span, k, out),
            ast::Stmt::If {
                cond, then, els, ..
            } => {
                let c = self
                    .expr(cond, &mut Cx::Kernel(k))
                    .and_then(|c| self.scalar(c, "an `if` condition"));
                k.scopes.push(HashMap::new());
                let t = self.block(then, k);
                k.scopes.pop();
                k.scopes.push(HashMap::new());
                let e = els.as_ref().map(|e| self.block(e, k)).unwrap_or_default();
                k.scopes.pop();
                if let Some(c) = c {
                    out.push(KStmt::If(typing::truth(c), t, e));
                }
            }
            ast::Stmt::Iterator(inner) => {
                self.err(inner.span, format!("iterators do not nest: `{}` is inside `{}`\nhelp: an iterator already runs every point in parallel; move `{}` after `{}`, or add a dimension to `{}` (up to 3)", inner.name, k.region.name, inner.name, k.region.name, k.region.name));
            }
            ast::Stmt::Border(span) => {
                self.err(*span, "border rules are declared at function level, before the iterator that uses them");
            }
        }
    }

    /// Resolves one assignment target into a write access (recorded even if the value later
    /// fails, so the data-flow check still sees the write).
    fn target(&mut self, t: &ast::Expr, k: &mut Kernel) -> Option<(AccessId, Type, Scalar)> {
        let ast::ExprKind::Index(name, subs) = &t.kind else {
            let what = match &t.kind {
                ast::ExprKind::Name(n)
                    if k.scopes.iter().any(|s| s.contains_key(&n.to_string())) =>
                {
                    format!(
                        "`{n}` is a `let` value, and those cannot be assigned\nhelp: bind a new value with `let {n} = ...;`"
                    )
                }
                ast::ExprKind::Name(n) => format!(
                    "cannot assign to `{n}` as a whole\nhelp: assign its elements, e.g. `{n}[itx][ity] = ...`"
                ),
                _ => "only matrix elements and windows can be assigned, e.g. `dst[itx][ity] = ...`"
                    .to_string(),
            };
            self.err(t.span, what);
            return None;
        };
        let m = self.matrix_name(name)?;
        let mat = &self.f.matrices[m];
        match mat.kind {
            MatrixKind::Input => {
                let msg = format!(
                    "cannot write to `{name}`: it is an input (`&{}`)\nhelp: declare it `&mut` to make it an output, or write into a local matrix (`let tmp: {}[..];`)",
                    mat.elem, mat.elem
                );
                self.err(t.span, msg);
                return None;
            }
            MatrixKind::Const(_) => {
                self.err(t.span, format!("cannot write to `{name}`: it is a constant matrix\nhelp: write into a local matrix (`let tmp: {}[..];`) or an output (`&mut`)", mat.elem));
                return None;
            }
            _ => {}
        }
        let elem = mat.elem;
        let target = self.index(name, m, subs, t.span, true, &mut Cx::Kernel(k))?;
        let (ExprKind::Load(aid) | ExprKind::Block(aid)) = target.kind else {
            return None;
        };
        Some((aid, target.ty, elem))
    }

    fn assign(
        &mut self,
        targets: &[ast::Expr],
        op: Option<ast::BinOp>,
        value: &ast::Expr,
        _span: Sp,
        k: &mut Kernel,
        out: &mut Vec<KStmt>,
    ) {
        let resolved: Vec<_> = targets.iter().map(|t| self.target(t, k)).collect();
        let Some(mut v) = self.expr(value, &mut Cx::Kernel(k)) else {
            return;
        };
        if resolved.iter().any(Option::is_none) {
            return;
        }
        // C semantics of `a = b = e`: b gets (Tb)e, a gets (Ta)(Tb)e.
        for (i, (t, r)) in targets.iter().zip(resolved).enumerate().rev() {
            let (aid, tty, elem) = r.expect("checked above");
            if let Some(op) = op {
                // `a[i] += e` reads a[i] too.
                let mut read = k.region.accesses[aid].clone();
                read.write = false;
                let rid = k.region.accesses.len();
                k.region.accesses.push(read);
                let cur = Expr {
                    kind: if tty.is_block() {
                        ExprKind::Block(rid)
                    } else {
                        ExprKind::Load(rid)
                    },
                    ty: tty,
                    span: t.span,
                };
                let Some(nv) = self.binary(op, cur, v.clone(), value.span) else {
                    return;
                };
                v = nv;
            }
            match (tty, v.ty) {
                (Type::Scalar(_), Type::Block { .. }) => {
                    self.err(value.span, format!("a matrix block ({}) cannot be stored into the single element `{}`\nhelp: reduce it (e.g. `parac_matrix_sum(..)`) or assign to a window of the same shape", v.ty, expr::show(t)));
                    return;
                }
                (
                    Type::Block { rows, cols, .. },
                    Type::Block {
                        rows: r2, cols: c2, ..
                    },
                ) if (rows, cols) != (r2, c2) => {
                    self.err(value.span, format!("shape mismatch: the window `{}` is {rows}x{cols} but the value is {r2}x{c2}", expr::show(t)));
                    return;
                }
                _ => {}
            }
            let stored = typing::convert(v.clone(), elem);
            if i == 0 {
                out.push(KStmt::Store(aid, stored));
            } else {
                // Keep the converted value for the next target to the left.
                let tmp = format!("__chain{}", k.region.locals.len());
                let id = Self::new_local(k, &tmp, stored.ty);
                let sp = stored.span;
                out.push(KStmt::Let(id, stored));
                let l = Expr {
                    kind: ExprKind::Local(id),
                    ty: k.region.locals[id].ty,
                    span: sp,
                };
                out.push(KStmt::Store(aid, l.clone()));
                v = l;
            }
        }
    }

    fn matrix_name(&mut self, name: &proc_macro2::Ident) -> Option<MatrixId> {
        match self.names.get(&name.to_string()) {
            Some(Name::Matrix(m)) => Some(*m),
            Some(_) => {
                self.err(
                    name.span(),
                    format!("`{name}` is not a matrix, so it cannot be indexed"),
                );
                None
            }
            None => {
                self.unknown(name);
                None
            }
        }
    }

    fn unknown(&mut self, name: &proc_macro2::Ident) {
        self.unknown_among(name, &[]);
    }

    /// Reports an unknown name, suggesting the closest known value (function-level names but
    /// border rules, and `extra`, e.g. the index variables in scope).
    fn unknown_among(&mut self, name: &proc_macro2::Ident, extra: &[String]) {
        let s = name.to_string();
        let mut candidates: Vec<&str> = self
            .names
            .iter()
            .filter(|(_, v)| !matches!(v, Name::Rule(_)))
            .map(|(k, _)| k.as_str())
            .chain(extra.iter().map(String::as_str))
            .collect();
        candidates.sort_unstable();
        let best = candidates
            .into_iter()
            .map(|k| (crate::util::edit_distance(k, &s), k))
            .filter(|(d, _)| *d <= 2 && *d < s.len())
            .min();
        let help = match best {
            Some((_, k)) => format!("\nhelp: a name with a similar spelling exists: `{k}`"),
            None => String::new(),
        };
        self.err(
            name.span(),
            format!("cannot find `{s}` in this pipeline{help}"),
        );
    }

    fn int(&mut self, e: Expr, what: &str) -> Option<Expr> {
        match e.ty {
            Type::Scalar(s) if s.is_int() => Some(e),
            Type::Scalar(Scalar::Bool) => Some(typing::convert(e, Scalar::I32)),
            t => {
                self.err(
                    e.span,
                    format!(
                        "{what} must be an integer, but this is {t}\nhelp: convert it with `as i32`"
                    ),
                );
                None
            }
        }
    }
}
