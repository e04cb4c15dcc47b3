//! The programs a region's candidates run from: the function's first program (the baseline's
//! kernels and the model's plans, built by the call that first needs it), and each other
//! candidate's own program, built when the search reaches it. Under a search with a budget the
//! own programs are built on the background thread (`crate::background`) and a candidate is
//! timed only once its program is built, so that no call waits for a candidate's build; a
//! forced plan and a search without a budget build on the caller's thread.

use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use super::super::device::Device;
use super::super::program::Program;
use super::{Candidate, learn};
use crate::Error;

/// Candidate programs that failed to build, by (device, source) hash: their error.
static BROKEN: Mutex<BTreeMap<u64, String>> = Mutex::new(BTreeMap::new());

fn broken() -> std::sync::MutexGuard<'static, BTreeMap<u64, String>> {
    BROKEN.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Device {
    /// The name and source of candidate `c`'s own program, if it has one apart from the
    /// region's `base` program.
    fn own_source<'c>(&self, base: &Program, c: &'c Candidate) -> Option<(String, &'c str)> {
        let src = c.source.as_ref()?;
        // The function's first program holds the model's plans too.
        if base.has_kernel(&c.kernel) {
            return None;
        }
        let name = format!("{}__{}", base.name(), c.label.replace('+', "_"));
        Some((name, src.text()))
    }

    /// The program holding candidate `c`'s kernel when it has its own (`None`: the region's
    /// `base`), built on first use and cached as any program. A build that fails is logged
    /// (`PARAC_LOG=plan`) and remembered for the process, so the candidate is dropped at once
    /// on later calls.
    pub(super) fn own_program(
        &self,
        base: &Program,
        c: &Candidate,
    ) -> Result<Option<Arc<Program>>, Error> {
        match self.own_source(base, c) {
            None => Ok(None),
            Some((name, src)) => self.build_own(&name, src).map(Some),
        }
    }

    /// Builds a candidate's own program (or takes it from the caches), or gives the error of
    /// its failed build in this process.
    fn build_own(&self, name: &str, src: &str) -> Result<Arc<Program>, Error> {
        let key = self.broken_key(src);
        if let Some(log) = broken().get(&key) {
            return Err(Error::Build {
                program: name.to_string(),
                log: log.clone(),
                source_listing: String::new(),
            });
        }
        self.program(name, src, "").inspect_err(|e| {
            tracing::debug!(
                target: "parac::plan",
                "{name}: dropped, its program failed to build: {e}"
            );
            broken().insert(key, e.to_string());
        })
    }

    /// Queues the build of candidate `c`'s own program on the background thread (once while
    /// it is queued or under way). Whether the candidate waits for it: `false` when it has no
    /// program of its own to build.
    pub(super) fn build_later(&self, base: &Program, c: &Candidate) -> bool {
        let (Some((name, src)), Some(dev)) = (self.own_source(base, c), self.handle()) else {
            return false;
        };
        let key = self.broken_key(src);
        let src = src.to_string();
        crate::background::submit(key, move || {
            // A failure is remembered in `BROKEN`: the search drops the candidate.
            let _ = dev.build_own(&name, &src);
        });
        true
    }

    /// The program a call of function `name` starts from: `first` (the baseline's kernels and
    /// the model's plans, `parac_core::codegen::launch::first_program`) where it builds, else
    /// `baseline` (the baseline's kernels alone), each candidate then building its own. A
    /// `first` that fails to build is logged (`PARAC_LOG=plan`) and remembered for the process,
    /// as a candidate's program is.
    pub(crate) fn first_program(
        &self,
        name: &str,
        first: &str,
        baseline: &str,
    ) -> Result<Arc<Program>, Error> {
        let key = self.broken_key(first);
        let failed_before = broken().contains_key(&key);
        if !failed_before {
            let built = !self.has_program(first, "");
            let t = Instant::now();
            match self.program(name, first, "") {
                Ok(p) => {
                    // What a build costs here, as the search's steps that build a candidate
                    // expect it (an over-estimate: this program holds several kernels).
                    if built && !p.from_disk() {
                        learn(0, t.elapsed().as_secs_f64());
                    }
                    return Ok(p);
                }
                Err(e) => {
                    tracing::debug!(
                        target: "parac::plan",
                        "{name}: the program with the model's plans failed to build, \
                         building the baseline's alone: {e}"
                    );
                    broken().insert(key, e.to_string());
                }
            }
        }
        self.program(name, baseline, "")
    }

    /// The key of a candidate's program in [`BROKEN`] and on the background thread.
    fn broken_key(&self, src: &str) -> u64 {
        let mut h = DefaultHasher::new();
        (self as *const Device as usize).hash(&mut h);
        src.hash(&mut h);
        h.finish()
    }

    /// Which kind of step (see `STEP_COST`) timing candidate `c` is: one that builds its
    /// program (0) or not (1: its program is built, in the disk cache, or failed to build).
    pub(super) fn step_kind(&self, base: &Program, c: &Candidate) -> usize {
        match self.own_source(base, c) {
            None => 1,
            Some((_, src)) => usize::from(
                broken().contains_key(&self.broken_key(src)) || self.has_program(src, ""),
            ),
        }
    }
}
