//! Front end, second half: the syntax tree to the IR. Resolves names, binds size symbols, types
//! every expression with C's promotion rules, checks shapes, and splits the function into host
//! steps and parallel regions. Every error is reported and lowering goes on.

mod assign;
mod border;
mod builtins;
mod consts;
mod expr;
mod index;
mod names;
mod regions;
mod repeat;
mod schedule;
mod steps;
mod typing;

use crate::diag::{Diagnostic, Diagnostics, Sp};
use crate::ir::*;
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
    /// Lowering the body of a `parac_repeat`.
    in_repeat: bool,
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
                lens: vec![],
            },
            names: HashMap::new(),
            pending_runs: vec![],
            regions_dropped: false,
            bad_rank: vec![],
            in_repeat: false,
        }
    }

    fn err(&mut self, span: impl Into<Sp>, msg: impl Into<String>) {
        self.diags.push(Diagnostic::new(span, msg));
    }
}
