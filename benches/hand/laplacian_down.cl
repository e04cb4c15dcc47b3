// laplacian, stage 2 (down): the vertical (1 4 6 4 1)/16 filter on every second row of `h`,
// at its even columns (`he`, stage 1), with `br1`, the linear extrapolation of 2 rows on each
// side: down[i][j] = (sum f[k] * h[2i-2+k][2j] + 8) / 16.
//
// Each work-item makes 16 outputs of one row from 5 aligned row loads; the two rows at each end
// build their extrapolated rows as whole vectors from rows 0..3 or M-4..M-1 (int, not clamped;
// C division truncates and the store wraps, as convert_uchar16 does).

__kernel void lap_down(__global const uchar* he, int hp, __global uchar* down, int dp, int m,
                       int n) {
    const int j0 = (int)get_global_id(0) * 16;
    const int i = (int)get_global_id(1);
    const int md = (m + 1) >> 1, nd = (n + 1) >> 1;
    if (i >= md || j0 >= nd) return;
    __global const uchar* p = he + j0;
    const int r = 2 * i;
    uchar16 res;
    if (r >= 2 && r + 2 < m) {
        const ushort16 v0 = convert_ushort16(vload16(0, p + (r - 2) * hp));
        const ushort16 v1 = convert_ushort16(vload16(0, p + (r - 1) * hp));
        const ushort16 v2 = convert_ushort16(vload16(0, p + r * hp));
        const ushort16 v3 = convert_ushort16(vload16(0, p + (r + 1) * hp));
        const ushort16 v4 = convert_ushort16(vload16(0, p + (r + 2) * hp));
        const ushort16 s = v0 + v4 + ((v1 + v3) << (ushort)2) + v2 * (ushort)6 + (ushort)8;
        res = convert_uchar16(s >> (ushort)4);
    } else {
        int16 v[5];
        for (int k = 0; k < 5; k++) {
            const int rr = r - 2 + k;
            if (rr >= 0 && rr < m) {
                v[k] = convert_int16(vload16(0, p + rr * hp));
            } else if (rr < 0) {
                const int16 h0 = convert_int16(vload16(0, p));
                const int16 h1 = convert_int16(vload16(0, p + hp));
                const int16 h2 = convert_int16(vload16(0, p + 2 * hp));
                const int16 h3 = convert_int16(vload16(0, p + 3 * hp));
                v[k] = rr == -2 ? h3 * 4 - h1 * 4 + h0 * 2 - h2 : h1 * 2 - h3;
            } else {
                const int16 g4 = convert_int16(vload16(0, p + (m - 4) * hp));
                const int16 g3 = convert_int16(vload16(0, p + (m - 3) * hp));
                const int16 g2 = convert_int16(vload16(0, p + (m - 2) * hp));
                const int16 g1 = convert_int16(vload16(0, p + (m - 1) * hp));
                v[k] = rr == m ? g2 * 2 - g4 : g4 * 4 - g2 * 4 + g1 * 2 - g3;
            }
        }
        const int16 s = v[0] + v[1] * 4 + v[2] * 6 + v[3] * 4 + v[4];
        res = convert_uchar16((s + 8) / 16);
    }
    // Lanes past the last column land in the row's padding.
    vstore16(res, 0, down + i * dp + j0);
}
