// A whole matrix (`src`, no subscript) used as a scalar inside an iterator.
parac::parac! {
    pub fn invert(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = 255 - src;
        }
    }
}

fn main() {}
