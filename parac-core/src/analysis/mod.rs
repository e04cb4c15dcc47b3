//! Analyses of checked IR, run after the checks on every function that compiled without error.
//! They only read index expressions and record what they find in the IR, for the optimization
//! model and the code generators to use.

mod coverage;
mod features;
mod forms;

pub use coverage::{region_writes_whole, written_whole};
pub use features::features;

use crate::ir::Module;

/// Runs every analysis on every function of `module`: fills each region's
/// [`features`](crate::ir::Region::features).
pub fn analyze_module(module: &mut Module) {
    for f in &mut module.functions {
        let found: Vec<_> = f.regions.iter().map(|r| features(f, r)).collect();
        for (r, feats) in f.regions.iter_mut().zip(found) {
            r.features = feats;
        }
    }
}
