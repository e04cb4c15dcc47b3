//! The text of a plan file (its format in `cache.rs`): what it holds per (region, size class),
//! parsed and rendered, and two versions of it merged.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::super::search::{Measure, Round, Search};
use super::super::{Choice, fmt_local, parse_local};

/// The first line of a plan file.
const FORMAT: &str = "parac plans 1";

/// What a plan file holds for one (region, size class).
#[derive(Clone, Debug, Default)]
pub(crate) struct Saved {
    /// The search is complete.
    pub(crate) done: bool,
    /// The plan chosen (done), or the leader so far.
    pub(crate) choice: Option<Choice>,
    /// The measurements.
    pub(crate) search: Search,
    /// Seconds of budget earlier calls left unspent because the next step did not fit.
    pub(crate) carry: f64,
}

/// A plan file's content, by (region, size class).
pub(crate) type Plans = BTreeMap<(String, String), Saved>;

/// A plan file: its plans, and what search steps cost, by kind (seconds), as the process that
/// wrote it had learned.
#[derive(Clone, Debug, Default)]
pub(crate) struct PlanFile {
    pub(crate) plans: Plans,
    pub(crate) costs: BTreeMap<usize, f64>,
}

fn parse_ms(s: &str) -> Option<Option<f64>> {
    if s == "-" {
        return Some(None);
    }
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some(Some(v))
}

/// A plan file's content, or why it is not one.
pub(crate) fn parse(text: &str) -> Result<PlanFile, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l == FORMAT => {}
        Some((_, l)) => {
            return Err(format!(
                "its first line is `{}`, not `{FORMAT}`",
                l.chars().take(40).collect::<String>()
            ));
        }
        None => return Err("it is empty".to_string()),
    }
    let mut out = Plans::new();
    let mut costs = BTreeMap::new();
    let mut ended = false;
    for (n, line) in lines {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        if ended {
            return Err(format!("line {}: after `end`", n + 1));
        }
        if line == "end" {
            ended = true;
            continue;
        }
        let bad = || {
            format!(
                "line {}: `{}`",
                n + 1,
                line.chars().take(80).collect::<String>()
            )
        };
        let f: Vec<&str> = line.split('\t').collect();
        match f.as_slice() {
            ["cost", kind, seconds] => {
                let k: usize = kind.parse().map_err(|_| bad())?;
                let v = parse_ms(seconds).ok_or_else(bad)?.ok_or_else(bad)?;
                costs.insert(k, v);
            }
            ["plan", region, class, status, label, local, carry] => {
                let done = match *status {
                    "done" => true,
                    "partial" => false,
                    _ => return Err(bad()),
                };
                let choice = if *label == "-" {
                    None
                } else {
                    Some(Choice {
                        label: label.to_string(),
                        local: parse_local(local).ok_or_else(bad)?,
                    })
                };
                let e = out
                    .entry((region.to_string(), class.to_string()))
                    .or_default();
                e.done = done;
                e.choice = choice;
                e.carry = parse_ms(carry).ok_or_else(bad)?.unwrap_or(0.0);
            }
            [
                "time",
                region,
                class,
                round,
                label,
                local,
                ms,
                samples,
                again,
            ] => {
                let m = Measure {
                    label: label.to_string(),
                    local: parse_local(local).ok_or_else(bad)?,
                    round: match *round {
                        "first" => Round::First,
                        "group" => Round::Group,
                        _ => return Err(bad()),
                    },
                    ms: parse_ms(ms).ok_or_else(bad)?,
                    samples: samples.parse().map_err(|_| bad())?,
                    again: match *again {
                        "0" => false,
                        "1" => true,
                        _ => return Err(bad()),
                    },
                };
                out.entry((region.to_string(), class.to_string()))
                    .or_default()
                    .search
                    .measures
                    .push(m);
            }
            _ => return Err(bad()),
        }
    }
    if !ended {
        return Err("it is cut short (no `end` line)".to_string());
    }
    Ok(PlanFile { plans: out, costs })
}

/// A plan file's text: [`FORMAT`], `comments` (each on a `#` line), the entries.
pub(crate) fn render(file: &PlanFile, comments: &[String]) -> String {
    let plans = &file.plans;
    let mut t = format!("{FORMAT}\n");
    for c in comments {
        for l in c.lines() {
            let _ = writeln!(t, "# {l}");
        }
    }
    let _ = writeln!(
        t,
        "# cost: kind of search step (0: builds its plan's program, 1: does not, 2: times a plan again), seconds"
    );
    let _ = writeln!(
        t,
        "# plan: region, size class, done|partial, plan (- none), work-group size (- the driver's), carried budget (s)"
    );
    for (k, v) in &file.costs {
        let _ = writeln!(t, "cost\t{k}\t{v:.6}");
    }
    let _ = writeln!(
        t,
        "# time: region, size class, round, plan, work-group size, ms (- could not run), samples, timed again"
    );
    for ((region, class), e) in plans {
        let (label, local) = match &e.choice {
            Some(c) => (c.label.as_str(), fmt_local(&c.local)),
            None => ("-", "-".to_string()),
        };
        let status = if e.done { "done" } else { "partial" };
        let _ = writeln!(
            t,
            "plan\t{region}\t{class}\t{status}\t{label}\t{local}\t{:.6}",
            e.carry
        );
        for m in &e.search.measures {
            let round = match m.round {
                Round::First => "first",
                Round::Group => "group",
            };
            let ms = m.ms.map_or("-".to_string(), |v| format!("{v:.6}"));
            let _ = writeln!(
                t,
                "time\t{region}\t{class}\t{round}\t{}\t{}\t{ms}\t{}\t{}",
                m.label,
                fmt_local(&m.local),
                m.samples,
                u8::from(m.again)
            );
        }
    }
    t.push_str("end\n");
    t
}

/// Merges `from` into `into`, per (region, size class): a finished search wins over an
/// unfinished one, of two unfinished ones the one with more measurements; otherwise `from`.
/// Costs: `from`'s.
pub(crate) fn merge(into: &mut PlanFile, from: PlanFile) {
    into.costs.extend(from.costs);
    let into = &mut into.plans;
    for (k, e) in from.plans {
        let keep = into.get(&k).is_some_and(|old| {
            !e.done && (old.done || old.search.measures.len() > e.search.measures.len())
        });
        if !keep {
            into.insert(k, e);
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(in super::super) fn sample() -> PlanFile {
        let mut p = Plans::new();
        p.insert(
            ("r0_it".into(), "4096x2048".into()),
            Saved {
                done: true,
                choice: Some(Choice {
                    label: "h8+unroll".into(),
                    local: Some(vec![32, 4]),
                }),
                search: Search {
                    measures: vec![
                        Measure {
                            label: "h8+unroll".into(),
                            local: Some(vec![32, 4]),
                            round: Round::First,
                            ms: Some(1.25),
                            samples: 3,
                            again: true,
                        },
                        Measure {
                            label: "baseline".into(),
                            local: None,
                            round: Round::Group,
                            ms: None,
                            samples: 0,
                            again: false,
                        },
                    ],
                },
                carry: 0.25,
            },
        );
        p.insert(
            ("r1_red".into(), "64".into()),
            Saved {
                done: false,
                choice: None,
                search: Search::default(),
                carry: 0.0,
            },
        );
        PlanFile {
            plans: p,
            costs: BTreeMap::from([(0, 0.75), (2, 0.001)]),
        }
    }

    /// A plan file of these plans, no costs.
    pub(in super::super) fn of(plans: Plans) -> PlanFile {
        PlanFile {
            plans,
            costs: BTreeMap::new(),
        }
    }

    pub(in super::super) fn same(a: &PlanFile, b: &PlanFile) -> bool {
        render(a, &[]) == render(b, &[])
    }

    #[test]
    fn plan_files_round_trip() {
        let p = sample();
        let text = render(&p, &["a comment\non two lines".into()]);
        assert!(text.starts_with("parac plans 1\n# a comment\n# on two lines\n"));
        let q = parse(&text).unwrap();
        assert!(same(&p, &q), "{text}");
        let e = &q.plans[&("r0_it".into(), "4096x2048".into())];
        assert_eq!(e.search.measures.len(), 2);
        assert_eq!(e.carry, 0.25);
        assert_eq!(q.costs.get(&0), Some(&0.75));
    }

    #[test]
    fn damaged_files_are_refused() {
        let text = render(&sample(), &[]);
        assert!(parse("").is_err());
        assert!(parse("r0_it\t64\tbaseline\t-\n").is_err(), "the old format");
        assert!(parse("parac plans 2\n").is_err());
        assert!(parse(&text.replace("done", "finished")).is_err());
        assert!(parse(&text.replace("1.250000", "fast")).is_err());
        assert!(parse(&text.replace("32x4", "32xx")).is_err());
        assert!(parse(&text.replace("cost\t0", "cost\tzero")).is_err());
        assert!(parse(&text.replace("0.250000", "-1")).is_err());
        assert!(parse(&format!("{text}plan\tr9\n")).is_err());
        assert!(parse(&text[..text.len() - 3]).is_err(), "cut short");
    }

    #[test]
    fn merge_prefers_finished_searches_then_longer_ones() {
        let mut a = sample();
        let mut b = Plans::new();
        let k = ("r0_it".to_string(), "4096x2048".to_string());
        b.insert(k.clone(), Saved::default());
        let b = of(b);
        merge(&mut a, b.clone());
        assert!(
            a.plans[&k].done,
            "a partial search does not replace a finished one"
        );
        let mut c = b.clone();
        merge(&mut c, sample());
        assert!(c.plans[&k].done);
        assert_eq!(c.costs, sample().costs);
        // Two partial searches: the longer stays.
        let mut long = sample();
        long.plans.get_mut(&k).unwrap().done = false;
        let mut d = long.clone();
        merge(&mut d, b);
        assert_eq!(d.plans[&k].search.measures.len(), 2);
    }
}
