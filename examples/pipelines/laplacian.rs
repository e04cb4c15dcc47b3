//! The `laplacian` pipeline of APPS.md, shared by `examples/laplacian.rs` and the tests.

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
