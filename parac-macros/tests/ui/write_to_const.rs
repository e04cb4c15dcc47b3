// A store into a constant matrix (`KERNEL`): the error points at the target.
parac::parac! {
    pub fn sharpen(src: &u8[M][N], out: &mut i32[M][N]) {
        const KERNEL: i8[3][3] = [[0, -1, 0], [-1, 5, -1], [0, -1, 0]];
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            KERNEL[1][1] = 4;
            out[itx][ity] = parac_convolution(KERNEL, src[itx-1:3:1][ity-1:3:1]);
        }
    }
}

fn main() {}
