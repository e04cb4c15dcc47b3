// Two functions in one `parac!` block, with independent mistakes in each (write to an input,
// `%` on floats, a non-constant step, a chained comparison): all are reported at once.
parac::parac! {
    /// Folds the phase into [0, 2).
    pub fn fold(src: &f32[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            src[itx][ity] = src[itx][ity] * 0.5;
            out[itx][ity] = src[itx][ity] % 2.0;
        }
    }

    /// Marks the mid-tones.
    pub fn midtones(src: &u8[M][N], out: &mut u8[M][N], step: i32) {
        parac_iterator it(0:M:step; 0:N:1) {
            let v = src[itx][ity];
            if 16 < v < 235 {
                out[itx][ity] = 1;
            } else {
                out[itx][ity] = 0;
            }
        }
    }
}

fn main() {}
