//! The hand-optimized OpenCL pipelines of the benches (`benches/hand/`) against the plain
//! references of `tests/common/reference.rs`: every stage's output and every pipeline's outputs,
//! stage by stage and fused, on each pipeline's size sweep (`tests/common/data.rs`: the smallest
//! legal sizes, odd sizes, sizes that are no multiple of the 16-lane vectors) and on the
//! photographs. Bit-exact for the integer pipelines, within 1e-4 for unsharp.
//!
//! Without an OpenCL device each test prints "skipped: no OpenCL" and passes, unless
//! `PARAC_REQUIRE_OPENCL=1`, which makes it a failure (as `tests/common/runtimes.rs` does).
//! `PARAC_DEVICE=opencl:<text>` picks the device, as for parac.

mod common;
#[path = "../benches/hand/mod.rs"]
mod hand;

use std::sync::{Mutex, OnceLock, PoisonError};

use common::check::{assert_close, assert_same};
use common::data;
use common::reference as r;
use common::runtimes::opencl_required;
use parac::Matrix;

use hand::Cl;

/// The device, opened once per test binary (PoCL 3.1 crashes when threads discover devices
/// concurrently); `None` when there is none.
fn cl() -> Option<&'static Cl> {
    static CL: OnceLock<Result<Cl, String>> = OnceLock::new();
    match CL.get_or_init(Cl::new) {
        Ok(cl) => Some(cl),
        Err(e) if opencl_required() => {
            panic!("PARAC_REQUIRE_OPENCL=1, but there is no OpenCL device: {e}")
        }
        Err(e) => {
            println!("skipped: no OpenCL ({e})");
            None
        }
    }
}

/// The tests share one queue; one at a time keeps failures readable.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The even columns of `h`: what the hand pipeline keeps of it.
fn even_columns(h: &Matrix<u8>) -> Matrix<u8> {
    let (m, n) = (h.shape()[0], h.shape()[1]);
    Matrix::from_fn([m, n.div_ceil(2)], |i| h.get(&[i[0], 2 * i[1]]))
}

fn check_laplacian(cl: &Cl, program: &opencl3::program::Program, src: &Matrix<u8>, what: &str) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let want = r::laplacian_stages(src);
    let mut p = hand::Laplacian::new(cl, program, m, n).unwrap();
    let (lap, down) = p.call(cl, src).unwrap();
    let ctx = format!("hand laplacian, {m}x{n} {what}");
    assert_same(
        &format!("{ctx}: he"),
        &p.he.read(cl).unwrap(),
        &even_columns(&want.h),
    );
    assert_same(&format!("{ctx}: down"), &down, &want.down);
    assert_same(&format!("{ctx}: lap"), &lap, &want.lap);
}

#[test]
fn laplacian() {
    let _s = serial();
    let Some(cl) = cl() else { return };
    let (program, _) = cl.build(hand::sources::LAPLACIAN).unwrap();
    for (m, n) in data::sweep_laplacian() {
        let seed = data::seed_for(0x4A4D_0001, m, n);
        check_laplacian(cl, &program, &data::random_u8(m, n, seed), "random");
        check_laplacian(cl, &program, &data::structured_u8(m, n, seed), "structured");
    }
    check_laplacian(cl, &program, &data::camera_u8(), "camera.png");
    check_laplacian(cl, &program, &data::coffee_u8(), "coffee.png");
}

fn check_sharpen(cl: &Cl, program: &opencl3::program::Program, src: &Matrix<u8>, what: &str) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let want = r::sharpen_stages(src);
    let ctx = format!("hand sharpen, {m}x{n} {what}");
    let mut p = hand::Sharpen::new(cl, program, m, n).unwrap();
    // Stage by stage: every intermediate.
    p.src.write(cl, src).unwrap();
    p.hand.run_stages(cl).unwrap();
    assert_same(
        &format!("{ctx}: down"),
        &p.down.read(cl).unwrap(),
        &want.down,
    );
    assert_same(&format!("{ctx}: up"), &p.up.read(cl).unwrap(), &want.up);
    assert_same(
        &format!("{ctx}: edge"),
        &p.edge.read(cl).unwrap(),
        &want.edge,
    );
    assert_eq!(p.read_mean(cl).unwrap(), want.mean, "{ctx}: mean");
    assert_same(
        &format!("{ctx}: out (stage kernels)"),
        &p.out.read(cl).unwrap(),
        &want.out,
    );
    // Fused.
    let out = p.call(cl, src).unwrap();
    assert_eq!(p.read_mean(cl).unwrap(), want.mean, "{ctx}: mean (fused)");
    assert_same(&format!("{ctx}: out (fused)"), &out, &want.out);
}

#[test]
fn sharpen() {
    let _s = serial();
    let Some(cl) = cl() else { return };
    let (program, _) = cl.build(hand::sources::SHARPEN).unwrap();
    for (m, n) in data::sweep_sharpen() {
        let seed = data::seed_for(0x4A4D_0002, m, n);
        check_sharpen(cl, &program, &data::random_u8(m, n, seed), "random");
        check_sharpen(cl, &program, &data::structured_u8(m, n, seed), "structured");
    }
    check_sharpen(cl, &program, &data::camera_u8(), "camera.png");
    check_sharpen(cl, &program, &data::coffee_u8(), "coffee.png");
}

fn check_blur(cl: &Cl, program: &opencl3::program::Program, src: &Matrix<u16>, what: &str) {
    let (m, n) = (src.shape()[0], src.shape()[1]);
    let ctx = format!("hand blur, {m}x{n} {what}");
    let want = r::blur(src);
    let mut p = hand::Blur::new(cl, program, m, n).unwrap();
    p.src.write(cl, src).unwrap();
    p.hand.run_stages(cl).unwrap();
    assert_same(
        &format!("{ctx}: bx"),
        &p.bx.read(cl).unwrap(),
        &r::blur_x(src),
    );
    assert_same(
        &format!("{ctx}: out (stage kernels)"),
        &p.out.read(cl).unwrap(),
        &want,
    );
    let out = p.call(cl, src).unwrap();
    assert_same(&format!("{ctx}: out (fused)"), &out, &want);
}

#[test]
fn blur() {
    let _s = serial();
    let Some(cl) = cl() else { return };
    let (program, _) = cl.build(hand::sources::BLUR).unwrap();
    for (m, n) in data::sweep_blur() {
        let seed = data::seed_for(0x4A4D_0003, m, n);
        check_blur(cl, &program, &data::random_u12(m, n, seed), "random 12-bit");
    }
    // Full 16-bit values: the hand kernels keep 32-bit sums, so they are exact there too.
    let mut rng = data::Rng::new(7);
    let wide = Matrix::<u16>::from_fn([37, 75], |_| rng.next_u32() as u16);
    check_blur(cl, &program, &wide, "random 16-bit");
    check_blur(cl, &program, &data::camera_u12(), "camera.png");
}

fn check_unsharp(cl: &Cl, program: &opencl3::program::Program, img: &Matrix<f32>, what: &str) {
    let (m, n) = (img.shape()[1], img.shape()[2]);
    let ctx = format!("hand unsharp, {m}x{n} {what}");
    let want = r::unsharp_stages(img);
    let f32s = |v: &[f64], shape: &[usize]| {
        Matrix::from_vec(shape, v.iter().map(|&x| x as f32).collect()).unwrap()
    };
    let mut p = hand::Unsharp::new(cl, program, m, n).unwrap();
    let out = p.call(cl, img).unwrap();
    let tol = 1e-4;
    assert_close(
        &format!("{ctx}: gray"),
        &p.gray.read(cl).unwrap(),
        &f32s(&want.gray, &[m, n]),
        tol,
    );
    assert_close(
        &format!("{ctx}: by"),
        &p.by.read(cl).unwrap(),
        &f32s(&want.by, &[m, n]),
        tol,
    );
    assert_close(
        &format!("{ctx}: out"),
        &out,
        &f32s(&want.out, &[3, m, n]),
        tol,
    );
}

#[test]
fn unsharp() {
    let _s = serial();
    let Some(cl) = cl() else { return };
    let (program, _) = cl.build(hand::sources::UNSHARP).unwrap();
    for (m, n) in data::sweep_unsharp() {
        let seed = data::seed_for(0x4A4D_0004, m, n);
        check_unsharp(cl, &program, &data::random_rgb(m, n, seed), "random RGB");
    }
    check_unsharp(cl, &program, &data::coffee_rgb(), "coffee.png");
}

/// The copy-bandwidth probe of the floor works and gives a plausible figure.
#[test]
fn copy_bandwidth() {
    let _s = serial();
    let Some(cl) = cl() else { return };
    let bw = hand::copy_bandwidth(cl, 8 << 20, 2).unwrap();
    assert!(bw.is_finite() && bw > 1e8, "{bw} B/s");
}
