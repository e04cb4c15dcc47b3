// A store into an input (`src`) whose value also has an unrelated mistake (`srd`): both must be
// reported.
parac::parac! {
    pub fn dim(src: &f32[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            src[itx][ity] = srd[itx][ity] * 0.5;
            out[itx][ity] = src[itx][ity];
        }
    }
}

fn main() {}
