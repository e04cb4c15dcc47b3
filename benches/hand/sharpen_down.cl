// sharpen, stage 1 (down): the 4x4 block mean, down[i][j] = (sum of the block + 8) >> 4.
//
// Each work-item makes 16 outputs: it adds 4 rows of 64 bytes as 16-lane vectors, then folds
// groups of 4 lanes with two even/odd additions. Lanes past the last column read the row's
// padding and land in the padding of `down`.

__kernel void sh_down(__global const uchar* src, int sp, __global uchar* down, int dp, int m,
                      int n) {
    const int j0 = (int)get_global_id(0) * 16;
    const int i = (int)get_global_id(1);
    if (i >= (m >> 2) || j0 >= (n >> 2)) return;
    __global const uchar* p = src + 4 * i * sp + 4 * j0;
    ushort16 c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    for (int a = 0; a < 4; a++) {
        __global const uchar* r = p + a * sp;
        c0 += convert_ushort16(vload16(0, r));
        c1 += convert_ushort16(vload16(0, r + 16));
        c2 += convert_ushort16(vload16(0, r + 32));
        c3 += convert_ushort16(vload16(0, r + 48));
    }
    const ushort8 t0 = c0.even + c0.odd, t1 = c1.even + c1.odd;
    const ushort8 t2 = c2.even + c2.odd, t3 = c3.even + c3.odd;
    const ushort16 s = (ushort16)(t0.even + t0.odd, t1.even + t1.odd, t2.even + t2.odd,
                                  t3.even + t3.odd);
    vstore16(convert_uchar16((s + (ushort)8) >> (ushort)4), 0, down + i * dp + j0);
}
