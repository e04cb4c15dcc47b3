// A time step holds iterators and swaps only: a declaration inside `parac_repeat`, and a
// `parac_repeat` inside another, are errors at their tokens; the count must be an integer.
parac::parac! {
    pub fn steps(src: &i32[M][N], out: &mut i32[M][N], gain: f32) {
        parac_iterator init(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y];
        }
        parac_repeat(gain) {
            let tmp: i32[M][N];
            parac_repeat(2) {
                parac_iterator it(x in 0:M:1; y in 0:N:1) {
                    out[x][y] = src[x][y] + 1;
                }
            }
        }
    }
}

fn main() {}
