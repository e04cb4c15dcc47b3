// Three independent mistakes in one pipeline (border too narrow, a misspelled name, a `return`
// without a return type): each is reported at once, at its own place.
parac::parac! {
    pub fn laplacian(src: &u8[M][N], lap: &mut i16[M][N], down: &mut u8[(M+1)/2][(N+1)/2]) {
        const F_H: u8[1][5] = [[1, 4, 6, 4, 1]];
        let h: u8[M][N];
        parac_border_rule br = replicate(src[*][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(br) {
            h[itx][ity] = (parac_convolution(F_H, src[itx][ity-2:5:1]) + 8) / 16;
        }
        parac_iterator it1(0:(M+1)/2:1; 0:(N+1)/2:1) {
            down[it1x][it1y] = h[it1x*2][it1y*2];
        }
        parac_iterator it2(0:M:1; 0:N:1) {
            lap[it2x][it2y] = src[it2x][it2y] - dwn[it2x/2][it2y/2];
        }
        let mean = parac_matrix_sum(lap) / (M * N) as i64;
        return mean;
    }
}

fn main() {}
