// An iterator step of 0: the error points at the `0` and asks for a positive step.
parac::parac! {
    pub fn copy(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:0) {
            out[itx][ity] = src[itx][ity];
        }
    }
}

fn main() {}
