//! The `blur` pipeline of APPS.md, shared by `examples/blur.rs` and the tests.

parac::parac! {
    /// Separable 3x3 box blur of a 16-bit image (12-bit values, so the sums cannot overflow).
    pub fn blur(src: &u16[M][N], out: &mut u16[M-2][N-2]) {
        let bx: u16[M][N-2];
        parac_iterator it(0:M:1; 0:N-2:1) {
            bx[itx][ity] = (src[itx][ity] + src[itx][ity+1] + src[itx][ity+2]) / 3;
        }
        parac_iterator it1(0:M-2:1; 0:N-2:1) {
            out[it1x][it1y] = (bx[it1x][it1y] + bx[it1x+1][it1y] + bx[it1x+2][it1y]) / 3;
        }
    }
}
