// Pipelines with errors still get their Rust signature: `main` calls them with the right
// argument types and uses the result, so only the ParaC errors are reported (no rustc cascade).
parac::parac! {
    /// Sharpens `src` into `out`; the body misspells `src` as `srd`.
    pub fn sharpen(src: &u8[M][N], out: &mut u8[M][N], amount: f32) {
        parac_border_rule r = replicate(src[1][1]);
        parac_iterator it(0:M:1; 0:N:1) parac_border_rule(r) {
            let blur = parac_matrix_mean(src[itx-1:3:1][ity-1:3:1]);
            out[itx][ity] = clamp(srd[itx][ity] as f32 + amount * (src[itx][ity] - blur) as f32,
                                  0.0, 255.0) as u8;
        }
    }

    /// Mean of the edge image; the divisor uses a size symbol `K` that no parameter binds.
    pub fn edge_mean(edge: &u8[M][N]) -> i16 {
        let s = parac_matrix_sum(edge);
        return (s / (M * K) as i64) as i16;
    }
}

fn main() -> Result<(), parac::Error> {
    let rt = parac::Runtime::new()?;
    let src = parac::Matrix::<u8>::zeros([480, 640]);
    let mut out = parac::Matrix::<u8>::zeros([480, 640]);
    sharpen(&rt, &src, &mut out, 1.5)?;
    let mean: i16 = edge_mean(&rt, &out)?;
    println!("{mean}");
    Ok(())
}
