//! The passes over the LIR, one per file, in the order [`super::lower`] runs them.

pub(crate) mod facts;
pub mod fuse;
pub mod gpu;
pub mod item_lanes;
mod lanes;
pub mod local_tile;
pub mod narrow;
pub mod parallel;
pub mod partition;
pub mod peephole;
pub mod scan_blocks;
pub mod scan_rows;
pub mod select_loads;
pub mod share_loads;
pub mod simplify;
pub mod slide;
pub mod stream;
pub mod tile;
pub mod vector_memory;
