// A chained comparison `16 < v < 235`: write `16 < v && v < 235`.
parac::parac! {
    pub fn in_range(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            let v = src[itx][ity];
            if 16 < v < 235 {
                out[itx][ity] = 1;
            } else {
                out[itx][ity] = 0;
            }
        }
    }
}

fn main() {}
