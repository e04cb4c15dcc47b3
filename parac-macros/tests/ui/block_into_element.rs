// A 3x3 window stored into one element `out[itx][ity]`: the error suggests a reduction.
parac::parac! {
    pub fn box3(src: &u8[M][N], out: &mut u8[M-2][N-2]) {
        parac_iterator it(0:M-2:1; 0:N-2:1) {
            out[itx][ity] = src[itx:3:1][ity:3:1];
        }
    }
}

fn main() {}
