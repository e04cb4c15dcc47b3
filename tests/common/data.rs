//! Test data: a small seeded pseudo-random generator, random images of the kinds the pipelines
//! take, the size sweeps of each pipeline and the shipped photographs (`assets/`).

#![allow(dead_code)]

use std::path::PathBuf;

use parac::Matrix;

/// PCG32 (O'Neill's `pcg32`, XSH RR 64/32): small, seeded, the same numbers on every platform.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
    inc: u64,
}

impl Rng {
    /// A generator for `seed` (stream 54, the reference implementation's default).
    pub fn new(seed: u64) -> Self {
        let mut rng = Rng {
            state: 0,
            inc: (54 << 1) | 1,
        };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    /// The next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// A uniform integer in `0..n` (`n > 0`; the tiny modulo bias does not matter for tests).
    pub fn below(&mut self, n: u32) -> u32 {
        assert!(n > 0);
        ((u64::from(self.next_u32()) * u64::from(n)) >> 32) as u32
    }

    /// A uniform float in `[0, 1)` with 24 random bits.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}

/// A seed mixing a test's base seed with the image size, so every size gets its own image.
pub fn seed_for(base: u64, rows: usize, cols: usize) -> u64 {
    base ^ ((rows as u64) << 32) ^ (cols as u64).wrapping_mul(0x9E37_79B9)
}

/// A `[rows][cols]` image of uniform random bytes.
pub fn random_u8(rows: usize, cols: usize, seed: u64) -> Matrix<u8> {
    let mut rng = Rng::new(seed);
    Matrix::from_fn([rows, cols], |_| rng.below(256) as u8)
}

/// A `[rows][cols]` image of uniform random 12-bit values (`0..=4095`).
pub fn random_u12(rows: usize, cols: usize, seed: u64) -> Matrix<u16> {
    let mut rng = Rng::new(seed);
    Matrix::from_fn([rows, cols], |_| rng.below(4096) as u16)
}

/// A planar `[3][rows][cols]` RGB image of uniform random floats in `[1/255, 1]`.
pub fn random_rgb(rows: usize, cols: usize, seed: u64) -> Matrix<f32> {
    let mut rng = Rng::new(seed);
    let lo = 1.0f32 / 255.0;
    Matrix::from_fn([3, rows, cols], |_| {
        (lo + rng.unit_f32() * (1.0 - lo)).clamp(lo, 1.0)
    })
}

/// A `[rows][cols]` 8-bit image with structure (smooth ramps, a bright block, some noise):
/// random bytes have almost no flat areas, this one has both edges and flat regions.
pub fn structured_u8(rows: usize, cols: usize, seed: u64) -> Matrix<u8> {
    let mut rng = Rng::new(seed);
    Matrix::from_fn([rows, cols], |i| {
        let (r, c) = (i[0], i[1]);
        let ramp = (r * 255 / rows.max(1) + c * 128 / cols.max(1)) as u32;
        let block = if (rows / 4..rows / 2).contains(&r) && (cols / 3..cols * 2 / 3).contains(&c) {
            90
        } else {
            0
        };
        ((ramp + block + rng.below(9)).min(255)) as u8
    })
}

/// The sizes `laplacian` is tested on (M, N >= 4): the smallest, odd sides, sides that are not
/// multiples of 2, 4, 8 or 16, tall and wide ones, and two larger ones.
pub fn sweep_laplacian() -> Vec<(usize, usize)> {
    vec![
        (4, 4),
        (4, 5),
        (5, 4),
        (5, 5),
        (4, 17),
        (17, 4),
        (6, 6),
        (7, 9),
        (10, 14),
        (13, 31),
        (33, 19),
        (64, 64),
        (65, 63),
        (100, 129),
        // One less and one more than two of the fused `down`'s tasks (64 rows of `src` each).
        (127, 9),
        (129, 35),
        (241, 321),
        (480, 641),
    ]
}

/// The sizes `sharpen` is tested on (multiples of 4, at least 8): the smallest, sides that are
/// not multiples of 8 or 16, tall and wide ones, and two larger ones.
pub fn sweep_sharpen() -> Vec<(usize, usize)> {
    vec![
        (8, 8),
        (8, 12),
        (12, 8),
        (12, 12),
        (8, 44),
        (44, 8),
        (16, 16),
        (20, 28),
        (36, 52),
        (64, 64),
        (68, 100),
        (132, 196),
        (244, 324),
        (484, 644),
    ]
}

/// The sizes `blur` is tested on (M, N >= 3): the smallest (a 1x1 output), odd sides, sides
/// that are not multiples of any vector width (nor are the outputs), and two larger ones.
pub fn sweep_blur() -> Vec<(usize, usize)> {
    vec![
        (3, 3),
        (3, 4),
        (4, 3),
        (3, 18),
        (18, 3),
        (5, 7),
        (9, 10),
        (17, 33),
        (34, 66),
        (64, 64),
        (67, 130),
        (131, 258),
        (243, 321),
        (482, 641),
    ]
}

/// The sizes `unsharp` is tested on: 1x1 and thin images (the 7-tap blur clamps everything),
/// sides below and around the blur's reach, odd sides, and two larger ones.
pub fn sweep_unsharp() -> Vec<(usize, usize)> {
    vec![
        (1, 1),
        (1, 9),
        (9, 1),
        (2, 3),
        (3, 2),
        (4, 4),
        (7, 7),
        (8, 13),
        (15, 17),
        (33, 31),
        (64, 64),
        (65, 129),
        (160, 241),
        (321, 482),
    ]
}

/// The project's `assets/` directory.
pub fn assets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("assets")
}

/// `assets/camera.png` (512x512 8-bit gray, CC0) as 8-bit gray.
pub fn camera_u8() -> Matrix<u8> {
    parac_runtime::io::load_png(assets_dir().join("camera.png")).expect("assets/camera.png")
}

/// `assets/camera.png` as 12-bit gray (`(b * 257) >> 4`).
pub fn camera_u12() -> Matrix<u16> {
    parac_runtime::io::load_png(assets_dir().join("camera.png")).expect("assets/camera.png")
}

/// `assets/coffee.png` (600x400 RGB, CC0) as planar RGB in `[1/255, 1]`, `[3][400][600]`.
pub fn coffee_rgb() -> Matrix<f32> {
    parac_runtime::io::load_png(assets_dir().join("coffee.png")).expect("assets/coffee.png")
}

/// `assets/coffee.png` as 8-bit gray, `[400][600]`.
pub fn coffee_u8() -> Matrix<u8> {
    parac_runtime::io::load_png(assets_dir().join("coffee.png")).expect("assets/coffee.png")
}

/// `assets/coffee.png` as 12-bit gray, `[400][600]`.
pub fn coffee_u12() -> Matrix<u16> {
    parac_runtime::io::load_png(assets_dir().join("coffee.png")).expect("assets/coffee.png")
}

/// The top-left `rows x cols` corner of a 2-D matrix (e.g. to make sides multiples of 4).
pub fn crop<T: parac::Element>(m: &Matrix<T>, rows: usize, cols: usize) -> Matrix<T> {
    assert!(rows <= m.shape()[0] && cols <= m.shape()[1]);
    Matrix::from_fn([rows, cols], |i| m.get(i))
}

/// The top-left `rows x cols` corner of every plane of a 3-D matrix.
pub fn crop_planes<T: parac::Element>(m: &Matrix<T>, rows: usize, cols: usize) -> Matrix<T> {
    assert!(rows <= m.shape()[1] && cols <= m.shape()[2]);
    Matrix::from_fn([m.shape()[0], rows, cols], |i| m.get(i))
}
