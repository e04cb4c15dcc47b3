// laplacian, stage 1 (h): the horizontal (1 4 6 4 1)/16 filter on `src` with `br`, the linear
// extrapolation of 2 columns on each side (int values, not clamped).
//
// `down` reads `h` only at even columns, so only those are computed, into the compact
// `he[x][j] = h[x][2j]`, j in 0..(N+1)/2: half the work and half the intermediate's traffic.
// Each work-item makes 16 outputs of one row: 6 unaligned 16-byte loads, split into even and
// odd bytes, give the 5 taps of all 16 outputs. Work-items whose 34 source bytes leave the row
// take the scalar path with the border formulas.

static int src_br(__global const uchar* r, int c, int n) {
    if (c >= 0 && c < n) return r[c];
    if (c == -2) return r[3] * 4 - r[1] * 4 + r[0] * 2 - r[2];
    if (c == -1) return r[1] * 2 - r[3];
    if (c == n) return r[n - 2] * 2 - r[n - 4];
    return r[n - 4] * 4 - r[n - 2] * 4 + r[n - 1] * 2 - r[n - 3];
}

__kernel void lap_h(__global const uchar* src, int sp, __global uchar* he, int hp, int m, int n) {
    const int j0 = (int)get_global_id(0) * 16;
    const int x = (int)get_global_id(1);
    const int nd = (n + 1) >> 1;
    if (x >= m || j0 >= nd) return;
    __global const uchar* r = src + x * sp;
    __global uchar* o = he + x * hp + j0;
    const int c0 = 2 * j0;
    if (c0 >= 2 && c0 + 34 <= n) {
        __global const uchar* q = r + c0 - 2;
        const uchar16 a0 = vload16(0, q), a1 = vload16(0, q + 16);
        const uchar16 b0 = vload16(0, q + 2), b1 = vload16(0, q + 18);
        const uchar16 e0 = vload16(0, q + 4), e1 = vload16(0, q + 20);
        const ushort16 t0 = convert_ushort16((uchar16)(a0.even, a1.even)); // c - 2
        const ushort16 t1 = convert_ushort16((uchar16)(a0.odd, a1.odd));   // c - 1
        const ushort16 t2 = convert_ushort16((uchar16)(b0.even, b1.even)); // c
        const ushort16 t3 = convert_ushort16((uchar16)(b0.odd, b1.odd));   // c + 1
        const ushort16 t4 = convert_ushort16((uchar16)(e0.even, e1.even)); // c + 2
        const ushort16 s = t0 + t4 + ((t1 + t3) << (ushort)2) + t2 * (ushort)6 + (ushort)8;
        vstore16(convert_uchar16(s >> (ushort)4), 0, o);
    } else {
        for (int k = 0; k < 16 && j0 + k < nd; k++) {
            const int c = 2 * (j0 + k);
            const int s = src_br(r, c - 2, n) + 4 * src_br(r, c - 1, n) + 6 * src_br(r, c, n)
                + 4 * src_br(r, c + 1, n) + src_br(r, c + 2, n);
            o[k] = (uchar)((s + 8) / 16);
        }
    }
}
