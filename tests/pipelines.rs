//! The four benchmark pipelines (`examples/pipelines/`, shared with the example binaries) against
//! the hand-written references of `tests/common/reference.rs`, on every runtime: the CPU path and,
//! when there is one, an OpenCL device (see `tests/common/runtimes.rs`; `PARAC_REQUIRE_OPENCL=1`
//! makes a missing device a failure). Each test exists twice, `<test>::cpu` and `<test>::opencl`,
//! calling the same generated function with a different `Runtime`.
//!
//! Inputs: random images of every size of the pipeline's sweep (`tests/common/data.rs`, one fixed
//! seed per pipeline mixed with the size), a structured image for the pipelines whose behaviour
//! depends on flat areas, and the two photographs of `assets/`. Integer pipelines must match
//! bit-exactly (laplacian's two outputs, sharpen, blur), unsharp within 1e-4 (APPS.md).
//!
//! In a debug build the whole sweeps take a few seconds per pipeline; the reference results are
//! computed once per binary and shared by the CPU and OpenCL halves ([`runtimes::memo`]).

#[macro_use]
mod common;

#[path = "../examples/pipelines/blur.rs"]
mod blur_p;
#[path = "../examples/pipelines/laplacian.rs"]
mod laplacian_p;
#[path = "../examples/pipelines/sharpen.rs"]
mod sharpen_p;
#[path = "../examples/pipelines/unsharp.rs"]
mod unsharp_p;

use std::sync::Arc;

use common::data;
use common::reference as r;
use common::runtimes::{self, memo};
use common::soft::Failures;
use parac::{Matrix, Runtime};

/// Tolerance of `unsharp` (APPS.md §4).
const UNSHARP_TOL: f64 = 1e-4;

/// Base seeds of the random images, one per pipeline.
const SEED_LAPLACIAN: u64 = 0x1A91_0001;
const SEED_SHARPEN: u64 = 0x5A49_0002;
const SEED_BLUR: u64 = 0xB1B1_0003;
const SEED_UNSHARP: u64 = 0x0C5E_0004;

on_every_runtime! {
    laplacian_random_sweep,
    laplacian_photographs,
    sharpen_random_sweep,
    sharpen_photographs,
    blur_random_sweep,
    blur_photographs,
    unsharp_random_sweep,
    unsharp_photographs,
}

/// `"<pipeline> on <runtime>, <rows>x<cols> <input>"` for failure messages.
fn what(pipeline: &str, rt: &Runtime, shape: &[usize], input: &str) -> String {
    let dims = shape
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("x");
    format!("{pipeline} on {}, size {dims}, {input}", runtimes::name(rt))
}

// ---- laplacian ---------------------------------------------------------------------------------

/// Runs `laplacian` on `src` and compares both outputs with the reference (computed once per
/// `key`).
fn check_laplacian(f: &mut Failures, rt: &Runtime, src: &Matrix<u8>, key: &str, input: &str) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let want = memo(&format!("laplacian {key}"), || r::laplacian(src));
    let (want_lap, want_down) = (&want.0, &want.1);
    let mut lap = Matrix::<i16>::zeros([m, n]);
    let mut down = Matrix::<u8>::zeros([m.div_ceil(2), n.div_ceil(2)]);
    let ctx = what("laplacian", rt, src.shape(), input);
    if let Err(e) = laplacian_p::laplacian(rt, src, &mut lap, &mut down) {
        f.fail(format!("{ctx}: returned an error: {e}"));
        return;
    }
    f.same(&format!("{ctx}: output `lap`"), &lap, want_lap);
    f.same(&format!("{ctx}: output `down`"), &down, want_down);
}

fn laplacian_random_sweep(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    for (m, n) in data::sweep_laplacian() {
        let seed = data::seed_for(SEED_LAPLACIAN, m, n);
        let src = data::random_u8(m, n, seed);
        check_laplacian(
            f,
            rt,
            &src,
            &format!("random {seed}"),
            &format!("random (seed {seed:#x})"),
        );
        // Structured data (flat areas and ramps), on the smaller sizes.
        if m * n <= 64 * 64 {
            let src = data::structured_u8(m, n, seed);
            check_laplacian(
                f,
                rt,
                &src,
                &format!("structured {seed}"),
                &format!("structured (seed {seed:#x})"),
            );
        }
    }
    failures.finish();
}

fn laplacian_photographs(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    let camera = memo("camera u8", data::camera_u8);
    check_laplacian(f, rt, &camera, "camera", "assets/camera.png");
    let coffee = memo("coffee u8", data::coffee_u8);
    check_laplacian(f, rt, &coffee, "coffee", "assets/coffee.png (gray)");
    // The next pyramid level of the photograph (the reference's `down`, 256x256), cropped by one
    // row and column to odd sides.
    let level1 = memo("camera level1", || {
        let (_, down) = r::laplacian(&camera);
        data::crop(&down, 255, 255)
    });
    check_laplacian(
        f,
        rt,
        &level1,
        "camera level1",
        "assets/camera.png, level 1 cropped to 255x255",
    );
    failures.finish();
}

// ---- sharpen -----------------------------------------------------------------------------------

fn check_sharpen(f: &mut Failures, rt: &Runtime, src: &Matrix<u8>, key: &str, input: &str) {
    let want: Arc<Matrix<u8>> = memo(&format!("sharpen {key}"), || r::sharpen(src));
    let mut out = Matrix::<u8>::zeros(src.shape());
    let ctx = what("sharpen", rt, src.shape(), input);
    if let Err(e) = sharpen_p::sharpen(rt, src, &mut out) {
        f.fail(format!("{ctx}: returned an error: {e}"));
        return;
    }
    f.same(&format!("{ctx}: output `out`"), &out, &want);
}

fn sharpen_random_sweep(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    for (m, n) in data::sweep_sharpen() {
        let seed = data::seed_for(SEED_SHARPEN, m, n);
        let src = data::random_u8(m, n, seed);
        check_sharpen(
            f,
            rt,
            &src,
            &format!("random {seed}"),
            &format!("random (seed {seed:#x})"),
        );
        // Random bytes are all edges (the mean saturates the gain); structured data has flat
        // areas too, so every branch of the gain and the overshoot clamp is taken.
        if m * n <= 68 * 100 {
            let src = data::structured_u8(m, n, seed);
            check_sharpen(
                f,
                rt,
                &src,
                &format!("structured {seed}"),
                &format!("structured (seed {seed:#x})"),
            );
        }
    }
    failures.finish();
}

fn sharpen_photographs(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    let camera = memo("camera u8", data::camera_u8);
    check_sharpen(f, rt, &camera, "camera", "assets/camera.png");
    let coffee = memo("coffee u8", data::coffee_u8);
    check_sharpen(f, rt, &coffee, "coffee", "assets/coffee.png (gray)");
    failures.finish();
}

// ---- blur --------------------------------------------------------------------------------------

fn check_blur(f: &mut Failures, rt: &Runtime, src: &Matrix<u16>, key: &str, input: &str) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let want: Arc<Matrix<u16>> = memo(&format!("blur {key}"), || r::blur(src));
    let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
    let ctx = what("blur", rt, src.shape(), input);
    if let Err(e) = blur_p::blur(rt, src, &mut out) {
        f.fail(format!("{ctx}: returned an error: {e}"));
        return;
    }
    f.same(&format!("{ctx}: output `out`"), &out, &want);
}

fn blur_random_sweep(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    for (m, n) in data::sweep_blur() {
        let seed = data::seed_for(SEED_BLUR, m, n);
        let src = data::random_u12(m, n, seed);
        check_blur(
            f,
            rt,
            &src,
            &format!("random {seed}"),
            &format!("random 12-bit (seed {seed:#x})"),
        );
    }
    failures.finish();
}

fn blur_photographs(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    let camera = memo("camera u12", data::camera_u12);
    check_blur(f, rt, &camera, "camera", "assets/camera.png (12-bit)");
    let coffee = memo("coffee u12", data::coffee_u12);
    check_blur(f, rt, &coffee, "coffee", "assets/coffee.png (12-bit gray)");
    failures.finish();
}

// ---- unsharp -----------------------------------------------------------------------------------

fn check_unsharp(f: &mut Failures, rt: &Runtime, img: &Matrix<f32>, key: &str, input: &str) {
    let want: Arc<Matrix<f32>> = memo(&format!("unsharp {key}"), || r::unsharp(img));
    let mut out = Matrix::<f32>::zeros(img.shape());
    let ctx = what("unsharp", rt, img.shape(), input);
    if let Err(e) = unsharp_p::unsharp(rt, img, &mut out) {
        f.fail(format!("{ctx}: returned an error: {e}"));
        return;
    }
    f.close(&format!("{ctx}: output `out`"), &out, &want, UNSHARP_TOL);
}

fn unsharp_random_sweep(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    for (m, n) in data::sweep_unsharp() {
        let seed = data::seed_for(SEED_UNSHARP, m, n);
        let img = data::random_rgb(m, n, seed);
        check_unsharp(
            f,
            rt,
            &img,
            &format!("random {seed}"),
            &format!("random RGB (seed {seed:#x})"),
        );
    }
    failures.finish();
}

fn unsharp_photographs(rt: &Runtime) {
    let mut failures = Failures::new();
    let f = &mut failures;
    let coffee = memo("coffee rgb", data::coffee_rgb);
    check_unsharp(f, rt, &coffee, "coffee", "assets/coffee.png (RGB)");
    // The gray photograph as three equal planes in [1/255, 1].
    let camera = memo("camera rgb", || {
        parac::io::load_png::<f32>(data::assets_dir().join("camera.png"))
            .expect("assets/camera.png")
    });
    check_unsharp(
        f,
        rt,
        &camera,
        "camera",
        "assets/camera.png (3 equal planes)",
    );
    failures.finish();
}
