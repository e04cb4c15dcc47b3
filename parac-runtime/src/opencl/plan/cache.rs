//! The plan cache on disk: one text file per program (`<cache>/parac/plans/<program key>.s<search
//! version>.plans`) holding, per region and size class, the plan chosen (or, for a search a call
//! stopped when its budget ran out, the leader so far) and every measurement, so that a later
//! process skips a finished search and goes on with an unfinished one.
//!
//! A plan file:
//!
//! ```text
//! parac plans 1
//! # comments
//! cost <kind> <seconds>
//! plan <region> <class> done|partial <label>|- <work-group>|- <carry seconds>
//! time <region> <class> first|group <label> <work-group>|- <ms>|- <samples> 0|1
//! end
//! ```
//!
//! (fields separated by tabs; a `cost` line is what a search step of a kind costs on this
//! device, as learned, for the next process's budget; a `plan` line's carry is the budget earlier
//! calls left unspent for the next step; a `time` line's last field says whether the final round
//! timed it again; `end` is the last line, so that a file cut short is not taken for a whole
//! one). Files are written whole to a temporary file in the same directory, then renamed over
//! the old one, under a lock file (`.lock`, created exclusively; one older than
//! [`STALE_LOCK`] is taken as left by a dead process), after reading and merging what another
//! process may have written meanwhile: a reader never sees half a file and concurrent writers do
//! not lose each other's regions. A file that does not parse, of another format, or that cannot
//! be read is no cache (one line on stderr per file and process); a directory that cannot be
//! written keeps the plans in the process only (one line on stderr per directory and process).
//!
//! A bundle (`parac cache export`/`import`) is the current search version's plan files in one
//! text file:
//!
//! ```text
//! parac plan bundle 1
//! # comments
//! file <name> <number of lines>
//! <the file's lines>
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::search::{Measure, Round, Search};
use super::{Choice, SEARCH_VERSION, fmt_local, parse_local};
use crate::Error;

/// The first line of a plan file.
const FORMAT: &str = "parac plans 1";

/// The first line of a bundle.
const BUNDLE: &str = "parac plan bundle 1";

/// A lock file older than this was left by a process that died holding it.
const STALE_LOCK: Duration = Duration::from_secs(10);

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

/// `<cache>/parac`: the directory of parac's caches (program binaries in `programs/`, plans in
/// `plans/`), where the user's cache directory is known.
pub fn cache_root() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("parac"))
}

/// The name of the plan file of a program whose key hash is `key`.
pub(crate) fn file_name(key: &str) -> String {
    format!("{key}.s{SEARCH_VERSION}.plans")
}

/// Whether `name` is the name of a plan file of this search version.
fn is_plan_file(name: &str) -> bool {
    name.strip_suffix(&format!(".s{SEARCH_VERSION}.plans"))
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_hexdigit()))
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

/// Paths already reported, so that each problem is one warning per process.
static REPORTED: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A warning event (`parac::cache`) with `message` about `path`, once per process and path.
pub(crate) fn report_once(path: &Path, message: impl FnOnce() -> String) {
    let mut seen = REPORTED.lock().unwrap_or_else(PoisonError::into_inner);
    if seen.insert(path.to_path_buf()) {
        tracing::warn!(target: "parac::cache", "{}", message());
    }
}

/// The plans in `path`: none when the file does not exist; a file that cannot be read or does
/// not parse is no cache, reported once.
pub(crate) fn load(path: &Path) -> PlanFile {
    match read(path) {
        Ok(p) => p,
        Err(why) => {
            report_once(path, || {
                format!(
                    "plan cache {} ignored ({why}); plans are searched again",
                    path.display()
                )
            });
            PlanFile::default()
        }
    }
}

/// The plans in `path` (none when it does not exist), or why they cannot be read.
pub(crate) fn read(path: &Path) -> Result<PlanFile, String> {
    match fs::read(path) {
        Ok(bytes) => {
            let text = String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())?;
            parse(&text)
        }
        // No file, or no directory (its path is a file): nothing to read; writing it fails and
        // says so.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
            ) =>
        {
            Ok(PlanFile::default())
        }
        Err(e) => Err(e.to_string()),
    }
}

/// An exclusive lock on a directory's plan files, released when dropped.
struct DirLock(Option<PathBuf>);

impl Drop for DirLock {
    fn drop(&mut self) {
        if let Some(p) = &self.0 {
            let _ = fs::remove_file(p);
        }
    }
}

/// Takes `dir`'s lock file, waiting up to about two seconds for another holder; after that (a
/// holder that is slow but not stale) goes on without it: the rename keeps every file whole,
/// and at worst a concurrent update is lost.
fn lock(dir: &Path) -> io::Result<DirLock> {
    let p = dir.join(".lock");
    for _ in 0..200 {
        match fs::OpenOptions::new().write(true).create_new(true).open(&p) {
            Ok(_) => return Ok(DirLock(Some(p))),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let stale = fs::metadata(&p)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STALE_LOCK);
                if stale {
                    let _ = fs::remove_file(&p);
                } else {
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(DirLock(None))
}

/// Writes `bytes` to `path` atomically: a temporary file in the same directory, then a rename.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or("plans".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(
        ".{name}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let written = (|| {
        use std::io::Write as _;
        let mut f = fs::File::create(&tmp)?;
        // No fsync: readers see the old file or the new one whole either way, and a file a
        // crash leaves damaged is no cache.
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Updates the plan file `path` under its directory's lock: reads what is there (a file that
/// does not parse counts as empty and is replaced), applies `change`, writes it atomically with
/// `comments` at the top.
pub(crate) fn update(
    path: &Path,
    comments: &[String],
    change: impl FnOnce(&mut PlanFile),
) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let _lock = lock(dir)?;
    let mut plans = read(path).unwrap_or_default();
    change(&mut plans);
    write_atomic(path, render(&plans, comments).as_bytes())
}

/// The plan files of this search version in `dir` as one bundle; and how many files it holds.
/// Files that do not parse are left out (each reported once).
pub fn export_plans(dir: &Path) -> Result<(String, usize), Error> {
    let io_err = |source: io::Error| Error::Io {
        path: dir.to_path_buf(),
        what: "cannot list the plan cache",
        source,
    };
    let mut names: Vec<String> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| is_plan_file(n))
            .collect(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_err(e)),
    };
    names.sort();
    let mut out = format!(
        "{BUNDLE}\n# parac plan cache (search version {SEARCH_VERSION}), exported from {}\n",
        dir.display()
    );
    let mut n = 0;
    for name in names {
        let path = dir.join(&name);
        let plans = match read(&path) {
            Ok(p) => p,
            Err(why) => {
                report_once(&path, || {
                    format!("plan cache {} left out ({why})", path.display())
                });
                continue;
            }
        };
        let text = render(&plans, &[format!("exported from {}", path.display())]);
        let _ = writeln!(out, "file\t{name}\t{}", text.lines().count());
        out.push_str(&text);
        n += 1;
    }
    Ok((out, n))
}

/// The files of a bundle, checked whole: (name, plans).
fn parse_bundle(text: &str) -> Result<Vec<(String, PlanFile)>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, l)) if l == BUNDLE => {}
        Some((_, l)) if l.starts_with("parac plan bundle ") => {
            return Err(format!(
                "`{l}`: a bundle format this parac does not read ({BUNDLE})"
            ));
        }
        _ => {
            return Err(format!(
                "not a plan bundle (its first line is not `{BUNDLE}`)"
            ));
        }
    }
    let mut files = Vec::new();
    while let Some((n, line)) = lines.next() {
        if line.starts_with('#') || line.is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let ["file", name, count] = f.as_slice() else {
            return Err(format!(
                "line {}: expected `file<TAB>NAME<TAB>LINES`",
                n + 1
            ));
        };
        if !is_plan_file(name) {
            return Err(format!(
                "line {}: `{name}` is not a plan file of search version {SEARCH_VERSION} \
                 (a bundle of another parac version?)",
                n + 1
            ));
        }
        let count: usize = count
            .parse()
            .map_err(|_| format!("line {}: `{count}` is not a line count", n + 1))?;
        let mut body = String::new();
        for _ in 0..count {
            let Some((_, l)) = lines.next() else {
                return Err(format!("`{name}`: the bundle ends inside it"));
            };
            body.push_str(l);
            body.push('\n');
        }
        let plans = parse(&body).map_err(|why| format!("`{name}`: {why}"))?;
        files.push((name.to_string(), plans));
    }
    Ok(files)
}

/// Imports a bundle into the plan cache `dir`: each file merged into the one there (a finished
/// search in the bundle replaces what is there; see `merge`), written atomically. The bundle
/// is checked whole first: a damaged one changes nothing. How many files it held.
pub fn import_plans(bundle: &str, dir: &Path) -> Result<usize, Error> {
    let files = parse_bundle(bundle).map_err(|message| Error::Io {
        path: dir.to_path_buf(),
        what: "a damaged plan bundle, nothing imported",
        source: io::Error::new(io::ErrorKind::InvalidData, message),
    })?;
    for (name, plans) in &files {
        let path = dir.join(name);
        update(&path, &["imported from a plan bundle".to_string()], |p| {
            merge(p, plans.clone())
        })
        .map_err(|source| Error::Io {
            path: path.clone(),
            what: "cannot write the plan cache",
            source,
        })?;
    }
    Ok(files.len())
}

/// Removes parac's caches under `root` (`programs/` and `plans/`); what it removed.
pub fn clear_cache(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut removed = Vec::new();
    for sub in ["plans", "programs"] {
        let d = root.join(sub);
        match fs::remove_dir_all(&d) {
            Ok(()) => removed.push(d),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(source) => {
                return Err(Error::Io {
                    path: d,
                    what: "cannot remove",
                    source,
                });
            }
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(what: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("parac-plan-cache-{what}-"))
            .tempdir()
            .unwrap()
    }

    fn sample() -> PlanFile {
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
    fn of(plans: Plans) -> PlanFile {
        PlanFile {
            plans,
            costs: BTreeMap::new(),
        }
    }

    fn same(a: &PlanFile, b: &PlanFile) -> bool {
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

    #[test]
    fn writes_are_atomic_and_leave_no_temporary_files() {
        let d_tmp = temp("atomic");
        let d = d_tmp.path().to_path_buf();
        let path = d.join(file_name("00ff"));
        for i in 0..20 {
            let mut p = sample();
            p.plans
                .get_mut(&("r0_it".into(), "4096x2048".into()))
                .unwrap()
                .search
                .measures[0]
                .samples = i;
            write_atomic(&path, render(&p, &[]).as_bytes()).unwrap();
            assert!(same(&read(&path).unwrap(), &p));
        }
        let names: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![file_name("00ff")]);
    }

    /// Threads updating one file at once, each its own region, as processes do: every region
    /// is in the file at the end, the file always parses, and no lock or temporary file is
    /// left.
    #[test]
    fn concurrent_updates_keep_every_region() {
        let d_tmp = temp("concurrent");
        let d = d_tmp.path().to_path_buf();
        let path = d.join(file_name("abcd"));
        std::thread::scope(|s| {
            for t in 0..6 {
                let path = &path;
                s.spawn(move || {
                    for i in 0..10 {
                        update(path, &[], |p| {
                            p.plans
                                .insert((format!("r{t}_{i}"), "64".into()), Saved::default());
                        })
                        .unwrap();
                        // A reader in between always sees a whole file.
                        read(path).unwrap();
                    }
                });
            }
        });
        let p = read(&path).unwrap();
        assert_eq!(p.plans.len(), 60);
        let names: Vec<String> = fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec![file_name("abcd")]);
    }

    #[test]
    fn a_broken_file_is_replaced_by_the_next_update() {
        let d_tmp = temp("broken");
        let d = d_tmp.path().to_path_buf();
        let path = d.join(file_name("0a"));
        fs::write(&path, b"\xff\xfe garbage").unwrap();
        assert!(read(&path).is_err());
        assert!(load(&path).plans.is_empty());
        update(&path, &[], |p| merge(p, sample())).unwrap();
        assert!(same(&read(&path).unwrap(), &sample()));
    }

    #[test]
    fn bundles_round_trip() {
        let from_tmp = temp("export");
        let from = from_tmp.path().to_path_buf();
        let to_tmp = temp("import");
        let to = to_tmp.path().to_path_buf();
        fs::write(from.join(file_name("0123abcd")), render(&sample(), &[])).unwrap();
        let mut other = Plans::new();
        other.insert(("r2_it".into(), "8x8".into()), Saved::default());
        let other = of(other);
        fs::write(from.join(file_name("ffff")), render(&other, &[])).unwrap();
        // Not exported: another search version, a broken file, anything else.
        fs::write(from.join("0123abcd.s1.plans"), "old").unwrap();
        fs::write(from.join(file_name("dead")), "garbage").unwrap();
        fs::write(from.join("notes.txt"), "x").unwrap();
        let (bundle, n) = export_plans(&from).unwrap();
        assert_eq!(n, 2, "{bundle}");
        // Importing over a partial search of the same region: the bundle's finished one wins.
        let mut partial = sample();
        for e in partial.plans.values_mut() {
            e.done = false;
            e.search.measures.truncate(1);
        }
        fs::write(to.join(file_name("0123abcd")), render(&partial, &[])).unwrap();
        assert_eq!(import_plans(&bundle, &to).unwrap(), 2);
        assert!(same(
            &read(&to.join(file_name("0123abcd"))).unwrap(),
            &sample()
        ));
        assert!(same(&read(&to.join(file_name("ffff"))).unwrap(), &other));
        // Exported again, the same bundle but for its comments.
        let (again, _) = export_plans(&to).unwrap();
        let strip = |b: &str| {
            b.lines()
                .filter(|l| !l.starts_with('#'))
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(strip(&again), strip(&bundle));
    }

    #[test]
    fn damaged_bundles_change_nothing() {
        let to_tmp = temp("damaged");
        let to = to_tmp.path().to_path_buf();
        let good = format!(
            "{BUNDLE}\nfile\t{}\t{}\n{}",
            file_name("aa"),
            render(&sample(), &[]).lines().count(),
            render(&sample(), &[])
        );
        assert!(parse_bundle(&good).is_ok());
        for bad in [
            String::new(),
            "parac plan bundle 9\n".to_string(),
            good.replace(&file_name("aa"), "aa.s1.plans"),
            good.replace(&file_name("aa"), "../escape.plans"),
            good[..good.len() - 20].to_string(),
            good.replace("done", "maybe"),
        ] {
            assert!(import_plans(&bad, &to).is_err(), "{bad}");
        }
        assert_eq!(fs::read_dir(&to).unwrap().count(), 0);
    }

    #[test]
    fn clear_removes_plans_and_programs_only() {
        let root_tmp = temp("clear");
        let root = root_tmp.path().to_path_buf();
        for sub in ["plans", "programs", "other"] {
            fs::create_dir_all(root.join(sub)).unwrap();
            fs::write(root.join(sub).join("f"), "x").unwrap();
        }
        let removed = clear_cache(&root).unwrap();
        assert_eq!(removed.len(), 2);
        assert!(root.join("other/f").exists());
        assert!(!root.join("plans").exists() && !root.join("programs").exists());
        assert!(clear_cache(&root).unwrap().is_empty());
    }
}
