// sharpen, stage 2 (up): the 4x bilinear upsample of `down` in eighths (weights 7-2a, 2a+1),
// clamped at the edges, up = (sum wr * wc * down[r][c] + 32) >> 6.
//
// Output rows 4q+2 .. 4q+5 all lie between rows q and q+1 of `down` (a = 0..3), so a
// work-item makes those 4 rows over 16 columns from 2 rows of `down`: the horizontal pass is
// done once for the 4 rows. The 16 columns y0..y0+15 read columns y0/4-1 .. y0/4+4 of `down`
// with a fixed pattern of weights, built by two swizzles of one 8-byte load.

static uchar8 down_row(__global const uchar* r, int c, int nd) {
    if (c >= 0 && c + 8 <= nd) return vload8(0, r + c);
    uchar8 w;
    w.s0 = r[clamp(c, 0, nd - 1)];
    w.s1 = r[clamp(c + 1, 0, nd - 1)];
    w.s2 = r[clamp(c + 2, 0, nd - 1)];
    w.s3 = r[clamp(c + 3, 0, nd - 1)];
    w.s4 = r[clamp(c + 4, 0, nd - 1)];
    w.s5 = r[clamp(c + 5, 0, nd - 1)];
    w.s6 = w.s5;
    w.s7 = w.s5;
    return w;
}

__kernel void sh_up(__global const uchar* down, int dp, __global uchar* up, int up_p, int m,
                    int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int i0 = (int)get_global_id(1) - 1; // output rows 4*i0+2 .. 4*i0+5
    const int md = m >> 2, nd = n >> 2;
    if (i0 >= md || y0 >= n) return;
    const int r0 = clamp(i0, 0, md - 1), r1 = clamp(i0 + 1, 0, md - 1);
    // Column weights for y = y0 + k: a = (k + 2) mod 4, wc0 = 7 - 2a, wc1 = 2a + 1.
    const ushort16 wc0 = (ushort16)(3, 1, 7, 5, 3, 1, 7, 5, 3, 1, 7, 5, 3, 1, 7, 5);
    const ushort16 wc1 = (ushort16)(5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3);
    const int c = (y0 >> 2) - 1;
    const uchar8 u0 = down_row(down + r0 * dp, c, nd), u1 = down_row(down + r1 * dp, c, nd);
    const ushort16 h0 = wc0 * convert_ushort16(u0.s0011112222333344)
        + wc1 * convert_ushort16(u0.s1122223333444455);
    const ushort16 h1 = wc0 * convert_ushort16(u1.s0011112222333344)
        + wc1 * convert_ushort16(u1.s1122223333444455);
    for (int a = 0; a < 4; a++) {
        const int x = 4 * i0 + 2 + a;
        if (x < 0 || x >= m) continue;
        const ushort16 v = ((ushort)(7 - 2 * a) * h0 + (ushort)(2 * a + 1) * h1 + (ushort)32)
            >> (ushort)6;
        vstore16(convert_uchar16(v), 0, up + x * up_p + y0);
    }
}
