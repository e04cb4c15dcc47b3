//! The CPU back end's interiors (`lir/pass/partition.rs`, `codegen/cpu/slices.rs`) against
//! plain Rust: a division and a remainder by a scalar that does not change in the loop (printed
//! as an `f32` or `f64` division) at the edges of `i32` and `u32` (`MIN / -1`, divisors 0, -1,
//! `MAX`, `MIN`), and upsampling reads in lanes (`/ 2`, `>> 2` with a `clamp`, the last column's
//! `min`), reads down columns (transposed and rotated, tiled: `lir/pass/tile.rs`), at sizes
//! from 1x1 to odd ones and past a tile's edges; outputs streamed in blocks
//! (`lir/pass/stream.rs`) and not, at rows past a block's length and its lines; at each level
//! of vector instructions (`CpuIsa`: the plain loops, AVX2, AVX-512, each where the processor
//! has it).

use parac::{CpuIsa, Error, Matrix, Runtime};

/// A CPU runtime per level of vector instructions the processor has, every output its function
/// only writes streamed (`cpu_stream_bytes` 0; the default runtime's tests run them plain).
fn levels() -> Vec<Runtime> {
    CpuIsa::available()
        .into_iter()
        .map(|isa| Runtime::cpu().with_cpu_isa(isa).with_cpu_stream_bytes(0))
        .collect()
}

parac::parac! {
    pub fn streamed(a: &u16[M][N], o: &mut u16[M][N], p: &mut u8[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            o[x][y] = a[x][y] * 3 + x;
            p[x][y] = a[x][y] >> 4;
        }
    }

    pub fn divs(a: &i32[M][N], b: &u8[M][N], q: &mut i32[M][N], r: &mut i32[M][N],
                s: &mut i32[M][N], d: i32) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            q[x][y] = a[x][y] / d;
            r[x][y] = a[x][y] % d;
            s[x][y] = (b[x][y] * 16 - 2040) / d;
        }
    }

    pub fn divu(a: &u32[M][N], q: &mut u32[M][N], r: &mut u32[M][N], d: u32) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            q[x][y] = a[x][y] / d;
            r[x][y] = a[x][y] % d;
        }
    }

    pub fn up(d: &u8[P][Q], o: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let a = min((y + 1) / 2, Q - 1);
            let c = clamp((y - 2) >> 2, 0, Q - 1);
            o[x][y] = d[min(x / 2, P - 1)][min(y / 2, Q - 1)] * 3 + d[0][a] + 5 * d[0][c];
        }
    }

    pub fn columns(a: &i32[M][N], b: &i32[N][M], p: &u8[2][M][N], o: &mut i32[N][M]) {
        parac_iterator it(x in 0:N:1; y in 0:M:1) {
            o[x][y] = a[y][x] * 3 - b[x][y] + a[M - 1 - y][N - 1 - x] / 2 + p[1][y][x];
        }
    }

    pub fn blur3(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
        let bx: u16[M][N-2];
        parac_iterator it(0:M:1; 0:N-2:1) {
            bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
        }
        parac_iterator it1(0:M-2:1; 0:N-2:1) {
            out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
        }
    }

    pub fn signed_sums(a: &i16[M][N], o: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N-1:1) {
            o[x][y] = (a[x][y] + a[x][y+1]) * 3 - a[x][y] / 4;
        }
    }

    pub fn shifted_columns(a: &i16[M][N], o: &mut i16[N][M]) {
        parac_iterator it(x in 0:N:1; y in 1:M-1:1) {
            o[x][y] = a[y + 1][x] - a[y - 1][x];
        }
    }
}

/// A deterministic generator (xorshift).
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

const SHAPES: [(usize, usize); 6] = [(1, 1), (1, 2), (2, 3), (3, 17), (5, 64), (4, 129)];

#[test]
fn division_by_a_loop_invariant_scalar_is_c_division() {
    for rt in levels() {
        let mut next = rng(42);
        let edges = [
            i32::MIN,
            i32::MIN + 1,
            -1,
            0,
            1,
            i32::MAX,
            2040,
            -2040,
            16777216,
        ];
        for (m, n) in SHAPES {
            let a = Matrix::<i32>::from_fn([m, n], |i| {
                let k = i[0] * n + i[1];
                if k < edges.len() {
                    edges[k]
                } else {
                    next() as i32
                }
            });
            let b = Matrix::<u8>::from_fn([m, n], |i| (i[0] * 31 + i[1] * 7) as u8);
            for d in [1, -1, 2, -3, 7, 16, 1000, 65537, i32::MAX, i32::MIN, 0] {
                let (mut q, mut r, mut s) = (
                    Matrix::<i32>::zeros([m, n]),
                    Matrix::<i32>::zeros([m, n]),
                    Matrix::<i32>::zeros([m, n]),
                );
                let got = divs(&rt, &a, &b, &mut q, &mut r, &mut s, d);
                if d == 0 {
                    assert!(matches!(got, Err(Error::DivisionByZero { .. })), "{got:?}");
                    continue;
                }
                got.expect("divs");
                for (k, ((x, bx), (qx, (rx, sx)))) in a
                    .as_slice()
                    .iter()
                    .zip(b.as_slice())
                    .zip(
                        q.as_slice()
                            .iter()
                            .zip(r.as_slice().iter().zip(s.as_slice())),
                    )
                    .enumerate()
                {
                    let at = format!("{m}x{n}, element {k}, {x} and {bx} by {d}");
                    assert_eq!(*qx, x.wrapping_div(d), "{at}");
                    assert_eq!(*rx, x.wrapping_rem(d), "{at}");
                    assert_eq!(*sx, (*bx as i32 * 16 - 2040) / d, "{at}");
                }
            }
        }
    }
}

#[test]
fn unsigned_division_by_a_loop_invariant_scalar_is_c_division() {
    for rt in levels() {
        let mut next = rng(7);
        for (m, n) in SHAPES {
            let a = Matrix::<u32>::from_fn([m, n], |i| match i[1] {
                0 => u32::MAX,
                1 => 0,
                _ => next() as u32,
            });
            for d in [1u32, 2, 3, 255, 1 << 31, u32::MAX - 1, u32::MAX, 0] {
                let (mut q, mut r) = (Matrix::<u32>::zeros([m, n]), Matrix::<u32>::zeros([m, n]));
                let got = divu(&rt, &a, &mut q, &mut r, d);
                if d == 0 {
                    assert!(matches!(got, Err(Error::DivisionByZero { .. })), "{got:?}");
                    continue;
                }
                got.expect("divu");
                for (k, (x, (qx, rx))) in a
                    .as_slice()
                    .iter()
                    .zip(q.as_slice().iter().zip(r.as_slice()))
                    .enumerate()
                {
                    assert_eq!(
                        (*qx, *rx),
                        (x / d, x % d),
                        "{m}x{n}, element {k}: {x} by {d}"
                    );
                }
            }
        }
    }
}

#[test]
fn upsampling_in_lanes_matches_plain_rust() {
    for rt in levels() {
        for m in [1usize, 2, 3, 5, 8] {
            for n in [1usize, 2, 3, 4, 5, 7, 9, 16, 33, 100] {
                let (p, q) = (m.div_ceil(2), n.div_ceil(2));
                let d = Matrix::<u8>::from_fn([p, q], |i| (i[0] * 37 + i[1] * 11 + 5) as u8);
                let mut o = Matrix::<i32>::zeros([m, n]);
                up(&rt, &d, &mut o).expect("up");
                let at = |r: usize, c: usize| d.as_slice()[r * q + c] as i32;
                for x in 0..m {
                    for y in 0..n {
                        let a = y.div_ceil(2).min(q - 1);
                        let c = ((y as i64 - 2) >> 2).clamp(0, q as i64 - 1) as usize;
                        let want = at((x / 2).min(p - 1), (y / 2).min(q - 1)) * 3
                            + at(0, a)
                            + 5 * at(0, c);
                        assert_eq!(o.as_slice()[x * n + y], want, "{m}x{n} at ({x}, {y})");
                    }
                }
            }
        }
    }
}

/// Reads down a column along the loop (`a[y][x]`, reversed `a[M - 1 - y][..]`, a plane of a
/// 3-D matrix's, rows shifted inside a smaller range) in tiles, with a row read beside them.
#[test]
fn reads_down_columns_in_tiles_are_the_plain_loops() {
    for rt in levels() {
        let mut next = rng(7);
        for (m, n) in SHAPES.into_iter().chain([(65, 3), (129, 130), (3, 200)]) {
            let a = Matrix::<i32>::from_fn([m, n], |_| next() as i32);
            let b = Matrix::<i32>::from_fn([n, m], |_| next() as i32);
            let p = Matrix::<u8>::from_fn([2, m, n], |_| next() as u8);
            let mut o = Matrix::<i32>::zeros([n, m]);
            columns(&rt, &a, &b, &p, &mut o).expect("columns");
            for x in 0..n {
                for y in 0..m {
                    let want = a
                        .get(&[y, x])
                        .wrapping_mul(3)
                        .wrapping_sub(b.get(&[x, y]))
                        .wrapping_add(a.get(&[m - 1 - y, n - 1 - x]) / 2)
                        .wrapping_add(p.get(&[1, y, x]) as i32);
                    assert_eq!(o.get(&[x, y]), want, "{m}x{n} at {x}, {y}");
                }
            }
            let a16 = Matrix::<i16>::from_fn([m, n], |_| next() as i16);
            let mut o16 = Matrix::<i16>::from_fn([n, m], |i| (i[0] + i[1]) as i16);
            let before = o16.clone();
            shifted_columns(&rt, &a16, &mut o16).expect("shifted_columns");
            for x in 0..n {
                for y in 0..m {
                    let want = match y >= 1 && y + 1 < m {
                        true => a16.get(&[y + 1, x]).wrapping_sub(a16.get(&[y - 1, x])),
                        false => before.get(&[x, y]),
                    };
                    assert_eq!(o16.get(&[x, y]), want, "{m}x{n} at {x}, {y}");
                }
            }
        }
    }
}

/// Tasks narrowed on a guess of their inputs' values (`lir::pass::narrow`, speculated): a 3x3
/// blur of 16-bit pixels whose 12-bit values sum in 16 bits, and signed sums, against plain
/// Rust, where every row holds the guess, where some rows do not (their tasks run again as
/// written) and where none does, at sizes from 3x3 to past a task's rows.
#[test]
fn guessed_ranges_give_the_written_results() {
    let mut next = rng(0x5eed_0bad_cafe);
    for (m, n) in [(3, 3), (4, 7), (9, 70), (77, 131), (150, 65)] {
        // Full-range values in no row, in the last (the tasks before it hold the guess) or in
        // every other one; the rest 12-bit (8-bit signed).
        for wide_rows in ["none", "last", "every other"] {
            let wide = |r: usize| match wide_rows {
                "last" => r == m - 1,
                "every other" => r % 2 == 1,
                _ => false,
            };
            let src = Matrix::<u16>::from_fn([m, n], |i| {
                let v = next();
                if wide(i[0]) {
                    v as u16
                } else {
                    (v % 4096) as u16
                }
            });
            let a = Matrix::<i16>::from_fn([m, n], |i| {
                let v = next();
                if wide(i[0]) {
                    v as i16
                } else {
                    (v % 256) as i16 - 128
                }
            });
            let at = |x: usize, y: usize| i32::from(src.get(&[x, y]));
            let bx = |x: usize, y: usize| (at(x, y) + at(x, y + 1) + at(x, y + 2)) / 3;
            let ai = |x: usize, y: usize| i32::from(a.get(&[x, y]));
            for rt in levels() {
                let mut out = Matrix::<u16>::zeros([m - 2, n - 2]);
                blur3(&rt, &src, &mut out).expect("blur3");
                for x in 0..m - 2 {
                    for y in 0..n - 2 {
                        let want = (bx(x, y) + bx(x + 1, y) + bx(x + 2, y)) / 3;
                        assert_eq!(
                            i32::from(out.get(&[x, y])),
                            want,
                            "blur3 at [{x}][{y}] of {m}x{n}, rows {wide_rows} ({:?})",
                            rt.cpu_isa()
                        );
                    }
                }
                let mut o = Matrix::<i32>::zeros([m, n]);
                signed_sums(&rt, &a, &mut o).expect("signed_sums");
                for x in 0..m {
                    for y in 0..n - 1 {
                        let want = (ai(x, y) + ai(x, y + 1)) * 3 - ai(x, y) / 4;
                        assert_eq!(o.get(&[x, y]), want, "signed_sums at [{x}][{y}] of {m}x{n}");
                    }
                }
            }
        }
    }
}

/// Two outputs of different element types written in blocks through buffers and streamed, the
/// rows' lengths past a block's (2 KiB) and not on its lines, every element as plain Rust has it.
#[test]
fn streamed_outputs_are_every_element() {
    for (m, n) in [
        (1, 1),
        (3, 31),
        (2, 1023),
        (3, 1025),
        (2, 2047),
        (2, 2049),
        (3, 4133),
    ] {
        let a = Matrix::from_fn([m, n], |i| ((i[0] * 7919 + i[1] * 31) % 65_000) as u16);
        let want_o = Matrix::from_fn([m, n], |i| {
            a.as_slice()[i[0] * n + i[1]]
                .wrapping_mul(3)
                .wrapping_add(i[0] as u16)
        });
        let want_p = Matrix::from_fn([m, n], |i| (a.as_slice()[i[0] * n + i[1]] >> 4) as u8);
        for rt in levels()
            .into_iter()
            .chain([Runtime::cpu().with_cpu_stream_bytes(usize::MAX)])
        {
            let mut o = Matrix::<u16>::zeros([m, n]);
            let mut p = Matrix::<u8>::zeros([m, n]);
            streamed(&rt, &a, &mut o, &mut p).unwrap();
            assert_eq!(
                o.as_slice(),
                want_o.as_slice(),
                "{m}x{n} {:?}",
                rt.cpu_isa()
            );
            assert_eq!(
                p.as_slice(),
                want_p.as_slice(),
                "{m}x{n} {:?}",
                rt.cpu_isa()
            );
        }
    }
}
