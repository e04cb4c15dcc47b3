// blur, stage 1 (bx): bx[x][y] = (src[x][y] + src[x][y+1] + src[x][y+2]) / 3, y in 0..N-2.
//
// One output per work-item, in 32-bit so any 16-bit input is exact. On PoCL this scalar form is
// the fast one for 16-bit data: its work-group vectorizer turns the work-items of a row into
// 16-lane loops with contiguous loads, while explicit ushort16 vloads measured 1.5-2x slower
// (and the division by the constant 3 becomes a multiply-high either way).

__kernel void blur_bx(__global const ushort* src, int sp, __global ushort* bx, int bp, int m,
                      int n) {
    const int y = (int)get_global_id(0);
    const int x = (int)get_global_id(1);
    if (x >= m || y >= n - 2) return;
    __global const ushort* r = src + x * sp + y;
    bx[x * bp + y] = (ushort)(((uint)r[0] + r[1] + r[2]) / 3u);
}
