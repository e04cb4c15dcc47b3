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
//! be read is no cache (one warning event, target `parac::cache`, per file and process); a
//! directory that cannot be written keeps the plans in the process only (one warning event per
//! directory and process).
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

mod bundle;
mod format;

pub use bundle::{export_plans, import_plans};
pub(crate) use format::{PlanFile, Saved, merge};

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::SEARCH_VERSION;
use crate::Error;
use format::{parse, render};

/// A lock file older than this was left by a process that died holding it.
const STALE_LOCK: Duration = Duration::from_secs(10);

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

/// Removes parac's caches under `root` (`programs/` and `plans/`, as
/// [`CacheConfig::root`](crate::CacheConfig::root) gives it); what it removed. The next
/// process builds its programs and searches its plans again (`parac cache clear`).
///
/// # Examples
///
/// ```
/// use parac_runtime::opencl::clear_cache;
///
/// let root = tempfile::tempdir()?;
/// std::fs::create_dir(root.path().join("plans"))?;
/// assert_eq!(clear_cache(root.path())?, [root.path().join("plans")]);
/// assert!(clear_cache(root.path())?.is_empty());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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

    use format::tests::{same, sample};

    pub(super) fn temp(what: &str) -> tempfile::TempDir {
        tempfile::Builder::new()
            .prefix(&format!("parac-plan-cache-{what}-"))
            .tempdir()
            .unwrap()
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
