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
}
