//! Pipelines of our own, outside APPS.md, written as a new user would (issue "Every call fast":
//! first calls, the model against the search). Shared by `benches/calls.rs`.

parac::parac! {
    /// Sobel gradient magnitude (|gx| + |gy| / 4, saturated) with replicated borders, and the
    /// magnitude's global mean.
    pub fn sobel_mean(src: &u8[M][N], mag: &mut u8[M][N]) -> i64 {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            let gx: i32 = (src[itx-1][ity+1] + 2 * src[itx][ity+1] + src[itx+1][ity+1])
                - (src[itx-1][ity-1] + 2 * src[itx][ity-1] + src[itx+1][ity-1]);
            let gy: i32 = (src[itx+1][ity-1] + 2 * src[itx+1][ity] + src[itx+1][ity+1])
                - (src[itx-1][ity-1] + 2 * src[itx-1][ity] + src[itx-1][ity+1]);
            mag[itx][ity] = min((abs(gx) + abs(gy)) / 4, 255);
        }
        return parac_matrix_sum(mag) / (M * N) as i64;
    }
}

parac::parac! {
    /// A 7-tap separable Gaussian (1 6 15 20 15 6 1) of a gray image with clamped borders, and
    /// an unsharp mask from it: out = clamp(2 src - blur).
    pub fn unsharp7(src: &u8[M][N], out: &mut u8[M][N]) {
        let h: u16[M][N];
        let b: u8[M][N];
        parac_border_rule r = clamp(src[*][3]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            h[itx][ity] = src[itx][ity-3] + 6 * src[itx][ity-2] + 15 * src[itx][ity-1]
                + 20 * src[itx][ity] + 15 * src[itx][ity+1] + 6 * src[itx][ity+2]
                + src[itx][ity+3];
        }
        parac_border_rule s = clamp(h[3][*]);
        parac_iterator it1(0:M:1; 0:N:1) parac_border_rule(s) {
            b[it1x][it1y] = ((h[it1x-3][it1y] + 6 * h[it1x-2][it1y] + 15 * h[it1x-1][it1y]
                + 20 * h[it1x][it1y] + 15 * h[it1x+1][it1y] + 6 * h[it1x+2][it1y]
                + h[it1x+3][it1y]) as u32 + 2048) / 4096;
        }
        parac_iterator it2(0:M:1; 0:N:1) {
            out[it2x][it2y] = clamp(2 * src[it2x][it2y] - b[it2x][it2y], 0, 255);
        }
    }
}
