// sharpen, stage 4 (edge): the Sobel magnitude min(|gx| + |gy|, 255) with clamp-to-edge.
//
// Each work-item makes 4 rows of 16 columns from 6 source rows. Per source row it forms
// d = right - left and s = left + 2 centre + right once; then gx = d[x-1] + 2 d[x] + d[x+1] and
// gy = s[x+1] - s[x-1]. Only the first and last vector of a row load clamped columns.

static void row3(__global const uchar* r, int y0, int n, short16* l, short16* c, short16* rt) {
    if (y0 >= 1 && y0 + 17 <= n) {
        *l = convert_short16(vload16(0, r + y0 - 1));
        *c = convert_short16(vload16(0, r + y0));
        *rt = convert_short16(vload16(0, r + y0 + 1));
    } else {
        short v[18];
        for (int k = 0; k < 18; k++) v[k] = r[clamp(y0 - 1 + k, 0, n - 1)];
        *l = vload16(0, v);
        *c = vload16(0, v + 1);
        *rt = vload16(0, v + 2);
    }
}

__kernel void sh_sobel(__global const uchar* src, int sp, __global uchar* edge, int ep, int m,
                       int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * 4;
    if (x0 >= m || y0 >= n) return;
    short16 d[6], s[6];
    for (int k = 0; k < 6; k++) {
        short16 l, c, r;
        row3(src + clamp(x0 - 1 + k, 0, m - 1) * sp, y0, n, &l, &c, &r);
        d[k] = r - l;
        s[k] = l + c + c + r;
    }
    for (int k = 1; k <= 4 && x0 + k - 1 < m; k++) {
        const short16 gx = d[k - 1] + d[k] + d[k] + d[k + 1];
        const short16 gy = s[k + 1] - s[k - 1];
        const ushort16 e = min(abs(gx) + abs(gy), (ushort16)255);
        vstore16(convert_uchar16(e), 0, edge + (x0 + k - 1) * ep + y0);
    }
}
