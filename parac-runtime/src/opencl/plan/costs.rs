//! What a search step costs, by kind, learned in this process and carried by the plan files
//! (a process seeds what it has not learned yet from them): whether a step fits in what is
//! left of a call's budget.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

/// What one search step costs, learned in this process (a moving average of the steps timed)
/// or, before any, read from a plan file: `[0]` a step that builds its candidate's program,
/// `[1]` one that does not (it may still make the driver compile the kernel for a new
/// work-group size: PoCL compiles at the first launch), `[2]` one that times a plan again.
static STEP_COST: Mutex<[Option<f64>; 3]> = Mutex::new([None, None, None]);

/// A step of kind 2 (see [`STEP_COST`]).
pub(super) const AGAIN: usize = 2;

/// Learns that a step of `kind` (see [`STEP_COST`]) took `seconds`.
pub(super) fn learn(kind: usize, seconds: f64) {
    let mut c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    c[kind] = Some(c[kind].map_or(seconds, |old| 0.5 * old + 0.5 * seconds));
}

/// What a step of `kind` is expected to cost: the moving average, or 0 before any.
pub(super) fn expected(kind: usize) -> f64 {
    STEP_COST.lock().unwrap_or_else(PoisonError::into_inner)[kind].unwrap_or(0.0)
}

/// The step costs learned so far, for a plan file.
pub(super) fn step_costs() -> BTreeMap<usize, f64> {
    let c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    (0..c.len()).filter_map(|k| Some((k, c[k]?))).collect()
}

/// Takes the step costs of a plan file where this process has learned none.
pub(super) fn seed_step_costs(costs: &BTreeMap<usize, f64>) {
    let mut c = STEP_COST.lock().unwrap_or_else(PoisonError::into_inner);
    for (k, v) in costs {
        if let Some(slot) = c.get_mut(*k) {
            slot.get_or_insert(*v);
        }
    }
}
