// A rule with the four sides and three corners, for a 3x3 window: `src[+1][+1]` is missing.
parac::parac! {
    pub fn box3(src: &u8[M][N], out: &mut i32[M][N]) {
        parac_border_rule br {
            src[*][-1] = src[*][0];
            src[*][+1] = src[*][N-1];
            src[-1][*] = src[0][*];
            src[+1][*] = src[M-1][*];
            src[-1][-1] = src[-1][+1] = src[+1][-1] = 0;
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            out[itx][ity] = parac_matrix_sum(src[itx-1:3:1][ity-1:3:1]);
        }
    }
}

fn main() {}
