// A border target with offset 0 (`src[*][0]`): offsets are `-k` or `+k` with k >= 1.
parac::parac! {
    pub fn gradient(src: &u8[M][N], out: &mut i16[M][N]) {
        parac_border_rule br {
            src[*][0] = 0;
            src[*][-1] = 0;
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            out[itx][ity] = src[itx][ity] - src[itx][ity-1];
        }
    }
}

fn main() {}
