// A call of a function that is not a ParaC built-in (`median`): the error points at `median`.
parac::parac! {
    pub fn denoise(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = median(src[itx-1:3:1][ity-1:3:1]);
        }
    }
}

fn main() {}
