// A store into an input matrix (`&u8`, not `&mut`): the error points at the target `src[..]`.
parac::parac! {
    pub fn threshold(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            src[itx][ity] = src[itx][ity] / 2;
            out[itx][ity] = src[itx][ity];
        }
    }
}

fn main() {}
