//! Choosing a region's plan: the candidates the compiler emitted (baseline first, then the
//! optimization model's ranking), pruned by the device's limits, picked by the policy
//! ([`PlanPolicy`]). Under [`PlanPolicy::Search`] (and [`PlanPolicy::SearchBudget`]) the
//! candidates are timed with profiling events for each (region, size class), in the model's
//! order and adaptively (`search.rs`), within a budget of time per region and call
//! (`PARAC_SEARCH_BUDGET`, default 0.1 s, not counting the build of the model's plan; `0`: one
//! timing per call; `inf`: the whole search at once). A candidate whose program is not built is
//! built on the background thread (`programs.rs`) and timed by a later call once it is, so no
//! call waits for a candidate's build (a search without a budget builds on its own thread). The call that starts a search builds and
//! times the model's plan only and leaves its budget to the next call, so that a first call
//! costs about one build and one run of the model's plan. A timing starts only if it is expected to
//! fit in what is left ([`STEP_COST`]: what timings cost in this process, those that build a
//! candidate's program apart); budget left unspent because the next timing did not fit goes to
//! the next call, so timings longer than the budget still happen, spread over calls. A call
//! whose budget runs out runs the fastest plan so far, and the next call of the region and size
//! class goes on with the search. The state (every measurement, and whether the search is
//! complete) is kept per program in memory and in a plan cache file next to the program
//! binaries (`<cache>/parac/plans/<program key>.s<search version>.plans`, `cache.rs`), so later
//! processes skip a complete search and go on with an unfinished one.
//!
//! `PARAC_LOG=plan` prints one line per search step a call makes (the choice, why: the model's
//! rank, the times measured, whether the search is complete or its budget ran out) and one per
//! region and size class whose plan comes from the plan cache; a region's search that takes more
//! than a second in one call prints one line on stderr whatever `PARAC_LOG` says.
//! `PARAC_LOG=launch` prints one line per enqueue of a region, with its kernel time (it waits
//! for each). [`plan_records`] returns the search records to programs (the benches print them).

mod cache;
mod programs;
mod search;

pub use cache::{cache_root, clear_cache, export_plans, import_plans};

use std::any::Any;
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::device::Device;
use super::launch::{Arg, NdRange};
use super::partition::strips;
use super::program::{Program, Source};
use crate::{Error, PlanPolicy};
use opencl3::event::Event;
use search::{Cand, Search, Step};
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
    /// The program holding the kernel when it is not the region's (baseline) program: built
    /// when the candidate is first needed, so that the first call builds only what it runs and
    /// a candidate that fails to build costs only itself (it is dropped, with a `PARAC_LOG=plan`
    /// line; the baseline never depends on it). Read only when it is built.
    pub source: Option<Source>,
    /// Iteration points per work-item along OpenCL dimensions 0 (columns) and 1 (rows).
    pub per_item: [usize; 2],
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

/// One enqueue of a plan: `kernel` over `global` work-items from `offset`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Launch<'a> {
    kernel: &'a str,
    /// The kernel is in the candidate's own program (else in the region's).
    own: bool,
    offset: Vec<usize>,
    global: Vec<usize>,
    local: Option<Vec<usize>>,
    /// The box's end (`offset + global`) is passed after the arguments (split kernels).
    ends: bool,
    /// The offset goes as arguments ([`Candidate::origin`]).
    origin: bool,
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

/// A (region, size class) of a program: what the plan cache holds for it, and whether a thread
/// is searching it now.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    saved: cache::Saved,
    busy: bool,
    /// `PARAC_LOG=plan` printed its cache hit.
    reported: bool,
}

/// What one search step costs, learned in this process (a moving average of the steps timed)
/// or, before any, read from a plan file: `[0]` a step that builds its candidate's program,
/// `[1]` one that does not (it may still make the driver compile the kernel for a new
/// work-group size: PoCL compiles at the first launch), `[2]` one that times a plan again.
static STEP_COST: Mutex<[Option<f64>; 3]> = Mutex::new([None, None, None]);

/// A step of kind 2 (see [`STEP_COST`]).
const AGAIN: usize = 2;

/// Learns that a step of `kind` (see [`STEP_COST`]) took `seconds`.
fn learn(kind: usize, seconds: f64) {
    let mut c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    c[kind] = Some(c[kind].map_or(seconds, |old| 0.5 * old + 0.5 * seconds));
}

/// What a step of `kind` is expected to cost: the moving average, or 0 before any.
fn expected(kind: usize) -> f64 {
    STEP_COST.lock().unwrap_or_else(PoisonError::into_inner)[kind].unwrap_or(0.0)
}

/// The step costs learned so far, for a plan file.
fn step_costs() -> BTreeMap<usize, f64> {
    let c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    (0..c.len()).filter_map(|k| Some((k, c[k]?))).collect()
}

/// Takes the step costs of a plan file where this process has learned none.
fn seed_step_costs(costs: &BTreeMap<usize, f64>) {
    let mut c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    for (k, v) in costs {
        if let Some(slot) = c.get_mut(*k) {
            slot.get_or_insert(*v);
        }
    }
}

/// The plans of a program, by (region, size class).
pub(crate) type Memo = HashMap<(String, String), Entry>;

static RECORDS: Mutex<Vec<PlanRecord>> = Mutex::new(Vec::new());

/// Timings made in this process.
static TIMINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The number of plans the searches of this process have timed so far (each candidate at a
/// work-group size, and each timing again), for a progress display (`parac tune`).
pub fn timings_made() -> u64 {
    TIMINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// The searches run in this process so far, oldest first.
pub fn plan_records() -> Vec<PlanRecord> {
    RECORDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
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

/// The one work-group size of every border strip of a split plan (`strips`: each strip's
/// dimension and box, as [`strips`] gives them), so that the driver compiles the baseline kernel
/// for one work-group size (PoCL compiles a kernel at its first launch for each work-group
/// size, 0.2-0.4 s each for a baseline kernel; docs/benchmarks.md, "First call with the
/// budgeted search"). Along a dimension with a strip before the box, whole groups (a divisor of
/// that strip's width, so that the rounded-up launch stays outside the box); along the others,
/// as many work-items as fit (the baseline kernel recomputes, identically, what the rounding
/// adds there, or returns beyond the region).
fn strips_local(strips: &[(usize, Vec<Range<usize>>)], dims: usize, max: usize) -> Vec<usize> {
    let max = max.clamp(1, 256);
    let mut l = vec![1; dims];
    let mut budget = max;
    // The width of the strip before the box along each dimension, where there is one.
    let before: Vec<Option<usize>> = (0..dims)
        .map(|d| {
            strips
                .iter()
                .find(|(own, b)| *own == d && b[d].start == 0)
                .map(|(_, b)| b[d].len())
        })
        .collect();
    for d in 0..dims {
        if let Some(w) = before[d] {
            l[d] = (1..=w.min(16).min(budget))
                .rev()
                .find(|x| w % x == 0)
                .unwrap_or(1);
            budget = (budget / l[d]).max(1);
        }
    }
    // The budget left, whatever the strips' extents: one size for every image size (a size
    // fitted to each image's strips made PoCL compile the baseline kernel again for each).
    for d in 0..dims {
        if before[d].is_none() {
            l[d] = budget;
            budget = 1;
        }
    }
    l
}

/// The work-group size of a launch that fixes none and must not depend on the global size:
/// 32x4 (64 in 1-D, 1 along further dimensions), where the device allows it.
fn fixed_local(dims: usize, max_group: usize) -> Option<Vec<usize>> {
    if dims == 0 {
        return None;
    }
    let mut l = if dims >= 2 { vec![32, 4] } else { vec![64] };
    l.resize(dims, 1);
    (l.iter().product::<usize>() <= max_group).then_some(l)
}

/// Groups of a tree reduction over `rows` rows.
fn tree_groups(rows: usize) -> usize {
    rows.clamp(1, 128)
}

/// The version of the search procedure and of its plan files, part of their names: a change to
/// what the search tries (candidates' launch shapes, work-group sizes, its steps) or to the
/// file's format makes what older searches stored stale, so it is not read. 4: budgeted,
/// adaptive, resumable searches; files hold every measurement.
const SEARCH_VERSION: u32 = 4;

/// A region's search that takes longer than this in one call is an `info` event (a progress
/// line in the examples' and the CLI's log); shorter ones are `debug` events.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

impl Device {
    fn plan_file(&self, program: &Program) -> Option<PathBuf> {
        let dir = self.program_cache_dir()?;
        let parent = dir.parent()?.join("plans");
        Some(parent.join(cache::file_name(&program.key_hash)))
    }

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
    fn ranked(&self, plans: &RegionPlans) -> Vec<usize> {
        let cpu = self.target() == parac_core::codegen::plan::Target::Cpu;
        search::order(plans.candidates.len(), cpu.then_some(&plans.cpu_order[..]))
    }

    fn feasible(&self, c: &Candidate) -> bool {
        let i = self.info();
        c.local
            .as_deref()
            .is_none_or(|l| l.iter().product::<usize>() <= i.max_work_group_size)
            && c.local_bytes as u64 <= i.local_mem_size
    }

    /// The global size and local size of candidate `c` for a region of `global` iteration
    /// points (for a tree: `global[0]` rows).
    fn shape(
        c: &Candidate,
        global: &[usize],
        local: &Option<Vec<usize>>,
    ) -> (Vec<usize>, Option<Vec<usize>>) {
        if c.tree {
            let l = c.local.as_deref().map_or(64, |l| l[0]);
            return (vec![tree_groups(global[0]) * l], Some(vec![l]));
        }
        let g: Vec<usize> = global
            .iter()
            .enumerate()
            .map(|(d, n)| n.div_ceil(*c.per_item.get(d).unwrap_or(&1)))
            .collect();
        let l = c
            .local
            .as_deref()
            .map(<[usize]>::to_vec)
            .or_else(|| local.clone());
        (g, l)
    }

    /// The enqueues of candidate `c` (of `cands`, baseline first) on `global` iteration points
    /// with work-group size `local`: one, or for a split plan with a non-empty interior box
    /// (whole work-items of its lanes), the interior and the baseline's strips around it.
    fn launches<'a>(
        cands: &'a [Candidate],
        c: &'a Candidate,
        global: &[usize],
        local: &Option<Vec<usize>>,
        interior: Option<&[Range<usize>]>,
        max_group: usize,
    ) -> Vec<Launch<'a>> {
        let whole = |c: &'a Candidate, local: &Option<Vec<usize>>| {
            let (g, l) = Self::shape(c, global, local);
            Launch {
                kernel: &c.kernel,
                own: c.source.is_some(),
                offset: vec![0; g.len()],
                global: g,
                local: l,
                ends: false,
                origin: c.origin,
            }
        };
        if !c.split {
            return vec![whole(c, local)];
        }
        let base = &cands[0];
        let inner: Option<Vec<(usize, usize)>> = interior.and_then(|b| {
            (0..global.len())
                .map(|d| {
                    let p = *c.per_item.get(d).unwrap_or(&1);
                    let r = b.get(d)?;
                    let (o, e) = (r.start.div_ceil(p), r.end.min(global[d]) / p);
                    (e > o).then_some((o, e))
                })
                .collect()
        });
        let Some(inner) = inner else {
            // No interior: the baseline runs everything, at one work-group size whatever the
            // size (a driver's choice varies with it, and PoCL compiles a kernel per size).
            return vec![whole(base, &fixed_local(global.len(), max_group))];
        };
        let mut out = vec![Launch {
            kernel: &c.kernel,
            own: c.source.is_some(),
            offset: inner.iter().map(|x| x.0).collect(),
            global: inner.iter().map(|x| x.1 - x.0).collect(),
            local: local.clone(),
            ends: true,
            origin: c.origin,
        }];
        let boxed: Vec<Range<usize>> = inner
            .iter()
            .enumerate()
            .map(|(d, (o, e))| {
                let p = *c.per_item.get(d).unwrap_or(&1);
                o * p..e * p
            })
            .collect();
        let strips = strips(global, &boxed);
        // One work-group size for every strip, and (`Candidate::origin`) their offsets passed
        // as arguments: PoCL compiles the baseline kernel once for all of them, not once per
        // strip shape and again for a zero global offset.
        let local = strips_local(&strips, global.len(), max_group);
        for (_, s) in strips {
            out.push(Launch {
                kernel: &base.kernel,
                own: false,
                offset: s.iter().map(|r| r.start).collect(),
                global: s.iter().map(|r| r.len()).collect(),
                local: Some(local.clone()),
                ends: false,
                origin: base.origin,
            });
        }
        out
    }

    /// Enqueues `launches` with `args` (plus the box's end where asked); their events.
    fn enqueue(
        &self,
        program: &Program,
        own: Option<&Program>,
        launches: &[Launch<'_>],
        args: &[Arg<'_>],
        exact: bool,
    ) -> Result<Vec<Event>, Error> {
        let mut events = Vec::new();
        for l in launches {
            let mut a = args.to_vec();
            if l.ends {
                a.extend(
                    l.offset
                        .iter()
                        .zip(&l.global)
                        .map(|(o, g)| Arg::I32((o + g) as i32)),
                );
            }
            if l.origin {
                a.extend(l.offset.iter().map(|o| Arg::I32(*o as i32)));
            }
            let offset = (!l.origin && l.offset.iter().any(|o| *o > 0)).then_some(&l.offset[..]);
            let prog = match own {
                Some(p) if l.own => p,
                _ => program,
            };
            let range = NdRange {
                global: &l.global,
                local: l.local.as_deref(),
                offset,
                exact,
            };
            let e = self.launch_event(prog, l.kernel, range, &a)?;
            events.extend(e);
        }
        Ok(events)
    }

    /// Runs region `plans` with the plan `policy` picks, on `global` iteration points (OpenCL
    /// dimension 0 first; for a global operator, `[rows]`) with kernel arguments `args` (the same
    /// for every candidate). `interior` is the region's interior box for split plans (in
    /// iteration indices per dimension), where it has one. Returns the number of partial results
    /// a reduction kernel wrote (its rows, or a tree's work-groups).
    pub fn run_region(
        &self,
        program: &Program,
        plans: &RegionPlans,
        policy: &PlanPolicy,
        global: &[usize],
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
    ) -> Result<usize, Error> {
        if global.contains(&0) {
            return Ok(0);
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
            local: self.default_local(&cands[i], global),
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
                match self.searched(program, plans, global, interior, args, budget)? {
                    Some(c) => c,
                    None => at_default(model()),
                }
            }
        };
        let c = &cands[by_label(&choice.label).unwrap_or(0)];
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
        Ok(if c.tree {
            tree_groups(global[0])
        } else {
            global[0]
        })
    }

    /// The plan of a searched region for this call: a complete search's choice (from this
    /// process or the plan cache), else the search goes on, within `budget`, and the fastest
    /// plan so far runs. `None`: nothing measured could run (or another thread is searching
    /// this region and nothing is measured yet): the caller runs the model's plan.
    fn searched(
        &self,
        program: &Program,
        plans: &RegionPlans,
        global: &[usize],
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
        budget: Duration,
    ) -> Result<Option<Choice>, Error> {
        let key = (plans.region.to_string(), class(global));
        let cands = &plans.candidates[..];
        let known = |c: &Choice| cands.iter().any(|x| x.label == c.label && self.feasible(x));
        let carry;
        let mut search = {
            let mut slot = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
            let memo = self.memo(program, &mut slot);
            let e = memo.entry(key.clone()).or_default();
            if e.saved.done {
                match e.saved.choice.clone() {
                    Some(c) if known(&c) => {
                        if !e.reported {
                            tracing::debug!(
                                target: "parac::plan",
                                "{}",
                                self.describe_cached(program, plans, &key, &e.saved)
                            );
                        }
                        e.reported = true;
                        return Ok(Some(c));
                    }
                    None => return Ok(None),
                    // A plan this program does not have (or this device cannot run): search
                    // again.
                    Some(_) => e.saved = cache::Saved::default(),
                }
            }
            if e.busy {
                return Ok(e.saved.choice.clone().filter(known));
            }
            e.busy = true;
            carry = e.saved.carry;
            std::mem::take(&mut e.saved.search)
        };
        // One span per region's search in a call, for a subscriber's progress display.
        let span = tracing::info_span!(
            target: "parac::plan",
            "search",
            program = program.name(),
            region = %key.0,
            class = %key.1
        );
        let _in_span = span.enter();
        let max = self.info().max_work_group_size;
        let cs: Vec<Cand> = self
            .ranked(plans)
            .into_iter()
            .filter(|i| self.feasible(&cands[*i]))
            .map(|i| Cand {
                index: i,
                label: cands[i].label.to_string(),
                default: cands[i]
                    .local
                    .as_deref()
                    .map(<[usize]>::to_vec)
                    .or_else(|| self.default_local(&cands[i], global)),
                free: cands[i].local.is_none() && !cands[i].tree,
            })
            .collect();
        let sizes = group_sizes(global.len(), max);
        // What timing candidate `label` at `local` is (the search's leader so far, for the
        // adaptive sampling), and the kind of step it is.
        let describe_step = |step: &Step, search: &Search| {
            let (label, local, leader) = match step {
                Step::Time { index, local, .. } => (
                    cands[*index].label.to_string(),
                    local.clone(),
                    search.best(),
                ),
                Step::Again(i) => {
                    let m = &search.measures[*i];
                    (m.label.clone(), m.local.clone(), None)
                }
            };
            let c = cands.iter().find(|c| c.label == label);
            let kind = match step {
                Step::Again(_) => AGAIN,
                Step::Time { .. } => c.map_or(1, |c| self.step_kind(program, c)),
            };
            (label, local, leader, c, kind)
        };
        let mut steps = 0;
        // A new search builds and times the model's plan before the clock starts: the first
        // call pays that whatever the budget, as it pays the plan's first run (the warm-up run,
        // in which PoCL compiles the kernel for its work-group size). The build teaches what a
        // build costs here.
        let mut first: Result<(), Error> = Ok(());
        // A search that starts in this call: its call pays the model's plan alone, and the
        // budget goes to the next call (a first call costs about the model's build and a run,
        // not the timing of other candidates and their compilations).
        let fresh = search.measures.is_empty();
        if fresh {
            if let Some(step @ Step::Time { .. }) = search.next(&cs, &sizes) {
                let (label, local, _, c, kind) = describe_step(&step, &search);
                let (ms, samples) = match c {
                    Some(c) => {
                        let t = Instant::now();
                        if self.own_program(program, c).is_ok() && kind == 0 {
                            learn(0, t.elapsed().as_secs_f64());
                        }
                        first = self.finish();
                        self.time(program, cands, c, global, &local, interior, args, None)
                    }
                    None => (None, 0),
                };
                search.record(&step, &label, ms, samples);
                steps += 1;
            }
        }
        let start = Instant::now();
        // What this call may spend: the budget and what earlier calls left.
        let allowance = budget.as_secs_f64() + carry;
        // The expected cost of the step that did not fit.
        let mut waits: Option<f64> = None;
        // The candidate whose program the background thread builds for the next step.
        let mut building: Option<String> = None;
        let outcome = (|| -> Result<bool, Error> {
            first?;
            self.finish()?;
            loop {
                let Some(step) = search.next(&cs, &sizes) else {
                    return Ok(true);
                };
                let (label, local, leader, c, kind) = describe_step(&step, &search);
                // A candidate whose program is not built yet is built on the background thread
                // and timed by a later call once it is: no call waits for a candidate's build.
                if kind == 0 && budget != Duration::MAX {
                    if let Some(c) = c.filter(|c| self.build_later(program, c)) {
                        building = Some(c.label.to_string());
                        return Ok(false);
                    }
                }
                if fresh && !budget.is_zero() && budget != Duration::MAX {
                    waits = Some(expected(kind));
                    return Ok(false);
                }
                if budget.is_zero() {
                    // One step per call.
                    if steps > 0 {
                        return Ok(false);
                    }
                } else if budget != Duration::MAX {
                    // A step starts only if it is expected to fit.
                    let cost = expected(kind);
                    if start.elapsed().as_secs_f64() + cost > allowance {
                        waits = Some(cost);
                        return Ok(false);
                    }
                }
                let t = Instant::now();
                let (ms, samples) = match c {
                    Some(c) => self.time(program, cands, c, global, &local, interior, args, leader),
                    None => (None, 0),
                };
                learn(kind, t.elapsed().as_secs_f64());
                search.record(&step, &label, ms, samples);
                steps += 1;
            }
        })();
        let seconds = start.elapsed().as_secs_f64();
        let complete = matches!(outcome, Ok(true));
        let choice = search.leader().map(|m| Choice {
            label: m.label.clone(),
            local: m.local.clone(),
        });
        let saved = cache::Saved {
            done: complete,
            choice: choice.clone(),
            search,
            // Budget left unspent because the next step did not fit goes to the next call, so
            // that a step costing more than the budget (a build) runs about once per (its cost
            // / the budget) calls.
            carry: if waits.is_some() {
                (allowance - seconds).max(0.0)
            } else {
                0.0
            },
        };
        let record = Self::record(program, &key, &saved, steps, seconds);
        {
            let mut slot = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
            let e = self
                .memo(program, &mut slot)
                .entry(key.clone())
                .or_default();
            e.busy = false;
            e.reported = true;
            e.saved = saved.clone();
        }
        // What comes next, for the log.
        let next = match (&building, waits) {
            (Some(label), _) => {
                format!("{label}'s program builds in the background, a later call times it")
            }
            (None, Some(cost)) => format!(
                "the next timing (about {cost:.2} s) waits for later calls ({:.2} s saved for it)",
                (allowance - seconds).max(0.0)
            ),
            (None, None) => "later calls go on".to_string(),
        };
        if steps == 0 {
            // The carry is the file's too: a later process goes on saving for the step.
            self.store_plans(program, key.clone(), saved.clone(), None);
            tracing::debug!(
                target: "parac::plan",
                "{}/{} [{}]: {}; budget {}: {next}",
                program.name(),
                key.0,
                key.1,
                choice
                    .as_ref()
                    .map_or("the model's plan".to_string(), |c| format!(
                        "{}@{}",
                        c.label,
                        fmt_local(&c.local)
                    )),
                search::fmt_budget(budget),
            );
            outcome?;
            return Ok(choice);
        }
        self.store_plans(program, key, saved.clone(), Some(&record));
        let line = || {
            Self::describe_search(
                &record,
                plans,
                &saved.search,
                &cs,
                &sizes,
                budget,
                outcome.is_err(),
                &next,
            )
        };
        if seconds > PROGRESS_AFTER.as_secs_f64() {
            // One line per region whose search took long, so that a long search is not
            // silent.
            tracing::info!(target: "parac::plan", "{}", line());
        } else {
            tracing::debug!(target: "parac::plan", "{}", line());
        }
        RECORDS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
        outcome?;
        Ok(choice)
    }

    /// The record of a search's state after a call's steps.
    fn record(
        program: &Program,
        key: &(String, String),
        saved: &cache::Saved,
        steps: usize,
        seconds: f64,
    ) -> PlanRecord {
        PlanRecord {
            program: program.name().to_string(),
            region: key.0.clone(),
            class: key.1.clone(),
            chosen: saved.choice.as_ref().map_or(("-".to_string(), None), |c| {
                (c.label.clone(), c.local.clone())
            }),
            times: saved
                .search
                .measures
                .iter()
                .filter_map(|m| Some((m.label.clone(), m.local.clone(), m.ms?)))
                .collect(),
            complete: saved.done,
            steps,
            seconds,
        }
    }

    /// The `PARAC_LOG=plan` line of a search step: the choice and why (its rank in the model's
    /// order, the model's first choice's time), how far the search is, every time measured.
    #[allow(clippy::too_many_arguments)]
    fn describe_search(
        r: &PlanRecord,
        plans: &RegionPlans,
        search: &Search,
        cs: &[Cand],
        sizes: &[Vec<usize>],
        budget: Duration,
        failed: bool,
        next: &str,
    ) -> String {
        let model = cs.first().map_or("baseline", |c| c.label.as_str());
        let model_ms = r
            .times
            .iter()
            .find(|t| t.0 == model)
            .map_or("not timed".to_string(), |t| format!("{:.3} ms", t.2));
        let n = search.measures.len();
        let status = if failed {
            "the search stopped on an error".to_string()
        } else if r.complete {
            format!("search complete ({n} plans timed)")
        } else {
            format!(
                "budget {}: {n} of {} plans timed, {next}",
                search::fmt_budget(budget),
                search.planned(cs, sizes),
            )
        };
        format!(
            "{} ({}; the model's first choice {model}: {model_ms}); {status}; this call: {} timings in {:.2} s",
            describe(r),
            rank(plans, &r.chosen.0),
            r.steps,
            r.seconds
        )
    }

    /// The `PARAC_LOG=plan` line of a plan from the plan cache.
    fn describe_cached(
        &self,
        program: &Program,
        plans: &RegionPlans,
        key: &(String, String),
        saved: &cache::Saved,
    ) -> String {
        let (label, local) = saved.choice.as_ref().map_or(("-".to_string(), None), |c| {
            (c.label.clone(), c.local.clone())
        });
        let ms = saved
            .search
            .measures
            .iter()
            .find(|m| m.label == label && m.local == local)
            .and_then(|m| m.ms)
            .map_or(String::new(), |t| format!(" {t:.3} ms when searched"));
        format!(
            "parac plan {}/{} [{}]: {label}@{}{ms} ({}); from the plan cache ({} timings)",
            program.name(),
            key.0,
            key.1,
            fmt_local(&local),
            rank(plans, &label),
            saved.search.measures.len()
        )
    }

    /// Times one run of a candidate, in milliseconds, from the start of its first enqueue to
    /// the end of its last, after a warm-up run: one sample, then (unless that sample is far
    /// behind `leader`, the best time so far: [`search::keep_sampling`]) the best of
    /// [`search::SAMPLES`]. Also how many samples it took; `None` (0 samples) if its program
    /// does not build or it cannot run with this work-group size.
    #[allow(clippy::too_many_arguments)]
    fn time(
        &self,
        program: &Program,
        cands: &[Candidate],
        c: &Candidate,
        global: &[usize],
        local: &Option<Vec<usize>>,
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
        leader: Option<f64>,
    ) -> (Option<f64>, u32) {
        let ls = Self::launches(
            cands,
            c,
            global,
            local,
            interior,
            self.info().max_work_group_size,
        );
        // A candidate whose program does not build is not timed.
        let Ok(own) = self.own_program(program, c) else {
            return (None, 0);
        };
        TIMINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let run = || {
            // A warm-up's runs wait for the calls running on the CPU path meanwhile.
            crate::background::yield_to_calls();
            let events = self
                .enqueue(program, own.as_deref(), &ls, args, true)
                .ok()?;
            for e in &events {
                e.wait().ok()?;
            }
            let start = events.first()?.profiling_command_start().ok()?;
            let mut end = 0;
            for e in &events {
                end = end.max(e.profiling_command_end().ok()?);
            }
            Some(end.saturating_sub(start) as f64 / 1e6)
        };
        let (Some(_), Some(first)) = (run(), run()) else {
            return (None, 0);
        };
        if !search::keep_sampling(first, leader) {
            return (Some(first), 1);
        }
        let mut best = first;
        for _ in 1..search::SAMPLES {
            match run() {
                Some(t) => best = best.min(t),
                None => return (None, 0),
            }
        }
        (Some(best), search::SAMPLES)
    }

    /// The work-group size a candidate whose kernel fixes none is launched with outside the
    /// search's second round: the driver's (`None`) where the work-items' first dimension is a
    /// multiple of 16, else 32x4 (64 in 1-D), the global size rounded up to it. A driver that
    /// needs the global size to be a multiple of the work-group size (PoCL, OpenCL 1.2) picks a
    /// divisor of it, as small as 2 for blur's 6406 columns (2 x 3203), which starves its
    /// work-group vectorizer: the baseline kernel of blur's first stage took 60 ms with it and
    /// 5.7 ms at 32x4 (the kernels check their bounds, so rounding up is free). The baseline
    /// policy keeps the driver's size: it is the plain launch the plans are measured against.
    ///
    /// On a CPU device (PoCL) every global size gets 32x4: its compiler specializes a kernel
    /// for each work-group size it is launched with (seconds each for a bordered kernel), and
    /// the driver's own choice is a divisor of the global size, so a region run on many image
    /// sizes was compiled again for most of them (`borders reflect101::opencl`, 22 sizes, cold
    /// cache: 107 compilations and 388 s before, 45 and 308 s with this and the fixed sizes of
    /// split plans' strips).
    fn default_local(&self, c: &Candidate, global: &[usize]) -> Option<Vec<usize>> {
        if c.local.is_some() || c.tree || global.is_empty() {
            return None;
        }
        let (g, _) = Self::shape(c, global, &None);
        if g[0] % 16 == 0 && !self.info().is_cpu {
            return None;
        }
        fixed_local(g.len(), self.info().max_work_group_size)
    }

    /// The plan memo `program` holds in `slot` (its `plans`, locked), loaded from the plan cache
    /// file on first use.
    fn memo<'a>(
        &self,
        program: &Program,
        slot: &'a mut Option<Box<dyn Any + Send>>,
    ) -> &'a mut Memo {
        if !slot.as_ref().is_some_and(|b| b.is::<Memo>()) {
            *slot = Some(Box::new(self.load_plans(program)));
        }
        match slot.as_mut().and_then(|b| b.downcast_mut::<Memo>()) {
            Some(m) => m,
            None => unreachable!("the slot holds a Memo, set just above"),
        }
    }

    /// The plan cache's entries of `program`, as the memo's.
    fn load_plans(&self, program: &Program) -> Memo {
        let Some(path) = self.plan_file(program) else {
            return Memo::new();
        };
        let file = cache::load(&path);
        seed_step_costs(&file.costs);
        file.plans
            .into_iter()
            .map(|(k, saved)| {
                (
                    k,
                    Entry {
                        saved,
                        ..Entry::default()
                    },
                )
            })
            .collect()
    }

    /// Saves a search's state in the plan file, merged with what another process may have
    /// written there meanwhile. A cache that cannot be written is no error: the plans stay in
    /// this process (one line on stderr).
    fn store_plans(
        &self,
        program: &Program,
        key: (String, String),
        saved: cache::Saved,
        last: Option<&PlanRecord>,
    ) {
        let Some(path) = self.plan_file(program).filter(|_| !self.cache_read_only()) else {
            return;
        };
        let comments = [
            format!(
                "plans of `{}` on {} ({})",
                program.name(),
                self.info().name,
                self.info().driver_version
            ),
            match last {
                Some(r) => format!("last search step: {}", describe(r)),
                None => format!("last call of {}: no step fitted its budget", key.0),
            },
        ];
        let mut one = cache::PlanFile {
            costs: step_costs(),
            ..cache::PlanFile::default()
        };
        one.plans.insert(key, saved);
        if let Err(e) = cache::update(&path, &comments, |p| cache::merge(p, one)) {
            let dir = path.parent().unwrap_or(&path).to_path_buf();
            cache::report_once(&dir, || {
                format!(
                    "plan cache {} cannot be written ({e}); plans are kept in this process only",
                    dir.display()
                )
            });
        }
    }
}

/// Where `label` is in the model's ranking of a region's candidates, for messages.
fn rank(plans: &RegionPlans, label: &str) -> String {
    let n = plans.candidates.len().saturating_sub(1);
    match plans.candidates.iter().position(|c| c.label == label) {
        Some(0) => "the baseline".to_string(),
        Some(i) => format!("model rank {i} of {n}"),
        None => "not a candidate".to_string(),
    }
}

/// The work-group sizes the search's second step tries, for `dims` dimensions, fitted to the
/// device's largest work-group.
fn group_sizes(dims: usize, max: usize) -> Vec<Vec<usize>> {
    let sizes: Vec<Vec<usize>> = if dims >= 2 {
        vec![vec![32, 4], vec![64, 2], vec![16, 16], vec![128, 1]]
    } else {
        vec![vec![64], vec![128], vec![256]]
    };
    sizes
        .into_iter()
        .filter(|l| l.iter().product::<usize>() <= max)
        .map(|mut l| {
            l.resize(dims, 1);
            l
        })
        .collect()
}

/// One line: `parac plan <program>/<region> [class]: <label>@<local> <ms> ms; all (ms): ...`.
pub fn describe(r: &PlanRecord) -> String {
    let mut others: Vec<String> = r
        .times
        .iter()
        .map(|(l, wg, t)| format!("{l}@{} {t:.3}", fmt_local(wg)))
        .collect();
    others.sort();
    let best = r
        .times
        .iter()
        .filter(|t| t.0 == r.chosen.0 && t.1 == r.chosen.1)
        .map(|t| t.2)
        .next()
        .unwrap_or(f64::NAN);
    format!(
        "parac plan {}/{} [{}]: {}@{} {best:.3} ms; all (ms): {}",
        r.program,
        r.region,
        r.class,
        r.chosen.0,
        fmt_local(&r.chosen.1),
        others.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: Candidate = Candidate {
        label: Cow::Borrowed("baseline"),
        kernel: Cow::Borrowed("k"),
        source: None,
        per_item: [1, 1],
        local: None,
        local_bytes: 0,
        tree: false,
        split: false,
        origin: true,
    };

    /// Every border strip of a split plan runs at one work-group size, so that the driver
    /// compiles the baseline kernel for one work-group size (PoCL compiles per work-group size
    /// at a kernel's first launch).
    #[test]
    fn split_strips_share_one_work_group_size() {
        let c = Candidate {
            label: Cow::Borrowed("split"),
            kernel: Cow::Borrowed("s"),
            per_item: [8, 1],
            split: true,
            origin: false,
            ..BASE
        };
        let cands = [BASE, c.clone()];
        for (global, inner) in [
            ([512usize, 512usize], [1..511, 1..511]),
            ([3840, 2160], [3..3837, 2..2158]),
            ([100, 9], [0..100, 2..7]),
            ([100, 9], [5..90, 0..9]),
        ] {
            let ls = Device::launches(&cands, &c, &global, &None, Some(&inner), 256);
            let strips: Vec<&Launch> = ls.iter().filter(|l| l.kernel == "k").collect();
            assert!(!strips.is_empty());
            let local = strips[0].local.clone();
            assert!(local.is_some());
            assert!(strips.iter().all(|l| l.local == local), "{ls:?}");
            // Their offsets go as arguments: every strip is a zero-offset launch for the driver.
            assert!(strips.iter().all(|l| l.origin), "{ls:?}");
        }
        // The sharpen stencil's strips (h8, a border of one): 8 columns wide, 1 row high.
        let ls = Device::launches(&cands, &c, &[512, 512], &None, Some(&[1..511, 1..511]), 256);
        assert_eq!(ls[1].local, Some(vec![8, 1]));
    }

    /// The iteration points each launch of a split plan computes (a work-item of the interior
    /// kernel covers its lanes), with the launch's rounding up to its work-group size: every
    /// point of the domain exactly once before rounding, and the rounding never reaching into
    /// the interior box.
    #[test]
    fn split_launches_tile_the_domain() {
        for (gx, gy) in [
            (1usize, 1usize),
            (5, 3),
            (17, 9),
            (64, 7),
            (33, 40),
            (64, 50),
        ] {
            for (px, py) in [(1, 1), (4, 1), (8, 2), (1, 4)] {
                for (lo, hi) in [(0usize, 0usize), (1, 1), (2, 3), (0, 5), (3, 0), (20, 19)] {
                    let c = Candidate {
                        label: Cow::Borrowed("split"),
                        kernel: Cow::Borrowed("s"),
                        per_item: [px, py],
                        split: true,
                        origin: false,
                        ..BASE
                    };
                    let global = [gx, gy];
                    let inner = [lo..gx.saturating_sub(hi), lo.min(gy)..gy.saturating_sub(hi)];
                    let cands = [BASE, c.clone()];
                    let ls = Device::launches(&cands, &c, &global, &None, Some(&inner), 256);
                    let mut hits = vec![vec![0; gy]; gx];
                    let mut interior = Vec::new();
                    for l in &ls {
                        let p = if l.kernel == "s" { [px, py] } else { [1, 1] };
                        let rounded: Vec<usize> = match &l.local {
                            Some(loc) => (0..2)
                                .map(|d| l.global[d].div_ceil(loc[d]) * loc[d])
                                .collect(),
                            None => l.global.clone(),
                        };
                        for ix in 0..rounded[0] {
                            for iy in 0..rounded[1] {
                                let extra = ix >= l.global[0] || iy >= l.global[1];
                                for (qx, qy) in
                                    (0..p[0]).flat_map(|a| (0..p[1]).map(move |b| (a, b)))
                                {
                                    let x = (l.offset[0] + ix) * p[0] + qx;
                                    let y = (l.offset[1] + iy) * p[1] + qy;
                                    if x >= gx || y >= gy {
                                        continue;
                                    }
                                    if l.kernel == "s" {
                                        assert!(
                                            !extra || l.ends,
                                            "the interior kernel checks its end"
                                        );
                                        if !extra {
                                            interior.push((x, y));
                                        }
                                    } else if extra {
                                        assert!(
                                            !interior.contains(&(x, y)),
                                            "{global:?} {inner:?} {ls:?}: rounding reaches ({x}, {y})"
                                        );
                                    }
                                    if !extra {
                                        hits[x][y] += 1;
                                    }
                                }
                            }
                        }
                    }
                    for (x, col) in hits.iter().enumerate() {
                        for (y, h) in col.iter().enumerate() {
                            assert_eq!(
                                *h,
                                1,
                                "{global:?} {:?} {inner:?}: ({x}, {y}) in {ls:?}",
                                [px, py]
                            );
                            if interior.contains(&(x, y)) {
                                assert!(inner[0].contains(&x) && inner[1].contains(&y));
                            }
                        }
                    }
                }
            }
        }
    }
}
