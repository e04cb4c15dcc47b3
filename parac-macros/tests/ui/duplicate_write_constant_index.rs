// `out[0][ity]` in a 2-D iterator: every row iteration writes the same element.
parac::parac! {
    pub fn top_row(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[0][ity] = src[itx][ity];
        }
    }
}

fn main() {}
