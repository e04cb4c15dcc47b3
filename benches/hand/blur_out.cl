// blur, stage 2 (out): out[x][y] = (bx[x][y] + bx[x+1][y] + bx[x+2][y]) / 3.
//
// One output per work-item (see blur_bx.cl: a loop over rows inside a work-item, to reuse
// loads, stops PoCL from vectorizing across work-items and measured 3x slower).

__kernel void blur_out(__global const ushort* bx, int bp, __global ushort* out, int op, int m,
                       int n) {
    const int y = (int)get_global_id(0);
    const int x = (int)get_global_id(1);
    if (x >= m - 2 || y >= n - 2) return;
    __global const ushort* c = bx + x * bp + y;
    out[x * op + y] = (ushort)(((uint)c[0] + c[bp] + c[2 * bp]) / 3u);
}
