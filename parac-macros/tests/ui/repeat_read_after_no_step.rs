// A local written only inside `parac_repeat`, read after it: the repeat may run no time step.
parac::parac! {
    pub fn steps(src: &i32[M][N], out: &mut i32[M][N], steps: i32) {
        let cur: i32[M][N];
        parac_repeat(steps) {
            parac_iterator it(x in 0:M:1; y in 0:N:1) {
                cur[x][y] = src[x][y] + 1;
            }
        }
        parac_iterator fin(x in 0:M:1; y in 0:N:1) {
            out[x][y] = cur[x][y];
        }
    }
}

fn main() {}
