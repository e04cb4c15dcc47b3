//! The executor's host steps in order, through `parac_repeat`'s time steps, and the delivery
//! of the outputs `parac_swap` moved (`crate::swaps`).

use parac_core::ir::{Expr, Function, HostStep, MatrixKind};

use crate::opencl::RegionPlans;
use crate::swaps::{Move, moves};

use super::Prepared;

/// The host steps of a function, a repeat's body between its entry and its exit.
enum Flat<'f> {
    Step(&'f HostStep),
    /// A repeat's count; `exit` is the position after its body's end.
    Enter {
        count: &'f Expr,
        exit: usize,
    },
    /// The end of a repeat's body.
    Leave,
}

/// The steps to run, one after the other: a repeat's body as many times as its count says
/// (evaluated once, when it is reached; none when it is not positive).
pub(super) struct Steps<'f> {
    ops: Vec<Flat<'f>>,
    pc: usize,
    /// Per open repeat: the first step of its body, the times left.
    open: Vec<(usize, i64)>,
}

impl<'f> Steps<'f> {
    pub(super) fn new(steps: &'f [HostStep]) -> Self {
        fn flatten<'f>(steps: &'f [HostStep], ops: &mut Vec<Flat<'f>>) {
            for s in steps {
                let HostStep::Repeat { count, body, .. } = s else {
                    ops.push(Flat::Step(s));
                    continue;
                };
                let at = ops.len();
                ops.push(Flat::Leave);
                flatten(body, ops);
                ops.push(Flat::Leave);
                ops[at] = Flat::Enter {
                    count,
                    exit: ops.len(),
                };
            }
        }
        let mut ops = Vec::new();
        flatten(steps, &mut ops);
        Steps {
            ops,
            pc: 0,
            open: Vec::new(),
        }
    }

    /// The steps left of the innermost repeat being run, this one included (`None` outside
    /// a repeat).
    pub(super) fn left(&self) -> Option<i64> {
        self.open.last().map(|(_, n)| *n)
    }

    /// Skips the next `k` runs of the innermost repeat's body (a time band ran them with this
    /// one; fewer than [`Steps::left`]).
    pub(super) fn skip(&mut self, k: usize) {
        if let Some((_, left)) = self.open.last_mut() {
            *left = (*left - k as i64).max(1);
        }
    }

    /// The next step (never a repeat), counts evaluated by `count`.
    pub(super) fn next<E>(
        &mut self,
        mut count: impl FnMut(&Expr) -> Result<i64, E>,
    ) -> Result<Option<&'f HostStep>, E> {
        while let Some(op) = self.ops.get(self.pc) {
            self.pc += 1;
            match *op {
                Flat::Step(s) => return Ok(Some(s)),
                Flat::Enter { count: c, exit } => match count(c)? {
                    n if n > 0 => self.open.push((self.pc, n)),
                    _ => self.pc = exit,
                },
                Flat::Leave => {
                    let (start, left) = self.open.last_mut().expect("an open repeat");
                    *left -= 1;
                    if *left > 0 {
                        self.pc = *start;
                    } else {
                        self.open.pop();
                    }
                }
            }
        }
        Ok(None)
    }
}

/// Where the swaps left each matrix's values: `at[m]` is the matrix whose own storage holds
/// them. `apply` carries out each move of the outputs' delivery (matrix ids), then the two
/// matrices' storages are exchanged back.
pub(super) fn deliver<E>(
    f: &Function,
    at: &mut [usize],
    mut apply: impl FnMut(Move) -> Result<(), E>,
) -> Result<(), E> {
    for g in f.swap_groups() {
        let live: Vec<bool> = g
            .iter()
            .map(|m| f.matrices[*m].kind == MatrixKind::Output)
            .collect();
        let now: Vec<usize> = g.iter().map(|m| at[*m]).collect();
        for m in moves(&now, &g, &live) {
            let (from, to) = (g[m.from], g[m.to]);
            apply(Move {
                from,
                to,
                exchange: m.exchange,
            })?;
            at.swap(from, to);
        }
    }
    Ok(())
}

/// A region's candidates of one time step, where it has time bands: the others, the model's
/// order kept, under a name of their own.
pub(super) fn single_steps(plans: &RegionPlans) -> Option<RegionPlans> {
    let keep: Vec<usize> = (0..plans.candidates.len())
        .filter(|i| plans.candidates[*i].steps == 1)
        .collect();
    if keep.len() == plans.candidates.len() {
        return None;
    }
    let at = |i: &usize| keep.iter().position(|k| k == i);
    Some(RegionPlans {
        region: format!("{}~step", plans.region).into(),
        candidates: keep
            .iter()
            .map(|i| plans.candidates[*i].clone())
            .collect::<Vec<_>>()
            .into(),
        cpu_order: plans
            .cpu_order
            .iter()
            .filter_map(at)
            .collect::<Vec<_>>()
            .into(),
        searchable: plans.searchable,
        consumers: plans.consumers.clone(),
    })
}

/// The plans to run region `rid` by with `left` steps of its repeat left (this one included):
/// where fewer are left than its longest time band, its plans of one step; and whether a band
/// may run (the step's other regions' host proofs are then made with its own).
pub(super) fn plans_for(prep: &Prepared, rid: usize, left: Option<i64>) -> (&RegionPlans, bool) {
    let all = &prep.plans[rid];
    match &prep.single[rid] {
        None => (all, false),
        Some(single) => {
            let most = all.candidates.iter().map(|c| c.steps).max().unwrap_or(1) as i64;
            if left.is_none_or(|l| l < most) {
                (single, false)
            } else {
                (all, true)
            }
        }
    }
}
