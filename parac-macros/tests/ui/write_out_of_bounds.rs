// A store to `out[itx+1][ity]` over `0:M`: the last iteration writes row M, outside `out`.
parac::parac! {
    pub fn shift_down(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx+1][ity] = src[itx][ity];
        }
    }
}

fn main() {}
