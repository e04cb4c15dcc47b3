// blur, both stages fused (the schedule Halide's own blur uses): a work-item makes 8 rows of 16
// columns of `out` from the `bx` of 10 rows, computed in registers: `bx` never goes to memory,
// at the cost of computing 2 of every 10 of its rows twice.

#define ROWS 8

static uint16 bx_row(__global const ushort* r) {
    const uint16 s = convert_uint16(vload16(0, r)) + convert_uint16(vload16(0, r + 1))
        + convert_uint16(vload16(0, r + 2));
    return s / 3u;
}

__kernel void blur_fused(__global const ushort* src, int sp, __global ushort* out, int op, int m,
                         int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * ROWS;
    if (x0 >= m - 2 || y0 >= n - 2) return;
    __global const ushort* p = src + x0 * sp + y0;
    uint16 a = bx_row(p);
    uint16 b = bx_row(p + sp);
    const int rows = min(ROWS, m - 2 - x0);
    for (int k = 0; k < rows; k++) {
        const uint16 c = bx_row(p + (k + 2) * sp);
        vstore16(convert_ushort16((a + b + c) / 3u), 0, out + (x0 + k) * op + y0);
        a = b;
        b = c;
    }
}
