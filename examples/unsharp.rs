//! `unsharp`: unsharp mask on a float RGB image (the paper's Fig. 12, Halide's `apps/unsharp`,
//! defined exactly in `shared/APPS.md` §4).
//!
//! `gray` = luma of the image; `by`, then `bx` = a 7-tap Gaussian blur (sigma 1.5, taps not
//! renormalised) of `gray`, vertical first, clamp-to-edge outside the image;
//! `out[c] = (2 gray - bx) / gray * img[c]`.
//!
//! ```text
//! cargo run --release --example unsharp -- [INPUT] [OUT_DIR] [--repeat N]
//! ```
//!
//! INPUT: a PNG (read as planar RGB in `[1/255, 1]`; a gray file gives three equal planes) or
//! an `f32` `[3][M][N]` `.npy` file; default `assets/coffee.png`. Writes to OUT_DIR (default
//! `target/parac-out/unsharp/`), each as `.png` (RGB, clamped to `[0, 1]`) and `.npy`: `input`
//! and `out`.

#[path = "common/mod.rs"]
mod common;
#[path = "pipelines/unsharp.rs"]
mod pipeline;

use std::process::ExitCode;

use common::{App, Args, Fail, Steps, dims};
use parac::{Matrix, Runtime};
use pipeline::unsharp;

const APP: App = App {
    name: "unsharp",
    summary: "unsharp mask on a float RGB image (APPS.md §4)",
    input: "f32 [3][M][N] (planar RGB in [1/255, 1])",
    default_asset: "coffee.png",
    levels: None,
};

fn main() -> ExitCode {
    common::main(&APP, run)
}

fn run(args: &Args, rt: &Runtime) -> Result<ExitCode, Fail> {
    let mut steps = Steps::default();
    let img = common::load_input::<f32>(&APP, args, &mut steps)?;
    common::require(&APP, img.ndim() == 3 && img.shape()[0] == 3, || {
        format!("the input has shape {}, not [3][M][N]", dims(img.shape()))
    })?;
    common::require(&APP, !img.is_empty(), || "the input is empty".to_string())?;
    let outside = img
        .as_slice()
        .iter()
        .filter(|v| !(1.0 / 255.0..=1.0).contains(*v))
        .count();
    if outside > 0 {
        println!(
            "note: {outside} input values are outside [1/255, 1] (or not finite); where the \
             gray value is 0 the output is inf or NaN"
        );
    }
    let mut dst = Matrix::<f32>::zeros(img.shape());
    common::run_single(
        args,
        &mut steps,
        "unsharp",
        "img",
        "all stages: gray, by, bx + ratio",
        &img,
        &mut dst,
        |src, dst| unsharp(rt, src, dst),
    )
}
