// The index variable `itx` of iterator `it` used in the next iterator `it1`: suggests `it1x`.
parac::parac! {
    pub fn two_pass(src: &u8[M][N], out: &mut u8[M][N]) {
        let h: u8[M][N];
        parac_iterator it(0:M:1; 0:N:1) {
            h[itx][ity] = src[itx][ity] / 2;
        }
        parac_iterator it1(0:M:1; 0:N:1) {
            out[it1x][it1y] = h[itx][it1y];
        }
    }
}

fn main() {}
