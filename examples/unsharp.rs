//! `unsharp`: unsharp mask on a float RGB image (the paper's Fig. 12, Halide's `apps/unsharp`,
//! defined exactly in `shared/APPS.md` §4).
//!
//! `gray` = luma of the image; `by`, then `bx` = a 7-tap Gaussian blur (sigma 1.5, taps not
//! renormalised) of `gray`, vertical first, clamp-to-edge outside the image;
//! `out[c] = (2 gray - bx) / gray * img[c]`.
//!
//! Run with `cargo run --example unsharp`. Until the runtime lands, the call reports that the
//! pipeline cannot run yet.

#[path = "pipelines/unsharp.rs"]
mod pipeline;
use pipeline::unsharp;

fn main() {
    let rt = parac::Runtime::new().expect("a ParaC runtime");
    let (rows, cols) = (40, 57);
    let data = (0..3 * rows * cols)
        .map(|i| (1 + (i * 31) % 255) as f32 / 255.0)
        .collect();
    let img = parac::Matrix::from_vec([3, rows, cols], data).expect("length matches the shape");
    let mut out = parac::Matrix::<f32>::zeros([3, rows, cols]);
    match unsharp(&rt, &img, &mut out) {
        Ok(()) => println!("ok"),
        Err(e) => println!("unsharp: {e}"),
    }
}
