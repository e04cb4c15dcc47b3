// An element type ParaC does not have (`f64`) on an intermediate: the error points at `f64`.
parac::parac! {
    pub fn smooth(src: &f32[M][N], out: &mut f32[M][N]) {
        let acc: f64[M][N];
        parac_iterator it(0:M:1; 0:N:1) {
            acc[itx][ity] = src[itx][ity] * 0.5;
        }
        parac_iterator it1(0:M:1; 0:N:1) {
            out[it1x][it1y] = acc[it1x][it1y];
        }
    }
}

fn main() {}
