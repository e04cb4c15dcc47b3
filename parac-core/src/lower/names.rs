//! Function-level names: declarations, parameters (binding size symbols), dimensions, type
//! names, and unknown names reported with a suggestion.

use super::{Cx, Lowerer, Name};
use crate::diag::{Diagnostics, Sp};
use crate::ir::*;
use crate::syntax::ast;

pub(super) fn type_of(diags: &mut Diagnostics, t: &ast::TypeName, element: bool) -> Option<Scalar> {
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

impl Lowerer<'_> {
    /// Declares a function-level name; reports a redefinition.
    pub(super) fn declare(&mut self, name: &proc_macro2::Ident, what: Name) -> bool {
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

    pub(super) fn params(&mut self, f: &ast::Function) {
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

    pub(super) fn dims(&mut self, dims: &[ast::Expr], name: &proc_macro2::Ident) -> Vec<Expr> {
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

    pub(super) fn matrix_name(&mut self, name: &proc_macro2::Ident) -> Option<MatrixId> {
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

    pub(super) fn unknown(&mut self, name: &proc_macro2::Ident) {
        self.unknown_among(name, &[]);
    }

    /// Reports an unknown name, suggesting the closest known value (function-level names but
    /// border rules, and `extra`, e.g. the index variables in scope).
    pub(super) fn unknown_among(&mut self, name: &proc_macro2::Ident, extra: &[String]) {
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
}
