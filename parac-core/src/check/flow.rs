//! Data flow between regions: nothing is read before something writes it.

use crate::diag::Diagnostics;
use crate::ir::*;

/// Reports reads of intermediates (and outputs) that no earlier statement writes. A
/// `parac_repeat` may run no time step: what it writes counts as written after it only when it
/// was written before it too; inside it, later time steps see what earlier ones wrote, and a
/// swap exchanges what two matrices hold.
pub fn check(f: &Function, diags: &mut Diagnostics) {
    let mut flow = Flow {
        f,
        written: vec![false; f.matrices.len()],
        maybe: vec![false; f.matrices.len()],
        reported: vec![false; f.matrices.len()],
        diags,
    };
    flow.steps(&f.steps);
}

struct Flow<'a> {
    f: &'a Function,
    written: Vec<bool>,
    /// Written on some path (by a time step that may not run).
    maybe: Vec<bool>,
    reported: Vec<bool>,
    diags: &'a mut Diagnostics,
}

impl Flow<'_> {
    fn steps(&mut self, steps: &[HostStep]) {
        for step in steps {
            match step {
                HostStep::Run(rid) => self.run(*rid),
                HostStep::Swap(a, b) => {
                    self.written.swap(*a, *b);
                    self.maybe.swap(*a, *b);
                }
                HostStep::Repeat { body, .. } => {
                    // What holds after every number of steps: none, one, two, ... until the
                    // state repeats (it changes by swaps and by new writes only).
                    let mut after = self.written.clone();
                    let mut maybe = self.maybe.clone();
                    let mut seen = vec![self.written.clone()];
                    for _ in 0..64 {
                        self.steps(body);
                        for (a, w) in after.iter_mut().zip(&self.written) {
                            *a &= *w;
                        }
                        for (a, w) in maybe.iter_mut().zip(&self.maybe) {
                            *a |= *w;
                        }
                        if seen.contains(&self.written) {
                            break;
                        }
                        seen.push(self.written.clone());
                    }
                    self.written = after;
                    self.maybe = maybe;
                }
                HostStep::Let(..) | HostStep::Return(_) => {}
            }
        }
    }

    fn run(&mut self, rid: RegionId) {
        let f = self.f;
        let r = &f.regions[rid];
        let writes_here: Vec<MatrixId> = r
            .accesses
            .iter()
            .filter(|a| a.write)
            .map(|a| a.matrix)
            .collect();
        for a in r.accesses.iter().filter(|a| !a.write) {
            let m = &f.matrices[a.matrix];
            if !matches!(m.kind, MatrixKind::Local | MatrixKind::Output)
                || self.written[a.matrix]
                || writes_here.contains(&a.matrix)
                || self.reported[a.matrix]
            {
                continue;
            }
            self.reported[a.matrix] = true;
            let what = if m.kind == MatrixKind::Local {
                "intermediate"
            } else {
                "output"
            };
            self.diags.error(
                a.span,
                format!(
                    "`{}` is read here, but nothing writes it before: the {what} would hold no defined values{}\nhelp: write `{}` in an earlier `parac_iterator`{}",
                    m.name,
                    if self.maybe[a.matrix] { " when a `parac_repeat` runs no time step, or after a `parac_swap` moved its values" } else { "" },
                    m.name,
                    if m.kind == MatrixKind::Output { ", or pass it as an input (`&`) if it carries data in" } else { "" }
                ),
            );
        }
        for m in writes_here {
            self.written[m] = true;
            self.maybe[m] = true;
        }
    }
}
