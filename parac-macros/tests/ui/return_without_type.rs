// `return` in a function with no `-> T`: the error points at `return`.
parac::parac! {
    pub fn mean(src: &u8[M][N]) {
        let s = parac_matrix_sum(src);
        return s / (M * N) as i64;
    }
}

fn main() {}
