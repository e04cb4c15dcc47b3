//! Shared by the integration tests: plain reference implementations of the benchmark pipelines
//! and border modes ([`reference`]), test data ([`data`]) and comparisons with useful failure
//! messages ([`check`]). Each test binary uses a subset, hence the `dead_code` allowances.
#![allow(dead_code)]

/// Defines `mod $test { #[test] fn cpu(); #[test] fn opencl(); }` running the function
/// `$test(rt)` on the CPU path and on the OpenCL device (skipped without one, failing with
/// `PARAC_REQUIRE_OPENCL=1`). Both hold the shared buffer lock, so the leak test, which takes
/// it exclusively, counts only its own buffers.
#[allow(unused_macros)]
macro_rules! on_every_runtime {
    ($($test:ident),* $(,)?) => {$(
        mod $test {
            #[test]
            fn cpu() {
                let _b = crate::common::runtimes::shared_buffers();
                super::$test(crate::common::runtimes::cpu());
            }
            #[test]
            fn opencl() {
                let _b = crate::common::runtimes::shared_buffers();
                if let Some(rt) = crate::common::runtimes::opencl() {
                    super::$test(rt);
                }
            }
        }
    )*};
}

pub mod canary;
pub mod check;
pub mod data;
pub mod differential;
pub mod reference;
pub mod runtimes;
pub mod soft;
