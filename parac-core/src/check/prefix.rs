//! Prefixes (`parac_prefix_sum(e, y)`, [`ExprKind::Prefix`]): computed at every point of their
//! iterator, so never under an `if` (whose other points would still need `e`), and of values
//! that other iterations cannot be writing (no read of a matrix the iterator writes).

use crate::diag::Diagnostics;
use crate::ir::*;

/// Reports each prefix of region `r` under an `if`, or whose value reads what `r` writes.
pub fn check(f: &Function, r: &Region, diags: &mut Diagnostics) {
    if r.prefixes == 0 {
        return;
    }
    let written = |m: MatrixId| r.accesses.iter().any(|a| a.write && a.matrix == m);
    KStmt::walk(&r.body, &mut |s, depth| {
        for x in s.prefixes() {
            let ExprKind::Prefix { value, .. } = &x.kind else {
                continue;
            };
            if depth > 0 {
                diags.error(
                    x.span,
                    "a prefix is computed at every point of its iterator, so it cannot be inside an `if`\nhelp: compute it before the `if`, `let s = parac_prefix_sum(..);`, and use `s` inside",
                );
            }
            let mut reads = None;
            value.walk(&mut |v| {
                if let ExprKind::Load(a) | ExprKind::Block(a) = v.kind {
                    let m = r.accesses[a].matrix;
                    if written(m) {
                        reads.get_or_insert(m);
                    }
                }
            });
            if let Some(m) = reads {
                diags.error(
                    x.span,
                    format!(
                        "this prefix combines values of `{}`, which `{}` writes: the earlier points' values would depend on the order the iterations run in\nhelp: compute `{}` in an earlier iterator",
                        f.matrices[m].name, r.name, f.matrices[m].name
                    ),
                );
            }
        }
    });
}
