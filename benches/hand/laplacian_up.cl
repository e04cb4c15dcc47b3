// laplacian, stage 3 (up + lap): the rounded bilinear upsample of `down` and the difference,
// lap[x][y] = src[x][y] - (down[y0][x0] + down[y0][x1] + down[y1][x0] + down[y1][x1] + 2) / 4.
//
// Each work-item makes rows 2i and 2i+1 (both read row i of `down`; row 2i+1 also row i+1,
// clamped) over 16 columns, which read columns j0..j0+8 of `down`: one 16-byte load per row,
// duplicated in place by two swizzles. The column clamp only matters in the last vector of a
// row, which takes the scalar path.

__kernel void lap_up(__global const uchar* src, int sp, __global const uchar* down, int dp,
                     __global short* lap, int lp, int m, int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int i = (int)get_global_id(1);
    const int md = (m + 1) >> 1, nd = (n + 1) >> 1;
    if (2 * i >= m || y0 >= n) return;
    const int i1 = min(i + 1, md - 1);
    const bool odd_row = 2 * i + 1 < m;
    __global const uchar* d0 = down + i * dp;
    __global const uchar* d1 = down + i1 * dp;
    __global const uchar* s0 = src + 2 * i * sp + y0;
    __global short* l0 = lap + 2 * i * lp + y0;
    if (y0 + 16 < n) {
        const int j0 = y0 >> 1;
        const uchar16 w0 = vload16(0, d0 + j0), w1 = vload16(0, d1 + j0);
        const ushort16 a0 = convert_ushort16(w0.s0011223344556677);
        const ushort16 b0 = convert_ushort16(w0.s0112233445566778);
        const ushort16 h0 = a0 + b0;
        const ushort16 up0 = (h0 + h0 + (ushort)2) >> (ushort)2;
        vstore16(convert_short16(vload16(0, s0)) - convert_short16(up0), 0, l0);
        if (odd_row) {
            const ushort16 a1 = convert_ushort16(w1.s0011223344556677);
            const ushort16 b1 = convert_ushort16(w1.s0112233445566778);
            const ushort16 up1 = (h0 + a1 + b1 + (ushort)2) >> (ushort)2;
            vstore16(convert_short16(vload16(0, s0 + sp)) - convert_short16(up1), 0, l0 + lp);
        }
    } else {
        for (int k = 0; k < 16 && y0 + k < n; k++) {
            const int y = y0 + k;
            const int xa = y >> 1, xb = min((y + 1) >> 1, nd - 1);
            const int h0 = d0[xa] + d0[xb];
            l0[k] = (short)(s0[k] - (h0 + h0 + 2) / 4);
            if (odd_row) l0[lp + k] = (short)(s0[sp + k] - (h0 + d1[xa] + d1[xb] + 2) / 4);
        }
    }
}
