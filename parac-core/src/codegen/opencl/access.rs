//! Matrix accesses: linear indices, guards (the error flag), and loads (constant, tiled,
//! shared by the lanes, bordered or plain).

use super::*;

impl K<'_> {
    pub(super) fn dim(&self, m: MatrixId, k: usize) -> String {
        format!("({})", self.expr_pure(&self.f.matrices[m].dims[k]))
    }

    pub(super) fn linear(&self, m: MatrixId, idx: &[String]) -> String {
        super::kernel::linear(idx, &format!("p{m}"), |k| self.dim(m, k))
    }

    /// A load of access `a` read as `want`.
    pub(super) fn load(
        &self,
        a: AccessId,
        want: Scalar,
        block_ix: Option<(&str, &str)>,
        pre: &mut Vec<String>,
    ) -> String {
        let w = cty(want);
        let guarded = super::super::safety::guarded(self.f, self.r, a);
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
                let (cond, oob) =
                    self.guard(m, &idx, super::super::safety::access_code(self.r_id(), a));
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
            let (cond, oob) =
                self.guard(m, &idx, super::super::safety::access_code(self.r_id(), a));
            return format!("(({w})(({cond}) ? m{m}[{}] : {oob}))", self.linear(m, &idx));
        }
        format!("(({w})m{m}[{}])", self.linear(m, &idx))
    }

    /// A guarded access of matrix `m` at `idx`: the C condition "inside its shape", and the
    /// call raising the error flag with `code` (it gives 0).
    pub(super) fn guard(&self, m: MatrixId, idx: &[String], code: i32) -> (String, String) {
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
}
