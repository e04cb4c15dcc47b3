//! Choosing a region's plan: the candidates the compiler emitted (baseline first, then the
//! optimization model's ranking), pruned by the device's limits, picked by the policy
//! ([`PlanPolicy`]); under [`PlanPolicy::Search`], timed with profiling events on the first call
//! for a (region, size class), with the fastest kept per program in memory and in a plan cache
//! file next to the program binaries
//! (`<cache>/parac/plans/<program key>.s<search version>.plans`), so later processes skip the
//! search.
//!
//! `PARAC_LOG=plan` prints one line per search: the choice and the measured time of every other
//! candidate; `PARAC_LOG=launch` one line per enqueue of a region, with its kernel time (it waits
//! for each). [`plan_records`] returns the same records to programs (the benches print them).

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::{Mutex, PoisonError};

use super::device::Device;
use super::launch::Arg;
use super::partition::strips;
use super::program::Program;
use crate::{Error, PlanPolicy};
use opencl3::event::Event;
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
    /// line; the baseline never depends on it).
    pub source: Option<Cow<'static, str>>,
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
}

/// The candidates of one region.
#[derive(Clone, Debug)]
pub struct RegionPlans {
    /// The region's name (unique in its program with the kernel names).
    pub region: Cow<'static, str>,
    /// Baseline first, then the model's ranking.
    pub candidates: Cow<'static, [Candidate]>,
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
pub struct PlanRecord {
    /// The program (pipeline) name.
    pub program: String,
    /// The region.
    pub region: String,
    /// The size class searched (global size rounded up to powers of two).
    pub class: String,
    /// The chosen label and work-group size.
    pub chosen: (String, Option<Vec<usize>>),
    /// Every timing: label, work-group size, milliseconds (best of the timed runs).
    pub times: Vec<(String, Option<Vec<usize>>, f64)>,
}

static RECORDS: Mutex<Vec<PlanRecord>> = Mutex::new(Vec::new());

/// Candidate programs that failed to build, by (device, source) hash: their error.
static BROKEN: Mutex<BTreeMap<u64, String>> = Mutex::new(BTreeMap::new());

/// The searches run in this process so far, oldest first.
pub fn plan_records() -> Vec<PlanRecord> {
    RECORDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// Whether `PARAC_LOG` (a comma-separated list) names `what`.
fn log(what: &str) -> bool {
    std::env::var("PARAC_LOG").is_ok_and(|v| v.split(',').any(|p| p.trim() == what))
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

/// The work-group size of a border strip of `global` work-items lying outside the interior box
/// along dimension `own`: whole groups along `own` (a divisor of the strip's width there, so the
/// rounded-up launch stays outside the box), as many work-items as fit along the others (the
/// baseline kernel recomputes, identically, what the rounding adds there, or returns beyond the
/// region). Groups of a few work-items cost more to schedule than they compute.
fn strip_local(global: &[usize], own: usize, max: usize) -> Vec<usize> {
    let max = max.clamp(1, 256);
    let mut l = vec![1; global.len()];
    l[own] = (1..=global[own].min(16).min(max))
        .rev()
        .find(|x| global[own] % x == 0)
        .unwrap_or(1);
    let mut budget = max / l[own];
    for (d, g) in global.iter().enumerate() {
        if d != own {
            l[d] = g.next_power_of_two().min(budget).max(1);
            budget = (budget / l[d]).max(1);
        }
    }
    l
}

/// Groups of a tree reduction over `rows` rows.
fn tree_groups(rows: usize) -> usize {
    rows.clamp(1, 128)
}

/// The version of the search procedure, part of the plan files' names: a change to what the
/// search tries (candidates' launch shapes, work-group sizes) makes the choices that older
/// searches stored stale, so they are not read.
const SEARCH_VERSION: u32 = 3;

/// How many of the fastest (plan, work-group) pairs the search times a second time.
const FINAL_ROUND: usize = 3;

impl Device {
    fn plan_file(&self, program: &Program) -> Option<PathBuf> {
        let dir = self.program_cache_dir()?;
        let parent = dir.parent()?.join("plans");
        Some(parent.join(format!("{}.s{SEARCH_VERSION}.plans", program.key_hash)))
    }

    /// The program holding candidate `c`'s kernel when it has its own (`None`: the region's
    /// `base`), built on first use and cached as any program. A build that fails is logged
    /// (`PARAC_LOG=plan`) and remembered for the process, so the candidate is dropped at once
    /// on later calls.
    fn own_program(&self, base: &Program, c: &Candidate) -> Result<Option<Arc<Program>>, Error> {
        let Some(src) = &c.source else {
            return Ok(None);
        };
        let name = format!("{}__{}", base.name(), c.label.replace('+', "_"));
        let key = {
            let mut h = DefaultHasher::new();
            (self as *const Device as usize).hash(&mut h);
            src.hash(&mut h);
            h.finish()
        };
        let mut broken = BROKEN.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(log) = broken.get(&key) {
            return Err(Error::Build {
                program: name,
                log: log.clone(),
                source_listing: String::new(),
            });
        }
        drop(broken);
        match self.program(&name, src, "") {
            Ok(p) => Ok(Some(p)),
            Err(e) => {
                if log("plan") {
                    eprintln!("parac plan {name}: dropped, its program failed to build: {e}");
                }
                broken = BROKEN.lock().unwrap_or_else(PoisonError::into_inner);
                broken.insert(key, e.to_string());
                Err(e)
            }
        }
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
            // No interior: the baseline runs everything.
            return vec![whole(base, &None)];
        };
        let mut out = vec![Launch {
            kernel: &c.kernel,
            own: c.source.is_some(),
            offset: inner.iter().map(|x| x.0).collect(),
            global: inner.iter().map(|x| x.1 - x.0).collect(),
            local: local.clone(),
            ends: true,
        }];
        let boxed: Vec<Range<usize>> = inner
            .iter()
            .enumerate()
            .map(|(d, (o, e))| {
                let p = *c.per_item.get(d).unwrap_or(&1);
                o * p..e * p
            })
            .collect();
        for (own, s) in strips(global, &boxed) {
            let g: Vec<usize> = s.iter().map(|r| r.len()).collect();
            out.push(Launch {
                kernel: &base.kernel,
                own: false,
                offset: s.iter().map(|r| r.start).collect(),
                local: Some(strip_local(&g, own, max_group)),
                global: g,
                ends: false,
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
            let offset = l.offset.iter().any(|o| *o > 0).then_some(&l.offset[..]);
            let prog = match own {
                Some(p) if l.own => p,
                _ => program,
            };
            let e = self.launch_event(
                prog,
                l.kernel,
                &l.global,
                l.local.as_deref(),
                &a,
                offset,
                exact,
            )?;
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
        let cands = &plans.candidates[..];
        let by_label = |l: &str| cands.iter().position(|c| c.label == l && self.feasible(c));
        // The model's first-ranked candidate that fits the device and builds.
        let model = || {
            (1..cands.len())
                .find(|i| {
                    self.feasible(&cands[*i]) && self.own_program(program, &cands[*i]).is_ok()
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
            PlanPolicy::Search if !plans.searchable || cands.len() == 1 => at_default(model()),
            PlanPolicy::Search => self.searched(program, plans, global, interior, args)?,
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
        if log("launch") {
            // Blocking: each enqueue's kernel time.
            for (l, e) in ls.iter().zip(&events) {
                let ms = e.wait().ok().and_then(|_| {
                    let (s, t) = (
                        e.profiling_command_start().ok()?,
                        e.profiling_command_end().ok()?,
                    );
                    Some(t.saturating_sub(s) as f64 / 1e6)
                });
                eprintln!(
                    "parac launch {}/{} {} offset {:?} global {:?} local {}: {} ms",
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

    /// The remembered choice for this region and size class, or a new search.
    fn searched(
        &self,
        program: &Program,
        plans: &RegionPlans,
        global: &[usize],
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
    ) -> Result<Choice, Error> {
        let key = (plans.region.to_string(), class(global));
        {
            let mut memo = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
            let memo = memo.get_or_insert_with(|| self.load_plans(program));
            if let Some(c) = memo.get(&key) {
                if plans.candidates.iter().any(|x| x.label == c.label) {
                    return Ok(c.clone());
                }
            }
        }
        let (choice, times) = self.search(program, plans, global, interior, args)?;
        let record = PlanRecord {
            program: program.name().to_string(),
            region: plans.region.to_string(),
            class: key.1.clone(),
            chosen: (choice.label.clone(), choice.local.clone()),
            times,
        };
        if log("plan") {
            eprintln!("{}", describe(&record));
        }
        let mut memo = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
        let memo = memo.get_or_insert_with(HashMap::new);
        memo.insert(key, choice.clone());
        self.store_plans(program, memo, &record);
        RECORDS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(record);
        Ok(choice)
    }

    /// Times one run of a candidate (best of three after a warm-up), in milliseconds, from the
    /// start of its first enqueue to the end of its last; `None` if it cannot run with this
    /// work-group size.
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
    ) -> Option<f64> {
        let ls = Self::launches(
            cands,
            c,
            global,
            local,
            interior,
            self.info().max_work_group_size,
        );
        // A candidate whose program does not build is not timed.
        let own = self.own_program(program, c).ok()?;
        let run = || {
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
        run()?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            best = best.min(run()?);
        }
        best.is_finite().then_some(best)
    }

    /// The work-group size a candidate whose kernel fixes none is launched with outside the
    /// search's second round: the driver's (`None`) where the work-items' first dimension is a
    /// multiple of 16, else 32x4 (64 in 1-D), the global size rounded up to it. A driver that
    /// needs the global size to be a multiple of the work-group size (PoCL, OpenCL 1.2) picks a
    /// divisor of it, as small as 2 for blur's 6406 columns (2 x 3203), which starves its
    /// work-group vectorizer: the baseline kernel of blur's first stage took 60 ms with it and
    /// 5.7 ms at 32x4 (the kernels check their bounds, so rounding up is free). The baseline
    /// policy keeps the driver's size: it is the plain launch the plans are measured against.
    fn default_local(&self, c: &Candidate, global: &[usize]) -> Option<Vec<usize>> {
        if c.local.is_some() || c.tree || global.is_empty() {
            return None;
        }
        let (g, _) = Self::shape(c, global, &None);
        if g[0] % 16 == 0 {
            return None;
        }
        let mut l = if g.len() >= 2 { vec![32, 4] } else { vec![64] };
        l.resize(g.len(), 1);
        (l.iter().product::<usize>() <= self.info().max_work_group_size).then_some(l)
    }

    /// Times every feasible candidate with its default work-group size ([`default_local`]),
    /// then the two fastest of those whose kernel fixes none with a few other sizes, then the
    /// three fastest pairs again; the fastest wins.
    ///
    /// [`default_local`]: Device::default_local
    #[allow(clippy::type_complexity)]
    fn search(
        &self,
        program: &Program,
        plans: &RegionPlans,
        global: &[usize],
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
    ) -> Result<(Choice, Vec<(String, Option<Vec<usize>>, f64)>), Error> {
        self.finish()?;
        let mut times: Vec<(String, Option<Vec<usize>>, f64)> = Vec::new();
        // The candidates whose work-group size is free, with the size and time of the first
        // round, for the second.
        let mut free: Vec<(&Candidate, Option<Vec<usize>>, f64)> = Vec::new();
        for c in plans.candidates.iter().filter(|c| self.feasible(c)) {
            let local = c
                .local
                .as_deref()
                .map(<[usize]>::to_vec)
                .or_else(|| self.default_local(c, global));
            let cands = &plans.candidates[..];
            if let Some(t) = self.time(program, cands, c, global, &local, interior, args) {
                if c.local.is_none() && !c.tree {
                    free.push((c, local.clone(), t));
                }
                times.push((c.label.to_string(), local, t));
            }
        }
        free.sort_by(|a, b| a.2.total_cmp(&b.2));
        let max = self.info().max_work_group_size;
        let sizes: Vec<Vec<usize>> = if global.len() >= 2 {
            vec![vec![32, 4], vec![64, 2], vec![16, 16], vec![128, 1]]
        } else {
            vec![vec![64], vec![128], vec![256]]
        };
        for (c, first, _) in free.into_iter().take(2) {
            for l in sizes.iter().filter(|l| l.iter().product::<usize>() <= max) {
                let mut l = l.clone();
                l.resize(global.len(), 1);
                let local = Some(l);
                if local == first {
                    continue;
                }
                let cands = &plans.candidates[..];
                if let Some(t) = self.time(program, cands, c, global, &local, interior, args) {
                    times.push((c.label.to_string(), local, t));
                }
            }
        }
        // A final round: the three fastest (plan, work-group) pairs timed again, each keeping
        // the better of its two measurements. On a shared machine a burst of other work can
        // slow all three runs of one measurement; measured again a few hundred milliseconds
        // later, a plan the burst hid gets its time back.
        let mut order: Vec<usize> = (0..times.len()).collect();
        order.sort_by(|a, b| times[*a].2.total_cmp(&times[*b].2));
        for i in order.into_iter().take(FINAL_ROUND) {
            let (label, local, _) = times[i].clone();
            let Some(c) = plans.candidates.iter().find(|c| c.label == label) else {
                continue;
            };
            let cands = &plans.candidates[..];
            if let Some(t) = self.time(program, cands, c, global, &local, interior, args) {
                times[i].2 = times[i].2.min(t);
            }
        }
        let best = times
            .iter()
            .min_by(|a, b| a.2.total_cmp(&b.2))
            .map(|t| Choice {
                label: t.0.clone(),
                local: t.1.clone(),
            })
            .unwrap_or(Choice {
                label: plans.candidates[0].label.to_string(),
                local: None,
            });
        Ok((best, times))
    }

    fn load_plans(&self, program: &Program) -> HashMap<(String, String), Choice> {
        let mut out = HashMap::new();
        let Some(text) = self
            .plan_file(program)
            .and_then(|p| std::fs::read_to_string(p).ok())
        else {
            return out;
        };
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let f: Vec<&str> = line.split('\t').collect();
            if let [region, class, label, local, ..] = f.as_slice() {
                if let Some(local) = parse_local(local) {
                    out.insert(
                        (region.to_string(), class.to_string()),
                        Choice {
                            label: label.to_string(),
                            local,
                        },
                    );
                }
            }
        }
        out
    }

    /// Rewrites the plan file (a failure to write is no error: the next process searches again).
    fn store_plans(
        &self,
        program: &Program,
        memo: &HashMap<(String, String), Choice>,
        last: &PlanRecord,
    ) {
        let Some(path) = self.plan_file(program) else {
            return;
        };
        let mut text = format!(
            "# parac plans of `{}` on {} ({}): region, size class, plan, work-group size\n# last search: {}\n",
            program.name(),
            self.info().name,
            self.info().driver_version,
            describe(last)
        );
        let mut keys: Vec<_> = memo.keys().collect();
        keys.sort();
        for k in keys {
            let c = &memo[k];
            let _ = writeln!(
                text,
                "{}\t{}\t{}\t{}",
                k.0,
                k.1,
                c.label,
                fmt_local(&c.local)
            );
        }
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        if std::fs::write(&tmp, text).is_ok() {
            let _ = std::fs::rename(&tmp, &path);
        }
    }
}

/// One line: `parac plan <program>/<region> [class]: <label> @<local> <ms> ms; others: ...`.
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
    };

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
