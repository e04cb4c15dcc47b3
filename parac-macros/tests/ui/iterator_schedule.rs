// An iterator's `parac_schedule` takes `fuse`, `inline` and `fold`, each 0 or 1, and no `1`
// that another rules out.
parac::parac! {
    pub fn stages(src: &i32[M][N], out: &mut i32[M][N]) {
        let a: i32[M][N];
        let b: i32[M][N];
        parac_iterator p(x in 0:M:1; y in 0:N:1) parac_schedule(fuse = 2, rows = 8) {
            a[x][y] = src[x][y] * 2;
        }
        parac_iterator q(x in 0:M:1; y in 0:N:1) parac_schedule(fuse = 0, inline = 1) {
            b[x][y] = a[x][y] + 1;
        }
        parac_iterator r(x in 0:M:1; y in 0:N:1) {
            out[x][y] = b[x][y] + 1;
        }
    }
}

fn main() {}
