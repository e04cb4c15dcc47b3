// An iterator's `parac_schedule` takes `fuse = 0` or `fuse = 1` alone.
parac::parac! {
    pub fn stages(src: &i32[M][N], out: &mut i32[M][N]) {
        let a: i32[M][N];
        parac_iterator p(x in 0:M:1; y in 0:N:1) parac_schedule(fuse = 2, rows = 8) {
            a[x][y] = src[x][y] * 2;
        }
        parac_iterator q(x in 0:M:1; y in 0:N:1) {
            out[x][y] = a[x][y] + 1;
        }
    }
}

fn main() {}
