// sharpen, stages 3, 6, 7 (out): err = src - up, gain = min(edge * 16 / (mean + 16), 32),
// pre = up + err * (16 + gain) / 16, out = clamp(clamp(pre, lo - 8, hi + 8), 0, 255) with
// lo, hi the min and max of the 3x3 window of `src` (clamp-to-edge).
//
// Each work-item makes 4 rows of 16 columns: the 3x3 min and max are separable (per source row
// over 3 columns, then over 3 rows: 6 row loads for 4 outputs). The division by mean + 16 is a
// float division, exact here (numerator <= 4080, divisor in 16..271: a non-integer quotient is
// at least 1/271 away from the next integer, far beyond float rounding), so it vectorizes where
// an integer division by a variable would not.

static void minmax3(__global const uchar* r, int y0, int n, uchar16* lo, uchar16* hi) {
    uchar16 a, b, c;
    if (y0 >= 1 && y0 + 17 <= n) {
        a = vload16(0, r + y0 - 1);
        b = vload16(0, r + y0);
        c = vload16(0, r + y0 + 1);
    } else {
        uchar v[18];
        for (int k = 0; k < 18; k++) v[k] = r[clamp(y0 - 1 + k, 0, n - 1)];
        a = vload16(0, v);
        b = vload16(0, v + 1);
        c = vload16(0, v + 2);
    }
    *lo = min(a, min(b, c));
    *hi = max(a, max(b, c));
}

__kernel void sh_final(__global const uchar* src, int sp, __global const uchar* up, int up_p,
                       __global const uchar* edge, int ep, __global const int* mean_buf,
                       __global uchar* out, int op, int m, int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * 4;
    if (x0 >= m || y0 >= n) return;
    const float div = (float)(mean_buf[0] + 16);
    uchar16 lo[6], hi[6];
    for (int k = 0; k < 6; k++)
        minmax3(src + clamp(x0 - 1 + k, 0, m - 1) * sp, y0, n, &lo[k], &hi[k]);
    for (int k = 1; k <= 4 && x0 + k - 1 < m; k++) {
        const int x = x0 + k - 1;
        // 16-bit lanes: |err| <= 255 and 16 + gain <= 48, so every value fits a short.
        const short16 wlo = convert_short16(min(lo[k - 1], min(lo[k], lo[k + 1])));
        const short16 whi = convert_short16(max(hi[k - 1], max(hi[k], hi[k + 1])));
        const short16 s = convert_short16(vload16(0, src + x * sp + y0));
        const short16 u = convert_short16(vload16(0, up + x * up_p + y0));
        const short16 e = convert_short16(vload16(0, edge + x * ep + y0));
        const short16 gain = min(convert_short16(convert_float16(e * (short)16) / div), (short)32);
        const short16 pre = u + ((s - u) * ((short)16 + gain)) / (short)16;
        const short16 o = clamp(clamp(pre, wlo - (short)8, whi + (short)8), (short)0, (short)255);
        vstore16(convert_uchar16(o), 0, out + x * op + y0);
    }
}
