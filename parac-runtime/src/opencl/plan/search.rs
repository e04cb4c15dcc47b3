//! The plan search as a state that grows one measurement at a time, so that a call can stop it
//! when its budget is spent and a later call (or process: the state is saved in the plan cache)
//! can go on where it stopped. What the search times next depends only on what it has measured
//! ([`Search::next`]), never on the clock, so a search continued over many calls makes the same
//! steps as one that runs to its end at once.
//!
//! The steps, in order:
//! 1. every usable candidate once at its default work-group size, in the optimization model's
//!    order (its first choice first, the baseline last): the budget cuts the tail of the
//!    model's ranking, not its head;
//! 2. the [`GROUP_PLANS`] fastest of those whose kernel fixes no work-group size, at a few other
//!    work-group sizes;
//! 3. the [`FINAL_ROUND`] fastest (plan, work-group) pairs timed again, each keeping the better
//!    of its two measurements (a burst of other work on a shared machine can hide a plan in one
//!    measurement), then every fused plan that ran (its time is weighed less its consumers'
//!    best, a difference of two larger times: unsharp's chain kernel, about 11 ms less 10 ms
//!    apart, was timed 6 ms behind in one burst, 0.8 ms ahead in other runs).
//!
//! Timing is adaptive ([`keep_sampling`]): after a warm-up run, one sample; a candidate whose
//! sample is more than [`DROP_FACTOR`] times the leader's best is dropped there, the others take
//! [`SAMPLES`] samples and keep their best. The leader is never dropped: no time is more than
//! [`DROP_FACTOR`] times behind itself, and the first measurement has no leader to lose to.

use std::time::Duration;

/// Which step of the search a measurement belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Round {
    /// Step 1: a candidate at its default work-group size.
    First,
    /// Step 2: a candidate at another work-group size.
    Group,
}

/// One measurement: a candidate (by label) at a work-group size.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Measure {
    pub(crate) label: String,
    pub(crate) local: Option<Vec<usize>>,
    pub(crate) round: Round,
    /// The best time, in milliseconds; `None`: it could not run (its program did not build, or
    /// the driver refused the launch).
    pub(crate) ms: Option<f64>,
    /// How many samples it took: 1 when it was dropped after its first sample.
    pub(crate) samples: u32,
    /// Timed again in step 3.
    pub(crate) again: bool,
}

/// A candidate as the search sees it, in the search's order (see [`order`]).
#[derive(Clone, Debug)]
pub(crate) struct Cand {
    /// Its index among the region's candidates.
    pub(crate) index: usize,
    pub(crate) label: String,
    /// Its work-group size in step 1.
    pub(crate) default: Option<Vec<usize>>,
    /// Its kernel fixes no work-group size (step 2 applies).
    pub(crate) free: bool,
    /// A fused plan, its time weighed less its consumers' best (step 3 times it again).
    pub(crate) weighed: bool,
}

/// What to time next.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Step {
    /// Candidate `index` (of the region's) at `local`.
    Time {
        index: usize,
        local: Option<Vec<usize>>,
        round: Round,
    },
    /// Measurement `.0` again (step 3).
    Again(usize),
}

/// The state of one region's search for one size class.
#[derive(Clone, Debug, Default)]
pub(crate) struct Search {
    pub(crate) measures: Vec<Measure>,
}

/// How many of the fastest plans whose work-group size is free step 2 tries at other sizes.
pub(crate) const GROUP_PLANS: usize = 2;

/// How many of the fastest (plan, work-group) pairs step 3 times again.
pub(crate) const FINAL_ROUND: usize = 3;

/// Samples per measurement (after a warm-up run) for a candidate that is not dropped.
pub(crate) const SAMPLES: u32 = 3;

/// A first sample more than this many times the leader's best drops the candidate.
pub(crate) const DROP_FACTOR: f64 = 2.0;

/// The budget when `PARAC_SEARCH_BUDGET` is not set: timing work per region and call. Small,
/// for the first call: on PoCL a candidate's build costs 0.3-1 s, so with 0.1 s the first call
/// builds and times the model's plan only (0.7-3.0 s for the four pipelines at their bench
/// sizes, against 1.3-5.2 s with 0.5 s: docs/benchmarks.md), and later calls build the other
/// candidates about once per (a build's cost / 0.1 s) calls each.
pub(crate) const DEFAULT_BUDGET: Duration = Duration::from_millis(100);

/// Whether a candidate whose first sample took `first` ms takes its other samples, against the
/// best time measured so far (`None`: nothing measured yet).
pub(crate) fn keep_sampling(first: f64, leader: Option<f64>) -> bool {
    leader.is_none_or(|l| first <= DROP_FACTOR * l)
}

/// The model's order of a region's `n` candidates (baseline at index 0): `cpu`, the ranking the
/// compiler made for a device that is not a GPU where given and not empty, else the GPU's (the
/// candidates after the baseline, then the baseline).
pub(crate) fn order(n: usize, cpu: Option<&[usize]>) -> Vec<usize> {
    match cpu {
        Some(o) if !o.is_empty() => o.iter().copied().filter(|i| *i < n).collect(),
        _ => (1..n).chain(0..n.min(1)).collect(),
    }
}

impl Search {
    /// The next step, or `None` when the search is complete. `cands` in the search's order;
    /// `sizes`: the work-group sizes of step 2 (already fitted to the device and the region's
    /// dimensions).
    pub(crate) fn next(&self, cands: &[Cand], sizes: &[Vec<usize>]) -> Option<Step> {
        // Step 1.
        for c in cands {
            if !self
                .measures
                .iter()
                .any(|m| m.round == Round::First && m.label == c.label)
            {
                return Some(Step::Time {
                    index: c.index,
                    local: c.default.clone(),
                    round: Round::First,
                });
            }
        }
        // Step 2: the fastest free plans of step 1, fastest first.
        let mut firsts: Vec<(&Cand, &Measure, f64)> = cands
            .iter()
            .filter(|c| c.free)
            .filter_map(|c| {
                let m = self
                    .measures
                    .iter()
                    .find(|m| m.round == Round::First && m.label == c.label)?;
                Some((c, m, m.ms?))
            })
            .collect();
        firsts.sort_by(|a, b| a.2.total_cmp(&b.2));
        for (c, first, _) in firsts.into_iter().take(GROUP_PLANS) {
            for l in sizes {
                let local = Some(l.clone());
                if local == first.local {
                    continue;
                }
                if !self
                    .measures
                    .iter()
                    .any(|m| m.label == c.label && m.local == local)
                {
                    return Some(Step::Time {
                        index: c.index,
                        local,
                        round: Round::Group,
                    });
                }
            }
        }
        // Step 3. Timing again only lowers a time, so the fastest pairs stay the fastest and
        // this ends; then the fused plans, each once.
        let fastest = self.fastest();
        let weighed = |i: &usize| {
            cands
                .iter()
                .any(|c| c.weighed && c.label == self.measures[*i].label)
        };
        let fused = fastest.iter().copied().filter(weighed);
        fastest
            .iter()
            .copied()
            .take(FINAL_ROUND)
            .chain(fused)
            .find(|i| !self.measures[*i].again)
            .map(Step::Again)
    }

    /// The measurements that ran, fastest first (ties: the earlier first).
    fn fastest(&self) -> Vec<usize> {
        let mut ok: Vec<usize> = (0..self.measures.len())
            .filter(|i| self.measures[*i].ms.is_some())
            .collect();
        ok.sort_by(|a, b| {
            let (x, y) = (self.measures[*a].ms, self.measures[*b].ms);
            x.unwrap_or(f64::INFINITY)
                .total_cmp(&y.unwrap_or(f64::INFINITY))
                .then(a.cmp(b))
        });
        ok
    }

    /// The fastest measurement so far.
    pub(crate) fn leader(&self) -> Option<&Measure> {
        self.fastest().first().map(|i| &self.measures[*i])
    }

    /// The leader's time.
    pub(crate) fn best(&self) -> Option<f64> {
        self.leader().and_then(|m| m.ms)
    }

    /// Records step `step`'s result: `ms` and `samples` as [`Measure`]'s. For [`Step::Again`],
    /// the measurement keeps the better of its two times.
    pub(crate) fn record(&mut self, step: &Step, label: &str, ms: Option<f64>, samples: u32) {
        match step {
            Step::Time { local, round, .. } => self.measures.push(Measure {
                label: label.to_string(),
                local: local.clone(),
                round: *round,
                ms,
                samples,
                again: false,
            }),
            Step::Again(i) => {
                let m = &mut self.measures[*i];
                m.again = true;
                if let Some(t) = ms {
                    m.ms = Some(m.ms.map_or(t, |old| old.min(t)));
                    m.samples += samples;
                }
            }
        }
    }

    /// How many (plan, work-group) pairs the whole search times, given what it measured so
    /// far: exact once step 1 is done, an estimate before (the pairs of step 2 depend on which
    /// plans step 1 finds fastest).
    pub(crate) fn planned(&self, cands: &[Cand], sizes: &[Vec<usize>]) -> usize {
        let mut s = self.clone();
        let mut n = self.measures.len();
        while let Some(step) = s.next(cands, sizes) {
            let label = match &step {
                Step::Time { index, .. } => {
                    n += 1;
                    cands
                        .iter()
                        .find(|c| c.index == *index)
                        .map_or(String::new(), |c| c.label.clone())
                }
                Step::Again(i) => s.measures[*i].label.clone(),
            };
            // What is not measured yet counts as equal, whatever its time will be.
            let ms = match &step {
                Step::Time { .. } => Some(f64::MAX),
                Step::Again(i) => s.measures[*i].ms,
            };
            s.record(&step, &label, ms, 1);
        }
        n
    }
}

/// A budget for messages: `0.5 s`, `unbounded`.
pub(crate) fn fmt_budget(d: Duration) -> String {
    if d == Duration::MAX {
        "unbounded".to_string()
    } else {
        format!("{} s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three candidates: the baseline (index 0) and two ranked ones; the second fixes its
    /// work-group size.
    fn cands() -> Vec<Cand> {
        let c = |index: usize, label: &str, free: bool| Cand {
            index,
            label: label.to_string(),
            default: None,
            free,
            weighed: false,
        };
        let all = [
            c(0, "baseline", true),
            c(1, "h8", true),
            c(2, "tree64", false),
        ];
        order(3, None).into_iter().map(|i| all[i].clone()).collect()
    }

    fn sizes() -> Vec<Vec<usize>> {
        vec![vec![32, 4], vec![64, 2]]
    }

    /// Runs the search to its end with the times `time(label, local)` gives (one sample each,
    /// for the test); the steps taken.
    fn run(s: &mut Search, time: impl Fn(&str, &Option<Vec<usize>>) -> Option<f64>) -> Vec<Step> {
        let cs = cands();
        let mut steps = Vec::new();
        while let Some(step) = s.next(&cs, &sizes()) {
            let (label, local) = match &step {
                Step::Time { index, local, .. } => (
                    cs.iter().find(|c| c.index == *index).unwrap().label.clone(),
                    local.clone(),
                ),
                Step::Again(i) => (s.measures[*i].label.clone(), s.measures[*i].local.clone()),
            };
            s.record(&step, &label, time(&label, &local), 1);
            steps.push(step);
            assert!(steps.len() < 100, "the search ends");
        }
        steps
    }

    #[test]
    fn the_model_first_the_baseline_last() {
        assert_eq!(order(4, None), vec![1, 2, 3, 0]);
        assert_eq!(order(4, Some(&[])), vec![1, 2, 3, 0]);
        assert_eq!(order(1, None), vec![0]);
        // The compiler's ranking for a CPU device: tree reductions after the baseline.
        assert_eq!(order(3, Some(&[0, 1, 2])), vec![0, 1, 2]);
        assert_eq!(order(4, Some(&[2, 3, 0, 1])), vec![2, 3, 0, 1]);
        let s = Search::default();
        assert_eq!(
            s.next(&cands(), &sizes()),
            Some(Step::Time {
                index: 1,
                local: None,
                round: Round::First
            })
        );
    }

    #[test]
    fn the_search_ends_on_the_fastest() {
        let mut s = Search::default();
        let steps = run(&mut s, |l, wg| match (l, wg.as_deref()) {
            ("baseline", None) => Some(10.0),
            ("baseline", Some([64, 2])) => Some(3.0),
            ("baseline", _) => Some(9.0),
            ("h8", _) => Some(4.0),
            ("tree64", _) => None,
            _ => unreachable!(),
        });
        // 3 firsts, 2 free plans x 2 sizes, 3 again.
        assert_eq!(steps.len(), 3 + 4 + 3, "{steps:?}");
        let lead = s.leader().unwrap();
        assert_eq!(
            (lead.label.as_str(), lead.local.clone()),
            ("baseline", Some(vec![64, 2]))
        );
        // The one that failed is never the leader, nor timed again.
        assert!(s.measures.iter().any(|m| m.label == "tree64" && !m.again));
    }

    #[test]
    fn a_fused_plan_is_timed_again_wherever_it_ranks() {
        let mut cs = cands();
        let fused = Cand {
            index: 3,
            label: "fuseitem256x8".to_string(),
            default: Some(vec![1, 1]),
            free: false,
            weighed: true,
        };
        cs.insert(0, fused);
        let mut s = Search::default();
        let mut steps = Vec::new();
        while let Some(step) = s.next(&cs, &sizes()) {
            let label = match &step {
                Step::Time { index, .. } => {
                    cs.iter().find(|c| c.index == *index).unwrap().label.clone()
                }
                Step::Again(i) => s.measures[*i].label.clone(),
            };
            // The fused plan's first timing is taken in a burst (6 ms), its second not.
            let again = matches!(step, Step::Again(_));
            let ms = match label.as_str() {
                "fuseitem256x8" if again => 0.8,
                "fuseitem256x8" => 6.0,
                "baseline" => 3.0,
                "h8" => 4.0,
                _ => 5.0,
            };
            s.record(&step, &label, Some(ms), 1);
            steps.push(step);
            assert!(steps.len() < 100, "the search ends");
        }
        // Behind three others at first, timed again, and the leader.
        assert_eq!(s.leader().unwrap().label, "fuseitem256x8");
        let agains = steps.iter().filter(|s| matches!(s, Step::Again(_))).count();
        assert_eq!(agains, 4, "{steps:?}");
    }

    /// Stopped after any number of steps and continued, the search makes the same steps and
    /// ends on the same plan as one run to its end.
    #[test]
    fn a_continued_search_is_the_same_search() {
        let time = |l: &str, wg: &Option<Vec<usize>>| {
            Some(l.len() as f64 + wg.as_ref().map_or(0.5, |w| w[0] as f64 / 100.0))
        };
        let mut whole = Search::default();
        let all = run(&mut whole, time);
        for stop in 0..all.len() {
            let mut s = Search::default();
            let cs = cands();
            let mut steps = Vec::new();
            for _ in 0..stop {
                let step = s.next(&cs, &sizes()).unwrap();
                let (label, local) = match &step {
                    Step::Time { index, local, .. } => (
                        cs[cs.iter().position(|c| c.index == *index).unwrap()]
                            .label
                            .clone(),
                        local.clone(),
                    ),
                    Step::Again(i) => (s.measures[*i].label.clone(), s.measures[*i].local.clone()),
                };
                s.record(&step, &label, time(&label, &local), 1);
                steps.push(step);
            }
            // As if saved and loaded: only the measurements survive.
            let mut later = Search {
                measures: s.measures.clone(),
            };
            steps.extend(run(&mut later, time));
            assert_eq!(steps, all, "stopped after {stop}");
            assert_eq!(later.leader(), whole.leader());
        }
    }

    #[test]
    fn the_leader_is_never_dropped() {
        // Nothing measured: the first candidate takes every sample.
        assert!(keep_sampling(1e9, None));
        // A time as good as the leader's, or better, or a little behind: kept.
        for t in [0.5, 1.0, 1.9, 2.0] {
            assert!(keep_sampling(t, Some(1.0)), "{t}");
        }
        // Far behind: dropped.
        assert!(!keep_sampling(2.01, Some(1.0)));
        assert!(!keep_sampling(50.0, Some(1.0)));
        // Whatever the leader's time, a first sample equal to it is kept.
        for lead in [0.001, 1.0, 1e6] {
            assert!(keep_sampling(lead, Some(lead)));
        }
    }

    #[test]
    fn again_keeps_the_better_time() {
        let mut s = Search::default();
        let t = Step::Time {
            index: 1,
            local: None,
            round: Round::First,
        };
        s.record(&t, "h8", Some(5.0), 3);
        s.record(&Step::Again(0), "h8", Some(7.0), 3);
        assert_eq!(s.measures[0].ms, Some(5.0));
        assert!(s.measures[0].again);
        let mut s2 = Search::default();
        s2.record(&t, "h8", Some(5.0), 3);
        s2.record(&Step::Again(0), "h8", Some(4.0), 3);
        assert_eq!(s2.best(), Some(4.0));
    }

    #[test]
    fn planned_counts_every_pair() {
        let s = Search::default();
        assert_eq!(s.planned(&cands(), &sizes()), 3 + 4);
    }

    #[test]
    fn budgets_parse() {
        use crate::config::parse_budget;
        assert_eq!(parse_budget("0"), Some(Duration::ZERO));
        assert_eq!(parse_budget(" 0.25 "), Some(Duration::from_millis(250)));
        assert_eq!(parse_budget("2s"), Some(Duration::from_secs(2)));
        assert_eq!(parse_budget("inf"), Some(Duration::MAX));
        assert_eq!(parse_budget("Unbounded"), Some(Duration::MAX));
        assert_eq!(parse_budget("1e30"), Some(Duration::MAX));
        assert_eq!(parse_budget("-1"), None);
        assert_eq!(parse_budget("NaN"), None);
        assert_eq!(parse_budget("soon"), None);
        assert_eq!(fmt_budget(Duration::MAX), "unbounded");
        assert_eq!(fmt_budget(Duration::from_millis(500)), "0.5 s");
    }
}
