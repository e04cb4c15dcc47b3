// unsharp, stage 1 (gray): gray = 0.299 r + 0.587 g + 0.114 b, 16 pixels per work-item from the
// three planes. Lanes past the last column land in the row's padding.

__kernel void us_gray(__global const float* img, int ip, int plane, __global float* gray, int gp,
                      int m, int n) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x = (int)get_global_id(1);
    if (x >= m || y0 >= n) return;
    __global const float* p = img + x * ip + y0;
    const float16 g = 0.299f * vload16(0, p) + 0.587f * vload16(0, p + plane)
        + 0.114f * vload16(0, p + 2 * plane);
    vstore16(g, 0, gray + x * gp + y0);
}
