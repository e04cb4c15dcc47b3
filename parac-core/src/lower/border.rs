//! Border rules: explicit rule blocks, and the standard modes (constant, replicate/clamp,
//! reflect, reflect-101, wrap) desugared into the same entries.

use super::{BorderCx, Lowerer};
use crate::diag::Sp;
use crate::ir::*;
use crate::syntax::ast;

impl Lowerer<'_> {
    pub(super) fn border_block(
        &mut self,
        name: &proc_macro2::Ident,
        stmts: &[ast::BorderStmt],
        span: Sp,
    ) -> Option<BorderRule> {
        let errors_before = self.diags.len();
        let mut entries: Vec<BorderEntry> = Vec::new();
        for st in stmts {
            for t in &st.targets {
                let Some(m) = self.matrix_name(&t.matrix) else {
                    continue;
                };
                let Some(sels) = self.target_sels(m, t) else {
                    continue;
                };
                if let Some(prev) = entries.iter().find(|e| e.matrix == m && e.sels == sels) {
                    let _ = prev;
                    self.err(
                        t.span,
                        format!(
                            "`{}` is defined twice in border rule `{name}`",
                            target_text(&self.f.matrices[m].name, &sels)
                        ),
                    );
                    continue;
                }
                let mut b = BorderCx {
                    matrix: m,
                    sels: sels.clone(),
                    accesses: vec![],
                };
                let Some(v) = self.border_value(&st.value, &mut b) else {
                    continue;
                };
                if v.ty.is_block() {
                    self.err(
                        st.value.span,
                        "a border value must be a scalar\nhelp: read one element, e.g. `src[*][0]`",
                    );
                    continue;
                }
                let elem = self.f.matrices[m].elem;
                if !elem.is_float() && v.ty.elem().is_float() {
                    self.err(st.value.span, format!("`{}` holds {elem}, but this border value is f32\nhelp: convert it with `as i32`", self.f.matrices[m].name));
                    continue;
                }
                entries.push(BorderEntry {
                    matrix: m,
                    sels,
                    value: v,
                    accesses: b.accesses,
                    span: t.span.to(st.span),
                });
            }
        }
        Some(BorderRule {
            name: name.to_string(),
            span,
            entries,
            shorthand: None,
            incomplete: self.diags.len() != errors_before,
        })
    }

    fn target_sels(&mut self, m: MatrixId, t: &ast::Target) -> Option<Vec<Sel>> {
        let mat = &self.f.matrices[m];
        let nd = mat.dims.len();
        let mname = mat.name.clone();
        if t.sels.len() != nd {
            self.err(
                t.span,
                format!(
                    "`{mname}` has {nd} dimension{}, but this border target gives {} selector{}",
                    if nd == 1 { "" } else { "s" },
                    t.sels.len(),
                    if t.sels.len() == 1 { "" } else { "s" }
                ),
            );
            return None;
        }
        if t.sels.iter().all(|(s, _)| *s == Sel::Star) {
            self.err(t.span, format!("`{}` selects no position outside the image\nhelp: use `-k` or `+k` in at least one dimension, e.g. `{mname}[*][-1]`", target_text(&mname, &vec![Sel::Star; nd])));
            return None;
        }
        if nd == 3 && t.sels[0].0 != Sel::Star {
            self.err(
                t.sels[0].1,
                "border rules extend rows and columns; the channel selector must be `*`",
            );
            return None;
        }
        Some(t.sels.iter().map(|(s, _)| *s).collect())
    }

    pub(super) fn shorthand(&mut self, sh: &ast::Shorthand) -> Option<BorderRule> {
        const MODES: &str = "constant, replicate (or clamp), reflect, reflect101, wrap";
        let mode = sh.mode.to_string();
        let known = [
            "constant",
            "replicate",
            "clamp",
            "reflect",
            "reflect101",
            "wrap",
        ];
        if !known.contains(&mode.as_str()) {
            self.err(sh.mode.span(), format!("unknown border mode `{mode}`\nhelp: the modes are {MODES}, or write the rule out: `parac_border_rule {} {{ ... }}`", sh.name));
            return None;
        }
        let m = self.matrix_name(&sh.matrix)?;
        let nd = self.f.matrices[m].dims.len();
        let args_span = sh
            .widths
            .last()
            .map_or(Sp::one(sh.matrix.span()), |(_, sp)| {
                Sp::one(sh.matrix.span()).to(*sp)
            });
        if sh.widths.len() != nd {
            let example: String = (0..nd).map(|_| "[1]").collect();
            self.err(args_span, format!("`{}` has {nd} dimension{}: give a width for each, e.g. `{mode}({}{example})` (`[*]` for none)", sh.matrix, if nd == 1 { "" } else { "s" }, sh.matrix));
            return None;
        }
        let mut widths = Vec::new();
        for (d, (w, sp)) in sh.widths.iter().enumerate() {
            match w {
                Some(0) => {
                    self.err(*sp, "a border width must be at least 1 (write `[*]` for no border in this dimension)");
                    return None;
                }
                Some(w) if nd == 3 && d == 0 => {
                    let _ = w;
                    self.err(
                        *sp,
                        "border rules extend rows and columns; the channel width must be `[*]`",
                    );
                    return None;
                }
                Some(w) if *w > 64 => {
                    self.err(*sp, format!("border width {w} is too large (at most 64)"));
                    return None;
                }
                _ => widths.push(*w),
            }
        }
        if widths.iter().all(Option::is_none) {
            self.err(sh.span, "this border rule has no width in any dimension");
            return None;
        }
        let value = match (&sh.value, mode.as_str()) {
            (Some(v), "constant") => {
                let mut b = BorderCx {
                    matrix: m,
                    sels: vec![Sel::Star; nd],
                    accesses: vec![],
                };
                let v = self.border_value(v, &mut b)?;
                if !b.accesses.is_empty() || v.ty.is_block() {
                    self.err(v.span, "the value of a `constant` border must be a scalar that does not read the matrix");
                    return None;
                }
                Some(v)
            }
            (None, "constant") => {
                self.err(
                    sh.span,
                    format!(
                        "`constant` needs the value: `constant({}{}, 0)`",
                        sh.matrix, ".."
                    ),
                );
                return None;
            }
            (Some(v), _) => {
                self.err(
                    v.span,
                    format!("`{mode}` takes no value; only `constant` does"),
                );
                return None;
            }
            (None, _) => None,
        };
        let dims = self.f.matrices[m].dims.clone();
        let span = sh.span;
        // Index of out-of-image position `sel` in dimension `d`, under the mode.
        let index = |sel: Sel, d: usize| -> Expr {
            let size = || dims[d].clone();
            let k = |v: i128| Expr::int(v, span);
            let sub = |a: Expr, b: Expr| Expr {
                kind: ExprKind::Binary(BinOp::Sub, Box::new(a), Box::new(b)),
                ty: Type::Scalar(Scalar::I32),
                span,
            };
            match (mode.as_str(), sel) {
                ("replicate" | "clamp", Sel::Before(_)) => k(0),
                ("replicate" | "clamp", Sel::After(_)) => sub(size(), k(1)),
                ("reflect", Sel::Before(j)) => k(j as i128 - 1),
                ("reflect", Sel::After(j)) => sub(size(), k(j as i128)),
                ("reflect101", Sel::Before(j)) => k(j as i128),
                ("reflect101", Sel::After(j)) => sub(size(), k(j as i128 + 1)),
                ("wrap", Sel::Before(j)) => sub(size(), k(j as i128)),
                ("wrap", Sel::After(j)) => k(j as i128 - 1),
                _ => unreachable!("stars are not mapped"),
            }
        };
        let elem = self.f.matrices[m].elem;
        let mk = |sels: Vec<Sel>| -> BorderEntry {
            match &value {
                Some(v) => BorderEntry {
                    matrix: m,
                    sels,
                    value: v.clone(),
                    accesses: vec![],
                    span,
                },
                None => {
                    let subs = sels
                        .iter()
                        .enumerate()
                        .map(|(d, s)| {
                            if *s == Sel::Star {
                                Sub::Star
                            } else {
                                Sub::Point(index(*s, d))
                            }
                        })
                        .collect();
                    let access = Access {
                        matrix: m,
                        write: false,
                        subs,
                        span,
                    };
                    BorderEntry {
                        matrix: m,
                        sels,
                        value: Expr {
                            kind: ExprKind::Load(0),
                            ty: Type::Scalar(elem),
                            span,
                        },
                        accesses: vec![access],
                        span,
                    }
                }
            }
        };
        let mut entries = Vec::new();
        let sides = |w: u32| (1..=w).flat_map(|k| [Sel::Before(k), Sel::After(k)]);
        for (d, w) in widths.iter().enumerate() {
            if let Some(w) = w {
                for s in sides(*w) {
                    let mut sels = vec![Sel::Star; nd];
                    sels[d] = s;
                    entries.push(mk(sels));
                }
            }
        }
        // Corners, where two dimensions have a border.
        if let (true, Some(wr), Some(wc)) = (nd >= 2, widths[nd.saturating_sub(2)], widths[nd - 1])
        {
            for r in sides(wr) {
                for c in sides(wc) {
                    let mut sels = vec![Sel::Star; nd];
                    sels[nd - 2] = r;
                    sels[nd - 1] = c;
                    entries.push(mk(sels));
                }
            }
        }
        let ws: String = widths
            .iter()
            .map(|w| w.map_or("[*]".to_string(), |w| format!("[{w}]")))
            .collect();
        let how = match mode.as_str() {
            "constant" => BorderMode::Constant(value.clone().expect("checked above")),
            "replicate" | "clamp" => BorderMode::Replicate,
            "reflect" => BorderMode::Reflect,
            "reflect101" => BorderMode::Reflect101,
            _ => BorderMode::Wrap,
        };
        Some(BorderRule {
            name: sh.name.to_string(),
            span,
            entries,
            shorthand: Some(Shorthand {
                text: format!("{mode}({}{ws})", sh.matrix),
                matrix: m,
                mode: how,
                widths,
            }),
            incomplete: false,
        })
    }
}

/// `src[*][-2]`.
pub fn target_text(matrix: &str, sels: &[Sel]) -> String {
    let mut s = matrix.to_string();
    for sel in sels {
        s.push_str(&match sel {
            Sel::Star => "[*]".to_string(),
            Sel::Before(k) => format!("[-{k}]"),
            Sel::After(k) => format!("[+{k}]"),
        });
    }
    s
}
