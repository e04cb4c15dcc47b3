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

parac::parac! {
    /// One Laplacian-pyramid level: `lap = src - up(down)`, `down` = the next, half-size level.
    /// `src` needs at least 4 rows and 4 columns.
    pub fn laplacian(src: &u8[M][N], lap: &mut i16[M][N], down: &mut u8[(M+1)/2][(N+1)/2]) {
        const F_H: u8[1][5] = [[1, 4, 6, 4, 1]];
        const F_V: u8[5][1] = [[1], [4], [6], [4], [1]];
        let h: u8[M][N]; // horizontally filtered `src`

        // Two columns of linear extrapolation on each side of `src` (int values, not clamped).
        parac_border_rule br {
            src[*][-2] = src[*][3]*4 - src[*][1]*4 + src[*][0]*2 - src[*][2];
            src[*][-1] = src[*][1]*2 - src[*][3];
            src[*][+1] = src[*][N-2]*2 - src[*][N-4];
            src[*][+2] = src[*][N-4]*4 - src[*][N-2]*4 + src[*][N-1]*2 - src[*][N-3];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            h[itx][ity] = (parac_convolution(F_H, src[itx][ity-2:5:1]) + 8) / 16;
        }

        // The same four formulas on the rows of `h`.
        parac_border_rule br1 {
            h[-2][*] = h[3][*]*4 - h[1][*]*4 + h[0][*]*2 - h[2][*];
            h[-1][*] = h[1][*]*2 - h[3][*];
            h[+1][*] = h[M-2][*]*2 - h[M-4][*];
            h[+2][*] = h[M-4][*]*4 - h[M-2][*]*4 + h[M-1][*]*2 - h[M-3][*];
        }
        parac_iterator it1(0:(M+1)/2:1; 0:(N+1)/2:1) parac_border_rule(br1) {
            down[it1x][it1y] = (parac_convolution(F_V, h[it1x*2-2:5:1][it1y*2]) + 8) / 16;
        }

        // Bilinear upsample of `down` (rounded; the last row and column are clamped) and the
        // difference. `y0, y1` are rows of `down`, `x0, x1` its columns, as in APPS.md.
        parac_iterator it2(0:M:1; 0:N:1) {
            let (y0, y1) = (it2x / 2, min((it2x + 1) / 2, (M+1)/2 - 1));
            let (x0, x1) = (it2y / 2, min((it2y + 1) / 2, (N+1)/2 - 1));
            lap[it2x][it2y] = src[it2x][it2y]
                - (down[y0][x0] + down[y0][x1] + down[y1][x0] + down[y1][x1] + 2) / 4;
        }
    }
}

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
