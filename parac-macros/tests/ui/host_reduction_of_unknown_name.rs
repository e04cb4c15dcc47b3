// `parac_matrix_sum(edges)` where the parameter is `edge`: the error must say `edges` is unknown
// (suggesting `edge`), and the `return` that uses `s` must not get a second error.
parac::parac! {
    pub fn edge_mean(edge: &u8[M][N]) -> i16 {
        let s = parac_matrix_sum(edges);
        return (s / (M * N) as i64) as i16;
    }
}

fn main() {}
