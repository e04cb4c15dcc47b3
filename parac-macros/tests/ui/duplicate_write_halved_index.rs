// `down[itx/2][ity]` with step 1: iterations itx = 2k and 2k+1 write the same element.
parac::parac! {
    pub fn halve_rows(src: &u8[M][N], down: &mut u8[(M+1)/2][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            down[itx/2][ity] = src[itx][ity];
        }
    }
}

fn main() {}
