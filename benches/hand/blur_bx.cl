// blur, stage 1 (bx): bx[x][y] = (src[x][y] + src[x][y+1] + src[x][y+2]) / 3, y in 0..N-2.
//
// Each work-item makes 16 outputs of one row from 3 unaligned 32-byte loads; the sums are kept
// in 32 bits so any 16-bit input is exact, and the division by the constant 3 becomes a
// multiply-high. Lanes past the last column land in the row's padding.

__kernel void blur_bx(__global const ushort* src, int sp, __global ushort* bx, int bp, int m,
                      int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x = (int)get_global_id(1);
    if (x >= m || y0 >= n - 2) return;
    __global const ushort* r = src + x * sp + y0;
    const uint16 s = convert_uint16(vload16(0, r)) + convert_uint16(vload16(0, r + 1))
        + convert_uint16(vload16(0, r + 2));
    vstore16(convert_ushort16(s / 3u), 0, bx + x * bp + y0);
}
