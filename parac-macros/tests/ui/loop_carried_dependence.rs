// An iterator that reads `h[itx][ity-1]` while it writes `h`: iterations are not independent.
parac::parac! {
    pub fn prefix(src: &u8[M][N], out: &mut i32[M][N]) {
        let h: i32[M][N];
        parac_iterator it(0:M:1; 1:N:1) {
            h[itx][ity] = h[itx][ity-1] + src[itx][ity];
        }
        parac_iterator it1(0:M:1; 0:N:1) {
            out[it1x][it1y] = h[it1x][it1y];
        }
    }
}

fn main() {}
