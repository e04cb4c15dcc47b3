//! `blur`: separable 3x3 box blur with Halide's `apps/blur` semantics (`shared/APPS.md` §3).
//!
//! No border: `bx` (3 taps along each row) is two columns narrower than `src`, and `out`
//! (3 taps down each column of `bx`) is also two rows shorter.
//!
//! Run with `cargo run --example blur`. Until the runtime lands, the call reports that the
//! pipeline cannot run yet.

parac::parac! {
    /// Separable 3x3 box blur of a 16-bit image (12-bit values, so the sums cannot overflow).
    pub fn blur(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
        let bx: u16[M][N-2];
        parac_iterator it(0:M:1; 0:N-2:1) {
            bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
        }
        parac_iterator it1(0:M-2:1; 0:N-2:1) {
            out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
        }
    }
}

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
