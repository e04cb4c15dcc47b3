// `scr` for `src` (two letters swapped): the suggestion must be `src`, not the border rule `r`.
parac::parac! {
    pub fn sharpen(src: &u8[M][N], out: &mut u8[M][N], amount: f32) {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            let blur = parac_matrix_mean(src[itx-1:3:1][ity-1:3:1]);
            out[itx][ity] = clamp(scr[itx][ity] as f32 + amount * (src[itx][ity] - blur) as f32,
                                  0.0, 255.0) as u8;
        }
    }
}

fn main() {}
