// `parac_swap` of an input: inputs are read only, so their storage cannot take a step's values.
parac::parac! {
    pub fn heat(src: &f32[M][N], out: &mut f32[M][N], steps: i32) {
        parac_repeat(steps) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                out[x][y] = src[x][y] * 0.5;
            }
            parac_swap(src, out);
        }
    }
}

fn main() {}
