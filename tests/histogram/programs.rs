//! The programs of `tests/histogram.rs` and `benches/histogram.rs`: histograms, scans and what
//! OpenCV builds on them (`cv2.calcHist`, `cv2.integral2`, `cv2.equalizeHist`, Otsu's
//! threshold), each a module with its source (`SRC`) and its function.

/// Modules `$m`, each with `SRC` (its source's tokens) and the function `parac!` makes of it.
macro_rules! programs {
    ($($m:ident { $($src:tt)* })*) => {$(
        pub mod $m {
            pub const SRC: &str = stringify!($($src)*);
            parac::parac! { $($src)* }
        }
    )*};
}

programs! {

    histogram {
        pub fn histogram(src: &u8[M][N], hist: &mut i32[256]) {
            parac_iterator z(0:256:1) { hist[zx] = 0; }
            parac_iterator it(0:M:1; 0:N:1) { hist[src[itx][ity]] += 1; }
        }
    }

    histogram_2d {
        pub fn histogram_2d(a: &u8[M][N], b: &u8[M][N], h: &mut u32[64][64]) {
            parac_iterator z(i in 0:64:1; j in 0:64:1) { h[i][j] = 0; }
            parac_iterator it(x in 0:M:1; y in 0:N:1) { h[a[x][y] / 4][b[x][y] / 4] += 1; }
        }
    }

    histogram_u16 {
        pub fn histogram_u16(src: &u8[M][N], hist: &mut u16[16]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { hist[src[x][y] % 16] += src[x][y] * 7; }
        }
    }

    histogram_grid {
        pub fn histogram_grid(src: &u8[M][N], grid: &mut i32[(M+7)/8][(N+7)/8][16], count: &mut u32[1]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                grid[x / 8][y / 8][src[x][y] / 16] += src[x][y];
                if (src[x][y] > 100) { count[0] += 1; }
            }
        }
    }

    histogram_bits {
        pub fn histogram_bits(src: &u8[M][N], bits: &mut u8[8], rmax: &mut u8[M], cmin: &mut i32[N], neg: &mut i32[4]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                bits[src[x][y] % 8] |= 1 << (src[x][y] / 32);
                rmax[x] = max(rmax[x], src[x][y]);
                cmin[y] = min(src[x][y] as i32 - 100, cmin[y]);
                neg[src[x][y] % 4] -= x - y;
            }
        }
    }

    histogram_float {
        pub fn histogram_float(src: &u8[M][N], sums: &mut f32[16]) {
            parac_iterator z(0:16:1) { sums[zx] = 0.0; }
            parac_iterator it(x in 0:M:1; y in 0:N:1) { sums[src[x][y] / 16] += src[x][y] as f32 * 0.1; }
        }
    }

    histogram_cumulative {
        pub fn histogram_cumulative(src: &u8[M][N], cdf: &mut i32[256]) {
            let hist: i32[256];
            parac_iterator z(0:256:1) { hist[zx] = 0; cdf[zx] = 0; }
            parac_iterator it(0:M:1; 0:N:1) { hist[src[itx][ity]] += 1; }
            parac_iterator c(i in 0:256:1; j in 0:256:1) { if (i <= j) { cdf[j] += hist[i]; } }
        }
    }

    scan_rows {
        pub fn scan_rows(src: &u8[M][N], sums: &mut i32[M][N], maxes: &mut u8[M][N], mins: &mut i16[M][N], floats: &mut f32[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                sums[x][y] = parac_prefix_sum(src[x][y], y);
                maxes[x][y] = parac_prefix_max(src[x][y], y);
                let v = src[x][y] as i32 - 128;
                mins[x][y] = parac_prefix_min(v, y);
                floats[x][y] = parac_prefix_sum(src[x][y] as f32 * 0.1, y);
            }
        }
    }

    scan_columns {
        pub fn scan_columns(src: &u8[M][N], sums: &mut u32[M][N], maxes: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                let s = parac_prefix_sum(src[x][y] as u32 * 1000, x);
                sums[x][y] = s;
                maxes[x][y] = parac_prefix_max(src[x][y], x);
            }
        }
    }

    scan_integral {
        pub fn scan_integral(src: &u8[M][N], sum: &mut i32[M+1][N+1], sqsum: &mut f32[M+1][N+1]) {
            let row: i32[M+1][N+1];
            let sqrow: f32[M+1][N+1];
            parac_border_rule zero = constant(src[1][1], 0);
            parac_iterator r(x in 0:M+1:1; y in 0:N+1:1) parac_border_rule(zero) {
                let v = src[x-1][y-1] as i32;
                row[x][y] = parac_prefix_sum(v, y);
                sqrow[x][y] = parac_prefix_sum((v * v) as f32, y);
            }
            parac_iterator c(x in 0:M+1:1; y in 0:N+1:1) {
                sum[x][y] = parac_prefix_sum(row[x][y], x);
                sqsum[x][y] = parac_prefix_sum(sqrow[x][y], x);
            }
        }
    }

    scan_integral_2d {
        pub fn scan_integral_2d(src: &u8[M][N], sum: &mut i32[M+1][N+1], sqsum: &mut f32[M+1][N+1]) {
            parac_border_rule zero = constant(src[1][1], 0);
            parac_iterator it(x in 0:M+1:1; y in 0:N+1:1) parac_border_rule(zero) {
                let v = src[x-1][y-1] as i32;
                sum[x][y] = parac_prefix_sum(v, x, y);
                sqsum[x][y] = parac_prefix_sum((v * v) as f32, x, y);
            }
        }
    }

    scan_integral_sum {
        pub fn scan_integral_sum(src: &u8[M][N], sum: &mut i32[M+1][N+1]) {
            let row: i32[M+1][N+1];
            parac_border_rule zero = constant(src[1][1], 0);
            parac_iterator r(x in 0:M+1:1; y in 0:N+1:1) parac_border_rule(zero) {
                row[x][y] = parac_prefix_sum(src[x-1][y-1], y);
            }
            parac_iterator c(x in 0:M+1:1; y in 0:N+1:1) {
                sum[x][y] = parac_prefix_sum(row[x][y], x);
            }
        }
    }

    scan_integral_sum_2d {
        pub fn scan_integral_sum_2d(src: &u8[M][N], sum: &mut i32[M+1][N+1]) {
            parac_border_rule zero = constant(src[1][1], 0);
            parac_iterator it(x in 0:M+1:1; y in 0:N+1:1) parac_border_rule(zero) {
                sum[x][y] = parac_prefix_sum(src[x-1][y-1], x, y);
            }
        }
    }

    histogram_too_few {
        pub fn histogram_too_few(src: &u8[M][N], few: &mut i32[100]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { few[src[x][y]] += 1; }
        }
    }

    histogram_equalize {
        pub fn histogram_equalize(src: &u8[M][N], dst: &mut u8[M][N]) {
            let hist: i32[256];
            let cdf: i32[256];
            let first: i32[1];
            let lut: u8[256];
            parac_iterator z(0:256:1) { hist[zx] = 0; }
            parac_iterator f(0:1:1) { first[fx] = 255; }
            parac_iterator h(x in 0:M:1; y in 0:N:1) { hist[src[x][y]] += 1; }
            parac_iterator c(i in 0:256:1) {
                cdf[i] = parac_prefix_sum(hist[i], i);
                if (hist[i] > 0) { first[0] = min(first[0], i); }
            }
            parac_iterator l(i in 0:256:1) {
                let i0 = first[0];
                let lo = hist[i0];
                let total = M * N;
                if (lo == total) {
                    lut[i] = i0;
                } else {
                    let v = (cdf[i] - lo) as f32 * (255.0 / (total - lo) as f32);
                    let fl = floor(v);
                    let d = v - fl;
                    let up = (d > 0.5 || (d == 0.5 && (fl as i32) % 2 == 1)) as i32;
                    lut[i] = clamp(fl as i32 + up, 0, 255);
                }
            }
            parac_iterator e(x in 0:M:1; y in 0:N:1) { dst[x][y] = lut[src[x][y]]; }
        }
    }

    otsu {

            pub fn otsu(src: &u8[M][N]) -> i32 {
                let hist: i32[256];
                let w: i32[256];
                let mu: u32[256];
                let sigma: f32[256];
                let best: i32[1];
                parac_iterator z(0:256:1) { hist[zx] = 0; }
                parac_iterator b(0:1:1) { best[bx] = 256; }
                parac_iterator h(x in 0:M:1; y in 0:N:1) { hist[src[x][y]] += 1; }
                parac_iterator c(t in 0:256:1) {
                    w[t] = parac_prefix_sum(hist[t], t);
                    mu[t] = parac_prefix_sum((hist[t] * t) as u32, t);
                }
                parac_iterator s(t in 0:256:1) {
                    let n = (M * N) as i64;
                    let w0 = w[t] as i64;
                    let d = (mu[255] as i64) * w0 - n * (mu[t] as i64);
                    let den = w0 * (n - w0);
                    if (den > 0) {
                        sigma[t] = (d as f32) * (d as f32) / (den as f32);
                    } else {
                        sigma[t] = 0.0;
                    }
                }
                let top = parac_matrix_max(sigma);
                parac_iterator a(t in 0:256:1) {
                    if (sigma[t] == top && top > 0.0) { best[0] = min(best[0], t); }
                }
                let th = parac_matrix_min(best);
                return th % 256;
            }
    }

}
