// A rule that covers only columns while the access goes out in rows (`itx-1`).
parac::parac! {
    pub fn vgradient(src: &u8[M][N], out: &mut i16[M][N]) {
        parac_border_rule cols = replicate(src[*][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(cols) {
            out[itx][ity] = src[itx][ity] - src[itx-1][ity];
        }
    }
}

fn main() {}
