// A name that is declared nowhere and resembles nothing (`gain`): the error points at `gain`.
parac::parac! {
    pub fn brighten(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = min(src[itx][ity] * gain, 255);
        }
    }
}

fn main() {}
