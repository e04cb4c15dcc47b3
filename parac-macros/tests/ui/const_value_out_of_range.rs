// A `u8` constant matrix holding -1 (a Sobel kernel): the error points at the value.
parac::parac! {
    pub fn sobel(src: &u8[M][N], out: &mut i32[M][N]) {
        const SOBEL_X: u8[3][3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
        parac_border_rule r = reflect101(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            out[itx][ity] = parac_convolution(SOBEL_X, src[itx-1:3:1][ity-1:3:1]);
        }
    }
}

fn main() {}
