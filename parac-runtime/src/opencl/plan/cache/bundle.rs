//! Plan bundles (`parac cache export`/`import`; their format in `cache.rs`): the current search
//! version's plan files in one text file, exported, checked whole and imported.

use std::fmt::Write as _;
use std::fs;
use std::io;
use std::path::Path;

use super::super::SEARCH_VERSION;
use super::format::{PlanFile, merge, parse, render};
use super::{is_plan_file, read, report_once, update};
use crate::Error;

/// The first line of a bundle.
const BUNDLE: &str = "parac plan bundle 1";

/// The plan files of this search version in `dir` (a cache's `plans` directory, under
/// [`CacheConfig::root`](crate::CacheConfig::root)) as one bundle; and how many files it holds.
/// Files that do not parse are left out (each reported once). With [`import_plans`], the plans
/// a machine searched (`parac tune`) go to another machine's cache, whose first calls then
/// search nothing (`parac cache export` and `import`). A directory that does not exist is an
/// empty bundle.
///
/// # Examples
///
/// ```
/// use parac_runtime::opencl::{export_plans, import_plans};
///
/// let tuned = tempfile::tempdir()?;
/// let (bundle, files) = export_plans(&tuned.path().join("plans"))?;
/// assert!(bundle.starts_with("parac plan bundle 1\n"));
/// assert_eq!(files, 0); // nothing was searched here
///
/// let other = tempfile::tempdir()?;
/// assert_eq!(import_plans(&bundle, &other.path().join("plans"))?, files);
/// // A damaged bundle is an error and changes nothing.
/// assert!(import_plans("parac plan bundle 1\nfile\tx\t9\n", other.path()).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

#[cfg(test)]
mod tests {
    use super::super::file_name;
    use super::super::format::tests::{of, same, sample};
    use super::super::format::{Plans, Saved};
    use super::super::tests::temp;
    use super::*;

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
}
