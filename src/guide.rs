//! The user guide: ten chapters from a first pipeline to tuning and shipping plans, whose text
//! is in `docs/guide/` (the index: `docs/guide/README.md`).
//!
//! Each chapter is the documentation of one module below, so that every program in it runs as
//! a doc test of this crate (`cargo test --doc -p parac guide`). The modules hold nothing else.

#[doc = include_str!("../docs/guide/01-first-pipeline.md")]
pub mod first_pipeline {}

#[doc = include_str!("../docs/guide/02-windows-borders-errors.md")]
pub mod windows_borders_errors {}

#[doc = include_str!("../docs/guide/03-intermediates-fusion.md")]
pub mod intermediates_fusion {}

#[doc = include_str!("../docs/guide/04-colour-and-types.md")]
pub mod colour_and_types {}

#[doc = include_str!("../docs/guide/05-opencl-device.md")]
pub mod opencl_device {}

#[doc = include_str!("../docs/guide/06-time-steps.md")]
pub mod time_steps {}

#[doc = include_str!("../docs/guide/07-histograms-scans.md")]
pub mod histograms_scans {}

#[doc = include_str!("../docs/guide/08-plans-and-tuning.md")]
pub mod plans_and_tuning {}

#[doc = include_str!("../docs/guide/09-inspecting.md")]
pub mod inspecting {}

#[doc = include_str!("../docs/guide/10-configuration.md")]
pub mod configuration {}
