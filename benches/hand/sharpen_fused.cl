// sharpen, fused as an expert would (after sharpen_down.cl .. sharpen_final.cl in one program,
// whose helpers it uses): `up` and `edge` never go to memory.
// - sh_edge_sum: the Sobel magnitude of 4x16 outputs per work-item, summed (lanes and rows
//   outside the image masked), one partial per work-group of 16x4 work-items; `sh_mean` of
//   sharpen_mean.cl then adds the partials.
// - sh_final_fused: a work-item makes output rows 4q+2 .. 4q+5 (the rows that share the two
//   rows q, q+1 of `down`, as in sh_up) over 16 columns; from the 6 source rows around them it
//   derives the Sobel terms and the 3x3 min and max, and it upsamples `down` itself.
// So the pipeline reads `src` 3 times (down, edge sum, final) and writes `out` once.

#define EWX 16
#define EWY 4

__kernel __attribute__((reqd_work_group_size(EWX, EWY, 1)))
void sh_edge_sum(__global const uchar* src, int sp, int m, int n, __global ulong* partial) {
    __local uint acc[EWX * EWY];
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * 4;
    const int l = (int)(get_local_id(1) * EWX + get_local_id(0));
    uint total = 0;
    if (x0 < m && y0 < n) {
        short16 d[6], s[6];
        for (int k = 0; k < 6; k++) {
            short16 lf, c, r;
            row3(src + clamp(x0 - 1 + k, 0, m - 1) * sp, y0, n, &lf, &c, &r);
            d[k] = r - lf;
            s[k] = lf + c + c + r;
        }
        const ushort16 lane = (ushort16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
        const ushort16 valid = as_ushort16(lane < (ushort16)(ushort)min(n - y0, 16));
        ushort16 sum = 0;
        for (int k = 1; k <= 4 && x0 + k - 1 < m; k++) {
            const short16 gx = d[k - 1] + d[k] + d[k] + d[k + 1];
            const short16 gy = s[k + 1] - s[k - 1];
            sum += min(abs(gx) + abs(gy), (ushort16)255) & valid;
        }
        const ushort8 a = sum.lo + sum.hi;
        const uint4 b = convert_uint4(a.lo) + convert_uint4(a.hi);
        total = b.x + b.y + b.z + b.w;
    }
    acc[l] = total;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int t = EWX * EWY / 2; t > 0; t >>= 1) {
        if (l < t) acc[l] += acc[l + t];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[get_group_id(1) * get_num_groups(0) + get_group_id(0)] = acc[0];
}

__kernel void sh_final_fused(__global const uchar* src, int sp, __global const uchar* down,
                             int dp, __global const int* mean_buf, __global uchar* out, int op,
                             int m, int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int i0 = (int)get_global_id(1) - 1; // output rows 4*i0+2 .. 4*i0+5
    const int md = m >> 2, nd = n >> 2;
    if (i0 >= md || y0 >= n) return;
    // up, as sh_up.
    const int r0 = clamp(i0, 0, md - 1), r1 = clamp(i0 + 1, 0, md - 1);
    const ushort16 wc0 = (ushort16)(3, 1, 7, 5, 3, 1, 7, 5, 3, 1, 7, 5, 3, 1, 7, 5);
    const ushort16 wc1 = (ushort16)(5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3, 5, 7, 1, 3);
    const int c = (y0 >> 2) - 1;
    const uchar8 u0 = down_row(down + r0 * dp, c, nd), u1 = down_row(down + r1 * dp, c, nd);
    const ushort16 h0 = wc0 * convert_ushort16(u0.s0011112222333344)
        + wc1 * convert_ushort16(u0.s1122223333444455);
    const ushort16 h1 = wc0 * convert_ushort16(u1.s0011112222333344)
        + wc1 * convert_ushort16(u1.s1122223333444455);
    // The 6 source rows 4*i0+1 .. 4*i0+6 (clamped): Sobel terms, centre, row min and max.
    short16 d[6], s[6], ctr[6], lo[6], hi[6];
    for (int k = 0; k < 6; k++) {
        short16 lf, ce, r;
        row3(src + clamp(4 * i0 + 1 + k, 0, m - 1) * sp, y0, n, &lf, &ce, &r);
        d[k] = r - lf;
        s[k] = lf + ce + ce + r;
        ctr[k] = ce;
        lo[k] = min(lf, min(ce, r));
        hi[k] = max(lf, max(ce, r));
    }
    const float div = (float)(mean_buf[0] + 16);
    for (int a = 0; a < 4; a++) {
        const int x = 4 * i0 + 2 + a;
        if (x < 0 || x >= m) continue;
        // 16-bit lanes, as in sh_final.
        const short16 u = convert_short16(
            ((ushort)(7 - 2 * a) * h0 + (ushort)(2 * a + 1) * h1 + (ushort)32) >> (ushort)6);
        const short16 gx = d[a] + d[a + 1] + d[a + 1] + d[a + 2];
        const short16 gy = s[a + 2] - s[a];
        const short16 e = convert_short16(min(abs(gx) + abs(gy), (ushort16)255));
        const short16 gain = min(convert_short16(convert_float16(e * (short)16) / div), (short)32);
        const short16 pre = u + ((ctr[a + 1] - u) * ((short)16 + gain)) / (short)16;
        const short16 wlo = min(lo[a], min(lo[a + 1], lo[a + 2]));
        const short16 whi = max(hi[a], max(hi[a + 1], hi[a + 2]));
        const short16 o = clamp(clamp(pre, wlo - (short)8, whi + (short)8), (short)0, (short)255);
        vstore16(convert_uchar16(o), 0, out + x * op + y0);
    }
}
