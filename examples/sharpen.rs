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
//! Run with `cargo run --example sharpen`. Until the runtime lands, the call reports that the
//! pipeline cannot run yet.

#[path = "pipelines/sharpen.rs"]
mod pipeline;
use pipeline::sharpen;

/// A deterministic test picture with edges of both polarities and a flat area.
fn test_image(rows: usize, cols: usize) -> parac::Matrix<u8> {
    let data = (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            match (r * 4 / rows, c * 4 / cols) {
                (0, _) => 20,
                (1, k) => (60 * k) as u8,
                (2, _) => ((r * 7 + c * 13) % 256) as u8,
                _ => 230,
            }
        })
        .collect();
    parac::Matrix::from_vec([rows, cols], data).expect("length matches the shape")
}

fn main() {
    let rt = parac::Runtime::new().expect("a ParaC runtime");
    // Multiples of 4, not square, so rows and columns cannot be mixed up unnoticed.
    let src = test_image(48, 64);
    let mut out = parac::Matrix::<u8>::zeros([48, 64]);
    match sharpen(&rt, &src, &mut out) {
        Ok(()) => println!("ok"),
        Err(e) => println!("sharpen: {e}"),
    }
}
