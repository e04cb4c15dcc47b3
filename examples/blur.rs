//! `blur`: separable 3x3 box blur with Halide's `apps/blur` semantics (`shared/APPS.md` §3).
//!
//! No border: `bx` (3 taps along each row) is two columns narrower than `src`, and `out`
//! (3 taps down each column of `bx`) is also two rows shorter.
//!
//! Run with `cargo run --example blur`. Until the runtime lands, the call reports that the
//! pipeline cannot run yet.

#[path = "pipelines/blur.rs"]
mod pipeline;
use pipeline::blur;

fn main() {
    let rt = parac::Runtime::new().expect("a ParaC runtime");
    let (rows, cols) = (50, 67);
    // 12-bit values, as in the tests and benchmarks.
    let data = (0..rows * cols).map(|i| ((i * 37) % 4096) as u16).collect();
    let src = parac::Matrix::from_vec([rows, cols], data).expect("length matches the shape");
    let mut out = parac::Matrix::<u16>::zeros([rows - 2, cols - 2]);
    match blur(&rt, &src, &mut out) {
        Ok(()) => println!("ok"),
        Err(e) => println!("blur: {e}"),
    }
}
