// A 2-D matrix read with one subscript (`src[itx]`): the error gives the expected count.
parac::parac! {
    pub fn copy(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx];
        }
    }
}

fn main() {}
