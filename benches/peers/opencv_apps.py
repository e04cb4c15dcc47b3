"""The closest idiomatic OpenCV calls for the four pipelines of shared/APPS.md.

Each `<app>_opencv` function takes numpy arrays (OpenCV's CPU code) or `cv2.UMat`s (OpenCV's
transparent API: OpenCL on the default OpenCL device) and makes the same calls on either. The
numpy shape of the input is passed separately (a UMat does not carry it). Final outputs go into
`dst` arrays when given. `DIFFERENCES` says, per pipeline, how OpenCV's result differs from
APPS.md's definition.

OpenCV picks a GPU OpenCL device by default and ignores CPU devices; this machine's OpenCL
device is PoCL on the CPU, so `OPENCV_OPENCL_DEVICE=:CPU:` (set below unless already set)
makes OpenCV use it.
"""

import os

os.environ.setdefault("OPENCV_OPENCL_DEVICE", ":CPU:")

import cv2  # noqa: E402
import numpy as np  # noqa: E402

DIFFERENCES = dict(
    laplacian=(
        "pyrDown filters with the 5x5 kernel in one pass and rounds once ((sum+128)>>8) where "
        "APPS.md rounds h to u8 first, and uses reflect-101 borders instead of the linear "
        "extrapolation; pyrUp upsamples with the [1 6 1]/8, [4 4]/8 kernels instead of the "
        "bilinear average of 2 or 4 neighbours."),
    sharpen=(
        "resize INTER_AREA (4x4 box) and INTER_LINEAR (at 4x: the same 7/8..1/8 weights at the "
        "same positions, clamped edges) compute down and up but round in fixed point "
        "differently (off by 1 on some pixels); (err*(16+gain))/16 is multiply(scale=1/16), "
        "which rounds to nearest instead of truncating; Sobel, the saturating |gx|+|gy|, the "
        "mean, the gain (a LUT of the exact integer divisions) and erode/dilate with "
        "BORDER_REPLICATE are exact."),
    blur=(
        "cv2.blur divides the 3x3 sum by 9 once, rounding to nearest, where APPS.md truncates "
        "twice ((row sum)/3, then (column sum)/3); it also computes the 1-pixel border (cropped "
        "away for the comparison)."),
    unsharp=(
        "the same float formulas: sepFilter2D with the 7 unnormalised taps (horizontal pass "
        "first instead of vertical), so only float rounding differs."),
)


def laplacian_opencv(src, shape, lap=None, down=None):
    """(lap: i16[M][N], down: u8[(M+1)/2][(N+1)/2])."""
    m, n = shape
    down = cv2.pyrDown(src, dst=down, dstsize=((n + 1) // 2, (m + 1) // 2))
    up = cv2.pyrUp(down, dstsize=(n, m))
    lap = cv2.subtract(src, up, dst=lap, dtype=cv2.CV_16S)
    return lap, down


def sharpen_opencv(src, shape, out=None):
    """out: u8[M][N]."""
    m, n = shape
    down = cv2.resize(src, (n // 4, m // 4), interpolation=cv2.INTER_AREA)
    up = cv2.resize(down, (n, m), interpolation=cv2.INTER_LINEAR)
    err = cv2.subtract(src, up, dtype=cv2.CV_16S)
    gx = cv2.Sobel(src, cv2.CV_16S, 1, 0, ksize=3, borderType=cv2.BORDER_REPLICATE)
    gy = cv2.Sobel(src, cv2.CV_16S, 0, 1, ksize=3, borderType=cv2.BORDER_REPLICATE)
    edge = cv2.add(cv2.convertScaleAbs(gx), cv2.convertScaleAbs(gy))  # saturating: min(.., 255)
    mean = int(cv2.sumElems(edge)[0]) // (m * n)
    factor_lut = (16 + np.minimum(np.arange(256) * 16 // (mean + 16), 32)).astype(np.int16)
    factor = cv2.LUT(edge, factor_lut)  # 16 + gain, as CV_16S like err
    delta = cv2.multiply(err, factor, scale=1 / 16, dtype=cv2.CV_16S)
    pre = cv2.add(up, delta, dtype=cv2.CV_8U)  # saturates to 0..255
    kernel = np.ones((3, 3), np.uint8)
    lo = cv2.subtract(cv2.erode(src, kernel, borderType=cv2.BORDER_REPLICATE), 8)
    hi = cv2.add(cv2.dilate(src, kernel, borderType=cv2.BORDER_REPLICATE), 8)
    return cv2.min(cv2.max(pre, lo), hi, dst=out)


def blur_opencv(src, shape, out=None):
    """u16[M][N]; its [1:-1, 1:-1] is the blur of APPS.md."""
    return cv2.blur(src, (3, 3), dst=out)


def unsharp_taps7():
    sigma = 1.5
    k = [np.exp(-i * i / (2 * sigma * sigma)) / (np.sqrt(2 * np.pi) * sigma) for i in range(4)]
    return np.array(k[:0:-1] + k, dtype=np.float32)


def unsharp_opencv(planes, shape, out=(None, None, None)):
    """planes: the 3 channels, each f32[M][N]; returns the 3 channels of the output."""
    r, g, b = planes
    gray = cv2.scaleAdd(b, 0.114, cv2.addWeighted(r, 0.299, g, 0.587, 0))
    k = unsharp_taps7()
    blurred = cv2.sepFilter2D(gray, cv2.CV_32F, k, k, borderType=cv2.BORDER_REPLICATE)
    ratio = cv2.divide(cv2.addWeighted(gray, 2, blurred, -1, 0), gray)
    return [cv2.multiply(ratio, p, dst=o) for p, o in zip(planes, out)]


FUNCTIONS = dict(laplacian=laplacian_opencv, sharpen=sharpen_opencv, blur=blur_opencv,
                 unsharp=unsharp_opencv)


def opencl_status():
    """(available, description) of OpenCV's OpenCL."""
    if not cv2.ocl.haveOpenCL():
        return False, "OpenCV finds no OpenCL runtime"
    cv2.ocl.setUseOpenCL(True)
    if not cv2.ocl.useOpenCL():
        return False, "OpenCV has OpenCL but no usable device (OPENCV_OPENCL_DEVICE=%s)" % (
            os.environ.get("OPENCV_OPENCL_DEVICE"))
    d = cv2.ocl.Device.getDefault()
    return True, "%s (%s, %s)" % (d.name(), d.vendorName(), d.version())
