// A histogram written as a plain store: iterations with equal pixels write one bin, and an
// increment by one of them would be lost. `hist[v] += 1` is the reduction.
parac::parac! {
    pub fn histogram(src: &u8[M][N], hist: &mut i32[256]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            hist[src[x][y]] = hist[src[x][y]] + 1;
        }
    }
}

fn main() {}
