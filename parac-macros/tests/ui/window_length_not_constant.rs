// A window length that is a scalar parameter (`k`): lengths must be constants.
parac::parac! {
    pub fn box_rows(src: &u8[M][N], out: &mut i32[M][N], k: i32) {
        parac_iterator it(0:M-8:1; 0:N:1) {
            out[itx][ity] = parac_matrix_sum(src[itx:k:1][ity]);
        }
    }
}

fn main() {}
