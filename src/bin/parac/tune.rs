//! `parac tune`: every region's plan search run to its end, ahead of time, into the plan cache.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};

use parac::PlanPolicy;
use parac::pipeline::Arg;
use parac_core::ir::{Function, ParamRef};

use crate::run::{CallArgs, RunOptions, arguments, knows, name_value};
use crate::{Failure, Outcome, files};

/// `parac tune`'s arguments.
#[derive(clap::Args)]
pub struct TuneArgs {
    #[command(flatten)]
    pub call: CallArgs,
    /// A size to tune at (where no --in input binds it); repeatable.
    #[arg(long = "size", value_name = "NAME=VALUE", value_parser = name_value)]
    pub sizes: Vec<(String, String)>,
}

/// `parac tune ...`.
pub fn tune(args: TuneArgs) -> Outcome {
    let mut call = args.call;
    call.sets.extend(args.sizes);
    let o = RunOptions { call, tune: true };
    let c = &o.call;
    let text = std::fs::read_to_string(&c.file)
        .map_err(|e| format!("cannot read {}: {e}", c.file.display()))?;
    let source = program_source(&c.file, &text)?;
    let p = files::compile_source(&c.file, &source)?;
    let functions: Vec<&Function> = match &c.function {
        Some(name) => match p.function(name) {
            Some(f) => vec![f],
            None => {
                let names: Vec<&str> = p.functions().iter().map(|f| &*f.name).collect();
                return Err(o.usage(format!(
                    "{}: no function `{name}` (it has: {})",
                    c.file.display(),
                    names.join(", ")
                )));
            }
        },
        None => p.functions().iter().collect(),
    };
    let names = c
        .inputs
        .iter()
        .map(|i| &i.0)
        .chain(c.sets.iter().map(|s| &s.0));
    for n in names {
        if !functions.iter().any(|f| knows(f, n)) {
            return Err(o.usage(format!("no function tuned has a parameter or size `{n}`")));
        }
    }
    // Every function's arguments first: a usage error (a missing size) is one whatever the
    // device.
    let calls = functions
        .iter()
        .map(|f| arguments(f, &o))
        .collect::<Result<Vec<_>, _>>()?;
    let rt =
        crate::runtime(c.device.as_deref())?.with_policy(PlanPolicy::SearchBudget(Duration::MAX));
    let Some(dev) = rt.device() else {
        // `auto` runs on the CPU path where the only OpenCL devices are CPUs: say how to tune
        // one of them.
        return Err(Failure::Error(format!(
            "no OpenCL device ({}): plans are chosen on OpenCL devices only; `--device opencl` \
             (or `opencl-cpu`) picks an OpenCL CPU device where there is one",
            rt.describe()
        )));
    };
    eprintln!("tuning on {}", rt.describe());
    let mut failed = false;
    for (f, mut call) in functions.into_iter().zip(calls) {
        let sizes: Vec<String> = call
            .iter()
            .zip(&f.params)
            .filter_map(|(a, p)| match (a, p) {
                (Arg::Matrix(t), ParamRef::Matrix(m)) => Some(format!(
                    "{} {}",
                    f.matrices[*m].name,
                    t.shape
                        .iter()
                        .map(usize::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                )),
                _ => None,
            })
            .collect();
        let before = parac::opencl::plan_records().len();
        let start = Instant::now();
        let bar = Progress::start(&f.name, f.regions.len(), before);
        let ran = p.run(&rt, &f.name, &mut call);
        bar.finish();
        if let Err(e) = ran {
            eprintln!("error: `{}`: {e}", f.name);
            failed = true;
            continue;
        }
        let records = parac::opencl::plan_records();
        let new = &records[before.min(records.len())..];
        let searched: Vec<_> = new.iter().filter(|r| r.program == *f.name).collect();
        outln!(
            "{} ({}): {} region{} searched in {:.1} s{}",
            f.name,
            sizes.join(", "),
            searched.len(),
            if searched.len() == 1 { "" } else { "s" },
            start.elapsed().as_secs_f64(),
            if searched.len() < f.regions.len() {
                " (the others: from the plan cache, or with one plan)"
            } else {
                ""
            }
        )?;
        for r in searched {
            let ms = r
                .times
                .iter()
                .find(|t| t.0 == r.chosen.0 && t.1 == r.chosen.1)
                .map_or("-".to_string(), |t| format!("{:.3} ms", t.2));
            let wg = r.chosen.1.as_ref().map_or("-".to_string(), |l| {
                l.iter().map(usize::to_string).collect::<Vec<_>>().join("x")
            });
            outln!(
                "  {} [{}]: {}@{wg} {ms} ({} plans timed{})",
                r.region,
                r.class,
                r.chosen.0,
                r.times.len(),
                if r.complete {
                    ""
                } else {
                    "; the search did not end"
                }
            )?;
        }
    }
    match dev.program_cache_dir() {
        Some(dir) => match dir.parent() {
            Some(root) => outln!("plan cache: {}", root.join("plans").display())?,
            None => outln!("plan cache: next to {}", dir.display())?,
        },
        None => outln!("plan cache: off (PARAC_CACHE=0): the plans were not kept")?,
    }
    if dev.cache_read_only() {
        outln!("plan cache: read-only (PARAC_CACHE=read-only): the plans were not kept")?;
    }
    if failed {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// The ParaC source of a program file: a `.rs` file's `parac! { ... }` blocks (their insides,
/// one after the other), anything else whole.
fn program_source(path: &Path, text: &str) -> Result<String, String> {
    if path.extension().is_none_or(|e| e != "rs") {
        return Ok(text.to_string());
    }
    let path = path.display();
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("parac!") {
        let after = &rest[i + "parac!".len()..];
        let Some(open) = after.find(|c: char| !c.is_whitespace()) else {
            break;
        };
        if !after[open..].starts_with('{') {
            rest = after;
            continue;
        }
        let body = &after[open + 1..];
        let mut depth = 1usize;
        let mut end = None;
        for (j, c) in body.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            return Err(format!("{path}: a `parac! {{` block is not closed"));
        };
        out.push_str(&body[..end]);
        out.push('\n');
        rest = &body[end + 1..];
    }
    if out.trim().is_empty() {
        return Err(format!("{path}: no `parac! {{ ... }}` block"));
    }
    Ok(out)
}

/// A progress bar on stderr while a function's searches run (drawn only on a terminal): regions
/// searched of the function's regions, plans timed, time left (from the regions' pace). A
/// thread polls the search records and the timing count; the search itself runs on the caller's
/// thread.
struct Progress {
    done: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn start(function: &str, regions: usize, records_before: usize) -> Progress {
        let bar = ProgressBar::new(regions as u64);
        bar.set_style(
            ProgressStyle::with_template(
                "{prefix} [{bar:30}] {pos}/{len} regions, {msg}, {elapsed} (left {eta})",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar.set_prefix(function.to_string());
        let done = Arc::new(AtomicBool::new(false));
        let timings_before = parac::opencl::timings_made();
        let (stop, name) = (Arc::clone(&done), function.to_string());
        let thread = std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let searched = parac::opencl::plan_records()
                    .iter()
                    .skip(records_before)
                    .filter(|r| r.program == name)
                    .count();
                bar.set_position(searched as u64);
                bar.set_message(format!(
                    "{} plans timed",
                    parac::opencl::timings_made() - timings_before
                ));
                std::thread::sleep(Duration::from_millis(100));
            }
            bar.finish_and_clear();
        });
        Progress {
            done,
            thread: Some(thread),
        }
    }

    fn finish(mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
