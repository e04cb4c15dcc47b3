// A [1][5] constant matrix initialized with 4 values: the error points at the initializer.
parac::parac! {
    pub fn hblur(src: &u8[M][N], out: &mut u8[M][N]) {
        const F_H: u8[1][5] = [[1, 4, 6, 4]];
        parac_border_rule r = replicate(src[*][2]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = (parac_convolution(F_H, src[itx][ity-2:5:1]) + 8) / 16;
        }
    }
}

fn main() {}
