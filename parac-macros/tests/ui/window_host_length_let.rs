// A window of host length is read tap by tap where it is reduced: a `let` cannot keep it.
parac::parac! {
    pub fn dot(a: &f32[M][K], b: &f32[K][N], c: &mut f32[M][N]) {
        parac_iterator it(x in 0:M:1; y in 0:N:1) {
            let row = a[x][0:K];
            c[x][y] = parac_matrix_sum(row .* transe(b[0:K][y]));
        }
    }
}

fn main() {}
