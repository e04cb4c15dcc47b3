//! Border rules: the bordered-load helpers a kernel calls (index maps where the rules allow,
//! else one branch per entry), and the interior test of bordered reads.

use super::*;

/// Defines, before the kernel `kname` (the last one in `out`), the bordered-load functions of
/// region `rid` that it calls and that `out` does not define yet: one per (matrix, type).
pub(super) fn border_helpers(out: &mut String, f: &Function, rid: RegionId, kname: &str) {
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
pub(super) fn has_rule(f: &Function, r: &Region, m: MatrixId) -> bool {
    r.rules
        .iter()
        .any(|id| f.rules[*id].entries.iter().any(|e| e.matrix == m))
}

/// Whether access `a` of `r` is a bordered read: a read of a matrix some rule of the region
/// extends.
pub(super) fn bordered(f: &Function, r: &Region, a: AccessId) -> bool {
    let acc = &r.accesses[a];
    !acc.write && has_rule(f, r, acc.matrix)
}

impl K<'_> {
    /// A read of a matrix some rule of the region extends.
    pub(super) fn bordered(&self, a: AccessId) -> bool {
        bordered(self.f, self.r, a)
    }

    /// The C condition "access `a` is inside its matrix", if its subscripts can be computed
    /// before the body (they use no kernel local).
    pub(super) fn inside(&self, a: AccessId) -> Option<String> {
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
        let code = super::super::safety::border_code(self.r_id(), m);
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
}
