// A store under a condition on data: which iteration's value stays depends on the order.
parac::parac! {
    pub fn last_bright(src: &u8[M][N], at: &mut i32[1]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            if (src[x][y] > 100) { at[0] = x; }
        }
    }
}

fn main() {}
