// A 3x3 window stored into a scalar `let s: i32`: the error points at the window.
parac::parac! {
    pub fn box3(src: &u8[M][N], out: &mut i32[M-2][N-2]) {
        parac_iterator it(0:M-2:1; 0:N-2:1) {
            let s: i32 = src[itx:3:1][ity:3:1];
            out[itx][ity] = s / 9;
        }
    }
}

fn main() {}
