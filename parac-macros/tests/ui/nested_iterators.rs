// An iterator inside another iterator: the error points at the inner `parac_iterator`.
parac::parac! {
    pub fn rows(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1) {
            parac_iterator col(0:N:1) {
                out[itx][colx] = src[itx][colx];
            }
        }
    }
}

fn main() {}
