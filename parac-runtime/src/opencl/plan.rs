//! Choosing a region's plan: the candidates the compiler emitted (baseline first, then the
//! optimization model's ranking), pruned by the device's limits, picked by the policy
//! ([`PlanPolicy`]). Under [`PlanPolicy::Search`] (and [`PlanPolicy::SearchBudget`]) the candidates
//! are timed with profiling events for each (region, size class), in the model's order and
//! adaptively (`search.rs`), within a budget of time per region and call (`PARAC_SEARCH_BUDGET`,
//! default 0.1 s, not counting the build of the model's plan; `0`: one timing per call; `inf`: the
//! whole search at once). A candidate whose program is not built is built on the background thread
//! (`programs.rs`) and timed by a later call once it is, so no call waits for a candidate's build
//! (a search without a budget builds on its own thread). The call that starts a search builds and
//! times the model's plan only and leaves its budget to the next call, so that a first call costs
//! about one build and one run of the model's plan. A timing starts only if it is expected to fit
//! in what is left (`STEP_COST` in `costs.rs`: what timings cost in this process, those that build
//! a candidate's program apart); budget left unspent because the next timing did not fit goes to
//! the next call, so timings longer than the budget still happen, spread over calls. A call whose
//! budget runs out runs the fastest plan so far, and the next call of the region and size class
//! goes on with the search. The state (every measurement, and whether the search is complete) is
//! kept per program in memory and in a plan cache file next to the program binaries
//! (`<cache>/parac/plans/<program key>.s<search version>.plans`, `cache.rs`), so later processes
//! skip a complete search and go on with an unfinished one.
//!
//! `PARAC_LOG=plan` prints one line per search step a call makes (the choice, why: the model's
//! rank, the times measured, whether the search is complete or its budget ran out) and one per
//! region and size class whose plan comes from the plan cache; the line of a region's search
//! that takes more than a second in one call is an `info` event, which the default filter
//! (`warn,parac=info`, [`LogConfig`](crate::LogConfig)) shows whatever `PARAC_LOG` adds.
//! `PARAC_LOG=launch` prints one line per enqueue of a region, with its kernel time (it waits
//! for each). [`plan_records`] returns the search records to programs (the benches print them).

mod cache;
mod copies;
mod costs;
mod launches;
mod memo;
mod programs;
mod report;
mod search;
mod timing;

pub use cache::{cache_root, clear_cache, export_plans, import_plans};
pub use report::{describe, plan_records};
pub use timing::timings_made;

use std::borrow::Cow;

use super::device::Device;
use super::launch::Arg;
use super::program::{Program, Source};
use crate::{Error, PlanPolicy};
use costs::learn;
use launches::tree_groups;
use std::ops::Range;

/// One candidate plan of a region, as the code `parac!` emits describes it (borrowed statics)
/// or a pipeline compiled at run time (owned strings), from
/// `parac_core::codegen::launch::plans`.
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The plan's label, e.g. `h8+unroll+cse+vmem+peep` (`baseline` for the baseline).
    pub label: Cow<'static, str>,
    /// Its kernel.
    pub kernel: Cow<'static, str>,
    /// Kernels of the same program launched after it, in order, with the same shape (a split
    /// band's later phases). Such a candidate works in place (it reads what it writes), so the
    /// search times it on copies of its buffers.
    pub then: Vec<Cow<'static, str>>,
    /// The program holding the kernel when it is not the region's (baseline) program: built
    /// when the candidate is first needed, so that the first call builds only what it runs and
    /// a candidate that fails to build costs only itself (it is dropped, with a `PARAC_LOG=plan`
    /// line; the baseline never depends on it). Read only when it is built.
    pub source: Option<Source>,
    /// Iteration points per work-item along OpenCL dimensions 0 (columns) and 1 (rows).
    pub per_item: [usize; 2],
    /// Time steps one launch runs: 1, or a time band's `K` (`parac_repeat`'s step; the
    /// executor skips the next `K - 1` steps). The search compares times per step.
    pub steps: usize,
    /// The plan runs the region's consumers too ([`RegionPlans::consumers`]; a fused plan):
    /// the executor skips their runs, and the search weighs the plan's time less the
    /// consumers' best.
    pub fuses: bool,
    /// The work-group size the kernel is written for (local tiles, trees); `None`: any.
    pub local: Option<Cow<'static, [usize]>>,
    /// Bytes of local memory the kernel declares.
    pub local_bytes: usize,
    /// A tree reduction: launched as work-groups of `local`, one partial per group.
    pub tree: bool,
    /// Loop partitioning: the kernel runs the interior box only (with a global offset and its
    /// end per dimension as extra arguments), the baseline kernel the strips around it.
    pub split: bool,
    /// The kernel takes its first work-item's index per dimension as its last arguments (after
    /// a split kernel's ends) and is launched with no global offset: PoCL compiles a kernel at
    /// its first launch for each work-group size and again for a zero global offset, so border
    /// strips at and away from the origin would cost two compilations of it.
    pub origin: bool,
}

impl Candidate {
    /// The iteration points its launch covers, of a region's `global` and its consumers'
    /// (`RegionPlans::consumers`, in order): a fused candidate's are the last consumer's.
    pub(crate) fn space<'a>(
        &self,
        global: &'a [usize],
        consumers: &'a [Vec<usize>],
    ) -> &'a [usize] {
        match consumers.last() {
            Some(c) if self.fuses => c,
            _ => global,
        }
    }
}

impl RegionPlans {
    /// The policy this region runs under where `policy` is `Stages`: its label forced where
    /// the stages name it (by its iterator's or its kernel's name), else the search; `None`
    /// for any other policy (the region runs under `policy` itself).
    pub(crate) fn stage_policy(&self, policy: &PlanPolicy) -> Option<PlanPolicy> {
        let PlanPolicy::Stages(stages) = policy else {
            return None;
        };
        let region = self.region.trim_end_matches("~step");
        let named = |(r, _): &&(String, String)| PlanPolicy::names(r, region);
        Some(match stages.iter().find(named) {
            Some((_, label)) => PlanPolicy::Force(label.clone()),
            None => PlanPolicy::Search,
        })
    }
}

/// The candidates of one region.
#[derive(Clone, Debug)]
pub struct RegionPlans {
    /// The region's name (unique in its program with the kernel names).
    pub region: Cow<'static, str>,
    /// Baseline first, then the model's ranking on a GPU.
    pub candidates: Cow<'static, [Candidate]>,
    /// The model's ranking on a device that is not a GPU (`parac_core::codegen::plan::ranking`
    /// for `Target::Cpu`): candidate indices, best first, the baseline included. Empty: the
    /// GPU's order (the candidates after the baseline, then the baseline).
    pub cpu_order: Cow<'static, [usize]>,
    /// Whether candidates may run more than once on the same data (the region reads no matrix
    /// it writes), as timing needs.
    pub searchable: bool,
    /// The regions a fused candidate runs with this one (their plans' names), in order, where
    /// there are such candidates (two: a chain; `PlanDesc::runs`).
    pub consumers: Cow<'static, [Cow<'static, str>]>,
}

/// What [`Device::run_region`] ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ran {
    /// The partial results a reduction kernel wrote (its rows, or a tree's work-groups).
    pub partials: usize,
    /// The time steps of its launch (a time band's, else 1).
    pub steps: usize,
    /// The launch ran the region's consumers too (a fused plan, [`RegionPlans::consumers`]):
    /// the executor skips their runs.
    pub fused: bool,
}

/// A choice: the candidate (by label) and the work-group size (`None`: the driver's).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Choice {
    label: String,
    local: Option<Vec<usize>>,
}

/// What a search measured.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct PlanRecord {
    /// The program (pipeline) name.
    pub program: String,
    /// The region.
    pub region: String,
    /// The size class searched (global size rounded up to powers of two).
    pub class: String,
    /// The chosen label and work-group size.
    pub chosen: (String, Option<Vec<usize>>),
    /// Every timing so far (this call's and earlier calls'): label, work-group size,
    /// milliseconds (best of the timed runs).
    pub times: Vec<(String, Option<Vec<usize>>, f64)>,
    /// The search of this region and size class is complete (else the budget ran out first and
    /// a later call goes on).
    pub complete: bool,
    /// Timings this call made.
    pub steps: usize,
    /// Seconds this call spent searching (the model's plan's first build not counted).
    pub seconds: f64,
}

fn class(global: &[usize]) -> String {
    global
        .iter()
        .map(|g| g.max(&1).next_power_of_two().to_string())
        .collect::<Vec<_>>()
        .join("x")
}

fn fmt_local(l: &Option<Vec<usize>>) -> String {
    match l {
        Some(l) => l.iter().map(usize::to_string).collect::<Vec<_>>().join("x"),
        None => "-".to_string(),
    }
}

fn parse_local(s: &str) -> Option<Option<Vec<usize>>> {
    if s == "-" {
        return Some(None);
    }
    s.split('x')
        .map(|x| x.parse().ok())
        .collect::<Option<Vec<usize>>>()
        .map(Some)
}

/// The version of the search procedure and of its plan files, part of their names: a change to
/// what the search tries (candidates' launch shapes, work-group sizes, its steps) or to the
/// file's format makes what older searches stored stale, so it is not read. 4: budgeted,
/// adaptive, resumable searches; files hold every measurement. 5: time bands (times per step).
const SEARCH_VERSION: u32 = 5;

impl Device {
    /// The kind of device the model ranks plans for: a GPU, or a CPU device (any other).
    pub(crate) fn target(&self) -> parac_core::codegen::plan::Target {
        use parac_core::codegen::plan::Target;
        if self.info().is_gpu {
            Target::Gpu
        } else {
            Target::Cpu
        }
    }

    /// The model's order of `plans`' candidates on this device (indices, best first).
    pub(super) fn ranked(&self, plans: &RegionPlans) -> Vec<usize> {
        let cpu = self.target() == parac_core::codegen::plan::Target::Cpu;
        search::order(plans.candidates.len(), cpu.then_some(&plans.cpu_order[..]))
    }

    pub(super) fn feasible(&self, c: &Candidate) -> bool {
        let i = self.info();
        c.local
            .as_deref()
            .is_none_or(|l| l.iter().product::<usize>() <= i.max_work_group_size)
            && c.local_bytes as u64 <= i.local_mem_size
    }

    /// Runs region `plans` with the plan `policy` picks, on `global` iteration points (OpenCL
    /// dimension 0 first; for a global operator, `[rows]`) with kernel arguments `args` (the same
    /// for every candidate). `interior` is the region's interior box for split plans (in
    /// iteration indices per dimension), where it has one. Returns the number of partial results
    /// a reduction kernel wrote (its rows, or a tree's work-groups) and the time steps the
    /// launch ran. `consumers`: the iteration points of each of [`RegionPlans::consumers`] in this
    /// call (the search weighs a fused candidate against their best plans), empty where there
    /// are none.
    pub fn run_region(
        &self,
        program: &Program,
        plans: &RegionPlans,
        policy: &PlanPolicy,
        (global, consumer): (&[usize], &[Vec<usize>]),
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
    ) -> Result<Ran, Error> {
        if let Some(policy) = plans.stage_policy(policy) {
            return self.run_region(program, plans, &policy, (global, consumer), interior, args);
        }
        if global.contains(&0) {
            // Nothing to compute: any plan's steps are done.
            return Ok(Ran {
                partials: 0,
                steps: 1,
                fused: false,
            });
        }
        // A warm-up's launches wait for the calls running on the CPU path meanwhile.
        crate::background::yield_to_calls();
        let cands = &plans.candidates[..];
        let by_label = |l: &str| cands.iter().position(|c| c.label == l && self.feasible(c));
        // The model's first-ranked candidate on this device that fits it and builds (the
        // baseline always does).
        let model = || {
            self.ranked(plans)
                .into_iter()
                .find(|i| {
                    *i == 0
                        || (self.feasible(&cands[*i])
                            && self.own_program(program, &cands[*i]).is_ok())
                })
                .unwrap_or(0)
        };
        // Candidate `i` at its default work-group size.
        let at_default = |i: usize| Choice {
            label: cands[i].label.to_string(),
            local: self.default_local(&cands[i], cands[i].space(global, consumer)),
        };
        let choice = match policy {
            PlanPolicy::Baseline => Choice {
                label: cands[0].label.to_string(),
                local: None,
            },
            PlanPolicy::Force(l) => at_default(by_label(l).unwrap_or(0)),
            PlanPolicy::Fixed(l, wg) => {
                let mut wg = wg.clone();
                wg.resize(global.len(), 1);
                Choice {
                    label: cands[by_label(l).unwrap_or(0)].label.to_string(),
                    local: Some(wg),
                }
            }
            PlanPolicy::Model => at_default(model()),
            PlanPolicy::Stages(_) => unreachable!("resolved per region above"),
            PlanPolicy::Search | PlanPolicy::SearchBudget(_)
                if !plans.searchable || cands.len() == 1 =>
            {
                at_default(model())
            }
            PlanPolicy::Search | PlanPolicy::SearchBudget(_) => {
                let budget = match policy {
                    PlanPolicy::SearchBudget(b) => *b,
                    _ => search::DEFAULT_BUDGET,
                };
                match self.searched(program, plans, (global, consumer), interior, args, budget)? {
                    Some(c) => c,
                    None => at_default(model()),
                }
            }
        };
        let c = &cands[by_label(&choice.label).unwrap_or(0)];
        // A fused plan runs over its consumer's iteration points (none: nothing to run).
        let global = c.space(global, consumer);
        if global.contains(&0) {
            return Ok(Ran {
                partials: 0,
                steps: 1,
                fused: c.fuses,
            });
        }
        let ls = Self::launches(
            cands,
            c,
            global,
            &choice.local,
            interior,
            self.info().max_work_group_size,
        );
        // A forced candidate that does not build is the call's error; the others were built
        // (or dropped) when they were chosen.
        let own = self.own_program(program, c)?;
        let events = self.enqueue(program, own.as_deref(), &ls, args, c.local.is_some())?;
        if tracing::enabled!(target: "parac::launch", tracing::Level::DEBUG) {
            // Blocking: each enqueue's kernel time.
            for (l, e) in ls.iter().zip(&events) {
                let ms = e.wait().ok().and_then(|_| {
                    let (s, t) = (
                        e.profiling_command_start().ok()?,
                        e.profiling_command_end().ok()?,
                    );
                    Some(t.saturating_sub(s) as f64 / 1e6)
                });
                tracing::debug!(
                    target: "parac::launch",
                    "{}/{} {} offset {:?} global {:?} local {}: {} ms",
                    program.name(),
                    plans.region,
                    l.kernel,
                    l.offset,
                    l.global,
                    fmt_local(&l.local),
                    ms.map_or("?".to_string(), |m| format!("{m:.3}"))
                );
            }
        }
        Ok(Ran {
            partials: if c.tree {
                tree_groups(global[0])
            } else {
                global[0]
            },
            steps: c.steps,
            fused: c.fuses,
        })
    }
}
