//! The paper's Fig. 7, ported nearly line by line: one Laplacian-pyramid level with the
//! upsample written out as the paper does, with `if` branches for the first row, the last row
//! (even height) and the last column (even width) (`shared/paper/PARAC.md` §3).
//!
//! Differences from the listing, each marked `// paper:` below:
//! - names are snake_case (Rust style), constant matrices UPPER_CASE; the unused
//!   `dst_vertical` of line 4 is left out;
//! - `layer` is `i16`, not `unsigned char`: the difference is negative as often as positive
//!   (`shared/APPS.md` §1 makes it `i16`); `dst_ds` is an output, as `down` is in APPS.md;
//! - three index typos of the listing are fixed: line 31 reads `dst_ds[M-1]` for
//!   `dst_ds[(M+1)/2-1]`, and lines 39-40 read `Src[..][2*ity]` where the pixel being
//!   written is `Src[..][2*ity+1]`.
//!
//! With these fixes the result equals `examples/laplacian.rs` for every size (odd or even):
//! even output rows/columns copy a `dst_ds` sample, odd ones average two (or four) of them,
//! and the last row/column of an even-sized image repeats the one before it.
//!
//! Run with `cargo run --example fig7_laplacian`. Until the runtime lands, the call reports
//! that the pipeline cannot run yet.

// The examples' shared code: here only its runtime and log subscriber.
#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

parac::parac! {
    /// Fig. 7: `layer = src - upsample(dst_ds)`, `dst_ds` = the next, half-size level.
    pub fn laplacian_fig7(src: &u8[M][N], layer: &mut i16[M][N], dst_ds: &mut u8[(M+1)/2][(N+1)/2]) {
        const FILTER_HORIZON: u8[1][5] = [[1, 4, 6, 4, 1]];
        const FILTER_VERTICAL: u8[5][1] = [[1], [4], [6], [4], [1]];
        let dst_horizon: u8[M][N];
        parac_border_rule br {
            src[*][-2] = src[*][3]*4 - src[*][1]*4 + src[*][0]*2 - src[*][2];
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
            src[*][+2] = src[*][N-4]*4 - src[*][N-2]*4 + src[*][N-1]*2 - src[*][N-3];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            dst_horizon[itx][ity] = (parac_convolution(FILTER_HORIZON, src[itx][ity-2:5:1]) + 8) / 16;
        }
        parac_border_rule br1 {
            dst_horizon[-2][*] = dst_horizon[3][*]*4 - dst_horizon[1][*]*4 + dst_horizon[0][*]*2 - dst_horizon[2][*];
            dst_horizon[-1][*] = dst_horizon[1][*]*2 - dst_horizon[3][*];
            dst_horizon[+1][*] = dst_horizon[M-2][*]*2 - dst_horizon[M-4][*];
            dst_horizon[+2][*] = dst_horizon[M-4][*]*4 - dst_horizon[M-2][*]*4 + dst_horizon[M-1][*]*2 - dst_horizon[M-3][*];
        }
        parac_iterator it1(0:(M+1)/2:1; 0:(N+1)/2:1) parac_border_rule(br1) {
            dst_ds[it1x][it1y] = (parac_convolution(FILTER_VERTICAL, dst_horizon[it1x*2-2:5:1][it1y*2]) + 8) / 16;
        }
        let (half_width, half_height) = (N / 2, M / 2);
        let (width_odd, height_odd) = (N - half_width * 2, M - half_height * 2);
        // One iteration per `dst_ds` sample: it writes output rows 2*itx-1 and 2*itx (row 0
        // alone for itx == 0, plus row M-1 for the last itx of an even height) and columns
        // 2*ity and 2*ity+1 (that one only if it exists).
        parac_iterator it(0:(M+1)/2:1; 0:(N+1)/2:1) {
            if itx == 0 {
                layer[0][ity*2] = src[0][ity*2] - dst_ds[0][ity];
                if ity != (N+1)/2 - 1 {
                    layer[0][ity*2+1] = src[0][ity*2+1] - (dst_ds[0][ity] + dst_ds[0][ity+1] + 1) / 2;
                }
                if ity == (N+1)/2 - 1 && width_odd == 0 {
                    layer[0][ity*2+1] = src[0][ity*2+1] - dst_ds[0][ity];
                }
            }
            if height_odd == 0 && itx == (M+1)/2 - 1 {
                layer[M-1][ity*2] = src[M-1][ity*2] - dst_ds[(M+1)/2-1][ity];
                if ity != (N+1)/2 - 1 {
                    layer[M-1][ity*2+1] = src[M-1][ity*2+1]
                        - (dst_ds[(M+1)/2-1][ity] + dst_ds[(M+1)/2-1][ity+1] + 1) / 2;
                }
                if ity == (N+1)/2 - 1 && width_odd == 0 {
                    // paper: `dst_ds[M-1][ity]`
                    layer[M-1][ity*2+1] = src[M-1][ity*2+1] - dst_ds[(M+1)/2-1][ity];
                }
            }
            if itx != 0 {
                layer[2*itx-1][2*ity] = src[2*itx-1][2*ity] - (dst_ds[itx-1][ity] + dst_ds[itx][ity] + 1) / 2;
                layer[2*itx][2*ity] = src[2*itx][2*ity] - dst_ds[itx][ity];
                if ity != (N+1)/2 - 1 {
                    layer[2*itx-1][2*ity+1] = src[2*itx-1][2*ity+1]
                        - (dst_ds[itx-1][ity] + dst_ds[itx-1][ity+1] + dst_ds[itx][ity] + dst_ds[itx][ity+1] + 2) / 4;
                    layer[2*itx][2*ity+1] = src[2*itx][2*ity+1] - (dst_ds[itx][ity] + dst_ds[itx][ity+1] + 1) / 2;
                }
                if width_odd == 0 && ity == (N+1)/2 - 1 {
                    // paper: `Src[2*itx-1][2*ity]` and `Src[2*itx][2*ity]`
                    layer[2*itx-1][2*ity+1] = src[2*itx-1][2*ity+1] - (dst_ds[itx-1][ity] + dst_ds[itx][ity] + 1) / 2;
                    layer[2*itx][2*ity+1] = src[2*itx][2*ity+1] - dst_ds[itx][ity];
                }
            }
        }
    }
}

fn main() {
    // `Runtime::from_env`, with the log subscriber of every example (PARAC_LOG).
    let rt = common::runtime_from_env().expect("a ParaC runtime");
    // One odd and one even side: both kinds of last row/column are exercised.
    let (rows, cols) = (37, 52);
    let data = (0..rows * cols)
        .map(|i| ((i / cols) * 5 + (i % cols) * 3) as u8)
        .collect();
    let src = parac::Matrix::from_vec([rows, cols], data).expect("length matches the shape");
    let mut layer = parac::Matrix::<i16>::zeros([rows, cols]);
    let mut dst_ds = parac::Matrix::<u8>::zeros([rows.div_ceil(2), cols.div_ceil(2)]);
    match laplacian_fig7(&rt, &src, &mut layer, &mut dst_ds) {
        Ok(()) => println!("ok"),
        Err(e) => println!("laplacian_fig7: {e}"),
    }
}
