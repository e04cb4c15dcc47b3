// blur, stage 2 (out): out[x][y] = (bx[x][y] + bx[x+1][y] + bx[x+2][y]) / 3.
//
// Each work-item makes 8 rows of 16 columns from 10 aligned row loads, keeping a running
// window of 3 rows in registers.

#define ROWS 8

__kernel void blur_out(__global const ushort* bx, int bp, __global ushort* out, int op, int m,
                       int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * ROWS;
    if (x0 >= m - 2 || y0 >= n - 2) return;
    __global const ushort* p = bx + x0 * bp + y0;
    uint16 a = convert_uint16(vload16(0, p));
    uint16 b = convert_uint16(vload16(0, p + bp));
    const int rows = min(ROWS, m - 2 - x0);
    for (int k = 0; k < rows; k++) {
        const uint16 c = convert_uint16(vload16(0, p + (k + 2) * bp));
        vstore16(convert_ushort16((a + b + c) / 3u), 0, out + (x0 + k) * op + y0);
        a = b;
        b = c;
    }
}
