// sharpen, stage 5 (mean): mean = (64-bit sum of `edge`) / (M*N), on the device, in two
// kernels: each work-group of 64 sums a band of rows (16-lane loads, a scalar tail that skips
// the row padding, a tree in local memory) into one partial; one work-group then adds the
// partials and divides. The mean stays in a device buffer for the next kernel: no round trip
// to the host.

#define WG 64

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sh_sum(__global const uchar* edge, int ep, int m, int n, int rows_per_group,
            __global ulong* partial) {
    __local ulong acc[WG];
    const int l = (int)get_local_id(0);
    const int g = (int)get_group_id(0);
    const int x_end = min(m, (g + 1) * rows_per_group);
    const int nv = n & ~15;
    uint16 v = 0;
    uint tail = 0;
    for (int x = g * rows_per_group; x < x_end; x++) {
        __global const uchar* r = edge + x * ep;
        for (int y = l * 16; y < nv; y += WG * 16) v += convert_uint16(vload16(0, r + y));
        for (int y = nv + l; y < n; y += WG) tail += r[y];
    }
    const uint8 a = v.lo + v.hi;
    const uint4 b = a.lo + a.hi;
    const uint2 c = b.lo + b.hi;
    acc[l] = (ulong)(c.x + c.y) + tail;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (l < s) acc[l] += acc[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) partial[g] = acc[0];
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void sh_mean(__global const ulong* partial, int groups, int m, int n, __global int* mean) {
    __local ulong acc[WG];
    const int l = (int)get_local_id(0);
    ulong t = 0;
    for (int g = l; g < groups; g += WG) t += partial[g];
    acc[l] = t;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = WG / 2; s > 0; s >>= 1) {
        if (l < s) acc[l] += acc[l + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (l == 0) mean[0] = (int)(acc[0] / ((ulong)m * (ulong)n));
}
