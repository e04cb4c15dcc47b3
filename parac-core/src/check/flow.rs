//! Data flow between regions: nothing is read before something writes it.

use crate::diag::Diagnostics;
use crate::ir::*;

/// Reports reads of intermediates (and outputs) that no earlier statement writes.
pub fn check(f: &Function, diags: &mut Diagnostics) {
    let mut written = vec![false; f.matrices.len()];
    let mut reported = vec![false; f.matrices.len()];
    for step in &f.steps {
        let HostStep::Run(rid) = step else { continue };
        let r = &f.regions[rid.to_owned()];
        let writes_here: Vec<MatrixId> = r
            .accesses
            .iter()
            .filter(|a| a.write)
            .map(|a| a.matrix)
            .collect();
        for a in r.accesses.iter().filter(|a| !a.write) {
            let m = &f.matrices[a.matrix];
            if !matches!(m.kind, MatrixKind::Local | MatrixKind::Output)
                || written[a.matrix]
                || writes_here.contains(&a.matrix)
                || reported[a.matrix]
            {
                continue;
            }
            reported[a.matrix] = true;
            let what = if m.kind == MatrixKind::Local {
                "intermediate"
            } else {
                "output"
            };
            diags.error(
                a.span,
                format!(
                    "`{}` is read here, but nothing writes it before: the {what} would hold no defined values\nhelp: write `{}` in an earlier `parac_iterator`{}",
                    m.name,
                    m.name,
                    if m.kind == MatrixKind::Output { ", or pass it as an input (`&`) if it carries data in" } else { "" }
                ),
            );
        }
        for m in writes_here {
            written[m] = true;
        }
    }
}
