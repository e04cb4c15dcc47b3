// The index variable `itx` used in a function-level `let`, after its iterator has ended.
parac::parac! {
    pub fn last_row(src: &u8[M][N], out: &mut u8[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity];
        }
        let last = itx;
    }
}

fn main() {}
