// A 3x3 block stored into a 2x2 window: the error points at the store and names both shapes.
parac::parac! {
    pub fn tile(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M/2:1; 0:N/2:1) {
            out[itx*2:2:1][ity*2:2:1] = src[itx*2:3:1][ity*2:3:1];
        }
    }
}

fn main() {}
