// An element type ParaC does not have (`uint8` for `u8`) on a parameter: the error points at it.
parac::parac! {
    pub fn to_float(src: &uint8[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] as f32 / 255.0;
        }
    }
}

fn main() {}
