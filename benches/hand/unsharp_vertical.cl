// unsharp, stage 2 (by): the 7-tap vertical Gaussian on `gray`, clamp-to-edge on the rows.
//
// Each work-item makes 8 rows of 16 columns from 14 row loads (clamping a row index is one
// scalar per row, so there is no border path).

#define ROWS 8

__kernel void us_vertical(__global const float* gray, int gp, __global float* by, int bp,
                          int m, int n, float k0, float k1, float k2, float k3) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x0 = (int)get_global_id(1) * ROWS;
    if (x0 >= m || y0 >= n) return;
    float16 g[ROWS + 6];
    for (int k = 0; k < ROWS + 6; k++) g[k] = vload16(0, gray + clamp(x0 - 3 + k, 0, m - 1) * gp + y0);
    for (int k = 0; k < ROWS && x0 + k < m; k++) {
        const float16 v = k0 * g[k + 3] + k1 * (g[k + 2] + g[k + 4]) + k2 * (g[k + 1] + g[k + 5])
            + k3 * (g[k] + g[k + 6]);
        vstore16(v, 0, by + (x0 + k) * bp + y0);
    }
}
