//! `laplacian`: one level of a Laplacian pyramid (the paper's Fig. 7, defined exactly in
//! `shared/APPS.md` §1), and a small pyramid built by applying it to its own `down` output.
//!
//! - `h` = `src` filtered horizontally with `[1 4 6 4 1] / 16` (border rule `br`: linear
//!   extrapolation of two columns on each side of `src`);
//! - `down` = `h` filtered vertically and sampled at every second row and column (border rule
//!   `br1`: the same extrapolation on the rows of `h`);
//! - `lap` = `src` minus the bilinear upsample of `down` (rounded, clamped at the last row and
//!   column).
//!
//! Run with `cargo run --example laplacian`. Until the runtime lands, the call reports that the
//! pipeline cannot run yet.

#[path = "pipelines/laplacian.rs"]
mod pipeline;
use pipeline::laplacian;

/// A deterministic test picture: a diagonal ramp with a bright square, no external file needed.
fn test_image(rows: usize, cols: usize) -> parac::Matrix<u8> {
    let data = (0..rows * cols)
        .map(|i| {
            let (r, c) = (i / cols, i % cols);
            let inside = (rows / 4..rows / 2).contains(&r) && (cols / 4..cols / 2).contains(&c);
            if inside {
                240
            } else {
                ((r * 3 + c * 5) % 200) as u8
            }
        })
        .collect();
    parac::Matrix::from_vec([rows, cols], data).expect("length matches the shape")
}

fn main() {
    let rt = parac::Runtime::new().expect("a ParaC runtime");
    // Odd, non-square sizes on purpose: every level exercises the odd-size paths.
    let mut level = test_image(75, 101);
    let levels = 3;
    for l in 0..levels {
        let (rows, cols) = (level.shape()[0], level.shape()[1]);
        if rows < 4 || cols < 4 {
            break;
        }
        let mut lap = parac::Matrix::<i16>::zeros([rows, cols]);
        let mut down = parac::Matrix::<u8>::zeros([rows.div_ceil(2), cols.div_ceil(2)]);
        match laplacian(&rt, &level, &mut lap, &mut down) {
            Ok(()) => println!("ok: level {l}: {rows}x{cols} -> {:?}", down.shape()),
            Err(e) => {
                println!("laplacian: {e}");
                return;
            }
        }
        level = down;
    }
    println!("ok");
}
