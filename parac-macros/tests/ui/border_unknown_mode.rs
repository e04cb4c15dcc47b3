// A shorthand with a mode ParaC does not have (`mirror`): the error lists the modes.
parac::parac! {
    pub fn box3(src: &u8[M][N], out: &mut i32[M][N]) {
        parac_border_rule r = mirror(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = parac_matrix_sum(src[itx-1:3:1][ity-1:3:1]);
        }
    }
}

fn main() {}
