// `MP * w` with MP [4][2] and w [3][3]: the inner sizes 2 and 3 differ.
parac::parac! {
    pub fn upsample(src: &u8[M][N], up: &mut f32[M*4][N*4]) {
        const MP: f32[4][2] = [[0.875, 0.125], [0.625, 0.375], [0.375, 0.625], [0.125, 0.875]];
        parac_iterator it(0:M-2:1; 0:N-2:1) {
            up[itx*4:4:1][ity*4:4:1] = MP * src[itx:3:1][ity:3:1] * transe(MP);
        }
    }
}

fn main() {}
