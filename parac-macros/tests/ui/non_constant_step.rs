// An iterator step that is a scalar parameter (`step`): steps must be integer constants.
parac::parac! {
    pub fn subsample(src: &u8[M][N], out: &mut u8[M][N], step: i32) {
        parac_iterator it(0:M:step; 0:N:1) {
            out[itx][ity] = src[itx][ity];
        }
    }
}

fn main() {}
