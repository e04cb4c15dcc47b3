// unsharp, stage 3 (bx + ratio + out): the 7-tap horizontal Gaussian on `by` (clamp-to-edge on
// the columns), sharpen = 2 gray - bx, ratio = sharpen / gray, out[c] = ratio * img[c].
//
// Each work-item makes 16 pixels of one row from 7 unaligned loads of `by`; only the first and
// last vector of a row load clamped columns.

__kernel void us_horizontal(__global const float* by, int bp, __global const float* gray, int gp,
                            __global const float* img, int ip, int plane, __global float* out,
                            int m, int n, float k0, float k1, float k2, float k3) {
    const int y0 = (int)get_global_id(0) * 16;
    const int x = (int)get_global_id(1);
    if (x >= m || y0 >= n) return;
    __global const float* r = by + x * bp;
    float16 t[7];
    if (y0 >= 3 && y0 + 19 <= n) {
        for (int k = 0; k < 7; k++) t[k] = vload16(0, r + y0 - 3 + k);
    } else {
        float v[22];
        for (int k = 0; k < 22; k++) v[k] = r[clamp(y0 - 3 + k, 0, n - 1)];
        for (int k = 0; k < 7; k++) t[k] = vload16(0, v + k);
    }
    const float16 b = k0 * t[3] + k1 * (t[2] + t[4]) + k2 * (t[1] + t[5]) + k3 * (t[0] + t[6]);
    const float16 g = vload16(0, gray + x * gp + y0);
    const float16 ratio = (2.0f * g - b) / g;
    __global const float* p = img + x * ip + y0;
    __global float* o = out + x * ip + y0;
    vstore16(ratio * vload16(0, p), 0, o);
    vstore16(ratio * vload16(0, p + plane), 0, o + plane);
    vstore16(ratio * vload16(0, p + 2 * plane), 0, o + 2 * plane);
}
