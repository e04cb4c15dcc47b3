// `parac_matrix_max(src)` of a whole matrix inside an iterator: move it to a function-level `let`.
parac::parac! {
    pub fn normalize(src: &u8[M][N], out: &mut f32[M][N]) {
        parac_iterator it(0:M:1; 0:N:1) {
            out[itx][ity] = src[itx][ity] as f32 / parac_matrix_max(src) as f32;
        }
    }
}

fn main() {}
