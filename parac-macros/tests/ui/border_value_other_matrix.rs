// A border value of `src` that reads another matrix (`mask`): the error points at `mask[..]`.
parac::parac! {
    pub fn masked(src: &u8[M][N], mask: &u8[M][N], out: &mut i16[M][N]) {
        parac_border_rule br {
            src[*][-1] = mask[*][0];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            out[itx][ity] = src[itx][ity] - src[itx][ity-1];
        }
    }
}

fn main() {}
