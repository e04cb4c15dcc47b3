//! `blur`: separable 3x3 box blur with Halide's `apps/blur` semantics (`shared/APPS.md` §3).
//!
//! No border: `bx` (3 taps along each row) is two columns narrower than `src`, and `out`
//! (3 taps down each column of `bx`) is also two rows shorter.
//!
//! ```text
//! cargo run --release --example blur -- [INPUT] [OUT_DIR] [--repeat N]
//! ```
//!
//! INPUT: a PNG (read as 12-bit gray: the 16-bit gray value `>> 4`) or a `u16` `[M][N]` `.npy`
//! file, M, N >= 3; default `assets/camera.png`. Writes to OUT_DIR (default
//! `target/parac-out/blur/`), each as `.png` (12 bits shown as 8) and `.npy`: `input` and
//! `out` (`[M-2][N-2]`).

#[path = "common/mod.rs"]
mod common;
#[path = "pipelines/blur.rs"]
mod pipeline;

use std::process::ExitCode;

use common::{App, Args, Fail, Steps, dims};
use parac::{Matrix, Runtime};
use pipeline::blur;

const APP: App = App {
    name: "blur",
    summary: "separable 3x3 box blur, no border (APPS.md §3)",
    input: "u16 [M][N] (12-bit gray), M, N >= 3",
    default_asset: "camera.png",
    levels: None,
};

fn main() -> ExitCode {
    common::main(&APP, run)
}

fn run(args: &Args, rt: &Runtime) -> Result<ExitCode, Fail> {
    let mut steps = Steps::default();
    let src = common::load_input::<u16>(&APP, args, &mut steps)?;
    common::require(&APP, src.ndim() == 2, || {
        format!("the input has shape {}, not [M][N]", dims(src.shape()))
    })?;
    let (m, n) = (src.rows(), src.cols());
    common::require(&APP, m >= 3 && n >= 3, || {
        format!("the input {} is smaller than 3x3", dims(src.shape()))
    })?;
    let wide = src.as_slice().iter().filter(|&&v| v > 4095).count();
    if wide > 0 {
        println!(
            "note: {wide} input values are above 4095 (not 12-bit); the result is still exact, \
             the PNG views saturate"
        );
    }
    let mut dst = Matrix::<u16>::zeros([m - 2, n - 2]);
    common::run_single(
        args,
        &mut steps,
        "blur",
        "src",
        "both stages: bx, out",
        &src,
        &mut dst,
        |src, dst| blur(rt, src, dst),
    )
}
