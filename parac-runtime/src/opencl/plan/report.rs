//! What searches report: the [`PlanRecord`] of each call's search steps (kept for
//! [`plan_records`]), and the `PARAC_LOG=plan` lines of a search step and of a plan from the
//! plan cache.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::super::device::Device;
use super::super::program::Program;
use super::search::{Cand, Search};
use super::{PlanRecord, RegionPlans, cache, fmt_local, search};

pub(super) static RECORDS: Mutex<Vec<PlanRecord>> = Mutex::new(Vec::new());

/// The searches run in this process so far, oldest first: for each call's search steps, the
/// region, its size class, the plan chosen and every time measured (the benches print them).
/// Empty on the CPU path, which has no plans to search.
///
/// # Examples
///
/// ```
/// use parac_runtime::opencl::{describe_plan, plan_records};
///
/// for record in plan_records() {
///     println!("{}", describe_plan(&record));
/// }
/// ```
pub fn plan_records() -> Vec<PlanRecord> {
    RECORDS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

impl Device {
    /// The record of a search's state after a call's steps.
    pub(super) fn record(
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
    pub(super) fn describe_search(
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
    pub(super) fn describe_cached(
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
