// Two independent mistakes in two iterators: `g` is read but nothing writes it, and `dwn` is a
// misspelling of `down`. Both must be reported.
parac::parac! {
    pub fn laplacian(src: &u8[M][N], lap: &mut i16[M][N], down: &mut u8[(M+1)/2][(N+1)/2]) {
        let g: u8[M][N];
        parac_iterator it1(0:(M+1)/2:1; 0:(N+1)/2:1) {
            down[it1x][it1y] = g[it1x*2][it1y*2];
        }
        parac_iterator it2(0:M:1; 0:N:1) {
            lap[it2x][it2y] = src[it2x][it2y] - dwn[it2x/2][it2y/2];
        }
    }
}

fn main() {}
