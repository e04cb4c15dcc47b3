// A scalar parameter of type `f64`: ParaC computes in f32; the error points at `f64`.
parac::parac! {
    pub fn scale(src: &u8[M][N], out: &mut f32[M][N], gain: f64) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] as f32 * gain as f32;
        }
    }
}

fn main() {}
