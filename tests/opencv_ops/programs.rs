//! The programs of `tests/opencv_ops.rs` and `benches/opencv_ops.rs`: OpenCV's everyday
//! functions written as a user writes them, each a module with its source (`SRC`) and its
//! function.

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

    // `cv2.flip(src, 1)`: each row mirrored.
    flip_lr {
        pub fn flip_lr(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { dst[x][y] = src[x][N - 1 - y]; }
        }
    }

    // `cv2.flip(src, 0)`: the rows in reverse order.
    flip_ud {
        pub fn flip_ud(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { dst[x][y] = src[M - 1 - x][y]; }
        }
    }

    // `cv2.flip(src, -1)`, which is `cv2.rotate(src, ROTATE_180)`.
    flip_both {
        pub fn flip_both(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { dst[x][y] = src[M - 1 - x][N - 1 - y]; }
        }
    }

    // `cv2.transpose(src)`.
    transpose {
        pub fn transpose(src: &u8[M][N], dst: &mut u8[N][M]) {
            parac_iterator it(x in 0:N:1; y in 0:M:1) { dst[x][y] = src[y][x]; }
        }
    }

    // `cv2.rotate(src, ROTATE_90_CLOCKWISE)`.
    rotate_cw {
        pub fn rotate_cw(src: &u8[M][N], dst: &mut u8[N][M]) {
            parac_iterator it(x in 0:N:1; y in 0:M:1) { dst[x][y] = src[M - 1 - y][x]; }
        }
    }

    // `cv2.rotate(src, ROTATE_90_COUNTERCLOCKWISE)`.
    rotate_ccw {
        pub fn rotate_ccw(src: &u8[M][N], dst: &mut u8[N][M]) {
            parac_iterator it(x in 0:N:1; y in 0:M:1) { dst[x][y] = src[y][N - 1 - x]; }
        }
    }

    // `cv2.flip(src, 1)` of interleaved RGB (`u8[M][3 * width]`, as docs/language.md reads
    // interleaved pixels): the pixels mirrored, each pixel's channels in order.
    flip_lr_rgb {
        pub fn flip_lr_rgb(src: &u8[M][W], dst: &mut u8[M][W]) {
            parac_iterator it(x in 0:M:1; y in 0:W / 3:1) {
                dst[x][3 * y] = src[x][3 * (W / 3 - 1 - y)];
                dst[x][3 * y + 1] = src[x][3 * (W / 3 - 1 - y) + 1];
                dst[x][3 * y + 2] = src[x][3 * (W / 3 - 1 - y) + 2];
            }
        }
    }

    // The same mirror written by where it stores: each pixel's chunk written backwards.
    flip_lr_rgb_stores {
        pub fn flip_lr_rgb_stores(src: &u8[M][W], dst: &mut u8[M][W]) {
            parac_iterator it(x in 0:M:1; y in 0:W / 3:1) {
                dst[x][3 * (W / 3 - 1 - y)] = src[x][3 * y];
                dst[x][3 * (W / 3 - 1 - y) + 1] = src[x][3 * y + 1];
                dst[x][3 * (W / 3 - 1 - y) + 2] = src[x][3 * y + 2];
            }
        }
    }

    // `cv2.transpose` of an i16 image.
    transpose_i16 {
        pub fn transpose_i16(src: &i16[M][N], dst: &mut i16[N][M]) {
            parac_iterator it(x in 0:N:1; y in 0:M:1) { dst[x][y] = src[y][x]; }
        }
    }

    // `cv2.cvtColor(src, COLOR_BGR2GRAY)` of interleaved BGR: OpenCV's fixed point (weights of
    // 0.114, 0.587 and 0.299 in 15 bits, rounded).
    gray {
        pub fn gray(src: &u8[M][W], dst: &mut u8[M][W / 3]) {
            parac_iterator it(x in 0:M:1; y in 0:W / 3:1) {
                dst[x][y] = (src[x][3 * y] * 3735 + src[x][3 * y + 1] * 19235
                    + src[x][3 * y + 2] * 9798 + 16384) >> 15;
            }
        }
    }

    // `cv2.threshold(src, 127, 255, THRESH_BINARY)`.
    threshold {
        pub fn threshold(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                if src[x][y] > 127 {
                    dst[x][y] = 255;
                } else {
                    dst[x][y] = 0;
                }
            }
        }
    }

    // `cv2.absdiff(a, b)`.
    absdiff {
        pub fn absdiff(a: &u8[M][N], b: &u8[M][N], dst: &mut u8[M][N]) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) { dst[x][y] = abs(a[x][y] - b[x][y]); }
        }
    }

    // `cv2.Sobel(src, CV_16S, 1, 0)` (3x3, reflect-101 borders as OpenCV's default).
    sobel_dx {
        pub fn sobel_dx(src: &u8[M][N], dst: &mut i16[M][N]) {
            const K: i8[3][3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = parac_convolution(K, src[x - 1:3:1][y - 1:3:1]);
            }
        }
    }

    // `cv2.Scharr(src, CV_16S, 1, 0)`.
    scharr_dx {
        pub fn scharr_dx(src: &u8[M][N], dst: &mut i16[M][N]) {
            const K: i8[3][3] = [[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]];
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = parac_convolution(K, src[x - 1:3:1][y - 1:3:1]);
            }
        }
    }

    // `cv2.Laplacian(src, CV_16S)` (its 1-aperture: the 4-neighbour Laplacian).
    laplacian {
        pub fn laplacian(src: &u8[M][N], dst: &mut i16[M][N]) {
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = src[x - 1][y] + src[x + 1][y] + src[x][y - 1] + src[x][y + 1]
                    - 4 * src[x][y];
            }
        }
    }

    // `cv2.GaussianBlur(src, (3, 3), 0)`: OpenCV's bit-exact 3x3 binomial, rounded.
    gauss3 {
        pub fn gauss3(src: &u8[M][N], dst: &mut u8[M][N]) {
            const G: u8[3][3] = [[1, 2, 1], [2, 4, 2], [1, 2, 1]];
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = (parac_convolution(G, src[x - 1:3:1][y - 1:3:1]) + 8) / 16;
            }
        }
    }

    // `cv2.filter2D(src, -1, K)` with a sharpening kernel, saturated to u8.
    sharpen {
        pub fn sharpen(src: &u8[M][N], dst: &mut u8[M][N]) {
            const K: i8[3][3] = [[0, -1, 0], [-1, 5, -1], [0, -1, 0]];
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = clamp(parac_convolution(K, src[x - 1:3:1][y - 1:3:1]), 0, 255);
            }
        }
    }

    // `cv2.dilate(src, ones((5, 5)))`: the maximum of a 5x5 window (outside the image
    // ignored, which for a maximum is the nearest edge's value).
    dilate5 {
        pub fn dilate5(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = replicate(src[2][2]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = parac_matrix_max(src[x - 2:5:1][y - 2:5:1]);
            }
        }
    }

    // `cv2.pyrDown(src)`: the 5x5 binomial at every other row and column, reflect-101.
    pyr_down {
        pub fn pyr_down(src: &u8[M][N], dst: &mut u8[(M + 1) / 2][(N + 1) / 2]) {
            const G: u8[5][5] = [
                [1, 4, 6, 4, 1], [4, 16, 24, 16, 4], [6, 24, 36, 24, 6],
                [4, 16, 24, 16, 4], [1, 4, 6, 4, 1]];
            parac_border_rule b = reflect101(src[2][2]);
            parac_iterator it(x in 0:(M + 1) / 2:1; y in 0:(N + 1) / 2:1) parac_border_rule(b) {
                dst[x][y] = (parac_convolution(G, src[2 * x - 2:5:1][2 * y - 2:5:1]) + 128) / 256;
            }
        }
    }

    // `cv2.resize(src, (N / 2, M / 2), interpolation=INTER_NEAREST)`.
    resize_nearest {
        pub fn resize_nearest(src: &u8[M][N], dst: &mut u8[M / 2][N / 2]) {
            parac_iterator it(x in 0:M / 2:1; y in 0:N / 2:1) { dst[x][y] = src[2 * x][2 * y]; }
        }
    }

    // `cv2.resize(src, (N / 2, M / 2), interpolation=INTER_AREA)`: each 2x2 block's mean,
    // rounded.
    resize_area {
        pub fn resize_area(src: &u8[M][N], dst: &mut u8[M / 2][N / 2]) {
            parac_iterator it(x in 0:M / 2:1; y in 0:N / 2:1) {
                dst[x][y] = (parac_matrix_sum(src[2 * x:2:1][2 * y:2:1]) + 2) / 4;
            }
        }
    }

    // `cv2.copyMakeBorder(src, 4, 4, 4, 4, BORDER_REFLECT_101)`.
    make_border {
        pub fn make_border(src: &u8[M][N], dst: &mut u8[M + 8][N + 8]) {
            parac_border_rule b = reflect101(src[4][4]);
            parac_iterator it(x in 0:M + 8:1; y in 0:N + 8:1) parac_border_rule(b) {
                dst[x][y] = src[x - 4][y - 4];
            }
        }
    }

    // `cv2.medianBlur(src, 3)`: the median of each 3x3 window (replicated borders), through
    // the 19 exchanges of a median-of-9 network (Paeth's, as Devillard's `opt_med9`).
    median3 {
        pub fn median3(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = replicate(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                let (p0, p1, p2) = (src[x - 1][y - 1], src[x - 1][y], src[x - 1][y + 1]);
                let (p3, p4, p5) = (src[x][y - 1], src[x][y], src[x][y + 1]);
                let (p6, p7, p8) = (src[x + 1][y - 1], src[x + 1][y], src[x + 1][y + 1]);
                let (p1, p2) = (min(p1, p2), max(p1, p2));
                let (p4, p5) = (min(p4, p5), max(p4, p5));
                let (p7, p8) = (min(p7, p8), max(p7, p8));
                let (p0, p1) = (min(p0, p1), max(p0, p1));
                let (p3, p4) = (min(p3, p4), max(p3, p4));
                let (p6, p7) = (min(p6, p7), max(p6, p7));
                let (p1, p2) = (min(p1, p2), max(p1, p2));
                let (p4, p5) = (min(p4, p5), max(p4, p5));
                let (p7, p8) = (min(p7, p8), max(p7, p8));
                let (p0, p3) = (min(p0, p3), max(p0, p3));
                let (p5, p8) = (min(p5, p8), max(p5, p8));
                let (p4, p7) = (min(p4, p7), max(p4, p7));
                let (p3, p6) = (min(p3, p6), max(p3, p6));
                let (p1, p4) = (min(p1, p4), max(p1, p4));
                let (p2, p5) = (min(p2, p5), max(p2, p5));
                let (p4, p7) = (min(p4, p7), max(p4, p7));
                let (p4, p2) = (min(p4, p2), max(p4, p2));
                let (p6, p4) = (min(p6, p4), max(p6, p4));
                let (p4, p2) = (min(p4, p2), max(p4, p2));
                dst[x][y] = p4;
            }
        }
    }

    // `cv2.cvtColor(src, COLOR_BGR2YCrCb)` of interleaved BGR: OpenCV's fixed point (14 bits,
    // rounded; the chroma offset by 128 and saturated).
    ycrcb {
        pub fn ycrcb(src: &u8[M][W], dst: &mut u8[M][W]) {
            parac_iterator it(x in 0:M:1; y in 0:W / 3:1) {
                let (b, g, r) = (src[x][3 * y], src[x][3 * y + 1], src[x][3 * y + 2]);
                let l = (b * 1868 + g * 9617 + r * 4899 + 8192) >> 14;
                dst[x][3 * y] = l;
                dst[x][3 * y + 1] = clamp(((r - l) * 11682 + 2105344) >> 14, 0, 255);
                dst[x][3 * y + 2] = clamp(((b - l) * 9241 + 2105344) >> 14, 0, 255);
            }
        }
    }

    // `cv2.blur(src, (3, 3))`: the 3x3 mean, rounded, reflect-101 borders.
    box3 {
        pub fn box3(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = reflect101(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = (parac_matrix_sum(src[x - 1:3:1][y - 1:3:1]) + 4) / 9;
            }
        }
    }

    // `cv2.erode(src, ones((3, 3)))`: the minimum of a 3x3 window (outside the image ignored:
    // the nearest edge's value).
    erode3 {
        pub fn erode3(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = replicate(src[1][1]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = parac_matrix_min(src[x - 1:3:1][y - 1:3:1]);
            }
        }
    }

    // `cv2.erode(src, ones((15, 15)))`.
    erode15 {
        pub fn erode15(src: &u8[M][N], dst: &mut u8[M][N]) {
            parac_border_rule b = replicate(src[7][7]);
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_border_rule(b) {
                dst[x][y] = parac_matrix_min(src[x - 7:15:1][y - 7:15:1]);
            }
        }
    }

    // `cv2.resize(src, (2 * N, 2 * M), interpolation=INTER_NEAREST)`: each pixel twice along
    // both sides.
    resize_up {
        pub fn resize_up(src: &u8[M][N], dst: &mut u8[2 * M][2 * N]) {
            parac_iterator it(x in 0:2 * M:1; y in 0:2 * N:1) { dst[x][y] = src[x / 2][y / 2]; }
        }
    }
}
