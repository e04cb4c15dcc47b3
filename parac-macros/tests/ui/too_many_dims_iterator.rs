// An iterator with 4 dimensions: iterators have 1 to 3.
parac::parac! {
    pub fn frames(video: &u8[3][M][N], out: &mut u8[3][M][N]) {
        parac_iterator it(t in 0:2:1; c in 0:3:1; x in 0:M:1; y in 0:N:1) {
            out[c][x][y] = video[c][x][y];
        }
    }
}

fn main() {}
