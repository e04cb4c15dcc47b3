// A border value (`src[*][-2]`) that reads another border position (`src[*][-1]`).
parac::parac! {
    pub fn hblur(src: &u8[M][N], out: &mut u8[M][N]) {
        const F_H: u8[1][5] = [[1, 4, 6, 4, 1]];
        parac_border_rule br {
            src[*][-1] = src[*][0];
            src[*][-2] = src[*][-1];
            src[*][+1] = src[*][N-1];
            src[*][+2] = src[*][N-1];
        }
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            out[itx][ity] = (parac_convolution(F_H, src[itx][ity-2:5:1]) + 8) / 16;
        }
    }
}

fn main() {}
