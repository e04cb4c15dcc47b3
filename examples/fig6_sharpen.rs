//! The paper's Fig. 6, ported nearly line by line: the mean, 4x downsample and 4x upsample
//! pieces of its sharpening algorithm (`shared/paper/PARAC.md` §3).
//!
//! Differences from the listing, each marked `// paper:` below:
//! - names are snake_case (Rust style), constant matrices UPPER_CASE;
//! - line 1 (`short mean = ...`) is a statement of the paper's host code; here it is a pipeline
//!   of its own that returns the mean (`-> i16` and `return`);
//! - the listing's `iter_element;` slot in line 3 has no counterpart: an iterator's dimensions
//!   are just `lo:hi:step`; its bounds `0:M:4` become `0:M/4*4:4` so that the last block is
//!   whole for every size (the listing assumes multiples of 4);
//! - float literals `7/8.0f` are written `7.0 / 8.0` (an f32 constant expression);
//! - the listing swaps `M` and `N` in lines 12-13, 16 and 20, 23 (it was written for square
//!   images): the right border columns are `N-2`, `N-1` (source column `N/4-1`), the bottom
//!   border rows are `M-2`, `M-1` (source row `M/4-1`).
//!
//! This is the paper's own upsample (its borders interpolate in quarters aligned to the block
//! start); `examples/sharpen.rs` is the exact pipeline of `shared/APPS.md`.
//!
//! Run with `cargo run --example fig6_sharpen`. Until the runtime lands, each call reports
//! that the pipeline cannot run yet.

// The examples' shared code: here only its runtime and log subscriber.
#[allow(dead_code)]
#[path = "common/mod.rs"]
mod common;

parac::parac! {
    /// Fig. 6 line 1: `short mean = parac_matrix_sum(pEdge) / (M*N) + 2/2;`
    pub fn sharpen_mean(p_edge: &u8[M][N]) -> i16 {
        // paper: `2/2` is integer division, i.e. `+ 1`; kept as written.
        let mean: i16 = (parac_matrix_sum(p_edge) / (M * N) as i64 + 2 / 2) as i16;
        return mean;
    }

    /// Fig. 6 lines 2-4: `DownScaleNewX16`, the rounded mean of every 4x4 block.
    pub fn down_scale_new_x16(p_image_src: &u8[M][N], p_image_dst: &mut u8[M/4][N/4]) {
        // paper: `parac_iterator it(iter_element; 0:M:4; 0:N:4)`, which assumes that M and N
        // are multiples of 4; `M/4*4` stops at the last whole block for any size.
        parac_iterator it(0:M/4*4:4; 0:N/4*4:4) {
            p_image_dst[itx/4][ity/4] = (parac_matrix_sum(p_image_src[itx:4:1][ity:4:1]) + 8) >> 4;
        }
    }

    /// Fig. 6 lines 5-26: `UpScaleNewX16`, the 4x upsample: border columns (it1), border rows
    /// (it2), then the interior as 4x4 blocks `mp * src[2x2] * transe(mp)` (it).
    pub fn up_scale_new_x16(src_image: &u8[M/4][N/4], dst_image: &mut u8[M][N]) {
        const BORDER_MP_0: f32[4][1] = [[1.0], [3.0 / 4.0], [2.0 / 4.0], [1.0 / 4.0]];
        const BORDER_MP_1: f32[4][1] = [[0.0], [1.0 / 4.0], [2.0 / 4.0], [3.0 / 4.0]];
        // The two left and two right columns, four rows per iteration.
        parac_iterator it1(0:M/4:1; 0:1:1) {
            if it1x == M/4 - 1 {
                dst_image[it1x*4][0] = dst_image[it1x*4+1][0] = dst_image[it1x*4+2][0] = dst_image[it1x*4+3][0] = src_image[it1x][0];
                dst_image[it1x*4][1] = dst_image[it1x*4+1][1] = dst_image[it1x*4+2][1] = dst_image[it1x*4+3][1] = src_image[it1x][0];
                // paper: columns `M-2`, `M-1` and source column `M/4-1`
                dst_image[it1x*4][N-2] = dst_image[it1x*4+1][N-2] =
                    dst_image[it1x*4+2][N-2] = dst_image[it1x*4+3][N-2] = src_image[it1x][N/4-1];
                dst_image[it1x*4][N-1] = dst_image[it1x*4+1][N-1] =
                    dst_image[it1x*4+2][N-1] = dst_image[it1x*4+3][N-1] = src_image[it1x][N/4-1];
            } else {
                dst_image[it1x*4:4:1][0] = dst_image[it1x*4:4:1][1] =
                    src_image[it1x][0] * BORDER_MP_0 + src_image[it1x+1][0] * BORDER_MP_1;
                // paper: columns `M-2`, `M-1` and source column `M/4-1`
                dst_image[it1x*4:4:1][N-2] = dst_image[it1x*4:4:1][N-1] =
                    src_image[it1x][N/4-1] * BORDER_MP_0 + src_image[it1x+1][N/4-1] * BORDER_MP_1;
            }
        }
        // The two top and two bottom rows, four columns per iteration (no row dimension).
        parac_iterator it2(; 0:N/4:1) {
            if it2y == N/4 - 1 {
                dst_image[0][it2y*4] = dst_image[0][it2y*4+1] = dst_image[1][it2y*4] = dst_image[1][it2y*4+1] = src_image[0][it2y];
                // paper: rows `N-2`, `N-1` and source row `N/4-1`
                dst_image[M-2][it2y*4] = dst_image[M-2][it2y*4+1] = dst_image[M-1][it2y*4]
                    = dst_image[M-1][it2y*4+1] = src_image[M/4-1][it2y];
            } else {
                dst_image[0][it2y*4:4:1] = dst_image[1][it2y*4:4:1] = src_image[0][it2y] * transe(BORDER_MP_0)
                    + src_image[0][it2y+1] * transe(BORDER_MP_1);
                // paper: rows `N-2`, `N-1` and source row `N/4-1`
                dst_image[M-2][it2y*4:4:1] = dst_image[M-1][it2y*4:4:1] = src_image[M/4-1][it2y] * transe(BORDER_MP_0)
                    + src_image[M/4-1][it2y+1] * transe(BORDER_MP_1);
            }
        }
        // The interior: each 2x2 neighbourhood of the source gives a 4x4 output block.
        const MP: f32[4][2] = [
            [7.0 / 8.0, 1.0 / 8.0],
            [5.0 / 8.0, 3.0 / 8.0],
            [3.0 / 8.0, 5.0 / 8.0],
            [1.0 / 8.0, 7.0 / 8.0],
        ];
        parac_iterator it(0:M/4-1:1; 0:N/4-1:1) {
            dst_image[itx*4+2:4:1][ity*4+2:4:1] = MP * src_image[itx:2:1][ity:2:1] * transe(MP);
        }
    }
}

fn main() {
    // `Runtime::from_env`, with the log subscriber of every example (PARAC_LOG).
    let rt = common::runtime_from_env().expect("a ParaC runtime");
    let (rows, cols) = (32, 48);
    let data = (0..rows * cols).map(|i| ((i * 11) % 256) as u8).collect();
    let src = parac::Matrix::from_vec([rows, cols], data).expect("length matches the shape");

    let mut down = parac::Matrix::<u8>::zeros([rows / 4, cols / 4]);
    match down_scale_new_x16(&rt, &src, &mut down) {
        Ok(()) => println!("ok"),
        Err(e) => println!("down_scale_new_x16: {e}"),
    }

    let mut up = parac::Matrix::<u8>::zeros([rows, cols]);
    match up_scale_new_x16(&rt, &down, &mut up) {
        Ok(()) => println!("ok"),
        Err(e) => println!("up_scale_new_x16: {e}"),
    }

    match sharpen_mean(&rt, &src) {
        Ok(mean) => println!("ok: mean {mean}"),
        Err(e) => println!("sharpen_mean: {e}"),
    }
}
