//! Pipelines of our own, outside APPS.md, written as a new user would (for first calls and the
//! model's plans against the search's). Shared by `benches/calls.rs`.

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

parac::parac! {
    /// A 5x5 Gaussian (binomial taps) of a gray image, reflect101 borders (OpenCV's default).
    pub fn gauss5(src: &u8[M][N], out: &mut u8[M][N]) {
        const G: u16[5][5] = [[1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6],
                              [4, 16, 24, 16, 4], [1, 4, 6, 4, 1]];
        parac_border_rule r = reflect101(src[2][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = (parac_convolution(G, src[itx-2:5:1][ity-2:5:1]) + 128) / 256;
        }
    }
}

parac::parac! {
    /// A 3x3 erosion followed by a 3x3 dilation (a morphological opening), replicated borders.
    pub fn opening3(src: &u8[M][N], out: &mut u8[M][N]) {
        let e: u8[M][N];
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            e[itx][ity] = parac_matrix_min(src[itx-1:3:1][ity-1:3:1]);
        }
        parac_border_rule s = replicate(e[1][1]);
        parac_iterator it1(0:M:1; 0:N:1) parac_border_rule(s) {
            out[it1x][it1y] = parac_matrix_max(e[it1x-1:3:1][it1y-1:3:1]);
        }
    }
}

parac::parac! {
    /// RGB to gray (BT.601 integer weights), then a threshold at the gray image's mean.
    pub fn gray_threshold(img: &u8[3][M][N], gray: &mut u8[M][N], mask: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            gray[itx][ity] = (77 * img[0][itx][ity] + 150 * img[1][itx][ity]
                + 29 * img[2][itx][ity] + 128) / 256;
        }
        let mean: i64 = parac_matrix_sum(gray) / (M * N) as i64;
        let t = mean as i32;
        parac_iterator it1(0:M:1; 0:N:1) {
            if gray[it1x][it1y] > t {
                mask[it1x][it1y] = 255;
            } else {
                mask[it1x][it1y] = 0;
            }
        }
    }
}

parac::parac! {
    /// Half-size downsampling by 2x2 means, then a 3x3 sharpen of the small image, clamped.
    pub fn half_sharpen(src: &u8[M][N], out: &mut u8[M/2][N/2]) {
        let h: u8[M/2][N/2];
        parac_iterator it(0:M/2:1; 0:N/2:1) {
            h[itx][ity] = (parac_matrix_sum(src[2*itx:2:1][2*ity:2:1]) + 2) / 4;
        }
        parac_border_rule r = replicate(h[1][1]);
        parac_iterator it1(0:M/2:1; 0:N/2:1) parac_border_rule(r) {
            out[it1x][it1y] = clamp(5 * h[it1x][it1y] - h[it1x-1][it1y] - h[it1x+1][it1y]
                - h[it1x][it1y-1] - h[it1x][it1y+1], 0, 255);
        }
    }
}
