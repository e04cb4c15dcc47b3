//! A searched region's plan in a call: the search's steps this call makes within its budget
//! (what fits, what waits for later calls, which candidate's program builds in the
//! background), each a candidate timed with profiling events; the state saved in the memo and
//! the plan cache, the call's record and its `PARAC_LOG=plan` line.

use std::ops::Range;
use std::sync::PoisonError;
use std::time::{Duration, Instant};

use super::super::device::Device;
use super::super::launch::Arg;
use super::super::program::Program;
use super::costs::{AGAIN, expected, learn};
use super::report::RECORDS;
use super::search::{self, Cand, Search, Step};
use super::{Candidate, Choice, RegionPlans, cache, class, fmt_local};
use crate::Error;
use crate::PlanPolicy;

/// Timings made in this process.
static TIMINGS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The number of plans the searches of this process have timed so far (each candidate at a
/// work-group size, and each timing again), for a progress display (`parac tune`).
pub fn timings_made() -> u64 {
    TIMINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A region's search that takes longer than this in one call is an `info` event (a progress
/// line in the examples' and the CLI's log); shorter ones are `debug` events.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

impl Device {
    /// The best times of region `plans`' consumers for their `consumers` iteration points,
    /// summed, once each has one.
    fn consumer_best(
        &self,
        program: &Program,
        plans: &RegionPlans,
        consumers: &[Vec<usize>],
    ) -> Option<f64> {
        if plans.consumers.is_empty() || plans.consumers.len() != consumers.len() {
            return None;
        }
        let mut slot = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
        let memo = self.memo(program, &mut slot);
        let best = |region: &str, points: &[usize]| {
            memo.get(&(region.to_string(), class(points)))?
                .saved
                .search
                .best()
        };
        plans
            .consumers
            .iter()
            .zip(consumers)
            .map(|(region, points)| best(region, points))
            .sum()
    }

    /// Where region `plans`' search under `policy` weighs fused candidates against its
    /// consumer's best time and is not complete: whether the consumer has a time yet (`None`:
    /// no such search). A search whose consumer has none waits for it; the executor runs the
    /// region again once its consumer has run in the same call and has a time
    /// ([`crate::pipeline`]), so that the search goes on there rather than stall a later call.
    pub fn fused_search(
        &self,
        program: &Program,
        plans: &RegionPlans,
        policy: &PlanPolicy,
        (global, consumer): (&[usize], &[Vec<usize>]),
    ) -> Option<bool> {
        // Under `Stages`, as the region runs (`RegionPlans::stage_policy`).
        let staged = plans.stage_policy(policy);
        let policy = staged.as_ref().unwrap_or(policy);
        let searching = matches!(policy, PlanPolicy::Search | PlanPolicy::SearchBudget(_));
        if !searching || !plans.searchable || !plans.candidates.iter().any(|c| c.fuses) {
            return None;
        }
        let done = {
            let mut slot = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
            let memo = self.memo(program, &mut slot);
            memo.get(&(plans.region.to_string(), class(global)))
                .is_some_and(|e| e.saved.done)
        };
        (!done).then(|| self.consumer_best(program, plans, consumer).is_some())
    }

    /// The plan of a searched region for this call: a complete search's choice (from this
    /// process or the plan cache), else the search goes on, within `budget`, and the fastest
    /// plan so far runs. `None`: nothing measured could run (or another thread is searching
    /// this region and nothing is measured yet): the caller runs the model's plan.
    pub(super) fn searched(
        &self,
        program: &Program,
        plans: &RegionPlans,
        (global, consumer): (&[usize], &[Vec<usize>]),
        interior: Option<&[Range<usize>]>,
        args: &[Arg<'_>],
        budget: Duration,
    ) -> Result<Option<Choice>, Error> {
        let key = (plans.region.to_string(), class(global));
        let space = |c: &Candidate| c.space(global, consumer);
        // A fused candidate runs the consumer too: weighed as its time less the consumer's
        // best (unknown until the consumer has run once: the step waits for a later call).
        let consumer_best = || self.consumer_best(program, plans, consumer);
        let cands = &plans.candidates[..];
        let known = |c: &Choice| cands.iter().any(|x| x.label == c.label && self.feasible(x));
        let carry;
        let mut search = {
            let mut slot = program.plans.lock().unwrap_or_else(PoisonError::into_inner);
            let memo = self.memo(program, &mut slot);
            let e = memo.entry(key.clone()).or_default();
            // A search completed over fewer candidates (an older compiler's, same program)
            // goes on with the new ones.
            let timed = |c: &Candidate| e.saved.search.measures.iter().any(|m| m.label == c.label);
            if e.saved.done && !cands.iter().all(|c| !self.feasible(c) || timed(c)) {
                e.saved.done = false;
            }
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
                    .or_else(|| self.default_local(&cands[i], space(&cands[i]))),
                free: cands[i].local.is_none() && !cands[i].tree,
                weighed: cands[i].fuses,
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
        if fresh && let Some(step @ Step::Time { .. }) = search.next(&cs, &sizes) {
            let (label, local, _, c, kind) = describe_step(&step, &search);
            let (ms, samples) = match c {
                Some(c) => {
                    let t = Instant::now();
                    if self.own_program(program, c).is_ok() && kind == 0 {
                        learn(0, t.elapsed().as_secs_f64());
                    }
                    first = self.finish();
                    let less = match c.fuses {
                        true => consumer_best().unwrap_or(0.0),
                        false => 0.0,
                    };
                    let (ms, n) =
                        self.time(program, cands, c, space(c), &local, interior, args, None);
                    (ms.map(|t| t - less), n)
                }
                None => (None, 0),
            };
            search.record(&step, &label, ms, samples);
            steps += 1;
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
                if kind == 0
                    && budget != Duration::MAX
                    && let Some(c) = c.filter(|c| self.build_later(program, c))
                {
                    building = Some(c.label.to_string());
                    return Ok(false);
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
                // What a fused candidate's time is weighed less.
                let less = match c {
                    Some(c) if c.fuses => match consumer_best() {
                        Some(l) => l,
                        None => {
                            waits = Some(expected(kind));
                            return Ok(false);
                        }
                    },
                    _ => 0.0,
                };
                let t = Instant::now();
                let (ms, samples) = match c {
                    Some(c) => {
                        let lead = leader.map(|l| l + less);
                        let (ms, n) =
                            self.time(program, cands, c, space(c), &local, interior, args, lead);
                        (ms.map(|t| t - less), n)
                    }
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
        // An in-place candidate on copies of its buffers (`copies`).
        let in_place = !c.then.is_empty();
        let copies = match in_place {
            true => match self.copies_of(args) {
                Ok(c) => c,
                Err(_) => return (None, 0),
            },
            false => Vec::new(),
        };
        let copied = super::copies::with_copies(args, &copies);
        let args = if in_place { &copied[..] } else { args };
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
            // Per time step: a time band runs several.
            Some(end.saturating_sub(start) as f64 / 1e6 / c.steps.max(1) as f64)
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
}

/// The work-group sizes the search's second step tries, for `dims` dimensions, fitted to the
/// device's largest work-group. A row of 1024 work-items reads and writes long runs of each
/// row: on PoCL (a CPU device) a copy of 4802x6408 `u16` in 1024x1 work-groups took 2.4 ms
/// against 5.1 at 32x4, blur's `bx` 4.7-5.3 against 6.1-6.2 (docs/benchmarks.md); a GPU whose
/// work-groups hold 1024 times it too.
fn group_sizes(dims: usize, max: usize) -> Vec<Vec<usize>> {
    let sizes: Vec<Vec<usize>> = if dims >= 2 {
        vec![
            vec![32, 4],
            vec![64, 2],
            vec![16, 16],
            vec![128, 1],
            vec![1024, 1],
        ]
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

#[cfg(test)]
mod tests {
    use super::group_sizes;

    #[test]
    fn work_group_sizes_fit_the_device() {
        assert!(group_sizes(2, 4096).contains(&vec![1024, 1]));
        let small = group_sizes(2, 256);
        assert!(!small.contains(&vec![1024, 1]) && small.contains(&vec![128, 1]));
        assert!(group_sizes(3, 1024).iter().all(|l| l.len() == 3));
        assert_eq!(group_sizes(1, 64), vec![vec![64]]);
    }
}
