//! `sharpen`: edge-adaptive sharpening (the paper's Fig. 6 and Fig. 11, defined exactly in
//! `shared/APPS.md` §2).
//!
//! 1. `down` = 4x downsample (rounded mean of each 4x4 block);
//! 2. `up` = 4x bilinear upsample of `down` with the paper's weights in eighths;
//! 3. `err = src - up`;
//! 4. `edge` = Sobel magnitude `min(|gx| + |gy|, 255)` of `src` (replicate border);
//! 5. `mean` = global mean of `edge` (a whole-image reduction on 64 bits);
//! 6. `gain = min(edge * 16 / (mean + 16), 32)`, `pre = up + err * (16 + gain) / 16`;
//! 7. overshoot control: `pre` is clamped to the 3x3 min/max of `src` widened by 8 (clamp
//!    border), then to `0..=255`.
//!
//! ```text
//! cargo run --release --example sharpen -- [INPUT] [OUT_DIR] [--repeat N]
//! ```
//!
//! INPUT: a PNG (read as 8-bit gray) or a `u8` `[M][N]` `.npy` file; default
//! `assets/camera.png`. The pipeline needs sides that are multiples of 4 (at least 8): of an
//! input that is not, the pipeline reads the top-left region whose sides are (a view with the
//! image's row pitch, no copy), and the example says so. Writes to OUT_DIR (default `target/parac-out/sharpen/`), each as `.png` and `.npy`:
//! `input` (as the pipeline saw it: the region it read) and `out`.

#[path = "common/mod.rs"]
mod common;
#[path = "pipelines/sharpen.rs"]
mod pipeline;

use std::process::ExitCode;

use common::{App, Args, Fail, Steps, dims};
use parac::{Matrix, Runtime};
use pipeline::sharpen;

const APP: App = App {
    name: "sharpen",
    summary: "edge-adaptive sharpening (APPS.md §2)",
    input: "u8 [M][N] (8-bit gray), M, N >= 8; the top-left region with sides multiples of 4 is read",
    default_asset: "camera.png",
    levels: None,
};

fn main() -> ExitCode {
    common::main(&APP, run)
}

fn run(args: &Args, rt: &Runtime) -> Result<ExitCode, Fail> {
    let mut steps = Steps::default();
    let src = common::load_input::<u8>(&APP, args, &mut steps)?;
    common::require(&APP, src.ndim() == 2, || {
        format!("the input has shape {}, not [M][N]", dims(src.shape()))
    })?;
    let (m, n) = (src.rows(), src.cols());
    let (m4, n4) = (m / 4 * 4, n / 4 * 4);
    common::require(&APP, m4 >= 8 && n4 >= 8, || {
        format!("the input {} is smaller than 8x8", dims(src.shape()))
    })?;
    // The pipeline reads the region of interest as it is, with the image's row pitch.
    let roi = src
        .roi(0, 0, m4, n4)
        .expect("the region is inside the image");
    if (m4, n4) != (m, n) {
        println!(
            "input: the [{m4}][{n4}] region at the top-left of [{m}][{n}], read in place: \
             sharpen needs sides that are multiples of 4"
        );
    }
    let mut dst = Matrix::<u8>::zeros([m4, n4]);
    common::run_single(
        args,
        &mut steps,
        "sharpen",
        "src",
        "all stages: down, up, sobel, mean, sharpen + overshoot control",
        &roi,
        &mut dst,
        |src, dst| sharpen(rt, src, dst),
    )
}
