// A bin read by the iterator that reduces into it: another iteration may be updating it.
parac::parac! {
    pub fn histogram(src: &u8[M][N], hist: &mut i32[256]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            hist[src[x][y]] += hist[0];
        }
    }
}

fn main() {}
