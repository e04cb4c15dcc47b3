//! Shared by the integration tests: plain reference implementations of the benchmark pipelines
//! and border modes ([`reference`]), test data ([`data`]) and comparisons with useful failure
//! messages ([`check`]). Each test binary uses a subset, hence the `dead_code` allowances.

#![allow(dead_code)]

pub mod check;
pub mod data;
pub mod reference;
pub mod runtimes;
pub mod soft;
