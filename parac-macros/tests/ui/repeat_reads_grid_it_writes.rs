// A time step that reads the grid it writes, at a neighbour: its points are not independent
// (Gauss-Seidel order); write a second grid and swap them (Jacobi).
parac::parac! {
    pub fn smooth(src: &f32[M][N], out: &mut f32[M][N], steps: i32) {
        parac_iterator init(x in 0:M:1; y in 0:N:1) {
            out[x][y] = src[x][y];
        }
        parac_repeat(steps) {
            parac_iterator it(x in 1:M:1; y in 0:N:1) {
                out[x][y] = (out[x - 1][y] + out[x][y]) * 0.5;
            }
        }
    }
}

fn main() {}
