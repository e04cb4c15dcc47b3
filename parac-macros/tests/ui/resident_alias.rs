// A device matrix cannot be both an input and an output of a call: the kernels would read what
// they write. Rust's borrows refuse it, as for host matrices.
parac::parac! {
    pub fn shift(src: &u8[N], out: &mut u8[N]) {
        parac_iterator it(0:N - 1:1) {
            out[itx] = src[itx + 1];
        }
    }
}

fn main() -> Result<(), parac::Error> {
    let rt = parac::Runtime::cpu();
    let mut d = rt.upload(&parac::Matrix::<u8>::zeros([8]))?;
    shift(&rt, &d, &mut d)
}
