//! The `sharpen` pipeline of APPS.md, shared by `examples/sharpen.rs` and the tests.

parac::parac! {
    /// Edge-adaptive sharpening of a gray image whose sides are multiples of 4, at least 8.
    pub fn sharpen(src: &u8[M][N], out: &mut u8[M][N]) {
        let down: u8[M/4][N/4];
        let up: u8[M][N];
        let edge: u8[M][N];

        // 1. 4x downsample.
        parac_iterator it(0:M/4:1; 0:N/4:1) {
            down[itx][ity] = (parac_matrix_sum(src[itx*4:4:1][ity*4:4:1]) + 8) >> 4;
        }

        // 2. 4x bilinear upsample in eighths: output row x lies between rows i0 and i0+1 of
        //    `down` with weights 7-2a and 2a+1 (a = 0..3); the same for the column.
        parac_iterator it1(x in 0:M:1; y in 0:N:1) {
            let t = x - 2;
            let i0 = t >> 2; // floor(t / 4): `>>` is arithmetic and t >= -2
            let a = t - 4 * i0;
            let (wr0, wr1) = (7 - 2 * a, 2 * a + 1);
            let (r0, r1) = (clamp(i0, 0, M/4 - 1), clamp(i0 + 1, 0, M/4 - 1));
            let tc = y - 2;
            let j0 = tc >> 2; // floor(tc / 4)
            let ac = tc - 4 * j0;
            let (wc0, wc1) = (7 - 2 * ac, 2 * ac + 1);
            let (c0, c1) = (clamp(j0, 0, N/4 - 1), clamp(j0 + 1, 0, N/4 - 1));
            up[x][y] = (wr0 * wc0 * down[r0][c0] + wr0 * wc1 * down[r0][c1]
                + wr1 * wc0 * down[r1][c0] + wr1 * wc1 * down[r1][c1] + 32) >> 6;
        }

        // 4. Sobel magnitude, clamp-to-edge outside the image.
        parac_border_rule bs = replicate(src[1][1]);
        parac_iterator sobel(x in 0:M:1; y in 0:N:1) parac_border_rule(bs) {
            let gx = (src[x-1][y+1] + 2 * src[x][y+1] + src[x+1][y+1])
                - (src[x-1][y-1] + 2 * src[x][y-1] + src[x+1][y-1]);
            let gy = (src[x+1][y-1] + 2 * src[x+1][y] + src[x+1][y+1])
                - (src[x-1][y-1] + 2 * src[x-1][y] + src[x-1][y+1]);
            edge[x][y] = min(abs(gx) + abs(gy), 255);
        }

        // 5. Global mean of the edge image: a whole-matrix reduction (64-bit sum) on the host
        //    side of the program; the quotient is at most 255, so it fits an i32.
        let mean: i32 = (parac_matrix_sum(edge) / (M * N) as i64) as i32;

        // 3, 6, 7. Error, gain, sharpened value and overshoot control, per pixel.
        parac_border_rule bc = clamp(src[1][1]);
        parac_iterator it2(x in 0:M:1; y in 0:N:1) parac_border_rule(bc) {
            let err: i16 = src[x][y] - up[x][y];
            let gain = min(edge[x][y] * 16 / (mean + 16), 32);
            let pre = up[x][y] + (err * (16 + gain)) / 16;
            let lo = parac_matrix_min(src[x-1:3:1][y-1:3:1]);
            let hi = parac_matrix_max(src[x-1:3:1][y-1:3:1]);
            out[x][y] = clamp(clamp(pre, lo - 8, hi + 8), 0, 255);
        }
    }
}
