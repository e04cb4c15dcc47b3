// An intermediate (`tmp`) read although no statement writes it: the error points at the read.
parac::parac! {
    pub fn diff(src: &u8[M][N], out: &mut i16[M][N]) {
        let tmp: u8[M][N];
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] - tmp[itx][ity];
        }
    }
}

fn main() {}
