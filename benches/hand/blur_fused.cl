// blur, both stages fused (the schedule Halide's own blur uses, at its finest grain): each
// work-item computes the 3 values of `bx` it needs from 9 loads of `src`, so `bx` never goes to
// memory, at the cost of computing each of its values 3 times.

__kernel void blur_fused(__global const ushort* src, int sp, __global ushort* out, int op, int m,
                         int n) {
    const int y = (int)get_global_id(0);
    const int x = (int)get_global_id(1);
    if (x >= m - 2 || y >= n - 2) return;
    __global const ushort* r = src + x * sp + y;
    const uint a = ((uint)r[0] + r[1] + r[2]) / 3u;
    const uint b = ((uint)r[sp] + r[sp + 1] + r[sp + 2]) / 3u;
    const uint c = ((uint)r[2 * sp] + r[2 * sp + 1] + r[2 * sp + 2]) / 3u;
    out[x * op + y] = (ushort)((a + b + c) / 3u);
}
