//! Semantic checks on the IR. Index computations are run on sample sizes (see [`sample`]), so
//! every error about where a program reads or writes comes with a concrete witness.

mod border;
mod collide;
pub mod eval;
mod flow;
mod prefix;
pub mod relative;
pub mod sample;

use crate::diag::Diagnostics;
use crate::ir::*;
use sample::{Clash, Scale};

/// Runs every check and keeps the functions that have no error. A function whose lowering
/// already failed is still checked (so independent errors show at once), except for the data
/// flow when a whole iterator was dropped (its writes are unknown).
pub fn check_module(functions: Vec<crate::lower::Lowered>, diags: &mut Diagnostics) -> Module {
    let mut module = Module::default();
    let mut budget = PROGRAM_BUDGET;
    for l in functions {
        let mut f = l.function;
        let before = diags.len();
        check_function(&mut f, !l.regions_dropped, &mut budget, diags);
        if !l.failed && diags.len() == before {
            module.functions.push(f);
        }
    }
    module
}

/// Work (points times statements) one region may use.
const REGION_BUDGET: usize = 2_000_000;
/// Work all the regions of one `parac!` invocation may use.
const PROGRAM_BUDGET: usize = 60_000_000;

fn check_function(f: &mut Function, flow: bool, budget: &mut usize, diags: &mut Diagnostics) {
    let samples = sample::samples(f);
    border::check_rule_values(f, &samples, diags);
    // The sampled checks have a work budget (iteration points times statements), so that a
    // generated program with thousands of regions or statements still compiles in about a
    // second: large bodies get fewer points per sample, and regions past the budget are left
    // unchecked (their reach shows as unknown).
    for r in 0..f.regions.len() {
        let cost = sample::point_cost(&f.regions[r]) * samples.len();
        let points = (REGION_BUDGET / cost).clamp(64, sample::MAX_POINTS);
        if *budget < points * cost {
            f.regions[r].reach = vec![None; f.regions[r].accesses.len()];
            // Unsampled: only the indices from data tell what is shared.
            collide::decide(f, r, &[], diags);
            continue;
        }
        *budget -= points * cost;
        let (reach, shared) = observe_region(f, r, &samples, points, diags);
        f.regions[r].reach = reach;
        collide::decide(f, r, &shared, diags);
    }
    for r in &f.regions {
        border::check_region(f, r, diags);
        prefix::check(f, r, diags);
    }
    if flow {
        flow::check(f, diags);
    }
}

/// Names the iteration point `(itx=0, ity=1)`.
fn point_text(r: &Region, p: &[Option<i64>]) -> String {
    let parts: Vec<String> = r
        .dims
        .iter()
        .zip(p)
        .filter_map(|(d, v)| Some(format!("{}={}", d.as_ref()?.var, (*v)?)))
        .collect();
    format!("({})", parts.join(", "))
}

fn element_text(f: &Function, m: MatrixId, el: &[i64]) -> String {
    let idx: String = el.iter().map(|v| format!("[{v}]")).collect();
    format!("{}{idx}", f.matrices[m].name)
}

/// How far an access reaches outside its matrix per dimension ([`Region::reach`]).
type Reach = Option<Vec<(u32, u32)>>;

/// The reach of each access of region `rid` and, per access, whether it is an update whose
/// element other iterations write too (`check::collide`).
fn observe_region(
    f: &Function,
    rid: RegionId,
    samples: &[sample::Sample],
    points: usize,
    diags: &mut Diagnostics,
) -> (Vec<Reach>, Vec<bool>) {
    let r = &f.regions[rid];
    let n = r.accesses.len();
    let mut small: Vec<Option<Vec<(u32, u32)>>> = r
        .accesses
        .iter()
        .map(|a| Some(vec![(0, 0); a.subs.len()]))
        .collect();
    let mut large = small.clone();
    let mut write_clash: Option<(Clash, String)> = None;
    let mut read_clash: Option<(Clash, String)> = None;
    let mut maybe_clash: Option<(Clash, String)> = None;
    let mut shared = vec![false; n];
    for s in samples {
        let Some(obs) = sample::observe(f, r, s, points) else {
            continue;
        };
        for a in 0..n {
            let slot = if s.scale == Scale::Small {
                &mut small[a]
            } else {
                &mut large[a]
            };
            if obs.unknown[a] {
                *slot = None;
            }
            let Some(reach) = slot else { continue };
            for (d, range) in obs.ranges[a].iter().enumerate() {
                if let Some((lo, hi)) = range {
                    let size = obs.dims[a][d];
                    reach[d].0 = reach[d]
                        .0
                        .max(lo.saturating_neg().max(0).min(u32::MAX as i64) as u32);
                    reach[d].1 = reach[d].1.max(
                        hi.saturating_sub(size.saturating_sub(1))
                            .max(0)
                            .min(u32::MAX as i64) as u32,
                    );
                }
            }
        }
        if write_clash.is_none() {
            write_clash = obs.write_clash.map(|c| (c, s.label(f)));
        }
        if read_clash.is_none() {
            read_clash = obs.read_clash.map(|c| (c, s.label(f)));
        }
        if maybe_clash.is_none() {
            maybe_clash = obs.maybe_clash.map(|c| (c, s.label(f)));
        }
        for (a, x) in obs.shared.iter().enumerate() {
            shared[a] |= x;
        }
    }
    if let Some((c, at)) = write_clash {
        let a = &r.accesses[c.second];
        diags.error(
            a.span,
            format!(
                "two iterations of `{}` write the same element: {} and {} both write `{}` (with {at})\nhelp: iterations run in parallel and in no particular order, so each must write its own elements; index the output with all of the iterator's variables, e.g. `{}[{}]`",
                r.name,
                point_text(r, &c.points.0),
                point_text(r, &c.points.1),
                element_text(f, a.matrix, &c.element),
                f.matrices[a.matrix].name,
                r.dims.iter().flatten().map(|d| d.var.clone()).collect::<Vec<_>>().join("][")
            ),
        );
    } else if let Some((c, at)) =
        maybe_clash.filter(|(c, _)| !collide::uniform(r, r.accesses[c.second].matrix))
    {
        let a = &r.accesses[c.second];
        let m = &f.matrices[a.matrix].name;
        diags.error(
            a.span,
            format!(
                "two iterations of `{}` may write the same element: {} and {} both write `{}` where a condition on data holds (with {at})\n{}",
                r.name,
                point_text(r, &c.points.0),
                point_text(r, &c.points.1),
                element_text(f, a.matrix, &c.element),
                collide::reduce_help(m),
            ),
        );
    } else if let Some((c, at)) = read_clash {
        let a = &r.accesses[c.second];
        diags.error(
            a.span,
            format!(
                "the iterations of `{}` are not independent: {} reads `{}`, which {} writes (with {at})\nhelp: iterations run in parallel; write `{}` in one iterator and read it in a later one",
                r.name,
                point_text(r, &c.points.1),
                element_text(f, a.matrix, &c.element),
                point_text(r, &c.points.0),
                f.matrices[a.matrix].name
            ),
        );
    }
    // Reach that grows with the image cannot be covered by a border of fixed width.
    let mut out = Vec::with_capacity(n);
    for a in 0..n {
        match (&small[a], &large[a]) {
            (Some(s), Some(l)) => {
                let acc = &r.accesses[a];
                if let Some(d) = (0..s.len()).find(|d| l[*d] > s[*d]) {
                    diags.error(
                        acc.span,
                        format!(
                            "`{}` is accessed further outside the matrix as the image grows (dimension {d}: {} before / {} after at the small sample sizes, {} / {} at the large ones)\nhelp: an index may go outside the image by a fixed amount only (which a border rule then covers); check the index arithmetic",
                            f.matrices[acc.matrix].name, s[d].0, s[d].1, l[d].0, l[d].1
                        ),
                    );
                }
                out.push(Some(
                    s.iter()
                        .zip(l)
                        .map(|(x, y)| (x.0.max(y.0), x.1.max(y.1)))
                        .collect(),
                ));
            }
            _ => out.push(None),
        }
    }
    (out, shared)
}
