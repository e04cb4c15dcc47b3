// PENDING (compiler problem, moved out of tests/ui so the suite passes):
// `edges` is an unknown name, but the error says "on the host, `parac_matrix_sum` takes a whole
// matrix ..." (no suggestion of `edge`); then a cascade "cannot find `s`" on the `return`.
// Expected: "cannot find `edges`" with help `edge`, and nothing else.
// Current output: host_reduction_of_unknown_name.stderr.current. Once fixed, move this file to tests/ui/ and regenerate.
// `parac_matrix_sum(edges)` where the parameter is `edge`: the error must say `edges` is unknown
// (suggesting `edge`), and the `return` that uses `s` must not get a second error.
parac::parac! {
    pub fn edge_mean(edge: &u8[M][N]) -> i16 {
        let s = parac_matrix_sum(edges);
        return (s / (M * N) as i64) as i16;
    }
}

fn main() {}
