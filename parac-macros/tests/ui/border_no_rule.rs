// A read left of the first column (`ity-1`) in an iterator that applies no border rule.
parac::parac! {
    pub fn gradient(src: &u8[M][N], out: &mut i16[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] - src[itx][ity-1];
        }
    }
}

fn main() {}
