// `parac_swap` of two matrices of different shapes: the error names both.
parac::parac! {
    pub fn steps(src: &i32[M][N], out: &mut i32[M][N], steps: i32) {
        let next: i32[M][N + 1];
        parac_iterator init(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y];
        }
        parac_repeat(steps) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                next[x][y] = out[x][y] + 1;
            }
            parac_swap(out, next);
        }
    }
}

fn main() {}
