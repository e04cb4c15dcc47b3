// A window length that moves with the index variable: a length may be a host expression
// (sizes, scalar parameters), the same at every point, but not the iteration's.
parac::parac! {
    pub fn box_rows(src: &u8[M][N], out: &mut i32[M][N], k: i32) {
        parac_iterator it(0:M-8:1; 0:N:1) {
            out[itx][ity] = parac_matrix_sum(src[itx:k:1][ity]) + parac_matrix_sum(src[itx][0:ity+1]);
        }
    }
}

fn main() {}
