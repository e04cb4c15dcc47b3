// A prefix is computed at every point of its iterator, so it cannot sit under an `if`.
parac::parac! {
    pub fn running(src: &u8[M][N], out: &mut i32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            if (src[x][y] > 0) { out[x][y] = parac_prefix_sum(src[x][y], y); }
        }
    }
}

fn main() {}
