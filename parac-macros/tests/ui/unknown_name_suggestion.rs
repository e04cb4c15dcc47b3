// A misspelled input (`srd` for `src`): the error points at `srd` and suggests `src`.
parac::parac! {
    pub fn copy(src: &u16[M][N], out: &mut u16[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = srd[itx][ity];
        }
    }
}

fn main() {}
