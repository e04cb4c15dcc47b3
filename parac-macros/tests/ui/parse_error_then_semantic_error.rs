// A missing `;` between two statements and, later, a misspelled name (`hh`): both are reported.
parac::parac! {
    pub fn two_pass(src: &u8[M][N], out: &mut u8[M][N]) {
        let h: u8[M][N];
        parac_iterator it(0:M:1; 0:N:1) {
            h[itx][ity] = src[itx][ity] / 2
            out[itx][ity] = 1;
        }
        parac_iterator it1(0:M:1; 0:N:1) {
            out[it1x][it1y] = hh[it1x][it1y];
        }
    }
}

fn main() {}
