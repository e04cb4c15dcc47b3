//! Producers fused into their consumers' tasks of rows on the CPU path (`lir::pass::fuse`),
//! some storing the intermediate for later readers (`stored_*`):
//! the functions of `tests/in/fusion.parac` and a read past the intermediate (an error), each
//! compiled by `parac::parac!` and run on `Runtime::cpu()` against the reference interpreter with the same random arguments (the
//! random corpus's harness, `tests/corpus/harness.rs`): bit-identical results or the same
//! error, no canary touched. Heights from 1 to past three tasks of `lir::FUSE_ROWS` rows, so
//! that halos cross the tasks' edges and the image's; `tests/lir.rs` runs the same functions
//! in tasks of 1 to 3 rows on the LIR's evaluator.

#![allow(clippy::all, unused)]

#[path = "../parac-core/tests/gen/mod.rs"]
mod progen;

mod common;

#[path = "corpus/harness.rs"]
mod harness;

#[path = "chains/mod.rs"]
mod chains;

use harness::*;
use parac_core::interp::{Arg, Val};

const SIZES: &[&[(&str, usize)]] = &[
    &[("M", 1), ("N", 1)],
    &[("M", 1), ("N", 5)],
    &[("M", 4), ("N", 1)],
    &[("M", 31), ("N", 3)],
    &[("M", 33), ("N", 4)],
    &[("M", 64), ("N", 5)],
    &[("M", 97), ("N", 9)],
    // Tall: the CPU path's tasks of more rows than the compiler's 32, chosen when the call
    // runs (`caches::task_rows`: 72 on two threads, 14 tasks), the last one partial.
    &[("M", 1001), ("N", 3)],
    // OpenCL's fused tiles: 16 to 128 columns, 8 to 64 rows; one past some.
    &[("M", 17), ("N", 33)],
    &[("M", 65), ("N", 129)],
];

/// The separable 3x3 blur, as module `$m`, its first stage's schedule `$s` (none: fused where
/// legal).
macro_rules! blur2_program {
    ($m:ident, $($s:tt)*) => {
        mod $m {
            use super::{Arg, Val};

            super::program! {
                fn blur2(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
                    let bx: u16[M][N-2];
                    parac_iterator it(0:M:1; 0:N-2:1) $($s)* {
                        bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
                    }
                    parac_iterator it1(0:M-2:1; 0:N-2:1) {
                        out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
                    }
                }
            }

            pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
                let m0 = super::canaried::<u16>("src", &args[0]);
                let mut m1 = super::canaried::<u16>("out", &args[1]);
                let r = blur2(rt, &m0, &mut m1);
                super::put(&mut args[1], &m1);
                r.map(|()| None)
            }
        }
    };
}

blur2_program!(blur2,);

mod rows_reflect {
    use super::{Arg, Val};

    super::program! {
        fn rows_reflect(src: &u8[M][N], out: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_schedule(inline = 0) {
                let a = src[x][y] * 3;
                t[x][y] = a - y;
            }
            parac_border_rule r = reflect101(t[2][*]);
            parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-2][y] + 2 * t[x][y] - t[x+1][y] + t[x+2][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = rows_reflect(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod rows_constant {
    use super::{Arg, Val};

    super::program! {
        fn rows_constant(src: &f32[M][N], out: &mut f32[M][N]) {
            let t: f32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] * 0.5 + 1.0;
            }
            parac_border_rule r = constant(t[1][1], -4.0);
            parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-1][y-1] + t[x][y] * 2.0 + t[x+1][y+1];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<f32>("src", &args[0]);
        let mut m1 = super::canaried::<f32>("out", &args[1]);
        let r = rows_constant(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod rows_through_data {
    use super::{Arg, Val};

    super::program! {
        fn rows_through_data(src: &u8[M][N], out: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] + x * 7;
            }
            parac_iterator it1(x in 0:M:1; y in 0:N:1) {
                out[x][y] = t[x][y] + t[src[x][y] % M][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = rows_through_data(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

/// A row read through data past the intermediate's last row: the same error fused.
mod past_the_last_row {
    use super::{Arg, Val};

    super::program! {
        fn past_the_last_row(src: &i16[M][N], out: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] - 1;
            }
            parac_iterator it1(x in 0:M:1; y in 0:N:1) {
                out[x][y] = t[x][y] + t[x + src[x][y] % 3][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<i16>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = past_the_last_row(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod strided_and_shared {
    use super::{Arg, Val};

    super::program! {
        fn strided_and_shared(src: &u8[M][N], out: &mut i32[M/2][N], also: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] * 2;
            }
            parac_iterator it1(x in 0:M/2:1; y in 0:N:1) {
                out[x][y] = t[2*x][y] + t[2*x+1][y];
            }
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                also[x][y] = t[x][y] + 1;
            }
        }
    }

    /// A function of `src: u8` and two `i32` outputs, `out` and `also`.
    pub type TwoOutputs = fn(
        &parac::Runtime,
        &crate::common::canary::Canaried<u8>,
        &mut crate::common::canary::Canaried<i32>,
        &mut crate::common::canary::Canaried<i32>,
    ) -> Result<(), parac::Error>;

    /// Calls `f` with `args` (`src`, `out`, `also`).
    pub fn call_two(
        f: TwoOutputs,
        rt: &parac::Runtime,
        args: &mut [Arg],
    ) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let mut m2 = super::canaried::<i32>("also", &args[2]);
        let r = f(rt, &m0, &mut m1, &mut m2);
        super::put(&mut args[1], &m1);
        super::put(&mut args[2], &m2);
        r.map(|()| None)
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        call_two(strided_and_shared, rt, args)
    }
}

mod shared_rows {
    use super::{Arg, Val};

    super::program! {
        fn shared_rows(src: &u8[M][N], out: &mut i32[M][N], also: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_schedule(inline = 0) {
                t[x][y] = src[x][y] * 3 - y;
            }
            parac_border_rule r = clamp(t[1][*]);
            parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-1][y] + 2 * t[x][y] - t[x+1][y];
            }
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                also[x][y] = t[x][y] + 1;
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        super::strided_and_shared::call_two(shared_rows, rt, args)
    }
}

mod stored_rows {
    use super::{Arg, Val};

    super::program! {
        fn stored_rows(src: &u8[M][N], out: &mut i32[M][N], also: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] * 3 - y;
            }
            parac_border_rule r = clamp(t[1][*]);
            parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-1][y] + 2 * t[x][y] - t[x+1][y];
            }
            let s: i64 = parac_matrix_sum(t);
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                also[x][y] = t[x][y] + (s % 7) as i32;
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        super::strided_and_shared::call_two(stored_rows, rt, args)
    }
}

mod stored_data {
    use super::{Arg, Val};

    super::program! {
        fn stored_data(src: &u8[M][N], out: &mut i32[M][N], also: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) parac_schedule(inline = 0) {
                t[x][y] = src[x][y] - 2 * x + y;
            }
            parac_border_rule r = reflect101(t[2][*]);
            parac_iterator it1(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-2][y] * 3 - t[x][y] + t[x-1][y];
            }
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                also[x][y] = t[src[x][y] % M][y] * 2;
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        super::strided_and_shared::call_two(stored_data, rt, args)
    }
}

mod stored_past {
    use super::{Arg, Val};

    super::program! {
        fn stored_past(src: &i16[M][N], out: &mut i32[M][N], also: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] + y;
            }
            parac_iterator it1(x in 0:M:1; y in 0:N:1) {
                out[x][y] = t[x][y] + t[x + src[x][y] % 3][y];
            }
            let s: i64 = parac_matrix_sum(t);
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                also[x][y] = t[x][y] - (s % 5) as i32;
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<i16>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let mut m2 = super::canaried::<i32>("also", &args[2]);
        let r = stored_past(rt, &m0, &mut m1, &mut m2);
        super::put(&mut args[1], &m1);
        super::put(&mut args[2], &m2);
        r.map(|()| None)
    }
}

mod apart {
    use super::{Arg, Val};

    super::program! {
        fn apart(src: &u8[M][N], out: &mut i32[M][N], other: &mut i32[M][N]) {
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                t[x][y] = src[x][y] * 3;
            }
            parac_iterator it1(x in 0:M:1; y in 0:N:1) {
                other[x][y] = src[x][y] + 1;
            }
            parac_border_rule r = clamp(t[1][*]);
            parac_iterator it2(x in 0:M:1; y in 0:N:1) parac_border_rule(r) {
                out[x][y] = t[x-1][y] - t[x+1][y] + other[x][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let mut m2 = super::canaried::<i32>("other", &args[2]);
        let r = apart(rt, &m0, &mut m1, &mut m2);
        super::put(&mut args[1], &m1);
        super::put(&mut args[2], &m2);
        r.map(|()| None)
    }
}

mod apart_blocked {
    use super::{Arg, Val};

    super::program! {
        fn apart_blocked(src: &u8[M][N], out: &mut i32[M][N]) {
            let u: i32[M][N];
            let t: i32[M][N];
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                u[x][y] = src[x][y];
            }
            parac_iterator it1(x in 0:M:1; y in 0:N:1) {
                t[x][y] = u[x][y] * 3;
            }
            parac_iterator it2(x in 0:M:1; y in 0:N:1) {
                u[x][y] = 7;
            }
            parac_iterator it3(x in 0:M:1; y in 0:N:1) {
                out[x][y] = t[x][y] + u[x][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = apart_blocked(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod chain3 {
    use super::{Arg, Val};

    super::program! {
        fn chain3(src: &u16[M][N], out: &mut i32[M][N]) {
            let a: u16[M][N];
            let b: i32[M][N];
                    parac_iterator p(x in 0:M:1; y in 0:N:1) {
                a[x][y] = (3 * src[x][y] + y) / 2;
            }
            parac_border_rule ra = clamp(a[2][1]);
            parac_iterator q(x in 0:M:1; y in 0:N:1) parac_border_rule(ra) {
                b[x][y] = a[x-2][y] + a[x][y] - a[x+1][y-1] + 3 * a[x+2][y];
            }
            parac_border_rule rb = constant(b[1][*], 7);
            parac_iterator d(x in 0:M:1; y in 0:N:1) parac_border_rule(rb) {
                out[x][y] = b[x-1][y] + b[x+1][y] - 2 * (a[x][y] as i32);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u16>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = chain3(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod chain_line {
    use super::{Arg, Val};

    super::program! {
        fn chain_line(src: &u16[M][N], out: &mut i32[M][N]) {
            let a: u16[M][N];
            let b: i32[M][N];
            parac_iterator p(x in 0:M:1; y in 0:N:1) {
                a[x][y] = (3 * src[x][y] + y) / 2;
            }
            parac_border_rule ra = clamp(a[1][2]);
            parac_iterator q(x in 0:M:1; y in 0:N:1) parac_border_rule(ra) {
                b[x][y] = a[x-1][y] + 2 * a[x][y] + a[x+1][y-2] - a[x][y+1];
            }
            parac_border_rule rb = reflect101(b[1][1]);
            parac_iterator d(x in 0:M:1; y in 0:N:1) parac_border_rule(rb) {
                out[x][y] = 4 * b[x][y] - b[x-1][y+1] - b[x+1][y-1] - (src[x][y] as i32);
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u16>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = chain_line(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod chain_down {
    use super::{Arg, Val};

    super::program! {
        fn chain_down(src: &u8[M][N], out: &mut i32[M/2][N]) {
            let a: i32[M][N];
            let b: i32[M][N];
            parac_iterator p(x in 0:M:1; y in 0:N:1) {
                a[x][y] = src[x][y] * 2 - y;
            }
            parac_border_rule ra = reflect(a[1][*]);
            parac_iterator q(x in 0:M:1; y in 0:N:1) parac_border_rule(ra) {
                b[x][y] = a[x-1][y] + a[x][y] + a[x+1][y];
            }
            parac_border_rule rb = replicate(b[1][*]);
            parac_iterator d(x in 0:M/2:1; y in 0:N:1) parac_border_rule(rb) {
                out[x][y] = b[2*x-1][y] - b[2*x+1][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = chain_down(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod edge_rows {
    use super::{Arg, Val};

    super::program! {
        fn edge_rows(src: &u8[M][N], out: &mut i32[M/2][N]) {
            const K: i32[1][7] = [[1, 2, 3, 4, 3, 2, 1]];
            let h: i32[M][N];
            parac_border_rule rs = wrap(src[*][3]);
            parac_iterator p(x in 0:M:1; y in 0:N:1) parac_border_rule(rs) {
                h[x][y] = parac_convolution(K, src[x][y-3:7:1]) - y;
            }
            parac_border_rule rh {
                h[-2][*] = h[2][*] * 2 - h[0][*];
                h[-1][*] = h[1][*] - h[M-1][*];
                h[+1][*] = h[M-2][*] * 2 - h[0][*];
                h[+2][*] = h[M-3][*] + h[1][*];
            }
            parac_iterator d(x in 0:M/2:1; y in 0:N:1) parac_border_rule(rh) {
                out[x][y] = h[2*x-2][y] + h[2*x+1][y] * 2 - h[2*x+3][y];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = edge_rows(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

mod down2d {
    use super::{Arg, Val};

    super::program! {
        fn down2d(src: &u8[M][N], out: &mut i32[(M+1)/2][N/2]) {
            let h: i32[M][N];
            parac_border_rule rs = reflect101(src[*][2]);
            parac_iterator p(x in 0:M:1; y in 0:N:1) parac_border_rule(rs) {
                h[x][y] = src[x][y-2] + 3 * src[x][y+1] - y;
            }
            parac_border_rule rh = replicate(h[2][*]);
            parac_iterator d(x in 0:(M+1)/2:1; y in 0:N/2:1) parac_border_rule(rh) {
                out[x][y] = h[2*x-1][2*y+1] - 2 * h[2*x+2][2*y+1];
            }
        }
    }

    pub fn call(rt: &parac::Runtime, args: &mut [Arg]) -> Result<Option<Val>, parac::Error> {
        let m0 = super::canaried::<u8>("src", &args[0]);
        let mut m1 = super::canaried::<i32>("out", &args[1]);
        let r = down2d(rt, &m0, &mut m1);
        super::put(&mut args[1], &m1);
        r.map(|()| None)
    }
}

blur2_program!(blur2_apart, parac_schedule(fuse = 0));
blur2_program!(blur2_unfolded, parac_schedule(fold = 0));

/// `edge_rows` and `down2d` downsample: heights about one and two tasks of its rows (64 of `src`), and
/// the smallest, where its rules' rows are missing (an error).
const EDGE_SIZES: &[&[(&str, usize)]] = &[
    &[("M", 1), ("N", 1)],
    &[("M", 3), ("N", 2)],
    &[("M", 4), ("N", 7)],
    &[("M", 5), ("N", 3)],
    &[("M", 63), ("N", 4)],
    &[("M", 65), ("N", 9)],
    &[("M", 66), ("N", 5)],
    &[("M", 129), ("N", 3)],
];

const PROGRAMS: &[Entry] = &[
    Entry {
        name: "blur2",
        src: blur2::SRC,
        sizes: SIZES,
        exact: true,
        call: blur2::call,
    },
    Entry {
        name: "rows_reflect",
        src: rows_reflect::SRC,
        sizes: SIZES,
        exact: true,
        call: rows_reflect::call,
    },
    Entry {
        name: "rows_constant",
        src: rows_constant::SRC,
        sizes: SIZES,
        exact: true,
        call: rows_constant::call,
    },
    Entry {
        name: "rows_through_data",
        src: rows_through_data::SRC,
        sizes: SIZES,
        exact: true,
        call: rows_through_data::call,
    },
    Entry {
        name: "past_the_last_row",
        src: past_the_last_row::SRC,
        sizes: SIZES,
        exact: true,
        call: past_the_last_row::call,
    },
    Entry {
        name: "strided_and_shared",
        src: strided_and_shared::SRC,
        sizes: SIZES,
        exact: true,
        call: strided_and_shared::call,
    },
    Entry {
        name: "shared_rows",
        src: shared_rows::SRC,
        sizes: SIZES,
        exact: true,
        call: shared_rows::call,
    },
    Entry {
        name: "stored_rows",
        src: stored_rows::SRC,
        sizes: SIZES,
        exact: true,
        call: stored_rows::call,
    },
    Entry {
        name: "stored_data",
        src: stored_data::SRC,
        sizes: SIZES,
        exact: true,
        call: stored_data::call,
    },
    Entry {
        name: "stored_past",
        src: stored_past::SRC,
        sizes: SIZES,
        exact: true,
        call: stored_past::call,
    },
    Entry {
        name: "apart",
        src: apart::SRC,
        sizes: SIZES,
        exact: true,
        call: apart::call,
    },
    Entry {
        name: "apart_blocked",
        src: apart_blocked::SRC,
        sizes: SIZES,
        exact: true,
        call: apart_blocked::call,
    },
    Entry {
        name: "chain3",
        src: chain3::SRC,
        sizes: SIZES,
        exact: true,
        call: chain3::call,
    },
    Entry {
        name: "chain_line",
        src: chain_line::SRC,
        sizes: SIZES,
        exact: true,
        call: chain_line::call,
    },
    Entry {
        name: "chain_down",
        src: chain_down::SRC,
        sizes: SIZES,
        exact: true,
        call: chain_down::call,
    },
    Entry {
        name: "edge_rows",
        src: edge_rows::SRC,
        sizes: EDGE_SIZES,
        exact: true,
        call: edge_rows::call,
    },
    Entry {
        name: "down2d",
        src: down2d::SRC,
        sizes: EDGE_SIZES,
        exact: true,
        call: down2d::call,
    },
    Entry {
        name: "blur2_apart",
        src: blur2_apart::SRC,
        sizes: SIZES,
        exact: true,
        call: blur2_apart::call,
    },
    Entry {
        name: "blur2_unfolded",
        src: blur2_unfolded::SRC,
        sizes: SIZES,
        exact: true,
        call: blur2_unfolded::call,
    },
];

/// Every fused function on the CPU path against the interpreter.
#[test]
fn fused_stages_match_the_interpreter_on_the_cpu_path() {
    harness::cpu_path(PROGRAMS);
}

/// Every function on OpenCL with the baseline and each fused plan forced (`fuse<C>x<R>`: the
/// producer computed by its consumer's work-groups in local memory; `inline`: at each of its
/// consumer's reads; `lir::pass::fuse::gpu`), against the interpreter, guard bands on and off.
#[test]
fn fused_stages_match_the_interpreter_on_opencl() {
    let fused = |l: &str| l == "baseline" || l.starts_with("fuse") || l.ends_with("inline");
    harness::opencl_labels(PROGRAMS, true, fused);
    harness::opencl_labels(PROGRAMS, false, fused);
}

/// Fusion forced or forbidden in one stage at run time (`PlanPolicy::Stages`,
/// `PARAC_PLAN=<region>=<label>`): each region with fused plans forced to each of them, then to
/// the baseline, the other regions searching, against the interpreter.
#[test]
fn fusion_forced_per_stage_on_opencl() {
    harness::opencl_policies(PROGRAMS, true, |f| {
        let mut out = Vec::new();
        for rid in 0..f.regions.len() {
            let plans = parac_core::codegen::launch::plans(f, rid);
            if !plans.iter().any(|p| p.fuses) {
                continue;
            }
            let name = &f.regions[rid].name;
            for p in plans.iter().filter(|p| p.fuses || p.label == "baseline") {
                let stage = vec![(name.clone(), p.label.clone())];
                out.push((
                    parac::PlanPolicy::Stages(stage),
                    format!("{name}={}", p.label),
                ));
            }
        }
        out
    });
}

/// Random two- and three-stage chains (`tests/chains`: reads at offsets through random border
/// shorthands, chains in a row and unsharp's shape), the first 16 whose producer has fused
/// plans, on the OpenCL device (guard bands on) with the baseline and each fused plan forced,
/// against the interpreter at random sizes from 1x1: what `tests/lir.rs` checks on the LIR's
/// evaluator, as the device runs it.
#[test]
fn random_chains_fuse_on_opencl() {
    use common::differential::{Tolerance, memory_intact, outcomes, plan_labels, policy};
    let Some(mut rt) = common::differential::opencl_with_guard_bands() else {
        return;
    };
    let mut rng = chains::Rng(0x9e37_79b9_7f4a_7c15);
    let (mut programs, mut runs, mut failures) = (0, 0, Vec::new());
    for k in 0..200 {
        if programs == 16 {
            break;
        }
        let src = match k % 2 {
            0 => chains::two_stage_chain(&mut rng, k),
            _ => chains::three_stage_chain(&mut rng, k).0,
        };
        let Ok(p) = parac::Pipeline::compile(&src) else {
            continue;
        };
        let f = &p.functions()[0];
        let mut labels = plan_labels(f);
        labels.retain(|l| l == "baseline" || l.starts_with("fuse") || l.ends_with("inline"));
        if labels.len() < 2 {
            continue;
        }
        programs += 1;
        let sizes: Vec<progen::Sizes> = (0..2)
            .map(|_| {
                let mut side = || (1 + rng.next() % 40) as usize;
                vec![("M".to_string(), side()), ("N".to_string(), side())]
            })
            .collect();
        for label in &labels {
            rt.set_policy(policy(label));
            for (j, s) in sizes.iter().enumerate() {
                let args = progen::args_with(f, s, k as u64 * 7 + j as u64, true);
                let mut want_args = args.clone();
                let want = parac_core::interp::run(f, &mut want_args);
                let mut got_args = args;
                let got = p.run(&rt, &f.name, &mut got_args);
                runs += 1;
                let d = memory_intact(&rt, &got)
                    .err()
                    .or_else(|| outcomes(&want, &want_args, &got, &got_args, Tolerance::EXACT));
                if let Some((key, d)) = d {
                    failures.push(format!("{label} at {s:?}: {key}: {d}\n{src}"));
                }
            }
        }
    }
    eprintln!("random chains on OpenCL: {programs} programs, {runs} runs");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert!(programs >= 16, "only {programs} chains with fused plans");
}
