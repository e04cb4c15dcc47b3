"""OpenCV's side of benches/opencv_ops.rs: cv2.flip (1, 0, -1), cv2.transpose, cv2.rotate
(90 clockwise and counterclockwise) of a u8 image, cv2.flip of interleaved RGB and
cv2.transpose of i16, at 3840x2160 and 640x480, the median of 20 calls each after 3 warm-up
calls, with OpenCV's threads as it starts (cv2.getNumThreads()), and its UMat (OpenCL) calls
where cv2.ocl has a device. One run; prints a Markdown table.

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


def calls(src, rgb, src16, out):
    """Each call writes into a result allocated once (`dst=`), as the parac side does."""
    same, turned, rgb_out, turned16 = out
    return {
        "flip_lr": lambda: cv2.flip(src, 1, dst=same),
        "flip_ud": lambda: cv2.flip(src, 0, dst=same),
        "flip_both": lambda: cv2.flip(src, -1, dst=same),
        "transpose": lambda: cv2.transpose(src, dst=turned),
        "rotate_cw": lambda: cv2.rotate(src, cv2.ROTATE_90_CLOCKWISE, dst=turned),
        "rotate_ccw": lambda: cv2.rotate(src, cv2.ROTATE_90_COUNTERCLOCKWISE, dst=turned),
        "flip_lr_rgb": lambda: cv2.flip(rgb, 1, dst=rgb_out),
        "transpose_i16": lambda: cv2.transpose(src16, dst=turned16),
    }


def outputs(src, rgb, src16):
    h, w = src.shape
    return (
        np.empty_like(src),
        np.empty((w, h), np.uint8),
        np.empty_like(rgb),
        np.empty((w, h), np.int16),
    )


def images(h, w):
    i, j = np.mgrid[0:h, 0:w]
    src = ((i * 7 + j * 13 + (i * j) % 17) % 256).astype(np.uint8)
    rgb = np.ascontiguousarray(np.stack([src, src // 2, 255 - src], axis=-1))
    src16 = (i * 31 + j * 17).astype(np.int16)
    return src, rgb, src16


def main():
    print(f"OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
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
