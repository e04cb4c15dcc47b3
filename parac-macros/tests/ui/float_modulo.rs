// `%` with a float operand: the error points at the operator.
parac::parac! {
    pub fn wrap_phase(src: &f32[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] % 6.2831855;
        }
    }
}

fn main() {}
