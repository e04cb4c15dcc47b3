//! The `unsharp` pipeline of APPS.md, shared by `examples/unsharp.rs` and the tests.

parac::parac! {
    /// Unsharp mask of a 3-channel float image (channel first, values in [1/255, 1]).
    pub fn unsharp(img: &f32[3][M][N], out: &mut f32[3][M][N]) {
        // Host scalars: the Gaussian taps k[i] = exp(-i*i / (2 sigma^2)) / (sqrt(2 pi) sigma).
        let sigma: f32 = 1.5;
        let norm: f32 = sqrt(2.0 * 3.14159265358979) * sigma;
        let k0: f32 = exp(-0.0 / (2.0 * sigma * sigma)) / norm;
        let k1: f32 = exp(-1.0 / (2.0 * sigma * sigma)) / norm;
        let k2: f32 = exp(-4.0 / (2.0 * sigma * sigma)) / norm;
        let k3: f32 = exp(-9.0 / (2.0 * sigma * sigma)) / norm;

        let gray: f32[M][N];
        let by: f32[M][N];

        parac_iterator g(x in 0:M:1; y in 0:N:1) {
            gray[x][y] = 0.299 * img[0][x][y] + 0.587 * img[1][x][y] + 0.114 * img[2][x][y];
        }

        // Vertical taps: clamp-to-edge on the rows of `gray`, 3 rows on each side.
        parac_border_rule gray_rows = clamp(gray[3][*]);
        parac_iterator v(x in 0:M:1; y in 0:N:1) parac_border_rule(gray_rows) {
            by[x][y] = k0 * gray[x][y]
                + k1 * (gray[x-1][y] + gray[x+1][y])
                + k2 * (gray[x-2][y] + gray[x+2][y])
                + k3 * (gray[x-3][y] + gray[x+3][y]);
        }

        // Horizontal taps on `by` (clamp-to-edge on its columns), then the sharpening ratio
        // applied to the three channels.
        parac_border_rule by_cols = clamp(by[*][3]);
        parac_iterator h(x in 0:M:1; y in 0:N:1) parac_border_rule(by_cols) {
            let bx = k0 * by[x][y]
                + k1 * (by[x][y-1] + by[x][y+1])
                + k2 * (by[x][y-2] + by[x][y+2])
                + k3 * (by[x][y-3] + by[x][y+3]);
            let sharpen = 2.0 * gray[x][y] - bx;
            let ratio = sharpen / gray[x][y];
            out[0][x][y] = ratio * img[0][x][y];
            out[1][x][y] = ratio * img[1][x][y];
            out[2][x][y] = ratio * img[2][x][y];
        }
    }
}
