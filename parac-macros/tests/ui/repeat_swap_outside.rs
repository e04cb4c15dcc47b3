// `parac_swap` between time steps only: outside `parac_repeat` it is an error.
parac::parac! {
    pub fn once(src: &i32[M][N], a: &mut i32[M][N], b: &mut i32[M][N]) {
        parac_iterator init(x in 0:M:1; y in 0:N:1) {
            a[x][y] = src[x][y];
            b[x][y] = src[x][y] + 1;
        }
        parac_swap(a, b);
    }
}

fn main() {}
