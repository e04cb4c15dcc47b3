// `-> i64` with no final `return`: the error points at the return type.
parac::parac! {
    pub fn total(src: &u8[M][N]) -> i64 {
        let s = parac_matrix_sum(src);
    }
}

fn main() {}
