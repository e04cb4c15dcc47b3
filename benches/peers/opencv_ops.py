"""OpenCV's side of benches/opencv_ops.rs: cv2.flip (1, 0, -1), cv2.transpose, cv2.rotate
(90 clockwise and counterclockwise) of a u8 image, cv2.flip of interleaved RGB,
cv2.transpose of i16, cvtColor (BGR to gray), threshold, absdiff, Sobel, Scharr, Laplacian,
a 3x3 GaussianBlur, filter2D (a sharpening kernel), a 5x5 dilate, a 3x3 medianBlur, pyrDown,
resize by a half (nearest, area), copyMakeBorder (reflect-101), cvtColor (BGR to YCrCb), a
3x3 blur, 3x3 and 15x15 erodes and resize by two (nearest), at 3840x2160 and 640x480,
the median of 20 calls each after 3 warm-up calls, with OpenCV's threads as it starts
(cv2.getNumThreads()), and its UMat (OpenCL) calls where cv2.ocl has a device. One run; prints
a Markdown table. First it checks, on a random image, that OpenCV's results are the definitions
tests/opencv_ops.rs holds parac's to.

    python3 benches/peers/opencv_ops.py
"""
import statistics
import time

import cv2
import numpy as np


def median_ms(f, runs=20):
    for _ in range(3):
        f()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def calls(src, rgb, src16, other, out):
    """Each call writes into a result allocated once (`dst=`), as the parac side does."""
    same, turned, rgb_out, turned16, grad, gray, half, framed, doubled = out
    h, w = src.shape[:2]
    five = np.ones((5, 5), np.uint8)
    three, fifteen = np.ones((3, 3), np.uint8), np.ones((15, 15), np.uint8)
    sharp = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
    return {
        "flip_lr": lambda: cv2.flip(src, 1, dst=same),
        "flip_ud": lambda: cv2.flip(src, 0, dst=same),
        "flip_both": lambda: cv2.flip(src, -1, dst=same),
        "transpose": lambda: cv2.transpose(src, dst=turned),
        "rotate_cw": lambda: cv2.rotate(src, cv2.ROTATE_90_CLOCKWISE, dst=turned),
        "rotate_ccw": lambda: cv2.rotate(src, cv2.ROTATE_90_COUNTERCLOCKWISE, dst=turned),
        "flip_lr_rgb": lambda: cv2.flip(rgb, 1, dst=rgb_out),
        "transpose_i16": lambda: cv2.transpose(src16, dst=turned16),
        "gray": lambda: cv2.cvtColor(rgb, cv2.COLOR_BGR2GRAY, dst=gray),
        "threshold": lambda: cv2.threshold(src, 127, 255, cv2.THRESH_BINARY, dst=same),
        "absdiff": lambda: cv2.absdiff(src, other, dst=same),
        "sobel_dx": lambda: cv2.Sobel(src, cv2.CV_16S, 1, 0, dst=grad),
        "scharr_dx": lambda: cv2.Scharr(src, cv2.CV_16S, 1, 0, dst=grad),
        "laplacian": lambda: cv2.Laplacian(src, cv2.CV_16S, dst=grad),
        "gauss3": lambda: cv2.GaussianBlur(src, (3, 3), 0, dst=same),
        "sharpen": lambda: cv2.filter2D(src, -1, sharp, dst=same),
        "dilate5": lambda: cv2.dilate(src, five, dst=same),
        "median3": lambda: cv2.medianBlur(src, 3, dst=same),
        "pyr_down": lambda: cv2.pyrDown(src, dst=half),
        "resize_nearest": lambda: cv2.resize(
            src, (w // 2, h // 2), dst=half, interpolation=cv2.INTER_NEAREST),
        "resize_area": lambda: cv2.resize(
            src, (w // 2, h // 2), dst=half, interpolation=cv2.INTER_AREA),
        "make_border": lambda: cv2.copyMakeBorder(
            src, 4, 4, 4, 4, cv2.BORDER_REFLECT_101, dst=framed),
        "ycrcb": lambda: cv2.cvtColor(rgb, cv2.COLOR_BGR2YCrCb, dst=rgb_out),
        "box3": lambda: cv2.blur(src, (3, 3), dst=same),
        "erode3": lambda: cv2.erode(src, three, dst=same),
        "erode15": lambda: cv2.erode(src, fifteen, dst=same),
        "resize_up": lambda: cv2.resize(
            src, (2 * w, 2 * h), dst=doubled, interpolation=cv2.INTER_NEAREST),
    }


def outputs(src, rgb, src16, other):
    h, w = src.shape
    return (
        np.empty_like(src),
        np.empty((w, h), np.uint8),
        np.empty_like(rgb),
        np.empty((w, h), np.int16),
        np.empty((h, w), np.int16),
        np.empty((h, w), np.uint8),
        np.empty((h // 2, w // 2), np.uint8),
        np.empty((h + 8, w + 8), np.uint8),
        np.empty((2 * h, 2 * w), np.uint8),
    )


def images(h, w):
    i, j = np.mgrid[0:h, 0:w]
    src = ((i * 7 + j * 13 + (i * j) % 17) % 256).astype(np.uint8)
    rgb = np.ascontiguousarray(np.stack([src, src // 2, 255 - src], axis=-1))
    src16 = (i * 31 + j * 17).astype(np.int16)
    other = ((i * 3 + j * 5) % 256).astype(np.uint8)
    return src, rgb, src16, other


def definitions_hold():
    """OpenCV's results on a random 37x53 image (and its BGR) are the definitions of
    tests/opencv_ops.rs (numpy's `reflect` pad is OpenCV's reflect-101)."""
    rng = np.random.default_rng(1)
    src = rng.integers(0, 256, (37, 53), dtype=np.uint8)
    bgr = rng.integers(0, 256, (37, 53, 3), dtype=np.uint8)
    h, w = src.shape

    def corr(k, img=src):
        r = k.shape[0] // 2
        p = np.pad(img.astype(np.int64), r, mode="reflect")
        n, m = img.shape
        return sum(k[a, b] * p[a:a + n, b:b + m]
                   for a in range(k.shape[0]) for b in range(k.shape[1]))

    b, g, r = (bgr[..., c].astype(np.int64) for c in range(3))
    g5 = np.outer([1, 4, 6, 4, 1], [1, 4, 6, 4, 1])
    e = src[:h // 2 * 2, :w // 2 * 2].astype(np.int64)
    edge = np.pad(src, 2, mode="edge")
    edge7 = np.pad(src, 7, mode="edge")
    luma = (b * 1868 + g * 9617 + r * 4899 + (1 << 13)) >> 14
    want = {
        "gray": (cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY),
                 (b * 3735 + g * 19235 + r * 9798 + 16384) >> 15),
        "threshold": (cv2.threshold(src, 127, 255, cv2.THRESH_BINARY)[1],
                      np.where(src > 127, 255, 0)),
        "sobel_dx": (cv2.Sobel(src, cv2.CV_16S, 1, 0),
                     corr(np.array([[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]))),
        "scharr_dx": (cv2.Scharr(src, cv2.CV_16S, 1, 0),
                      corr(np.array([[-3, 0, 3], [-10, 0, 10], [-3, 0, 3]]))),
        "laplacian": (cv2.Laplacian(src, cv2.CV_16S),
                      corr(np.array([[0, 1, 0], [1, -4, 1], [0, 1, 0]]))),
        "gauss3": (cv2.GaussianBlur(src, (3, 3), 0),
                   (corr(np.outer([1, 2, 1], [1, 2, 1])) + 8) >> 4),
        "sharpen": (cv2.filter2D(src, -1, np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]],
                                                   np.float32)),
                    np.clip(corr(np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]])), 0, 255)),
        "dilate5": (cv2.dilate(src, np.ones((5, 5), np.uint8)),
                    np.max([edge[a:a + h, c:c + w] for a in range(5) for c in range(5)], 0)),
        "median3": (cv2.medianBlur(src, 3),
                    np.median([edge[a:a + h, c:c + w] for a in range(1, 4) for c in range(1, 4)], 0)),
        "pyr_down": (cv2.pyrDown(src), ((corr(g5) + 128) >> 8)[::2, ::2]),
        "resize_nearest": (cv2.resize(src, (w // 2, h // 2), interpolation=cv2.INTER_NEAREST),
                           src[0:h // 2 * 2:2, 0:w // 2 * 2:2]),
        "resize_area": (cv2.resize(src[:h // 2 * 2, :w // 2 * 2], (w // 2, h // 2),
                                   interpolation=cv2.INTER_AREA),
                        (e[0::2, 0::2] + e[1::2, 0::2] + e[0::2, 1::2] + e[1::2, 1::2] + 2)
                        >> 2),
        "make_border": (cv2.copyMakeBorder(src, 4, 4, 4, 4, cv2.BORDER_REFLECT_101),
                        np.pad(src, 4, mode="reflect")),
        "ycrcb": (cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb),
                  np.stack([luma,
                            np.clip(((r - luma) * 11682 + (128 << 14) + (1 << 13)) >> 14, 0, 255),
                            np.clip(((b - luma) * 9241 + (128 << 14) + (1 << 13)) >> 14, 0, 255)],
                           axis=-1)),
        "box3": (cv2.blur(src, (3, 3)), (corr(np.ones((3, 3), np.int64)) + 4) // 9),
        "erode3": (cv2.erode(src, np.ones((3, 3), np.uint8)),
                   np.min([edge[a:a + h, c:c + w] for a in range(1, 4) for c in range(1, 4)], 0)),
        "erode15": (cv2.erode(src, np.ones((15, 15), np.uint8)),
                    np.min([edge7[a:a + h, c:c + w] for a in range(15) for c in range(15)], 0)),
        "resize_up": (cv2.resize(src, (2 * w, 2 * h), interpolation=cv2.INTER_NEAREST),
                      src.repeat(2, 0).repeat(2, 1)),
    }
    for k, (got, defn) in want.items():
        assert np.array_equal(got.astype(np.int64), defn), f"OpenCV's {k} is not its definition"


def main():
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
    definitions_hold()
    for h, w in [(2160, 3840), (480, 640)]:
        imgs = images(h, w)
        cv2.ocl.setUseOpenCL(False)
        cpu = {k: median_ms(f) for k, f in calls(*imgs, outputs(*imgs)).items()}
        umat = {}
        cv2.ocl.setUseOpenCL(True)
        # Where OpenCV finds no device, a UMat call runs on the CPU: no UMat column then.
        if cv2.ocl.haveOpenCL() and cv2.ocl.Device.getDefault().name():
            print(f"UMat on {cv2.ocl.Device.getDefault().name()}")
            us = [cv2.UMat(m) for m in imgs]
            outs = tuple(cv2.UMat(m) for m in outputs(*imgs))
            for k, f in calls(*us, outs).items():
                # A UMat call returns before its kernels finish: wait on the result.
                umat[k] = median_ms(lambda f=f: cv2.UMat.get(f()))
        print(f"\n{w}x{h}\n")
        print("| function | OpenCV CPU (ms) | OpenCV UMat (ms) |")
        print("|---|---:|---:|")
        for k in cpu:
            um = f"{umat[k]:.3f}" if k in umat else "-"
            print(f"| {k} | {cpu[k]:.3f} | {um} |")


if __name__ == "__main__":
    main()
