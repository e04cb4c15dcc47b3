// A repeat's `parac_schedule` takes `band = K`, `rows = R` (1 to 1024) and `split = 0 | 1`.
parac::parac! {
    pub fn heat(src: &f32[M][N], out: &mut f32[M][N], steps: i32) {
        let next: f32[M][N];
        parac_border_rule edge = replicate(out[1][1]);
        parac_iterator init(0:M:1; 0:N:1) {
            out[initx][inity] = src[initx][inity];
        }
        parac_repeat(steps) parac_schedule(split = 2, band = 0, tiles = 4) {
            parac_iterator step(x in 0:M:1; y in 0:N:1) parac_border_rule(edge) {
                next[x][y] = out[x][y] + 0.125 * (out[x-1][y] + out[x+1][y] - 2.0 * out[x][y]);
            }
            parac_swap(out, next);
        }
    }
}

fn main() {}
