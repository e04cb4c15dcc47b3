//! The machine's cache sizes, as the CPU path's model weighs them: the bytes one task may keep
//! in cache (`cache_bytes`, the compiler's `Builtin::CacheBytes`), asked once per process; and
//! whether fused stages run fused (`fuses`, the compiler's `Builtin::Fuses`).

use crate::{PlanPolicy, Runtime};
use std::sync::OnceLock;

/// The rows of the CPU path's fused tasks for its fused stages `stages` (their plans' names,
/// `r<k>_<name>`), or 0 where they run apart: their intermediates hold `bytes` where stored
/// apart, `row_bytes` a row of `height` rows, and a task recomputes `span` rows of an
/// intermediate beside its own, `stride` per row of the task (`lir::pass::fuse::guarded`).
/// Fused as `rt`'s policy says where it names one of the stages (`PlanPolicy::Stages`,
/// `PARAC_PLAN=<region>=<label>`: a label `fuse..` or `..inline` fuses, `baseline` keeps the
/// stages apart; `PlanPolicy::Baseline` keeps every stage apart), else by the model: fused
/// where a task recomputes at most a quarter of its rows (fused ran faster at every size
/// measured there, 128x128 to 3840x2160: one parallel pass instead of two, no intermediate),
/// or where the intermediates would not fit the private caches of the cores the tasks run on
/// (`private_bytes`; where they fit, each stage alone reads them from there, and a wide halo
/// recomputed would cost more than it saves). The rows: `task_rows`.
pub fn fuses(
    rt: &Runtime,
    stages: &[&str],
    bytes: i64,
    (span, stride): (i64, i64),
    (rows, row_bytes, height): (i64, i64, i64),
) -> i64 {
    let threads = rt.cpu_threads() as i64;
    let strip = task_rows(rows, (row_bytes, span), height, threads);
    let model = || {
        let narrow = span.saturating_mul(4) <= stride.saturating_mul(strip);
        let large = bytes > private_bytes().saturating_mul(threads);
        if narrow || large { strip } else { 0 }
    };
    match rt.policy() {
        PlanPolicy::Baseline => 0,
        PlanPolicy::Stages(list) => {
            let named = |entry: &str| stages.iter().any(|s| PlanPolicy::names(entry, s));
            match list.iter().find(|(region, _)| named(region)) {
                Some((_, label)) if label == "baseline" => 0,
                Some((_, label)) if label.starts_with("fuse") || label.ends_with("inline") => strip,
                _ => model(),
            }
        }
        _ => model(),
    }
}

/// The rows of a fused task: as many as keep its buffers (`row_bytes` a row, `span` rows more
/// than its own) within its core's own cache ([`private_bytes`]) and leave each of `threads`
/// four tasks of the `height` rows or more, from the compiler's `rows` (32) to four times that,
/// a multiple of 8 past the compiler's; of those, the tallest whose tasks share out evenly
/// among the threads ([`balanced`]). Taller tasks recompute less of their halos and start
/// fewer tasks: 64 rows against 32 measured 6-10 % faster on blur (4802x6408, 72 rows here) and
/// the unsharp mask of `benches/own` (3840x2160), on the developers' 2-core VM
/// (docs/benchmarks.md).
pub fn task_rows(rows: i64, (row_bytes, span): (i64, i64), height: i64, threads: i64) -> i64 {
    let rows = rows.max(1);
    let fit = (private_bytes() / row_bytes.max(1)).saturating_sub(span);
    let share = height / threads.saturating_mul(4).max(1);
    let best = fit.min(share).clamp(rows, rows.saturating_mul(4));
    let top = (best / 8 * 8).max(rows);
    let above = std::iter::successors(Some(top), |r| Some(r - 8)).take_while(|r| *r > rows);
    balanced(above.chain([rows]), span, height, threads)
}

/// Of `candidates` (tallest first), the rows of a task whose busiest thread computes the
/// fewest rows, halos (`span` rows a task) included, the `height` rows' tasks shared out among
/// `threads`; the tallest within 1 % of that (fewer tasks to start). A task too many for an
/// even share leaves the other threads idle while one runs it: unsharp7 of `benches/own`
/// (2160 rows, two threads) ran 2.4-2.5 ms at 80 rows (27 tasks) against 2.0-2.1 at 72 (30)
/// and 90 (24), on the developers' VM.
fn balanced(candidates: impl Iterator<Item = i64>, span: i64, height: i64, threads: i64) -> i64 {
    let busiest = |r: i64| {
        let tasks = (height.max(1) + r - 1) / r;
        let per_thread = (tasks + threads.max(1) - 1) / threads.max(1);
        let own = per_thread.saturating_mul(r).min(height.max(1));
        own.saturating_add(per_thread.saturating_mul(span.max(0)))
    };
    let costs: Vec<(i64, i64)> = candidates.map(|r| (r, busiest(r.max(1)))).collect();
    let least = costs.iter().map(|c| c.1).min().unwrap_or(0);
    costs
        .iter()
        .find(|(_, c)| c.saturating_mul(100) <= least.saturating_mul(101))
        .map_or(1, |c| c.0.max(1))
}

/// The bytes of cache a CPU task may hold: its core's own caches below the last level (the
/// largest, usually the second level) and its share of the last level (its size over the CPUs
/// that share it), as Linux reports them (`/sys/devices/system/cpu/cpu0/cache`);
/// `parac_core::ir::CACHE_BYTES` where the machine does not say.
pub fn cache_bytes() -> i64 {
    static BYTES: OnceLock<i64> = OnceLock::new();
    *BYTES.get_or_init(|| {
        share(&levels("/sys/devices/system/cpu/cpu0/cache")).unwrap_or(parac_core::ir::CACHE_BYTES)
    })
}

/// The bytes of a core's own cache: its largest below the last level (the last level's share
/// where it has no other), as [`cache_bytes`] asks; `parac_core::ir::CACHE_BYTES` / 8 where the
/// machine does not say.
pub fn private_bytes() -> i64 {
    static BYTES: OnceLock<i64> = OnceLock::new();
    *BYTES.get_or_init(|| {
        own(&levels("/sys/devices/system/cpu/cpu0/cache"))
            .unwrap_or(parac_core::ir::CACHE_BYTES / 8)
    })
}

/// One cache as the system lists it: its level, its size in bytes and how many CPUs share it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Level {
    level: u32,
    bytes: i64,
    shared_by: i64,
}

/// The data and unified caches listed under `dir` (`index0`, `index1`, ..).
fn levels(dir: &str) -> Vec<Level> {
    let read = |p: std::path::PathBuf| std::fs::read_to_string(p).ok();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in entries.flatten() {
        let p = e.path();
        let kind = read(p.join("type")).unwrap_or_default();
        if kind.trim() == "Instruction" {
            continue;
        }
        let level = read(p.join("level")).and_then(|l| l.trim().parse().ok());
        let bytes = read(p.join("size")).and_then(|s| size(&s));
        let shared_by = read(p.join("shared_cpu_list")).map_or(1, |l| cpus(&l));
        if let (Some(level), Some(bytes)) = (level, bytes) {
            out.push(Level {
                level,
                bytes,
                shared_by: shared_by.max(1),
            });
        }
    }
    out
}

/// A task's share: the largest private cache below the last level, plus the last level over
/// the CPUs sharing it.
fn share(levels: &[Level]) -> Option<i64> {
    let last = levels.iter().map(|l| l.level).max()?;
    let own = below_last(levels, last).unwrap_or(0);
    Some(own + last_share(levels, last)?)
}

/// A core's own cache: the largest private one below the last level, else its share of the
/// last.
fn own(levels: &[Level]) -> Option<i64> {
    let last = levels.iter().map(|l| l.level).max()?;
    below_last(levels, last).or_else(|| last_share(levels, last))
}

/// The largest cache below level `last`.
fn below_last(levels: &[Level], last: u32) -> Option<i64> {
    levels
        .iter()
        .filter(|l| l.level < last)
        .map(|l| l.bytes)
        .max()
}

/// The last level's size over the CPUs sharing it.
fn last_share(levels: &[Level], last: u32) -> Option<i64> {
    levels
        .iter()
        .filter(|l| l.level == last)
        .map(|l| l.bytes / l.shared_by)
        .max()
}

/// `32K`, `1024K`, `32M` or a count of bytes.
fn size(s: &str) -> Option<i64> {
    let s = s.trim();
    let (n, unit) = match s.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => s.split_at(i),
        None => (s, ""),
    };
    let n: i64 = n.parse().ok()?;
    let unit = match unit.trim() {
        "" => 1,
        "K" | "KB" | "k" => 1 << 10,
        "M" | "MB" => 1 << 20,
        "G" | "GB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(unit)
}

/// The CPUs in a list such as `0-3,8,10-11`.
fn cpus(list: &str) -> i64 {
    list.trim()
        .split(',')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('-') {
            Some((a, b)) => match (a.parse::<i64>(), b.parse::<i64>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 1,
            },
            None => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_cpu_lists_parse() {
        assert_eq!(size("32K\n"), Some(32 << 10));
        assert_eq!(size("32768K"), Some(32 << 20));
        assert_eq!(size("2M"), Some(2 << 20));
        assert_eq!(size("4096"), Some(4096));
        assert_eq!(size("big"), None);
        assert_eq!(cpus("0-1\n"), 2);
        assert_eq!(cpus("0-3,8,10-11"), 7);
        assert_eq!(cpus("5"), 1);
    }

    #[test]
    fn a_tasks_share_is_its_own_cache_and_its_part_of_the_last() {
        let l = |level, bytes, shared_by| Level {
            level,
            bytes,
            shared_by,
        };
        // The developers' VM: 32K L1d, 1M L2, 32M L3 shared by 2 CPUs.
        let vm = [l(1, 32 << 10, 1), l(2, 1 << 20, 1), l(3, 32 << 20, 2)];
        assert_eq!(share(&vm), Some((1 << 20) + (16 << 20)));
        assert_eq!(share(&[l(2, 4 << 20, 4)]), Some(1 << 20));
        assert_eq!(share(&[]), None);
        assert!(cache_bytes() > 0);
        // A core's own: its second level, or its share of the only level.
        assert_eq!(own(&vm), Some(1 << 20));
        assert_eq!(own(&[l(2, 4 << 20, 4)]), Some(1 << 20));
        assert_eq!(own(&[]), None);
        assert!(private_bytes() > 0);
    }

    #[test]
    fn fusion_follows_the_policy_then_the_model() {
        let stages = |v: &[(&str, &str)]| {
            let v = v.iter().map(|(r, l)| (r.to_string(), l.to_string()));
            Runtime::cpu().with_policy(PlanPolicy::Stages(v.collect()))
        };
        let two = ["r0_it", "r1_it1"];
        // A small image: tasks of the compiler's 32 rows.
        let small = (32, 1024, 64);
        let fuses =
            |rt: &Runtime, stages: &[&str], bytes, halo| fuses(rt, stages, bytes, halo, small);
        // The model: fused where the halo is narrow, else where the intermediates do not fit
        // the cores' own caches.
        let rt = Runtime::cpu();
        let (narrow, wide) = ((2, 1), (64, 1));
        assert_eq!(fuses(&rt, &two, 0, narrow), 32);
        assert_eq!(fuses(&rt, &two, 0, wide), 0);
        assert_eq!(fuses(&rt, &two, i64::MAX, wide), 32);
        // Forced or forbidden by any of the stages' names, else the model.
        assert_eq!(fuses(&stages(&[("r1_it1", "fuse")]), &two, 0, wide), 32);
        assert_eq!(fuses(&stages(&[("it", "inline")]), &two, 0, wide), 32);
        let apart = stages(&[("it1", "baseline")]);
        assert_eq!(fuses(&apart, &two, i64::MAX, narrow), 0);
        assert_eq!(
            fuses(&stages(&[("other", "baseline")]), &["r0_it"], 0, narrow),
            32
        );
        let baseline = Runtime::cpu().with_policy(PlanPolicy::Baseline);
        assert_eq!(fuses(&baseline, &["r0_it"], i64::MAX, narrow), 0);
    }

    #[test]
    fn tasks_grow_with_the_image_within_the_cache() {
        let own = private_bytes();
        // Few rows: the compiler's.
        assert_eq!(task_rows(32, (1024, 2), 100, 2), 32);
        // Many rows of a small row: four times the compiler's at most.
        assert_eq!(task_rows(32, (64, 2), 1 << 20, 2), 128);
        // Rows that fill the cache: as many as it holds with the halo, a multiple of 8.
        let r = task_rows(32, (own / 60, 4), 1 << 20, 2);
        assert!((32..=56).contains(&r) && r % 8 == 0, "{r}");
        // Many threads: four tasks each.
        assert_eq!(task_rows(32, (64, 2), 64 * 4 * 16, 16), 64);
        // Tasks shared out evenly: 2160 rows on two threads take 72 (30 tasks), not 80 (27).
        assert_eq!(balanced([80, 72, 64].into_iter(), 6, 2160, 2), 72);
        // Within 1 % of the least, the tallest: 4802 rows, 72 (67 tasks) before 56 (86).
        assert_eq!(balanced([72, 64, 56, 48].into_iter(), 2, 4802, 2), 72);
        // One row, one thread: the tallest.
        assert_eq!(balanced([40, 32].into_iter(), 0, 1, 1), 40);
    }

    #[test]
    fn stages_are_named_as_plans_name_them() {
        assert!(PlanPolicy::names("h", "r2_h"));
        assert!(PlanPolicy::names("r2_h", "r2_h"));
        assert!(!PlanPolicy::names("r2", "r2_h"));
        assert!(!PlanPolicy::names("r1_h", "r2_h"));
        assert!(!PlanPolicy::names("g", "r2_h"));
    }
}
