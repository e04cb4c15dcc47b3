// A rule that defines `src[*][-1]` twice: the error points at the second definition.
parac::parac! {
    pub fn gradient(src: &u8[M][N], out: &mut i16[M][N]) {
        parac_border_rule br {
            src[*][-1] = 0;
            src[*][-1] = src[*][0];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            out[itx][ity] = src[itx][ity] - src[itx][ity-1];
        }
    }
}

fn main() {}
