//! A program's plans in memory, by (region, size class): what its plan cache file holds, loaded
//! on first use, and whether a thread is searching a region now; a search's state saved back
//! to the file, merged with what another process wrote there meanwhile.

use std::any::Any;
use std::collections::HashMap;
use std::path::PathBuf;

use super::super::device::Device;
use super::super::program::Program;
use super::costs::{seed_step_costs, step_costs};
use super::report::describe;
use super::{PlanRecord, cache};

/// A (region, size class) of a program: what the plan cache holds for it, and whether a thread
/// is searching it now.
#[derive(Debug, Default)]
pub(crate) struct Entry {
    pub(super) saved: cache::Saved,
    pub(super) busy: bool,
    /// `PARAC_LOG=plan` printed its cache hit.
    pub(super) reported: bool,
}

/// The plans of a program, by (region, size class).
pub(crate) type Memo = HashMap<(String, String), Entry>;

impl Device {
    fn plan_file(&self, program: &Program) -> Option<PathBuf> {
        let dir = self.program_cache_dir()?;
        let parent = dir.parent()?.join("plans");
        Some(parent.join(cache::file_name(&program.key_hash)))
    }

    /// The plan memo `program` holds in `slot` (its `plans`, locked), loaded from the plan cache
    /// file on first use.
    pub(super) fn memo<'a>(
        &self,
        program: &Program,
        slot: &'a mut Option<Box<dyn Any + Send>>,
    ) -> &'a mut Memo {
        if !slot.as_ref().is_some_and(|b| b.is::<Memo>()) {
            *slot = Some(Box::new(self.load_plans(program)));
        }
        match slot.as_mut().and_then(|b| b.downcast_mut::<Memo>()) {
            Some(m) => m,
            None => unreachable!("the slot holds a Memo, set just above"),
        }
    }

    /// The plan cache's entries of `program`, as the memo's.
    fn load_plans(&self, program: &Program) -> Memo {
        let Some(path) = self.plan_file(program) else {
            return Memo::new();
        };
        let file = cache::load(&path);
        seed_step_costs(&file.costs);
        file.plans
            .into_iter()
            .map(|(k, saved)| {
                (
                    k,
                    Entry {
                        saved,
                        ..Entry::default()
                    },
                )
            })
            .collect()
    }

    /// Saves a search's state in the plan file, merged with what another process may have
    /// written there meanwhile. A cache that cannot be written is no error: the plans stay in
    /// this process (one warning event per directory, target `parac::cache`).
    pub(super) fn store_plans(
        &self,
        program: &Program,
        key: (String, String),
        saved: cache::Saved,
        last: Option<&PlanRecord>,
    ) {
        let Some(path) = self.plan_file(program).filter(|_| !self.cache_read_only()) else {
            return;
        };
        let comments = [
            format!(
                "plans of `{}` on {} ({})",
                program.name(),
                self.info().name,
                self.info().driver_version
            ),
            match last {
                Some(r) => format!("last search step: {}", describe(r)),
                None => format!("last call of {}: no step fitted its budget", key.0),
            },
        ];
        let mut one = cache::PlanFile {
            costs: step_costs(),
            ..cache::PlanFile::default()
        };
        one.plans.insert(key, saved);
        if let Err(e) = cache::update(&path, &comments, |p| cache::merge(p, one)) {
            let dir = path.parent().unwrap_or(&path).to_path_buf();
            cache::report_once(&dir, || {
                format!(
                    "plan cache {} cannot be written ({e}); plans are kept in this process only",
                    dir.display()
                )
            });
        }
    }
}
